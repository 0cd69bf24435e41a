"""A bot's new stream is brought up to date as it reads (heartsd.catchup).

Found by an attack pass: a bot seated in many matches that hung (stopped reading and
answering) for ~90 s, then restarted and reconnected like any bot, was owed more than
the stream's outbox may hold. Every seat's backlog was queued at once, the outbox's
bound (meant for a bot that does not read) ended the stream RESOURCE_EXHAUSTED "not
reading", and so on at every reconnect: the bot was locked out of its matches. And a
bot reconnecting in a loop had the server build the whole backlog of every match on
every stream, read or not.
"""

from __future__ import annotations

import asyncio

import grpc

from heartsbot.proto import bot_pb2, bot_pb2_grpc, game_pb2
from heartsd.catchup import LOW_WATER_BYTES
from heartsd.runner import EVENTS_PER_PART, MatchRunner

from .harness import BOTS, Bot, auth, first_legal, run, running_daemon, session_of

HOUSE3 = ["house:random"] * 3
MATCHES = 6
OUTBOX = 64 * 1024  # the smallest max_outbox_bytes: a backlog of a few matches is far more


async def away_in_long_matches(daemon, owed_bytes: int) -> list[str]:
    """alice connects, is seated in MATCHES long matches against house seats, and goes away
    without answering; her seats are played by the server's defaults until she is owed
    more than ``owed_bytes`` (at ~41 bytes an event) in every match."""
    first = await Bot(daemon, "alice", policy=lambda request, bot: None, max_matches=MATCHES).start()
    matches = [await daemon.create_match(["alice", *HOUSE3], deals=1000, seed=i) for i in range(MATCHES)]
    await first.drop()
    runners = [daemon.arena.runners[m] for m in matches]
    for _ in range(3000):
        owed = [r.log_events.last_sequence - r.replay_from(r.seats[0]) for r in runners]
        if min(owed) * 41 > owed_bytes:
            return matches
        await asyncio.sleep(0.01)
    raise AssertionError(f"the matches did not move on: {owed}")


def test_a_bot_owed_more_than_its_outbox_holds_is_let_back_in_and_plays(tmp_path):
    """Before: the stream ended RESOURCE_EXHAUSTED ("not reading") right after its
    welcome, though the bot read everything. Now it gets every event it missed, in
    order and in parts, then its requests, and answers them."""

    async def scenario():
        async with running_daemon(tmp_path, max_outbox_bytes=OUTBOX, grace_ms=50, auto_after=1) as daemon:
            matches = await away_in_long_matches(daemon, 2 * OUTBOX)
            back = await Bot(daemon, "alice", first_legal, max_matches=MATCHES).start()
            answered = {}
            for _ in range(3000):  # until a decision of hers was played in every match since
                for m in matches:
                    runner = daemon.arena.runners.get(m)
                    if runner is not None and m not in answered and any(
                            d.seat == 0 and d.provenance == game_pb2.PROVENANCE_BOT for d in runner.decisions[-50:]):
                        answered[m] = True
                if len(answered) == len(matches) or await back.status() is not None:
                    break
                await asyncio.sleep(0.01)
            status = await back.status()
            details = await back._call.details() if status is not None else ""
            await back.close()
            return matches, back, answered, status, details

    matches, back, answered, status, details = run(scenario())
    assert status is None, f"the stream ended {status}: {details}"
    assert len(answered) == len(matches), "she answered in every match"
    for m in matches:
        sequences = [e.sequence for e in back.events[(m, 0)]]
        assert sequences == list(range(sequences[0], sequences[-1] + 1)), "in order, none skipped or twice"
        updates = [r.update for r in back.received if r.HasField("update") and r.update.match_id == m]
        assert len(updates[0].events) == EVENTS_PER_PART and not updates[0].HasField("request"), "in parts"
    assert max(r.ByteSize() for r in back.received) < 4 * EVENTS_PER_PART * 64


