"""Ladder bots and tokens, rated results, and ratings that agree on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import grpc
import pytest

from heartsbot.proto import game_pb2
from heartsd.ladder import LadderError
from heartsd.store import Store

from .harness import Bot, ladder_bots, play_rated_match, random_legal, run, running_daemon

P = game_pb2
HEARTSD = [sys.executable, "-m", "heartsd.cli"]


def test_add_bot_prints_a_token_once_and_stores_only_its_hash(tmp_path):
    db = str(tmp_path / "l.db")
    out = subprocess.run([*HEARTSD, "ladder", "add-bot", "alpha", "--owner", "ann", "--db", db, "--create"],
                         capture_output=True, text=True)
    assert out.returncode == 0
    token = out.stdout.strip().splitlines()[-1]
    assert token.startswith("hb_") and len(token) > 30
    again = subprocess.run([*HEARTSD, "ladder", "add-bot", "alpha", "--owner", "bob", "--db", db],
                           capture_output=True, text=True)
    assert again.returncode == 3 and "exists already" in again.stderr  # refused, as in every client
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("l.db"))
    assert token.encode() not in raw, "the token itself must never be stored"
    store = Store(db)
    assert store.ladder.bot_for_token(token) == "alpha"
    store.close()


def _add_bot(db: str, name: str, owner: str, *more: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*HEARTSD, "ladder", "add-bot", name, "--owner", owner, "--db", db, *more],
                          capture_output=True, text=True)


def _registrations(db: str, first: tuple[str, str], refused: list[tuple[tuple[str, str], int, str]],
                   then: tuple[str, str]) -> dict[str, str]:
    """Register ``first`` (name, owner) on a new store, each of ``refused`` ((name, owner),
    exit code, a text its error names), then ``then``: the owners registered in the end."""
    out = _add_bot(db, *first, "--create")
    assert out.returncode == 0, out.stderr
    for bot, code, named in refused:
        out = _add_bot(db, *bot)
        assert out.returncode == code, (bot, out.stderr)
        assert named in out.stderr, out.stderr
    out = _add_bot(db, *then)
    assert out.returncode == 0, out.stderr
    store = Store(db)
    try:
        return store.ladder.owners()
    finally:
        store.close()


def test_an_owner_spelt_another_way_is_refused_not_taken_for_another_owner(tmp_path):
    """Before (an attack pass): owners were compared as exact strings and taken as typed,
    so "alice", "Alice" and "alice " were three owners, and one person's bots could share
    a table or a duplicate set. Now a second spelling of a registered owner is refused,
    naming the first, and so is an owner with spaces at either end."""
    refused = [(("a2", other), code, "alice")  # refused as taken (3), or malformed (2)
               for other, code in (("Alice", 3), ("ALICE", 3), ("ａｌｉｃｅ", 3), ("alice ", 2), (" alice", 2))]
    owners = _registrations(str(tmp_path / "o.db"), ("a1", "alice"), refused, ("a3", "alice"))
    assert owners == {"a1": "alice", "a3": "alice"}


def test_a_bot_name_that_passes_for_another_is_refused(tmp_path):
    """Before: "rb1" and "RB1" (or "ｒｂ１", or "rb1" with a Cyrillic letter) were two
    bots, each passing for the other on the leaderboard and in every list. Now a name that
    differs from a registered one only in case is refused as taken (exit 3), and a name
    that is not ASCII is malformed (exit 2)."""
    refused = [((other, "bob"), code, "'rb1' exists already" if code == 3 else "ASCII")
               for other, code in (("RB1", 3), ("Rb1", 3), ("ｒｂ１", 2), ("r\u0431" + "1", 2), ("\u0440b1", 2))]
    owners = _registrations(str(tmp_path / "n.db"), ("rb1", "alice"), refused, ("rb2", "bob"))
    assert owners == {"rb1": "alice", "rb2": "bob"}


def test_connect_revoke_and_rotate(tmp_path):
    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            ladder = daemon.arena.store.ladder
            token = ladder.add_bot("zed", "ann")
            ok = await Bot(daemon, "zed", token=token).start()
            connected = ok.welcome is not None
            await ok.close()
            ladder.revoke("zed")
            refused = await Bot(daemon, "zed", token=token).start()
            revoked_status = await refused.final_status()
            new = ladder.rotate("zed")
            old_again = await Bot(daemon, "zed", token=token).start()
            old_status = await old_again.final_status()
            fresh = await Bot(daemon, "zed", token=new).start()
            result = (connected, revoked_status, old_status, fresh.welcome is not None)
            await fresh.close()
            with pytest.raises(LadderError):
                ladder.revoke("nobody")
            return result

    connected, revoked_status, old_status, fresh_ok = run(scenario())
    assert connected and fresh_ok
    assert revoked_status == grpc.StatusCode.UNAUTHENTICATED
    assert old_status == grpc.StatusCode.UNAUTHENTICATED


def test_rated_matches_record_results_with_the_match_and_need_fixed_deals_and_ladder_bots(tmp_path):
    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            ladder = daemon.arena.store.ladder
            names = ["r1", "r2", "r3", "r4"]
            bots = await ladder_bots(daemon, ladder, names)
            errors = []
            for kw in (dict(deals=0), dict(deals=4, duplicate=True), dict(deals=4, seats=["r1", "r2", "r3", "house:random"])):
                seats = kw.pop("seats", names)
                try:
                    await daemon.create_match(seats, rated=True, **kw)
                except grpc.aio.AioRpcError as exc:
                    errors.append((exc.code(), exc.details()))
            rated = await daemon.create_match(names, deals=4, rated=True)
            unrated = await daemon.create_match(names, deals=4, seed=4)
            for match_id in (rated, unrated):
                await bots[0].wait_ended(match_id)
            for b in bots:
                await b.close()
            return errors, ladder.standings("standard"), daemon.stored(rated)

    errors, standings, stored = run(scenario())
    assert {code for code, _ in errors} == {grpc.StatusCode.INVALID_ARGUMENT}
    assert "fixed deals" in errors[0][1] and "in-match duplicate" in errors[1][1]
    assert "registered ladder bots" in errors[2][1]
    assert sorted(s.bot for s in standings) == ["r1", "r2", "r3", "r4"]
    assert all(s.matches == 1 for s in standings)  # the unrated match did not count
    assert {s.bot: round(s.points_per_deal * 4) for s in standings} == dict(zip(["r1", "r2", "r3", "r4"], stored.totals))


def test_ratings_are_identical_on_sqlite_and_postgresql(tmp_path, postgres_server):
    from tests.postgres import fresh_database

    def results(store):
        with store.db.transaction() as tx:
            for m in range(30):
                bots = [f"b{(m + k) % 6}" for k in range(4)]
                ranks = [1 + ((m * 7 + k * 3) % 4) for k in range(4)]
                store.ladder.record_result(tx, f"m{m:03d}", "standard", bots, ranks, [r * 5 for r in ranks], 4)
        return store.ladder.standings("standard")

    lite = Store(str(tmp_path / "a.db"))
    with fresh_database(postgres_server) as url:
        pg = Store(url)
        a, b = results(lite), results(pg)
        pg.close()
    lite.close()
    assert [(s.bot, s.mu, s.sigma, s.matches, s.points_per_deal) for s in a] == [
        (s.bot, s.mu, s.sigma, s.matches, s.points_per_deal) for s in b
    ]
    assert len(a) == 6 and a[0].conservative >= a[-1].conservative


def test_the_owners_of_some_bots_are_read_alike_on_sqlite_and_postgresql(tmp_path, postgres_server):
    """A rated match's check reads its own seats' registrations (Ladder.owners(names=...)),
    no longer every bot's for every table (a tick seating 4,000 bots held the event loop
    ~0.8 s at a time, bench/matchmaking.py). Revoked bots and unknown names are not owners."""
    from tests.postgres import fresh_database

    def owners(store):
        ladder = store.ladder
        for bot, owner in (("ann1", "ann"), ("ann2", "ann"), ("bob1", "bob"), ("gone", "cy")):
            ladder.add_bot(bot, owner)
        ladder.revoke("gone")
        return (ladder.owners(names=["bob1", "ann2", "gone", "nobody"]), ladder.owners(names=[]),
                ladder.owners(names=["gone"], include_revoked=True), ladder.owners())

    lite = Store(str(tmp_path / "a.db"))
    with fresh_database(postgres_server) as url:
        pg = Store(url)
        a, b = owners(lite), owners(pg)
        pg.close()
    lite.close()
    assert a == b == ({"bob1": "bob", "ann2": "ann"}, {}, {"gone": "cy"},
                      {"ann1": "ann", "ann2": "ann", "bob1": "bob"})


def test_tokens_never_appear_in_logs(tmp_path):
    import structlog

    async def scenario():
        async with running_daemon(tmp_path, log_level="info") as daemon:
            token = daemon.arena.store.ladder.add_bot("quiet", "ann")
            with structlog.testing.capture_logs() as logs:
                bot = await Bot(daemon, "quiet", token=token).start()
                await bot.close()
                wrong = await Bot(daemon, "quiet", token=token + "x").start()
                await wrong.close()
            return token, logs

    token, logs = run(scenario())
    assert logs, "the connection was logged"
    assert token not in repr(logs) and token[:12] not in repr(logs)


def test_ladder_service_serves_the_leaderboard_and_bot_profiles(tmp_path):
    from heartsbot.proto import ladder_pb2, ladder_pb2_grpc

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            ladder = daemon.arena.store.ladder
            names = ["p1", "p2", "p3", "p4"]
            bots = await ladder_bots(daemon, ladder, names)
            match_id = await daemon.create_match(names, deals=4, rated=True)
            await bots[0].wait_ended(match_id)
            out = {}
            async with daemon.channel() as channel:
                stub = ladder_pb2_grpc.LadderServiceStub(channel)
                out["board"] = await stub.GetLeaderboard(ladder_pb2.GetLeaderboardRequest())
                out["profile"] = await stub.GetBotProfile(ladder_pb2.GetBotProfileRequest(bot="p2"))
                for key, call in (("unknown bot", stub.GetBotProfile(ladder_pb2.GetBotProfileRequest(bot="zz"))),
                                  ("bad ruleset", stub.GetLeaderboard(ladder_pb2.GetLeaderboardRequest(ruleset="go"))),
                                  ("bad limit", stub.GetBotProfile(ladder_pb2.GetBotProfileRequest(bot="p2", limit=201)))):
                    try:
                        await call
                    except grpc.aio.AioRpcError as exc:
                        out[key] = exc.code()
                        out[key + " says"] = exc.details()
                out["limit 0"] = await stub.GetBotProfile(ladder_pb2.GetBotProfileRequest(bot="p2", limit=0))
            for b in bots:
                await b.close()
            return out, match_id

    out, match_id = run(scenario())
    board = out["board"]
    assert board.ruleset == "standard" and [e.rank for e in board.entries] == [1, 2, 3, 4]
    assert all(e.matches == 1 and e.decisions > 0 and not e.unreliable for e in board.entries)
    assert board.entries[0].conservative >= board.entries[-1].conservative
    profile = out["profile"]
    assert profile.owner == "owner-p2" and profile.standing.bot == "p2" and profile.matches[0].match_id == match_id
    assert out["unknown bot"] == grpc.StatusCode.NOT_FOUND and out["bad ruleset"] == grpc.StatusCode.INVALID_ARGUMENT
    # The refusal states the range the contract gives (0 is the default; it said "between 1 and 200").
    assert out["bad limit"] == grpc.StatusCode.INVALID_ARGUMENT and "between 0 (the default, 20) and 200" in out[
        "bad limit says"], out["bad limit says"]
    assert out["limit 0"].matches[0].match_id == match_id


def test_recompute_rebuilds_identical_ratings_and_repairs_tampering(tmp_path, store_url):
    store = Store(store_url)
    with store.db.transaction() as tx:
        for m in range(25):
            bots = [f"c{(m + k) % 5}" for k in range(4)]
            ranks = [1 + ((m * 5 + k * 3) % 4) for k in range(4)]
            store.ladder.record_result(tx, f"n{m:03d}", "standard", bots, ranks, [r * 3 for r in ranks], 4)
    before = store.ladder.stored_ratings("standard")
    assert store.ladder.replay_ratings("standard") == before
    assert store.ladder.recompute("standard") == (5, 0.0)
    with store.db.transaction() as tx:
        tx.execute("UPDATE ratings SET mu = mu + 1 WHERE bot = 'c0'")
    bots, change = store.ladder.recompute("standard")
    assert bots == 5 and abs(change - 1.0) < 1e-9
    assert store.ladder.stored_ratings("standard") == before
    store.close()


def test_ratings_made_by_another_rating_model_are_rebuilt_once_at_start(tmp_path, store_url):
    from heartsd.ladder import MODEL_ID

    store = Store(store_url)
    with store.db.transaction() as tx:
        for m in range(12):
            bots = [f"d{(m + k) % 5}" for k in range(4)]
            store.ladder.record_result(tx, f"p{m:03d}", "standard", bots, [1, 2, 3, 4], [0, 5, 9, 12], 4)
    good = store.ladder.stored_ratings("standard")
    seqs = store.db.query("SELECT match_id, seq FROM results ORDER BY seq, match_id")
    with store.db.transaction() as tx:  # as if an older heartsd with another model had rated them
        tx.execute("UPDATE ratings SET mu = mu - 3, sigma = sigma + 1")
        tx.execute("UPDATE ladder_meta SET value = 'openskill-plackett-luce tau=0.0833'")
    store.close()
    store = Store(store_url)
    assert store.ladder.stored_ratings("standard") == good
    assert store.db.query("SELECT match_id, seq FROM results ORDER BY seq, match_id") == seqs  # rated order kept
    assert store.db.query("SELECT value FROM ladder_meta WHERE name = 'rating_model'") == [(MODEL_ID,)]
    with store.db.transaction() as tx:  # the marker is current: nothing is rebuilt at the next start
        tx.execute("UPDATE ratings SET mu = mu + 1")
    store.close()
    store = Store(store_url)
    assert store.ladder.stored_ratings("standard") != good
    store.close()


def test_a_revoked_bot_still_connected_is_dropped_and_never_rated_again(tmp_path):
    import asyncio

    from heartsd.matchmaker import LadderSettings, Matchmaker

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            ladder = daemon.arena.store.ladder
            names = ["v1", "v2", "v3", "v4", "v5"]
            tokens = {n: ladder.add_bot(n, f"o-{n}") for n in names}
            bots = [await Bot(daemon, n, random_legal(i), token=tokens[n], max_matches=1).start()
                    for i, n in enumerate(names)]
            ladder.revoke("v1")  # as the CLI would, from another process
            maker = Matchmaker(daemon.arena, LadderSettings(deals=4, interval_s=0.05), seed=2)
            await asyncio.to_thread(maker._refresh)
            created = await maker.tick()
            tables = [[s.name for s in daemon.arena.runners[m].seats] for m in created]
            dropped = daemon.arena.sessions.get("v1") is None
            for m in created:
                await daemon.wait_finished(m)
            for b in bots:
                await b.close()
            errors = []
            for seats in (["v2", "v2", "v3", "v4"],):
                try:
                    await daemon.create_match(seats, deals=4, rated=True)
                except grpc.aio.AioRpcError as exc:
                    errors.append(exc.details())
            return tables, dropped, errors

    tables, dropped, errors = run(scenario())
    assert dropped and tables and all("v1" not in t for t in tables)
    assert errors and ("each bot once" in errors[0] or "not connected" in errors[0])


def test_the_ladders_house_bots_are_not_the_same_players_after_every_start(tmp_path):
    """Before (an attack pass): each ladder house bot's strategy was seeded with its place in
    --ladder-house, so after every start house-random passed the same positions of its
    sorted hand (positions 0, 6 and 12), and its receiver learned which cards it still held.
    Now each start seeds them from the system's randomness."""
    from heartsd.server import start_ladder

    async def scenario():
        async with running_daemon(tmp_path, ladder=True, ladder_house=["random", "mc"],
                                  ladder_interval_s=3600) as daemon:
            draws = []
            for _ in range(2):
                ladder = await start_ladder(daemon.settings, daemon.arena, daemon.port)
                try:
                    # The searching one thinks in the daemon's worker processes (thinking.py).
                    assert [client.think == daemon.arena.think for client, _ in ladder.house] == [False, True]
                    draws.append([[client.strategy.rng.random() for _ in range(3)] for client, _ in ladder.house])
                finally:
                    ladder.stop_matchmaking()
                    await ladder.stop()
            return draws

    first, second = run(scenario())
    assert len(first) == 2
    assert first[0] != second[0] and first[1] != second[1], "a house bot's choices repeat from start to start"


