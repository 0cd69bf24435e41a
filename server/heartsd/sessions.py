"""Bot sessions: one per connected bot stream, and the registry that finds them by name."""

from __future__ import annotations

import asyncio
import secrets
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from heartsbot.proto import bot_pb2

MAX_OUTBOX = 10_000
# Rejected answers are budgeted, so one bot cannot keep the server busy for everyone
# else: a session may have this many rejected, plus four per match it may play at once;
# every new request it is sent gives back its policy's illegal retries and two more, up
# to that cap (so an idle flooder cannot bank a large allowance).
WASTE_ALLOWANCE = 64
# A resume re-sends a whole match: each seat may be resumed this often per stream (a
# client resumes once after reconnecting), or the stream ends.
RESUMES_PER_SEAT = 3


class Outbox:
    """The messages waiting for one stream, read by one writer task: the part of
    ``asyncio.Queue`` used here (put_nowait, get, get_nowait, empty, qsize) at a fraction of
    its cost per message (no task accounting, at most one waiter)."""

    __slots__ = ("_items", "_waiter")

    def __init__(self) -> None:
        self._items: deque[bot_pb2.PlayResponse | bytes | None] = deque()
        self._waiter: asyncio.Future[None] | None = None

    def qsize(self) -> int:
        return len(self._items)

    def empty(self) -> bool:
        return not self._items

    def put_nowait(self, item: bot_pb2.PlayResponse | bytes | None) -> None:
        self._items.append(item)
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)

    def get_nowait(self) -> bot_pb2.PlayResponse | bytes | None:
        if not self._items:
            raise asyncio.QueueEmpty
        return self._items.popleft()

    async def get(self) -> bot_pb2.PlayResponse | bytes | None:
        while not self._items:
            waiter = self._waiter = asyncio.get_running_loop().create_future()
            try:
                await waiter
            finally:
                if self._waiter is waiter:
                    self._waiter = None
        return self._items.popleft()


@dataclass(eq=False)
class BotSession:
    """A connected bot. Messages to it go through ``outbox``; ``None`` ends the stream."""

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
    token_hash: str = ""  # of the token it opened with: a revoked or rotated one is noticed (tokens.py)
    waste_allowance: int = field(init=False)  # refilled by each request sent, up to waste_cap; see wasted()
    waste_cap: int = field(init=False)
    resumes: dict[tuple[str, int], int] = field(default_factory=dict)  # (match, seat) -> resumes so far
    draining: bool = False  # ended for what the bot sent; its last messages are being read and dropped

    def __post_init__(self) -> None:
        self.waste_cap = self.waste_allowance = WASTE_ALLOWANCE + 4 * self.max_matches

    def allow_waste(self, messages: int) -> None:
        """A request went out: the bot may now also send ``messages`` that get rejected."""
        self.waste_allowance = min(self.waste_cap, self.waste_allowance + messages)

    def may_resume(self, match_id: str, seat: int) -> bool:
        """Count a resume of one seat; False once it exceeds RESUMES_PER_SEAT on this stream."""
        key = (match_id, seat)
        if key not in self.resumes and len(self.resumes) >= 8 * max(self.max_matches, 8):
            return False  # seats it does not hold are rejected anyway; do not keep counting them
        self.resumes[key] = self.resumes.get(key, 0) + 1
        return self.resumes[key] <= RESUMES_PER_SEAT

    def wasted(self) -> bool:
        """Count one message that moved nothing on; True once the session is over budget."""
        self.waste_allowance -= 1
        return self.waste_allowance < 0

    def send(self, message: bot_pb2.PlayResponse | bytes) -> None:
        if not self.connected:
            return
        if self.outbox.qsize() >= MAX_OUTBOX:
            # A bot that stopped reading: drop what waits and the session; its seats go
            # the disconnect way even if the stream itself stays stuck.
            while not self.outbox.empty():
                self.outbox.get_nowait()
            self.close(f"not reading: more than {MAX_OUTBOX} messages waiting")
            if self.on_overflow is not None:
                self.on_overflow()
            return
        self.outbox.put_nowait(message)

    def close(self, reason: str, status: str = "") -> None:
        """End the stream: with OK, or with ``status`` and ``reason`` as its details."""
        if self.connected:
            self.connected = False
            self.close_reason = reason
            self.close_status = status
            self.outbox.put_nowait(None)

    def plays(self, ruleset: str) -> bool:
        return not self.rulesets or ruleset in self.rulesets


class SessionRegistry:
    """The live session of each bot. A new session of the same bot replaces the old one."""

    def __init__(self) -> None:
        self._by_bot: dict[str, BotSession] = {}

    def open(self, session: BotSession) -> BotSession | None:
        """Register ``session``; return the session it replaced, if any (already closed)."""
        previous = self._by_bot.get(session.bot)
        self._by_bot[session.bot] = session
        if previous is not None:
            previous.close("replaced by a new session of the same bot")
        return previous

    def close(self, session: BotSession) -> bool:
        """Forget ``session`` if it is still the bot's current one; True if it was."""
        session.close(session.close_reason or "stream ended")
        if self._by_bot.get(session.bot) is session:
            del self._by_bot[session.bot]
            return True
        return False

    def get(self, bot: str) -> BotSession | None:
        return self._by_bot.get(bot)

    def all(self) -> Iterable[BotSession]:
        return list(self._by_bot.values())
