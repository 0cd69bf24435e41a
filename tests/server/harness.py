"""A real daemon on a loopback port and small protocol-level bots for tests.

The bots speak only the wire protocol (hearts.v1), so these tests exercise what a
client written from proto/ alone would see.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import random
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

from heartsbot.proto import admin_pb2, admin_pb2_grpc, bot_pb2, bot_pb2_grpc, game_pb2, spectator_pb2_grpc
from heartsbot.client import first_legal_answer
from heartsbot.tls import Tls, aio_channel
from heartsd.arena import Arena
from heartsd.config import Settings
from heartsd.logs import configure
from heartsd.server import embedded

ADMIN = "admin-token-for-tests"
BOTS = {name: f"token-{name}-0123456789" for name in ("alice", "bob", "carol", "dave", "erin", "frank", "gina")}


@dataclass
class Daemon:
    arena: Arena
    port: int
    settings: Settings
    client_tls: Tls | None = None  # how the test's own channels connect (a daemon serving TLS)

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    def channel(self) -> grpc.aio.Channel:
        return aio_channel(self.target, self.client_tls)

    async def create_match(self, seats: list[str], ruleset: str = "standard", deals: int = 1, **kw: Any) -> str:
        """Seats: bot names, or "house:<strategy>"."""
        request = admin_pb2.CreateMatchRequest(ruleset=ruleset, players=kw.pop("players", len(seats)))
        for s in seats:
            if s.startswith("house:"):
                request.seats.add(house=s.removeprefix("house:"))
            else:
                request.seats.add(bot=s)
        request.format.fixed_deals = deals
        request.format.duplicate = kw.pop("duplicate", False)
        request.rated = kw.pop("rated", False)
        if "seed" in kw:
            request.seed = kw.pop("seed")
        for key, value in kw.pop("clock", {}).items():
            setattr(request.clock, key, value)
        for key, value in kw.pop("options", {}).items():
            setattr(request.options, key, value)
        assert not kw, kw
        async with self.channel() as channel:
            stub = admin_pb2_grpc.AdminServiceStub(channel)
            response = await stub.CreateMatch(request, metadata=auth(ADMIN))
        return response.match_id

    async def wait_finished(self, match_id: str, timeout: float = 60) -> None:
        runner = self.arena.runners.get(match_id)
        if runner is not None:
            await asyncio.wait_for(runner.finished.wait(), timeout)

    def stored(self, match_id: str):  # type: ignore[no-untyped-def]
        return self.arena.store.get(match_id)


def auth(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


@contextlib.asynccontextmanager
async def running_daemon(tmp_path: Any, **overrides: Any) -> AsyncIterator[Daemon]:
    log_level = overrides.pop("log_level", "warning")
    client_tls = overrides.pop("client_tls", None)
    configure("console", log_level, cache=False)
    clock = dict(decision_ms=2000, bank_ms=5000, max_illegal=3, auto_after=3, grace_ms=3000)
    clock.update({k: overrides.pop(k) for k in list(overrides) if k in clock})
    db = overrides.pop("db", None) or str(tmp_path / "heartsd.db")
    settings = Settings.load(
        env={},
        flags=dict(port=0, db_path=db, admin_token=ADMIN, bot_tokens=overrides.pop("bot_tokens", BOTS), log_level=log_level, **clock, **overrides),
    )
    async with embedded(settings) as (arena, port):
        yield Daemon(arena, port, settings, client_tls)


Policy = Callable[[bot_pb2.DecisionRequest, "Bot"], Any]


def first_legal(request: bot_pb2.DecisionRequest, bot: "Bot") -> bot_pb2.Answer:
    return first_legal_answer(request)


def random_legal(seed: int) -> Policy:
    rng = random.Random(seed)

    def policy(request: bot_pb2.DecisionRequest, bot: "Bot") -> bot_pb2.Answer:
        answer = bot_pb2.Answer(request_id=request.request_id)
        if request.kind == game_pb2.DECISION_KIND_PASS:
            answer.pass_cards.cards.extend(rng.sample(list(request.legal_cards), request.pass_count))
        elif request.kind == game_pb2.DECISION_KIND_PLAY:
            answer.play.CopyFrom(rng.choice(list(request.legal_cards)))
        else:
            answer.moon = rng.choice(list(request.moon_options))
        return answer

    return policy


async def ladder_bots(daemon: Daemon, ladder: Any, names: list[str]) -> list["Bot"]:
    """Register ``names`` as ladder bots (each its own owner) and connect them, each playing
    random legal cards (seeded by its place in ``names``)."""
    tokens = {n: ladder.add_bot(n, f"owner-{n}") for n in names}
    return [await Bot(daemon, n, random_legal(i), token=tokens[n]).start() for i, n in enumerate(names)]


def play_rated_match(tmp_path: Any, names: list[str], deals: int) -> str:
    """A daemon on ``tmp_path``/heartsd.db plays one rated match of ``names`` (ladder bots,
    see :func:`ladder_bots`) to its end and stops; the match's id, for the store to be read."""

    async def scenario() -> str:
        async with running_daemon(tmp_path) as daemon:
            bots = await ladder_bots(daemon, daemon.arena.store.ladder, names)
            match_id = await daemon.create_match(names, deals=deals, rated=True)
            await bots[0].wait_ended(match_id)
            for b in bots:
                await b.close()
            return match_id

    return run(scenario())


