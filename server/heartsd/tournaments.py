"""Tournaments: a frozen roster, a balanced schedule, matches played on this daemon
alongside the ladder, and standings computed from the stored records.

The store is the tournament's memory, so a crash loses nothing and counts nothing twice:

- The whole schedule is written when the tournament is created (schedule.py); each
  scheduled match is a row, and the row names the one match that counts for it.
- Before a match is started its row is marked ``starting`` with the attempt number, and
  the match's seed derives from (tournament seed, round, table), keyed with the
  tournament's secret shuffle key, on a first attempt and is
  drawn at random on a later one (a set's from its first table's; :func:`table_seed`).
  After a crash a ``starting`` or ``running`` row whose match did not finish is played
  again with the next attempt: fresh shuffles, never the ones its bots were dealt (RULES.md, "Fair duplicate").
  A finished match is never played again, and standings read only the match each row names.
- A round starts when the one before has finished (and the tournament is not paused), so
  resuming after a crash continues the round that was in play.

The tables of a round play as duplicate sets (duplicate.py) where their bots allow: the
same shuffles at every table of the set at once, each hand held by a different bot at
each table, never two bots of one owner in a set; a table that fits in no set plays its
own shuffles. Matches run with the normal enforcement and clock; they wait for their
bots' free match slots (slots.py) ahead of the ladder, and only with the version each bot
declared when the roster was frozen. A bot that is not there as that version is waited for
``tournament_absent_s``; then its table starts without it, its seats played as a
disconnected bot's are (the grace, then defaults), so a bot that left cannot hold a round.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import hashlib
import hmac
import json
import math
import secrets
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import structlog

from hearts_engine import preset
from heartsbot.proto import admin_pb2, game_pb2

from . import standings as stats
from . import workers
from .arena import MAX_FIXED_DEALS, ArenaError, SeatRequest, SeedRefused, TournamentStopped
from .runner import ClockPolicy
from .live_standings import RecordReader, StandingsWorker
from .lease import HEARTBEAT_S, STALE_S
from .memo import SharedValues
from .schedule import Round, balanced_schedule
from .spelling import did_you_mean

if TYPE_CHECKING:
    from .arena import Arena
    from .db import Transaction
    from .runner import MatchRunner
    from .store import Store

log = structlog.get_logger("heartsd.tournament")
LIST_FRESH_S = 2.0  # how old the public tournament views may be (changes made here show at once)
SCHEDULE_NICE = 10  # a schedule's worker process yields the CPU to the daemon and its bots
SEAT_WAIT_S = 30.0  # one CreateMatch wait; the director waits again as long as the tournament runs
WHY_EVERY_S = 1.0  # how often a waiting table looks again at why it waits (_keep_saying_why)
# Why a tournament's matches in play end when it is cancelled without a reason of the
# organiser's (a match's end reason of a fixed set: web/present.py END_REASONS).
CANCELLED = "tournament cancelled"


# TournamentRow.clock's mark of values resolved at create (every one the match plays): a
# tournament created before holds the request's, its zeros the daemon's settings of the day.
FROZEN = "frozen"


def frozen_clock(t: TournamentRow) -> game_pb2.ClockSettings | ClockPolicy:
    """The clock ``t``'s matches play. Frozen at create since an organiser pass: before, only
    the values the request gave were kept, the rest (bank, grace, defaults before auto-play)
    read from the daemon's settings at each match, so a restart with another [clock] changed
    the time control between rounds of one tournament, without a word."""
    values = {k: v for k, v in t.clock.items() if k != FROZEN}
    return ClockPolicy(**values) if t.clock.get(FROZEN) else game_pb2.ClockSettings(**values)


@dataclass(frozen=True)
class Waiting:
    """Why a table's match has not started: ``text``, what TournamentTable.waiting says
    (English), and ``code`` with ``params``, the same by name (ArenaError.code), which the
    web's pages say in their language. Before, pages had only the English text to show."""

    text: str
    code: str = ""
    params: Mapping[str, str] = field(default_factory=dict)


# What a table waits for when its refusal has no public text (the detail is the operator's).
NOT_SEATED = Waiting("its bots cannot be seated yet (the daemon's log says why)", "not_seated")


def _problem(params: Mapping[str, str]) -> dict[str, str]:
    """A waiting reason's figures without how long it waited: the problem alone."""
    return {k: v for k, v in params.items() if k != "waited_s"}


@dataclass
class TableRow:
    round: int
    table: int
    seats: list[str]
    status: str = "pending"
    match_id: str = ""
    attempts: int = 0


@dataclass
class TournamentRow:
    id: str
    name: str
    created_ms: int
    finished_ms: int | None
    status: str
    reason: str
    ruleset: str
    players: int
    rounds: int
    deals: int
    seed: int
    clock: dict[str, int]
    roster: list[dict[str, str]]  # bot, owner, version
    instance: str
    standings: dict[str, Any] | None
    tables: list[TableRow] = field(default_factory=list)
    # The key of its shuffle seeds (table_seed); None for a tournament created before keys
    shuffle_key: bytes | None = None
    # (scheduled, finished) matches, counted by the store when ``tables`` was not loaded
    # (TournamentStore.list: one count query, not every tournament's rows)
    table_counts: tuple[int, int] | None = None
    in_play: bool = False  # a match of it is running, on any daemon of the store

    @property
    def seed_public(self) -> bool:
        """Whether its seed may be shown: it gives every shuffle, so only once no match of it
        can still be dealt from it. Before (an attack pass), a tournament cancelled on one
        daemon of a shared store showed its seed while another daemon's match of it played on."""
        return self.status == "finished" or (self.status == "cancelled" and not self.in_play)

    @property
    def versions(self) -> dict[str, str]:
        return {r["bot"]: r["version"] for r in self.roster}

    @property
    def matches(self) -> tuple[int, int]:
        """(scheduled, finished) matches, from the tables or the store's count."""
        if self.table_counts is not None:
            return self.table_counts
        return len(self.tables), sum(1 for row in self.tables if row.status == "finished")


SHUFFLE_KEY_BYTES = 32


