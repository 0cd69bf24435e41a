"""Whether the store takes the daemon's writes, for the operator to see.

A store that fails (a full disk, a PostgreSQL failover, a file made read-only) does not
stop the daemon: a finished match's result is tried again for about a minute, and a result
given up on is marked aborted once the store takes writes again (arena.py). Before, nothing
said so outside the log: the health check answered SERVING and ``GetServerStatus`` had no
word of it (an operator's pass). Every write the arena makes reports here; the first
failure after a success starts a *failure*, the next success ends it, and ``on_change``
hears both (server.py turns the health check NOT_SERVING meanwhile).

A write is judged by the state it began in: one that began before the last change of
state (a slow write that committed before the failure and returns after it, or one that
failed before the store came back) changes nothing, so the state does not flap.

    >>> health = StoreHealth()
    >>> began = health.changes
    >>> health.failed(OSError(28, "database or disk is full"), began, now_ms=1_000)
    >>> health.failing_since_ms, health.error
    (1000, 'database or disk is full')
    >>> health.worked(began)  # it began before the failure: it says nothing of now
    >>> health.ok
    False
    >>> health.worked(health.changes)
    >>> health.failing_since_ms, health.error
    (0, '')
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from typing import Final

MAX_ERROR_CHARS: Final = 300  # what GetServerStatus carries of the last failure's message


class StoreHealth:
    __slots__ = ("failing_since_ms", "error", "failures", "changes", "on_change")

    def __init__(self) -> None:
        self.failing_since_ms = 0  # when the current failure began (ms since the epoch); 0: writes work
        self.error = ""  # the last failed write's message, while failing
        self.failures = 0  # failed writes since start
        self.changes = 0  # changes of state since start: what a write began in (``began``)
        self.on_change: Callable[[bool], None] | None = None  # called with True (works again) or False

    @property
    def ok(self) -> bool:
        return not self.failing_since_ms

    def failed(self, exc: BaseException, began: int, now_ms: int | None = None) -> None:
        """A write that began when ``changes`` was ``began`` failed with ``exc``."""
        self.failures += 1
        if began != self.changes:
            return
        self.error = failure_text(exc)
        if self.failing_since_ms:
            return
        self.failing_since_ms = now_ms if now_ms is not None else int(time.time() * 1000)
        self.changes += 1
        if self.on_change is not None:
            self.on_change(False)

    def worked(self, began: int) -> None:
        """A write that began when ``changes`` was ``began`` was committed."""
        if not self.failing_since_ms or began != self.changes:
            return
        self.failing_since_ms, self.error = 0, ""
        self.changes += 1
        if self.on_change is not None:
            self.on_change(True)


def is_store_failure(exc: BaseException) -> bool:
    """Whether ``exc`` says the store failed (its driver's errors, the system's), not that
    a write was refused for a reason of ours (a match another daemon ended, a shuffle dealt
    before): only the first kind changes the store's health.

    >>> is_store_failure(sqlite3.OperationalError("database or disk is full")), is_store_failure(RuntimeError("ended"))
    (True, False)
    """
    return isinstance(exc, (sqlite3.Error, OSError)) or type(exc).__module__.split(".")[0] == "psycopg"


def failure_text(exc: BaseException) -> str:
    """The failure's own words, one line: an OSError's strerror, else str(exc), else its type."""
    text = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc) or type(exc).__name__
    text = " ".join(text.split())
    return text if len(text) <= MAX_ERROR_CHARS else text[:MAX_ERROR_CHARS - 3] + "..."
