"""The bot client: connection, token, concurrent matches, reconnect and resume, the clock.

A bot author writes a :class:`~heartsbot.strategies.Strategy` (``choose_pass`` and
``choose_play`` on a :class:`hearts_engine.SeatView`); :class:`BotClient` does the rest:

* one stream with the token in the metadata, ``hello``, every match on it at once;
* each request becomes a view; the strategy runs in a worker thread and is told its
  time (``strategy.time_limit_s``); if it overruns or raises, the client answers a safe
  legal default itself before the server's deadline and logs why;
* a rejected answer that may be retried (the server and the strategy disagree about
  the rules, or a strategy bug) is answered again at once with a legal choice not yet
  tried, so one bad answer never turns into a timeout;
* a dropped connection is re-opened with exponential backoff; the server re-sends
  what was missed and the pending request;
* ``drain()`` (the first Ctrl-C in the CLI) leaves cleanly: the server seats the bot in
  no new match, the running ones are played to their end, then ``run()`` returns;
  ``drain_after=N`` drains by itself once N matches have started;
* ``stop()`` (a second Ctrl-C) ends the stream at once, abandoning running matches.
"""

from __future__ import annotations

import asyncio
import contextvars
import random
import time
import traceback
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc

from hearts_engine import MoonOption, Ruleset, SeatView

from . import convert
from .logs import get_logger
from .proto import bot_pb2, bot_pb2_grpc, game_pb2
from .strategies import Strategy
from .thinking import STUCK_THREADS, Job, Thinkers
from .tls import Tls, aio_channel
from .wakeups import drain_grpc_wakeups

log = get_logger("heartsbot")
P = game_pb2
RETRY_SAID_S = 60.0  # while the connection stays lost, "still reconnecting" at most this often
SEEN_KEPT = 4096  # (match, seat)s whose newest event sequence the client remembers
# Finished matches whose report and result the client keeps (the newest), for wait_match
# and on_match_end; the exit summary counts every match from running totals.
REPORTS_KEPT = 1000
FATAL = (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.INVALID_ARGUMENT)
# A call that ends with one of these may not have reached the server at all; any other
# status is the server's own answer (a refusal with its reason, to be tried again).
UNREACHED = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)


@dataclass(frozen=True)
class DecisionContext:
    """What the strategy is deciding right now: the match, the raw request, and the time
    it may think. Read it with ``current_decision.get()`` inside ``choose_*`` (it is per
    decision, unlike ``strategy.time_limit_s``, which concurrent matches share)."""

    match_id: str
    request: bot_pb2.DecisionRequest | None
    time_limit_s: float


current_decision: contextvars.ContextVar[DecisionContext] = contextvars.ContextVar(
    "heartsbot_decision", default=DecisionContext("-", None, 1.0))


class FatalError(Exception):
    """The server refused the bot for good (bad token, wrong name, bad hello)."""


class MatchLost(RuntimeError):
    """:meth:`BotClient.wait_match`: the match's end will not reach this client (the match
    ended while the bot was away and its result never followed, as after a server that
    restarted and aborted it; or the client stopped first). ``str()`` says which."""


class UnreachableError(ConnectionError):
    """The server could not be reached at all (a wrong address or port, nothing listening):
    raised after ``connect_attempts`` tries that did not reach it (UNREACHED) when the bot has
    never connected. A server that answers with another status was reached: its refusal is
    logged with its reason and the bot tries again."""


# What went wrong with the strategy's own code; the client answered a safe default for each.
EXCEPTION, MISSING, ILLEGAL, TIMEOUT = "exception", "missing method", "illegal answer", "out of time"
# The server's defaults for our seat, by provenance (what Notice events report).
SERVER_DEFAULTS = {P.PROVENANCE_TIMEOUT: "timeout", P.PROVENANCE_ILLEGAL: "illegal",
                   P.PROVENANCE_DISCONNECT: "disconnect", P.PROVENANCE_AUTO: "auto"}


@dataclass
class Problem:
    """One kind of strategy failure: how often, the first message and traceback."""

    kind: str
    count: int = 0
    message: str = ""
    traceback: str = ""


@dataclass
class MatchReport:
    """How one match went for this bot: its result, seat, and every default by kind."""

    match_id: str
    seat: int
    result: game_pb2.MatchResult
    fallbacks: Counter[str] = field(default_factory=Counter)  # answered by the client, by kind
    server_defaults: Counter[str] = field(default_factory=Counter)  # played by the server, by kind

    @property
    def points(self) -> int:
        return self.result.totals[self.seat] if self.seat < len(self.result.totals) else 0

    def line(self) -> str:
        """``m-1 finished: rank 2/4, 54 points in 16 deals (3.38/deal); defaults: 2 timeout``."""
        r = self.result
        status = P.MatchStatus.Name(r.status).removeprefix("MATCH_STATUS_").lower()
        # A match ended before its end (aborted at a server's shutdown) has no ranks: before,
        # its line said "rank 0/4".
        rank = f"rank {r.ranks[self.seat]}/{len(r.totals)}, " if self.seat < len(r.ranks) and r.ranks[self.seat] else ""
        text = f"{self.match_id} {status}: {rank}{self.points} points in {r.deals} deals"
        if r.deals:
            text += f" ({self.points / r.deals:.2f}/deal)"
        if r.status != P.MATCH_STATUS_FINISHED:
            text += f" [{r.reason}]"
        kinds = [f"{n} {k}" for k, n in sorted((self.server_defaults + self.fallbacks).items())]
        return text + "; defaults: " + (", ".join(kinds) if kinds else "none")


