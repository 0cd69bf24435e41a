"""``heartsbot stdio``: the line format, the example bots, and whole matches over a real
daemon with a shell bot, an awk bot, a bot that writes garbage and a bot that exits."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import signal
import sys
import time
from pathlib import Path

import grpc
import pytest

from hearts_engine import (
    Deal,
    Match,
    MatchFormat,
    MatchRecord,
    MoonAction,
    MoonOption,
    PassAction,
    Phase,
    PlayAction,
    parse_card,
    parse_cards,
    preset,
    seat_view,
    verify_record,
)
from hearts_engine.cards import card_name
from heartsbot.proto import game_pb2
from heartsbot.stdio import READY as READY_LINE
from heartsbot.stdio import GREETING, AnswerError, Child, ChildGone, format_end, format_request, parse_answer

from ..engine.scenario import hands
from ..server.harness import BOTS, run, running_daemon

P = game_pb2
ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "clients" / "stdio-examples"
SH_BOT = ["sh", str(EXAMPLES / "first_legal.sh")]
AWK = shutil.which("mawk") or shutil.which("gawk") or "awk"
AWK_BOT = [AWK, *(["-W", "interactive"] if AWK.endswith("mawk") else []), "-f", str(EXAMPLES / "lowest.awk")]
HOUSE3 = ["house:random", "house:random", "house:random"]


def fields(line: str) -> tuple[str, str, dict[str, str]]:
    """A request line as a bot reads it: kind, match id, key=value fields."""
    kind, match_id, *rest = line.split(" ")
    return kind, match_id, dict(word.split("=", 1) for word in rest)


def card_list(text: str) -> list[int]:
    return list(parse_cards(text))


def moon_view(totals=(0, 0, 0, 0)):
    """Classic, seat 0 held every club and took every card: its moon choice."""
    rules = preset("classic")
    deal = Deal(rules, hands(rules, {0: "2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC"}))
    while deal.phase is Phase.PLAYING:
        deal.play(deal.turn, deal.legal_plays(deal.turn)[0])
    assert deal.phase is Phase.MOON_CHOICE
    return seat_view(deal, 0, totals)


# --- the line format ---------------------------------------------------------------------

def test_a_three_card_pass_request_and_its_answer():
    match = Match(preset("standard"), MatchFormat.fixed(1), seed=7)
    view = match.view(2)
    line = format_request("m-1", view, 940)
    kind, match_id, f = fields(line)
    assert (kind, match_id) == ("pass", "m-1") and "\n" not in line and "  " not in line
    assert f["seat"] == "2" and f["players"] == "4" and f["ruleset"] == "standard" and f["deal"] == "0"
    assert f["ms"] == "940" and f["count"] == "3" and f["dir"] == "left" and f["to"] == "3"
    assert card_list(f["hand"]) == list(view.hand) and card_list(f["legal"]) == list(view.legal)
    assert all(len(name) == 2 for name in f["hand"].split(","))  # the engine's names: 2C, TD, QS
    assert f["points"] == "0,0,0,0" and f["totals"] == "0,0,0,0"
    three = f["legal"].split(",")[-3:]
    assert parse_answer("pass " + " ".join(three), "pass", view.legal, 3) == [parse_card(c) for c in three]
    assert parse_answer("PASS " + ",".join(three).lower(), "pass", view.legal, 3) == [parse_card(c) for c in three]


def test_a_play_request_shows_the_trick_and_what_was_played():
    match = Match(preset("standard"), MatchFormat.fixed(1), seed=7)
    for seat in range(4):
        match.pass_cards(seat, match.view(seat).legal[:3])
    for _ in range(6):  # the first trick and two cards of the second
        seat = match.to_act()[0]
        match.play(seat, match.view(seat).legal[-1])
    seat = match.to_act()[0]
    view = match.view(seat)
    kind, _, f = fields(format_request("m-2", view, 500))
    assert kind == "play" and f["seat"] == str(seat)
    assert card_list(f["trick"]) == list(view.trick) and f["lead"] == str(view.trick_leader)
    assert len(card_list(f["played"])) == 4 and card_list(f["played"]) == list(view.tricks[0].cards)
    assert f["broken"] in ("0", "1") and f["broken"] == str(int(view.hearts_broken))
    assert card_list(f["passed"]) == list(view.passed) and card_list(f["received"]) == list(view.received)
    assert sum(int(p) for p in f["points"].split(",")) == sum(view.points_taken)
    assert parse_answer(f"play {card_name(view.legal[0])}", "play", view.legal) == view.legal[0]


def test_the_classic_moon_choice():
    view = moon_view()
    kind, _, f = fields(format_request("m-3", view, 900, MoonOption.SUBTRACT_FROM_SELF))
    assert kind == "moon" and f["options"] == "add_to_others,subtract_from_self"
    assert f["default"] == "subtract_from_self" and f["legal"] == ""
    assert fields(format_request("m-3", view, 900))[2]["default"] == "add_to_others"  # the rule without a server
    for text, option in [("moon add_to_others", MoonOption.ADD_TO_OTHERS), ("moon add", MoonOption.ADD_TO_OTHERS),
                         ("moon subtract_from_self", MoonOption.SUBTRACT_FROM_SELF),
                         ("moon Subtract", MoonOption.SUBTRACT_FROM_SELF)]:
        assert parse_answer(text, "moon", ()) is option
    with pytest.raises(AnswerError, match="add_to_others, subtract_from_self"):
        parse_answer("moon sideways", "moon", ())


@pytest.mark.parametrize("line, kind, reason", [
    ("", "play", "an empty line"),
    ("   ", "pass", "an empty line"),
    ("hello there", "play", "expected a play answer, got 'hello'"),
    ("play 2C", "pass", "expected a pass answer, got 'play'"),
    ("play", "play", "play takes 1 card, got 0"),
    ("play 2C 3C", "play", "play takes 1 card, got 2"),
    ("play 9Z", "play", "not a card: '9Z'"),
    ("play QS", "play", r"QS is not legal now \(legal: 2C,3C\)"),
    ("pass 2C 3C", "pass", "pass takes 3 cards, got 2"),
    ("pass 2C 2C 3C", "pass", "the same card twice"),
    ("pass 2C 3C AS", "pass", "AS is not in your hand"),
    ("moon", "moon", "moon takes one of"),
])
def test_bad_answers_have_a_clear_reason(line, kind, reason):
    with pytest.raises(AnswerError, match=reason):
        parse_answer(line, kind, card_list("2C,3C" if kind == "play" else "2C,3C,4C"), 3)


def test_the_end_line():
    result = P.MatchResult(status=P.MATCH_STATUS_FINISHED, totals=[104, 30, 52, 74], ranks=[4, 1, 2, 3],
                           winners=[1], deals=9, reason="completed")
    assert format_end("m-9", 0, result) == \
        "end m-9 seat=0 status=finished deals=9 totals=104,30,52,74 ranks=4,1,2,3 winners=1"


def test_the_end_line_of_a_match_whose_result_never_came():
    """A match that ended while the bridge was away from the server, and whose result never
    came (BotClient gives it up, its status UNSPECIFIED): before, its bot was never told it
    ended; "unspecified" would read like a fault of the bridge, so the line says "unknown"."""
    result = P.MatchResult(status=P.MATCH_STATUS_UNSPECIFIED, reason="ended while this bot was away")
    assert format_end("m-9", 2, result) == "end m-9 seat=2 status=unknown deals=0 totals= ranks= winners="


# --- the example bots against the engine, no server ----------------------------------------

def answer_of(kind: str, decision):
    return {"pass": PassAction, "play": PlayAction, "moon": MoonAction}[kind](decision)


@pytest.mark.parametrize("bot", [SH_BOT, AWK_BOT], ids=["sh", "awk"])
def test_the_example_bots_answer_every_preset_legally(bot):
    child = Child(bot)
    try:
        assert child.handshake(time.monotonic() + 5)
        for name, players in [("standard", 4), ("classic", 3), ("classic", 5), ("hartenjagen", 4), ("omnibus", 4)]:
            match = Match(preset(name, players=players), MatchFormat.fixed(2), seed=players)
            while not match.is_over:
                seat = match.to_act()[0]
                view = match.view(seat)
                kind = {Phase.PASSING: "pass", Phase.PLAYING: "play", Phase.MOON_CHOICE: "moon"}[view.phase]
                line = child.ask(format_request(f"m-{name}", view, 1000), time.monotonic() + 5)
                assert line is not None, f"{bot} did not answer"
                match.apply(seat, answer_of(kind, parse_answer(line, kind, view.legal, view.rules.pass_count)))
        for option in MoonOption:
            line = child.ask(format_request("m-moon", moon_view(), 1000, option), time.monotonic() + 5)
            assert parse_answer(line, "moon", ()) is option  # both take the default
        child.send(format_end("m-moon", 0, P.MatchResult(status=P.MATCH_STATUS_FINISHED)))
        assert child.ask(format_request("m-x", Match(preset("standard"), seed=1).view(0), 1000),
                         time.monotonic() + 5).startswith("pass "), "the end line was not answered"
    finally:
        assert child.close() == 0, "a bot exits 0 when its stdin closes"


def test_late_lines_and_extra_lines_never_shift_the_answers(tmp_path):
    script = tmp_path / "bot.py"
    script.write_text(
        "import sys, time\n"
        "print('banner', flush=True)\n"  # before 'ok': dropped
        "sys.stdin.readline()\n"
        "print('ok', flush=True)\n"
        "n = 0\n"
        "for line in iter(sys.stdin.readline, ''):\n"
        "    n += 1\n"
        "    if n == 2: time.sleep(0.3)\n"  # late: dropped when it arrives
        "    print(f'answer {n}', flush=True)\n"
        "    if n == 3: print('extra', flush=True)\n"  # a second line: dropped
    )
    reports = []
    child = Child([sys.executable, str(script)], report=reports.append)
    try:
        assert child.handshake(time.monotonic() + 5)
        assert child.ask("play 1", time.monotonic() + 2) == "answer 1"
        assert child.ask("play 2", time.monotonic() + 0.1) is None
        assert child.ask("play 3", time.monotonic() + 2) == "answer 3"
        deadline = time.monotonic() + 30
        while len(reports) < 2 and time.monotonic() < deadline:  # 'extra' is read before the next request
            time.sleep(0.01)
        assert child.ask("play 4", time.monotonic() + 2) == "answer 4"
    finally:
        child.close()
    assert len(reports) == 2 and all("(dropped)" in r for r in reports), reports
    assert "'banner'" in reports[0] and "'extra'" in reports[1]


def bot_after_its_first_request(tmp_path, body: str, **options) -> Child:  # type: ignore[no-untyped-def]
    """A Python bot that says ok, reads its first request, then runs ``body`` (lines)."""
    script = tmp_path / "bot.py"
    script.write_text("import sys\nsys.stdin.readline()\nprint('ok', flush=True)\nsys.stdin.readline()\n" + body)
    return Child([sys.executable, str(script)], **options)


def test_an_extra_line_begun_before_the_next_request_is_not_its_answer(tmp_path):
    """A second line whose first characters came before the next request was written
    answers nothing, even when its newline comes after: an unbuffered writer (Python under
    PYTHONUNBUFFERED=1 writes ``print(a)`` as ``a`` then ``\\n``) split "play 2C\\nmore\\n"
    in two writes, and on a loaded CI machine the next request went out between them, took
    "more" as its answer, and shifted the bot's own answer to no request."""
    reports: list[str] = []
    child = bot_after_its_first_request(
        tmp_path,
        "sys.stdout.write('play 2C\\nmore'); sys.stdout.flush()\n"  # the extra line, begun
        "sys.stdin.readline()\n"  # the next request is out
        "sys.stdout.write(' of it\\n'); sys.stdout.flush()\n"  # and the extra line ends only now
        "print('play 3C', flush=True)\n",
        report=reports.append)
    try:
        assert child.handshake(time.monotonic() + 5)
        assert child.ask("play 1", time.monotonic() + 5) == "play 2C"
        assert child.ask("play 2", time.monotonic() + 5) == "play 3C"
    finally:
        assert child.close() == 0
    assert reports == ["the bot wrote a line that answers no request (dropped): 'more of it'"], reports


