"""A byte budget on what a WebSocket's client sends, counted where its bytes arrive.

aiohttp parses every frame a client sends before a handler sees a message: it answers
PINGs itself, takes PONGs, and keeps the pieces of a fragmented message until its last
one. So a handler that closes its socket on any message it did not expect never sees a
flood of control frames or of empty continuation frames: one connection sending them
(~170,000 frames a second, no token needed) took the event loop from every bot (an
attack pass: 3,300 decisions a second down to 17-263 for as long as it lasted).

Pages send little: a spectator's nothing but the answers to the heartbeat's pings and
its close, a person's seat a few answers a minute. So once a socket is open its
transport's bytes go through :class:`MeteredProtocol` first, and a client that sends
more than its bucket holds is disconnected at once, before aiohttp parses any of it.

>>> now = 0.0
>>> budget = InboundBudget(burst_bytes=100, per_s=10.0, clock=lambda: now)
>>> budget.spend(60), budget.spend(60)
(True, False)
>>> now = 2.0  # 20 bytes back, on the 40 left
>>> budget.spend(60)
True
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

# A spectator's page answers a ping every HEARTBEAT_S (sockets.py) with at most 131 bytes
# and closes with as many; a person's seat also sends its answers (MAX_MESSAGE_BYTES each,
# ~100 in practice). Each client frame is at least 6 bytes, so these also bound frames.
WATCH_BURST_BYTES = 4096
WATCH_BYTES_PER_S = 256.0
SEAT_BURST_BYTES = 32 * 1024
SEAT_BYTES_PER_S = 4096.0


class InboundBudget:
    """A token bucket of bytes: ``burst_bytes`` at once, refilled at ``per_s``."""

    def __init__(self, burst_bytes: int, per_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.burst = float(burst_bytes)
        self.per_s = per_s
        self._clock = clock
        self._tokens = float(burst_bytes)
        self._at = clock()

    def spend(self, n: int) -> bool:
        """Take ``n`` bytes from the bucket; False (and nothing taken) if it holds fewer."""
        now = self._clock()
        self._tokens = min(self.burst, self._tokens + (now - self._at) * self.per_s)
        self._at = now
        if n > self._tokens:
            return False
        self._tokens -= n
        return True


class MeteredProtocol(asyncio.Protocol):
    """Stands between a transport and aiohttp's protocol: passes on everything, and aborts
    the connection, unparsed, on the first bytes past ``budget`` (then ``on_over()``)."""

    def __init__(self, inner: asyncio.Protocol, transport: asyncio.Transport, budget: InboundBudget,
                 on_over: Callable[[], None]) -> None:
        self._inner = inner
        self._transport = transport
        self._budget = budget
        self._on_over = on_over
        self._over = False

    def data_received(self, data: bytes) -> None:
        if self._over:
            return
        if self._budget.spend(len(data)):
            self._inner.data_received(data)
            return
        self._over = True
        self._transport.abort()  # connection_lost follows, and ends the handler's read
        self._on_over()

    def eof_received(self) -> bool | None:
        return self._inner.eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        self._inner.connection_lost(exc)

    def pause_writing(self) -> None:
        self._inner.pause_writing()

    def resume_writing(self) -> None:
        self._inner.resume_writing()


def meter(transport: asyncio.Transport | None, budget: InboundBudget, on_over: Callable[[], None]) -> None:
    """Count what ``transport`` receives from now on against ``budget`` (no-op without one)."""
    if transport is None or transport.is_closing():
        return
    inner = transport.get_protocol()
    transport.set_protocol(MeteredProtocol(inner, transport, budget, on_over))  # type: ignore[arg-type]
