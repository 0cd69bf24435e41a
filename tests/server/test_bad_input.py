"""Untrusted input gets a clear status or an in-band rejection; the server keeps going."""

from __future__ import annotations

import asyncio

import grpc
import pytest

from heartsbot.proto import (
    admin_pb2,
    admin_pb2_grpc,
    bot_pb2,
    bot_pb2_grpc,
    cards_pb2,
    game_pb2,
    spectator_pb2,
    spectator_pb2_grpc,
    tournament_pb2,
    tournament_pb2_grpc,
)

from .harness import ADMIN, BOTS, Bot, auth, first_legal, run, running_daemon

P = game_pb2
HOUSE3 = ["house:random", "house:random", "house:random"]


async def stream_status(daemon, messages, metadata):
    """Open a bot stream, send ``messages``, return the final status code and details."""
    async with daemon.channel() as channel:
        call = bot_pb2_grpc.BotServiceStub(channel).Play(iter(messages), metadata=metadata)
        try:
            async for _ in call:
                pass
        except grpc.aio.AioRpcError as exc:
            return exc.code(), exc.details()
        return call.code() if False else grpc.StatusCode.OK, ""


def hello(name="alice", **kw):
    return bot_pb2.PlayRequest(hello=bot_pb2.Hello(name=name, **kw))


@pytest.mark.parametrize(
    ("messages", "metadata", "code", "text"),
    [
        ([hello()], (), grpc.StatusCode.UNAUTHENTICATED, "authorization"),
        ([hello()], auth("not-a-token"), grpc.StatusCode.UNAUTHENTICATED, "unknown bot token"),
        ([hello()], (("authorization", "Basic abc"),), grpc.StatusCode.UNAUTHENTICATED, "Bearer"),
        ([hello("bob")], auth(BOTS["alice"]), grpc.StatusCode.PERMISSION_DENIED, "belongs to bot 'alice'"),
        ([bot_pb2.PlayRequest(answer=bot_pb2.Answer())], auth(BOTS["alice"]), grpc.StatusCode.INVALID_ARGUMENT, "first message"),
        ([hello(rulesets=["poker"])], auth(BOTS["alice"]), grpc.StatusCode.INVALID_ARGUMENT, "unknown rulesets: poker"),
        ([hello(), hello()], auth(BOTS["alice"]), grpc.StatusCode.INVALID_ARGUMENT, "only be sent once"),
        ([hello(), bot_pb2.PlayRequest()], auth(BOTS["alice"]), grpc.StatusCode.INVALID_ARGUMENT, "empty message"),
        (
            [hello(version="x" * 100_000)],
            auth(BOTS["alice"]),
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            "",
        ),
        # Within the message limit, a 30,000-character version was taken (an attack pass):
        # logged whole at every connect (42 KB a line) and frozen into a tournament's roster.
        ([hello(version="v" * 129)], auth(BOTS["alice"]), grpc.StatusCode.INVALID_ARGUMENT,
         "hello.version is at most 128 characters, got 129"),
        # An attack pass: a version of terminal escapes (clear the screen, a hidden link, a
        # line break drawing a made-up row) reached an organiser's `heartsd admin bots`
        # whole. Refused, and the refusal shows them escaped, never raw.
        ([hello(version="1.0\x1b[2J\x1b]8;;http://evil.example/\x1b\\click\r\n")], auth(BOTS["alice"]),
         grpc.StatusCode.INVALID_ARGUMENT,
         "hello.version must be printable text (no control, format or separator characters but the space): "
         "'1.0\\x1b[2J\\x1b]8;;http://evil.example/\\x1b\\\\click\\r\\n'"),
        ([hello(version="1.0\u202e0.2")], auth(BOTS["alice"]), grpc.StatusCode.INVALID_ARGUMENT,
         "hello.version must be printable text"),  # a right-to-left override, which reorders what follows
        ([hello(version="1.0\u00a0beta")], auth(BOTS["alice"]), grpc.StatusCode.INVALID_ARGUMENT,
         "separator characters but the space"),  # a no-break space: a separator, as the refusal now says
        # The refusal quotes the caller's name clipped, not whole (it echoed 60,000 characters).
        ([hello("b" * 5000)], auth(BOTS["alice"]), grpc.StatusCode.PERMISSION_DENIED,
         "belongs to bot 'alice', not 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb…' (5000 characters)"),
    ],
)
def test_bot_stream_errors_get_the_right_status(tmp_path, messages, metadata, code, text):
    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            result = await stream_status(daemon, messages, metadata)
            # The server keeps going: a normal match still completes.
            bot = await Bot(daemon, "carol").start()
            match_id = await daemon.create_match(["carol", *HOUSE3])
            await bot.wait_ended(match_id)
            await bot.close()
            return result

    got, details = run(scenario())
    assert got == code
    assert text in details


