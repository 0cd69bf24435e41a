"""What one web caller may use: a request rate and a number of open live feeds.

The web front is public, like the spectator service: every caller (by address) gets a
token bucket for requests and a cap on its open WebSockets, and all callers together
share a cap on open WebSockets, so a crowd of watchers can never take what bots need.
(This is the web front's own small limiter; when the daemon grows a shared spectator
budget, the web front takes its leases from that instead.)

>>> limits = PeerLimits(rate_per_s=1.0, burst=2, max_open=2, open_per_peer=1, clock=lambda: 0.0)
>>> limits.allow("1.2.3.4"), limits.allow("1.2.3.4"), limits.allow("1.2.3.4")
(True, True, False)
>>> lease = limits.open("1.2.3.4")
>>> limits.open("1.2.3.4") is None, limits.open("5.6.7.8") is not None
(True, True)
>>> lease.close(); limits.open("1.2.3.4") is not None
True
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

MAX_PEERS = 10_000  # buckets kept; beyond that the full (idle) ones are forgotten


@dataclass(slots=True)
class _Bucket:
    tokens: float
    at: float


class Lease:
    """One open live feed, counted until :meth:`close` (idempotent)."""

    __slots__ = ("_limits", "peer", "closed")

    def __init__(self, limits: PeerLimits, peer: str) -> None:
        self._limits = limits
        self.peer = peer
        self.closed = False

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._limits._release(self.peer)


class PeerLimits:
    def __init__(self, rate_per_s: float, burst: int, max_open: int, open_per_peer: int,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.rate = rate_per_s
        self.burst = burst
        self.max_open = max_open
        self.open_per_peer = open_per_peer
        self._clock = clock
        self._buckets: dict[str, _Bucket] = {}
        self._open: dict[str, int] = {}
        self.total_open = 0

    def allow(self, peer: str, cost: float = 1.0) -> bool:
        """Take ``cost`` tokens from the peer's bucket; False (take none) when it is short."""
        now = self._clock()
        bucket = self._buckets.get(peer)
        if bucket is None:
            if len(self._buckets) >= MAX_PEERS:
                self._forget_idle(now)
            bucket = self._buckets[peer] = _Bucket(float(self.burst), now)
        bucket.tokens = min(float(self.burst), bucket.tokens + (now - bucket.at) * self.rate)
        bucket.at = now
        if bucket.tokens < cost:
            return False
        bucket.tokens -= cost
        return True

    def retry_after_s(self, peer: str) -> float:
        bucket = self._buckets.get(peer)
        return 0.0 if bucket is None else max(0.0, (1.0 - bucket.tokens) / self.rate)

    def open(self, peer: str) -> Lease | None:
        """A lease for one more open feed of ``peer``, or None when it or everyone is at the cap."""
        if self.total_open >= self.max_open or self._open.get(peer, 0) >= self.open_per_peer:
            return None
        self._open[peer] = self._open.get(peer, 0) + 1
        self.total_open += 1
        return Lease(self, peer)

    def _release(self, peer: str) -> None:
        left = self._open.get(peer, 0) - 1
        if left > 0:
            self._open[peer] = left
        else:
            self._open.pop(peer, None)
        self.total_open -= 1

    def _forget_idle(self, now: float) -> None:
        full = [p for p, b in self._buckets.items() if b.tokens + (now - b.at) * self.rate >= self.burst]
        for peer in full or list(self._buckets)[: len(self._buckets) // 2]:
            del self._buckets[peer]
