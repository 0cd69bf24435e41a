"""Holding up under abuse (issue 13): one test per attack measured from outside.

Each attack runs against a real daemon on a loopback port (in this process, or in its
own process where its memory or its log output is what matters), and each test
checks what the server did or recorded rather than how fast, wherever it can.
"""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
import time
from pathlib import Path

import grpc

from heartsbot.proto import bot_pb2, bot_pb2_grpc, game_pb2, spectator_pb2, spectator_pb2_grpc

from heartsd.services import BOT_STREAM_BURST, DRAIN_MESSAGES

from .harness import ADMIN, BOTS, Bot, RawBot, auth, first_legal, long_match_held, run, running_daemon, session_of
from .test_daemon_process import Remote, start

PLAY_PATH = "/hearts.v1.BotService/Play"

HEARTSD = [sys.executable, "-m", "heartsd.cli"]
HOUSE3 = ["house:random", "house:random", "house:random"]


def start_process(tmp_path: Path, *extra: str) -> tuple[subprocess.Popen[str], int]:
    """``heartsd serve`` as users run it (its GC settings, its logging), on a free port."""
    return start(tmp_path, "--log-level", "info", *extra)


def stop_process(proc: subprocess.Popen[str]) -> str:
    """SIGTERM, wait, and return what the daemon logged."""
    proc.terminate()
    try:
        _, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
    return err


# -- malformed protobuf bytes on the bot stream ---------------------------------------------

async def raw_stream(target: str, frames: list[bytes]) -> tuple[grpc.StatusCode, str]:
    """Send ``frames`` (raw message bytes) on a bot stream; the final status and details."""
    async with grpc.aio.insecure_channel(target) as channel:
        play = channel.stream_stream("/hearts.v1.BotService/Play", request_serializer=None, response_deserializer=None)
        call = play(metadata=auth(BOTS["alice"]))
        for frame in frames:
            await call.write(frame)
        try:
            async for _ in call:
                pass
        except grpc.aio.AioRpcError as exc:
            return exc.code(), exc.details() or ""
        return await call.code(), await call.details() or ""


def test_malformed_bytes_end_the_stream_with_invalid_argument_and_no_traceback(tmp_path):
    """proto/ promises INVALID_ARGUMENT for a message that cannot be understood; today the
    stream ended OK and a DecodeError traceback was logged at error level."""
    hello = bot_pb2.PlayRequest(hello=bot_pb2.Hello(name="alice", max_concurrent_matches=1)).SerializeToString()
    garbage = b"\xff\xff\xff\xff not protobuf"
    proc, port = start_process(tmp_path)
    try:
        first = run(raw_stream(f"127.0.0.1:{port}", [garbage]))
        later = run(raw_stream(f"127.0.0.1:{port}", [hello, garbage]))
    finally:
        log = stop_process(proc)
    for code, details in (first, later):
        assert code == grpc.StatusCode.INVALID_ARGUMENT, (code, details)
        assert "not a valid hearts.v1.PlayRequest" in details
    assert "Traceback" not in log and "DecodeError" not in log, log


# -- a token revoked (or rotated) while its bot is connected ---------------------------------

def ladder_cli(db: str, *args: str) -> str:
    done = subprocess.run([*HEARTSD, "ladder", *args, "--db", db], capture_output=True, text=True, check=True)
    return done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""


async def final_status(bot: Bot, timeout: float = 15) -> tuple[grpc.StatusCode | None, str]:
    for _ in range(int(timeout / 0.02)):
        status = await bot.status()
        if status is not None:
            return status, await bot._call.details()
        await asyncio.sleep(0.02)
    return None, ""


def test_a_revoked_token_ends_its_session_at_once_and_is_never_seated_without_the_ladder(tmp_path):
    """Without --ladder a revoked bot was still seated by CreateMatch and played on."""

    async def thinking(request, bot):  # still thinking about its first decision when revoked
        await asyncio.Event().wait()

    async def scenario():
        async with running_daemon(tmp_path, grace_ms=300) as daemon:
            db = daemon.settings.db_path
            token = await asyncio.to_thread(ladder_cli, db, "add-bot", "zed", "--owner", "ann")
            bot = await Bot(daemon, "zed", thinking, token=token).start()
            assert bot.welcome is not None, "a bot added a moment ago connects"
            playing = await daemon.create_match(["zed", *HOUSE3], deals=1)
            await asyncio.to_thread(ladder_cli, db, "revoke", "zed")  # another process, as organisers do
            try:
                await daemon.create_match(["zed", *HOUSE3])  # at once: the revocation is seen first
                refused = None
            except grpc.aio.AioRpcError as exc:
                refused = exc.code()
            status = await final_status(bot)
            await daemon.wait_finished(playing)
            again = await Bot(daemon, "zed", token=token).start()
            return refused, status, await final_status(again), daemon.stored(playing)

    refused, (code, details), (again, again_details), stored = run(scenario())
    assert refused == grpc.StatusCode.FAILED_PRECONDITION
    assert code == grpc.StatusCode.UNAUTHENTICATED and "revoked" in details
    assert again == grpc.StatusCode.UNAUTHENTICATED and "unknown bot token" in again_details
    assert stored.status == "finished"  # the match went on, its seat played by the server
    assert any(d.provenance == game_pb2.PROVENANCE_DISCONNECT for d in stored.record.decisions if d.seat == 0)


def test_a_stream_whose_token_is_revoked_before_its_hello_is_refused_not_handed_the_bots_matches(tmp_path):
    """An attack pass: a stream's token was checked when it opened, and revocations were
    applied only to the sessions registered when the registry saw them. A bot opened a
    second stream, held back its hello, and sent it once the organiser had revoked its token
    (its first stream ended UNAUTHENTICATED): it was welcomed and handed its running
    match, pending request and all, and played on with the revoked token until some other
    token changed. Its hello is now refused as the first stream was."""

    async def thinking(request, bot):  # still thinking about its first decision when revoked
        await asyncio.Event().wait()

    async def scenario():
        async with running_daemon(tmp_path, decision_ms=60_000, grace_ms=60_000) as daemon:
            db = daemon.settings.db_path
            token = await asyncio.to_thread(ladder_cli, db, "add-bot", "zed", "--owner", "ann")
            first = await Bot(daemon, "zed", thinking, token=token).start()
            match_id = await daemon.create_match(["zed", *HOUSE3], deals=1)
            async with daemon.channel() as channel:
                held = bot_pb2_grpc.BotServiceStub(channel).Play(metadata=auth(token))  # no hello yet
                for _ in range(500):  # its handler has begun checking the token
                    if daemon.arena.budgets.bots.in_use >= 2:
                        break
                    await asyncio.sleep(0.01)
                await daemon.arena.tokens.refreshed()  # a read after the stream's own: its check is done
                await asyncio.to_thread(ladder_cli, db, "revoke", "zed")
                revoked = await final_status(first)
                await held.write(bot_pb2.PlayRequest(hello=bot_pb2.Hello(name="zed", version="test")))
                try:
                    reply = await asyncio.wait_for(held.read(), 10)
                    got = reply.WhichOneof("kind") if reply is not grpc.aio.EOF else "EOF"
                except grpc.aio.AioRpcError as exc:
                    got = f"{exc.code().name}: {exc.details()}"
                held.cancel()
            return revoked, got, match_id

    (code, details), got, match_id = run(scenario())
    assert code == grpc.StatusCode.UNAUTHENTICATED and "revoked" in details
    assert got.startswith("UNAUTHENTICATED") and "revoked" in got, f"the revoked bot's held stream got {got!r}"


def test_what_a_revoked_bots_stream_still_sends_acts_for_nobody(tmp_path):
    """An attack pass: a stream whose session had ended (its token revoked, or replaced by a
    newer stream) was still read, and what it sent still acted, for as long as its handler
    was stuck writing to a bot that did not read (up to CLOSE_FLUSH_S): a revoked bot's
    answer was played as its own, and its resume brought its seats back from away, so that
    they were never defaulted as disconnected. What such a stream sends now acts for nobody."""
    filler = bot_pb2.PlayResponse(rejected=bot_pb2.AnswerRejected(reason="x" * 50_000)).SerializeToString()

    async def scenario():
        async with running_daemon(tmp_path, decision_ms=60_000, grace_ms=1000,
                                  max_outbox_bytes=64 * 1024 * 1024) as daemon:
            db = daemon.settings.db_path
            token = await asyncio.to_thread(ladder_cli, db, "add-bot", "zed", "--owner", "ann")
            async with daemon.channel() as channel:
                call = bot_pb2_grpc.BotServiceStub(channel).Play(metadata=auth(token))
                await call.write(bot_pb2.PlayRequest(hello=bot_pb2.Hello(name="zed", version="t")))
                assert (await call.read()).HasField("welcome")
                match_id = await daemon.create_match(["zed", *HOUSE3], deals=1)
                runner = daemon.arena.runners[match_id]  # kept: the match may be over when it is read
                while not (update := await call.read()).update.HasField("request"):
                    pass
                request = update.update.request
                session = await session_of(daemon, "zed")
                for _ in range(400):  # ~20 MB it will not read: its handler is stuck in a write
                    session.send(filler)
                for _ in range(200):
                    await asyncio.sleep(0.01)
                    if session.outbox.bytes < 19_000_000:
                        break
                await asyncio.to_thread(ladder_cli, db, "revoke", "zed")
                while session.connected:
                    await asyncio.sleep(0.01)
                answer = bot_pb2.Answer(match_id=match_id, request_id=request.request_id)
                answer.pass_cards.cards.extend(request.legal_cards[:request.pass_count])
                await call.write(bot_pb2.PlayRequest(answer=answer))
                await call.write(bot_pb2.PlayRequest(resume=bot_pb2.Resume(match_id=match_id, seat=0)))
                while not [d for d in runner.decisions if d.seat == 0]:
                    await asyncio.sleep(0.01)
                first = next(d for d in runner.decisions if d.seat == 0)
                call.cancel()
            return first.provenance

    provenance = run(scenario())
    assert provenance == game_pb2.PROVENANCE_DISCONNECT, game_pb2.Provenance.Name(provenance)


