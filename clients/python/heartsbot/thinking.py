"""The threads a strategy's choices run in (``BotClient``, when no ``think`` is given).

Python cannot stop a thread, so a ``choose_*`` call that overruns its time keeps running
after the client has answered a default for it. On the loop's default executor (what
``asyncio.to_thread`` used before, an attack on heartsbot with a strategy that loops for
ever on some positions) two things went wrong:

- the executor has ``min(32, cpus + 4)`` threads, 6 on a 2-core machine: once that many
  calls were stuck, every later decision waited in its queue and was answered by default,
  ``choose_pass`` too, each logged as "did not answer within ... ms" though it never ran;
- ``asyncio.run`` and the interpreter's exit wait for every executor thread: after two
  Ctrl-C the client printed nothing and never exited (a third did nothing either).

Here each call waiting for a thread gets a new one, up to ``limit`` threads, so the calls
stuck so far do not hold up the next decision; and the threads are daemon threads, which
neither ``asyncio.run`` nor the interpreter waits for.
"""

from __future__ import annotations

import asyncio
import contextvars
import queue
import threading
from collections.abc import Callable
from typing import Any

STUCK_THREADS = 16  # beyond the matches played at once: overrunning calls that may keep a thread


class Job:
    """One strategy call: ``started`` once a thread runs it."""

    __slots__ = ("fn", "args", "future", "loop", "context", "started")

    def __init__(self, fn: Callable[..., Any], args: tuple[Any, ...], loop: asyncio.AbstractEventLoop) -> None:
        self.fn, self.args, self.loop = fn, args, loop
        self.future: asyncio.Future[Any] = loop.create_future()
        self.context = contextvars.copy_context()  # current_decision, as to_thread copied it
        self.started = False


class Thinkers:
    """Daemon threads running strategy calls: one for each call waiting, up to ``limit``; idle ones are used again."""

    def __init__(self, limit: int, name: str = "heartsbot-strategy") -> None:
        self.limit = max(1, limit)
        self.name = name
        self._jobs: queue.SimpleQueue[Job] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads = 0
        self._idle = 0  # threads waiting for a job
        self._queued = 0  # jobs no thread has taken yet

    def submit(self, fn: Callable[..., Any], *args: Any) -> Job:
        """Run ``fn(*args)`` in a thread; the job's future (on the running loop) has its outcome."""
        job = Job(fn, args, asyncio.get_running_loop())
        with self._lock:
            # A thread for each job waiting, not only when no thread is idle: a thread started
            # for the job before may not have taken it yet, and two calls that came together
            # (two matches' requests) ran one after the other on it, the second timing out.
            self._queued += 1
            if self._queued > self._idle and self._threads < self.limit:
                self._threads += 1
                self._idle += 1
                threading.Thread(target=self._work, name=f"{self.name}-{self._threads}", daemon=True).start()
            self._jobs.put(job)
        return job

    @property
    def threads(self) -> int:
        return self._threads

    def _work(self) -> None:
        while True:
            job = self._jobs.get()
            with self._lock:
                self._queued -= 1
                self._idle -= 1
                job.started = True
            try:
                result = job.context.run(job.fn, *job.args)
            except BaseException as exc:  # handed to the decision, which answers a default
                outcome: tuple[bool, Any] = (False, exc)
            else:
                outcome = (True, result)
            with self._lock:
                self._idle += 1
            try:
                job.loop.call_soon_threadsafe(_settle, job.future, outcome)
            except RuntimeError:
                pass  # the loop is closed: nobody waits for it any more


def _settle(future: asyncio.Future[Any], outcome: tuple[bool, Any]) -> None:
    if future.done():
        return  # given up: its decision was answered by default
    ok, value = outcome
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)