def test_a_house_bot_taken_over_by_another_start_is_said_to_stop_playing_here(tmp_path):
    """An attack pass: two daemons of one store both given --ladder-house; the second's start
    rotated the house bots' tokens, and the first one's house bots left for good with a line
    at info level, its ladder going on without them unexplained. Now a warning says why and
    what to do. (A second start_ladder on one daemon rotates the tokens as the other daemon's
    start does.) The daemon's own stop says nothing of the kind."""
    from structlog.testing import capture_logs

    from heartsd.server import start_ladder

    async def scenario():  # type: ignore[no-untyped-def]
        async with running_daemon(tmp_path, ladder=True, ladder_house=["random"], ladder_interval_s=3600) as daemon:
            first = await start_ladder(daemon.settings, daemon.arena, daemon.port)
            await asyncio.wait_for(first.house[0][0].connected.wait(), 30)
            with capture_logs() as taken:
                second = await start_ladder(daemon.settings, daemon.arena, daemon.port)
                await asyncio.wait_for(asyncio.gather(*(t for _, t in first.house), return_exceptions=True), 30)
            await first.stop()
            with capture_logs() as stopped:
                second.drain_house()
                await second.stop()
            return taken, stopped

    taken, stopped = run(scenario())
    warned = [e for e in taken if "a house bot stopped playing here" in e["event"]]
    assert [(e["bot"], e["log_level"]) for e in warned] == [("house-random", "warning")], taken
    assert not [e for e in stopped if "a house bot stopped playing here" in e["event"]], stopped


