"""Bot sessions: one per connected bot stream, and the registry that finds them by name."""

from __future__ import annotations

import asyncio
import secrets
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Final

from heartsbot.proto import bot_pb2

MAX_OUTBOX_BYTES: Final = 16 * 1024 * 1024  # Settings.max_outbox_bytes
MESSAGE_OVERHEAD: Final = 64  # bytes an outbox entry costs besides its payload (the deque slot, the object)
# Every id the server issues is far shorter than this (match "m-" + 16 hex digits; request
# "r-" + 8 hex digits + "-" + a counter): longer ones cannot be ours, so they are neither
# looked up, kept, nor echoed back in full.
MAX_ID_CHARS: Final = 64
# Rejected answers are budgeted, so one bot cannot keep the server busy for everyone
# else: a session may have this many rejected, plus four per match it may play at once;
# every new request it is sent gives back its policy's illegal retries and two more, up
# to that cap (so an idle flooder cannot bank a large allowance).
WASTE_ALLOWANCE: Final = 64
# A resume re-sends a whole match: each seat may be resumed this often per stream (a
# client resumes once after reconnecting), or the stream ends.
RESUMES_PER_SEAT: Final = 3
# A closed stream's time to write its last messages (a replaced stream's final draining,
# a status's reason) to a bot that reads; one stuck in a write longer than this ends.
CLOSE_FLUSH_S: Final = 2.0


def echo_id(value: str) -> str:
    """An id as a rejection may echo it: in full if it could be one of ours, else nothing."""
    return value if len(value) <= MAX_ID_CHARS else ""


class Outbox:
    """The messages waiting for one stream, read by one writer task: the part of
    ``asyncio.Queue`` used here (put_nowait, get, get_nowait, empty, qsize) at a fraction of
    its cost per message (no task accounting, at most one waiter). ``bytes`` is what the
    waiting messages hold (payloads plus MESSAGE_OVERHEAD each), the measure of its bound.
    Its deque is made at the first message: an empty one holds a 64-slot block (~0.7 KiB),
    and most of a ladder's connected bots are idle at any moment. The loop its waits run
    on is looked up once, at the first: ``asyncio.get_running_loop()`` checks the process
    id (a ``getpid`` system call) each time, and a busy stream waits once per message.

    ``on_low``, while set, is called whenever a message is taken and fewer than
    ``low_water`` bytes wait: what a reconnected bot missed is made as it reads
    (catchup.py), so the bound on ``bytes`` still only ever ends a bot that does not read."""

    __slots__ = ("_items", "_waiter", "_loop", "bytes", "on_low", "low_water")

    def __init__(self) -> None:
        self._items: deque[bot_pb2.PlayResponse | bytes | None] | None = None
        self._waiter: asyncio.Future[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.bytes = 0
        self.on_low: Callable[[], None] | None = None
        self.low_water = 0

    def qsize(self) -> int:
        return len(self._items) if self._items else 0

    def empty(self) -> bool:
        return not self._items

    def put_nowait(self, item: bot_pb2.PlayResponse | bytes | None) -> None:
        items = self._items
        if items is None:
            items = self._items = deque()
        items.append(item)
        self.bytes += _size(item)
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)

    def get_nowait(self) -> bot_pb2.PlayResponse | bytes | None:
        if not self._items:
            raise asyncio.QueueEmpty
        item = self._items.popleft()
        self.bytes -= _size(item)
        if self.on_low is not None and self.bytes < self.low_water:
            self.on_low()
        return item

    async def get(self) -> bot_pb2.PlayResponse | bytes | None:
        while not self._items:
            loop = self._loop
            if loop is None:
                loop = self._loop = asyncio.get_running_loop()
            waiter = self._waiter = loop.create_future()
            try:
                await waiter
            finally:
                if self._waiter is waiter:
                    self._waiter = None
        item = self._items.popleft()
        self.bytes -= _size(item)
        if self.on_low is not None and self.bytes < self.low_water:
            self.on_low()
        return item

    def clear(self) -> None:
        if self._items:
            self._items.clear()
        self.bytes = 0


def _size(item: bot_pb2.PlayResponse | bytes | None) -> int:
    """What an outbox entry holds: the hot path's entries are bytes; messages are rare."""
    if type(item) is bytes:
        return len(item) + MESSAGE_OVERHEAD
    return MESSAGE_OVERHEAD if item is None else item.ByteSize() + MESSAGE_OVERHEAD  # type: ignore[union-attr]


