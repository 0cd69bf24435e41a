"""What a bot missed of a match that ended while it was away, kept for its return.

bot.proto promises a reconnecting bot that no event is skipped. A running match
replays its own (``MatchRunner.rewind``, ``resume``); a match that ended while a seat's bot
was away is gone from memory by the time the bot says hello again, so at its end the
seat's missed events (from after the last request it answered), encoded as that seat's
``MatchUpdate`` messages (its own view: no other seat's hand; in parts of at most
runner.EVENTS_PER_PART events), are kept here and sent once after the bot's next ``hello``. Once: if that stream dies before the bot reads it, the result
is still in ``GetMatchRecord``.

A bot that never comes back must not cost the daemon without bound: an entry is kept
for at most ``hold_s`` seconds, and all of them together in at most ``max_bytes`` (the
oldest go first). What is dropped can still be read with ``GetMatchRecord``.

A seat frozen to a version of its bot (a tournament's) keeps its missed events for that
version: another version's stream never played the match and is not given them.

>>> clock = [0.0]
>>> kept = MissedEndings(hold_s=60, max_bytes=10, clock=lambda: clock[0])
>>> kept.keep("alice", "m-1", 0, [b"abcd"]); kept.keep("bob", "m-1", 1, [b"ef", b"gh"])
>>> kept.keep("alice", "m-2", 0, [b"ijkl"])  # 12 bytes in all: alice's oldest goes
>>> kept.take("alice"), kept.take("alice")
([b'ijkl'], [])
>>> clock[0] = 61.0
>>> kept.take("bob")  # held too long
[]
>>> kept.keep("carol", "m-3", 2, [b"mn", b"op"], version="v1")
>>> kept.take("carol", "v2"), kept.take("carol", "v1")
([], [b'mn', b'op'])
>>> off = MissedEndings(hold_s=0, max_bytes=10)
>>> off.keep("alice", "m-1", 0, [b"abcd"]); len(off)
0
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable

Key = tuple[str, str, int]  # (bot, match id, seat)


class MissedEndings:
    def __init__(self, hold_s: float, max_bytes: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.hold_s = hold_s
        self.max_bytes = max_bytes
        self._clock = clock
        # (kept at, the updates, their bytes, the version they are for: None, any) per key, oldest first
        self._entries: OrderedDict[Key, tuple[float, tuple[bytes, ...], int, str | None]] = OrderedDict()
        self._by_bot: dict[str, set[Key]] = {}
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
        self._entries[key] = (self._clock(), tuple(updates), size, version)
        self._by_bot.setdefault(bot, set()).add(key)
        self.bytes += size
        while self.bytes > self.max_bytes:
            self._drop(next(iter(self._entries)))

    def take(self, bot: str, version: str = "") -> list[bytes]:
        """What is kept for ``bot`` declared as ``version``, oldest first; it is then no
        longer kept (what is kept for another version stays)."""
        self._expire()
        keys = [k for k in self._by_bot.get(bot, ()) if self._entries[k][3] in (None, version)]
        taken = sorted((self._entries[k] for k in keys), key=lambda entry: entry[0])
        for key in keys:
            self._drop(key)
        return [update for _, updates, _, _ in taken for update in updates]

    def _expire(self) -> None:
        limit = self._clock() - self.hold_s
        while self._entries:
            key, (kept_at, _, _, _) = next(iter(self._entries.items()))
            if kept_at > limit:
                return
            self._drop(key)

    def _drop(self, key: Key) -> None:
        entry = self._entries.pop(key, None)
        if entry is None:
            return
        self.bytes -= entry[2]
        keys = self._by_bot[key[0]]
        keys.discard(key)
        if not keys:
            del self._by_bot[key[0]]