def test_a_line_of_megabytes_is_one_bad_answer_and_the_next_answer_is_still_its_requests(tmp_path):
    """Before (an attack pass): a line of several MB without a newline was re-joined and
    re-split at every 64 KB read (quadratic: the bridge fell behind), held whole, and then
    taken for an answer. Now past MAX_LINE characters the rest is skipped to the newline;
    the line still counts as one answer (a bad one), so the next answer is not shifted."""
    from heartsbot.stdio import MAX_LINE

    child = bot_after_its_first_request(
        tmp_path,
        "for _ in range(64):\n"
        "    sys.stdout.write('play ' + 'x' * 65536)\n"
        "    sys.stdout.flush()\n"
        "print(flush=True)\n"
        "sys.stdin.readline()\n"
        "print('play 2C', flush=True)\n")
    try:
        assert child.handshake(time.monotonic() + 5)
        line = child.ask("play 1", time.monotonic() + 30)
        assert line is not None and len(line) <= 200, f"{len(line or '')} characters kept"
        with pytest.raises(AnswerError, match=f"a line of more than {MAX_LINE:,} characters"):
            parse_answer(line, "play", [parse_card("QS")])
        assert child.ask("play 2", time.monotonic() + 30) == "play 2C"
    finally:
        assert child.close() == 0


