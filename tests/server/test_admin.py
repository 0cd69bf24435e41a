"""The organiser's tools: shared match slots, ListBots, ListMatches paging, ``heartsd admin``."""

from __future__ import annotations

import asyncio
import base64
import json
import re
import time

import grpc
import pytest
from heartsbot.proto import admin_pb2, admin_pb2_grpc, bot_pb2, bot_pb2_grpc, game_pb2, spectator_pb2, spectator_pb2_grpc
from rich.console import Console

from hearts_engine import card_symbol
from heartsd import cli
from heartsd.arena import MAX_FIXED_DEALS
from heartsd.matchmaker import LadderSettings, Matchmaker
from heartsd.watch import TableView

from .harness import ADMIN, BOTS, Bot, auth, random_legal, run, running_daemon

P = game_pb2
HOUSE3 = ["house:random"] * 3


def _create_request(seats: list[str], wait_ms: int = 0, deals: int = 1) -> admin_pb2.CreateMatchRequest:
    request = admin_pb2.CreateMatchRequest(ruleset="standard", players=len(seats), wait_for_seats_ms=wait_ms)
    for s in seats:
        if s.startswith("house:"):
            request.seats.add(house=s.removeprefix("house:"))
        else:
            request.seats.add(bot=s)
    request.format.fixed_deals = deals
    return request


def test_create_match_shares_slots_with_the_ladder_never_double_books_and_says_why(tmp_path):
    """Today's complaint: with the ladder on, CreateMatch naming a ladder bot fails with
    "'house-heuristic' is already playing 2 match(es), its limit" however often it is
    tried, because the matchmaker reseats the bot the moment a slot frees. Now the error
    names the matches holding the slots, and a waiting request holds the bot's next free
    slot ahead of the matchmaker; no bot is ever in more matches than it declared."""

    async def scenario():
        async with running_daemon(tmp_path, house_delay_ms=40) as daemon:
            ladder = daemon.arena.store.ladder
            names = ["l1", "l2", "l3", "l4"]
            tokens = {b: ladder.add_bot(b, b) for b in names}
            bots = [await Bot(daemon, b, random_legal(i), token=tokens[b], max_matches=1).start()
                    for i, b in enumerate(names)]
            maker = Matchmaker(daemon.arena, LadderSettings(deals=8, interval_s=0.02), seed=1)
            ticking = asyncio.get_running_loop().create_task(maker.run())
            most = {b: 0 for b in names}
            watching = True

            async def watch_limits():
                while watching:
                    for b in names:
                        most[b] = max(most[b], daemon.arena.active_matches(b))
                    await asyncio.sleep(0.002)

            watcher = asyncio.get_running_loop().create_task(watch_limits())
            while not daemon.arena.matches_of("l1"):
                await asyncio.sleep(0.01)
            ladder_match = daemon.arena.matches_of("l1")[0][0]
            async with daemon.channel() as channel:
                stub = admin_pb2_grpc.AdminServiceStub(channel)
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await stub.CreateMatch(_create_request(["l1", *HOUSE3]), metadata=auth(ADMIN))
                listed = await stub.ListBots(admin_pb2.ListBotsRequest(), metadata=auth(ADMIN))
                waiting = asyncio.ensure_future(stub.CreateMatch(
                    _create_request(["l1", *HOUSE3], wait_ms=30_000), metadata=auth(ADMIN)))
                while not daemon.arena.slots.promised("l1"):
                    await asyncio.sleep(0.005)
                during = await stub.ListBots(admin_pb2.ListBotsRequest(), metadata=auth(ADMIN))
                created = await asyncio.wait_for(waiting, 60)
                purposes = dict(daemon.arena.matches_of("l1"))
                with pytest.raises(grpc.aio.AioRpcError) as timed_out:
                    # l1 is in the admin match (house moves 40 ms apart: it lasts seconds).
                    await stub.CreateMatch(_create_request(["l1", *HOUSE3], wait_ms=200), metadata=auth(ADMIN))
            await daemon.wait_finished(created.match_id)
            watching = False
            await watcher
            ticking.cancel()
            for runner in list(daemon.arena.runners.values()):
                runner.stop(P.MATCH_STATUS_CANCELLED, "test over")
                await daemon.wait_finished(runner.id)
            stored = daemon.stored(created.match_id)
            for b in bots:
                await b.close()
            return refused.value, listed, during, created, purposes, timed_out.value, most, stored, ladder_match

    refused, listed, during, created, purposes, timed_out, most, stored, ladder_match = run(scenario())
    assert refused.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "no free match slot" in refused.details() and f"ladder {ladder_match}" in refused.details()
    assert "wait_for_seats_ms" in refused.details()
    l1 = next(b for b in listed.bots if b.name == "l1")
    assert l1.connected and l1.max_concurrent_matches == 1 and l1.active_matches == 1
    assert [(m.match_id, m.purpose) for m in l1.matches] == [(ladder_match, "ladder")]
    assert next(b for b in during.bots if b.name == "l1").reserved_slots == 1
    assert purposes.get(created.match_id) == "admin"
    assert stored.status == "finished" and stored.seats[0] == "l1"
    assert timed_out.code() == grpc.StatusCode.DEADLINE_EXCEEDED and "no free match slot" in timed_out.details()
    assert max(most.values()) == 1, f"a bot declared one match at a time: {most}"



