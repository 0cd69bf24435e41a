"""The shuffle ledger: no bot is ever dealt a shuffle twice (issue 12, point 1).

A shuffle is identified by what it deals (shuffles.py); the store keeps who was dealt
which, with UNIQUE (bot, fingerprint), written with the running match before any card is
dealt, on SQLite and PostgreSQL alike.
"""

from __future__ import annotations

import asyncio

import grpc
import pytest
from heartsbot.proto import game_pb2

from hearts_engine import Match, MatchFormat, preset
from hearts_engine.shuffle import deal_hands
from heartsbot import convert
from heartsd import shuffles
from heartsd.store import NewMatch, ShuffleRepeated, Store

from .harness import Bot, random_legal, run, running_daemon

P = game_pb2
STD = preset("standard")


def test_a_fingerprint_names_the_hands_dealt_not_the_seats_or_the_seed():
    hands = deal_hands(5, 0, STD.deck, 4)
    assert shuffles.fingerprint(hands) == shuffles.fingerprint(hands[::-1]) == shuffles.fingerprint(hands[1:] + hands[:1])
    assert shuffles.fingerprint(hands) != shuffles.fingerprint(deal_hands(5, 1, STD.deck, 4))
    rotated = shuffles.deal_fingerprints(STD, MatchFormat.fixed(8, duplicate=True), 9)
    assert len(set(rotated)) == 2  # in-match duplicate: two shuffles, each dealt four times
    plain = shuffles.deal_fingerprints(STD, MatchFormat.fixed(8), 9)
    assert len(set(plain)) == 8 and plain[0] == rotated[0]
    # what a record holds (card lists per seat) gives the same fingerprint
    match = Match(STD, MatchFormat.fixed(1), 9)
    cards = [[c for c in range(52) if h >> c & 1] for h in match.deal.dealt]
    assert shuffles.hands_fingerprint(cards) == plain[0]


def test_each_bot_is_dealt_a_shuffle_at_most_once_strict_and_lenient(store_url):
    one, two = Store(store_url, instance="a"), Store(store_url, instance="b")  # two daemons, one store
    fps = shuffles.deal_fingerprints(STD, MatchFormat.fixed(4), 77)
    one.start([NewMatch("m-1", "standard", 4, ["ann", "bo", "house:random", "house:random"], 77, fps)], strict=True)
    assert sorted(r[0] for r in one.dealt("m-1")) == sorted(["ann", "bo", "house:random"] * 4)
    for seats in (["cy", "di", "ed", "fay"], ["ann", "cy", "di", "ed"]):  # anyone, or a bot who had it
        with pytest.raises(ShuffleRepeated) as seen:
            two.start([NewMatch("m-2", "standard", 4, seats, 77, fps)], strict=True)
        assert (seen.value.match_id, seen.value.deal) == ("m-1", 0)
        assert two.get("m-2") is None  # nothing was inserted
    # An organiser's explicit seed (not strict): allowed, ann keeps her first row only.
    two.start([NewMatch("m-3", "standard", 4, ["ann", "cy", "di", "ed"], 77, fps)], strict=False)
    rows = two.dealt()
    assert sum(1 for r in rows if r[0] == "ann") == 4 and {r[2] for r in rows if r[0] == "ann"} == {"m-1"}
    assert len({(r[0], r[1]) for r in rows}) == len(rows)
    # The constraint itself holds whatever the code above it does.
    with pytest.raises(Exception):
        with one.db.transaction() as tx:
            tx.execute("INSERT INTO dealt_shuffles (bot, fingerprint, match_id, deal, created_ms) VALUES (?, ?, ?, ?, ?)",
                       ("ann", fps[0], "m-9", 0, 0))
    # A game's next chunk is refused the same way.
    with pytest.raises(ShuffleRepeated):
        two.reserve_shuffles("m-3", ["gus"], 4, fps[1:2], strict=True)
    one.close()
    two.close()


def test_a_bots_remote_seat_never_plays_in_match_duplicate_but_house_seats_may(tmp_path):
    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            bot = await Bot(daemon, "alice", random_legal(1)).start()
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await daemon.create_match(["alice", "house:random", "house:random", "house:random"], deals=4,
                                          duplicate=True)
            house = await daemon.create_match(["house:random"] * 4, deals=8, duplicate=True)
            await daemon.wait_finished(house)
            await bot.close()
            return refused.value, daemon.stored(house), daemon.arena.store.dealt(house)

    refused, house, rows = run(scenario())
    assert refused.code() == grpc.StatusCode.INVALID_ARGUMENT and "in-match duplicate" in refused.details()
    assert house.status == "finished"
    assert [r[3] for r in rows] == [0, 4] and len({r[1] for r in rows}) == 2  # its two shuffles, marked once