def test_a_stream_that_does_not_read_is_not_made_what_it_is_owed(tmp_path):
    """Before: every new stream had the whole backlog of every match built and queued at
    once, whether it read or not, so reconnecting in a loop cost the server the whole
    backlog each time. Now only what fills the outbox to its low-water mark is made,
    beyond what the stream's transport takes: its HTTP/2 window, 64 KiB here (grpc-core's
    window-growing probe is off: on, a client that reads nothing still takes ~7 MB)."""

    async def scenario():
        async with running_daemon(tmp_path, grace_ms=50, auto_after=1) as daemon:
            matches = await away_in_long_matches(daemon, 400_000)
            runners = [daemon.arena.runners[m] for m in matches]
            async with grpc.aio.insecure_channel(daemon.target, options=[("grpc.http2.bdp_probe", 0)]) as channel:
                call = bot_pb2_grpc.BotServiceStub(channel).Play(metadata=auth(BOTS["alice"]))
                await call.write(bot_pb2.PlayRequest(hello=bot_pb2.Hello(name="alice", max_concurrent_matches=MATCHES)))
                await call.read()  # the welcome; nothing more is read
                session = await session_of(daemon, "alice")
                await asyncio.sleep(0.5)
                made = sum(r.seats[0].delivered - r.replay_from(r.seats[0]) for r in runners)
                owed = sum(r.log_events.last_sequence - r.replay_from(r.seats[0]) for r in runners)
                waiting = session.outbox.bytes
                held = sum(getattr(r.seats[0], "catching_up", None) is session for r in runners)
                call.cancel()
        return made, owed, waiting, held

    made, owed, waiting, held = run(scenario())
    assert made < owed / 4, (made, owed)
    assert waiting < 2 * LOW_WATER_BYTES
    assert held >= MATCHES - 1, "the seats not yet made wait their turn"


def test_a_resume_from_the_start_comes_in_parts_with_the_request_last(tmp_path):
    """A ``resume`` from sequence 0 re-sends a whole match: before, as one message (at
    1,000 deals ~3.4 MB, near gRPC's default 4 MiB a client may receive). Now in parts of
    EVENTS_PER_PART events, the pending request with the last."""

    async def scenario():
        async with running_daemon(tmp_path, grace_ms=50, auto_after=1) as daemon:
            matches = await away_in_long_matches(daemon, 3 * EVENTS_PER_PART * 41)
            resumed = []

            def resume_once(request, bot):
                if not resumed:
                    resumed.append(request.request_id)
                    bot.send(bot_pb2.PlayRequest(resume=bot_pb2.Resume(match_id=matches[0], seat=0, last_sequence=0)))
                    return None  # answered when it comes again, after the resume
                return first_legal(request, bot)

            back = await Bot(daemon, "alice", resume_once, max_matches=MATCHES).start()
            for _ in range(3000):
                if replayed(back, matches[0]) is not None:
                    break
                await asyncio.sleep(0.01)
            await back.close()
            return replayed(back, matches[0])

    replay = run(scenario())
    assert replay is not None, "the whole match came again, with its request"
    whole = next(i for i, u in enumerate(replay) if u.HasField("request"))
    assert whole >= 2, "a whole match comes in parts"
    assert all(len(u.events) == EVENTS_PER_PART for u in replay[:whole])
    sequences = [e.sequence for u in replay[:whole + 1] for e in u.events]
    assert sequences == list(range(1, len(sequences) + 1))


def replayed(back: Bot, match_id: str) -> list[bot_pb2.MatchUpdate] | None:
    """The updates of ``match_id`` from the last that starts at its first event (the
    automatic replay from an unanswered seat's start also does), once one has a request."""
    updates = [r.update for r in back.received if r.HasField("update") and r.update.match_id == match_id]
    starts = [i for i, u in enumerate(updates) if u.events and u.events[0].sequence == 1]
    if len(starts) < 2:
        return None
    tail = updates[starts[-1]:]
    return tail if any(u.HasField("request") for u in tail) else None


