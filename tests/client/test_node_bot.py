"""The Node.js bot (clients/node) plays a real daemon knowing only the .proto files.

It runs as a subprocess (`node clients/node/bot.js`) against a daemon on a loopback
port: a whole game against house bots, a dropped stream it must resume, and the
refusals it must report. Node.js 20 is required (CI has it): without it these tests
fail rather than skip, so a missing toolchain is never mistaken for a pass.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import signal
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from hearts_engine import MatchRecord, verify_record
from heartsbot.proto import game_pb2

from ..server.harness import BOTS, run, running_daemon

P = game_pb2
ROOT = Path(__file__).resolve().parents[2]
BOT_JS = ROOT / "clients" / "node" / "bot.js"
INSTALLED = ROOT / "clients" / "node" / "node_modules" / "@grpc" / "grpc-js"
HOUSE3 = ["house:heuristic", "house:random", "house:heuristic"]


def node() -> str:
    path = shutil.which("node")
    assert path, "node is not on PATH: the Node bot test needs Node.js 20 (install it; CI has it)"
    assert INSTALLED.exists(), "clients/node is not installed: scripts/test runs `npm ci --prefix clients/node`"
    return path


async def start_bot(daemon, *args: str, name: str = "alice", token: str | None = None) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        node(), str(BOT_JS), "--server", daemon.target, "--token", token or BOTS[name], "--name", name, *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )


@contextlib.asynccontextmanager
async def node_against(servicer: Any) -> AsyncIterator[tuple[asyncio.subprocess.Process, list[str]]]:
    """The Node bot, as alice, against ``servicer`` (a BotService made for the test) on a
    loopback port: (its process, a list that holds its stderr once the block is left). On
    leaving, a bot still running is killed: a SIGTERM would drain, into a stream such a
    server may never end."""
    import grpc

    from heartsbot.proto import bot_pb2_grpc

    server = grpc.aio.server()
    bot_pb2_grpc.add_BotServiceServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    proc = await asyncio.create_subprocess_exec(
        node(), str(BOT_JS), "--server", f"127.0.0.1:{port}", "--token", "t", "--name", "alice",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    err: list[str] = []
    try:
        yield proc, err
    finally:
        if proc.returncode is None:
            proc.kill()
        _, raw = await proc.communicate()
        err.append(raw.decode())
        await server.stop(0)


async def connected(daemon, proc: asyncio.subprocess.Process, name: str = "alice") -> None:
    for _ in range(1000):
        if daemon.arena.sessions.get(name) is not None:
            return
        if proc.returncode is not None:
            _, err = await proc.communicate()
            raise AssertionError(f"the Node bot exited with {proc.returncode}: {err.decode()}")
        await asyncio.sleep(0.01)
    proc.kill()
    raise AssertionError("the Node bot did not connect within 10 s")


async def finished(proc: asyncio.subprocess.Process, timeout: float = 60) -> tuple[int, str, str]:
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout)
    except asyncio.TimeoutError:
        proc.kill()
        out, err = await proc.communicate()
        raise AssertionError(f"the Node bot did not exit in {timeout} s: {err.decode()}") from None
    return proc.returncode, out.decode(), err.decode()


def assert_played_itself(record, seat: int) -> None:
    mine = [d for d in record.decisions if d.seat == seat]
    assert mine and {d.kind for d in mine} >= {P.DECISION_KIND_PASS, P.DECISION_KIND_PLAY}
    assert [P.Provenance.Name(d.provenance) for d in mine if d.provenance != P.PROVENANCE_BOT] == []
    assert sum(d.rejected_answers for d in mine) == 0
    plays = [d for d in mine if d.kind == P.DECISION_KIND_PLAY]
    assert len(plays) == record.ruleset.hand_size * len(record.deal_scores)


def assert_consistent_scores(record) -> None:
    result, rules = record.result, record.ruleset
    n = rules.players
    totals = [0] * n
    for deal in record.deal_scores:
        assert max(totals) < rules.target, "the game went on after reaching the target"
        assert sum(deal.points) in (rules.deal_total, (n - 1) * rules.deal_total)  # 26, or a moon
        totals = [t + p for t, p in zip(totals, deal.points)]
    assert list(result.totals) == totals and max(totals) >= rules.target
    assert result.deals == len(record.deal_scores)
    for i in range(n):
        for j in range(n):
            if totals[i] < totals[j]:
                assert result.ranks[i] < result.ranks[j], (totals, list(result.ranks))
    assert sorted(result.winners) == [s for s in range(n) if result.ranks[s] == 1]
    assert verify_record(MatchRecord.from_json(record.engine_record_json)) is not None


def test_the_node_bot_plays_a_whole_game_by_itself(tmp_path):
    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            proc = await start_bot(daemon, "--matches", "1")
            await connected(daemon, proc)
            match_id = await daemon.create_match(["alice", *HOUSE3], deals=0, seed=7)  # 0: to the target
            return match_id, await finished(proc), daemon.stored(match_id)

    match_id, (code, out, err), stored = run(scenario())
    assert code == 0, err
    # Connected before any match: it says what it waits for (before, nothing until the
    # first match, which a ladder may take ~30 s to start: a silent bot).
    assert "waiting for a match" in err, err
    assert f"match {match_id} ended (completed)" in out
    assert stored.status == "finished" and stored.record.result.status == P.MATCH_STATUS_FINISHED
    assert stored.record.format.fixed_deals == 0 and len(stored.record.deal_scores) >= 2
    assert_played_itself(stored.record, 0)
    assert_consistent_scores(stored.record)


def test_the_node_bot_reconnects_and_resumes_after_the_stream_drops(tmp_path):
    async def scenario():
        async with running_daemon(tmp_path, decision_ms=3000, grace_ms=5000) as daemon:
            proc = await start_bot(daemon, "--matches", "1")
            await connected(daemon, proc)
            match_id = await daemon.create_match(["alice", *HOUSE3], deals=1, seed=3)
            runner = daemon.arena.runners[match_id]
            while sum(d.seat == 0 for d in runner.decisions) < 5:
                await asyncio.sleep(0.005)
            daemon.arena.sessions.get("alice").close("dropped by the test")  # the stream ends mid-deal
            return await finished(proc), daemon.stored(match_id)

    (code, out, err), stored = run(scenario())
    assert code == 0, err
    assert "reconnecting in" in err and "resuming" in err, err
    assert stored.status == "finished"
    assert_played_itself(stored.record, 0)


def test_every_install_script_of_the_node_bots_packages_is_decided_in_package_json():
    """`npm ci --prefix clients/node`, the README's first command, ended with a warning
    (npm 11.16 and later) that protobufjs's postinstall script was "not yet covered by
    allowScripts", and npm 12 skips such scripts. Its script only checks the version
    scheme of packages that depend on it, which the bot does not need: package.json says
    so (`allowScripts`, false), and any locked package with an install script must be
    decided there too, so that a dependency update cannot bring one in unseen."""
    import json

    folder = ROOT / "clients" / "node"
    lock = json.loads((folder / "package-lock.json").read_text())
    decided = json.loads((folder / "package.json").read_text()).get("allowScripts", {})
    with_scripts = {path.rsplit("node_modules/", 1)[1] for path, entry in lock["packages"].items()
                    if entry.get("hasInstallScript")}
    assert with_scripts and with_scripts <= set(decided), (with_scripts, decided)



# Drives a Bot of bot.js (required as a module: no connection) through `count` whole matches of
# one seat each, each an update with its match_started and match_ended, as a ladder bot sees
# them for weeks; then a late update of the newest (what a replay may still bring), with a
# request. Prints what it kept and what it wrote back.
MANY_MATCHES = r"""
const [botJs, count] = [process.argv[1], Number(process.argv[2])];
const { Bot, ENDED_KEPT } = require(botJs);
console.error = () => {}; console.log = () => {}; // a line per match: not what is tested
const written = [];
const call = { write: (message) => written.push(message) };
const bot = new Bot({ server: 'x', credentials: null, name: 'alice', maxMatches: 1, matchesToPlay: 0 },
                    class { constructor() {} });