def test_the_line_in_progress_holds_at_most_max_line_characters():
    """Memory, not time: 16 MB without a newline, fed as the reader gets it, never holds
    more than one limit's worth (the old reader held all of it, and copied it per read)."""
    import tracemalloc

    from heartsbot.stdio import MAX_LINE, BoundedLines

    lines = BoundedLines()
    chunk = "x" * 65536
    tracemalloc.start()
    try:
        for _ in range(256):
            assert lines.feed(chunk) == []
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * MAX_LINE, f"peak {peak:,} bytes"
    assert lines.feed("\nplay QS\n") == ["x" * 200, "play QS"]


def test_a_bot_must_say_ok_before_the_bridge_connects(capsys):
    from heartsbot.stdio import run_bridge

    async def bridge(*bot):  # no server listens there: it must stop before connecting
        return await run_bridge(list(bot), "127.0.0.1:9", "token", "nobody", ready_timeout_s=0.3)

    assert run(bridge("sh", "-c", "read -r greeting; echo 'hello?'; sleep 5")) == 1
    err = capsys.readouterr().err
    assert "the bot wrote a line before 'ok' (dropped): 'hello?'" in err
    assert "the bot did not answer 'hearts 1' with 'ok' within 0.3 s; stopping it" in err
    assert run(bridge("sh", "-c", "read -r greeting; echo 'hearts 2 only' >&2; exit 4")) == 1
    err = capsys.readouterr().err
    assert "the bot exited with status 4 before answering 'hearts 1' with 'ok'" in err