def test_a_wait_for_seats_cut_short_by_shutdown_says_so_not_that_it_ran_out(tmp_path):
    """A CreateMatch waiting 30 s for a bot that is not connected, when the daemon begins
    to shut down: before, it failed DEADLINE_EXCEEDED "waited 30 s for the seats" about
    a second later (an attack pass), a wait that never ran out and a status that tells the
    caller to wait longer. Now it is UNAVAILABLE, as every other call refused for the
    shutdown, and says why the seats were not free."""

    async def scenario() -> tuple[grpc.aio.AioRpcError, float]:
        async with running_daemon(tmp_path) as daemon, daemon.channel() as channel:
            stub = admin_pb2_grpc.AdminServiceStub(channel)
            waiting = asyncio.ensure_future(
                stub.CreateMatch(_create_request(["alice", *HOUSE3], wait_ms=30_000), metadata=auth(ADMIN)))
            await asyncio.sleep(0.3)
            assert not waiting.done()
            started = asyncio.get_running_loop().time()
            await daemon.arena.shutdown(grace_s=0)
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await waiting
            return refused.value, asyncio.get_running_loop().time() - started

    refused, took_s = run(scenario())
    assert refused.code() == grpc.StatusCode.UNAVAILABLE, refused
    assert "shutting down" in refused.details() and "'alice' is not connected" in refused.details()
    assert "waited" not in refused.details()
    assert took_s < 10  # the shutdown ends the wait: it does not run its 30 s


def test_a_match_of_more_deals_than_any_tournament_allows_is_refused_at_once(tmp_path):
    """Before (an attack pass): CreateMatch took any fixed_deals. 2**31-1 never returned:
    a worker thread worked out a shuffle fingerprint for every planned deal, memory grew
    ~10 MB/s, six such calls took every worker thread (ListMatches, leaderboards and
    new matches stopped), and the daemon could no longer exit. An operator's typo
    (1600000 for 16) did the same. Now it is INVALID_ARGUMENT, with the limit (a
    tournament's deals_per_match has the same one)."""

    async def scenario() -> tuple[list[grpc.aio.AioRpcError], str]:
        async with running_daemon(tmp_path) as daemon, daemon.channel() as channel:
            stub = admin_pb2_grpc.AdminServiceStub(channel)
            refused = []
            for deals in (MAX_FIXED_DEALS + 1, 2**31 - 1):
                with pytest.raises(grpc.aio.AioRpcError) as caught:
                    await stub.CreateMatch(_create_request(["house:random", *HOUSE3], deals=deals),
                                           metadata=auth(ADMIN), timeout=20)
                refused.append(caught.value)
            created = await stub.CreateMatch(_create_request(["house:random", *HOUSE3], deals=MAX_FIXED_DEALS),
                                             metadata=auth(ADMIN), timeout=20)
            daemon.arena.runners[created.match_id].stop(P.MATCH_STATUS_CANCELLED, "test over")
            await daemon.wait_finished(created.match_id)
            return refused, created.match_id

    refused, created = run(scenario())
    for error in refused:
        assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, error
        assert f"at most {MAX_FIXED_DEALS} deals" in error.details(), error.details()
    assert created