def table_seed(seed: int, round_: int, table: int, attempt: int, key: bytes | None) -> int:
    """The shuffle seed of one attempt at one scheduled match (63 bits).

    The first attempt's is HMAC-SHA256 of (tournament seed, round, table) keyed with the
    tournament's shuffle key: secret until it is over, then published with the seed, so
    anyone can check every match's seed, and a tournament replays from both on a fresh
    store. Before (an attack pass), it was SHA-256 of the seed alone, and an organiser's
    seed is often guessable: a bot found 20261205 from its first hand in 14.5 s and knew
    every hand of every round. ``key`` None: a tournament created before keys existed,
    which goes on as it started.

    A later attempt's (the first was interrupted, or dealt a shuffle dealt before) comes
    from the server's own randomness: once the seed is public, a later attempt computed
    from it was one anyone could compute (a second attack pass).

    >>> key = bytes(32)
    >>> table_seed(11, 2, 1, 0, key) == table_seed(11, 2, 1, 0, key) != table_seed(11, 2, 1, 0, bytes([1]) * 32)
    True
    """
    if attempt > 0:
        return secrets.randbits(63)
    message = f"tournament:{seed}:{round_}:{table}:{attempt}".encode()
    digest = hashlib.sha256(message).digest() if key is None else hmac.digest(key, message, "sha256")
    return int.from_bytes(digest[:8], "big") >> 1


async def drawn_schedule(bots: list[str], size: int, rounds: int, seed: int, owners: dict[str, str]) -> list[Round]:
    """:func:`~heartsd.schedule.balanced_schedule`, drawn in a worker process of its own at a
    lower CPU priority, which ends with the call (a caller that gives up, a daemon that
    stops). The search is pure Python, ~13 s for 32 bots and 25 rounds, ~4 minutes for 64
    bots and 100 rounds: on a thread of the daemon it held the interpreter's lock the event
    loop waits for, and every match's decisions fell to ~12% meanwhile (an attack pass); in
    the standings' worker it would hold up every tournament's standings."""
    try:
        pool = workers.pool(1, SCHEDULE_NICE)
    except (NotImplementedError, ImportError):  # no process pools on this platform
        return await asyncio.to_thread(balanced_schedule, bots, size, rounds, seed, owners)
    try:
        return await asyncio.get_running_loop().run_in_executor(
            pool, functools.partial(balanced_schedule, bots, size, rounds, seed, owners))
    except BrokenProcessPool:
        raise ArenaError("unavailable", "the worker process drawing the schedule died; try again") from None
    except OSError as exc:  # no process could be started now (descriptors, memory)
        raise ArenaError("unavailable", f"could not start a worker process to draw the schedule ({exc}); try again "
                                        "later") from None
    finally:
        workers.stop(pool, kill=True)


