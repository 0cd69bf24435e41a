"""One small database layer for SQLite (embedded default) and PostgreSQL (scale-out).

The daemon's SQL is written once with ``?`` placeholders and a few type words
(``{blob}``, ``{bigint}``) that each dialect fills in, so the same store code runs on
both. Schema changes are numbered migrations applied in order at start-up, inside a
transaction, and recorded in ``schema_version``.

>>> db = Database.open(":memory:")
>>> db.migrate([(1, ["CREATE TABLE t (id {bigint} PRIMARY KEY, data {blob})"])])
1
>>> with db.transaction() as tx:
...     _ = tx.execute("INSERT INTO t VALUES (?, ?)", (1, b"x"))
>>> db.query("SELECT data FROM t WHERE id = ?", (1,))
[(b'x',)]
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import structlog

log = structlog.get_logger("heartsd.db")

TYPES = {
    "sqlite": {"blob": "BLOB", "bigint": "INTEGER", "text": "TEXT", "real": "REAL"},
    "postgresql": {"blob": "BYTEA", "bigint": "BIGINT", "text": "TEXT", "real": "DOUBLE PRECISION"},
}

Migration = tuple[int, Sequence[str]]


class Transaction:
    def __init__(self, db: Database, cursor: Any) -> None:
        self._db = db
        self._cursor = cursor

    def execute(self, sql: str, args: Sequence[Any] = ()) -> int:
        """Run one statement; the number of rows it changed."""
        self._cursor.execute(self._db.sql(sql), tuple(args))
        return int(self._cursor.rowcount)

    def query(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        self._cursor.execute(self._db.sql(sql), tuple(args))
        return [_plain(row) for row in self._cursor.fetchall()]

    def lock(self) -> None:
        """Serialize this transaction with every other one that locks (PostgreSQL: an
        advisory lock until commit; SQLite's BEGIN IMMEDIATE already serializes writers)."""
        if self._db.dialect == "postgresql":
            self._cursor.execute("SELECT pg_advisory_xact_lock(7426327)")


class Database:
    """A single connection shared under a lock (the daemon calls it from worker threads)."""

    def __init__(self, dialect: str, connection: Any, url: str) -> None:
        self.dialect = dialect
        self.url = url
        self._connection = connection
        self._lock = threading.Lock()

    @classmethod
    def open(cls, url: str) -> Database:
        """``postgresql://...`` for PostgreSQL; anything else is a SQLite path (or ``:memory:``)."""
        if url.startswith(("postgresql://", "postgres://")):
            import psycopg

            connection = psycopg.connect(url, autocommit=True)
            return cls("postgresql", connection, url)
        path = url.removeprefix("sqlite:///")
        connection = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=10)
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA foreign_keys=ON")
        connection.execute("PRAGMA busy_timeout=10000")
        return cls("sqlite", connection, path)

    def sql(self, statement: str) -> str:
        """Fill the type words; on PostgreSQL turn ``?`` into ``%s`` (escaping literal ``%``).
        Our statements never hold a literal ``?`` or brace: values always go in as parameters."""
        statement = statement.format(**TYPES[self.dialect])
        if self.dialect == "postgresql":
            return statement.replace("%", "%%").replace("?", "%s")
        return statement

    def _connected(self) -> Any:
        """The connection, re-opened first if PostgreSQL dropped it (a server restart, a
        failover, an idle timeout): the operation that met the drop fails, the next works."""
        if self.dialect == "postgresql" and (self._connection.closed or self._connection.broken):
            import psycopg

            log.warning("database connection lost; reconnecting")
            with contextlib.suppress(Exception):
                self._connection.close()
            self._connection = psycopg.connect(self.url, autocommit=True)
        return self._connection

    @contextmanager
    def transaction(self) -> Iterator[Transaction]:
        """A write transaction (``BEGIN IMMEDIATE`` on SQLite, so writers queue up front)."""
        with self._lock:
            self._connected()
            if self.dialect == "sqlite":
                cursor = self._connection.cursor()
                cursor.execute("BEGIN IMMEDIATE")
                try:
                    yield Transaction(self, cursor)
                except BaseException:
                    cursor.execute("ROLLBACK")
                    raise
                cursor.execute("COMMIT")
            else:
                with self._connection.transaction(), self._connection.cursor() as cursor:
                    yield Transaction(self, cursor)

    def query(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """A read outside any transaction; retried once on a fresh connection if the
        connection turns out to be dropped (a read is safe to repeat)."""
        with self._lock:
            for attempt in (1, 2):
                cursor = self._connected().cursor()
                try:
                    cursor.execute(self.sql(sql), tuple(args))
                    return [_plain(row) for row in cursor.fetchall()]
                except Exception:
                    if attempt == 2 or self.dialect != "postgresql" or not self._connection.broken:
                        raise
                finally:
                    with contextlib.suppress(Exception):
                        cursor.close()
            raise AssertionError("unreachable")

    def migrate(self, migrations: Sequence[Migration]) -> int:
        """Apply every migration newer than the database; return the schema version."""
        with self.transaction() as tx:
            tx.lock()  # several daemons starting at once on one PostgreSQL database
            tx.execute("CREATE TABLE IF NOT EXISTS schema_version (version {bigint} NOT NULL)")
            rows = tx.query("SELECT version FROM schema_version")
            current = rows[0][0] if rows else 0
            if not rows:
                tx.execute("INSERT INTO schema_version VALUES (0)")
            newest = max((v for v, _ in migrations), default=0)
            if current > newest:
                raise RuntimeError(f"{self.url}: schema version {current} is newer than this heartsd ({newest})")
            for version, statements in sorted(migrations):
                if version > current:
                    for statement in statements:
                        tx.execute(statement)
                    tx.execute("UPDATE schema_version SET version = ?", (version,))
                    current = version
        return current

    def close(self) -> None:
        with self._lock:
            self._connection.close()


def _plain(row: Sequence[Any]) -> tuple[Any, ...]:
    return tuple(bytes(v) if isinstance(v, memoryview) else v for v in row)
