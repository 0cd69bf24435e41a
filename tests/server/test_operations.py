"""Operators' mistakes: a second daemon, a wrong path, a read-only or too new store, a
port in use, a typo in a ruleset. Each gets a clear message and exit 2, and loses nothing."""

from __future__ import annotations

import contextlib
import json
import os
import select
import shlex
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from heartsbot.proto import game_pb2
from heartsd.db import Database, StoreError, is_postgresql
from heartsd.lease import HEARTBEAT_S, LOCK_SPACE, FileLease, LeaseHeld, RowLease, _lock_key, open_leased, take_over
from heartsd.store import Store

from .harness import ADMIN, run, running_daemon

ROOT = Path(__file__).resolve().parents[2]
HEARTSD = [sys.executable, "-m", "heartsd.cli"]


def _serving(*args: str, env: dict[str, str] | None = None) -> tuple[subprocess.Popen[str], str]:
    """`heartsd serve ARGS` in its own process, once it listens: the process and its address
    (the caller stops it). Its stderr is dropped; ``env`` adds to the environment."""
    daemon = subprocess.Popen([*HEARTSD, "serve", "--port", "0", *args], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True, env={**os.environ, **(env or {})})
    line = ""
    while "listening on" not in line:  # the store exists once it listens (under load over 0.5 s)
        line = daemon.stdout.readline()  # type: ignore[union-attr]
        if not line:
            daemon.wait(10)
            raise AssertionError("the daemon did not start")
    return daemon, line.split("listening on ", 1)[1].strip()
HEARTSBOT = [sys.executable, "-m", "heartsbot.cli"]


