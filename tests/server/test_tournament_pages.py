"""ListTournaments a page at a time: keyset pages over the shared list, bounded and checked.

Before, the list answered every tournament in one message: 9,000 tournaments of 16 bots
made 7.5 MB, and from about 5,000 (a daily cup for 14 years, an hourly one for 7 months)
it was more than a client takes in one message (gRPC's 4 MiB default): every caller got
RESOURCE_EXHAUSTED.
"""

from __future__ import annotations

import asyncio
import json

import grpc
import pytest

from heartsbot.proto import spectator_pb2, spectator_pb2_grpc, tournament_pb2, tournament_pb2_grpc
from heartsd.tournaments import TournamentStore

from .harness import run, running_daemon

ROSTER = json.dumps([{"bot": f"bot-{i:02d}-of-a-long-enough-name", "owner": f"owner-{i:02d}", "version": "1.0.0"}
                     for i in range(16)])


def _tournaments(store: TournamentStore, created: list[tuple[str, int]]) -> None:
    """Finished tournaments of 16 bots, written as the store writes them (ids, created_ms)."""
    store.changes += 1  # as the store's own writes count (TournamentStore.changes)
    with store.db.transaction() as tx:
        for tournament_id, created_ms in created:
            tx.execute("INSERT INTO tournaments (id, name, created_ms, finished_ms, status, reason, ruleset, players, "
                       "rounds, deals, seed, clock, roster, instance, standings, shuffle_key) VALUES "
                       "(?, 'cup', ?, ?, 'finished', 'completed', 'standard', 4, 15, 16, '1', ?, ?, 'heartsd', "
                       "NULL, NULL)", (tournament_id, created_ms, created_ms + 1, "{}", ROSTER))


def test_a_store_of_thousands_of_tournaments_is_listed_in_pages_a_client_can_take(tmp_path):
    async def scenario():  # type: ignore[no-untyped-def]
        async with running_daemon(tmp_path) as daemon:
            _tournaments(daemon.arena.tournaments.store, [(f"t-{i:05d}", 1_000 + i) for i in range(9_000)])
            async with daemon.channel() as channel:
                stub = tournament_pb2_grpc.TournamentServiceStub(channel)
                first = await stub.ListTournaments(tournament_pb2.ListTournamentsRequest())
                largest = await stub.ListTournaments(tournament_pb2.ListTournamentsRequest(limit=1000))
                return first, largest

    first, largest = run(scenario())  # before: RESOURCE_EXHAUSTED (7,515,000 bytes in one message)
    assert [t.id for t in first.tournaments] == [f"t-{i:05d}" for i in range(8_999, 8_899, -1)]  # 100, newest first
    assert first.next_page_token and largest.next_page_token
    assert len(largest.tournaments) == 1000 and largest.ByteSize() < 4 * 1024 * 1024
    assert len(first.tournaments[0].roster) == 16 and not first.tournaments[0].tables


