"""A seat's clock: time per decision plus a bank for the whole match.

>>> clock = SeatClock(decision_ms=1000, bank_ms=5000)
>>> clock.charge(1.5)      # 500 ms over the decision time come out of the bank
>>> clock.bank_ms, clock.budget_s()
(4500, 5.5)
>>> clock.charge(0.2)      # answering early does not refill it
>>> clock.bank_ms
4500
>>> clock.left(1200)       # a request open 1.2 s (sent again on resume): decision time first
(0, 4300)
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class SeatClock:
    decision_ms: int
    bank_ms: int

    def budget_s(self) -> float:
        """Seconds the next decision may take before it is late."""
        return (self.decision_ms + self.bank_ms) / 1000

    def charge(self, elapsed_s: float) -> None:
        """Take the part of ``elapsed_s`` beyond the decision time out of the bank."""
        over = int(elapsed_s * 1000) - self.decision_ms
        if over > 0:
            self.bank_ms = max(0, self.bank_ms - over)

    def left(self, spent_ms: int) -> tuple[int, int]:
        """(decision ms, bank ms) left for a request that has been open ``spent_ms``: the
        decision time is spent first, then the bank. (What a resent request shows.)"""
        decision, bank = self.decision_ms, self.bank_ms
        if spent_ms > 0:
            decision, bank = max(0, decision - spent_ms), max(0, bank - max(0, spent_ms - decision))
        return decision, bank

    def exhaust(self) -> None:
        self.bank_ms = 0
