"""One live daemon per instance per store: the lease a daemon holds for its whole life.

A daemon marks aborted, at start, the matches its instance was running when it last
stopped. That is only right if no other daemon of the same instance is alive on the
same store, so before touching any match a daemon takes a lease on (store, instance):

* SQLite: an exclusive ``flock`` on a lock file beside the database
  (``heartsd.db.heartsd.lock``, which names the holder), and a write lock on one byte of
  the database file itself, at an offset of the instance's far beyond SQLite's own locks
  (an open-file-description lock, Linux): every name of the file shares it, a hard link
  or a renamed path included, and deleting the lock file does not lift it. Both are held
  as long as the process lives; the kernel releases them when it ends, however it ends.
* PostgreSQL: a row in ``leases`` naming the holder, with a heartbeat. A row whose
  heartbeat is older than ``STALE_S`` belongs to a daemon that died without releasing
  it (a crash, a lost pod) and is taken over.

A second daemon of the same instance gets :class:`LeaseHeld`, which says who holds the
lease and what to do; it has changed nothing.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import glob
import hashlib
import os
import re
import secrets
import socket
import struct
import sys
import time
from pathlib import Path
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

import structlog

from .db import PG_CONNECT, Database, check_not_foreign, check_not_orphaned, check_writable, is_postgresql, sqlite_path

S = TypeVar("S")
log = structlog.get_logger("heartsd.lease")
HEARTBEAT_S = 5.0
STALE_S = 30.0  # six missed heartbeats: the holder is gone
# A holder that has not renewed its lease for this long stops its matches (server._keep_lease):
# before STALE_S, when another daemon may take the lease over, with room for a clock skew.
FENCE_S = STALE_S - 2 * HEARTBEAT_S
LOCK_AGAIN_TRIES = 40  # ~2 s of tries (RowLease._lock_again)
LOCK_SPACE = 7426328  # advisory lock keys (LOCK_SPACE, hash of the instance); db.py uses the one-key form


class LeaseHeld(Exception):
    """Another live daemon of this instance holds the store's lease."""


class Lease(Protocol):
    # Released after the store is closed: closing a descriptor of the database file drops
    # every POSIX lock this process holds on it, SQLite's own included.
    outlives_store: bool
    lost_reason: str  # why heartbeat() said False
    # Whether another daemon takes the lease over once its heartbeat is STALE_S old (a row
    # on PostgreSQL): then a holder that cannot renew it must stop first (server._keep_lease).
    # A SQLite lock is the kernel's, held as long as the process lives: never taken over.
    taken_over_when_stale: bool

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


# The byte of the database file a lease locks: past 1 TiB, where SQLite (its locks sit at
# 1 GiB) never locks, one per instance (a hash of its name), so instances share the store.
DB_LOCK_BASE = 1 << 40
FLOCK = "@hhqqi4x"  # Linux's struct flock, packed: type, whence, start, length, pid (0 for these locks)