def test_list_bots_includes_registered_and_revoked_bots_when_asked(tmp_path):
    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            ladder = daemon.arena.store.ladder
            token = ladder.add_bot("reg1", "ann")
            ladder.add_bot("gone", "bob")
            ladder.revoke("gone")
            await Bot(daemon, "reg1", token=token, max_matches=3).start()
            await Bot(daemon, "alice").start()
            async with daemon.channel() as channel:
                stub = admin_pb2_grpc.AdminServiceStub(channel)
                connected = await stub.ListBots(admin_pb2.ListBotsRequest(), metadata=auth(ADMIN))
                everyone = await stub.ListBots(admin_pb2.ListBotsRequest(include_registered=True), metadata=auth(ADMIN))
            return connected, everyone

    connected, everyone = run(scenario())
    assert sorted(b.name for b in connected.bots) == ["alice", "reg1"]
    # A connected ladder bot is registered, with its owner, whether or not the others are
    # asked for (a conformance pass: without include_registered it showed no owner and
    # registered false, where the field is a fact about the bot).
    shown = {b.name: b for b in connected.bots}
    assert shown["reg1"].registered and shown["reg1"].owner == "ann", shown["reg1"]
    # A configured bot's owner is the configuration's: itself, when [bot_owners] does not name it.
    assert not shown["alice"].registered and shown["alice"].owner == "alice"
    by_name = {b.name: b for b in everyone.bots}
    assert set(by_name) == {"reg1", "gone"} | set(BOTS)
    assert by_name["reg1"].connected and by_name["reg1"].registered and by_name["reg1"].owner == "ann"
    assert by_name["reg1"].max_concurrent_matches == 3 and by_name["reg1"].version == "test"
    assert by_name["gone"].revoked and not by_name["gone"].connected
    assert not by_name["bob"].connected and not by_name["bob"].registered


def test_list_matches_pages_through_more_than_a_thousand_matches(tmp_path, store_url):
    """Today ListMatches stops at 1,000 (a larger limit is refused) with no way to see
    the rest. Pages now follow each other to the last match, each exactly once, newest
    first, on both stores; a token is checked."""

    async def scenario():
        # Paging only (the spectator rate would pace the pages: test below).
        async with running_daemon(tmp_path, db=store_url, spectator_calls_per_s=1e6) as daemon:
            store = daemon.arena.store
            ids = [f"m-{i:05d}" for i in range(1205)]
            await asyncio.to_thread(lambda: [store.insert_running(i, "standard", 4, ["a", "b", "c", "d"], 1)
                                             for i in ids])
            finished = await daemon.create_match(["house:random"] * 4, deals=1)
            await daemon.wait_finished(finished)
            pages = []
            async with daemon.channel() as channel:
                stub = spectator_pb2_grpc.SpectatorServiceStub(channel)
                request = spectator_pb2.ListMatchesRequest(limit=1000)
                tokens = []
                while True:
                    response = await stub.ListMatches(request)
                    pages.append([m.match_id for m in response.matches])
                    tokens.append(response.next_page_token)
                    if not response.next_page_token:
                        break
                    request.page_token = response.next_page_token
                small = await stub.ListMatches(spectator_pb2.ListMatchesRequest(
                    limit=2, status=P.MATCH_STATUS_FINISHED))
                errors = {}
                for name, bad in {
                    "junk token": spectator_pb2.ListMatchesRequest(page_token="not-a-token"),
                    "other filter": spectator_pb2.ListMatchesRequest(page_token=tokens[0],
                                                                     status=P.MATCH_STATUS_ABORTED),
                    # Crafted (an attack pass): before, INTERNAL and a traceback in the log each.
                    "deep nesting": spectator_pb2.ListMatchesRequest(page_token=crafted("[" * 30_000)),
                    "huge key": spectator_pb2.ListMatchesRequest(page_token=crafted(f'[{10 ** 100},"m-x",""]')),
                    "huge negative key": spectator_pb2.ListMatchesRequest(page_token=crafted(f'[{-10 ** 30},"m-x",""]')),
                    "boolean key": spectator_pb2.ListMatchesRequest(page_token=crafted('[true,"m-x",""]')),
                    "lone surrogate": spectator_pb2.ListMatchesRequest(page_token=crafted('[1,"\\ud800",""]')),
                }.items():
                    try:
                        await stub.ListMatches(bad)
                        errors[name] = grpc.StatusCode.OK
                    except grpc.aio.AioRpcError as exc:
                        errors[name] = exc.code()
                        assert "page_token" in exc.details(), exc.details()
            return ids, finished, pages, small, errors

    ids, finished, pages, small, errors = run(scenario())
    assert [len(p) for p in pages] == [1000, 206]
    listed = [m for p in pages for m in p]
    assert len(set(listed)) == len(listed) == 1206
    assert set(listed) == set(ids) | {finished}
    assert listed[0] == finished  # the newest first
    assert [m.match_id for m in small.matches] == [finished] and not small.next_page_token
    assert errors == dict.fromkeys(errors, grpc.StatusCode.INVALID_ARGUMENT) and len(errors) == 7