@dataclass
class ClientStats:
    decisions: int = 0
    fallbacks: int = 0  # defaults the client answered itself (overrun or exception)
    rejections: int = 0
    reconnects: int = 0
    matches_started: int = 0
    matches_ended: int = 0
    results: dict[str, game_pb2.MatchResult] = field(default_factory=dict)
    # The strategy's own failures by kind (EXCEPTION, MISSING, ILLEGAL, TIMEOUT), each
    # answered with a safe default; and its overruns: decisions that took longer than the
    # server's decision time (answered in time only by drawing on the match's time bank).
    problems: dict[str, Problem] = field(default_factory=dict)
    overruns: int = 0
    slowest_s: float = 0.0
    reports: dict[str, MatchReport] = field(default_factory=dict)
    # Matches that ended while the bot was away and whose end never reached it (the server
    # restarted and aborted them): no result to count, but not running either.
    ended_away: set[str] = field(default_factory=set)
    # Matches an earlier process of the bot played, whose end the server kept for the bot's
    # return and sent to this one: not this run's to count or to tell its strategy of.
    earlier_ended: int = 0
    # Every default, counted as it is played (in running and abandoned matches too: before,
    # only ended matches' were counted, and a bot left with Ctrl-C twice said "defaults:
    # none" above its "out of time x51"): the client's and the server's, by kind.
    defaults: Counter[str] = field(default_factory=Counter)
    server_defaults: Counter[str] = field(default_factory=Counter)
    # Over every match that ended, however many: ``results`` and ``reports`` keep only the
    # REPORTS_KEPT newest (before, a bot or a daemon's house bot running for weeks kept
    # every match's report and result, growing without bound).
    finished: int = 0
    finished_deals: int = 0
    finished_points: int = 0
    rank_sum: int = 0  # of the finished matches that have a rank for the seat
    ranked: int = 0
    wins: int = 0

    def record(self, report: MatchReport) -> None:
        """Count a match that ended, and keep its report and result among the newest."""
        for kept in (self.reports, self.results):
            kept.pop(report.match_id, None)
            while len(kept) >= REPORTS_KEPT:
                del kept[next(iter(kept))]
        self.reports[report.match_id] = report
        self.results[report.match_id] = report.result
        r = report.result
        if r.status == P.MATCH_STATUS_FINISHED:
            self.finished += 1
            self.finished_deals += r.deals
            self.finished_points += report.points
            if report.seat < len(r.ranks):
                self.rank_sum += r.ranks[report.seat]
                self.ranked += 1
            self.wins += report.seat in r.winners

    def problem(self, kind: str, message: str, trace: str = "") -> None:
        entry = self.problems.setdefault(kind, Problem(kind))
        entry.count += 1
        if not entry.message:
            entry.message, entry.traceback = message, trace

    def summary(self) -> str:
        """What ``heartsbot play`` says at exit: matches, mean rank, points per deal, defaults."""
        text = f"stopped after {self.decisions} decisions, {self.matches_ended} matches"
        if self.ended_away:
            text += f", and {len(self.ended_away)} more that ended while the bot was away, with no result sent"
        if self.earlier_ended:
            text += f", and {self.earlier_ended} an earlier run of this bot played, whose end came in this run"
        if results := self.how_they_went():
            text += f" ({results})"
        text += "; defaults: " + (", ".join(f"{n} {k}" for k, n in sorted(self.defaults.items())) or "none")
        if self.problems:
            text += "\n" + "\n".join(f"  {p.kind} x{p.count}: {p.message}" for p in self.problems.values())
        return text

    def how_they_went(self) -> str:
        """How the finished matches went ("2 finished: mean rank 1.50, 1 won, 4.12 points per
        deal"), or "" when none finished; ``heartsbot play`` and ``heartsbot stdio`` end with it."""
        if not self.finished:
            return ""
        return (f"{self.finished} finished: mean rank {self.rank_sum / max(1, self.ranked):.2f}, "
                f"{self.wins} won, {self.finished_points / max(1, self.finished_deals):.2f} points per deal")

    @property
    def failed(self) -> bool:
        """The strategy's own code failed (raised, lacked a method, answered illegally or
        ran out of time) or the server had to play a timeout or illegal default for it."""
        return bool(self.problems) or self.server_defaults["timeout"] + self.server_defaults["illegal"] > 0


