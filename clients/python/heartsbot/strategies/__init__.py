"""House strategies: a strategy turns a seat's view into a decision.

The server runs them in-process as house bots; the client library runs them for
bot authors. Both hand them a :class:`hearts_engine.SeatView`, so a strategy never
sees more than its seat may know.

>>> sorted(STRATEGIES)
['heuristic', 'mc', 'random']
"""

from __future__ import annotations

from collections.abc import Callable

from .base import Strategy
from .graded import make_graded
from .heuristic import HeuristicStrategy
from .monte_carlo import MonteCarloStrategy
from .random_strategy import RandomStrategy

STRATEGIES: dict[str, Callable[[int], Strategy]] = {
    "random": RandomStrategy,
    "heuristic": HeuristicStrategy,
    "mc": MonteCarloStrategy,
}


def make_strategy(name: str, seed: int = 0) -> Strategy:
    """A fresh strategy by name (also ``graded-Q``, see graded.py); ``ValueError``
    naming the known ones otherwise."""
    if name.startswith("graded-"):
        return make_graded(name, seed)
    try:
        return STRATEGIES[name](seed)
    except KeyError:
        raise ValueError(f"unknown strategy {name!r}; known: {', '.join(sorted(STRATEGIES))}, graded-Q") from None


__all__ = ["STRATEGIES", "HeuristicStrategy", "MonteCarloStrategy", "RandomStrategy", "Strategy", "make_strategy"]