def test_a_failing_matchmaker_says_so_once_then_now_and_then_not_every_tick(tmp_path, monkeypatch):
    """An attack pass (a full disk): "matchmaking tick failed" and its traceback were logged
    at every tick, one a second, for as long as the store failed. Now the first failure has
    its traceback, then one line every FAILING_LOG_S while it lasts, and one when it ends.
    (The matchmaker's own read of the store fails, as on a full disk; bounded in time, so
    that a regression fails here rather than holding the suite.)"""
    import sqlite3

    from structlog.testing import capture_logs

    from heartsd import matchmaker as matchmaking
    from heartsd.matchmaker import LadderSettings, Matchmaker

    monkeypatch.setattr(matchmaking, "FAILING_LOG_S", 0.3)
    full = {"disk": True}

    async def scenario():  # type: ignore[no-untyped-def]
        async with running_daemon(tmp_path) as daemon:
            maker = Matchmaker(daemon.arena, LadderSettings(deals=1, interval_s=0.01), seed=1)
            real = maker._refresh

            def refresh() -> None:
                if full["disk"]:
                    raise sqlite3.OperationalError("database or disk is full")
                real()

            maker._refresh = refresh  # type: ignore[method-assign]
            with capture_logs() as logs:
                ticking = asyncio.get_running_loop().create_task(maker.run())
                await asyncio.sleep(1.0)  # ~100 ticks, all failing
                full["disk"] = False
                while not any(e["event"] == "matchmaking works again" for e in logs):
                    await asyncio.sleep(0.01)
                ticking.cancel()
                await asyncio.gather(ticking, return_exceptions=True)
            return logs

    async def bounded():  # type: ignore[no-untyped-def]
        return await asyncio.wait_for(scenario(), 30)

    logs = run(bounded())
    said = [(e["event"], e["log_level"]) for e in logs if "matchmaking" in e["event"]]
    assert said[0] == ("matchmaking tick failed; retrying every tick", "error") and "exc_info" in logs[0], said
    assert 2 <= len(said) <= 6, said  # before: one traceback a tick, ~100
    assert said[-1] == ("matchmaking works again", "warning"), said
    assert all(event == "matchmaking still failing" for event, _ in said[1:-1]), said


