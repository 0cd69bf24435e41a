"""When each deal of a match may be shown with its hands, or at all: its release.

A deal is *released* once no seat anywhere still holds its cards: it has ended at its
table, and at every other table of its duplicate set that is still playing (the tables
of a set deal the same shuffles at the same time, so one table's cards are another's
hands). A table that ended early (aborted, cancelled) holds no cards and waits for no one.
:mod:`heartsd.spectating` shows a delayed spectator a deal's events, hands included,
``delay`` after its release, and a live spectator of a set's table its events once
released; a plain match's live spectators see public events as they happen.

The runners tell their releases what happened (:meth:`DealReleases.update`); each
runner has its own, or shares its set's. A release holds each table's :class:`TableState`
(how many deals it completed, whether it still plays, its spectators' wake-ups), which
the runner keeps up to date, never the runner itself: each runner refers to its release,
and a release referring back to its runners made a cycle that kept every finished
match's whole state (~480 KiB for a 12-deal match) until a full garbage collection, which
a busy daemon runs rarely (its heap grew 3.4 MB/s at 1,024 live matches).

>>> a, b = TableState(), TableState()
>>> releases = DealReleases([a, b])
>>> a.deals_completed, b.deals_completed = 2, 1
>>> releases.update(); releases.released
1
>>> b.playing = False  # ended early: it holds no cards and waits for no one
>>> releases.update(); releases.released
2
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass(eq=False, slots=True)
class TableState:
    """What a release needs of one table: its runner sets ``deals_completed`` and
    ``playing`` before each :meth:`DealReleases.update`, and shares ``watchers`` (the
    events that wake its spectators at each of its events). ``release_watchers`` wake only
    when a release may show more: the spectators of a set's table or of a delayed match,
    who see nothing new at an event (spectating.watch)."""

    watchers: set[asyncio.Event] = field(default_factory=set)
    release_watchers: set[asyncio.Event] = field(default_factory=set)
    deals_completed: int = 0
    playing: bool = True


class DealReleases:
    """The deals released so far for the tables of one set (or one plain match)."""

    def __init__(self, tables: Sequence[TableState] = ()) -> None:
        self.tables = list(tables)
        self.in_set = len(self.tables) > 1  # a duplicate set's tables (spectating.py)
        self.times: list[float] = []  # time.monotonic() at which deal k was released
        self.all_at: float | None = None  # when every table had ended: every deal is released

    @property
    def released(self) -> float:
        """How many deals are released (``math.inf`` once every table has ended)."""
        return math.inf if self.all_at is not None else len(self.times)

    def release_time(self, deal: int) -> float | None:
        """When deal ``deal`` was released, or ``None`` while it is not."""
        if deal < len(self.times):
            return self.times[deal]
        return self.all_at

    def update(self) -> None:
        """Recompute after a table finished a deal or ended; wake every table's watchers
        when something new is released, and at every call once all is (a table's
        ``match_ended`` comes after the release of its last deal)."""
        tables = self.tables
        if self.all_at is None:
            now = time.monotonic()
            before = len(self.times)
            playing = [t.deals_completed for t in tables if t.playing]
            if not playing:
                self.all_at = now
            else:
                while len(self.times) < min(playing):
                    self.times.append(now)
                if len(self.times) == before:
                    return
        for table in tables:
            for wake in table.watchers:
                wake.set()
            for wake in table.release_watchers:
                wake.set()
