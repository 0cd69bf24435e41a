"""The gRPC servicers: convert, delegate to the arena, convert back.

Errors are mapped to status codes in one place, :func:`grpc_errors`; untrusted
input never crashes a handler or affects another match.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hmac
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable
from typing import Any, TypeVar

import grpc
import structlog

from hearts_engine.presets import PRESETS
from heartsbot.proto import (
    admin_pb2,
    admin_pb2_grpc,
    bot_pb2,
    bot_pb2_grpc,
    game_pb2,
    ladder_pb2,
    ladder_pb2_grpc,
    spectator_pb2,
    spectator_pb2_grpc,
)

from . import __version__, pages, spectating
from .arena import Arena, ArenaError, SeatRequest, clipped, quoted
from .budgets import Budget, BudgetExhausted, admit, bearer_of, peer_address, retry_metadata
from .db import damaged
from .ladder import places
from .logs import printable
from .memo import derived
from .rates import MAX_PAGE, PAGE_ROWS_PER_TOKEN, RequestRate
from .sessions import CLOSE_FLUSH_S, RESUMES_PER_SEAT, BotSession
from .store_health import is_store_failure
from .wire import UNREADABLE, PlayAnswer, Unreadable

log = structlog.get_logger("heartsd.api")
REFUSE_READ_S = 0.5
HELLO_TIMEOUT_S = 10.0  # a stream that says nothing holds a slot of the bot streams' budget
GREETINGS_PER_BOT = 4  # streams of one bot at once between opening and their hello
BOT_STREAM_BURST = 10  # streams a bot may open in a row; then Settings.bot_streams_per_minute
MAX_VERSION_CHARS = 128  # hello.version: logged at every connect, frozen into tournament rosters
# See BotService._end. The quiet pause is long enough that a loaded machine's scheduling
# gap in a client's writes (measured: a 207 ms stall) does not look like the end of them.
DRAIN_S, DRAIN_QUIET_S = 2.0, 0.5
# ... and at most this many messages: far more than a client has in flight (a burst of a few
# hundred rejected answers still gets its status), far fewer than a flood sends in DRAIN_S.
DRAIN_MESSAGES = 1024
T = TypeVar("T")
P = game_pb2

STATUS = {
    "invalid": grpc.StatusCode.INVALID_ARGUMENT,
    "precondition": grpc.StatusCode.FAILED_PRECONDITION,
    "not_found": grpc.StatusCode.NOT_FOUND,
    "unauthenticated": grpc.StatusCode.UNAUTHENTICATED,
    "denied": grpc.StatusCode.PERMISSION_DENIED,
    "unavailable": grpc.StatusCode.UNAVAILABLE,
    "exhausted": grpc.StatusCode.RESOURCE_EXHAUSTED,
    "out_of_range": grpc.StatusCode.OUT_OF_RANGE,
    "deadline": grpc.StatusCode.DEADLINE_EXCEEDED,
    "internal": grpc.StatusCode.INTERNAL,
}
STATUS_NAMES = {
    P.MATCH_STATUS_RUNNING: "running",
    P.MATCH_STATUS_FINISHED: "finished",
    P.MATCH_STATUS_ABORTED: "aborted",
    P.MATCH_STATUS_CANCELLED: "cancelled",
}


async def abort_with(context: grpc.aio.ServicerContext, exc: ArenaError | BudgetExhausted) -> None:
    """End the call with ``exc``'s status. Its traceback goes first: the abort's exception
    keeps ``exc`` as its context, and grpc keeps that in a reference cycle, so without
    this every frame of the refused handler (with what it had loaded: a parsed record)
    lives until a full garbage collection, which the daemon runs rarely (server.py)."""
    exc.__traceback__ = None
    await context.abort(STATUS[exc.kind], exc.message, trailing_metadata=retry_metadata(exc))


def grpc_errors(handler: Callable[..., Awaitable[T]]) -> Callable[..., Awaitable[T]]:
    """Map :class:`ArenaError` (and a spent budget's :class:`BudgetExhausted`) to its status
    code; anything else is INTERNAL, logged."""

    @functools.wraps(handler)
    async def wrapper(self: Any, request: Any, context: grpc.aio.ServicerContext) -> T:
        try:
            return await handler(self, request, context)
        except (ArenaError, BudgetExhausted) as exc:
            await abort_with(context, exc)
        except (asyncio.CancelledError, grpc.aio.AbortError):
            raise
        except Exception as exc:
            if (why := damaged(exc)) is not None:
                log.error("the store is damaged", method=handler.__name__, error=str(exc))
                await context.abort(grpc.StatusCode.DATA_LOSS, why)
            log.exception("handler failed", method=handler.__name__)
            await context.abort(grpc.StatusCode.INTERNAL, "internal error")
        raise AssertionError("unreachable")

    return wrapper


def resident_bytes() -> int:
    """This process's resident memory, from /proc (Linux); 0 elsewhere."""
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def bearer_token(context: grpc.aio.ServicerContext) -> str:
    if token := bearer_of(context.invocation_metadata()):
        return token
    raise ArenaError("unauthenticated", "missing 'authorization: Bearer <token>' metadata")


def bearer_token_or_empty(context: grpc.aio.ServicerContext) -> str:
    try:
        return bearer_token(context)
    except ArenaError:
        return ""


def authorize_admin(arena: Arena, context: grpc.aio.ServicerContext) -> None:
    """The call carries the admin token, or an ArenaError says what it carries instead."""
    token = bearer_token(context)
    if hmac.compare_digest(token.encode(), arena.settings.admin_token.encode()):  # no timing to learn it from
        return
    if arena.tokens.lookup(token) is not None:  # from memory: never the database on the loop
        raise ArenaError("denied", "a bot token cannot call admin methods")
    raise ArenaError("unauthenticated", "unknown admin token")


class StreamEnd:
    """How one bot stream ends, told by its session (``on_overflow``, ``on_closed``): the
    writes stop, and a write stuck behind gRPC's flow control is abandoned (the handler,
    which writes, is cancelled out of it). One small object of slots: the three closures
    it replaces, with their cells, cost every idle stream ~1 KiB more."""

    __slots__ = ("arena", "session", "handler", "writing", "abandoned", "cancelled", "flush_timer")

    def __init__(self, arena: Arena, session: BotSession, handler: asyncio.Task[Any]) -> None:
        self.arena = arena
        self.session = session
        self.handler = handler
        self.writing = False  # the handler is in a write
        self.abandoned = False  # write nothing more
        self.cancelled = False  # the handler was cancelled out of its write by abandon()
        self.flush_timer: asyncio.TimerHandle | None = None

    def abandon(self) -> None:
        """Write nothing more, and end the stream even if a write is stuck."""
        self.abandoned = True
        if self.writing and not self.cancelled:
            self.cancelled = True
            self.handler.cancel()

    def overflow(self) -> None:
        """Too much waiting for a bot that does not read: its seats go the disconnect way
        now, and the stream ends."""
        self.arena.disconnect(self.session)
        self.abandon()

    def closed(self, now: bool) -> None:
        """The session is over: its last messages get CLOSE_FLUSH_S to go out (none if
        ``now``), then a stuck write is abandoned, and the stream's slot is free."""
        if now:
            self.abandon()
        elif self.flush_timer is None:
            self.flush_timer = asyncio.get_running_loop().call_later(CLOSE_FLUSH_S, self.abandon)


class BotService(bot_pb2_grpc.BotServiceServicer):
    def __init__(self, arena: Arena) -> None:
        self.arena = arena
        self._greeting: dict[str, int] = {}  # bot -> its streams that have not said hello yet
        per_minute = arena.settings.bot_streams_per_minute
        self._opened = RequestRate(per_minute / 60, BOT_STREAM_BURST) if per_minute else None  # streams, by bot

    async def Play(self, request_iterator: Any, context: grpc.aio.ServicerContext) -> None:  # noqa: N802
        """One bot's stream. It takes its slot of the bot-stream budget itself, where every
        other call is counted by BudgetInterceptor's wrapper: a wrapping coroutine would stay
        alive as long as the stream does (~0.9 KiB for each of thousands of idle bots).

        A stream whose token is not known (yet) greets on the small greeting budget instead,
        limited per address, and moves to the bot streams' once it is in: before, streams
        with no valid token filled the whole bot-stream budget (each held ~0.5 s while
        refused) and a bot with a valid token could not connect (an attack pass)."""
        bots = self.arena.budgets.bots
        known_bot = self._known_bot(context)  # a name the registry holds: no object kept per stream
        budget = bots if known_bot is not None else self.arena.budgets.greeting
        peer = await admit(budget, context)
        try:
            try:
                greeted = await self._greet_counted(context, known_bot)
                if greeted is None:
                    return
                if budget is not bots:
                    budget = await self._move_to(bots, budget, peer, context)
                bot, hashed, hello = greeted
                if refusal := self.arena.token_refusal(bot, hashed):  # since the stream opened
                    await context.abort(grpc.StatusCode.UNAUTHENTICATED, refusal)
                if not self.arena.accepting and not self.arena.active_matches(bot):
                    # Shutting down: a bot with a match to finish may come back for it (the grace);
                    # another would be welcomed only to be cut off when the daemon stops.
                    await context.abort(grpc.StatusCode.UNAVAILABLE,
                                        "the server is shutting down: connect again when it is back")
                if conflict := self.arena.version_conflict(bot, hello.version):
                    await context.abort(grpc.StatusCode.FAILED_PRECONDITION, conflict)
            except grpc.aio.AbortError:
                self.arena.stream_refused(context.code(), context.details() or "")
                raise
            settings = self.arena.settings
            granted = min(hello.max_concurrent_matches or 1, settings.max_matches_per_bot)  # every budget derives from it
            session = BotSession(bot, hello.version, frozenset(hello.rulesets), granted)
            session.max_outbox_bytes = settings.max_outbox_bytes
            session.token_hash = hashed
            reader: asyncio.Task[None] | None = None
            handler = asyncio.current_task()
            assert handler is not None  # grpc.aio runs every handler in a task
            stream = StreamEnd(self.arena, session, handler)
            session.on_overflow = stream.overflow
            session.on_closed = stream.closed
            try:
                active = self.arena.connect(session)
                log.info("bot connected", bot=bot, session=session.id, version=hello.version,
                         rulesets=sorted(session.rulesets), active=len(active), max_matches=granted)
                await context.write(bot_pb2.PlayResponse(welcome=bot_pb2.Welcome(
                    session_id=session.id, bot_name=bot, server_version=__version__, active_matches=active,
                    max_concurrent_matches=granted)))
                self.arena.resume_all(session)
                reader = asyncio.get_running_loop().create_task(self._read(session, context))
                # This task writes what the outbox holds, until its end (None); a second task
                # would cost every idle stream its memory and every message a wake-up.
                outbox = session.outbox
                try:
                    while (message := await outbox.get()) is not None and not stream.abandoned:
                        stream.writing = True
                        await context.write(message)
                        stream.writing = False
                except asyncio.CancelledError:
                    if not stream.cancelled:
                        raise
                    handler.uncancel()
            finally:
                if reader is not None:
                    if session.draining:
                        await asyncio.wait({reader}, timeout=DRAIN_S + 0.5)
                    reader.cancel()
                self.arena.disconnect(session)
                if stream.flush_timer is not None:
                    stream.flush_timer.cancel()
                session.on_overflow = session.on_closed = None  # its methods refer to the session: cycles to break
                log.info("bot disconnected", bot=bot, session=session.id, reason=session.close_reason)
            if session.close_status:
                await context.abort(STATUS[session.close_status], session.close_reason)
        finally:
            budget.release(peer)

    def _known_bot(self, context: grpc.aio.ServicerContext) -> str | None:
        """The bot whose token the call carries, if the token registry knows it (from memory)."""
        found = self.arena.tokens.lookup(bearer_token_or_empty(context))
        return found[0] if found is not None else None

    async def _greet_counted(self, context: grpc.aio.ServicerContext,
                             bot: str | None) -> tuple[str, str, bot_pb2.Hello] | None:
        """:meth:`_greet`, counting the streams of ``bot`` (its token known) that have not
        said hello yet: at most GREETINGS_PER_BOT. Before, one bot's token opened ~2,000
        streams that never said hello, each holding a bot-stream slot for HELLO_TIMEOUT_S,
        and no other bot could connect (an attack pass). A bot's streams past hello need no
        count: a new session of a bot replaces its previous one. How fast a bot may open
        streams is bounded too (BOT_STREAM_BURST, then Settings.bot_streams_per_minute)."""
        if bot is None:
            return await self._greet(context)
        if self._greeting.get(bot, 0) >= GREETINGS_PER_BOT:
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED,
                                f"bot {bot!r} already has {GREETINGS_PER_BOT} streams that have not sent 'hello'; "
                                "send hello as a stream's first message")
        if self._opened is not None and not self._opened.allow(bot):
            # Each stream welcomed costs ~3 times one refused: a bot reconnecting in a loop
            # (~550 a second) took half of the event loop from every other bot (an attack pass).
            await self._refuse(context, grpc.StatusCode.RESOURCE_EXHAUSTED,
                               f"bot {bot!r} opened streams too fast (more than {BOT_STREAM_BURST} in a row, then "
                               f"{self.arena.settings.bot_streams_per_minute} a minute): connect again in "
                               f"{self._opened.retry_after_s(bot):.1f} s")
        self._greeting[bot] = self._greeting.get(bot, 0) + 1
        try:
            return await self._greet(context)
        finally:
            left = self._greeting[bot] - 1
            if left:
                self._greeting[bot] = left
            else:
                del self._greeting[bot]

    @staticmethod
    async def _move_to(wanted: Budget, held: Budget, peer: str, context: grpc.aio.ServicerContext) -> Budget:
        """Trade the slot of ``held`` for one of ``wanted``; if it has none, end the call
        RESOURCE_EXHAUSTED (the caller then releases ``held``, which it still has)."""
        try:
            wanted.acquire(peer)
        except BudgetExhausted as exc:
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, exc.message)
        held.release(peer)
        return wanted

    async def _greet(self, context: grpc.aio.ServicerContext) -> tuple[str, str, bot_pb2.Hello] | None:
        """The stream's token and ``hello``, checked: (bot, token hash, hello), ``None`` if the
        stream ended first; anything wrong ends the call with its status. A coroutine of its
        own: it is over before the stream's long life begins."""
        try:
            found = await self.arena.authenticate(bearer_token(context))
        except ArenaError as exc:
            await self._refuse(context, STATUS[exc.kind], exc.message)
        if found is None:
            await self._refuse(context, grpc.StatusCode.UNAUTHENTICATED, "unknown bot token")
        bot, hashed = found
        try:
            first = await asyncio.wait_for(context.read(), HELLO_TIMEOUT_S)
        except asyncio.TimeoutError:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"no 'hello' within {HELLO_TIMEOUT_S:g} s")
        if first is grpc.aio.EOF:
            return None
        if first is UNREADABLE:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, Unreadable.MESSAGE)
        if first.WhichOneof("kind") != "hello":
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "the first message must be 'hello'")
        hello = first.hello
        if not hello.name:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "hello.name is required")
        if hello.name != bot:
            await context.abort(grpc.StatusCode.PERMISSION_DENIED,
                                f"this token belongs to bot {bot!r}, not {quoted(hello.name)}")
        if len(hello.version) > MAX_VERSION_CHARS:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"hello.version is at most {MAX_VERSION_CHARS} "
                                f"characters, got {len(hello.version)}")
        if not hello.version.isprintable():  # an organiser's terminal drew its escapes (an attack pass)
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "hello.version must be printable text (no control, "
                                f"format or separator characters but the space): {quoted(hello.version)}")
        unknown = sorted(set(hello.rulesets) - set(PRESETS))
        if unknown:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                                clipped(f"unknown rulesets: {', '.join(unknown)}"))
        if hello.max_concurrent_matches < 0:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "max_concurrent_matches must not be negative")
        return bot, hashed, hello

    @staticmethod
    async def _refuse(context: grpc.aio.ServicerContext, code: grpc.StatusCode, message: str) -> None:
        """End an unauthenticated stream with ``code``. The client's ``hello`` is usually in
        flight; ending the stream before it arrives makes some clients' gRPC stacks report
        INTERNAL instead of our status, so it is read (and ignored) first, briefly."""
        with contextlib.suppress(Exception):
            await asyncio.wait_for(context.read(), REFUSE_READ_S)
        await context.abort(code, message)

    @staticmethod
    async def _end(session: BotSession, context: grpc.aio.ServicerContext, reason: str, status: str) -> None:
        """End a stream for what the bot sent: its matches see it gone at once; then what
        it is still sending is read and dropped (for at most DRAIN_S, until it pauses for
        DRAIN_QUIET_S) before the status goes out. A gRPC client whose write fails on an
        already-ended stream reports INTERNAL rather than our status and reason. At most
        DRAIN_MESSAGES are read so: reading on for free, a bot flooding on had ~10,000
        messages a second read for DRAIN_S after every stream it got ended (~20,000 where its
        budget allowed 69; an attack pass)."""
        session.draining = True
        session.close(reason, status)
        deadline = asyncio.get_running_loop().time() + DRAIN_S
        with contextlib.suppress(Exception):  # a timed-out read breaks the stream: it is ending anyway
            for _ in range(DRAIN_MESSAGES):
                if (left := deadline - asyncio.get_running_loop().time()) <= 0:
                    return
                if await asyncio.wait_for(context.read(), min(left, DRAIN_QUIET_S)) is grpc.aio.EOF:
                    return

    async def _read(self, session: BotSession, context: grpc.aio.ServicerContext) -> None:
        """Act on what the bot sends, while its session lasts. A session that ended (its
        token revoked, its stream replaced, drained) may still be read until its handler
        ends, up to CLOSE_FLUSH_S when the bot does not read its last messages: what it
        sends then is read and dropped, at most DRAIN_MESSAGES of it (see _end).
        Acted on (an attack pass), a revoked bot's answers were played as its own, and its
        resume brought its seats back from away."""
        dropped = 0
        try:
            while True:
                message = await context.read()
                if message is grpc.aio.EOF:
                    break
                if not session.connected:
                    dropped += 1
                    if dropped > DRAIN_MESSAGES:
                        break
                    continue
                if type(message) is PlayAnswer:
                    rejection = self.arena.answer_play(session, message)
                elif (kind := message.WhichOneof("kind")) == "answer":
                    rejection = self.arena.answer(session, message.answer)
                elif kind == "resume":
                    resume = message.resume
                    if (self.arena.seat_held(session, resume.match_id, resume.seat) is not None
                            and not session.may_resume(resume.match_id, resume.seat)):
                        await self._end(session, context, f"more than {RESUMES_PER_SEAT} resumes of one seat on "
                                        "this stream; a resume re-sends the whole match", "exhausted")
                        return
                    rejection = self.arena.resume(session, resume)
                elif kind == "drain":
                    # a repeat changes nothing (drain is idempotent): it spends the budget a
                    # rejected answer spends, or a bot could have us read for free forever
                    if session.drain_reason and session.wasted():
                        await self._end(session, context, "too many repeated drains; one is enough, the "
                                        "stream ends when its matches have", "exhausted")
                        return
                    # its reason is quoted where an organiser reads it (CreateMatch's refusal of a
                    # draining bot): its control characters as escapes, as the log writes them
                    self.arena.drain(session, printable(message.drain.reason[:200]) or "the bot asked",
                                     bot_pb2.DRAIN_CAUSE_ASKED)
                    continue
                elif kind == "hello":
                    await self._end(session, context, "'hello' may only be sent once per stream", "invalid")
                    return
                elif kind == "unreadable":
                    await self._end(session, context, Unreadable.MESSAGE, "invalid")
                    return
                else:
                    await self._end(session, context, "empty message", "invalid")
                    return
                if rejection is not None:
                    session.send(bot_pb2.PlayResponse(rejected=rejection))
                    if session.wasted():
                        await self._end(session, context, "too many rejected answers for the requests "
                                        "received; reconnect and answer only open requests", "exhausted")
                        return
        except (asyncio.CancelledError, grpc.aio.AioRpcError):
            pass
        except Exception:
            log.exception("bot stream failed", bot=session.bot)
            # A defect of ours, not the bot's doing: ending with OK would tell it to leave
            # for good (an attack pass found one: a clock past the int32).
            session.close("the server failed on a message of this stream (logged); connect again", "internal")
        session.close(session.close_reason or "stream ended")


