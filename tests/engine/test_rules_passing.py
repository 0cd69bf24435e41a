"""Passing: simultaneous, schedule by deal number, three cards, every error path."""

from __future__ import annotations

import pytest

from hearts_engine import (
    Deal,
    IllegalActionError,
    InvalidActionError,
    NotYourTurnError,
    PassDirection,
    Phase,
    WrongPhaseError,
    cards_of,
    preset,
    seat_view,
)

from .scenario import hands

STD = preset("standard")


def passing_deal(direction: PassDirection, rules=STD) -> Deal:
    return Deal(rules, hands(rules, {}), direction)


def three(deal: Deal, seat: int) -> tuple[int, ...]:
    return cards_of(deal.hands[seat])[:3]


@pytest.mark.parametrize(
    ("direction", "offset"),
    [(PassDirection.LEFT, 1), (PassDirection.RIGHT, 3), (PassDirection.ACROSS, 2)],
)
def test_cards_move_to_the_right_seat_only_once_every_seat_has_chosen(direction, offset):
    deal = passing_deal(direction)
    dealt = list(deal.hands)
    chosen = {s: three(deal, s) for s in range(4)}
    for s in (2, 0, 3):
        deal.pass_cards(s, chosen[s])
        assert deal.hands == dealt, "a card moved before every seat had chosen"
        assert seat_view(deal, (s + offset) % 4).received is None
        assert deal.phase is Phase.PASSING
    assert deal.to_act() == (1,)
    deal.pass_cards(1, chosen[1])
    assert deal.phase is Phase.PLAYING
    for s in range(4):
        receiver = (s + offset) % 4
        for c in chosen[s]:
            assert deal.hands[receiver] >> c & 1
        assert set(seat_view(deal, receiver).received or ()) == set(chosen[s])


def test_left_is_the_next_seat_clockwise():
    assert PassDirection.LEFT.offset(4) == 1 and PassDirection.RIGHT.offset(4) == 3
    assert PassDirection.RIGHT.offset(3) == 2 and PassDirection.HOLD.offset(5) == 0


def test_schedule_by_deal_number_from_zero():
    assert [STD.pass_direction(k).value for k in range(6)] == ["left", "right", "across", "hold", "left", "right"]
    classic5 = preset("classic", players=5)
    assert [classic5.pass_direction(k).value for k in range(3)] == ["left", "right", "left"]
    assert [preset("classic", players=4).pass_direction(k).value for k in range(4)] == [
        "left",
        "right",
        "across",
        "hold",
    ]


def test_a_hold_deal_starts_with_play():
    deal = Deal.shuffled(STD, seed=1, number=3)
    assert deal.pass_direction is PassDirection.HOLD and deal.phase is Phase.PLAYING


def test_hartenjagen_passes_only_with_its_option():
    assert preset("hartenjagen").pass_schedule == (PassDirection.HOLD,)
    assert preset("hartenjagen", passing=True).pass_schedule == STD.pass_schedule
    assert preset("hartenjagen", players=3, passing=True).pass_schedule == (PassDirection.LEFT, PassDirection.RIGHT)
    assert preset("hartenjagen", players=3, passing=True).pass_count == 3


def test_pass_errors_are_typed_and_leave_the_deal_unchanged():
    deal = passing_deal(PassDirection.LEFT)
    mine = three(deal, 0)
    with pytest.raises(InvalidActionError, match="exactly 3"):
        deal.pass_cards(0, mine[:2])
    with pytest.raises(InvalidActionError, match="twice"):
        deal.pass_cards(0, (mine[0], mine[0], mine[1]))
    with pytest.raises(InvalidActionError):
        deal.pass_cards(0, (mine[0], mine[1], 99))
    with pytest.raises(InvalidActionError):
        deal.pass_cards(0, 5)  # type: ignore[arg-type]
    with pytest.raises(IllegalActionError, match="not in your hand"):
        deal.pass_cards(0, (mine[0], mine[1], cards_of(deal.hands[1])[0]))
    with pytest.raises(InvalidActionError):
        deal.pass_cards(7, mine)
    with pytest.raises(WrongPhaseError):
        deal.play(0, mine[0])
    deal.pass_cards(0, mine)
    with pytest.raises(NotYourTurnError, match="already passed"):
        deal.pass_cards(0, cards_of(deal.hands[0])[3:6])
    assert deal.to_act() == (1, 2, 3)
    for s in (1, 2, 3):
        deal.pass_cards(s, three(deal, s))
    with pytest.raises(WrongPhaseError):
        deal.pass_cards(0, cards_of(deal.hands[0])[:3])


def test_a_seat_may_pass_cards_it_will_get_back_only_by_receiving_them():
    deal = passing_deal(PassDirection.ACROSS)
    before = deal.hands[0]
    chosen = three(deal, 0)
    deal.pass_cards(0, chosen)
    for s in (1, 2, 3):
        deal.pass_cards(s, three(deal, s))
    assert not any(deal.hands[0] >> c & 1 for c in chosen)
    assert deal.hands[0].bit_count() == 13 and deal.hands[0] != before
