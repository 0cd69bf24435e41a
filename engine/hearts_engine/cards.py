"""Cards as small ints and hands as bitmasks.

A card is ``suit * 13 + rank`` with suits clubs, diamonds, hearts, spades = 0..3
and ranks two..ace = 0..12, so every suit occupies one contiguous 13-bit block of
a hand mask. "Does the hand hold a club?" is then one AND, and the lowest club
is one bit trick.

>>> card = parse_card("QS")
>>> card, card_name(card), SUIT_OF[card] == SPADES
(49, 'QS', True)
>>> cards_of(mask_of([parse_card("2C"), parse_card("AH")]))
(0, 38)

Cancellation Hearts (two packs) would need duplicate identities; it can use ids
52..103 for the second pack without changing any mask helper except the width.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

Card = int
"""A card id in ``range(52)``."""

Mask = int
"""A set of cards: bit ``card`` is set when the card is in the set."""

CLUBS: Final = 0
DIAMONDS: Final = 1
HEARTS: Final = 2
SPADES: Final = 3
SUITS: Final = (CLUBS, DIAMONDS, HEARTS, SPADES)
SUIT_CHARS: Final = "CDHS"
SUIT_SYMBOLS: Final = "♣♦♥♠"
RANK_CHARS: Final = "23456789TJQKA"
RANKS_PER_SUIT: Final = 13
DECK_SIZE: Final = 52

FULL_DECK: Final[Mask] = (1 << DECK_SIZE) - 1
SUIT_MASKS: Final[tuple[Mask, ...]] = tuple(((1 << RANKS_PER_SUIT) - 1) << (13 * s) for s in SUITS)
SUIT_OF: Final[tuple[int, ...]] = tuple(c // 13 for c in range(DECK_SIZE))
RANK_OF: Final[tuple[int, ...]] = tuple(c % 13 for c in range(DECK_SIZE))


def card(rank: int, suit: int) -> Card:
    """The card of ``rank`` (0 = two .. 12 = ace) in ``suit``."""
    return suit * 13 + rank


TWO_OF_CLUBS: Final = card(0, CLUBS)
JACK_OF_CLUBS: Final = card(9, CLUBS)
JACK_OF_DIAMONDS: Final = card(9, DIAMONDS)
QUEEN_OF_SPADES: Final = card(10, SPADES)

_SUIT_TABLE_SIZE: Final = 1 << RANKS_PER_SUIT
# For every suit and every 13-bit pattern, the tuple of card ids it stands for.
# Turning a mask into a list of cards is then four lookups, not a bit loop:
# this is what keeps legal-move generation cheap for Monte Carlo playouts.
CARDS_BY_SUIT_PATTERN: Final[tuple[tuple[tuple[Card, ...], ...], ...]] = tuple(
    tuple(
        tuple(13 * s + r for r in range(RANKS_PER_SUIT) if pattern >> r & 1)
        for pattern in range(_SUIT_TABLE_SIZE)
    )
    for s in SUITS
)
_T0: Final = CARDS_BY_SUIT_PATTERN[0]
_T1: Final = CARDS_BY_SUIT_PATTERN[1]
_T2: Final = CARDS_BY_SUIT_PATTERN[2]
_T3: Final = CARDS_BY_SUIT_PATTERN[3]
_LOW13: Final = _SUIT_TABLE_SIZE - 1
_LOW26: Final = (1 << 26) - 1


def cards_of(mask: Mask) -> tuple[Card, ...]:
    """The cards of ``mask`` in ascending id order (clubs first, low to high)."""
    low = mask & _LOW26  # split once, so that the shifts below act on small ints
    high = mask >> 26
    return _T0[low & _LOW13] + _T1[low >> 13] + _T2[high & _LOW13] + _T3[high >> 13 & _LOW13]


def suit_cards(mask: Mask, suit: int) -> tuple[Card, ...]:
    """The cards of ``mask`` in one suit, ascending."""
    return CARDS_BY_SUIT_PATTERN[suit][mask >> (13 * suit) & _LOW13]


def mask_of(cards: Iterable[Card]) -> Mask:
    """The mask holding exactly ``cards``."""
    mask = 0
    for c in cards:
        mask |= 1 << c
    return mask


def lowest(mask: Mask) -> Card:
    """The lowest card id in a non-empty mask."""
    return (mask & -mask).bit_length() - 1


def count(mask: Mask) -> int:
    """How many cards the mask holds."""
    return mask.bit_count()


def card_name(c: Card) -> str:
    """Two-character name, rank then suit: ``"2C"``, ``"TD"``, ``"QS"``."""
    return RANK_CHARS[c % 13] + SUIT_CHARS[c // 13]


def card_symbol(c: Card) -> str:
    """Human-friendly name with a suit symbol: ``"Q♠"``, ``"10♦"``."""
    rank = RANK_CHARS[c % 13]
    return ("10" if rank == "T" else rank) + SUIT_SYMBOLS[c // 13]


def parse_card(text: object) -> Card:
    """Parse ``"QS"``, ``"qs"``, ``"10D"``, ``"TD"`` or ``"Q♠"``; raise ``ValueError``.

    Anything that is not such a string, of any type (records and rulesets are parsed from
    untrusted JSON), raises ``ValueError`` too.

    >>> [parse_card(t) for t in ("2C", "10d", "Q♠")]
    [0, 21, 49]
    """
    if not isinstance(text, str):
        raise ValueError(f"not a card: {text!r}")
    raw = text.strip().upper()
    if len(raw) < 2:
        raise ValueError(f"not a card: {text!r}")
    rank_text, suit_text = raw[:-1], raw[-1]
    if rank_text == "10":
        rank_text = "T"
    suit = SUIT_CHARS.find(suit_text)
    if suit < 0:
        suit = SUIT_SYMBOLS.find(suit_text)
    rank = RANK_CHARS.find(rank_text) if len(rank_text) == 1 else -1
    if suit < 0 or rank < 0:
        raise ValueError(f"not a card: {text!r}")
    return card(rank, suit)


def parse_cards(text: str) -> tuple[Card, ...]:
    """Parse a space- or comma-separated list of cards."""
    return tuple(parse_card(t) for t in text.replace(",", " ").split())


def format_cards(cards: Iterable[Card]) -> str:
    """Names joined by spaces, in the given order."""
    return " ".join(card_name(c) for c in cards)


def to_openspiel(c: Card) -> int:
    """OpenSpiel's id for the same card (``rank * 4 + suit``)."""
    return (c % 13) * 4 + c // 13


def from_openspiel(action: int) -> Card:
    """Our id for OpenSpiel's card id."""
    return card(action // 4, action % 4)