@dataclass
class Bot:
    """A protocol-level bot: hello, then answer every request with ``policy``.

    ``policy`` returns an Answer, a list of Answers (sent in order), ``None`` (no
    answer), or a coroutine producing one of those. Everything received is kept.
    """

    daemon: Daemon
    name: str
    policy: Policy = first_legal
    rulesets: tuple[str, ...] = ()
    max_matches: int = 8
    token: str | None = None
    version: str = "test"
    received: list[bot_pb2.PlayResponse] = field(default_factory=list)
    rejections: list[bot_pb2.AnswerRejected] = field(default_factory=list)
    events: dict[tuple[str, int], list[game_pb2.Event]] = field(default_factory=dict)
    welcome: bot_pb2.Welcome | None = None
    ended: dict[str, game_pb2.MatchResult] = field(default_factory=dict)
    _queue: asyncio.Queue[bot_pb2.PlayRequest | None] = field(default_factory=asyncio.Queue)
    _task: asyncio.Task[None] | None = None
    _call: Any = None
    _channel: Any = None
    connected: asyncio.Event = field(default_factory=asyncio.Event)

    async def start(self) -> "Bot":
        self._queue = asyncio.Queue()
        self.connected = asyncio.Event()
        self._task = asyncio.get_running_loop().create_task(self._run())
        await asyncio.wait_for(self.connected.wait(), 10)
        return self

    def send(self, message: bot_pb2.PlayRequest) -> None:
        self._queue.put_nowait(message)

    async def _write(self, call: Any) -> None:
        """Send hello, then whatever is queued. Written with ``call.write`` rather than a
        request iterator: grpc.aio cannot close an async generator that is suspended in
        ``await`` when the server ends the call, and then reports INTERNAL instead of the
        server's status."""
        try:
            await call.write(bot_pb2.PlayRequest(hello=bot_pb2.Hello(
                name=self.name, version=self.version, rulesets=list(self.rulesets), max_concurrent_matches=self.max_matches)))
            while True:
                message = await self._queue.get()
                if message is None:
                    await call.done_writing()
                    return
                await call.write(message)
        except (grpc.aio.AioRpcError, asyncio.InvalidStateError, asyncio.CancelledError):
            pass  # the call ended: its status is what the test looks at

    async def _run(self) -> None:
        self._channel = self.daemon.channel()
        stub = bot_pb2_grpc.BotServiceStub(self._channel)
        self._call = stub.Play(metadata=auth(self.token or BOTS[self.name]))
        writer = asyncio.get_running_loop().create_task(self._write(self._call))
        try:
            async for message in self._call:
                self.received.append(message)
                kind = message.WhichOneof("kind")
                if kind == "welcome":
                    self.welcome = message.welcome
                    self.connected.set()
                elif kind == "rejected":
                    self.rejections.append(message.rejected)
                elif kind == "update":
                    await self._on_update(message.update)
        except (grpc.aio.AioRpcError, asyncio.CancelledError):
            pass
        finally:
            writer.cancel()
            self.connected.set()

    async def _on_update(self, update: bot_pb2.MatchUpdate) -> None:
        key = (update.match_id, update.seat)
        self.events.setdefault(key, []).extend(update.events)
        for e in update.events:
            if e.HasField("match_ended"):
                self.ended[update.match_id] = e.match_ended.result
        if update.HasField("request"):
            result = self.policy(update.request, self)
            if asyncio.iscoroutine(result):
                result = await result
            answers = result if isinstance(result, list) else [result] if result is not None else []
            for answer in answers:
                answer.match_id = answer.match_id or update.match_id
                self.send(bot_pb2.PlayRequest(answer=answer))

    async def drop(self) -> None:
        """Cut the connection abruptly (like a crash)."""
        if self._call is not None:
            self._call.cancel()
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)
        if self._channel is not None:
            await self._channel.close()

    async def close(self) -> None:
        self._queue.put_nowait(None)
        await self.drop()

    async def status(self) -> grpc.StatusCode | None:
        """The stream's final status, once it has ended."""
        if self._call is None or not self._call.done():
            return None
        return await self._call.code()  # type: ignore[no-any-return]

    async def final_status(self, timeout: float = 10) -> grpc.StatusCode:
        """The stream's final status, waiting for it to end: a token revoked in the store
        is refused once the token registry has read the change (its refresh is about a
        second), so a test waits for the outcome instead of sleeping a guess."""
        while self._call is None:
            await asyncio.sleep(0.01)
        return await asyncio.wait_for(self._call.code(), timeout)  # type: ignore[no-any-return]

    async def wait_ended(self, match_id: str, timeout: float = 60) -> game_pb2.MatchResult:
        async def wait() -> game_pb2.MatchResult:
            while match_id not in self.ended:
                await asyncio.sleep(0.01)
            return self.ended[match_id]

        return await asyncio.wait_for(wait(), timeout)