@dataclass(eq=False, slots=True)
class BotSession:
    """A connected bot. Messages to it go through ``outbox``; ``None`` ends the stream.
    Slotted: one lives as long as each connected bot, most of them idle."""

    bot: str
    version: str
    rulesets: frozenset[str]  # empty: every ruleset
    max_matches: int
    id: str = field(default_factory=lambda: "s-" + secrets.token_hex(6))
    # PlayResponse messages, or the same already serialized (bytes) from the hot path.
    outbox: Outbox = field(default_factory=Outbox)
    connected: bool = True
    close_reason: str = ""
    close_status: str = ""  # an ArenaError kind ("invalid", "unavailable"): end the stream with that status
    on_overflow: Callable[[], None] | None = None
    # Called by close(): with False, the stream has CLOSE_FLUSH_S to write what waits; with
    # True (the registry: the bot's stream was replaced again meanwhile), it ends now. Either way a
    # write the bot never reads no longer holds the stream's slot and outbox for as long as
    # its connection lives (services.BotService.Play).
    on_closed: Callable[[bool], None] | None = None
    token_hash: str = ""  # of the token it opened with: a revoked or rotated one is noticed (tokens.py)
    waste_allowance: int = field(init=False)  # refilled by each request sent, up to waste_cap; see wasted()
    waste_cap: int = field(init=False)
    resumes: dict[tuple[str, int], int] = field(default_factory=dict)  # (match, seat) -> resumes so far
    draining: bool = False  # ended for what the bot sent; its last messages are being read and dropped
    max_outbox_bytes: int = MAX_OUTBOX_BYTES
    # Set when the session drains (the bot sent `drain`, or its token was rotated): it is
    # seated in no new match, and ends with OK once its running matches have ended.
    drain_reason: str = ""
    drain_cause: int = 0  # its bot_pb2.DrainCause

    def __post_init__(self) -> None:
        self.waste_cap = self.waste_allowance = WASTE_ALLOWANCE + 4 * self.max_matches

    def allow_waste(self, messages: int) -> None:
        """A request went out: the bot may now also send ``messages`` that get rejected."""
        self.waste_allowance = min(self.waste_cap, self.waste_allowance + messages)

    def may_resume(self, match_id: str, seat: int) -> bool:
        """Count a resume of a seat the bot holds (the caller checked, so ids that are not
        ours are never kept, and the arena forgets a match's counts when it ends); False once
        it exceeds RESUMES_PER_SEAT on this stream."""
        key = (match_id, seat)
        self.resumes[key] = self.resumes.get(key, 0) + 1
        return self.resumes[key] <= RESUMES_PER_SEAT

    def wasted(self) -> bool:
        """Count one message that moved nothing on; True once the session is over budget."""
        self.waste_allowance -= 1
        return self.waste_allowance < 0

    def send(self, message: bot_pb2.PlayResponse | bytes) -> None:
        if not self.connected:
            return
        outbox = self.outbox
        if outbox.bytes >= self.max_outbox_bytes:
            # A bot that stopped reading: drop what waits and end the session; its seats go
            # the disconnect way, and on_overflow ends the stream even if a write is stuck.
            outbox.clear()
            self.close(f"not reading: more than {self.max_outbox_bytes} bytes waiting to be sent", "exhausted")
            if self.on_overflow is not None:
                self.on_overflow()
            return
        outbox.put_nowait(message)

    def close(self, reason: str, status: str = "") -> None:
        """End the stream: with OK, or with ``status`` and ``reason`` as its details."""
        if self.connected:
            self.connected = False
            self.close_reason = reason
            self.close_status = status
            self.outbox.put_nowait(None)
            if self.on_closed is not None:
                self.on_closed(False)

    def plays(self, ruleset: str) -> bool:
        return not self.rulesets or ruleset in self.rulesets


REPLACED: Final = "replaced by a newer stream of this bot (is a second instance running?)"


class SessionRegistry:
    """The live session of each bot. A new session of the same bot replaces the old one."""

    def __init__(self) -> None:
        self._by_bot: dict[str, BotSession] = {}
        # The session each bot's current one replaced, while its stream may still be writing
        # its last messages: one per bot, so that a bot opening stream after stream without
        # reading any holds at most two streams, not one per stream opened (an attack pass).
        self._replaced: dict[str, BotSession] = {}

    def open(self, session: BotSession) -> BotSession | None:
        """Register ``session``; return the session it replaced, if any (already closed)."""
        previous = self._by_bot.get(session.bot)
        self._by_bot[session.bot] = session
        older = self._replaced.pop(session.bot, None)
        if older is not None and older.on_closed is not None:
            older.on_closed(True)
        if previous is not None:
            self._replaced[session.bot] = previous
            # Its last message: a final draining, "leave, do not reconnect". A client that
            # reconnected itself never reads it (that stream is dead); a second instance of
            # the bot does, and stops instead of taking the stream back for ever.
            previous.send(bot_pb2.PlayResponse(draining=bot_pb2.Draining(reason=REPLACED,
                                                                         cause=bot_pb2.DRAIN_CAUSE_REPLACED)))
            previous.close("replaced by a new session of the same bot")
        return previous

    def close(self, session: BotSession) -> bool:
        """Forget ``session`` if it is still the bot's current one; True if it was."""
        session.close(session.close_reason or "stream ended")
        if self._replaced.get(session.bot) is session:
            del self._replaced[session.bot]
        if self._by_bot.get(session.bot) is session:
            del self._by_bot[session.bot]
            return True
        return False

    def get(self, bot: str) -> BotSession | None:
        return self._by_bot.get(bot)

    def all(self) -> Iterable[BotSession]:
        return list(self._by_bot.values())
