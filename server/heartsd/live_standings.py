"""Tournament standings: computed once for every caller, and away from the event loop.

The standings' bootstrap (standings.py) is pure-Python CPU that grows with the roster
and the rounds: ~1 s for 16 bots over 10 rounds, ~5 s for 32 over 20. It ran on a thread
of the daemon, where it held the interpreter lock the event loop needs, and the live
standings were computed again for each caller whenever a match had finished. An attack
pass: 16 anonymous ``GetTournament`` loops took bots from 1,300-3,200 decisions a second
to 36-85 (loop lag up to 535 ms), and one caller alone to a third. So here:

- **One computation a tournament at a time**, which every caller meanwhile shares, and a
  new one at most every :data:`LIVE_REFRESH_S`, or ten times as long as the last one took
  (the bootstrap of 16 bots after 300 matches is ~6 s of CPU): in between, callers get the
  last standings (a match finished since counts at the next), and only a tournament's
  first caller waits.
- **The bootstrap runs in a worker process** (one, started when first needed and stopped
  after :data:`WORKER_IDLE_S` without work, at a lower CPU priority), so the loop keeps its
  interpreter whatever the standings cost, and the machine's cores go to the matches
  first. A worker that cannot start, or dies twice, makes the call UNAVAILABLE rather than
  run the bootstrap in the daemon; only a platform with no process pools uses a thread.
- **Each finished match's record is read once** (:class:`RecordReader`): a finished match
  never changes, and reading every record again was most of a small tournament's cost.

The final standings go the same way, once, when the last round ends (tournaments.py).
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import structlog

from heartsbot.proto import game_pb2 as P

from . import standings as stats
from . import workers
from .arena import ArenaError

if TYPE_CHECKING:
    from .store import Store

log = structlog.get_logger("heartsd.tournaments")

LIVE_REFRESH_S = 15.0  # a running tournament's standings are computed again at most this often,
REFRESH_PER_COST = 10.0  # and at most once in this many times what the last computation took
WORKER_NICE = 10  # the worker yields the CPU to the daemon (and its bots on the same machine)
WORKER_IDLE_S = 60.0  # the worker process stops after this long without a computation

PROVENANCE_FIELDS = {P.PROVENANCE_TIMEOUT: "timeouts", P.PROVENANCE_ILLEGAL: "illegal",
                     P.PROVENANCE_DISCONNECT: "disconnects", P.PROVENANCE_AUTO: "auto"}


class ScheduledMatch(Protocol):
    """A row of a tournament's schedule (tournaments.TableRow), as the standings read it."""

    status: str
    match_id: str


class TournamentRow(Protocol):
    """A tournament (tournaments.TournamentRow), as the standings read it."""

    id: str
    status: str
    seed: int
    roster: list[dict[str, str]]

    @property
    def tables(self) -> Sequence[ScheduledMatch]: ...

    @property
    def versions(self) -> dict[str, str]: ...


@dataclass(frozen=True)
class MatchPart:
    """What the standings take from one finished match's record (a few tuples, not the
    record: a long tournament keeps one per match)."""

    set_id: str | None
    seed: int
    names: tuple[str, ...]
    deal_points: tuple[tuple[int, tuple[int, ...]], ...]  # (deal number, points per seat)
    table: stats.TableResult
    defaults: tuple[tuple[str, str], ...]  # (bot, Reliability field) per defaulted decision
    decisions: tuple[int, ...]  # decisions per seat


