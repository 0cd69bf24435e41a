"""The public tournament views under many callers: the gRPC list and the web's page data."""

from __future__ import annotations

import asyncio
import json

import aiohttp
import grpc

from heartsbot.proto import tournament_pb2, tournament_pb2_grpc
from heartsd.tournaments import TournamentStore

from tests.server.harness import run

from .harness import web_daemon

STANDINGS = json.dumps({"test": "none", "shuffles": 1, "bots": [], "head_to_head": []})


def _finished_tournament(store: TournamentStore, tournament_id: str, status: str = "finished") -> None:
    store.changes += 1  # as the store's own writes count (TournamentStore.changes)
    with store.db.transaction() as tx:
        tx.execute("INSERT INTO tournaments (id, name, created_ms, finished_ms, status, reason, ruleset, players, "
                   "rounds, deals, seed, clock, roster, instance, standings, shuffle_key) VALUES "
                   "(?, 'n', 1, 2, ?, 'completed', 'standard', 4, 1, 1, '1', ?, '[]', 'heartsd', ?, NULL)",
                   (tournament_id, status, "{}", STANDINGS))


def test_the_tournament_list_is_built_once_per_change_however_many_ask(tmp_path):
    """An audit: every ListTournaments, and every web /api/tournaments (the list and five
    tournaments), read every tournament with its tables and built each summary: ~50 ms a
    call with 300 tournaments, and one address calling 20 times a second left the bots no
    decision at all. Now each is built once per change of the tournaments (or every
    LIST_FRESH_S, for another daemon's) and shared by every caller, and a change shows at
    once."""

    async def scenario():  # type: ignore[no-untyped-def]
        async with web_daemon(tmp_path) as web:
            directors = web.arena.tournaments  # type: ignore[attr-defined]
            store = directors.store
            _finished_tournament(store, "t-1")
            reads = {"list": 0}
            real = store.list

            def counted():  # type: ignore[no-untyped-def]
                reads["list"] += 1
                return real()

            store.list = counted
            async with grpc.aio.insecure_channel(f"127.0.0.1:{web.grpc_port}") as channel, \
                    aiohttp.ClientSession() as http:
                stub = tournament_pb2_grpc.TournamentServiceStub(channel)

                async def page() -> list[str]:
                    async with http.get(f"{web.url}/api/tournaments") as response:
                        return [t["id"] for t in (await response.json())["tournaments"]]

                many = await asyncio.gather(*(stub.ListTournaments(tournament_pb2.ListTournamentsRequest())
                                              for _ in range(10)), *(page() for _ in range(5)))
                once = reads["list"]
                _finished_tournament(store, "t-2")  # a change: shown at once
                after = (await stub.ListTournaments(tournament_pb2.ListTournamentsRequest())).tournaments
                shown = await page()
            return many, once, [t.id for t in after], shown, reads["list"]

    many, once, after, shown, reads = run(scenario())
    assert all([t.id for t in m.tournaments] == ["t-1"] for m in many[:10]) and all(p == ["t-1"] for p in many[10:])
    assert once == 1, once  # before: 15, one per caller (at most 16 at once from one address)
    assert sorted(after) == sorted(shown) == ["t-1", "t-2"]
    assert reads == 2