def crafted(text: str) -> str:
    """A page token as pages.encode makes them, around any JSON text."""
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


CARD_TEXT = re.compile(r"(10|[2-9JQKA])([♣♦♥♠])")


def test_watch_draws_tricks_and_score_sheet_and_never_an_unplayed_card(tmp_path):
    """The terminal view of a live match, fed by the public WatchMatch stream: after every
    event, every card it draws has been played; at the end its score sheet is the record's."""

    async def scenario():
        async with running_daemon(tmp_path, house_delay_ms=2) as daemon:
            match_id = await daemon.create_match(["house:heuristic", "house:random"] * 2, deals=2)
            view = TableView()
            console = Console(record=True, width=160, color_system=None)
            drawn_unplayed = []
            async with daemon.channel() as channel:
                stub = spectator_pb2_grpc.SpectatorServiceStub(channel)
                async for response in stub.WatchMatch(spectator_pb2.WatchMatchRequest(match_id=match_id)):
                    for event in response.events:
                        view.apply(event)
                        with console.capture() as capture:
                            console.print(view.render())
                        shown = {m.group(0) for m in CARD_TEXT.finditer(capture.get())}
                        played = {card_symbol(c) for c in view.played}
                        drawn_unplayed += sorted(shown - played)
            await daemon.wait_finished(match_id)
            with console.capture() as capture:
                console.print(view.render())
            return view, capture.get(), drawn_unplayed, daemon.stored(match_id)

    view, text, drawn_unplayed, stored = run(scenario())
    assert drawn_unplayed == []
    assert [d[1] for d in view.deal_scores] == [list(s.points) for s in stored.record.deal_scores]
    assert view.totals == list(stored.record.result.totals)
    assert "score sheet" in text and "match finished after 2 deals" in text
    assert len(view.played) == 52


def test_heartsd_admin_commands_over_grpc(tmp_path, capsys):
    """create (waiting for a busy bot), bots, matches (every page), watch, cancel and the
    errors: a wrong token exits 1 with the status, an unreachable daemon exits 4."""

    async def scenario():
        async with running_daemon(tmp_path, house_delay_ms=1) as daemon:
            base = ["--server", daemon.target, "--admin-token", ADMIN]
            await Bot(daemon, "alice", random_legal(3), max_matches=1).start()

            def admin(*argv: str) -> tuple[int, str, str]:
                code = cli.main(["admin", *argv])
                out, err = capsys.readouterr()
                return code, out, err

            first = await daemon.create_match(["alice", *HOUSE3], deals=2)
            created = await asyncio.to_thread(admin, "create", *base, "--seat", "alice", *sum(
                (["--seat", h] for h in HOUSE3), []), "--deals", "1", "--wait", "30", "--seed", "7")
            second = re.search(r"match (m-[0-9a-f]+) started", created[1]).group(1)
            watched = await asyncio.to_thread(admin, "watch", *base, second, "--plain")
            for _ in range(3):
                await daemon.create_match(["house:random"] * 4, deals=1)
            listed = await asyncio.to_thread(admin, "matches", *base, "--limit", "2", "--all")
            as_json = await asyncio.to_thread(admin, "matches", *base, "--limit", "2", "--all", "--json")
            bots = await asyncio.to_thread(admin, "bots", *base, "--all")
            running = await daemon.create_match(["alice", *HOUSE3], deals=50, clock={"decision_ms": 60_000})
            cancelled = await asyncio.to_thread(admin, "cancel", *base, running, "--reason", "test")
            refused = await asyncio.to_thread(admin, "bots", "--server", daemon.target, "--admin-token", "wrong")
            return first, second, created, watched, listed, as_json, bots, cancelled, refused, daemon.stored(second)

    first, second, created, watched, listed, as_json, bots, cancelled, refused, stored = run(scenario())
    # --json --all: one JSON object with every page's matches (before: one object per page,
    # which a JSON parser refuses: an organiser's pass)
    assert as_json[0] == 0 and len(json.loads(as_json[1])["matches"]) == 5, as_json
    assert created[0] == 0 and stored.seed == 7 and stored.status == "finished"
    assert watched[0] == 0 and "score sheet" in watched[1] and "match finished after 1 deals" in watched[1]
    assert listed[0] == 0 and "5 match(es)" in listed[1] and second in listed[1] and first in listed[1]
    assert bots[0] == 0 and "alice" in bots[1] and "erin" in bots[1]
    assert cancelled[0] == 0 and "cancelled" in cancelled[1]
    assert refused[0] == 3 and "UNAUTHENTICATED" in refused[2]  # refused: 3, as in every client
    unreachable = cli.main(["admin", "matches", "--server", "127.0.0.1:1", "--timeout", "2"])
    assert unreachable == 4 and "could not connect to 127.0.0.1:1" in capsys.readouterr().err


