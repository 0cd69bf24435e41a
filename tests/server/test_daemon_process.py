"""heartsd as users run it: a real process, its flags, SIGTERM, and the replay tools."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from heartsbot.proto import admin_pb2, admin_pb2_grpc, game_pb2
from heartsd.store import Store

from .harness import ADMIN, BOTS, Bot, Daemon, auth, first_legal

HEARTSD = [sys.executable, "-m", "heartsd.cli"]


def start(tmp_path: Path, *extra: str) -> tuple[subprocess.Popen[str], int]:
    args = [*HEARTSD, "serve", "--port", "0", "--db", str(tmp_path / "d.db"), "--admin-token", ADMIN,
            "--log-level", "warning", *[a for n, t in BOTS.items() for a in ("--bot", f"{n}:{t}")], *extra]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if "listening on" not in line:  # it stopped at start: say why (its stderr, once it has exited)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(10)
        assert False, f"{line!r}, exit {proc.poll()}: " + (proc.stderr.read() if proc.poll() is not None else "")
    return proc, int(line.rsplit(":", 1)[1])


class Remote(Daemon):
    """The harness' view of a daemon in another process (no arena access)."""

    def __init__(self, port: int) -> None:
        self.port = port


def test_port_zero_prints_the_bound_port_and_health_answers(tmp_path):
    proc, port = start(tmp_path)
    try:
        async def check():
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                return await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())

        assert asyncio.run(check()).status == health_pb2.HealthCheckResponse.SERVING
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0


def test_health_takes_the_server_as_every_client_does_and_target_still_works(tmp_path):
    """`heartsd health` reads --server or HEARTS_SERVER, like `heartsd admin` and every
    client (README, "Command-line convention"); before, it took only --target (still
    accepted: deploy/'s health checks use it)."""
    proc, port = start(tmp_path)
    target = f"127.0.0.1:{port}"
    clean = {k: v for k, v in os.environ.items() if k != "HEARTS_SERVER"}
    try:
        probes = {
            "--server": subprocess.run([*HEARTSD, "health", "--server", target], capture_output=True, text=True,
                                       timeout=60, env=clean),
            "HEARTS_SERVER": subprocess.run([*HEARTSD, "health"], capture_output=True, text=True, timeout=60,
                                            env={**clean, "HEARTS_SERVER": target}),
            "--target": subprocess.run([*HEARTSD, "health", "--target", target], capture_output=True, text=True,
                                       timeout=60, env=clean),
            "flag wins": subprocess.run([*HEARTSD, "health", "--server", target], capture_output=True, text=True,
                                        timeout=60, env={**clean, "HEARTS_SERVER": "127.0.0.1:1"}),
        }
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0
    for how, probe in probes.items():
        assert probe.returncode == 0 and probe.stdout == f"{target}: SERVING\n", (how, probe.stdout, probe.stderr)


def test_bad_configuration_stops_the_daemon_with_a_clear_message(tmp_path):
    bad = subprocess.run([*HEARTSD, "serve", "--port", "0", "--decision-ms", "0"], capture_output=True, text=True)
    assert bad.returncode == 2 and "decision_ms: must be at least 1" in bad.stderr
    config = tmp_path / "h.toml"
    config.write_text('port = "eighty"\n')
    bad = subprocess.run([*HEARTSD, "serve", "--config", str(config)], capture_output=True, text=True)
    assert bad.returncode == 2 and "port: expected an integer" in bad.stderr
    env = {**os.environ, "HEARTSD_LOG_FORMAT": "xml"}
    bad = subprocess.run([*HEARTSD, "serve", "--port", "0"], capture_output=True, text=True, env=env)
    assert bad.returncode == 2 and "log_format" in bad.stderr