class AdminService(admin_pb2_grpc.AdminServiceServicer):
    def __init__(self, arena: Arena) -> None:
        self.arena = arena

    def _authorize(self, context: grpc.aio.ServicerContext) -> None:
        authorize_admin(self.arena, context)

    @grpc_errors
    async def CreateMatch(self, request: admin_pb2.CreateMatchRequest, context: grpc.aio.ServicerContext) -> admin_pb2.CreateMatchResponse:  # noqa: N802
        self._authorize(context)
        seats = []
        for spec in request.seats:
            which = spec.WhichOneof("occupant")
            if which is None:
                raise ArenaError("invalid", "every seat needs a bot or a house strategy")
            seats.append(SeatRequest(bot=spec.bot) if which == "bot" else SeatRequest(house=spec.house))
        if request.wait_for_seats_ms < 0:
            raise ArenaError("invalid", "wait_for_seats_ms must not be negative")
        runner = await self.arena.create_match(
            request.ruleset, request.players, request.options, request.format,
            request.seed if request.HasField("seed") else None, seats, request.clock, rated=request.rated,
            wait_s=request.wait_for_seats_ms / 1000)
        return admin_pb2.CreateMatchResponse(
            match_id=runner.id, seed=request.seed, seed_drawn=not request.HasField("seed"), ruleset=runner._ruleset_pb,
            clock=runner.policy.to_wire())

    @grpc_errors
    async def CancelMatch(self, request: admin_pb2.CancelMatchRequest, context: grpc.aio.ServicerContext) -> admin_pb2.CancelMatchResponse:  # noqa: N802
        self._authorize(context)
        if request.match_id not in self.arena.runners:
            raise await self.arena.not_running(request.match_id)
        runner = self.arena.cancel(request.match_id, request.reason)
        await runner.finished.wait()
        assert runner.result is not None
        if runner.result.status != P.MATCH_STATUS_CANCELLED:
            raise ArenaError("precondition", f"the match ended before it could be cancelled ({runner.result.reason})")
        return admin_pb2.CancelMatchResponse(result=runner.result)

    @grpc_errors
    async def GetServerStatus(self, request: admin_pb2.GetServerStatusRequest, context: grpc.aio.ServicerContext) -> admin_pb2.GetServerStatusResponse:  # noqa: N802
        self._authorize(context)
        monitor = self.arena.loop_monitor
        return admin_pb2.GetServerStatusResponse(
            loop_lag_ms=monitor.current_lag_s * 1000, max_loop_lag_ms=monitor.max_lag_s * 1000,
            recent_max_stall_ms=monitor.recent_max_s() * 1000, loop_stalls=monitor.stalls,
            loop_stalled_ms=monitor.stalled_s * 1000, bot_sessions=len(self.arena.sessions.all()),
            running_matches=len(self.arena.runners), resident_bytes=resident_bytes(),
            max_loop_busy_ms=monitor.max_busy_s * 1000,
            store_failing_since_ms=self.arena.store_health.failing_since_ms, store_error=self.arena.store_health.error,
            unstored_matches=self.arena.unstored_matches,
            budgets=[admin_pb2.CallBudget(name=b.name, limit=b.total, per_peer=b.per_peer, in_use=b.in_use,
                                          peak=b.peak, refused=b.refused) for b in self.arena.budgets.all()])

    @grpc_errors
    async def ListBots(self, request: admin_pb2.ListBotsRequest, context: grpc.aio.ServicerContext) -> admin_pb2.ListBotsResponse:  # noqa: N802
        self._authorize(context)
        arena = self.arena
        # Whether a bot is registered (and whose it is) is a fact about the bot: it is shown
        # for connected bots too, not only when the others are asked for. A store that does
        # not answer leaves the connected bots listed, when an operator needs them most.
        try:
            registrations = await asyncio.to_thread(arena.store.ladder.registrations)
        except Exception as exc:
            if request.include_registered or not is_store_failure(exc):
                raise
            log.warning("the store did not answer: connected bots are listed without their registration",
                        error=str(exc)[:300])
            registrations = {}
        registered = {name: owner for name, (owner, _) in registrations.items()}
        revoked = {name for name, (_, gone) in registrations.items() if gone}
        names = {s.bot for s in arena.sessions.all()}
        if request.include_registered:
            names |= set(registered) | set(arena.settings.bot_tokens)
        configured = arena.tokens.configured_names  # its owner is the configuration's (Arena.owners)
        bots = []
        for name in sorted(names):
            session = arena.sessions.get(name)
            owner = arena.settings.bot_owners.get(name, name) if name in configured else registered.get(name, "")
            bot = admin_pb2.ConnectedBot(
                name=name, active_matches=arena.active_matches(name), connected=session is not None,
                registered=name in registered, owner=owner, revoked=name in revoked,
                reserved_slots=arena.slots.promised(name))
            if session is not None:
                bot.version, bot.max_concurrent_matches = session.version, session.max_matches
                bot.draining = bool(session.drain_reason)
                bot.rulesets.extend(sorted(session.rulesets))
            for match_id, purpose in arena.matches_of(name):
                bot.matches.add(match_id=match_id, purpose=purpose)
            bots.append(bot)
        return admin_pb2.ListBotsResponse(bots=bots)


