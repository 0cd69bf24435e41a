"""Values computed in a worker thread, kept while they are current, and shared by callers.

The ladder's public views (the leaderboard, a bot's rating history) are rebuilt from every
stored result: ~1.7 s for a long-running ladder's history. Anyone may ask for them, and
each request rebuilt them in a thread of its own: 32 clients at once waited 31 s in the
median, took 120 MiB more and stalled the event loop (the GIL) for 648 ms (an attack
pass). A :class:`SharedValues` keeps each value with a *marker* of what it was computed
from (the ladder's newest result) and computes it once per marker, however many callers
arrive meanwhile; a value is also recomputed once it is ``max_age_s`` old, for changes
the marker does not show (``heartsd ladder recompute`` run beside a live daemon). A
value that must be built on the event loop (it reads live matches) comes from a coroutine
function instead, run as a task: the lobby's match lists, with a marker that changes each
second, are built once a second however many open tabs poll them.

>>> import asyncio
>>> calls = []
>>> values = SharedValues()
>>> async def main():
...     def build():
...         calls.append(1)
...         return "board"
...     got = await asyncio.gather(*(values.get("standard", 7, build) for _ in range(5)))
...     return got, len(calls), await values.get("standard", 8, build), len(calls)
>>> asyncio.run(main())
(['board', 'board', 'board', 'board', 'board'], 1, 'board', 2)
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

MAX_AGE_S = 60.0
T = TypeVar("T")


def derived(kept: dict[Hashable, tuple[object, T]], key: Hashable, source: object, build: Callable[[], T]) -> T:
    """``build()``, kept in ``kept[key]`` for as long as ``source`` is the same object: a
    view made once from a shared value (the standings' wire form, a leaderboard's answer or
    its JSON) for every caller. ``source`` is held with it, so its id is never another's.

    >>> kept, board = {}, ["alice", "bob"]
    >>> derived(kept, "standard", board, lambda: len(board)), derived(kept, "standard", board, lambda: -1)
    (2, 2)
    """
    held = kept.get(key)
    if held is None or held[0] is not source:
        held = kept[key] = (source, build())
    return held[1]


class SharedValues:
    """Per key: the latest value, its marker and when it was computed; and the computation
    running for a newer marker, which every caller of that marker awaits."""

    def __init__(self, max_age_s: float = MAX_AGE_S, spacing: float = 0.0, keep: int | None = None) -> None:
        """``spacing`` > 1: a value is computed again for a newer marker only once the time
        since its last computation ended is ``spacing - 1`` times what that computation took
        (the kept value is given meanwhile), so its computations take at most 1/``spacing``
        of the time however often the marker moves. The ladder's standings read every result:
        0.5 s at 160,000 results, and a busy ladder has a new one every second (an audit).
        ``keep``: at most this many keys' values are kept, those computed last (keys that
        come from callers, each a large value: one per tournament asked for)."""
        self.max_age_s = max_age_s
        self.spacing = spacing
        self.keep = keep
        self._values: dict[Hashable, tuple[Hashable, float, Any]] = {}
        self._running: dict[Hashable, tuple[Hashable, asyncio.Future[Any]]] = {}
        self._next: dict[Hashable, float] = {}  # per key: when a newer marker may be computed (spacing)

    async def get(self, key: Hashable, marker: Hashable, compute: Callable[[], Any]) -> Any:
        """The value for ``key`` computed at ``marker``: kept, or computed by ``compute`` in
        a worker thread, or as a task if it is a coroutine function (once, for every caller
        asking for that marker meanwhile)."""
        kept = self._values.get(key)
        now = time.monotonic()
        if kept is not None and now - kept[1] < self.max_age_s and (
                kept[0] == marker or now < self._next.get(key, 0.0)):
            return kept[2]
        running = self._running.get(key)
        if running is None or running[0] != marker:
            started = time.monotonic()
            future = asyncio.ensure_future(compute() if inspect.iscoroutinefunction(compute)
                                           else asyncio.to_thread(compute))
            running = self._running[key] = (marker, future)
            future.add_done_callback(lambda done: self._keep(key, marker, started, done))
        return await asyncio.shield(running[1])  # a caller that gives up leaves it to the others

    def kept(self, key: Hashable) -> Any:
        """The latest value kept for ``key``, whatever its marker or age (None: none yet): a
        computation may go on from it rather than start over."""
        kept = self._values.get(key)
        return kept[2] if kept is not None else None

    def _keep(self, key: Hashable, marker: Hashable, started: float, done: asyncio.Future[Any]) -> None:
        if self._running.get(key, (None, None))[1] is done:
            del self._running[key]
        kept = self._values.get(key)
        if not done.cancelled() and done.exception() is None and (kept is None or kept[1] <= started):
            self._values.pop(key, None)  # kept in the order computed, for ``keep``
            self._values[key] = (marker, started, done.result())  # never an older computation's over a newer
            while self.keep is not None and len(self._values) > self.keep:
                oldest = next(iter(self._values))
                del self._values[oldest]
                self._next.pop(oldest, None)
            if self.spacing > 1:
                ended = time.monotonic()
                self._next[key] = ended + (ended - started) * (self.spacing - 1)
