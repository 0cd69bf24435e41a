"""Clients leave cleanly: `heartsbot play` drains on the first Ctrl-C and leaves at once on
a second, the stdio bridge and the Node bot drain when they have their matches. Each is a
real process against a real daemon; a drained match is played to its end by the bot."""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path

import grpc
from heartsbot.proto import game_pb2

from ..server.harness import BOTS, run, running_daemon
from .test_node_bot import BOT_JS, node

P = game_pb2
ROOT = Path(__file__).resolve().parents[2]
SH_BOT = ["sh", str(ROOT / "clients" / "stdio-examples" / "first_legal.sh")]
HOUSE3 = ["house:random"] * 3


async def connected(daemon, proc, name: str) -> None:
    for _ in range(800):
        if daemon.arena.sessions.get(name) is not None:
            return
        if proc.returncode is not None:
            raise AssertionError(f"exited: {(await proc.communicate())[1].decode()}")
        await asyncio.sleep(0.025)
    raise AssertionError("did not connect")


async def draining(daemon, name: str, timeout: float = 60) -> None:
    """Until ``name``'s session drains (a client that never does fails the test, not hangs it)."""
    async def wait() -> None:
        while not ((session := daemon.arena.sessions.get(name)) and session.drain_reason):
            await asyncio.sleep(0.01)

    await asyncio.wait_for(wait(), timeout)


async def played(daemon, match_id: str, seat_decisions: int) -> None:
    runner = daemon.arena.runners[match_id]

    async def wait() -> None:
        while sum(d.seat == 0 for d in runner.decisions) < seat_decisions:
            await asyncio.sleep(0.005)

    await asyncio.wait_for(wait(), 60)


async def exit_of(proc, timeout: float = 60) -> tuple[int, str]:
    _, err = await asyncio.wait_for(proc.communicate(), timeout)
    return proc.returncode, err.decode()


def own_decisions(stored) -> list[int]:
    return [d.provenance for d in stored.record.decisions if d.seat == 0]


async def refused_new_match(daemon, name: str) -> str:
    try:
        await daemon.create_match([name, *HOUSE3], deals=1)
    except grpc.aio.AioRpcError as exc:
        assert exc.code() == grpc.StatusCode.FAILED_PRECONDITION
        return exc.details()
    raise AssertionError("a draining bot was seated in a new match")


def start_play(daemon, name: str):
    return asyncio.create_subprocess_exec(
        sys.executable, "-m", "heartsbot.cli", "play", "--server", daemon.target, "--token", BOTS[name],
        "--name", name, "--strategy", "random", "--max-matches", "2",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)


def test_heartsbot_play_drains_on_ctrl_c_and_its_match_is_played_to_the_end(tmp_path):
    async def scenario():
        async with running_daemon(tmp_path, house_delay_ms=15) as daemon:
            proc = await start_play(daemon, "alice")
            await connected(daemon, proc, "alice")
            match_id = await daemon.create_match(["alice", *HOUSE3], deals=2, seed=4)
            await played(daemon, match_id, 3)
            proc.send_signal(signal.SIGINT)
            await draining(daemon, "alice")
            refused = await refused_new_match(daemon, "alice")
            code, err = await exit_of(proc)
            return code, err, refused, match_id, daemon.stored(match_id)

    code, err, refused, match_id, stored = run(scenario())
    assert code == 0, err
    assert f"draining: finishing 1 running match(es): {match_id}, taking no new ones" in err, err
    assert "draining" in refused
    assert stored.status == "finished" and stored.record.result.deals == 2
    assert set(own_decisions(stored)) == {P.PROVENANCE_BOT}, "no timeout, no auto-play: it finished the match"


def test_a_second_ctrl_c_leaves_at_once_naming_what_it_abandons(tmp_path):
    async def scenario():
        async with running_daemon(tmp_path, house_delay_ms=30) as daemon:
            proc = await start_play(daemon, "bob")
            await connected(daemon, proc, "bob")
            match_id = await daemon.create_match(["bob", *HOUSE3], deals=3, seed=5)
            await played(daemon, match_id, 2)
            proc.send_signal(signal.SIGINT)
            await draining(daemon, "bob")
            proc.send_signal(signal.SIGINT)
            code, err = await exit_of(proc, 20)
            still_running = match_id in daemon.arena.runners
            daemon.arena.runners[match_id].stop(P.MATCH_STATUS_CANCELLED, "test over") if still_running else None
            return code, err, match_id, still_running

    code, err, match_id, still_running = run(scenario())
    assert code == 130, err
    assert f"leaving now, abandoning 1 match(es): {match_id} (the server plays their seats by default)" in err, err
    assert still_running, "it left before its match ended"