def test_malformed_bytes_end_only_that_stream(tmp_path):
    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            async with daemon.channel() as channel:
                raw = channel.stream_stream("/hearts.v1.BotService/Play", request_serializer=None, response_deserializer=None)
                call = raw(iter([b"\xff\xff\xff\xff not protobuf"]), metadata=auth(BOTS["alice"]))
                with pytest.raises(grpc.aio.AioRpcError) as err:
                    async for _ in call:
                        pass
            bot = await Bot(daemon, "carol").start()
            match_id = await daemon.create_match(["carol", *HOUSE3])
            await bot.wait_ended(match_id)
            await bot.close()
            return err.value.code()

    code = run(scenario())
    assert code == grpc.StatusCode.INVALID_ARGUMENT


def test_in_band_rejections_for_wrong_ids_twice_other_matches_and_malformed_cards(tmp_path):
    def policy(request, bot):
        if request.kind != P.DECISION_KIND_PLAY or hasattr(bot, "done"):
            return first_legal(request, bot)
        bot.done = True
        good = first_legal(request, bot)
        wrong_id = bot_pb2.Answer(request_id="r-000000000000", play=good.play)
        no_card = bot_pb2.Answer(request_id=request.request_id, play=cards_pb2.Card(suit=9, rank=2))
        wrong_kind = bot_pb2.Answer(request_id=request.request_id, moon=P.MOON_OPTION_ADD_TO_OTHERS)
        empty = bot_pb2.Answer(request_id=request.request_id)
        other_match = bot_pb2.Answer(match_id="m-elsewhere", request_id=request.request_id, play=good.play)
        twice = bot_pb2.Answer(request_id=request.request_id, play=good.play)
        no_id = bot_pb2.Answer(play=good.play)
        return [wrong_id, no_card, wrong_kind, other_match, no_id, good, twice, empty]

    async def scenario():
        async with running_daemon(tmp_path, max_illegal=5) as daemon:
            bot = await Bot(daemon, "alice", policy).start()
            match_id = await daemon.create_match(["alice", *HOUSE3], seed=2)
            await bot.wait_ended(match_id)
            await bot.close()
            return bot, daemon.stored(match_id)

    bot, stored = run(scenario())
    codes = [r.code for r in bot.rejections]
    assert codes == [
        bot_pb2.REJECTION_CODE_UNKNOWN_REQUEST,
        bot_pb2.REJECTION_CODE_MALFORMED,
        bot_pb2.REJECTION_CODE_MALFORMED,
        bot_pb2.REJECTION_CODE_UNKNOWN_MATCH,
        bot_pb2.REJECTION_CODE_UNKNOWN_REQUEST,
        bot_pb2.REJECTION_CODE_STALE_REQUEST,
        bot_pb2.REJECTION_CODE_STALE_REQUEST,
    ]
    assert "not a card" in bot.rejections[1].reason
    # No request id at all: said so (before, the reason spoke of an id too long to echo).
    assert bot.rejections[4].reason == "an answer needs the request_id of the request it answers"
    assert "'play' answer" in bot.rejections[2].reason
    assert stored.status == "finished"
    assert all(d.provenance == P.PROVENANCE_BOT for d in stored.record.decisions if d.seat == 0)