class RawBot:
    """A bot stream driven message by message: it may never read what the server sends."""

    def __init__(self, daemon, name: str = "alice", max_matches: int = 1_000_000) -> None:
        self.daemon, self.name, self.max_matches = daemon, name, max_matches

    async def __aenter__(self) -> RawBot:
        self.channel = self.daemon.channel()
        self.call = bot_pb2_grpc.BotServiceStub(self.channel).Play(metadata=auth(BOTS[self.name]))
        await self.call.write(bot_pb2.PlayRequest(hello=bot_pb2.Hello(
            name=self.name, version="t", max_concurrent_matches=self.max_matches)))
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.call.cancel()
        await self.channel.close()

    async def send(self, message: bot_pb2.PlayRequest) -> bool:
        """False once the stream is over."""
        try:
            await self.call.write(message)
            return True
        except (grpc.aio.AioRpcError, asyncio.InvalidStateError):
            return False

    async def read_all(self, timeout: float = 20) -> tuple[list[bot_pb2.PlayResponse], grpc.StatusCode | None, str]:
        """Everything the server sent, then the final status (None: the stream did not end)."""
        received = []
        try:
            async with asyncio.timeout(timeout):
                async for message in self.call:
                    received.append(message)
        except grpc.aio.AioRpcError as exc:
            return received, exc.code(), exc.details() or ""
        except TimeoutError:
            return received, None, f"still open after {timeout} s"
        return received, await self.call.code(), await self.call.details() or ""