def test_a_revoked_or_rotated_token_ends_its_session_with_a_reason_under_the_ladder(tmp_path):
    """With --ladder a revoked bot's stream closed with status OK and no reason."""
    db = str(tmp_path / "d.db")
    subprocess.run([*HEARTSD, "ladder", "add-bot", "boot", "--owner", "x", "--db", db, "--create"], check=True,
                   capture_output=True)
    proc, port = start_process(tmp_path, "--ladder")
    daemon = Remote(port)
    try:
        async def scenario():
            revoked_token = await asyncio.to_thread(ladder_cli, db, "add-bot", "zed", "--owner", "ann")
            rotated_token = await asyncio.to_thread(ladder_cli, db, "add-bot", "yan", "--owner", "bea")
            zed = await Bot(daemon, "zed", token=revoked_token).start()
            yan = await Bot(daemon, "yan", token=rotated_token).start()
            await asyncio.to_thread(ladder_cli, db, "revoke", "zed")
            new_token = await asyncio.to_thread(ladder_cli, db, "rotate", "yan")
            statuses = await final_status(zed), await final_status(yan)
            fresh = await Bot(daemon, "yan", token=new_token).start()
            welcomed = fresh.welcome is not None
            await fresh.close()
            return statuses, welcomed, [m.draining for m in yan.received if m.HasField("draining")]

        ((zed_code, zed_details), (yan_code, yan_details)), welcomed, drained = run(scenario())
    finally:
        logged = stop_process(proc)
    assert zed_code == grpc.StatusCode.UNAUTHENTICATED and "revoked" in zed_details, logged
    # A rotated token drains its session (issue 14): with no running match it ends at once, cleanly.
    assert yan_code == grpc.StatusCode.OK and [d.reason for d in drained] == ["token rotated"]
    assert not drained[-1].active_matches
    assert welcomed


# -- memory per caller, bounded by bytes -----------------------------------------------------

def test_a_bot_reconnecting_in_a_loop_is_refused_past_its_stream_rate(tmp_path):
    """An attack pass: one bot's token opened ~550 streams a second, each welcomed (and
    the one before it replaced), and every other bot's decisions fell to about half. Now a
    bot may open BOT_STREAM_BURST streams in a row, then ``bot_streams_per_minute``; past
    that a stream is refused RESOURCE_EXHAUSTED saying when to come back, and other bots
    are not counted against it."""

    async def first_reply(daemon, name: str = "alice") -> str:
        async with RawBot(daemon, name) as bot:
            try:
                reply = await bot.call.read()
            except grpc.aio.AioRpcError as exc:
                return f"{exc.code().name}: {exc.details()}"
            if reply is grpc.aio.EOF:
                return f"{(await bot.call.code()).name}: {await bot.call.details()}"
            return reply.WhichOneof("kind")

    async def scenario():
        # One stream every 5 s after the burst: the burst's twelve streams come faster than
        # that even on a loaded machine. At one a second, a fresh-clone CI beside other runs
        # opened them slower than a fifth of a second each, earned two more, and was never refused.
        async with running_daemon(tmp_path, bot_streams_per_minute=12) as daemon:
            burst = [await first_reply(daemon) for _ in range(BOT_STREAM_BURST + 2)]
            other = await first_reply(daemon, "bob")
            await asyncio.sleep(5.2)  # one stream in 5 s
            later = await first_reply(daemon)
            return burst, other, later

    burst, other, later = run(scenario())
    assert burst[:BOT_STREAM_BURST] == ["welcome"] * BOT_STREAM_BURST
    assert all(b.startswith("RESOURCE_EXHAUSTED") and "too fast" in b and "connect again in" in b
               for b in burst[BOT_STREAM_BURST:]), burst
    assert other == "welcome"
    assert later == "welcome"


def test_a_pass_answer_of_thousands_of_cards_is_refused_without_reading_them(tmp_path):
    """An attack pass: an answer to a PASS request naming ~10,000 cards (what 64 KiB holds)
    had every card converted and checked, on the event loop, before it was refused for
    not naming pass_count cards: ~6-9 ms a message where an answer takes ~0.01 ms, three
    times per PASS request (max_illegal). Its count is checked first now; the cards of a
    pass are read only when there are as many as the ruleset passes. Counted here by the
    cards the server converts, not timed."""
    from heartsbot import convert

    converted = [0]
    real = convert.card_from_wire

    def counted(card):  # the real conversion, counted
        converted[0] += 1
        return real(card)

    async def scenario():
        async with running_daemon(tmp_path, decision_ms=60_000) as daemon:
            async with RawBot(daemon, max_matches=1) as bot:
                match_id = await daemon.create_match(["alice", *HOUSE3], deals=1)
                while not (message := await bot.call.read()).update.HasField("request"):
                    pass
                request = message.update.request
                assert request.kind == game_pb2.DECISION_KIND_PASS
                flood = bot_pb2.Answer(match_id=match_id, request_id=request.request_id)
                flood.pass_cards.cards.extend([request.legal_cards[0]] * 10_000)
                convert.card_from_wire = counted
                try:
                    await bot.send(bot_pb2.PlayRequest(answer=flood))
                    while not (reply := await bot.call.read()).HasField("rejected"):
                        pass
                finally:
                    convert.card_from_wire = real
                return reply.rejected, converted[0]

    rejected, cards_read = run(scenario())
    assert rejected.code == bot_pb2.REJECTION_CODE_MALFORMED and rejected.retry
    assert rejected.reason == "pass exactly 3 cards, got 10000"
    assert cards_read == 0, f"the server converted {cards_read} cards of an answer it refused for their count"


def test_a_stream_ended_for_flooding_is_not_read_on_for_free(tmp_path):
    """An attack pass: a stream ended for too many rejected answers was then read and its
    messages dropped for up to DRAIN_S (so that a client's in-flight writes do not fail
    before our status), however many came: a bot flooding on got ~10,000 messages a
    second read for nothing, 2 s per stream, where its budget allowed 69, and one stream
    after another (BOT_STREAM_BURST, then one every 2 s) kept the event loop reading for
    it. What is read after the end is bounded (DRAIN_MESSAGES). Counted by the messages the
    server reads (its bot-stream deserializer), not timed."""
    import heartsd.server

    read = [0]
    real = heartsd.server.read_play_request

    def counted(data):  # the daemon's own deserializer, counted
        read[0] += 1
        return real(data)

    stale = bot_pb2.PlayRequest(answer=bot_pb2.Answer(match_id="m-none", request_id="r-none")).SerializeToString()

    async def scenario():
        heartsd.server.read_play_request = counted
        try:
            async with running_daemon(tmp_path) as daemon:
                async with daemon.channel() as channel:
                    call = channel.stream_stream(PLAY_PATH, request_serializer=None, response_deserializer=None)(
                        metadata=auth(BOTS["alice"]))
                    await call.write(bot_pb2.PlayRequest(hello=bot_pb2.Hello(
                        name="alice", version="t", max_concurrent_matches=1)).SerializeToString())

                    async def flood():
                        with contextlib.suppress(grpc.aio.AioRpcError, asyncio.InvalidStateError):
                            for _ in range(5000):
                                await call.write(stale)

                    writing = asyncio.create_task(flood())
                    with contextlib.suppress(grpc.aio.AioRpcError):
                        async for _ in call:
                            pass
                    await asyncio.wait_for(writing, 30)
                    session = daemon.arena.sessions.get("alice")
                    return read[0], await call.code(), session
        finally:
            heartsd.server.read_play_request = real

    messages, code, session = run(scenario())
    budget = 64 + 4 * 1  # sessions.WASTE_ALLOWANCE plus four per match granted
    assert session is None and code != grpc.StatusCode.OK
    assert messages <= 1 + (budget + 1) + DRAIN_MESSAGES, f"{messages} messages of the flood were read"