def test_a_bot_cannot_answer_for_another_seat(tmp_path):
    """Bob learns nothing of alice's request ids; a guessed id is unknown to him."""

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            stolen = []

            def alice_policy(request, bot):
                stolen.append(request.request_id)
                return first_legal(request, bot)

            alice = await Bot(daemon, "alice", alice_policy).start()
            bob = await Bot(daemon, "bob").start()
            match_id = await daemon.create_match(["alice", "bob", "house:random", "house:random"], seed=1)
            while not stolen:
                await asyncio.sleep(0.01)
            bob.send(bot_pb2.PlayRequest(answer=bot_pb2.Answer(match_id=match_id, request_id=stolen[0])))
            await alice.wait_ended(match_id)
            await asyncio.sleep(0.1)
            await alice.close()
            await bob.close()
            return bob

    bob = run(scenario())
    assert bob.rejections and bob.rejections[0].code == bot_pb2.REJECTION_CODE_UNKNOWN_REQUEST


@pytest.mark.parametrize(
    ("change", "code", "text"),
    [
        (dict(ruleset="poker"), grpc.StatusCode.INVALID_ARGUMENT, "unknown ruleset 'poker'"),
        (dict(players=5), grpc.StatusCode.INVALID_ARGUMENT, "standard is played by 4 players, got 5"),
        (dict(seats=["alice", "house:random"], players=4), grpc.StatusCode.INVALID_ARGUMENT, "needs 4 seats"),
        (dict(seats=["zed", *HOUSE3]), grpc.StatusCode.FAILED_PRECONDITION, "'zed' is not connected"),
        (dict(seats=["house:genius", *HOUSE3]), grpc.StatusCode.INVALID_ARGUMENT,
         "unknown house strategy 'genius'; known: heuristic, mc, random, graded-Q or graded-Qr (Q from 0 to 100)"),
        (dict(seats=["house:graded-101", *HOUSE3]), grpc.StatusCode.INVALID_ARGUMENT, "unknown house strategy"),
        # before (an attack pass): "unknown house strategy None", a strategy nobody asked for
        (dict(seats=["alice", "", *HOUSE3[:2]]), grpc.StatusCode.INVALID_ARGUMENT, "seat 1: a bot seat needs the bot's name"),
        (dict(duplicate=True, deals=3), grpc.StatusCode.INVALID_ARGUMENT, "multiple of 4"),
        (dict(clock=dict(decision_ms=-5)), grpc.StatusCode.INVALID_ARGUMENT, "decision_ms"),
        (dict(ruleset="classic", options=dict(target=10)), grpc.StatusCode.INVALID_ARGUMENT, "at least 50"),
        # before (an attack pass): accepted, a game to 2,000,000,000 points, which never ends
        (dict(ruleset="classic", options=dict(target=2_000_000_000), deals=0), grpc.StatusCode.INVALID_ARGUMENT,
         "options.target is at most 1000 (a game to it lasts up to about 150 deals), got 2000000000"),
        # A preset's option on another preset (a conformance pass): standard with target 1
        # was a standard match that ended after one deal, and a Hartenjagen option on
        # classic was "Ruleset.__init__() got an unexpected keyword argument 'passing'".
        (dict(options=dict(target=1)), grpc.StatusCode.INVALID_ARGUMENT,
         "options.target applies to classic only, not standard"),
        (dict(ruleset="omnibus", options=dict(target=60)), grpc.StatusCode.INVALID_ARGUMENT,
         "options.target applies to classic only, not omnibus"),
        (dict(ruleset="hartenjagen", options=dict(target=60)), grpc.StatusCode.INVALID_ARGUMENT,
         "options.target applies to classic only, not hartenjagen"),
        (dict(ruleset="classic", options=dict(hartenjagen_passing=True)), grpc.StatusCode.INVALID_ARGUMENT,
         "options.hartenjagen_passing applies to hartenjagen, hartenjagen-quick only, not classic"),
        (dict(options=dict(moon_requires_bonus=True)), grpc.StatusCode.INVALID_ARGUMENT,
         "options.moon_requires_bonus applies to omnibus only, not standard"),
    ],
)
def test_create_match_validation(tmp_path, change, code, text):
    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            kw = dict(seats=list(HOUSE3) + ["house:random"], ruleset="standard", deals=1)
            kw.update(change)
            seats = kw.pop("seats")
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await daemon.create_match(seats, **kw)
            return err.value

    err = run(scenario())
    assert err.code() == code and text in err.details()