def test_listing_every_match_waits_as_the_server_paces_its_pages(tmp_path, capsys):
    """Pages spend the spectator rate (a 1,000-match page 51 of a burst of 60): the second
    page of ``--all`` was refused RESOURCE_EXHAUSTED and both commands stopped there with
    an error. The refusal now says when to come back (trailing metadata retry-after-ms)
    and both commands wait that long, say so, and list every match."""
    from heartsbot import cli as bot_cli

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            store = daemon.arena.store
            await asyncio.to_thread(lambda: [store.insert_running(f"m-{i:05d}", "standard", 4, ["a", "b", "c", "d"], 1)
                                             for i in range(1100)])
            async with daemon.channel() as channel:
                stub = spectator_pb2_grpc.SpectatorServiceStub(channel)
                await stub.ListMatches(spectator_pb2.ListMatchesRequest(limit=1000))
                try:
                    await stub.ListMatches(spectator_pb2.ListMatchesRequest(limit=1000))
                    said = None
                except grpc.aio.AioRpcError as exc:
                    said = dict(exc.trailing_metadata() or ())
            outcomes = []
            for main, argv in ((cli.main, ["admin", "matches"]), (bot_cli.main, ["matches"])):
                code = await asyncio.to_thread(main, [*argv, "--server", daemon.target, "--limit", "1000", "--all"])
                out, err = capsys.readouterr()
                outcomes.append((code, out, err))
            return said, outcomes

    said, outcomes = run(scenario())
    assert said is not None and 0 < int(said["retry-after-ms"]) <= 60_000, said
    for code, out, err in outcomes:
        assert code == 0, err
        assert "1100 match(es)" in out and "m-00000" in out and "m-01099" in out
        assert "the server paces listings: the next page in" in err


def test_heartsd_admin_bots_shows_a_draining_bot_as_draining(tmp_path, capsys):
    """ListBots says a bot is draining (it sent `drain`: it finishes its running matches
    and takes no new one); `heartsd admin bots` shows it in the connected column, so an
    organiser can tell a bot on its way out from one that is free to be seated."""
    drain = bot_pb2.PlayRequest(drain=bot_pb2.Drain(reason="going home"))

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            base = ["--server", daemon.target, "--admin-token", ADMIN]
            alice = await Bot(daemon, "alice", random_legal(3), max_matches=1).start()
            await Bot(daemon, "bob", random_legal(4), max_matches=1).start()
            match_id = await daemon.create_match(["alice", *HOUSE3], deals=50, clock={"decision_ms": 60_000})
            alice.send(drain)
            while not any(m.HasField("draining") for m in alice.received):
                await asyncio.sleep(0.01)

            def admin(*argv: str) -> tuple[int, str]:
                code = cli.main(["admin", *argv])
                return code, capsys.readouterr().out

            shown = await asyncio.to_thread(admin, "bots", *base)
            as_json = await asyncio.to_thread(admin, "bots", *base, "--json")
            daemon.arena.runners[match_id].stop(P.MATCH_STATUS_CANCELLED, "test over")
            return shown, as_json

    (code, text), (json_code, json_text) = run(scenario())
    assert code == 0 and json_code == 0
    rows = {line.split("│")[1].strip(): [c.strip() for c in line.split("│")[1:-1]]
            for line in text.splitlines() if line.count("│") > 3}
    assert rows["alice"][1] == "draining", text
    assert rows["bob"][1] == "yes", text
    assert '"draining": true' in json_text, json_text


