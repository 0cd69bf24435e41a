"""Shutdown order: on SIGTERM rated (ladder) matches end at once, aborted and unrated, so
that no bot's speed decides whether its match counts (test_ladder_integrity); the others
may finish within the grace; a second SIGINT/SIGTERM aborts and records at once."""

from __future__ import annotations

import signal
import subprocess
import time

import asyncio

import grpc
import pytest

from heartsd.store import Store

from .harness import ADMIN, Bot, first_legal, run, running_daemon
from .test_daemon_process import start

# mc thinks most of its decision time: a 4-deal match lasts several seconds.
LADDER = ("--ladder", "--ladder-house", "mc", "heuristic", "random", "heuristic", "--decision-ms", "150",
          "--ladder-deals", "4")


def running_ladder_match(db: str, deals_played: int = 0) -> str:
    """Wait for a ladder match (house bots) that is running; its id."""
    deadline = time.time() + 60
    while time.time() < deadline:
        store = Store.open_existing(db)
        running = [m for m in store.list(status="running") if m.seats[0].startswith("house-")]
        store.close()
        if running:
            return running[0].id
        time.sleep(0.1)
    raise AssertionError("no ladder match started")


def fill_the_disk(monkeypatch: pytest.MonkeyPatch, *methods: str) -> dict[str, bool]:
    """The store's ``methods`` fail as on a full disk while the returned ``["disk"]`` is
    true (set it false: the disk has room again)."""
    import sqlite3

    full = {"disk": True}

    def failing(real):  # type: ignore[no-untyped-def]
        def call(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            if full["disk"]:
                raise sqlite3.OperationalError("database or disk is full")
            return real(self, *args, **kwargs)
        return call

    for name in methods:
        monkeypatch.setattr(Store, name, failing(getattr(Store, name)))
    return full


def test_sigterm_ends_the_ladder_matches_at_once_unrated(tmp_path):
    """Before, the house bots played their ladder matches on through the grace and a match
    that ended in it was rated: whether it counted was up to its bots' speed, so a bot behind
    voided its loss by thinking (test_ladder_integrity)."""
    db = str(tmp_path / "d.db")
    proc, _ = start(tmp_path, *LADDER, "--shutdown-grace-s", "60")
    match_id = running_ladder_match(db)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(90) == 0
    store = Store.open_existing(db)
    stored = store.get(match_id)
    rated = {r[0] for r in store.db.query("SELECT DISTINCT match_id FROM results")}
    store.close()
    assert (stored.status, stored.reason) == ("aborted", "server shutdown")
    assert match_id not in rated, "a rated match is never played on through the grace"


def test_a_closed_terminal_drains_the_daemon_and_nohup_keeps_it(tmp_path):
    """The case SIGHUP comes in: the terminal the daemon logs to has closed, so writing to it
    fails (EIO), and the shutdown's first log line ended the daemon before its drain (the
    review: the test above, with stderr a pipe, could not see it). Now stdout and stderr
    that were the terminal go to /dev/null first. And under `nohup` (SIGHUP ignored at
    start) the daemon keeps running when its terminal closes, as nohup promises."""
    import os
    import pty
    import subprocess

    from .harness import ADMIN
    from .test_daemon_process import HEARTSD

    def started(db: str, preexec=None):  # type: ignore[no-untyped-def]
        master, terminal = pty.openpty()
        proc = subprocess.Popen([*HEARTSD, "serve", "--port", "0", "--db", db, "--admin-token", ADMIN,
                                 "--house-matches", "1", "--house-delay-ms", "200", "--shutdown-grace-s", "600",
                                 "--log-level", "info"], stdout=subprocess.PIPE, stderr=terminal, text=True,
                                preexec_fn=preexec)
        os.close(terminal)
        assert "listening on" in proc.stdout.readline()  # type: ignore[union-attr]
        return proc, master

    db = str(tmp_path / "d.db")
    proc, master = started(db)
    deadline = time.time() + 30
    while time.time() < deadline and not running_matches(db):
        time.sleep(0.1)
    os.close(master)  # the terminal closes: its writes now fail
    proc.send_signal(signal.SIGHUP)
    time.sleep(0.5)
    proc.send_signal(signal.SIGHUP)
    assert proc.wait(60) == 0
    store = Store.open_existing(db)
    states = {m.status for m in store.list()}
    store.close()
    assert states == {"aborted"}, states

    nohup_db = str(tmp_path / "n.db")
    proc, master = started(nohup_db, preexec=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN))
    try:
        os.close(master)
        proc.send_signal(signal.SIGHUP)
        time.sleep(1.0)
        assert proc.poll() is None, "nohup's daemon stopped on SIGHUP"
    finally:
        proc.send_signal(signal.SIGTERM)
        time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)  # the second: abort its match now (a 600 s grace)
        proc.wait(60)