def test_a_refusal_quotes_a_long_input_clipped(tmp_path):
    """NOT_FOUND for a 60,000-character id: the message names it clipped (before, whole:
    60,009 characters, past what common clients take as a status message)."""
    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            async with daemon.channel() as channel:
                spectator = spectator_pb2_grpc.SpectatorServiceStub(channel)
                try:
                    await spectator.GetMatchRecord(spectator_pb2.GetMatchRecordRequest(match_id="m" * 60_000))
                except grpc.aio.AioRpcError as exc:
                    return exc

    err = run(scenario())
    assert err.code() == grpc.StatusCode.NOT_FOUND
    assert err.details().startswith("no match mmm") and len(err.details()) < 1100
    assert err.details().endswith("more characters)")



def test_a_refusal_quoting_many_byte_characters_keeps_its_status(tmp_path):
    """A match id of 2,000 four-byte characters: every call gets NOT_FOUND. Before (an
    attack pass), the refusal was clipped to 1,000 characters, 12 KB once gRPC had
    percent-encoded them, past the client's 8 KiB for metadata, and most calls failed
    RESOURCE_EXHAUSTED instead (gRPC refuses at random between its soft and hard limits,
    so the call is made 20 times)."""
    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            async with daemon.channel() as channel:
                spectator = spectator_pb2_grpc.SpectatorServiceStub(channel)
                errors = []
                for _ in range(20):
                    try:
                        await spectator.GetMatchRecord(spectator_pb2.GetMatchRecordRequest(match_id="\U0001F0A1" * 2000))
                    except grpc.aio.AioRpcError as exc:
                        errors.append(exc)
                return errors

    errors = run(scenario())
    assert [e.code() for e in errors] == [grpc.StatusCode.NOT_FOUND] * 20
    assert all(len(e.details().encode()) < 1100 and e.details().endswith("more characters)") for e in errors)

def test_admin_and_spectator_errors(tmp_path):
    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            out = {}
            async with daemon.channel() as channel:
                admin = admin_pb2_grpc.AdminServiceStub(channel)
                spectator = spectator_pb2_grpc.SpectatorServiceStub(channel)
                calls = {
                    "no token": admin.ListBots(admin_pb2.ListBotsRequest()),
                    "bot token": admin.ListBots(admin_pb2.ListBotsRequest(), metadata=auth(BOTS["alice"])),
                    "cancel unknown": admin.CancelMatch(admin_pb2.CancelMatchRequest(match_id="m-x"), metadata=auth(ADMIN)),
                    "record unknown": spectator.GetMatchRecord(spectator_pb2.GetMatchRecordRequest(match_id="m-x")),
                    "list bad limit": spectator.ListMatches(spectator_pb2.ListMatchesRequest(limit=5000)),
                }
                for name, call in calls.items():
                    try:
                        await call
                        out[name] = grpc.StatusCode.OK
                    except grpc.aio.AioRpcError as exc:
                        out[name] = exc.code()
                watch = spectator.WatchMatch(spectator_pb2.WatchMatchRequest(match_id="m-x"))
                try:
                    async for _ in watch:
                        pass
                except grpc.aio.AioRpcError as exc:
                    out["watch unknown"] = exc.code()
                # A running match's record is not available yet (it would show hands).
                gate = asyncio.Event()

                async def hold(request, bot):
                    await gate.wait()

                bot = await Bot(daemon, "alice", hold).start()
                match_id = await daemon.create_match(["alice", *HOUSE3])
                try:
                    await spectator.GetMatchRecord(spectator_pb2.GetMatchRecordRequest(match_id=match_id))
                except grpc.aio.AioRpcError as exc:
                    out["record running"] = exc.code()
                cancelled = await admin.CancelMatch(
                    admin_pb2.CancelMatchRequest(match_id=match_id, reason="test"), metadata=auth(ADMIN))
                out["cancelled"] = cancelled.result
                try:
                    await admin.CancelMatch(admin_pb2.CancelMatchRequest(match_id=match_id), metadata=auth(ADMIN))
                except grpc.aio.AioRpcError as exc:
                    out["cancel twice"] = exc.code()
                gate.set()
                await bot.close()
            return out, daemon.stored(match_id)

    out, stored = run(scenario())
    assert out["no token"] == grpc.StatusCode.UNAUTHENTICATED
    assert out["bot token"] == grpc.StatusCode.PERMISSION_DENIED
    assert out["cancel unknown"] == grpc.StatusCode.NOT_FOUND
    assert out["record unknown"] == grpc.StatusCode.NOT_FOUND
    assert out["list bad limit"] == grpc.StatusCode.INVALID_ARGUMENT
    assert out["watch unknown"] == grpc.StatusCode.NOT_FOUND
    assert out["record running"] == grpc.StatusCode.FAILED_PRECONDITION
    assert out["cancel twice"] == grpc.StatusCode.FAILED_PRECONDITION
    assert out["cancelled"].status == P.MATCH_STATUS_CANCELLED and out["cancelled"].reason == "test"
    assert stored.status == "cancelled" and stored.record is not None


