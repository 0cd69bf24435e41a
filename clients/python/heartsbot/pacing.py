"""Calls a server paces: wait as long as it says, then ask again.

heartsd refuses a call over a caller's rate with RESOURCE_EXHAUSTED and says in the
trailing metadata ``retry-after-ms`` how long to wait (docs/protocol.md). A command that
pages through a long list (``heartsbot matches --all``, ``heartsd admin matches --all``)
waits that long and goes on, where it stopped at its second 1,000-match page before.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import grpc

RETRY_AFTER_KEY = "retry-after-ms"
MAX_WAITS = 20  # in one call: past that the refusal is the caller's to see
MAX_WAIT_S = 60.0  # a longer wait is not waited for here


def retry_after_s(exc: grpc.RpcError) -> float | None:
    """How long a RESOURCE_EXHAUSTED refusal says to wait, or None (any other refusal,
    or one that says nothing of when)."""
    if exc.code() != grpc.StatusCode.RESOURCE_EXHAUSTED:  # type: ignore[attr-defined]
        return None
    for key, value in exc.trailing_metadata() or ():  # type: ignore[attr-defined]
        if key == RETRY_AFTER_KEY:
            try:
                return max(0.0, int(value) / 1000)
            except ValueError:
                return None
    return None


def paced(method: Callable[..., Any], waiting: Callable[[float], None],
          sleep: Callable[[float], None] = time.sleep) -> Callable[..., Any]:
    """``method`` (a unary gRPC call), waiting and asking again each time the server says
    when (``waiting`` is told how long first), at most MAX_WAITS times a call."""

    def call(request: Any, **kwargs: Any) -> Any:
        for _ in range(MAX_WAITS):
            try:
                return method(request, **kwargs)
            except grpc.RpcError as exc:
                wait = retry_after_s(exc)
                if wait is None or wait > MAX_WAIT_S:
                    raise
                waiting(wait)
                sleep(wait)
        return method(request, **kwargs)

    return call

