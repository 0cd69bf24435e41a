"""The deterministic shuffle: the same (seed, shuffle number) deals the same cards everywhere.

The algorithm is specified here so that any implementation, in any language, can
reproduce a deal without depending on Python's ``random`` internals:

1. Key: the ASCII bytes of ``hearts-arena/v1/deal/{seed}/{shuffle}`` where both
   numbers are written in decimal (the seed is an integer in ``[0, 2**64)``).
2. Stream: SHAKE-256 of the key, read as consecutive big-endian unsigned 64-bit
   integers ``x0, x1, ...`` (SHAKE is an extendable-output function: asking for
   more bytes only appends).
3. Deck: the cards in play in ascending id order (``suit * 13 + rank``, clubs,
   diamonds, hearts, spades; two to ace).
4. Fisher-Yates from the top: for ``i`` from ``len(deck) - 1`` down to ``1``, take
   the next ``x``; if ``x >= 2**64 - (2**64 % (i + 1))`` discard it and take the
   next (so every index is exactly equally likely), else swap ``deck[i]`` with
   ``deck[x % (i + 1)]``.
5. Deal: the card at position ``p`` goes to seat ``p % players``.

>>> shuffled_deck(0xC0FFEE, 0, list(range(52)))[:5]
[2, 27, 43, 46, 44]
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Sequence

from .cards import Card, Mask, cards_of

_WORD = 8
_SPACE = 1 << 64
MAX_SEED = _SPACE - 1
# _LIMITS[i]: draws at or above it are rejected when choosing among i + 1 positions.
_LIMITS = tuple(_SPACE - _SPACE % (i + 1) for i in range(128))


def _words(seed: int, shuffle: int, count: int) -> tuple[int, ...]:
    key = f"hearts-arena/v1/deal/{seed}/{shuffle}".encode("ascii")
    return struct.unpack(f">{count}Q", hashlib.shake_256(key).digest(count * _WORD))


def check_seed(seed: int) -> int:
    """Return ``seed`` if it is an integer in ``[0, 2**64)``, else raise ``ValueError``."""
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise ValueError(f"seed must be an integer between 0 and {MAX_SEED}, got {seed!r}")
    return seed


def shuffled_deck(seed: int, shuffle: int, deck: Sequence[Card]) -> list[Card]:
    """``deck`` shuffled by the algorithm in the module docstring."""
    cards = list(deck)
    size = len(cards)
    words = _words(seed, shuffle, max(size - 1, 1))
    used = 0
    for i in range(size - 1, 0, -1):
        x = words[used]
        used += 1
        while x >= _LIMITS[i]:  # probability < 2**-58 per draw; kept for exactness
            if used == len(words):
                words = _words(seed, shuffle, len(words) * 2)
            x = words[used]
            used += 1
        j = x % (i + 1)
        cards[i], cards[j] = cards[j], cards[i]
        if used == len(words) and i > 1:
            words = _words(seed, shuffle, len(words) * 2)
    return cards


def deal_hands(seed: int, shuffle: int, deck: Mask, players: int) -> list[Mask]:
    """The hands (one mask per seat) of shuffle number ``shuffle`` of ``seed``."""
    order = shuffled_deck(seed, shuffle, cards_of(deck))
    hands = []
    for seat in range(players):
        mask = 0
        for c in order[seat::players]:
            mask |= 1 << c
        hands.append(mask)
    return hands