def test_hello_needs_a_name_and_watch_rejects_a_sequence_beyond_the_log(tmp_path):
    async def scenario():
        # House moves 20 ms apart: the match is still live when it is watched.
        async with running_daemon(tmp_path, house_delay_ms=20) as daemon:
            nameless = await stream_status(daemon, [hello(name="")], auth(BOTS["alice"]))
            match_id = await daemon.create_match(["house:random"] * 4, deals=1)
            runner = daemon.arena.runners.get(match_id)
            async with daemon.channel() as channel:
                stub = spectator_pb2_grpc.SpectatorServiceStub(channel)
                watch = stub.WatchMatch(spectator_pb2.WatchMatchRequest(match_id=match_id, from_sequence=10**6))
                try:
                    async for _ in watch:
                        pass
                    code = grpc.StatusCode.OK
                except grpc.aio.AioRpcError as exc:
                    code = exc.code()
            await daemon.wait_finished(match_id)
            return nameless, code, runner

    nameless, code, runner = run(scenario())
    assert nameless[0] == grpc.StatusCode.INVALID_ARGUMENT and "name is required" in nameless[1]
    assert code in (grpc.StatusCode.OUT_OF_RANGE, grpc.StatusCode.FAILED_PRECONDITION)
    assert runner is not None and not runner.watchers  # no watcher left behind


def test_a_result_that_cannot_be_stored_is_announced_as_aborted(tmp_path, monkeypatch):
    import heartsd.arena

    monkeypatch.setattr(heartsd.arena, "STORE_RETRY_DELAYS_S", (0.01,))  # ~70 s of retries otherwise

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            def broken(*args, **kwargs):
                raise OSError("disk full")

            daemon.arena.store.finish = broken
            bot = await Bot(daemon, "alice").start()
            match_id = await daemon.create_match(["alice", *HOUSE3], deals=1)
            result = await bot.wait_ended(match_id, timeout=30)
            runner_gone = match_id not in daemon.arena.runners
            await bot.close()
            return result, runner_gone

    result, runner_gone = run(scenario())
    assert result.status == P.MATCH_STATUS_ABORTED and "could not be stored" in result.reason
    assert runner_gone


