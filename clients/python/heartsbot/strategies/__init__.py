"""House strategies: a strategy turns a seat's view into a decision.

The server runs them in-process as house bots; the client library runs them for
bot authors. Both hand them a :class:`hearts_engine.SeatView`, so a strategy never
sees more than its seat may know.

>>> sorted(STRATEGIES)
['heuristic', 'mc', 'random']
>>> [known_strategy(n) for n in ("mc", "graded-36", "graded-100r", "graded-101", "grade-3")]
[True, True, True, False, False]
"""

from __future__ import annotations

from collections.abc import Callable

from .base import Strategy
from .graded import NAME as GRADED_NAME
from .graded import make_graded
from .heuristic import HeuristicStrategy
from .monte_carlo import MonteCarloStrategy
from .random_strategy import RandomStrategy

STRATEGIES: dict[str, Callable[[int], Strategy]] = {
    "random": RandomStrategy,
    "heuristic": HeuristicStrategy,
    "mc": MonteCarloStrategy,
}


KNOWN = f"{', '.join(sorted(STRATEGIES))}, graded-Q or graded-Qr (Q from 0 to 100)"  # for refusals


def known_strategy(name: str) -> bool:
    """Whether :func:`make_strategy` makes ``name``: one of STRATEGIES, or ``graded-Q``.
    Every place that takes a house strategy by name asks this, so that each takes them
    all (a newcomer's pass: the README offered graded-Q for calibrating a field, and only
    ``heartsd tournament local`` took it)."""
    if name in STRATEGIES:
        return True
    match = GRADED_NAME.fullmatch(name)
    return match is not None and int(match.group(1)) <= 100


def make_strategy(name: str, seed: int = 0) -> Strategy:
    """A fresh strategy by name (also ``graded-Q``, see graded.py); ``ValueError``
    naming the known ones otherwise."""
    if name.startswith("graded-"):
        return make_graded(name, seed)
    try:
        return STRATEGIES[name](seed)
    except KeyError:
        raise ValueError(f"unknown strategy {name!r}; known: {KNOWN}") from None


__all__ = ["KNOWN", "STRATEGIES", "known_strategy", "HeuristicStrategy", "MonteCarloStrategy", "RandomStrategy", "Strategy", "make_strategy"]
