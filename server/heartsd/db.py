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
import os
import re
import sqlite3
import threading
import urllib.parse
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import structlog
from google.protobuf.message import DecodeError

log = structlog.get_logger("heartsd.db")

TYPES = {
    "sqlite": {"blob": "BLOB", "bigint": "INTEGER", "text": "TEXT", "real": "REAL"},
    "postgresql": {"blob": "BYTEA", "bigint": "BIGINT", "text": "TEXT", "real": "DOUBLE PRECISION"},
}

Migration = tuple[int, Sequence[str]]


def damaged(exc: BaseException) -> str | None:
    """What to tell the operator if ``exc`` says the store's file is corrupt ("database
    disk image is malformed"), else None. Only SQLite's DatabaseError itself: its
    subclasses (locked, I/O, constraint) are not corruption; and a stored protobuf that does
    not parse (one damaged or edited row). Before, a damaged store was
    INTERNAL "internal error" to every caller and a traceback in the commands (an
    operator's attack pass)."""
    if type(exc) is sqlite3.DatabaseError:
        return (f"the store is damaged ({exc}): stop heartsd and restore the store from a copy "
                "(`sqlite3 FILE 'PRAGMA integrity_check'` lists what is damaged)")
    if isinstance(exc, DecodeError):  # one row's stored record or result, edited or damaged
        return (f"a match's stored record does not parse ({exc}): that row of the store is damaged or was edited; "
                "`heartsd replay verify` names it")
    return None


class StoreError(Exception):
    """The store cannot be used as asked. The message names the store and the setting
    (``db_path``: ``--db``, ``HEARTSD_DB_PATH``) and says what to do; commands print it
    and exit 2."""


SETTING = "--db / HEARTSD_DB_PATH"
# Every PostgreSQL connection: a server that cannot be reached fails a connect within
# 10 s, and a write it never acknowledges within 30 s, instead of the kernel's ~15 minutes
# (a daemon cut off from its store must be able to stop: server._keep_lease).
PG_CONNECT = {"connect_timeout": 10, "keepalives": 1, "keepalives_idle": 10, "keepalives_interval": 5,
              "keepalives_count": 3, "tcp_user_timeout": 30_000}


def unreadable(path: str, exc: sqlite3.Error) -> str:
    """Why the SQLite file ``path`` cannot be opened, and what to do. A file SQLite finds
    damaged where it starts reading (one cut short: a disk that filled while it was copied,
    a partial download of a backup) was "cannot read the store ...: database disk image is
    malformed" from every command (an operator's pass), and a file that is no database at
    all "file is not a database": neither said what to do.

    >>> unreadable("h.db", sqlite3.DatabaseError("file is not a database"))
    'h.db is not a SQLite database (file is not a database; --db / HEARTSD_DB_PATH): point the setting at a heartsd store; if this was one, it is damaged: restore it from a copy'
    """
    if "malformed" in str(exc):
        return (f"the store {path} is damaged ({exc}; {SETTING}): restore it from a copy (README, \"Backups\": "
                "with heartsd stopped and this file's -wal and -shm moved away), or point the setting at another store")
    if "not a database" in str(exc):
        return (f"{path} is not a SQLite database ({exc}; {SETTING}): point the setting at a heartsd store; if this "
                "was one, it is damaged: restore it from a copy")
    return f"cannot read the store {path} ({SETTING}): {exc}"


def for_local_db(exc: StoreError) -> ValueError:
    """A refusal of the store given to a command that embeds a daemon (``heartsbot local``,
    ``heartsd tournament local``) as the usage error it is (exit 2), naming their one
    setting, ``--db``: the daemon's own message names the environment variable too, which
    those commands do not read. Before (an operator's pass), a wrong ``--db`` there was a
    traceback and exit 1, the code of a failed bot.

    >>> for_local_db(StoreError("x.db is not a heartsd store (no schema_version table; --db / HEARTSD_DB_PATH)"))
    ValueError('x.db is not a heartsd store (no schema_version table; --db)')
    """
    return ValueError(str(exc).replace(SETTING, "--db"))