@pytest.mark.parametrize("flood", ["answers", "resumes"])
def test_a_flooding_bot_is_cut_off_and_everyone_else_plays_on(tmp_path, flood):
    """Rejected answers are budgeted per request a bot was sent and resumes per seat: a bot
    that floods them ends with RESOURCE_EXHAUSTED (a resume re-sends a whole match, so unlimited
    resumes would amplify), its seat is defaulted, other matches finish, and it may reconnect."""

    async def scenario():
        async with running_daemon(tmp_path, grace_ms=200) as daemon:
            carol = await Bot(daemon, "carol").start()
            honest = await daemon.create_match(["carol", *HOUSE3], deals=2)
            flooder = await Bot(daemon, "alice", lambda request, bot: None).start()  # never answers
            flooded = await daemon.create_match(["alice", *HOUSE3], deals=1)
            while not any(m.update.HasField("request") for m in flooder.received):
                await asyncio.sleep(0.01)
            if flood == "answers":
                junk = bot_pb2.PlayRequest(answer=bot_pb2.Answer(match_id="m-nowhere", request_id="r-1"))
            else:
                junk = bot_pb2.PlayRequest(resume=bot_pb2.Resume(match_id=flooded, seat=0, last_sequence=0))
            for _ in range(400 if flood == "answers" else 50):  # both far past the limits, and finite: the
                flooder.send(junk)                               # server reads the rest before its status goes out
            for _ in range(1000):
                if await flooder.status() is not None:
                    break
                await asyncio.sleep(0.01)
            status = await flooder.status()
            assert status is not None, "the flooding bot was never cut off"
            details = await flooder._call.details()
            await carol.wait_ended(honest)
            await daemon.wait_finished(flooded)
            again = await Bot(daemon, "alice").start()  # the bot may come back and play
            later = await daemon.create_match(["alice", *HOUSE3], deals=1)
            await again.wait_ended(later)
            await carol.close()
            await again.close()
            return status, details, flooder, daemon.stored(honest), daemon.stored(flooded), daemon.stored(later)

    status, details, flooder, honest, flooded, later = run(scenario())
    assert status == grpc.StatusCode.RESOURCE_EXHAUSTED, details
    if flood == "answers":
        assert "too many rejected answers" in details
        assert 64 <= len(flooder.rejections) < 400
    else:
        assert "more than 3 resumes of one seat" in details
        resent = [m for m in flooder.received if m.HasField("update")]  # alice plays only the flooded match
        assert 3 <= len(resent) < 20  # the match was re-sent three times, not 50
    assert honest.status == flooded.status == later.status == "finished"
    assert any(d.provenance == P.PROVENANCE_DISCONNECT for d in flooded.record.decisions if d.seat == 0)
    assert all(d.provenance == P.PROVENANCE_BOT for d in later.record.decisions if d.seat == 0)


def test_a_stream_that_never_says_hello_is_ended(tmp_path, monkeypatch):
    import heartsd.services

    monkeypatch.setattr(heartsd.services, "HELLO_TIMEOUT_S", 0.3)

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            async with daemon.channel() as channel:
                call = bot_pb2_grpc.BotServiceStub(channel).Play(metadata=auth(BOTS["alice"]))
                with pytest.raises(grpc.aio.AioRpcError) as ended:
                    await asyncio.wait_for(call.read(), 10)
            bot = await Bot(daemon, "alice").start()  # the bot can still connect properly
            match_id = await daemon.create_match(["alice", *HOUSE3])
            await bot.wait_ended(match_id)
            await bot.close()
            return ended.value

    ended = run(scenario())
    assert ended.code() == grpc.StatusCode.INVALID_ARGUMENT and "no 'hello' within 0.3 s" in ended.details()


def test_the_rejection_budget_refills_with_requests_but_never_banks():
    from heartsd.sessions import RESUMES_PER_SEAT, WASTE_ALLOWANCE, BotSession

    session = BotSession("alice", "t", frozenset(), 2)
    cap = WASTE_ALLOWANCE + 4 * 2
    for _ in range(1000):  # a bot that never answers still gets requests: no allowance piles up
        session.allow_waste(5)
    assert session.waste_allowance == cap
    assert not any(session.wasted() for _ in range(cap)) and session.wasted()
    session.allow_waste(5)  # a new request gives some back
    assert not session.wasted()
    assert all(session.may_resume("m-1", 0) for _ in range(RESUMES_PER_SEAT))
    assert not session.may_resume("m-1", 0) and session.may_resume("m-1", 1)