def test_a_match_that_ended_while_its_bot_was_away_is_kept_in_parts(tmp_path):
    """What a seat missed of a match that ended meanwhile was kept as one update: a whole
    match at 1,000 deals, ~3.4 MB in one message. Now in parts, in order, to match_ended."""

    async def scenario():
        async with running_daemon(tmp_path, grace_ms=50, auto_after=1) as daemon:
            first = await Bot(daemon, "alice", policy=lambda request, bot: None).start()
            match_id = await daemon.create_match(["alice", *HOUSE3], deals=40, seed=3)
            await first.drop()
            await daemon.wait_finished(match_id, timeout=120)
            back = await Bot(daemon, "alice", first_legal).start()
            await back.wait_ended(match_id, timeout=30)
            await back.close()
            return match_id, back

    match_id, back = run(scenario())
    updates = [r.update for r in back.received if r.HasField("update") and r.update.match_id == match_id]
    assert len(updates) >= 3 and all(len(u.events) == EVENTS_PER_PART for u in updates[:-1])
    sequences = [e.sequence for u in updates for e in u.events]
    assert sequences == list(range(sequences[0], sequences[-1] + 1))
    assert updates[-1].events[-1].HasField("match_ended")


def test_a_draining_stream_ends_only_after_what_it_was_owed(tmp_path):
    """A draining session ends (OK) once its matches are over: its final ``draining`` must
    come after every part it was owed, not before the parts still waiting their turn."""

    async def scenario():
        async with running_daemon(tmp_path, max_outbox_bytes=OUTBOX, grace_ms=50, auto_after=1) as daemon:
            first = await Bot(daemon, "alice", policy=lambda request, bot: None).start()
            match_id = await daemon.create_match(["alice", *HOUSE3], deals=40, seed=5)
            await first.drop()
            await daemon.wait_finished(match_id, timeout=120)
            back = await Bot(daemon, "alice", first_legal).start()
            back.send(bot_pb2.PlayRequest(drain=bot_pb2.Drain(reason="test")))
            code = await back.final_status(30)
            return match_id, back, code

    match_id, back, code = run(scenario())
    assert code == grpc.StatusCode.OK
    kinds = [r.WhichOneof("kind") for r in back.received]
    assert kinds[-1] == "draining"
    assert back.ended.get(match_id) is not None
    updates = [r.update for r in back.received if r.HasField("update") and r.update.match_id == match_id]
    assert updates[-1].events[-1].HasField("match_ended")


def test_a_failure_while_catching_a_stream_up_ends_it_internal_and_the_server_goes_on(tmp_path):
    """Catching a stream up runs inside its writer: an unexpected error of ours there
    ended the stream with gRPC's UNKNOWN ("Unexpected error"), which the protocol does not
    define. Now it ends INTERNAL with a reason (connect again), as a failure while reading
    a bot's message does, and the match and the daemon go on."""

    class FailingCatchUp(MatchRunner):
        def catch_up(self, slot, session):  # type: ignore[no-untyped-def]
            raise RuntimeError("injected")

    async def scenario():
        async with running_daemon(tmp_path, grace_ms=50, auto_after=1) as daemon:
            daemon.arena.runner_class = FailingCatchUp
            first = await Bot(daemon, "alice", policy=lambda request, bot: None).start()
            match_id = await daemon.create_match(["alice", *HOUSE3], deals=2, seed=1)
            await first.drop()
            back = await Bot(daemon, "alice", first_legal).start()
            code = await back.final_status(10)
            details = await back._call.details()
            daemon.arena.runner_class = MatchRunner
            await daemon.wait_finished(match_id, timeout=60)
            other = await Bot(daemon, "bob", first_legal).start()
            played = await daemon.create_match(["bob", *HOUSE3], deals=1, seed=2)
            result = await other.wait_ended(played, timeout=60)
            await other.close()
            return code, details, daemon.stored(match_id).status, result

    code, details, status, result = run(scenario())
    assert code == grpc.StatusCode.INTERNAL and "connect again" in details, (code, details)
    assert status == "finished"
    assert result.status == game_pb2.MATCH_STATUS_FINISHED


