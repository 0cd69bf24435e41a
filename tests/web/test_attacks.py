"""The web front attacked as an adversarial spectator or person-at-a-seat would, over real
HTTP and WebSocket against a real daemon (aiohttp's client and raw sockets).

Each test names the attack and what it did before its fix (see
``/work/notes/redteam-web.md`` for the whole list, including what held).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import logging
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp
import grpc
import pytest
from aiohttp import web
from grpc_health.v1 import health_pb2, health_pb2_grpc
from heartsbot.proto import game_pb2
from structlog.testing import capture_logs

from heartsd.web import connections

from tests.server.harness import ADMIN, run, with_descriptor_limit
from tests.web.harness import take_seat, web_daemon

P = game_pb2
SEAT = {"ruleset": "standard", "players": 4}


def client() -> aiohttp.ClientSession:
    return aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))


async def json_answers(http: aiohttp.ClientSession, url: str, times: int) -> list[Any]:
    """``url`` asked ``times`` times in a row: each answer's JSON (each must be a 200 of JSON)."""
    answers = []
    for _ in range(times):
        async with http.get(url) as r:
            assert r.status == 200 and r.content_type == "application/json"
            answers.append(await r.json())
    return answers


def counted_encodings(monkeypatch: Any, module: Any, name: str) -> Any:
    """``module.name`` (a function making a dict for the page) made to return dicts that count
    how often JSON encodes them: the class, whose ``encoded`` is the count."""

    class Counted(dict):  # type: ignore[type-arg]
        encoded = 0

        def items(self):  # type: ignore[no-untyped-def]  # what json's encoder reads of a dict subclass
            Counted.encoded += 1
            return super().items()

    made = getattr(module, name)
    monkeypatch.setattr(module, name, lambda *args: Counted(made(*args)))
    return Counted


async def house_match(web: Any) -> str:
    web.arena.start_house_matches()
    for _ in range(200):
        if web.arena.runners:
            return next(iter(web.arena.runners))
        await asyncio.sleep(0.05)
    raise AssertionError("no house match started")