def test_heartsd_admin_shows_what_bots_send_as_text_never_as_markup(tmp_path, capsys):
    """A bot chooses its hello.version (and an owner or a tournament name comes from
    whoever registered it). rich reads "[/]" or "[link=...]" in a plain string as markup:
    a version of "1.0[/]" crashed `heartsd admin bots` with a MarkupError, and "[red]"
    restyled the organiser's table. Every server string is now drawn as the literal text."""
    versions = {"alice": "1.0[/]", "bob": "[bold red]2.0", "carol": "[link=http://evil.example]3.0[/link]"}

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            base = ["--server", daemon.target, "--admin-token", ADMIN]
            for name, version in versions.items():
                await Bot(daemon, name, random_legal(1), version=version).start()

            def admin(*argv: str) -> tuple[int, str, str]:
                code = cli.main(["admin", *argv])
                out, err = capsys.readouterr()
                return code, out, err

            return await asyncio.to_thread(admin, "bots", *base)

    code, out, err = run(scenario())
    assert code == 0, err
    rows = {line.split("│")[1].strip(): [c.strip() for c in line.split("│")[1:-1]]
            for line in out.splitlines() if line.count("│") > 3}
    for name, version in versions.items():
        assert rows[name][2] == version, out


def test_watch_draws_bot_names_as_text_never_as_markup():
    """A spectator's terminal view names each seat's bot; a name like "[/]" is drawn as it
    is, not read as rich markup (which raised MarkupError and ended `heartsd admin watch`)."""
    view = TableView()
    view.seats = ["a[/]", "[bold]b", "c", "d"]
    console = Console(record=True, width=200, color_system=None)
    console.print(view.render())
    text = console.export_text()
    assert "a[/]" in text and "[bold]b" in text, text


def test_a_rated_match_with_an_explicit_seed_is_refused(tmp_path):
    """Before (an attack pass): CreateMatch(rated, seed=4242) with four ladder bots was
    accepted and counted on the leaderboard, and a bot recovered 4242 from its first hand in
    0.07 s; protocol.md says explicit seeds are for unrated admin matches only."""

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            ladder = daemon.arena.store.ladder
            names = ["l1", "l2", "l3", "l4"]
            tokens = {b: ladder.add_bot(b, b) for b in names}
            bots = [await Bot(daemon, b, random_legal(i), token=tokens[b], max_matches=1).start()
                    for i, b in enumerate(names)]
            try:
                async with daemon.channel() as channel:
                    stub = admin_pb2_grpc.AdminServiceStub(channel)
                    request = _create_request(names)
                    request.rated, request.seed = True, 4242
                    with pytest.raises(grpc.aio.AioRpcError) as refused:
                        await stub.CreateMatch(request, metadata=auth(ADMIN))
                    request.ClearField("seed")
                    drawn = await stub.CreateMatch(request, metadata=auth(ADMIN))
                return refused.value, drawn
            finally:
                for b in bots:
                    await b.close()

    refused, drawn = run(scenario())
    assert refused.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "a rated match draws its own seed" in refused.details()
    assert drawn.match_id and drawn.seed == 0 and drawn.seed_drawn, "the same match with its seed drawn starts (seed not shown)"


