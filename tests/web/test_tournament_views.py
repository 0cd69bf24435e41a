"""The public tournament views under many callers: the gRPC list and the web's page data."""

from __future__ import annotations

import asyncio
import contextlib
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


def _tables(store: TournamentStore, tournament_id: str, rounds: int, tables: int) -> None:
    """Give tournament ``tournament_id`` ``rounds`` finished rounds of ``tables`` tables."""
    store.changes += 1
    with store.db.transaction() as tx:
        for r in range(rounds):
            for t in range(tables):
                tx.execute("INSERT INTO tournament_tables (tournament_id, round, table_no, seats, status, match_id, "
                           "attempts) VALUES (?, ?, ?, ?, 'finished', ?, 1)",
                           (tournament_id, r, t, json.dumps([f"bot-{4 * t + k}" for k in range(4)]),
                            f"m-{r:05d}{t:03d}00000000"))


def test_a_tournament_is_read_and_built_once_per_change_however_many_ask(tmp_path, monkeypatch):
    """An attack pass (2026-12-07): every GetTournament read the tournament with all its tables
    from the store and built its whole answer, table by table, on the event loop: ~58 ms for a
    tournament of 64 bots and 1,000 rounds (16,000 tables, what an organiser may create),
    ~6 ms for 1,000 rounds of two tables, for one call of the spectator rate, so one address
    asking 20 times a second held the loop the whole second. Now a tournament is read and
    built once per change of the tournaments (another daemon's within LIST_FRESH_S) for every
    caller, and a change shows at once."""
    from heartsd import tournament_service

    built = {"tables": 0}
    real = tournament_service.tournament_to_wire

    def counted(t, *args, **kwargs):  # type: ignore[no-untyped-def]
        if not kwargs.get("summary"):
            built["tables"] += 1
        return real(t, *args, **kwargs)

    monkeypatch.setattr(tournament_service, "tournament_to_wire", counted)

    async def scenario():  # type: ignore[no-untyped-def]
        async with web_daemon(tmp_path) as web:
            store = web.arena.tournaments.store  # type: ignore[attr-defined]
            _finished_tournament(store, "t-1")
            _tables(store, "t-1", 3, 2)
            async with grpc.aio.insecure_channel(f"127.0.0.1:{web.grpc_port}") as channel:
                stub = tournament_pb2_grpc.TournamentServiceStub(channel)
                ask = tournament_pb2.GetTournamentRequest(id="t-1")
                many = await asyncio.gather(*(stub.GetTournament(ask) for _ in range(10)))
                many += [await stub.GetTournament(ask) for _ in range(5)]
                once = built["tables"]
                with store.db.transaction() as tx:  # a change made here: shown at once
                    tx.execute("UPDATE tournaments SET reason = 'recounted' WHERE id = 't-1'")
                store.changes += 1
                after = (await stub.GetTournament(ask)).tournament
            return many, once, after

    many, once, after = run(scenario())
    assert all(len(m.tournament.tables) == 6 and m.tournament.reason == "completed" for m in many)
    assert once == 1, once  # before: 15, one per call
    assert after.reason == "recounted" and len(after.tables) == 6


def test_a_large_tournament_spends_the_spectator_rate_by_its_size(tmp_path):
    """A tournament's answer grows with its tables (~900 KB for 64 bots and 1,000 rounds),
    and each one is copied and sent: it spends the caller's spectator rate by its size, as a
    match record does (rates.RECORD_BYTES_PER_TOKEN), not one call whatever it holds."""

    async def scenario():  # type: ignore[no-untyped-def]
        async with web_daemon(tmp_path, spectator_calls_per_s=0.1, spectator_burst=60) as web:
            store = web.arena.tournaments.store  # type: ignore[attr-defined]
            _finished_tournament(store, "t-1")
            _tables(store, "t-1", 1000, 4)
            answered, size = 0, 0
            async with grpc.aio.insecure_channel(f"127.0.0.1:{web.grpc_port}") as channel:
                stub = tournament_pb2_grpc.TournamentServiceStub(channel)
                with contextlib.suppress(grpc.aio.AioRpcError):
                    for _ in range(60):
                        size = (await stub.GetTournament(tournament_pb2.GetTournamentRequest(id="t-1"))).ByteSize()
                        answered += 1
            return answered, size

    answered, size = run(scenario())
    cost = 1 + size / (64 * 1024)
    assert size > 3 * 64 * 1024, size
    assert answered <= 60 / cost + 1, (answered, size)  # before: 60, one call each