def running_matches(db: str) -> list[object]:
    store = Store.open_existing(db)
    try:
        return list(store.list(status="running"))
    finally:
        store.close()


@pytest.mark.parametrize("first, second", [(signal.SIGTERM, signal.SIGINT), (signal.SIGHUP, signal.SIGHUP)])
def test_a_second_signal_aborts_and_records_at_once(tmp_path, first, second):
    """SIGHUP too (a terminal that closed): before (an operator's pass), it killed the
    daemon at once, with no drain, its running matches left 'running' until the next start."""
    db = str(tmp_path / "d.db")
    # A long grace: the match would finish in it unless the second signal aborts it. A slow
    # house match, not a ladder one: the first signal ends rated matches at once.
    proc, _ = start(tmp_path, "--house-matches", "1", "--house-delay-ms", "200", "--shutdown-grace-s", "600")
    deadline = time.time() + 60
    while time.time() < deadline and not running_matches(db):
        time.sleep(0.1)
    match_id = running_matches(db)[0].id
    proc.send_signal(first)
    time.sleep(0.5)
    proc.send_signal(second)
    assert proc.wait(60) == 0, "the second signal did not cut the 600 s grace short"
    err = proc.stderr.read()
    assert "second signal" in err, err
    store = Store.open_existing(db)
    stored = store.get(match_id)
    rated = {r[0] for r in store.db.query("SELECT DISTINCT match_id FROM results")}
    store.close()
    assert (stored.status, stored.reason) == ("aborted", "server shutdown")
    assert stored.record is not None and stored.record.decisions, "aborted and recorded with its decisions"
    assert match_id not in rated


def test_while_shutting_down_only_a_bot_with_a_match_to_finish_is_welcomed(tmp_path):
    """Before: every hello was welcomed while the daemon shut down (health NOT_SERVING),
    and the stream cut off when it stopped. A bot with a running match must still get in to
    finish it within the grace; any other is refused UNAVAILABLE (come back later)."""
    async def scenario():
        async with running_daemon(tmp_path, decision_ms=60_000) as daemon:
            first = await Bot(daemon, "alice", lambda request, bot: None).start()  # holds its first request
            match_id = await daemon.create_match(["alice", "house:random", "house:random", "house:random"])
            while not first.events.get((match_id, 0)):
                await asyncio.sleep(0.01)
            await first.drop()
            shutdown = asyncio.get_running_loop().create_task(daemon.arena.shutdown(60))
            while daemon.arena.accepting:
                await asyncio.sleep(0.01)
            back = await Bot(daemon, "alice", first_legal).start()
            other = await Bot(daemon, "erin").start()
            await back.wait_ended(match_id, timeout=60)
            await asyncio.wait_for(shutdown, 60)
            return back, other, await other.final_status(), await back.final_status(), daemon.stored(match_id)

    back, other, other_status, back_status, stored = run(scenario())
    assert back.welcome is not None and [m.seat for m in back.welcome.active_matches] == [0]
    assert stored.status == "finished"  # played out within the grace by the bot that came back
    assert other.welcome is None and other_status == grpc.StatusCode.UNAVAILABLE
    assert back_status == grpc.StatusCode.UNAVAILABLE  # its stream ends with the daemon: reconnect later


