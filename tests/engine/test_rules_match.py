"""Match scoring across deals: the end, ranks and ties, Hartenjagen phases, formats."""

from __future__ import annotations

import random

import pytest

from hearts_engine import Deal, Match, MatchFormat, MoonOption, Phase, WrongPhaseError, preset
from hearts_engine.scoring import DealResult, match_outcome, next_phase, rank_seats

STD = preset("standard")
HJ = preset("hartenjagen")


def results(*scores, phase=1):
    return [DealResult(tuple(s), phase) for s in scores]


def test_the_match_ends_after_the_deal_in_which_a_total_reaches_the_target():
    assert match_outcome(STD, results((99, 0, 0, 1))) is None
    outcome = match_outcome(STD, results((74, 0, 0, 1), (26, 0, 0, 0)))
    assert outcome is not None and outcome.totals == (100, 0, 0, 1)
    assert outcome.winners == (1, 2) and outcome.ranks == (4, 1, 1, 3)


def test_lowest_total_wins_then_lowest_last_deal_score_then_co_winners():
    # Seats 1 and 2 tie on 40; seat 2 scored less in the last deal and wins alone.
    outcome = match_outcome(STD, results((50, 30, 34, 20), (50, 10, 6, 10)))
    assert outcome.totals == (100, 40, 40, 30) and outcome.winners == (3,)
    outcome = match_outcome(STD, results((50, 30, 34, 40), (50, 10, 6, 0)))
    assert outcome.totals == (100, 40, 40, 40)
    assert outcome.winners == (3,) and outcome.ranks == (4, 3, 2, 1)
    outcome = match_outcome(STD, results((74, 20, 20, 40), (26, 0, 0, 0)))
    assert outcome.winners == (1, 2) and outcome.ranks == (4, 1, 1, 3)


def test_rank_seats_shares_ranks_on_equal_keys():
    assert rank_seats((10, 10, 5, 20), (1, 1, 0, 3)) == (2, 2, 1, 4)
    assert rank_seats((10, 10, 5, 20), (1, 0, 0, 3)) == (3, 2, 1, 4)
    assert rank_seats((10, 10, 5, 20), None) == (2, 2, 1, 4)


def test_classic_target_is_configurable_but_at_least_50():
    rules = preset("classic", target=60)
    assert match_outcome(rules, results((60, 0, 0, 0))) is not None
    assert match_outcome(rules, results((59, 0, 0, 0))) is None


def test_hartenjagen_phase_one_ends_after_the_deal_reaching_the_target():
    first = results((60, 20, 0, 0), (40, 0, 0, 0))
    assert next_phase(HJ, first[:1]) == 1
    assert next_phase(HJ, first) == 2  # seat 0 reached 100: phase 2 next
    assert match_outcome(HJ, first) is None  # no check at the end of phase 1
    three = preset("hartenjagen", players=3)
    assert next_phase(three, results((80, 0, 0))) == 2 and next_phase(three, results((79, 1, 0))) == 1
    quick = preset("hartenjagen-quick")
    assert quick.phases.phase1_target == 50 and preset("hartenjagen-quick", players=3).phases.phase1_target == 40


def test_hartenjagen_phase_two_sole_lowest_at_or_below_zero_wins():
    history = results((100, 30, 20, 10)) + results((0, -5, -5, -10), phase=2)
    outcome = match_outcome(HJ, history)
    assert outcome is not None and outcome.winners == (3,) and outcome.totals == (100, 25, 15, 0)


def test_hartenjagen_tie_at_or_below_zero_plays_another_deal():
    history = results((100, 30, 20, 10)) + results((0, 0, -20, -10), phase=2)
    assert match_outcome(HJ, history) is None  # seats 2 and 3 both at 0
    history += results((0, 0, -1, 0), phase=2)
    outcome = match_outcome(HJ, history)
    assert outcome.winners == (2,) and outcome.ranks == (4, 3, 1, 2)


def test_hartenjagen_phase_two_cap_ends_with_co_winners_whatever_the_total():
    rules = HJ.with_options(phases=type(HJ.phases)(phase1_target=100, phase2_cap=2))
    history = results((100, 30, 20, 20)) + results((0, 0, 0, 0), (0, 0, 0, 0), phase=2)
    outcome = match_outcome(rules, history)
    assert outcome is not None and outcome.winners == (2, 3) and outcome.totals == (100, 30, 20, 20)


