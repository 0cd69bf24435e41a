"""What a connected, idle bot costs the daemon: a ladder keeps thousands of them.

bench/server.py measures the resident memory per idle stream (most of it grpc's own,
per call). This test pins the daemon's own share, which our code decides: the Python
objects that ``heartsd`` code allocates and keeps for each open stream, counted by
tracemalloc (deterministic for one Python version, unlike RSS). It was ~4.9 KiB per
stream before issue 18's idle-stream work (a wrapping budget coroutine per stream, a
writer task with its own future, an outbox deque made up front, a bound logger, a
session with a ``__dict__``), and ~2.9 KiB after.
"""

from __future__ import annotations

import asyncio
import tracemalloc

import grpc

from heartsbot.proto import bot_pb2

from .harness import run, running_daemon

STREAMS = 200
PLAY = "/hearts.v1.BotService/Play"
MAX_DAEMON_BYTES_PER_STREAM = 3_400


def _daemon_bytes(snapshot: tracemalloc.Snapshot) -> int:
    """Bytes held by allocations made in heartsd's own modules."""
    return sum(stat.size for stat in snapshot.statistics("filename")
               if "/heartsd/" in stat.traceback[0].filename.replace("\\", "/"))


def test_an_idle_bot_stream_keeps_little_of_the_daemons_own_memory(tmp_path):
    tokens = {f"idle{i}": f"token-idle{i}-0123456789" for i in range(STREAMS)}

    async def scenario() -> tuple[int, int]:
        async with running_daemon(tmp_path, bot_tokens=tokens, max_bot_streams=STREAMS + 10) as daemon:
            channels = [grpc.aio.insecure_channel(daemon.target) for _ in range(4)]
            calls = []
            try:
                for channel in channels:
                    await channel.channel_ready()
                await asyncio.sleep(0.2)
                before = _daemon_bytes(tracemalloc.take_snapshot())
                for i, (name, token) in enumerate(tokens.items()):
                    call = channels[i % 4].stream_stream(PLAY, request_serializer=None, response_deserializer=None)(
                        metadata=(("authorization", f"Bearer {token}"),))
                    await call.write(bot_pb2.PlayRequest(hello=bot_pb2.Hello(name=name)).SerializeToString())
                    welcome = bot_pb2.PlayResponse.FromString(await call.read())
                    assert welcome.HasField("welcome"), welcome
                    calls.append(call)
                await asyncio.sleep(0.3)
                assert len(daemon.arena.sessions.all()) == STREAMS
                after = _daemon_bytes(tracemalloc.take_snapshot())
                return before, after
            finally:
                for call in calls:
                    call.cancel()
                for channel in channels:
                    await channel.close()

    tracemalloc.start()
    try:
        before, after = run(scenario())
    finally:
        tracemalloc.stop()
    per_stream = (after - before) / STREAMS
    assert per_stream <= MAX_DAEMON_BYTES_PER_STREAM, f"{per_stream:.0f} bytes of heartsd's objects per idle stream"
