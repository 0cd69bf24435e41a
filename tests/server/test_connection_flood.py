"""TCP connections to the gRPC port that never become calls: every one is a descriptor.

Before: in a process limited to 1,024 descriptors (a common default), 1,100 connections to
the gRPC port that sent nothing took every descriptor. The health check timed out, the web
front stopped answering, and the daemon logged "Too many open files" until the flood was
closed. Opening a TCP connection costs a caller nothing and needs no token.

Now the port accepts at most half of the descriptors (gRPC closes the connections over
that at once), so the web front, the store and the matches already playing keep theirs;
and a connection that has not spoken HTTP/2 within ``handshake_timeout_s`` is closed, so a
flood holds its slots only that long (server.server_options, descriptors.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import resource
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import aiohttp
import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from heartsbot.proto import admin_pb2, admin_pb2_grpc
from heartsd import descriptors
from heartsd.config import ConfigError, Settings
from heartsd.server import connection_cap, server_options

from .harness import ADMIN, BOTS, Bot, auth, with_descriptor_limit
from .test_daemon_process import Remote

FLOOD = 1100
LIMIT = 1024


def spawn(tmp_path, limit: int | None = LIMIT, env: dict[str, str] | None = None) -> tuple[subprocess.Popen[str], int, str]:
    """heartsd in its own process, with ``limit`` descriptors (soft and hard) and ``env``
    added to its environment; (process, gRPC port, web front URL)."""

    args = [sys.executable, "-m", "heartsd.cli", "serve", "--port", "0", "--db", str(tmp_path / "d.db"),
            "--admin-token", ADMIN, "--log-level", "warning", "--web", "127.0.0.1:0",
            "--bot", f"alice:{BOTS['alice']}"]
    if limit is not None:
        args = with_descriptor_limit(args, limit)
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **(env or {})})
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert "listening on" in line, line + (proc.stderr.read() if proc.poll() is not None else "")  # type: ignore[union-attr]
    return proc, int(line.rsplit(":", 1)[1]), proc.stdout.readline().split(" on ", 1)[1].strip()


async def web_answers(url: str) -> int:
    with contextlib.suppress(aiohttp.ClientError, asyncio.TimeoutError):
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as http, \
                http.get(url + "api/options") as r:
            return r.status
    return 0


async def health(port: int) -> int:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        answer = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=15)
        return answer.status


def test_a_flood_of_silent_connections_to_the_grpc_port_leaves_the_daemon_serving(tmp_path) -> None:
    descriptors.raise_limit()  # this process opens the flood: 1,100 sockets
    proc, port, web_url = spawn(tmp_path)
    flood: list[socket.socket] = []

    async def scenario() -> tuple[int, int, int]:
        daemon = Remote(port)
        bot = await Bot(daemon, "alice").start()  # connected before the flood
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as admin:
            stub = admin_pb2_grpc.AdminServiceStub(admin)
            await stub.GetServerStatus(admin_pb2.GetServerStatusRequest(), metadata=auth(ADMIN))
            for _ in range(FLOOD):
                s = socket.socket()
                s.connect(("127.0.0.1", port))
                flood.append(s)
            await asyncio.sleep(1.0)
            held = len(os.listdir(f"/proc/{proc.pid}/fd"))
            web = await web_answers(web_url)  # before: timed out, no descriptor left to accept it
            # The bot connected before the flood plays a whole match during it.
            request = admin_pb2.CreateMatchRequest(ruleset="standard")
            request.format.fixed_deals = 1
            request.seats.add(bot="alice")
            for _ in range(3):
                request.seats.add(house="random")
            match_id = (await stub.CreateMatch(request, metadata=auth(ADMIN), timeout=15)).match_id
            for _ in range(300):
                if match_id in bot.ended:
                    break
                await asyncio.sleep(0.1)
            await bot.close()
            return held, web, int(match_id in bot.ended)

    try:
        held, web, played = asyncio.run(scenario())
        for s in flood:
            s.close()
        flood.clear()
        serving = asyncio.run(health(port))
    finally:
        for s in flood:
            s.close()
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert held < LIMIT - 100, held  # before: every descriptor (1,024)
    assert web == 200
    assert played == 1
    assert serving == health_pb2.HealthCheckResponse.SERVING
    assert "Too many open files" not in err, err[-2000:]
    assert "gRPC connections capped below max_connections" in err  # the operator is told why


def test_a_connection_that_never_speaks_http2_is_closed_after_the_handshake_timeout(tmp_path) -> None:
    proc, port, _ = spawn(tmp_path, limit=None, env={"HEARTSD_HANDSHAKE_TIMEOUT_S": "1"})
    try:
        silent = socket.create_connection(("127.0.0.1", port))
        silent.settimeout(10)
        start = time.monotonic()
        closed_after = None
        with contextlib.suppress(OSError):
            while time.monotonic() - start < 10:
                if silent.recv(4096) == b"":  # the server's SETTINGS come first, then the close
                    closed_after = time.monotonic() - start
                    break
        silent.close()
        assert closed_after is not None and closed_after < 8, closed_after  # before: open for 120 s (gRPC's default)
        assert asyncio.run(health(port)) == health_pb2.HealthCheckResponse.SERVING
    finally:
        proc.terminate()
        proc.communicate(timeout=30)


def test_the_connection_cap_follows_the_budgets_and_the_descriptor_limit() -> None:
    settings = Settings()
    assert settings.connection_limit() == settings.rpc_limit()  # one connection per call the budgets allow
    assert Settings(max_connections=300).connection_limit() == 300
    assert descriptors.share(settings.connection_limit(), 2, 1024) == 512
    assert descriptors.share(300, 2, 1024) == 300
    assert descriptors.share(300, 2, None) == 300
    options = dict(server_options(settings))
    assert options["grpc.max_allowed_incoming_connections"] == connection_cap(settings)
    assert options["grpc.server_handshake_timeout_ms"] == 10_000


@pytest.mark.parametrize("env, message", [
    ({"HEARTSD_MAX_CONNECTIONS": "-1"}, "max_connections"),
    ({"HEARTSD_HANDSHAKE_TIMEOUT_S": "0"}, "handshake_timeout_s"),
    ({"HEARTSD_HANDSHAKE_TIMEOUT_S": "nan"}, "handshake_timeout_s"),
])
def test_bad_connection_settings_stop_the_daemon_with_their_name(env, message) -> None:
    with pytest.raises(ConfigError, match=message):
        Settings.load(env=env)


def test_the_descriptor_limit_is_raised_towards_the_hard_limit_and_never_lowered() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        low = min(256, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (low, hard))
        before, after = descriptors.raise_limit(wanted=low + 100)
        assert before == low and after == min(low + 100, hard)
        assert descriptors.raise_limit(wanted=low) == (after, after)  # never lowered
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def _h2_frame(kind: int, flags: int, stream: int, payload: bytes = b"") -> bytes:
    return len(payload).to_bytes(3, "big") + bytes([kind, flags]) + stream.to_bytes(4, "big") + payload


def test_a_connection_that_opens_and_resets_streams_in_a_flood_is_cut(tmp_path) -> None:
    """HTTP/2 "rapid reset" (CVE-2023-44487) on the gRPC port, no token needed: HEADERS then
    RST_STREAM, ~60,000 streams a second on one connection, took bots from ~3,800 to ~700
    decisions/s (an attack pass). Before, the connection took all of this test's 200,000
    streams and stayed open; now the server answers resets with pings, and a connection
    whose pings go unanswered behind its flood is no longer read and is ended (GOAWAY). The
    daemon serves on."""
    proc, port, _ = spawn(tmp_path, limit=None)

    def header(name: str, value: str) -> bytes:  # HPACK: a literal without indexing, new name
        return b"\x00" + bytes([len(name)]) + name.encode() + bytes([len(value)]) + value.encode()

    block = b"".join(header(n, v) for n, v in ((":method", "POST"), (":scheme", "http"),
                                                 (":path", "/hearts.v1.SpectatorService/ListMatches"),
                                                 (":authority", f"127.0.0.1:{port}"),
                                                 ("content-type", "application/grpc"), ("te", "trailers")))

    async def flood(streams: int) -> str:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + _h2_frame(4, 0, 0) + _h2_frame(4, 1, 0))
        ended = asyncio.get_running_loop().create_future()

        async def read() -> None:
            data = b""
            with contextlib.suppress(ConnectionError):
                while chunk := await reader.read(65536):
                    data += chunk
                    while len(data) >= 9 and len(data) >= 9 + int.from_bytes(data[:3], "big"):
                        size, kind = int.from_bytes(data[:3], "big"), data[3]
                        if kind == 7 and not ended.done():  # GOAWAY
                            ended.set_result("goaway")
                        data = data[9 + size:]
            if not ended.done():
                ended.set_result("closed")

        reading = asyncio.get_running_loop().create_task(read())
        stream = 1
        try:
            while stream < 2 * streams and not ended.done():
                batch = []
                for _ in range(500):
                    batch += [_h2_frame(1, 4, stream, block), _h2_frame(3, 0, stream, (8).to_bytes(4, "big"))]
                    stream += 2
                writer.write(b"".join(batch))
                await asyncio.wait_for(writer.drain(), 10)  # a server that stops reading ends it here
            return ended.result() if ended.done() else f"took all {streams} streams"
        except asyncio.TimeoutError:
            return "no longer read"
        except ConnectionError:
            return "closed"
        finally:
            reading.cancel()
            writer.close()

    try:
        outcome = asyncio.run(flood(200_000))
        assert outcome in ("goaway", "closed", "no longer read"), outcome
        assert asyncio.run(health(port)) == health_pb2.HealthCheckResponse.SERVING
    finally:
        proc.terminate()
        proc.communicate(timeout=30)


def _frame(kind: int, flags: int, stream: int, payload: bytes = b"") -> bytes:
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_a_ping_flood_costs_nothing_once_it_stops_and_gets_no_goaway(tmp_path):
    """An attack pass: PING frames as fast as loopback takes them got GOAWAY "too_many_pings",
    after which gRPC's core went on reading the connection and spun a whole core for as long
    as the client kept it open, silent: two such connections and no match moved. Pings are
    now answered at any rate (no GOAWAY), so a flood costs only while it is sent."""
    from .test_daemon_process import start

    proc, port = start(tmp_path)
    try:
        pings = b"".join(_frame(6, 0, 0, struct.pack(">Q", i)) for i in range(100))
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + _frame(4, 0, 0) + _frame(4, 1, 0))
            received = bytearray()

            def read() -> None:
                with contextlib.suppress(OSError):
                    while chunk := sock.recv(1 << 16):
                        received.extend(chunk[:4096] if len(received) < 1 << 20 else b"")
                        if b"too_many_pings" in chunk:
                            received.extend(b"too_many_pings")

            reader = threading.Thread(target=read, daemon=True)
            reader.start()
            sock.settimeout(5)
            until = time.monotonic() + 2
            with contextlib.suppress(OSError):
                while time.monotonic() < until:
                    sock.sendall(pings)
            time.sleep(1)  # what was sent is read and answered
            before = _cpu_s(proc.pid)
            time.sleep(3)  # silent, the connection open
            spent = _cpu_s(proc.pid) - before
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
    assert b"too_many_pings" not in received
    assert spent < 1.0, f"{spent:.2f} s of CPU in 3 s of silence: the daemon spins"  # before: ~3 s (a whole core)