def test_a_match_whose_result_could_not_be_stored_is_not_left_running_after_a_clean_stop(tmp_path, monkeypatch):
    """A full disk: the result could not be stored, and the match was announced aborted.
    Before (an attack pass), its row stayed 'running' after a clean stop, until this
    instance's next start (maybe never): other daemons of the store listed it as running.
    Now the stop marks it aborted, once the disk takes writes again."""
    import heartsd.arena

    monkeypatch.setattr(heartsd.arena, "STORE_RETRY_DELAYS_S", (0.01,))
    full = fill_the_disk(monkeypatch, "finish")

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            match_id = await daemon.create_match(["house:random"] * 4, deals=1)
            await daemon.wait_finished(match_id)
            announced = daemon.arena.runners.get(match_id)
            during = daemon.stored(match_id).status
            full["disk"] = False  # space came back; then the daemon stops
            # A match this daemon does not run, of its instance (a daemon that took the lease
            # over, or one without a lease on the same store): not this stop's to end.
            daemon.arena.store.insert_running("m-someone-elses", "standard", 4, ["a", "b", "c", "d"], 1)
        return match_id, announced, during

    match_id, announced, during = run(scenario())
    assert announced is None and during == "running"
    store = Store(str(tmp_path / "heartsd.db"))
    stored, other = store.get(match_id), store.get("m-someone-elses")
    store.close()
    assert stored.status == "aborted" and stored.reason == "server error: the result could not be stored"
    assert other.status == "running", "a clean stop ended a match it did not run"


def test_a_match_whose_result_could_not_be_stored_is_marked_aborted_once_the_store_takes_writes(tmp_path,
                                                                                                  monkeypatch):
    """Before (an operator's pass): the row of a match whose result could not be stored
    said 'running' until the daemon stopped; meanwhile `admin watch` sent the organiser to
    "another daemon of this store" that did not exist. Now the daemon marks it aborted as
    soon as the store takes writes again, while it runs. (And the result itself is tried
    for ~70 s first: a PostgreSQL failover takes 5-30 s, and 4 s of retries lost every
    match that ended during one.)"""
    import heartsd.arena

    assert sum(heartsd.arena.STORE_RETRY_DELAYS_S) >= 60
    monkeypatch.setattr(heartsd.arena, "STORE_RETRY_DELAYS_S", (0.01,))
    monkeypatch.setattr(heartsd.arena, "UNSTORED_RETRY_S", 0.05)
    full = fill_the_disk(monkeypatch, "finish", "abort_interrupted")

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            match_id = await daemon.create_match(["house:random"] * 4, deals=1)
            await daemon.wait_finished(match_id)
            await asyncio.sleep(0.3)  # several marking attempts fail meanwhile
            during = daemon.stored(match_id).status
            full["disk"] = False
            for _ in range(100):
                after = daemon.stored(match_id)
                if after.status != "running":
                    break
                await asyncio.sleep(0.05)
            return during, after.status, after.reason

    during, status, reason = run(scenario())
    assert during == "running"
    assert (status, reason) == ("aborted", "server error: the result could not be stored")


def test_a_full_disk_is_logged_in_its_own_words_not_a_traceback_per_retry(tmp_path, monkeypatch):
    """An organiser's pass: on a full disk each retry of a result (every few seconds for
    ~70 s, per match) and each failed checkpoint printed a whole traceback, burying the
    one line that mattered. A store failure is now logged as the store's words; a
    traceback is kept for the first failure of any other kind (a defect of ours)."""
    import heartsd.arena
    from structlog.testing import capture_logs

    import heartsd.runner

    monkeypatch.setattr(heartsd.arena, "STORE_RETRY_DELAYS_S", (0.01, 0.01, 0.01))
    monkeypatch.setattr(heartsd.runner, "CHECKPOINT_EVERY_S", 0.0)  # a checkpoint at each deal's end
    full = fill_the_disk(monkeypatch, "finish", "checkpoint_many")

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            with capture_logs() as logs:
                match_id = await daemon.create_match(["house:random"] * 4, deals=2)
                await daemon.wait_finished(match_id)
                for _ in range(200):
                    if daemon.arena.unstored_matches == 0 or any(
                            e["event"].startswith("a match result could not be stored") for e in logs):
                        break
                    await asyncio.sleep(0.02)
            full["disk"] = False
            return [e for e in logs if e["event"] in ("storing a result failed; retrying", "checkpoint failed")]

    said = run(scenario())
    assert [e["event"] for e in said].count("storing a result failed; retrying") == 3, said
    assert "checkpoint failed" in [e["event"] for e in said], said
    assert all(e.get("error") == "database or disk is full" and not e.get("exc_info") for e in said), said