def test_create_match_refuses_each_malformed_field_invalid_argument(tmp_path):
    """Every malformed field of a CreateMatchRequest is INVALID_ARGUMENT, which admin.proto now
    lists (an outside client's pass found these refusals unnamed there): an option the preset
    does not take, an empty seat, an unknown house strategy, a negative clock field or
    wait_for_seats_ms, and a rated match that breaks its rules (a configured bot, no fixed
    deals, two of one owner), beside those the proto named already."""
    house = ["house:random"] * 4

    def refused_fields() -> dict[str, admin_pb2.CreateMatchRequest]:
        cases = {name: _create_request(house) for name in ("option", "empty seat", "unknown house", "clock",
                                                            "wait", "rated configured", "rated game")}
        cases["option"].options.target = 60  # classic only
        cases["empty seat"].seats[3].Clear()
        cases["unknown house"].seats[3].house = "nobody"
        cases["clock"].clock.bank_ms = -1
        cases["wait"].wait_for_seats_ms = -1
        cases["rated configured"] = _create_request(["alice", "bob", "carol", "dave"])
        cases["rated configured"].rated = True
        cases["rated game"] = _create_request(["l1", "l2", "l3", "l4"], deals=0)
        cases["rated game"].rated = True
        cases["rated one owner"] = _create_request(["l1", "l2", "l3", "l5"])
        cases["rated one owner"].rated = True
        return cases

    async def scenario():  # type: ignore[no-untyped-def]
        async with running_daemon(tmp_path) as daemon:
            ladder = daemon.arena.store.ladder
            owners = {"l1": "o1", "l2": "o2", "l3": "o3", "l4": "o4", "l5": "o1"}
            tokens = {b: ladder.add_bot(b, o) for b, o in owners.items()}
            bots = [await Bot(daemon, b, random_legal(0), token=t).start() for b, t in tokens.items()]
            bots += [await Bot(daemon, b, random_legal(0)).start() for b in ("alice", "bob", "carol", "dave")]
            codes = {}
            try:
                async with daemon.channel() as channel:
                    stub = admin_pb2_grpc.AdminServiceStub(channel)
                    for name, request in refused_fields().items():
                        try:
                            await stub.CreateMatch(request, metadata=auth(ADMIN))
                            codes[name] = grpc.StatusCode.OK
                        except grpc.aio.AioRpcError as exc:
                            codes[name] = exc.code()
            finally:
                for b in bots:
                    await b.close()
            return codes

    codes = run(scenario())
    assert codes == dict.fromkeys(codes, grpc.StatusCode.INVALID_ARGUMENT) and len(codes) == 8, codes


def test_admin_create_sets_the_ruleset_options(tmp_path, capsys):
    """A conformance pass: `heartsd admin create` could not set what CreateMatch takes (the
    classic target, Hartenjagen with passing, omnibus's moon needing J♦). Each has its flag;
    one the preset does not take is the daemon's refusal, exit 3."""

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            base = ["--server", daemon.target, "--admin-token", ADMIN, "--json"]

            def create(ruleset: str, *flags: str) -> tuple[int, str, str]:
                code = cli.main(["admin", "create", *base, "--ruleset", ruleset, "--deals", "1",
                                 *sum((["--seat", "house:random"] for _ in range(4)), []), *flags])
                out, err = capsys.readouterr()
                return code, out, err

            return [await asyncio.to_thread(create, *case) for case in (
                ("classic", "--target", "60"), ("hartenjagen", "--hartenjagen-passing"),
                ("omnibus", "--moon-requires-bonus"), ("standard", "--target", "60"))]

    classic, hartenjagen, omnibus, refused = run(scenario())
    assert classic[0] == 0 and json.loads(classic[1])["ruleset"]["target"] == 60, classic
    assert hartenjagen[0] == 0 and len(json.loads(hartenjagen[1])["ruleset"]["pass_schedule"]) > 1, hartenjagen
    assert omnibus[0] == 0 and json.loads(omnibus[1])["ruleset"]["moon_requires_bonus"], omnibus
    assert refused[0] == 3 and "options.target applies to classic only, not standard" in refused[2], refused


def test_list_bots_lists_the_connected_bots_while_the_store_does_not_answer(tmp_path, monkeypatch):
    """A review: once ListBots always read the bots' registrations, a store that did not
    answer made a plain `heartsd admin bots` fail with "internal error", when an operator
    needs it most. The connected bots are listed, their registration left unknown; asking
    for every registered bot still needs the store and says so."""
    import sqlite3

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            await Bot(daemon, "alice").start()

            def down() -> None:
                raise sqlite3.OperationalError("disk I/O error")

            monkeypatch.setattr(daemon.arena.store.ladder, "registrations", down)
            async with daemon.channel() as channel:
                stub = admin_pb2_grpc.AdminServiceStub(channel)
                connected = await stub.ListBots(admin_pb2.ListBotsRequest(), metadata=auth(ADMIN))
                with pytest.raises(grpc.aio.AioRpcError) as everyone:
                    await stub.ListBots(admin_pb2.ListBotsRequest(include_registered=True), metadata=auth(ADMIN))
            return connected, everyone.value

    connected, everyone = run(scenario())
    assert [b.name for b in connected.bots] == ["alice"] and connected.bots[0].connected
    assert everyone.code() != grpc.StatusCode.OK


