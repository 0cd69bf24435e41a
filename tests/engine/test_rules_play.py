"""Scenario tests for trick play: one test per rule of RULES.md's common ground and presets."""

from __future__ import annotations

import pytest

from hearts_engine import (
    Deal,
    FirstTrickFallback,
    IllegalActionError,
    InvalidActionError,
    MoonOption,
    NotYourTurnError,
    PassDirection,
    Phase,
    WrongPhaseError,
    parse_card,
    preset,
)

from .scenario import deal_of, names, play

STD = preset("standard")
CLASSIC = preset("classic")


def test_first_lead_is_the_two_of_clubs_by_its_holder():
    deal = deal_of(STD, {2: "2C 5C"})
    assert deal.phase is Phase.PLAYING and deal.turn == 2
    assert names(deal.legal_plays(2)) == {"2C"}
    with pytest.raises(IllegalActionError, match="first lead must be 2C"):
        deal.play(2, parse_card("5C"))


def test_must_follow_suit_when_able_and_highest_of_led_suit_wins():
    deal = deal_of(STD, {0: "2C 9C", 1: "3C AD", 2: "KC", 3: "AC"})
    play(deal, "2C")
    with pytest.raises(IllegalActionError, match="must follow clubs"):
        deal.play(1, parse_card("AD"))
    play(deal, "3C KC AC")
    assert deal.tricks[0].winner == 3 and deal.turn == 3


def test_an_off_suit_card_never_wins_the_trick():
    deal = deal_of(STD, {0: "2C", 1: "AD 5D", 2: "3C", 3: "4C"}, voids={1: "C"})
    play(deal, "2C AD 3C 4C")
    assert deal.tricks[0].winner == 3


def test_first_trick_void_in_clubs_may_not_discard_hearts_or_the_queen():
    deal = deal_of(STD, {0: "2C", 1: "QS AH KH 5D"}, voids={1: "C"})
    play(deal, "2C")
    legal = names(deal.legal_plays(1))
    assert "QS" not in legal and not any(c.endswith("H") for c in legal) and "5D" in legal
    with pytest.raises(IllegalActionError, match="first trick"):
        deal.play(1, parse_card("AH"))
    with pytest.raises(IllegalActionError, match="first trick"):
        deal.play(1, parse_card("QS"))


def test_first_trick_fallback_any_card_when_holding_only_hearts_and_the_queen():
    hearts_and_queen = "2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH QS"
    deal = deal_of(STD, {0: "2C", 1: hearts_and_queen})
    play(deal, "2C")
    assert names(deal.legal_plays(1)) == set(hearts_and_queen.split())


def test_a_heart_discarded_through_the_first_trick_fallback_breaks_hearts():
    deal = deal_of(STD, {0: "2C", 1: "2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH QS", 2: "3C", 3: "4C AH 5D"})
    play(deal, "2C KH 3C 4C")
    assert deal.hearts_broken and deal.turn == 3
    assert "AH" in names(deal.legal_plays(3))


def test_queen_last_fallback_keeps_the_queen_back_on_the_first_trick():
    rules = STD.with_options(first_trick_fallback=FirstTrickFallback.QUEEN_LAST)
    deal = deal_of(rules, {0: "2C", 1: "2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH QS"})
    play(deal, "2C")
    assert "QS" not in names(deal.legal_plays(1)) and "KH" in names(deal.legal_plays(1))


def test_points_allowed_on_the_first_trick_when_the_option_is_off():
    rules = STD.with_options(first_trick_no_points=False)
    deal = deal_of(rules, {0: "2C", 1: "QS AH 5D"}, voids={1: "C"})
    play(deal, "2C")
    assert {"QS", "AH", "5D"} <= names(deal.legal_plays(1))


def test_hearts_may_not_be_led_before_they_are_broken():
    deal = deal_of(STD, {0: "2C AH 3D", 1: "3C", 2: "4C", 3: "5C"})
    play(deal, "2C 3C 4C 5C")
    assert deal.turn == 3
    deal = deal_of(STD, {0: "2C", 1: "3C", 2: "4C", 3: "AC AH 3D"})
    play(deal, "2C 3C 4C AC")
    assert deal.turn == 3 and not deal.hearts_broken
    assert "AH" not in names(deal.legal_plays(3))
    with pytest.raises(IllegalActionError, match="hearts are not broken"):
        deal.play(3, parse_card("AH"))


def test_hearts_broken_by_a_discard_allow_a_heart_lead_on_a_later_trick():
    # Seat 2 is void in diamonds and discards a heart on trick 2; seat 3 then leads a heart.
    deal = deal_of(STD, {0: "2C 2D", 1: "3C 3D", 2: "4C 9H", 3: "AC AD KH"}, voids={2: "D"})
    play(deal, "2C 3C 4C AC")
    assert "KH" not in names(deal.legal_plays(3))
    play(deal, "AD 2D 3D 9H")
    assert deal.hearts_broken and deal.broken_trick == 1 and deal.turn == 3
    assert "KH" in names(deal.legal_plays(3))