def test_a_failing_store_shows_in_the_health_check_and_the_server_status_until_it_takes_writes(tmp_path,
                                                                                                monkeypatch):
    """Before (an operator's pass): while the store took no writes (a full disk) the
    health check answered SERVING and GetServerStatus said nothing of it; only the log
    told. Now the health check answers NOT_SERVING, and GetServerStatus gives when the
    failure began, its message and the matches whose result waits; all clear again once
    the store takes writes (the waiting result is then marked aborted)."""
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    from heartsbot.proto import admin_pb2, admin_pb2_grpc

    import heartsd.arena

    monkeypatch.setattr(heartsd.arena, "STORE_RETRY_DELAYS_S", (0.01,) * 40)  # still retrying while looked at
    monkeypatch.setattr(heartsd.arena, "UNSTORED_RETRY_S", 0.05)
    full = fill_the_disk(monkeypatch, "finish", "abort_interrupted")

    async def scenario():  # type: ignore[no-untyped-def]
        async with running_daemon(tmp_path) as daemon, daemon.channel() as channel:
            health = health_pb2_grpc.HealthStub(channel)
            admin = admin_pb2_grpc.AdminServiceStub(channel)

            async def look():  # type: ignore[no-untyped-def]
                checked = await health.Check(health_pb2.HealthCheckRequest(service=""))
                status = await admin.GetServerStatus(admin_pb2.GetServerStatusRequest(),
                                                     metadata=(("authorization", f"Bearer {ADMIN}"),))
                return checked.status, status.store_failing_since_ms, status.store_error, status.unstored_matches

            before = await look()
            began = time.time() * 1000
            match_id = await daemon.create_match(["house:random"] * 4, deals=1)
            for _ in range(200):  # the health check follows the status on the loop's next pass: both looked at
                during = await look()
                if during[1] and during[0] == health_pb2.HealthCheckResponse.NOT_SERVING:
                    break
                await asyncio.sleep(0.02)
            await daemon.wait_finished(match_id)  # announced aborted once the retries are over
            full["disk"] = False
            for _ in range(200):
                after = await look()
                if after[0] == health_pb2.HealthCheckResponse.SERVING and daemon.stored(match_id).status != "running":
                    break
                await asyncio.sleep(0.05)
            return before, began, during, after, daemon.stored(match_id).status

    before, began, during, after, stored = run(scenario())
    serving, not_serving = 1, 2  # HealthCheckResponse.SERVING, NOT_SERVING
    assert before == (serving, 0, "", 0)
    assert during[0] == not_serving and began - 1000 <= during[1] <= time.time() * 1000, during
    assert during[2] == "database or disk is full" and during[3] == 1, during
    assert after == (serving, 0, "", 0) and stored == "aborted", after


def test_an_idle_daemon_whose_store_failed_serves_again_once_the_store_takes_writes(tmp_path, monkeypatch):
    """A review of the first fix: the health check came back to SERVING only at the arena's
    next write, so a daemon whose failed write was a match's start (or a checkpoint), with
    nothing else to write, stayed NOT_SERVING after the store recovered, and an
    orchestrator that stops traffic to it would never have sent the write that clears it.
    Now, while the store fails, a write every STORE_PROBE_S asks whether it works again."""
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    import heartsd.arena

    monkeypatch.setattr(heartsd.arena, "STORE_PROBE_S", 0.05)
    full = fill_the_disk(monkeypatch, "start", "probe_write")

    async def scenario():  # type: ignore[no-untyped-def]
        async with running_daemon(tmp_path) as daemon, daemon.channel() as channel:
            health = health_pb2_grpc.HealthStub(channel)

            async def status() -> int:
                return (await health.Check(health_pb2.HealthCheckRequest(service=""))).status

            with pytest.raises(grpc.aio.AioRpcError):
                await daemon.create_match(["house:random"] * 4, deals=1)
            failing_status = await status()
            await asyncio.sleep(0.3)  # probes fail meanwhile
            still = await status()
            full["disk"] = False
            for _ in range(100):  # nothing else writes: only the probe can tell
                if await status() == health_pb2.HealthCheckResponse.SERVING:
                    break
                await asyncio.sleep(0.05)
            return failing_status, still, await status(), daemon.arena.store_health.failures

    failing_status, still, after, failures = run(scenario())
    assert (failing_status, still, after) == (2, 2, 1)  # NOT_SERVING, NOT_SERVING, SERVING
    assert failures >= 3  # the start, and probes that failed