async def stalled_while_matches_end(daemon, matches: int, seed: int):
    """alice, away in ``matches`` 60-deal matches, comes back on a stream that reads its
    welcome and one part, then nothing more, and the matches end meanwhile: (the ids whose
    seat still waited its turn in the catch-up queue, the ended runners the queue still
    holds, what the stream read, each match's last event)."""
    first = await Bot(daemon, "alice", policy=lambda request, bot: None, max_matches=matches).start()
    ids = [await daemon.create_match(["alice", *HOUSE3], deals=60, seed=seed + i) for i in range(matches)]
    await first.drop()
    runners = [daemon.arena.runners[m] for m in ids]
    while min(r.log_events.last_sequence for r in runners) < 3000:
        await asyncio.sleep(0.01)
    received: list[bot_pb2.PlayResponse] = []
    async with grpc.aio.insecure_channel(daemon.target, options=[("grpc.http2.bdp_probe", 0)]) as channel:
        call = bot_pb2_grpc.BotServiceStub(channel).Play(metadata=auth(BOTS["alice"]))
        await call.write(bot_pb2.PlayRequest(hello=bot_pb2.Hello(name="alice", max_concurrent_matches=matches)))
        for _ in range(2):  # the welcome and one part; nothing more is read
            received.append(await call.read())
        session = await session_of(daemon, "alice")
        await asyncio.sleep(0.2)
        # Seats still waiting their turn (the stream reads nothing more: they stay so). The
        # others' ends went to this stream's outbox, which dies unread: for them the
        # protocol says GetMatchRecord.
        waiting = [m for m, r in zip(ids, runners) if getattr(r.seats[0], "catching_up", None) is session]
        for runner in runners:
            await asyncio.wait_for(runner.finished.wait(), 120)
        await asyncio.sleep(0.2)
        queue = daemon.arena._catching_up.get(session)
        held = [] if queue is None else [item for item in queue._owed
                                         if not isinstance(item[0], str) and item[0].id not in daemon.arena.runners]
        call.cancel()
    return waiting, held, received, {m: r.log_events.last_sequence for m, r in zip(ids, runners)}


def test_matches_that_end_while_their_seats_wait_their_turn_are_kept_not_held_or_lost(tmp_path):
    """An attack pass: a stream that reads nothing more, its bot seated in match after
    match, had every ended match's runner held in its catch-up queue (~5.8 MB a match,
    without bound), and when such a stream ended, what it had not been handed of the
    matches that ended meanwhile was lost: the next stream got neither a replay (the
    matches were over) nor a missed ending (the seat's stream was connected at the end),
    20 matches of 20. Now such a seat is kept in missed.py, bounded for every bot together,
    and taken from there in its turn by this stream or, if it ends, the next."""
    matches = 6

    async def scenario():
        async with running_daemon(tmp_path, grace_ms=50, auto_after=1) as daemon:
            waiting, held, received, lasts = await stalled_while_matches_end(daemon, matches, seed=20)
            back = await Bot(daemon, "alice", first_legal, max_matches=matches).start()
            for m in waiting:
                await back.wait_ended(m, timeout=30)
            await back.close()
            return waiting, lasts, received, back, held

    waiting, lasts, received, back, held = run(scenario())
    assert held == [], "ended matches' runners held by the catch-up queue"
    assert len(waiting) >= 2
    for m in waiting:
        last = lasts[m]
        stalled = {e.sequence for r in received if r.HasField("update") and r.update.match_id == m
                   for e in r.update.events}
        later = [e.sequence for e in back.events[(m, 0)]]
        assert later == list(range(later[0], later[-1] + 1)), "in order, none twice"
        assert later[-1] == last and back.events[(m, 0)][-1].HasField("match_ended")
        assert set(range(1, last + 1)) <= stalled | set(later), f"events of {m} lost"


def test_with_nothing_kept_for_later_ended_matches_leave_the_queue_too(tmp_path):
    """``missed_events_hold_s = 0`` (keep nothing for later): a seat still waiting its turn
    when its match ended kept the runner in the catch-up queue, so a stream that reads
    nothing, its bot seated in match after match, held every ended match (~5.8 MB each)
    for as long as it stayed open. Now it leaves the queue as the match ends: what it was
    owed is not kept (GetMatchRecord has it), as for a bot away at the end."""
    matches = 6

    async def scenario():
        async with running_daemon(tmp_path, grace_ms=50, auto_after=1, missed_events_hold_s=0) as daemon:
            waiting, held, _, _ = await stalled_while_matches_end(daemon, matches, seed=40)
            return waiting, held, len(daemon.arena.missed)

    waiting, held, kept = run(scenario())
    assert len(waiting) >= 2
    assert held == [], "ended matches' runners held by the catch-up queue"
    assert kept == 0
