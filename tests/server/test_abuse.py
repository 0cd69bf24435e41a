"""Holding up under abuse (issue 13): one test per attack measured from outside.

Each attack runs against a real daemon on a loopback port (in this process, or in its
own process where its memory or its log output is what matters), and each test
checks what the server did or recorded rather than how fast, wherever it can.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import grpc

from heartsbot.proto import bot_pb2, game_pb2

from .harness import ADMIN, BOTS, Bot, auth, run, running_daemon

HEARTSD = [sys.executable, "-m", "heartsd.cli"]
HOUSE3 = ["house:random", "house:random", "house:random"]


def start_process(tmp_path: Path, *extra: str) -> tuple[subprocess.Popen[str], int]:
    """``heartsd serve`` as users run it (its GC settings, its logging), on a free port."""
    args = [*HEARTSD, "serve", "--port", "0", "--db", str(tmp_path / "d.db"), "--admin-token", ADMIN,
            "--log-level", "info", *[a for n, t in BOTS.items() for a in ("--bot", f"{n}:{t}")], *extra]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert "listening on" in line, line + (proc.stderr.read() if proc.poll() is not None else "")
    return proc, int(line.rsplit(":", 1)[1])


def stop_process(proc: subprocess.Popen[str]) -> str:
    """SIGTERM, wait, and return what the daemon logged."""
    proc.terminate()
    try:
        _, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
    return err


# -- malformed protobuf bytes on the bot stream ---------------------------------------------

async def raw_stream(target: str, frames: list[bytes]) -> tuple[grpc.StatusCode, str]:
    """Send ``frames`` (raw message bytes) on a bot stream; the final status and details."""
    async with grpc.aio.insecure_channel(target) as channel:
        play = channel.stream_stream("/hearts.v1.BotService/Play", request_serializer=None, response_deserializer=None)
        call = play(metadata=auth(BOTS["alice"]))
        for frame in frames:
            await call.write(frame)
        try:
            async for _ in call:
                pass
        except grpc.aio.AioRpcError as exc:
            return exc.code(), exc.details() or ""
        return await call.code(), await call.details() or ""


def test_malformed_bytes_end_the_stream_with_invalid_argument_and_no_traceback(tmp_path):
    """proto/ promises INVALID_ARGUMENT for a message that cannot be understood; today the
    stream ended OK and a DecodeError traceback was logged at error level."""
    hello = bot_pb2.PlayRequest(hello=bot_pb2.Hello(name="alice", max_concurrent_matches=1)).SerializeToString()
    garbage = b"\xff\xff\xff\xff not protobuf"
    proc, port = start_process(tmp_path)
    try:
        first = run(raw_stream(f"127.0.0.1:{port}", [garbage]))
        later = run(raw_stream(f"127.0.0.1:{port}", [hello, garbage]))
    finally:
        log = stop_process(proc)
    for code, details in (first, later):
        assert code == grpc.StatusCode.INVALID_ARGUMENT, (code, details)
        assert "not a valid hearts.v1.PlayRequest" in details
    assert "Traceback" not in log and "DecodeError" not in log, log


# -- a token revoked (or rotated) while its bot is connected ---------------------------------

class Remote:
    """What the harness' Bot needs of a daemon in another process."""

    def __init__(self, port: int) -> None:
        self.port = port

    def channel(self) -> grpc.aio.Channel:
        return grpc.aio.insecure_channel(f"127.0.0.1:{self.port}")


def ladder_cli(db: str, *args: str) -> str:
    done = subprocess.run([*HEARTSD, "ladder", *args, "--db", db], capture_output=True, text=True, check=True)
    return done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""


async def final_status(bot: Bot, timeout: float = 15) -> tuple[grpc.StatusCode | None, str]:
    for _ in range(int(timeout / 0.02)):
        status = await bot.status()
        if status is not None:
            return status, await bot._call.details()
        await asyncio.sleep(0.02)
    return None, ""


def test_a_revoked_token_ends_its_session_at_once_and_is_never_seated_without_the_ladder(tmp_path):
    """Without --ladder a revoked bot was still seated by CreateMatch and played on."""

    async def thinking(request, bot):  # still thinking about its first decision when revoked
        await asyncio.Event().wait()

    async def scenario():
        async with running_daemon(tmp_path, grace_ms=300) as daemon:
            db = daemon.settings.db_path
            token = await asyncio.to_thread(ladder_cli, db, "add-bot", "zed", "--owner", "ann")
            bot = await Bot(daemon, "zed", thinking, token=token).start()
            assert bot.welcome is not None, "a bot added a moment ago connects"
            playing = await daemon.create_match(["zed", *HOUSE3], deals=1)
            await asyncio.to_thread(ladder_cli, db, "revoke", "zed")  # another process, as organisers do
            try:
                await daemon.create_match(["zed", *HOUSE3])  # at once: the revocation is seen first
                refused = None
            except grpc.aio.AioRpcError as exc:
                refused = exc.code()
            status = await final_status(bot)
            await daemon.wait_finished(playing)
            again = await Bot(daemon, "zed", token=token).start()
            return refused, status, await final_status(again), daemon.stored(playing)

    refused, (code, details), (again, again_details), stored = run(scenario())
    assert refused == grpc.StatusCode.FAILED_PRECONDITION
    assert code == grpc.StatusCode.UNAUTHENTICATED and "revoked" in details
    assert again == grpc.StatusCode.UNAUTHENTICATED and "unknown bot token" in again_details
    assert stored.status == "finished"  # the match went on, its seat played by the server
    assert any(d.provenance == game_pb2.PROVENANCE_DISCONNECT for d in stored.record.decisions if d.seat == 0)


def test_a_revoked_or_rotated_token_ends_its_session_with_a_reason_under_the_ladder(tmp_path):
    """With --ladder a revoked bot's stream closed with status OK and no reason."""
    db = str(tmp_path / "d.db")
    subprocess.run([*HEARTSD, "ladder", "add-bot", "boot", "--owner", "x", "--db", db], check=True, capture_output=True)
    proc, port = start_process(tmp_path, "--ladder")
    daemon = Remote(port)
    try:
        async def scenario():
            revoked_token = await asyncio.to_thread(ladder_cli, db, "add-bot", "zed", "--owner", "ann")
            rotated_token = await asyncio.to_thread(ladder_cli, db, "add-bot", "yan", "--owner", "bea")
            zed = await Bot(daemon, "zed", token=revoked_token).start()
            yan = await Bot(daemon, "yan", token=rotated_token).start()
            await asyncio.to_thread(ladder_cli, db, "revoke", "zed")
            new_token = await asyncio.to_thread(ladder_cli, db, "rotate", "yan")
            statuses = await final_status(zed), await final_status(yan)
            fresh = await Bot(daemon, "yan", token=new_token).start()
            welcomed = fresh.welcome is not None
            await fresh.close()
            return statuses, welcomed

        ((zed_code, zed_details), (yan_code, yan_details)), welcomed = run(scenario())
    finally:
        stop_process(proc)
    assert zed_code == grpc.StatusCode.UNAUTHENTICATED and "revoked" in zed_details
    assert yan_code == grpc.StatusCode.UNAUTHENTICATED and "rotated" in yan_details
    assert welcomed
