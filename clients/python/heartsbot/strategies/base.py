"""The strategy interface: pass, play, and (classic) the moon choice."""

from __future__ import annotations

import random
from collections.abc import Sequence

from hearts_engine import MoonOption, SeatView
from hearts_engine.cards import Card


class Strategy:
    """Subclass and implement :meth:`choose_pass` and :meth:`choose_play`.

    Each gets the seat's :class:`SeatView`; ``view.legal`` lists the cards allowed
    now. ``choose_moon`` has a sensible default.
    """

    name = "strategy"
    time_limit_s = 1.0
    """How long the next decision may take; the client sets it from the server's clock."""
    searches = False
    """True for a strategy that spends its time limit searching: the daemon runs such a
    strategy's house seats in a worker process (heartsd.thinking), off its event loop and
    its interpreter's lock, built afresh from ``name`` and a seed drawn from ``rng``."""
    answer_at = 0.0
    """After a choice: not to be answered before this ``time.perf_counter()`` reading (0:
    at once). ``mc`` sets it to its budget's end, so that its answer times tell nothing."""
    waits = True
    """Whether the strategy itself sleeps until ``answer_at``; False leaves the wait to
    its caller (heartsd's worker processes, which should not be held by a sleep)."""
    version = ""
    """The version ``heartsbot play`` sends in ``hello`` (a tournament freezes each bot's and
    seats it only as that version). Empty: a digest of the strategy's source file, so a
    changed file is a new version by itself (heartsbot.loading.version_of)."""

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)

    def choose_pass(self, view: SeatView) -> Sequence[Card]:
        raise NotImplementedError

    def choose_play(self, view: SeatView) -> Card:
        raise NotImplementedError

    def choose_moon(self, view: SeatView) -> MoonOption:
        """Add to the others unless that would hand the match to someone else."""
        return best_moon_option(view)


def best_moon_option(view: SeatView) -> MoonOption:
    rules = view.rules
    total = rules.deal_total
    me = view.seat
    after_add = [t + (0 if s == me else total) for s, t in enumerate(view.totals)]
    if rules.phases is None and max(after_add) >= rules.target:
        if min(after_add) < after_add[me] or after_add.count(after_add[me]) > 1:
            return MoonOption.SUBTRACT_FROM_SELF
    return MoonOption.ADD_TO_OTHERS
