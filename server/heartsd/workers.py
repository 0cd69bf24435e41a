"""The daemon's worker processes (the house strategies' searches, thinking.py; tournament
standings, live_standings.py): their pools, and what each worker does first. Standard
library only: a spawned worker imports this, not the daemon.

- **Below the daemon in CPU priority**, so the machine's cores go to the matches first.
- **In a process group of its own**, so that the terminal's and the daemon's group's
  signals (Ctrl-C, a closed terminal) do not reach it: the daemon stops its workers
  itself, while the pool's own SIGTERM still does.
- **Gone when the daemon is.** A daemon that was killed cannot stop its workers, and a
  pool's worker waits on its task queue for ever (its own end of the queue's pipe keeps
  it open): the standings' workers of SIGKILLed daemons were found alive an hour later.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import multiprocessing
import os
import threading
import time

ORPHAN_CHECK_S = 1.0  # how often a worker looks whether the daemon that started it is gone


def started(parent: int, nice: int) -> None:
    """A worker's set-up (a pool's ``initializer``), ``parent`` being the daemon's pid."""
    os.nice(nice)
    os.setpgrp()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(ORPHAN_CHECK_S)
        os._exit(0)

    threading.Thread(target=watch, name="orphan-check", daemon=True).start()


def pool(processes: int, nice: int) -> concurrent.futures.ProcessPoolExecutor:
    """A pool of ``processes`` workers, spawned (never forked: the daemon runs gRPC's
    threads), each set up by :func:`started` at CPU priority ``nice``."""
    return concurrent.futures.ProcessPoolExecutor(max_workers=processes, mp_context=multiprocessing.get_context("spawn"),
                                                  initializer=started, initargs=(os.getpid(), nice))


def stop(workers: concurrent.futures.ProcessPoolExecutor, kill: bool) -> None:
    """Stop ``workers``; with ``kill``, its processes at once, a task under way included
    (3.11 has no public way to: the pool's own ``_processes``). A worker that died holding
    the task queue's lock, or a long task, would otherwise hold the daemon's exit, whose
    interpreter joins the pool's manager thread."""
    processes = list(getattr(workers, "_processes", {}).values()) if kill else []
    with contextlib.suppress(Exception):
        workers.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        with contextlib.suppress(OSError):
            process.kill()