def test_a_request_that_does_not_decode_is_refused_invalid_argument_on_every_method(tmp_path):
    """Before: garbage bytes, a truncated message or a string field that is not UTF-8, sent to
    any method but the bot stream, ended UNKNOWN with a Python exception's text ("Unexpected
    <class 'google.protobuf.message.DecodeError'>: Error parsing message ..."), found by an
    attack pass. Every such method now answers INVALID_ARGUMENT naming the message type."""
    from grpc_health.v1 import health_pb2

    from heartsd.server import SERVICE_NAMES

    from grpc_reflection.v1alpha import reflection_pb2

    services = [pool_service(name) for name in SERVICE_NAMES[1:]]
    services.append(health_pb2.DESCRIPTOR.services_by_name["Health"])
    services.append(reflection_pb2.DESCRIPTOR.services_by_name["ServerReflection"])  # client-streaming
    methods = [(f"/{s.full_name}/{m.name}", m.input_type.full_name, (m.client_streaming, m.server_streaming))
               for s in services for m in s.methods]
    assert all(not client for _, _, (client, _) in methods[:-1])  # the bot stream's is tested on its own
    bad_bodies = {"garbage": b"\xff\xff\xff\xff", "truncated": b"\x0a\x10abc", "not utf-8": b"\x0a\x02\xc3\x28"}

    async def scenario():
        outcomes = {}
        async with running_daemon(tmp_path) as daemon, daemon.channel() as channel:
            for path, input_type, streaming in methods:
                for label, body in bad_bodies.items():
                    if label == "not utf-8" and not first_field_is_string(input_type):
                        continue
                    client, server = streaming
                    kind = {(False, False): channel.unary_unary, (False, True): channel.unary_stream,
                            (True, True): channel.stream_stream}[(client, server)]
                    argument = iter([body]) if client else body
                    call = kind(path, request_serializer=None, response_deserializer=None)(argument, metadata=auth(ADMIN))
                    try:
                        if server:
                            async for _ in call:
                                pass
                        else:
                            await call
                        outcomes[(path, label)] = ("OK", "")
                    except grpc.aio.AioRpcError as exc:
                        outcomes[(path, label)] = (exc.code().name, exc.details() or "")
        return outcomes

    outcomes = run(scenario())
    assert len(methods) >= 15 and len(outcomes) >= 2 * len(methods)
    wrong = {key: got for key, got in outcomes.items()
             if got[0] != "INVALID_ARGUMENT" or "protobuf decoding failed" not in got[1]}
    assert not wrong, wrong
    types = {path: t for path, t, _ in methods}
    assert all(types[path] in details for (path, _), (_, details) in outcomes.items())


def pool_service(full_name: str):
    from google.protobuf import descriptor_pool

    return descriptor_pool.Default().FindServiceByName(full_name)


def first_field_is_string(message_type: str) -> bool:
    """Whether field 1 of ``message_type`` is a string (where bytes that are not UTF-8 fail)."""
    from google.protobuf import descriptor_pool
    from google.protobuf.descriptor import FieldDescriptor

    field = descriptor_pool.Default().FindMessageTypeByName(message_type).fields_by_number.get(1)
    return field is not None and field.type == FieldDescriptor.TYPE_STRING


def first_string_field(message_type: str):
    """The first top-level string field of ``message_type`` (a FieldDescriptor), or None."""
    from google.protobuf import descriptor_pool
    from google.protobuf.descriptor import FieldDescriptor

    fields = descriptor_pool.Default().FindMessageTypeByName(message_type).fields
    return next((f for f in fields if f.type == FieldDescriptor.TYPE_STRING and not f.is_repeated), None)


def test_a_nul_character_in_any_text_field_is_refused_naming_the_field_on_every_method(tmp_path):
    """An attack pass: PostgreSQL refuses U+0000 in text, so on it a NUL in a public id
    answered INTERNAL with a traceback (about 20 a second per address, unauthenticated), and
    WatchMatch answered UNKNOWN with the database driver's own message; on SQLite the same
    ids were NOT_FOUND. Now every method but the bot stream refuses a NUL in any text field
    INVALID_ARGUMENT, naming the field, before its handler runs, on either store."""
    from grpc_health.v1 import health_pb2

    from heartsd.server import SERVICE_NAMES

    services = [pool_service(name) for name in SERVICE_NAMES[1:]]
    services.append(health_pb2.DESCRIPTOR.services_by_name["Health"])
    methods = [(f"/{s.full_name}/{m.name}", m.input_type.full_name, m.server_streaming)
               for s in services for m in s.methods if first_string_field(m.input_type.full_name) is not None]
    assert len(methods) >= 12, methods

    async def scenario():
        outcomes = {}
        async with running_daemon(tmp_path) as daemon, daemon.channel() as channel:
            for path, input_type, server_streaming in methods:
                from google.protobuf import message_factory, descriptor_pool

                cls = message_factory.GetMessageClass(descriptor_pool.Default().FindMessageTypeByName(input_type))
                field = first_string_field(input_type)
                body = cls(**{field.name: "m-\x00x"}).SerializeToString()
                kind = channel.unary_stream if server_streaming else channel.unary_unary
                call = kind(path, request_serializer=None, response_deserializer=None)(body, metadata=auth(ADMIN),
                                                                               timeout=10)
                try:
                    if server_streaming:
                        async for _ in call:
                            pass
                    else:
                        await call
                    outcomes[path] = ("OK", "", field.name)
                except grpc.aio.AioRpcError as exc:
                    outcomes[path] = (exc.code().name, exc.details() or "", field.name)
        return outcomes

    outcomes = run(scenario())
    wrong = {path: got for path, got in outcomes.items()
             if got[0] != "INVALID_ARGUMENT" or f".{got[2]} holds a NUL character" not in got[1]}
    assert not wrong, wrong


