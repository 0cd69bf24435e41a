"""Token rotation lets the old session finish its running matches (it drains, then ends
cleanly); revocation ends it at once. Both done by `heartsd ladder` in another process, as
an organiser does, against a live daemon over real gRPC."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import grpc
from heartsbot.proto import bot_pb2, game_pb2

from heartsd.matchmaker import LadderSettings, Matchmaker

from .harness import Bot, first_legal, run, running_daemon

P = game_pb2
HEARTSD = [sys.executable, "-m", "heartsd.cli"]


async def slow(request, bot):
    await asyncio.sleep(0.01)
    return first_legal(request, bot)


async def ladder_with_a_rated_match(daemon, names):
    ladder = daemon.arena.store.ladder
    tokens = {n: ladder.add_bot(n, f"o-{n}") for n in names}
    bots = {n: await Bot(daemon, n, slow, token=tokens[n], max_matches=2).start() for n in names}
    maker = Matchmaker(daemon.arena, LadderSettings(deals=4, interval_s=0.05), seed=1)
    await asyncio.to_thread(maker._refresh)
    created = await maker.tick()
    assert len(created) == 1
    runner = daemon.arena.runners[created[0]]
    while len(runner.decisions) < 12:
        await asyncio.sleep(0.005)
    return tokens, bots, maker, created[0]


async def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return await asyncio.to_thread(subprocess.run, [*HEARTSD, *args], capture_output=True, text=True, timeout=60)


def test_rotation_drains_the_old_session_which_finishes_its_rated_match(tmp_path):
    names = ["r1", "r2", "r3", "r4"]

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            tokens, bots, maker, match_id = await ladder_with_a_rated_match(daemon, names)
            rotated = await cli("ladder", "rotate", "r1", "--db", daemon.settings.db_path)
            new_token = rotated.stdout.strip().splitlines()[-1]
            await asyncio.to_thread(maker._refresh)
            await maker.tick()  # notices the rotation; seats nobody (r1 drains, the others are busy)
            session = daemon.arena.sessions.get("r1")
            draining = session is not None and session.drain_reason
            await asyncio.wait_for(bots["r1"]._task, 60)  # the old stream ends after its match
            old = await Bot(daemon, "r1", token=tokens["r1"]).start()
            await asyncio.sleep(0.3)
            fresh = await Bot(daemon, "r1", token=new_token).start()
            for b in (*bots.values(), old, fresh):
                await b.close()
            return (rotated, draining, bots["r1"], await bots["r1"]._call.code(), await old.status(),
                    fresh.welcome is not None, daemon.stored(match_id))

    rotated, draining, bot, code, old_status, fresh_ok, stored = run(scenario())
    assert rotated.returncode == 0 and rotated.stdout.startswith("new token for r1")
    assert draining == "token rotated"
    reasons = [(m.draining.reason, m.draining.cause) for m in bot.received if m.HasField("draining")]
    assert reasons == [("token rotated", bot_pb2.DRAIN_CAUSE_TOKEN_ROTATED)] * 2
    assert code == grpc.StatusCode.OK, "the old session ended cleanly"
    assert stored.status == "finished"
    seat = [s.name for s in stored.record.seats].index("r1")
    assert {d.provenance for d in stored.record.decisions if d.seat == seat} == {P.PROVENANCE_BOT}
    assert old_status == grpc.StatusCode.UNAUTHENTICATED, "the old token opens no new stream"
    assert fresh_ok


def test_revocation_ends_the_session_at_once(tmp_path):
    names = ["v1", "v2", "v3", "v4"]

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            tokens, bots, maker, match_id = await ladder_with_a_rated_match(daemon, names)
            revoked = await cli("ladder", "revoke", "v1", "--db", daemon.settings.db_path)
            await asyncio.to_thread(maker._refresh)
            await maker.tick()
            await asyncio.wait_for(bots["v1"]._task, 5)  # at once, not after the match
            still_running = match_id in daemon.arena.runners
            await daemon.wait_finished(match_id)
            for b in bots.values():
                await b.close()
            return revoked, still_running, bots["v1"], daemon.stored(match_id)

    revoked, still_running, bot, stored = run(scenario())
    assert revoked.returncode == 0
    assert still_running, "the stream ended while the match was still on"
    assert not any(m.HasField("draining") for m in bot.received)
    seat = [s.name for s in stored.record.seats].index("v1")
    assert P.PROVENANCE_BOT in {d.provenance for d in stored.record.decisions if d.seat == seat}
    assert {d.provenance for d in stored.record.decisions if d.seat == seat} - {P.PROVENANCE_BOT}, \
        "its remaining decisions were defaulted"
