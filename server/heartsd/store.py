"""The match store: one row per match, written before any result is announced.

Runs on SQLite (a file path, the default) or PostgreSQL (a ``postgresql://`` URL) with
the same code (see db.py). A match is inserted as ``running`` when it starts, gets
checkpoints while it runs, and its record and result replace the row in one
transaction when it ends. At start-up every row still ``running`` (the daemon died
with it) becomes ``aborted``, so a crash never loses a match silently or lets it
count as a result.
"""

from __future__ import annotations

import errno
import json
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import structlog
from google.protobuf.message import DecodeError
from heartsbot.proto import game_pb2, spectator_pb2

from .db import Database, StoreError, Transaction, redacted  # noqa: F401  (StoreError: part of the store's interface)
from .ladder import Ladder
from .schema import MIGRATIONS
from .shuffles import ShuffleRepeated

log = structlog.get_logger("heartsd.store")


@dataclass(frozen=True)
class NewMatch:
    """A match to insert as running. ``seats``: each seat's occupant (a bot's name, or
    ``house:<strategy>``); ``shuffles``: the fingerprints of its first deals, in order
    (every deal of a fixed-deals match; a first chunk of a game)."""

    id: str
    ruleset: str
    players: int
    seats: list[str]
    seed: int
    shuffles: Sequence[str] = ()
    set_id: str = ""  # the duplicate set it is a table of (duplicate.py)
    tournament: str = ""  # the tournament it is played for (tournaments.py): inserted only while that runs


class TournamentOver(Exception):
    """A tournament's match was not started: the tournament is over (cancelled or finished,
    perhaps by another daemon of the store) by the time its row would have been written."""

    def __init__(self, tournament_id: str, status: str) -> None:
        super().__init__(f"tournament {tournament_id} is {status}: its matches no longer start")
        self.tournament_id = tournament_id
        self.status = status


@dataclass(frozen=True)
class StoredMatch:
    id: str
    created_ms: int
    finished_ms: int | None
    status: str
    reason: str
    ruleset: str
    players: int
    seats: list[str]
    seed: int
    deals_played: int
    totals: list[int]
    record: spectator_pb2.MatchRecord | None  # None from list(): it reads the result alone
    set_id: str = ""
    result: game_pb2.MatchResult | None = None  # of a match that is over (its record's result)


# The oldest schema whose tables and columns every read-only command of this heartsd finds
# (matches.result, schema 14). Before (an attack pass), an older store gave those commands a
# traceback ("no such column: set_id") instead of this message.
READABLE_FROM = 14
PROBE_FREE_BYTES = 1024 * 1024  # probe_write: what the store's filesystem must have free


# A store file this large says so before it is checked: the check reads every page.
CHECK_SAYS_SO_OVER_BYTES = 256 * 1024 * 1024