def test_a_nul_in_a_cancel_reason_keeps_the_match_and_its_record_on_every_store(tmp_path, store_url):
    """The attack pass's worst case, on PostgreSQL: CancelMatch with reason "oops\\0" hung to
    the client's deadline while the match's record failed to store for ~70 s of retries,
    health flapping NOT_SERVING (a readiness probe would have pulled the pod), and then the
    match was aborted with its record lost. Now the call is refused at once and nothing
    else changes; the match can still be cancelled, and its record is kept."""
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    async def scenario():
        async with running_daemon(tmp_path, db=store_url) as daemon:
            match_id = await daemon.create_match(["house:random"] * 4, deals=1000)
            async with daemon.channel() as channel:
                admin = admin_pb2_grpc.AdminServiceStub(channel)
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await admin.CancelMatch(admin_pb2.CancelMatchRequest(match_id=match_id, reason="oops\x00"),
                                            metadata=auth(ADMIN), timeout=10)
                running = daemon.arena.runners.get(match_id) is not None
                await admin.CancelMatch(admin_pb2.CancelMatchRequest(match_id=match_id, reason="oops"),
                                        metadata=auth(ADMIN), timeout=10)
                await daemon.wait_finished(match_id)
                health = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=10)
            return refused.value, running, daemon.stored(match_id), health.status, daemon.arena.unstored_matches

    refused, running, stored, health, unstored = run(scenario())
    assert refused.code() == grpc.StatusCode.INVALID_ARGUMENT, refused
    assert "hearts.v1.CancelMatchRequest.reason holds a NUL character" in refused.details(), refused.details()
    assert running, "the refused call changed nothing"
    assert stored is not None and stored.status == "cancelled" and stored.reason == "oops", stored
    assert stored.record is not None and stored.record.decisions, "the record kept what was played"
    assert health == health_pb2.HealthCheckResponse.SERVING and unstored == 0


def test_a_nul_inside_a_page_token_is_refused_on_every_store(tmp_path, store_url):
    """A page token comes from anyone, and its key goes into the store's query: the NUL check
    at the door sees only the token's text (base64), not the id inside it. On PostgreSQL, which
    refuses a NUL in text, ListMatches (and the web's /api/matches) with such a token answered
    INTERNAL with a traceback (an attack pass); on SQLite, and in ListTournaments (paged in
    memory), it passed for a token. Now it is no token of ours: INVALID_ARGUMENT."""
    import base64
    import json

    def token(*items: object) -> str:
        return base64.urlsafe_b64encode(json.dumps(list(items)).encode()).decode().rstrip("=")

    async def scenario() -> list[tuple[grpc.StatusCode, str]]:
        async with running_daemon(tmp_path, db=store_url) as daemon, daemon.channel() as channel:
            spectator = spectator_pb2_grpc.SpectatorServiceStub(channel)
            tournaments = tournament_pb2_grpc.TournamentServiceStub(channel)
            calls = [spectator.ListMatches(spectator_pb2.ListMatchesRequest(page_token=token(1, "m-\x00", "")),
                                           timeout=10),
                     tournaments.ListTournaments(tournament_pb2.ListTournamentsRequest(
                         page_token=token(1, "t-\x00", "", "ListTournaments")), timeout=10)]
            answers = []
            for call in calls:
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await call
                answers.append((refused.value.code(), refused.value.details()))
            return answers

    for code, details in run(scenario()):
        assert code == grpc.StatusCode.INVALID_ARGUMENT, (code, details)
        assert "page_token is not a token from a previous" in details, details
