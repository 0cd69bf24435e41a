"""The event loop's monitor (server/heartsd/lag.py) tells a loop kept busy by work from
one that waited: the soak's ``max_loop_lag_ms`` on a shared machine is only a finding
about our code if ``max_loop_busy_ms`` says the loop was working. Both stalls here are
made of CPU time or of none, never of wall-clock bounds."""

from __future__ import annotations

import asyncio
import time

from heartsd import lag
from heartsd.lag import LoopMonitor


async def stall_with(block) -> LoopMonitor:
    monitor = LoopMonitor()
    monitor.start()
    await asyncio.sleep(0.1)  # the monitor ticks
    block()
    await asyncio.sleep(0.1)  # ... and sees the stall
    monitor.stop()
    return monitor


def spin_cpu(seconds: float) -> None:
    """Keep the loop's thread on the CPU for ``seconds`` of its own CPU time."""
    until = time.thread_time() + seconds
    while time.thread_time() < until:
        pass


def test_a_loop_kept_busy_is_told_from_one_that_waited():
    busy = asyncio.run(stall_with(lambda: spin_cpu(0.3)))
    # (a stall may begin up to one tick before the monitor's wake-up was due: 0.25, not 0.3)
    assert busy.max_lag_s >= 0.25 and busy.max_busy_s >= 0.25  # the lag is at least the CPU it took
    waited = asyncio.run(stall_with(lambda: time.sleep(0.3)))  # blocked, using no CPU
    assert waited.max_lag_s >= 0.25 and waited.stalls >= 1
    assert waited.max_busy_s < waited.max_lag_s / 2, (waited.max_busy_s, waited.max_lag_s)


def test_stalls_are_logged_at_most_once_per_interval_with_a_count(monkeypatch):
    lines = []
    monkeypatch.setattr(lag.log, "warning", lambda event, **kw: lines.append(kw))
    monitor = LoopMonitor()
    for i, at in enumerate((100.0, 100.5, 101.0, 100.0 + lag.WARN_EVERY_S + 0.1)):
        monitor._warn(0.1 + i / 10, at)
    assert lines == [{"lag_ms": 100, "stalls": 1}, {"lag_ms": 400, "stalls": 3}]