def refuse_damage(db: Database, url: str) -> None:
    """StoreError if SQLite's ``quick_check`` finds the file damaged.

    A daemon started on a damaged file went on writing a ladder's results into it, and the
    damage showed only when a call read a broken row (DATA_LOSS), perhaps days later. The
    check reads the whole file once (0.14 s for 300 MiB in the page cache here), so a large
    store says it is checking; an operator who must serve a damaged store anyway turns the
    check off and gets what still reads."""
    if db.dialect != "sqlite" or not os.path.isfile(db.url):
        return  # PostgreSQL's server checks its own; a new or in-memory store has nothing to check
    size = os.path.getsize(db.url)
    if size > CHECK_SAYS_SO_OVER_BYTES:
        log.info("checking the store file (SQLite's quick_check; store_check = false skips it)",
                 db=redacted(url), mib=size // (1024 * 1024))
    # On a connection of its own, closed after: on the store's, the pages it read stayed in
    # that connection's cache and the daemon's memory grew by ~1.4 MiB more over the next
    # thousand bot streams (bench/server.py's per idle bot: 28.1 KiB against 26.7 unchecked).
    checker = Database.open(db.url, create=False, read_only=True)
    try:
        damage = checker.damage()
    finally:
        checker.close()
    if damage:
        shown = "; ".join(damage[:3]) + (f"; and {len(damage) - 3} more" if len(damage) > 3 else "")
        raise StoreError(
            f"the store {redacted(url)} is damaged (SQLite's quick_check: {shown}). Stop and put back a backup "
            "(README, \"Backups\"; after moving this file's -wal and -shm away); `heartsd replay verify` names the "
            "matches that still read. To serve on it anyway, set store_check = false (HEARTSD_STORE_CHECK=false)")


class Store:
    """Thread-safe; call from ``asyncio.to_thread`` in the daemon."""

    def __init__(self, url: str, instance: str = "heartsd", create: bool = True, read_only: bool = False) -> None:
        """Open (and migrate) the store at ``url``. ``create=False``: a missing store is a
        StoreError naming the path. ``read_only``: nothing is written, not even a migration
        (for commands that only read; see :meth:`open_existing`). The daemon checks a SQLite
        file first, on a read-only connection of its own (server._open_checked): checked on
        this one, a refusal's close would fold the file's -wal into it."""
        self.db = Database.open(url, create=create, read_only=read_only)
        self.path = url
        self.instance = instance  # the daemon whose running matches these are (Settings.instance)
        self.read_only = read_only
        try:
            newest = max(v for v, _ in MIGRATIONS)
            if read_only:
                current = self.db.schema_version(newest)
                if current < READABLE_FROM:
                    raise StoreError(
                        f"the store {redacted(url)} is at schema {current}, older than this heartsd reads ("
                        f"{READABLE_FROM} or later): start `heartsd serve` on it once to upgrade it, or read it with "
                        "the heartsd that wrote it")
            else:
                self.db.migrate(MIGRATIONS)
            self.ladder = Ladder(self.db)
            if not read_only:
                self.ladder.ensure_ratings()
                self.ladder.count_auto_defaults(lambda blob: _provenance(spectator_pb2.MatchRecord.FromString(blob)))
                self.fill_results()  # through its index (schema 16): nothing to read when none is missing
        except BaseException:
            self.db.close()
            raise

    @classmethod
    def open_existing(cls, url: str, write: bool = False) -> Store:
        """For commands other than ``serve``: never creates a store (a missing one is a
        StoreError naming the path). Readers (``write=False``) open it read-only and without
        migrating, so a store on read-only media, or one a live daemon is using, can be read."""
        return cls(url, create=False, read_only=not write)

    def close(self) -> None:
        self.db.close()

    def fill_results(self, batch: int = 200) -> int:
        """Give every match that is over and was stored before the ``result`` column its
        result, from its record, a few at a time; returns how many. It runs at every start,
        through the partial index of such rows (schema 16), so that a start killed during
        the fill finishes it the next time. (A scan of every row at each start cost the
        daemon ~1.2 MiB of memory that bench/server.py counted against its idle bots.)"""
        filled = 0
        damaged: list[str] = []  # records that do not parse: left alone (replay verify names them)
        while len(damaged) < 1000:
            skip = f" AND id NOT IN ({', '.join('?' * len(damaged))})" if damaged else ""
            with self.db.transaction() as tx:
                rows = tx.query("SELECT id, record FROM matches WHERE result IS NULL AND status <> 'running' "
                                f"AND record IS NOT NULL{skip} LIMIT ?", (*damaged, batch))
                for match_id, blob in rows:
                    try:
                        result = _result_bytes(blob)
                    except DecodeError:
                        damaged.append(match_id)
                        continue
                    tx.execute("UPDATE matches SET result = ? WHERE id = ?", (result, match_id))
                    filled += 1
            if len(rows) < batch:
                break
        if damaged:
            log.warning("matches whose stored record does not parse were left without a result; "
                        "`heartsd replay verify` names them", matches=damaged[:20], count=len(damaged))
        return filled

    def abort_interrupted(self, reason: str = "server stopped while the match was running",
                          only: Sequence[str] | None = None, instance: str | None = None) -> list[str]:
        """Mark this instance's ``running`` matches ``aborted`` (keeping their last checkpoint),
        or those of ``only`` among them; return their ids. Matches other daemons run in a
        shared store are left alone: another ``instance``'s are marked only by a daemon that
        holds that instance's lease (server.adopt_orphans)."""
        with self.db.transaction() as tx:
            rows = tx.query("SELECT id, record FROM matches WHERE status = 'running' AND instance = ?",
                            (instance or self.instance,))
            if only is not None:
                wanted = set(only)
                rows = [r for r in rows if r[0] in wanted]
            for match_id, blob in rows:
                record = None
                result = game_pb2.MatchResult(status=game_pb2.MATCH_STATUS_ABORTED, reason=reason)
                if blob is not None:
                    parsed = spectator_pb2.MatchRecord.FromString(blob)
                    parsed.result.status = game_pb2.MATCH_STATUS_ABORTED
                    parsed.result.reason = reason
                    record = parsed.SerializeToString()
                    result = parsed.result
                tx.execute(  # a result even without a record: the match list then says why it ended
                    "UPDATE matches SET status = 'aborted', reason = ?, finished_ms = ?, record = ?, result = ? "
                    "WHERE id = ?",
                    (reason, _now_ms(), record, result.SerializeToString(), match_id),
                )
        return [r[0] for r in rows]

    def other_instances_at_work(self) -> list[str]:
        """The other daemon instances of this store with a match running or a tournament
        running or paused: alive elsewhere, or gone (server.adopt_orphans tells which)."""
        rows = self.db.query(
            "SELECT instance FROM matches WHERE status = 'running' AND instance <> ? UNION "
            "SELECT instance FROM tournaments WHERE status IN ('running', 'paused') AND instance <> ?",
            (self.instance, self.instance))
        return sorted({r[0] for r in rows})

    def running_on(self, match_id: str) -> str | None:
        """The instance whose daemon runs ``match_id``, None if it is not running."""
        rows = self.db.query("SELECT instance FROM matches WHERE id = ? AND status = 'running'", (match_id,))
        return rows[0][0] if rows else None

    def insert_running(self, match_id: str, ruleset: str, players: int, seats: list[str], seed: int) -> None:
        """Insert one running match without ledger rows (see :meth:`start`)."""
        self.start([NewMatch(match_id, ruleset, players, seats, seed)])

    def start(self, matches: Sequence[NewMatch], strict: bool = False) -> None:
        """Insert running matches and their shuffles' ledger rows in one transaction.

        ``strict`` (rated matches, seeds the server drew): refuse with
        :class:`ShuffleRepeated`, inserting nothing, when any of the shuffles was dealt
        before, to anyone, in any match (its hands may be known: a finished record shows
        them). Otherwise (an organiser's explicit seed) a bot may be dealt a shuffle again:
        the row it already has stays. The UNIQUE (bot, fingerprint) constraint backs this
        on every daemon sharing the store.

        A tournament's matches are inserted only while the tournament runs (or is paused),
        checked in this transaction, which a cancel's write waits for or goes before
        (:class:`TournamentOver`, nothing inserted): a cancel landing between its director's
        last check and this write let a match deal from a seed already shown (tournaments.py,
        ``seed_public``)."""
        with self.db.transaction() as tx:
            for tournament_id in sorted({m.tournament for m in matches if m.tournament}):
                _refuse_over(tx, tournament_id)
            fingerprints = sorted({f for m in matches for f in m.shuffles})
            if fingerprints:
                tx.lock()  # one ledger writer at a time, so a check and its insert are one step
                if strict:
                    _refuse_dealt(tx, fingerprints)
            for m in matches:
                tx.execute(
                    "INSERT INTO matches (id, created_ms, status, ruleset, players, seats, seed, instance, set_id, "
                    "tournament_id) VALUES (?, ?, 'running', ?, ?, ?, ?, ?, ?, ?)",
                    (m.id, _now_ms(), m.ruleset, m.players, json.dumps(m.seats), str(m.seed), self.instance,
                     m.set_id, m.tournament),
                )
                _record_dealt(tx, m.id, m.seats, 0, m.shuffles, strict)

    def reserve_shuffles(self, match_id: str, seats: list[str], first: int, shuffles: Sequence[str],
                         strict: bool) -> None:
        """Ledger rows for deals ``first``... of a running game-format match, before they
        are dealt (its length is not known in advance); refused as in :meth:`start`."""
        with self.db.transaction() as tx:
            tx.lock()
            if strict:
                _refuse_dealt(tx, sorted(set(shuffles)))
            _record_dealt(tx, match_id, seats, first, shuffles, strict)

    def dealt(self, match_id: str | None = None) -> list[tuple[str, str, str, int]]:
        """Ledger rows (bot, fingerprint, match id, deal), of one match or all."""
        where, args = (" WHERE match_id = ?", (match_id,)) if match_id else ("", ())
        return [tuple(r) for r in self.db.query(  # type: ignore[misc]
            f"SELECT bot, fingerprint, match_id, deal FROM dealt_shuffles{where} ORDER BY match_id, deal, bot", args)]

    def checkpoint(self, match_id: str, record: bytes, deals_played: int, totals: list[int]) -> None:
        """Save a running match's record so far (a serialized MatchRecord: the runner
        assembles it from parts encoded once), so a crash keeps it."""
        self.checkpoint_many({match_id: (record, deals_played, totals)})

    def probe_write(self) -> None:
        """A write that changes nothing the daemon reads, to learn whether the store takes
        writes again (store_health.py): a failed-over server refuses it as it would any
        write. On SQLite it could pass on a full disk (it rewrites a page the write-ahead
        log already holds: an attack pass saw the health check flap), so the store's
        filesystem must also have PROBE_FREE_BYTES free."""
        if self.db.dialect == "sqlite" and self.db.url != ":memory:":
            stat = os.statvfs(os.path.dirname(os.path.abspath(self.db.url)))
            free = stat.f_bavail * stat.f_frsize
            if free < PROBE_FREE_BYTES:
                raise OSError(errno.ENOSPC, f"database or disk is full ({free} bytes free on the store's filesystem)")
        with self.db.transaction() as tx:
            tx.execute("UPDATE schema_version SET version = version")

    def checkpoint_many(self, checkpoints: Mapping[str, tuple[bytes, int, list[int]]]) -> None:
        """:meth:`checkpoint` for several matches, in one transaction (checkpoints.py).
        A match that is no longer running keeps its final record."""
        with self.db.transaction() as tx:
            for match_id, (record, deals_played, totals) in checkpoints.items():
                tx.execute(
                    "UPDATE matches SET record = ?, deals_played = ?, totals = ? WHERE id = ? AND status = 'running'",
                    (record, deals_played, json.dumps(totals), match_id),
                )

    def finish(
        self,
        match_id: str,
        status: str,
        reason: str,
        record: spectator_pb2.MatchRecord,
        deals_played: int,
        totals: list[int],
        rated: bool = False,
        events: bytes | None = None,
    ) -> None:
        """Store the final record, status and spectators' ``events`` in one transaction; for a finished rated match
        its result goes into the ladder's results in the same transaction. A table of a
        duplicate set is rated with its set, by the transaction that ends the set's last
        running table, and only if every table of the set finished."""
        with self.db.transaction() as tx:
            set_id = ""
            if rated:
                tx.lock()  # a set's tables end one after the other: exactly one of them rates it
                rows = tx.query("SELECT set_id FROM matches WHERE id = ?", (match_id,))
                set_id = rows[0][0] if rows else ""
            if rated and status == "finished" and not set_id:
                Ladder.record_result(tx, match_id, record.ruleset.name, [s.name for s in record.seats],
                                     list(record.result.ranks), totals, deals_played, _provenance(record))
            changed = tx.execute(
                "UPDATE matches SET status = ?, reason = ?, finished_ms = ?, deals_played = ?, totals = ?, record = ?, "
                "events = ?, result = ? WHERE id = ? AND status = 'running'",
                (status, reason, _now_ms(), deals_played, json.dumps(totals), record.SerializeToString(), events,
                 record.result.SerializeToString(), match_id),
            )
            if changed != 1:
                raise RuntimeError(f"match {match_id} is not running in the store")
            if set_id:
                _rate_set_if_over(tx, set_id)

    def ladder_rows_unlike_their_matches(self, ruleset: str) -> list[str]:
        """The ladder's result rows of ``ruleset`` whose bot, rank or points differ from their
        match's stored seats and result (``heartsd replay verify`` checks that result against
        the replay), in words, and the rated matches and sets whose rows are not whole
        (Ladder.incomplete_results). Ratings rebuilt from such rows would launder an edit."""
        problems = []
        parsed: dict[str, tuple[list[str], game_pb2.MatchResult | None]] = {}
        for match_id, bot, seat, rank, points, seats, result in self.db.query(
                "SELECT r.match_id, r.bot, r.seat, r.rank, r.points, m.seats, m.result FROM results r "
                "LEFT JOIN matches m ON m.id = r.match_id WHERE r.ruleset = ? ORDER BY r.seq, r.seat", (ruleset,)):
            if match_id not in parsed:
                try:
                    parsed[match_id] = (json.loads(seats) if seats else [],
                                        game_pb2.MatchResult.FromString(result) if result is not None else None)
                except (ValueError, DecodeError):
                    parsed[match_id] = ([], None)
            names, stored = parsed[match_id]
            seat = int(seat)
            if stored is None or not 0 <= seat < len(names) or names[seat] != bot or \
                    seat >= len(stored.ranks) or int(rank) != stored.ranks[seat] or int(points) != stored.totals[seat]:
                problems.append(f"{match_id}: {bot!r} in seat {seat}, rank {rank}, {points} points: not its match's")
        return problems + self.ladder.incomplete_results(ruleset)

    def result_column(self, match_id: str) -> bytes | None:
        """The stored ``result`` column of a match (what listings and the ladder check read)."""
        rows = self.db.query("SELECT result FROM matches WHERE id = ?", (match_id,))
        return bytes(rows[0][0]) if rows and rows[0][0] is not None else None

    def ladder_results(self, match_id: str) -> list[tuple[str, int, int, int]]:
        """The ladder's result rows of a match: (bot, seat, rank, points); none if unrated."""
        return [(r[0], int(r[1]), int(r[2]), int(r[3])) for r in self.db.query(
            "SELECT bot, seat, rank, points FROM results WHERE match_id = ? ORDER BY seat", (match_id,))]

    def ended_as(self, match_id: str) -> tuple[str, str] | None:
        """(status, reason) of a match that is no longer running in the store; None while it
        runs or if it is unknown."""
        rows = self.db.query("SELECT status, reason FROM matches WHERE id = ? AND status <> 'running'", (match_id,))
        return (rows[0][0], rows[0][1]) if rows else None

    def match_state(self, match_id: str) -> tuple[str, str, int | None, int] | None:
        """(status, duplicate set id, bytes of stored spectator events or None, bytes of the
        stored record or 0) of a match, without loading either; None for an unknown match."""
        rows = self.db.query("SELECT status, set_id, length(events), coalesce(length(record), 0) FROM matches "
                             "WHERE id = ?", (match_id,))
        return (rows[0][0], rows[0][1], rows[0][2], rows[0][3]) if rows else None

    def events_window(self, match_id: str, offset: int, size: int) -> bytes:
        """``size`` bytes of a finished match's stored spectator events from byte ``offset``
        (fewer at the end): read in windows, a watcher never holds more than one."""
        rows = self.db.query("SELECT substr(events, ?, ?) FROM matches WHERE id = ?", (offset + 1, size, match_id))
        return bytes(rows[0][0]) if rows and rows[0][0] is not None else b""

    def set_running(self, set_id: str) -> bool:
        """Whether a table of duplicate set ``set_id`` is running on any daemon of the store."""
        return bool(set_id) and bool(self.db.query(
            "SELECT 1 FROM matches WHERE set_id = ? AND status = 'running' LIMIT 1", (set_id,)))

    def running_sets(self) -> set[str]:
        """The duplicate sets a table of which is running, on any daemon of the store."""
        return {r[0] for r in self.db.query(
            "SELECT DISTINCT set_id FROM matches WHERE status = 'running' AND set_id <> ''")}

    def get(self, match_id: str) -> StoredMatch | None:
        rows = self.db.query(f"SELECT {_COLUMNS} FROM matches WHERE id = ?", (match_id,))
        return _stored(rows[0]) if rows else None

    def has(self, match_id: str) -> bool:
        """Whether a match of that id was ever started here (its row, not its record)."""
        return bool(self.db.query("SELECT 1 FROM matches WHERE id = ?", (match_id,)))

    def list(self, status: str | None = None, limit: int = 100,
             before: tuple[int, str] | None = None) -> list[StoredMatch]:
        """Matches newest first (by creation time, then id); with ``before`` = (created_ms,
        id) of the last one already seen, the next ones: a page that later inserts never shift.
        Each with its ``result`` and without its record: anyone may list 1,000 at a time."""
        query, args = list_query(status, before, limit)
        return [_stored(r, listed=True) for r in self.db.query(query, args)]

    def ids(self) -> list[str]:
        return [r[0] for r in self.db.query("SELECT id FROM matches ORDER BY created_ms, id")]


_COLUMNS = ("id, created_ms, finished_ms, status, reason, ruleset, players, seats, seed, deals_played, totals, record, "
            "set_id")
_LISTED = _COLUMNS.replace("record", "result")  # the same, with the result in the record's place


def list_query(status: str | None, before: tuple[int, str] | None, limit: int) -> tuple[str, tuple[Any, ...]]:
    """The query of :meth:`Store.list` and its arguments. Its order is an index's
    (matches_listed, matches_in_order: schema 17), so a page reads only its own rows."""
    where, args = [], []
    if status:
        where.append("status = ?")
        args.append(status)
    if before is not None:  # the first term bounds the index's range (an OR alone did not)
        where.append("created_ms <= ? AND (created_ms < ? OR id < ?)")
        args += [before[0], before[0], before[1]]
    query = f"SELECT {_LISTED} FROM matches"
    if where:
        query += " WHERE " + " AND ".join(where)
    return query + " ORDER BY created_ms DESC, id DESC LIMIT ?", (*args, limit)


def _result_bytes(record: bytes) -> bytes:
    return spectator_pb2.MatchRecord.FromString(record).result.SerializeToString()


def _stored(row: tuple, listed: bool = False) -> StoredMatch:  # type: ignore[type-arg]
    """A row of _COLUMNS (its record parsed), or of _LISTED (``listed``: its result). A
    listed row that does not parse is listed as damaged, without its result: before (an
    attack pass), one edited row made every listing that held it fail."""
    try:
        return _parsed(row, listed)
    except (DecodeError, ValueError, TypeError) as exc:
        if not listed:
            raise
        log.warning("a stored match does not parse; listed as damaged", match_id=row[0], error=str(exc)[:200])
        reason = f"{DAMAGED}; `heartsd replay verify {row[0]}` says more"
        return StoredMatch(id=row[0], created_ms=row[1], finished_ms=row[2], status=row[3], reason=reason,
                           ruleset=row[5], players=row[6], seats=[], seed=0, deals_played=0, totals=[], record=None,
                           result=game_pb2.MatchResult(status=_status_value(row[3]), reason=reason))


DAMAGED = "its stored row does not parse: damaged or edited"


def _status_value(status: str) -> int:
    """A row's status as the MatchStatus it names (0 for a name that is none)."""
    name = f"MATCH_STATUS_{status.upper()}"
    return game_pb2.MatchStatus.Value(name) if name in game_pb2.MatchStatus.keys() else 0


def _parsed(row: tuple, listed: bool) -> StoredMatch:  # type: ignore[type-arg]
    record = result = None
    if row[11] is not None:
        if listed:
            result = game_pb2.MatchResult.FromString(row[11])
        else:
            record = spectator_pb2.MatchRecord.FromString(row[11])
            result = record.result if row[3] != "running" else None
    return StoredMatch(
        id=row[0],
        created_ms=row[1],
        finished_ms=row[2],
        status=row[3],
        reason=row[4],
        ruleset=row[5],
        players=row[6],
        seats=json.loads(row[7]),
        seed=int(row[8]),
        deals_played=row[9],
        totals=json.loads(row[10]),
        record=record,
        set_id=row[12],
        result=result,
    )


def _refuse_over(tx: Transaction, tournament_id: str) -> None:
    """:class:`TournamentOver` unless the tournament runs or is paused. Its row stays locked
    to the end of the transaction: a cancel's write waits for the insert that follows, and
    whoever then reads the store sees the match (or no match, if the cancel went first)."""
    rows = tx.query(f"SELECT status FROM tournaments WHERE id = ?{tx.lock_row()}", (tournament_id,))
    status = str(rows[0][0]) if rows else "gone"
    if status not in ("running", "paused"):
        raise TournamentOver(tournament_id, status)


def _refuse_dealt(tx: Transaction, fingerprints: Sequence[str]) -> None:
    for start in range(0, len(fingerprints), 500):
        chunk = fingerprints[start:start + 500]
        rows = tx.query(f"SELECT fingerprint, match_id, deal FROM dealt_shuffles WHERE fingerprint IN "
                        f"({', '.join('?' * len(chunk))}) ORDER BY match_id, deal LIMIT 1", chunk)
        if rows:
            raise ShuffleRepeated(*rows[0])


def _record_dealt(tx: Transaction, match_id: str, seats: Sequence[str], first: int, shuffles: Sequence[str],
                  strict: bool) -> None:
    """One row per seat occupant and deal. House seats only mark the shuffle as used (two
    seats may hold the same strategy), as do organisers' explicit seeds (not strict)."""
    now = _now_ms()
    for bot in dict.fromkeys(seats):
        lenient = not strict or bot.startswith("house:")
        sql = ("INSERT INTO dealt_shuffles (bot, fingerprint, match_id, deal, created_ms) VALUES (?, ?, ?, ?, ?)"
               + (" ON CONFLICT (bot, fingerprint) DO NOTHING" if lenient else ""))
        for deal, fingerprint in enumerate(shuffles, first):
            tx.execute(sql, (bot, fingerprint, match_id, deal, now))


def _rate_set_if_over(tx: Transaction, set_id: str) -> None:
    """Rate a duplicate set once none of its tables is running, if all of them finished."""
    rows = tx.query("SELECT status, record FROM matches WHERE set_id = ? ORDER BY id", (set_id,))
    if any(status == "running" for status, _ in rows):
        return
    if not all(status == "finished" for status, _ in rows):
        return  # a table aborted or was cancelled: the set is not rated, like an aborted match
    tables = []
    for _, blob in rows:
        record = spectator_pb2.MatchRecord.FromString(blob)
        tables.append((record.match_id, [s.name for s in record.seats], list(record.result.ranks),
                       list(record.result.totals), record.result.deals, _provenance(record)))
    Ladder.record_set(tx, set_id, record.ruleset.name, tables)


def _provenance(record: spectator_pb2.MatchRecord) -> list[tuple[int, int, int, int, int]]:
    """Per seat: decisions, timeouts, illegal-answer defaults, disconnect defaults, auto-played."""
    counts = [[0, 0, 0, 0, 0] for _ in record.seats]
    column = {game_pb2.PROVENANCE_TIMEOUT: 1, game_pb2.PROVENANCE_ILLEGAL: 2, game_pb2.PROVENANCE_DISCONNECT: 3,
              game_pb2.PROVENANCE_AUTO: 4}
    for d in record.decisions:
        counts[d.seat][0] += 1
        if d.provenance in column:
            counts[d.seat][column[d.provenance]] += 1
    return [tuple(c) for c in counts]  # type: ignore[misc]


def _now_ms() -> int:
    return int(time.time() * 1000)