async def connect_from(port: int, source: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A TCP connection to the web front from ``source`` (any 127.x.y.z is this machine)."""
    return await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))


async def closed_by_server(reader: asyncio.StreamReader, timeout: float = 10) -> bytes:
    """What the server sent before closing the connection (raises TimeoutError if it did not)."""
    return await asyncio.wait_for(reader.read(), timeout)


# -- a person's seats ---------------------------------------------------------------------


async def pipelined(port: int, requests: bytes) -> tuple[list[int], bool]:
    """Write ``requests`` at once on one connection; the statuses answered, and whether the
    server closed the connection (else nothing more came within 5 s)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(requests)
    await writer.drain()
    data, closed = b"", False
    try:
        while not closed:
            chunk = await asyncio.wait_for(reader.read(65536), 5)
            data += chunk
            closed = not chunk
    except asyncio.TimeoutError:
        pass  # nothing more came, and the connection is still open
    finally:
        writer.close()
    return [int(status) for status in re.findall(rb"HTTP/1\.1 (\d{3}) ", data)], closed

def test_seats_taken_all_at_once_cannot_pass_the_table_caps(tmp_path) -> None:
    """Before: the caps were checked, then the match was created (awaiting the store), then
    the seat counted: 12 requests sent at once from one address took 12 tables
    (web_tables_per_peer 2), and 16 would have taken every table of web_max_tables."""

    async def main() -> None:
        async with web_daemon(tmp_path, web_tables_per_peer=2, web_max_tables=5) as web, client() as http:
            async def take(source: str) -> int:
                connector = aiohttp.TCPConnector(local_addr=(source, 0))
                async with aiohttp.ClientSession(connector=connector) as one, \
                        one.post(f"{web.url}/api/play", json=SEAT) as r:
                    return r.status

            statuses = await asyncio.gather(*(take("127.0.0.1") for _ in range(12)))
            assert sorted(statuses) == [200, 200] + [429] * 10, statuses
            others = await asyncio.gather(*(take(f"127.0.0.{2 + i % 4}") for i in range(12)))
            assert others.count(200) == 3 and set(others) <= {200, 429, 503}, others
            assert sum(1 for s in web.front.seats.by_match.values() if s.live) == 5

    run(main())


def test_one_network_of_many_ipv6_64s_cannot_take_every_table_for_people(tmp_path) -> None:
    """Tables for people were counted per address, an IPv6 caller by its /64; a home is
    delegated a /56 or /48 (256 or 65,536 /64s), so one person took every table of
    web_max_tables from one network (left by the last stops' attack passes). Now one /48
    holds at most a quarter of them and one /32 half (at least web_tables_per_peer); other
    networks and IPv4 callers still play."""
    from heartsd.web.seats import SeatError

    async def main() -> list[list[str]]:
        async with web_daemon(tmp_path, web_tables_per_peer=2, web_max_tables=8) as web:
            seats = web.front.seats

            async def take(peers: list[str]) -> list[str]:
                said = []
                for peer in peers:
                    try:
                        await seats.take(peer, "standard", 4, None)
                        said.append("taken")
                    except SeatError as exc:
                        said.append(exc.code or exc.message)
                return said

            home = [f"ipv6:[2001:db8:0:{i:x}::]/64" for i in range(6)]  # six /64s of one /48
            same_provider = [f"ipv6:[2001:db8:{n}:1::]/64" for n in (1, 2, 3)]  # other /48s, the same /32
            elsewhere = ["ipv6:[2001:db9:0:1::]/64", "ipv4:192.0.2.1"]
            return [await take(home), await take(same_provider), await take(elsewhere)]

    home, same_provider, elsewhere = run(main())
    assert home == ["taken", "taken"] + ["tables_per_network"] * 4, home  # before: six taken
    assert same_provider == ["taken", "taken", "tables_per_network"], same_provider  # the /32: 4 of 8
    assert elsewhere == ["taken", "taken"], elsewhere


def test_a_seat_nobody_opens_or_everyone_left_gives_its_table_back(tmp_path, monkeypatch) -> None:
    """Before: a seat never opened waited out the person's clock (30 s + the 60 s bank),
    then two more 30 s timeouts, then was auto-played at the house bots' pace: about five
    minutes of a standard match holding one of web_max_tables, for three requests; a few
    addresses kept every table for people taken. Now a table with no page for
    web_abandon_s is cancelled (its shuffles are never dealt again), and the cap frees.
    Then (a second attack pass): a seat never opened still held its table web_abandon_s
    (60 s), so 16 POSTs a minute from 8 addresses held every table; now OPEN_WITHIN_S."""
    from heartsd.web import seats

    monkeypatch.setattr(seats, "OPEN_WITHIN_S", 0.3)

    async def main() -> None:
        async with web_daemon(tmp_path, web_abandon_s=2.0, web_tables_per_peer=1, grace_ms=200,
                              web_house_delay_ms=50) as web, \
                client() as http:
            never_opened = (await take_seat(http, web.url))["match_id"]
            runner = web.arena.runners[never_opened]
            await asyncio.wait_for(runner.finished.wait(), 10)
            stored = web.arena.store.get(never_opened)
            assert (stored.status, stored.reason) == ("cancelled", "nobody played at the table within 0.3 s of taking it")
            # Opened once and left (a second attack pass): the same 0.3 s from the taking, not web_abandon_s.
            opened_once = (await take_seat(http, web.url))["match_id"]
            async with http.ws_connect(f"{web.url}/api/seat/{opened_once}/socket") as ws:
                await ws.receive(timeout=10)
            await asyncio.wait_for(web.arena.runners[opened_once].finished.wait(), 10)
            assert web.arena.store.get(opened_once).reason == "nobody played at the table within 0.3 s of taking it"
            monkeypatch.setattr(seats, "OPEN_WITHIN_S", 30.0)  # the rest: the web_abandon_s of a person away
            # The table is free again: the same address may take one.
            left = (await take_seat(http, web.url))["match_id"]
            async with http.ws_connect(f"{web.url}/api/seat/{left}/socket") as ws:
                await ws.receive(timeout=10)
            await asyncio.wait_for(web.arena.runners[left].finished.wait(), 10)
            assert web.arena.store.get(left).status == "cancelled"
            # Back within the time: the match goes on (a reload, a short network loss).
            kept = (await take_seat(http, web.url))["match_id"]
            for _ in range(4):
                async with http.ws_connect(f"{web.url}/api/seat/{kept}/socket") as ws:
                    await ws.receive(timeout=10)
                await asyncio.sleep(0.2)
            async with http.ws_connect(f"{web.url}/api/seat/{kept}/socket") as ws:
                await ws.receive(timeout=10)
                await asyncio.sleep(1.0)
                assert not web.arena.runners[kept].finished.is_set()

    run(main())


def test_the_seat_cookie_goes_only_with_the_seats_own_requests(tmp_path) -> None:
    """Before: every seat's cookie had Path=/ for a day, so each request carried the
    cookies of every seat the browser had taken; from ~120 seats on, the Cookie header
    passed aiohttp's 8 KiB limit and every page of the site answered 400."""

    async def main() -> None:
        async with web_daemon(tmp_path) as web, client() as http:
            async with http.post(f"{web.url}/api/play", json=SEAT) as r:
                assert r.status == 200
                match_id = (await r.json())["match_id"]
                cookie = r.cookies[f"seat-{match_id}"]
            assert cookie["path"] == f"/api/seat/{match_id}" and cookie["httponly"] and cookie["samesite"] == "Strict"
            jar = http.cookie_jar
            from yarl import URL
            assert not jar.filter_cookies(URL(f"{web.url}/"))
            assert not jar.filter_cookies(URL(f"{web.url}/api/matches"))
            assert not jar.filter_cookies(URL(f"{web.url}/api/seat/{match_id}0"))
            assert jar.filter_cookies(URL(f"{web.url}/api/seat/{match_id}/socket"))
            async with http.get(f"{web.url}/api/seat/{match_id}") as r:
                assert r.status == 200 and "no-store" in r.headers["Cache-Control"]
            # Many cookies of other seats (as a browser keeps them) no longer reach any page.
            many = "; ".join(f"seat-m-{i:016x}={'x' * 43}" for i in range(130))
            async with aiohttp.ClientSession() as bare, bare.get(f"{web.url}/", headers={"Cookie": many}) as r:
                assert r.status == 400  # aiohttp's own limit: so the cookies must not pile up
            async with http.ws_connect(f"{web.url}/api/seat/{match_id}/socket") as ws:
                snapshot = json.loads((await ws.receive(timeout=10)).data)
                assert snapshot["you"] == 0

    run(main())


def test_a_seat_request_finds_its_cookie_without_parsing_every_pair_of_a_long_header(tmp_path, monkeypatch) -> None:
    """An attack pass: a seat request's cookie was read through aiohttp's request.cookies,
    which parses every pair of the Cookie header: 8 KB of 1,600 pairs cost ~6 ms of the event
    loop a request against ~0.5 ms, within a caller's rate (12% of the loop per address).
    The seat's cookie is now found by its name alone (front.cookie_value). Counted, not timed:
    request.cookies is never read on the seat's requests, and the seat is still found among
    1,200 other pairs (its owner's, 200 and its socket; another secret, 403)."""
    parsed: list[str] = []
    real_cookies = web.BaseRequest.cookies

    def counted(request):  # type: ignore[no-untyped-def]
        parsed.append(request.path)
        return real_cookies.__get__(request)

    async def main() -> tuple[int, int, dict[str, Any]]:
        async with web_daemon(tmp_path) as web_, client() as http:
            async with http.post(f"{web_.url}/api/play", json=SEAT) as r:
                assert r.status == 200
                match_id = (await r.json())["match_id"]
                secret = r.cookies[f"seat-{match_id}"].value
            padding = "; ".join(f"{i:x}=" for i in range(1200))  # ~7 KB: with the seat's, within aiohttp's 8 KiB
            monkeypatch.setattr(web.BaseRequest, "cookies", property(counted))
            async with aiohttp.ClientSession() as bare:
                url = f"{web_.url}/api/seat/{match_id}"
                async with bare.get(url, headers={"Cookie": f"{padding}; seat-{match_id}={secret}"}) as r:
                    mine = r.status
                async with bare.get(url, headers={"Cookie": f"seat-{match_id}={secret}x; {padding}"}) as r:
                    other = r.status
                async with bare.ws_connect(f"{url}/socket", origin=web_.url,
                                           headers={"Cookie": f"{padding}; seat-{match_id}={secret}"}) as ws:
                    snapshot = json.loads((await ws.receive(timeout=10)).data)
            return mine, other, snapshot

    mine, other, snapshot = run(main())
    assert (mine, other) == (200, 403) and snapshot["you"] == 0, (mine, other, snapshot)
    assert not parsed, f"request.cookies parsed the whole header for {parsed}"


def test_the_seat_secret_is_never_logged_or_echoed(tmp_path) -> None:
    """Held: the secret appears in the Set-Cookie header only; no log line, no body, no
    other header carries it, and a guessed or another seat's secret opens nothing."""

    async def main() -> None:
        async with web_daemon(tmp_path, log_level="debug") as web, client() as http, client() as other:
            with capture_logs() as logs:
                async with http.post(f"{web.url}/api/play", json=SEAT) as r:
                    body = await r.text()
                    match_id = json.loads(body)["match_id"]
                    secret = r.cookies[f"seat-{match_id}"].value
                    headers = {k: v for k, v in r.headers.items() if k != "Set-Cookie"}
                assert len(secret) >= 43 and secret not in body and secret not in json.dumps(headers)
                async with http.ws_connect(f"{web.url}/api/seat/{match_id}/socket") as ws:
                    first = await ws.receive(timeout=10)
                    assert secret not in first.data
                second = await take_seat(other, web.url)
                # Another seat's secret is bound to its own seat.
                other_secret = next(c.value for c in other.cookie_jar if c.key == f"seat-{second['match_id']}")
                async with aiohttp.ClientSession() as thief:
                    async with thief.get(f"{web.url}/api/seat/{match_id}",
                                         headers={"Cookie": f"seat-{match_id}={other_secret}"}) as r:
                        assert r.status == 403
        assert not any(secret in repr(entry) for entry in logs)

    run(main())


def test_the_seat_cookie_is_secure_behind_a_proxy_that_terminates_tls(tmp_path) -> None:
    """Before: the seat cookie was Secure only when the daemon served TLS itself; behind a
    proxy or a Kubernetes ingress that terminates it (the README's way to deploy), the
    cookie of a person's seat could go out over plain HTTP too. A request the proxy says
    came over HTTPS (X-Forwarded-Proto, or Forwarded: proto=https) now gets a Secure cookie.
    A client that claims it falsely only stops its own browser sending the cookie over HTTP."""

    async def main() -> dict[str, bool]:
        secure = {}
        async with web_daemon(tmp_path, web_tables_per_peer=4) as web:
            for label, headers in (("plain", {}), ("x-forwarded", {"X-Forwarded-Proto": "https"}),
                                   ("forwarded", {"Forwarded": "for=10.0.0.1;proto=https"}),
                                   ("x-forwarded http", {"X-Forwarded-Proto": "http"})):
                async with client() as http, http.post(f"{web.url}/api/play", json=SEAT, headers=headers) as r:
                    assert r.status == 200, await r.text()
                    cookie = next(iter(r.cookies.values()))
                    secure[label] = bool(cookie["secure"])
        return secure

    assert run(main()) == {"plain": False, "x-forwarded": True, "forwarded": True, "x-forwarded http": False}


# -- cross-site requests and what pages may do ----------------------------------------------

def test_another_site_cannot_take_a_seat_even_without_an_origin_header(tmp_path) -> None:
    """Before: only an Origin header was checked; a form of another site posting
    text/plain (no preflight) from a browser that sends no Origin took a seat. Now a
    state-changing request must be JSON, and Sec-Fetch-Site: cross-site is refused."""

    async def main() -> None:
        async with web_daemon(tmp_path) as web, aiohttp.ClientSession() as http:
            body = json.dumps(SEAT)
            async with http.post(f"{web.url}/api/play", data=body, headers={"Content-Type": "text/plain"}) as r:
                assert r.status == 415 and "JSON" in (await r.json())["error"]
            async with http.post(f"{web.url}/api/play", data=body,
                                 headers={"Content-Type": "application/x-www-form-urlencoded"}) as r:
                assert r.status == 415
            async with http.post(f"{web.url}/api/play", json=SEAT, headers={"Sec-Fetch-Site": "cross-site"}) as r:
                assert r.status == 403
            assert not web.front.seats.by_match
            async with http.post(f"{web.url}/api/play", json=SEAT, headers={"Sec-Fetch-Site": "same-origin"}) as r:
                assert r.status == 200

    run(main())


def test_a_page_whose_name_rebinds_to_this_machine_cannot_take_a_seat(tmp_path) -> None:
    """DNS rebinding (an attack pass): another site's name, pointed at 127.0.0.1 after its
    page loaded, makes the browser's requests same-origin for that name (Host and Origin
    both evil.example), so the Origin check passed and the visitor's browser took seats.
    A web front on loopback now answers seat requests for loopback names only, unless
    ``web_hosts`` names others; one listening beyond loopback answers any name."""
    evil = {"Host": "evil.example:8080", "Origin": "http://evil.example:8080"}

    async def main() -> None:
        async with web_daemon(tmp_path) as web, client() as http:
            async with http.post(f"{web.url}/api/play", json=SEAT, headers=evil) as r:
                assert r.status == 403, await r.text()
                why = (await r.json())["error"]
                assert "takes seats under loopback names only ('evil.example:8080'" in why and "web_hosts" in why
            async with http.ws_connect(f"{web.url}/ws/watch/m-none", headers=evil):
                pass  # what spectators see is public: not checked
            async with http.ws_connect(f"{web.url}/api/seat/m-none/socket", headers=evil):
                pass
        assert False, "the seat's socket was accepted"

    with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
        run(main())
    assert refused.value.status == 403

    async def named() -> None:
        async with web_daemon(tmp_path, web_hosts=("evil.example",)) as web, client() as http:
            async with http.post(f"{web.url}/api/play", json=SEAT, headers=evil) as r:
                assert r.status == 200, await r.text()
            for host in ("localhost", "127.0.0.1", "[::1]", "play.localhost"):
                async with http.post(f"{web.url}/api/play", json=SEAT,
                                     headers={"Host": f"{host}:80", "Origin": f"http://{host}:80"}) as r:
                    assert r.status in (200, 429), (host, await r.text())  # 429: two tables per address

    run(named())


def test_every_response_forbids_framing_and_cross_site_reads(tmp_path) -> None:
    """Before: no frame policy (a framed Playboard could be clicked through a disguise),
    no COOP/CORP, and JSON answers could be cached."""

    async def main() -> None:
        async with web_daemon(tmp_path) as web, aiohttp.ClientSession() as http:
            for path in ("/", "/play/m-x", "/watch/m-x", "/static/js/common.js", "/api/options", "/api/matches", "/nope"):
                async with http.get(web.url + path) as r:
                    h = r.headers
                    assert "frame-ancestors 'none'" in h["Content-Security-Policy"], path
                    assert "script-src 'self'" in h["Content-Security-Policy"] and "unsafe" not in h["Content-Security-Policy"]
                    assert h["X-Frame-Options"] == "DENY" and h["X-Content-Type-Options"] == "nosniff", path
                    assert h["Cross-Origin-Resource-Policy"] == "same-origin", path
                    assert h["Cross-Origin-Opener-Policy"] == "same-origin", path
                    assert h["Server"] == "heartsd", path  # not which aiohttp and Python serve it
                    if path.startswith("/api/"):
                        assert h["Cache-Control"] == "no-store", path
                    if path.startswith("/static/js/"):
                        assert "javascript" in h["Content-Type"]

    run(main())


def test_static_files_do_not_escape_their_directory(tmp_path) -> None:
    """Held: encoded and plain '..', backslashes and absolute paths never leave static/,
    and directories are not listed."""

    async def main() -> None:
        async with web_daemon(tmp_path) as web:
            for path in ("/static/../app.py", "/static/%2e%2e/app.py", "/static/..%2fapp.py", "/static/js/../../app.py",
                         "/static/%2e%2e%2f%2e%2e%2fconfig.py", "/static//etc/passwd", "/static/..\\app.py",
                         "/static/", "/static/js/"):
                reader, writer = await connect_from(web.front.port, "127.0.0.1")
                writer.write(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
                answer = await closed_by_server(reader)
                writer.close()
                status = int(answer.split(b" ", 2)[1])
                assert status in (403, 404), (path, answer[:80])
                assert b"def " not in answer and b"root:" not in answer, path

    run(main())



def test_a_static_file_name_too_long_for_the_file_system_is_a_404_not_a_traceback(tmp_path) -> None:
    """Before (an attack pass): a static file name over 255 characters made the file
    system's ENAMETOOLONG escape the static-file check: 500 "internal error" and an
    error-level traceback quoting the whole path twice (~8 KB of log per request)."""

    async def main() -> list[dict[str, Any]]:
        async with web_daemon(tmp_path) as web, aiohttp.ClientSession() as http:
            with capture_logs() as logs:
                for path in ("/static/" + "a" * 256, "/static/js/" + "b" * 300 + ".js", "/static/" + "c" * 4000):
                    async with http.get(web.url + path) as r:
                        assert r.status == 404, (path[:40], r.status)
                        assert (await r.json())["error"].startswith("no file /static/")
        return logs

    logs = run(main())
    assert not [e for e in logs if e["log_level"] == "error" or "exc_info" in e], logs


def test_requests_for_missing_static_files_spend_the_callers_rate(tmp_path) -> None:
    """An attack pass: a missing static file was answered 404 before the rate was asked
    (the check ran in the error middleware, ahead of the rate's), so one client asked for
    ~1,250 of them a second, never refused and never cut off. Now they spend the rate like
    every request: past it, a 429 that closes the connection."""

    async def main() -> tuple[list[int], bool]:
        async with web_daemon(tmp_path) as web:
            port = web.front.port
            return await pipelined(port, b"".join(f"GET /static/js/nope{i}.js HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n"
                                                  .encode() for i in range(150)))

    statuses, closed = run(main())
    assert closed and statuses[-1] == 429 and statuses.count(429) == 1, statuses
    assert set(statuses[:-1]) == {404}, statuses


@pytest.mark.parametrize("prefix", ["/static/", "/", "/api/"])
def test_a_path_thousands_of_levels_deep_is_not_found_without_a_walk_of_its_levels(tmp_path, monkeypatch,
                                                                                  prefix: str) -> None:
    """Two attack passes. The static-file check resolved a name on the file system, on the
    event loop, a level at a time and then against each of its parents: a name of 4,000
    levels (an 8 KB request line) held the loop ~58 ms, and a client sending 18 a second took
    the bots from ~1,600 decisions a second to ~260 (p99 0.14 s). Now a name is looked up
    among the static files, listed once. And aiohttp's router looks any path up a level at a
    time, hashing each prefix anew: ~5 ms for such a path, before the rate is asked; ~130 a
    second took the bots to ~230. Now a path deeper than any address is "not found" without
    reaching the router's walk. Counted, not timed: the file-system lookups and the router's
    walks that 20 deep requests make (before: one of each per request)."""
    walks: list[str] = []
    looked_up: list[str] = []
    real_resolve, real_path_resolve, real_is_file = web.UrlDispatcher.resolve, Path.resolve, Path.is_file

    async def counted_resolve(self, request):  # type: ignore[no-untyped-def]
        walks.append(request.rel_url.raw_path)
        return await real_resolve(self, request)

    def counted_path_resolve(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        looked_up.append(str(self))
        return real_path_resolve(self, *args, **kwargs)

    def counted_is_file(self):  # type: ignore[no-untyped-def]
        looked_up.append(str(self))
        return real_is_file(self)

    async def answered(port: int, path: str) -> None:
        """20 requests for ``path``, pipelined on one connection, each answered 404."""
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode() * 20)
        data = b""
        try:
            while data.count(b"HTTP/1.1 404 ") < 20:
                chunk = await asyncio.wait_for(reader.read(65536), 10)
                assert chunk, data[-300:]
                data += chunk
        finally:
            writer.close()

    async def main() -> tuple[int, int, int]:
        async with web_daemon(tmp_path) as web_:
            async with aiohttp.ClientSession() as http, http.get(web_.url + "/static/js/common.js") as r:
                assert r.status == 200 and "export" in await r.text()  # a file is served (and the list made)
            monkeypatch.setattr(web.UrlDispatcher, "resolve", counted_resolve)
            monkeypatch.setattr(Path, "resolve", counted_path_resolve)
            monkeypatch.setattr(Path, "is_file", counted_is_file)
            await answered(web_.front.port, prefix + "nope/x.js")
            short_walks = len(walks)
            deep = prefix + "a/" * 4000 + "x.js"  # 40 requests in all: within the burst
            await answered(web_.front.port, deep)
            deep_walks = sum(1 for w in walks if w.startswith(prefix + "a/a/"))
            deep_lookups = sum(1 for path in looked_up if "/a/a/" in path)
            return short_walks, deep_walks, deep_lookups

    short_walks, deep_walks, deep_lookups = run(main())
    assert short_walks == 20, "the spy sees the router's walk of an address of usual depth"
    assert deep_walks == 0, f"the router walked {deep_walks} paths of 4,000 levels"
    assert deep_lookups == 0, f"{deep_lookups} file-system lookups of a name of 4,000 levels"


def test_a_compressed_request_body_is_refused_unread_not_inflated_on_the_loop(tmp_path) -> None:
    """Before (an attack pass): aiohttp inflated a gzip request body on the daemon's event
    loop before the 16 KiB body limit applied. Four POSTs of ~1 MB each (1 GiB inflated)
    stalled the loop ~5 s: the gRPC health check and every page waited, though each was
    answered 413 in the end. No page sends a compressed body, so one is refused at once,
    415 with the reason, and never inflated; JSON sent as is still works."""
    import gzip
    import zlib

    bomb = gzip.compress(b" " * (64 * 1024 * 1024), compresslevel=9)  # 64 MiB of JSON whitespace
    assert len(bomb) < 100 * 1024

    async def main() -> None:
        async with web_daemon(tmp_path) as web, aiohttp.ClientSession() as http:
            for encoding, body in (("gzip", bomb), ("deflate", zlib.compress(json.dumps(SEAT).encode())),
                                   ("gzip", gzip.compress(json.dumps(SEAT).encode())), ("br", b"x")):
                headers = {"Content-Type": "application/json", "Content-Encoding": encoding}
                async with http.post(f"{web.url}/api/play", data=body, headers=headers) as r:
                    assert r.status == 415, (encoding, r.status, await r.text())
                    assert "Content-Encoding" in (await r.json())["error"]
            assert not web.front.seats.by_match  # the small, valid compressed request did not take a seat
            async with http.post(f"{web.url}/api/play", json=SEAT, headers={"Content-Encoding": "identity"}) as r:
                assert r.status == 200

    run(main())

# -- spectators' sockets ---------------------------------------------------------------------

def test_a_spectator_socket_that_sends_anything_is_closed(tmp_path) -> None:
    """Before: a spectator's socket read and ignored whatever it was sent, forever: one
    client could stream frames at the daemon's loop for as long as it liked. The page
    sends nothing, so anything sent ends the socket (policy violation)."""

    async def main() -> None:
        async with web_daemon(tmp_path, house_matches=1, house_delay_ms=50) as web, aiohttp.ClientSession() as http:
            match_id = await house_match(web)
            async with http.ws_connect(f"{web.url}/ws/watch/{match_id}") as ws:
                await ws.receive(timeout=10)
                await ws.send_str("x" * 100)
                while True:
                    message = await ws.receive(timeout=10)
                    if message.type is not aiohttp.WSMsgType.TEXT:
                        break
                assert message.type is aiohttp.WSMsgType.CLOSE and message.data == 1008, message
            for _ in range(100):  # the handler ends and gives its budget slot back
                if web.front.budget.in_use == 0:
                    break
                await asyncio.sleep(0.05)
            assert web.front.budget.in_use == 0

    run(main())


# -- connections ----------------------------------------------------------------------------

def test_connections_are_capped_per_address_and_in_total(tmp_path) -> None:
    """Before: no cap. Idle connections (nothing sent) were kept for aiohttp's keep-alive
    time, an hour, and each is a file descriptor of the process the bots connect to."""

    async def main() -> None:
        async with web_daemon(tmp_path, web_connections_per_peer=3, web_max_connections=5) as web:
            port = web.front.port
            held = [await connect_from(port, "127.0.0.1") for _ in range(3)]
            reader, _ = await connect_from(port, "127.0.0.1")
            refused = await closed_by_server(reader)
            assert refused.startswith(b"HTTP/1.1 503") and b"too many connections" in refused
            head, body = refused.split(b"\r\n\r\n", 1)  # its JSON whole, with the code pages translate
            assert json.loads(body) == {"error": "too many connections; close some and retry",
                                        "code": "too_many_connections"}, body
            assert f"Content-Length: {len(body)}".encode() in head, head
            # Made below the app, it names the server as every answer does (before: nothing).
            assert b"\r\nServer: heartsd\r\n" in refused and b"\r\nX-Content-Type-Options: nosniff\r\n" in refused
            # Another address still gets in, up to the total.
            held += [await connect_from(port, "127.0.0.2") for _ in range(2)]
            reader, _ = await connect_from(port, "127.0.0.3")
            assert (await closed_by_server(reader)).startswith(b"HTTP/1.1 503")
            # A connection that closes frees its place.
            held.pop(0)[1].close()
            await asyncio.sleep(0.2)
            async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(local_addr=("127.0.0.3", 0))) as http, \
                    http.get(f"{web.url}/api/options") as r:
                assert r.status == 200
            for _, writer in held:
                writer.close()

    run(main())


def test_over_the_connection_cap_a_page_is_answered_with_a_page_and_the_api_with_json(tmp_path, monkeypatch) -> None:
    """Before: a connection over the caps was answered with the API's JSON before its request
    was read, so a person's browser asking for a page showed {"error": ...} as text. Its
    request is read now (a few at a time): a page's address is answered with a page a person
    can read, in the language the request names (?lang=, else Accept-Language), and the API
    keeps its JSON. Past the refusals that may wait at once, the JSON comes without a wait."""
    monkeypatch.setattr(connections, "REFUSAL_READ_S", 600.0, raising=False)  # a silent refused one waits for the test

    async def refused(port: int, request: bytes) -> tuple[bytes, bytes]:
        reader, writer = await connect_from(port, "127.0.0.1")
        writer.write(request)
        head, _, body = (await closed_by_server(reader)).partition(b"\r\n\r\n")
        writer.close()
        return head, body

    async def main() -> None:
        async with web_daemon(tmp_path, web_connections_per_peer=1) as web:
            port = web.front.port
            held = [await connect_from(port, "127.0.0.1")]  # the address's one connection
            head, body = await refused(port, b"GET /leaderboard?ruleset=standard HTTP/1.1\r\nHost: x\r\n"
                                             b"Accept: text/html\r\nAccept-Language: fr-FR,id;q=0.8,en;q=0.5\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 503") and b"Content-Type: text/html; charset=utf-8" in head, head
            assert b"frame-ancestors 'none'" in head and f"Content-Length: {len(body)}".encode() in head, head
            page = body.decode()
            assert '<html lang="id">' in page and "<h1>503 · Terlalu banyak koneksi</h1>" in page, page
            assert "muat ulang halaman ini" in page and "<script" not in page and "<link" not in page, page
            _, body = await refused(port, b"GET /watch/m-1?lang=vi HTTP/1.1\r\nAccept-Language: id\r\n\r\n")
            assert '<html lang="vi">' in body.decode() and "Quá nhiều kết nối" in body.decode(), body
            _, body = await refused(port, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")  # no language named: all three
            assert all(f'<p lang="{lang}">' in body.decode() for lang in ("en", "id", "vi")), body
            for request in (b"GET /api/options HTTP/1.1\r\nAccept-Language: id\r\n\r\n",
                            b"GET /static/css/arena.css HTTP/1.1\r\n\r\n", b"POST / HTTP/1.1\r\n\r\n",
                            b"GET /ws/watch/m-1 HTTP/1.1\r\n\r\n"):
                head, body = await refused(port, request)
                assert json.loads(body) == {"error": "too many connections; close some and retry",
                                            "code": "too_many_connections"}, (request, body)
            # Refused connections that send nothing wait for their request, so many at once from one
            # address: past them, the JSON at once, while they still wait.
            waiting = [await connect_from(port, "127.0.0.1") for _ in range(connections.REFUSALS_HELD_PER_PEER)]
            reader, _ = await connect_from(port, "127.0.0.1")
            assert (await closed_by_server(reader)).endswith(b'"code": "too_many_connections"}\r\n')
            assert web.front.site.gate.held == connections.REFUSALS_HELD_PER_PEER  # type: ignore[union-attr]
            for reader, writer in waiting:  # and each is answered once its request comes
                writer.write(b"GET /api/options HTTP/1.1\r\n\r\n")
                assert b'"too_many_connections"' in await closed_by_server(reader)
            for _ in range(100):
                if web.front.site.gate.held == 0:  # type: ignore[union-attr]
                    break
                await asyncio.sleep(0.05)
            assert web.front.site.gate.held == 0  # type: ignore[union-attr]
            for _, writer in held:
                writer.close()

    run(main())


def test_idle_and_half_sent_connections_are_closed_but_live_feeds_stay(tmp_path, monkeypatch) -> None:
    """Before: a connection that sent nothing, or half a request line, was kept an hour."""
    monkeypatch.setattr(connections, "IDLE_S", 0.5)

    async def main() -> None:
        async with web_daemon(tmp_path, house_matches=1, house_delay_ms=100) as web, aiohttp.ClientSession() as http:
            silent, _ = await connect_from(web.front.port, "127.0.0.1")
            half, writer = await connect_from(web.front.port, "127.0.0.1")
            writer.write(b"GET /api/opt")
            assert await closed_by_server(silent) == b""
            assert await closed_by_server(half) == b""
            match_id = await house_match(web)
            async with http.ws_connect(f"{web.url}/ws/watch/{match_id}") as ws:
                start = time.monotonic()
                while time.monotonic() - start < 2.0:  # four idle timeouts: the feed is not idle
                    assert (await ws.receive(timeout=10)).type is aiohttp.WSMsgType.TEXT

    run(main())


def test_a_connection_flood_leaves_bots_their_file_descriptors(tmp_path) -> None:
    """Before: in a process limited to 1,024 descriptors (a common default), 1,100 idle
    connections to the web port from a few addresses took every descriptor: the gRPC
    health check timed out during the flood and still after it. Now the web front holds
    at most a quarter of the limit; the health check answers during the flood and the
    web front serves again once it ends."""

    args = with_descriptor_limit([sys.executable, "-m", "heartsd.cli", "serve", "--port", "0", "--db",
                                  str(tmp_path / "d.db"), "--admin-token", ADMIN, "--log-level", "warning",
                                  "--web", "127.0.0.1:0"], 1024)
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    flood: list[socket.socket] = []
    try:
        assert proc.stdout is not None
        grpc_port = int(proc.stdout.readline().rsplit(":", 1)[1])
        web_url = proc.stdout.readline().split(" on ", 1)[1].strip()
        web_port = int(web_url.rstrip("/").rsplit(":", 1)[1])
        for i in range(1100):  # 20 addresses, 55 each: under the per-address cap, over the total
            s = socket.socket()
            s.bind((f"127.0.0.{10 + i % 20}", 0))
            s.connect(("127.0.0.1", web_port))
            flood.append(s)
        time.sleep(1.0)

        async def health() -> int:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{grpc_port}") as channel:
                answer = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=15)
                return answer.status

        assert asyncio.run(health()) == health_pb2.HealthCheckResponse.SERVING
        for s in flood:
            s.close()
        flood.clear()

        async def page() -> int:
            for _ in range(50):
                with contextlib.suppress(aiohttp.ClientError):
                    async with aiohttp.ClientSession() as http, http.get(web_url + "api/options") as r:
                        if r.status == 200:
                            return r.status
                await asyncio.sleep(0.2)
            return 0

        assert asyncio.run(page()) == 200
        assert asyncio.run(health()) == health_pb2.HealthCheckResponse.SERVING
    finally:
        for s in flood:
            s.close()
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert "Too many open files" not in err, err[-2000:]
    assert "capped below web_max_connections" in err


# -- malformed HTTP ---------------------------------------------------------------------------

def test_malformed_requests_are_answered_400_and_logged_without_a_traceback(tmp_path, caplog) -> None:
    """Before: aiohttp logged each malformed request (a header over 8 KiB, a broken
    request line) as an ERROR with a traceback on the root logger: multi-line text outside
    the daemon's JSON lines, quoting the client's bytes, as often as anyone sent one."""

    async def main() -> list[dict[str, Any]]:
        async with web_daemon(tmp_path, log_level="debug") as web:
            with capture_logs() as logs:
                for request in (b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 9000 + b"\r\n\r\n",
                                b"GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
                                b"GET /\x00 HTTP/1.1\r\n\r\n"):
                    reader, writer = await connect_from(web.front.port, "127.0.0.1")
                    writer.write(request)
                    answer = await closed_by_server(reader)
                    writer.close()
                    assert answer.startswith((b"HTTP/1.0 400", b"HTTP/1.1 400")), answer[:100]
        return logs

    with caplog.at_level(logging.DEBUG):
        logs = run(main())
    tracebacks = [r for r in caplog.records if r.name.startswith("aiohttp") and (r.exc_info or r.levelno >= logging.ERROR)]
    assert not tracebacks, [r.getMessage() for r in tracebacks]
    malformed = [e for e in logs if e["event"] == "malformed HTTP request"]
    assert malformed and all(e["log_level"] == "debug" and "exc_info" not in e for e in malformed)


def test_websocket_handshakes_from_raw_sockets_are_checked(tmp_path) -> None:
    """Held: a seat's socket needs the seat's cookie and this site's Origin; a watch
    socket of an unknown match is refused in-band with a reason."""

    async def main() -> None:
        async with web_daemon(tmp_path) as web, client() as http:
            match_id = (await take_seat(http, web.url))["match_id"]
            key = base64.b64encode(os.urandom(16)).decode()
            for path, extra in ((f"/api/seat/{match_id}/socket", ""),
                                (f"/api/seat/{match_id}/socket", f"Cookie: seat-{match_id}=guess\r\n")):
                reader, writer = await connect_from(web.front.port, "127.0.0.1")
                writer.write((f"GET {path} HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                              f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n{extra}\r\n").encode())
                head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
                writer.close()
                assert head.startswith(b"HTTP/1.1 403"), head
            async with http.ws_connect(f"{web.url}/ws/watch/m-0000000000000000") as ws:
                refusal = json.loads((await ws.receive(timeout=10)).data)
                assert refusal["status"] == 404 and "no match" in refusal["error"]

    run(main())



@pytest.mark.parametrize("socket_kind", ["watch", "seat"])
def test_a_failed_handshake_leaves_its_connection_plain_http(tmp_path, socket_kind: str) -> None:
    """A review: a socket's screen (web/inbound.py: its byte budget, its masks) is set on
    the connection before the handshake is answered, and stayed there when aiohttp refused
    the handshake (here a WebSocket version it does not know): the next request on that
    keep-alive connection was read as WebSocket frames, got a close frame for an answer and
    the connection was closed. Now a refused handshake's connection is plain HTTP again."""

    async def main() -> tuple[bytes, bytes]:
        async with web_daemon(tmp_path, house_matches=1, house_delay_ms=50) as web, client() as http:
            path, headers = await socket_path(web, http, socket_kind)
            port = web.front.port
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(upgrade_request(port, path, headers, version="99"))
            refused = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
            length = int(next(line.split(b":")[1] for line in refused.split(b"\r\n")
                              if line.lower().startswith(b"content-length:")))
            await reader.readexactly(length)
            writer.write(f"GET /api/options HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
            with contextlib.suppress(asyncio.TimeoutError, asyncio.IncompleteReadError, ConnectionError):
                return refused, await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
            return refused, b""

    refused, next_answer = run(main())
    assert refused.split(b" ")[1].startswith(b"4"), refused
    assert next_answer.startswith(b"HTTP/1.1 200 "), next_answer


def test_a_refused_watch_socket_closes_with_a_reason_that_is_text(tmp_path) -> None:
    """A close frame's reason is UTF-8 and at most 123 bytes: the refusal quotes the
    caller's match id, and one of two-byte characters was cut inside a character, so the
    client had to fail the connection (1007, RFC 6455) instead of closing it cleanly (an
    attack pass). The reason is now cut between characters."""

    async def main() -> tuple[Any, Any, Any]:
        async with web_daemon(tmp_path) as web, client() as http:
            async with http.ws_connect(f"{web.url}/ws/watch/m-{'é' * 100}") as ws:
                refusal = json.loads((await ws.receive(timeout=10)).data)
                closing = await ws.receive(timeout=10)
                return refusal, closing, ws.close_code

    refusal, closing, code = run(main())
    assert refusal["status"] == 404 and "no match" in refusal["error"]
    assert closing.type == aiohttp.WSMsgType.CLOSE and code == 1000, (closing, code)
    assert closing.extra.startswith("no match") and len(closing.extra.encode()) <= 123

@pytest.mark.parametrize("message", ['{"type": "answer", "request_id": "' + "r" * 5000 + '"}', "\x00" * 10])
def test_a_seat_socket_refuses_huge_or_garbage_messages_and_the_seat_plays_on(tmp_path, message: str) -> None:
    """Held: a message over 4 KiB closes the socket (1009), garbage is refused in-band and
    spends the session's budget; either way the seat is a disconnected bot, not a crash."""

    async def main() -> None:
        async with web_daemon(tmp_path) as web, client() as http:
            match_id = (await take_seat(http, web.url))["match_id"]
            async with http.ws_connect(f"{web.url}/api/seat/{match_id}/socket") as ws:
                await ws.receive(timeout=10)
                await ws.send_str(message)
                closed = None
                for _ in range(50):
                    reply = await ws.receive(timeout=10)
                    if reply.type is not aiohttp.WSMsgType.TEXT:
                        closed = reply
                        break
                    if json.loads(reply.data).get("rejection"):
                        break
                if closed is not None:
                    assert closed.data == 1009, closed
            assert not web.arena.runners[match_id].finished.is_set()
            async with http.ws_connect(f"{web.url}/api/seat/{match_id}/socket") as ws:
                assert json.loads((await ws.receive(timeout=10)).data)["you"] == 0

    run(main())


def test_deeply_nested_json_is_refused_with_a_reason_not_a_traceback(tmp_path) -> None:
    """Before: json.loads raises RecursionError (not ValueError) on a body nested a
    thousand deep: POST /api/play answered 500 "internal error" and logged a traceback at
    error level, for anyone, 20 times a second; on a seat's socket the handler died with
    one. Now both are refused like any JSON that is not the expected shape."""

    async def main() -> list[dict[str, Any]]:
        async with web_daemon(tmp_path, log_level="debug") as web, client() as http:
            with capture_logs() as logs:
                async with http.post(f"{web.url}/api/play", data="[" * 5000,
                                     headers={"Content-Type": "application/json"}) as r:
                    assert r.status == 400 and "JSON" in (await r.json())["error"]
                match_id = (await take_seat(http, web.url))["match_id"]
                async with http.ws_connect(f"{web.url}/api/seat/{match_id}/socket") as ws:
                    await ws.receive(timeout=10)
                    await ws.send_str("[" * 4000)
                    for _ in range(50):
                        reply = await ws.receive(timeout=10)
                        assert reply.type is aiohttp.WSMsgType.TEXT, reply
                        rejection = json.loads(reply.data)["rejection"]
                        if rejection:
                            assert rejection["code"] == "malformed"
                            break
                    else:
                        raise AssertionError("the nested message was not refused")
        return logs

    logs = run(main())
    assert not [e for e in logs if e["log_level"] == "error" or "exc_info" in e], logs


def test_a_long_replay_costs_the_same_per_deal_and_its_frames_are_bounded(tmp_path) -> None:
    """Before: every frame carried the scores of every earlier deal, and a replay kept
    every deal's frames it was asked for: deal 199 of a 200-deal record answered 1.1 MB,
    and scrubbing 40 of its deals kept 107 MiB (quadratic in the record's length, and
    anyone may ask). Now a frame says how many deals are scored (the index has the
    scores once) and a replay keeps its DEALS_KEPT latest deals."""
    from heartsbot.proto import admin_pb2

    from heartsd.arena import SeatRequest
    from heartsd.web import replays

    async def main() -> None:
        async with web_daemon(tmp_path) as web, aiohttp.ClientSession() as http:
            runner = await web.arena.create_match(
                "standard", 4, admin_pb2.RulesetOptions(), P.MatchFormat(fixed_deals=40), None,
                [SeatRequest(house="random")] * 4, P.ClockSettings())
            await asyncio.wait_for(runner.finished.wait(), 120)
            async with http.get(f"{web.url}/api/replay/{runner.id}") as r:
                index = await r.json()
            assert len(index["deal_scores"]) == 40
            sizes = {}
            for deal in range(40):
                async with http.get(f"{web.url}/api/replay/{runner.id}/deals/{deal}") as r:
                    body = await r.read()
                    sizes[deal] = len(body)
                    frames = json.loads(body)["frames"]
                    assert frames[0]["deals_scored"] == deal and frames[-1]["deals_scored"] == deal + 1
                    assert "deal_scores" not in frames[0]
            assert sizes[39] < 1.5 * sizes[0], sizes
            replay = web.front.api._replays[runner.id]
            assert len(replay._frames) == replays.DEALS_KEPT

    run(main())


def test_one_ipv6_caller_counts_the_same_over_grpc_and_the_web(tmp_path):
    """The spectator budget per address is shared by gRPC's spectator calls and the web
    front. Before: gRPC names an IPv6 peer with its brackets URL-encoded ("ipv6:%5B::1%5D")
    and the web did not, so over IPv6 one caller had its limit once on each. The key is now
    one function's (budgets.address_key), which also counts an IPv6 caller by its /64."""
    from heartsbot.proto import spectator_pb2, spectator_pb2_grpc

    async def main() -> None:
        async with web_daemon(tmp_path, host="::1", web="[::1]:0", max_spectator_calls_per_peer=1,
                              house_matches=1, house_delay_ms=50) as web, client() as http:
            match_id = await house_match(web)
            feed = await http.ws_connect(f"http://[::1]:{web.front.port}/ws/watch/{match_id}")
            try:
                async with grpc.aio.insecure_channel(f"[::1]:{web.grpc_port}") as channel:
                    stub = spectator_pb2_grpc.SpectatorServiceStub(channel)
                    with pytest.raises(grpc.aio.AioRpcError) as refused:
                        await stub.ListMatches(spectator_pb2.ListMatchesRequest(), timeout=10)
                assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                assert "from your address" in (refused.value.details() or "")
            finally:
                await feed.close()

    run(main())


def test_a_post_whose_body_never_comes_holds_no_spectator_slot_and_is_closed(tmp_path, monkeypatch) -> None:
    """Before (an attack pass): ``POST /api/play`` with ``Content-Length: 100`` and then
    nothing held one of its address's spectator slots for ever (300 s and counting: the
    idle timeout does not apply while a handler runs). 32 addresses x 16 such idle
    connections took the whole spectator budget: every web call and gRPC spectator call
    was refused, and a person's seat page could not reload. Now the body is read before
    any slot is taken, within BODY_S, and a body that does not come in time is a 408."""
    monkeypatch.setattr(connections, "BODY_S", 0.5)

    async def main() -> None:
        async with web_daemon(tmp_path, max_spectator_calls_per_peer=2) as web:
            stuck = []
            for _ in range(4):  # twice the address's spectator slots
                reader, writer = await connect_from(web.front.port, "127.0.0.1")
                writer.write(b"POST /api/play HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                             b"Content-Length: 100\r\n\r\n{")
                stuck.append((reader, writer))
            await asyncio.sleep(0.2)
            assert web.front.budget.in_use == 0
            async with aiohttp.ClientSession() as http, http.get(f"{web.url}/api/options") as r:
                assert r.status == 200  # the address's slots are all free
            for reader, _ in stuck:
                answer = await closed_by_server(reader)
                assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
                assert b"did not arrive" in answer, answer

    run(main())


def test_a_client_that_hangs_up_in_the_middle_of_its_body_is_no_traceback(tmp_path) -> None:
    """Before (an attack pass): each such request logged "web handler failed" at ERROR with
    a ConnectionResetError traceback."""

    async def main() -> list[dict[str, Any]]:
        async with web_daemon(tmp_path, log_level="debug") as web:
            with capture_logs() as logs:
                for _ in range(5):
                    reader, writer = await connect_from(web.front.port, "127.0.0.1")
                    writer.write(b"POST /api/play HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                                 b"Content-Length: 100\r\n\r\n{")
                    await writer.drain()
                    await asyncio.sleep(0.1)
                    sock = writer.get_extra_info("socket")
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                    writer.close()  # a reset, not a clean end
                await asyncio.sleep(0.5)
        return logs

    logs = run(main())
    failed = [e for e in logs if e["log_level"] in ("error", "critical") or "exc_info" in e]
    assert failed == [], failed


def test_spectators_cannot_lock_a_person_out_of_their_own_seat(tmp_path) -> None:
    """Before (an attack pass): a seat's page (its JSON and its socket) took slots of the
    spectator budget, so 16 watch tabs from the person's own address (a household, a NAT),
    or 500 watch sockets from anywhere, made the Playboard fail with 429, and after 60 s
    the table was cancelled. A person's seat is the web's bot: it has its own budget,
    bounded by the tables for people."""

    async def main() -> None:
        async with web_daemon(tmp_path, max_spectator_calls_per_peer=2, max_spectator_calls=3) as web, \
                client() as http:
            match_id = (await take_seat(http, web.url))["match_id"]
            async with aiohttp.ClientSession() as other:  # the whole spectator budget, watching
                watchers = [await other.ws_connect(f"{web.url}/ws/watch/{match_id}") for _ in range(2)]
                more = aiohttp.TCPConnector(local_addr=("127.0.0.2", 0))
                async with aiohttp.ClientSession(connector=more) as third:
                    watchers.append(await third.ws_connect(f"{web.url}/ws/watch/{match_id}"))
                    for ws in watchers:
                        assert (await ws.receive(timeout=10)).type is aiohttp.WSMsgType.TEXT
                    assert web.front.budget.in_use == 3
                    async with http.get(f"{web.url}/api/options") as r:
                        assert r.status == 429  # spectators' calls: the budget is spent
                    async with http.get(f"{web.url}/api/seat/{match_id}") as r:
                        assert r.status == 200, await r.text()
                    async with http.ws_connect(f"{web.url}/api/seat/{match_id}/socket") as seat:
                        snapshot = json.loads((await seat.receive(timeout=10)).data)
                        assert "auto" in snapshot and "error" not in snapshot, snapshot
                    for ws in watchers:
                        await ws.close()

    run(main())


def test_the_lobby_lists_are_built_once_however_many_tabs_poll_them(tmp_path, monkeypatch) -> None:
    """Before (an attack pass): every lobby poll (each open tab, every 5 s) read the store
    twice; 150 open tabs made /api/matches take 5.9 s in the median and every static file
    1 s (the same worker threads). Now one copy of the lists serves every caller for
    LOBBY_S (here an hour, so the count below is exact)."""
    from heartsd.web import api

    monkeypatch.setattr(api, "LOBBY_S", 3600.0)

    async def main() -> None:
        async with web_daemon(tmp_path, house_matches=1, house_delay_ms=100) as web:
            await house_match(web)
            listed = []
            real = web.arena.store.list

            def counted(*args: Any, **kwargs: Any) -> Any:
                listed.append(args)
                return real(*args, **kwargs)

            monkeypatch.setattr(web.arena.store, "list", counted)
            sources = [f"127.0.0.{1 + i % 8}" for i in range(48)]  # under each address's rate

            async def poll(source: str) -> dict[str, Any]:
                connector = aiohttp.TCPConnector(local_addr=(source, 0))
                async with aiohttp.ClientSession(connector=connector) as one, \
                        one.get(f"{web.url}/api/matches") as r:
                    assert r.status == 200 and r.content_type == "application/json"
                    return await r.json()  # type: ignore[no-any-return]

            at_once = await asyncio.gather(*(poll(s) for s in sources))
            one_by_one = [await poll(s) for s in sources[:8]]
            assert len(listed) == 2, listed  # the live list and the recent one, once
            assert all(page == at_once[0] for page in at_once + one_by_one)
            assert len(at_once[0]["live"]) == 1
            # A match starting on this daemon shows at once, however long the lists are kept.
            async with client() as http:
                taken = (await take_seat(http, web.url))["match_id"]
            assert taken in [m["match_id"] for m in (await poll("127.0.0.1"))["live"]]

    run(main())


def test_spectator_calls_spend_one_rate_across_the_web_and_grpc_and_all_addresses(tmp_path):
    """The spectator class's call rate is one for gRPC's spectator calls and the web front's
    requests and live feeds, per address and for every address together
    (``spectator_calls_total_per_s``, its burst three seconds' worth), so many addresses
    cannot together keep the daemon busy either. The pages' JSON spends only its
    address's: it is cached (the lobby's list, polled by every open lobby) or paced on its
    own (replays), and a crowd of viewers must not spend what bounds gRPC's calls.
    Here the total is 17 a second (burst 51), its clock stopped: a 1,000-match gRPC page
    from 127.0.0.1 (cost 51) spends it, the next page is refused with the reason, and a
    live feed from 127.0.0.2 is refused 429 (with when to come back), while that address's
    lobby JSON is served. The routes that spend no total are the app's own."""
    from heartsbot.proto import spectator_pb2, spectator_pb2_grpc

    from heartsd.web.api import SHARED_WORK

    async def main() -> tuple[list[Any], list[int], Any]:
        async with web_daemon(tmp_path, spectator_calls_total_per_s=17) as web:
            assert SHARED_WORK <= {route.resource.canonical for route in web.front.app.router.routes()}
            spectators = web.arena.budgets.spectators
            spectators.rate._clock = spectators.total_rate._clock = lambda: 0.0  # no refill: no race
            answers: list[Any] = []
            async with grpc.aio.insecure_channel(f"127.0.0.1:{web.grpc_port}") as channel:
                stub = spectator_pb2_grpc.SpectatorServiceStub(channel)
                for limit in (1000, 1):
                    try:
                        await stub.ListMatches(spectator_pb2.ListMatchesRequest(limit=limit))
                        answers.append(grpc.StatusCode.OK)
                    except grpc.aio.AioRpcError as exc:
                        answers.append((exc.code(), exc.details()))
            other = aiohttp.TCPConnector(local_addr=("127.0.0.2", 0))
            async with aiohttp.ClientSession(connector=other) as http:
                lobby = []
                for _ in range(3):
                    async with http.get(f"{web.url}/api/matches") as r:
                        lobby.append(r.status)
                try:
                    async with http.ws_connect(f"{web.url}/ws/watch/m-none"):
                        feed: Any = 101
                except aiohttp.WSServerHandshakeError as exc:
                    feed = (exc.status, exc.headers.get("Retry-After") if exc.headers else None)
            return answers, lobby, feed

    answers, lobby, feed = run(main())
    assert answers[0] == grpc.StatusCode.OK
    code, details = answers[1]
    assert code == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "as many spectator calls a second as it allows (17)" in details, details
    assert lobby == [200, 200, 200]
    assert feed == (429, "1"), feed


# -- what a socket's client sends, below the messages --------------------------------------

MASK = b"\x00\x00\x00\x00"  # a client's frames are masked; a zero mask leaves the payload as is
FLOODS = {
    "pings": (b"", bytes([0x89, 0x80 | 125]) + MASK + b"x" * 125),  # aiohttp answered each itself
    "pongs": (b"", bytes([0x8A, 0x80 | 125]) + MASK + b"x" * 125),  # unsolicited: taken and dropped
    # A text message never finished: empty continuation frames, none of them a message.
    "fragments": (bytes([0x01, 0x80]) + MASK, bytes([0x00, 0x80]) + MASK),
}


async def socket_path(web: Any, http: aiohttp.ClientSession, socket_kind: str) -> tuple[str, str]:
    """(path, extra request headers) of a live watch socket, or of a seat taken for the test."""
    if socket_kind == "watch":
        return f"/ws/watch/{await house_match(web)}", ""
    match_id = (await take_seat(http, web.url))["match_id"]
    [secret] = [c.value for c in http.cookie_jar if c.key == f"seat-{match_id}"]
    return f"/api/seat/{match_id}/socket", f"Cookie: seat-{match_id}={secret}\r\n"


def upgrade_request(port: int, path: str, headers: str = "", version: str = "13") -> bytes:
    """A browser's WebSocket upgrade request for ``path``, as raw bytes."""
    key = base64.b64encode(os.urandom(16)).decode()
    return (f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: {version}\r\nOrigin: http://127.0.0.1:{port}\r\n"
            f"{headers}\r\n").encode()


async def everything_sent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, web: Any,
                          http: aiohttp.ClientSession) -> bytes:
    """What the server sends until it closes the connection (or is silent 10 s); then
    checks that the daemon still serves."""
    answer = b""
    with contextlib.suppress(ConnectionError, asyncio.TimeoutError):
        while chunk := await asyncio.wait_for(reader.read(65536), 10):
            answer += chunk
    writer.close()
    async with http.get(f"{web.url}/api/options") as r:
        assert r.status == 200
    return answer


async def raw_websocket(port: int, path: str, headers: str = "") -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(upgrade_request(port, path, headers))
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
    assert head.startswith(b"HTTP/1.1 101"), head
    return reader, writer


async def flood_until_cut(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, flood: str,
                          total_bytes: int = 4 << 20) -> bool:
    """Send ``flood`` frames (up to ``total_bytes``) while reading what comes back: True
    once the server has cut the connection, False if it still takes frames after them all."""
    first, frame = FLOODS[flood]
    batch = frame * (65536 // len(frame))

    async def read_until_cut() -> None:
        with contextlib.suppress(ConnectionError):
            while await reader.read(65536):
                pass

    cut = asyncio.get_running_loop().create_task(read_until_cut())
    try:
        writer.write(first)
        sent = 0
        while sent < total_bytes and not cut.done():
            writer.write(batch)
            sent += len(batch)
            await writer.drain()
        await asyncio.wait_for(asyncio.shield(cut), 5)
        return True
    except ConnectionError:
        await asyncio.wait_for(cut, 10)
        return True
    except asyncio.TimeoutError:
        return False
    finally:
        cut.cancel()
        writer.close()


@pytest.mark.parametrize("flood", sorted(FLOODS))
@pytest.mark.parametrize("socket_kind", ["watch", "seat"])
def test_a_socket_flooded_with_frames_that_are_no_message_is_cut(tmp_path, flood: str, socket_kind: str) -> None:
    """An attack pass: one WebSocket of a spectator (no token) or of a person's seat sending
    PING frames (~170,000 a second), unsolicited PONGs, or a text message never finished
    took bots from ~3,300 decisions a second to 17-263: aiohttp parses and answers such
    frames itself, so the socket's rules on messages never saw one, and the socket stayed
    open. Now what a socket's client sends is metered in bytes (web/inbound.py), and
    past what pages send the connection is cut; before, 4 MiB of each went in and the
    connection stayed. A cut socket gives its budget slot back, and the daemon serves on."""

    async def main() -> tuple[bool, int, int]:
        async with web_daemon(tmp_path, house_matches=1, house_delay_ms=50) as web, client() as http:
            path, headers = await socket_path(web, http, socket_kind)
            budget = web.front.budget if socket_kind == "watch" else web.front.seat_budget
            cut = await flood_until_cut(*await raw_websocket(web.front.port, path, headers), flood)
            for _ in range(100):
                if budget.in_use == 0:
                    break
                await asyncio.sleep(0.05)
            async with http.get(f"{web.url}/api/options") as r:
                return cut, budget.in_use, r.status

    cut, in_use, status = run(main())
    assert cut, "the connection took every frame and stayed open"
    assert in_use == 0 and status == 200


def server_frames(data: bytes) -> tuple[list[tuple[int, bytes]], bytes]:
    """The whole frames at the start of ``data`` (opcode, payload), and the bytes after them;
    the server's frames are not masked."""
    frames = []
    while len(data) >= 2:
        size, at = data[1] & 0x7F, 2
        if size == 126:
            size, at = int.from_bytes(data[2:4], "big"), 4
        elif size == 127:
            size, at = int.from_bytes(data[2:10], "big"), 10
        if len(data) < at + size:
            break
        frames.append((data[0] & 0x0F, data[at:at + size]))
        data = data[at + size:]
    return frames, data


async def pongs_until_cut(reader: asyncio.StreamReader, wanted: int) -> int:
    """How many PONG frames the server sent before ``wanted`` of them, or its cut."""
    data, pongs = b"", 0
    with contextlib.suppress(ConnectionError, asyncio.TimeoutError, asyncio.IncompleteReadError):
        while pongs < wanted:
            data += await asyncio.wait_for(reader.read(65536), 5)
            if reader.at_eof() and not data:
                break
            frames, data = server_frames(data)
            pongs += sum(opcode == 0xA for opcode, _ in frames)
            if reader.at_eof():
                break
    return pongs


@pytest.mark.parametrize("socket_kind", ["watch", "seat"])
def test_reconnecting_does_not_refill_an_addresses_socket_budget(tmp_path, socket_kind: str) -> None:
    """An attack pass on the first byte budget: it was each connection's own, so a client
    that spent three quarters of a burst on pings, hung up and reconnected got a full burst
    again, every time (one address, no token: bots ~2,200 -> ~260 decisions/s). The budget
    is now the address's, shared by its sockets of a kind: the second such connection runs
    out and is cut; before, all four took their pings and stayed open."""
    from heartsd.web import inbound

    burst = inbound.WATCH_BURST_BYTES if socket_kind == "watch" else inbound.SEAT_BURST_BYTES
    ping = bytes([0x89, 0x80]) + MASK  # 6 bytes, no payload

    async def main() -> list[bool]:
        async with web_daemon(tmp_path, house_matches=1, house_delay_ms=50) as web, client() as http:
            path, headers = await socket_path(web, http, socket_kind)
            answered = []
            pings = burst * 3 // 4 // len(ping)
            with capture_logs() as logs:
                for _ in range(4):
                    reader, writer = await raw_websocket(web.front.port, path, headers)
                    writer.write(ping * pings)
                    answered.append(await pongs_until_cut(reader, pings))
                    writer.close()
            return [count == pings for count in answered], [e for e in logs if "disconnected" in e["event"]]

    all_answered, cut_lines = run(main())
    assert all_answered == [True, False, False, False], all_answered  # before: all True
    assert len(cut_lines) == 1, cut_lines  # three cuts, one line: the log is not the attacker's to fill


@pytest.mark.parametrize("socket_kind", ["watch", "seat"])
def test_frames_sent_with_the_handshake_are_refused_not_answered(tmp_path, socket_kind: str) -> None:
    """A review of the byte budget: frames sent in the same write as the upgrade request
    reach aiohttp before the socket opens, and it gave them to the socket's parser
    unmetered (20,000 pings all answered). No browser sends a frame before the 101: such a
    handshake is answered 400 and the connection closed; before, 101 and a pong per ping."""

    async def main() -> bytes:
        async with web_daemon(tmp_path, house_matches=1, house_delay_ms=50) as web, client() as http:
            path, headers = await socket_path(web, http, socket_kind)
            reader, writer = await asyncio.open_connection("127.0.0.1", web.front.port)
            writer.write(upgrade_request(web.front.port, path, headers) + FLOODS["pings"][1] * 20_000)
            return await everything_sent(reader, writer, web, http)

    answer = run(main())
    assert answer.startswith(b"HTTP/1.1 400 "), answer[:200]
    assert b"nothing before the server's 101" in answer and b"\x8a" not in answer  # no pong


@pytest.mark.parametrize("socket_kind", ["watch", "seat"])
def test_a_client_frame_without_a_mask_fails_the_socket_with_1002(tmp_path, socket_kind: str) -> None:
    """RFC 6455 (5.1): a server MUST close the connection on a client frame that is not
    masked. aiohttp took them (a ping then cost an attacker 2 bytes instead of 6, and an
    attack pass flooded with them). Masked pings, one with its header split across writes, are
    answered; the unmasked ping after them is not, and the socket ends with a close frame
    of code 1002. Before, the unmasked ping got its pong and the socket stayed open."""

    async def main() -> bytes:
        async with web_daemon(tmp_path, house_matches=1, house_delay_ms=50) as web, client() as http:
            path, headers = await socket_path(web, http, socket_kind)
            reader, writer = await raw_websocket(web.front.port, path, headers)
            writer.write(bytes([0x89, 0x80 | 3]) + MASK + b"one")
            writer.write(bytes([0x89, 0x80]) + MASK)  # an empty one, header split below
            writer.write(bytes([0x89, 0x80 | 4]))
            await asyncio.sleep(0.1)
            writer.write(MASK + b"last")
            await asyncio.sleep(0.1)  # what arrives with an unmasked frame is dropped with it
            writer.write(bytes([0x89, 0x04]) + b"nope")  # no mask
            return await everything_sent(reader, writer, web, http)

    frames, rest = server_frames(run(main()))
    assert rest == b""
    pongs = [payload for opcode, payload in frames if opcode == 0xA]
    assert pongs == [b"one", b"", b"last"], frames
    assert frames[-1][0] == 0x8 and frames[-1][1][:2] == (1002).to_bytes(2, "big"), frames


def test_a_caller_over_its_request_rate_has_its_connection_closed_after_the_429(tmp_path) -> None:
    """An attack pass: requests pipelined on one keep-alive connection past the caller's rate
    were each answered 429 on the same connection (~10,000 a second), so refusing them kept
    the loop busy: 8 such connections took bots from ~2,000 decisions a second to 517. Now the
    first 429 closes the connection (as the 408 does); before, all 150 were answered."""

    async def main() -> tuple[list[int], bool]:
        async with web_daemon(tmp_path) as web:
            port = web.front.port
            return await pipelined(port, f"GET /api/options HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode() * 150)

    statuses, closed = run(main())
    assert closed and statuses[-1] == 429 and statuses.count(429) == 1, statuses
    assert set(statuses[:-1]) == {200}, statuses


def test_a_caller_over_its_rate_is_told_so_as_a_page_for_a_page_and_with_a_code_for_the_api(tmp_path) -> None:
    """A browser pass: a person over the rate (tabs of live tables, reloads) who asked for
    a page got the API's JSON body shown as text, and a page's own request got an English
    reason with nothing a page could say in its language. Now a page address gets a page
    (self-contained: its stylesheet and script would be over the rate too) with Retry-After,
    in the language the request names (else in each of the three), and the API's 429 carries
    the code "too_many" (said in the page's language)."""

    async def main() -> tuple[Any, ...]:
        async with web_daemon(tmp_path, web_rate_per_s=0.01, web_burst=2) as web, client() as http:
            for _ in range(2):
                async with http.get(f"{web.url}/api/options") as r:
                    assert r.status == 200
            async with http.get(f"{web.url}/leaderboard") as page:
                page_seen = (page.status, page.content_type, page.headers.get("Retry-After"), await page.text())
            async with http.get(f"{web.url}/leaderboard", headers={"Accept-Language": "vi-VN,vi;q=0.9,en;q=0.5"}) as page:
                told = (page.status, await page.text())
        async with web_daemon(tmp_path, web_rate_per_s=0.01, web_burst=1) as web, client() as http:
            async with http.get(f"{web.url}/api/options") as r:
                assert r.status == 200
            async with http.get(f"{web.url}/api/options") as api:
                api_seen = (api.status, api.content_type, await api.json())
        return page_seen, told, api_seen

    (status, kind, retry, text), told, (api_status, api_kind, body) = run(main())
    assert (status, kind) == (429, "text/html") and retry and int(retry) >= 1, (status, kind, retry)
    assert "Too many requests" in text and "<script" not in text and "stylesheet" not in text, text
    assert all(f'<p lang="{lang}">' in text for lang in ("en", "id", "vi")), text  # no language named: each
    assert told[0] == 429 and '<html lang="vi">' in told[1] and "<h1>429 · Quá nhiều yêu cầu</h1>" in told[1], told
    assert "Too many requests" not in told[1], told  # before: the three, the browser's language last
    assert (api_status, api_kind) == (429, "application/json") and body["code"] == "too_many", body


def test_a_nul_in_an_address_is_refused_400_on_every_store(tmp_path, store_url) -> None:
    """An attack pass, on PostgreSQL (which refuses U+0000 in text): /watch/m-%00x,
    /play/..., /api/replay/... answered 500 with a traceback in the log, and
    /ws/watch/m-%00x opened a socket that never said anything nor closed, holding a
    spectator slot (16 of them and the address's next request got 429). On SQLite they
    were 404. Now every store answers 400 with a reason, before any handler, sockets
    included."""
    paths = ["/watch/m-%00x", "/play/m-%00x", "/api/replay/m-%00x", "/api/replay/m-%00x/deals/1",
             "/api/matches?status=%00", "/bots/a%00b"]

    async def main() -> tuple[dict[str, Any], Any]:
        async with web_daemon(tmp_path, db_path=store_url) as web, client() as http:
            got = {}
            for path in paths:
                async with http.get(f"{web.url}{path}") as r:
                    got[path] = (r.status, await r.text())
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                async with http.ws_connect(f"{web.url}/ws/watch/m-%00x"):
                    pass
            async with http.get(f"{web.url}/api/matches") as r:  # the address is not held back
                after = r.status
            return got, (refused.value.status, after)

    with capture_logs() as logs:
        got, (socket_status, after) = run(main())
    # A page says it in an HTML page of its status; the API and sockets in JSON, with the reason.
    wrong = {path: g for path, g in got.items() if g[0] != 400 or path.startswith("/api/") and "NUL character" not in g[1]}
    assert not wrong, wrong
    assert socket_status == 400 and after == 200
    assert not [e for e in logs if e.get("log_level") in ("error", "critical") or "exc_info" in e], logs


def test_a_watch_socket_opened_while_the_store_is_out_is_told_and_closed(tmp_path, postgres_server) -> None:
    """A spectator's feed ended by anything but a refusal (here PostgreSQL refusing every
    connection while the socket asks for a finished match's state) left the socket open for
    ever, heartbeats and all, holding its spectator slot and telling the page nothing (an
    attack pass found it by a NUL id on PostgreSQL). Now the page is told, and the socket
    closes 1011."""
    import psycopg
    from heartsbot.proto import admin_pb2

    from heartsd.arena import SeatRequest
    from tests.postgres import fresh_database

    def connections(url: str, allowed: bool) -> None:
        name = url.rsplit("/", 1)[1]
        with psycopg.connect(url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as admin:
            admin.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS {str(allowed).lower()}')
            if not allowed:  # what a failover does to the daemon's open connection
                admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", (name,))

    async def main(url: str) -> tuple[Any, Any, Any]:
        async with web_daemon(tmp_path, db_path=url) as web, client() as http:
            runner = await web.arena.create_match("standard", 4, admin_pb2.RulesetOptions(),
                                                  game_pb2.MatchFormat(fixed_deals=1), None,
                                                  [SeatRequest(house="random")] * 4, game_pb2.ClockSettings())
            await runner.finished.wait()
            connections(url, False)
            try:
                async with http.ws_connect(f"{web.url}/ws/watch/{runner.id}") as ws:
                    told = json.loads((await ws.receive(timeout=30)).data)
                    closing = await ws.receive(timeout=10)
                    return told, closing, ws.close_code
            finally:
                connections(url, True)

    with fresh_database(postgres_server) as url:
        told, closing, code = run(main(url))
    assert told == {"error": "internal error", "status": 500, "code": "internal"}, told
    assert closing.type == aiohttp.WSMsgType.CLOSE and code == 1011, (closing, code)


def test_the_webs_feeds_and_replays_spend_the_spectator_rate_by_size_as_grpcs_do(tmp_path, monkeypatch) -> None:
    """An attack pass found WatchMatch and GetMatchRecord charged one call whatever they sent
    (a 900-deal match's events ~140 ms of the event loop, a 1,000-deal record ~70 ms) and made
    them spend the spectator rate by size; the web's table feed and replay read the same things
    and still cost one request each. Now they spend it as the gRPC calls do: the feed a call's
    worth per EVENTS_PER_BATCH events (here 16), waiting when the rate is spent, so its table
    lags the match; a replay by its record's size (here a call's worth per KiB) before loading."""
    import heartsd.rates
    import heartsd.spectating

    from tests.server.harness import Daemon, long_match_held

    monkeypatch.setattr(heartsd.spectating, "EVENTS_PER_BATCH", 16)
    monkeypatch.setattr(heartsd.rates, "RECORD_BYTES_PER_TOKEN", 1024)

    async def main() -> tuple[int, int, list[int]]:
        async with web_daemon(tmp_path, spectator_calls_per_s=0.01, decision_ms=60_000) as web, client() as http:
            daemon = Daemon(web.arena, web.grpc_port, web.arena.settings)
            finished = [await daemon.create_match(["house:random"] * 4, deals=16) for _ in range(2)]
            for match_id in finished:
                await daemon.wait_finished(match_id)
            long_match, bot = await long_match_held(daemon)  # waits at deal 20, its clock a minute
            statuses = []
            for match_id in finished:
                async with http.get(f"{web.url}/api/replay/{match_id}") as response:
                    statuses.append(response.status)
            seen = 0  # the watch from another address, whose rate is whole
            other = aiohttp.TCPConnector(local_addr=("127.0.0.3", 0))
            async with aiohttp.ClientSession(connector=other) as watcher, \
                    watcher.ws_connect(f"{web.url}/ws/watch/{long_match}") as ws:
                with contextlib.suppress(asyncio.TimeoutError):
                    while True:
                        message = await ws.receive(timeout=3)
                        if message.type is not aiohttp.WSMsgType.TEXT:
                            break
                        seen = max(seen, json.loads(message.data).get("deal") or 0)
            await bot.close()
            return seen, len(web.arena.runners[long_match].match.results), statuses

    seen, dealt, statuses = run(main())
    assert dealt >= 20 and 0 < seen < dealt, (seen, dealt)  # before: the table at the match's deal at once
    assert statuses == [200, 429], statuses  # one record fits in the burst, the second does not


def test_a_replays_index_is_made_once_in_the_replay_work_not_on_the_loop_per_request(tmp_path, monkeypatch) -> None:
    """Before (an attack pass, 2026-12-07): the index of a replay kept in the cache was made
    again for every request, on the event loop: ~24 ms for a 1,000-deal match (150 KB of
    JSON), and it spends only its address's rate (SHARED_WORK), so one visitor at the web
    rate (20 a second, 60 at once) held the loop about half of every second, 1.5 s at a
    burst. Now it is made once, with the replay, in the replay's worker thread."""
    import threading

    from heartsd.web.replays import Replay
    from tests.web.harness import house_match as finished_match

    made: list[bool] = []
    index = Replay.index

    def counted(self: Replay) -> dict[str, Any]:
        made.append(threading.current_thread() is threading.main_thread())
        return index(self)

    monkeypatch.setattr(Replay, "index", counted)

    async def main() -> list[dict[str, Any]]:
        async with web_daemon(tmp_path) as web, aiohttp.ClientSession() as http:
            runner = await finished_match(web.arena, deals=2)
            await runner.finished.wait()
            return await json_answers(http, f"{web.url}/api/replay/{runner.id}", 5)

    bodies = run(main())
    assert all(b == bodies[0] for b in bodies) and len(bodies[0]["deals"]) == 2
    assert made == [False]  # before: [True] * 5, on the event loop's thread


def test_a_bot_pages_rating_history_is_encoded_once_per_new_result_not_per_request(tmp_path, monkeypatch) -> None:
    """Before (an attack pass, 2026-12-07): every /api/bots/<bot> turned the bot's whole
    rating history (one point per rated match, never bounded) into JSON on the event loop:
    ~14 ms at 5,000 matches, ~80 ms at 20,000 (1.9 MB), for one call's worth of the
    spectator rate, so one address asking 20 times a second for a long-lived bot's page
    held the loop most of every second. Now the bot's history is encoded once per list
    of points (a new result of the bot makes a new one) and spliced into each answer."""
    from heartsd.web import present
    from tests.server.harness import ladder_bots
    from tests.server.test_daemon_process import Remote

    encoded: list[object] = []  # the points of each history encoded
    real_encode = present.rating_history

    def counted_encode(points, limit):  # type: ignore[no-untyped-def]
        encoded.append(points)
        return real_encode(points, limit)

    monkeypatch.setattr(present, "rating_history", counted_encode)

    async def main() -> list[list[dict[str, Any]]]:
        async with web_daemon(tmp_path) as web, aiohttp.ClientSession() as http:
            daemon, ladder = Remote(web.grpc_port), web.arena.store.ladder
            names = ["v1", "v2", "v3", "v4"]
            bots = await ladder_bots(daemon, ladder, names)
            match_id = await daemon.create_match(names, deals=2, rated=True)
            await bots[0].wait_ended(match_id)
            shown = []
            for _ in range(4):
                async with http.get(f"{web.url}/api/bots/v1") as r:
                    assert r.status == 200 and r.content_type == "application/json"
                    body = await r.json()
                    assert body["bot"] == "v1" and body["ladder"] is True and body["matches"]
                    shown.append(body["history"])
            for b in bots:
                await b.close()
            return shown

    shown = run(main())
    assert all(s == shown[0] for s in shown) and len(shown[0]) == 1
    assert set(shown[0][0]) == {"n", "seq", "finished_ms", "rating", "uncertainty"}
    assert len(encoded) == 1  # before: 4, once per request


def test_a_watchers_snapshots_encode_the_deal_scores_once_per_deal_not_per_snapshot(tmp_path, monkeypatch) -> None:
    """Before (an attack pass, 2026-12-07): each snapshot a live feed sent encoded every
    deal's score again, the one part of it that grows with the match: ~2.4 ms and 87 KB a
    snapshot late in a 1,000-deal match, up to ten a second per watcher, so one address's
    16 watchers of such a match held the event loop ~40% of the time. Now a socket
    encodes the scores again only when a deal is scored (sockets.SnapshotEncoder)."""
    from heartsbot.proto import admin_pb2

    from heartsd.arena import SeatRequest
    from heartsd.web import present

    Counted = counted_encodings(monkeypatch, present, "deal_score")
    deals = 4

    async def main() -> list[dict[str, Any]]:
        async with web_daemon(tmp_path) as web, aiohttp.ClientSession() as http:
            def slow(runner: Any) -> None:
                runner.house_delay_s = 0.02  # a card every 20 ms: many snapshots per deal

            runner = await web.arena.create_match(
                "standard", 4, admin_pb2.RulesetOptions(), P.MatchFormat(fixed_deals=deals), None,
                [SeatRequest(house="random")] * 4, P.ClockSettings(), prepare=slow)
            snapshots = []
            async with http.ws_connect(f"{web.url}/ws/watch/{runner.id}") as ws:
                async for message in ws:
                    if message.type is aiohttp.WSMsgType.TEXT:
                        snapshots.append(json.loads(message.data))
            return snapshots

    snapshots = run(main())
    scored = [len(s["deal_scores"]) for s in snapshots if "deal_scores" in s]
    assert scored[-1] == deals and sum(scored) > 2 * deals * (deals + 1), scored  # many snapshots with scores
    # each scored deal makes the socket encode the rows so far once (1 + 2 + ... + deals)
    assert Counted.encoded <= deals * (deals + 1) // 2, (Counted.encoded, sum(scored))  # before: sum(scored)


def test_the_tournaments_answer_is_encoded_once_per_change_not_per_request(tmp_path, monkeypatch) -> None:
    """Before (an attack pass, 2026-12-07): the newest tournaments were built once per change
    but encoded to JSON for every request on the event loop: ~20 ms for five tournaments of
    1,000 rounds of two tables (what an organiser may create), so one address at the web
    rate held the loop ~40% of the time. Now the answer is kept encoded."""
    from heartsd.web import present

    Counted = counted_encodings(monkeypatch, present, "tournament")

    async def main() -> list[dict[str, Any]]:
        async with web_daemon(tmp_path) as web, aiohttp.ClientSession() as http:
            from tests.web.test_tournament_views import _finished_tournament

            _finished_tournament(web.arena.tournaments.store, "t-1")  # type: ignore[attr-defined]
            return await json_answers(http, f"{web.url}/api/tournaments", 4)

    answers = run(main())
    assert all(a == answers[0] for a in answers) and [t["id"] for t in answers[0]["tournaments"]] == ["t-1"]
    assert Counted.encoded == 1  # before: 4, once per request