def test_repeated_drains_count_against_the_stream_budget(tmp_path):
    """A second `drain` changes nothing (drain is idempotent), so a bot that sends them
    without end has the daemon read and dispatch messages for free: 3,000 went unanswered
    and the stream stayed open. A repeated drain now counts as a message that moved nothing
    on, like a rejected answer, and the stream ends RESOURCE_EXHAUSTED with a reason."""

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            async with RawBot(daemon, max_matches=1) as bot:
                await session_of(daemon, "alice")
                # a match to finish, so that the first drain leaves the stream open
                await daemon.create_match(["alice", *["house:random"] * 3], deals=50, clock={"decision_ms": 60_000})
                drain = bot_pb2.PlayRequest(drain=bot_pb2.Drain(reason="again"))
                sent = 0
                while sent < 3000 and await bot.send(drain):
                    sent += 1
                received, code, details = await bot.read_all(timeout=10)
            return received, code, details

    received, code, details = run(scenario())
    assert [(m.draining.reason, m.draining.cause) for m in received if m.HasField("draining")][:1] == [
        ("again", bot_pb2.DRAIN_CAUSE_ASKED)]
    assert code == grpc.StatusCode.RESOURCE_EXHAUSTED, (code, details)
    assert "drain" in details, details


def test_the_server_caps_a_bots_declared_concurrency_and_the_budgets_that_derive_from_it(tmp_path):
    """hello.max_concurrent_matches = 1,000,000 was accepted, and the rejection budget grew
    with it: 3,000 rejected answers were never cut off."""

    async def scenario():
        async with running_daemon(tmp_path, max_matches_per_bot=6) as daemon:
            async with RawBot(daemon) as bot:
                session = await session_of(daemon, "alice")
                granted = session.max_matches
                junk = bot_pb2.PlayRequest(answer=bot_pb2.Answer(match_id="m-nowhere", request_id="r-1"))
                sent = 0
                while sent < 3000 and await bot.send(junk):
                    sent += 1
                received, code, details = await bot.read_all()
            return granted, received, code, details

    granted, received, code, details = run(scenario())
    assert granted == 6
    assert received[0].welcome.max_concurrent_matches == 6  # the bot is told what it was granted
    rejected = [m for m in received if m.HasField("rejected")]
    assert code == grpc.StatusCode.RESOURCE_EXHAUSTED and "too many rejected answers" in details
    assert len(rejected) <= 64 + 4 * 6 + 1


def test_unknown_ids_are_neither_kept_nor_echoed(tmp_path):
    """2,000 resumes with unique 32 KB match ids kept +78 MiB for the life of the stream, and
    answers with 60 KB ids were echoed back in full in their rejections."""

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            async with RawBot(daemon) as bot:
                session = await session_of(daemon, "alice")
                for i in range(2000):
                    long_id = f"m-{i:06d}-" + "x" * 32_000
                    if not await bot.send(bot_pb2.PlayRequest(resume=bot_pb2.Resume(match_id=long_id, seat=0))):
                        break
                    if i < 50:
                        await bot.send(bot_pb2.PlayRequest(answer=bot_pb2.Answer(
                            match_id="m-" + "y" * 30_000, request_id="r-" + "z" * 30_000)))
                received, code, details = await bot.read_all()
                kept = sum(len(match_id) for match_id, _ in session.resumes)
            return kept, received, code

    kept, received, code = run(scenario())
    rejected = [m.rejected for m in received if m.HasField("rejected")]
    assert rejected, "unknown matches are rejected in-band"
    assert max(len(r.match_id) + len(r.request_id) + len(r.reason) for r in rejected) < 400
    assert any("longer than any id" in r.reason for r in rejected)
    assert kept < 10_000, f"{kept} bytes of unknown match ids kept for the stream"
    assert code == grpc.StatusCode.RESOURCE_EXHAUSTED  # and the flood ends the stream


def test_a_stream_that_never_reads_is_bounded_by_bytes_and_its_seats_go_the_disconnect_way(tmp_path):
    """The outbox was capped at 10,000 messages, not by size (~600 MB possible per stream).
    Here the server has far more to send than the cap allows to a bot that never reads: its
    stream ends RESOURCE_EXHAUSTED, and its seat is defaulted as if it had left."""
    cap = 256 * 1024

    async def scenario():
        async with running_daemon(tmp_path, max_outbox_bytes=cap, grace_ms=200) as daemon:
            async with RawBot(daemon, max_matches=1) as bot:
                session = await session_of(daemon, "alice")
                match_id = await daemon.create_match(["alice", *HOUSE3], deals=1)
                filler = bot_pb2.PlayResponse(rejected=bot_pb2.AnswerRejected(reason="x" * 50_000)).SerializeToString()
                peak = 0
                for _ in range(2000):  # ~100 MB the bot will not read, beyond what gRPC buffers
                    if not session.connected:
                        break
                    session.send(filler)
                    peak = max(peak, session.outbox.bytes)
                    await asyncio.sleep(0)
                reason = session.close_reason
                await daemon.wait_finished(match_id)
                received, code, details = await bot.read_all()
            return peak, reason, code, details, daemon.stored(match_id)

    peak, reason, code, details, stored = run(scenario())
    assert peak <= cap + 60_000
    assert "not reading" in reason
    assert code == grpc.StatusCode.RESOURCE_EXHAUSTED and "not reading" in details
    assert stored.status == "finished"
    assert any(d.provenance == game_pb2.PROVENANCE_DISCONNECT for d in stored.record.decisions if d.seat == 0)


def test_a_replaced_stream_that_never_reads_gives_back_its_slot_and_memory(tmp_path):
    """A replaced (or otherwise closed) stream used to live until its connection did when
    its handler was stuck in a write the bot never read: one token, opening stream after
    stream and reading none, took every bot-stream slot (other bots were refused
    RESOURCE_EXHAUSTED) and ~0.3 MiB a stream (an attack pass). A closed stream now has
    CLOSE_FLUSH_S to take its last messages, and the previous closed stream of a bot is
    ended at once when another replaces it."""
    filler = bot_pb2.PlayResponse(rejected=bot_pb2.AnswerRejected(reason="x" * 50_000)).SerializeToString()

    async def stuck(daemon, bot: RawBot) -> None:
        """Fill the stream's session with ~20 MB it will not read: a write blocks."""
        session = await session_of(daemon, "alice")
        for _ in range(400):
            session.send(filler)
        for _ in range(200):
            await asyncio.sleep(0.01)
            if session.outbox.bytes < 19_000_000:
                break  # the handler is writing (gRPC holds the rest of what it took)

    async def scenario():
        async with running_daemon(tmp_path, max_outbox_bytes=64 * 1024 * 1024) as daemon:
            streams = daemon.arena.budgets.bots
            first = await RawBot(daemon).__aenter__()
            await stuck(daemon, first)
            opened = [first]
            for _ in range(3):  # each replaces the one before, and never reads either
                bot = await RawBot(daemon).__aenter__()
                opened.append(bot)
                for _ in range(500):
                    if daemon.arena.sessions.get("alice") is not None and daemon.arena.sessions.get("alice").outbox.bytes == 0:
                        break
                    await asyncio.sleep(0.01)
                await stuck(daemon, bot)
            in_use = []
            for _ in range(100):  # the last replaced one within its flush time, the older at once
                in_use.append(streams.in_use)
                if streams.in_use == 1:
                    break
                await asyncio.sleep(0.1)
            for bot in opened:
                await bot.__aexit__(None, None, None)
            return in_use

    in_use = run(scenario())
    assert in_use[-1] == 1, f"bot-stream slots held by replaced streams that never read: {in_use}"
    assert in_use[0] <= 2, "a stream replaced twice over is ended at once, not after its flush time"


# -- spectators have their own budget ----------------------------------------------------------

async def watch_until_refused_or_open(stub, match_id: str, opened: asyncio.Event):
    """A watcher that stays on; returns the status that ended it (None while it streams)."""
    try:
        async for _ in stub.WatchMatch(spectator_pb2.WatchMatchRequest(match_id=match_id)):
            opened.set()
        return grpc.StatusCode.OK, ""
    except grpc.aio.AioRpcError as exc:
        return exc.code(), exc.details() or ""


def test_spectators_cannot_starve_bots(tmp_path):
    """64 unauthenticated WatchMatch streams with max_concurrent_rpcs = 64 made a bot's Play
    fail RESOURCE_EXHAUSTED: spectators and bots shared one budget. Here twice the spectator
    budget of watchers arrive; the extra ones are refused with a clear status, and a bot
    still connects and plays."""
    budget = 8

    async def scenario():
        async with running_daemon(tmp_path, house_delay_ms=50, max_spectator_calls=budget,
                                  max_spectator_calls_per_peer=budget) as daemon:
            live = await daemon.create_match(["house:random"] * 4, deals=2)
            async with daemon.channel() as channel:
                stub = spectator_pb2_grpc.SpectatorServiceStub(channel)
                events = [asyncio.Event() for _ in range(2 * budget)]
                watchers = [asyncio.ensure_future(watch_until_refused_or_open(stub, live, e)) for e in events]
                await settled(events, watchers)
                refused = [w.result() for w in watchers if w.done()]
                streaming = sum(e.is_set() and not w.done() for e, w in zip(events, watchers))
                bot = await Bot(daemon, "carol").start()
                played = await daemon.create_match(["carol", *HOUSE3])
                result = await bot.wait_ended(played)
                await bot.close()
                in_use = daemon.arena.budgets.spectators.in_use
                for w in watchers:
                    w.cancel()
                await asyncio.gather(*watchers, return_exceptions=True)
            for _ in range(600):  # the server sees each cancelled watcher go
                if daemon.arena.budgets.spectators.in_use == 0:
                    break
                await asyncio.sleep(0.05)
            return refused, streaming, result, in_use, daemon.arena.budgets.spectators.in_use

    refused, streaming, result, in_use, after = run(scenario())
    assert streaming == budget and in_use == budget
    assert len(refused) == budget
    assert all(code == grpc.StatusCode.RESOURCE_EXHAUSTED and "spectator" in details for code, details in refused)
    assert result.status == game_pb2.MATCH_STATUS_FINISHED
    assert after == 0  # every slot came back when its watcher left


