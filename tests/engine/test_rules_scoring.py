"""Deal scoring: card values, the moon in every preset, the classic choice, bonus cards."""

from __future__ import annotations

import random

import pytest

from hearts_engine import (
    Deal,
    MoonOption,
    NotYourTurnError,
    Phase,
    cards_of,
    parse_card,
    preset,
)
from hearts_engine.cards import CLUBS, SUIT_MASKS
from hearts_engine.scoring import DealResult, default_moon_option

from .scenario import hands, late_position, play

STD = preset("standard")
ALL_CLUBS = "2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC"


def run_all_clubs(rules) -> Deal:
    """Seat 0 holds every club, leads them all and so takes every card of the deal."""
    deal = Deal(rules, hands(rules, {0: ALL_CLUBS}))
    while deal.phase is Phase.PLAYING:
        deal.play(deal.turn, deal.legal_plays(deal.turn)[0])
    assert deal.taken[0] == rules.deck
    return deal


def test_hearts_are_one_point_and_the_queen_thirteen_totalling_26():
    assert STD.deal_total == 26
    assert STD.card_value(parse_card("QS")) == 13 and STD.card_value(parse_card("7H")) == 1
    assert STD.card_value(parse_card("JD")) == 0 and STD.card_value(parse_card("QH")) == 1


def test_random_deals_hand_out_exactly_26_points_or_a_moon():
    rng = random.Random(3)
    for number in range(40):
        score = Deal.shuffled(STD, seed=11, number=number).playout(rng)
        assert sorted(score) in ([0, 26, 26, 26],) or sum(score) == 26


def test_standard_moon_gives_the_shooter_zero_and_every_other_seat_26():
    deal = run_all_clubs(STD)
    assert deal.shooter == 0 and deal.score == (0, 26, 26, 26)


def test_a_moon_is_stopped_when_another_seat_takes_a_single_heart():
    # Seat 0 took every other penalty card; seat 1 now leads 2H and wins it: no moon.
    deal = late_position(
        STD,
        taken={0: "QS AS KS JS 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH", 1: "6C 7C 8C 9C"},
        filler=0,
        remaining={1: "2H", 2: "TC", 3: "JC", 0: "QC"},
        leader=1,
    )
    play(deal, "2H TC JC QC")
    assert deal.shooter is None
    assert deal.score == (25, 1, 0, 0)


def test_a_heart_discarded_into_the_shooters_own_trick_does_not_block_the_moon():
    # The seeds' "block": seat 1 discards its 2H into the trick seat 0 is winning.
    deal = late_position(
        STD,
        taken={0: "QS AS KS JS 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH"},
        remaining={0: "AC", 1: "2H", 2: "TC", 3: "JC"},
        leader=0,
    )
    play(deal, "AC 2H TC JC")
    assert deal.shooter == 0, "feeding the shooter a heart must not block the moon"
    assert deal.score == (0, 26, 26, 26)


def test_classic_moon_asks_the_shooter_and_applies_its_choice():
    rules = preset("classic")
    for option, expected in (
        (MoonOption.SUBTRACT_FROM_SELF, (-26, 0, 0, 0)),
        (MoonOption.ADD_TO_OTHERS, (0, 26, 26, 26)),
    ):
        deal = run_all_clubs(rules)
        assert deal.phase is Phase.MOON_CHOICE and deal.to_act() == (0,)
        with pytest.raises(NotYourTurnError):
            deal.choose_moon(1, option)
        deal.choose_moon(0, option)
        assert deal.phase is Phase.SCORED and deal.score == expected and deal.moon_option is option


def test_classic_moon_timeout_default_adds_unless_that_loses_the_match_for_the_shooter():
    rules = preset("classic")
    add = DealResult((0, 26, 26, 26), 1, 0, MoonOption.ADD_TO_OTHERS)
    early = [DealResult((10, 10, 5, 1))]
    assert default_moon_option(rules, early, add) is MoonOption.ADD_TO_OTHERS
    # Adding ends the match (seat 1 reaches 106) with the shooter the sole winner: add.
    winning = [DealResult((40, 80, 50, 60))]
    assert default_moon_option(rules, winning, add) is MoonOption.ADD_TO_OTHERS
    # Adding ends the match but seat 3 (at 10) would win: subtract instead.
    losing = [DealResult((60, 80, 50, 10))]
    assert default_moon_option(rules, losing, add) is MoonOption.SUBTRACT_FROM_SELF
    # Tied on total after adding: the shooter's 0 wins the last-deal tie-break, so add.
    tied = [DealResult((30, 80, 50, 4))]
    assert default_moon_option(rules, tied, add) is MoonOption.ADD_TO_OTHERS
    # One point worse than seat 3 after adding: subtract.
    behind = [DealResult((31, 80, 50, 4))]
    assert default_moon_option(rules, behind, add) is MoonOption.SUBTRACT_FROM_SELF


