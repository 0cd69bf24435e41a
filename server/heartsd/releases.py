"""When each deal of a match may be shown with its hands, or at all: its release.

A deal is *released* once no seat anywhere still holds its cards: it has ended at its
table, and at every other table of its duplicate set that is still playing (the tables
of a set deal the same shuffles at the same time, so one table's cards are another's
hands). A table that ended early (aborted, cancelled) holds no cards and waits for no one.
:mod:`heartsd.spectating` shows a delayed spectator a deal's events, hands included,
``delay`` after its release, and a live spectator of a set's table its events once
released; a plain match's live spectators see public events as they happen.

The runners tell their releases what happened (:meth:`DealReleases.update`); each
runner has its own, or shares its set's. A release refers to its tables weakly: each
runner refers to its release, and that cycle kept every finished match's whole state
(~480 KiB for a 12-deal match) until a full garbage collection, which a busy daemon
runs rarely (its heap grew 3.4 MB/s at 1,024 live matches). A freed table has ended, so
it holds no cards and waits for no one: forgetting it changes no release.
"""

from __future__ import annotations

import math
import time
import weakref
from collections.abc import Sequence
from typing import Protocol


class Table(Protocol):
    """What a release needs of a match runner."""

    watchers: set  # type: ignore[type-arg]

    @property
    def deals_completed(self) -> int: ...

    @property
    def playing(self) -> bool: ...


class DealReleases:
    """The deals released so far for the tables of one set (or one plain match)."""

    def __init__(self, tables: Sequence[Table] = ()) -> None:
        self._tables = [weakref.ref(t) for t in tables]
        self.in_set = len(self._tables) > 1  # a duplicate set's tables (spectating.py)
        self.times: list[float] = []  # time.monotonic() at which deal k was released
        self.all_at: float | None = None  # when every table had ended: every deal is released

    @property
    def tables(self) -> list[Table]:
        """The tables still alive (a finished runner the daemon forgot is gone)."""
        return [t for ref in self._tables if (t := ref()) is not None]

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
        when something new is released."""
        if self.all_at is not None:
            return
        now = time.monotonic()
        before = len(self.times)
        tables = self.tables
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