async def settled(events: list[asyncio.Event], watchers: list[asyncio.Future], timeout: float = 30) -> None:
    """Until every watcher is streaming (its event set) or refused (done). A fixed sleep
    was too short once under load: a refusal had not come yet."""
    deadline = time.monotonic() + timeout
    while not all(e.is_set() or w.done() for e, w in zip(events, watchers)) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)


def test_one_address_cannot_take_the_whole_spectator_budget(tmp_path):
    async def scenario():
        async with running_daemon(tmp_path, max_spectator_calls=50, max_spectator_calls_per_peer=2,
                                  house_delay_ms=50) as daemon:
            live = await daemon.create_match(["house:random"] * 4, deals=2)
            async with daemon.channel() as channel:
                stub = spectator_pb2_grpc.SpectatorServiceStub(channel)
                events = [asyncio.Event() for _ in range(3)]
                watchers = [asyncio.ensure_future(watch_until_refused_or_open(stub, live, e)) for e in events]
                await settled(events, watchers)
                refused = [w.result() for w in watchers if w.done()]
                try:
                    await stub.ListMatches(spectator_pb2.ListMatchesRequest())
                    listed = grpc.StatusCode.OK
                except grpc.aio.AioRpcError as exc:
                    listed = exc.code()
                for w in watchers:
                    w.cancel()
                await asyncio.gather(*watchers, return_exceptions=True)
            return refused, listed

    refused, listed = run(scenario())
    assert [code for code, _ in refused] == [grpc.StatusCode.RESOURCE_EXHAUSTED]
    assert "from your address" in refused[0][1]
    assert listed == grpc.StatusCode.RESOURCE_EXHAUSTED  # the same budget: two watchers already hold it


def test_one_address_cannot_keep_the_daemon_busy_with_quick_spectator_calls(tmp_path):
    """An attack pass: the spectator budget counted calls at once only, so one address kept
    its 16 calls busy with ListMatches (1,000 a page) back to back, and every bot match on
    the daemon slowed ~10 times (19 ladder matches finished in 20 s before, 1 during).
    Now calls also spend a rate per address, a page by its size: 60 at once after a pause
    (the burst), here refilled at a token in 100 s. A 1,000-match page costs 51 and a
    1-match page 1.05, so one and eight of them use the burst up (0.6 left), and the
    next call is refused with the reason; another class of caller (a bot) is not touched."""

    async def scenario():
        async with running_daemon(tmp_path, spectator_calls_per_s=0.01) as daemon:
            async with daemon.channel() as channel:
                stub = spectator_pb2_grpc.SpectatorServiceStub(channel)
                await stub.ListMatches(spectator_pb2.ListMatchesRequest(limit=1000))
                for _ in range(8):
                    await stub.ListMatches(spectator_pb2.ListMatchesRequest(limit=1))
                refused = []
                for call in (stub.ListMatches(spectator_pb2.ListMatchesRequest(limit=1)),
                             stub.GetMatchRecord(spectator_pb2.GetMatchRecordRequest(match_id="m-none"))):
                    try:
                        await call
                        refused.append(None)
                    except grpc.aio.AioRpcError as exc:
                        refused.append((exc.code(), exc.details()))
            bot = await Bot(daemon, "alice", first_legal).start()
            match_id = await daemon.create_match(["alice", *HOUSE3], deals=1)
            await bot.wait_ended(match_id, timeout=30)
            await bot.close()
            return refused

    refused = run(scenario())
    for code, details in refused:
        assert code == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "too many spectator calls from your address (at most 0.01 a second, 60 at once" in details, details
        assert "try again in" in details


def test_the_server_wide_rpc_limit_stays_above_the_class_budgets():
    from heartsd.config import ConfigError, Settings

    settings = Settings.load(env={}, flags=dict(max_spectator_calls=10, max_bot_streams=20, max_admin_calls=5))
    assert settings.rpc_limit() > 10 + 20 + 5 + 64
    try:
        Settings.load(env={}, flags=dict(max_concurrent_rpcs=64))
        raise AssertionError("a server-wide limit below the class budgets must be refused")
    except ConfigError as exc:
        assert "max_concurrent_rpcs" in str(exc) and "starve" in str(exc)


# -- the event loop never stalls on I/O, and a stall is never charged to a bot ----------------

def test_a_stall_of_the_server_is_credited_to_the_decision_it_overlapped_not_charged(tmp_path):
    """The loop is blocked for 1.2 s while a request with 300 ms on its clock is open (the
    bot and the server share this test's loop, so the bot's answer waits too): the answer
    counts, the bot's bank is untouched, and the decision records the credit."""
    import time

    stalled = []

    def policy(request, bot):
        if not stalled and request.kind == game_pb2.DECISION_KIND_PLAY:
            stalled.append(request.request_id)
            time.sleep(1.2)  # the whole event loop stops: to the server, its own stall
        return first_legal(request, bot)

    async def scenario():
        async with running_daemon(tmp_path, decision_ms=300, bank_ms=100) as daemon:
            bot = await Bot(daemon, "alice", policy).start()
            match_id = await daemon.create_match(["alice", *HOUSE3], deals=1)
            await bot.wait_ended(match_id)
            await bot.close()
            return daemon.stored(match_id), daemon.arena.loop_monitor

    stored, monitor = run(scenario())
    ours = [d for d in stored.record.decisions if d.seat == 0]
    assert all(d.provenance == game_pb2.PROVENANCE_BOT for d in ours), [d.provenance for d in ours]
    # The stalled request is alice's first PLAY. Other decisions may be credited too: on a
    # loaded machine the process itself is descheduled now and then, which the monitor
    # rightly sees as stalls of the server. What must hold for every decision: a credit
    # never exceeds the time its request was open, and, since one seat's requests never
    # overlap, no stall is credited twice (the credits add up to at most the stalls seen).
    stalled = next(d for d in ours if d.kind == game_pb2.DECISION_KIND_PLAY)
    assert stalled.stall_credit_ms >= 1000 and stalled.think_ms >= stalled.stall_credit_ms
    assert all(d.stall_credit_ms <= d.think_ms for d in ours), [(d.think_ms, d.stall_credit_ms) for d in ours]
    assert sum(d.stall_credit_ms for d in ours) <= monitor.stalled_s * 1000
    assert monitor.max_lag_s >= 1.0 and monitor.stalls >= 1


LOCK_HOLDER = """
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
db.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
db.execute("COMMIT")
"""


def test_a_store_locked_by_another_process_stalls_nothing(tmp_path):
    """Another process held the SQLite write lock for 4 s while admin calls with junk tokens
    arrived: the token check queried the database on the event loop, the loop stalled
    3.5 s, the health check took 3.53 s, and an honest bot was charged a TIMEOUT.

    What the server recorded is asserted (no honest TIMEOUT, no credit needed, its own
    measured loop lag). The requirement "health within 100 ms" is measured here too, but
    asserted with a 1 s bound: on a loaded 2-core CI machine a single health call can
    take a few hundred ms for reasons of its own, while the failure this guards against
    is a multi-second stall (3.5 s before the fix)."""
    import time

    from grpc_health.v1 import health_pb2, health_pb2_grpc

    from heartsbot.proto import admin_pb2, admin_pb2_grpc

    db = str(tmp_path / "d.db")
    proc, port = start_process(tmp_path, "--decision-ms", "400", "--bank-ms", "300")
    daemon = Remote(port)
    holder = None
    try:
        async def scenario():
            nonlocal holder
            names = ["alice", "bob", "carol", "dave"]
            bots = [await Bot(daemon, n, max_matches=4).start() for n in names]
            async with daemon.channel() as channel:
                admin = admin_pb2_grpc.AdminServiceStub(channel)
                health = health_pb2_grpc.HealthStub(channel)
                matches = []
                for i in range(2):
                    request = admin_pb2.CreateMatchRequest(ruleset="standard")
                    request.format.fixed_deals = 40  # long enough to run through the hold
                    for n in names:
                        request.seats.add(bot=n)
                    matches.append((await admin.CreateMatch(request, metadata=auth(ADMIN))).match_id)
                await asyncio.sleep(0.3)
                holder = subprocess.Popen([sys.executable, "-c", LOCK_HOLDER, db, "4"], stdout=subprocess.PIPE, text=True)
                assert holder.stdout.readline().strip() == "locked"
                until = time.monotonic() + 4.0
                latencies, refused = [], 0

                async def junk_admin_calls() -> None:  # each was a database query on the loop
                    nonlocal refused
                    while time.monotonic() < until:
                        try:
                            await admin.ListBots(admin_pb2.ListBotsRequest(), metadata=auth(f"junk-{refused}"))
                        except grpc.aio.AioRpcError as exc:
                            refused += exc.code() == grpc.StatusCode.UNAUTHENTICATED
                        await asyncio.sleep(0.01)

                async def health_checks() -> None:
                    while time.monotonic() < until:
                        began = time.monotonic()
                        await health.Check(health_pb2.HealthCheckRequest())
                        latencies.append(time.monotonic() - began)
                        await asyncio.sleep(0.05)

                await asyncio.gather(junk_admin_calls(), health_checks())
                status = await admin.GetServerStatus(admin_pb2.GetServerStatusRequest(), metadata=auth(ADMIN))
                for match_id in matches:
                    await bots[0].wait_ended(match_id, timeout=120)
            for b in bots:
                await b.close()
            return matches, latencies, refused, status

        matches, latencies, refused, status = run(scenario())
    finally:
        if holder is not None:
            holder.wait(30)
        stop_process(proc)
    from heartsd.store import Store

    store = Store(db)
    try:
        records = [store.get(m).record for m in matches]
    finally:
        store.close()
    print(f"health during the hold: max {max(latencies) * 1000:.0f} ms, median "
          f"{sorted(latencies)[len(latencies) // 2] * 1000:.0f} ms over {len(latencies)} calls; "
          f"server loop max lag {status.max_loop_lag_ms:.0f} ms")
    assert refused > 50
    provenances = [d.provenance for r in records for d in r.decisions]
    assert game_pb2.PROVENANCE_TIMEOUT not in provenances
    assert all(p == game_pb2.PROVENANCE_BOT for p in provenances)
    assert max(d.stall_credit_ms for r in records for d in r.decisions) < 1000, "a decision needed a stall's credit"
    assert status.max_loop_lag_ms < 1000, "the event loop stalled"
    assert max(latencies) < 1.0, latencies


