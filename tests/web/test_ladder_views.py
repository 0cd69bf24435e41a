"""The ladder's public views under many callers at once: the leaderboard and a bot's page."""

from __future__ import annotations

import asyncio
import contextlib

import aiohttp
import grpc

from heartsbot.proto import ladder_pb2, ladder_pb2_grpc

from tests.server.harness import ladder_bots, run
from tests.server.test_daemon_process import Remote

from .harness import web_daemon


def test_the_ladders_public_views_are_rebuilt_once_per_new_result_however_many_ask(tmp_path):
    """Before: every GetLeaderboard, GetBotProfile and web bot page rebuilt the standings or
    the rating history from every stored result, each in a thread of its own: on a
    long-running ladder 32 clients at once waited 31 s in the median and stalled the loop
    (a second attack pass). Now each is built once per new result and shared by every
    caller meanwhile (heartsd.memo), and a new result still shows at once."""

    async def scenario():
        async with web_daemon(tmp_path) as web:
            daemon, ladder, names, bots = await _four_ladder_bots(web)
            first = await daemon.create_match(names, deals=2, rated=True)
            await bots[0].wait_ended(first)
            builds = {"standings": 0, "extend_history": 0}
            for name in builds:  # count the rebuilds: the real methods, each call counted
                def counted(*args, _real=getattr(ladder, name), _name=name):
                    builds[_name] += 1
                    return _real(*args)
                setattr(ladder, name, counted)
            async with daemon.channel() as channel, aiohttp.ClientSession() as http:
                stub = ladder_pb2_grpc.LadderServiceStub(channel)

                async def page() -> int:
                    async with http.get(f"{web.url}/api/bots/v1") as r:
                        return r.status

                answers = await asyncio.gather(
                    *(stub.GetLeaderboard(ladder_pb2.GetLeaderboardRequest()) for _ in range(8)),
                    *(stub.GetBotProfile(ladder_pb2.GetBotProfileRequest(bot="v2")) for _ in range(4)),
                    *(page() for _ in range(3)))  # 15: under the 16 spectator calls per address
                once = dict(builds)
                second = await daemon.create_match(names, deals=2, rated=True)
                await bots[0].wait_ended(second)
                # Past the standings' spacing (its own test: test_memo.py): under load their
                # first build took long enough that the second match ended inside it.
                web.arena.ladder_standings._next.clear()
                board = await stub.GetLeaderboard(ladder_pb2.GetLeaderboardRequest())
                built = dict(builds)
                async with http.get(f"{web.url}/api/bots/v1") as r:  # goes on from the history built before
                    shown = (await r.json())["history"]
            for b in bots:
                await b.close()
            return answers, once, built, board, shown, ladder.rating_history("standard")["v1"]

    answers, once, builds, board, shown, full = run(scenario())
    assert [(p["seq"], p["rating"], p["uncertainty"]) for p in shown] == [(s, mu, sigma) for s, _, mu, sigma in full]
    assert len(shown) == 2
    assert answers[-3:] == [200] * 3 and all(a.entries for a in answers[:8])
    assert once == {"standings": 1, "extend_history": 1}  # before: 15 (8 + 4, and 3 pages) and 3
    assert builds == {"standings": 2, "extend_history": 1}
    assert all(e.matches == 2 for e in board.entries)  # the new result shows at once


async def _four_ladder_bots(web):  # type: ignore[no-untyped-def]
    """(the daemon as a remote client sees it, its ladder, the names, their bots): four
    registered bots v1-v4 on ``web``'s daemon."""
    daemon = Remote(web.grpc_port)
    ladder = web.arena.store.ladder
    names = ["v1", "v2", "v3", "v4"]
    return daemon, ladder, names, await ladder_bots(daemon, ladder, names)


def _trace_history(ladder, replay_s: float = 0.0) -> list[object]:  # type: ignore[no-untyped-def]
    """Record each history build of ``ladder`` (the seq it goes on from; None: from
    scratch), a build from scratch taking ``replay_s`` more (in its worker thread)."""
    import time

    calls: list[object] = []
    real = ladder.extend_history

    def traced(ruleset, since=None):  # type: ignore[no-untyped-def]
        calls.append(since.seq if since is not None else None)
        if since is None and replay_s:
            time.sleep(replay_s)  # a replay of a long history
        return real(ruleset, since)

    ladder.extend_history = traced
    return calls


async def _bot_page_history(http, web, key: str) -> list[object]:  # type: ignore[no-untyped-def]
    """``key`` ("rating", "seq") of each point of v1's rating history, as its page shows it."""
    async with http.get(f"{web.url}/api/bots/v1") as r:
        return [p[key] for p in (await r.json())["history"]]


