"""The daemon's reasons that pages show a person carry a code in the web API's JSON (the
English text stays, for API users and logs), and pages say every code in each language.

Before, a tournament table's waiting reason and a held replay's refusal reached the
Indonesian and Vietnamese pages as the daemon's English (the last closing note)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import grpc
import pytest

from heartsbot.client import BotClient
from heartsbot.proto import admin_pb2, game_pb2, tournament_pb2, tournament_pb2_grpc
from heartsbot.strategies import make_strategy
from heartsd import tournaments as tours
from heartsd.arena import ArenaError, SeatRequest
from heartsd.orphans import INTERRUPTED_ELSEWHERE
from heartsd.web import present

from tests.server.harness import ADMIN, BOTS, auth, run, running_daemon

from .harness import house_match, web_daemon

SERVER = Path(__file__).resolve().parents[2] / "server" / "heartsd"
I18N = SERVER / "web" / "static" / "js" / "i18n.js"


@contextlib.asynccontextmanager
async def _four_in_a_tournament(web: Any, name: str, rounds: int, deals: int) -> AsyncIterator[Any]:
    """alice, bob, carol and dave connected to ``web`` (heartsbot clients, version v1) and a
    tournament of them created: (their clients, their run tasks, an HTTP session, the
    TournamentService stub, the tournament); the clients are stopped after."""
    names = ("alice", "bob", "carol", "dave")
    target = f"127.0.0.1:{web.grpc_port}"
    clients = [BotClient(target, BOTS[n], make_strategy("random"), n, version="v1", max_matches=2,
                         backoff_s=(0.05, 0.5)) for n in names]
    tasks = [asyncio.get_running_loop().create_task(c.run()) for c in clients]
    try:
        await asyncio.gather(*(asyncio.wait_for(c.connected.wait(), 30) for c in clients))
        async with aiohttp.ClientSession() as http, grpc.aio.insecure_channel(target) as channel:
            stub = tournament_pb2_grpc.TournamentServiceStub(channel)
            created = (await stub.CreateTournament(tournament_pb2.CreateTournamentRequest(
                name=name, bots=list(names), rounds=rounds, deals_per_match=deals), metadata=auth(ADMIN))).tournament
            yield clients, tasks, http, stub, created
    finally:
        for c in clients:
            c.stop()
        await asyncio.gather(*tasks, return_exceptions=True)


async def _json(http: aiohttp.ClientSession, url: str) -> tuple[int, Any]:
    async with http.get(url) as response:
        return response.status, await response.json()


def test_a_records_refusals_carry_their_code_held_replays_included(tmp_path):
    """A finished table of a duplicate set whose other table still plays: its replay (and
    its live feed) is refused 409 with the code ``set_running`` beside the English text, as
    are a running match's (``running``, ``running_elsewhere``), one without a record
    (``no_record``) and one that never was (``no_match``). gRPC's text is the same as before."""

    async def scenario() -> dict[str, Any]:
        async with web_daemon(tmp_path) as web:
            arena = web.arena
            done = await house_match(arena, 1)
            await done.finished.wait()
            seats = [SeatRequest(house="random")] * 4
            playing = await arena.create_match(  # holds its set's hands while it runs (slowly: for the test's length)
                "standard", 4, admin_pb2.RulesetOptions(), game_pb2.MatchFormat(fixed_deals=2), None, seats,
                game_pb2.ClockSettings(), prepare=lambda runner: setattr(runner, "house_delay_s", 1.0))
            gone = await house_match(arena, 1)
            await gone.finished.wait()
            elsewhere = await house_match(arena, 1)
            await elsewhere.finished.wait()
            db = arena.store.db
            with db.transaction() as tx:
                tx.execute("UPDATE matches SET set_id = 'set-1' WHERE id IN (?, ?)", (done.id, playing.id))
                tx.execute("UPDATE matches SET record = NULL WHERE id = ?", (gone.id,))
                tx.execute("UPDATE matches SET status = 'running' WHERE id = ?", (elsewhere.id,))
            said: dict[str, Any] = {}
            async with aiohttp.ClientSession() as http:
                for name, match_id in (("held", done.id), ("running", playing.id), ("gone", gone.id),
                                       ("elsewhere", elsewhere.id), ("never", "m-never")):
                    said[name] = await _json(http, f"{web.url}/api/replay/{match_id}")
                async with http.ws_connect(f"{web.url}/ws/watch/{done.id}", headers={"Origin": web.url}) as ws:
                    said["feed"] = json.loads((await ws.receive(timeout=10)).data)
            arena.cancel(playing.id, "")
            return said

    said = run(scenario())
    held_status, held = said["held"]
    assert held_status == 409 and held["code"] == "set_running", held  # before: {"error": ...} alone
    assert held["error"].startswith("another table of this match's duplicate set is still being played"), held
    assert said["feed"]["code"] == "set_running" and said["feed"]["status"] == 409, said["feed"]
    assert said["running"] == (409, {"error": "the match is still running; its record is available when it is over",
                                     "code": "running"}), said["running"]
    assert said["elsewhere"][0] == 409 and said["elsewhere"][1]["code"] == "running_elsewhere", said["elsewhere"]
    assert said["gone"][0] == 409 and said["gone"][1]["code"] == "no_record", said["gone"]
    assert said["gone"][1]["error"].startswith("match ") and "has no record" in said["gone"][1]["error"]
    assert said["never"] == (404, {"error": "no match m-never", "code": "no_match"}), said["never"]


