"""One event-loop pass per batch of gRPC completions, not one per completion.

grpc.aio learns of finished operations (a message read, a message written) from a
poller thread, which pushes each completion on a queue and writes one byte to a socket
pair that the event loop watches. The loop's reader, ``PollerCompletionQueue._handle_events``,
reads *one* byte and then handles every completion queued. So N completions that
arrived while the loop was busy cost one pass that handles them all and N - 1 more
passes (each an ``epoll_wait``, a ``recv`` and a callback) that find the queue empty. A
busy daemon gets about two completions per decision, and its loop was woken for each.

:func:`drain_grpc_wakeups` puts a wrapper in front of that reader: it counts the bytes
waiting, lets gRPC's reader take one byte and the whole queue, then discards the rest of
the bytes it counted.
That is safe because the poller pushes a completion *before* it writes its byte: every
byte waiting at the look belongs to a completion already queued, which the reader's pass
that follows handles; the wrapper drops those bytes only after that pass returned, since
gRPC's reader stops at a completion it cannot deliver (its event loop closed) and leaves
the rest to later passes. A byte written after the look stays, and costs one pass, as before.

The daemon drains its loop (``grpc_wakeup_drain``, on by default) and so does
:class:`heartsbot.client.BotClient`, the bots' side of the same streams. Measured
(``python bench/server.py --compare-drain``, the README's Benchmarks): heartsd's
event-loop thread spends ~6 us less per decision, and the bare ping-pong floor gains more
than heartsd does; the benchmark's floor gets the same drain, so its ratio compares like
with like. A bot process's CPU per decision fell ~14 us with it.

This leans on two things gRPC and asyncio do not promise: the reader's name and shape
(a ``functools.partial`` of ``PollerCompletionQueue._handle_events``), and asyncio's
selector map. Where either differs (uvloop has no selector map; another gRPC may
register its reader otherwise) nothing is changed and :func:`drain_grpc_wakeups` says so
(``False``); ``tests/server/test_wakeups.py`` fails on a gRPC where it no longer finds
the reader, so an upgrade that loses it is seen. ``grpc_wakeup_drain = false`` in the
daemon's config leaves gRPC's reader alone there.
"""

from __future__ import annotations

import asyncio
import functools
import socket
from collections.abc import Callable
from typing import Any

from .logs import get_logger

log = get_logger("heartsbot")

_PEEK_BYTES = 4096  # more waiting than this: the rest on the next pass
# gRPC's socket is non-blocking already (grpcio 1.85); MSG_DONTWAIT is not on every platform.
_PEEK = socket.MSG_PEEK | getattr(socket, "MSG_DONTWAIT", 0)


class DrainedWakeups:
    """The loop's reader for gRPC's wake-up socket: count the bytes waiting, run gRPC's own
    reader (which reads one byte and handles every queued completion), then drop the rest
    of the bytes counted.

    It assumes this loop is the socket's only reader. gRPC binds one reader per event loop
    that uses it to the same socket, so a second loop in the process (another thread's)
    would race it for the bytes: a byte dropped here could be the only wake-up of a
    completion queued after the other reader's pass. When it sees another reader (the
    bytes it dropped fewer than it saw, or none left for gRPC's reader), it hands the
    socket back to gRPC's reader for good and logs it once."""

    __slots__ = ("sock", "handler", "loop", "passes", "dropped", "_buffer")

    def __init__(self, sock: socket.socket, handler: Callable[[], Any], loop: asyncio.AbstractEventLoop) -> None:
        self.sock = sock
        self.handler = handler
        self.loop = loop
        self.passes = 0  # for tests and diagnostics: handler calls, and bytes dropped before them
        self.dropped = 0
        self._buffer = bytearray(_PEEK_BYTES)

    def __call__(self) -> None:
        sock = self.sock
        try:
            waiting = sock.recv_into(self._buffer, _PEEK_BYTES, _PEEK)
        except (BlockingIOError, InterruptedError):
            return  # woken with nothing to read: a queued completion's byte is still to come
        except OSError:
            waiting = 0  # closing: gRPC's reader meets it as it did before
        self.passes += 1
        try:
            self.handler()
        except (BlockingIOError, InterruptedError):
            self._hand_back()  # another reader took the last byte (and its pass handles the queue)
            return
        # Only now, the queue handled to its end: gRPC's reader stops at a completion it
        # cannot deliver (its loop closed) and leaves the rest to the passes the bytes
        # still waiting bring, so an exception above keeps every one of them.
        if waiting > 1:
            try:
                dropped = sock.recv_into(self._buffer, waiting - 1)
            except (BlockingIOError, InterruptedError):
                dropped = 0
            self.dropped += dropped
            if dropped < waiting - 1:
                self._hand_back()

    def _hand_back(self) -> None:
        """Another loop reads this socket too: gRPC's reader alone from now on."""
        self.loop.add_reader(self.sock, self.handler)
        log.warning("grpc wake-ups: another event loop reads gRPC's socket; its own reader again")


def _grpc_reader(callback: Any) -> bool:
    """Whether ``callback`` is grpc.aio's completion-queue reader."""
    func = callback.func if isinstance(callback, functools.partial) else callback
    owner = getattr(func, "__self__", None)
    return getattr(func, "__name__", "") == "_handle_events" and type(owner).__name__ == "PollerCompletionQueue"


def _readers(loop: asyncio.AbstractEventLoop) -> list[tuple[Any, Any]]:
    """(watched file, reader callback) for every reader on ``loop``; none on a loop with no
    selector map (uvloop; asyncio's proactor loop, whose "selector" is no selector)."""
    get_map = getattr(getattr(loop, "_selector", None), "get_map", None)
    if not isinstance(loop, asyncio.SelectorEventLoop) or get_map is None:
        return []
    return [(key.fileobj, getattr(key.data[0], "_callback", None))
            for key in list(get_map().values()) if isinstance(key.data, tuple) and key.data[0] is not None]


def drain_grpc_wakeups(loop: asyncio.AbstractEventLoop) -> bool:
    """Put :class:`DrainedWakeups` in front of grpc.aio's reader on ``loop`` (call it once
    gRPC's server or a channel exists on this loop). True if it is there now (also when
    it already was); False if the reader was not found, and nothing changed."""
    for fileobj, callback in _readers(loop):
        if isinstance(callback, DrainedWakeups):
            return True
        if isinstance(fileobj, socket.socket) and _grpc_reader(callback):
            loop.add_reader(fileobj, DrainedWakeups(fileobj, callback, loop))
            return True
    return False


def drained(loop: asyncio.AbstractEventLoop) -> DrainedWakeups | None:
    """The wrapper installed on ``loop``, if any (for tests and diagnostics)."""
    return next((callback for _, callback in _readers(loop) if isinstance(callback, DrainedWakeups)), None)