def test_daemons_starting_at_once_on_postgresql_mark_the_rating_model_once(postgres_server):
    """Before (an attack pass, once in 19 starts): two daemons starting at once on one
    PostgreSQL database both replaced the rating model's row, and one died with
    UniqueViolation ladder_meta_pkey. The replacement now holds the store's lock."""
    import threading

    from heartsd.db import Database
    from heartsd.ladder import Ladder

    from tests.postgres import fresh_database

    with fresh_database(postgres_server) as url:
        Store(url).close()
        errors = []
        for _ in range(30):
            dbs = [Database.open(url) for _ in range(4)]
            with dbs[0].transaction() as tx:
                tx.execute("DELETE FROM ladder_meta WHERE name = 'rating_model'")
            start = threading.Barrier(len(dbs))

            def ensure(db):
                start.wait()
                try:
                    Ladder(db).ensure_ratings()
                except Exception as exc:  # noqa: BLE001 - the race's error is the finding
                    errors.append(exc)

            threads = [threading.Thread(target=ensure, args=(db,)) for db in dbs]
            for t in threads:
                t.start()
            for t in threads:
                t.join(30)
            for db in dbs:
                db.close()
        assert not errors, errors[:3]


def test_recompute_refuses_to_launder_an_edited_result_row(tmp_path):
    """Before (an attack pass): after a result row's rank was edited, `ladder recompute`
    said DIFFERENT, then rewrote the ratings from the edited rows, and a second run said
    "identical". Now rows unlike their match's stored result are named and nothing is
    rewritten, however often it runs."""
    match_id = play_rated_match(tmp_path, ["e1", "e2", "e3", "e4"], deals=1)
    db = str(tmp_path / "heartsd.db")
    command = [sys.executable, "-m", "heartsd.cli", "ladder", "recompute", "--db", db]
    assert subprocess.run(command, capture_output=True, text=True, timeout=60).returncode == 0
    store = Store(db)
    before = store.ladder.stored_ratings("standard")
    with store.db.transaction() as tx:
        tx.execute("UPDATE results SET rank = 5 - rank WHERE match_id = ?", (match_id,))
    store.close()
    for _ in range(2):
        out = subprocess.run(command, capture_output=True, text=True, timeout=60)
        assert out.returncode == 1 and "differ from their matches' records; no rating was rewritten" in out.stdout
        assert f"{match_id}: 'e1'" in out.stdout or match_id in out.stdout
    store = Store(db)
    assert store.ladder.stored_ratings("standard") == before
    store.close()