def test_sigterm_during_matches_loses_nothing(tmp_path):
    proc, port = start(tmp_path, "--shutdown-grace-s", "0.5")
    daemon = Remote(port)

    async def slow(request, bot):
        await asyncio.sleep(0.02)
        return first_legal(request, bot)

    async def scenario():
        bots = [await Bot(daemon, n, slow, max_matches=4).start() for n in ("alice", "bob", "carol", "dave")]
        ids = []
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = admin_pb2_grpc.AdminServiceStub(channel)
            for i in range(4):
                request = admin_pb2.CreateMatchRequest(ruleset="standard", seed=i)
                for n in ("alice", "bob", "carol", "dave"):
                    request.seats.add(bot=n)
                ids.append((await stub.CreateMatch(request, metadata=auth(ADMIN))).match_id)
            request = admin_pb2.CreateMatchRequest(ruleset="standard", format=game_pb2.MatchFormat(fixed_deals=1))
            for _ in range(4):
                request.seats.add(house="random")
            ids.append((await stub.CreateMatch(request, metadata=auth(ADMIN))).match_id)
        await asyncio.sleep(1.0)
        proc.send_signal(signal.SIGTERM)
        for bot in bots:
            await asyncio.wait_for(bot._task, 20)
        return ids, bots, [await bot.status() for bot in bots]

    ids, bots, statuses = asyncio.run(scenario())
    assert proc.wait(30) == 0
    # Before: OK, which tells a bot to leave for good. The server is coming back: reconnect.
    assert statuses == [grpc.StatusCode.UNAVAILABLE] * 4
    for bot in bots:  # told at once, in every match it was playing (bot.proto, Notice)
        for (match_id, _), events in bot.events.items():
            notices = [e.notice.text for e in events if e.HasField("notice") and e.notice.seat == -1]
            assert any("shutting down" in text for text in notices), (match_id, notices)
    store = Store(str(tmp_path / "d.db"))
    stored = [store.get(i) for i in ids]
    assert all(s is not None and s.status in ("finished", "aborted") for s in stored)
    assert sum(s.status == "aborted" for s in stored) >= 1
    for s in stored:
        assert s.record is not None and s.record.result.status in (
            game_pb2.MATCH_STATUS_FINISHED, game_pb2.MATCH_STATUS_ABORTED)
    ended = {m for bot in bots for m in bot.ended}
    assert set(ids[:4]) <= ended  # every bot was told how its matches ended
    verify = subprocess.run([*HEARTSD, "replay", "verify", "--db", str(tmp_path / "d.db")], capture_output=True, text=True)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert f"{len(ids)} verified, 0 failed" in verify.stdout
    show = subprocess.run([*HEARTSD, "replay", "show", ids[-1], "--db", str(tmp_path / "d.db")], capture_output=True, text=True)
    assert show.returncode == 0 and "trick:" in show.stdout and "points:" in show.stdout
    store.close()


def test_answers_in_flight_at_shutdown_are_read_before_the_status(tmp_path):
    """A bot answering when its match is aborted by a shutdown gets its answer read (and
    rejected: the match is over) and then UNAVAILABLE with the reason. Before, the status
    went out at once and the daemon closed the connection while answers were arriving: under
    load a bot now and then saw 'Stream removed' or INTERNAL, not the status that says
    "come back"."""
    proc, port = start(tmp_path, "--shutdown-grace-s", "0")
    daemon = Remote(port)

    async def scenario():
        asked, answer_now = asyncio.Event(), asyncio.Event()
        holding = set()

        async def hold(request, bot):
            holding.add(bot.name)
            if len(holding) == 4:
                asked.set()
            await answer_now.wait()
            return first_legal(request, bot)

        bots = [await Bot(daemon, n, hold).start() for n in ("alice", "bob", "carol", "dave")]
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            request = admin_pb2.CreateMatchRequest(ruleset="standard", seed=5)
            for n in ("alice", "bob", "carol", "dave"):
                request.seats.add(bot=n)
            await admin_pb2_grpc.AdminServiceStub(channel).CreateMatch(request, metadata=auth(ADMIN))
        await asyncio.wait_for(asked.wait(), 20)  # every seat holds its pass request
        proc.send_signal(signal.SIGTERM)
        await asyncio.sleep(0.2)  # the match is aborted meanwhile; the answers go out now
        answer_now.set()
        for bot in bots:
            await asyncio.wait_for(bot._task, 20)
        return [(await bot.status(), await bot._call.details(), len(bot.rejections)) for bot in bots]

    ended = asyncio.run(scenario())
    assert proc.wait(30) == 0
    assert ended == [(grpc.StatusCode.UNAVAILABLE, "the server is shutting down: connect again when it is back", 1)] * 4


