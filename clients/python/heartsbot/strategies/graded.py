"""Graded strategies: the heuristic made weaker by a known amount, for calibrating
ladders and tournaments (a field of bots whose true order is known in advance).

``graded-Q`` plays the heuristic except in a share Q% of its plays, where it plays to
*take* the trick (when following it wins if it can, when void it discards its lowest
non-point card, when leading it leads its highest card); ``graded-Qr`` also plays a
random legal card wherever it would have played the heuristic. Which plays are reckless
is a fixed function of the position (hand, trick so far, tricks played), the same draw
for every bot, so a graded bot is deterministic: its strength is fixed, it plays a
replayed position the same way, and a tournament of graded bots reproduces exactly.
Measured with the engine (bench/ladder.py, 4,000 duplicate tables): points per deal of
graded-0, -20, -36, -52, -67, -84, -100, -100r: 3.3, 4.4, 5.4, 6.4, 7.3, 8.3, 9.3, 10.1.

>>> make_graded("graded-36").reckless, make_graded("graded-100r").rand
(0.36, 1.0)
"""

from __future__ import annotations

import random
import re

from hearts_engine import SeatView
from hearts_engine.cards import Card

from .heuristic import HeuristicStrategy

NAME = re.compile(r"graded-(\d{1,3})(r?)")
# Strongest first: the true order of a calibrated field (see the module docstring).
LEVELS = ("graded-0", "graded-20", "graded-36", "graded-52", "graded-67", "graded-84", "graded-100", "graded-100r")


class GradedStrategy(HeuristicStrategy):
    reckless = 0.0
    rand = 0.0

    def choose_play(self, view: SeatView) -> Card:
        legal = sorted(view.legal)
        if len(legal) == 1:
            return legal[0]
        draw = random.Random(hash((tuple(sorted(view.hand)), tuple(view.trick), len(view.tricks))))
        reckless, rand = draw.random() < self.reckless, draw.random() < self.rand
        if reckless:
            values = view.rules.points_by_card
            if not view.trick:
                return max(legal, key=lambda c: (c % 13, c))
            led = view.trick[0] // 13
            if legal[0] // 13 != led:
                return min(legal, key=lambda c: (values[c] != 0, c % 13, c))
            winning = max(c for c in view.trick if c // 13 == led)
            if legal[-1] > winning:
                return legal[-1]
        if rand:
            return draw.choice(legal)
        return super().choose_play(view)


def make_graded(name: str, seed: int = 0) -> GradedStrategy:
    """``graded-Q`` or ``graded-Qr`` (Q from 0 to 100); ValueError otherwise."""
    match = NAME.fullmatch(name)
    if match is None or int(match.group(1)) > 100:
        raise ValueError(f"not a graded strategy: {name!r} (graded-Q or graded-Qr, Q from 0 to 100)")
    bot = GradedStrategy(seed)
    bot.name = name
    bot.reckless, bot.rand = int(match.group(1)) / 100, 1.0 if match.group(2) else 0.0
    return bot