def test_the_module_examples():
    import doctest

    import heartsbot.stdio

    assert doctest.testmod(heartsbot.stdio).failed == 0


# --- over a real daemon --------------------------------------------------------------------

async def start_bridge(daemon, name, bot, *options):
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "heartsbot.cli", "stdio", "--server", daemon.target, "--token", BOTS[name],
        "--name", name, *options, "--", *bot,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd=ROOT)
    for _ in range(400):
        if daemon.arena.sessions.get(name) is not None:
            return proc
        if proc.returncode == 0:  # it connected, played what it was asked to and left between two looks
            return proc
        if proc.returncode is not None:
            break
        await asyncio.sleep(0.025)
    raise AssertionError(f"the bridge did not connect: {(await proc.communicate())[1].decode()}")


def lowest(cards, count):
    return sorted(cards)[:count]


def test_a_whole_game_by_the_sh_bot_is_all_its_own_decisions(tmp_path):
    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            proc = await start_bridge(daemon, "alice", SH_BOT, "--matches", "1")
            match_id = await daemon.create_match(["alice", *HOUSE3], deals=0, seed=11)
            out, err = await asyncio.wait_for(proc.communicate(), 120)
            return proc.returncode, out.decode(), err.decode(), daemon.stored(match_id)

    code, out, err, stored = run(scenario())
    assert code == 0, err
    assert stored.status == "finished" and stored.record.result.deals >= 2, "a whole game, not one deal"
    assert max(stored.record.result.totals) >= 100
    mine = [d for d in stored.record.decisions if d.seat == 0]
    assert mine and all(d.provenance == P.PROVENANCE_BOT for d in mine), [d.provenance for d in mine]
    assert f"1 matches, {len(mine)} decisions, 0 answered by the bridge" in err, err
    # ... and how the match went, as `heartsbot play` ends (a newcomer's pass: counts only)
    rank = stored.record.result.ranks[0]
    assert f"answered by the bridge; 1 finished: mean rank {rank:.2f}, " in err and "points per deal" in err, err
    # Its passes are its own: the three lowest cards (the default would be the highest).
    dealt = {d.deal_number: d.hands[0].cards for d in stored.record.deals}
    passes = [d for d in mine if d.kind == P.DECISION_KIND_PASS]
    assert passes
    for d in passes:
        hand = [(c.suit - 1) * 13 + c.rank - 2 for c in dealt[d.deal_number]]
        assert sorted((c.suit - 1) * 13 + c.rank - 2 for c in d.cards) == lowest(hand, 3)
    assert verify_record(MatchRecord.from_json(stored.record.engine_record_json)) is not None
    assert out == "", "the bridge's stdout stays empty"