def test_a_bot_pages_history_goes_on_from_the_last_and_is_rebuilt_now_and_then(tmp_path, monkeypatch):
    """A bot page's rating history goes on from the last one built (a new result costs its
    own replay, not the whole ladder's); now and then (api.HISTORY_REPLAY_S, here at once) it is
    replayed from scratch, as before, so a result row edited by hand shows there too (the
    ladder treats such an edit as tampering: `heartsd ladder recompute` refuses to launder it)."""
    from heartsd.web import api

    async def scenario():
        async with web_daemon(tmp_path) as web:
            daemon, ladder, names, bots = await _four_ladder_bots(web)
            calls = _trace_history(ladder)
            async with aiohttp.ClientSession() as http:
                def page():  # type: ignore[no-untyped-def]
                    return _bot_page_history(http, web, "rating")

                for _ in range(2):
                    match = await daemon.create_match(names, deals=2, rated=True)
                    await bots[0].wait_ended(match)
                    shown = await page()
                with web.arena.store.db.transaction() as tx:  # an edit by hand: v1's first rank swapped
                    (rank,), = tx.query("SELECT rank FROM results WHERE bot = 'v1' AND seq = 1")
                    other = 4 if rank == 1 else 1  # whatever v1's rank was, another one
                    tx.execute("UPDATE results SET rank = ? WHERE bot <> 'v1' AND seq = 1 AND rank = ?", (rank, other))
                    tx.execute("UPDATE results SET rank = ? WHERE bot = 'v1' AND seq = 1", (other,))
                kept = await page()
                monkeypatch.setattr(api, "HISTORY_REPLAY_S", 0.0)
                web.arena.ladder_views.max_age_s = 0.0
                rebuilt = await page()
            for b in bots:
                await b.close()
            return calls, shown, kept, rebuilt

    calls, shown, kept, rebuilt = run(scenario())
    assert calls[:2] == [None, 1]  # the second result went on from the first history (seq 1)
    assert len(shown) == 2 and kept == shown  # within HISTORY_REPLAY_S, the history built stands
    assert calls[-1] is None and len(rebuilt) == 2 and rebuilt != shown  # then it is replayed from scratch


def test_a_page_asking_for_a_newer_result_while_a_history_is_built_goes_on_from_it(tmp_path):
    """Found by review: a bot page asking for a newer result while a history replay from
    scratch ran started a second replay from scratch beside it (~0.5 s each at 10,000
    results, holding the GIL in worker threads), and so on for every result meanwhile. Now
    one build of a ruleset runs at a time, and the next goes on from it."""
    async def scenario():
        async with web_daemon(tmp_path) as web:
            ladder = web.arena.store.ladder
            bots = await ladder_bots(Remote(web.grpc_port), ladder, ["v1", "v2", "v3", "v4"])

            def record(m: int) -> None:
                with web.arena.store.db.transaction() as tx:
                    ladder.record_result(tx, f"n{m}", "standard", ["v1", "v2", "v3", "v4"], [1, 2, 3, 4],
                                         [0, 5, 8, 13], 2)

            for m in range(3):
                record(m)
            calls = _trace_history(ladder, replay_s=1.0)
            async with aiohttp.ClientSession() as http:
                def page():  # type: ignore[no-untyped-def]
                    return _bot_page_history(http, web, "seq")

                first = asyncio.ensure_future(page())
                await asyncio.sleep(0.3)  # its replay from scratch is under way
                record(3)
                second = await page()
                first_seqs = await first
            for b in bots:
                await b.close()
            return calls, first_seqs, second

    calls, first, second = run(scenario())
    # One replay from scratch, then going on from it (the first may already have read the
    # new result: it reads the rows once its replay starts). Before: [None, None].
    assert len(calls) == 2 and calls[0] is None and calls[1] in (3, 4), calls
    assert first in ([1, 2, 3], [1, 2, 3, 4]) and second == [1, 2, 3, 4]


