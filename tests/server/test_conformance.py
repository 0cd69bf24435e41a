"""The conformance kit: the reference client passes every behaviour; broken clients fail
exactly the behaviours they break, by name, with a reason."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest

import grpc

from heartsbot.proto import bot_pb2, cards_pb2, game_pb2
from heartsd.conformance import BEHAVIOURS, Feeder, Kit, Shooter, kit_server, moon_seed, report

from .harness import Bot, first_legal, run

P = game_pb2
ROOT = Path(__file__).resolve().parents[2]
NAME, TOKEN = "kit-bot", "kit-token-0123456789abcdef"


def results_with(policy, **kit_options):
    """Run the kit against a protocol-level bot (no retry, no reconnect) using ``policy``."""

    async def scenario():
        async with kit_server("127.0.0.1", 0, NAME, TOKEN) as (arena, target):
            daemon = types.SimpleNamespace(channel=lambda: grpc.aio.insecure_channel(target))
            bot = await Bot(daemon, NAME, policy, token=TOKEN).start()  # type: ignore[arg-type]
            drain = bot_pb2.PlayRequest(drain=bot_pb2.Drain(reason="the kit's interrupt"))
            try:
                return await Kit(arena, NAME, interrupt=lambda: bot.send(drain), **kit_options).run()
            finally:
                await bot.close()

    return {r.behaviour: r for r in run(scenario())}


CLIENTS = {
    "python": [sys.executable, "-m", "heartsbot.cli", "play", "--strategy", "heuristic"],
    "node": ["node", str(ROOT / "clients" / "node" / "bot.js")],
    # The stdio bridge with a shell bot: the kit's command is the bridge, whose own
    # command (after its "--") is the shell script.
    "stdio": [sys.executable, "-m", "heartsbot.cli", "stdio", "--server", "{target}", "--token", "{token}",
              "--name", "{name}", "--", "sh", str(ROOT / "clients" / "stdio-examples" / "first_legal.sh")],
}


@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_the_reference_clients_pass_every_behaviour_from_the_command_line(client):
    if client == "node":
        assert shutil.which("node"), "Node.js 20 is needed for the Node bot (scripts/test installs its packages)"
        assert (ROOT / "clients/node/node_modules").is_dir(), "run `npm ci --prefix clients/node` (scripts/test does)"
    command = CLIENTS[client]
    if "{target}" not in command:
        command = [*command, "--server", "{target}", "--token", "{token}", "--name", "{name}"]
    kit = subprocess.run(
        [sys.executable, "-m", "heartsd.cli", "conformance", "--port", "0", "--timeout", "30", "--json", "--", *command],
        capture_output=True, text=True, timeout=120,
    )
    assert kit.returncode == 0, kit.stdout + kit.stderr
    summary = json.loads(kit.stdout.strip().splitlines()[-1])
    assert summary["passed"] and [b["behaviour"] for b in summary["behaviours"]] == list(BEHAVIOURS)
    assert f"all {len(BEHAVIOURS)} behaviours passed" in kit.stdout
    # A stdio bot that never answers passes too (the bridge answers for it): the report says
    # whose behaviour passed (before, an attack pass, nothing told the two apart).
    assert ("these checks test the bridge" in summary["behaviours"][0]["detail"]) == (client == "stdio"), summary


def test_a_broken_client_fails_exactly_the_behaviours_it_breaks():
    def moon_as_a_play(request, bot):
        answer = first_legal(request, bot)
        if request.kind == P.DECISION_KIND_MOON:
            return bot_pb2.Answer(request_id=request.request_id, play=cards_pb2.Card(suit=cards_pb2.SUIT_CLUBS, rank=cards_pb2.RANK_TWO))  # wrong kind
        return answer

    # The protocol-level test bot ignores rejections and does not reconnect.
    results = results_with(moon_as_a_play, timeout_s=30, grace_ms=1500)
    failed = {name for name, r in results.items() if not r.passed}
    assert failed == {"moon", "rejection", "resume", "drain"}, report(results.values())
    assert "not connected" in results["drain"].detail  # it never came back after the cut
    assert "needs a 'moon' answer, got play" in results["moon"].detail
    assert "did not answer again after a rejection" in results["rejection"].detail
    assert "never reconnected" in results["resume"].detail
    assert "refused as stale" in results["late"].detail


class ResendOnRejection(list):
    """A bot's rejection list that makes it resend the very answer that was rejected."""

    def __init__(self, bot):
        super().__init__()
        self.bot = bot

    def append(self, rejected):
        super().append(rejected)
        for message in reversed(self.bot.received):
            if message.HasField("update") and message.update.request.request_id == rejected.request_id:
                answer = first_legal(message.update.request, self.bot)
                answer.match_id = rejected.match_id
                self.bot.send(bot_pb2.PlayRequest(answer=answer))
                return