def test_the_stdio_bridge_drains_when_its_last_match_starts_and_is_never_seated_again(tmp_path):
    async def scenario():
        async with running_daemon(tmp_path, house_delay_ms=5) as daemon:
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "heartsbot.cli", "stdio", "--server", daemon.target, "--token", BOTS["carol"],
                "--name", "carol", "--matches", "1", "--max-matches", "2", "--", *SH_BOT,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd=ROOT)
            await connected(daemon, proc, "carol")
            match_id = await daemon.create_match(["carol", *HOUSE3], deals=2, seed=6)
            await draining(daemon, "carol")
            refused = await refused_new_match(daemon, "carol")  # it still has a free slot
            code, err = await exit_of(proc)
            return code, err, refused, daemon.stored(match_id)

    code, err, refused, stored = run(scenario())
    assert code == 0, err
    assert "draining" in refused
    assert stored.status == "finished" and set(own_decisions(stored)) == {P.PROVENANCE_BOT}
    assert "1 matches" in err and "0 answered by the bridge" in err, err


def test_the_node_bot_drains_at_its_match_count_and_on_ctrl_c(tmp_path):
    async def scenario():
        async with running_daemon(tmp_path, house_delay_ms=10) as daemon:
            counted = await asyncio.create_subprocess_exec(
                node(), str(BOT_JS), "--server", daemon.target, "--token", BOTS["dave"], "--name", "dave",
                "--matches", "1", "--max-matches", "2",
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
            await connected(daemon, counted, "dave")
            first = await daemon.create_match(["dave", *HOUSE3], deals=2, seed=7)
            await draining(daemon, "dave")
            refused = await refused_new_match(daemon, "dave")
            counted_exit = await exit_of(counted)
            interrupted = await asyncio.create_subprocess_exec(
                node(), str(BOT_JS), "--server", daemon.target, "--token", BOTS["erin"], "--name", "erin",
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
            await connected(daemon, interrupted, "erin")
            second = await daemon.create_match(["erin", *HOUSE3], deals=2, seed=8)
            await played(daemon, second, 3)
            interrupted.send_signal(signal.SIGINT)
            interrupted_exit = await exit_of(interrupted)
            return refused, counted_exit, daemon.stored(first), interrupted_exit, daemon.stored(second)

    refused, (code1, err1), first, (code2, err2), second = run(scenario())
    assert "draining" in refused
    assert code1 == 0 and "drained" in err1, err1
    assert code2 == 0 and "draining (Ctrl-C): finishing 1 running match(es)" in err2 and "drained" in err2, err2
    for stored in (first, second):
        assert stored.status == "finished" and set(own_decisions(stored)) == {P.PROVENANCE_BOT}


def test_one_ctrl_c_leaves_at_once_when_the_server_is_gone_and_no_match_runs(tmp_path):
    """The convention: the first Ctrl-C drains, and exits at once when no match is running.
    Before (an attack pass), with the server gone (no match running) it only set the drain
    flag: `heartsbot play` and the Node bot kept reconnecting (10 minutes, until a second
    signal)."""
    async def scenario():
        clients = {}
        async with running_daemon(tmp_path) as daemon:
            clients["play"] = await start_play(daemon, "carol")
            clients["node"] = await asyncio.create_subprocess_exec(
                node(), str(BOT_JS), "--server", daemon.target, "--token", BOTS["dave"], "--name", "dave",
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
            await connected(daemon, clients["play"], "carol")
            await connected(daemon, clients["node"], "dave")
        for proc in clients.values():  # the server is gone; at once, or once they notice: either way
            proc.send_signal(signal.SIGINT)
        out = {}
        for label, proc in clients.items():
            try:
                out[label] = await exit_of(proc, 20)
            except asyncio.TimeoutError:
                proc.kill()
                out[label] = (None, (await proc.communicate())[1].decode()[-500:])
        return out

    out = run(scenario())
    assert out["play"][0] == 0 and out["node"][0] == 0, out


def test_a_supervisors_sigterm_drains_both_clients_and_is_named_as_itself(tmp_path):
    """A newcomer's pass: SIGTERM (a supervisor's stop: systemd, Kubernetes) drains as Ctrl-C
    does, but heartsbot and the Node bot named it "Ctrl-C", in their own log and in the
    drain reason the server keeps for the organiser (`heartsd admin bots`). Each now names
    the signal it got; a second one still leaves at once."""
    async def scenario():
        async with running_daemon(tmp_path, house_delay_ms=15) as daemon:
            python = await start_play(daemon, "alice")
            nodejs = await asyncio.create_subprocess_exec(
                node(), str(BOT_JS), "--server", daemon.target, "--token", BOTS["bob"], "--name", "bob",
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
            reasons = []
            for seed, (name, proc) in enumerate((("alice", python), ("bob", nodejs))):
                await connected(daemon, proc, name)
                match_id = await daemon.create_match([name, *HOUSE3], deals=2, seed=seed)  # kept while it drains
                await played(daemon, match_id, 2)
                proc.send_signal(signal.SIGTERM)
                await draining(daemon, name)
                reasons.append(daemon.arena.sessions.get(name).drain_reason)
            return reasons, await exit_of(python), await exit_of(nodejs)

    reasons, (python_code, python_err), (node_code, node_err) = run(scenario())
    assert reasons == ["SIGTERM", "SIGTERM"], reasons  # before: "Ctrl-C" both
    assert python_code == 0 and "taking no new ones (SIGTERM again to leave at once)" in python_err, python_err
    assert node_code == 0 and "draining (SIGTERM): finishing 1 running match(es)" in node_err, node_err