class SpectatorService(spectator_pb2_grpc.SpectatorServiceServicer):
    """Delegates to :mod:`heartsd.spectating`, which decides what a spectator may see."""

    def __init__(self, arena: Arena) -> None:
        self.arena = arena

    @grpc_errors
    async def ListMatches(self, request: spectator_pb2.ListMatchesRequest, context: grpc.aio.ServicerContext) -> spectator_pb2.ListMatchesResponse:  # noqa: N802
        limit = request.limit or 100
        if limit < 0 or limit > MAX_PAGE:
            raise ArenaError("invalid", f"limit (the page size) must be between 0 and {MAX_PAGE}; "
                                        "page through more with page_token")
        if request.status and request.status not in STATUS_NAMES:
            raise ArenaError("invalid", f"unknown status {request.status}")
        wanted = STATUS_NAMES.get(request.status) if request.status else None
        after = pages.decode(request.page_token, wanted or "") if request.page_token else None
        self.arena.budgets.spectators.charge(peer_address(context.peer()), limit / PAGE_ROWS_PER_TOKEN)
        matches, last = await spectating.page(self.arena, wanted, limit, after)
        token = pages.encode(last, wanted or "") if last is not None else ""
        return spectator_pb2.ListMatchesResponse(matches=matches, next_page_token=token)

    async def WatchMatch(self, request: spectator_pb2.WatchMatchRequest, context: grpc.aio.ServicerContext) -> AsyncIterator[spectator_pb2.WatchMatchResponse]:  # noqa: N802
        """The events sent (and those of a finished match read and passed over before
        ``from_sequence``: spectating.paced_skips) spend the caller's spectator rate, a call's
        worth per spectating.EVENTS_PER_BATCH, as a ListMatches page spends by its size; when it is
        spent the stream waits for it, never cut off half way. Charged one call whatever it
        sent, watching a long match from its start over and over (~140 ms of the event loop
        for 900 deals) kept the loop from the bots (an attack pass)."""
        budget, peer = self.arena.budgets.spectators, peer_address(context.peer())
        events = spectating.paced(spectating.watch(self.arena, request.match_id, int(request.from_sequence),
                                                   skipped=spectating.paced_skips(budget, peer)), budget, peer)
        try:
            async for batch in events:
                yield spectator_pb2.WatchMatchResponse(events=batch)
        except ArenaError as exc:
            await abort_with(context, exc)
        except Exception as exc:  # a stream is no grpc_errors handler: a damaged row is said here
            if (why := damaged(exc)) is None:
                raise
            log.error("the store is damaged", method="WatchMatch", error=str(exc))
            await context.abort(grpc.StatusCode.DATA_LOSS, why)
        finally:
            await events.aclose()

    @grpc_errors
    async def GetMatchRecord(self, request: spectator_pb2.GetMatchRecordRequest, context: grpc.aio.ServicerContext) -> spectator_pb2.GetMatchRecordResponse:  # noqa: N802
        """A record spends the caller's spectator rate by its size too, before it is loaded
        (rates.RECORD_BYTES_PER_TOKEN): charged one call, a long match's record fetched 20
        times a second from one address took more than the event loop has."""
        return spectator_pb2.GetMatchRecordResponse(record=await spectating.record(
            self.arena, request.match_id, charged_by_size(self.arena, context)))