def test_a_daemon_whose_store_was_deleted_aborts_its_matches_instead_of_finishing_them_into_it(tmp_path):
    """Before (an operator's pass): once the lease's heartbeat saw the store deleted, the
    daemon stopped with its grace, letting matches finish into the deleted file: 19 were
    announced finished after the loss, none kept. Now the loss aborts the running matches
    at once, as a second signal does (a 600 s grace and a house match of several minutes:
    before, the daemon was still finishing it)."""
    import os

    db = tmp_path / "d.db"
    proc, _ = start(tmp_path, "--house-matches", "1", "--house-delay-ms", "200", "--shutdown-grace-s", "600")
    try:
        deadline = time.time() + 30
        while time.time() < deadline:
            store = Store.open_existing(str(db))
            running = store.list(status="running")
            store.close()
            if running:
                break
            time.sleep(0.1)
        assert running
        os.unlink(db)
        assert proc.wait(60) == 0, "the daemon went on finishing its matches into the deleted store"
        err = proc.stderr.read()
        assert "renamed, deleted or replaced" in err and "aborting the running matches now" in err, err
    finally:
        if proc.poll() is None:
            proc.kill()


@pytest.mark.parametrize("ending", ["another signal", "hurried_exit_s"])
def test_a_hurried_stop_stuck_on_its_store_exits_at_the_next_signal_or_within_hurried_exit_s(
        tmp_path, monkeypatch, ending):
    """The review of the lease fence: a hurried stop (a second signal, or the store lost)
    still waited on every write of its aborted matches' records, and on the threads stuck in
    them, so a store that did not answer held the exit for a minute or more, and every signal
    after the second did nothing: only SIGKILL ended it. Now one more signal exits at once
    (exit 1), and a hurried stop exits within ``hurried_exit_s`` whatever the store does
    (exit 2). Nothing is lost: the next start marks the match aborted, as after a crash.
    The store here is held by another writer (an exclusive SQLite transaction), so every
    write of the stop waits out SQLite's 10 s busy timeout, several times."""
    import sqlite3

    monkeypatch.setenv("HEARTSD_HURRIED_EXIT_S", "600" if ending == "another signal" else "2")
    db = str(tmp_path / "d.db")
    proc, _ = start(tmp_path, *LADDER, "--shutdown-grace-s", "600")
    match_id = running_ladder_match(db)
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        proc.send_signal(signal.SIGTERM)
        time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)  # hurried: the abort's writes now wait on the held store
        if ending == "another signal":
            time.sleep(1.0)
            proc.send_signal(signal.SIGINT)
        try:
            code = proc.wait(20)  # before: ~40 s or more, and the third signal did nothing
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
            raise AssertionError(f"the stuck stop did not end: {ending} had no effect")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    err = proc.stderr.read()
    if ending == "another signal":
        assert code == 1 and "another signal while the running matches are aborted: exiting now" in err, (code, err)
    else:
        assert code == 2 and "the stop did not end within 2 s of aborting the running matches" in err, (code, err)
    assert running_matches(db), "the match was not recorded: still running in the store until the next start"
    again, _ = start(tmp_path)
    again.send_signal(signal.SIGTERM)
    assert again.wait(60) == 0
    store = Store.open_existing(db)
    stored = store.get(match_id)
    store.close()
    assert stored.status == "aborted", (stored.status, stored.reason)


def test_a_stop_the_store_loss_began_takes_its_first_signal_for_the_first(monkeypatch):
    """A review: a daemon fenced off its store (_keep_lease) is hurried already, so the first
    signal an operator or a supervisor then sent exited at once (exit 1, "another signal"),
    turning the store's exit 2 into 1. Now the signals are counted: the first after the
    stop hurries (or, hurried already, is only counted), the next exits."""
    from heartsd import server as daemon

    exits: list[int] = []
    monkeypatch.setattr(daemon, "_exit_now", lambda code, why: exits.append(code))
    fenced = asyncio.Event()
    fenced.set()
    signals = daemon._Hurry(fenced)
    signals()
    assert exits == []  # before: [1]
    signals()
    assert exits == [1]
    stopped = asyncio.Event()  # a stop a signal began: the next signal hurries, one more exits
    signals = daemon._Hurry(stopped)
    signals()
    assert stopped.is_set() and exits == [1]
    signals()
    assert exits == [1, 1]
