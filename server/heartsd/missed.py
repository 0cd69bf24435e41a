"""What a bot missed of a match that ended while it was away, kept for its return.

bot.proto promises a reconnecting bot that no event is skipped. A running match
replays its own (``MatchRunner.rewind``, ``resume``); a match that ended while a seat's bot
was away is gone from memory by the time the bot says hello again, so at its end the
seat's missed events (from after the last request it answered), encoded as that seat's
``MatchUpdate`` messages (its own view: no other seat's hand; in parts of at most
runner.EVENTS_PER_PART events), are kept here and sent once after the bot's next
``hello``. Once, part by part: what a stream took is no longer kept (if it dies before
the bot reads it, the result is still in ``GetMatchRecord``), what it did not take stays
for the next. A seat whose stream was still being caught up (catchup.py) when its match
ended is kept here too, and that stream takes it from here in its turn: a queue of
ended matches no longer holds their runners, and what it did not take is not lost.

A bot that never comes back must not cost the daemon without bound: an entry is kept
for at most ``hold_s`` seconds, and all of them together in at most ``max_bytes``. Room
is made from the bot that holds the most, its oldest first: one bot away from (or not
reading) many long matches would otherwise push every other bot's endings out. What is
dropped can still be read with ``GetMatchRecord``.

A seat frozen to a version of its bot (a tournament's) keeps its missed events for that
version: another version's stream never played the match and is not given them.

>>> clock = [0.0]
>>> kept = MissedEndings(hold_s=60, max_bytes=10, clock=lambda: clock[0])
>>> kept.keep("alice", "m-1", 0, [b"abcd"]); kept.keep("bob", "m-1", 1, [b"ef", b"gh"])
>>> kept.keep("alice", "m-2", 0, [b"ijkl"])  # 12 bytes in all: alice's oldest goes
>>> kept.keys("alice")
[('alice', 'm-2', 0)]
>>> kept.next_part(("alice", "m-2", 0)), kept.next_part(("alice", "m-2", 0))  # each part once
(b'ijkl', None)
>>> clock[0] = 61.0
>>> kept.keys("bob")  # held too long
[]
>>> kept.keep("carol", "m-3", 2, [b"mn", b"op"], version="v1")
>>> kept.keys("carol", "v2"), kept.keys("carol", "v1")
([], [('carol', 'm-3', 2)])
>>> fair = MissedEndings(hold_s=60, max_bytes=10, clock=lambda: 0.0)
>>> fair.keep("bob", "m-1", 0, [b"ab"])  # the oldest, but bob holds little
>>> for i in range(4): fair.keep("mallory", f"m-{i + 2}", 0, [b"cdef"])
>>> fair.keys("bob"), fair.keys("mallory")
([('bob', 'm-1', 0)], [('mallory', 'm-4', 0), ('mallory', 'm-5', 0)])
>>> off = MissedEndings(hold_s=0, max_bytes=10)
>>> off.keep("alice", "m-1", 0, [b"abcd"]); len(off)
0
"""

from __future__ import annotations

import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass

Key = tuple[str, str, int]  # (bot, match id, seat)


@dataclass(slots=True)
class _Kept:
    at: float
    parts: deque[bytes]  # serialized PlayResponses, in order; each is taken once
    bytes: int
    version: str | None  # the version of the bot they are for: None, any


class MissedEndings:
    def __init__(self, hold_s: float, max_bytes: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.hold_s = hold_s
        self.max_bytes = max_bytes
        self._clock = clock
        self._entries: OrderedDict[Key, _Kept] = OrderedDict()  # oldest first
        self._by_bot: dict[str, set[Key]] = {}
        self._bot_bytes: dict[str, int] = {}
        self.bytes = 0

    def __len__(self) -> int:
        return len(self._entries)

    def keep(self, bot: str, match_id: str, seat: int, updates: list[bytes], version: str | None = None) -> None:
        """Keep ``updates`` (serialized PlayResponses, in order) for ``bot``'s next hello
        (of ``version``, if one is given). More than ``max_bytes`` on their own are not kept."""
        self._expire()
        size = sum(len(update) for update in updates)
        if self.hold_s <= 0 or size > self.max_bytes:
            return
        key = (bot, match_id, seat)
        self._drop(key)
        self._entries[key] = _Kept(self._clock(), deque(updates), size, version)
        self._by_bot.setdefault(bot, set()).add(key)
        self._bot_bytes[bot] = self._bot_bytes.get(bot, 0) + size
        self.bytes += size
        while self.bytes > self.max_bytes:
            heaviest = max(self._bot_bytes, key=self._bot_bytes.__getitem__)
            self._drop(next(k for k in self._entries if k[0] == heaviest))

    def keys(self, bot: str, version: str = "") -> list[Key]:
        """What is kept for ``bot`` declared as ``version``, oldest first (what is kept for
        another version is not its)."""
        self._expire()
        if bot not in self._by_bot:
            return []
        return [k for k, kept in self._entries.items() if k[0] == bot and kept.version in (None, version)]

    def next_part(self, key: Key) -> bytes | None:
        """The next update kept for ``key``, no longer kept; None once there is none (all
        taken, dropped for room, or held too long). Taken a part at a time, as a stream
        can take it: what a stream that ends did not take stays for the next."""
        self._expire()
        kept = self._entries.get(key)
        if kept is None:
            return None
        part = kept.parts.popleft()
        kept.bytes -= len(part)
        self.bytes -= len(part)
        self._bot_bytes[key[0]] -= len(part)
        if not kept.parts:
            self._drop(key)
        return part

    def _expire(self) -> None:
        limit = self._clock() - self.hold_s
        while self._entries:
            key, kept = next(iter(self._entries.items()))
            if kept.at > limit:
                return
            self._drop(key)

    def _drop(self, key: Key) -> None:
        kept = self._entries.pop(key, None)
        if kept is None:
            return
        self.bytes -= kept.bytes
        self._bot_bytes[key[0]] -= kept.bytes
        keys = self._by_bot[key[0]]
        keys.discard(key)
        if not keys:
            del self._by_bot[key[0]]
            del self._bot_bytes[key[0]]
