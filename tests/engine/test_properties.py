"""Property tests over every preset and player count (hypothesis draws seeds and choices)."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from hearts_engine import (
    PRESETS,
    Match,
    MatchFormat,
    MatchRecord,
    MoonOption,
    Phase,
    SeatView,
    cards_of,
    mask_of,
    preset,
    record_of,
    replay,
)
from hearts_engine.cards import SUIT_MASKS, SUIT_OF

VARIANTS = [(name, players) for name in sorted(PRESETS) for players in PRESETS[name].players] + [
    ("hartenjagen", 3, True),
    ("hartenjagen", 4, True),
]


def build(variant) -> object:
    name, players, *passing = variant
    return preset(name, players=players, passing=True) if passing else preset(name, players=players)


def view_cards(view: SeatView) -> int:
    cards = list(view.hand) + list(view.passed or ()) + list(view.received or ()) + list(view.legal)
    cards += list(view.trick) + [c for t in view.tricks for c in t.cards]
    return mask_of(cards)


def check_deal_total(rules, deal) -> None:
    bonus = sum(rules.points_of(t & rules.bonus_mask) for t in deal.taken)
    total = rules.deal_total
    n = rules.players
    if deal.scoring_phase == 2:
        expected = -total + bonus
    elif deal.shooter is None:
        expected = total + bonus
    elif deal.moon_option is MoonOption.SUBTRACT_FROM_SELF:
        expected = -total + bonus
    else:
        expected = (n - 1) * total + bonus
    assert sum(deal.score) == expected


def play_checked(rules, seed: int, choices: random.Random, deals: int) -> Match:
    match = Match(rules, MatchFormat.fixed(deals), seed=seed)
    n = rules.players
    while not match.is_over:
        deal = match.deal
        received = [deal.received_by(s) or 0 for s in range(n)]
        for s in range(n):  # no view ever holds another seat's unplayed card
            allowed = deal.dealt[s] | received[s] | deal.played | mask_of(deal.trick)
            assert view_cards(match.view(s)) & ~allowed == 0
        seat = match.to_act()[0]
        if deal.phase is Phase.PASSING:
            match.pass_cards(seat, choices.sample(deal.passable(seat), rules.pass_count))
            continue
        if deal.phase is Phase.MOON_CHOICE:
            match.choose_moon(seat, choices.choice(list(MoonOption)))
        else:
            legal = deal.legal_plays(seat)
            hand = deal.hands[seat]
            if deal.trick and hand & SUIT_MASKS[deal.led_suit]:
                assert all(SUIT_OF[c] == deal.led_suit for c in legal), "suit must be followed"
            assert legal and mask_of(legal) & ~hand == 0
            assert list(legal) == sorted(legal), "legal plays are documented as ascending"
            match.play(seat, choices.choice(legal))
        if deal.is_over:
            played = [c for t in deal.tricks for c in t.cards]
            assert len(played) == len(set(played)) == rules.deck.bit_count()
            assert mask_of(played) == rules.deck
            check_deal_total(rules, deal)
    return match


@settings(max_examples=200, deadline=None)
@given(variant=st.sampled_from(VARIANTS), seed=st.integers(0, 2**64 - 1), choice_seed=st.integers(0, 2**32))
def test_random_play_keeps_every_invariant(variant, seed, choice_seed):
    rules = build(variant)
    match = play_checked(rules, seed, random.Random(choice_seed), deals=2)
    again = replay(MatchRecord.from_json(record_of(match).to_json()))
    assert again.results == match.results and again.outcome == match.outcome


@settings(max_examples=40, deadline=None)
@given(variant=st.sampled_from(VARIANTS), seed=st.integers(0, 2**64 - 1))
def test_whole_games_end_by_their_rules_and_replay(variant, seed):
    rules = build(variant)
    match = Match(rules, seed=seed)
    rng = random.Random(seed)
    while not match.is_over:
        seat = match.to_act()[0]
        match.apply(seat, match.default_action(seat) if rng.random() < 0.3 else rng.choice(
            match.legal_actions(seat) if match.deal.phase is not Phase.PASSING else [match.default_action(seat)]
        ))
    assert match.outcome.winners and all(match.outcome.ranks[w] == 1 for w in match.outcome.winners)
    assert replay(record_of(match)).outcome == match.outcome


@settings(max_examples=40, deadline=None)
@given(variant=st.sampled_from(VARIANTS), seed=st.integers(0, 2**64 - 1), number=st.integers(0, 50))
def test_shuffles_deal_the_whole_deck_evenly(variant, seed, number):
    rules = build(variant)
    from hearts_engine import Deal

    deal = Deal.shuffled(rules, seed, number)
    assert sum(h.bit_count() for h in deal.dealt) == rules.deck.bit_count()
    assert all(h.bit_count() == rules.hand_size for h in deal.dealt)
    assert mask_of(c for h in deal.dealt for c in cards_of(h)) == rules.deck
    assert deal.dealt == Deal.shuffled(rules, seed, number).dealt


@settings(max_examples=40, deadline=None)
@given(variant=st.sampled_from(VARIANTS), seed=st.integers(0, 2**64 - 1), duplicate=st.booleans())
def test_a_match_started_at_a_late_deal_plays_on_as_the_whole_one(variant, seed, duplicate):
    """Match.at_deal (web replays show a late deal without the earlier actions): at each
    deal's start it holds that deal as dealt and the totals so far, and the same actions
    from there end the match the same way, phases and moon choices included."""
    rules = build(variant)
    format = MatchFormat.fixed(2 * rules.players, duplicate=True) if duplicate else MatchFormat.game()
    whole = Match(rules, format, seed=seed)
    rng = random.Random(seed)
    starts = {0: []}
    while not whole.is_over:
        seat = whole.to_act()[0]
        legal = whole.legal_actions(seat) if whole.deal.phase is not Phase.PASSING else [whole.default_action(seat)]
        whole.apply(seat, rng.choice(legal))
        if not whole.is_over:
            starts.setdefault(whole.deal.number, list(whole.results))
    for number, results in starts.items():
        late = Match.at_deal(rules, format, seed, results)
        assert late.deal.number == number and late.totals == totals_before(whole, number)
        for deal_number, seat, action in whole.history:
            if deal_number >= number:
                late.apply(seat, action)
        assert late.results == whole.results and late.outcome == whole.outcome


def totals_before(match, number):
    return tuple(sum(r.score[s] for r in match.results[:number]) for s in range(match.rules.players))