def test_a_waiting_tables_reason_carries_its_code_from_the_director(tmp_path, monkeypatch):
    """A roster bot leaves mid-tournament: its next table waits, and /api/tournaments says
    why as gRPC does (the English text), with ``waiting_key``, the reason's code and the bot
    it names, as the arena made it (ArenaError.code), for pages to say in their language.
    Once the director has waited its SEAT_WAIT_S for the seats, the text says so ("waited
    0.3 s for the seats: ...") and the key carries that wait (``waited_s``): before, the key
    was the same as without it, and a page that said it in Indonesian lost the wait."""
    monkeypatch.setattr(tours, "SEAT_WAIT_S", 0.3)

    async def scenario() -> tuple[Any, Any]:
        async with web_daemon(tmp_path) as web, _four_in_a_tournament(web, "leaves", 200, 1) as (
                clients, tasks, http, stub, created):
            deadline = time.monotonic() + 60
            while (await stub.GetTournament(tournament_pb2.GetTournamentRequest(id=created.id))
                   ).tournament.matches_finished < 1:
                assert time.monotonic() < deadline, "no match of the tournament finished"
                await asyncio.sleep(0.1)
            clients[-1].stop()  # dave leaves
            await asyncio.gather(tasks[-1], return_exceptions=True)
            while True:
                assert time.monotonic() < deadline, "no table said why it waits"
                _, body = await _json(http, f"{web.url}/api/tournaments")
                tables = [x for t in body["tournaments"] for x in t["tables"] if x["waiting"].startswith("waited")]
                if tables:
                    break
                await asyncio.sleep(0.2)
            wire = (await stub.GetTournament(tournament_pb2.GetTournamentRequest(id=created.id))).tournament
            await stub.CancelTournament(tournament_pb2.CancelTournamentRequest(id=created.id), metadata=auth(ADMIN))
            return tables, wire

    tables, wire = run(scenario())
    assert tables[0]["waiting"] == "waited 0.3 s for the seats: bot 'dave' is not connected", tables
    assert tables[0]["waiting_key"] == {"key": "not_connected", "bot": "dave", "waited_s": "0.3"}, tables
    waits = [x.waiting for x in wire.tables if x.waiting]
    assert waits and all(w.endswith("bot 'dave' is not connected") for w in waits), waits  # gRPC: the text, as before


def test_a_match_a_tournaments_cancel_ended_says_so_by_key(tmp_path):
    """A tournament cancelled (with no reason of the organiser's) while its matches play: their
    replays end "tournament cancelled", a reason of the daemon's fixed set, now with its key
    (reason_key) as the others have, for pages to say in their language; before, none."""

    async def scenario() -> Any:
        async with web_daemon(tmp_path) as web, _four_in_a_tournament(web, "stopped", 1, 500) as (
                _, _, http, stub, created):
            deadline = time.monotonic() + 60
            while not web.arena.runners:
                assert time.monotonic() < deadline, "the tournament's match did not start"
                await asyncio.sleep(0.05)
            runner = next(iter(web.arena.runners.values()))
            await stub.CancelTournament(tournament_pb2.CancelTournamentRequest(id=created.id), metadata=auth(ADMIN))
            await asyncio.wait_for(runner.finished.wait(), 30)
            _, body = await _json(http, f"{web.url}/api/replay/{runner.id}")
            return body["result"]

    result = run(scenario())
    assert result["status"] == "cancelled" and result["reason"] == "tournament cancelled", result
    assert result["reason_key"] == {"key": "tournament_cancelled"}, result  # before: None


def test_a_seat_refused_under_a_name_this_front_does_not_take_seats_under_carries_its_code(tmp_path):
    """A person who opened the lobby under a name the front takes no seats under (a web
    front on loopback, reached by another name: DNS rebinding's defence) was told why in
    English on every page; the refusal now carries host_not_allowed."""

    async def scenario() -> tuple[int, Any]:
        async with web_daemon(tmp_path) as web, aiohttp.ClientSession() as http:
            host = f"arena.example:{web.front.port}"
            async with http.post(f"{web.url}/api/play", json={"ruleset": "standard", "players": 4},
                                 headers={"Host": host, "Origin": f"http://{host}"}) as response:
                return response.status, await response.json()

    status, body = run(scenario())
    assert status == 403 and body["code"] == "host_not_allowed", body
    assert body["error"].startswith("this web front takes seats under loopback names only"), body