class TournamentStore:
    """The tournament tables (schema migration 10) on the daemon's database."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.db = store.db
        # Counts the writes made through this object: what the public views are kept for
        # (TournamentService: the list and each tournament); another daemon's writes show
        # within their age. Counted once a write is made (_write).
        self.changes = 0

    @contextlib.contextmanager
    def _write(self) -> Iterator[Transaction]:
        """A write's transaction, counted in ``changes`` once it is made (or failed): counted
        first, a view built before the write was made was kept as current (a PauseTournament
        could answer with the tournament still running)."""
        try:
            with self.db.transaction() as tx:
                yield tx
        finally:
            self.changes += 1

    def create(self, t: TournamentRow) -> None:
        with self._write() as tx:
            tx.execute(
                "INSERT INTO tournaments (id, name, created_ms, status, ruleset, players, rounds, deals, seed, clock, "
                "roster, instance, shuffle_key) VALUES (?, ?, ?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (t.id, t.name, t.created_ms, t.ruleset, t.players, t.rounds, t.deals, str(t.seed),
                 json.dumps(t.clock), json.dumps(t.roster), t.instance,
                 t.shuffle_key.hex() if t.shuffle_key is not None else None))
            for row in t.tables:
                tx.execute("INSERT INTO tournament_tables (tournament_id, round, table_no, seats, status) "
                           "VALUES (?, ?, ?, ?, 'pending')", (t.id, row.round, row.table, json.dumps(row.seats)))

    def get(self, tournament_id: str, with_tables: bool = True) -> TournamentRow | None:
        rows = self.db.query(f"SELECT {_COLUMNS} FROM tournaments WHERE id = ?", (tournament_id,))
        if not rows:
            return None
        t = _tournament(rows[0])
        t.in_play = tournament_id in self._in_play(tournament_id)
        if with_tables:
            t.tables = [TableRow(r[0], r[1], json.loads(r[2]), r[3], r[4], r[5]) for r in self.db.query(
                "SELECT round, table_no, seats, status, match_id, attempts FROM tournament_tables "
                "WHERE tournament_id = ? ORDER BY round, table_no", (tournament_id,))]
        return t

    def list(self) -> list[TournamentRow]:
        """Every tournament, newest first, without its tables (their counts come from one
        grouped query: ``table_counts``) or its final standings."""
        counts = {r[0]: (int(r[1]), int(r[2] or 0)) for r in self.db.query(
            "SELECT tournament_id, COUNT(*), SUM(CASE WHEN status = 'finished' THEN 1 ELSE 0 END) "
            "FROM tournament_tables GROUP BY tournament_id")}
        # Without the final standings (NULL for them): a summary shows none, and parsing every
        # finished tournament's for each anonymous caller held the interpreter lock for nothing.
        summary_columns = _COLUMNS.replace("standings", "NULL")
        rows = [_tournament(r) for r in self.db.query(
            f"SELECT {summary_columns} FROM tournaments ORDER BY created_ms DESC, id")]
        in_play = self._in_play()
        for t in rows:
            t.table_counts = counts.get(t.id, (0, 0))
            t.in_play = t.id in in_play
        return rows

    def _in_play(self, tournament_id: str | None = None) -> set[str]:
        """The tournaments (``tournament_id``'s, or all) with a match running in the store.

        From the running matches (few; matches_running): each names its tournament since
        schema 21, written with the row itself (Store.start). Before (fresh-clone CI under
        load), a match was found through its table's row, which names it only once the
        director writes it after the start, and never when a cancel came in between: the
        seed showed while the match dealt. A match started before schema 21 is still found
        that way (migration 20's index): before, every table row of every tournament was read."""
        args = (tournament_id,) if tournament_id is not None else ()
        only = " AND m.tournament_id = ?" if tournament_id is not None else ""
        named = {r[0] for r in self.db.query(
            f"SELECT DISTINCT m.tournament_id FROM matches m WHERE m.status = 'running' AND m.tournament_id <> ''{only}",
            args)}
        only = " AND tt.tournament_id = ?" if tournament_id is not None else ""
        return named | {r[0] for r in self.db.query(
            "SELECT DISTINCT tt.tournament_id FROM matches m JOIN tournament_tables tt ON tt.match_id = m.id "
            f"WHERE m.status = 'running' AND m.tournament_id = ''{only}", args)}

    def with_shuffle_key(self, key: bytes) -> str | None:
        """The id of a tournament of this store whose shuffle key is ``key``, if any."""
        rows = self.db.query("SELECT id FROM tournaments WHERE shuffle_key = ? LIMIT 1", (key.hex(),))
        return rows[0][0] if rows else None

    def active(self, instance: str) -> list[str]:
        return [r[0] for r in self.db.query(
            "SELECT id FROM tournaments WHERE status IN ('running', 'paused') AND instance = ? ORDER BY created_ms",
            (instance,))]

    def adopt(self, tournament_id: str, instance: str, from_instance: str) -> bool:
        """Tournament ``tournament_id`` of ``from_instance`` becomes ``instance``'s (that
        daemon is gone: orphans.py); whether it did."""
        with self._write() as tx:
            return tx.execute("UPDATE tournaments SET instance = ? WHERE id = ? AND instance = ? "
                              "AND status IN ('running', 'paused')", (instance, tournament_id, from_instance)) == 1

    def any_match_seeded(self, seeds: Sequence[int]) -> bool:
        """Whether any stored match, of any tournament or none, was dealt from one of ``seeds``."""
        if not seeds:
            return False
        return bool(self.db.query(f"SELECT 1 FROM matches WHERE seed IN ({', '.join('?' * len(seeds))}) LIMIT 1",
                                  tuple(str(seed) for seed in seeds)))

    def set_table(self, tournament_id: str, row: TableRow) -> None:
        """Write ``row``, unless the tournament is cancelled: a director's write that was
        already under way at the cancel must not undo :meth:`cancel_tables`. Nor is a
        finished row ever written again: its match counts, and before (an attack pass) a
        second director replayed finished tables over it."""
        with self._write() as tx:
            tx.execute("UPDATE tournament_tables SET status = ?, match_id = ?, attempts = ? "
                       "WHERE tournament_id = ? AND round = ? AND table_no = ? AND status <> 'finished' AND NOT EXISTS "
                       "(SELECT 1 FROM tournaments WHERE id = ? AND status = 'cancelled')",
                       (row.status, row.match_id, row.attempts, tournament_id, row.round, row.table, tournament_id))

    def reopen_table(self, tournament_id: str, row: TableRow) -> bool:
        """Make the finished ``row`` pending again, its match no longer counting (a duplicate
        set played again whole: Tournaments._replay_broken_sets); only while it still holds
        the match it finished with, and the tournament is not cancelled. Whether it did."""
        with self._write() as tx:
            return tx.execute("UPDATE tournament_tables SET status = 'pending' WHERE tournament_id = ? AND round = ? "
                              "AND table_no = ? AND status = 'finished' AND match_id = ? AND NOT EXISTS "
                              "(SELECT 1 FROM tournaments WHERE id = ? AND status = 'cancelled')",
                              (tournament_id, row.round, row.table, row.match_id, tournament_id)) == 1

    def cancel_tables(self, tournament_id: str) -> None:
        """Every table of a cancelled tournament that has not finished goes back to pending
        (it did not count, and never will), its match id kept: a cancelled match's."""
        with self._write() as tx:
            tx.execute("UPDATE tournament_tables SET status = 'pending' "
                       "WHERE tournament_id = ? AND status <> 'finished'", (tournament_id,))

    def set_status(self, tournament_id: str, status: str, reason: str = "", standings: str | None = None,
                   only_from: Sequence[str] = ("running", "paused")) -> bool:
        """Move the tournament to ``status`` if it is in one of ``only_from``; True if it moved."""
        finished = int(time.time() * 1000) if status in ("finished", "cancelled") else None
        marks = ", ".join("?" for _ in only_from)
        with self._write() as tx:
            return tx.execute(
                f"UPDATE tournaments SET status = ?, reason = ?, finished_ms = ?, standings = COALESCE(?, standings) "
                f"WHERE id = ? AND status IN ({marks})",
                (status, reason, finished, standings, tournament_id, *only_from)) == 1


# How long, and how often, a daemon a tournament of another instance was resumed on keeps
# trying to direct it (Tournaments._adopt_when_gone): as long as a daemon that has just died
# takes to look gone (its heartbeat STALE_S old), with two heartbeats to spare.
ADOPT_TRIES_S = STALE_S + 2 * HEARTBEAT_S
ADOPT_EVERY_S = HEARTBEAT_S
CANCEL_POLL_S = 1.0  # how often a director reads what another daemon of the store changed (a cancel, a resume)

_COLUMNS = ("id, name, created_ms, finished_ms, status, reason, ruleset, players, rounds, deals, seed, clock, roster, "
            "instance, standings, shuffle_key")


def _tournament(r: tuple[Any, ...]) -> TournamentRow:
    return TournamentRow(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], int(r[10]), json.loads(r[11]),
                         json.loads(r[12]), r[13], json.loads(r[14]) if r[14] else None,
                         shuffle_key=bytes.fromhex(r[15]) if r[15] else None)


def compute_standings(store: Store, t: TournamentRow) -> stats.Standings:
    """Standings from the records of the matches the schedule's rows name as finished, here
    and now (the daemon computes them in a worker process instead: live_standings.py)."""
    return stats.compute(**RecordReader(store).inputs(t))


def _read(future: asyncio.Future[Any]) -> None:
    """Read a future's outcome that nobody awaits (an organiser's pass: a cancel mid-match put
    "_GatheringFuture exception was never retrieved" and a traceback in the JSON log)."""
    if not future.cancelled():
        future.exception()


def _place(row: TableRow) -> dict[str, int]:
    """A table's round and number as the log gives them: from 1, as `tournament show`,
    `watch` and `--json` print them (the rows count from 0). Before (an organiser's pass,
    reading the log after a SIGKILL), the log said round 2 table 0 of the table printed as
    round 3 table 1, while its absent-bot warning said round 2 of the second round.

    >>> _place(TableRow(2, 0, []))
    {'round': 3, 'table': 1}
    """
    return {"round": row.round + 1, "table": row.table + 1}


def _places(group: Sequence[TableRow]) -> dict[str, object]:
    """:func:`_place` of a group of tables that start together (a duplicate set, or one table)."""
    return {"round": group[0].round + 1, "tables": [row.table + 1 for row in group]}


def duplicate_groups(roster: Sequence[dict[str, str]], rows: Sequence[TableRow]) -> list[list[TableRow]]:
    """The rows to start, grouped into duplicate sets: tables that play the same shuffles at
    once, never two bots of one owner in a set; a row that fits in no set of two or more
    plays its own shuffles. So does a row that itself seats two bots of one owner (the
    schedule allows it only when it cannot be avoided): every set would refuse it, and before
    (an attack pass's reading) such a row grouped with another was refused at every attempt,
    and its round never ended.

    >>> roster = [{"bot": b, "owner": o} for b, o in zip("abcdefgh", "aacdefgh")]
    >>> rows = [TableRow(0, 0, list("abcd")), TableRow(0, 1, list("efgh"))]
    >>> [[r.table for r in g] for g in duplicate_groups(roster, rows)]
    [[1], [0]]
    """
    owners = {r["bot"]: r["owner"] for r in roster}
    groups: list[list[TableRow]] = []
    alone: list[list[TableRow]] = []
    for row in sorted(rows, key=lambda r: r.table):
        mine = {owners.get(b, b) for b in row.seats}
        if len(mine) < len(row.seats):
            alone.append([row])
            continue
        for group in groups:
            if not mine & {owners.get(b, b) for g in group for b in g.seats}:
                group.append(row)
                break
        else:
            groups.append([row])
    return groups + alone


class Tournaments:
    """Creates tournaments and runs a director task for each one this daemon plays."""

    def __init__(self, arena: Arena) -> None:
        self.arena = arena
        self.store = TournamentStore(arena.store)
        self._directors: dict[str, asyncio.Task[None]] = {}
        self._adopting: dict[str, asyncio.Task[None]] = {}  # tournament -> tries to direct it here (_adopt_when_gone)
        self._wake: dict[str, asyncio.Event] = {}
        # (tournament, round, table) -> why its match has not started (TournamentTable.waiting):
        # before, only the daemon's log said, and an organiser saw a table "starting" for hours.
        self._waiting: dict[tuple[str, int, int], Waiting] = {}
        self._waiting_on: dict[str, str] = {}  # tournament -> the match of another daemon it last waited for
        # tournament -> {bot: version frozen at its start}, while this daemon directs it: a
        # live stream of a frozen version is not replaced by another version between the
        # tournament's matches either (Arena.version_conflict).
        self._frozen: dict[str, dict[str, str]] = {}
        arena.frozen_by_tournaments = self.frozen_versions
        self.standings = StandingsWorker(arena.store)  # live and final standings, off the event loop
        # The public views built from the store, shared by the gRPC and web services
        # (TournamentService.ListTournaments), kept at most LIST_FRESH_S.
        self.views = SharedValues(max_age_s=LIST_FRESH_S)
        # Set by the daemon (server._serve: orphans.Orphans.adopt_tournament), which holds a
        # lease: (tournament, its instance) -> whether that instance's daemon is gone and the
        # tournament is directed here now. None in-process (no lease: server.embedded).
        self.adopt: Callable[[str, str], bool] | None = None

    def frozen_versions(self, bot: str) -> list[tuple[str, str]]:
        """(tournament, version) of every tournament directed here that froze ``bot``'s version."""
        return [(t, versions[bot]) for t, versions in self._frozen.items() if bot in versions]

    def waiting(self, tournament_id: str) -> dict[tuple[int, int], Waiting]:
        """(round, table) -> why that table's match waits, for the tables of ``tournament_id``
        this daemon is starting."""
        return {(r, n): why for (t, r, n), why in self._waiting.items() if t == tournament_id}

    async def create(self, name: str, bots: Sequence[str], ruleset: str, players: int, rounds: int, deals: int,
                     seed: int | None, clock: game_pb2.ClockSettings, shuffle_key: bytes = b"") -> TournamentRow:
        """``shuffle_key`` empty: a secret one is drawn (table_seed); given: a finished
        tournament's, to play its shuffles again (refused if this store used it)."""
        arena = self.arena
        try:
            rules = preset(ruleset or "standard", players=players or None)
        except (ValueError, TypeError) as exc:
            raise ArenaError("invalid", str(exc)) from None
        if not 1 <= rounds <= 1000:
            raise ArenaError("invalid", "rounds must be between 1 and 1000")
        deals = deals or 4 * rules.players
        if not 1 <= deals <= MAX_FIXED_DEALS:
            raise ArenaError("invalid", f"deals_per_match must be between 1 and {MAX_FIXED_DEALS}")
        if twice := sorted(b for b, times in Counter(bots).items() if times > 1):  # one pass: rosters can be long
            raise ArenaError("invalid", f"on the roster twice: {', '.join(map(repr, twice))}")
        if len(bots) < rules.players:
            raise ArenaError("invalid", f"{rules.players}-seat tables need at least {rules.players} bots, "
                                        f"got {len(bots)}")
        policy = arena._policy(clock)  # checked now, not at the first match; frozen (frozen_clock)
        owners = await asyncio.to_thread(arena.owners)

        def unknown_bots() -> list[str]:
            return [b for b in bots if arena.sessions.get(b) is None and not arena.tokens.known_bot(b)]

        # Against a view of the ladder read after this call: a bot registered a moment ago (the
        # house bots at a daemon's start) is known, not refused (a CI run's tournament of them).
        unknown = unknown_bots()
        if unknown and await arena.tokens.refreshed():
            unknown = unknown_bots()
        if unknown:  # before "not connected", which would send the organiser to connect a typo
            # A ladder bot whose token was revoked is not unknown: "no token names it ... or
            # `ladder add-bot`" sent the organiser to an add-bot that refuses the name as taken.
            registered = await asyncio.to_thread(arena.store.ladder.owners, True, unknown)
            active = await asyncio.to_thread(arena.store.ladder.owners, False, unknown)
            if revoked := [b for b in unknown if b in registered and b not in active]:
                raise ArenaError("not_found", f"the ladder token of {', '.join(map(repr, revoked))} was revoked: "
                                 f"`heartsd ladder rotate {revoked[0]}` issues {'each' if len(revoked) > 1 else 'it'} "
                                 "a new one (its bot connects with it)")
            known = arena.tokens.known_names()
            raise ArenaError("not_found", f"unknown bot{'s' if len(unknown) > 1 else ''} "
                             f"{', '.join(repr(b) + did_you_mean(b, known) for b in unknown)}: no token of this daemon names "
                             f"{'them' if len(unknown) > 1 else 'it'} ([bot_tokens], or `heartsd ladder add-bot`)")
        live = {bot: arena.sessions.get(bot) for bot in bots}
        if absent := [bot for bot, session in live.items() if session is None]:  # every one, not one per refusal
            raise ArenaError("precondition", f"bot {absent[0]!r} is not connected: its version is frozen at the start"
                             if len(absent) == 1 else f"bots {', '.join(map(repr, absent))} are not connected: "
                             "their versions are frozen at the start")
        roster = [{"bot": bot, "owner": owners.get(bot, bot), "version": session.version}
                  for bot, session in live.items() if session is not None]
        if shuffle_key:
            if len(shuffle_key) != SHUFFLE_KEY_BYTES:
                raise ArenaError("invalid", f"shuffle_key is {SHUFFLE_KEY_BYTES} bytes (a finished tournament's "
                                            f"Tournament.shuffle_key), got {len(shuffle_key)}; leave it empty for a "
                                            "secret one")
            used = await asyncio.to_thread(self.store.with_shuffle_key, shuffle_key)
            if used is not None:
                raise ArenaError("precondition", f"that shuffle key was tournament {used}'s on this store (public once "
                                 "a tournament is over): with it every hand can be computed; leave it empty for a "
                                 "secret one (`tournament local` derives it from --seed: choose another seed)")
        seed = secrets.randbits(63) if seed is None else seed
        schedule = await drawn_schedule(list(bots), rules.players, rounds, seed, {r["bot"]: r["owner"] for r in roster})
        t = TournamentRow(
            "t-" + secrets.token_hex(6), name or "tournament", int(time.time() * 1000), None, "running", "",
            rules.name, rules.players, rounds, deals, seed,
            {**dataclasses.asdict(policy), FROZEN: 1},
            roster, arena.settings.instance, None,
            [TableRow(r.number, i, list(table)) for r in schedule for i, table in enumerate(r.tables)],
            shuffle_key=shuffle_key or secrets.token_bytes(SHUFFLE_KEY_BYTES))
        await asyncio.to_thread(self.store.create, t)
        log.info("tournament created", tournament=t.id, bots=len(bots), rounds=rounds, matches=len(t.tables))
        self._frozen[t.id] = t.versions
        self.start(t.id)
        return t

    def start(self, tournament_id: str) -> None:
        self.standings.open()
        if tournament_id in self._directors and not self._directors[tournament_id].done():
            return
        self._wake[tournament_id] = asyncio.Event()
        task = asyncio.get_running_loop().create_task(self._direct(tournament_id))
        self._directors[tournament_id] = task

    async def resume_all(self) -> None:
        """At start: direct every unfinished tournament this daemon instance was running."""
        self.standings.open()
        for tournament_id in await asyncio.to_thread(self.store.active, self.arena.settings.instance):
            log.info("resuming tournament", tournament=tournament_id)
            self.start(tournament_id)

    async def stop(self) -> None:
        tasks = [*self._directors.values(), *self._adopting.values()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self.standings.close()

    async def set_status(self, tournament_id: str, status: str, reason: str) -> TournamentRow:
        t = await asyncio.to_thread(self.store.get, tournament_id, False)
        if t is None:
            raise ArenaError("not_found", f"no tournament {tournament_id}")
        allowed = {"paused": ("running",), "running": ("paused",), "cancelled": ("running", "paused")}[status]
        if t.status not in allowed:
            elsewhere = t.instance != self.arena.settings.instance
            hint = (f", directed by instance {t.instance!r}: if that daemon is gone for good, pause the tournament, "
                    "then resume it here to make this daemon its director"
                    if status == "running" and t.status == "running" and elsewhere else "")
            # An organiser's pass: after a restart under another --instance, "is running" alone
            # left the tournament looking healthy and stuck; README has the way, the refusal now too.
            raise ArenaError("precondition", f"tournament {tournament_id} is {t.status}{hint}")
        if not await asyncio.to_thread(self.store.set_status, tournament_id, status, reason, None, allowed):
            # Another call (on this daemon or another) moved it between the read and the write:
            # before (an attack pass) five resumes sent at once could all answer OK.
            moved = await asyncio.to_thread(self.store.get, tournament_id, False)
            raise ArenaError("precondition", f"tournament {tournament_id} is {moved.status if moved else 'gone'}")
        if status == "cancelled":
            await self._cancel_tables(tournament_id, reason or CANCELLED)
        ours = t.instance == self.arena.settings.instance
        if status == "running" and not ours and self.adopt is not None:  # its daemon may be gone for good
            ours = await asyncio.to_thread(self.adopt, tournament_id, t.instance)
            if not ours:
                self._adopt_when_gone(tournament_id, t.instance)
        if status == "running" and ours:
            self.start(tournament_id)  # another instance's director sees the resume in the store (_direct)
        if tournament_id in self._wake:
            self._wake[tournament_id].set()
        got = await asyncio.to_thread(self.store.get, tournament_id)
        assert got is not None
        return got

    def _adopt_when_gone(self, tournament_id: str, instance: str) -> None:
        """Keep trying to direct here a resumed tournament of ``instance`` whose daemon still
        looked alive at the resume (its lease held), for as long as a daemon that died then
        takes to look gone (ADOPT_TRIES_S).

        Before (a review of the take-over), a resume sent to this daemon a moment after the
        other one died (its PostgreSQL heartbeat not yet STALE_S old, or its lock not yet
        freed) adopted nothing and answered as if it had worked: the tournament was "running"
        with nobody to direct it until the organiser paused and resumed it again. If that
        daemon does live, it directs the tournament (it reads the resume from the store), and
        every try here finds its lease held."""
        if tournament_id in self._adopting and not self._adopting[tournament_id].done():
            return
        log.info("a tournament of another instance was resumed while that instance's daemon holds its lease: "
                 "it directs the tournament, or this daemon will once that lease is stale",
                 tournament=tournament_id, instance=instance, trying_for_s=ADOPT_TRIES_S)
        self._adopting[tournament_id] = asyncio.get_running_loop().create_task(
            self._keep_adopting(tournament_id, instance))

    async def _keep_adopting(self, tournament_id: str, instance: str) -> None:
        assert self.adopt is not None
        for _ in range(math.ceil(ADOPT_TRIES_S / ADOPT_EVERY_S)):
            await asyncio.sleep(ADOPT_EVERY_S)
            t = await asyncio.to_thread(self.store.get, tournament_id, False)
            if t is None or t.status != "running" or t.instance != instance:
                return  # paused or cancelled again, over, or taken by another daemon
            if await asyncio.to_thread(self.adopt, tournament_id, instance):
                self.start(tournament_id)
                return
        log.info("the daemon of another instance still holds its lease: it directs the tournament",
                 tournament=tournament_id, instance=instance)

    async def _still_running(self, tournament_id: str) -> bool:
        current = await asyncio.to_thread(self.store.get, tournament_id, False)
        return current is not None and current.status != "cancelled"

    async def _cancel_tables(self, tournament_id: str, reason: str) -> None:
        """Stop the tournament's director, then every match of it that plays, and put its
        unfinished tables back to pending (TournamentStore.cancel_tables). The director
        goes first: a table waiting for its seats is inside it, and before (an attack pass)
        such a table started when its bot came back, after the cancel, and played every
        deal holding its bots' slots."""
        director = self._directors.pop(tournament_id, None)
        if director is not None:
            director.cancel()
            await asyncio.gather(director, return_exceptions=True)
        # A start already writing its rows is shielded from the director's cancel: wait for it,
        # so that its match is in the arena's runners for the sweep below (a review found one
        # that started after the cancel and played every deal).
        await self.arena.started()
        prefix = f"tournament {tournament_id} "  # the purpose its matches start with (_start)
        for match_id, purpose in list(self.arena.purposes.items()):
            if purpose.startswith(prefix) and match_id in self.arena.runners:
                with contextlib.suppress(ArenaError):
                    self.arena.cancel(match_id, reason)
        await asyncio.to_thread(self.store.cancel_tables, tournament_id)

    # -- the director ---------------------------------------------------------------------

    async def _direct(self, tournament_id: str) -> None:
        try:
            while self.arena.accepting:
                # Cleared before the read, not after: a resume that lands while the read
                # is under way (which may still say paused) wakes the wait below. Before,
                # the director cleared that wake-up and waited for ever (the suite, under load).
                wake = self._wake.setdefault(tournament_id, asyncio.Event())
                wake.clear()
                t = await asyncio.to_thread(self.store.get, tournament_id)
                if t is None or t.status in ("finished", "cancelled"):
                    return
                self._frozen[tournament_id] = t.versions
                open_rounds = sorted({row.round for row in t.tables if row.status != "finished"})
                if not open_rounds:
                    final = await self.standings.final(t)
                    await asyncio.to_thread(self.store.set_status, t.id, "finished", "completed", final.to_json())
                    log.info("tournament finished", tournament=t.id)
                    return
                current = open_rounds[0]
                rows = [row for row in t.tables if row.round == current and row.status != "finished"]
                started = any(row.status != "pending" for row in rows) or len(rows) < sum(
                    1 for row in t.tables if row.round == current)
                if t.status == "paused" and not started:
                    # Until resumed or cancelled: here (woken), or through another daemon of the
                    # store, seen at the next read. Before (an attack pass), a resume sent to
                    # another daemon started a second director there, which replayed this
                    # one's tables with every seat absent and wrote over their results.
                    with contextlib.suppress(asyncio.TimeoutError):
                        await asyncio.wait_for(wake.wait(), CANCEL_POLL_S)
                    continue
                if not await self._play_round(t, rows):
                    await asyncio.sleep(CANCEL_POLL_S)  # not this daemon's to play yet: look again later
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("tournament director failed; it resumes at the next start", tournament=tournament_id)
        finally:
            self._frozen.pop(tournament_id, None)

    async def _waits_on(self, tournament_id: str, match_id: str) -> None:
        """Say once per match that the director waits for a match another daemon runs (a
        review: it waited without a word)."""
        if self._waiting_on.get(tournament_id) == match_id:
            return
        self._waiting_on[tournament_id] = match_id
        instance = await asyncio.to_thread(self.arena.store.running_on, match_id)
        log.info("tournament waits for its match running on another daemon of the store", tournament=tournament_id,
                 match=match_id, instance=instance)

    async def _play_round(self, t: TournamentRow, rows: list[TableRow]) -> bool:
        """Bring every unfinished scheduled match of a round to an end: wait for the ones
        running, start the others (as duplicate sets where their bots allow), and mark what
        finished; back to the caller, which looks again, when all of them have ended. False
        when nothing could be done: a match of the round runs on another daemon."""
        arena = self.arena
        waiting: list[MatchRunner] = []
        interrupted: list[TableRow] = []
        for row in rows:
            if row.status == "running":
                runner = arena.runners.get(row.match_id)
                if runner is not None:
                    waiting.append(runner)
                    continue
                stored = await asyncio.to_thread(arena.store.get, row.match_id)
                if stored is not None and stored.status == "running":
                    await self._waits_on(t.id, row.match_id)
                    return False  # another daemon's match (a shared store): it is not ours to replay
                await self._settle(t, row, stored.status if stored else "missing")
            elif row.status == "starting":
                row.status = "pending"  # a stop or a crash came while it started: see _unspent below
                interrupted.append(row)
        await self._unspent(t, interrupted)
        rows = rows + await self._replay_broken_sets(t, rows)
        if waiting:
            await self._until_over(t.id, waiting)
            for row in rows:
                if row.status == "running" and row.match_id not in arena.runners:
                    stored = await asyncio.to_thread(arena.store.get, row.match_id)
                    await self._settle(t, row, stored.status if stored else "missing")
            return True
        pending = [row for row in rows if row.status == "pending"]
        if not pending or not arena.accepting:
            return True
        if not await self._still_running(t.id):
            return True
        for group in duplicate_groups(t.roster, pending):
            for row in group:
                row.attempts += 1
                row.status, row.match_id = "starting", ""
                await asyncio.to_thread(self.store.set_table, t.id, row)  # before any card can be dealt
            runners = await self._start(t, group)
            for row, runner in zip(group, runners or []):
                row.status, row.match_id = "running", runner.id
                await asyncio.to_thread(self.store.set_table, t.id, row)
        return True

    async def _replay_broken_sets(self, t: TournamentRow, rows: list[TableRow]) -> list[TableRow]:
        """A duplicate set counts whole or not at all: when a table of a set did not finish
        (a shutdown or a crash aborted it, or an error) while another finished, the finished
        one is played again with it, as a new set on fresh shuffles. Before (an organiser's
        pass), the aborted table alone was replayed, on its own shuffles: the round was no
        longer duplicate (its luck no longer cancelling between the tables) and the standings
        counted its extra shuffles, without a word. Only while the daemon accepts work: a
        shutdown's aborts are settled at the next start. ``rows``: the round's unfinished
        ones; returns its finished ones made pending again."""
        broken = [row for row in rows if row.status == "pending" and row.match_id]
        if not broken or not self.arena.accepting:
            return []
        store = self.arena.store
        sets = set()
        for row in broken:
            stored = await asyncio.to_thread(store.get, row.match_id)
            if stored is not None and stored.set_id:
                sets.add(stored.set_id)
        again = []
        rounds = {row.round for row in broken}
        for row in t.tables:
            if row.status != "finished" or row.round not in rounds or not sets:
                continue
            stored = await asyncio.to_thread(store.get, row.match_id)
            if stored is not None and stored.set_id in sets and await asyncio.to_thread(self.store.reopen_table, t.id, row):
                log.warning("a table of a duplicate set did not finish: the set is played again whole on fresh "
                            "shuffles, this finished table included (a set's tables count only together)",
                            tournament=t.id, **_place(row), match_id=row.match_id, set_id=stored.set_id)
                row.status = "pending"
                again.append(row)
        return again

    async def _unspent(self, t: TournamentRow, interrupted: list[TableRow]) -> None:
        """First attempts that were still waiting for their bots when the daemon stopped
        dealt nothing: they are played again as first attempts, on the seed that the
        tournament's seed and key give, which anyone can check once both are published.
        Before, each such stop spent an attempt (40 kills: 39 attempts), and a later
        attempt's seed is drawn at random. Only when no stored match was dealt from any of
        these rows' first seeds (a group's seed is its first row's): else one of them
        started, and all stay spent, as before. The ledger refuses a shuffle dealt before
        whatever this decides."""
        first = [row for row in interrupted if row.attempts == 1]
        if not first or len(first) < len(interrupted):  # a later attempt among them: its seed is unknown
            return
        seeds = [table_seed(t.seed, row.round, row.table, 0, t.shuffle_key) for row in first]
        if not await asyncio.to_thread(self.store.any_match_seeded, seeds):
            for row in first:
                row.attempts = 0

    async def _until_over(self, tournament_id: str, runners: list[MatchRunner]) -> None:
        """Until ``runners`` have ended; a cancel made on another daemon of a shared store
        (seen in the store every CANCEL_POLL_S) cancels them. Before (an attack pass), such a
        match played every deal, holding its bots' slots."""
        over = asyncio.gather(*(r.finished.wait() for r in runners))
        try:
            while not over.done():
                await asyncio.wait({over}, timeout=CANCEL_POLL_S)
                if over.done():
                    break
                current = await asyncio.to_thread(self.store.get, tournament_id, False)
                if current is None or current.status == "cancelled":
                    for runner in runners:
                        with contextlib.suppress(ArenaError):
                            self.arena.cancel(runner.id, (current.reason if current else "") or CANCELLED)
                    await over
        finally:
            if over.cancel():  # the director is let go (a cancel here, a stop): the wait's end is read,
                over.add_done_callback(_read)  # or asyncio logs a bare traceback ("never retrieved")

    async def _settle(self, t: TournamentRow, row: TableRow, status: str) -> None:
        """A scheduled match's match is over: it counts (finished) or is played again."""
        if status == "finished":
            row.status = "finished"
        else:
            if not self.arena.accepting:
                return  # a shutdown aborted it: the next start plays it again
            log.info("tournament match did not finish; playing it again on fresh shuffles", tournament=t.id,
                     **_place(row), match_id=row.match_id, status=status)
            row.status = "pending"
        await asyncio.to_thread(self.store.set_table, t.id, row)

    async def _start(self, t: TournamentRow, group: list[TableRow]) -> list[MatchRunner] | None:
        """Start the matches of one group (a set, or one table), waiting for their bots; while
        they wait, :meth:`waiting` says why."""
        first = group[0]
        seed = table_seed(t.seed, first.round, first.table, first.attempts - 1, t.shuffle_key)
        clock = frozen_clock(t)
        seats = [SeatRequest(bot=b) for row in group for b in row.seats]
        bots = {b for row in group for b in row.seats}
        versions = {b: t.versions[b] for b in bots}
        purpose = f"tournament {t.id} round {first.round + 1}"
        try:
            return await self._start_when_seated(t, group, seed, clock, seats, versions, purpose)
        finally:
            for row in group:
                self._waiting.pop((t.id, row.round, row.table), None)

    def _say_waiting(self, t: TournamentRow, group: list[TableRow], exc: ArenaError) -> Waiting:
        """Tell GetTournament why ``group``'s tables wait (TournamentTable.waiting): the
        public reason of ``exc`` and its code (returned), never the detail a bot's owner may
        write or hide."""
        why = Waiting(exc.public, exc.code, exc.params) if exc.public else NOT_SEATED
        for row in group:
            self._waiting[(t.id, row.round, row.table)] = why
        return why

    async def _start_when_seated(self, t: TournamentRow, group: list[TableRow], seed: int,
                                 clock: game_pb2.ClockSettings, seats: list[SeatRequest], versions: dict[str, str],
                                 purpose: str) -> list[MatchRunner] | None:
        from .duplicate import start_set

        arena = self.arena
        loop = asyncio.get_running_loop()
        absent_s = arena.settings.tournament_absent_s
        since = loop.time()  # the table waits from here; after absent_s it no longer waits for absent bots
        absent = frozenset[str]()
        refused: Waiting | None = None  # the last refusal's reason, logged once
        while arena.accepting:
            left = since + absent_s - loop.time() if absent_s else math.inf
            wait_s = min(SEAT_WAIT_S, max(left, 0.05))
            if left <= 0:  # asked at every attempt: a bot may be back, another gone
                absent = frozenset(b for b in versions if arena.unable(b, t.ruleset, versions))
                wait_s = SEAT_WAIT_S
            if (t.id, group[0].round, group[0].table) not in self._waiting:
                try:  # why it waits, said at once: before (an organiser's pass), only after the first wait
                    await arena.check_seats_free(t.ruleset, seats, None, versions, absent=absent)
                except ArenaError as exc:
                    self._say_waiting(t, group, exc)
            saying = asyncio.get_running_loop().create_task(self._keep_saying_why(t, group, seats, versions, absent))
            try:
                if len(group) == 1:
                    runners = [await arena.create_match(
                        t.ruleset, t.players, admin_pb2.RulesetOptions(), game_pb2.MatchFormat(fixed_deals=t.deals),
                        seed, seats, clock, purpose=purpose, wait_s=wait_s, versions=versions, strict=True,
                        absent=absent, tournament=t.id)]
                else:
                    reservation = await arena.claim_seats(t.ruleset, seats, None, purpose, wait_s, versions, absent)
                    try:
                        runners = (await start_set(arena, t.ruleset, t.deals, [row.seats for row in group],
                                                   rated=False, clock=clock, purpose=purpose, seed=seed,
                                                   reservation=reservation, versions=versions, absent=absent,
                                                   tournament=t.id)).runners
                    finally:
                        if reservation is not None:
                            arena.slots.release(reservation)
                if absent:
                    log.warning("tournament match started without its absent bots: their seats play as a "
                                "disconnected bot's do (the grace, then defaults) until they connect", tournament=t.id,
                                **_places(group), bots=sorted(absent), waited_s=absent_s,
                                matches=[r.id for r in runners])
                return runners
            except TournamentStopped:  # cancelled (on another daemon of a shared store) just now
                return None
            except SeedRefused as exc:  # a shuffle of this seed was dealt before: the next attempt's
                log.warning("tournament seed deals a shuffle dealt before; the next attempt draws anew",
                            tournament=t.id, **_places(group), why=exc.message)
                for row in group:  # spent: pending, not "starting", which _unspent might give back
                    row.status = "pending"
                    await asyncio.to_thread(self.store.set_table, t.id, row)
                return None
            except ArenaError as exc:
                why = self._say_waiting(t, group, exc)
                if exc.kind not in ("deadline", "unavailable"):
                    if why != refused:  # one line per change, not one every retry
                        log.warning("tournament match refused; trying again", tournament=t.id, **_places(group),
                                    why=exc.message)
                    refused = why
                    await asyncio.sleep(SEAT_WAIT_S / 10)
                else:
                    log.info("tournament match waiting for its bots", tournament=t.id, **_places(group),
                             why=exc.message)
                if not await self._still_running(t.id):  # cancelled on another daemon of a shared store
                    return None
            finally:
                saying.cancel()  # not awaited: no await point here, between a start and its return
        return None

    async def _keep_saying_why(self, t: TournamentRow, group: list[TableRow], seats: list[SeatRequest],
                               versions: dict[str, str], absent: frozenset[str]) -> None:
        """While ``group``'s tables wait for their seats (one wait is SEAT_WAIT_S), look
        again at why every WHY_EVERY_S, and say it when the bot or the problem changed
        (TournamentTable.waiting). Before (an organiser's pass), the reason was looked at
        when the table began to wait and after each wait only: after a restart a table read
        "bot 'r5' is not connected" for half a minute while r5 was back, the bot it waited
        for being another. The same problem keeps its text (a wait's "waited 30 s ...")."""
        bots = list(dict.fromkeys(s.bot for s in seats if s.bot))
        while True:
            await asyncio.sleep(WHY_EVERY_S)
            now = await self._why_now(t, bots, versions, absent)
            if now is None:
                continue
            said = self._waiting.get((t.id, group[0].round, group[0].table))
            why = Waiting(now.public, now.code, now.params) if now.public else NOT_SEATED
            if said is None or (said.code, _problem(said.params)) != (why.code, _problem(why.params)):
                self._say_waiting(t, group, now)

    async def _why_now(self, t: TournamentRow, bots: list[str], versions: dict[str, str],
                       absent: frozenset[str]) -> ArenaError | None:
        """The first of ``bots`` that cannot be seated for a reason other than a busy slot,
        or None. Slots are left to the wait's own reason: the table's wait holds a
        reservation of them, which a check from outside it counts as taken, so a bot of one
        slot would read "busy in other matches" with this very table."""
        for bot in bots:
            try:
                await self.arena.check_seats_free(t.ruleset, [SeatRequest(bot=bot)], None, versions, absent=absent)
            except ArenaError as exc:
                if exc.code != "busy":
                    return exc
        return None
