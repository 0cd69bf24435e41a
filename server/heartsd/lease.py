"""One live daemon per instance per store: the lease a daemon holds for its whole life.

A daemon marks aborted, at start, the matches its instance was running when it last
stopped. That is only right if no other daemon of the same instance is alive on the
same store, so before touching any match a daemon takes a lease on (store, instance):

* SQLite: an exclusive ``flock`` on a lock file beside the database
  (``heartsd.db.heartsd.lock``), held as long as the process lives; the kernel
  releases it when the process ends, however it ends.
* PostgreSQL: a row in ``leases`` naming the holder, with a heartbeat. A row whose
  heartbeat is older than ``STALE_S`` belongs to a daemon that died without releasing
  it (a crash, a lost pod) and is taken over.

A second daemon of the same instance gets :class:`LeaseHeld`, which says who holds the
lease and what to do; it has changed nothing.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import secrets
import socket
import time
from pathlib import Path
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from .db import Database, check_writable, is_postgresql, sqlite_path

S = TypeVar("S")
HEARTBEAT_S = 5.0
STALE_S = 30.0  # six missed heartbeats: the holder is gone
LOCK_SPACE = 7426328  # advisory lock keys (LOCK_SPACE, hash of the instance); db.py uses the one-key form


class LeaseHeld(Exception):
    """Another live daemon of this instance holds the store's lease."""


class Lease(Protocol):
    def heartbeat(self) -> bool:
        """Renew the lease; False if it was lost (taken over after this daemon stalled)."""

    def release(self) -> None: ...


def holder_id() -> str:
    """Who holds a lease: host, process, and a random part (pids are reused)."""
    return f"{socket.gethostname()} pid {os.getpid()} ({secrets.token_hex(4)})"


def lock_path(db_path: str, instance: str) -> Path:
    """The lock file of ``instance`` beside the SQLite database at ``db_path``, named after
    its real path: a store reached through a symlink (of the file or a directory) or a
    relative path has the same lock. Named after the path as given, a daemon on
    link.db -> real.db ran beside one on real.db, marked its live matches aborted, and a
    result that one then finished was lost (an attack pass)."""
    safe = instance if re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", instance) else hashlib.sha256(
        instance.encode()).hexdigest()[:16]
    return Path(f"{os.path.realpath(db_path)}.{safe}.lock")


class FileLease:
    """An exclusive flock on the instance's lock file (SQLite)."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    @classmethod
    def acquire(cls, db_path: str, instance: str) -> FileLease:
        path = lock_path(db_path, instance)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            with contextlib.suppress(OSError):
                holder = os.pread(fd, 200, 0).decode(errors="replace").strip()
            os.close(fd)
            raise LeaseHeld(
                f"another heartsd (instance {instance!r}: {holder or 'unknown process'}) is running on the store "
                f"{db_path}; stop it first, or give this one its own --db (HEARTSD_DB_PATH) or --instance "
                "(HEARTSD_INSTANCE)") from None
        except BaseException:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, (holder_id() + "\n").encode(), 0)
        return cls(path, fd)

    def heartbeat(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, 0)
            os.close(self._fd)  # closing releases the flock
            self._fd = None


class RowLease:
    """A row in ``leases`` with a heartbeat (PostgreSQL, shared by several daemons), and a
    session advisory lock on a connection of its own: PostgreSQL drops that lock the
    moment the holder's connection ends, so a daemon that was killed is replaced at once
    instead of after ``STALE_S``. A holder whose connection lives on but whose heartbeat
    stopped (a frozen host) is taken over once its row is stale."""

    def __init__(self, db: Database, instance: str, holder: str, session: Any) -> None:
        self.db = db
        self.instance = instance
        self.holder = holder
        self._session = session  # holds the advisory lock; None after release

    @classmethod
    def acquire(cls, db: Database, instance: str, stale_s: float = STALE_S) -> RowLease:
        import psycopg

        holder = holder_id()
        session = psycopg.connect(db.url, autocommit=True)
        try:
            key = int.from_bytes(hashlib.sha256(instance.encode()).digest()[:4], "big", signed=True)
            alone = bool(session.execute("SELECT pg_try_advisory_lock(%s, %s)", (LOCK_SPACE, key)).fetchone()[0])
            now = _now_ms()
            with db.transaction() as tx:
                tx.lock()
                rows = tx.query("SELECT holder, heartbeat_ms FROM leases WHERE instance = ?", (instance,))
                if rows and not alone and now - rows[0][1] < stale_s * 1000:
                    age = (now - rows[0][1]) / 1000
                    raise LeaseHeld(
                        f"another heartsd (instance {instance!r}: {rows[0][0]}, heartbeat {age:.0f} s ago) is "
                        f"running on this store; stop it first, or give this one its own --instance "
                        f"(HEARTSD_INSTANCE). A lease is taken over when its holder's connection ends or its "
                        f"heartbeat is older than {stale_s:.0f} s")
                tx.execute("DELETE FROM leases WHERE instance = ?", (instance,))
                tx.execute("INSERT INTO leases (instance, holder, heartbeat_ms) VALUES (?, ?, ?)",
                           (instance, holder, now))
        except BaseException:
            session.close()
            raise
        return cls(db, instance, holder, session)

    def heartbeat(self) -> bool:
        with self.db.transaction() as tx:
            return tx.execute("UPDATE leases SET heartbeat_ms = ? WHERE instance = ? AND holder = ?",
                              (_now_ms(), self.instance, self.holder)) == 1

    def release(self) -> None:
        with contextlib.suppress(Exception), self.db.transaction() as tx:
            tx.execute("DELETE FROM leases WHERE instance = ? AND holder = ?", (self.instance, self.holder))
        if self._session is not None:
            with contextlib.suppress(Exception):
                self._session.close()
            self._session = None


def open_leased(url: str, instance: str, open_store: Callable[[], S]) -> tuple[S, Lease | None]:
    """Take the lease of (store ``url``, ``instance``) and open the store with ``open_store``.

    On SQLite the lock is taken first, so a second daemon does not even open the
    database; on PostgreSQL the ``leases`` table comes with the schema, so the lease is
    taken right after the store is opened (and migrated), before anything else."""
    if is_postgresql(url):
        store = open_store()
        try:
            return store, RowLease.acquire(store.db, instance)  # type: ignore[attr-defined]
        except BaseException:
            store.close()  # type: ignore[attr-defined]
            raise
    path = sqlite_path(url)
    check_writable(path)  # a read-only store is refused with that reason, not a lock file error
    lease = None if path == ":memory:" else FileLease.acquire(path, instance)
    try:
        return open_store(), lease
    except BaseException:
        if lease is not None:
            lease.release()
        raise


def _now_ms() -> int:
    return int(time.time() * 1000)
