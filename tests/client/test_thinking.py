"""The threads strategy calls run in (heartsbot/thinking.py)."""

from __future__ import annotations

import asyncio
import threading

from heartsbot.thinking import Thinkers


def test_calls_submitted_together_run_together_not_one_after_another():
    """Found in review: a call found a thread "idle" that had been started for the call
    before it and had not yet taken it, so two requests that came together (two matches at
    once, `--max-matches 2`) ran one after the other on one thread: the second started only
    once the first had used its whole think time, and timed out. Each waiting call now has a
    thread of its own (up to the limit). Here both calls wait for each other: one after the
    other, the first would give up at its barrier's timeout."""
    barrier = threading.Barrier(2, timeout=30)

    def meet() -> bool:
        barrier.wait()
        return True

    async def main() -> list[bool]:
        thinkers = Thinkers(limit=4)
        jobs = [thinkers.submit(meet), thinkers.submit(meet)]
        return list(await asyncio.gather(*(job.future for job in jobs)))

    assert asyncio.run(main()) == [True, True]


def test_no_more_threads_than_the_limit_and_idle_threads_are_used_again():
    release = threading.Event()

    async def main() -> tuple[int, int]:
        thinkers = Thinkers(limit=2)
        held = [thinkers.submit(release.wait) for _ in range(3)]  # the third waits for a thread
        await asyncio.sleep(0)
        at_most = thinkers.threads
        release.set()
        await asyncio.gather(*(job.future for job in held))
        for _ in range(5):  # one at a time: the idle threads take them
            await thinkers.submit(lambda: None).future
        return at_most, thinkers.threads

    assert asyncio.run(main()) == (2, 2)
