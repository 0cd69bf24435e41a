"""The deterministic shuffle: the same (seed, shuffle number) deals the same cards everywhere.

The algorithm is specified here so that any implementation, in any language, can
reproduce a deal without depending on Python's ``random`` internals:

1. Key: the ASCII bytes of ``hearts-arena/v1/deal/{seed}/{shuffle}`` where both
   numbers are written in decimal (the seed is an integer in ``[0, 2**64)``).
2. Stream: SHAKE-256 of the key, read as consecutive big-endian unsigned 64-bit
   integers ``x0, x1, ...``; take as many as there are cards in play.
3. Deck: the cards in play in ascending id order (``suit * 13 + rank``; clubs,
   diamonds, hearts, spades; two to ace). The card at index ``i`` gets key ``x_i``.
4. Order: sort the cards by ``(x_i, card id)`` ascending. Every order is equally
   likely (the tie-break only matters on a 64-bit collision, which it makes
   deterministic).
5. Deal: the card at position ``p`` of that order goes to seat ``p % players``.

Sorting by random keys lets the work happen in C (one hash call, one unpack, one
sort), which keeps dealing cheap for Monte Carlo search.

>>> shuffled_deck(0xC0FFEE, 0, list(range(52)))[:5]
[23, 29, 46, 12, 34]
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Sequence
from typing import Final

from .cards import DECK_SIZE, FULL_DECK, Card, Mask, cards_of

MAX_SEED: Final = (1 << 64) - 1
_BIT: Final = tuple(1 << c for c in range(DECK_SIZE))
_FULL_DECK_CARDS: Final = range(DECK_SIZE)
_unpack_full_deck: Final = struct.Struct(f">{DECK_SIZE}Q").unpack  # the common case, compiled once
_shake_256: Final = hashlib.shake_256


def check_seed(seed: int) -> int:
    """Return ``seed`` if it is an integer in ``[0, 2**64)``, else raise ``ValueError``."""
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise ValueError(f"seed must be an integer between 0 and {MAX_SEED}, got {seed!r}")
    return seed


def shuffle_keys(seed: int, shuffle: int, count: int) -> tuple[int, ...]:
    """The first ``count`` 64-bit words of the stream for (seed, shuffle)."""
    key = b"hearts-arena/v1/deal/%d/%d" % (seed, shuffle)
    stream = _shake_256(key).digest(8 * count)
    return _unpack_full_deck(stream) if count == DECK_SIZE else struct.unpack(f">{count}Q", stream)


def _shuffled(seed: int, shuffle: int, deck: Sequence[Card]) -> list[Card]:
    keys = shuffle_keys(seed, shuffle, len(deck))
    order = sorted(range(len(deck)), key=keys.__getitem__)  # stable: ties keep ascending ids
    if len(deck) == DECK_SIZE:
        return order  # the full deck: index i is card i
    return list(map(deck.__getitem__, order))


def shuffled_deck(seed: int, shuffle: int, deck: Sequence[Card]) -> list[Card]:
    """``deck`` (ascending card ids) in shuffled order, by the algorithm above."""
    return _shuffled(seed, shuffle, deck)


def deal_hands(seed: int, shuffle: int, deck: Mask, players: int) -> list[Mask]:
    """The hands (one mask per seat) of shuffle number ``shuffle`` of ``seed``."""
    order = _shuffled(seed, shuffle, _FULL_DECK_CARDS if deck == FULL_DECK else cards_of(deck))
    bits = [_BIT[card] for card in order]
    return [sum(bits[seat::players]) for seat in range(players)]