def test_pages_follow_the_order_of_creation_and_new_tournaments_never_shift_them(tmp_path):
    # Pairs created in the same millisecond: the order within one is by id, as the store's.
    created = [(f"t-{i:03d}", 1_000 + i // 2) for i in range(250)]
    newest_first = [t for t, _ in sorted(created, key=lambda c: (-c[1], c[0]))]

    async def scenario():  # type: ignore[no-untyped-def]
        async with running_daemon(tmp_path) as daemon:
            store = daemon.arena.tournaments.store
            _tournaments(store, created)
            async with daemon.channel() as channel:
                stub = tournament_pb2_grpc.TournamentServiceStub(channel)
                seen, tokens, token = [], [], ""
                while True:
                    page = await stub.ListTournaments(tournament_pb2.ListTournamentsRequest(limit=7, page_token=token))
                    seen.append([t.id for t in page.tournaments])
                    token = page.next_page_token
                    if not token:
                        break
                    tokens.append(token)
                    if len(seen) == 3:  # created meanwhile: on a new first page, not on the next ones
                        _tournaments(store, [("t-new", 5_000)])
                first = await stub.ListTournaments(tournament_pb2.ListTournamentsRequest(limit=2))
                exact = await stub.ListTournaments(tournament_pb2.ListTournamentsRequest(limit=251))
                return seen, [t.id for t in first.tournaments], exact

    seen, first, exact = run(scenario())
    flat = [t for page in seen for t in page]
    assert flat == newest_first  # each once, in order, across the pages
    assert [len(p) for p in seen] == [7] * 35 + [5]
    assert first == ["t-new", newest_first[0]]
    assert len(exact.tournaments) == 251 and exact.next_page_token == ""  # a last page says so


@pytest.mark.parametrize("request_fields, why", [
    (dict(limit=1001), "limit (the page size) must be between 0 and 1000"),
    (dict(limit=-1), "limit (the page size) must be between 0 and 1000"),
    (dict(page_token="not a token"), "page_token is not a token from a previous ListTournaments response"),
    (dict(page_token="W10"), "page_token is not a token from a previous ListTournaments response"),  # []
    (dict(page_token="x" * 600), "page_token is not a token from a previous ListTournaments response"),
])
def test_a_bad_limit_or_token_is_refused_with_why(tmp_path, request_fields, why):
    async def scenario():  # type: ignore[no-untyped-def]
        async with running_daemon(tmp_path) as daemon:
            async with daemon.channel() as channel:
                stub = tournament_pb2_grpc.TournamentServiceStub(channel)
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await stub.ListTournaments(tournament_pb2.ListTournamentsRequest(**request_fields))
                return refused.value

    refused = run(scenario())
    assert refused.code() == grpc.StatusCode.INVALID_ARGUMENT and why in (refused.details() or "")


def test_a_token_of_one_listing_is_refused_by_the_other(tmp_path):
    async def scenario():  # type: ignore[no-untyped-def]
        async with running_daemon(tmp_path) as daemon:
            _tournaments(daemon.arena.tournaments.store, [(f"t-{i}", 1_000 + i) for i in range(3)])
            match_id = await daemon.create_match(["house:random"] * 4)
            await daemon.create_match(["house:random"] * 4)
            async with daemon.channel() as channel:
                tournaments = tournament_pb2_grpc.TournamentServiceStub(channel)
                matches = spectator_pb2_grpc.SpectatorServiceStub(channel)
                t_token = (await tournaments.ListTournaments(tournament_pb2.ListTournamentsRequest(limit=1))).next_page_token
                m_token = (await matches.ListMatches(spectator_pb2.ListMatchesRequest(limit=1))).next_page_token
                refusals = []
                for call in (lambda: tournaments.ListTournaments(tournament_pb2.ListTournamentsRequest(page_token=m_token)),
                             lambda: matches.ListMatches(spectator_pb2.ListMatchesRequest(page_token=t_token))):
                    try:
                        await call()
                        refusals.append(None)
                    except grpc.aio.AioRpcError as exc:
                        refusals.append((exc.code(), exc.details()))
                return match_id, t_token, m_token, refusals

    match_id, t_token, m_token, refusals = run(scenario())
    assert match_id and t_token and m_token
    assert refusals == [
        (grpc.StatusCode.INVALID_ARGUMENT, "page_token is not a token from a previous ListTournaments response"),
        (grpc.StatusCode.INVALID_ARGUMENT, "page_token is not a token from a previous ListMatches response"),
    ]


def test_heartsd_tournament_list_pages_and_follows_every_page_with_all(tmp_path, capsys):
    from heartsd import cli

    async def scenario():  # type: ignore[no-untyped-def]
        async with running_daemon(tmp_path) as daemon:
            _tournaments(daemon.arena.tournaments.store, [(f"t-{i:02d}", 1_000 + i) for i in range(30)])
            base = ["--server", daemon.target]

            def tour(*argv: str) -> tuple[int, str, str]:
                got = cli.main(["tournament", "list", *base, *argv])
                o, e = capsys.readouterr()
                return got, o, e

            page = await asyncio.to_thread(tour, "--limit", "10")
            token = page[1].rsplit("--page-token ", 1)[1].split()[0]
            second = await asyncio.to_thread(tour, "--limit", "10", "--page-token", token)
            every = await asyncio.to_thread(tour, "--limit", "7", "--all")
            bad = await asyncio.to_thread(tour, "--limit", "0")
            as_json = await asyncio.to_thread(tour, "--limit", "7", "--all", "--json")
            return page, second, every, bad, as_json

    page, second, every, bad, as_json = run(scenario())
    # An organiser's pass: `list` had no --json, where `show` had.
    listed = json.loads(as_json[1])
    assert as_json[0] == 0 and [t["id"] for t in listed["tournaments"]] == [f"t-{i:02d}" for i in range(29, -1, -1)]
    assert listed["next_page_token"] == "" and {"status", "clock", "roster"} <= set(listed["tournaments"][0])
    assert page[0] == 0 and "10 tournament(s); next page: --page-token " in page[1]
    assert "t-29" in page[1] and "t-20" in page[1] and "t-19" not in page[1]
    assert second[0] == 0 and "t-19" in second[1] and "t-10" in second[1] and "t-09" not in second[1]
    assert every[0] == 0 and "30 tournament(s)" in every[1] and "next page" not in every[1]
    assert all(f"t-{i:02d}" in every[1] for i in range(30))
    assert bad[0] == 2 and "--limit must be between 1 and 1000" in bad[2]
