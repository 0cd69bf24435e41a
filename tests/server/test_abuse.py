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
from hearts.v1 import bot_pb2

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
