"""Bringing a bot's new stream up to date, as fast as the bot reads and no faster.

A stream that (re)connects is owed, for every seat its bot holds, the events after the
last request it answered and the pending request (runner.rewind), and what it missed
of matches that ended while it was away (missed.py); a ``resume`` asks for a seat's
again. That can be far more than the stream's outbox may hold: a bot that hung for
90 s in 64 matches of house seats was owed ~20 MB, and every stream it opened ended at
once RESOURCE_EXHAUSTED "not reading" (the bound meant for a bot that does not read),
so it could never get back to its matches. And a bot reconnecting in a loop had the
server build everything it was owed on every stream, whether it read it or not.

So what a stream is owed is kept here as a queue of seats (and of ended matches' seats,
whose updates wait in missed.py), and made into messages only while fewer than the
outbox's ``low_water`` bytes wait to be written: the outbox calls :meth:`CatchUp.feed`
as the writer takes from it. A seat goes in parts of runner.EVENTS_PER_PART events, and
its last part carries its pending request; until then, what the match sends that seat waits its turn here (runner._send),
so nothing is sent twice or out of order. Seats come up to date one after another:
the first is playable while the rest are still on their way, and what the stream's
caught-up seats play meanwhile goes first (the queue only feeds a nearly empty outbox).

A seat whose match ends while it waits here is kept in missed.py (runner._keep_missed),
which bounds what all absent and catching-up bots are owed together, and taken from
there part by part in its turn: a stream that reads nothing while its bot is seated in
match after match no longer holds every ended match's runner (an attack pass: 5.8 MB a
match, without bound), and what a stream that ends was not yet handed is kept for the
next one instead of lost (the same pass: 20 of 20 matches lost their ends).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

import structlog

if TYPE_CHECKING:
    from .missed import Key, MissedEndings
    from .runner import MatchRunner, SeatSlot
    from .sessions import BotSession

# At most this much (or a quarter of the outbox's bound, if smaller) waits in a catching-up
# stream's outbox: a few parts, enough to keep gRPC's writes going back to back.
LOW_WATER_BYTES: Final = 256 * 1024
FAILED: Final = "the server failed to send what this stream missed (logged); connect again"

log = structlog.get_logger("heartsd.catchup")


class CatchUp:
    """What ``session``'s stream is still owed, in order; ``on_done`` is called once it has
    all been handed to the outbox, or the stream ended first."""

    __slots__ = ("session", "_missed", "_owed", "_on_done")

    def __init__(self, session: BotSession, missed: MissedEndings, on_done: Callable[[CatchUp], None]) -> None:
        self.session = session
        self._missed = missed
        # A running match's seat, or the key in ``missed`` of an ended match's seat.
        self._owed: deque[tuple[MatchRunner, SeatSlot] | Key] = deque()
        self._on_done = on_done

    def add_seat(self, runner: MatchRunner, slot: SeatSlot) -> None:
        """Owe the seat everything after its ``delivered`` point and its pending request;
        until then, what its match sends it waits here (a seat already owed stays in its place)."""
        if slot.catching_up is not self.session:
            slot.catching_up = self.session
            self._owed.append((runner, slot))

    def add_missed(self, key: Key) -> None:
        """Owe what ``missed`` keeps for ``key`` (a seat of a match that has ended)."""
        self._owed.append(key)

    def kept_missed(self, runner: MatchRunner, slot: SeatSlot) -> None:
        """The seat's match ended while the seat waited here: what it is owed is kept in
        ``missed`` now, taken from there in the seat's place in the queue."""
        for i, item in enumerate(self._owed):
            if item[1] is slot:
                self._owed[i] = (slot.name, runner.id, slot.seat)
                return

    def feed(self) -> None:
        """Hand the outbox what is owed while little waits in it; once all of it is handed
        over (or the stream is over), stop being called and report done. It runs inside
        the stream's writer (Outbox.get): a failure of ours ends this stream INTERNAL, as
        one while reading a bot's message does (services), never the writer with an
        unexpected error."""
        try:
            self._feed()
        except Exception:
            log.exception("catching a stream up failed", bot=self.session.bot, session=self.session.id)
            self.session.close(FAILED, "internal")
            self.release()
            self._on_done(self)

    def _feed(self) -> None:
        session = self.session
        outbox = session.outbox
        owed = self._owed
        while owed and session.connected and outbox.bytes < outbox.low_water:
            item = owed[0]
            if isinstance(item[0], str):  # an ended match's seat: its updates, a part at a time
                part = self._missed.next_part(item)
                if part is None:
                    owed.popleft()
                else:
                    session.send(part)
                continue
            runner, slot = item
            # A seat another stream took over (or a match that ended) is done here: the seat
            # is that stream's now, and an ended match's last part is sent all the same.
            if slot.catching_up is not session or runner.catch_up(slot, session):
                owed.popleft()
        if owed and session.connected:
            outbox.on_low = self.feed
            return
        outbox.on_low = None
        self.release()
        self._on_done(self)

    def release(self) -> None:
        """Forget what is still owed (the stream ended): its seats' sends are the usual ones
        again, for the next stream of their bot."""
        session = self.session
        session.outbox.on_low = None
        for item in self._owed:
            if not isinstance(item[0], str) and item[1].catching_up is session:
                item[1].catching_up = None
        self._owed.clear()


def low_water(max_outbox_bytes: int) -> int:
    """How few bytes must wait in a catching-up outbox before more is made.

    >>> low_water(16 * 1024 * 1024), low_water(64 * 1024)
    (262144, 16384)
    """
    return min(LOW_WATER_BYTES, max_outbox_bytes // 4)