def play_random(match: Match, rng: random.Random) -> None:
    while not match.is_over:
        seat = match.to_act()[0]
        deal = match.deal
        if deal.phase is Phase.PASSING:
            match.pass_cards(seat, rng.sample(deal.passable(seat), match.rules.pass_count))
        elif deal.phase is Phase.MOON_CHOICE:
            match.choose_moon(seat, rng.choice(list(MoonOption)))
        else:
            match.play(seat, rng.choice(deal.legal_plays(seat)))


@pytest.mark.parametrize("players", [3, 4])
def test_hartenjagen_matches_switch_phase_exactly_once_and_end_by_the_rules(players):
    rules = preset("hartenjagen-quick", players=players)
    for seed in range(6):
        match = Match(rules, seed=seed)
        play_random(match, random.Random(seed))
        phases = [r.phase for r in match.results]
        switch = phases.index(2)
        assert phases == [1] * switch + [2] * (len(phases) - switch)
        totals = [0] * players
        for i, r in enumerate(match.results[:switch]):
            totals = [a + b for a, b in zip(totals, r.score)]
            assert (max(totals) >= rules.phases.phase1_target) == (i == switch - 1)
        for r in match.results[switch:]:
            assert all(v <= 0 for v in r.score)  # phase 2 only subtracts
        out = match.outcome
        assert min(out.totals) <= 0 or phases.count(2) == rules.phases.phase2_cap
        assert all(out.totals[w] == min(out.totals) for w in out.winners)


def test_a_game_ends_as_soon_as_a_total_reaches_100_and_never_before():
    for seed in range(5):
        match = Match(STD, seed=seed)
        play_random(match, random.Random(seed))
        running = [0] * 4
        for i, r in enumerate(match.results):
            running = [a + b for a, b in zip(running, r.score)]
            assert (max(running) >= 100) == (i == len(match.results) - 1)
        assert match.outcome.totals == tuple(running)
        with pytest.raises(WrongPhaseError):
            match.play(0, 0)


def test_fixed_deals_format_plays_exactly_n_deals():
    match = Match(STD, MatchFormat.fixed(6), seed=3)
    play_random(match, random.Random(0))
    assert match.outcome.deals == 6 and len(match.results) == 6


def test_duplicate_seating_replays_each_shuffle_rotated_with_the_same_pass():
    match = Match(STD, MatchFormat.fixed(8, duplicate=True), seed=77)
    first_block = []
    rng = random.Random(1)
    while not match.is_over:
        deal = match.deal
        if not deal.tricks and deal.phase is Phase.PASSING and all(p is None for p in deal.passed):
            first_block.append((deal.number, deal.dealt, deal.pass_direction))
        seat = match.to_act()[0]
        if deal.phase is Phase.PASSING:
            match.pass_cards(seat, rng.sample(deal.passable(seat), 3))
        else:
            match.play(seat, rng.choice(deal.legal_plays(seat)))
    by_number = {n: (h, d) for n, h, d in first_block}
    for block in (0, 4):
        base, direction = by_number[block]
        for r in range(1, 4):
            hands, d = by_number[block + r]
            assert d is direction
            assert all(hands[(s + r) % 4] == base[s] for s in range(4))
    assert by_number[0][0] != by_number[4][0]
    assert by_number[0][1].value == "left" and by_number[4][1].value == "right"


def test_format_errors():
    with pytest.raises(ValueError, match="multiple of 4"):
        Match(STD, MatchFormat.fixed(6, duplicate=True))
    with pytest.raises(ValueError, match="at least 1"):
        Match(STD, MatchFormat.fixed(0))
    with pytest.raises(ValueError, match="seed"):
        Match(STD, seed=-1)
    with pytest.raises(ValueError, match="seed"):
        Match(STD, seed=2**64)


def test_match_default_actions_are_legal_and_the_score_sheet_lists_every_deal():
    match = Match(preset("classic", players=5), MatchFormat.fixed(5), seed=12)
    while not match.is_over:
        seat = match.to_act()[0]
        action = match.default_action(seat)
        assert action in match.legal_actions(seat) or match.deal.phase is Phase.PASSING
        match.apply(seat, action)
    sheet = match.score_sheet(["ann", "bob", "cy", "dee", "eve"])
    assert sheet.count("\n") >= 5 + 3 and "winner" in sheet
    for r in match.results:
        assert sum(r.score) in (26, 26 * 4, -26)


def test_a_deal_from_explicit_hands_is_independent_of_any_seed():
    deal = Deal.shuffled(STD, seed=5, number=1)
    again = Deal(STD, deal.dealt, deal.pass_direction, number=1)
    assert again.hands == deal.hands and again.phase is deal.phase