def test_hartenjagen_values_and_moon_in_phase_one_and_two():
    rules = preset("hartenjagen")
    assert rules.deal_total == 20
    assert rules.card_value(parse_card("JC")) == 2 and rules.card_value(parse_card("QS")) == 5
    deal = Deal(rules, hands(rules, {0: ALL_CLUBS}))
    while deal.phase is Phase.PLAYING:
        deal.play(deal.turn, deal.legal_plays(deal.turn)[0])
    assert deal.score == (0, 20, 20, 20)
    deal2 = Deal(rules, hands(rules, {0: ALL_CLUBS}), scoring_phase=2)
    while deal2.phase is Phase.PLAYING:
        deal2.play(deal2.turn, deal2.legal_plays(deal2.turn)[0])
    assert deal2.score == (-20, 0, 0, 0)


def test_hartenjagen_three_players_36_cards_six_of_clubs_leads_16_points():
    rules = preset("hartenjagen", players=3)
    assert rules.deck.bit_count() == 36 and rules.hand_size == 12
    assert rules.deal_total == 16
    assert cards_of(rules.deck & SUIT_MASKS[CLUBS])[0] == parse_card("6C") == rules.first_lead
    rng = random.Random(5)
    for number in range(30):
        deal = Deal.shuffled(rules, seed=2, number=number)
        assert deal.legal_plays(deal.turn) == (parse_card("6C"),)
        score = deal.playout(rng)
        assert sum(score) in (16, 32) and len(deal.tricks) == 12


def test_omnibus_jack_of_diamonds_is_minus_ten_and_may_fall_on_the_first_trick():
    rules = preset("omnibus")
    assert rules.card_value(parse_card("JD")) == -10 and rules.deal_total == 26
    deal = Deal(rules, hands(rules, {0: "2C", 1: "JD QS AH"}, voids={1: "C"}))
    play(deal, "2C")
    assert parse_card("JD") in deal.legal_plays(1)
    assert parse_card("QS") not in deal.legal_plays(1)


def test_omnibus_moon_keeps_the_bonus_with_whoever_took_it():
    rules = preset("omnibus")
    deal = run_all_clubs(rules)  # seat 0 took everything, J♦ included
    assert deal.score == (-10, 26, 26, 26)
    deal = late_position(
        rules,
        taken={0: "QS AS KS JS 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH 2C 3C 4C", 2: "JD 2D 3D 4D"},
        filler=0,
        remaining={0: "AC", 1: "TC", 2: "5C", 3: "6C"},
        leader=0,
    )
    play(deal, "AC TC 5C 6C")
    assert deal.shooter == 0 and deal.score == (0, 26, 16, 26)


def test_omnibus_moon_may_require_the_bonus_card():
    rules = preset("omnibus", moon_requires_bonus=True)
    deal = late_position(
        rules,
        taken={0: "QS AS KS JS 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH 2C 3C 4C", 2: "JD 2D 3D 4D"},
        filler=0,
        remaining={0: "AC", 1: "TC", 2: "5C", 3: "6C"},
        leader=0,
    )
    play(deal, "AC TC 5C 6C")
    assert deal.shooter is None and deal.score == (26, 0, -10, 0)
    assert run_all_clubs(rules).score == (-10, 26, 26, 26)


def test_no_trick_bonus_option_rewards_seats_that_took_no_trick_except_on_a_moon():
    rules = STD.with_options(no_trick_bonus=-5)
    deal = late_position(
        rules,
        taken={0: "QS AS KS JS 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH 2C 3C 4C 5D", 1: "2H 2D 3D 4D"},
        filler=0,
        remaining={0: "5C", 1: "AC", 2: "6C", 3: "7C"},
        leader=1,
    )
    play(deal, "AC 6C 7C 5C")
    assert deal.score == (25, 1, -5, -5)
    assert run_all_clubs(rules).score == (0, 26, 26, 26)


def test_moon_detection_uses_the_cards_in_play_for_every_classic_player_count():
    rng = random.Random(8)
    for players in range(3, 8):
        rules = preset("classic", players=players)
        assert rules.deal_total == 26
        for number in range(10):
            score = Deal.shuffled(rules, seed=4, number=number).playout(rng, MoonOption.ADD_TO_OTHERS)
            assert sum(score) == 26 or sorted(score) == [0] + [26] * (players - 1)