def test_a_crash_leaves_running_matches_visibly_aborted(tmp_path):
    proc, port = start(tmp_path, "--house-matches", "2", "--house-delay-ms", "20")
    time.sleep(1.0)
    proc.kill()
    proc.wait(10)
    store = Store(str(tmp_path / "d.db"))
    running = [m for m in store.list() if m.status == "running"]
    store.close()
    assert running, "a match was running when the daemon died"
    proc, port = start(tmp_path)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(20) == 0
    store = Store(str(tmp_path / "d.db"))
    after = {m.id: m for m in store.list()}
    store.close()
    for m in running:
        assert after[m.id].status == "aborted" and "stopped" in after[m.id].reason
    verify = subprocess.run([*HEARTSD, "replay", "verify", "--db", str(tmp_path / "d.db")], capture_output=True, text=True)
    assert "0 failed" in verify.stdout  # aborted-without-record rows are reported, not verified


def test_ladder_mode_plays_rated_matches_with_house_bots_and_shows_a_leaderboard(tmp_path):
    proc, port = start(tmp_path, "--ladder", "--ladder-house", "random", "heuristic", "random", "heuristic",
                       "--decision-ms", "200", "--ladder-deals", "4")  # short matches
    try:
        deadline = time.time() + 60
        standings = []
        while time.time() < deadline and len(standings) < 4:
            time.sleep(0.5)
            store = Store(str(tmp_path / "d.db"))
            standings = store.ladder.standings("standard")
            store.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
    assert {s.bot for s in standings} == {"house-random", "house-heuristic", "house-random-2", "house-heuristic-2"}
    board = subprocess.run([*HEARTSD, "ladder", "leaderboard", "--db", str(tmp_path / "d.db")],
                           capture_output=True, text=True)
    assert board.returncode == 0 and "house-" in board.stdout and "conservative" in board.stdout
    assert "±inf" not in board.stdout  # a single match has no interval: "±?", as `heartsbot leaderboard` says


def test_sigkill_during_a_ladder_run_loses_no_result_and_counts_none_twice(tmp_path, store_url):
    db = store_url  # on SQLite and on PostgreSQL

    def consistent() -> tuple[int, int]:
        store = Store(db)
        rated = {r[0] for r in store.db.query("SELECT DISTINCT match_id FROM results")}
        rows = store.db.query("SELECT match_id, COUNT(*) FROM results GROUP BY match_id")
        statuses = {m.id: m.status for m in store.list(limit=1000)}
        # The daemon may rate a match at any moment: the stored ratings and their replay are
        # compared in one locked transaction (recompute's change is 0.0 when they are equal),
        # never read one after the other, when a match rated in between makes them differ.
        _, change = store.ladder.recompute("standard")
        store.close()
        assert all(count == 4 for _, count in rows), "every rated match has exactly one result per seat"
        assert all(statuses[m] == "finished" for m in rated), "only finished matches are rated"
        assert change == 0.0, "stored ratings equal a replay of the results"
        return len(rated), sum(1 for s in statuses.values() if s == "aborted")

    args = ("--ladder", "--ladder-house", "random", "heuristic", "random", "heuristic", "--decision-ms", "200",
            "--ladder-deals", "4", "--db", db)
    proc, _ = start(tmp_path, *args, "--house-delay-ms", "5")
    deadline = time.time() + 60
    rated = 0
    while time.time() < deadline and rated < 2:
        time.sleep(0.3)
        rated, _ = consistent()
    proc.kill()  # SIGKILL: no chance to clean up
    proc.wait(10)
    rated_before, _ = consistent()
    assert rated_before >= 2
    proc, _ = start(tmp_path, *args)
    deadline = time.time() + 60
    while time.time() < deadline:
        time.sleep(0.3)
        rated_after, aborted = consistent()
        if rated_after > rated_before:
            break
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(30) == 0
    rated_after, aborted = consistent()
    assert rated_after > rated_before, "the ladder went on after the restart"
    store = Store(db)
    assert not [m for m in store.list(limit=1000) if m.status == "running"]
    store.close()