def test_a_bridge_restarted_mid_match_counts_that_match_for_matches(tmp_path):
    """A bot restarted mid-match (its earlier process gone) is welcomed with the running
    match, whose `match_started` is not sent again: before, `--matches 1` did not count
    it, so the bridge played it and then waited for another match instead of leaving
    (the Node bot, which rebuilds the match, counted it). A match the welcome lists that
    this process never saw start is now one it plays, counted when it is welcomed."""
    from ..server.harness import Bot, first_legal

    async def scenario():
        async with running_daemon(tmp_path, decision_ms=3000, grace_ms=10000) as daemon:
            earlier = await Bot(daemon, "alice", first_legal).start()
            match_id = await daemon.create_match(["alice", *HOUSE3], deals=2, seed=11)
            runner = daemon.arena.runners[match_id]
            while sum(d.seat == 0 for d in runner.decisions) < 4:
                await asyncio.sleep(0.005)
            await earlier.drop()
            proc = await start_bridge(daemon, "alice", SH_BOT, "--matches", "1")
            try:
                out, err = await asyncio.wait_for(proc.communicate(), 60)
            except asyncio.TimeoutError:
                proc.kill()
                out, err = await proc.communicate()
                return match_id, None, err.decode(), daemon.stored(match_id)
            return match_id, proc.returncode, err.decode(), daemon.stored(match_id)

    match_id, code, err, stored = run(scenario())
    assert code == 0, f"exit {code} (None: still running after its match ended): {err[-2000:]}"
    assert stored.status == "finished"
    assert "1 matches" in err, err[-2000:]


