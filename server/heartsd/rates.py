"""How fast one caller may do something: a token bucket per caller.

The daemon's budgets (``heartsd.budgets``) bound how many calls a caller has open at
once; this bounds how fast it may start them. The web front gives each address a
request rate (page loads, polls, seat requests); the bot service gives each bot a rate
of new streams (``bot_streams_per_minute``): a stream that is accepted costs the daemon
~3 times one it refuses (the welcome, the seats' rewind, the replaced stream's end), and
one bot reconnecting in a loop took half of the event loop from every other bot.

>>> rate = RequestRate(per_s=1.0, burst=2, clock=lambda: 0.0)
>>> rate.allow("1.2.3.4"), rate.allow("1.2.3.4"), rate.allow("1.2.3.4"), rate.allow("5.6.7.8")
(True, True, False, True)
>>> rate.allow("5.6.7.8", cost=1.5), rate.retry_after_s("5.6.7.8", cost=1.5)
(False, 0.5)
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

MAX_PEERS = 10_000  # buckets kept; beyond that the full (idle) ones are forgotten
# A spectator call costs 1 of the spectator rate (budgets.py), and a ListMatches page one
# more per PAGE_ROWS_PER_TOKEN matches asked for: as the daemon's work goes, ~1 ms a call
# and ~1 ms per 20 matches listed (a 1-match page ~1.1 ms of the daemon's CPU, 668 matches
# ~50 ms, measured). The largest call must fit in a burst (Settings checks it; here, where
# config may read it without loading gRPC before the daemon has set its experiments).
MAX_PAGE = 1000
PAGE_ROWS_PER_TOKEN = 20
LARGEST_CALL_COST = 1 + MAX_PAGE // PAGE_ROWS_PER_TOKEN
# A GetMatchRecord costs one more per this many bytes of the match's stored events (its
# record's size follows them), up to LARGEST_CALL_COST in all: a 1,000-deal record (3.5 MB)
# took ~70 ms a call to load, send and read (client included), and cost one call (an attack pass).
RECORD_BYTES_PER_TOKEN = 64 * 1024
TOTAL_BURST_S = 3  # the spectator rate for every address together holds this many seconds' worth


@dataclass(slots=True)
class _Bucket:
    tokens: float
    at: float


class RequestRate:
    def __init__(self, per_s: float, burst: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.rate = per_s
        self.burst = burst
        self._clock = clock
        self._buckets: dict[str, _Bucket] = {}

    def allow(self, peer: str, cost: float = 1.0) -> bool:
        """Take ``cost`` tokens from the peer's bucket; False (and take none) when it is short
        (always, for a cost above the burst: the caller's settings keep its costs within it)."""
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

    def refund(self, peer: str, cost: float) -> None:
        """Give back what :meth:`allow` took for something that was refused after all."""
        bucket = self._buckets.get(peer)
        if bucket is not None:
            bucket.tokens = min(float(self.burst), bucket.tokens + cost)

    def retry_after_s(self, peer: str, cost: float = 1.0) -> float:
        """How long until the peer's bucket holds ``cost`` tokens again."""
        bucket = self._buckets.get(peer)
        return 0.0 if bucket is None else max(0.0, (cost - bucket.tokens) / self.rate)

    def _forget_idle(self, now: float) -> None:
        full = [p for p, b in self._buckets.items() if b.tokens + (now - b.at) * self.rate >= self.burst]
        for peer in full or list(self._buckets)[: len(self._buckets) // 2]:
            del self._buckets[peer]
