"""Helpers to set up deals from readable hands and play scripted card sequences."""

from __future__ import annotations

from collections.abc import Mapping

from hearts_engine import Deal, PassDirection, Ruleset, cards_of, mask_of, parse_card, parse_cards
from hearts_engine.cards import SUIT_CHARS, SUIT_OF


def hands(rules: Ruleset, given: Mapping[int, str], voids: Mapping[int, str] | None = None) -> list[int]:
    """Hands with the ``given`` cards per seat; the rest of the deck fills seats in order.

    ``voids`` lists suits ("C", "HD") a seat must not receive from the filler.
    """
    voids = voids or {}
    result = [mask_of(parse_cards(given.get(s, ""))) for s in range(rules.players)]
    used = 0
    for h in result:
        assert not used & h, "a card is given to two seats"
        used |= h
    for c in cards_of(rules.deck & ~used):
        for s in range(rules.players):
            if result[s].bit_count() < rules.hand_size and SUIT_CHARS[SUIT_OF[c]] not in voids.get(s, ""):
                result[s] |= 1 << c
                break
        else:
            raise AssertionError(f"no seat can take {c}")
    return result


def deal_of(
    rules: Ruleset,
    given: Mapping[int, str],
    voids: Mapping[int, str] | None = None,
    direction: PassDirection = PassDirection.HOLD,
    scoring_phase: int = 1,
) -> Deal:
    return Deal(rules, hands(rules, given, voids), direction, scoring_phase=scoring_phase)


def play(deal: Deal, *tricks: str) -> None:
    """Play each space-separated card for the seat to act (checked)."""
    for trick in tricks:
        for name in trick.split():
            deal.play(deal.turn, parse_card(name))


def names(cards: tuple[int, ...] | list[int]) -> set[str]:
    from hearts_engine import card_name

    return {card_name(c) for c in cards}


def late_position(
    rules: Ruleset,
    taken: Mapping[int, str],
    remaining: Mapping[int, str],
    leader: int,
    filler: int | None = None,
) -> Deal:
    """A deal whose last trick(s) are still to play.

    ``taken`` are the cards each seat won in earlier (synthetic) tricks and
    ``remaining`` the hands now. Every other card of the deck (none may score) was
    won by ``filler`` (default ``leader``). ``leader`` wins the last earlier trick,
    so it leads next.
    """
    from hearts_engine import Trick, deal_at_position

    n = rules.players
    filler = leader if filler is None else filler
    won = {s: list(parse_cards(t)) for s, t in taken.items()}
    used = mask_of(c for cards in won.values() for c in cards)
    used |= mask_of(c for t in remaining.values() for c in parse_cards(t))
    rest = rules.deck & ~used
    assert not rest & (rules.penalty_mask | rules.bonus_mask), "unlisted cards must not score"
    won.setdefault(filler, []).extend(cards_of(rest))
    tricks = []
    for seat in sorted(won, key=lambda s: s == leader):
        cards = won[seat]
        assert len(cards) % n == 0, f"seat {seat}'s taken cards must fill whole tricks"
        tricks += [Trick(seat, tuple(cards[i : i + n]), seat) for i in range(0, len(cards), n)]
    assert tricks and tricks[-1].winner == leader
    hands_now = [mask_of(parse_cards(remaining.get(s, ""))) for s in range(n)]
    return deal_at_position(rules, hands_now, tricks, (), -1, broken_trick=0)