def test_the_leaderboard_is_converted_once_per_standings_however_many_ask(tmp_path, monkeypatch):
    """An audit: each GetLeaderboard built every entry on the event loop (2.6 ms for 500
    bots), and each web /api/leaderboard converted them all to JSON again (~10 ms): a few
    addresses took most of the loop. Now both are built once per standings, and a new
    result still shows."""
    from heartsd.web import present

    async def scenario():  # type: ignore[no-untyped-def]
        async with web_daemon(tmp_path) as web:
            daemon, ladder, names, bots = await _four_ladder_bots(web)
            first = await daemon.create_match(names, deals=2, rated=True)
            await bots[0].wait_ended(first)
            converted = {"entries": 0}
            real = present.standing

            def counted(entry):  # type: ignore[no-untyped-def]
                converted["entries"] += 1
                return real(entry)

            monkeypatch.setattr(present, "standing", counted)
            async with daemon.channel() as channel, aiohttp.ClientSession() as http:
                stub = ladder_pb2_grpc.LadderServiceStub(channel)

                async def page() -> list[int]:
                    async with http.get(f"{web.url}/api/leaderboard") as r:
                        return [e["matches"] for e in (await r.json())["entries"]]

                boards = await asyncio.gather(*(stub.GetLeaderboard(ladder_pb2.GetLeaderboardRequest())
                                                for _ in range(6)), *(page() for _ in range(6)))
                once = converted["entries"]
                second = await daemon.create_match(names, deals=2, rated=True)
                await bots[0].wait_ended(second)
                web.arena.ladder_standings._next.clear()  # past its spacing (its own test: test_memo.py)
                after = await page()
            for b in bots:
                await b.close()
            return boards, once, after

    boards, once, after = run(scenario())
    assert all([e.matches for e in b.entries] == [1] * 4 for b in boards[:6])
    assert all(p == [1] * 4 for p in boards[6:])
    assert once == 4, once  # before: 24, every entry for each of 6 pages
    assert after == [2] * 4


def test_a_bot_pages_rating_history_is_thinned_to_a_bounded_number_of_points(tmp_path, monkeypatch):
    """Before: a bot page's history had a point per rated match of the bot, for as long as
    the ladder runs: 1.9 MB at 20,000 matches, sent again on each of the page's refreshes
    (every 15 s while it is open) and for every call of the spectator rate, and drawn as
    that many circles. Now it has at most api.HISTORY_POINTS, spread evenly over the bot's
    matches, the first and the newest always, each numbered by its match (``n``), so the
    chart's axis still counts every match."""
    from heartsd.web import api

    monkeypatch.setattr(api, "HISTORY_POINTS", 4)

    async def scenario():
        async with web_daemon(tmp_path) as web:
            ladder = web.arena.store.ladder
            bots = await ladder_bots(Remote(web.grpc_port), ladder, ["v1", "v2", "v3", "v4"])
            for m in range(10):
                with web.arena.store.db.transaction() as tx:
                    ladder.record_result(tx, f"n{m}", "standard", ["v1", "v2", "v3", "v4"], [1 + m % 4, 2, 3, 4],
                                         [0, 5, 8, 13], 2)
            async with aiohttp.ClientSession() as http, http.get(f"{web.url}/api/bots/v1") as r:
                shown = (await r.json())["history"]
            for b in bots:
                await b.close()
            return shown, ladder.rating_history("standard")["v1"]

    shown, full = run(scenario())
    assert len(full) == 10
    assert [p["n"] for p in shown] == [1, 4, 7, 10], shown
    assert [(p["seq"], p["rating"]) for p in shown] == [(full[i][0], full[i][2]) for i in (0, 3, 6, 9)]


def test_a_large_leaderboard_spends_the_spectator_rate_by_its_size_over_grpc(tmp_path, monkeypatch):
    """GetLeaderboard's answer grows with the ladder's bots (~250 KB at 2,000) and cost one
    call of the spectator rate whatever its size, where a match record, a tournament and a
    tournament page spend it by their size (an attack pass's left-over). Now it does too,
    over gRPC (here with a small unit, rates.RECORD_BYTES_PER_TOKEN, so that eight bots
    make a large board); the web's leaderboard, made once for every caller, spends a call."""
    from heartsd import rates

    monkeypatch.setattr(rates, "RECORD_BYTES_PER_TOKEN", 64)

    async def scenario():
        async with web_daemon(tmp_path, spectator_calls_per_s=0.1, spectator_burst=60) as web:
            ladder = web.arena.store.ladder
            names = [f"bot-{i}" for i in range(8)]
            bots = await ladder_bots(Remote(web.grpc_port), ladder, names)
            for m in range(2):
                with web.arena.store.db.transaction() as tx:
                    ladder.record_result(tx, f"n{m}", "standard", names[4 * m:4 * m + 4], [1, 2, 3, 4], [0, 5, 8, 13], 2)
            async with aiohttp.ClientSession() as http, http.get(f"{web.url}/api/leaderboard") as page:
                web_status = page.status
            answered, size = 0, 0
            async with grpc.aio.insecure_channel(f"127.0.0.1:{web.grpc_port}") as channel:
                stub = ladder_pb2_grpc.LadderServiceStub(channel)
                with contextlib.suppress(grpc.aio.AioRpcError):
                    for _ in range(60):
                        size = (await stub.GetLeaderboard(ladder_pb2.GetLeaderboardRequest())).ByteSize()
                        answered += 1
            for b in bots:
                await b.close()
            return web_status, answered, size

    web_status, answered, size = run(scenario())
    assert web_status == 200
    assert size > 4 * 64, size
    assert answered <= 60 / (1 + size / 64) + 1, (answered, size)  # before: 59, one call each