def heartsd(*args: str, as_user: bool = False, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run a heartsd command. ``as_user``: without root's power to write read-only files
    (the tests run as root, which file modes do not stop)."""
    prefix = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--"] if as_user and os.geteuid() == 0 else []
    return subprocess.run([*prefix, *HEARTSD, *args], capture_output=True, text=True, timeout=timeout)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_command_args() -> list[str]:
    """The `heartsd serve` arguments of the README's run command (scripts/run)."""
    text = (ROOT / "scripts" / "run").read_text()
    line = next(ln for ln in text.replace("\\\n", " ").splitlines() if ln.strip().startswith("exec "))
    words = shlex.split(line)
    return [w for w in words[words.index("serve") + 1:] if w != '"$@"' and w != "$@"]


# -- one live daemon per instance per store ---------------------------------------------------


def test_the_run_command_started_twice_refuses_the_second_and_the_first_loses_nothing(tmp_path):
    db = str(tmp_path / "heartsd.db")
    port, web = free_port(), free_port()
    # scripts/run's own arguments; shorter matches, the store in tmp, free ports.
    args = [*run_command_args(), "--port", str(port), "--web", f"127.0.0.1:{web}", "--db", db, "--ladder-deals", "4",
            "--log-format", "json", "--log-level", "warning", "--admin-token", ADMIN]
    first = subprocess.Popen([*HEARTSD, "serve", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert "listening on" in first.stdout.readline()
        deadline = time.time() + 60
        running: list[str] = []
        while time.time() < deadline and not running:
            time.sleep(0.3)
            store = Store.open_existing(db)
            running = [m.id for m in store.list(status="running") if m.seats[0].startswith("house-")]
            store.close()
        assert running, "a ladder match is running in the first daemon"
        # The same command again: the port is taken; then on another port: the store is.
        same = subprocess.run([*HEARTSD, "serve", *args], capture_output=True, text=True, timeout=60)
        other = subprocess.run([*HEARTSD, "serve", *args, "--port", "0", "--web", "127.0.0.1:0"], capture_output=True,
                               text=True, timeout=60)
        assert same.returncode == 2 and other.returncode == 2
        assert len(same.stderr.strip().splitlines()) == 1 and "in use" in same.stderr and "--port" in same.stderr
        assert "another heartsd" in other.stderr and "instance 'heartsd'" in other.stderr
        assert "Traceback" not in same.stderr + other.stderr
        # The first daemon's matches go on: the ones running then finish and are rated.
        deadline = time.time() + 90
        while time.time() < deadline:
            store = Store.open_existing(db)
            statuses = {i: store.get(i).status for i in running}
            store.close()
            if all(s != "running" for s in statuses.values()):
                break
            time.sleep(0.5)
        assert set(statuses.values()) == {"finished"}, statuses
    finally:
        first.send_signal(signal.SIGTERM)
        assert first.wait(60) == 0
    store = Store.open_existing(db)
    rated = {r[0] for r in store.db.query("SELECT DISTINCT match_id FROM results")}
    assert set(running) <= rated, "the rated results of the first daemon's matches are kept"
    assert not [m for m in store.list(limit=1000) if m.reason == "server stopped while the match was running"]
    store.close()


def test_sqlite_lease_is_a_lock_file_released_with_its_holder(tmp_path):
    db = str(tmp_path / "s.db")
    lease = FileLease.acquire(db, "heartsd")
    with pytest.raises(LeaseHeld, match="another heartsd"):
        FileLease.acquire(db, "heartsd")
    FileLease.acquire(db, "pod-2").release()  # another instance has its own lease
    lease.release()
    FileLease.acquire(db, "heartsd").release()
    # A killed holder's lock goes with its process.
    holder = subprocess.Popen([sys.executable, "-c", f"from heartsd.lease import FileLease; "
                               f"FileLease.acquire({db!r}, 'heartsd'); print('held', flush=True); "
                               "import time; time.sleep(60)"], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    with pytest.raises(LeaseHeld, match="pid"):
        FileLease.acquire(db, "heartsd")
    holder.kill()
    holder.wait()
    FileLease.acquire(db, "heartsd").release()



def test_a_store_reached_through_a_symlink_or_another_path_has_the_same_lease(tmp_path, monkeypatch):
    """Before (an operator's attack pass): the lock file was named after the path as
    given, so a daemon on link.db -> real.db took link.db's lock while another held
    real.db's, marked that daemon's live matches aborted at its start, and a result the
    first then finished was lost for good. Now the lock is named after the real path."""
    real = tmp_path / "data" / "real.db"
    real.parent.mkdir()
    real.touch()
    (tmp_path / "link.db").symlink_to(real)
    (tmp_path / "alias").symlink_to(real.parent, target_is_directory=True)
    lease = FileLease.acquire(str(real), "heartsd")
    monkeypatch.chdir(tmp_path / "data")
    for other in (tmp_path / "link.db", tmp_path / "alias" / "real.db", tmp_path / "data" / ".." / "data" / "real.db",
                  Path("real.db")):
        with pytest.raises(LeaseHeld, match="another heartsd"):
            FileLease.acquire(str(other), "heartsd")
    lease.release()
    FileLease.acquire(str(tmp_path / "link.db"), "heartsd").release()

def test_a_store_reached_through_a_hard_link_or_after_its_lock_file_was_deleted_has_the_same_lease(tmp_path):
    """Before (an attack pass): the lock file is named after the store's path, so a second
    daemon of the instance on a hard link of the store (b.db, the same file) took b.db's lock
    and ran beside the first: two WAL files, and PRAGMA integrity_check failed. Deleting the
    lock file (a temp cleaner) let a second daemon in too. Now the lease also locks a byte
    range of the database file itself, which every name of the file shares."""
    import os

    a, b = tmp_path / "a.db", tmp_path / "b.db"
    Store(str(a)).close()
    lease = FileLease.acquire(str(a), "heartsd")
    os.link(a, b)
    with pytest.raises(LeaseHeld, match="another heartsd"):
        FileLease.acquire(str(b), "heartsd")
    FileLease.acquire(str(b), "pod-2").release()  # another instance still shares the store
    lease.path.unlink()
    with pytest.raises(LeaseHeld, match="another heartsd"):
        FileLease.acquire(str(a), "heartsd")
    lease.release()
    FileLease.acquire(str(b), "heartsd").release()


def test_postgresql_lease_is_a_row_with_a_heartbeat_taken_over_when_its_holder_is_gone(postgres_server):
    from tests.postgres import fresh_database

    with fresh_database(postgres_server) as url:
        store_a, lease_a = open_leased(url, "pod-0", lambda: Store(url, "pod-0"))
        with pytest.raises(LeaseHeld, match="pod-0"):
            open_leased(url, "pod-0", lambda: Store(url, "pod-0"))
        store_b, lease_b = open_leased(url, "pod-1", lambda: Store(url, "pod-1"))  # its own instance
        assert lease_a.heartbeat() and lease_b.heartbeat()
        # A frozen holder (its connection open, its heartbeat stopped) is taken over once stale.
        with store_a.db.transaction() as tx:
            tx.execute("UPDATE leases SET heartbeat_ms = heartbeat_ms - 600000 WHERE instance = 'pod-0'")
        taker = RowLease.acquire(store_b.db, "pod-0")
        assert not lease_a.heartbeat(), "the old holder learns it lost the lease"
        with pytest.raises(LeaseHeld):
            RowLease.acquire(store_b.db, "pod-0")
        # A holder whose connection ended (killed) is replaced at once, heartbeat fresh or not.
        taker.release()
        lease_b.release()
        holder = subprocess.Popen([sys.executable, "-c", f"from heartsd.store import Store; from heartsd.lease import "
                                   f"RowLease; s = Store({url!r}, 'pod-1'); held = RowLease.acquire(s.db, 'pod-1'); "
                                   "print('held', flush=True); import time; time.sleep(60)"],
                                  stdout=subprocess.PIPE, text=True)
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(LeaseHeld):
            RowLease.acquire(store_b.db, "pod-1")
        holder.kill()
        holder.wait()
        for _ in range(50):  # the server notices the closed connection within moments
            try:
                RowLease.acquire(store_b.db, "pod-1").release()
                break
            except LeaseHeld:
                time.sleep(0.1)
        else:
            pytest.fail("the killed holder's lease was not taken over")
        lease_a.release()
        store_a.close()
        store_b.close()


# -- the store: missing, read-only, too new ----------------------------------------------------


def make_store_with_a_match(tmp_path: Path) -> tuple[str, str]:
    db = str(tmp_path / "kept.db")

    async def scenario() -> str:
        async with running_daemon(tmp_path, db=db) as daemon:
            match_id = await daemon.create_match(["house:random"] * 4)
            await daemon.wait_finished(match_id)
            daemon.arena.store.ladder.add_bot("kept", "ann")
            return match_id

    return db, run(scenario())


def test_an_empty_store_path_is_named_as_such_by_serve_and_every_command(tmp_path):
    """An operator's pass: `HEARTSD_DB_PATH=$ARENA_DB heartsd serve` with the variable unset
    (so set, but empty) ended "heartsd: [Errno 2] No such file or directory: ''", exit 1,
    naming no setting; the other commands said "no store at /the/working/folder". An empty
    store path now stops each with exit 2, saying the setting is empty, and nothing is made
    in the working folder."""
    env = {**os.environ, "HEARTSD_DB_PATH": ""}
    commands = (("serve", "--port", "0"), ("ladder", "leaderboard"), ("replay", "verify"),
                ("ladder", "add-bot", "n", "--owner", "o", "--create"), ("store", "restored"))
    for args in commands:
        out = subprocess.run([*HEARTSD, *args], capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path)
        assert out.returncode == 2, (args, out)
        assert "empty" in out.stderr and "HEARTSD_DB_PATH" in out.stderr, (args, out.stderr)
        assert "Traceback" not in out.stderr and "listening on" not in out.stdout, (args, out.stderr)
    assert list(tmp_path.iterdir()) == []


def test_commands_that_read_or_administer_never_create_a_store(tmp_path):
    missing = str(tmp_path / "typo.db")
    for args in (("replay", "verify"), ("replay", "show", "m-1"), ("ladder", "leaderboard"),
                 ("ladder", "add-bot", "x", "--owner", "y"), ("ladder", "rotate", "x"), ("ladder", "revoke", "x"),
                 ("ladder", "recompute")):
        out = heartsd(*args, "--db", missing)
        assert out.returncode == 2, (args, out.stderr)
        assert f"no store at {missing}" in out.stderr and "HEARTSD_DB_PATH" in out.stderr, out.stderr
        assert out.stdout == "" and "Traceback" not in out.stderr
        assert not [p for p in tmp_path.iterdir() if p.name.startswith("typo")], f"{args} created a store"
    made = heartsd("ladder", "add-bot", "x", "--owner", "y", "--db", missing, "--create")
    assert made.returncode == 0 and Path(missing).exists()


def test_a_read_only_store_is_readable_and_the_daemon_refuses_it_naming_the_setting(tmp_path):
    db, match_id = make_store_with_a_match(tmp_path)
    folder = Path(db).parent
    for p in folder.iterdir():
        if p.name.startswith("kept.db"):
            p.chmod(0o444)
    folder.chmod(0o555)
    try:
        verify = heartsd("replay", "verify", "--db", db, as_user=True)
        assert verify.returncode == 0 and f"{match_id}: OK" in verify.stdout, verify.stdout + verify.stderr
        show = heartsd("replay", "show", match_id, "--db", db, as_user=True)
        assert show.returncode == 0 and "trick:" in show.stdout, show.stderr
        board = heartsd("ladder", "leaderboard", "--db", db, as_user=True)
        assert board.returncode == 0 and "no rated standard matches yet" in board.stdout, board.stderr
        for args in (("serve", "--port", "0"), ("ladder", "add-bot", "y", "--owner", "z"), ("ladder", "revoke", "kept")):
            out = heartsd(*args, "--db", db, as_user=True)
            assert out.returncode == 2, (args, out.stdout, out.stderr)
            assert "read-only" in out.stderr and "HEARTSD_DB_PATH" in out.stderr and "Traceback" not in out.stderr
            assert len(out.stderr.strip().splitlines()) == 1, out.stderr
    finally:
        folder.chmod(0o755)
    store = Store(db)
    assert "kept" in store.ladder.owners(), "nothing was changed"
    store.close()


def test_a_store_newer_than_the_daemon_is_refused_by_every_command(tmp_path):
    db, match_id = make_store_with_a_match(tmp_path)
    store = Database.open(db)
    with store.transaction() as tx:
        tx.execute("UPDATE schema_version SET version = 999")
    store.close()
    for args in (("serve", "--port", "0"), ("replay", "verify"), ("replay", "show", match_id), ("ladder", "leaderboard"),
                 ("ladder", "add-bot", "n", "--owner", "o")):
        out = heartsd(*args, "--db", db)
        assert out.returncode == 2, (args, out.stderr)
        assert "schema version 999, newer than this heartsd" in out.stderr and "HEARTSD_DB_PATH" in out.stderr
        assert "Traceback" not in out.stderr
    with pytest.raises(StoreError):
        Store(db)


@pytest.mark.parametrize("damage", ["UPDATE schema_version SET version = 'seven'",
                                    "UPDATE schema_version SET version = -1",
                                    "INSERT INTO schema_version VALUES (1)",
                                    "DELETE FROM schema_version"])
def test_a_store_whose_schema_version_is_damaged_is_refused_with_a_reason(tmp_path, damage):
    """Before (an operator's pass): a schema_version row edited or damaged ('seven', -1,
    two rows) ended every command in a traceback, or was taken for a new store and migrated
    again from nothing (no row). Now each command refuses it, exit 2, naming the store and
    what is wrong with the row."""
    db, match_id = make_store_with_a_match(tmp_path)
    store = Database.open(db)
    with store.transaction() as tx:
        tx.execute(damage)
    store.close()
    for args in (("serve", "--port", "0"), ("replay", "verify"), ("ladder", "add-bot", "n", "--owner", "o")):
        out = heartsd(*args, "--db", db)
        assert out.returncode == 2, (args, out.stderr)
        assert "schema_version" in out.stderr and "damaged" in out.stderr and "HEARTSD_DB_PATH" in out.stderr, out.stderr
        assert "Traceback" not in out.stderr


@pytest.mark.parametrize("its_own", [(), ("schema_version",), ("schema_version", "matches")])
def test_another_applications_sqlite_file_is_refused_not_adopted(tmp_path, its_own):
    """Before (an operator's pass): `--db` pointing at another application's SQLite file
    (a typo, a wrong path) had heartsd add its tables to that file and serve from it. Now a
    SQLite file that holds tables but not heartsd's is refused, exit 2, by every command,
    and the file is left as it was; also when it has a schema_version table of its own (a
    common name: a review of the first fix), and a matches table too (an attack pass: it
    was migrated, and every command ended in a traceback)."""
    import sqlite3

    other = tmp_path / "places.sqlite"
    with contextlib.closing(sqlite3.connect(other)) as c:
        c.execute("CREATE TABLE moz_places (id INTEGER PRIMARY KEY, url TEXT)")
        c.execute("INSERT INTO moz_places (url) VALUES ('https://example.org/')")
        if "schema_version" in its_own:
            c.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
            c.execute("INSERT INTO schema_version VALUES (3)")
        if "matches" in its_own:
            c.execute("CREATE TABLE matches (id INTEGER PRIMARY KEY, home TEXT, away TEXT)")
        c.commit()
    before = other.read_bytes()
    for args in (("serve", "--port", "0"), ("ladder", "add-bot", "n", "--owner", "o"), ("replay", "verify")):
        out = heartsd(*args, "--db", str(other))
        assert out.returncode == 2, (args, out.stderr)
        assert "not a heartsd store" in out.stderr and "HEARTSD_DB_PATH" in out.stderr, out.stderr
        assert "moz_places" in out.stderr, out.stderr
        assert "Traceback" not in out.stderr
    with contextlib.closing(sqlite3.connect(other)) as c:
        assert sorted(r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type = 'table'")) == \
            sorted(["moz_places", *its_own])
    assert other.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["places.sqlite"]  # no lock file, -wal or -shm beside it


def test_the_ladder_names_the_house_bots_it_started_not_those_it_refused_to_take_over(tmp_path):
    """A registered bot named like a house strategy's (house-random, another owner's) is
    not taken over; the "ladder on" line then listed every strategy asked for, so the log
    said house-random played when it did not (an operator's pass). Now it names the house
    bots started, beside the warning about the one refused."""
    db = str(tmp_path / "h.db")
    assert heartsd("ladder", "add-bot", "house-random", "--owner", "alice", "--db", db, "--create").returncode == 0
    proc = subprocess.Popen([*HEARTSD, "serve", "--port", "0", "--db", db, "--log-format", "json", "--log-level", "info",
                             "--admin-token", ADMIN, "--ladder", "--ladder-house", "random", "heuristic"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    seen = b""
    deadline = time.monotonic() + 60
    while b'"ladder on"' not in seen and time.monotonic() < deadline:
        if select.select([proc.stderr], [], [], 1)[0]:
            seen += os.read(proc.stderr.fileno(), 65536)  # type: ignore[union-attr]
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    events = [json.loads(line) for line in (seen + err).decode().splitlines() if line.startswith("{")]
    on = [e for e in events if e["event"] == "ladder on"]
    refused = [e for e in events if "not taking over a registered bot" in str(e["event"])]
    assert len(on) == 1 and on[0]["house_bots"] == ["house-heuristic"], on
    assert [e["bot"] for e in refused] == ["house-random"], refused


def test_serve_warns_when_it_creates_a_new_store_and_only_then(tmp_path):
    """`heartsd serve --db heartsd.bd` (a typo) started on a new, empty store without a
    word, so the operator's ladder seemed gone. Now one warning names the new file's
    absolute path; on the existing store, the next start says nothing of the kind."""
    typo = tmp_path / "heartsd.bd"

    def serve_once(new: bool) -> list[dict[str, object]]:
        proc = subprocess.Popen([*HEARTSD, "serve", "--port", "0", "--db", "heartsd.bd", "--log-format", "json",
                                 "--log-level", "warning", "--admin-token", ADMIN], cwd=tmp_path,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert b"listening on" in proc.stdout.readline()  # type: ignore[union-attr]
        seen = b""
        if new:  # the warning follows "listening on": wait for it (a fixed 0.5 s was short under load)
            deadline = time.monotonic() + 60
            while b"new, empty store" not in seen and time.monotonic() < deadline:
                if select.select([proc.stderr], [], [], 1)[0]:
                    seen += os.read(proc.stderr.fileno(), 65536)  # type: ignore[union-attr]
        else:
            time.sleep(0.5)  # time enough for a warning that should not come
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        return [json.loads(line) for line in (seen + err).decode().splitlines() if line.startswith("{")]

    first = [e for e in serve_once(new=True) if "new, empty store" in str(e["event"])]
    assert typo.is_file()
    assert len(first) == 1 and first[0]["level"] == "warning", first
    assert str(first[0]["event"]).startswith(f"created a new, empty store at {typo};") and "--db" in first[0]["event"]
    assert "db_path in the --config file" in str(first[0]["event"])  # before: only --db and HEARTSD_DB_PATH
    again = [e for e in serve_once(new=False) if "store" in str(e["event"])]
    assert again == [], again


def test_serve_warns_of_a_heartsd_variable_that_names_no_setting(tmp_path):
    """HEARTSD_DECISON_MS=300 (a typo) was ignored without a word: the daemon ran on the
    default clock. Now one warning names the variable and the setting it most resembles;
    the deployment's own HEARTSD_HEALTH_OPTIONS (deploy/Dockerfile) is not a typo."""
    env = {**os.environ, "HEARTSD_DECISON_MS": "300", "HEARTSD_HEALTH_OPTIONS": "--ca x.pem"}
    proc = subprocess.Popen([*HEARTSD, "serve", "--port", "0", "--db", str(tmp_path / "d.db"), "--log-format", "json",
                             "--log-level", "warning", "--admin-token", ADMIN], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert "listening on" in proc.stdout.readline()
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    warned = [e for e in (json.loads(line) for line in err.splitlines() if line.startswith("{"))
              if "names no setting" in str(e["event"])]
    assert [(e["level"], e["event"]) for e in warned] == [
        ("warning", "HEARTSD_DECISON_MS names no setting and is ignored (did you mean HEARTSD_DECISION_MS?)")]


def test_a_port_in_use_is_one_line_and_exit_2_and_touches_no_store(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        out = heartsd("serve", "--port", str(port), "--db", str(tmp_path / "new.db"))
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        f"heartsd: cannot listen on 127.0.0.1:{port}: the port is in use (another heartsd, or another program); "
        "stop it, or choose another --port (HEARTSD_PORT; 0 picks a free one)"]
    assert out.stdout == "", "not even a generated admin token"
    assert not (tmp_path / "new.db").exists()


# -- commands that say what to do -----------------------------------------------------------------


def test_replay_verify_and_show_work_on_postgresql(tmp_path, postgres_server):
    from tests.postgres import fresh_database

    with fresh_database(postgres_server) as url:
        async def scenario() -> str:
            async with running_daemon(tmp_path, db=url) as daemon:
                match_id = await daemon.create_match(["house:random"] * 4)
                await daemon.wait_finished(match_id)
                return match_id

        match_id = run(scenario())
        verify = heartsd("replay", "verify", "--db", url)
        assert verify.returncode == 0 and f"{match_id}: OK" in verify.stdout, verify.stdout + verify.stderr
        show = heartsd("replay", "show", match_id, "--db", url)
        assert show.returncode == 0 and "trick:" in show.stdout, show.stderr
    gone = heartsd("replay", "verify", "--db", url)
    assert gone.returncode == 2 and "cannot open the store" in gone.stderr and "Traceback" not in gone.stderr


def test_ladder_commands_refused_print_only_the_error_with_the_clients_exit_codes(tmp_path):
    """An unknown or malformed bot name is a usage error (2), a name already taken is
    refused (3); before, each exited 1, the code of a bot that failed."""
    db = str(tmp_path / "l.db")
    assert heartsd("ladder", "add-bot", "known", "--owner", "o", "--db", db, "--create").returncode == 0
    cases = {
        ("rotate", "nosuchbot"): (2, "heartsd ladder: no bot named 'nosuchbot'"),
        ("revoke", "nosuchbot"): (2, "heartsd ladder: no active bot named 'nosuchbot'"),
        # A near spelling is suggested (before: only "no bot named"; an organiser's pass).
        ("rotate", "knwon"): (2, "heartsd ladder: no bot named 'knwon' (did you mean 'known'?)"),
        ("revoke", "Known"): (2, "heartsd ladder: no active bot named 'Known' (did you mean 'known'?)"),
        ("add-bot", "bad name!", "--owner", "o"): (2, "heartsd ladder: a bot name is 1-64 ASCII letters, digits, '-' or "
                                                      "'_', and it needs an owner"),
        ("add-bot", "known", "--owner", "o"): (3, "heartsd ladder: a bot named 'known' exists already (owner 'o'): "
                                                  "`heartsd ladder rotate known` gives it a new token"),
    }
    for args, (code, message) in cases.items():
        out = heartsd("ladder", *args, "--db", db)
        assert (out.returncode, out.stderr.strip(), out.stdout) == (code, message, ""), args
    # A revoked bot, revoked or registered again (an organiser's pass: "no active bot named
    # 'gone' (did you mean 'known'?)" and a bare "exists already", neither naming the way back)
    assert heartsd("ladder", "add-bot", "gone", "--owner", "o", "--db", db).returncode == 0
    assert heartsd("ladder", "revoke", "gone", "--db", db).returncode == 0
    for args, (code, message) in {
        ("revoke", "gone"): (2, "heartsd ladder: bot 'gone' is revoked already: `heartsd ladder rotate gone` gives it "
                                "a new token and lets it in again"),
        ("add-bot", "gone", "--owner", "o"): (3, "heartsd ladder: a bot named 'gone' exists already, revoked (owner "
                                                 "'o'): `heartsd ladder rotate gone` gives it a new token and lets it in "
                                                 "again"),
    }.items():
        out = heartsd("ladder", *args, "--db", db)
        assert (out.returncode, out.stderr.strip(), out.stdout) == (code, message, ""), args


UNKNOWN = "unknown ruleset 'standrad'; known: classic, hartenjagen, hartenjagen-quick, omnibus, standard"


@pytest.mark.parametrize("command", [
    [*HEARTSD, "ladder", "leaderboard", "--ruleset", "standrad"],
    [*HEARTSD, "ladder", "recompute", "--ruleset", "standrad"],
    [*HEARTSD, "serve", "--port", "0", "--ladder-ruleset", "standrad"],
    [*HEARTSD, "serve", "--port", "0", "--house-ruleset", "standrad"],
    [*HEARTSBOT, "play", "--server", "127.0.0.1:1", "--token", "t", "--name", "n", "--strategy", "random",
     "--rulesets", "standrad"],
    [*HEARTSBOT, "stdio", "--server", "127.0.0.1:1", "--token", "t", "--name", "n", "--rulesets", "standrad", "--",
     "true"],
    [*HEARTSBOT, "local", "--ruleset", "standrad"],
])
def test_an_unknown_ruleset_in_any_command_lists_the_known_ones(tmp_path, command):
    db = str(tmp_path / "l.db")
    Store(db).close()
    out = subprocess.run([*command, "--db", db] if command[2] in ("ladder",) else command, capture_output=True,
                         text=True, timeout=60, cwd=tmp_path)
    assert out.returncode == 2, out.stdout + out.stderr
    assert UNKNOWN.replace("unknown ruleset", "") in out.stderr.replace("unknown rulesets", "unknown ruleset"), out.stderr
    assert "no rated" not in out.stdout


@pytest.mark.parametrize("url", ["postgresql://arena@127.0.0.1:1/hearts?password=S3cretPassw0rd",
                                 "postgresql://arena:S3cretPassw0rd@127.0.0.1:1/hearts?connect_timeout=2"])
def test_a_store_that_cannot_be_opened_is_named_without_its_password(url):
    """Before (an operator's attack pass): a password given as libpq's ``password=`` query
    parameter was printed in full in the error (the ``user:password@`` form was hidden)."""
    refused = subprocess.run([*HEARTSD, "serve", "--db", url, "--port", "0"], capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2, refused
    assert "cannot open the store" in refused.stderr and "***" in refused.stderr, refused.stderr
    assert "S3cret" not in refused.stderr + refused.stdout


def test_an_ipv6_host_is_served_with_or_without_brackets(tmp_path):
    """Before (an operator's attack pass): --host ::1 failed with "cannot listen on ::1:0"
    (gRPC needs the brackets), though the settings took ::1 for loopback."""
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        pytest.skip("this machine has no IPv6 loopback")
    for host in ("::1", "[::1]"):
        daemon = subprocess.Popen([*HEARTSD, "serve", "--host", host, "--port", "0", "--db", str(tmp_path / "v6.db")],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            line = ""
            while "listening on" not in line:
                line = daemon.stdout.readline()  # type: ignore[union-attr]
                assert line, daemon.stderr.read()  # type: ignore[union-attr]
            address = line.split("listening on ", 1)[1].strip()
            assert address.startswith("[::1]:"), address
            health = subprocess.run([*HEARTSD, "health", "--server", address], capture_output=True, text=True, timeout=60)
            assert health.returncode == 0 and "SERVING" in health.stdout, health
        finally:
            daemon.terminate()
            daemon.wait(30)


def test_a_damaged_store_is_named_damaged_not_an_internal_error_or_a_traceback(tmp_path):
    """Before (an operator's attack pass): a store with garbage pages (its header intact)
    made every call that read them INTERNAL "internal error" and `heartsd replay verify` a
    traceback. Now the calls end DATA_LOSS and the commands exit 2, saying the store is
    damaged and what to do."""
    db = str(tmp_path / "h.db")
    admin = "admin-token-damaged-1"
    player, _ = _serving("--db", db, "--house-matches", "2", "--admin-token", admin)
    try:
        deadline = time.time() + 60
        finished = 0
        while time.time() < deadline and (finished < 22 or os.path.getsize(db) < 60 * 4096):
            time.sleep(0.5)
            store = Store.open_existing(db)
            finished = len(store.list(status="finished", limit=1000))
            store.close()
        assert finished >= 22 and os.path.getsize(db) >= 60 * 4096, (finished, os.path.getsize(db))
    finally:
        player.send_signal(signal.SIGINT)
        player.wait(60)
    with open(db, "r+b") as file:  # garbage into every 8th page past the 20th (the schema's are kept)
        for offset in range(20 * 4096, os.path.getsize(db), 8 * 4096):
            file.seek(offset)
            file.write(os.urandom(4096))
    verify = subprocess.run([*HEARTSD, "replay", "verify", "--db", db], capture_output=True, text=True, timeout=60)
    assert "Traceback" not in verify.stderr, verify
    # Random garbage: where it breaks SQLite's own pages the store is damaged (exit 2); where
    # it hits only stored records, each such row is named and the run goes on (exit 1).
    if verify.returncode == 2:
        assert "the store is damaged" in verify.stderr, verify
    else:
        assert verify.returncode == 1 and "FAILED: its row cannot be read" in verify.stdout, verify
    # Served anyway (the start's check refuses a damaged file: the test above).
    daemon, target = _serving("--db", db, "--admin-token", admin, env={"HEARTSD_STORE_CHECK": "false"})
    try:
        listed = subprocess.run([*HEARTSD, "admin", "matches", "--server", target, "--admin-token", admin,
                                 "--limit", "1000"], capture_output=True, text=True, timeout=60)
        assert "Traceback" not in listed.stderr and "internal error" not in listed.stderr, listed
        if listed.returncode != 0:  # SQLite's pages: the call ends DATA_LOSS
            assert "DATA_LOSS" in listed.stderr and "damaged" in listed.stderr, listed
        else:  # only stored rows: listed as damaged, the rest as they are
            assert "damaged" in listed.stdout, listed
    finally:
        daemon.terminate()
        daemon.wait(30)


def test_a_truncated_store_is_named_damaged_with_what_to_do_by_every_command(tmp_path):
    """An operator's pass: a store cut short (a disk that filled while it was copied, a
    partial download of a backup) was "cannot read the store h.db (--db / HEARTSD_DB_PATH):
    database disk image is malformed" from serve and every command: no word that the store
    is damaged or what to do, where README promises both. Each now says the store is damaged
    and to restore it from a copy, exit 2, the file untouched; a file that is no database at
    all is said to be none."""
    import shutil

    db, _ = make_store_with_a_match(tmp_path)
    cut = str(tmp_path / "cut.db")
    with open(db, "rb") as whole, open(cut, "wb") as part:
        part.write(whole.read(os.path.getsize(db) // 2))
    shutil.copy(cut, tmp_path / "cut.db.orig")
    text = tmp_path / "notes.db"
    text.write_text("minutes of the organisers' meeting, long enough to be read as a database header\n" * 20)
    commands = (("serve", "--port", "0"), ("ladder", "leaderboard"), ("ladder", "add-bot", "n", "--owner", "o"),
                ("replay", "verify"), ("store", "restored"))
    for args in commands:
        out = heartsd(*args, "--db", cut, timeout=30)
        assert out.returncode == 2, (args, out)
        assert "damaged" in out.stderr and "from a copy" in out.stderr, (args, out.stderr)
        assert "Traceback" not in out.stderr and "listening on" not in out.stdout, (args, out.stderr)
        out = heartsd(*args, "--db", str(text), timeout=30)
        assert out.returncode == 2 and "not a SQLite database" in out.stderr, (args, out.stderr)
    backup = heartsd("store", "backup", "--db", cut, str(tmp_path / "copy.db"))
    assert backup.returncode == 2 and "damaged" in backup.stderr and "from a copy" in backup.stderr, backup
    assert Path(cut).read_bytes() == (tmp_path / "cut.db.orig").read_bytes()


def _damage_the_matches_table(db: str) -> None:
    """Garbage over the root page of the ``matches`` table (SQLite's B-tree), the rest intact."""
    store = Database.open(db)
    root = store.query("SELECT rootpage FROM sqlite_master WHERE name = 'matches'")[0][0]
    page_size = store.query("PRAGMA page_size")[0][0]
    store.close()
    with open(db, "r+b") as file:
        file.seek((root - 1) * page_size)
        file.write(bytes(range(256)) * (page_size // 256))


def test_serve_refuses_a_damaged_store_saying_why_and_serves_it_when_told_to(tmp_path):
    """Before (an organiser's pass): `heartsd serve` started on a store whose pages were
    garbage without a word, and went on writing a prize ladder's results into it; the damage
    showed only when a call read a broken row. Now the daemon checks the file at start
    (SQLite's quick_check), refuses it (exit 2) naming the store, the damage and what to do,
    and serves it only with ``store_check`` off."""
    db, match_id = make_store_with_a_match(tmp_path)
    _damage_the_matches_table(db)
    before = os.path.getmtime(db), os.path.getsize(db)
    out = heartsd("serve", "--port", "0", "--db", db, timeout=30)
    assert out.returncode == 2, out
    assert f"the store {db} is damaged" in out.stderr and "quick_check" in out.stderr, out.stderr
    assert "HEARTSD_STORE_CHECK=false" in out.stderr and "backup" in out.stderr, out.stderr
    assert "Traceback" not in out.stderr and "listening on" not in out.stdout
    assert (os.path.getmtime(db), os.path.getsize(db)) == before  # nothing migrated or written
    daemon, _ = _serving("--db", db, env={"HEARTSD_STORE_CHECK": "false"})
    try:
        assert daemon.poll() is None
    finally:
        daemon.terminate()
        daemon.wait(30)


def test_a_match_another_daemon_ended_in_the_store_is_announced_aborted_not_finished(tmp_path, monkeypatch):
    """Another daemon of the instance took the lease over while this one stalled (the
    documented PostgreSQL takeover) and marked this one's running match aborted. Before (an
    attack pass, 3 of 3): storing the result failed, the row was no longer running, that
    counted as this daemon's own commit, and the match was announced finished while the store
    held it aborted with no record. Now it is announced aborted, as the store holds it."""
    import asyncio

    import heartsd.arena

    from .harness import Bot, first_legal

    monkeypatch.setattr(heartsd.arena, "STORE_RETRY_DELAYS_S", (0.05,))
    go = asyncio.Event()

    async def held(request, bot):
        await go.wait()
        return first_legal(request, bot)

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            alice = await Bot(daemon, "alice", policy=held).start()
            match_id = await daemon.create_match(["alice", "house:random", "house:random", "house:random"], deals=1)
            while not any(m.HasField("update") and m.update.HasField("request") for m in alice.received):
                await asyncio.sleep(0.01)
            taken_over = daemon.arena.store.abort_interrupted()  # what the other daemon does at its start
            go.set()
            announced = await alice.wait_ended(match_id)
            await alice.close()
            return taken_over, match_id, announced, daemon.stored(match_id)

    taken_over, match_id, announced, stored = run(scenario())
    assert taken_over == [match_id]
    assert stored.status == "aborted" and stored.reason == "server stopped while the match was running"
    assert announced.status == game_pb2.MATCH_STATUS_ABORTED, "announced finished while the store holds it aborted"


@contextlib.contextmanager
def _a_lease_and_a_second_store(postgres_server: str):  # type: ignore[no-untyped-def]
    """A fresh database with instance pod-0's lease held, and a second daemon's store of that
    instance: (url, lease, that store)."""
    from tests.postgres import fresh_database

    with fresh_database(postgres_server) as url:
        store, lease = open_leased(url, "pod-0", lambda: Store(url, "pod-0"))
        other = Store(url, "pod-0")
        try:
            yield url, lease, other
        finally:
            lease.release()
            other.close()
            store.close()


def _end_lock_connection(url: str) -> None:
    """End the server processes holding the store's lease locks, as a PostgreSQL restart or
    an operator would, and wait until they are gone."""
    import psycopg

    from heartsd.lease import LOCK_SPACE

    with psycopg.connect(url, autocommit=True) as admin:
        pids = [row[0] for row in admin.execute(
            "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND classid = %s AND database = "
            "(SELECT oid FROM pg_database WHERE datname = current_database())", (LOCK_SPACE,))]
        assert pids
        for pid in pids:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        for _ in range(200):  # the backend ends, and its lock goes, a moment later (under load, later)
            if not admin.execute("SELECT 1 FROM pg_stat_activity WHERE pid = ANY(%s)", (pids,)).fetchall():
                break
            time.sleep(0.05)


def _dead(connection) -> bool:  # type: ignore[no-untyped-def]
    try:
        connection.execute("SELECT 1")
        return False
    except Exception:  # noqa: BLE001
        return True


def test_a_postgresql_lease_whose_lock_connection_ended_takes_the_lock_again_or_is_lost(postgres_server):
    """A review of the lease's fencing: another daemon takes the lease over at once when the
    holder's advisory lock is free, and that lock lives on one connection of its own. If
    that connection ended while the holder lived (a server restart, a pooler or an
    operator ending it), the holder's heartbeats still renewed its row, and a second daemon
    of its instance took the lease at once, and would serve the seeds of the matches the
    first still played. Now the heartbeat takes the lock again on a new connection (then
    a second daemon is refused), or, if another daemon holds it, says the lease is lost."""
    import psycopg

    with _a_lease_and_a_second_store(postgres_server) as (url, lease, other):
        _end_lock_connection(url)
        # Another instance's daemon ending its work (server.adopt_orphans) needs more than a
        # free lock: a heartbeat gone stale too, or it would abort a live daemon's matches.
        with pytest.raises(LeaseHeld, match="heartbeat 0 s ago"):
            take_over(url, other.db, "pod-0", None)
        assert lease.heartbeat()
        with pytest.raises(LeaseHeld):  # before: taken over at once, the lock being free
            RowLease.acquire(other.db, "pod-0")
        _end_lock_connection(url)
        with psycopg.connect(url, autocommit=True) as taker:  # another daemon's lock, first
            from heartsd.lease import _try_lock

            assert _try_lock(taker, "pod-0")
            assert not lease.heartbeat()
        assert "another daemon of this instance holds the lock" in lease.lost_reason
        # This daemon's own old connection still holding the lock (its client side broke, the
        # server's lives on) is not another daemon: it is ended, and the lock taken again.
        store2, lease2 = open_leased(url, "pod-1", lambda: Store(url, "pod-1"))
        orphan, dead = lease2._session, psycopg.connect(url)
        dead.close()
        lease2._session = dead  # the client side is gone; the server still holds the lock for it
        try:
            assert lease2.heartbeat()
            assert orphan.closed or orphan.broken or _dead(orphan)
            with pytest.raises(LeaseHeld):
                RowLease.acquire(other.db, "pod-1")
        finally:
            lease2.release()
            store2.close()


def test_a_lease_taking_its_lock_again_waits_out_a_daemon_that_only_looks(postgres_server):
    """A test's failure on a busy machine: the lease's lock connection ended, then a daemon
    of another instance looked whether this one's work was orphaned (``take_over``): it took
    the free lock, found the heartbeat fresh, refused, and closed its connection, whose
    server process let go of the lock a moment later. The heartbeat's new connection found
    that process still holding it, read it as another daemon's lease, and stopped the daemon.
    Now a refusal lets go of the lock before it closes, and the heartbeat tries again for a
    moment while another holder only looks; one that keeps the lock still ends the lease."""
    import threading

    import psycopg

    from heartsd.lease import _try_lock

    with _a_lease_and_a_second_store(postgres_server) as (url, lease, other):
        _end_lock_connection(url)
        with pytest.raises(LeaseHeld, match="heartbeat 0 s ago"):
            take_over(url, other.db, "pod-0", None)
        with psycopg.connect(url, autocommit=True) as looker:  # free at once: the refusal let go
            assert _try_lock(looker, "pod-0")
            # A looker holding the lock while the heartbeat starts, and letting go 0.3 s later.
            letting_go = threading.Timer(0.3, lambda: looker.execute(
                "SELECT pg_advisory_unlock_all()"))
            letting_go.start()
            try:
                assert lease.heartbeat(), lease.lost_reason  # before: lost to the looker
            finally:
                letting_go.join()
        with pytest.raises(LeaseHeld):  # held again: a second daemon is refused
            RowLease.acquire(other.db, "pod-0")


@pytest.mark.parametrize("cut", ["refused", "hangs"])
def test_a_daemon_that_cannot_renew_its_lease_stops_its_matches_before_another_may_take_it_over(monkeypatch, cut):
    """An attack pass (PostgreSQL): a daemon cut off from the store retried its heartbeat for
    ever and played on, while a second daemon of its instance took the lease over once it
    was STALE_S old, marked the matches aborted and served their seeds: every hand was
    public while the first one sent 81 more requests. Now a daemon whose lease has gone
    unrenewed for FENCE_S (before anyone may take it over) aborts its running matches at
    once and stops, whether the heartbeat fails or never answers (a network that drops
    packets). Before, the keeper kept retrying and the daemon never stopped."""
    import asyncio
    import threading

    from heartsd import lease as leases
    from heartsd import server as daemon

    monkeypatch.setattr(daemon, "HEARTBEAT_S", 0.05)
    monkeypatch.setattr(daemon, "FENCE_S", 0.5)
    released = threading.Event()

    class CutOff:
        outlives_store = False
        lost_reason = ""
        taken_over_when_stale = True
        renewals = 0

        def heartbeat(self) -> bool:
            self.renewals += 1
            if self.renewals <= 3:
                return True
            if cut == "hangs":
                released.wait(30)
            raise ConnectionError("could not reach the store")

    async def scenario() -> tuple[bool, bool, str | None]:
        stop, hurry = asyncio.Event(), asyncio.Event()
        keeper = asyncio.get_running_loop().create_task(daemon._keep_lease(CutOff(), stop, hurry))
        try:
            await asyncio.wait_for(stop.wait(), 20)
        except asyncio.TimeoutError:
            pass
        finally:
            released.set()
            keeper.cancel()
        return stop.is_set(), hurry.is_set(), keeper.result() if keeper.done() and not keeper.cancelled() else None

    with capture_logs() as logs:
        stopped, hurried, keeper_result = run(scenario())
    assert stopped and hurried  # before: neither, ever
    assert any("could not renew the store lease for" in e["event"] for e in logs), logs
    assert keeper_result.startswith("could not renew the store lease for")
    assert leases.FENCE_S < leases.STALE_S  # stopped before a takeover


@pytest.mark.parametrize("lease_kind", ["slow row", "failing file lock"])
def test_a_slow_renewal_or_a_lease_nobody_takes_over_does_not_stop_the_daemon(monkeypatch, lease_kind):
    """A review of the fence above: a renewal was sent only a full heartbeat after the last
    one answered, so renewals that took a little longer than HEARTBEAT_S came every ~3 of
    them and a daemon whose store answered was fenced (all its matches aborted) while its
    row was far from stale; and a SQLite lock, which nothing takes over by time, was fenced
    too. Now renewals go out every HEARTBEAT_S (at once after a slow one), and only a lease
    another daemon can take over when stale is fenced."""
    import asyncio
    import time as clock

    from heartsd import server as daemon

    monkeypatch.setattr(daemon, "HEARTBEAT_S", 0.25)
    monkeypatch.setattr(daemon, "FENCE_S", 1.0)

    class Lease:
        outlives_store = False
        lost_reason = ""
        taken_over_when_stale = lease_kind == "slow row"
        renewals = 0

        def heartbeat(self) -> bool:
            self.renewals += 1
            if lease_kind == "slow row":
                clock.sleep(0.3)  # a little longer than a heartbeat: the store is slow, not gone
                return True
            raise OSError("the lock file's folder is not there")

    lease = Lease()

    async def scenario() -> bool:
        stop, hurry = asyncio.Event(), asyncio.Event()
        keeper = asyncio.get_running_loop().create_task(daemon._keep_lease(lease, stop, hurry))
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(stop.wait(), 5)
        keeper.cancel()
        await asyncio.gather(keeper, return_exceptions=True)
        return stop.is_set()

    assert not run(scenario()), "fenced"
    assert lease.renewals >= 8  # renewed all along (every 0.25-0.3 s over 5 s)


@pytest.mark.parametrize("mishap", ["renamed", "deleted", "replaced", "wal deleted", "overwritten"])
def test_a_store_moved_or_deleted_under_the_daemon_is_seen_at_the_next_heartbeat(tmp_path, mishap):
    """Before (an attack pass): a daemon whose store was renamed or deleted, or lost its
    -wal file, went on announcing results that SQLite wrote to files nobody would open
    again: 22 matches announced finished, none left after the next start. The lease's
    heartbeat now says the store is gone, and why (the daemon then stops: _keep_lease)."""
    import os

    db = tmp_path / "a.db"
    store = Store(str(db))
    lease = FileLease.acquire(str(db), "heartsd")
    try:
        assert lease.heartbeat()
        if mishap == "renamed":
            os.rename(db, tmp_path / "moved.db")
        elif mishap == "deleted":
            os.unlink(db)
        elif mishap == "replaced":  # another file put in its place (a restore from a backup)
            Store(str(tmp_path / "other.db")).close()
            os.replace(tmp_path / "other.db", db)
        elif mishap == "overwritten":  # `cp backup.db a.db` over the live file: the same inode (an organiser's pass)
            import shutil

            from heartsd.backup import backup

            backup(str(db), str(tmp_path / "copy.db"))
            shutil.copyfile(tmp_path / "copy.db", db)
        else:
            os.unlink(f"{db}-wal")
        assert not lease.heartbeat()
        said = {"wal deleted": "write-ahead log", "overwritten": "overwritten in place"}
        assert said.get(mishap, "renamed, deleted or replaced") in lease.lost_reason
    finally:
        store.close()
        lease.release()


def test_a_write_ahead_log_without_its_database_is_not_replaced_by_a_new_store(tmp_path):
    """Before (an attack pass): after the store was renamed under a running daemon, `serve`
    on the original path made a new, empty store there, and SQLite deleted the old -wal file
    beside it, which held every result since the rename (22 matches). Now serve refuses."""
    db = tmp_path / "a.db"
    (tmp_path / "a.db-wal").write_bytes(b"\0" * 32)
    out = subprocess.run([sys.executable, "-m", "heartsd.cli", "serve", "--port", "0", "--db", str(db)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2, out.stderr
    assert "its write-ahead log" in out.stderr and "Put the database file back" in out.stderr
    assert not db.exists() and (tmp_path / "a.db-wal").stat().st_size == 32


def test_a_damaged_row_is_one_failure_of_replay_verify_and_a_clear_error_of_replay_show(tmp_path):
    """Before (an attack pass): `replay verify` over the store died with a traceback at the
    first row whose record did not parse, and verified nothing after it; `replay show` of
    such a match (the disputed ones) was a traceback too."""
    async def play():
        async with running_daemon(tmp_path) as daemon:
            ids = [await daemon.create_match(["house:random"] * 4, deals=1) for _ in range(2)]
            for match_id in ids:
                await daemon.wait_finished(match_id)
            return ids

    damaged, sound = run(play())
    db = str(tmp_path / "heartsd.db")
    store = Store(db)
    with store.db.transaction() as tx:
        tx.execute("UPDATE matches SET record = ? WHERE id = ?", (b"\xff\x00garbage", damaged))
    store.close()
    verify = subprocess.run([sys.executable, "-m", "heartsd.cli", "replay", "verify", "--db", db],
                            capture_output=True, text=True, timeout=60)
    assert verify.returncode == 1 and "Traceback" not in verify.stderr, verify.stderr
    assert f"{damaged}: FAILED: its row cannot be read" in verify.stdout and f"{sound}: OK" in verify.stdout
    assert "1 verified, 1 failed" in verify.stdout
    show = subprocess.run([sys.executable, "-m", "heartsd.cli", "replay", "show", damaged, "--db", db],
                          capture_output=True, text=True, timeout=60)
    assert show.returncode == 1 and "Traceback" not in show.stderr, show.stderr
    assert f"match {damaged} cannot be shown" in show.stderr


def test_a_read_only_command_on_a_store_older_than_it_reads_says_how_to_upgrade_it(tmp_path):
    """Before (an attack pass): `replay verify` on a schema 8 store was a traceback ("no
    such column: set_id"), and `ladder leaderboard` below 12 ("no such column: auto")."""
    db = str(tmp_path / "old.db")
    store = Store(db)
    with store.db.transaction() as tx:
        tx.execute("UPDATE schema_version SET version = 8")
    store.close()
    for command in (["replay", "verify"], ["ladder", "leaderboard"]):
        out = subprocess.run([sys.executable, "-m", "heartsd.cli", *command, "--db", db],
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
        assert "is at schema 8, older than this heartsd reads" in out.stderr and "heartsd serve" in out.stderr


def test_a_damaged_record_is_data_loss_naming_the_tool_not_internal(tmp_path):
    """Before (an attack pass): GetMatchRecord of a match whose stored record does not
    parse answered INTERNAL "internal error"."""
    import asyncio

    import grpc
    from heartsbot.proto import spectator_pb2, spectator_pb2_grpc

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            match_id = await daemon.create_match(["house:random"] * 4, deals=1)
            await daemon.wait_finished(match_id)
            with daemon.arena.store.db.transaction() as tx:
                tx.execute("UPDATE matches SET record = ? WHERE id = ?", (b"\xff\x00garbage", match_id))
            async with daemon.channel() as channel:
                stub = spectator_pb2_grpc.SpectatorServiceStub(channel)
                try:
                    await stub.GetMatchRecord(spectator_pb2.GetMatchRecordRequest(match_id=match_id), timeout=10)
                except grpc.aio.AioRpcError as exc:
                    return exc.code(), exc.details()
            return None

    code, details = run(scenario())
    assert code == grpc.StatusCode.DATA_LOSS, (code, details)
    assert "does not parse" in details and "heartsd replay verify" in details


def test_one_damaged_row_is_listed_as_damaged_and_the_listing_still_answers(tmp_path):
    """Before (an attack pass): ListMatches failed (INTERNAL) for every listing that held a
    row whose stored result did not parse, so `heartsd admin matches` stopped working."""
    import grpc
    from heartsbot.proto import spectator_pb2, spectator_pb2_grpc

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            ids = [await daemon.create_match(["house:random"] * 4, deals=1) for _ in range(2)]
            for match_id in ids:
                await daemon.wait_finished(match_id)
            with daemon.arena.store.db.transaction() as tx:
                tx.execute("UPDATE matches SET result = ? WHERE id = ?", (b"\xff\x00garbage", ids[0]))
            async with daemon.channel() as channel:
                listed = await spectator_pb2_grpc.SpectatorServiceStub(channel).ListMatches(
                    spectator_pb2.ListMatchesRequest(), timeout=10)
            return ids, listed

    ids, listed = run(scenario())
    by_id = {m.match_id: m for m in listed.matches}
    assert set(ids) <= set(by_id)
    assert "does not parse" in by_id[ids[0]].result.reason, by_id[ids[0]]
    assert by_id[ids[1]].result.totals, "the sound match keeps its result"


def test_damaged_stored_events_are_data_loss_to_a_watcher_and_a_reason_on_the_web(tmp_path):
    """Before (an attack pass): WatchMatch of a finished match whose stored events did not
    parse ended UNKNOWN "Unexpected <class 'ValueError'>", and the web's replay of a damaged
    record answered 500 "internal error"."""
    import aiohttp
    import grpc
    from heartsbot.proto import admin_pb2, spectator_pb2, spectator_pb2_grpc
    from heartsd.arena import SeatRequest

    from tests.web.harness import web_daemon

    async def scenario():
        async with web_daemon(tmp_path) as web:
            arena = web.arena
            runner = await arena.create_match("standard", 4, admin_pb2.RulesetOptions(),
                                              game_pb2.MatchFormat(fixed_deals=1), None,
                                              [SeatRequest(house="random")] * 4, game_pb2.ClockSettings())
            await runner.finished.wait()
            with arena.store.db.transaction() as tx:
                tx.execute("UPDATE matches SET events = ?, record = ? WHERE id = ?",
                           (b"\xff" * 64, b"\xff\x00garbage", runner.id))
            async with grpc.aio.insecure_channel(f"127.0.0.1:{web.grpc_port}") as channel:
                stub = spectator_pb2_grpc.SpectatorServiceStub(channel)
                try:
                    async for _ in stub.WatchMatch(spectator_pb2.WatchMatchRequest(match_id=runner.id), timeout=10):
                        pass
                    watched = None
                except grpc.aio.AioRpcError as exc:
                    watched = (exc.code(), exc.details())
            async with aiohttp.ClientSession() as http, http.get(f"{web.url}/api/replay/{runner.id}") as r:
                page = (r.status, await r.json())
            return watched, page

    watched, page = run(scenario())
    assert watched is not None and watched[0] == grpc.StatusCode.DATA_LOSS, watched
    assert page[0] == 500 and "damaged or was edited" in page[1]["error"], page


def test_a_file_system_without_locks_on_the_database_file_falls_back_to_the_lock_file(tmp_path, monkeypatch):
    """The database file's lock is Linux's open-file-description lock: a file system that
    refuses it (ENOLCK, EINVAL: some network and FUSE file systems) must not stop a start
    (a review of the lease change: it raised). The lock file still keeps a second daemon
    of the instance out."""
    import errno
    import fcntl

    real = fcntl.fcntl

    def refusing(fd, cmd, arg=0):
        if cmd == fcntl.F_OFD_SETLK:
            raise OSError(errno.ENOLCK, "No locks available")
        return real(fd, cmd, arg)

    monkeypatch.setattr(fcntl, "fcntl", refusing)
    db = str(tmp_path / "a.db")
    lease = FileLease.acquire(db, "heartsd")
    with pytest.raises(LeaseHeld, match="pid"):
        FileLease.acquire(db, "heartsd")
    lease.release()


def test_a_directory_given_as_the_store_is_refused_by_name(tmp_path):
    """The lease opens the database file itself now: a directory there was an
    IsADirectoryError traceback before the store could refuse it by name (a review)."""
    out = subprocess.run([sys.executable, "-m", "heartsd.cli", "serve", "--port", "0", "--db", str(tmp_path)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "is not a file" in out.stderr and "Traceback" not in out.stderr, out.stderr


def test_a_daemon_takes_over_the_work_of_an_instance_whose_daemon_is_gone(tmp_path, store_url):
    """An attack pass: a daemon restarted under another ``--instance`` (or a replica removed
    for good) left its running matches "running" for ever, their sets never released or
    rated, and its tournament stranded: only its own instance directs it. No word was said,
    and `admin cancel` on such a match answered "already over". Now a daemon that starts
    takes over the work of an instance whose lease is free: its matches are marked aborted,
    as its own next start would, and its tournaments are directed here. An instance whose
    daemon runs keeps its work, and a cancel sent to another daemon names the one that runs
    the match."""
    import asyncio

    import grpc

    from heartsbot.proto import admin_pb2, admin_pb2_grpc, tournament_pb2, tournament_pb2_grpc

    from .harness import auth
    from .test_daemon_process import start

    db = store_url  # on SQLite (the instance's lock file) and on PostgreSQL (its lease row and lock)
    house = ("--ladder", "--ladder-house", "random", "random", "random", "random", "--ladder-deals", "1", "--db", db)
    roster = ["house-random", "house-random-2", "house-random-3", "house-random-4"]

    async def on_a(port: int) -> tuple[str, str]:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            tournaments = tournament_pb2_grpc.TournamentServiceStub(channel)
            for _ in range(300):  # until the house bots are connected
                try:
                    created = (await tournaments.CreateTournament(tournament_pb2.CreateTournamentRequest(
                        name="left behind", bots=roster, rounds=2, deals_per_match=1), metadata=auth(ADMIN))).tournament
                    break
                except grpc.aio.AioRpcError as exc:
                    assert exc.code() == grpc.StatusCode.FAILED_PRECONDITION, exc.details()
                    await asyncio.sleep(0.1)
            await tournaments.PauseTournament(tournament_pb2.PauseTournamentRequest(id=created.id),
                                              metadata=auth(ADMIN))
            request = admin_pb2.CreateMatchRequest(ruleset="standard", format=game_pb2.MatchFormat(fixed_deals=500))
            for _ in range(4):
                request.seats.add(house="random")
            match = await admin_pb2_grpc.AdminServiceStub(channel).CreateMatch(request, metadata=auth(ADMIN))
            return created.id, match.match_id

    async def cancel_on(port: int, match_id: str) -> str:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            try:
                await admin_pb2_grpc.AdminServiceStub(channel).CancelMatch(
                    admin_pb2.CancelMatchRequest(match_id=match_id), metadata=auth(ADMIN))
            except grpc.aio.AioRpcError as exc:
                return exc.details()
            return "cancelled"

    async def finish_on(port: int, tournament_id: str) -> tournament_pb2.Tournament:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            tournaments = tournament_pb2_grpc.TournamentServiceStub(channel)
            await tournaments.ResumeTournament(tournament_pb2.ResumeTournamentRequest(id=tournament_id),
                                               metadata=auth(ADMIN))
            for _ in range(600):
                t = (await tournaments.GetTournament(tournament_pb2.GetTournamentRequest(id=tournament_id))).tournament
                if t.status == tournament_pb2.TOURNAMENT_STATUS_FINISHED:
                    break
                await asyncio.sleep(0.1)
            return t

    a, port_a = start(tmp_path, "--instance", "a", *house)
    try:
        tournament_id, match_id = run(on_a(port_a))
        b, port_b = start(tmp_path, "--instance", "b", "--db", db)  # a runs: nothing of it is taken
        try:
            wrong_daemon = run(cancel_on(port_b, match_id))
        finally:
            b.send_signal(signal.SIGTERM)
            b.wait(60)
        a.kill()  # gone: its match is left running in the store, its tournament paused
        a.wait(10)
        store = Store(db)
        if is_postgresql(db):  # its lock is free now; its heartbeat goes stale after STALE_S (30 s): as if it had
            with store.db.transaction() as tx:
                tx.execute("UPDATE leases SET heartbeat_ms = 0 WHERE instance = 'a'")
        left = (store.get(match_id).status, store.db.query("SELECT instance FROM tournaments")[0][0])
        store.close()
        b, port_b = start(tmp_path, "--instance", "b", *house)
        try:
            if not is_postgresql(db):
                # Another process opens and closes the store (a CLI command): the adopting daemon's
                # SQLite locks must hold. Before (a review), taking a's lease had closed a descriptor
                # of the database file, which dropped them: that close deleted the write-ahead log
                # under b, whose next heartbeat stopped it and aborted its matches.
                reader = f"import sqlite3; sqlite3.connect({db!r}).execute('SELECT count(*) FROM matches').fetchall()"
                subprocess.run([sys.executable, "-c", reader], check=True)
                time.sleep(HEARTBEAT_S + 1)
                assert b.poll() is None and os.path.exists(db + "-wal"), "b lost its store"
            t = run(finish_on(port_b, tournament_id))
        finally:
            b.send_signal(signal.SIGTERM)
            b.wait(60)
        log = b.stderr.read()
    finally:
        if a.poll() is None:
            a.kill()
    store = Store(db)
    taken = store.get(match_id)
    store.close()
    assert "runs on another daemon of this store (instance a)" in wrong_daemon, wrong_daemon  # before: "already over"
    assert left == ("running", "a")
    assert (taken.status, taken.reason) == (
        "aborted", "server stopped while the match was running (instance a, whose daemon no longer runs)")  # before: running
    assert t.status == tournament_pb2.TOURNAMENT_STATUS_FINISHED and t.matches_finished == 2  # before: paused for ever
    assert "another instance of this store left matches running and its daemon no longer runs" in log, log
    assert "tournaments of another instance whose daemon no longer runs: resume one" in log, log
    assert "a tournament of another instance whose daemon no longer runs is directed here" in log, log


def test_a_tournament_adopted_from_a_gone_daemon_replays_the_match_that_daemon_left_running(tmp_path, store_url):
    """A review of the take-over: daemon b already ran when a died mid-match, so no start of
    b marked a's matches aborted, and a resume sent to b adopted a's tournament with its
    table still "running" on a's match. b's director looked at that match each second for
    ever (it runs on another daemon, as far as the store said), the tournament never moved
    and nothing said why. Now taking over a tournament also marks aborted what its gone
    daemon left running, so the table is replayed here."""
    left_running, t, log = _adopted_tournament(tmp_path, store_url, resume_before_a_looks_gone=False)
    _assert_adopted(store_url, left_running, t, log)


def test_a_tournament_resumed_on_b_just_after_a_died_is_directed_by_b_once_a_looks_gone(tmp_path, postgres_server):
    """A resume sent to b a moment after a died, while a's PostgreSQL lease still looked
    alive (its heartbeat younger than STALE_S, its lock not yet freed), adopted nothing and
    answered as if it had worked: the tournament was "running" with nobody to direct it
    until the organiser paused and resumed it again (the last stop's flaky test showed it).
    b now keeps trying for as long as a dead daemon takes to look gone. (On SQLite a's lock
    goes with its process, so a resume never comes before a looks gone.)"""
    from tests.postgres import fresh_database

    with fresh_database(postgres_server) as db:
        left_running, t, log = _adopted_tournament(tmp_path, db, resume_before_a_looks_gone=True)
        _assert_adopted(db, left_running, t, log)


def _adopted_tournament(tmp_path: Path, db: str, resume_before_a_looks_gone: bool):  # type: ignore[no-untyped-def]
    """Daemon a runs a one-table tournament whose match never moves, paused; daemon b starts,
    a is killed, and the tournament is resumed on b, after a looks gone (its lock free and, on
    PostgreSQL, its heartbeat made stale), or before (and a made to look gone after the
    resume's answer). The match a left running, the tournament as b has it within 30 s,
    and b's log."""
    import asyncio

    import grpc

    from heartsbot.proto import tournament_pb2, tournament_pb2_grpc

    from .harness import Bot, auth, first_legal
    from .test_daemon_process import Remote, start

    names = ["alice", "bob", "carol", "dave"]

    def holding(request, bot):  # type: ignore[no-untyped-def]
        return None  # never answers: a's match waits on its long clock until a dies

    def a_holds_its_lock() -> bool:  # PostgreSQL: instance a's advisory lock (lease.RowLease) is held
        store = Store(db)
        try:
            return bool(store.db.query("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = ? "
                                       "AND objid = ? AND objsubid = 2", (LOCK_SPACE, _lock_key("a") % 2**32))[0][0])
        finally:
            store.close()

    async def make_a_look_gone() -> None:
        if is_postgresql(db):  # its heartbeat goes stale after STALE_S (30 s): as if it had
            store = Store(db)
            with store.db.transaction() as tx:
                tx.execute("UPDATE leases SET heartbeat_ms = 0 WHERE instance = 'a'")
            # Its lock is free once PostgreSQL has ended a's connection, a moment after a
            # died (on a loaded machine, after a resume sent at once, which then found a alive:
            # a fresh-clone run failed so).
            while a_holds_its_lock():
                await asyncio.sleep(0.05)
            store.close()

    async def scenario():  # type: ignore[no-untyped-def]
        a, port_a = start(tmp_path, "--instance", "a", "--db", db, "--decision-ms", "120000", "--bank-ms", "0")
        b = None
        try:
            on_a = [await Bot(Remote(port_a), n, policy=holding).start() for n in names]
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port_a}") as channel:
                stub = tournament_pb2_grpc.TournamentServiceStub(channel)
                created = (await stub.CreateTournament(tournament_pb2.CreateTournamentRequest(
                    name="cup", bots=names, rounds=1, deals_per_match=1), metadata=auth(ADMIN))).tournament
                for _ in range(300):
                    t = (await stub.GetTournament(tournament_pb2.GetTournamentRequest(id=created.id))).tournament
                    if t.tables and t.tables[0].status == "running":
                        break
                    await asyncio.sleep(0.1)
                left_running = t.tables[0].match_id
                await stub.PauseTournament(tournament_pb2.PauseTournamentRequest(id=created.id), metadata=auth(ADMIN))
            b, port_b = start(tmp_path, "--instance", "b", "--db", db)  # a runs: b takes nothing of it
            assert not is_postgresql(db) or a_holds_its_lock()
            for bot in on_a:
                await bot.drop()
            a.kill()
            a.wait(10)
            if not resume_before_a_looks_gone:
                await make_a_look_gone()
            on_b = [await Bot(Remote(port_b), n, policy=first_legal).start() for n in names]
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port_b}") as channel:
                stub = tournament_pb2_grpc.TournamentServiceStub(channel)
                await stub.ResumeTournament(tournament_pb2.ResumeTournamentRequest(id=created.id), metadata=auth(ADMIN))
                if resume_before_a_looks_gone:
                    await make_a_look_gone()
                for _ in range(300):  # 30 s; before, running on a's match for ever
                    t = (await stub.GetTournament(tournament_pb2.GetTournamentRequest(id=created.id))).tournament
                    if t.status == tournament_pb2.TOURNAMENT_STATUS_FINISHED:
                        break
                    await asyncio.sleep(0.1)
            for bot in on_b:
                await bot.drop()
        finally:
            for proc in (a, b):
                if proc is not None and proc.poll() is None:
                    proc.send_signal(signal.SIGTERM)
                    proc.wait(60)
        return left_running, t, b.stderr.read() if b is not None else ""

    return run(scenario())


def _assert_adopted(db: str, left_running: str, t, log: str) -> None:  # type: ignore[no-untyped-def]
    """b directed the tournament: the match a left running is aborted, and its table was
    played again on b."""
    from heartsbot.proto import tournament_pb2

    store = Store(db)
    left = store.get(left_running)
    store.close()
    assert (left.status, left.reason) == (
        "aborted", "server stopped while the match was running (instance a, whose daemon no longer runs)"), left
    assert t.status == tournament_pb2.TOURNAMENT_STATUS_FINISHED, (t.tables, log)
    assert t.matches_finished == 1 and t.tables[0].attempts == 2 and t.tables[0].match_id != left_running
    assert "a tournament of another instance whose daemon no longer runs is directed here" in log, log


def test_a_backup_taken_while_the_daemon_plays_holds_what_was_committed_and_checks_out(tmp_path, postgres_server):
    """An organiser's pass: `cp arena.db copy.db` while the daemon ran held 36 of 45 matches
    (the rest were in the -wal file), and `replay verify` passed the copy; the README said only
    "restore from a copy". `heartsd store backup` copies one consistent snapshot, the log's
    commits included, while the daemon goes on; the copy checks out and verifies; it never
    overwrites a file; a PostgreSQL store is pointed to pg_dump."""
    from tests.postgres import fresh_database

    db = str(tmp_path / "h.db")
    daemon, _ = _serving("--db", db, "--house-matches", "2", "--admin-token", "admin-token-backup-1")
    try:
        deadline = time.time() + 60
        while time.time() < deadline and _finished(db) < 6:
            time.sleep(0.3)
        before = _finished(db)  # what a reader sees, the log's commits included
        assert before >= 6 and os.path.getsize(db + "-wal") > 0, before
        taken = subprocess.run([*HEARTSD, "store", "backup", "--db", db, str(tmp_path / "copy.db")],
                               capture_output=True, text=True, timeout=120)
        again = subprocess.run([*HEARTSD, "store", "backup", "--db", db, str(tmp_path / "copy.db")],
                               capture_output=True, text=True, timeout=120)
    finally:
        daemon.send_signal(signal.SIGINT)
        daemon.wait(60)
    assert taken.returncode == 0 and "the copy checks out" in taken.stdout, taken
    assert _finished(str(tmp_path / "copy.db")) >= before  # none of the commits before it is missing
    assert not os.path.exists(tmp_path / "copy.db-wal"), "the copy is one file"
    verify = subprocess.run([*HEARTSD, "replay", "verify", "--db", str(tmp_path / "copy.db")],
                            capture_output=True, text=True, timeout=120)
    assert verify.returncode == 0 and "0 failed" in verify.stdout, verify
    assert again.returncode == 2 and "never overwrites" in again.stderr, again
    assert not (tmp_path / "copy.db.partial").exists()
    with fresh_database(postgres_server) as url:
        refused = subprocess.run([*HEARTSD, "store", "backup", "--db", url, str(tmp_path / "pg.db")],
                                 capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and "pg_dump" in refused.stderr and not (tmp_path / "pg.db").exists(), refused


def _finished(db: str) -> int:
    """Finished matches in the SQLite file ``db`` as a reader sees it (its -wal included, if present)."""
    import sqlite3

    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        return int(conn.execute("SELECT COUNT(*) FROM matches WHERE status = 'finished'").fetchone()[0])


@pytest.mark.parametrize("content", ["another application's", "empty"])
def test_a_backup_of_a_file_that_is_not_a_heartsd_store_is_refused_not_taken(tmp_path, content):
    """An operator's pass: `heartsd store backup --db places.sqlite copy.db` (a wrong path)
    printed "backed up ...: 0 matches (0 finished), 0 tournaments; the copy checks out" and
    exit 0, where every other command refuses such a file: the organiser believed they held a
    backup of the arena. Another application's SQLite file, or an empty one, is refused as
    the other commands refuse it (exit 2, naming the setting), and no copy is written."""
    import sqlite3

    other = tmp_path / "places.sqlite"
    if content == "empty":
        other.write_bytes(b"")
    else:
        with contextlib.closing(sqlite3.connect(other)) as c, c:
            c.execute("CREATE TABLE moz_places (id INTEGER PRIMARY KEY, url TEXT)")
    out = heartsd("store", "backup", "--db", str(other), str(tmp_path / "copy.db"))
    assert out.returncode == 2, out
    assert "not a heartsd store" in out.stderr and "HEARTSD_DB_PATH" in out.stderr, out.stderr
    assert "backed up" not in out.stdout and "Traceback" not in out.stderr, out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["places.sqlite"]


LOCAL_COMMANDS = {
    "heartsbot local": [*HEARTSBOT, "local", "--strategies", "random", "random", "random", "random", "--deals", "1"],
    "heartsd tournament local": [*HEARTSD, "tournament", "local", "--bots", "random", "random", "random", "random",
                                 "--rounds", "1", "--deals", "1"],
}


@pytest.mark.parametrize("command", sorted(LOCAL_COMMANDS))
def test_a_local_command_given_a_file_that_is_not_a_store_says_so_without_a_traceback(tmp_path, command):
    """An operator's pass: `heartsd tournament local --db places.sqlite` (a wrong path:
    another application's file, or no database at all) ended in a Python traceback of
    StoreError, exit 1 (the code of a failed bot). The embedded daemon's store is refused as
    `heartsd serve` refuses it: one line naming the file and --db, exit 2, the file untouched."""
    import sqlite3

    other = tmp_path / "places.sqlite"
    with contextlib.closing(sqlite3.connect(other)) as c, c:
        c.execute("CREATE TABLE moz_places (id INTEGER PRIMARY KEY, url TEXT)")
    text = tmp_path / "notes.txt"
    text.write_text("not a database, but a file of text long enough to be read as one\n" * 20)
    for path in (other, text):
        before = path.read_bytes()
        out = subprocess.run([*LOCAL_COMMANDS[command], "--db", str(path)], capture_output=True, text=True,
                             timeout=120)
        assert out.returncode == 2, (path, out)
        assert "Traceback" not in out.stderr and out.stderr.count("\n") == 1, out.stderr
        assert str(path.name) in out.stderr and "--db" in out.stderr, out.stderr
        assert path.read_bytes() == before


@pytest.mark.parametrize("command", sorted(LOCAL_COMMANDS))
def test_a_local_command_on_the_store_a_daemon_serves_is_refused_like_a_second_daemon(tmp_path, command):
    """An organiser's pass: `heartsd tournament local --db arena.db` run against the store a
    daemon was serving started a second daemon of the same instance on it (no lease taken),
    which directed that daemon's running tournaments too and wrote its own tournament and
    matches into the arena's store, shown on its leaderboard page. The embedded daemon takes
    the store's lease as `heartsd serve` does: refused, exit 2, naming the daemon that holds
    it, and nothing written."""
    import sqlite3

    db = str(tmp_path / "arena.db")
    daemon, _ = _serving("--db", db, "--admin-token", "admin-token-local-1")
    try:
        out = subprocess.run([*LOCAL_COMMANDS[command], "--db", db], capture_output=True, text=True, timeout=120)
        with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
            written = conn.execute("SELECT (SELECT COUNT(*) FROM matches) + (SELECT COUNT(*) FROM tournaments)")
            assert written.fetchone()[0] == 0, out
    finally:
        daemon.send_signal(signal.SIGINT)
        daemon.wait(60)
    assert out.returncode == 2, out
    assert "another heartsd" in out.stderr and "Traceback" not in out.stderr, out.stderr


def test_a_backup_that_cannot_be_written_names_the_copy_not_the_store_and_leaves_nothing(tmp_path):
    """An organiser's pass: a backup to a disk that filled up said "could not copy 'arena.db':
    database or disk is full" (the live store's disk, read the organiser) and left
    `a.db.partial-journal` behind; one into a folder that did not exist said "could not copy
    'arena.db': unable to open database file" (as if the store were missing). The copy's side
    is named, the store said untouched, and nothing is left in the copy's folder."""
    import sqlite3

    db = str(tmp_path / "h.db")

    Store(db).close()
    with contextlib.closing(sqlite3.connect(db)) as conn, conn:  # a store of ~300 KiB
        conn.execute("CREATE TABLE filler (x BLOB)")
        conn.executemany("INSERT INTO filler VALUES (?)", [(os.urandom(4096),) for _ in range(64)])

    missing = heartsd("store", "backup", "--db", db, str(tmp_path / "no-such-folder" / "copy.db"))
    assert missing.returncode == 2, missing
    assert "no-such-folder" in missing.stderr and "does not exist" in missing.stderr, missing.stderr

    # The copy's writes past 64 KiB fail, as on a full disk: set by a small Python that then
    # execs the command (not Popen's preexec_fn, which forks this process and its gRPC
    # threads: harness.with_descriptor_limit says why)
    small_disk = ("import os, resource, signal, sys; signal.signal(signal.SIGXFSZ, signal.SIG_IGN); "
                  "resource.setrlimit(resource.RLIMIT_FSIZE, (65536, 65536)); os.execv(sys.argv[1], sys.argv[1:])")
    out = tmp_path / "backups"
    out.mkdir()
    full = subprocess.run([sys.executable, "-c", small_disk, *HEARTSD, "store", "backup", "--db", db,
                           str(out / "copy.db")], capture_output=True, text=True, timeout=60)
    assert full.returncode == 2, full
    assert "could not write the copy" in full.stderr and "untouched" in full.stderr, full.stderr
    assert sorted(os.listdir(out)) == [], os.listdir(out)
    assert _finished(db) == 0  # the store still reads


def test_store_restored_refuses_a_store_that_is_not_there_saying_why_and_never_its_password(tmp_path):
    """`heartsd store restored` (after a restore by other means than `store backup`) on a
    path that holds no store, or a PostgreSQL server it cannot reach: exit 2, the reason,
    nothing created, and a URL's password never printed."""
    missing = heartsd("store", "restored", "--db", str(tmp_path / "nope.db"))
    assert missing.returncode == 2 and "no store at" in missing.stderr and "Traceback" not in missing.stderr
    assert not (tmp_path / "nope.db").exists()
    unreachable = heartsd("store", "restored", "--db", "postgresql://arena:s3cret@127.0.0.1:1/hearts")
    assert unreachable.returncode == 2 and "cannot open the store" in unreachable.stderr, unreachable.stderr
    assert "s3cret" not in unreachable.stderr + unreachable.stdout


def test_store_restored_on_a_live_daemons_store_is_refused_and_changes_nothing(tmp_path, store_url):
    """An organiser's pass: `heartsd store restored` run on the store a daemon was serving
    (the step meant for a store just put back from a copy, before a daemon starts) exited 0
    and marked the live tournament's unplayed tables spent: their published seeds no longer
    reproduced them, and nothing said a daemon was running. It is refused now, exit 2, naming
    the daemon (of any instance), and works once the daemon has stopped."""
    daemon, _ = _serving("--db", store_url, "--instance", "arena-1", "--admin-token", "admin-token-restored-1")
    try:
        refused = heartsd("store", "restored", "--db", store_url)
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(60)
    assert refused.returncode == 2, refused
    assert "running on this store" in refused.stderr and "'arena-1'" in refused.stderr, refused.stderr
    assert "changed nothing" in refused.stderr and not refused.stdout, refused
    after = heartsd("store", "restored", "--db", store_url)
    assert after.returncode == 0 and "nothing to mark" in after.stdout, after


def test_a_live_daemon_on_a_store_named_with_brackets_is_found_by_its_lock_file(tmp_path):
    """An operator's pass: a store named `arena[1].db` (a copy numbered by a file manager)
    served by a daemon of instance 'arena-1': `heartsd store restored` said the store was
    served by "a daemon reaching it by another name (a hard link, or a path renamed since)",
    which it was not: the lock files beside the store were looked for with a glob pattern
    built from its name, where `[1]` is a character class, so `arena[1].db.arena-1.lock`
    was never found (off Linux, without the byte-lock fallback, the daemon was not found
    at all). The name is matched literally now, and the daemon named as it is."""
    db = str(tmp_path / "arena[1].db")
    daemon, _ = _serving("--db", db, "--instance", "arena-1", "--admin-token", "admin-token-brackets-1")
    try:
        refused = heartsd("store", "restored", "--db", db)
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(60)
    assert refused.returncode == 2, refused
    assert "instance 'arena-1'" in refused.stderr and "another name" not in refused.stderr, refused.stderr


def test_an_admin_token_with_a_line_end_or_beyond_ascii_is_said_by_the_cli_not_refused_as_internal(tmp_path):
    """An organiser's pass: `HEARTSD_ADMIN_TOKEN` read from a file written on Windows (its
    line end kept) made every `heartsd admin` and `heartsd tournament` call fail
    "INTERNAL: Invalid metadata", exit 3 (as if the daemon refused), after a line of gRPC's
    C core on stderr: the header could not even be sent. The CLI now sends the token without
    the spaces and line ends around it (the daemon strips them too), and a token holding a
    character no header can carry is a usage error naming the option, exit 2."""
    admin = "admin-token-crlf-1"
    daemon, target = _serving("--db", str(tmp_path / "h.db"), "--admin-token", admin)
    try:
        env = {**os.environ, "HEARTSD_ADMIN_TOKEN": admin + "\r\n"}
        crlf = subprocess.run([*HEARTSD, "admin", "bots", "--server", target], capture_output=True, text=True,
                              timeout=60, env=env)
        accented = heartsd("admin", "bots", "--server", target, "--admin-token", "jeton-d'administration-épelé")
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(60)
    assert crlf.returncode == 0, crlf
    assert accented.returncode == 2, accented
    assert "--admin-token" in accented.stderr and "ASCII" in accented.stderr, accented.stderr
    assert "INTERNAL" not in accented.stderr and "validate_metadata" not in accented.stderr, accented.stderr


def test_a_tournament_created_twice_is_refused_naming_the_first_unless_again(tmp_path, capsys):
    """An organiser's pass: `heartsd tournament create` given twice (pasted again, or retried
    after a timeout the daemon outlived) started a second tournament of the same name and
    bots beside the first, both holding the same bots' slots, told apart only by their ids.
    The second is a usage error now (exit 2) naming the first and how to follow it, while
    the first runs or is paused; `--again` starts it all the same."""
    import asyncio

    from heartsd import cli

    from .harness import Bot

    names = ["alice", "bob", "carol", "dave"]

    async def scenario():  # type: ignore[no-untyped-def]
        async with running_daemon(tmp_path) as daemon:
            bots = [await Bot(daemon, n).start() for n in names]
            base = ["--server", daemon.target, "--admin-token", ADMIN]
            roster = sum((["--bot", n] for n in names), [])

            def tour(*argv: str) -> tuple[int, str, str]:
                code = cli.main(["tournament", *argv])
                out, err = capsys.readouterr()
                return code, out, err

            first = await asyncio.to_thread(tour, "create", *base, *roster, "--rounds", "3", "--name", "cup")
            tournament_id = first[1].split()[1]
            paused = await asyncio.to_thread(tour, "pause", *base, tournament_id)
            shuffled = sum((["--bot", n] for n in reversed(names)), [])  # the same bots in another order
            twice = await asyncio.to_thread(tour, "create", *base, *shuffled, "--rounds", "3", "--name", "cup")
            again = await asyncio.to_thread(tour, "create", *base, *roster, "--rounds", "3", "--name", "cup", "--again")
            listed = await asyncio.to_thread(tour, "list", *base, "--json")
            for t in json.loads(listed[1])["tournaments"]:
                await asyncio.to_thread(tour, "cancel", *base, t["id"])
            for b in bots:
                await b.close()
            return first, paused, twice, again, listed

    first, paused, twice, again, listed = run(scenario())
    assert first[0] == 0 and paused[0] == 0, (first, paused)
    tournament_id = first[1].split()[1]
    assert twice[0] == 2 and tournament_id in twice[2] and "given twice" in twice[2] and "--again" in twice[2], twice
    assert again[0] == 0, again
    assert len(json.loads(listed[1])["tournaments"]) == 2  # the first, and the one asked for --again


class _WatchedTournament:
    """A daemon in its own process with four house bots on its ladder, a tournament of them
    long enough to outlast a test, and `heartsd tournament watch` following it (its first line
    read). ``restart()`` stops the daemon (SIGTERM) and starts it again on its port and store;
    leaving stops the daemon running then, and kills the watch if it still runs."""

    HOUSE = ("--ladder", "--ladder-house", "random", "random", "random", "random", "--admin-token", ADMIN)

    def __init__(self, tmp_path: Path) -> None:
        self.db, self.port = str(tmp_path / "h.db"), free_port()
        self.watch: subprocess.Popen[str] | None = None

    def __enter__(self) -> "_WatchedTournament":
        self.daemon, target = _serving("--port", str(self.port), "--db", self.db, *self.HOUSE)
        try:
            self.ask = ["--server", target, "--admin-token", ADMIN]
            roster = sum((["--bot", f"house-random{suffix}"] for suffix in ("", "-2", "-3", "-4")), [])
            created = heartsd("tournament", "create", *self.ask, *roster, "--rounds", "50", "--deals", "200")
            assert created.returncode == 0, created
            self.id = created.stdout.split()[1]
            self.watch = subprocess.Popen([*HEARTSD, "tournament", "watch", *self.ask, self.id, "--interval", "0.2"],
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            assert self.id in self.watch.stderr.readline()  # type: ignore[union-attr]  # it follows the tournament
        except BaseException:
            self.__exit__()
            raise
        return self

    def restart(self, between: Callable[[], None] = lambda: None) -> None:
        self.daemon.send_signal(signal.SIGTERM)
        self.daemon.wait(60)
        between()
        self.daemon, _ = _serving("--port", str(self.port), "--db", self.db, *self.HOUSE)

    def __exit__(self, *exc: object) -> None:
        self.daemon.send_signal(signal.SIGTERM)
        self.daemon.wait(60)
        if self.watch is not None and self.watch.poll() is None:
            self.watch.kill()
            self.watch.wait()


def test_tournament_watch_waits_out_a_restart_of_its_daemon(tmp_path):
    """An organiser's pass: `heartsd tournament watch` ended with exit 4 ("could not connect
    ... is heartsd running there?") at the first SIGTERM of its daemon, during the grace
    already, though the tournament goes on once the daemon is back. It now says the daemon
    is away, waits for it, and follows the tournament to its end (here a cancel sent to the
    restarted daemon)."""
    with _WatchedTournament(tmp_path) as t:
        watch = t.watch
        assert watch is not None

        def said_away() -> None:
            line = ""
            while "waiting for it to answer again" not in line:
                line = watch.stderr.readline()  # type: ignore[union-attr]
                assert line, "the watch ended with its daemon"

        t.restart(between=said_away)
        cancelled = heartsd("tournament", "cancel", *t.ask, t.id)
        assert cancelled.returncode == 0, cancelled
        out, err = watch.communicate(timeout=120)
    assert watch.returncode == 0, err
    assert "the daemon answers again" in err and "cancelled" in out and "standings" in out, (out, err)


def test_ctrl_c_on_tournament_watch_stops_the_watch_with_a_line_and_exit_130(tmp_path):
    """An organiser's pass: Ctrl-C on `heartsd tournament watch` (its own waiting message
    says "Ctrl-C to stop watching") printed a 20-line KeyboardInterrupt traceback, as did
    every heartsd command interrupted so (`admin watch`, `tournament create`, `ladder
    leaderboard` ...). It now ends with one line saying what the interruption left, and exit
    130 (README's exit codes); the tournament goes on."""
    with _WatchedTournament(tmp_path) as t:
        watch = t.watch
        assert watch is not None
        watch.send_signal(signal.SIGINT)
        out, err = watch.communicate(timeout=60)
        shown = heartsd("tournament", "show", *t.ask, t.id, "--json")
    assert watch.returncode == 130, (watch.returncode, err)
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert err.strip().splitlines()[-1] == ("heartsd tournament watch: interrupted (Ctrl-C): stopped watching; "
                                            "the tournament goes on"), err
    assert json.loads(shown.stdout)["tournament"]["status"] == "running", shown


def test_ctrl_c_on_tournament_local_ends_its_tournament_cancelled_in_its_store(tmp_path):
    """An organiser's pass: Ctrl-C on `heartsd tournament local --db arena-trial.db` exited
    130 without a word and left the tournament running in the file: the next `tournament
    local --db` on it resumed that tournament beside its own, playing (and at its end
    aborting) the old one's matches with its bots of the same names. The interrupted
    tournament is now cancelled (its running match recorded cancelled, its standings so far
    kept), and the command says so in one line."""
    import sqlite3

    db = tmp_path / "trial.db"
    local = subprocess.Popen([*HEARTSD, "tournament", "local", "--bots", "random", "random", "heuristic",
                              "heuristic", "--rounds", "3", "--deals", "200", "--db", str(db)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = ""
        while "1 playing" not in line:  # a match of it runs (a line per change in a pipe)
            line = local.stderr.readline()  # type: ignore[union-attr]
            assert line, "tournament local ended before its first match started"
        local.send_signal(signal.SIGINT)
        _, err = local.communicate(timeout=60)
    finally:
        if local.poll() is None:
            local.kill()
            local.wait()
    assert local.returncode == 130, err
    assert "Traceback" not in err and err.strip().splitlines()[-1].startswith(
        "heartsd tournament local: interrupted (Ctrl-C): tournament t-"), err
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        assert [r[0] for r in conn.execute("SELECT status FROM tournaments")] == ["cancelled"]
        assert [r[0] for r in conn.execute("SELECT status FROM matches")] == ["cancelled"]


def test_configured_bots_that_ladder_registrations_shadow_or_mimic_are_warned_of_at_start(tmp_path):
    """An organiser's pass: a daemon configured with `--bot bob:...` and `--bot Alice:...`
    on a store where `heartsd ladder add-bot` had registered bob and alice said nothing at
    start (README: "its log warns of it"): the tokens were first read, and the warning given,
    only when a bot called. And Alice beside alice, which `add-bot` refuses among
    registrations, was never said at all. Both are warned of once the daemon serves, before
    any bot connects."""
    db = str(tmp_path / "h.db")
    for name in ("bob", "alice"):
        assert heartsd("ladder", "add-bot", name, "--owner", f"o-{name}", "--db", db, "--create").returncode == 0
    daemon = subprocess.Popen([*HEARTSD, "serve", "--port", "0", "--db", db, "--admin-token", ADMIN, "--bot",
                               "bob:token-bob-0123456789", "--bot", "Alice:token-alice-0123456789"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    import threading

    lines: list[str] = []
    both = threading.Event()

    def read() -> None:  # a thread: select() on a buffered pipe misses lines already read into its buffer
        for line in daemon.stderr:  # type: ignore[union-attr]
            lines.append(line)
            if "sign nothing in" in "".join(lines) and "differ only in case" in "".join(lines):
                both.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        both.wait(60)  # a bound on a hang, not a measurement
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(60)
        reader.join(10)
    said = "".join(lines)
    assert "sign nothing in" in said and '"bob"' in said, said
    assert "differ only in case" in said and "Alice / alice" in said, said


def test_a_damaged_store_beside_a_wal_is_refused_with_both_files_untouched(tmp_path):
    """An organiser's pass: a daemon killed, its backup copied over the store and the old
    -wal left beside it (README, "Backups", says to move it away): `serve` refused the store
    as damaged and said to move the -wal and -shm away, but its check ran on the store's own
    read-write connection, whose close checkpointed that -wal into the file and deleted it:
    the copy written into, the -wal gone. Now both files are as they were. (Here the file is
    damaged outside the pages the -wal holds, so the check fails whatever the log holds.)"""
    import shutil
    import sqlite3

    made, db = tmp_path / "made", tmp_path / "h.db"
    made.mkdir()
    Store(str(made / "h.db")).close()
    _damage_the_matches_table(str(made / "h.db"))
    writer = sqlite3.connect(str(made / "h.db"))
    try:  # a -wal with frames of their own, as a killed daemon leaves it
        writer.execute("PRAGMA wal_autocheckpoint = 0")
        with writer:
            writer.execute("CREATE TABLE filler (x BLOB)")
            writer.executemany("INSERT INTO filler VALUES (?)", [(os.urandom(2048),) for _ in range(32)])
        for suffix in ("", "-wal"):
            shutil.copyfile(f"{made / 'h.db'}{suffix}", f"{db}{suffix}")
    finally:
        writer.close()
    main, wal = db.read_bytes(), Path(f"{db}-wal").read_bytes()
    assert wal
    refused = subprocess.run([*HEARTSD, "serve", "--port", "0", "--db", str(db), "--admin-token", ADMIN],
                             capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and "is damaged" in refused.stderr and "-wal" in refused.stderr, refused.stderr
    assert db.read_bytes() == main, "the file was written into"
    assert Path(f"{db}-wal").read_bytes() == wal, "the -wal was checkpointed away"