def test_a_bots_rating_history_grows_by_the_new_results_only(tmp_path, store_url, monkeypatch):
    """Before: every new result rebuilt every bot's rating history from all the ladder's
    results (106-160 ms at 1,934 results, growing with the ladder), however few were new.
    Now a history goes on from the last one built, replaying only the results rated since,
    and is identical to one rebuilt from scratch: matches and duplicate sets alike."""
    from heartsd import ladder as ladder_module

    store = Store(store_url)
    ladder = store.ladder

    def record(first: int, count: int) -> None:
        with store.db.transaction() as tx:
            for m in range(first, first + count):
                bots = [f"c{(m + k) % 6}" for k in range(4)]
                ranks = [1 + ((m * 5 + k * 3) % 4) for k in range(4)]
                if m % 7 == 3:  # now and then a duplicate set of two tables, rated as one
                    ladder.record_set(tx, f"s{m:03d}", "standard", [
                        (f"s{m:03d}a", bots, ranks, [r * 3 for r in ranks], 4, [(10, 0, 0, 0, 0)] * 4),
                        (f"s{m:03d}b", bots[::-1], ranks, [r * 2 for r in ranks], 4, [(10, 0, 0, 0, 0)] * 4)])
                else:
                    ladder.record_result(tx, f"n{m:03d}", "standard", bots, ranks, [r * 3 for r in ranks], 4)

    record(0, 40)
    replayed: list[int] = []
    real_replay = ladder_module._replay

    def counted(rows, *args, **kwargs):  # type: ignore[no-untyped-def]
        rows = list(rows)
        replayed.append(len(rows))
        return real_replay(rows, *args, **kwargs)

    monkeypatch.setattr(ladder_module, "_replay", counted)
    first = ladder.extend_history("standard")
    record(40, 3)
    later = ladder.extend_history("standard", first)
    again = ladder.extend_history("standard", later)  # nothing new: nothing replayed
    rebuilt = ladder.extend_history("standard")
    stored = ladder.stored_ratings("standard")
    store.close()
    rows = [8 if m % 7 == 3 else 4 for m in range(43)]  # a set's two tables: 8 rows
    assert replayed == [sum(rows[:40]), sum(rows[40:]), 0, sum(rows)], replayed
    assert later.seq == again.seq == rebuilt.seq > first.seq
    assert later.by_bot == again.by_bot == rebuilt.by_bot  # the same floats, in the same order
    assert all(first.by_bot[b] == later.by_bot[b][:len(first.by_bot[b])] for b in first.by_bot)
    assert sum(map(len, later.by_bot.values())) > sum(map(len, first.by_bot.values()))
    if store_url.startswith("sqlite") or "://" not in store_url:  # and reads only the new rows (SQLite's plans)
        plans = Store(store_url)
        for query, args in ((ladder_module._REPLAY_AFTER, ("standard", 40)),
                            ("SELECT COALESCE(MAX(seq), 0) FROM results WHERE ruleset = ?", ("standard",))):
            plan = " / ".join(row[3] for row in plans.db.query("EXPLAIN QUERY PLAN " + query, args))
            assert "results_by_ruleset_seq" in plan, plan  # before: every result of the ruleset
        plans.close()
    # Each history ends at the rating the ladder stored, result by result.
    assert {b: h[-1][2:] for b, h in rebuilt.by_bot.items()} == {b: (mu, sigma) for b, (mu, sigma, _) in stored.items()}