def redacted(url: str) -> str:
    """``url`` without a password, for messages and logs: the ``user:password@`` form's and a
    ``password=`` query parameter's (libpq takes both; the second was printed in full).

    >>> redacted("postgresql://arena:s3cret@db/hearts?sslmode=require&password=s3cret")
    'postgresql://arena:***@db/hearts?sslmode=require&password=***'
    """
    url = re.sub(r"^(postgres(?:ql)?://[^:/@]+):[^@]*@", r"\1:***@", url)
    return re.sub(r"([?&]password=)[^&#]*", r"\1***", url, flags=re.IGNORECASE)


def is_postgresql(url: str) -> bool:
    return url.startswith(("postgresql://", "postgres://"))


def sqlite_path(url: str) -> str:
    return url.removeprefix("sqlite:///")


def new_sqlite_file(url: str) -> str | None:
    """The absolute path of the SQLite file that opening ``url`` would create, or None
    when there is one already (or ``url`` is PostgreSQL or ``:memory:``): a daemon
    pointed at a misspelt path says it made a new, empty store (``heartsd serve``).

    >>> new_sqlite_file("postgresql://db/arena") is None, new_sqlite_file(":memory:") is None
    (True, True)
    """
    if is_postgresql(url):
        return None
    path = sqlite_path(url)
    if path == ":memory:" or os.path.exists(path):
        return None
    return os.path.abspath(path)


def check_not_orphaned(path: str) -> None:
    """Refuse to make a new store where only a write-ahead log is left: the store was moved
    or deleted while a daemon ran, and the log holds its latest writes. Before (an attack
    pass), a new, empty store was made there and SQLite deleted the log: 22 results gone."""
    if path != ":memory:" and not os.path.exists(path) and os.path.exists(f"{path}-wal"):
        raise StoreError(f"no store at {os.path.abspath(path)}, but its write-ahead log {path}-wal is there: "
                         "the store was moved or deleted while heartsd ran, and the log holds its latest "
                         "writes. Put the database file back beside it, or move the -wal and -shm files "
                         f"away to start a new store ({SETTING})")


def check_not_foreign(path: str) -> None:
    """Refuse, reading only, an existing SQLite file that is another application's
    (:func:`_foreign_tables`): checked before the lease makes its lock file beside it (an
    attack pass: a refused file was left with an ``X.heartsd.lock`` next to it)."""
    if path == ":memory:" or not os.path.isfile(path):
        return
    try:
        connection = _open_sqlite_read_only(path)
    except sqlite3.Error:
        return  # said when the store is opened, as before
    try:
        _refuse_foreign(connection, path)
    finally:
        connection.close()


