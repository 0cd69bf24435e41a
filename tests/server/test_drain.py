"""Leaving cleanly: `drain` finishes the running matches and takes no new ones (real gRPC)."""

from __future__ import annotations

import asyncio

import grpc
from heartsbot.proto import admin_pb2, admin_pb2_grpc, bot_pb2, game_pb2

from .harness import ADMIN, Bot, auth, first_legal, run, running_daemon

P = game_pb2
HOUSE3 = ["house:random"] * 3
DRAIN = bot_pb2.PlayRequest(drain=bot_pb2.Drain(reason="going home"))


def drainings(bot: Bot) -> list[bot_pb2.Draining]:
    return [m.draining for m in bot.received if m.HasField("draining")]


def test_drain_finishes_the_running_match_takes_no_new_one_and_ends_the_stream_ok(tmp_path):
    async def slow(request, bot):
        await asyncio.sleep(0.01)
        return first_legal(request, bot)

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            alice = await Bot(daemon, "alice", slow, max_matches=4).start()
            match_id = await daemon.create_match(["alice", *HOUSE3], deals=2, seed=3)
            runner = daemon.arena.runners[match_id]
            while sum(d.seat == 0 for d in runner.decisions) < 3:
                await asyncio.sleep(0.005)
            alice.send(DRAIN)
            while not drainings(alice):
                await asyncio.sleep(0.005)
            first = drainings(alice)[0]
            try:
                await daemon.create_match(["alice", *HOUSE3], deals=1)
                refused = None
            except grpc.aio.AioRpcError as exc:
                refused = exc
            async with daemon.channel() as channel:
                listed = await admin_pb2_grpc.AdminServiceStub(channel).ListBots(
                    admin_pb2.ListBotsRequest(), metadata=auth(ADMIN))
            alice.send(DRAIN)  # twice: nothing changes
            await asyncio.wait_for(alice._task, 60)
            return (first, refused, listed, alice, await alice._call.code(), await alice._call.details(),
                    daemon.stored(match_id))

    first, refused, listed, alice, code, details, stored = run(scenario())
    assert list(first.active_matches) == [stored.id] and first.reason == "going home"
    assert refused is not None and refused.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "draining" in refused.details() and "takes no new one" in refused.details()
    assert [b.draining for b in listed.bots if b.name == "alice"] == [True]
    assert stored.status == "finished" and stored.record.result.deals == 2
    mine = [d for d in stored.record.decisions if d.seat == 0]
    assert mine and all(d.provenance == P.PROVENANCE_BOT for d in mine), "it played the match to its end itself"
    # The last messages: its match_ended, then a draining with no active match; then OK.
    kinds = [m.WhichOneof("kind") for m in alice.received]
    assert kinds[-1] == "draining" and not alice.received[-1].draining.active_matches
    assert any(e.HasField("match_ended") for e in alice.received[-2].update.events)
    assert len(drainings(alice)) == 2, "one acknowledgement, one final message"
    assert code == grpc.StatusCode.OK


def test_drain_with_no_running_match_ends_the_stream_at_once(tmp_path):
    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            bob = await Bot(daemon, "bob").start()
            bob.send(DRAIN)
            await asyncio.wait_for(bob._task, 10)
            reconnected = await Bot(daemon, "bob").start()  # a new stream is seatable again
            match_id = await daemon.create_match(["bob", *HOUSE3], deals=1)
            await reconnected.wait_ended(match_id)
            await reconnected.close()
            return bob, await bob._call.code()

    bob, code = run(scenario())
    assert code == grpc.StatusCode.OK
    assert [m.WhichOneof("kind") for m in bob.received] == ["welcome", "draining"]


def test_the_matchmaker_never_seats_a_draining_bot(tmp_path):
    from heartsd.matchmaker import LadderSettings, Matchmaker

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            ladder = daemon.arena.store.ladder
            names = ["d1", "d2", "d3", "d4", "d5"]
            tokens = {n: ladder.add_bot(n, f"o-{n}") for n in names}
            async def slow(request, bot):
                await asyncio.sleep(0.02)
                return first_legal(request, bot)

            bots = {n: await Bot(daemon, n, slow, token=tokens[n], max_matches=2).start() for n in names}
            bots["d1"].send(DRAIN)  # no match: its stream ends
            await asyncio.wait_for(bots["d1"]._task, 10)
            busy = await daemon.create_match(["d2", *HOUSE3], deals=2)  # d2 drains with a free slot left
            bots["d2"].send(bot_pb2.PlayRequest(drain=bot_pb2.Drain()))
            while not daemon.arena.sessions.get("d2").drain_reason:
                await asyncio.sleep(0.005)
            assert daemon.arena.runners.get(busy) is not None, "d2 is still playing"
            maker = Matchmaker(daemon.arena, LadderSettings(deals=4, interval_s=0.05), seed=2)
            await asyncio.to_thread(maker._refresh)
            candidates = maker.candidates()
            created = await maker.tick()
            for b in bots.values():
                await b.close()
            return candidates, created

    candidates, created = run(scenario())
    assert "d1" not in candidates and "d2" not in candidates
    assert sorted(candidates) == ["d3", "d4", "d5"] and created == [], "three bots cannot fill a table"