class RecordReader:
    """The standings' inputs from the store: each finished match's record is read once."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._parts: dict[str, MatchPart] = {}  # match id -> its part, for every finished match read
        self.records_read = 0

    def _part(self, match_id: str) -> MatchPart | None:
        part = self._parts.get(match_id)
        if part is not None:
            return part
        stored = self.store.get(match_id)
        self.records_read += 1
        if stored is None or stored.record is None or stored.status != "finished":
            return None
        record = stored.record
        names = tuple(s.name for s in record.seats)
        decisions = [0] * len(names)
        defaults = []
        for d in record.decisions:
            decisions[d.seat] += 1
            if d.provenance in PROVENANCE_FIELDS:
                defaults.append((names[d.seat], PROVENANCE_FIELDS[d.provenance]))
        result = record.result
        part = self._parts[match_id] = MatchPart(
            stored.set_id, record.seed, names,
            tuple((score.deal_number, tuple(score.points)) for score in record.deal_scores),
            stats.TableResult(match_id, names, tuple(result.totals), tuple(result.ranks), result.deals),
            tuple(defaults), tuple(decisions))
        return part

    def inputs(self, t: TournamentRow) -> dict[str, Any]:
        """:func:`heartsd.standings.compute`'s arguments, from the matches ``t``'s rows name as
        finished. A table of a duplicate set counts once every table of its set is over:
        until then its scores are those of deals its sibling tables' seats are still
        holding (spectating.py)."""
        deals: list[stats.Deal] = []
        tables: list[stats.TableResult] = []
        running_sets = self.store.running_sets()
        reliability: dict[str, stats.Reliability] = {r["bot"]: stats.Reliability() for r in t.roster}
        for row in t.tables:
            if row.status != "finished":
                continue
            part = self._part(row.match_id)
            if part is None or part.set_id in running_sets:
                continue
            for deal_number, points in part.deal_points:
                shuffle = f"{part.seed}:{deal_number}"
                deals.extend(stats.Deal(shuffle, row.match_id, part.names[seat], p) for seat, p in enumerate(points))
            tables.append(part.table)
            for seat, count in enumerate(part.decisions):
                reliability.setdefault(part.names[seat], stats.Reliability()).decisions += count
            for bot, kind in part.defaults:
                rel = reliability[bot]
                setattr(rel, kind, getattr(rel, kind) + 1)
        return {"deals": deals, "tables": tables, "reliability": reliability, "seed": t.seed,
                "versions": t.versions, "roster": [r["bot"] for r in t.roster]}

    def forget(self, t: TournamentRow) -> None:
        """Drop the parts of ``t``'s matches (it is over: its standings are stored)."""
        for row in t.tables:
            self._parts.pop(row.match_id, None)


@dataclass
class _Live:
    finished: int = -1  # finished matches the standings count
    next_at: float = 0.0  # no new computation before this
    standings: stats.Standings | None = None
    task: asyncio.Task[stats.Standings] | None = None