def test_a_bots_latest_results_are_read_through_its_own_index(tmp_path):
    """An audit: GetBotProfile and a bot page read a bot's latest results through the
    ruleset's index (results_by_ruleset_seq), newest first until the page was full: every
    result of the ruleset for a bot with fewer (a new one), 27 ms a public call at 80,000
    results. The bot's own index (bot, ruleset, seq) reads its page only, in order."""
    store = Store(str(tmp_path / "l.db"))
    asked: list[tuple[str, tuple[object, ...]]] = []
    query = store.db.query

    def recording(sql, args=()):  # type: ignore[no-untyped-def]
        asked.append((sql, tuple(args)))
        return query(sql, args)

    store.db.query = recording  # type: ignore[method-assign]
    store.ladder.history("newcomer", 20, "standard")
    store.db.query = query  # type: ignore[method-assign]
    (sql, args), = asked
    plan = " ".join(str(row[-1]) for row in store.db.query("EXPLAIN QUERY PLAN " + sql, args))
    store.close()
    assert "results_by_bot_ruleset_seq" in plan and "TEMP B-TREE" not in plan, plan


def test_a_bot_profile_reads_its_own_registration_not_every_bots(tmp_path):
    """An attack pass: GetBotProfile, a public call of one call's worth of the spectator
    rate, read every registered bot's owner (revoked ones too) to find one bot's: ~1.7 ms
    of a worker thread, holding the interpreter's lock the event loop waits for, at 2,000
    bots, and growing with the ladder. It reads the asked bot's row. Counted in the rows its
    queries return (the shared standings, made once per new result, read beforehand)."""
    from heartsbot.proto import ladder_pb2, ladder_pb2_grpc

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            ladder = daemon.arena.store.ladder

            def register() -> None:
                for i in range(300):
                    ladder.add_bot(f"b{i:03d}", f"owner-{i}")

            await asyncio.to_thread(register)
            async with daemon.channel() as channel:
                stub = ladder_pb2_grpc.LadderServiceStub(channel)
                await stub.GetBotProfile(ladder_pb2.GetBotProfileRequest(bot="b007"))  # the standings, made once
                rows: list[int] = []
                query = ladder.db.query

                def counted(sql, args=()):  # type: ignore[no-untyped-def]
                    found = query(sql, args)
                    rows.append(len(found))
                    return found

                ladder.db.query = counted  # type: ignore[method-assign]
                try:
                    profile = await stub.GetBotProfile(ladder_pb2.GetBotProfileRequest(bot="b007"))
                finally:
                    ladder.db.query = query  # type: ignore[method-assign]
            return profile, rows

    profile, rows = run(scenario())
    assert profile.bot == "b007" and profile.owner == "owner-7"
    assert max(rows) < 300, f"a bot's profile read rows {rows}"