const match = (i) => `m-${i}`;
const started = { seats: [{ name: 'alice' }], ruleset: { name: 'standard' } };
const ended = { result: { reason: 'target reached', totals: [0], ranks: [1] } };
for (let i = 0; i < count; i += 1) {
  bot.onMessage(call, { kind: 'update', update: { match_id: match(i), seat: 0, events: [
    { sequence: 1, kind: 'match_started', match_started: started },
    { sequence: 2, kind: 'match_ended', match_ended: ended }] } });
}
const late = { request_id: 'r-1', kind: 'DECISION_KIND_PLAY', legal_cards: [{ suit: 'SUIT_CLUBS', rank: 2 }] };
bot.onMessage(call, { kind: 'update', update: { match_id: match(count - 1), seat: 0, request: late, events: [
  { sequence: 1, kind: 'match_started', match_started: started }] } });
process.stdout.write(JSON.stringify({
  kept: ENDED_KEPT, ended: bot.ended.size, started: bot.started.size, counted: bot.matchesStarted,
  active: bot.active.size, seats: bot.lastSequence.size + bot.pending.size, written: written.length,
}));
"""


def test_a_node_bot_running_for_weeks_keeps_a_bounded_memory_of_its_matches():
    """Before: `ended` and `started` kept every match id for good, one more each per match,
    so a ladder bot running for weeks grew without end. Now a running match is forgotten at
    its end and only the newest finished ones are kept (ENDED_KEPT, as heartsbot's
    SEEN_KEPT), enough to drop what still comes of one after its end; --matches counts
    every match all the same."""
    import json
    import subprocess

    count = 10_000
    done = subprocess.run([node(), "-e", MANY_MATCHES, str(BOT_JS), str(count)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    said = json.loads(done.stdout)
    assert said["kept"] < count and said["ended"] == said["kept"], said  # before: 10,000 each
    assert said["started"] == 0 and said["counted"] == count, said
    # the newest match's late update (its replayed start, a request) is dropped: not counted,
    # not taken for running, not answered
    assert said["active"] == 0 and said["seats"] == 0 and said["written"] == 0, said


@pytest.mark.parametrize("value, said", [
    ("0", "--max-matches: must be at least 1, got 0"),
    ("-3", "--max-matches: must be at least 1, got -3"),
    ("1.5", "--max-matches: expected an integer, got '1.5'"),
    ("99999999999", "--max-matches: must be at most 2147483647, got 99999999999"),
])
def test_the_node_bot_refuses_a_max_matches_heartsbot_refuses_and_says_it_as_heartsbot_does(value, said):
    """`hello.max_concurrent_matches` 0 means 1 on the wire (a field left unset), but the
    option --max-matches 0 reads as "no limit" (as --matches 0 does): heartsbot refuses it,
    "must be at least 1" (a usage error, exit 2), and so does this bot, in the same words.
    Before, 99999999999 was taken, sent wrapped around as an int32 (the server refused the
    hello as negative: exit 3, "a bad hello"), where heartsbot says "at most 2147483647"."""
    import subprocess

    done = subprocess.run([node(), str(BOT_JS), "--server", "127.0.0.1:1", "--token", "t", "--name", "alice",
                           f"--max-matches={value}"], capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and done.stderr.startswith(f"error: {said}\nusage:"), done.stderr[-1500:]

class Lines:
    """A process's stream read line by line as it comes, so that a test can wait for a line."""

    def __init__(self, stream: asyncio.StreamReader) -> None:
        self.lines: list[str] = []
        self._stream = stream
        self._changed = asyncio.Event()
        self.task = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        while line := await self._stream.readline():
            self.lines.append(line.decode().rstrip("\n"))
            self._changed.set()
        self._changed.set()

    async def wait_for(self, text: str, count: int = 1, timeout: float = 30) -> None:
        async def seen() -> None:
            while sum(text in line for line in self.lines) < count:
                if self.task.done():
                    raise AssertionError(f"{text!r} never came:\n" + "\n".join(self.lines))
                self._changed.clear()
                await self._changed.wait()
        try:
            await asyncio.wait_for(seen(), timeout)
        except asyncio.TimeoutError:
            raise AssertionError(f"{text!r} did not come within {timeout} s:\n" + "\n".join(self.lines)) from None

    async def rest(self) -> str:
        await self.task
        return "\n".join(self.lines)