def test_a_refusal_a_handler_passes_on_keeps_its_code(tmp_path):
    """The web runs the TournamentService handlers themselves (web/spectate.py): a refusal
    they pass on as a gRPC status keeps the arena's code. Here the standings worker has
    stopped (the daemon is going away), and the tournament list says so by name."""

    async def scenario() -> tuple[int, Any]:
        async with web_daemon(tmp_path) as web:
            store = web.arena.tournaments.store  # type: ignore[attr-defined]
            store.changes += 1
            with store.db.transaction() as tx:
                tx.execute("INSERT INTO tournaments (id, name, created_ms, finished_ms, status, reason, ruleset, "
                           "players, rounds, deals, seed, clock, roster, instance, standings, shuffle_key) VALUES "
                           "('t-1', 'n', 1, NULL, 'running', '', 'standard', 4, 1, 1, '1', ?, '[]', 'heartsd', "
                           "NULL, NULL)", ("{}",))
            web.arena.tournaments.standings.close()  # type: ignore[attr-defined]
            async with aiohttp.ClientSession() as http:
                return await _json(http, f"{web.url}/api/tournaments")

    status, body = run(scenario())
    assert status == 503 and body == {"error": "the server is shutting down", "code": "shutting_down"}, body


def test_a_wait_for_seats_cut_short_by_shutdown_keeps_why_the_seats_were_not_free_by_key(tmp_path):
    """A match (a tournament's table) waiting for a bot that is not connected when the daemon
    begins to shut down is refused "the server is shutting down (the seats were not free: bot
    'alice' is not connected)". Its code was shutting_down alone, so a page that said it in
    its language dropped the bracket: now the reason in brackets is a figure of its own
    (``not_free``, its code, with the bot it names), as ``waited_s`` is for the deadline."""

    async def scenario() -> ArenaError:
        async with running_daemon(tmp_path) as daemon:
            seats = [SeatRequest(bot="alice"), *[SeatRequest(house="random")] * 3]
            waiting = asyncio.ensure_future(daemon.arena.create_match(
                "standard", 4, admin_pb2.RulesetOptions(), game_pb2.MatchFormat(fixed_deals=1), None, seats,
                game_pb2.ClockSettings(), wait_s=30.0))
            await asyncio.sleep(0.3)
            assert not waiting.done()
            await daemon.arena.shutdown(grace_s=0)
            with pytest.raises(ArenaError) as refused:
                await asyncio.wait_for(waiting, 10)
            return refused.value

    refused = run(scenario())
    assert refused.kind == "unavailable" and refused.code == "shutting_down", refused
    assert refused.public == "the server is shutting down (the seats were not free: bot 'alice' is not connected)"
    assert present.reason_key(refused.code, refused.params) == {
        "key": "shutting_down", "not_free": "not_connected", "bot": "alice"}  # before: {"key": "shutting_down"}


def _keys(language: str) -> set[str]:
    """The keys of one language's table in i18n.js."""
    text = I18N.read_text(encoding="utf-8")
    start = text.index(f"\n  {language}: {{")
    end = text.index("\n  },", start)
    return set(re.findall(r"\b(\w+): \"", text[start:end]))


def test_every_code_the_server_gives_a_reason_is_said_in_each_language():
    """A contract over the sources: every code given to a refusal or a waiting reason
    (``code="..."`` where the reason is made, the web's own ``*_CODE``, a body written
    whole, a refused answer's) has its words in Indonesian and Vietnamese (``refusal_<code>``,
    ``wait_<code>``, ``rejected_<code>``), so that no page falls back to English for a reason
    the server names."""
    codes: set[str] = set()
    for path in SERVER.rglob("*.py"):
        source = path.read_text(encoding="utf-8")
        codes.update(re.findall(r"\bcode=\"(\w+)\"", source))
        codes.update(re.findall(r"\"code\": \"(\w+)\"", source))  # a body written whole (connections.py)
        codes.update(re.findall(r"^\w+_CODE = \"(\w+)\"", source, re.MULTILINE))
    assert {"set_running", "not_connected", "no_record", "damaged", "no_seat", "too_many",
            "too_many_connections"} <= codes, codes  # found
    for language in ("id", "vi"):
        keys = _keys(language)
        missing = sorted(c for c in codes if not {f"refusal_{c}", f"wait_{c}", f"rejected_{c}"} & keys)
        assert not missing, (language, missing)
    assert {k for k in _keys("id") if k.startswith(("refusal_", "wait_", "rejected_"))} == {
        k for k in _keys("vi") if k.startswith(("refusal_", "wait_", "rejected_"))}


def test_every_fixed_reason_a_match_ends_with_is_said_in_each_language():
    """Every key of a match's end reason (present.END_REASONS and its templates) has its words
    in Indonesian and Vietnamese (``end_<key>``): before, a tournament's cancel ("tournament
    cancelled") and another instance's matches found interrupted were English there."""
    keys = set(present.END_REASONS.values()) | {key for key, _ in present._END_TEMPLATES}
    assert {"tournament_cancelled", "interrupted_elsewhere"} <= keys, keys
    for language in ("id", "vi"):
        missing = sorted(k for k in keys if f"end_{k}" not in _keys(language))
        assert not missing, (language, missing)
    assert present.end_reason(tours.CANCELLED) == {"key": "tournament_cancelled"}
    assert present.end_reason(INTERRUPTED_ELSEWHERE.format(instance="east-1")) == {
        "key": "interrupted_elsewhere", "instance": "east-1"}