def test_a_configured_bot_is_not_rated_under_a_ladder_registration_of_its_name(tmp_path):
    """An organiser's pass: beside a configured bob, `ladder add-bot bob --owner mallory`
    signs nothing in (test_admin), but the rated check and the matchmaker read the
    registrations themselves: the configured bob was seated in rated matches, its results
    rated under mallory's registration and its owner taken for mallory's. A configured
    bot is no ladder bot, whatever the ladder holds under its name."""
    import asyncio

    from heartsd.matchmaker import LadderSettings, Matchmaker

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            ladder = daemon.arena.store.ladder
            await asyncio.to_thread(ladder.add_bot, "bob", "mallory")
            bots = [await Bot(daemon, "bob", random_legal(0), max_matches=1).start()]
            bots += await ladder_bots(daemon, ladder, ["l1", "l2", "l3"])
            errors = []
            try:
                await daemon.create_match(["bob", "l1", "l2", "l3"], deals=4, rated=True)
            except grpc.aio.AioRpcError as exc:
                errors.append((exc.code(), exc.details()))
            maker = Matchmaker(daemon.arena, LadderSettings(deals=4, interval_s=0.05), seed=2)
            await asyncio.to_thread(maker._refresh)
            created = await maker.tick()
            for m in created:
                await daemon.wait_finished(m)
            for b in bots:
                await b.close()
            return errors, created, maker.candidates()

    errors, created, candidates = run(scenario())
    assert errors and errors[0][0] == grpc.StatusCode.INVALID_ARGUMENT and "registered ladder bots" in errors[0][1], errors
    assert created == [], "the configured bob filled a rated table"
    assert "bob" not in candidates


# -- ties ------------------------------------------------------------------------------------

def _rated(ranks: list[int], priors: list[tuple[float, float]] | None = None) -> list[tuple[float, float]]:
    """(mu, sigma) after one rating update of a table with ``ranks`` (fresh bots, or ``priors``)."""
    from heartsd.ladder import MODEL, _rate

    before = [MODEL.rating(name=f"b{i}") if priors is None else MODEL.rating(name=f"b{i}", mu=mu, sigma=sigma)
              for i, (mu, sigma) in enumerate(priors or [(0.0, 0.0)] * len(ranks))]
    return [(r.mu, r.sigma) for r in _rate(before, ranks)]  # type: ignore[attr-defined]


