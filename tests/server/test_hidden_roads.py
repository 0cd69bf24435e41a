"""The other roads to hidden cards (issue 12, point 4). Each test failed on the code
before this change: there, a second daemon on the store served a running match's
checkpoint (its seed gives every later deal), CreateMatch answered a drawn seed, and a
delayed spectator got a deal's four hands ``delay`` after the deal *started*."""

from __future__ import annotations

import asyncio
import time

import grpc

from heartsbot.proto import admin_pb2, admin_pb2_grpc, game_pb2, spectator_pb2, spectator_pb2_grpc
from heartsd import runner as runner_module

from .harness import ADMIN, auth, run, running_daemon


def test_no_daemon_serves_the_record_of_a_match_running_on_another_daemon(tmp_path, monkeypatch):
    monkeypatch.setattr(runner_module, "CHECKPOINT_EVERY_S", 0.0)  # a checkpoint (with the seed) at every deal's end
    db = str(tmp_path / "shared.db")

    async def scenario():
        async with running_daemon(tmp_path, db=db, instance="a", house_delay_ms=3) as a, \
                running_daemon(tmp_path, db=db, instance="b") as b:
            match_id = await a.create_match(["house:random"] * 4, deals=6)
            runner = a.arena.runners[match_id]
            stored = b.stored(match_id)
            while stored.record is None or len(runner.match.results) < 2:  # a checkpoint (seed included) is stored
                await asyncio.sleep(0.02)
                stored = b.stored(match_id)
            out = {}
            async with b.channel() as channel:
                stub = spectator_pb2_grpc.SpectatorServiceStub(channel)
                try:
                    await stub.GetMatchRecord(spectator_pb2.GetMatchRecordRequest(match_id=match_id))
                    out["record"] = "served"
                except grpc.aio.AioRpcError as exc:
                    out["record"] = (exc.code(), exc.details())
                try:
                    async for _ in stub.WatchMatch(spectator_pb2.WatchMatchRequest(match_id=match_id)):
                        break
                    out["watch"] = "served"
                except grpc.aio.AioRpcError as exc:
                    out["watch"] = (exc.code(), exc.details())
            still_running = runner.playing
            await a.wait_finished(match_id)
            async with b.channel() as channel:
                out["after"] = (await spectator_pb2_grpc.SpectatorServiceStub(channel).GetMatchRecord(
                    spectator_pb2.GetMatchRecordRequest(match_id=match_id))).record.seed
            return stored, still_running, out, runner.match.seed

    stored, still_running, out, seed = run(scenario())
    assert stored.status == "running" and stored.record is not None and still_running  # the checkpoint exists
    assert out["record"] != "served", "the other daemon served a running match's checkpoint, seed included"
    assert out["record"][0] == grpc.StatusCode.FAILED_PRECONDITION and "another daemon" in out["record"][1]
    assert out["watch"][0] == grpc.StatusCode.FAILED_PRECONDITION and "another daemon" in out["watch"][1]
    assert out["after"] == seed  # once it is over, any daemon serves it


def test_a_seed_the_server_drew_leaves_it_only_in_the_record_once_the_match_is_over(tmp_path):
    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            async with daemon.channel() as channel:
                admin = admin_pb2_grpc.AdminServiceStub(channel)
                request = admin_pb2.CreateMatchRequest(ruleset="standard", players=4)
                for _ in range(4):
                    request.seats.add(house="random")
                request.format.fixed_deals = 1
                drawn = await admin.CreateMatch(request, metadata=auth(ADMIN))
                request.seed = 77
                given = await admin.CreateMatch(request, metadata=auth(ADMIN))
                request.seed = 0  # a seed like any other: dealt and told, not "drawn"
                zero = await admin.CreateMatch(request, metadata=auth(ADMIN))
            await daemon.wait_finished(drawn.match_id)
            return drawn, given, zero, daemon.stored(drawn.match_id)

    drawn, given, zero, stored = run(scenario())
    assert drawn.seed == 0 and drawn.seed_drawn and stored.record.seed != 0
    assert given.seed == 77 and not given.seed_drawn  # the organiser's own seed is no secret to them
    # Before (a contract check), 0 meant "drawn" too, and a request's explicit seed 0 was not told apart.
    assert zero.seed == 0 and not zero.seed_drawn


def test_a_delayed_spectator_sees_a_deals_hands_only_after_it_ended_and_the_delay_passed(tmp_path):
    delay = 0.3

    async def scenario():
        async with running_daemon(tmp_path, spectator_delay_s=delay, house_delay_ms=12) as daemon:
            match_id = await daemon.create_match(["house:random"] * 4, deals=2, seed=5)
            runner = daemon.arena.runners[match_id]
            seen = []  # (event, deals ended when it arrived, seconds since that deal's release)
            async with daemon.channel() as channel:
                stub = spectator_pb2_grpc.SpectatorServiceStub(channel)
                async for response in stub.WatchMatch(spectator_pb2.WatchMatchRequest(match_id=match_id)):
                    now = time.monotonic()
                    for event in response.events:
                        seen.append((event, runner.deals_completed, now))
            return seen, runner

    seen, runner = run(scenario())
    hands_shown = [(e.deal_started, completed, at) for e, completed, at in seen
                   if e.HasField("deal_started") and len(e.deal_started.hands) == 4]
    assert [s.deal_number for s, _, _ in hands_shown] == [0, 1]
    for started, completed, at in hands_shown:
        assert completed > started.deal_number, f"deal {started.deal_number}'s hands shown while it was played"
        assert at >= runner.releases.release_time(started.deal_number) + delay
    assert seen[-1][0].HasField("match_ended")


def test_a_house_bots_random_choices_are_not_seeded_from_the_match_seed(tmp_path):
    """Before (an attack pass): a house strategy's generator was Python's ``random`` seeded
    with the match's seed plus its seat, and the match's seed gives every hand: the house
    bots' observable choices (a random bot's cards, in every ladder match) were a function of
    the secret seed, and two matches of seeds S and S + 1 had house seats with the same
    generator. Now the generator's seed is a hash of (match seed, seat): nothing the house
    bots do is arithmetic of the seed, and getting back to it means trying every seed."""
    import random

    from heartsd.arena import SeatRequest

    async def scenario():  # type: ignore[no-untyped-def]
        async with running_daemon(tmp_path) as daemon:
            arena = daemon.arena
            rules, fmt = arena.check_match("standard", 4, admin_pb2.RulesetOptions(),
                                           game_pb2.MatchFormat(fixed_deals=1), [SeatRequest(house="random")] * 4, False)
            policy = arena._policy(game_pb2.ClockSettings())
            return [[slot.house.rng.getstate() for slot in arena.new_runner(
                rules, fmt, seed, [SeatRequest(house="random")] * 4, policy, False, True).seats] for seed in (77, 78)]

    first, second = run(scenario())
    assert all(state != random.Random(77 + seat).getstate() for seat, state in enumerate(first))
    assert first[1] != second[0]  # before: both Random(78)
    assert len({s for states in (first, second) for s in map(str, states)}) == 8