def test_a_client_that_repeats_the_rejected_card_fails_the_rejection_check():
    async def scenario():
        async with kit_server("127.0.0.1", 0, NAME, TOKEN) as (arena, target):
            daemon = types.SimpleNamespace(channel=lambda: grpc.aio.insecure_channel(target))
            bot = Bot(daemon, NAME, first_legal, token=TOKEN)  # type: ignore[arg-type]
            bot.rejections = ResendOnRejection(bot)
            await bot.start()
            try:
                kit = Kit(arena, NAME, timeout_s=30)
                await kit._hello()
                return await kit._rejection()
            finally:
                await bot.close()

    result = run(scenario())
    assert not result.passed and "the card that was just rejected" in result.detail, result


def drain_result(interrupt_sends_drain: bool, reconnects: bool = False):
    """The drain check alone against a protocol-level bot; ``interrupt_sends_drain``: the
    kit's interrupt makes it send drain (else it is ignored); ``reconnects``: it comes back
    after its stream ended drained."""

    async def scenario():
        async with kit_server("127.0.0.1", 0, NAME, TOKEN) as (arena, target):
            daemon = types.SimpleNamespace(channel=lambda: grpc.aio.insecure_channel(target))
            bot = await Bot(daemon, NAME, first_legal, token=TOKEN).start()  # type: ignore[arg-type]
            drain = bot_pb2.PlayRequest(drain=bot_pb2.Drain(reason="test"))
            again = []

            async def come_back():
                await bot._task
                again.append(await Bot(daemon, NAME, first_legal, token=TOKEN).start())  # type: ignore[arg-type]

            waiter = asyncio.get_running_loop().create_task(come_back()) if reconnects else None
            try:
                kit = Kit(arena, NAME, timeout_s=30, interrupt=(lambda: bot.send(drain)) if interrupt_sends_drain
                          else (lambda: None))
                await kit._hello()
                return await kit._drain(), bot
            finally:
                if waiter is not None:
                    waiter.cancel()
                for b in (bot, *again):
                    await b.close()

    return run(scenario())


def test_the_drain_check_passes_a_client_that_drains_and_fails_one_that_does_not():
    result, bot = drain_result(True)
    assert result.passed, result
    assert any(m.HasField("draining") for m in bot.received), "the server acknowledged the drain"
    assert not bot._call.done() or True
    ignored, _ = drain_result(False)
    assert not ignored.passed and "never sent drain" in ignored.detail
    back, _ = drain_result(True, reconnects=True)
    assert not back.passed and "connected again" in back.detail, back


def test_no_client_fails_hello_and_runs_nothing_else():
    async def scenario():
        async with kit_server("127.0.0.1", 0, NAME, TOKEN) as (arena, _):
            return await Kit(arena, NAME, timeout_s=0.3).run()

    results = run(scenario())
    assert [r.behaviour for r in results] == list(BEHAVIOURS)
    assert not any(r.passed for r in results)
    assert "no bot connected" in results[0].detail and all("not run" in r.detail for r in results[1:])


def test_the_moon_arrangement_ends_in_a_moon_choice_for_seat_0():
    from hearts_engine import Match, MatchFormat, PassAction, Phase, PlayAction, preset

    seed = moon_seed()
    match = Match(preset("classic"), MatchFormat.fixed(1), seed)
    players = [Shooter(), Feeder(), Feeder(), Feeder()]
    while match.deal.phase is not Phase.MOON_CHOICE:
        seat = match.to_act()[0]
        view = match.view(seat)
        if match.deal.phase is Phase.PASSING:
            match.apply(seat, PassAction(tuple(players[seat].choose_pass(view))))
        else:
            match.apply(seat, PlayAction(players[seat].choose_play(view)))
    assert match.to_act() == (0,) and match.deal.shooter == 0


def test_what_a_client_started_ends_with_the_kit_even_after_the_client_exits():
    """Before (an attack pass): a client that started a helper ("sleep 303 &") and then
    passed every check left the helper running: the kit ended the client's process group
    only while the client itself still ran."""
    marker = f"303.{os.getpid()}"
    command = ["sh", "-c", f"sleep {marker} & exec {sys.executable} -m heartsbot.cli play --strategy random "
               "--server {target} --token {token} --name {name}"]
    kit = subprocess.run([sys.executable, "-m", "heartsd.cli", "conformance", "--port", "0", "--timeout", "30", "--",
                          *command], capture_output=True, text=True, timeout=120)
    assert kit.returncode == 0, kit.stdout + kit.stderr
    left = [c for c in Path("/proc").glob("[0-9]*/cmdline") if _reads(c) and marker.encode() in _reads(c)]
    assert not left, "the client's helper outlived the kit"