def charged_by_size(arena: Arena, context: grpc.aio.ServicerContext) -> Callable[[int], None]:
    """The caller's spectator rate, spent by the size of the answer it is told
    (spectating.charged_by_size): a record, a tournament, a tournament page, a leaderboard."""
    return spectating.charged_by_size(arena.budgets.spectators, peer_address(context.peer()))


class LadderService(ladder_pb2_grpc.LadderServiceServicer):
    def __init__(self, arena: Arena) -> None:
        self.arena = arena
        # per ruleset (checked): the leaderboard and its size in bytes
        self._boards: dict[Hashable, tuple[object, tuple[ladder_pb2.GetLeaderboardResponse, int]]] = {}

    async def _standings(self, ruleset: str) -> list[Any]:
        """The leaderboard, rebuilt from every result: once per new result (or revoked bot),
        however many callers ask meanwhile, and at most a tenth of the time (memo.py): at
        160,000 results a rebuild takes ~0.5 s, and a busy ladder has a new result every
        second (an audit)."""
        ladder = self.arena.store.ladder
        marker = await asyncio.to_thread(ladder.standings_marker, ruleset)
        return await self.arena.ladder_standings.get(ruleset, marker,  # type: ignore[no-any-return]
                                                 lambda: ladder.standings(ruleset))

    @staticmethod
    def _ruleset(name: str) -> str:
        name = name or "standard"
        if name not in PRESETS:
            raise ArenaError("invalid", f"unknown ruleset {name!r}; known: {', '.join(sorted(PRESETS))}")
        return name

    async def leaderboard(self, ruleset: str) -> tuple[ladder_pb2.GetLeaderboardResponse, int]:
        """The leaderboard of ``ruleset`` ("": standard) and its size in bytes, built once per
        standings for every caller, the web's too: before (an audit), each call converted
        every bot's entry on the event loop, 2.6 ms for 500 bots."""
        name = self._ruleset(ruleset)
        standings = await self._standings(name)

        def build() -> tuple[ladder_pb2.GetLeaderboardResponse, int]:
            board = ladder_pb2.GetLeaderboardResponse(
                ruleset=name, entries=[_entry(place, s) for place, s in zip(places(standings), standings)])
            return board, board.ByteSize()

        return derived(self._boards, name, standings, build)

    @grpc_errors
    async def GetLeaderboard(self, request: ladder_pb2.GetLeaderboardRequest, context: grpc.aio.ServicerContext) -> ladder_pb2.GetLeaderboardResponse:  # noqa: N802
        """The answer spends the caller's spectator rate by its size, as a match record and a
        tournament do (spectating.charged_by_size): it grows with the ladder's bots, ~250 KB
        at 2,000, and cost one call."""
        board, size = await self.leaderboard(request.ruleset)
        charged_by_size(self.arena, context)(size)
        return board

    @grpc_errors
    async def GetBotProfile(self, request: ladder_pb2.GetBotProfileRequest, context: grpc.aio.ServicerContext) -> ladder_pb2.GetBotProfileResponse:  # noqa: N802
        ruleset = self._ruleset(request.ruleset)
        limit = request.limit or 20
        if not 0 < limit <= 200:
            raise ArenaError("invalid", "limit must be between 0 (the default, 20) and 200")
        ladder = self.arena.store.ladder
        # Its own row: every bot's, read for one call of the rate, cost ~1.7 ms of a worker
        # thread holding the interpreter's lock at 2,000 bots, and grew with them (an attack pass).
        owners = await asyncio.to_thread(ladder.owners, True, [request.bot])
        if request.bot not in owners:
            raise ArenaError("not_found", f"no ladder bot {request.bot!r}")
        standings = await self._standings(ruleset)
        response = ladder_pb2.GetBotProfileResponse(bot=request.bot, owner=owners[request.bot])
        for place, s in zip(places(standings), standings):
            if s.bot == request.bot:
                response.standing.CopyFrom(_entry(place, s))
        history = await asyncio.to_thread(ladder.history, request.bot, limit, ruleset)
        for match_id, rules, seat, rank, points, deals in history:
            response.matches.add(match_id=match_id, ruleset=rules, seat=seat, rank=rank, points=points, deals=deals)
        return response


def _entry(rank: int, s: Any) -> ladder_pb2.LeaderboardEntry:
    return ladder_pb2.LeaderboardEntry(
        rank=rank, bot=s.bot, owner=s.owner, rating=s.mu, uncertainty=s.sigma, conservative=s.conservative,
        matches=s.matches, points_per_deal=s.points_per_deal,
        points_per_deal_ci=0.0 if s.ppd_ci == float("inf") else s.ppd_ci,
        decisions=s.decisions, timeouts=s.timeouts, illegal_defaults=s.illegal, disconnect_defaults=s.disconnects,
        auto_defaults=s.auto, default_share=s.default_share, unreliable=s.unreliable, revoked=s.revoked)
