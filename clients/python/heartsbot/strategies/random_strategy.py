"""Uniformly random legal decisions: the weakest baseline."""

from __future__ import annotations

from collections.abc import Sequence

from hearts_engine import MoonOption, SeatView
from hearts_engine.cards import Card

from .base import Strategy


class RandomStrategy(Strategy):
    name = "random"

    def choose_pass(self, view: SeatView) -> Sequence[Card]:
        return self.rng.sample(view.legal, view.rules.pass_count)

    def choose_play(self, view: SeatView) -> Card:
        return self.rng.choice(view.legal)

    def choose_moon(self, view: SeatView) -> MoonOption:
        return self.rng.choice(list(MoonOption))
