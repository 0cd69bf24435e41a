"""``heartsd store backup``: a consistent copy of a SQLite store, taken while the daemon runs.

The daemon's SQLite store runs in WAL mode: what was committed lately is in ``FILE-wal``
until a checkpoint moves it into ``FILE``. A plain ``cp FILE`` while the daemon runs copies
the main file alone, silently missing those commits (an organiser's pass: 36 of 45 matches
and 5 of 7 tournaments, and ``replay verify`` found nothing wrong with the copy, as every
record in it was sound). SQLite's online backup API copies the database as one snapshot,
the log's commits included, while the daemon goes on writing; the copy is then checked
(``PRAGMA quick_check``) and counted. A PostgreSQL store is copied with its own tools
(``pg_dump``).

    heartsd store backup --db heartsd.db /backups/heartsd-2026-12-06.db

The copy is written as ``TARGET.partial`` and renamed ``TARGET`` once checked; a backup
that fails removes it. One stopped before it could (killed, its machine stopped) leaves
it: it is not a backup, and the next backup to that target replaces it and says so
(:func:`_partial_file`). A second backup to one target while the first runs is refused.

A copy made any other way (``pg_dump``, a file-system snapshot, a file copied with the
daemon stopped) cannot know what the live store dealt after it: ``heartsd store
restored`` does, on the restored store before a daemon starts on it, what the backup
does to its copy (:func:`_spend_first_seeds`).

    heartsd store restored --db postgresql://arena@db/hearts
"""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import sys
from collections.abc import Callable, Iterator

from .db import StoreError, is_postgresql, refuse_not_heartsd, sqlite_path, unreadable

PAGES_PER_STEP = 1024  # ~4 MiB a step: the daemon's writes go on between steps
# What SQLite says when a file cannot be written: during a backup, only the copy is written.
COPY_WRITE_ERRORS = frozenset({"SQLITE_FULL", "SQLITE_CANTOPEN", "SQLITE_READONLY", "SQLITE_IOERR_WRITE",
                               "SQLITE_IOERR_FSYNC", "SQLITE_IOERR_TRUNCATE", "SQLITE_IOERR_DELETE"})


# The first attempt of every unplayed table of a running or paused tournament, marked spent
# (_spend_first_seeds): in a backup's copy, or in a store restored by other means.
SPEND_FIRST_SEEDS = (
    "UPDATE tournament_tables SET attempts = attempts + 1 "
    "WHERE ((status = 'pending' AND attempts = 0) OR (status = 'starting' AND attempts = 1)) "
    "AND tournament_id IN (SELECT id FROM tournaments WHERE status IN ('running', 'paused'))")


# What a TARGET.partial is, in the messages that name one (and in the README).
PARTIAL_IS = ("a TARGET.partial file is the unfinished copy of a backup that was stopped before it ended (killed, or "
              "its machine stopped); it is not a backup")


class BackupError(Exception):
    """A backup that cannot be taken: the message says why (exit 2)."""


