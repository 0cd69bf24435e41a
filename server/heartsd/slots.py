"""Match slots: one account of each bot's declared concurrency, shared by the ladder,
tournaments and admin matches.

A bot declares in its hello how many matches it plays at once. Every match that seats
it, whoever starts it, takes one of those slots; the arena refuses a match for a bot
with none free (arena.py). A caller that must have particular bots (an admin's
``CreateMatch`` with ``wait_for_seats_ms``, a tournament's scheduled table) *reserves*
them: it waits in line, and while it waits the slots it needs are promised to it, so
the ladder's matchmaker, which only takes bots with a slot free of every promise,
cannot keep taking them first. Reservations are served in the order they were made
(a later one may go first only where it needs none of an earlier one's bots).

>>> book = SlotBook()
>>> r = book.reserve({"a": 1}, "admin")
>>> book.promised("a"), book.promised("a", before=r)
(1, 0)
>>> book.release(r)
>>> book.promised("a")
0
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import count

_ids = count(1)


@dataclass(eq=False)
class Reservation:
    """A waiting request for seats: bot name -> seats it needs in the one match."""

    bots: Mapping[str, int]
    purpose: str
    number: int = field(default_factory=lambda: next(_ids))


class SlotBook:
    """The waiting reservations, oldest first, and a way to wait for a change."""

    def __init__(self) -> None:
        self._waiting: list[Reservation] = []
        self._changed: asyncio.Event | None = None

    def reserve(self, bots: Mapping[str, int], purpose: str) -> Reservation:
        reservation = Reservation(dict(bots), purpose)
        self._waiting.append(reservation)
        return reservation

    def release(self, reservation: Reservation) -> None:
        """The reservation is served (its match holds the slots now) or abandoned."""
        if reservation in self._waiting:
            self._waiting.remove(reservation)
            self.changed()

    def promised(self, bot: str, before: Reservation | None = None) -> int:
        """Slots of ``bot`` promised to waiting reservations (only those older than
        ``before``, if given: the ones that go first)."""
        total = 0
        for r in self._waiting:
            if r is before:
                break
            total += r.bots.get(bot, 0)
        return total

    def holders(self, bot: str) -> list[str]:
        """What waits for ``bot``'s slots, for messages."""
        return [r.purpose for r in self._waiting if bot in r.bots]

    def changed(self) -> None:
        """A slot came free, a bot connected or a reservation went: wake the waiters."""
        if self._changed is not None:
            self._changed.set()
            self._changed = None

    async def wait_change(self, timeout: float) -> None:
        """Until the next :meth:`changed` or ``timeout`` seconds."""
        if self._changed is None:
            self._changed = asyncio.Event()
        try:
            await asyncio.wait_for(self._changed.wait(), timeout)
        except asyncio.TimeoutError:
            pass