def test_the_shuffles_of_a_cancelled_match_are_never_dealt_again_in_rated_play(tmp_path):
    """Fails on the code before the ledger: nothing stopped a rated match from replaying a
    seed, so the bots of a cancelled match (and everyone who read its record) knew the hands
    (checked on aa595a6, with format.duplicate, which rated play required then: it started)."""

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            ladder = daemon.arena.store.ladder
            names = ["s1", "s2", "s3", "s4"]
            tokens = {n: ladder.add_bot(n, f"o-{n}") for n in names}
            bots = [await Bot(daemon, n, lambda request, bot: None, token=tokens[n]).start() for n in names]
            first = await daemon.create_match(names, deals=4, seed=1234)
            async with daemon.channel() as channel:
                from heartsbot.proto import admin_pb2, admin_pb2_grpc

                from .harness import ADMIN, auth
                await admin_pb2_grpc.AdminServiceStub(channel).CancelMatch(
                    admin_pb2.CancelMatchRequest(match_id=first), metadata=auth(ADMIN))
            outcomes = []
            for seats in (names, names[::-1]):  # the same bots, or reseated: the same shuffles
                try:
                    await daemon.create_match(seats, deals=4, seed=1234, rated=True)
                    outcomes.append("started")
                except grpc.aio.AioRpcError as exc:
                    outcomes.append((exc.code(), exc.details()))
            from heartsbot.proto import admin_pb2, game_pb2
            from heartsd.arena import SeatRequest, SeedRefused

            with pytest.raises(SeedRefused) as strict:  # a tournament's explicit seeds are strict
                await daemon.arena.create_match("standard", 4, admin_pb2.RulesetOptions(),
                                                game_pb2.MatchFormat(fixed_deals=4), 1234,
                                                [SeatRequest(bot=n) for n in names], game_pb2.ClockSettings(),
                                                strict=True)
            for b in bots:
                await b.close()
            return first, outcomes, daemon.stored(first), strict.value

    first, outcomes, stored, strict = run(scenario())
    assert stored.status == "cancelled"
    assert strict.kind == "precondition" and first in strict.message and "never repeats" in strict.message
    for outcome in outcomes:  # refused before the ledger is asked: a rated match takes no explicit seed at all
        assert outcome != "started"
        code, details = outcome
        assert code == grpc.StatusCode.INVALID_ARGUMENT and "a rated match draws its own seed" in details


def test_a_drawn_seed_that_would_repeat_a_shuffle_is_replaced(tmp_path, monkeypatch):
    import heartsd.arena

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            old = await daemon.create_match(["house:random"] * 4, deals=2, seed=42)
            await daemon.wait_finished(old)
            draws = iter([42, 43])
            monkeypatch.setattr(heartsd.arena.secrets, "randbits", lambda bits: next(draws))
            new = await daemon.create_match(["house:random"] * 4, deals=2)  # the server draws
            await daemon.wait_finished(new)
            return daemon.stored(new)

    assert run(scenario()).seed == 43


def test_a_game_reserves_its_shuffles_in_chunks_before_dealing_them(tmp_path):
    """A game has no fixed length: its shuffles go into the ledger GAME_CHUNK deals at a
    time, each chunk before its first deal is dealt (a classic game to 400 points lasts
    well beyond one chunk)."""

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            match_id = await daemon.create_match(["house:random"] * 4, ruleset="classic", deals=0,
                                                 options={"target": 400})
            runner = daemon.arena.runners[match_id]
            await daemon.wait_finished(match_id, timeout=120)
            return runner, daemon.stored(match_id), daemon.arena.store.dealt(match_id)

    runner, stored, rows = run(scenario())
    assert stored.status == "finished" and stored.deals_played > shuffles.GAME_CHUNK
    reserved = {r[3]: r[1] for r in rows}
    dealt = [shuffles.hands_fingerprint([convert.cards_from_wire(h.cards) for h in d.hands]) for d in stored.record.deals]
    assert all(reserved[i] == fp for i, fp in enumerate(dealt))  # every deal dealt was reserved
    assert len(reserved) <= stored.deals_played + shuffles.GAME_CHUNK + shuffles.GAME_PREFETCH  # one chunk ahead at most
    assert runner.reserved_deals == len(reserved) and len(reserved) % shuffles.GAME_CHUNK == 0


def test_a_rated_match_and_its_ledger_rows_are_written_together(tmp_path):
    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            ladder = daemon.arena.store.ladder
            names = ["q1", "q2", "q3", "q4"]
            tokens = {n: ladder.add_bot(n, f"o-{n}") for n in names}
            seen_rows = []

            def policy(request, bot):  # at the first request, the ledger already holds every deal
                if not seen_rows:
                    seen_rows.append(len(daemon.arena.store.dealt()))
                return random_legal(0)(request, bot)

            bots = [await Bot(daemon, n, policy, token=tokens[n]).start() for n in names]
            match_id = await daemon.create_match(names, deals=3, rated=True)
            await bots[0].wait_ended(match_id)
            for b in bots:
                await b.close()
            await asyncio.sleep(0)
            return seen_rows, daemon.stored(match_id), daemon.arena.store.dealt(match_id)

    seen_rows, stored, rows = run(scenario())
    assert seen_rows == [12]
    dealt = [shuffles.hands_fingerprint([convert.cards_from_wire(h.cards) for h in d.hands])
             for d in stored.record.deals]
    assert sorted(rows) == sorted((b, dealt[d], stored.id, d) for b in ["q1", "q2", "q3", "q4"] for d in range(3))