@contextlib.asynccontextmanager
async def node_and_a_daemon_process(tmp_path: Path) -> AsyncIterator[Any]:
    """The Node bot, as alice, against a `heartsd serve` process, once it has connected:
    an object with ``proc`` (the bot), ``err`` (its stderr, as Lines), ``port`` and
    ``await restart(down_s)``, which SIGKILLs the daemon (a crash: the matches it ran end
    aborted, without a word to the bot) and starts it again on the same port and store
    ``down_s`` later. Every daemon is killed on leaving, and the bot if still running."""
    import types

    from ..server.test_daemon_process import start as start_daemon

    daemon, port = start_daemon(tmp_path)
    daemons = [daemon]

    async def restart(down_s: float = 0.0) -> None:
        daemons[-1].kill()
        daemons[-1].wait(10)
        await asyncio.sleep(down_s)
        daemons.append(start_daemon(tmp_path, "--port", str(port))[0])

    proc = await asyncio.create_subprocess_exec(
        node(), str(BOT_JS), "--server", f"127.0.0.1:{port}", "--token", BOTS["alice"], "--name", "alice",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        assert proc.stderr is not None
        err = Lines(proc.stderr)
        await err.wait_for("connected as alice")
        yield types.SimpleNamespace(proc=proc, err=err, port=port, restart=restart)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        for process in daemons:
            if process.poll() is None:
                process.kill()
                process.wait(10)


def test_the_node_bot_forgets_a_match_a_restarted_server_aborted(tmp_path):
    """A daemon killed mid-match comes back with the match aborted and no memory of what the
    seat saw, so no `match_ended` can reach the bot: the welcome, which lists the matches
    the bot is seated in, is what says the match is over (docs/protocol.md, "Resume"; the
    Python client does the same). Before, the Node bot resumed the listed matches but kept
    the others for good (and their open requests): a later Ctrl-C said it was finishing a
    match that no longer ran."""
    import signal

    from ..server.test_daemon_process import Remote

    async def scenario():
        async with node_and_a_daemon_process(tmp_path) as bot:
            match_id = await Remote(bot.port).create_match(["alice", *HOUSE3], deals=200, seed=3)
            await bot.err.wait_for(f"match {match_id} started")
            await bot.restart()
            await bot.err.wait_for("connected as alice", count=2)
            bot.proc.send_signal(signal.SIGINT)  # drain: with no match running, it leaves at once
            code = await asyncio.wait_for(bot.proc.wait(), 30)
            return match_id, code, await bot.err.rest()

    match_id, code, err = run(scenario())
    assert code == 0, err
    assert f"match {match_id} ended while this bot was away" in err, err
    assert "draining (Ctrl-C): finishing 0 running match(es)" in err, err
    assert f"resuming {match_id}" not in err, err


def test_the_node_bot_says_an_outage_once_and_how_long_it_lasted(tmp_path):
    """Before, the Node bot logged "stream ended ...; reconnecting" at every attempt of an
    outage (every 10 s once its back-off is at its cap, a night's outage filling its log),
    and its reconnect did not say how long it had been away. Now, as the Python client
    does, the loss is said once ("still reconnecting" at most every minute while it
    lasts) and the reconnect says how long and how many attempts it took."""
    async def scenario():
        async with node_and_a_daemon_process(tmp_path) as bot:
            await bot.restart(down_s=3)  # back-off 0.2 s doubling: about four failed attempts
            await bot.err.wait_for("connected as alice", count=2)
            bot.proc.kill()
            return await bot.err.rest()

    err = run(scenario())
    assert sum("stream ended" in line for line in err.splitlines()) == 1, err
    assert "still reconnecting" not in err, err  # (said after a minute)
    back = [line for line in err.splitlines() if "connected as alice" in line][1]
    assert "back after" in back and "attempt(s)" in back, err


def test_a_new_node_bot_process_rebuilds_a_running_match_from_its_first_event(tmp_path):
    """A bot restarted mid-match (its process killed, a new one started) knows nothing of
    the match the welcome lists: it asks `resume` from sequence 0 to rebuild it, as
    docs/protocol.md ("Resume") says a client with no saved state may. The automatic
    replay, from the last request answered, comes first; before, the Node bot took its
    events as the newest seen and then dropped the whole history it had asked for as
    duplicates: it never saw the match's `match_started`, so it did not say the match had
    started, and with `--matches 1` it did not count it, played it, and then waited for
    another match instead of leaving."""
    import signal

    async def scenario():
        async with running_daemon(tmp_path, decision_ms=3000, grace_ms=10000) as daemon:
            first = await start_bot(daemon)
            await connected(daemon, first)
            match_id = await daemon.create_match(["alice", *HOUSE3], deals=2, seed=11)
            runner = daemon.arena.runners[match_id]
            while sum(d.seat == 0 for d in runner.decisions) < 5:
                await asyncio.sleep(0.005)
            first.send_signal(signal.SIGKILL)
            await first.wait()
            second = await start_bot(daemon, "--matches", "1")
            return match_id, await finished(second, timeout=60), daemon.stored(match_id)

    match_id, (code, out, err), stored = run(scenario())
    assert code == 0, err
    assert f"match {match_id} started" in err, err
    assert f"match {match_id} ended (completed)" in out, out
    assert stored.status == "finished"
    mine = [d for d in stored.record.decisions if d.seat == 0]
    assert [P.Provenance.Name(d.provenance) for d in mine if d.provenance != P.PROVENANCE_BOT] == [], err


def test_a_rebuilt_match_does_not_say_again_what_an_earlier_process_was_told(tmp_path):
    """Rebuilding a match from its first event (above) replays its whole history: each
    `notice` in it (a seat's default: one a decision, up to every decision of a seat played
    by default for a whole match) was logged again as if it had just happened. What the
    earlier process was told, up to where the server's own replay starts, is now quiet;
    what happened after (while no process played) is still said."""
    from ..server.harness import Bot, first_legal

    asked: list[str] = []

    def policy(request, bot):  # type: ignore[no-untyped-def]
        asked.append(request.request_id)
        return None if len(asked) == 2 else first_legal(request, bot)  # let one clock run out

    async def scenario():
        async with running_daemon(tmp_path, decision_ms=2000, bank_ms=0, grace_ms=10000) as daemon:
            earlier = await Bot(daemon, "alice", policy).start()
            match_id = await daemon.create_match(["alice", *HOUSE3], deals=2, seed=11)
            runner = daemon.arena.runners[match_id]
            while sum(d.seat == 0 and d.provenance == P.PROVENANCE_BOT for d in runner.decisions) < 4:
                await asyncio.sleep(0.005)
            await earlier.drop()
            proc = await start_bot(daemon, "--matches", "1")
            return match_id, await finished(proc, timeout=60), daemon.stored(match_id)

    match_id, (code, out, err), stored = run(scenario())
    assert code == 0, err
    timeouts = [d for d in stored.record.decisions if d.seat == 0 and d.provenance == P.PROVENANCE_TIMEOUT]
    assert len(timeouts) == 1, err  # the one the earlier process let run out, and no other
    assert f"match {match_id} started" in err, err
    assert "ran out of time" not in err, err


def test_a_node_bot_back_in_a_match_played_by_default_sums_up_its_defaults(tmp_path):
    """A bot that comes back to a match the server played for it while it was gone gets
    what it missed at once: a `notice` for every default (one a decision; a whole match of
    them after a night away). Before, the Node bot logged each as its own line, the same
    words dozens of times; now the same notice in one update is said once, with how many
    times it came.

    What is sure: every default is said, counted once (the counts add up to the stored
    defaults), and the ten or more it missed, which its catch-up's history (its `resume`
    from 0) holds in one update, are said in one line. Not how many lines: a default
    played after it is back (a loaded bot answering an auto-played seat's request after
    its 20 ms) comes with the next request, in an update of its own, and is said there.
    Before, on a loaded machine, the history's defaults were dropped as told before (a
    live update ahead of the history was taken as the server's own replay)."""
    from ..server.harness import Bot, first_legal

    async def scenario():
        async with running_daemon(tmp_path, decision_ms=2000, grace_ms=300, house_delay_ms=20) as daemon:
            earlier = await Bot(daemon, "alice", first_legal).start()
            match_id = await daemon.create_match(["alice", *HOUSE3], deals=5, seed=11)
            runner = daemon.arena.runners[match_id]
            while sum(d.seat == 0 for d in runner.decisions) < 3:
                await asyncio.sleep(0.005)
            await earlier.drop()
            while sum(d.seat == 0 and d.provenance == P.PROVENANCE_AUTO for d in runner.decisions) < 10:
                await asyncio.sleep(0.005)
            proc = await start_bot(daemon, "--matches", "1")
            return await finished(proc, timeout=60), daemon.stored(match_id)

    (code, out, err), stored = run(scenario())
    assert code == 0, err
    # The defaults of a seat whose bot is away (never of one that answers, as before the drop).
    away = (P.PROVENANCE_DISCONNECT, P.PROVENANCE_AUTO)
    defaulted = [d for d in stored.record.decisions if d.seat == 0 and d.provenance in away]
    said = [line for line in err.splitlines()
            if ("seat 0 is disconnected;" in line or "seat 0 is being auto-played" in line)
            and "the server played its default" in line]
    times = [int(m.group(1)) if (m := re.search(r" \((\d+) times\)$", line)) else 1 for line in said]
    assert len(defaulted) >= 10 and sum(times) == len(defaulted), err
    assert max(times) >= 10, err


def test_a_node_bot_replaced_by_a_second_instance_says_so_and_leaves(tmp_path):
    """A second instance of a bot (the same token) replaces the first's stream: the first
    gets a final `draining` with cause REPLACED and should stop (docs/protocol.md). Before,
    the Node bot read only the words and said "drained (...): every match finished",
    as if it had drained itself; now, as heartsbot does, it says by the cause what
    happened, and still leaves with 0."""
    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            first = await start_bot(daemon)
            await connected(daemon, first)
            session = daemon.arena.sessions.get("alice")
            second = await start_bot(daemon)
            try:
                while daemon.arena.sessions.get("alice") is session:
                    await asyncio.sleep(0.01)
                return await finished(first, timeout=20)
            finally:
                second.kill()
                await second.communicate()

    code, _, err = run(scenario())
    assert code == 0, err
    assert "the server ended this stream without being asked" in err, err
    assert "another instance of this bot connected and plays in its place" in err, err
    assert "every match finished" not in err, err


def test_a_node_bot_in_two_seats_answers_each_seats_request_once_after_a_restart(tmp_path):
    """One bot in two seats of a match, both with a PASS request open when its process is
    replaced: the new process gets each request twice (the server's own replay, then the
    one its `resume` asks for) and must answer each once. Before, the Node bot kept one
    open request per match, not per seat: seat 2's request displaced seat 0's, so each
    copy looked new and was answered again, and the server rejected both as stale."""
    from ..server.harness import Bot

    async def scenario():
        async with running_daemon(tmp_path, decision_ms=5000, grace_ms=10000) as daemon:
            earlier = await Bot(daemon, "alice", lambda request, bot: None, max_matches=2).start()  # answers nothing
            match_id = await daemon.create_match(["alice", "house:random", "alice", "house:heuristic"], deals=1, seed=5)
            while {s for (m, s), events in earlier.events.items() if m == match_id and events} != {0, 2}:
                await asyncio.sleep(0.005)
            await earlier.drop()
            proc = await start_bot(daemon, "--matches", "1", "--max-matches", "2")
            return await finished(proc), daemon.stored(match_id)

    (code, out, err), stored = run(scenario())
    assert code == 0, err
    assert "answer rejected" not in err, err
    assert stored.status == "finished", err
    assert_played_itself(stored.record, 0)
    assert_played_itself(stored.record, 2)


def test_the_node_bot_plays_two_seats_of_one_match(tmp_path):
    """One bot in two seats: each seat's events are numbered alike (a seat's own log), so
    what the bot has seen, and its open request, are kept per (match, seat)."""
    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            proc = await start_bot(daemon, "--matches", "1", "--max-matches", "2")
            await connected(daemon, proc)
            match_id = await daemon.create_match(["alice", "house:random", "alice", "house:heuristic"], deals=2, seed=5)
            return match_id, await finished(proc), daemon.stored(match_id)

    match_id, (code, out, err), stored = run(scenario())
    assert code == 0, err
    assert stored.status == "finished", err
    assert_played_itself(stored.record, 0)
    assert_played_itself(stored.record, 2)


@pytest.mark.parametrize("token, name, status", [
    ("not-a-token", "alice", "UNAUTHENTICATED"),
    (BOTS["alice"], "bob", "PERMISSION_DENIED"),
])
def test_the_node_bot_exits_with_a_clear_message_when_refused(tmp_path, token, name, status):
    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            return await finished(await start_bot(daemon, name=name, token=token), timeout=20)

    code, _, err = run(scenario())
    assert code == 3, err  # refused: 3 in every client
    assert f"error: the server refused bot {name}: {status}" in err, err


def test_the_node_bot_survives_a_server_that_sends_odd_but_parseable_messages():
    """A server is outside the bot's control (another implementation, a newer version):
    before (an attack pass), a `match_ended` without a result killed the Node bot with a
    TypeError (exit 1, not one of its exit codes), and a PASS request with `pass_count` 0
    made it pass every legal card (`slice(-0)` is the whole list). A broken server here is
    a real gRPC server on a loopback port that sends exactly those."""
    from heartsbot.proto import bot_pb2, bot_pb2_grpc, cards_pb2

    answers: list[bot_pb2.PlayRequest] = []
    sent = asyncio.Event()

    class Broken(bot_pb2_grpc.BotServiceServicer):
        async def Play(self, requests, context):  # type: ignore[no-untyped-def]
            await requests.__anext__()  # hello
            yield bot_pb2.PlayResponse(welcome=bot_pb2.Welcome(bot_name="alice", session_id="s-1"))
            legal = [cards_pb2.Card(suit=cards_pb2.SUIT_CLUBS, rank=r) for r in (2, 3, 4, 5, 6)]
            yield bot_pb2.PlayResponse(update=bot_pb2.MatchUpdate(match_id="m-1", seat=0, request=bot_pb2.DecisionRequest(
                request_id="r-1", kind=P.DECISION_KIND_PASS, legal_cards=legal, pass_count=0)))
            answers.append(await requests.__anext__())
            yield bot_pb2.PlayResponse(update=bot_pb2.MatchUpdate(match_id="m-1", seat=0, events=[
                game_pb2.Event(sequence=2, match_ended=game_pb2.MatchEnded())]))
            sent.set()
            async for message in requests:
                answers.append(message)

    async def scenario():
        async with node_against(Broken()) as (proc, err):
            await asyncio.wait_for(sent.wait(), 30)
            assert proc.stdout is not None
            ended = await asyncio.wait_for(proc.stdout.readline(), 30)  # it got as far as printing the end
            await asyncio.sleep(0.5)  # and did not die of it, as it did
            alive = proc.returncode is None
        return alive, ended.decode() + err[0]

    alive, err = run(scenario())
    assert alive and "TypeError" not in err and err.startswith("match m-1 ended (no result given)"), err
    assert answers[0].answer.request_id == "r-1" and list(answers[0].answer.pass_cards.cards) == [], answers[0]


def test_the_node_bot_retries_a_server_that_refuses_with_a_reason_and_shows_it():
    """Before: as the Python client, the Node bot took any refusal of a never-connected
    stream for an unreachable server: a stream refused with a reason (FAILED_PRECONDITION:
    another version of this bot plays a tournament match) counted towards its five
    attempts, and it exited 4, "is the server running there?". Now only a server it cannot
    reach counts; a refusal is logged with its reason and tried again."""
    import grpc

    from heartsbot.proto import bot_pb2, bot_pb2_grpc

    reason = "bot 'alice' is playing match m-1 of a tournament as version 'v1'; connect as 'v1'"
    attempts: list[int] = []
    welcomed = asyncio.Event()

    class Refusing(bot_pb2_grpc.BotServiceServicer):
        async def Play(self, requests, context):  # type: ignore[no-untyped-def]
            attempts.append(1)
            await requests.__anext__()  # hello, read first as the daemon does before refusing
            if len(attempts) <= 6:  # more than its five attempts
                await context.abort(grpc.StatusCode.FAILED_PRECONDITION, reason)
            yield bot_pb2.PlayResponse(welcome=bot_pb2.Welcome(bot_name="alice", session_id="s-1"))
            welcomed.set()
            async for _ in requests:
                pass

    async def scenario():
        async with node_against(Refusing()) as (proc, err):
            await asyncio.wait({asyncio.ensure_future(welcomed.wait()), asyncio.ensure_future(proc.wait())},
                               timeout=60, return_when=asyncio.FIRST_COMPLETED)
            reached = welcomed.is_set()
        return reached, proc.returncode, err[0]

    reached, code, err = run(scenario())
    assert reached, (code, err[-1500:])  # before: exit 4 after five refusals
    assert err.count(reason) >= 6 and "is the server running there" not in err, err[-1500:]


def test_the_node_bot_sends_a_token_without_its_line_end_and_refuses_one_no_header_carries(tmp_path):
    """As heartsbot (test_client.py): a token kept with a file's "\\r" is sent stripped, as the
    daemon reads it; one beyond printable ASCII is a usage error (exit 2), in heartsbot's words."""
    import subprocess

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            proc = await start_bot(daemon, token=BOTS["alice"] + "\r\n")
            await connected(daemon, proc)
            proc.send_signal(signal.SIGINT)
            return await finished(proc)

    code, _, err = run(scenario())
    assert code == 0, err[-2000:]
    done = subprocess.run([node(), str(BOT_JS), "--server", "127.0.0.1:1", "--token", "jeton-épelé-1234",
                           "--name", "alice"], capture_output=True, text=True, timeout=30)
    assert done.returncode == 2, done.stderr[-1500:]
    assert done.stderr.startswith("error: --token (or HEARTS_TOKEN) holds a character a gRPC header cannot carry: "
                                  "a token is printable ASCII"), done.stderr[-1500:]