def test_a_long_tournament_list_spends_the_spectator_rate_by_its_size(tmp_path):
    """A page of ListTournaments holds up to 1,000 summaries, each with its roster: ~260 KB
    for 300 tournaments of 16 bots, 3.4 MB for 1,000 of 64 bots (~30 ms a call to copy, send
    and read), for one call of the spectator rate (an attack pass, 2026-12-07). It spends the
    rate by its size now, as a match record does (rates.RECORD_BYTES_PER_TOKEN)."""

    async def scenario():  # type: ignore[no-untyped-def]
        async with web_daemon(tmp_path, spectator_calls_per_s=0.1, spectator_burst=60) as web:
            store = web.arena.tournaments.store  # type: ignore[attr-defined]
            roster = json.dumps([{"bot": f"bot-number-{i}", "owner": f"owner-number-{i}", "version": "src-0123456789ab"}
                                 for i in range(16)])
            store.changes += 1
            with store.db.transaction() as tx:
                for k in range(300):
                    tx.execute("INSERT INTO tournaments (id, name, created_ms, finished_ms, status, reason, ruleset, "
                               "players, rounds, deals, seed, clock, roster, instance, standings, shuffle_key) VALUES "
                               "(?, 'weekly cup', ?, 2, 'finished', 'completed', 'standard', 4, 7, 16, '1', ?, ?, "
                               "'heartsd', ?, NULL)", (f"t-{k:06d}", k, "{}", roster, STANDINGS))
            async with aiohttp.ClientSession() as http, http.get(f"{web.url}/api/tournaments") as page:
                shown = len((await page.json())["tournaments"])  # the web's newest five: a call's worth
            answered, size = 0, 0
            async with grpc.aio.insecure_channel(f"127.0.0.1:{web.grpc_port}") as channel:
                stub = tournament_pb2_grpc.TournamentServiceStub(channel)
                with contextlib.suppress(grpc.aio.AioRpcError):
                    for _ in range(60):
                        size = (await stub.ListTournaments(tournament_pb2.ListTournamentsRequest(limit=1000))).ByteSize()
                        answered += 1
            return answered, size, shown

    answered, size, shown = run(scenario())
    assert size > 3 * 64 * 1024, size
    assert answered <= 60 / (1 + size / (64 * 1024)) + 1, (answered, size)  # before: 60, one call each
    assert shown == 5


def test_a_tournament_built_while_a_write_is_under_way_is_built_again_after_it(tmp_path):
    """The public tournament views are kept per count of the store's writes (TournamentStore.changes).
    The count moved before the write was made, so a view built in between (another caller's
    GetTournament, a page) was kept as current with what the write had not yet changed: a
    PauseTournament could answer with the tournament still running. It moves once the write
    is made (or failed) now."""

    async def scenario():  # type: ignore[no-untyped-def]
        async with web_daemon(tmp_path) as web:
            directors = web.arena.tournaments  # type: ignore[attr-defined]
            store = directors.store
            _finished_tournament(store, "t-1", status="paused")
            service = web.front.spectating.tournaments  # type: ignore[attr-defined]
            assert (await service.tournament("t-1")).status == tournament_pb2.TOURNAMENT_STATUS_PAUSED
            real = store.db.transaction
            built_during: list[int] = []

            @contextlib.contextmanager
            def transaction():  # type: ignore[no-untyped-def]
                # another caller's view, built as the write is being made
                built_during.append(asyncio.run_coroutine_threadsafe(
                    service.tournament("t-1"), loop).result(10).status)
                with real() as tx:
                    yield tx

            loop = asyncio.get_running_loop()
            store.db.transaction = transaction
            moved = await asyncio.to_thread(store.set_status, "t-1", "running", "", None, ("paused",))
            store.db.transaction = real
            return moved, built_during, (await service.tournament("t-1")).status

    moved, during, after = run(scenario())
    assert moved and during == [tournament_pb2.TOURNAMENT_STATUS_PAUSED]
    assert after == tournament_pb2.TOURNAMENT_STATUS_RUNNING, after  # before: paused, kept as current


def test_a_tournaments_page_data_names_the_tables_one_owners_bots_share():
    """`tournament create` and `show` say where bots of one owner sit together (the roster
    leaving no other way: they share what they know); the leaderboard page said nothing of
    it. Its data now lists those tables, by owner then round, and no others."""
    from heartsd.web import present

    t = tournament_pb2.Tournament(id="t-1", players=4, roster=[
        tournament_pb2.RosterEntry(bot=b, owner=o) for b, o in
        (("ann-1", "ann"), ("ann-2", "ann"), ("ann-3", "ann"), ("bob", "bob"), ("cy", "cy"))])
    t.tables.add(round=0, table=0, bots=["bob", "ann-2", "cy", "ann-3"])
    t.tables.add(round=1, table=0, bots=["ann-1", "bob", "ann-3", "cy"])
    shown = present.tournament(t)
    assert shown["shared"] == [{"owner": "ann", "round": 0, "bots": ["ann-2", "ann-3"]},
                               {"owner": "ann", "round": 1, "bots": ["ann-1", "ann-3"]}], shown["shared"]
    apart = tournament_pb2.Tournament(id="t-2", players=4, roster=t.roster)
    apart.tables.add(round=0, table=0, bots=["bob", "ann-2", "cy", "ann-x"])
    assert present.tournament(apart)["shared"] == []
