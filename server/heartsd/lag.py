"""How late the event loop runs, so that no bot is charged for the server's own stalls.

Everything of every match happens on one event loop. When the loop is blocked (a long
garbage collection, a slow callback, a burst of work), an answer that arrived in time
waits unread and a deadline timer fires late, and a bot would be charged for time the
server itself was not listening. :class:`LoopMonitor` is a small task that sleeps
``TICK_S`` again and again and records how much later than asked it woke: lateness of
``STALL_S`` or more is a *stall*, kept as an interval of monotonic time. A decision is
credited with the stall time that overlapped its open request (the runner extends the
deadline by it, charges the clock without it, and records it as
``RecordedDecision.stall_credit_ms``), including a stall still going on when the
deadline timer finally runs.

The monitor also keeps what operators want to see: the current lag, the largest since
start, the number of stalls (``AdminService.GetServerStatus``), and a warning in the log
for stalls of ``WARN_S`` or more (one line per ``WARN_EVERY_S`` at most, with a count).

>>> monitor = LoopMonitor()
>>> monitor.record(10.0, 10.5)          # the loop was stuck from 10.0 s to 10.5 s
>>> round(monitor.stalled(9.8, 11.0), 3), round(monitor.stalled(10.4, 11.0), 3), monitor.stalled(10.6, 11.0)
(0.5, 0.1, 0.0)
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from typing import Final

import structlog

log = structlog.get_logger("heartsd.loop")
TICK_S: Final = 0.02  # how often the monitor wakes: 50 cheap wake-ups a second
STALL_S: Final = 0.01  # lateness at least this long counts as a stall (and is credited)
WARN_S: Final = 0.1  # stalls at least this long are logged...
WARN_EVERY_S: Final = 5.0  # ... in one line per this long at most
KEEP: Final = 4096  # stalls remembered (older ones cannot overlap a request still open)


class LoopMonitor:
    """See the module docstring. ``start()`` from the event loop it watches."""

    def __init__(self) -> None:
        self._stalls: deque[tuple[float, float]] = deque(maxlen=KEEP)
        self.last_stall_end = float("-inf")  # the hot path's test: no stall since a request was sent
        self._due = float("inf")  # when the monitor asked to wake next (inf: not running)
        self.current_lag_s = 0.0
        self.max_lag_s = 0.0
        self.max_busy_s = 0.0  # of the stalls, the most CPU the loop thread spent in one
        self.stalls = 0
        self.stalled_s = 0.0  # total
        self._task: asyncio.Task[None] | None = None
        self._warned_at = float("-inf")
        self._unlogged = 0  # stalls of WARN_S or more since the last log line
        self._unlogged_max = 0.0

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._watch())

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task = None
            self._due = float("inf")

    async def _watch(self) -> None:
        while True:
            cpu = time.thread_time()
            self._due = time.monotonic() + TICK_S
            await asyncio.sleep(TICK_S)
            woke = time.monotonic()
            lag = max(0.0, woke - self._due)
            self.current_lag_s = lag
            if lag > self.max_lag_s:
                self.max_lag_s = lag
            if lag >= STALL_S:
                # The loop thread's CPU time over the tick tells a loop kept busy by work
                # (CPU close to the lag) from one that waited: for the OS to run it (a
                # machine short of CPU) or in a blocking call (CPU far below the lag).
                busy = min(lag, time.thread_time() - cpu)
                if busy > self.max_busy_s:
                    self.max_busy_s = busy
                self.record(self._due, woke)
                if lag >= WARN_S:
                    self._warn(lag, woke)

    def _warn(self, lag: float, now: float) -> None:
        """Log a stall of WARN_S or more; at most one line per WARN_EVERY_S (a machine
        short of CPU stalls often), which counts the others since the last line."""
        self._unlogged += 1
        self._unlogged_max = max(self._unlogged_max, lag)
        if now - self._warned_at >= WARN_EVERY_S:
            log.warning("event loop stalled: no bot is charged for it", lag_ms=round(self._unlogged_max * 1000),
                        stalls=self._unlogged)
            self._warned_at, self._unlogged, self._unlogged_max = now, 0, 0.0

    def record(self, start: float, end: float) -> None:
        """The loop was stalled from ``start`` to ``end`` (monotonic seconds)."""
        self._stalls.append((start, end))
        self.last_stall_end = end
        self.stalls += 1
        self.stalled_s += end - start

    def ongoing_s(self, now: float) -> float:
        """How long the loop has been stalled right now: the monitor is late waking."""
        late = now - self._due
        return late if late >= STALL_S else 0.0

    def stalled(self, since: float, now: float) -> float:
        """Seconds the loop was stalled between ``since`` and ``now``, counting a stall
        still under way. Called for every decision: without a stall since ``since`` it is
        two comparisons."""
        ongoing = now - self._due
        if self.last_stall_end <= since and ongoing < STALL_S:
            return 0.0
        total = ongoing if ongoing >= STALL_S else 0.0
        for start, end in reversed(self._stalls):
            if end <= since:
                break
            total += min(end, now) - max(start, since)
        return max(0.0, total)

    def recent_max_s(self, window_s: float = 60.0) -> float:
        """The longest stall that ended in the last ``window_s`` seconds."""
        cutoff = time.monotonic() - window_s
        longest = 0.0
        for start, end in reversed(self._stalls):
            if end < cutoff:
                break
            longest = max(longest, end - start)
        return longest
