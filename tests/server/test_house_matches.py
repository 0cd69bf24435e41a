"""The daemon's house matches (``house_matches``): kept running through store failures."""

from __future__ import annotations

import asyncio
import sqlite3

from .harness import run, running_daemon


def test_house_matches_start_again_after_the_store_failed_for_a_while(tmp_path):
    """Before (an operator's attack pass: a store on a full disk): the first match that
    could not be written ended the house-match loop for good. Space freed, the store
    worked again (CreateMatch did), yet no house match ever started, while the health
    check said SERVING. Now a failed start is logged and tried again, later and later."""

    async def scenario() -> tuple[int, int]:
        async with running_daemon(tmp_path, house_matches=1, house_delay_ms=50) as daemon:
            arena = daemon.arena
            real_start, failures = arena.store.start, []

            def full_disk(*args: object) -> None:  # the store is the external boundary here
                if len(failures) < 3:
                    failures.append(1)
                    raise sqlite3.OperationalError("disk I/O error")
                real_start(*args)

            arena.store.start = full_disk  # type: ignore[method-assign]
            arena.start_house_matches()
            for _ in range(400):
                if any(r.house_only for r in arena.runners.values()):
                    break
                await asyncio.sleep(0.05)
            return len(failures), sum(1 for r in arena.runners.values() if r.house_only)

    failures, started = run(scenario())
    assert failures == 3
    assert started == 1
