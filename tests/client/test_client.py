"""The reference client against a real server: full matches, drop and resume, several
matches on one stream, a strategy that raises, a strategy that overruns its time."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import subprocess
import sys
import time
from pathlib import Path

from hearts_engine import MatchRecord, verify_record
from heartsbot.proto import bot_pb2, game_pb2
from heartsbot.client import TIMEOUT, BotClient
from heartsbot.logs import FIELDS
from heartsbot.strategies import HeuristicStrategy, RandomStrategy, Strategy

from ..server.harness import BOTS, run, running_daemon

P = game_pb2
HOUSE3 = ["house:random", "house:random", "house:random"]


def client_for(daemon, name, strategy, **kw):
    return BotClient(daemon.target, BOTS[name], strategy, name, **kw)


async def start(client):
    task = asyncio.get_running_loop().create_task(client.run())
    await asyncio.wait_for(client.connected.wait(), 10)
    return task


async def finish(client, task):
    client.stop()
    await asyncio.gather(task, return_exceptions=True)


def match_started(client, match_id, seat):
    """Hand ``client`` the start of ``match_id`` at ``seat``, as its stream would: the events a
    test then feeds it are of a match this process plays (not an earlier run's)."""
    from hearts_engine import preset
    from heartsbot import convert
    from heartsbot.proto import bot_pb2

    started = game_pb2.Event(sequence=1, match_started=game_pb2.MatchStarted(
        match_id=match_id, your_seat=seat, ruleset=convert.ruleset_to_wire(preset("standard"))))
    client._on_update(bot_pb2.MatchUpdate(match_id=match_id, seat=seat, events=[started]), None, None, set())


def test_full_matches_with_the_client_library(tmp_path):
    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            clients = [client_for(daemon, n, HeuristicStrategy(i)) for i, n in enumerate(["alice", "bob", "carol", "dave"])]
            tasks = [await start(c) for c in clients]
            match_id = await daemon.create_match(["alice", "bob", "carol", "dave"], ruleset="classic", deals=3, seed=1)
            result = await clients[0].wait_match(match_id, timeout=60)
            for c, t in zip(clients, tasks):
                await finish(c, t)
            return result, daemon.stored(match_id), clients

    result, stored, clients = run(scenario())
    assert result.status == P.MATCH_STATUS_FINISHED
    assert all(d.provenance == P.PROVENANCE_BOT for d in stored.record.decisions)
    assert verify_record(MatchRecord.from_json(stored.record.engine_record_json)) is not None
    assert all(c.stats.fallbacks == 0 and c.stats.rejections == 0 for c in clients)


def test_a_dropped_connection_reconnects_and_resumes(tmp_path):
    async def scenario():
        async with running_daemon(tmp_path, grace_ms=10_000, decision_ms=5000) as daemon:
            client = client_for(daemon, "alice", HeuristicStrategy(1), backoff_s=(0.05, 0.2))
            task = await start(client)
            match_id = await daemon.create_match(["alice", *HOUSE3], deals=2, seed=3)
            while client.stats.decisions < 8:
                await asyncio.sleep(0.01)
            client._call.cancel()  # the network drops mid-match
            result = await client.wait_match(match_id, timeout=60)
            await finish(client, task)
            return result, client, daemon.stored(match_id)

    result, client, stored = run(scenario())
    assert client.stats.reconnects >= 1
    assert result.status == P.MATCH_STATUS_FINISHED
    mine = [d for d in stored.record.decisions if d.seat == 0]
    assert all(d.provenance == P.PROVENANCE_BOT for d in mine), [d.provenance for d in mine]


def test_several_matches_on_one_stream(tmp_path):
    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            client = client_for(daemon, "alice", RandomStrategy(2), max_matches=3)
            task = await start(client)
            ids = [await daemon.create_match(["alice", *HOUSE3], deals=2, seed=i) for i in range(3)]
            results = [await client.wait_match(m, timeout=60) for m in ids]
            await finish(client, task)
            return results

    results = run(scenario())
    assert [r.status for r in results] == [P.MATCH_STATUS_FINISHED] * 3


class Crashing(HeuristicStrategy):
    def choose_play(self, view):
        if len(view.tricks) == 3:
            raise RuntimeError("bug in the bot")
        return super().choose_play(view)


class IllegalFirst(HeuristicStrategy):
    """Plays a card that breaks the rules on the third trick (a strategy bug)."""

    def choose_play(self, view):
        if len(view.tricks) == 2:
            illegal = [c for c in view.hand if c not in view.legal]
            if illegal:
                return illegal[0]
        return super().choose_play(view)


class Sleepy(HeuristicStrategy):
    def choose_play(self, view):
        if len(view.tricks) == 2:
            time.sleep(self.time_limit_s + 1.0)  # far past its time
        return super().choose_play(view)


def test_a_strategy_that_raises_gets_a_safe_default_and_the_match_completes(tmp_path):
    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            client = client_for(daemon, "alice", Crashing(0))
            task = await start(client)
            match_id = await daemon.create_match(["alice", *HOUSE3], deals=1, seed=4)
            result = await client.wait_match(match_id, timeout=60)
            await finish(client, task)
            return result, client, daemon.stored(match_id)

    result, client, stored = run(scenario())
    assert result.status == P.MATCH_STATUS_FINISHED and client.stats.fallbacks >= 1
    assert all(d.provenance == P.PROVENANCE_BOT for d in stored.record.decisions if d.seat == 0)


def test_a_rejected_answer_is_answered_again_with_a_legal_card(tmp_path, monkeypatch):
    """The client checks a strategy's choice before sending it (an illegal one is replaced
    and reported, see test_author_feedback.py); a rejection it did not foresee (its rules
    and the server's disagree) is answered again with a legal card: pretend here that the
    client's own check lets the illegal card through."""
    import heartsbot.client

    monkeypatch.setattr(heartsbot.client, "answer_problem", lambda request, decided: None)

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            client = client_for(daemon, "alice", IllegalFirst(0))
            task = await start(client)
            ids = []
            for seed in range(4):
                ids.append(await daemon.create_match(["alice", *HOUSE3], deals=1, seed=seed))
                await client.wait_match(ids[-1], timeout=60)
            await finish(client, task)
            return client, [daemon.stored(m) for m in ids]

    client, stored = run(scenario())
    mine = [d for s in stored for d in s.record.decisions if d.seat == 0]
    assert client.stats.rejections >= 1
    assert sum(d.rejected_answers for d in mine) == client.stats.rejections
    assert all(d.provenance == P.PROVENANCE_BOT for d in mine), "a rejection must not turn into a default"


def test_a_strategy_that_overruns_is_answered_for_before_the_deadline(tmp_path):
    async def scenario():
        async with running_daemon(tmp_path, decision_ms=300, bank_ms=200) as daemon:
            client = client_for(daemon, "alice", Sleepy(0))
            task = await start(client)
            match_id = await daemon.create_match(["alice", *HOUSE3], deals=1, seed=5)
            result = await client.wait_match(match_id, timeout=60)
            await finish(client, task)
            return result, client, daemon.stored(match_id)

    result, client, stored = run(scenario())
    mine = [d for d in stored.record.decisions if d.seat == 0]
    assert result.status == P.MATCH_STATUS_FINISHED and client.stats.fallbacks >= 1
    assert TIMEOUT in client.stats.problems, "the library's own timer answered for the sleeping strategy"
    assert all(d.provenance == P.PROVENANCE_BOT for d in mine), "the library answered in time"
    # What the server charged each answer (its measured think time less its own stalls,
    # which on a loaded machine include this process being descheduled) is within the
    # 300 ms decision time and the 200 ms bank.
    assert max(d.think_ms - d.stall_credit_ms for d in mine) <= 500


def test_heartsbot_local_prints_the_score_sheet_and_a_summary(tmp_path):
    one = subprocess.run([sys.executable, "-m", "heartsbot.cli", "local", "--seed", "3", "--deals", "2",
                          "--strategies", "heuristic", "random", "random", "random"], capture_output=True, text=True)
    assert one.returncode == 0, one.stderr
    assert "0-heuristic" in one.stdout and "total" in one.stdout and "winner" in one.stdout
    many = subprocess.run([sys.executable, "-m", "heartsbot.cli", "local", "--matches", "3", "--deals", "1",
                           "--ruleset", "classic", "--players", "3", "--strategies", "heuristic", "random", "random"],
                          capture_output=True, text=True)
    assert many.returncode == 0, many.stderr
    assert "3 matches" in many.stdout and "points/deal" in many.stdout
    bad = subprocess.run([sys.executable, "-m", "heartsbot.cli", "local", "--strategies", "genius", "random", "random",
                          "random"], capture_output=True, text=True)
    assert bad.returncode == 2 and "unknown strategy 'genius'" in bad.stderr
    assert "graded-Q" in bad.stderr  # every strategy it takes is named
    # The README offers graded-Q for calibrating a field; only `heartsd tournament local`
    # took it (a newcomer's pass).
    graded = subprocess.run([sys.executable, "-m", "heartsbot.cli", "local", "--deals", "1", "--strategies",
                             "graded-0", "graded-100r", "graded-36", "random"], capture_output=True, text=True)
    assert graded.returncode == 0, graded.stderr
    assert "0-graded-0" in graded.stdout and "winner" in graded.stdout, graded.stdout


def test_load_a_strategy_from_a_file(tmp_path):
    from heartsbot.loading import load_strategy

    path = tmp_path / "mybot.py"
    path.write_text(
        "from heartsbot.strategies import Strategy\n"
        "class MyBot(Strategy):\n"
        "    def choose_pass(self, view):\n        return view.legal[:3]\n"
        "    def choose_play(self, view):\n        return view.legal[0]\n"
    )
    assert type(load_strategy(str(path))).__name__ == "MyBot"
    assert type(load_strategy(f"{path}:MyBot")).__name__ == "MyBot"
    assert isinstance(load_strategy("heartsbot.strategies:RandomStrategy"), Strategy)


_TWO_FILE_BOT = (
    "from __future__ import annotations\n"
    "from dataclasses import dataclass, field\n"
    "from heartsbot.strategies import Strategy\n"
    "from helpers import lowest\n"
    "@dataclass\n"
    "class Memory:\n    seen: list[int] = field(default_factory=list)\n"
    "class MyBot(Strategy):\n"
    "    def choose_pass(self, view):\n        return view.legal[:3]\n"
    "    def choose_play(self, view):\n"
    "        import later\n"  # imported at the first play, not at load
    "        return later.pick(lowest(view.legal))\n"
)


def test_a_strategy_file_imports_its_neighbours_and_may_use_dataclasses(tmp_path, monkeypatch):
    """A strategy split over files, loaded from another folder: its folder is on the import
    path (at load and later), and the module is registered,
    so a dataclass under ``from __future__ import annotations`` works. Before, the helper's
    import failed (ModuleNotFoundError), and from the bot's own folder the dataclass did
    ('NoneType' object has no attribute '__dict__')."""
    from hearts_engine import Match, PassAction, Phase, preset
    from heartsbot.loading import load_strategy

    folder = tmp_path / "bot"
    folder.mkdir()
    (folder / "mybot.py").write_text(_TWO_FILE_BOT)
    (folder / "helpers.py").write_text("def lowest(cards):\n    return min(cards, key=lambda c: c % 13)\n")
    (folder / "later.py").write_text("def pick(card):\n    return card\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.setattr(sys, "path", list(sys.path))
    for name in ("helpers", "later"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    strategy = load_strategy(str(folder / "mybot.py"))
    match = Match(preset("standard"), seed=3)
    while match.view(seat := match.to_act()[0]).phase is Phase.PASSING:
        match.apply(seat, PassAction(tuple(strategy.choose_pass(match.view(seat)))))
    assert strategy.choose_play(match.view(seat)) in match.view(seat).legal
    module = sys.modules[type(strategy).__module__]  # "mybot" (or "mybot_2"... once that name is taken)
    assert module.__name__.startswith("mybot") and Path(module.__file__) == folder / "mybot.py"


def test_a_strategy_file_named_like_a_module_shadows_nothing(tmp_path, monkeypatch):
    """A strategy file called ``random.py`` (or ``tomllib.py``...) is registered under a name
    of its own, and its folder comes after the installed modules: ``import random`` still
    gives the standard library's."""
    import random

    from heartsbot.loading import load_strategy

    (tmp_path / "random.py").write_text(
        "from heartsbot.strategies import Strategy\n"
        "class Lucky(Strategy):\n"
        "    def choose_pass(self, view):\n        return view.legal[:3]\n"
        "    def choose_play(self, view):\n        return view.legal[0]\n"
    )
    monkeypatch.setattr(sys, "path", list(sys.path))
    first, second = load_strategy(str(tmp_path / "random.py")), load_strategy(str(tmp_path / "random.py"))
    assert sys.modules["random"] is random and hasattr(random, "shuffle")
    assert type(first).__module__ != "random" and type(first).__module__ != type(second).__module__
    assert type(first).__name__ == type(second).__name__ == "Lucky"
    # A module not imported yet either (a review: with the folder already on the path, the
    # file itself was found under that name, and `import tomllib` then gave the strategy).
    monkeypatch.delitem(sys.modules, "tomllib", raising=False)
    (tmp_path / "tomllib.py").write_text((tmp_path / "random.py").read_text())
    assert type(load_strategy(str(tmp_path / "tomllib.py"))).__module__ != "tomllib"
    import tomllib

    assert hasattr(tomllib, "loads")


def test_heartsbot_play_command_plays_and_stops_cleanly_on_ctrl_c(tmp_path):
    import signal

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "heartsbot.cli", "play", "--server", daemon.target, "--token", BOTS["alice"],
                "--name", "alice", "--strategy", "heuristic",
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
            for _ in range(200):
                if daemon.arena.sessions.get("alice") is not None:
                    break
                await asyncio.sleep(0.05)
            match_id = await daemon.create_match(["alice", *HOUSE3], deals=1, seed=9)
            await daemon.wait_finished(match_id)
            proc.send_signal(signal.SIGINT)
            _, err = await asyncio.wait_for(proc.communicate(), 20)
            wrong = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "heartsbot.cli", "play", "--server", daemon.target, "--token", "nope-nope-nope",
                "--name", "alice", "--strategy", "random", stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE)
            _, wrong_err = await asyncio.wait_for(wrong.communicate(), 20)
            return proc.returncode, err.decode(), daemon.stored(match_id), wrong.returncode, wrong_err.decode()

    code, err, stored, wrong_code, wrong_err = run(scenario())
    assert code == 0 and "stopped after" in err
    assert stored.status == "finished"
    assert all(d.provenance == P.PROVENANCE_BOT for d in stored.record.decisions if d.seat == 0)
    assert wrong_code == 3 and "UNAUTHENTICATED" in wrong_err  # refused: 3 in every client


def test_events_that_come_again_after_a_reconnect_count_once():
    """After a reconnect the server replays from the last request the bot answered (what it
    surely read), so some events come twice; the client drops them by sequence. Before, a
    repeated notice counted a server default twice in the match's report."""
    from heartsbot.proto import bot_pb2

    client = BotClient("127.0.0.1:1", "token", RandomStrategy(0), "alice")
    match_started(client, "m-1", 2)
    timeout = game_pb2.Event(sequence=5, notice=game_pb2.Notice(seat=2, provenance=P.PROVENANCE_TIMEOUT))
    ended = game_pb2.Event(sequence=6, match_ended=game_pb2.MatchEnded(result=game_pb2.MatchResult(totals=[1, 2, 3, 4])))
    for events in ([timeout], [timeout, ended], [ended]):
        client._on_update(bot_pb2.MatchUpdate(match_id="m-1", seat=2, events=events), None, None, set())  # type: ignore[arg-type]
    assert client.stats.matches_ended == 1
    assert client.stats.reports["m-1"].server_defaults == {"timeout": 1}


def test_a_second_instance_of_a_bot_takes_its_stream_and_the_first_leaves(tmp_path):
    """Before: the stream a second instance of the bot replaced ended with OK and nothing
    else, and the first instance reconnected and took the stream back, the two taking it
    from each other every backoff. Now the replaced stream's last message is a final
    `draining` (leave, do not reconnect), and the first instance stops."""
    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            first = client_for(daemon, "alice", RandomStrategy(1), backoff_s=(0.05, 0.2))
            first_task = await start(first)
            second = client_for(daemon, "alice", RandomStrategy(2), backoff_s=(0.05, 0.2))
            second_task = await start(second)
            await asyncio.wait_for(first_task, 10)  # it left by itself
            await asyncio.sleep(0.5)
            session = daemon.arena.sessions.get("alice")
            still_second = second.connected.is_set() and second.stats.reconnects == 0
            await finish(second, second_task)
            return first, still_second, session

    first, still_second, session = run(scenario())
    assert first.drained and first.stats.reconnects == 0
    assert first.sent_away_cause == bot_pb2.DRAIN_CAUSE_REPLACED, first.sent_away_cause
    assert still_second and session is not None


def test_the_client_drains_grpcs_wake_ups_on_its_loop():
    """heartsbot/wakeups.py on the bot's side: with only a bare gRPC server in the process
    (nothing else drains), the client puts its reader in front of grpc.aio's, and the
    stream's messages pass through it; with ``drain_wakeups=False`` it does not."""
    import grpc

    from heartsbot.proto import bot_pb2, bot_pb2_grpc
    from heartsbot.wakeups import drained

    class Welcoming(bot_pb2_grpc.BotServiceServicer):
        async def Play(self, request_iterator, context):  # noqa: N802
            await request_iterator.__anext__()
            await context.write(bot_pb2.PlayResponse(welcome=bot_pb2.Welcome(session_id="s-1", bot_name="x")))
            for n in range(200):  # rejections of nothing: messages the client reads and logs
                await context.write(bot_pb2.PlayResponse(rejected=bot_pb2.AnswerRejected(reason=f"#{n}")))
            async for _ in request_iterator:
                pass

    async def scenario():
        server = grpc.aio.server()
        bot_pb2_grpc.add_BotServiceServicer_to_server(Welcoming(), server)
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        loop = asyncio.get_running_loop()
        try:
            assert drained(loop) is None  # a bare server does not drain
            plain = BotClient(f"127.0.0.1:{port}", "t" * 12, HeuristicStrategy(), "x", drain_wakeups=False)
            task = await start(plain)
            assert drained(loop) is None
            await finish(plain, task)
            client = BotClient(f"127.0.0.1:{port}", "t" * 12, HeuristicStrategy(), "x")
            task = await start(client)
            reader = drained(loop)
            await asyncio.sleep(0.5)
            await finish(client, task)
            return reader
        finally:
            await server.stop(None)

    reader = run(scenario())
    assert reader is not None and reader.passes > 0


def against_a_daemon_process(tmp_path, caplog, scenario):  # type: ignore[no-untyped-def]
    """``scenario(daemon process, its port)`` run against a `heartsd serve` process, with the
    client's info logs in ``caplog``; the process is killed after."""
    from ..server.test_daemon_process import start as start_daemon

    daemon, port = start_daemon(tmp_path)
    try:
        with caplog.at_level(logging.INFO, logger="heartsbot"):
            return run(scenario(daemon, port))
    finally:
        daemon.kill()


@contextlib.asynccontextmanager
async def killed_and_restarted(tmp_path, daemon, port: int, client: BotClient,  # type: ignore[no-untyped-def]
                               down_s: float = 0.0):
    """SIGKILL the daemon process, start it again on the same port and store ``down_s``
    later, and wait until ``client`` has its welcome from the new one; the new one is
    stopped after."""
    from ..server.test_daemon_process import start as start_daemon

    daemon.kill()
    daemon.wait(10)
    client.connected.clear()
    await asyncio.sleep(down_s)
    again, _ = start_daemon(tmp_path, "--port", str(port))
    try:
        await asyncio.wait_for(client.connected.wait(), 30)
        yield
    finally:
        again.send_signal(signal.SIGTERM)
        again.wait(20)


def test_after_the_server_crashes_and_restarts_a_match_it_aborted_is_no_longer_counted_running(tmp_path, caplog):
    """A daemon killed mid-match comes back with the match aborted and no memory of what the
    seat saw, so no `match_ended` can reach the bot: the welcome, which lists the matches
    the bot is seated in, is what says the match is over. Before, the client kept it in
    `active` for good: a later Ctrl-C said it was finishing it, and its end was never said."""
    from ..server.test_daemon_process import Remote

    async def scenario(daemon, port):
        client = BotClient(f"127.0.0.1:{port}", BOTS["alice"], RandomStrategy(1), "alice", backoff_s=(0.05, 0.2))
        task = await start(client)
        match_id = await Remote(port).create_match(["alice", *HOUSE3], deals=200, seed=3)
        while client.stats.decisions < 5:
            await asyncio.sleep(0.01)
        running_before = set(client.active)
        async with killed_and_restarted(tmp_path, daemon, port, client):
            after = set(client.active)
            summary = client.stats.summary()
            await finish(client, task)
        return match_id, running_before, after, summary

    match_id, before, after, summary = against_a_daemon_process(tmp_path, caplog, scenario)
    assert before == {match_id}
    assert after == set(), "the restarted server runs no match: the client must not think it does"
    said = [(r.getMessage(), getattr(r, FIELDS, {})) for r in caplog.records]
    assert any(m.startswith("a match ended while this bot was away") and f.get("match_id") == match_id
               for m, f in said), said
    assert "0 matches, and 1 more that ended while the bot was away, with no result sent" in summary, summary


def test_wait_match_and_on_match_end_end_a_match_a_restarted_server_aborted(tmp_path, caplog):
    """Before, ``wait_match`` on a match that a killed daemon left behind waited for ever: the
    restarted server aborted it and sends no `match_ended`, and the client kept its open
    request and ruleset for good. Now the welcome drops what the client kept for it, and once
    its end has not come within ``ended_away_wait_s`` the waiter gets MatchLost, saying why.

    ``on_match_end`` was never called for it either, so a bot that keeps state per match (and
    the stdio bridge's bot, which is told `end`) kept it for good: it now gets the match's
    end with status UNSPECIFIED (its result is unknown) and the reason, once, per seat."""
    from heartsbot.client import MatchLost

    from ..server.test_daemon_process import Remote

    ends: list[tuple[str, int, game_pb2.MatchResult]] = []

    async def scenario(daemon, port):
        client = BotClient(f"127.0.0.1:{port}", BOTS["alice"], RandomStrategy(1), "alice", backoff_s=(0.05, 0.2),
                           ended_away_wait_s=0.2, on_match_end=lambda m, s, r: ends.append((m, s, r)))
        task = await start(client)
        match_id = await Remote(port).create_match(["alice", *HOUSE3], deals=200, seed=3)
        waiter = asyncio.get_running_loop().create_task(client.wait_match(match_id))
        while client.stats.decisions < 5:
            await asyncio.sleep(0.01)
        async with killed_and_restarted(tmp_path, daemon, port, client):
            kept = (dict(client._open), dict(client._rules))
            outcome = await asyncio.wait_for(asyncio.gather(waiter, return_exceptions=True), 30)
            later = await asyncio.gather(client.wait_match(match_id), return_exceptions=True)
            await finish(client, task)
        return match_id, kept, outcome[0], later[0]

    match_id, kept, outcome, later = against_a_daemon_process(tmp_path, caplog, scenario)
    assert [(m, s, r.status) for m, s, r in ends] == [(match_id, 0, game_pb2.MATCH_STATUS_UNSPECIFIED)], ends
    assert "away" in ends[0][2].reason and not ends[0][2].ranks, ends[0][2]
    assert kept == ({}, {}), "the match is over: nothing of it should be kept"
    assert isinstance(outcome, MatchLost) and match_id in str(outcome) and "restarted" in str(outcome), outcome
    assert isinstance(later, MatchLost), later
    said = [(r.getMessage(), getattr(r, FIELDS, {})) for r in caplog.records]
    assert any(m.startswith("no result came for a match that ended while this bot was away")
               and f.get("match_id") == match_id for m, f in said), said


def test_wait_match_ends_when_the_client_stops_first(tmp_path):
    """Before, a ``wait_match`` still waiting when the client stopped (a second Ctrl-C, a
    revoked token) waited for ever, and so did one called after ``run()`` had returned."""
    from heartsbot.client import MatchLost

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            client = client_for(daemon, "alice", RandomStrategy(1))
            task = await start(client)
            match_id = await daemon.create_match(["alice", *HOUSE3], deals=200, seed=4)
            waiter = asyncio.get_running_loop().create_task(client.wait_match(match_id))
            while client.stats.decisions < 3:
                await asyncio.sleep(0.01)
            await finish(client, task)
            outcome = await asyncio.wait_for(asyncio.gather(waiter, return_exceptions=True), 30)
            later = await asyncio.wait_for(asyncio.gather(client.wait_match(match_id), return_exceptions=True), 30)
            return match_id, outcome[0], later[0]

    match_id, outcome, later = run(scenario())
    assert isinstance(outcome, MatchLost) and "stopped" in str(outcome) and match_id in str(outcome), outcome
    assert isinstance(later, MatchLost), later


def test_a_long_run_keeps_a_bounded_amount_per_match_and_counts_every_match():
    """Before, a bot running for weeks (and each house bot of a daemon's ladder, which runs
    as long as the daemon) kept every match's report, result and id for good: memory that
    grew with every match. Now what it keeps per match is bounded, and the exit summary
    still counts every match."""
    from hearts_engine.presets import PRESETS
    from heartsbot.client import SEEN_KEPT
    from heartsbot.convert import ruleset_to_wire
    from heartsbot.proto import bot_pb2

    client = BotClient("127.0.0.1:1", "token", RandomStrategy(0), "alice")
    matches = 2 * SEEN_KEPT
    ruleset = ruleset_to_wire(PRESETS["standard"].build(players=4))
    for n in range(matches):
        result = game_pb2.MatchResult(status=P.MATCH_STATUS_FINISHED, totals=[10, 20, 30, 40], ranks=[1, 2, 3, 4],
                                      winners=[0], deals=2)
        events = [game_pb2.Event(sequence=1, match_started=game_pb2.MatchStarted(ruleset=ruleset)),
                  game_pb2.Event(sequence=2, notice=game_pb2.Notice(seat=0, provenance=P.PROVENANCE_TIMEOUT)),
                  game_pb2.Event(sequence=3, match_ended=game_pb2.MatchEnded(result=result))]
        client._on_update(bot_pb2.MatchUpdate(match_id=f"m-{n}", seat=0, events=events), None, None, set())  # type: ignore[arg-type]
    kept = {"reports": client.stats.reports, "results": client.stats.results, "started": client._started,
            "seen": client._seen, "rules": client._rules, "open": client._open, "fallbacks": client._fallbacks,
            "server defaults": client._server_defaults, "waiters": client._ended}
    assert {name: len(k) for name, k in kept.items() if len(k) > SEEN_KEPT} == {}
    assert client.stats.matches_ended == client.stats.matches_started == matches
    assert f"{matches} finished: mean rank 1.00, {matches} won, 5.00 points per deal" in client.stats.summary()
    assert f"defaults: {matches} timeout" in client.stats.summary()
    assert client.stats.failed


class StuckAtFirst(RandomStrategy):
    """choose_play never returns on its first ``stuck`` calls (an endless loop on some
    positions), until ``release`` is set; every other call answers at once."""

    def __init__(self, stuck: int) -> None:
        super().__init__(0)
        import threading

        self.release = threading.Event()
        self.stuck = stuck
        self.calls = 0
        self.answered = 0

    def choose_play(self, view):
        self.calls += 1
        if self.calls <= self.stuck:
            self.release.wait()
        self.answered += 1
        return super().choose_play(view)


def test_calls_stuck_in_the_strategy_do_not_hold_up_its_next_decisions(tmp_path):
    """Before, the strategy ran on the loop's default executor (min(32, cpus + 4) threads):
    once that many calls were stuck, every later decision waited behind them and was
    answered by default, logged as "did not answer" though it never ran. Now a call that
    finds no idle thread gets a new one, and one that cannot start says so."""
    import os

    stuck = min(32, (os.cpu_count() or 1) + 4) + 2  # more than the default executor's threads

    async def scenario():
        strategy = StuckAtFirst(stuck)
        try:
            async with running_daemon(tmp_path, decision_ms=100, bank_ms=100) as daemon:
                client = client_for(daemon, "alice", strategy)
                task = await start(client)
                await daemon.create_match(["alice", *HOUSE3], deals=200, seed=6)
                while strategy.answered < 5:  # it answers again once it is past its stuck calls
                    await asyncio.sleep(0.05)
                await finish(client, task)
        finally:
            strategy.release.set()
        return strategy, client

    strategy, client = asyncio.run(asyncio.wait_for(scenario(), 120))
    assert strategy.calls > stuck and strategy.answered >= 5
    assert "did not answer within" in client.stats.problems[TIMEOUT].message


def test_heartsbot_play_exits_on_ctrl_c_twice_with_a_strategy_call_that_never_returns(tmp_path):
    """Before, a choose_play that never returned (an endless loop) held a thread of the
    loop's default executor, which asyncio.run and the interpreter wait for at exit: after
    two Ctrl-C `heartsbot play` said it was leaving, then printed no summary and never
    exited, deaf to any further Ctrl-C. Now the strategy's threads are not waited for."""
    bot = tmp_path / "loops.py"
    bot.write_text("import threading\nfrom heartsbot.strategies import RandomStrategy\n\n\n"
                   "class Loops(RandomStrategy):\n    def choose_play(self, view):\n"
                   "        threading.Event().wait()  # for ever\n")

    async def scenario():
        async with running_daemon(tmp_path, decision_ms=200, bank_ms=100) as daemon:
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "heartsbot.cli", "play", "--server", daemon.target, "--token", BOTS["alice"],
                "--name", "alice", "--strategy", str(bot), stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE)
            try:
                await asyncio.wait_for(daemon_sees(daemon, "alice"), 20)
                await daemon.create_match(["alice", *HOUSE3], deals=200, seed=9)
                lines = []
                while not any("did not answer" in line for line in lines):  # a call is stuck now
                    lines.append((await asyncio.wait_for(proc.stderr.readline(), 30)).decode())
                proc.send_signal(signal.SIGINT)
                while not any("draining:" in line for line in lines):
                    lines.append((await asyncio.wait_for(proc.stderr.readline(), 30)).decode())
                proc.send_signal(signal.SIGINT)
                _, err = await asyncio.wait_for(proc.communicate(), 30)
                return proc.returncode, err.decode()
            finally:
                if proc.returncode is None:
                    proc.kill()
                    await proc.wait()

    code, err = run(scenario())
    assert code == 130, err
    assert "stopped after" in err and "left at once" in err, err


async def daemon_sees(daemon, name):
    while daemon.arena.sessions.get(name) is None:
        await asyncio.sleep(0.05)


def test_the_exit_summary_counts_the_defaults_of_matches_that_have_not_ended():
    """Before, the summary counted defaults from ended matches only: a bot that left its
    running match with a second Ctrl-C said "defaults: none" right above "out of time x51"."""
    from heartsbot.proto import bot_pb2

    client = BotClient("127.0.0.1:1", "token", RandomStrategy(0), "alice")
    match_started(client, "m-1", 0)
    request = bot_pb2.DecisionRequest(request_id="r-1", kind=P.DECISION_KIND_PLAY)
    client._fallback("m-1", request, asyncio.TimeoutError(), 0.1)
    notice = game_pb2.Event(sequence=5, notice=game_pb2.Notice(seat=0, provenance=P.PROVENANCE_TIMEOUT))
    client._on_update(bot_pb2.MatchUpdate(match_id="m-1", seat=0, events=[notice]), None, None, set())  # type: ignore[arg-type]
    summary = client.stats.summary()
    assert "0 matches; defaults: 1 out of time, 1 timeout" in summary, summary


def test_heartsbot_play_says_why_when_the_organiser_rotates_its_token(tmp_path):
    """Before, a rotated token drained the bot, which then stopped (exit 0) with only an
    info line that read like a drain it had asked for: nothing said that the token had
    changed and the old one no longer connects."""
    from ..server.test_daemon_process import HEARTSD, start as start_daemon

    db = str(tmp_path / "d.db")
    added = subprocess.run([*HEARTSD, "ladder", "add-bot", "--owner", "zo", "--create", "--db", db, "zed"],
                           capture_output=True, text=True, timeout=60)
    token = added.stdout.strip().splitlines()[-1]
    daemon, port = start_daemon(tmp_path)

    async def scenario():
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "heartsbot.cli", "play", "--server", f"127.0.0.1:{port}", "--token", token,
            "--name", "zed", "--strategy", "random", stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        try:
            while b"connected" not in await asyncio.wait_for(proc.stderr.readline(), 30):
                pass
            rotated = await asyncio.to_thread(subprocess.run, [*HEARTSD, "ladder", "rotate", "--db", db, "zed"],
                                              capture_output=True, text=True, timeout=60)
            _, err = await asyncio.wait_for(proc.communicate(), 60)
            return rotated, proc.returncode, err.decode()
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()

    try:
        rotated, code, err = run(scenario())
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(20)
    assert rotated.returncode == 0, rotated.stderr
    assert "the server ended this bot's session without being asked (token rotated)" in err, err
    assert "start again with the new one" in err, err


def test_the_line_of_an_aborted_match_shows_no_rank_it_does_not_have():
    """A match a server's shutdown aborted ends with no ranks; its line said "rank 0/4"."""
    from heartsbot.client import MatchReport

    aborted = game_pb2.MatchResult(status=P.MATCH_STATUS_ABORTED, totals=[0, 0, 0, 0], reason="server shutdown")
    assert MatchReport("m-1", 0, aborted).line() == "m-1 aborted: 0 points in 0 deals [server shutdown]; defaults: none"
    finished = game_pb2.MatchResult(status=P.MATCH_STATUS_FINISHED, totals=[5, 9, 0, 12], ranks=[2, 3, 1, 4], deals=2)
    assert MatchReport("m-2", 0, finished).line() == "m-2 finished: rank 2/4, 5 points in 2 deals (2.50/deal); defaults: none"


def test_a_refusal_on_a_reconnect_is_logged_as_a_refusal_with_its_reason(caplog):
    """After the first connection, a server that refused the reconnect (FAILED_PRECONDITION:
    another version of the bot plays a tournament match) was logged as "connection lost",
    as if the network had dropped; now it is "refused by the server", with its reason."""
    import grpc

    from heartsbot.proto import bot_pb2, bot_pb2_grpc

    reason = "bot 'alice' is playing match m-1 of a tournament as version '1.0'"

    class WelcomesOnce(bot_pb2_grpc.BotServiceServicer):
        streams = 0

        async def Play(self, request_iterator, context):  # noqa: N802
            WelcomesOnce.streams += 1
            await request_iterator.__anext__()
            if WelcomesOnce.streams > 1:
                await context.abort(grpc.StatusCode.FAILED_PRECONDITION, reason)
            await context.write(bot_pb2.PlayResponse(welcome=bot_pb2.Welcome(session_id="s-1", bot_name="alice")))
            await context.abort(grpc.StatusCode.UNAVAILABLE, "server shutting down")

    async def scenario():
        server = grpc.aio.server()
        bot_pb2_grpc.add_BotServiceServicer_to_server(WelcomesOnce(), server)
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        try:
            client = BotClient(f"127.0.0.1:{port}", "t" * 12, RandomStrategy(0), "alice", backoff_s=(0.01, 0.05))
            task = asyncio.get_running_loop().create_task(client.run())
            while WelcomesOnce.streams < 3:
                await asyncio.sleep(0.01)
            await finish(client, task)
        finally:
            await server.stop(None)

    with caplog.at_level(logging.INFO, logger="heartsbot"):
        run(scenario())
    said = [(r.getMessage(), getattr(r, FIELDS, {})) for r in caplog.records]
    refused = [f for m, f in said if m == "refused by the server"]
    assert refused and refused[0].get("code") == "FAILED_PRECONDITION" and reason in refused[0].get("reason", ""), said
    assert [m for m, f in said if m == "connection lost"] == ["connection lost"], "only the drop after the welcome"


def test_what_the_commands_say_when_the_server_sends_the_bot_away_follows_its_cause():
    """``sent_away_message`` read the server's words ("rotated", "replaced"); a reason a
    server words otherwise (or a bot's own `drain` reason, which the server quotes) then said
    nothing of what to do. It follows ``Draining.cause`` now."""
    from heartsbot.client import sent_away_message

    assert "start again with the new one" in sent_away_message("new credentials", bot_pb2.DRAIN_CAUSE_TOKEN_ROTATED)
    assert "another instance of this bot" in sent_away_message("superseded", bot_pb2.DRAIN_CAUSE_REPLACED)
    plain = sent_away_message("token rotated", bot_pb2.DRAIN_CAUSE_UNSPECIFIED)
    assert plain == "the server ended this bot's session without being asked (token rotated)", plain


def test_a_long_outage_is_said_once_then_now_and_then_not_at_every_retry(tmp_path, caplog, monkeypatch):
    """Before: while the server was down, every failed reconnect logged "connection lost"
    again, one warning per back-off (every 10 s at most): a bot left running through a
    night's outage filled its log with thousands of the same line. Now the loss is said
    once; then, while it lasts, "still reconnecting" at most every RETRY_SAID_S with how
    long and how many attempts; and the reconnect says how long the bot was away."""
    from heartsbot import client as client_module

    monkeypatch.setattr(client_module, "RETRY_SAID_S", 1.0, raising=False)

    async def scenario(daemon, port):
        client = BotClient(f"127.0.0.1:{port}", BOTS["alice"], RandomStrategy(1), "alice", backoff_s=(0.02, 0.05))
        task = await start(client)
        async with killed_and_restarted(tmp_path, daemon, port, client, down_s=2.5):  # dozens of attempts
            attempts = client.stats.reconnects
        await finish(client, task)
        return attempts

    attempts = against_a_daemon_process(tmp_path, caplog, scenario)
    said = [r.getMessage() for r in caplog.records if r.name.startswith("heartsbot")]
    assert attempts >= 20, attempts
    assert said.count("connection lost") == 1, said
    still = [m for m in said if m.startswith("still reconnecting")]
    assert 1 <= len(still) <= 4, said
    back = [r for r in caplog.records if r.getMessage() == "connected"]
    assert len(back) == 2 and getattr(back[-1], FIELDS, {}).get("away_s", 0) >= 2, back


def test_a_match_an_earlier_run_played_is_not_counted_as_this_runs(tmp_path):
    """A bot's earlier process played part of a match and died; the match ended while no
    process of the bot was there, and the daemon kept its end for the bot's return (missed.py).
    The next process gets that end after its hello. Before (a newcomer's pass), it counted the
    match as one it played: "1 matches" with no decision made in it, its result in the mean
    rank, the server's defaults for the away seat counted as this run's, and the stdio bridge
    told its new child `end` of a match that child never saw, so a
    `--matches 1` bot that leaves on its first `end` left before playing. Now it is said apart,
    counted in no result of this run, and no strategy or child is told of it."""
    from heartsbot.client import MatchLost

    from ..server.harness import ended_while_away

    ends: list[str] = []

    async def scenario():
        async with running_daemon(tmp_path, decision_ms=100, grace_ms=100, auto_after=1) as daemon:
            old = await ended_while_away(daemon)
            client = client_for(daemon, "alice", RandomStrategy(1), on_match_end=lambda m, s, r: ends.append(m))
            task = await start(client)
            new = await daemon.create_match(["alice", *HOUSE3], deals=1, seed=6)
            await client.wait_match(new, timeout=60)  # the old match's end came first, on the same stream
            earlier = await asyncio.gather(client.wait_match(old, timeout=5), return_exceptions=True)
            summary = client.stats.summary()
            stats = client.stats
            await finish(client, task)
        return old, new, stats, summary, earlier[0]

    old, new, stats, summary, earlier = run(scenario())
    assert isinstance(earlier, MatchLost) and "earlier run" in str(earlier), earlier
    assert ends == [new], "only the match this process played is this process's to end"
    assert stats.matches_ended == 1 and stats.finished == 1 and set(stats.results) == {new}, stats
    assert stats.earlier_ended == 1, stats
    assert not stats.server_defaults and not stats.failed, "the defaults played while no run was there are not this run's"
    assert "1 matches, and 1 an earlier run of this bot played, whose end came in this run" in summary, summary


def test_heartsbot_play_sends_a_token_without_its_line_end_and_refuses_one_no_header_carries(tmp_path):
    """An organiser's pass: a token read from a file written on Windows keeps its "\\r", and
    `heartsbot play --token "$(cat token.txt)"` could never send it: every connect failed
    "INTERNAL: Invalid metadata", logged as the server refusing, and the bot retried for
    ever. The daemon strips what it reads, so the client now sends the token stripped; one
    holding a character no gRPC header carries (beyond ASCII) is a usage error, exit 2."""
    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "heartsbot.cli", "play", "--server", daemon.target,
                "--token", BOTS["alice"] + "\r\n", "--name", "alice", "--strategy", "random",
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
            for _ in range(400):
                if daemon.arena.sessions.get("alice") is not None or proc.returncode is not None:
                    break
                await asyncio.sleep(0.05)
            connected = daemon.arena.sessions.get("alice") is not None
            proc.send_signal(signal.SIGINT)
            _, err = await asyncio.wait_for(proc.communicate(), 20)
            return connected, proc.returncode, err.decode()

    connected, code, err = run(scenario())
    assert connected and code == 0, err[-2000:]
    beyond = subprocess.run([sys.executable, "-m", "heartsbot.cli", "play", "--server", "127.0.0.1:1",
                             "--token", "jeton-épelé-1234", "--name", "alice", "--strategy", "random"],
                            capture_output=True, text=True,
                            timeout=60)
    assert beyond.returncode == 2, beyond.stderr
    assert "--token" in beyond.stderr and "ASCII" in beyond.stderr, beyond.stderr