# -- watching finished matches: streamed from the store, nothing kept --------------------------

def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


async def watch_events(target: str, match_id: str, from_sequence: int = 0) -> list[game_pb2.Event]:
    async with grpc.aio.insecure_channel(target) as channel:
        stub = spectator_pb2_grpc.SpectatorServiceStub(channel)
        out = []
        async for response in stub.WatchMatch(spectator_pb2.WatchMatchRequest(match_id=match_id,
                                                                              from_sequence=from_sequence)):
            out.extend(response.events)
        return out


def test_watching_finished_matches_keeps_no_memory(tmp_path, monkeypatch):
    """WatchMatch on a finished match loaded and kept the whole parsed record per call
    (~87 KiB per call on a 16-deal record; 300 calls on a 300-deal record took RSS from
    67 to 1,145 MiB): the record stayed alive in a reference cycle through the abort's
    traceback, and the daemon's GC thresholds (50,000 allocations) collect it rarely.
    Now the events stream from the store: 400 calls on a 16-deal match leave RSS flat."""
    from heartsbot.proto import admin_pb2, admin_pb2_grpc

    for setting in ("SPECTATOR_CALLS_PER_S", "SPECTATOR_CALLS_TOTAL_PER_S"):  # 420 watches, as fast as they go
        monkeypatch.setenv(f"HEARTSD_{setting}", "1000")
    proc, port = start_process(tmp_path, "--log-level", "warning")
    target = f"127.0.0.1:{port}"
    try:
        async def scenario():
            async with grpc.aio.insecure_channel(target) as channel:
                request = admin_pb2.CreateMatchRequest(ruleset="standard")
                request.format.fixed_deals = 16
                for _ in range(4):
                    request.seats.add(house="random")
                match_id = (await admin_pb2_grpc.AdminServiceStub(channel).CreateMatch(
                    request, metadata=auth(ADMIN))).match_id
                spectator = spectator_pb2_grpc.SpectatorServiceStub(channel)
                while True:
                    try:
                        await spectator.GetMatchRecord(spectator_pb2.GetMatchRecordRequest(match_id=match_id))
                        break
                    except grpc.aio.AioRpcError:
                        await asyncio.sleep(0.1)
            first = await watch_events(target, match_id)
            for _ in range(20):  # warm up: the daemon's caches, grpc's buffers
                await watch_events(target, match_id)
            before = rss_mib(proc.pid)
            for _ in range(400):
                events = await watch_events(target, match_id)
                assert len(events) == len(first)
            return first, before, rss_mib(proc.pid)

        events, before, after = run(scenario())
    finally:
        stop_process(proc)
    assert events[-1].HasField("match_ended") and [e.sequence for e in events] == list(range(1, len(events) + 1))
    assert after - before < 16, f"RSS {before:.0f} -> {after:.0f} MiB over 400 watches of a finished match"


def test_a_finished_match_streams_what_its_record_shows_from_any_sequence(tmp_path):
    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            match_id = await daemon.create_match(["house:random"] * 4, deals=60)  # more than one read window
            await daemon.wait_finished(match_id)
            events = await watch_events(daemon.target, match_id)
            tail = await watch_events(daemon.target, match_id, from_sequence=len(events) - 3)
            everything_seen = await watch_events(daemon.target, match_id, from_sequence=len(events))
            try:
                await watch_events(daemon.target, match_id, from_sequence=len(events) + 1)
                beyond = None
            except grpc.aio.AioRpcError as exc:
                beyond = exc.code()
            await asyncio.to_thread(daemon.arena.store.db.query, "UPDATE matches SET events = NULL WHERE id = ?",
                                    (match_id,))
            try:
                await watch_events(daemon.target, match_id)
                missing = None
            except grpc.aio.AioRpcError as exc:
                missing = exc.code(), exc.details()
            return events, tail, everything_seen, beyond, missing, daemon.stored(match_id).record

    events, tail, everything_seen, beyond, missing, record = run(scenario())
    assert [e.sequence for e in events] == list(range(1, len(events) + 1))
    assert events[-1].match_ended.result == record.result
    dealt = [[sorted((c.suit, c.rank) for c in h.cards) for h in e.deal_started.hands]
             for e in events if e.HasField("deal_started")]
    assert dealt == [[sorted((c.suit, c.rank) for c in h.cards) for h in d.hands] for d in record.deals]
    played = [(e.card_played.seat, e.card_played.card) for e in events if e.HasField("card_played")]
    assert played == [(d.seat, d.cards[0]) for d in record.decisions if d.kind == game_pb2.DECISION_KIND_PLAY]
    assert tail == events[-3:] and everything_seen == []
    assert beyond == grpc.StatusCode.OUT_OF_RANGE
    assert missing[0] == grpc.StatusCode.FAILED_PRECONDITION and "GetMatchRecord" in missing[1]


def test_a_finished_table_is_not_streamed_while_its_duplicate_set_plays_on(tmp_path):
    """What may be shown is spectating.py's decision: a finished table of a duplicate set
    shows its hands, which another table still holds, only once every table is over."""
    from heartsd import duplicate

    from .harness import random_legal

    async def slow(request, bot):
        await asyncio.sleep(0.01)
        return random_legal(7)(request, bot)

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            ladder = daemon.arena.store.ladder
            names = [f"d{i}" for i in range(8)]
            tokens = {n: ladder.add_bot(n, f"owner-{n}") for n in names}
            bots = [await Bot(daemon, n, random_legal(i) if i < 4 else slow, token=tokens[n]).start()
                    for i, n in enumerate(names)]
            started = await duplicate.start_set(daemon.arena, "standard", 2, [names[:4], names[4:]])
            a, b = started.runners
            await daemon.wait_finished(a.id)
            try:
                await watch_events(daemon.target, a.id)
                during = None
            except grpc.aio.AioRpcError as exc:
                during = exc.code(), exc.details()
            b_running = not b.finished.is_set()
            await daemon.wait_finished(b.id)
            after = await watch_events(daemon.target, a.id)
            for bot in bots:
                await bot.close()
            return during, b_running, after

    during, b_running, after = run(scenario())
    assert b_running
    assert during[0] == grpc.StatusCode.FAILED_PRECONDITION and "duplicate set" in during[1]
    assert after[-1].HasField("match_ended")


def test_streams_without_a_valid_token_cannot_fill_the_bot_stream_budget(tmp_path):
    """Before: a Play stream took its slot of the bot-stream budget before its token was
    checked, and a refused one held it ~0.5 s while its status went out; streams with no
    valid token from one address (an attack pass: 2,000/2,000 slots, 1 welcome in 15 for a
    bot with a valid token) filled the budget. Now a stream whose token is not known greets
    on a small budget of its own, limited per address: here 30 such streams at once, and a
    bot with a valid token still connects, its budget never holding one of them."""
    from heartsd.budgets import GREETING_CALLS_PER_PEER

    async def scenario():
        async with running_daemon(tmp_path, max_bot_streams=4) as daemon:
            budgets = daemon.arena.budgets
            channel = daemon.channel()
            unknown = []
            for i in range(30):  # they never send hello: each is held while it is refused
                call = channel.stream_stream(PLAY_PATH, request_serializer=None, response_deserializer=None)(
                    metadata=auth(f"not-a-token-{i:04d}"))
                unknown.append(call)
            await asyncio.sleep(0.2)
            held_then = budgets.bots.in_use
            bot = await Bot(daemon, "alice").start()
            welcomed = bot.welcome is not None
            codes = [await call.code() for call in unknown]
            await bot.close()
            await channel.close()
            peaks = {b.name: b.peak for b in budgets.all()}  # as GetServerStatus reports them
            return held_then, welcomed, codes, peaks.get("unauthenticated bot stream"), budgets.bots.peak

    held_then, welcomed, codes, greeting_peak, bots_peak = run(scenario())
    assert held_then == 0  # before: 4 of 4, all unknown tokens
    assert welcomed
    assert bots_peak == 1
    assert greeting_peak == GREETING_CALLS_PER_PEER  # one address: the rest refused at once
    assert set(codes) == {grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.RESOURCE_EXHAUSTED}


