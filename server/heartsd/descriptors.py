"""File descriptors: the one pool that every connection and store file of heartsd comes from.

A process may hold ``RLIMIT_NOFILE`` descriptors at once (its soft limit, 1,024 by default on
many systems, under a far higher hard limit). Past it, every ``accept()`` and ``open()``
fails with EMFILE: no bot can connect, the health check goes unanswered, and the store
cannot open a file. Each open connection is one descriptor, and opening a connection costs
a caller nothing, so heartsd shares the pool out:

- at start the soft limit is raised towards the hard one (:func:`raise_limit`), as servers
  usually do, so the default budgets (2,000 bot streams) fit at all;
- the gRPC port accepts at most half of the limit (``Settings.connection_limit``, applied as
  grpc's ``max_allowed_incoming_connections``; server.py);
- the web front at most a quarter (heartsd.web.connections);
- the rest is for the store, the logs and what the daemon opens itself.

>>> share(10_000, 2, 1024), share(300, 2, 1024), share(300, 2, None)
(512, 300, 300)
"""

from __future__ import annotations

import resource

# The soft limit heartsd raises itself to at most (when the hard limit allows it): room for
# every default budget several times over; an operator who needs more sets ``ulimit -n``.
WANTED = 65_536


def soft_limit() -> int | None:
    """The descriptors this process may hold, or None if unlimited."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return None if soft == resource.RLIM_INFINITY else soft


def raise_limit(wanted: int = WANTED) -> tuple[int | None, int | None]:
    """Raise the soft limit to ``wanted``, or to the hard limit if that is lower; never lower
    it. Returns (before, after); a limit the system refuses to raise is left as it is."""
    before = soft_limit()
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if before is not None and target > before:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError):
            pass  # e.g. a container's limit the process may not change: the shares still hold
    return before, soft_limit()


def share(wanted: int, divisor: int, limit: int | None) -> int:
    """``wanted``, or ``1/divisor`` of ``limit`` (a :func:`soft_limit`; None: unlimited) if
    that is less, and at least 1."""
    if limit is None:
        return wanted
    return max(1, min(wanted, limit // divisor))