def test_a_bot_that_exits_on_its_last_end_line_has_done_its_matches(tmp_path):
    """Before (an attack pass): a bot that leaves when told its match ended made the bridge
    exit 1, "the bot exited with status 0", though every match it was asked for was played:
    whether the bot's exit or the stream's end reached the bridge first decided it (against
    heartsd in its own process the exit came first every time). A scripted server holds the
    stream open for a second after the match's end, so the exit always comes first here."""
    from heartsbot import convert
    from heartsbot.proto import bot_pb2, bot_pb2_grpc

    class OneMatch(bot_pb2_grpc.BotServiceServicer):
        async def Play(self, requests, context):  # noqa: N802
            await context.read()  # hello
            await context.write(bot_pb2.PlayResponse(welcome=bot_pb2.Welcome(session_id="s-1", bot_name="alice")))
            started = P.Event(sequence=1, match_started=P.MatchStarted(
                match_id="m-1", ruleset=convert.ruleset_to_wire(preset("standard")), your_seat=0))
            await context.write(bot_pb2.PlayResponse(update=bot_pb2.MatchUpdate(match_id="m-1", events=[started])))
            assert (await context.read()).WhichOneof("kind") == "drain"  # --matches 1: its match has started
            ended = P.Event(sequence=2, match_ended=P.MatchEnded(result=P.MatchResult(status=P.MATCH_STATUS_FINISHED)))
            await context.write(bot_pb2.PlayResponse(update=bot_pb2.MatchUpdate(match_id="m-1", events=[ended])))
            await asyncio.sleep(1.0)
            await context.write(bot_pb2.PlayResponse(draining=bot_pb2.Draining(reason="1 match(es) played")))

    bot = tmp_path / "leaves.sh"
    bot.write_text((EXAMPLES / "first_legal.sh").read_text().replace("        *) ;;", "        end) exit 0 ;;\n        *) ;;"))

    async def scenario():
        server = grpc.aio.server()
        bot_pb2_grpc.add_BotServiceServicer_to_server(OneMatch(), server)
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        try:
            bridge = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "heartsbot.cli", "stdio", "--server", f"127.0.0.1:{port}", "--token", "t",
                "--name", "alice", "--matches", "1", "--", "sh", str(bot), stderr=asyncio.subprocess.PIPE, cwd=ROOT)
            _, err = await asyncio.wait_for(bridge.communicate(), 60)
            return bridge.returncode, err.decode()
        finally:
            await server.stop(None)

    code, err = run(scenario())
    assert code == 0, err
    assert "1 matches, 0 decisions, 0 answered by the bridge" in err and "stopping" not in err, err



def test_a_bridge_tells_its_bot_no_end_of_a_match_only_an_earlier_run_played(tmp_path):
    """An earlier run of the bridge played part of a match and died; the match ended before
    the bridge came back, and the server sent its end after the new run's hello. Before (a
    newcomer's pass), the new child was told `end` of that match, which it never saw: a
    `--matches 1` bot that leaves on its `end` left before playing its match, and the bridge
    exited 0 saying "1 matches, 0 decisions". The new run now plays its own match, counts
    the earlier one apart, and tells the child only of its own."""
    from ..server.harness import ended_while_away

    bot = tmp_path / "leaves.sh"
    bot.write_text((EXAMPLES / "first_legal.sh").read_text().replace("        *) ;;", "        end) exit 0 ;;\n        *) ;;"))

    async def scenario():
        async with running_daemon(tmp_path, decision_ms=100, grace_ms=100, auto_after=1) as daemon:
            await ended_while_away(daemon)
            proc = await start_bridge(daemon, "alice", ["sh", str(bot)], "--matches", "1")
            new = await daemon.create_match(["alice", *HOUSE3], deals=1, seed=6)
            _, err = await asyncio.wait_for(proc.communicate(), 60)
            return proc.returncode, err.decode(), daemon.stored(new)

    code, err, stored = run(scenario())
    mine = [d for d in stored.record.decisions if d.seat == 0]
    assert code == 0 and stored.status == "finished", err[-2000:]
    assert mine and all(d.provenance == P.PROVENANCE_BOT for d in mine), "the bot played its own match"
    assert f"1 matches (and 1 an earlier run played), {len(mine)} decisions" in err, err[-2000:]

def test_the_awk_bot_plays_classic_until_ctrl_c(tmp_path):
    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            proc = await start_bridge(daemon, "bob", AWK_BOT, "--rulesets", "classic")
            match_id = await daemon.create_match(["bob", *HOUSE3], ruleset="classic", deals=2, seed=5)
            await daemon.wait_finished(match_id)
            proc.send_signal(signal.SIGINT)
            _, err = await asyncio.wait_for(proc.communicate(), 20)
            return proc.returncode, err.decode(), daemon.stored(match_id)

    code, err, stored = run(scenario())
    assert code == 0 and stored.status == "finished", err
    mine = [d for d in stored.record.decisions if d.seat == 0]
    assert mine and all(d.provenance == P.PROVENANCE_BOT for d in mine)
    assert re.search(rf"[01] matches, {len(mine)} decisions, 0 answered by the bridge", err), err
    assert "Traceback" not in err