def test_one_bots_token_cannot_hold_the_bot_stream_budget_with_streams_that_never_say_hello(tmp_path):
    """Before: a stream with a known token held a bot-stream slot for up to 10 s while it
    waited for hello, so one bot author's token opened as many such streams as the budget
    had slots and other bots got RESOURCE_EXHAUSTED (a second attack pass: 2 welcomes in
    23). Now a bot has at most GREETINGS_PER_BOT streams at once that have not said hello."""
    from heartsd.services import GREETINGS_PER_BOT

    async def scenario():
        async with running_daemon(tmp_path, max_bot_streams=8) as daemon:
            channel = daemon.channel()
            silent = [channel.stream_stream(PLAY_PATH, request_serializer=None, response_deserializer=None)(
                metadata=auth(BOTS["bob"])) for _ in range(12)]
            await asyncio.sleep(0.3)
            held = daemon.arena.budgets.bots.in_use
            alice = await Bot(daemon, "alice").start()
            welcomed = alice.welcome is not None
            for call in silent:
                call.cancel()
            refused = []
            for call in silent:
                with contextlib.suppress(asyncio.CancelledError):
                    if await call.code() == grpc.StatusCode.RESOURCE_EXHAUSTED:
                        refused.append(await call.details())
            await alice.close()
            await channel.close()
            return held, welcomed, refused

    held, welcomed, refused = run(scenario())
    assert held == GREETINGS_PER_BOT  # before: 8 of 8
    assert welcomed
    assert len(refused) == 12 - GREETINGS_PER_BOT and all("'hello'" in r for r in refused)


def test_an_ipv6_caller_is_one_address_for_its_whole_64_and_a_mapped_ipv4_is_its_ipv4():
    """A host has a /64 and may use any address in it: keyed by the full address, one
    attacker had 2^64 addresses for every per-address limit (an attack pass)."""
    from heartsd.budgets import Budget, peer_address
    from heartsd.web.connections import peer_name

    budget = Budget("spectator", total=100, per_peer=1)
    budget.acquire(peer_address("ipv6:%5B2001:db8:0:7::1%5D:40000"))
    assert budget.refusal(peer_address("ipv6:%5B2001:db8:0:7:ffff:1:2:3%5D:40001")) is not None
    assert budget.refusal(peer_name("2001:db8:0:7:abcd::9")) is not None, "the web keys it the same"
    assert budget.refusal(peer_address("ipv6:%5B2001:db8:0:8::1%5D:40000")) is None, "another /64 is another caller"
    budget.acquire(peer_address("ipv4:192.0.2.1:5000"))
    assert budget.refusal(peer_address("ipv6:%5B::ffff:192.0.2.1%5D:5001")) is not None, "IPv4 over a dual-stack port"
    # IPv4 hosts behind one NAT64 or Teredo relay share its /64: each counts as its own IPv4
    # host (a review: one of them could take the whole /64's share).
    budget.acquire(peer_address("ipv6:%5B64:ff9b::c000:205%5D:1"))  # 192.0.2.5 translated
    assert budget.refusal(peer_address("ipv6:%5B64:ff9b::c000:206%5D:1")) is None
    assert budget.refusal(peer_address("ipv4:192.0.2.5:2")) is not None


def test_calls_that_never_send_their_request_hold_only_their_own_budget_and_not_for_long(tmp_path, monkeypatch):
    """An attack pass: one connection opened 3,000 calls of a one-request method
    (ListMatches) sending headers only. gRPC runs such a handler only once the request has
    arrived, and the budgets were taken inside the handler, so these calls held no budget
    at all, only slots of gRPC's server-wide call limit: with it full, a bot could not
    connect ("Concurrent RPC limit exceeded!") and the health check failed, for as long as
    the connection stayed open. Now a call is counted from its start, so one address holds
    at most its budget, and a call whose request does not come is ended."""
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    from heartsd import budgets

    monkeypatch.setattr(budgets, "REQUEST_WAIT_S", 2.0)

    async def scenario():  # type: ignore[no-untyped-def]
        async with running_daemon(tmp_path, max_bot_streams=8, max_spectator_calls=20,
                                  max_spectator_calls_per_peer=4) as daemon:
            limit = daemon.settings.rpc_limit()
            async with daemon.channel() as attacker:
                silent = attacker.stream_unary("/hearts.v1.SpectatorService/ListMatches")
                calls = [silent() for _ in range(limit + 50)]  # headers only: no request, no half-close
                await asyncio.sleep(1.0)
                bot = await Bot(daemon, "alice").start()  # before: RESOURCE_EXHAUSTED, the server-wide limit
                welcomed = bot.welcome is not None
                await bot.close()
                async with daemon.channel() as probe:
                    health = await health_pb2_grpc.HealthStub(probe).Check(health_pb2.HealthCheckRequest())
                codes: dict[str, int] = {}
                for call in calls:
                    try:
                        await asyncio.wait_for(call, 10)
                        key = "OK"
                    except grpc.aio.AioRpcError as exc:
                        key = f"{exc.code().name}: {exc.details()}"
                    codes[key] = codes.get(key, 0) + 1
            return limit, welcomed, health.status, codes

    limit, welcomed, health, codes = run(scenario())
    assert welcomed and health == health_pb2.HealthCheckResponse.SERVING, codes
    waited = "INVALID_ARGUMENT: no request message within 2 s"
    assert codes.get(waited) == 4, codes  # the address's 4 spectator slots, each ended in time
    refused = sum(n for k, n in codes.items() if k.startswith("RESOURCE_EXHAUSTED: too many spectator calls"))
    assert refused > limit - 4, codes  # the rest by the address's budget (a few may end CANCELLED as the channel closes)
    assert not [k for k in codes if "Concurrent RPC limit" in k], codes


def test_an_organisers_tournament_calls_are_not_spent_by_public_reads_from_its_address(tmp_path):
    """A contract check: every TournamentService call was a spectator call, so after public
    reads from the organiser's address (a `tournament watch` polling GetTournament, a web
    page) CreateTournament and CancelTournament were refused RESOURCE_EXHAUSTED "too many
    spectator calls". The calls that need the admin token count as admin calls, as
    AdminService's do; public reads are still paced."""
    from heartsbot.proto import tournament_pb2 as T
    from heartsbot.proto import tournament_pb2_grpc

    async def scenario():
        async with running_daemon(tmp_path, spectator_calls_per_s=0.01) as daemon:
            bots = [await Bot(daemon, n, first_legal).start() for n in ("alice", "bob", "carol", "dave")]
            async with daemon.channel() as channel:
                stub = tournament_pb2_grpc.TournamentServiceStub(channel)
                paced = None
                for _ in range(200):  # public reads until the address is paced
                    try:
                        await stub.ListTournaments(T.ListTournamentsRequest())
                    except grpc.aio.AioRpcError as exc:
                        paced = exc
                        break
                created = await stub.CreateTournament(T.CreateTournamentRequest(
                    name="after reads", bots=["alice", "bob", "carol", "dave"], rounds=1, deals_per_match=1),
                    metadata=auth(ADMIN))
                await stub.CancelTournament(T.CancelTournamentRequest(id=created.tournament.id), metadata=auth(ADMIN))
            for bot in bots:
                await bot.close()
            return paced

    paced = run(scenario())
    assert paced is not None and paced.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, paced


def test_calls_without_the_admin_token_never_take_the_operators_admin_slots(tmp_path):
    """Admin calls were admitted to the admin budget (32 at once, its per-address limit as
    large) before their token was looked at, and a call holds its slot from its first byte
    (up to 10 s while its request does not come). So 32 calls of headers alone, with no
    token, from one address locked the operator out of CreateMatch, CancelMatch and the
    tournaments' admin calls. A call without the admin token now counts as a public
    (spectator) call, bounded per address, and the operator's calls still go through."""
    from heartsbot.proto import admin_pb2, admin_pb2_grpc

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            async with daemon.channel() as attacker:
                held = []
                for _ in range(40):  # headers alone: the request never comes
                    call = attacker.stream_unary("/hearts.v1.AdminService/GetServerStatus")(
                        metadata=(("authorization", "Bearer not-the-admin-token"),))
                    held.append(call)
                await asyncio.sleep(1.0)  # every call has reached the server
                async with daemon.channel() as operator:
                    status = await admin_pb2_grpc.AdminServiceStub(operator).GetServerStatus(
                        admin_pb2.GetServerStatusRequest(), metadata=auth(ADMIN), timeout=5)
                codes = []
                for call in held:
                    call.cancel()
                    try:
                        await call
                    except (grpc.aio.AioRpcError, asyncio.CancelledError) as exc:
                        codes.append(exc.code().name if isinstance(exc, grpc.aio.AioRpcError) else "CANCELLED")
            return status, codes

    status, codes = run(scenario())
    assert status.bot_sessions >= 0  # answered: before, RESOURCE_EXHAUSTED "too many admin calls"
    assert "RESOURCE_EXHAUSTED" in codes, codes  # the unauthenticated ones are paced as public calls


