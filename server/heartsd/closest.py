"""A tick's free bots, taken closest in rating to an anchor first (matchmaker.py, and the
bots of a duplicate set, duplicate.py)."""

from __future__ import annotations

import heapq
from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence


class ClosestFirst:
    """A tick's free bots, in order, to be taken closest in rating to an anchor first.

    ``closest_to(mu)`` yields the bots as ``sorted(bots, key=lambda b: abs(mu(b) - mu))``
    does, ties in the bots' order, and ``remove`` / ``append`` keep that order as a list's
    would. Before, each table sorted every free bot afresh and removed its bots from a
    list: a tick seating 4,000 bots took 12 s, most of it on the event loop between the
    matches' starts. Here the bots are grouped by rating once, and a table reads only the
    groups nearest its anchor's.

    >>> pool = ClosestFirst(["a", "b", "c", "d"], {"a": 25.0, "b": 20.0, "c": 30.0, "d": 26.0}.get)
    >>> list(pool.closest_to(25.0)), list(pool.closest_to(25.0, but="a"))
    (['a', 'd', 'b', 'c'], ['d', 'b', 'c'])
    >>> pool.remove("a"); pool.remove("b"); pool.append("b"); pool.bots(), pool.first()
    (['c', 'd', 'b'], 'c')
    """

    def __init__(self, bots: Sequence[str], mu: Callable[[str], float]) -> None:
        self._mu = {b: mu(b) for b in bots}
        self._order: dict[str, int] = {}  # bot -> its place (a number rising along the list)
        self._groups: dict[float, dict[str, int]] = {}  # rating -> its bots, in order
        self._next = 0
        self._queue: list[tuple[int, str]] = []  # (place, bot) as appended; stale once moved or removed
        self._head = 0  # the queue's entries before it are all stale
        for bot in bots:
            self.append(bot)
        self._ratings = sorted(self._groups)  # every bot appended later is one of these

    def __len__(self) -> int:
        return len(self._order)

    def __contains__(self, bot: str) -> bool:
        return bot in self._order

    def append(self, bot: str) -> None:
        """Put ``bot`` (one of the bots given at the start) back, last."""
        self._order[bot] = self._next
        self._groups.setdefault(self._mu[bot], {})[bot] = self._next
        self._queue.append((self._next, bot))
        self._next += 1

    def remove(self, bot: str) -> None:
        del self._order[bot]
        del self._groups[self._mu[bot]][bot]

    def bots(self) -> list[str]:
        return sorted(self._order, key=self._order.__getitem__)

    def first(self) -> str | None:
        """The first bot in order, if any."""
        queue, order = self._queue, self._order
        while self._head < len(queue):
            place, bot = queue[self._head]
            if order.get(bot) == place:
                return bot
            self._head += 1
        return None

    def closest_to(self, mu: float, but: str | None = None) -> Iterator[str]:
        """The bots (but ``but``), closest in rating to ``mu`` first; do not remove or append
        while reading them."""
        return (bot for bot in self._closest_to(mu) if bot != but)

    def _closest_to(self, mu: float) -> Iterator[str]:
        ratings, groups = self._ratings, self._groups
        right = bisect_left(ratings, mu)
        left = right - 1
        while left >= 0 or right < len(ratings):
            below = mu - ratings[left] if left >= 0 else float("inf")
            above = ratings[right] - mu if right < len(ratings) else float("inf")
            if above < below:
                yield from groups[ratings[right]]
                right += 1
            elif below < above:
                yield from groups[ratings[left]]
                left -= 1
            else:  # two ratings as far from mu: their bots in list order
                lower, upper = groups[ratings[left]], groups[ratings[right]]
                for _, bot in heapq.merge(((n, b) for b, n in lower.items()), ((n, b) for b, n in upper.items())):
                    yield bot
                left, right = left - 1, right + 1