def _reads(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""


def test_a_client_whose_answers_name_wrong_ids_is_told_what_the_server_rejected():
    """A newcomer's pass: a client that answered every request, late or with a wrong id, was
    told "the bot never answered a play request", "TIMEOUT after 0 rejected answer(s)" and,
    although it reconnected at once, "it never reconnected": its seat had been auto-played
    to the end before it came back. Every check now names what the server rejected, and the
    resume check says the reconnect came after the match was over."""

    def wrong_id(request, bot):  # type: ignore[no-untyped-def]
        answer = first_legal(request, bot)
        answer.request_id = request.request_id + "x"
        return answer

    async def checks(kit: Kit) -> list:  # type: ignore[type-arg]
        return [*await kit._pass_and_play(), await kit._rejection(), await kit._late(), await kit._resume()]

    results = {r.behaviour: r for r in _with_a_reconnecting_bot(wrong_id, checks, grace_ms=1500)}
    unknown = "UNKNOWN_REQUEST: no request with that id was sent to you in this match (request_id 'r-"
    for name in ("pass", "play", "rejection", "late"):
        assert not results[name].passed and unknown in results[name].detail, results[name]
    assert "the server rejected" in results["late"].detail  # before: "the bot never answered a play request"
    resume = results["resume"]
    assert not resume.passed and "never reconnected" not in resume.detail, resume
    assert "reconnected" in resume.detail and unknown in resume.detail, resume


def _resume_result(skip_answered_ids: bool):
    """The resume check alone against a protocol-level bot that reconnects 0.2 s after each
    cut; with ``skip_answered_ids`` it never answers a request id twice, across streams."""
    answered: set[str] = set()

    def policy(request, bot):  # type: ignore[no-untyped-def]
        if skip_answered_ids and request.request_id in answered:
            return None
        answered.add(request.request_id)
        return first_legal(request, bot)

    async def resume(kit: Kit) -> Any:
        return await kit._resume()

    return _with_a_reconnecting_bot(policy, resume, grace_ms=5000)


def _with_a_reconnecting_bot(policy, checks, grace_ms: int):  # type: ignore[no-untyped-def]
    """``checks(kit)`` against a protocol-level bot answering with ``policy`` that, as a real
    client, connects again 0.2 s after each cut of its stream."""

    async def scenario():  # type: ignore[no-untyped-def]
        async with kit_server("127.0.0.1", 0, NAME, TOKEN) as (arena, target):
            daemon = types.SimpleNamespace(channel=lambda: grpc.aio.insecure_channel(target))
            bots = [await Bot(daemon, NAME, policy, token=TOKEN).start()]  # type: ignore[arg-type]

            async def reconnecting() -> None:
                while True:
                    await bots[-1]._task
                    await asyncio.sleep(0.2)
                    bots.append(await Bot(daemon, NAME, policy, token=TOKEN).start())  # type: ignore[arg-type]

            keeper = asyncio.get_running_loop().create_task(reconnecting())
            try:
                kit = Kit(arena, NAME, timeout_s=30, grace_ms=grace_ms)
                await kit._hello()
                return await checks(kit)
            finally:
                keeper.cancel()
                for bot in bots:
                    await bot.close()

    return run(scenario())


def test_the_resume_check_fails_a_client_that_skips_a_request_it_answered_on_the_cut_stream():
    """A newcomer's pass: docs/protocol.md says to answer every request a new stream sends,
    even one answered on the old stream (that answer may have been lost with it), and a
    client that skipped those passed the kit. The resume check now cuts the stream a second
    time as an answer arrives, so that answer is lost, and the request must be answered again."""
    good = _resume_result(skip_answered_ids=False)
    assert good.passed and "answered that request again" in good.detail, good
    skipping = _resume_result(skip_answered_ids=True)
    assert not skipping.passed, skipping
    assert "did not answer that request again when the new stream sent it" in skipping.detail, skipping


def test_a_refused_client_is_told_what_the_server_said_to_it():
    """A newcomer's pass: a client with the wrong name was reported "not run: the client
    exited with status 3 first" (or "no bot connected"), and what the server had said
    (PERMISSION_DENIED, this token belongs to another bot) showed only if the client
    printed it. The kit now names the last refusal."""
    wrong_name = [sys.executable, "-m", "heartsbot.cli", "play", "--strategy", "random", "--server", "{target}",
                  "--token", "{token}", "--name", "{name}x"]
    kit = subprocess.run([sys.executable, "-m", "heartsd.cli", "conformance", "--port", "0", "--timeout", "20", "--",
                          *wrong_name], capture_output=True, text=True, timeout=120)
    assert kit.returncode != 0, kit.stdout
    said = "the server refused 1 stream(s), the last with PERMISSION_DENIED: this token belongs to bot 'conformance-bot'"
    assert said in kit.stdout, kit.stdout + kit.stderr

    async def scenario():  # type: ignore[no-untyped-def]
        async with kit_server("127.0.0.1", 0, NAME, TOKEN) as (arena, target):
            daemon = types.SimpleNamespace(channel=lambda: grpc.aio.insecure_channel(target))
            bot = Bot(daemon, NAME + "x", first_legal, token=TOKEN)  # type: ignore[arg-type]
            with contextlib.suppress(asyncio.TimeoutError):
                await bot.start()
            await bot.close()
            return await Kit(arena, NAME, timeout_s=1).run()

    hello = run(scenario())[0]
    assert not hello.passed and "PERMISSION_DENIED: this token belongs to bot 'kit-bot'" in hello.detail, hello