def test_one_address_cannot_keep_the_daemon_busy_with_health_or_reflection_calls(tmp_path):
    """An attack pass: health checks and reflection had a budget of calls at once (16 per
    address) and no rate, and a reflection call is a stream whose requests were not counted
    at all: one stream from one address asked for BotService's descriptors ~12,000 times a
    second, each answered with their files, and bots' decisions fell to about half (16 such
    streams: to 30%). Now they spend a rate per address as spectators do, each request on
    a stream like a call: past the burst a call, or a stream, ends RESOURCE_EXHAUSTED saying
    when to try again; and a caller at another address is not touched."""
    from grpc_health.v1 import health_pb2, health_pb2_grpc
    from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

    from heartsd.budgets import INFRA_BURST

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            async with daemon.channel() as channel:
                stub = reflection_pb2_grpc.ServerReflectionStub(channel)
                asks = [reflection_pb2.ServerReflectionRequest(file_containing_symbol="hearts.v1.BotService")
                        for _ in range(3 * INFRA_BURST)]
                answered, streamed = 0, None
                try:
                    async for _ in stub.ServerReflectionInfo(iter(asks)):
                        answered += 1
                    streamed = (grpc.StatusCode.OK, "")
                except grpc.aio.AioRpcError as exc:
                    streamed = (exc.code(), exc.details())
                health = health_pb2_grpc.HealthStub(channel)
                after = (await health.Check(health_pb2.HealthCheckRequest())).status  # checks have their own
                checked = (grpc.StatusCode.OK, "")
                for _ in range(3 * INFRA_BURST):  # the rate refills meanwhile (20 a second): some are refused
                    try:
                        await health.Check(health_pb2.HealthCheckRequest())
                    except grpc.aio.AioRpcError as exc:
                        checked = (exc.code(), exc.details())
                        break
            daemon.arena.budgets.infra.charge("ipv4:192.0.2.7", 1.0)  # another address: its own rate
            return answered, streamed, after, checked

    answered, streamed, after, checked = run(scenario())
    assert answered < 2 * INFRA_BURST, answered  # of 3 * INFRA_BURST asked (the rate refills meanwhile)
    assert after == health_pb2.HealthCheckResponse.SERVING
    for (code, details), kind in ((streamed, "health or reflection"), (checked, "health check")):
        assert code == grpc.StatusCode.RESOURCE_EXHAUSTED, (code, details)
        assert f"{kind} calls from your address" in details and "try again in" in details, details


def test_health_and_reflection_streams_never_keep_out_a_health_check(tmp_path, monkeypatch):
    """An attack pass: Health/Watch and reflection streams shared one budget with health
    checks, 64 at once and 16 per address; a stream holds its slot for as long as it stays
    open, so 64 streams from 4 addresses refused every readiness probe and Kubernetes took
    the replica out of its Service. Checks now have their own budget (here the streams' is
    4, all from this address, to show it on one machine)."""
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    import heartsd.budgets

    monkeypatch.setattr(heartsd.budgets, "INFRA_CALLS", 4)
    monkeypatch.setattr(heartsd.budgets, "INFRA_CALLS_PER_PEER", 4)

    async def scenario():  # type: ignore[no-untyped-def]
        async with running_daemon(tmp_path) as daemon:
            async with daemon.channel() as channel:
                health = health_pb2_grpc.HealthStub(channel)
                watches = [health.Watch(health_pb2.HealthCheckRequest()) for _ in range(4)]
                for watch in watches:
                    await watch.read()  # each holds its slot now
                try:
                    return (await health.Check(health_pb2.HealthCheckRequest())).status, ""
                except grpc.aio.AioRpcError as exc:
                    return exc.code(), exc.details()
                finally:
                    for watch in watches:
                        watch.cancel()

    status, details = run(scenario())
    assert status == health_pb2.HealthCheckResponse.SERVING, (status, details)  # before: RESOURCE_EXHAUSTED


def test_watching_a_long_running_match_from_its_start_comes_in_parts_and_keeps_nothing(tmp_path):
    """An attack pass: WatchMatch on a running match sent every event after from_sequence in
    one message, built from messages its event log parsed and then kept for the rest of the
    match (the log keeps events encoded, ~40 bytes each, until someone asks). One call on a
    900-deal match held the event loop ~250 ms and left the match 64 MB larger (~1 MB for a
    16-deal one): one address, at 20 calls a second, could stall every match and sweep the
    running ones into more memory than the daemon's limit. Now a batch holds at most
    EVENTS_PER_BATCH events, encoded from what the log keeps, which keeps it encoded."""
    from heartsd.events import EncodedPrivateSlot
    from heartsd.spectating import EVENTS_PER_BATCH

    async def scenario():
        async with running_daemon(tmp_path, decision_ms=60_000) as daemon:
            match_id, bot = await long_match_held(daemon)  # waits at deal 20, its clock a minute
            log = daemon.arena.runners[match_id].log_events
            encoded = sum(isinstance(s, (bytes, EncodedPrivateSlot)) for s in log._slots)
            sizes, events = [], []
            async with daemon.channel() as channel:
                stub = spectator_pb2_grpc.SpectatorServiceStub(channel)
                async for response in stub.WatchMatch(spectator_pb2.WatchMatchRequest(match_id=match_id)):
                    sizes.append(len(response.events))
                    events.extend(response.events)
                    if len(events) >= log.last_sequence:
                        break
            still_encoded = sum(isinstance(s, (bytes, EncodedPrivateSlot)) for s in log._slots)
            await bot.close()
            return sizes, [e.sequence for e in events], log.last_sequence, encoded, still_encoded

    sizes, sequences, last, encoded, still_encoded = run(scenario())
    assert sequences == list(range(1, last + 1)) and last > EVENTS_PER_BATCH
    assert max(sizes) <= EVENTS_PER_BATCH, sizes
    assert still_encoded == encoded > last * 0.9, (encoded, still_encoded, last)


def test_watching_long_matches_from_their_start_spends_the_spectator_rate_by_the_events_sent(tmp_path, monkeypatch):
    """An attack pass: a WatchMatch was one call of the spectator rate however many events it
    sent, and sending a 900-deal match from its start took ~140 ms of the event loop: one
    address watching long matches from the start over and over, at its 20 calls a second,
    kept the loop from the bots. Now the events spend the rate too, a call's worth per
    EVENTS_PER_BATCH (here 16, so that a short match shows it), and when the rate is spent
    the stream waits for it (here a token in 100 s), with what it has sent so far: never cut."""
    import heartsd.spectating

    monkeypatch.setattr(heartsd.spectating, "EVENTS_PER_BATCH", 16, raising=False)

    async def scenario():
        async with running_daemon(tmp_path, decision_ms=60_000, spectator_calls_per_s=0.01) as daemon:
            match_id, bot = await long_match_held(daemon)  # waits at deal 20, its clock a minute
            last = daemon.arena.runners[match_id].log_events.last_sequence
            received = []
            async with daemon.channel() as channel:
                call = spectator_pb2_grpc.SpectatorServiceStub(channel).WatchMatch(
                    spectator_pb2.WatchMatchRequest(match_id=match_id))

                async def read() -> None:
                    async for response in call:
                        received.extend(e.sequence for e in response.events)

                reading = asyncio.ensure_future(read())
                await asyncio.wait({reading}, timeout=3)
                open_still = not reading.done()
                call.cancel()
                await asyncio.gather(reading, return_exceptions=True)
            await bot.close()
            return received, last, open_still

    received, last, open_still = run(scenario())
    assert last > 70 * 16, last  # more than the burst's worth (60) of batches
    assert open_still and received == list(range(1, len(received) + 1)), received[-3:]
    assert 50 * 16 <= len(received) < last, (len(received), last)


def test_watching_a_live_match_spends_the_spectator_rate_by_the_batches_it_is_sent(tmp_path):
    """An attack pass: a live watch spent the spectator rate by the events it was sent, a
    call's worth per 1,024, but a live match's events go out a few at a time, a batch at each
    move of the match, and each batch costs the daemon ~70 us however few its events (its
    wake-up, its bytes, its write): one address's 16 watchers of a bot's busy match took the
    event loop from ~0.9 s to ~2 s of CPU over 150 deals and cut the decisions a second to a
    third, for a fraction of one call. A batch now spends at least a sixteenth of a call, so
    a rate that refills nothing sends at most the burst's worth of batches (then the stream
    waits, never cut, and its later batches are larger). Counted in batches, not timed."""
    from heartsd.spectating import BATCHES_PER_CALL

    burst = 51  # the least the settings allow (a 1,000-match page)

    async def scenario():
        async with running_daemon(tmp_path, spectator_calls_per_s=0.001, spectator_burst=burst) as daemon:
            bot = await Bot(daemon, "alice").start()
            match_id = await daemon.create_match(["alice", *HOUSE3], deals=300)
            batches = [0]

            async def watch() -> None:
                async with daemon.channel() as channel:
                    stub = spectator_pb2_grpc.SpectatorServiceStub(channel)
                    async for _ in stub.WatchMatch(spectator_pb2.WatchMatchRequest(match_id=match_id)):
                        batches[0] += 1

            watching = asyncio.ensure_future(watch())
            await bot.wait_ended(match_id, 120)
            events = daemon.stored(match_id).record
            watching.cancel()
            await asyncio.gather(watching, return_exceptions=True)
            await bot.close()
            return batches[0], len(events.decisions)

    batches, decisions = run(scenario())
    assert decisions > 300 * 52
    assert batches <= burst * BATCHES_PER_CALL, f"{batches} batches sent for {burst} calls' worth of the rate"