GARBAGE_BOT = """\
import sys
print("garbage before anything", flush=True)
assert sys.stdin.readline() == "hearts 1\\n"
print("ok", flush=True)
plays = 0
line = sys.stdin.readline()
while line:
    kind, match_id, *rest = line.split()
    if kind not in ("pass", "play", "moon"):  # "end" and any later information line: never answered
        line = sys.stdin.readline()
        continue
    f = dict(w.split("=", 1) for w in rest)
    legal = f["legal"].split(",")
    answer = None
    if kind == "pass":
        answer = "hello there"
    elif kind == "play":
        plays += 1
        hand = f["hand"].split(",")
        if plays == 1:
            answer = "play 9Z"
        elif plays == 2:
            answer = "play " + next(c for c in ["2C", "3C", "4C", "5C", "AS", "KS"] if c not in hand)
        elif plays == 3:
            nxt = sys.stdin.readline()  # too slow: answer only once the next request is here
            print("play " + legal[0], flush=True)
            line = nxt
            continue
        elif plays == 4:
            answer = "play " + legal[0] + "\\nand one line too many"
        else:
            answer = "play " + legal[0]
    if answer:
        print(answer, flush=True)
    line = sys.stdin.readline()
"""


def test_a_bot_that_writes_garbage_is_answered_for_and_the_match_completes(tmp_path):
    script = tmp_path / "garbage.py"
    script.write_text(GARBAGE_BOT)

    async def scenario():
        # 2 s to think: the bot's one late answer costs that much, and every other answer
        # of a Python child on a loaded machine stays well inside it (at 600 ms a slow
        # one was a fifth bridge answer once).
        async with running_daemon(tmp_path, decision_ms=2000) as daemon:
            proc = await start_bridge(daemon, "carol", [sys.executable, str(script)], "--matches", "1")
            match_id = await daemon.create_match(["carol", *HOUSE3], deals=1, seed=3)
            _, err = await asyncio.wait_for(proc.communicate(), 60)
            return proc.returncode, err.decode(), daemon.stored(match_id)

    code, err, stored = run(scenario())
    assert code == 0 and stored.status == "finished", err
    mine = [d for d in stored.record.decisions if d.seat == 0]
    assert len(mine) == 14 and all(d.provenance == P.PROVENANCE_BOT for d in mine)
    bad = [line for line in err.splitlines() if "the bridge answered" in line]
    assert len(bad) == 4, err  # exactly these four: the late line and the extra line shift nothing
    assert "bad pass answer 'hello there': expected a pass answer, got 'hello'; the bridge answered pass" in bad[0]
    assert "bad play answer 'play 9Z': not a card: '9Z'; the bridge answered play" in bad[1]
    assert "is not legal now (legal: " in bad[2]
    assert ": no play answer within 1940 ms; the bridge answered play" in bad[3]
    assert err.count("(dropped)") == 2  # the line before 'ok' and the line too many
    assert "1 matches, 14 decisions, 4 answered by the bridge" in err


def test_a_bot_that_exits_stops_the_bridge_with_a_clear_message(tmp_path):
    script = tmp_path / "quitter.sh"
    script.write_text('read -r greeting\necho ok\nread -r request\necho "i give up" >&2\nexit 3\n')

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            proc = await start_bridge(daemon, "dave", ["sh", str(script)])
            await daemon.create_match(["dave", *HOUSE3], deals=1, seed=2)
            _, err = await asyncio.wait_for(proc.communicate(), 30)
            missing = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "heartsbot.cli", "stdio", "--server", daemon.target, "--token", BOTS["erin"],
                "--name", "erin", "--", str(tmp_path / "no-such-bot"), stderr=asyncio.subprocess.PIPE)
            _, missing_err = await asyncio.wait_for(missing.communicate(), 30)
            refused = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "heartsbot.cli", "stdio", "--server", daemon.target, "--token", BOTS["erin"],
                "--name", "frank", "--", *SH_BOT, stderr=asyncio.subprocess.PIPE)
            _, refused_err = await asyncio.wait_for(refused.communicate(), 30)
            return (proc.returncode, err.decode(), missing.returncode, missing_err.decode(), refused.returncode,
                    refused_err.decode())

    code, err, missing_code, missing_err, refused_code, refused_err = run(scenario())
    assert code == 1, err
    assert "i give up" in err, "the bot's stderr is passed through"
    assert re.search(r"heartsbot stdio: the bot exited with status 3 after \d+ decisions; stopping", err), err
    assert missing_code == 2 and "cannot run" in missing_err and "no-such-bot" in missing_err
    assert refused_code == 3 and "the server refused the bot: PERMISSION_DENIED" in refused_err, refused_err


