"""Seat views show exactly what a seat may know; sampled deals agree with the view."""

from __future__ import annotations

import random

from hearts_engine import (
    Deal,
    Match,
    MatchFormat,
    PassDirection,
    Phase,
    cards_of,
    determinize,
    mask_of,
    parse_card,
    preset,
    sample_hands,
    seat_view,
)
from hearts_engine.cards import SUIT_MASKS
from hearts_engine.views import excluded_cards

from .scenario import deal_of, play

STD = preset("standard")


def test_view_during_passing_shows_own_hand_and_own_pass_only():
    deal = Deal.shuffled(STD, seed=3, number=0)
    mine = cards_of(deal.hands[1])[:3]
    deal.pass_cards(1, mine)
    view = seat_view(deal, 1)
    assert view.hand == cards_of(deal.hands[1]) and view.passed == mine and view.received is None
    assert seat_view(deal, 2).passed is None
    assert view.legal == () and seat_view(deal, 0).legal == cards_of(deal.hands[0])


def test_view_after_passing_shows_received_cards():
    deal = Deal.shuffled(STD, seed=3, number=1)  # right
    for s in range(4):
        deal.pass_cards(s, cards_of(deal.hands[s])[-3:])
    view = seat_view(deal, 0)
    assert view.received == cards_of(deal.passed[1])
    assert view.pass_direction is PassDirection.RIGHT


def test_match_view_carries_totals_and_previous_deal_scores():
    match = Match(STD, MatchFormat.fixed(3), seed=2)
    rng = random.Random(2)
    while len(match.results) < 1:
        seat = match.to_act()[0]
        match.apply(seat, rng.choice(match.legal_actions(seat)) if match.deal.phase is not Phase.PASSING
                    else match.default_action(seat))
    view = match.view(0)
    assert view.totals == match.totals and view.deal_scores == (match.results[0].score,)


def test_shown_voids_and_inferences():
    deal = deal_of(STD, {0: "2C 2D", 1: "3C 3D", 2: "4C 9H", 3: "AC AD"}, voids={2: "D"})
    play(deal, "2C 3C 4C AC", "AD 2D 3D 9H")
    excluded = excluded_cards(seat_view(deal, 0))
    assert excluded[2] == SUIT_MASKS[1] and excluded[0] == excluded[1] == excluded[3] == 0
    # An all-hearts leader before hearts broke shows it held nothing but hearts.
    deal = deal_of(STD, {0: "2C", 1: "3C", 2: "4C", 3: "AC 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH"})
    play(deal, "2C 3C 4C AC 2H")
    ex = excluded_cards(seat_view(deal, 0))
    assert ex[3] == STD.deck & ~SUIT_MASKS[2]


def test_sampled_hands_respect_voids_sizes_and_the_cards_this_seat_passed():
    rng = random.Random(7)
    for seed in range(30):
        deal = Deal.shuffled(STD, seed=seed, number=seed % 3)
        for s in range(4):
            deal.pass_cards(s, rng.sample(cards_of(deal.hands[s]), 3))
        for _ in range(rng.randrange(0, 45)):
            deal.push_play(rng.choice(cards_of(deal.legal_mask())))
        if deal.phase is not Phase.PLAYING:
            continue
        for me in range(4):
            view = seat_view(deal, me)
            excluded = excluded_cards(view)
            for s in range(4):
                assert not deal.hands[s] & excluded[s], "an inference contradicts the true deal"
            for _ in range(3):
                sampled = sample_hands(view, rng)
                assert sampled[me] == deal.hands[me]
                assert [h.bit_count() for h in sampled] == [h.bit_count() for h in deal.hands]
                assert all(not sampled[s] & excluded[s] for s in range(4) if s != me)
                receiver = (me + deal.pass_direction.offset(4)) % 4
                still_held = deal.passed[me] & ~(deal.played | deal.trick_mask)
                assert sampled[receiver] & still_held == still_held
                world = determinize(view, rng)
                again = seat_view(world, me)
                assert (again.hand, again.tricks, again.trick, again.legal, again.hand_sizes) == (
                    view.hand,
                    view.tricks,
                    view.trick,
                    view.legal,
                    view.hand_sizes,
                )
                world.playout(rng)


def test_sampling_is_exact_when_only_one_deal_fits():
    # Late in a deal with every other seat void in all but one suit, sampling must still succeed.
    deal = deal_of(STD, {0: "2C", 1: "3C", 2: "4C", 3: "5C"})
    rng = random.Random(0)
    while len(deal.tricks) < 11:
        deal.push_play(cards_of(deal.legal_mask())[0])
    view = seat_view(deal, deal.turn)
    for _ in range(20):
        sampled = sample_hands(view, rng)
        assert mask_of(c for h in sampled for c in cards_of(h)) | deal.played | deal.trick_mask == STD.deck