async def long_match_held(daemon: Daemon, bot: str = "alice", at_deal: int = 20,
                          deals: int = 100) -> tuple[str, "Bot"]:
    """A match of ``bot`` and three house seats, ``deals`` long, waiting on ``bot``'s answer
    once ``at_deal`` deals are over (its clock is the daemon's: give it a long one): a
    running match with a long history, for what grows with one. (match id, the bot)."""
    held = asyncio.Event()
    match_id: list[str] = []

    def policy(request: bot_pb2.DecisionRequest, holder: Bot) -> bot_pb2.Answer | None:
        runner = daemon.arena.runners.get(match_id[0]) if match_id else None
        if runner is not None and len(runner.match.results) >= at_deal:
            held.set()
            return None
        return first_legal(request, holder)

    player = await Bot(daemon, bot, policy).start()
    match_id.append(await daemon.create_match([bot, "house:random", "house:random", "house:random"], deals=deals))
    await asyncio.wait_for(held.wait(), 60)
    return match_id[0], player



async def ended_while_away(daemon: Daemon, bot: str = "alice", seed: int = 5) -> str:
    """A one-deal match of ``bot`` and three house seats in which ``bot`` answered twice and
    then dropped (its process died), played out by defaults until it ended: the daemon keeps
    its end for the bot's return (missed.py). Give the daemon a short clock and grace. Its id."""
    earlier = await Bot(daemon, bot, first_legal).start()
    match_id = await daemon.create_match([bot, "house:random", "house:random", "house:random"], deals=1, seed=seed)
    runner = daemon.arena.runners[match_id]
    while sum(d.seat == 0 for d in runner.decisions) < 2:
        await asyncio.sleep(0.005)
    await earlier.drop()
    # Until the daemon has seen the stream go: an end sent to the stream it still thinks is
    # there (a loaded machine, a quick match) is not kept for the bot's return.
    while daemon.arena.sessions.get(bot) is not None:
        await asyncio.sleep(0.005)
    await daemon.wait_finished(match_id)
    return match_id

async def session_of(daemon, bot: str):
    for _ in range(500):
        session = daemon.arena.sessions.get(bot)
        if session is not None:
            return session
        await asyncio.sleep(0.01)
    raise AssertionError(f"{bot} never connected")


def run(coro: Any) -> Any:
    return asyncio.run(coro)


_EXEC_WITH_LIMIT = ("import os, resource, sys; n = int(sys.argv[1]); "
                    "resource.setrlimit(resource.RLIMIT_NOFILE, (n, n)); os.execv(sys.argv[2], sys.argv[2:])")


def with_descriptor_limit(args: list[str], limit: int) -> list[str]:
    """``args`` run with at most ``limit`` file descriptors (soft and hard), set by a small
    Python that then execs them. Not by Popen's ``preexec_fn``: that forks the test process,
    grpc's fork handlers restart its poller in the child, and the child can die before
    exec ("epoll_wait error: Bad file descriptor", grpc/grpc#43055; seen once in CI)."""
    import sys

    return [sys.executable, "-c", _EXEC_WITH_LIMIT, str(limit), *args]


__all__ = ["ADMIN", "BOTS", "Bot", "Daemon", "auth", "first_legal", "long_match_held", "random_legal", "run",
           "running_daemon",
           "spectator_pb2_grpc", "dataclasses", "serve_once"]


def serve_once(tmp_path: Path, env: dict[str, str]) -> str:
    """Start `heartsd serve`, stop it once it listens; what it wrote to stderr (gRPC's core
    logs there)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "heartsd.cli", "serve", "--port", "0", "--db", str(tmp_path / "d.db"),
         "--admin-token", ADMIN, "--log-level", "info"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "listening on" in line, line
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=20)
        assert proc.returncode == 0, err
        return err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
