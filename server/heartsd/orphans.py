"""Work another daemon instance of the store left behind when that daemon is gone.

Several daemons may share a store, each under its own ``--instance``; each marks aborted
only its own interrupted matches, and directs only its own tournaments. An instance whose
daemon is gone for good (restarted under another name, a replica removed) left its
running matches "running" for ever, their duplicate sets never released or rated, and its
tournaments with nobody to direct them (an attack pass). What is done here is done only
while holding that instance's lease (lease.take_over), so never to a daemon that lives:

- at start, its running matches are marked aborted, as its own next start would;
- a tournament of it is directed by the daemon a resume is sent to, which first marks
  aborted what it left running (as at start, which may have come before it died). Not at start: an
  instance that is only restarting (both daemons of a host rebooted, the other first)
  would lose its tournaments to a daemon its bots are not connected to (a review).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING

import structlog

from .lease import Lease, LeaseHeld, take_over
from .tournaments import TournamentStore

if TYPE_CHECKING:
    from .config import Settings
    from .store import Store

log = structlog.get_logger("heartsd.orphans")
# Why another instance's matches end when its daemon is found gone (a match's end reason of a
# fixed set: web/present.py END_REASONS).
INTERRUPTED_ELSEWHERE = "server stopped while the match was running (instance {instance}, whose daemon no longer runs)"


class Orphans:
    """The other instances' leftovers, for the daemon holding ``own`` (its lease). Its
    methods touch the store and locks: call them in a thread."""

    def __init__(self, settings: Settings, store: Store, own: Lease | None) -> None:
        self.settings = settings
        self.store = store
        self.own = own

    @contextlib.contextmanager
    def _gone(self, instance: str) -> Iterator[bool]:
        """Whether that instance's daemon is gone; if it is, its lease is held until the block
        ends, so that its work is done while it cannot come back."""
        try:
            lease = take_over(self.settings.db_path, self.store.db, instance, self.own)
        except LeaseHeld as exc:
            log.info("another instance of this store is running: its work stays its own", instance=instance,
                     lease=str(exc))
            yield False
            return
        except Exception:  # the store or its locks failing: never a reason not to serve
            log.warning("could not tell whether another instance's daemon runs; its work is left as it is",
                        instance=instance, exc_info=True)
            yield False
            return
        try:
            yield True
        finally:
            if lease is not None:
                lease.release()

    def abort_matches(self) -> None:
        """At start: every gone instance's running matches are marked aborted; its running
        or paused tournaments are named, with how to direct them here."""
        for instance in self.store.other_instances_at_work():
            with self._gone(instance) as gone:
                if not gone:
                    continue
                aborted = self._abort(instance)
                stranded = TournamentStore(self.store).active(instance)
            if stranded:
                log.warning("tournaments of another instance whose daemon no longer runs: resume one on a running "
                            "daemon (pause it first if it runs) and that daemon directs it", instance=instance,
                            tournaments=stranded)

    def adopt_tournament(self, tournament_id: str, instance: str) -> bool:
        """Direct here the tournament ``tournament_id`` of ``instance``, if that instance's
        daemon is gone; whether it was taken. What that daemon left running is marked aborted
        first, as at start: a daemon that already ran when the other died never did so, and
        its director waited for ever on a table "running" a match nobody plays (a review)."""
        with self._gone(instance) as gone:
            taken = gone and TournamentStore(self.store).adopt(tournament_id, self.settings.instance, instance)
            if taken:
                self._abort(instance)
        if taken:
            log.warning("a tournament of another instance whose daemon no longer runs is directed here",
                        tournament=tournament_id, instance=instance)
        return taken

    def _abort(self, instance: str) -> list[str]:
        """Mark aborted the running matches of ``instance``, whose lease is held; their ids."""
        aborted = self.store.abort_interrupted(INTERRUPTED_ELSEWHERE.format(instance=instance), instance=instance)
        if aborted:
            log.warning("another instance of this store left matches running and its daemon no longer runs: "
                        "they are marked aborted", instance=instance, matches=aborted)
        return aborted