def test_standard_a_heart_led_by_an_all_hearts_hand_does_not_break_hearts():
    all_hearts = "2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH"
    deal = deal_of(STD, {0: "2C 3C", 1: "4C", 2: "5C", 3: all_hearts})
    play(deal, "2C 4C 5C")
    assert names(deal.legal_plays(3)) == set(all_hearts.split())  # void: any card, even a heart
    # Seat 3 cannot win a club trick; give it the lead by construction instead:
    deal = deal_of(STD, {0: "2C", 1: "3C", 2: "4C", 3: "AC 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH"})
    play(deal, "2C 3C 4C AC")
    assert deal.turn == 3 and names(deal.legal_plays(3)) == {f"{r}H" for r in "23456789TJQK"}
    deal.play(3, parse_card("2H"))  # an all-hearts leader may lead a heart
    assert not deal.hearts_broken  # led, not discarded: hearts are still unbroken in standard


def test_classic_a_heart_led_by_an_all_hearts_hand_breaks_hearts():
    deal = deal_of(CLASSIC, {0: "2C", 1: "3C", 2: "4C", 3: "AC 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH"})
    play(deal, "2C 3C 4C AC 2H")
    assert deal.hearts_broken


def test_with_only_hearts_and_the_queen_the_leader_must_lead_the_queen():
    hand = "AC 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH QS"
    deal = deal_of(STD, {0: "2C", 1: "3C", 2: "4C", 3: hand})
    play(deal, "2C 3C 4C AC")
    assert names(deal.legal_plays(3)) == {"QS"}
    with pytest.raises(IllegalActionError, match="lead the queen of spades"):
        deal.play(3, parse_card("2H"))
    relaxed = deal_of(STD.with_options(lead_heart_instead_of_queen=True), {0: "2C", 1: "3C", 2: "4C", 3: hand})
    play(relaxed, "2C 3C 4C AC")
    assert names(relaxed.legal_plays(3)) == set(hand.split()) - {"AC"}


def test_the_queen_of_spades_may_be_led_any_time():
    deal = deal_of(STD, {0: "2C", 1: "3C", 2: "4C", 3: "AC QS 2D"})
    play(deal, "2C 3C 4C AC")
    assert "QS" in names(deal.legal_plays(3))
    play(deal, "QS")
    assert not deal.hearts_broken  # standard: the queen does not break hearts


def test_classic_the_queen_of_spades_breaks_hearts():
    deal = deal_of(CLASSIC, {0: "2C", 1: "3C", 2: "4C", 3: "AC QS 2D"})
    play(deal, "2C 3C 4C AC QS")
    assert deal.hearts_broken


def test_queen_breaks_hearts_as_an_option_of_standard():
    rules = STD.with_options(queen_breaks_hearts=True)
    deal = deal_of(rules, {0: "2C", 1: "3C", 2: "4C", 3: "AC QS 2D"})
    play(deal, "2C 3C 4C AC QS")
    assert deal.hearts_broken


def test_hartenjagen_has_no_first_trick_or_lead_restriction():
    rules = preset("hartenjagen")
    deal = deal_of(rules, {0: "2C", 1: "QS AH 5D", 2: "3C", 3: "4C AC 2H 3D"}, voids={1: "C"})
    play(deal, "2C")
    assert {"QS", "AH"} <= names(deal.legal_plays(1))
    play(deal, "AH 3C AC")  # seat 3 wins with AC
    assert "2H" in names(deal.legal_plays(3))  # hearts may be led at once


def test_out_of_turn_wrong_phase_and_malformed_plays_are_typed_errors():
    deal = deal_of(STD, {0: "2C"}, direction=PassDirection.LEFT)
    with pytest.raises(WrongPhaseError):
        deal.play(0, parse_card("2C"))
    deal = deal_of(STD, {0: "2C"})
    with pytest.raises(NotYourTurnError):
        deal.play(1, parse_card("3C"))
    for bad in (52, -1, True, "2C", 1.0, None):
        with pytest.raises(InvalidActionError):
            deal.play(0, bad)  # type: ignore[arg-type]
    for bad_seat in (4, -1, "0", None):
        with pytest.raises(InvalidActionError):
            deal.play(bad_seat, 0)  # type: ignore[arg-type]
    with pytest.raises(IllegalActionError, match="not in your hand"):
        deal.play(0, parse_card("QS") if deal.hands[0] >> parse_card("QS") & 1 == 0 else parse_card("AS"))
    with pytest.raises(WrongPhaseError):
        deal.choose_moon(0, MoonOption.ADD_TO_OTHERS)


def test_explicit_hands_must_partition_the_deck():
    rules = STD
    good = deal_of(rules, {}).dealt
    with pytest.raises(InvalidActionError):
        Deal(rules, [good[0], good[0], good[2], good[3]])
    with pytest.raises(InvalidActionError):
        Deal(rules, good[:3])
    with pytest.raises(InvalidActionError):
        Deal(rules, [good[0] | good[1], 0, good[2], good[3]])


def test_error_messages_never_name_a_card_the_actor_cannot_see():
    deal = deal_of(STD, {0: "2C", 1: "3C", 2: "4C", 3: "5C"})
    hidden = deal.hands[1] | deal.hands[2] | deal.hands[3]
    from hearts_engine import card_name, cards_of

    messages = []
    for c in range(52):
        try:
            deal.play(0, c)
        except IllegalActionError as exc:
            messages.append((c, exc.reason))
        else:
            break
    for c, reason in messages:
        for other in cards_of(hidden):
            if other != c:
                assert card_name(other) not in reason.split()