def test_watching_a_finished_match_from_beyond_its_end_spends_the_rate_by_the_events_it_reads(tmp_path, monkeypatch):
    """An attack pass: a watch of a finished match reads its stored events from the first and
    passes over those up to from_sequence, and only the events sent spent the spectator rate.
    From beyond the end (OUT_OF_RANGE) or from its last event, a watch of a 1,000-deal match
    read and scanned 69,000 events for one call: ~6 such calls a second from one address took
    an honest bot from ~1,600 decisions a second to ~420. Now the events passed over spend the
    rate as sent ones do (EVENTS_PER_BATCH, here 16, so that a 16-deal match of ~1,100 events
    shows it: ~69 calls' worth, more than the burst of 60): past the rate the stream waits for
    it (here a token in 100 s), and the address's next call is refused. Before, the watch
    ended OUT_OF_RANGE at once, having spent one call."""
    import heartsd.spectating

    monkeypatch.setattr(heartsd.spectating, "EVENTS_PER_BATCH", 16, raising=False)

    async def scenario():
        async with running_daemon(tmp_path, spectator_calls_per_s=0.01) as daemon:
            match_id = await daemon.create_match(["house:random"] * 4, deals=16)
            await daemon.wait_finished(match_id)
            async with daemon.channel() as channel:
                stub = spectator_pb2_grpc.SpectatorServiceStub(channel)
                call = stub.WatchMatch(spectator_pb2.WatchMatchRequest(match_id=match_id, from_sequence=10**9))

                async def read() -> None:
                    async for _ in call:
                        pass

                reading = asyncio.ensure_future(read())
                await asyncio.wait({reading}, timeout=3)
                open_still = not reading.done()
                call.cancel()
                ended = await asyncio.gather(reading, return_exceptions=True)
                try:
                    await stub.ListMatches(spectator_pb2.ListMatchesRequest(limit=1))
                    listed = grpc.StatusCode.OK, ""
                except grpc.aio.AioRpcError as exc:
                    listed = exc.code(), exc.details()
            return open_still, ended, listed

    open_still, ended, (listed, why) = run(scenario())
    assert open_still, ended  # before: OUT_OF_RANGE at once
    assert listed == grpc.StatusCode.RESOURCE_EXHAUSTED, (listed, why)
    assert "too many spectator calls from your address" in why, why


async def record_twice_then_a_page(daemon, match_id: str) -> list[tuple[grpc.StatusCode, str]]:
    """The status and details of two GetMatchRecord calls for ``match_id``, then a small
    ListMatches, from one address: the record's price against the spectator rate."""
    outcomes = []
    async with daemon.channel() as channel:
        stub = spectator_pb2_grpc.SpectatorServiceStub(channel)
        for call in (lambda: stub.GetMatchRecord(spectator_pb2.GetMatchRecordRequest(match_id=match_id)),
                     lambda: stub.GetMatchRecord(spectator_pb2.GetMatchRecordRequest(match_id=match_id)),
                     lambda: stub.ListMatches(spectator_pb2.ListMatchesRequest(limit=1))):
            try:
                await call()
                outcomes.append((grpc.StatusCode.OK, ""))
            except grpc.aio.AioRpcError as exc:
                outcomes.append((exc.code(), exc.details()))
    return outcomes


def test_a_match_record_spends_the_spectator_rate_by_its_size(tmp_path, monkeypatch):
    """An attack pass: GetMatchRecord cost one call of the spectator rate whatever the record's
    size, and a 1,000-deal record (3.5 MB) took ~70 ms a call: one address fetching long
    matches' records at its 20 calls a second took more than the event loop has. Now it costs
    one more per RECORD_BYTES_PER_TOKEN of the match's stored events (here 1 KiB, so that a
    16-deal match shows it), checked before the record is loaded; a small call still goes."""
    import heartsd.rates

    monkeypatch.setattr(heartsd.rates, "RECORD_BYTES_PER_TOKEN", 1024)

    async def scenario():
        async with running_daemon(tmp_path, spectator_calls_per_s=0.01) as daemon:
            match_id = await daemon.create_match(["house:random"] * 4, deals=16)
            await daemon.wait_finished(match_id)
            size = daemon.arena.store.match_state(match_id)[2]
            outcomes = await record_twice_then_a_page(daemon, match_id)
            return size, outcomes

    size, outcomes = run(scenario())
    assert 30 * 1024 < size < 58 * 1024, size  # one record fits in the burst (60), two do not
    (first, _), (second, why), (small, _) = outcomes
    assert (first, second, small) == (grpc.StatusCode.OK, grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.OK), outcomes
    assert "too many spectator calls from your address" in why and "try again in" in why, why


def test_a_record_without_stored_events_spends_the_spectator_rate_by_the_records_size(tmp_path, monkeypatch):
    """GetMatchRecord charges by the match's stored events, checked before the record is
    loaded; a match aborted with its server (another daemon marked it, keeping its last
    checkpoint) has a record and no events, and was charged one call however long its
    record (the last stop's left-alone). Now such a record is charged by its own size."""
    import heartsd.rates

    from heartsd import runner as runner_module

    monkeypatch.setattr(runner_module, "CHECKPOINT_EVERY_S", 0.0)  # a checkpoint at every deal's end

    async def scenario():
        async with running_daemon(tmp_path, spectator_calls_per_s=0.01, house_delay_ms=3) as daemon:
            match_id = await daemon.create_match(["house:random"] * 4, deals=40)
            runner = daemon.arena.runners[match_id]
            while len(runner.match.results) < 6 or daemon.stored(match_id).record is None:
                await asyncio.sleep(0.02)
            assert daemon.arena.store.abort_interrupted() == [match_id]  # what the next daemon does at its start
            await daemon.wait_finished(match_id)
            stored = daemon.stored(match_id)
            state = daemon.arena.store.match_state(match_id)
            size = len(stored.record.SerializeToString())
            # One record costs 41 of the burst of 60 (the call and 40 by size): the second is refused.
            monkeypatch.setattr(heartsd.rates, "RECORD_BYTES_PER_TOKEN", size / 40)
            outcomes = await record_twice_then_a_page(daemon, match_id)
            return stored.status, state, outcomes

    status, state, outcomes = run(scenario())
    assert status == "aborted" and state[2] is None, state  # a record, and no events
    (first, _), (second, why), (small, _) = outcomes
    assert (first, second, small) == (grpc.StatusCode.OK, grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.OK), outcomes
    assert "too many spectator calls from your address" in why, why


def test_a_bots_drain_reason_reaches_no_terminal_as_control_characters(tmp_path):
    """An attack pass: a bot's drain reason (its own free text, up to 200 characters) was kept
    as sent and quoted in CreateMatch's refusal of the draining bot, which `heartsd admin
    create` prints as it comes: escape sequences in it retitled and cleared the organiser's
    terminal (as hello.version's once did). Now it is kept with its control and format
    characters written as escapes (logs.printable), and the admin command escapes what a
    refusal says too."""
    from heartsbot.proto import admin_pb2, admin_pb2_grpc

    from heartsd.admin_cli import translate_error

    hostile = "bye\x1b]0;owned\x07\x1b[2J\u202e"

    async def scenario():
        async with running_daemon(tmp_path, decision_ms=60_000) as daemon:
            bot = await Bot(daemon, "alice", lambda request, bot: None).start()  # in a match that waits for it
            await daemon.create_match(["alice", *HOUSE3], deals=1)
            bot.send(bot_pb2.PlayRequest(drain=bot_pb2.Drain(reason=hostile)))
            session = await session_of(daemon, "alice")
            for _ in range(200):
                if session.drain_reason:
                    break
                await asyncio.sleep(0.01)
            async with daemon.channel() as channel:
                request = admin_pb2.CreateMatchRequest(ruleset="standard")
                request.seats.add(bot="alice")
                for _ in range(3):
                    request.seats.add(house="random")
                try:
                    await admin_pb2_grpc.AdminServiceStub(channel).CreateMatch(request, metadata=auth(ADMIN))
                    refused = None
                except grpc.aio.AioRpcError as exc:
                    refused = (exc.code(), exc.details())
            await bot.close()
            return refused, session.drain_reason

    class Hostile(grpc.RpcError):  # whatever a server (an older one, another one) may say
        def code(self):
            return grpc.StatusCode.FAILED_PRECONDITION

        def details(self):
            return f"bot 'mallory' is draining ({hostile})"

    cli_text = str(translate_error(Hostile(), "127.0.0.1:1"))
    refused, kept = run(scenario())
    assert refused is not None and refused[0] == grpc.StatusCode.FAILED_PRECONDITION, refused
    assert "draining" in refused[1] and refused[1].isprintable(), refused[1]
    assert kept.isprintable() and kept.startswith("bye\\x1b]0;owned"), kept
    assert cli_text.isprintable(), cli_text