def check_writable(path: str) -> None:
    """Raise :class:`StoreError` unless a daemon can write the SQLite store at ``path``
    (the file, if it exists, and its folder, where SQLite keeps the -wal and -shm files).
    ``access()`` answers for this process' real powers (root without CAP_DAC_OVERRIDE, a
    read-only mount). The file itself is never opened here: closing any descriptor of a
    database drops every POSIX lock this process' SQLite connections hold on it."""
    if path == ":memory:":
        return
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise StoreError(f"the store's folder {folder} does not exist ({SETTING}): create it, or point the "
                         "setting at an existing folder")
    if os.path.exists(path) and not os.access(path, os.R_OK | os.W_OK):
        problem = "the file is not writable"
    elif not os.access(folder, os.W_OK | os.X_OK):
        problem = f"its folder {folder} is not writable"
    else:
        return
    raise StoreError(f"the store {path} is read-only ({problem}); heartsd serve and the ladder commands "
                     f"write to it: make it writable, or point {SETTING} at a writable copy")


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

    def lock_row(self) -> str:
        """The clause that ends a SELECT of one row to keep the rows it reads locked until
        commit, so another transaction's write of them waits for this one (PostgreSQL's
        ``FOR UPDATE``; SQLite's BEGIN IMMEDIATE already serializes writers: none)."""
        return " FOR UPDATE" if self._db.dialect == "postgresql" else ""

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
    def open(cls, url: str, create: bool = True, read_only: bool = False) -> Database:
        """``postgresql://...`` for PostgreSQL; anything else is a SQLite path (or ``:memory:``).

        ``create=False``: a missing SQLite file is a :class:`StoreError` instead of a new
        empty store (a typo in a path must not make one). ``read_only``: nothing is ever
        written (SQLite ``mode=ro``), so a store on read-only media can still be read."""
        if is_postgresql(url):
            import psycopg

            try:
                connection = psycopg.connect(url, autocommit=True, **PG_CONNECT)
            except psycopg.Error as exc:
                first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                raise StoreError(f"cannot open the store {redacted(url)} ({SETTING}): {first}") from None
            if read_only:
                connection.read_only = True
            return cls("postgresql", connection, url)
        from .config import EMPTY_STORE_PATH, KEYWORD_DSN, KEYWORD_DSN_REFUSED

        if KEYWORD_DSN.match(url):  # not repeated: it may hold a password
            raise StoreError(f"the store ({SETTING}) {KEYWORD_DSN_REFUSED}")
        path = sqlite_path(url)
        if not path.strip():  # before (HEARTSD_DB_PATH=$UNSET): "no store at /the/working/folder"
            raise StoreError(f"the store's path ({SETTING}) is {EMPTY_STORE_PATH}")
        if path != ":memory:" and not os.path.isfile(path):
            if os.path.exists(path):
                raise StoreError(f"the store {path} is not a file ({SETTING})")
            check_not_orphaned(path)
            if not create:
                raise StoreError(f"no store at {os.path.abspath(path)} ({SETTING}): check the path and the working "
                                 "folder; `heartsd serve` creates a store, as does `heartsd ladder add-bot --create`")
        if read_only:
            connection = _open_sqlite_read_only(path)
            _refuse_foreign(connection, path)
            return cls("sqlite", connection, path)
        check_writable(path)
        connection = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=10)
        _refuse_foreign(connection, path)  # before journal_mode=WAL changes the file's header
        try:
            connection.execute("PRAGMA journal_mode=WAL")
        except sqlite3.DatabaseError as exc:
            connection.close()
            raise StoreError(unreadable(path, exc)) from None
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
            self._connection = psycopg.connect(self.url, autocommit=True, **PG_CONNECT)
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
                    # SQLite may have rolled back by itself (a full disk: SQLITE_FULL); the
                    # error to report is the first, not "no transaction is active".
                    with contextlib.suppress(sqlite3.OperationalError):
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

    def schema_version(self, newest: int) -> int:
        """The store's schema version, checked without changing anything: a
        :class:`StoreError` if it is not a heartsd store or is newer than ``newest``."""
        try:
            rows = self.query("SELECT version FROM schema_version")
        except Exception:
            raise StoreError(f"{redacted(self.url)} is not a heartsd store (no schema_version table; {SETTING})") from None
        current = _version(self.url, rows)
        if current > newest:
            raise StoreError(_newer(self.url, current, newest))
        return current

    def migrate(self, migrations: Sequence[Migration]) -> int:
        """Apply every migration newer than the database; return the schema version."""
        with self.transaction() as tx:
            tx.lock()  # several daemons starting at once on one PostgreSQL database
            if self._has_table(tx, "schema_version"):
                current = _version(self.url, tx.query("SELECT version FROM schema_version"))
            else:
                tx.execute("CREATE TABLE schema_version (version {bigint} NOT NULL)")
                tx.execute("INSERT INTO schema_version VALUES (0)")
                current = 0
            newest = max((v for v, _ in migrations), default=0)
            if current > newest:
                raise StoreError(_newer(self.url, current, newest))
            for version, statements in sorted(migrations):
                if version > current:
                    for statement in statements:
                        tx.execute(statement)
                    tx.execute("UPDATE schema_version SET version = ?", (version,))
                    current = version
        return current

    def _has_table(self, tx: Transaction, name: str) -> bool:
        if self.dialect == "sqlite":
            return bool(tx.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)))
        # As the unqualified name resolves in the statements that follow (the search path).
        return bool(tx.query("SELECT to_regclass(?) IS NOT NULL", (name,))[0][0])

    def damage(self, limit: int = 10) -> list[str]:
        """What SQLite's ``PRAGMA quick_check`` finds wrong with the file (at most ``limit``
        lines; none when sound, and none on PostgreSQL, whose server keeps its own). A
        backup restored beside the old file's ``-wal`` has SQLite replay that log onto it:
        pages damaged, yet every row a record verifies from may still read."""
        if self.dialect != "sqlite":
            return []
        try:
            rows = self.query(f"PRAGMA quick_check({int(limit)})")
        except Exception as exc:  # damaged beyond checking
            return [str(exc)]
        return [] if [tuple(r) for r in rows] == [("ok",)] else [str(r[0]) for r in rows]

    def close(self) -> None:
        with self._lock:
            self._connection.close()


