"""Searching house strategies think in worker processes, at a lower CPU priority.

Why not worker threads, as before: a Monte Carlo search is pure Python and holds the
interpreter's lock for as long as it searches. The event loop, which carries every
remote bot's stream and clock, gives the lock up at each wait for I/O and then waits up
to the switch interval (5 ms) to get it back, at every wake-up. Measured with
``python bench/server.py --beside-house 4``: 16 remote matches ran at 0.136 of their
decisions/s beside four house ``mc`` matches; 0.904 in worker processes (README, "House
bots that search"). The ladder's ``mc`` house bot in its two matches, as ``scripts/run``
plays it, is the same load. A worker process has a lock of its own,
and at ``nice`` +10 the kernel gives the daemon's loop the CPU first: house bots (a demo,
a warm-up load, a ladder's filler) search with what the remote bots leave.

Only the strategy's name, a seed, the time limit and the seat's view (a frozen
``SeatView``, ~1.4 KB pickled) cross to the worker, which builds the strategy afresh
from them: a seat's choices stay a function of its own strategy's seed (the seed is
drawn from it), and no strategy state (~9 KB of random generators) is shipped per move.

>>> view_phase_choice = choose  # what the worker runs, also usable in-process:
>>> from hearts_engine import Match, preset
>>> from heartsbot.strategies import make_strategy
>>> match = Match(preset("standard"), seed=7)
>>> len(view_phase_choice(make_strategy("heuristic", 1), match.view(0)))  # a pass: three cards
3
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import time
from collections.abc import Sequence
from typing import Any

import structlog
from hearts_engine import Phase, SeatView
from heartsbot.strategies import Strategy, make_strategy

from . import workers

log = structlog.get_logger("heartsd.thinking")

NICE = 10  # the workers' CPU priority below the daemon's (0-19; higher yields more)


def choose(strategy: Strategy, view: SeatView) -> Any:
    """The strategy's raw choice for the phase ``view`` is in: a list of cards to pass,
    a moon option, or a card to play (what ``heartsbot``'s client answers with)."""
    if view.phase is Phase.PASSING:
        return list(strategy.choose_pass(view))
    if view.phase is Phase.MOON_CHOICE:
        return strategy.choose_moon(view)
    return strategy.choose_play(view)


def _think(name: str, seed: int, time_limit_s: float, asked_at: float, view: SeatView) -> tuple[Any, float]:
    """In a worker: strategy ``name`` seeded with ``seed`` chooses for ``view`` within
    what is left of ``time_limit_s`` since ``asked_at`` (a ``perf_counter`` reading: on
    Linux the system-wide monotonic clock, the same in every process), so that waiting for
    a free worker is not time the seat is given twice. Returns (the choice, not to be
    answered before): the strategy's own wait is left to the caller (Strategy.waits), so a
    forced ``mc`` play does not hold a worker for its budget."""
    strategy = make_strategy(name, seed)
    strategy.time_limit_s = max(0.0, time_limit_s - (time.perf_counter() - asked_at))
    strategy.waits = False
    return choose(strategy, view), strategy.answer_at


def _ready() -> int:
    return os.getpid()


class HouseThinkers:
    """A pool of ``processes`` worker processes (spawned, never forked: the daemon runs
    gRPC's threads) for the house strategies that search; started at the first search,
    or by :meth:`warm` where a configured strategy will search.

    A worker that dies (killed by the OOM killer, say) breaks the pool: the searches under
    way then are made in threads instead, rather than fail their matches, and the next
    search starts new workers."""

    def __init__(self, processes: int) -> None:
        self.processes = processes
        self._pool: concurrent.futures.ProcessPoolExecutor | None = None
        self._closed = False  # the daemon is stopping: a search still asked for runs in a thread

    def _executor(self) -> concurrent.futures.ProcessPoolExecutor:
        if self._pool is None:
            self._pool = workers.pool(self.processes, NICE)
        return self._pool

    def warm(self) -> None:
        """Start every worker now, so that the first searches (under a bot's clock, on the
        ladder) do not wait for an interpreter to start."""
        pool = self._executor()
        for _ in range(self.processes):
            pool.submit(_ready)

    def worker_pids(self) -> Sequence[int]:
        """The workers' process ids (none before the first search or :meth:`warm`)."""
        pool = self._pool
        return sorted(getattr(pool, "_processes", None) or ()) if pool is not None else []

    async def think(self, strategy: Strategy, view: SeatView, time_limit_s: float | None = None) -> Any:
        """``strategy``'s choice for ``view`` (see :func:`choose`), made in a worker within
        ``time_limit_s`` from now (default: the strategy's ``time_limit_s``; a client that
        shares one strategy between matches passes each request's own)."""
        limit = strategy.time_limit_s if time_limit_s is None else time_limit_s
        args = (strategy.name, strategy.rng.getrandbits(63), limit, time.perf_counter(), view)
        pool = None if self._closed else self._executor()
        if pool is None:
            choice, answer_at = await asyncio.to_thread(_think, *args)
        else:
            try:
                choice, answer_at = await asyncio.get_running_loop().run_in_executor(pool, _think, *args)
            except concurrent.futures.process.BrokenProcessPool:
                log.warning("a house strategy's worker process died; starting new ones", strategy=strategy.name)
                self._retire(pool)
                choice, answer_at = await asyncio.to_thread(_think, *args)
        wait_s = answer_at - time.perf_counter()
        if wait_s > 0:
            await asyncio.sleep(wait_s)
        return choice

    def _retire(self, pool: concurrent.futures.ProcessPoolExecutor, broken: bool = True) -> None:
        """Stop ``pool`` (if it is still the current one, a new one starts at the next
        search). A broken pool's workers are killed: one that died holding the task queue's
        lock leaves the others waiting on it for ever, and the pool's manager thread, which
        the interpreter joins at exit, waiting on them (the review of this change)."""
        if self._pool is pool:
            self._pool = None
        workers.stop(pool, kill=broken)

    def close(self) -> None:
        """Stop the workers once their searches end (none is waited for here)."""
        self._closed = True
        if self._pool is not None:
            self._retire(self._pool, broken=False)
