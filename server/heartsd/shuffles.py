"""Shuffles identified by what they deal, for the ledger of who was dealt what.

A bot remembers every deal it is shown (DESIGN.md, "Threat model"), so no bot may be
dealt the same shuffle twice: not within a match, not in a later match, not on another
daemon of the store. A shuffle is identified by its *fingerprint*: a hash of the dealt
hands as a set, sorted, so it does not depend on which seat got which hand. Rotated or
reseated copies of one shuffle (in-match duplicate seating, a duplicate set's tables,
another seed that happens to deal the same hands) are the same shuffle.

The store keeps a ledger row (seat occupant, fingerprint, match, deal) for every seat of
every deal, with UNIQUE (occupant, fingerprint), written in the transaction that inserts
the running match, before any card is dealt (store.py, ``Store.start``).

>>> from hearts_engine import MatchFormat, preset
>>> rules = preset("standard")
>>> a = deal_fingerprints(rules, MatchFormat.fixed(8, duplicate=True), seed=7)
>>> len(a), a[0] == a[3], a[0] == a[4]  # a block replays one shuffle, rotated
(8, True, False)
>>> a[4:] == deal_fingerprints(rules, MatchFormat.fixed(8, duplicate=True), seed=7, first=4)
True
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from hearts_engine import Match, MatchFormat, Ruleset
from hearts_engine.shuffle import deal_hands
from hearts_engine.match import FormatKind

# Game-format matches have no fixed length: their shuffles are reserved this many deals at
# a time, the next chunk while the last few deals of the current one are played.
GAME_CHUNK = 16
GAME_PREFETCH = 4


class ShuffleRepeated(Exception):
    """A strict match would deal a shuffle that was dealt before (Store.start)."""

    def __init__(self, fingerprint: str, match_id: str, deal: int) -> None:
        super().__init__(f"shuffle {fingerprint} was dealt before (match {match_id}, deal {deal})")
        self.fingerprint = fingerprint
        self.match_id = match_id
        self.deal = deal


def fingerprint(hands: Sequence[int]) -> str:
    """The fingerprint of one deal, from its hands (card masks) in any seat order."""
    digest = hashlib.sha256(b"hearts-arena/v1/shuffle/" + b"".join(
        mask.to_bytes(8, "big") for mask in sorted(hands)))
    return digest.hexdigest()[:32]


def deal_fingerprints(rules: Ruleset, fmt: MatchFormat, seed: int, first: int = 0,
                      count: int | None = None) -> list[str]:
    """The fingerprints of deals ``first`` to ``first + count - 1`` of a match (by default
    every deal of a fixed-deals match, or one game chunk)."""
    if count is None:
        count = (fmt.deals or 0) - first if fmt.kind is FormatKind.FIXED else GAME_CHUNK
    match = Match(rules, fmt, seed)
    out = []
    for number in range(first, first + count):
        shuffle, _, _ = match.deal_setup(number)
        out.append(fingerprint(deal_hands(seed, shuffle, rules.deck, rules.players)))
    return out


def planned_deals(fmt: MatchFormat) -> int | None:
    """Deals whose shuffles are reserved when the match starts; ``None``: all of them."""
    return None if fmt.kind is FormatKind.FIXED else GAME_CHUNK


def hands_fingerprint(hands: Sequence[Sequence[int]]) -> str:
    """:func:`fingerprint` of hands given as card lists (a record's dealt hands)."""
    masks = []
    for hand in hands:
        mask = 0
        for card in hand:
            mask |= 1 << card
        masks.append(mask)
    return fingerprint(masks)