def _lock_database_file(db_path: str, instance: str) -> int | None:
    """An open-file-description write lock on the instance's byte of the database file
    itself; its descriptor (closing it releases the lock), or None where the system or the
    file system has no such locks (Linux's struct flock is packed here; elsewhere, on a
    file system without them, or with a directory at the path, which the store then
    refuses by name: the lock file alone). Raises BlockingIOError if held."""
    if not sys.platform.startswith("linux") or not hasattr(fcntl, "F_OFD_SETLK") or os.path.isdir(db_path):
        return None
    fd = os.open(db_path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        _set_byte_lock(fd, instance, fcntl.F_WRLCK)
    except OSError as exc:
        os.close(fd)
        if exc.errno in (errno.EAGAIN, errno.EACCES):
            raise BlockingIOError(exc.errno, "held") from None
        if exc.errno in (errno.EINVAL, errno.ENOLCK, errno.EOPNOTSUPP):
            log.warning("the store's file system takes no lock on the database file itself; the lock file alone "
                        "keeps a second daemon of this instance out (not one reaching the store by another name)",
                        store=db_path, error=exc.strerror)
            return None
        raise
    return fd


def _set_byte_lock(fd: int, instance: str, kind: int) -> None:
    """Lock (F_WRLCK) or unlock (F_UNLCK) the instance's byte of the database file open as
    ``fd``: an open-file-description lock, so it belongs to that descriptor, not the process."""
    start = DB_LOCK_BASE + int.from_bytes(hashlib.sha256(instance.encode()).digest()[:4], "big")
    fcntl.fcntl(fd, fcntl.F_OFD_SETLK, struct.pack(FLOCK, kind, os.SEEK_SET, start, 1, 0))


class FileLease:
    """An exclusive flock on the instance's lock file, and a lock on the instance's byte
    of the database file (SQLite)."""

    outlives_store = True
    lost_reason = "the store's lease was released"
    taken_over_when_stale = False

    def __init__(self, path: Path, fd: int, db_fd: int | None = None, db_path: str | None = None) -> None:
        self.path = path
        self._fd: int | None = fd
        self._db_fd = db_fd
        self.db_path = db_path
        self._wal_seen = False
        self._wal_header_seen = False
        self._borrowed: str | None = None  # the instance whose byte it locks on a descriptor it does not own

    @classmethod
    def beside(cls, own: FileLease, db_path: str, instance: str) -> FileLease:
        """Another instance's lease, taken by a daemon that holds ``own`` and has the store
        open: its byte is locked on ``own``'s descriptor of the database file, never on a
        new one, since closing any descriptor of that file drops every POSIX lock of this
        process on it, SQLite's own (a review: the adopting daemon's store then lost its
        write-ahead log to the next process that closed it). LeaseHeld while it lives."""
        lease = cls._acquire_file(lock_path(db_path, instance), db_path, instance)  # names the holder if held
        if own._db_fd is not None:
            try:
                _set_byte_lock(own._db_fd, instance, fcntl.F_WRLCK)
            except OSError as exc:
                lease.release()
                if exc.errno in (errno.EAGAIN, errno.EACCES):
                    raise LeaseHeld(f"another heartsd (instance {instance!r}) is running on the store {db_path}, "
                                    "reached by another name") from None
                raise
            lease._db_fd, lease._borrowed = own._db_fd, instance
        return lease

    @classmethod
    def acquire(cls, db_path: str, instance: str) -> FileLease:
        lease = cls._acquire_file(lock_path(db_path, instance), db_path, instance)  # names the holder if held
        lease.db_path = os.path.realpath(db_path)
        try:
            lease._db_fd = _lock_database_file(db_path, instance)
        except BlockingIOError:
            lease.release()
            raise LeaseHeld(
                f"another heartsd (instance {instance!r}) is running on the store {db_path}, reached by another "
                "name (a hard link, or a path renamed since) or with its lock file deleted; stop it first, or give "
                "this one its own --db (HEARTSD_DB_PATH) or --instance (HEARTSD_INSTANCE)") from None
        except BaseException:
            lease.release()
            raise
        return lease

    @classmethod
    def _acquire_file(cls, path: Path, db_path: str, instance: str) -> FileLease:
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
        """False once the store is not where this daemon took it: its path renamed, deleted or
        replaced by another file, or its write-ahead log deleted. SQLite goes on writing to
        the files it has open, and everything written after that is lost at the next start
        (an attack pass: 22 matches announced finished, none left). ``lost_reason`` says which."""
        if self._fd is None:
            return False
        if self._db_fd is None or self.db_path is None:
            return True
        try:
            named = os.stat(self.db_path)
        except FileNotFoundError:
            named = None
        held = os.fstat(self._db_fd)
        if named is None or (named.st_dev, named.st_ino) != (held.st_dev, held.st_ino):
            self.lost_reason = (f"the store {self.db_path} was renamed, deleted or replaced while heartsd ran: what it "
                                "writes now would be lost; stopping. Put that very file back (with its -wal file) and "
                                "start heartsd again; a backup or any other copy goes back only with the old -wal and "
                                "-shm files moved away first (SQLite would replay that log onto it and damage it)")
            return False
        # Overwritten in place (`cp copy.db heartsd.db`: the same file, another content) is
        # not seen by the name: its header is. The daemon's store is in WAL mode (bytes 18-19
        # of the header are 2, 2); a `store backup` copy, or any file in rollback mode, is not.
        # Before (an organiser's pass), a backup copied over the live store's file let SQLite
        # lay the old -wal's pages onto it: the store damaged, the daemon serving on, silent.
        header = os.pread(self._db_fd, 20, 0)
        if header[:16] == b"SQLite format 3\0" and header[18:20] == b"\x02\x02":
            self._wal_header_seen = True
        elif self._wal_header_seen:
            self.lost_reason = (f"the store {self.db_path} was overwritten in place while heartsd ran (a copy put "
                                "over it?): SQLite would lay its -wal onto the copy and damage it; stopping. To "
                                "restore a copy, stop heartsd, move the store's -wal and -shm files away, then put "
                                "the copy in place (again: this one may be damaged now) and start heartsd")
            return False
        if os.path.exists(self.db_path + "-wal"):
            self._wal_seen = True  # SQLite keeps it while a connection is open (WAL mode)
        elif self._wal_seen:
            self.lost_reason = (f"the store's write-ahead log {self.db_path}-wal was deleted while heartsd ran: what it "
                                "writes now would be lost; stopping")
            return False
        return True

    def release(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, 0)
            os.close(self._fd)  # closing releases the flock
            self._fd = None
        if self._db_fd is not None:
            if self._borrowed is not None:  # a byte on the owner's descriptor: unlocked, the descriptor kept
                with contextlib.suppress(OSError):
                    _set_byte_lock(self._db_fd, self._borrowed, fcntl.F_UNLCK)
            else:
                os.close(self._db_fd)  # and the database file's lock
            self._db_fd = None


class RowLease:
    """A row in ``leases`` with a heartbeat (PostgreSQL, shared by several daemons), and a
    session advisory lock on a connection of its own: PostgreSQL drops that lock the
    moment the holder's connection ends, so a daemon that was killed is replaced at once
    instead of after ``STALE_S``. A holder whose connection lives on but whose heartbeat
    stopped (a frozen host) is taken over once its row is stale.

    So the lock's connection ending while its daemon lives (the server restarted, an idle
    connection cut, a backend terminated) lets another daemon take over at once: each
    heartbeat checks that connection first, and takes the lock again on a new one; if
    another daemon holds it now, the lease is lost (a review of the lease's fencing)."""

    outlives_store = False
    lost_reason = "the store lease was taken over by another daemon of this instance; stopping"
    taken_over_when_stale = True

    def __init__(self, db: Database, instance: str, holder: str, session: Any) -> None:
        self.db = db
        self.instance = instance
        self.holder = holder
        self._session = session  # holds the advisory lock, and renews the row; None after release
        self._backend = session.info.backend_pid  # the server process that holds the lock for it
        self.lost_reason = RowLease.lost_reason

    @classmethod
    def acquire(cls, db: Database, instance: str, stale_s: float = STALE_S, gone: bool = False) -> RowLease:
        """``gone``: only if the holder is gone by both signs, its lock free and its heartbeat
        stale (another instance's lease, taken to end its work: a lock whose connection a
        restart of PostgreSQL cut is free while its daemon lives)."""
        import psycopg

        holder = holder_id()
        session = psycopg.connect(db.url, autocommit=True, **PG_CONNECT)
        alone = False
        try:
            alone = _try_lock(session, instance)
            now = _now_ms()
            with db.transaction() as tx:
                tx.lock()
                rows = tx.query("SELECT holder, heartbeat_ms FROM leases WHERE instance = ?", (instance,))
                fresh = bool(rows) and now - rows[0][1] < stale_s * 1000
                if (fresh and not alone) or (gone and (fresh or not alone)):
                    said = f"{rows[0][0]}, heartbeat {(now - rows[0][1]) / 1000:.0f} s ago" if rows else "its lock held"
                    raise LeaseHeld(
                        f"another heartsd (instance {instance!r}: {said}) is "
                        f"running on this store; stop it first, or give this one its own --instance "
                        f"(HEARTSD_INSTANCE). A lease is taken over when its holder's connection ends or its "
                        f"heartbeat is older than {stale_s:.0f} s")
                tx.execute("DELETE FROM leases WHERE instance = ?", (instance,))
                tx.execute("INSERT INTO leases (instance, holder, heartbeat_ms) VALUES (?, ?, ?)",
                           (instance, holder, now))
        except BaseException:
            if alone:  # let go now, not when the server notices the closed connection (_lock_again)
                with contextlib.suppress(Exception):
                    session.execute("SELECT pg_advisory_unlock(%s, %s)", (LOCK_SPACE, _lock_key(instance)))
            session.close()
            raise
        return cls(db, instance, holder, session)

    def heartbeat(self) -> bool:
        """Renew the row on the lock's own connection: not in line behind the store's
        writes (the store's connection and its lock), which a busy store holds for seconds.
        If that connection ended, the lock is taken again on a new one first."""
        import psycopg

        if self._session is None:
            return False
        try:
            return self._renew(self._session)
        except psycopg.OperationalError:  # the connection ended (a reconnect below says if the server is there)
            with contextlib.suppress(Exception):
                self._session.close()
        session = psycopg.connect(self.db.url, autocommit=True, **PG_CONNECT)  # raises if unreachable: retried
        if not self._lock_again(session):
            session.close()
            self.lost_reason = ("the connection holding the store lease's lock ended, and another daemon of this "
                                "instance holds the lock now; stopping")
            return False
        self._session, self._backend = session, session.info.backend_pid
        log.warning("the connection holding the store lease's lock ended; it is held again on a new one")
        return self._renew(session)

    def _renew(self, session: Any) -> bool:
        return bool(session.execute("UPDATE leases SET heartbeat_ms = %s WHERE instance = %s AND holder = %s",
                                    (_now_ms(), self.instance, self.holder)).rowcount == 1)

    def _lock_again(self, session: Any) -> bool:
        """Take the lock on ``session``, trying for about two seconds. If this daemon's own
        old connection still holds it (its client side broke, a reset from a proxy or NAT,
        while the server's side lives on), that server process is ended first: it is not
        another daemon. Another holder may be one that looks and lets go: a daemon of another
        instance checking whether this one's work is orphaned (``take_over``) holds the lock
        while it reads the lease's row, and its connection lets go of it a moment after it
        closes. Before, that moment read as the lease lost, and the daemon stopped (a
        PostgreSQL test, failing on a busy machine). A daemon that took the lease over keeps
        the lock, and replaced the row too, which ``_renew`` then finds."""
        for _ in range(LOCK_AGAIN_TRIES):
            if _try_lock(session, self.instance):
                return True
            holders = [row[0] for row in session.execute(
                "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND classid = %s AND objid = %s "
                "AND objsubid = 2 AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
                (LOCK_SPACE, _lock_key(self.instance) & 0xFFFFFFFF))]
            if holders == [self._backend]:
                session.execute("SELECT pg_terminate_backend(%s)", (self._backend,))
            time.sleep(0.05)
        return False

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
    check_not_orphaned(path)  # before the lease makes the database file
    check_not_foreign(path)  # ... or its lock file beside another application's
    lease = None if path == ":memory:" else FileLease.acquire(path, instance)
    try:
        return open_store(), lease
    except BaseException:
        if lease is not None:
            lease.release()
        raise


def live_daemons(url: str, db: Database | None = None) -> list[str]:
    """The daemons serving the store ``url`` now, of any instance, each as the holder its
    lease names: for a command that must not write under a live daemon (``heartsd store
    restored``). SQLite: the instances' lock files beside the database that are locked, and
    a lock on any instance's byte of the database file (a daemon reaching it by another
    name); only inspected, nothing taken. PostgreSQL (``db`` open on it): the ``leases``
    rows whose heartbeat is fresh."""
    if is_postgresql(url):
        if db is None:
            return []
        with db.transaction() as tx:
            rows = tx.query("SELECT instance, holder, heartbeat_ms FROM leases")
        now = _now_ms()
        return [f"instance {instance!r}: {holder}" for instance, holder, beat in rows if now - beat < STALE_S * 1000]
    path = sqlite_path(url)
    if path == ":memory:" or not os.path.isfile(path):
        return []
    real = os.path.realpath(path)
    found = []
    # The store's name matched literally: `arena[1].db` as a pattern is a character class,
    # and its lock files were never found (an operator's pass).
    for lock in sorted(Path(real).parent.glob(f"{glob.escape(Path(real).name)}.*.lock")):
        instance = lock.name[len(Path(real).name) + 1:-len(".lock")]
        try:
            fd = os.open(lock, os.O_RDONLY)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)  # free: nobody holds it (released when fd closes)
        except BlockingIOError:
            holder = ""  # a lock file it cannot read still says a daemon holds it
            with contextlib.suppress(OSError):
                holder = os.pread(fd, 200, 0).decode(errors="replace").strip()
            found.append(f"instance {instance!r}: {holder or 'unknown process'}")
        finally:
            os.close(fd)
    if not found and sys.platform.startswith("linux") and hasattr(fcntl, "F_OFD_GETLK"):
        fd = os.open(path, os.O_RDONLY)
        try:  # any instance's byte: F_OFD_GETLK only asks, it locks nothing
            asked = struct.pack(FLOCK, fcntl.F_WRLCK, os.SEEK_SET, DB_LOCK_BASE, 1 << 32, 0)
            kind = struct.unpack(FLOCK, fcntl.fcntl(fd, fcntl.F_OFD_GETLK, asked))[0]
            if kind != fcntl.F_UNLCK:
                found.append("a daemon reaching it by another name (a hard link, or a path renamed since)")
        except OSError:
            pass  # a file system without these locks: the lock files above said what they could
        finally:
            os.close(fd)
    return found


def take_over(url: str, db: Database, instance: str, own: Lease | None) -> Lease | None:
    """Another instance's lease, at once, for a daemon holding ``own`` that finds that
    instance's work in the store: LeaseHeld while its daemon lives (None on an in-memory
    store, which has no other instance)."""
    if is_postgresql(url):
        return RowLease.acquire(db, instance, gone=True)
    if not isinstance(own, FileLease):
        return None
    return FileLease.beside(own, sqlite_path(url), instance)


def _lock_key(instance: str) -> int:
    return int.from_bytes(hashlib.sha256(instance.encode()).digest()[:4], "big", signed=True)


def _try_lock(session: Any, instance: str) -> bool:
    """Take the instance's advisory lock on ``session`` if no other connection holds it."""
    return bool(session.execute("SELECT pg_try_advisory_lock(%s, %s)", (LOCK_SPACE, _lock_key(instance))).fetchone()[0])


def _now_ms() -> int:
    return int(time.time() * 1000)