class BotClient:
    """Plays ``strategy`` on ``target`` as bot ``name`` until :meth:`stop`.

    ``drain_wakeups``: one event-loop pass per batch of gRPC completions (wakeups.py), which
    assumes gRPC runs on this one event loop in the process, as ``heartsbot play`` runs it;
    pass False in an application that uses grpc.aio on loops in several threads."""

    def __init__(
        self,
        target: str,
        token: str,
        strategy: Strategy,
        name: str,
        version: str = "heartsbot",
        rulesets: Sequence[str] = (),
        max_matches: int = 1,
        safety_ms: int = 60,
        backoff_s: tuple[float, float] = (0.2, 10.0),
        on_match_end: Callable[[str, int, game_pb2.MatchResult], None] | None = None,
        connect_attempts: int = 5,
        drain_after: int = 0,
        tls: Tls | None = None,
        drain_wakeups: bool = True,
        think: Callable[[Strategy, SeatView, float], Awaitable[Any]] | None = None,
        ended_away_wait_s: float = 30.0,
    ) -> None:
        self.target = target
        # Where the strategy's choices are made: None, a worker thread of this process; a
        # daemon hosting house bots passes its worker processes (heartsd.thinking) for a
        # strategy that searches, which in a thread would hold the daemon's interpreter lock.
        # Called with (strategy, view, the request's own think time in seconds).
        self.think = think
        self._thinkers = Thinkers(max_matches + STUCK_THREADS)  # when think is None (thinking.py)
        self.drain_wakeups = drain_wakeups
        self.token = token
        self.strategy = strategy
        self.name = name
        self.version = version
        self.rulesets = list(rulesets)
        self.max_matches = max_matches
        self.safety_s = safety_ms / 1000
        self.backoff_s = backoff_s
        # (match id, seat, result), on the event loop; also for a match that ended while the
        # bot was away and whose result never came (status UNSPECIFIED: _give_up)
        self.on_match_end = on_match_end
        # Tries before giving up on a server never reached (0: forever); once connected, a
        # lost connection is retried until stop().
        self.connect_attempts = connect_attempts
        self.ever_connected = False
        self._stream_welcomed = False  # the current (or last) stream got its welcome
        # Since when the connection is lost (None: connected, or never), when that was last
        # said, and the reconnects tried since: _say_lost.
        self._away_since: float | None = None
        self._away_said = 0.0
        self._away_attempts = 0
        self._fallbacks: dict[str, Counter[str]] = {}  # per match, until it ends
        self._server_defaults: dict[str, Counter[str]] = {}
        self.drain_after = drain_after  # drain once this many matches have started (0: never by itself)
        self.tls = tls  # None: a plain channel
        self.stats = ClientStats()
        self.active: set[str] = set()  # matches this bot is seated in, as far as it has heard
        self.draining = False  # drain() was called: no new matches, leave when the running ones end
        self.drained = False  # the server ended the stream after the last match: run() returns
        # Why the server drained the bot when it had not asked (its token rotated, a newer
        # instance took its place); "" when the bot drained itself or has not drained.
        self.sent_away = ""
        self.sent_away_cause = 0  # ... and its Draining.cause (bot_pb2.DrainCause)
        self._started: dict[str, None] = {}  # (ordered: the oldest go first, SEEN_KEPT kept)
        self._drain_reason = ""
        self._lock: asyncio.Lock | None = None
        self.connected = asyncio.Event()
        self._stop = asyncio.Event()
        self._call: grpc.aio.StreamStreamCall | None = None
        self._rules: dict[str, Ruleset] = {}
        # The newest event sequence seen per (match, seat), the SEEN_KEPT newest matches: after
        # a reconnect the server replays from the last request answered, so some come twice.
        self._seen: dict[tuple[str, int], int] = {}
        self._ended: dict[str, asyncio.Event] = {}
        # The open request of each seat (match id, seat) and the answers already sent to it.
        self._open: dict[tuple[str, int], tuple[bot_pb2.DecisionRequest, list[bot_pb2.Answer]]] = {}
        # A match that ended while the bot was away: how long after the welcome its end may
        # still come (the server sends what the seat missed right after the welcome); then it
        # is given up, and why is kept (the SEEN_KEPT newest) for wait_match.
        self.ended_away_wait_s = ended_away_wait_s
        self._lost: dict[str, str] = {}
        self._run_over = False  # run() has returned: no match's end comes any more

    async def run(self) -> None:
        """Connect, play, and reconnect after drops until :meth:`stop`; FatalError if refused."""
        try:
            await self._run()
        finally:
            self._run_over = True
            for match_id in list(self._ended):  # their ends will not come: wait_match says so
                self._ended.pop(match_id).set()

    async def _run(self) -> None:
        delay = self.backoff_s[0]
        attempts = 0  # that did not reach the server (UNREACHED), before the first connection
        while not self._stop.is_set():
            try:
                await self._session()
                if self.drained:
                    break
                delay = self.backoff_s[0]
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if task is not None and task.cancelling():
                    raise
                if self._stop.is_set():
                    break
                log.warning("connection cancelled", bot=self.name, retry_in=round(delay, 2))  # the call, not us
            except grpc.aio.AioRpcError as exc:
                if exc.code() in FATAL:
                    raise FatalError(f"{exc.code().name}: {exc.details()}") from None
                if not self._stream_welcomed and exc.code() not in UNREACHED:
                    # Reached, and refused for now (another version of this bot plays a tournament
                    # match, the server is full): its reason, and again after the back-off. Also
                    # on a reconnect: before, a refusal then was logged as "connection lost".
                    log.warning("refused by the server", bot=self.name, code=exc.code().name,
                                reason=(exc.details() or "")[:300], retry_in=round(delay, 2))
                elif not self.ever_connected:
                    attempts += 1
                    if self.connect_attempts and attempts >= self.connect_attempts:
                        raise UnreachableError(
                            f"could not connect to {self.target} after {attempts} attempts "
                            f"({exc.code().name}: {exc.details()}): is the server running there, "
                            "and are the host and port right?") from None
                    log.warning("could not connect", bot=self.name, target=self.target, code=exc.code().name,
                                attempt=attempts, retry_in=round(delay, 2))
                else:
                    self._say_lost(exc, delay)
            self.connected.clear()
            if self._stop.is_set() or (self.draining and not self.active):
                break  # (draining with no match to finish: the drain may have gone into the dead stream)
            self.stats.reconnects += 1
            try:
                await asyncio.wait_for(self._stop.wait(), delay * (0.5 + random.random()))
            except asyncio.TimeoutError:
                pass
            delay = min(self.backoff_s[1], delay * 2)

    def _say_lost(self, exc: grpc.aio.AioRpcError, delay: float) -> None:
        """A connection lost, or a reconnect that failed: the loss is said once, and while it
        lasts "still reconnecting" at most every RETRY_SAID_S (before, "connection lost" at
        every attempt: a night's outage filled a bot's log with the same line)."""
        now = time.monotonic()
        reason = (exc.details() or "")[:300]
        if self._away_since is None:
            self._away_since = self._away_said = now
            self._away_attempts = 0
            log.warning("connection lost", bot=self.name, code=exc.code().name, reason=reason, retry_in=round(delay, 2))
            return
        self._away_attempts += 1
        if now - self._away_said >= RETRY_SAID_S:
            self._away_said = now
            log.warning("still reconnecting", bot=self.name, away_s=round(now - self._away_since),
                        attempts=self._away_attempts, code=exc.code().name, reason=reason)

    def stop(self) -> None:
        """Leave at once: running matches are abandoned (the server defaults their seats)."""
        self._stop.set()
        if self._call is not None:
            self._call.cancel()

    def drain(self, reason: str = "the bot asked") -> None:
        """Take no new match, finish the running ones, then stop: ``run()`` returns once the
        server has said every match ended (a ``draining`` with no active match) and ended
        the stream. Sent again after a reconnect."""
        if self.draining:
            return
        self.draining = True
        self._drain_reason = reason
        log.info("draining: finishing the running matches, taking no new ones", bot=self.name,
                 running=len(self.active))
        if self._call is not None and self.connected.is_set():
            asyncio.get_running_loop().create_task(self._send_drain(self._call))
        elif not self.active:
            # Not connected and no match to finish: nothing to wait for. Before (an attack
            # pass), with the server gone, the bot kept reconnecting until a second Ctrl-C.
            self.stop()

    async def _send_drain(self, call: grpc.aio.StreamStreamCall) -> None:
        try:
            async with self._lock or asyncio.Lock():
                await call.write(bot_pb2.PlayRequest(drain=bot_pb2.Drain(reason=self._drain_reason)))
        except (grpc.aio.AioRpcError, asyncio.InvalidStateError):
            pass  # the stream ended meanwhile: the next one drains after its hello


    async def wait_match(self, match_id: str, timeout: float | None = None) -> game_pb2.MatchResult:
        """Until ``match_id`` ends for this bot; its result. :class:`MatchLost` if its end
        will not come: it ended while the bot was away and its result did not follow within
        ``ended_away_wait_s`` of the welcome (a server that restarted aborted it), or
        :meth:`run` returned first."""
        if match_id not in self.stats.results and match_id not in self._lost and not self._run_over:
            await asyncio.wait_for(self._ended.setdefault(match_id, asyncio.Event()).wait(), timeout)
        if match_id in self.stats.results:
            return self.stats.results[match_id]
        # Before, this waited for ever: a match a restarted server aborted sends no end.
        raise MatchLost(self._lost.get(match_id) or f"the client stopped before match {match_id} ended for it")

    async def _session(self) -> None:
        self._stream_welcomed = False
        async with aio_channel(self.target, self.tls, [("grpc.keepalive_time_ms", 20_000)]) as channel:
            if self.drain_wakeups:  # grpc.aio's reader exists now: wakeups.py
                drain_grpc_wakeups(asyncio.get_running_loop())
            call = bot_pb2_grpc.BotServiceStub(channel).Play(metadata=(("authorization", f"Bearer {self.token}"),))
            self._call = call
            lock = self._lock = asyncio.Lock()
            tasks: set[asyncio.Task[None]] = set()
            try:
                await call.write(bot_pb2.PlayRequest(hello=bot_pb2.Hello(
                    name=self.name, version=self.version, rulesets=self.rulesets,
                    max_concurrent_matches=self.max_matches)))
                while True:
                    message = await call.read()
                    if message is grpc.aio.EOF:
                        status = await call.code()
                        if status in FATAL:
                            raise FatalError(f"{status.name}: {await call.details()}")
                        return
                    kind = message.WhichOneof("kind")
                    if kind == "welcome":
                        self._stream_welcomed = True
                        self.connected.set()
                        first = not self.ever_connected
                        self.ever_connected = True
                        self._welcomed(message.welcome)
                        away = {} if self._away_since is None else {
                            "away_s": round(time.monotonic() - self._away_since, 1), "attempts": self._away_attempts + 1}
                        self._away_since = None
                        log.info("connected", bot=self.name, session=message.welcome.session_id,
                                 resuming=len(message.welcome.active_matches), **away)
                        if first and not message.welcome.active_matches:
                            # Before (a newcomer's pass), nothing more was said until the first
                            # match, which a ladder may take ~30 s to start: a silent client.
                            log.info("waiting for a match: the server seats this bot when one starts (an "
                                     "organiser's match or tournament, or the ladder if the server runs one, which "
                                     "groups its free bots within about 30 s)", bot=self.name)
                        still_draining = self.draining  # (a drain begun below sends itself)
                        for match_id in sorted({m.match_id for m in message.welcome.active_matches}):
                            # One an earlier process of the bot started (it crashed, or was
                            # restarted): its match_started is not replayed, but it is a match
                            # this one plays. Before, `--matches 1` played it, then waited for
                            # another match instead of leaving.
                            self._count_started(match_id)
                        if still_draining:
                            await self._send_drain(call)
                    elif kind == "draining":
                        if message.draining.active_matches:
                            log.info("the server is draining this stream", bot=self.name,
                                     reason=message.draining.reason, running=list(message.draining.active_matches))
                        else:  # the last message: every match has ended; leave, do not reconnect
                            self.drained = True
                            if not self.draining:  # the server's own doing: the commands say so
                                self.sent_away = message.draining.reason or "no reason given"
                                self.sent_away_cause = message.draining.cause
                            log.info("drained: every match finished; leaving", bot=self.name,
                                     reason=message.draining.reason)
                    elif kind == "rejected":
                        self.stats.rejections += 1
                        r = message.rejected
                        log.warning("answer rejected", bot=self.name, match_id=r.match_id, reason=r.reason,
                                    code=bot_pb2.RejectionCode.Name(r.code), retry=r.retry)
                        self._retry(r, call, lock, tasks)
                    elif kind == "update":
                        self._on_update(message.update, call, lock, tasks)
            finally:
                for task in tasks:
                    task.cancel()
                self._call = None

    def _welcomed(self, welcome: bot_pb2.Welcome) -> None:
        """The welcome lists every match the bot is seated in: one it thought running and not
        listed ended while it was away. Its events, up to ``match_ended``, follow if the server
        kept them; a server that crashed and restarted has none to send (it aborted the
        match), so this is where the client learns the match is over."""
        listed = {m.match_id for m in welcome.active_matches}
        loop = asyncio.get_running_loop()
        for match_id in sorted(self.active - listed):
            self.stats.ended_away.add(match_id)
            self._forget_requests(match_id)  # it asks nothing more
            seats = tuple(sorted(s for m, s in self._seen if m == match_id))
            loop.call_later(self.ended_away_wait_s, self._give_up, match_id, seats)
            log.info("a match ended while this bot was away: its result follows if the server kept it "
                     "(a server that restarted aborted it and has none)", bot=self.name, match_id=match_id)
        self.active = listed

    def _count_started(self, match_id: str) -> None:
        """A match this bot plays has started (once per match): counted, and with
        ``drain_after`` matches started, the bot drains."""
        if match_id in self._started:
            return
        if len(self._started) >= SEEN_KEPT:  # the oldest: long over (as _seen)
            del self._started[next(iter(self._started))]
        self._started[match_id] = None
        self.stats.matches_started += 1
        if self.drain_after and self.stats.matches_started >= self.drain_after:
            self.drain(f"{self.drain_after} match(es) played")

    def _earlier_run_ended(self, match_id: str, result: game_pb2.MatchResult) -> None:
        """The end of a match this process never saw start nor was welcomed into: an earlier
        process of the bot played it and died, and the server kept its end for the bot's
        return (heartsd's missed.py). Said, and counted apart: before (a newcomer's pass), it
        was counted as a match of this run ("1 matches" with no decision made in it, its result
        in the mean rank, the defaults played while no run was there as this run's), and the stdio bridge told its new child `end` of a match that child
        never saw, so a bot that leaves on its first `end` left before playing."""
        self.active.discard(match_id)
        self.stats.ended_away.discard(match_id)
        self.stats.earlier_ended += 1
        self._forget_requests(match_id)
        status = game_pb2.MatchStatus.Name(result.status).removeprefix("MATCH_STATUS_").lower()
        self._keep_why_lost(match_id, f"match {match_id} was played by an earlier run of this bot and ended ({status}) "
                            "while no run was connected; its record has its result")
        log.info("a match an earlier run of this bot played ended while no run was connected",
                 bot=self.name, match_id=match_id, status=status, reason=result.reason)
        waiter = self._ended.pop(match_id, None)
        if waiter is not None:
            waiter.set()

    def _keep_why_lost(self, match_id: str, why: str) -> None:
        """Keep why ``match_id`` has no result in this run, for :meth:`wait_match` (the newest SEEN_KEPT)."""
        if match_id not in self._lost and len(self._lost) >= SEEN_KEPT:
            del self._lost[next(iter(self._lost))]
        self._lost[match_id] = why

    def _forget_requests(self, match_id: str) -> None:
        """A match that will ask nothing more: its ruleset and open requests go."""
        self._rules.pop(match_id, None)
        for key in [k for k in self._open if k[0] == match_id]:
            del self._open[key]

    def _give_up(self, match_id: str, seats: tuple[int, ...] = ()) -> None:
        """``ended_away_wait_s`` after the welcome, the end of a match that ended while the bot
        was away has not come: it will not (the server restarted, or held it no longer). Its
        waiters are told, what the client kept for it goes, and ``on_match_end`` gets its end
        for each of ``seats`` (the bot's seats in it; -1 if the client no longer knows them),
        with status UNSPECIFIED, since its result is unknown, and the reason: a bot that keeps
        state per match, or the stdio bridge's bot (told `end ... status=unknown`), can let
        it go."""
        if match_id not in self.stats.ended_away or match_id in self.active:
            return  # its end came, or (a resumed match id) it runs again
        self._fallbacks.pop(match_id, None)
        self._server_defaults.pop(match_id, None)
        self._keep_why_lost(match_id, f"match {match_id} ended while this bot was away and its result never came "
                            "(a server that restarted aborted it; see the server's match list)")
        log.warning("no result came for a match that ended while this bot was away: the server most likely "
                    "restarted and aborted it", bot=self.name, match_id=match_id)
        waiter = self._ended.pop(match_id, None)
        if waiter is not None:
            waiter.set()
        if self.on_match_end is not None:
            result = game_pb2.MatchResult(status=P.MATCH_STATUS_UNSPECIFIED, reason=self._lost[match_id])
            for seat in seats or (-1,):
                self.on_match_end(match_id, seat, result)

    def _on_update(self, update: bot_pb2.MatchUpdate, call: grpc.aio.StreamStreamCall, lock: asyncio.Lock,
                   tasks: set[asyncio.Task[None]]) -> None:
        self.active.add(update.match_id)
        seat_key = (update.match_id, update.seat)
        seen = self._seen.get(seat_key, 0)
        for event in update.events:
            if event.sequence <= seen:
                continue  # had it before the stream dropped
            seen = event.sequence
            which = event.WhichOneof("kind")
            if which == "match_started":
                self._rules[update.match_id] = convert.ruleset_from_wire(event.match_started.ruleset)
                self._count_started(update.match_id)
            elif which == "notice":
                notice = event.notice
                if (notice.seat == update.seat and notice.provenance in SERVER_DEFAULTS
                        and update.match_id in self._started):  # not an earlier run's (_earlier_run_ended)
                    kind = SERVER_DEFAULTS[notice.provenance]
                    self._server_defaults.setdefault(update.match_id, Counter())[kind] += 1
                    self.stats.server_defaults[kind] += 1
                    self.stats.defaults[kind] += 1
            elif which == "match_ended" and update.match_id not in self._started:
                self._earlier_run_ended(update.match_id, event.match_ended.result)
            elif which == "match_ended":
                self.active.discard(update.match_id)
                self.stats.ended_away.discard(update.match_id)
                self.stats.matches_ended += 1
                self.stats.record(MatchReport(
                    update.match_id, update.seat, event.match_ended.result,
                    self._fallbacks.pop(update.match_id, Counter()), self._server_defaults.pop(update.match_id, Counter())))
                self._forget_requests(update.match_id)
                waiter = self._ended.pop(update.match_id, None)
                if waiter is not None:
                    waiter.set()
                if self.on_match_end is not None:
                    self.on_match_end(update.match_id, update.seat, event.match_ended.result)
        if seat_key not in self._seen and len(self._seen) >= SEEN_KEPT:
            del self._seen[next(iter(self._seen))]  # the oldest: long over
        self._seen[seat_key] = seen
        if update.HasField("request"):
            self._open[(update.match_id, update.seat)] = (update.request, [])
            task = asyncio.get_running_loop().create_task(self._decide(update.match_id, update.request, call, lock))
            tasks.add(task)
            task.add_done_callback(tasks.discard)

    async def _decide(self, match_id: str, request: bot_pb2.DecisionRequest, call: grpc.aio.StreamStreamCall,
                      lock: asyncio.Lock) -> None:
        received = time.monotonic()
        clock = request.clock
        think_s = max(0.005, clock.decision_ms / 1000 - self.safety_s)
        hard_s = max(0.005, (clock.decision_ms + clock.bank_ms) / 1000 - self.safety_s)
        answer = bot_pb2.Answer(match_id=match_id, request_id=request.request_id)
        job: Job | None = None
        try:
            view = convert.view_from_request(request, self._rules.get(match_id))
            self.strategy.time_limit_s = think_s
            current_decision.set(DecisionContext(match_id, request, think_s))  # the job copies the context
            started = time.monotonic()
            thinking: Awaitable[Any]
            if self.think is None:
                job = self._thinkers.submit(self._choose, view, request.kind)
                thinking = job.future
            else:
                thinking = self.think(self.strategy, view, think_s)  # think_s: this request's, not a shared field
            decided = await asyncio.wait_for(thinking, hard_s)
            took = time.monotonic() - started
            self.stats.slowest_s = max(self.stats.slowest_s, took)
            if took > clock.decision_ms / 1000:  # answered only thanks to the time bank
                self.stats.overruns += 1
            problem = answer_problem(request, decided)
            if problem is not None:
                raise IllegalAnswer(problem)
            _fill(answer, request.kind, decided)
        except Exception as exc:  # includes the timeout: answer a safe default in time
            self._fallback(match_id, request, exc, hard_s, job)
            _fill(answer, request.kind, _safe_default(request))
        if await self._send(answer, call, lock):
            self.stats.decisions += 1
            log.debug("answered", bot=self.name, match_id=match_id, ms=round((time.monotonic() - received) * 1000, 1))

    def _fallback(self, match_id: str, request: bot_pb2.DecisionRequest, exc: Exception, hard_s: float,
                  job: Job | None = None) -> None:
        """Count and log why the strategy's choice was replaced by a safe default."""
        self.stats.fallbacks += 1
        method = {P.DECISION_KIND_PASS: "choose_pass", P.DECISION_KIND_MOON: "choose_moon"}.get(request.kind, "choose_play")
        trace = ""
        if isinstance(exc, asyncio.TimeoutError) and job is not None and not job.started:
            # Before, this too said "did not answer within": of a call that never ran.
            kind, why = TIMEOUT, (f"{method} could not start within {hard_s * 1000:.0f} ms: all "
                                  f"{self._thinkers.threads} strategy threads still run earlier calls past their "
                                  "time (does the strategy loop for ever on some positions?)")
        elif isinstance(exc, asyncio.TimeoutError):
            kind, why = TIMEOUT, f"{method} did not answer within {hard_s * 1000:.0f} ms (its decision time and bank)"
        elif isinstance(exc, IllegalAnswer):
            kind, why = ILLEGAL, f"{method} answered {exc}"
        elif isinstance(exc, NotImplementedError) and _raised_by_base(exc):
            kind, why = MISSING, f"{type(self.strategy).__name__} does not implement {method}"
        else:
            kind, why = EXCEPTION, f"{method} raised {type(exc).__name__}: {exc}"
            trace = "".join(traceback.format_exception(exc))
        self.stats.problem(kind, why, trace)
        self._fallbacks.setdefault(match_id, Counter())[kind] += 1
        self.stats.defaults[kind] += 1
        log.warning("strategy failed; answering a safe default", bot=self.name, match_id=match_id, why=why)

    async def _send(self, answer: bot_pb2.Answer, call: grpc.aio.StreamStreamCall, lock: asyncio.Lock) -> bool:
        open_request = self._find_open(answer.match_id, answer.request_id)
        if open_request is not None:
            open_request[1].append(answer)
        try:
            async with lock:
                await call.write(bot_pb2.PlayRequest(answer=answer))
        except (grpc.aio.AioRpcError, asyncio.InvalidStateError):
            return False  # the stream ended meanwhile; after a reconnect the server asks again
        return True

    def _find_open(self, match_id: str, request_id: str) -> tuple[bot_pb2.DecisionRequest, list[bot_pb2.Answer]] | None:
        return next((o for (m, _), o in self._open.items() if m == match_id and o[0].request_id == request_id), None)

    def _retry(self, rejected: bot_pb2.AnswerRejected, call: grpc.aio.StreamStreamCall, lock: asyncio.Lock,
               tasks: set[asyncio.Task[None]]) -> None:
        """Answer a retryable rejection again with a legal choice not sent before."""
        open_request = self._find_open(rejected.match_id, rejected.request_id)
        if not rejected.retry or open_request is None:
            return
        request, tried = open_request
        answer = untried_answer(request, tried)
        if answer is None:
            return  # every choice was refused: the server will play its default
        answer.match_id = rejected.match_id
        task = asyncio.get_running_loop().create_task(self._send(answer, call, lock))
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    def _choose(self, view, kind: int):  # type: ignore[no-untyped-def]
        if kind == P.DECISION_KIND_PASS:
            return list(self.strategy.choose_pass(view))
        if kind == P.DECISION_KIND_MOON:
            return self.strategy.choose_moon(view)
        return self.strategy.choose_play(view)