HEARTSD_MATCH_COLUMNS = frozenset({"id", "created_ms", "status", "reason", "ruleset", "players", "seats", "seed",
                                   "deals_played", "totals", "record"})  # schema.py's migration 1


def _foreign_tables(connection: sqlite3.Connection) -> list[str]:
    """A few tables of a SQLite file that holds tables but not heartsd's: another
    application's database (a wrong ``--db``; one with a schema_version table of its own
    too), refused untouched, where heartsd once added
    its tables to it and served from it. Nothing for a new file or a heartsd store. (A
    PostgreSQL database may hold other applications' tables beside heartsd's; it is a
    server's, named on purpose.)"""
    tables = [name for (name,) in connection.execute(
        "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite%' ORDER BY name")]
    if not tables:
        return []
    # A heartsd store has both, its first migration's matches table with them (made in one
    # transaction with the version row); "schema_version" and "matches" alone are common
    # names for another application's tables.
    if "schema_version" in tables and "matches" in tables:
        columns = {row[1] for row in connection.execute("PRAGMA table_info(matches)")}
        if HEARTSD_MATCH_COLUMNS <= columns:
            return []
    return tables[:4]


def _refuse_foreign(connection: sqlite3.Connection, path: str) -> None:
    """Close ``connection`` and raise :class:`StoreError` if the file is another
    application's (:func:`_foreign_tables`). A file that is no database at all passes: the
    next read says so, as before."""
    try:
        foreign = _foreign_tables(connection)
    except sqlite3.DatabaseError:
        return
    if foreign:
        connection.close()
        raise StoreError(f"{path} is not a heartsd store: it holds another application's tables "
                         f"({', '.join(foreign)}), not heartsd's; point {SETTING} at a heartsd store or a new file")


def refuse_not_heartsd(connection: sqlite3.Connection, path: str) -> None:
    """Raise :class:`StoreError` unless the SQLite file open on ``connection`` is a heartsd
    store (a ``schema_version`` table, and no other application's tables): for a command
    that only copies a store (``heartsd store backup``) and so never migrates or reads its
    version, where another application's file, or an empty one, was copied and announced as
    a sound backup of "0 matches" (an operator's pass)."""
    _refuse_foreign(connection, path)
    found = connection.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'")
    if found.fetchone() is None:
        raise StoreError(f"{path} is not a heartsd store (no schema_version table; {SETTING})")


def _version(url: str, rows: Sequence[tuple[Any, ...]]) -> int:
    """The schema version its one row holds; a :class:`StoreError` when the row is not
    one whole number >= 0 (edited or damaged: a traceback before, or taken for a new store)."""
    if len(rows) == 1 and type(rows[0][0]) is int and rows[0][0] >= 0:
        return int(rows[0][0])
    found = "no row" if not rows else f"{len(rows)} rows" if len(rows) > 1 else f"{rows[0][0]!r}"
    raise StoreError(f"the store {redacted(url)} is damaged: its schema_version table holds {found}, not one "
                     f"version number; restore the store from a copy, or point {SETTING} at another store")


def _newer(url: str, current: int, newest: int) -> str:
    return (f"the store {redacted(url)} has schema version {current}, newer than this heartsd knows ({newest}): "
            f"a newer heartsd wrote it. Upgrade heartsd, or point {SETTING} at another store")


def _open_sqlite_read_only(path: str) -> sqlite3.Connection:
    """A read-only connection. ``mode=ro`` reads a live daemon's WAL store; a store on
    read-only media whose -shm file cannot be made is opened ``immutable`` instead."""
    uri = "file:" + urllib.parse.quote(os.path.abspath(path))
    for suffix in ("?mode=ro", "?mode=ro&immutable=1"):
        connection = sqlite3.connect(uri + suffix, uri=True, check_same_thread=False, isolation_level=None, timeout=10)
        try:
            connection.execute("PRAGMA busy_timeout=10000")
            connection.execute("SELECT COUNT(*) FROM sqlite_master").fetchall()
            return connection
        except sqlite3.DatabaseError as exc:
            connection.close()
            error = exc
    raise StoreError(unreadable(path, error))


def _plain(row: Sequence[Any]) -> tuple[Any, ...]:
    return tuple(bytes(v) if isinstance(v, memoryview) else v for v in row)