def backup(source_url: str, target: str, progress: Callable[[int, int], None] | None = None) -> dict[str, int]:
    """Copy the SQLite store at ``source_url`` to the new file ``target``, checked; return
    what the copy holds (matches, finished matches, tournaments, and the tournament tables
    whose first attempt it marks spent: :func:`_spend_first_seeds`). ``progress(done, total)``
    in pages, as it goes."""
    if is_postgresql(source_url):
        raise BackupError("this store is PostgreSQL: copy it with PostgreSQL's own tools, e.g. "
                          "`pg_dump --format=custom --file=heartsd.dump URL` (pg_restore puts it back)")
    source = sqlite_path(source_url)
    if source == ":memory:" or not os.path.isfile(source):
        raise BackupError(f"no SQLite store at {source!r}")
    if os.path.isdir(target):
        raise BackupError(f"{target!r} is a folder: name a new file in it, e.g. {os.path.join(target, 'heartsd.db')!r}")
    if os.path.lexists(target):
        raise BackupError(f"{target!r} exists: a backup never overwrites a file; name a new one")
    folder = os.path.dirname(os.path.abspath(target))
    if not os.path.isdir(folder):
        raise BackupError(f"cannot write the copy {target!r}: its folder {folder!r} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise BackupError(f"cannot write the copy {target!r}: its folder {folder!r} is not writable")
    partial = f"{target}.partial"
    with _partial_file(partial, target) as stale:
        counts = _copy(source, target, partial, progress)
    counts["stale_partial"] = stale
    return counts


@contextlib.contextmanager
def _partial_file(partial: str, target: str) -> Iterator[int]:
    """Hold ``partial`` (the copy while it is written) for this backup alone: locked
    (``flock``) until the copy is renamed to ``target`` or removed, so that a second backup to
    the same target, run meanwhile, is refused instead of writing into the same file; one an
    earlier backup left (killed, or its machine stopped, before it could rename or remove it)
    is emptied, its journal removed, and 1 is yielded (else 0), for the command to say so.

    Before (an operator's pass), such a file stayed beside the target unexplained, and the
    next backup to it wrote into it without a word; two backups to one target at once wrote
    into one file, and the one that finished second ended in a traceback (its copy renamed
    away under it) or removed the other's copy as it was being written."""
    import fcntl

    try:
        fd = os.open(partial, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o666)
        stale = 0
    except FileExistsError:
        try:
            fd = os.open(partial, os.O_RDWR)
        except OSError as exc:
            raise BackupError(f"{partial!r} exists and cannot be opened ({exc.strerror}): {PARTIAL_IS}; delete "
                              "it, then back up again") from None
        stale = 1
    except OSError as exc:
        raise BackupError(f"cannot create the copy {partial!r} ({exc.strerror}); the store is untouched: back up "
                          "to another folder or disk") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise BackupError(f"another `heartsd store backup` to {target!r} is running now (it writes {partial!r}): "
                              "let it finish (it says when), or back up to another file") from None
        except OSError:  # a file system without flock (some network ones): as before, unlocked
            pass
        if stale:  # an earlier backup's unfinished copy (its lock went with its process)
            with contextlib.suppress(FileNotFoundError):
                os.remove(f"{partial}-journal")  # first: a journal left hot would be played into the new copy
            os.ftruncate(fd, 0)
        # Held open until the copy is renamed or removed: closing a descriptor of the file
        # while SQLite holds the copy open would drop SQLite's own locks on it.
        try:
            yield stale
        finally:
            # A failed copy leaves neither file (SQLite closed both). Renamed, the name may be
            # another backup's file by now, started since: only this copy's is removed.
            with contextlib.suppress(FileNotFoundError):
                if os.stat(partial).st_ino == os.fstat(fd).st_ino:
                    os.remove(partial)
                    with contextlib.suppress(FileNotFoundError):
                        os.remove(f"{partial}-journal")
    finally:
        os.close(fd)


def _copy(source: str, target: str, partial: str, progress: Callable[[int, int], None] | None) -> dict[str, int]:
    """The copy itself, into ``partial`` (held by :func:`_partial_file`), renamed ``target``
    once checked."""
    try:
        src = _open_store(source)
        with contextlib.closing(src), contextlib.closing(sqlite3.connect(partial)) as dst:
            src.backup(dst, pages=PAGES_PER_STEP,
                       progress=(lambda _status, left, total: progress(total - left, total)) if progress else None)
            spent = _spend_first_seeds(dst)
            dst.execute("PRAGMA journal_mode=DELETE")  # one self-contained file (the daemon sets WAL again when it opens it)
            check = dst.execute("PRAGMA quick_check").fetchone()[0]
            if check != "ok":
                raise BackupError(f"the copy does not check out ({check}): is the store itself damaged? "
                                  "`heartsd replay verify` says")
            counts = {"matches": _count(dst, "SELECT COUNT(*) FROM matches"),
                      "finished": _count(dst, "SELECT COUNT(*) FROM matches WHERE status = 'finished'"),
                      "tournaments": _count(dst, "SELECT COUNT(*) FROM tournaments"), "tables_respun": spent}
    except sqlite3.Error as exc:
        raise BackupError(_copy_failed(source, target, exc)) from None
    if os.path.lexists(target):  # made while this copy was written (by another program: a backup would wait)
        raise BackupError(f"{target!r} appeared while the copy was written: a backup never overwrites a file; "
                          "name a new one")
    os.replace(partial, target)  # the target appears whole, or not at all
    return counts


def _open_store(source: str) -> sqlite3.Connection:
    """A read-only connection to the store, once it is known to read and to be a heartsd
    store: before anything is written. A wrong ``--db`` (another application's file, an
    empty one) was copied and announced as a sound backup of "0 matches" (an operator's
    pass), where every other command refuses it."""
    try:
        src = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise BackupError(f"could not read the store {source!r}: {exc}") from None
    try:
        src.execute("PRAGMA schema_version").fetchone()
        refuse_not_heartsd(src, source)
    except sqlite3.Error as exc:
        src.close()
        raise BackupError(unreadable(source, exc)) from None
    except StoreError as exc:
        src.close()
        raise BackupError(str(exc)) from None
    return src


def _copy_failed(source: str, target: str, exc: sqlite3.Error) -> str:
    """Why a copy failed, naming the side that failed. The store is opened read-only, so
    a write error is the copy's: before (an organiser's pass, a backup to a full disk) it
    read "could not copy 'arena.db': database or disk is full", which says the live store's
    disk is full, and a missing folder "could not copy 'arena.db': unable to open database
    file", which says the store is missing.

    >>> full = sqlite3.OperationalError("database or disk is full")
    >>> full.sqlite_errorname = "SQLITE_FULL"
    >>> _copy_failed("arena.db", "/backups/a.db", full)
    "could not write the copy '/backups/a.db' (database or disk is full): its disk is full or it cannot be written there; the store 'arena.db' is untouched: free space there, or back up to another disk"
    """
    name = getattr(exc, "sqlite_errorname", "") or ""
    if name in COPY_WRITE_ERRORS:
        return (f"could not write the copy {target!r} ({exc}): its disk is full or it cannot be written there; the "
                f"store {source!r} is untouched: free space there, or back up to another disk")
    return f"could not copy {source!r} to {target!r}: {exc}"


def _spend_first_seeds(copy: sqlite3.Connection) -> int:
    """In the copy, mark the first attempt of every unplayed table of a running or paused
    tournament as spent, so that when the copy is restored those tables deal shuffles drawn
    at random (tournaments.table_seed) rather than their first attempt's; how many.

    A table's first-attempt seed is fixed by the tournament's seed and key, and the live
    store goes on after the copy: it may deal those shuffles, and the copy's ledger cannot
    know. Before (an organiser's pass), a store restored from a backup taken between rounds
    played every later round again on the very shuffles its bots had been dealt after the
    backup, so a bot that remembers knew every hand. A pending table's first attempt (0
    made) and a starting one's (1 made, perhaps dealt: tournaments.Tournaments._unspent
    would give it back) count as made; a running table's match is aborted at the start
    and played again on a random seed already."""
    try:
        return copy.execute(SPEND_FIRST_SEEDS).rowcount
    except sqlite3.OperationalError:  # a store from before tournaments
        return 0
    finally:
        copy.commit()


def restored_main(url: str) -> int:
    """``heartsd store restored``: mark spent, in a store restored from a copy made by other
    means than ``store backup``, the first attempt of every unplayed table of a running or
    paused tournament (:func:`_spend_first_seeds`); say how many. Run it before a daemon
    starts on the store: run again, it spends the next attempts too, which only costs
    reproducibility (those tables deal random shuffles either way)."""
    from .db import StoreError, redacted
    from .lease import live_daemons
    from .store import Store

    # On a live daemon's store (a mistake: this is the step after a restore, before a daemon
    # starts), it re-spun the live tournaments' unplayed tables, whose published seeds then
    # no longer reproduced them (an organiser's pass), and said nothing of the daemon. SQLite's
    # locks are looked at before the store is opened here: closing a descriptor of its file
    # later would drop this process's own SQLite locks.
    live = [] if is_postgresql(url) else live_daemons(url)
    try:
        store = Store.open_existing(url, write=True)
    except StoreError as exc:
        print(f"heartsd store restored: {exc}", file=sys.stderr)
        return 2
    live = live or live_daemons(url, store.db)
    if live:
        store.close()
        print(f"heartsd store restored: a heartsd is running on this store ({'; '.join(live)}): this command is for a "
              "store just restored from a copy, before a daemon starts on it, and changed nothing. A store a daemon "
              "serves needs no marking; to restore a copy, stop the daemon, put the copy in place (the old file's "
              "-wal and -shm moved away), then run this", file=sys.stderr)
        return 2
    try:
        with store.db.transaction() as tx:
            spent = tx.execute(SPEND_FIRST_SEEDS)
    finally:
        store.close()
    print(f"marked {spent:,} unplayed tournament table(s) of {redacted(url) if is_postgresql(url) else sqlite_path(url)} to "
          "deal fresh random shuffles: the live store may have dealt their first ones after the copy this store "
          "was restored from" if spent else "no running or paused tournament has an unplayed table: nothing to mark")
    return 0


def _count(db: sqlite3.Connection, sql: str) -> int:
    try:
        return int(db.execute(sql).fetchone()[0])
    except sqlite3.OperationalError:  # a store from before that table
        return 0


class _Stopped(BaseException):
    """SIGTERM or SIGHUP during a backup, raised where the copy is being made."""

    def __init__(self, number: int) -> None:
        super().__init__(number)
        self.number = number
        self.name = signal.Signals(number).name


@contextlib.contextmanager
def _stopped_by_signals() -> Iterator[None]:
    """SIGTERM and SIGHUP end the backup as Ctrl-C does, its copy removed: killed by them
    (`timeout 1h heartsd store backup ...` in a cron job, a closed terminal), it left its
    TARGET.partial behind (an operator's pass), as only SIGKILL must."""
    def stop(number: int, _frame: object) -> None:
        raise _Stopped(number)

    before = {number: signal.signal(number, stop) for number in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for number, handler in before.items():
            signal.signal(number, handler)


def main(source_url: str, target: str) -> int:
    """The command: the copy, its progress on stderr, what it holds on stdout."""
    shown = [-1]

    def say(done: int, total: int) -> None:
        tenth = 10 * done // max(total, 1)
        if tenth != shown[0] and total > 10 * PAGES_PER_STEP:  # only for a store worth waiting on
            shown[0] = tenth
            print(f"  {10 * tenth}% ({done:,} of {total:,} pages)", file=sys.stderr, flush=True)

    try:
        with _stopped_by_signals():
            counts = backup(source_url, target, say)
    except BackupError as exc:
        print(f"heartsd store backup: {exc}", file=sys.stderr)
        return 2
    except _Stopped as exc:  # its copy removed on the way out (_partial_file)
        print(f"heartsd store backup: stopped ({exc.name}): no copy was written", file=sys.stderr)
        return 128 + exc.number
    if counts["stale_partial"]:
        print(f"heartsd store backup: replaced {target}.partial, left by an earlier backup to {target} that was "
              "stopped before it ended (killed, or its machine stopped): it was not a backup", file=sys.stderr)
    print(f"backed up {sqlite_path(source_url)} to {target}: {counts['matches']:,} matches "
          f"({counts['finished']:,} finished), {counts['tournaments']:,} tournaments; the copy checks out "
          "(PRAGMA quick_check). Restore it with the daemon stopped, the old file's -wal and -shm moved away."
          + (f" Once restored, its {counts['tables_respun']:,} unplayed tournament table(s) deal fresh random "
             "shuffles: the store may deal their first ones after this copy." if counts["tables_respun"] else ""))
    return 0
