"""House strategies: legal always, the heuristic's advice from the original documents,
and Monte Carlo within its time budget."""

from __future__ import annotations

import random
import time

import pytest

from hearts_engine import Match, MatchFormat, PassDirection, Phase, parse_card, preset, seat_view
from heartsbot.strategies import STRATEGIES, HeuristicStrategy, MonteCarloStrategy, make_strategy

from ..engine.scenario import deal_of, late_position, play

STD = preset("standard")


@pytest.mark.parametrize("name", sorted(STRATEGIES))
@pytest.mark.parametrize(("ruleset", "players"), [("standard", 4), ("classic", 5), ("hartenjagen", 3), ("omnibus", 4)])
def test_every_strategy_only_makes_legal_moves(name, ruleset, players):
    match = Match(preset(ruleset, players=players), MatchFormat.fixed(players), seed=7)
    bots = [make_strategy(name, seat) for seat in range(players)]
    for bot in bots:
        bot.time_limit_s = 0.005
    while not match.is_over:
        seat = match.to_act()[0]
        view = match.view(seat)
        phase = match.deal.phase
        if phase is Phase.PASSING:
            match.pass_cards(seat, bots[seat].choose_pass(view))  # the engine rejects anything illegal
        elif phase is Phase.MOON_CHOICE:
            match.choose_moon(seat, bots[seat].choose_moon(view))
        else:
            match.play(seat, bots[seat].choose_play(view))


def test_heuristic_passes_an_uncovered_queen_and_high_hearts():
    deal = deal_of(STD, {0: "QS 2S AH KH 3C 4C 5C 6C 7C 8D 9D TD JD"}, direction=PassDirection.LEFT)
    chosen = {c for c in HeuristicStrategy().choose_pass(seat_view(deal, 0))}
    assert parse_card("QS") in chosen and parse_card("AH") in chosen


# Hearts spread over two seats, so nobody threatens a moon.
HEARTS_TAKEN = {0: "2H 3H 4H 5H 6H 7H 2C 3C", 3: "8H 9H TH JH QH KH AH 4C", 1: "5C 6C 7C 8C"}


def test_heuristic_dumps_the_queen_when_void_and_ducks_as_high_as_it_can():
    deal = late_position(STD, taken=HEARTS_TAKEN, remaining={1: "AD 2D", 2: "QS 3S", 3: "KD 4D", 0: "JD 5D"},
                         leader=1)
    play(deal, "AD")
    assert HeuristicStrategy().choose_play(seat_view(deal, 2)) == parse_card("QS")
    play(deal, "QS")
    assert HeuristicStrategy().choose_play(seat_view(deal, 3)) == parse_card("KD")  # under the ace: duck high


def test_heuristic_blocks_a_moon_by_taking_a_heart_not_by_feeding_one():
    # Seat 1 has taken every point so far; seat 2 can win this heart trick with AH.
    deal = late_position(
        STD,
        taken={1: "QS AS KS JS 2H 3H 4H 5H 6H 7H 8H 9H JH QH KH 2C"},
        remaining={1: "TH 2D", 2: "AH 3D", 3: "QC 4D", 0: "KC 5D"},
        leader=1,
        filler=1,
    )
    play(deal, "TH")
    assert HeuristicStrategy().choose_play(seat_view(deal, 2)) == parse_card("AH")


class SteppingClock:
    """A perf_counter that advances ``step`` seconds per reading: the budget check is then
    exercised exactly, whatever the load on the machine (no wall-clock threshold)."""

    def __init__(self, step: float) -> None:
        self.now, self.step = 1000.0, step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def stepping_time(monkeypatch, step: float) -> SteppingClock:
    """mc's clock made a SteppingClock, and its sleep one that moves that clock on."""
    from heartsbot.strategies import monte_carlo

    clock = SteppingClock(step)

    def sleep(seconds: float) -> None:
        clock.now += seconds

    monkeypatch.setattr(monte_carlo.time, "perf_counter", clock)
    monkeypatch.setattr(monte_carlo.time, "sleep", sleep)
    return clock


def test_monte_carlo_answers_when_its_time_budget_is_up_on_real_positions(monkeypatch):
    clock = stepping_time(monkeypatch, 0.004)  # every sample "takes" 4 ms
    rng = random.Random(4)
    mc = MonteCarloStrategy(1)
    mc.time_limit_s = 0.03
    checked = 0
    for number in range(8):
        match = Match(STD, MatchFormat.fixed(1), seed=number)
        while not match.is_over:
            seat = match.to_act()[0]
            deal = match.deal
            if deal.phase is Phase.PASSING:
                match.pass_cards(seat, rng.sample(deal.passable(seat), 3))
                continue
            if deal.phase is Phase.PLAYING and len(deal.legal_plays(seat)) > 1 and rng.random() < 0.3:
                start = clock.now
                card = mc.choose_play(match.view(seat))
                # The deadline is 85% of 30 ms after the first reading (4 ms in). A 6th 4 ms
                # sample would end at 28 ms, past it (29.5): it stops after 5 and waits.
                assert mc.last_samples == 5 and clock.now - start == pytest.approx(0.004 + 0.0255)
                assert card in deal.legal_plays(seat)
                checked += 1
                match.play(seat, card)
            else:
                match.apply(seat, rng.choice(match.legal_actions(seat)))
    assert checked > 10


def test_monte_carlo_takes_as_long_over_a_forced_play_as_over_a_search(monkeypatch):
    """An attack pass: a forced play (one legal card) was answered at once and a searched
    one after the budget, so a spectator timing an mc seat's cards live told which plays
    were forced (99 of 102 right): the seat was void in the led suit, or held only hearts.
    And a search ended with its last sample's overshoot, which grows with the legal cards.
    Now both answer when the budget is up: here 85 ms after the first reading."""
    clock = stepping_time(monkeypatch, 0.004)
    views = []
    for last in ("9C", "5D"):  # seat 0 must follow diamonds: with JD alone, or with JD or 5D
        deal = late_position(STD, taken=HEARTS_TAKEN, remaining={1: "AD 2D", 2: "QS 3S", 3: "KD 4D", 0: f"JD {last}"},
                             leader=1)
        play(deal, "AD", "3S", "4D")
        views.append(seat_view(deal, 0))
    assert [len(v.legal) for v in views] == [1, 2]
    mc = MonteCarloStrategy(1)
    mc.time_limit_s = 0.1
    took = []
    for view in views:
        start = clock.now
        mc.choose_play(view)
        took.append(clock.now - start)
    assert took == [pytest.approx(0.004 + 0.085)] * 2


def test_strategies_are_reproducible_from_their_seed():
    match = Match(STD, MatchFormat.fixed(1), seed=3)
    view = match.view(0)
    a, b = make_strategy("random", 5), make_strategy("random", 5)
    assert a.choose_pass(view) == b.choose_pass(view)
    assert random.Random(5).random() == random.Random(5).random()
    with pytest.raises(ValueError, match="unknown strategy"):
        make_strategy("genius")