def test_admin_create_says_the_flag_that_waits_for_a_busy_bot_not_the_field():
    """A newcomer's pass: ``heartsd admin create`` on a bot whose slots were all taken said
    "set wait_for_seats_ms to wait for it", the request's field, where the command's flag
    is ``--wait``."""
    import grpc

    from heartsd.admin_cli import translate_error

    class Refusal(grpc.RpcError):
        def code(self) -> grpc.StatusCode:
            return grpc.StatusCode.FAILED_PRECONDITION

        def details(self) -> str:
            return "bot 'l1' has no free match slot (in m-1); set wait_for_seats_ms to wait for it"

    said = str(translate_error(Refusal(), "127.0.0.1:50051"))
    assert said.endswith("; pass --wait SECONDS to wait for it") and "wait_for_seats_ms" not in said, said


def test_graded_house_strategies_sit_wherever_a_house_strategy_does(tmp_path):
    """A newcomer's pass: the README offers graded-Q house strategies "for calibrating a
    field", yet CreateMatch refused house:graded-0 ("unknown house strategy") and so did the
    daemon's ladder_house; only `heartsd tournament local` took them."""
    from heartsd.config import Settings

    assert Settings.load(env={}, flags={"ladder": True, "ladder_house": "graded-0,graded-100r"}).ladder_house == (
        "graded-0", "graded-100r")

    async def scenario():  # type: ignore[no-untyped-def]
        async with running_daemon(tmp_path) as daemon:
            match_id = await daemon.create_match(["house:graded-0", "house:graded-36", "house:graded-100r",
                                                  "house:random"], deals=2)
            for _ in range(600):
                stored = daemon.arena.store.get(match_id)
                if stored is not None and stored.status != "running":
                    return stored
                await asyncio.sleep(0.05)
            return daemon.arena.store.get(match_id)

    stored = run(scenario())
    assert stored.status == "finished" and stored.deals_played == 2, stored


def test_a_ladder_registration_under_a_configured_bots_name_signs_nothing_in(tmp_path):
    """An organiser's pass: `heartsd ladder add-bot bob --owner mallory` beside a configured
    bob was accepted; its token was welcomed as bob, replaced the real bob's stream (which
    then left for good, "replaced by a newer stream of this bot"), and made mallory bob's
    owner. Now such a token is refused UNAUTHENTICATED saying why, the configured bob keeps
    its stream and owner, and the daemon warns of the registration."""
    from structlog.testing import capture_logs

    from heartsd.tokens import REFRESH_S

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            real = await Bot(daemon, "bob").start()
            with capture_logs() as logs:
                impostor = await asyncio.to_thread(daemon.arena.store.ladder.add_bot, "bob", "mallory")
                async with daemon.channel() as channel:
                    call = bot_pb2_grpc.BotServiceStub(channel).Play(
                        iter([bot_pb2.PlayRequest(hello=bot_pb2.Hello(name="bob", version="impostor"))]),
                        metadata=auth(impostor))
                    with pytest.raises(grpc.aio.AioRpcError) as refused:
                        async for _ in call:
                            pass
                    await asyncio.sleep(REFRESH_S + 0.5)  # the registry's next read of the ladder warns
                    listed = await admin_pb2_grpc.AdminServiceStub(channel).ListBots(
                        admin_pb2.ListBotsRequest(), metadata=auth(ADMIN))
            session = daemon.arena.sessions.get("bob")
            owners = await asyncio.to_thread(daemon.arena.owners)
            match_id = await daemon.create_match(["bob", "house:random", "house:random", "house:random"])
            await real.wait_ended(match_id)
            await real.close()
            return refused.value, session is not None and session.version == "test", owners, listed, logs

    refused, kept, owners, listed, logs = run(scenario())
    assert refused.code() == grpc.StatusCode.UNAUTHENTICATED, refused
    assert "bot 'bob' is configured in this daemon's [bot_tokens]" in refused.details(), refused.details()
    assert kept, "the configured bob keeps its stream"
    assert owners.get("bob", "bob") == "bob", owners  # not mallory: a configured bot not in [bot_owners] owns itself
    assert {b.name: b.owner for b in listed.bots}.get("bob") == "bob", listed
    assert any(e["event"].startswith("ladder registrations under the names of configured bots") and e["bots"] == ["bob"]
               for e in logs), logs