def test_a_tie_is_rated_between_the_places_it_spans_and_never_above_a_better_place():
    """A conformance pass, seen on the leaderboard: openskill's Plackett-Luce update for tied
    ranks (Weng & Lin's Algorithm 4, which it follows) gave ranks [1, 1, 3, 4] at equal ratings
    the third the co-winners' mu and a smaller sigma, so a higher conservative rating than
    theirs; [1, 2, 2, 4] left the two seconds below a fresh rating. A tie now rates as the
    mean over every order of the tied bots (each as likely): at equal ratings a better place
    never rates below a worse one, tied bots rate alike, and the tie lies between its places."""
    for ranks in ([1, 1, 3, 4], [1, 2, 2, 4], [1, 1, 1, 4], [1, 2, 3, 3], [2, 2, 1, 4], [1, 1, 3, 3]):
        after = _rated(ranks)
        strict = _rated(list(range(1, 5)))
        for i in range(4):
            for j in range(4):
                if ranks[i] < ranks[j]:  # a better place
                    assert after[i][0] > after[j][0], (ranks, after)
                    assert after[i][0] - 3 * after[i][1] > after[j][0] - 3 * after[j][1], (ranks, after)
                elif ranks[i] == ranks[j]:
                    assert after[i] == after[j], (ranks, after)
        # The tie's mu is the mean of the places it spans, as the strict order rates them.
        for rank in set(ranks):
            tied = [i for i, r in enumerate(ranks) if r == rank]
            spanned = [strict[rank - 1 + k][0] for k in range(len(tied))]
            assert abs(after[tied[0]][0] - sum(spanned) / len(spanned)) < 1e-9, (ranks, after, spanned)


def test_ratings_without_a_tie_are_openskills_own_and_a_tie_of_two_equals_moves_no_mu():
    """Untied tables rate exactly as before (so a store's untied history keeps its ratings),
    and a tie of two equal bots leaves their mu where it was (as openskill does)."""
    from heartsd.ladder import MODEL

    priors = [(31.0, 4.0), (22.5, 6.0), (25.0, 25 / 3), (18.0, 2.0)]
    for ranks in ([1, 2, 3, 4], [4, 2, 1, 3], [3, 1, 4, 2]):
        theirs = MODEL.rate([[MODEL.rating(mu=mu, sigma=s)] for mu, s in priors], ranks=ranks)
        assert _rated(ranks, priors) == [(t[0].mu, t[0].sigma) for t in theirs]
    (mu_a, _), (mu_b, _) = _rated([1, 1])
    assert mu_a == mu_b and abs(mu_a - 25.0) < 1e-9
    # Unequal bots that tie move towards each other.
    (strong, _), (weak, _) = _rated([1, 1], [(30.0, 3.0), (20.0, 3.0)])
    assert 20.0 < weak < strong < 30.0


def test_a_wide_tie_is_rated_over_a_bounded_deterministic_set_of_orders(monkeypatch):
    """Every order of a tie of nine is 362,880 updates; past MAX_TIE_ORDERS the mean is over
    that many orders drawn from the ranks alone, so the same results always rate alike (a
    rebuild, SQLite and PostgreSQL) and the update stays cheap; each draw is rotated through
    the tie's places, so that equal bots tied still rate alike."""
    import heartsd.ladder as ladder

    class Counted:  # the model, counting its updates (openskill's class is compiled: no attribute to patch)
        def __init__(self, model: object) -> None:
            self.model, self.updates = model, 0

        def rate(self, *args: object, **kwargs: object) -> object:
            self.updates += 1
            return self.model.rate(*args, **kwargs)  # type: ignore[attr-defined]

        def rating(self, *args: object, **kwargs: object) -> object:
            return self.model.rating(*args, **kwargs)  # type: ignore[attr-defined]

    counted = Counted(ladder.MODEL)
    monkeypatch.setattr(ladder, "MODEL", counted)
    ranks = [1] * 9 + [10]
    first = _rated(ranks)
    assert counted.updates == ladder.MAX_TIE_ORDERS
    assert _rated(ranks) == first
    assert all(after == first[0] for after in first[:9])  # each of the nine at each place alike often
    assert first[0][0] > first[-1][0]  # and above the tenth
