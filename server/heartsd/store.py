"""The match store: SQLite, one row per match, written before any result is announced.

A match is inserted as ``running`` when it starts; its record and result replace the
row in one transaction when it ends. At start-up every row still ``running`` (the
daemon died with it) becomes ``aborted``, so a crash never loses a match silently or
lets it count as a result.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from hearts.v1 import game_pb2, spectator_pb2

SCHEMA_VERSION = 1
_SCHEMA = """
CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS matches (
    id TEXT PRIMARY KEY,
    created_ms INTEGER NOT NULL,
    finished_ms INTEGER,
    status TEXT NOT NULL CHECK (status IN ('running', 'finished', 'aborted', 'cancelled')),
    reason TEXT NOT NULL DEFAULT '',
    ruleset TEXT NOT NULL,
    players INTEGER NOT NULL,
    seats TEXT NOT NULL,
    seed TEXT NOT NULL,
    deals_played INTEGER NOT NULL DEFAULT 0,
    totals TEXT NOT NULL DEFAULT '[]',
    record BLOB
);
CREATE INDEX IF NOT EXISTS matches_by_time ON matches (created_ms DESC);
"""


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
    record: spectator_pb2.MatchRecord | None


class Store:
    """Thread-safe; call from ``asyncio.to_thread`` in the daemon."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=10)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA foreign_keys=ON")
        self._db.execute("PRAGMA busy_timeout=10000")
        with self._tx():
            for statement in filter(str.strip, _SCHEMA.split(";")):
                self._db.execute(statement)
            row = self._db.execute("SELECT version FROM schema_version").fetchone()
            if row is None:
                self._db.execute("INSERT INTO schema_version VALUES (?)", (SCHEMA_VERSION,))
            elif row[0] != SCHEMA_VERSION:
                raise RuntimeError(f"{path}: schema version {row[0]}, this heartsd expects {SCHEMA_VERSION}")

    @contextmanager
    def _tx(self) -> Iterator[None]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def abort_interrupted(self, reason: str = "server stopped while the match was running") -> list[str]:
        """Mark every ``running`` match ``aborted`` (keeping its last checkpoint); return their ids."""
        with self._tx():
            rows = self._db.execute("SELECT id, record FROM matches WHERE status = 'running'").fetchall()
            for match_id, blob in rows:
                record = None
                if blob is not None:
                    parsed = spectator_pb2.MatchRecord.FromString(blob)
                    parsed.result.status = game_pb2.MATCH_STATUS_ABORTED
                    parsed.result.reason = reason
                    record = parsed.SerializeToString()
                self._db.execute(
                    "UPDATE matches SET status = 'aborted', reason = ?, finished_ms = ?, record = ? WHERE id = ?",
                    (reason, _now_ms(), record, match_id),
                )
        return [r[0] for r in rows]

    def checkpoint(self, match_id: str, record: spectator_pb2.MatchRecord, deals_played: int, totals: list[int]) -> None:
        """Save a running match's record so far (after each deal), so a crash keeps it."""
        with self._tx():
            self._db.execute(
                "UPDATE matches SET record = ?, deals_played = ?, totals = ? WHERE id = ? AND status = 'running'",
                (record.SerializeToString(), deals_played, json.dumps(totals), match_id),
            )

    def insert_running(self, match_id: str, ruleset: str, players: int, seats: list[str], seed: int) -> None:
        with self._tx():
            self._db.execute(
                "INSERT INTO matches (id, created_ms, status, ruleset, players, seats, seed) "
                "VALUES (?, ?, 'running', ?, ?, ?, ?)",
                (match_id, _now_ms(), ruleset, players, json.dumps(seats), str(seed)),
            )

    def finish(
        self,
        match_id: str,
        status: str,
        reason: str,
        record: spectator_pb2.MatchRecord,
        deals_played: int,
        totals: list[int],
    ) -> None:
        """Store the final record and status in one transaction."""
        with self._tx():
            cursor = self._db.execute(
                "UPDATE matches SET status = ?, reason = ?, finished_ms = ?, deals_played = ?, totals = ?, record = ? "
                "WHERE id = ? AND status = 'running'",
                (status, reason, _now_ms(), deals_played, json.dumps(totals), record.SerializeToString(), match_id),
            )
            if cursor.rowcount != 1:
                raise RuntimeError(f"match {match_id} is not running in the store")

    def get(self, match_id: str) -> StoredMatch | None:
        with self._lock:
            row = self._db.execute(f"SELECT {_COLUMNS} FROM matches WHERE id = ?", (match_id,)).fetchone()
        return _stored(row) if row else None

    def list(self, status: str | None = None, limit: int = 100) -> list[StoredMatch]:
        query = f"SELECT {_COLUMNS} FROM matches"
        args: tuple[object, ...] = ()
        if status:
            query += " WHERE status = ?"
            args = (status,)
        query += " ORDER BY created_ms DESC, id LIMIT ?"
        with self._lock:
            rows = self._db.execute(query, (*args, limit)).fetchall()
        return [_stored(r) for r in rows]

    def ids(self) -> list[str]:
        with self._lock:
            return [r[0] for r in self._db.execute("SELECT id FROM matches ORDER BY created_ms, id")]


_COLUMNS = "id, created_ms, finished_ms, status, reason, ruleset, players, seats, seed, deals_played, totals, record"


def _stored(row: tuple) -> StoredMatch:  # type: ignore[type-arg]
    record = None
    if row[11] is not None:
        record = spectator_pb2.MatchRecord.FromString(row[11])
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
    )


def _now_ms() -> int:
    return int(time.time() * 1000)