class IllegalAnswer(ValueError):
    """The strategy's choice is not a legal answer to the request (the reason is the text)."""


def _raised_by_base(exc: BaseException) -> bool:
    """The NotImplementedError comes from the base Strategy's method (not overridden)."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and tb.tb_frame.f_code.co_filename.endswith(("strategies/base.py", "strategies\\base.py"))


def answer_problem(request: bot_pb2.DecisionRequest, decided: object) -> str | None:
    """Why ``decided`` (what a strategy returned) cannot answer ``request``, or None.

    Checked before sending, so a strategy's illegal choice is reported to its author as
    such (and replaced) instead of costing a rejected round trip."""
    legal = {(c.suit - 1) * 13 + c.rank - 2 for c in request.legal_cards}
    if request.kind == P.DECISION_KIND_MOON:
        return None if isinstance(decided, MoonOption) else f"{decided!r}, not a MoonOption"
    if request.kind == P.DECISION_KIND_PASS:
        try:
            cards = list(decided)  # type: ignore[call-overload]
        except TypeError:
            return f"{decided!r}, not a list of cards"
        if len(cards) != request.pass_count or len(set(cards)) != len(cards):
            return f"{cards!r}: a pass is {request.pass_count} different cards"
        bad = [c for c in cards if c not in legal]
        return f"{_names(bad)}, not in the hand" if bad else None
    if not isinstance(decided, int) or isinstance(decided, bool) or decided not in legal:
        shown = _names([decided]) if isinstance(decided, int) and 0 <= decided < 52 else repr(decided)
        return f"{shown}, not a legal card now (legal: {_names(sorted(legal))})"
    return None


def _names(cards: Sequence[object]) -> str:
    from hearts_engine import card_name

    return " ".join(card_name(c) if isinstance(c, int) and 0 <= c < 52 else repr(c) for c in cards)


def sent_away_message(reason: str, cause: int) -> str:
    """What ``heartsbot play`` and ``heartsbot stdio`` say when the server drained the bot
    by itself (before, only an info line that read like a drain the bot had asked for, and
    exit 0: a bot whose organiser rotated its token stopped without a word of why); what to
    do follows ``Draining.cause``."""
    text = f"the server ended this bot's session without being asked ({reason})"
    if cause == bot_pb2.DRAIN_CAUSE_TOKEN_ROTATED:
        return text + ": the organiser issued a new token and the old one no longer connects; start again with the new one"
    if cause == bot_pb2.DRAIN_CAUSE_REPLACED:
        return text + ": another instance of this bot connected and plays in its place"
    return text


def leave_on_signals(client: BotClient, say: Callable[[str], None]) -> Callable[[], bool]:
    """Ctrl-C (SIGINT) or SIGTERM once: drain (finish the running matches, take no new
    ones); a second time: leave at once, saying what is abandoned. Returns a function
    telling whether the bot left at once. Call on the running loop."""
    import signal

    abandoned = [False]

    def on_signal(said: str) -> None:
        # ``said``: which signal, as the log and the server's drain reason name it (before,
        # "Ctrl-C" for a supervisor's SIGTERM too)
        if not client.draining:
            running = sorted(client.active)
            say(f"draining: finishing {len(running)} running match(es){': ' + ', '.join(running) if running else ''}, "
                f"taking no new ones ({said} again to leave at once)")
            client.drain(said)
        else:
            running = sorted(client.active)
            abandoned[0] = bool(running)
            say(f"leaving now, abandoning {len(running)} match(es)" + (
                f": {', '.join(running)} (the server plays their seats by default)" if running else ""))
            client.stop()

    loop = asyncio.get_running_loop()
    for sig, said in ((signal.SIGINT, "Ctrl-C"), (signal.SIGTERM, "SIGTERM")):
        loop.add_signal_handler(sig, on_signal, said)
    return lambda: abandoned[0]


def first_legal_answer(request: bot_pb2.DecisionRequest) -> bot_pb2.Answer:
    """The simplest valid answer to any request (first legal card, first cards passed,
    the default moon option): what an instant bot in a test or benchmark sends."""
    answer = bot_pb2.Answer(request_id=request.request_id)
    if request.kind == P.DECISION_KIND_PASS:
        answer.pass_cards.cards.extend(request.legal_cards[: request.pass_count])
    elif request.kind == P.DECISION_KIND_PLAY:
        answer.play.CopyFrom(request.legal_cards[0])
    else:
        answer.moon = request.default_moon_option
    return answer


def untried_answer(request: bot_pb2.DecisionRequest, tried: Sequence[bot_pb2.Answer]) -> bot_pb2.Answer | None:
    """A valid answer to ``request`` that differs from every answer in ``tried``, or None.

    Plays go through ``legal_cards`` in order; passes slide a window of ``pass_count``
    cards along them; the moon choice takes the option not yet sent."""
    answer = bot_pb2.Answer(request_id=request.request_id)
    if request.kind == P.DECISION_KIND_PLAY:
        used = {(a.play.suit, a.play.rank) for a in tried}
        card = next((c for c in request.legal_cards if (c.suit, c.rank) not in used), None)
        if card is None:
            return None
        answer.play.CopyFrom(card)
    elif request.kind == P.DECISION_KIND_PASS:
        used_sets = {frozenset((c.suit, c.rank) for c in a.pass_cards.cards) for a in tried}
        legal, k = list(request.legal_cards), request.pass_count
        window = next((legal[i:i + k] for i in range(len(legal) - k + 1)
                       if frozenset((c.suit, c.rank) for c in legal[i:i + k]) not in used_sets), None)
        if window is None:
            return None
        answer.pass_cards.cards.extend(window)
    else:
        options = [request.default_moon_option, *request.moon_options]
        option = next((o for o in options if o not in {a.moon for a in tried}), None)
        if option is None:
            return None
        answer.moon = option
    return answer


def _safe_default(request: bot_pb2.DecisionRequest) -> object:
    if request.kind == P.DECISION_KIND_PASS:
        return convert.cards_from_wire(request.legal_cards)[-request.pass_count:]
    if request.kind == P.DECISION_KIND_MOON:
        return convert.MOON_FROM_WIRE[request.default_moon_option]
    return convert.card_from_wire(request.legal_cards[0])


def _fill(answer: bot_pb2.Answer, kind: int, decided: object) -> None:
    if kind == P.DECISION_KIND_PASS:
        answer.pass_cards.cards.extend(convert.cards_to_wire(decided))  # type: ignore[arg-type]
    elif kind == P.DECISION_KIND_MOON:
        assert isinstance(decided, MoonOption)
        answer.moon = convert.MOON_OPTIONS[decided]
    else:
        answer.play.CopyFrom(convert.card_to_wire(decided))  # type: ignore[arg-type]