class StandingsWorker:
    """Computes standings in a worker process, and keeps each running tournament's last."""

    def __init__(self, store: Store, clock: Callable[[], float] = time.monotonic) -> None:
        self.reader = RecordReader(store)
        self.clock = clock
        self.computed = 0  # computations started (a test counts them)
        self.worker_pids: set[int] = set()  # the processes that ran a bootstrap (a test checks them)
        self._live: dict[str, _Live] = {}
        self._pool: ProcessPoolExecutor | None = None
        self._idle: asyncio.TimerHandle | None = None
        self._busy = 0
        self._no_process = False  # this platform starts no worker process: bootstraps run on a thread
        self._closings = 0  # close() calls: a computation under way at one is ended, not redone
        self._stopped = False  # between close() and open(): the daemon stops, nothing is computed

    def open(self) -> None:
        """Compute again after :meth:`close` (the directors start again)."""
        self._stopped = False

    async def live(self, t: TournamentRow) -> stats.Standings:
        """``t``'s standings so far (it is running or paused): the last computed if they
        count every finished match or are too young to be computed again (see the module's
        docstring); else the last computed too, and a new computation starts for the next
        caller unless one is under way; computed now, shared with every caller meanwhile,
        if there are none yet."""
        self._refuse_if_stopped()
        finished = sum(1 for row in t.tables if row.status == "finished")
        live = self._live.setdefault(t.id, _Live())
        # A cancelled tournament never changes again, and its standings are what an organiser
        # exports: never the last ones if they count fewer matches. Before (an organiser's
        # pass), the first `show --json` after a cancel said 5 matches finished over standings
        # of 4 (of 1 on another daemon of the store, which had last computed them earlier).
        over = t.status not in ("running", "paused")
        if live.standings is not None and (live.finished >= finished or (not over and self.clock() < live.next_at)):
            return live.standings
        if over and live.task is not None:  # under way for an earlier read, which may count fewer
            try:
                await asyncio.shield(live.task)
            except asyncio.CancelledError:
                caller = asyncio.current_task()
                if caller is not None and caller.cancelling():
                    raise  # this caller is cancelled, not the computation
            except Exception:  # noqa: BLE001 (logged by _retrieved; computed again below)
                pass
            if live.standings is not None and live.finished >= finished:
                return live.standings
        if live.task is None:
            live.task = asyncio.get_running_loop().create_task(self._refresh(t, live, finished))
            live.task.add_done_callback(_retrieved)  # a caller that got the last ones does not wait for it
        if live.standings is not None and not over:
            return live.standings  # the new ones are for the next caller
        try:
            return await asyncio.shield(live.task)
        except asyncio.CancelledError:
            caller = asyncio.current_task()
            if caller is not None and caller.cancelling():
                raise  # this caller is cancelled, not the computation
        # The computation was let go: the daemon stops (said), or the tournament ended
        # (finished()): this caller's are computed anew. Before (a contract check), GetTournament
        # polled as a tournament ended answered UNAVAILABLE "the server is shutting down".
        self._refuse_if_stopped()
        return await self.compute(t)

    async def _refresh(self, t: TournamentRow, live: _Live, finished: int) -> stats.Standings:
        started = self.clock()
        try:
            standings = await self.compute(t)
        except Exception:
            live.next_at = self.clock() + LIVE_REFRESH_S  # a failure is not tried again by every caller
            raise
        finally:
            live.task = None
        if finished >= live.finished:  # a caller with an older read never puts the standings back
            now = self.clock()
            live.finished, live.standings = finished, standings
            live.next_at = now + max(LIVE_REFRESH_S, REFRESH_PER_COST * (now - started))
        if t.status not in ("running", "paused"):  # cancelled: nothing will change, keep no parts
            self.reader.forget(t)
        return standings

    async def final(self, t: TournamentRow) -> stats.Standings:
        """``t``'s final standings (every round over), then what was kept for it goes."""
        standings = await self.compute(t)
        self.finished(t)
        return standings

    def finished(self, t: TournamentRow) -> None:
        """``t`` is over and its standings are stored: its live standings and parts go (also
        where a caller that read it still running put them back after :meth:`final`)."""
        self.reader.forget(t)
        self.forget(t.id)

    def kept(self, tournament_id: str) -> bool:
        return tournament_id in self._live

    def forget(self, tournament_id: str) -> None:
        """The live standings of ``tournament_id`` go (a computation under way is ended)."""
        live = self._live.pop(tournament_id, None)
        if live is not None and live.task is not None:
            live.task.cancel()

    async def compute(self, t: TournamentRow) -> stats.Standings:
        self._refuse_if_stopped()
        self.computed += 1
        inputs = await asyncio.to_thread(self.reader.inputs, t)
        return await self._bootstrap(functools.partial(stats.compute_in_worker, inputs))

    def _refuse_if_stopped(self) -> None:
        if self._stopped:
            raise ArenaError("unavailable", "the server is shutting down", code="shutting_down")

    async def _bootstrap(self, work: Callable[[], tuple[int, stats.Standings]]) -> stats.Standings:
        self._busy += 1
        closings = self._closings
        if self._idle is not None:
            self._idle.cancel()
            self._idle = None
        try:
            for _ in range(2):  # a worker that died (killed, out of memory) is replaced once
                if self._closings != closings:
                    raise ArenaError("unavailable", "the server is shutting down", code="shutting_down")
                pool = self._worker()
                if pool is None:
                    _, standings = await asyncio.to_thread(work)
                    return standings
                try:
                    pid, standings = await asyncio.get_running_loop().run_in_executor(pool, work)
                except BrokenProcessPool:
                    log.warning("the standings worker process died; starting another")
                    self._close_pool()
                    continue
                except OSError as exc:  # no process could be started now (descriptors, memory): not on the loop
                    self._close_pool()
                    raise ArenaError("unavailable", f"could not start the standings worker ({exc}); try again "
                                                    "later", code="standings_unavailable") from None
                self.worker_pids.add(pid)
                return standings
            # Not on a thread of the daemon instead: a tournament whose bootstrap kills its
            # worker (memory) would take the daemon with it.
            raise ArenaError("unavailable", "the standings worker died twice; try again later",
                             code="standings_unavailable")
        finally:
            self._busy -= 1
            if not self._busy and self._pool is not None:
                self._idle = asyncio.get_running_loop().call_later(WORKER_IDLE_S, self._close_pool)

    def _worker(self) -> ProcessPoolExecutor | None:
        if self._pool is None and not self._no_process:
            try:
                self._pool = workers.pool(1, WORKER_NICE)
            except (NotImplementedError, ImportError) as exc:  # no process pools on this platform
                log.warning("no worker process for tournament standings; they are computed on a thread",
                            error=str(exc))
                self._no_process = True
        return self._pool

    def _close_pool(self, terminate: bool = False) -> None:
        pool, self._pool = self._pool, None
        self._idle = None
        if pool is not None:
            workers.stop(pool, kill=terminate)  # a bootstrap under way would hold the daemon's exit

    def close(self) -> None:
        """Stop the worker process, a computation under way included, and compute nothing
        until :meth:`open` (the daemon stops)."""
        self._closings += 1
        self._stopped = True
        if self._idle is not None:
            self._idle.cancel()
        for tournament_id in list(self._live):
            self.forget(tournament_id)
        self._close_pool(terminate=True)


def _retrieved(task: asyncio.Task[Any]) -> None:
    """Take a refresh's outcome so that a failure nobody awaited is logged once, here."""
    if not task.cancelled() and (exc := task.exception()) is not None:
        log.warning("tournament standings could not be computed", error=str(exc))
