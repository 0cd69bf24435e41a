"""Whether the store takes the daemon's writes, for the operator to see.

A store that fails (a full disk, a PostgreSQL failover, a file made read-only) does not
stop the daemon: a finished match's result is tried again for about a minute, and a result
given up on is marked aborted once the store takes writes again (arena.py). Before, nothing
said so outside the log: the health check answered SERVING and ``GetServerStatus`` had no
word of it (an operator's pass). Every write the arena makes reports here; the first
failure after a success starts a *failure*, the next success ends it, and ``on_change``
hears both (server.py turns the health check NOT_SERVING meanwhile).

    >>> health = StoreHealth()
    >>> health.failed(OSError(28, "database or disk is full"), now_ms=1_000)
    >>> health.failing_since_ms, health.error
    (1000, 'database or disk is full')
    >>> health.worked()
    >>> health.failing_since_ms, health.error
    (0, '')
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Final

MAX_ERROR_CHARS: Final = 300  # what GetServerStatus carries of the last failure's message


class StoreHealth:
    __slots__ = ("failing_since_ms", "error", "failures", "on_change")

    def __init__(self) -> None:
        self.failing_since_ms = 0  # when the current failure began (ms since the epoch); 0: writes work
        self.error = ""  # the last failed write's message, while failing
        self.failures = 0  # failed writes since start
        self.on_change: Callable[[bool], None] | None = None  # called with True (works again) or False

    @property
    def ok(self) -> bool:
        return not self.failing_since_ms

    def failed(self, exc: BaseException, now_ms: int | None = None) -> None:
        self.failures += 1
        self.error = _message(exc)
        if self.failing_since_ms:
            return
        self.failing_since_ms = now_ms if now_ms is not None else int(time.time() * 1000)
        if self.on_change is not None:
            self.on_change(False)

    def worked(self) -> None:
        if not self.failing_since_ms:
            return
        self.failing_since_ms, self.error = 0, ""
        if self.on_change is not None:
            self.on_change(True)


def _message(exc: BaseException) -> str:
    """The failure's own words, one line: an OSError's strerror, else str(exc), else its type."""
    text = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc) or type(exc).__name__
    text = " ".join(text.split())
    return text if len(text) <= MAX_ERROR_CHARS else text[:MAX_ERROR_CHARS - 3] + "..."