def test_a_bot_that_exits_is_not_said_to_have_answers_the_bridge_never_sent(tmp_path):
    """Before: a bot that exited on a request made the bridge count a default for it as
    "answered by the bridge" although the bridge stopped without sending it ("0 decisions,
    1 answered by the bridge"). Now only answers that went to the server are counted."""
    script = tmp_path / "quitter.sh"
    script.write_text('read -r greeting\necho ok\nread -r request\nexit 3\n')

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            proc = await start_bridge(daemon, "dave", ["sh", str(script)])
            await daemon.create_match(["dave", *HOUSE3], deals=1, seed=2)
            _, err = await asyncio.wait_for(proc.communicate(), 30)
            return proc.returncode, err.decode()

    code, err = run(scenario())
    assert code == 1, err
    summary = re.search(r"(\d+) matches, (\d+) decisions, (\d+) answered by the bridge", err)
    assert summary, err
    # The bot answered nothing itself: every answer sent was the bridge's, and no more.
    assert summary[3] == summary[2], err


def _alive(marker: str) -> bool:
    """Whether a process whose command line contains ``marker`` runs (Linux /proc)."""
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if marker.encode() in cmdline.read_bytes():
                return True
        except OSError:
            pass
    return False


def test_a_bot_that_stops_reading_cannot_hold_the_bridge_when_it_closes():
    """Before (an attack pass): a bot that answered "ok" and then never read again filled
    its stdin pipe (~64 KB of requests); the bridge's write blocked holding the write lock,
    and after its last match it waited for that lock forever, deaf to Ctrl-C and SIGTERM.
    Now closing kills such a bot at once, which ends the stuck write."""
    import threading

    marker = f"60.{os.getpid()}"  # this run's, not an earlier one's
    child = Child(["sh", "-c", f"read greeting; echo {READY_LINE}; exec sleep {marker}"])
    assert child.handshake(time.monotonic() + 5)
    def flood() -> None:
        with contextlib.suppress(ChildGone):  # the kill ends the stuck write with this
            for _ in range(1000):
                child.send("x" * 1000)

    writer = threading.Thread(target=flood, daemon=True)
    writer.start()
    writer.join(2)
    assert writer.is_alive(), "the pipe did not fill: the write should be stuck"
    closing = threading.Thread(target=child.close, kwargs={"timeout": 0.5}, daemon=True)
    closing.start()
    closing.join(30)
    assert not closing.is_alive(), "close() waited for the stuck write"
    writer.join(30)
    assert not writer.is_alive() and not _alive(marker)


def test_a_bot_that_exits_is_seen_to_exit_even_if_a_helper_holds_its_stdout():
    """Before (an attack pass): a bot that started a helper ("sleep 77 &", inheriting its
    stdout) and exited with status 3 went unseen (the helper kept the pipe open): the bridge
    answered every later request itself and exited 0, and the helper outlived it. Now the
    bot's exit ends its process group, so the bridge sees it and reports the status."""
    marker = f"77.{os.getpid()}"
    child = Child(["sh", "-c", f"sleep {marker} & read greeting; echo {READY_LINE}; read line; exit 3"])
    try:
        assert child.handshake(time.monotonic() + 5)
        for _ in range(100):  # the helper is started in the background
            if _alive(marker):
                break
            time.sleep(0.05)
        assert _alive(marker)
        with pytest.raises(ChildGone):
            child.ask("x", time.monotonic() + 30)
        assert child.status() == "exited with status 3"
        for _ in range(100):
            if not _alive(marker):
                break
            time.sleep(0.05)
        assert not _alive(marker), "the bot's helper outlived it"
    finally:
        child.close()
