"""Drives one match: asks each seat in turn, enforces the clock and the rules,
publishes events, stores the record before announcing the result.

Read it as the match: ``_advance`` moves the match on (house seats play, remote seats
are asked: ``_request_decision``); an answer arrives in ``on_answer`` (checked by the
engine, rejected in-band, or applied); the clock runs out in ``_check_deadlines`` ->
``_time_out`` -> ``_default`` (the default was chosen before asking); ``_after_apply``
counts defaults towards auto-play; ``_publish`` tells the table; ``_finish`` stores the
record, then announces the end. The bytes of every message come from the match's
encoder (encoding.py); the host it runs in is a ``MatchHost`` (host.py).

Every state change happens on the event loop without awaiting in between, so an
answer is validated and applied (or rejected) in one step; the match task only
waits for futures that answers, timers and disconnects resolve.
"""

from __future__ import annotations

import asyncio
import math
import secrets
import time
from dataclasses import dataclass, field
from collections.abc import Callable
from typing import Any, Final

import structlog

from hearts_engine import (
    PLAY_ACTIONS,
    Action,
    ActionError,
    Match,
    MatchFormat,
    MoonAction,
    PassAction,
    Phase,
    PlayAction,
    Ruleset,
    SeatView,
)
from hearts_engine.errors import InvalidActionError
from heartsbot import convert
from heartsbot.proto import bot_pb2, game_pb2, spectator_pb2
from heartsbot.strategies import Strategy

from . import encoding, shuffles
from .clock import SeatClock
from .encoding import EVENT_CARD_PLAYED, EVENT_CARDS_PASSED, EVENT_DEAL_STARTED, EVENT_TRICK_WON, WATCH_EVENTS, MatchEncoder
from .events import EventLog
from .host import MatchHost
from .releases import DealReleases, TableState
from .lag import LoopMonitor
from .sessions import BotSession, SessionRegistry
from .thinking import choose
from .wire import PlayAnswer


try:
    from mypy_extensions import mypyc_attr
except ImportError:  # mypy (which brings it) builds the compiled modules; running needs neither
    def mypyc_attr(*_names: str, **_attrs: object) -> Callable[[type], type]:  # type: ignore[misc]
        return lambda cls: cls

P: Final = game_pb2
CHECKPOINT_EVERY_S = 5.0
# The runner's clocks, as module names rather than attributes of ``time``: compiled, the
# runner reads a module it imports once, where these it looks up at every call (as cheap),
# so that a test can stop them (tests/server/test_compiled.py).
monotonic = time.monotonic
perf_counter = time.perf_counter
wall_time = time.time
_CLOCK_RESOLUTION: Final = time.get_clock_info("monotonic").resolution  # a timer may run this early
_NEVER: Final = math.inf
MOVES_PER_TURN: Final = 32  # moves in a row (house, defaults) before yielding to the event loop
# How long a request of a seat on auto-play waits for its bot before the default. Not 0: a
# default played at once, among house seats that play at once, auto-played the rest of the
# match before the bot's next answer was even read, and auto-play never ended. A bot's
# answer within it counts; a later one is stale, and ends auto-play all the same.
AUTO_LISTEN_S: Final = 0.02
# Events per message when a seat is sent what it missed (catch_up, and what is kept for a
# bot away at a match's end): ~42 KB at ~41 bytes an event, where a seat's whole match of
# 1,000 deals is 82,000 events, ~3.4 MB, near gRPC's default 4 MiB limit on what a client
# may receive in one message.
EVENTS_PER_PART: Final = 1024
# config.INT32_MAX, as a literal: compiled, a comparison with it is a C constant's, where
# the imported name was a module lookup and a call of min() on every decision.
WIRE_INT32_MAX: Final = 2**31 - 1
STATUS_NAMES: Final = {
    P.MATCH_STATUS_FINISHED: "finished",
    P.MATCH_STATUS_ABORTED: "aborted",
    P.MATCH_STATUS_CANCELLED: "cancelled",
}
ANSWER_FIELDS: Final = {P.DECISION_KIND_PASS: "pass_cards", P.DECISION_KIND_PLAY: "play", P.DECISION_KIND_MOON: "moon"}
KIND: Final = {Phase.PASSING: P.DECISION_KIND_PASS, Phase.PLAYING: P.DECISION_KIND_PLAY, Phase.MOON_CHOICE: P.DECISION_KIND_MOON}
_PLAYING: Final = Phase.PLAYING  # compared by identity on every request (no enum hashing)
_PASSING: Final = Phase.PASSING
_PLAY: Final = P.DECISION_KIND_PLAY
_MOON: Final = P.DECISION_KIND_MOON
_PLAY_ACTIONS: Final = PLAY_ACTIONS
_PLAY_ACTION: Final = PlayAction  # compared by identity with an action's type
_CHOSEN: Final = frozenset((P.PROVENANCE_BOT, P.PROVENANCE_HOUSE, P.PROVENANCE_HUMAN))  # provenances that are not defaults
PROVENANCE_NAMES: Final = {v: k for k, v in P.Provenance.items()}


@dataclass(frozen=True)
class ClockPolicy:
    decision_ms: int
    bank_ms: int
    max_illegal: int
    auto_after: int
    grace_ms: int

    def to_wire(self) -> game_pb2.ClockSettings:
        return game_pb2.ClockSettings(
            decision_ms=self.decision_ms,
            bank_ms=self.bank_ms,
            max_illegal=self.max_illegal,
            auto_after=self.auto_after,
            grace_ms=self.grace_ms,
        )


class Decision:
    """One applied action with its provenance, the measured think time, and the part of it
    the server was stalled (not charged to the bot: lag.py). A plain class, not a NamedTuple:
    compiled, one is made without a call into Python, on every decision."""

    __slots__ = ("deal_number", "seat", "action", "provenance", "think_ms", "rejected", "credit_ms")

    def __init__(self, deal_number: int, seat: int, action: Action, provenance: int, think_ms: int, rejected: int,
                 credit_ms: int = 0) -> None:
        self.deal_number = deal_number
        self.seat = seat
        self.action = action
        self.provenance = provenance
        self.think_ms = think_ms
        self.rejected = rejected
        self.credit_ms = credit_ms

    def to_bytes(self) -> bytes:
        """``to_wire().SerializeToString()``, assembled from pre-encoded parts (encoding.py)."""
        return encoding.decision_bytes(self.deal_number, self.seat, self.action, self.provenance, self.think_ms,
                                       self.rejected, self.credit_ms)

    def to_wire(self) -> spectator_pb2.RecordedDecision:
        action = self.action
        decision = spectator_pb2.RecordedDecision(
            deal_number=self.deal_number, seat=self.seat, provenance=self.provenance,
            think_ms=self.think_ms, rejected_answers=self.rejected, stall_credit_ms=self.credit_ms)
        if isinstance(action, PlayAction):
            decision.kind = P.DECISION_KIND_PLAY
            decision.cards.append(convert.CARD_MESSAGES[action.card])
        elif isinstance(action, PassAction):
            decision.kind = P.DECISION_KIND_PASS
            decision.cards.extend(convert.cards_to_wire(action.cards))
        else:
            decision.kind = P.DECISION_KIND_MOON
            decision.moon = convert.MOON_OPTIONS[action.option]
        return decision


class Pending:
    """An open request to a remote seat. (A plain class: a compiled dataclass is set up by
    the __init__ dataclasses writes, in Python, and one is made for every request.)"""

    __slots__ = ("request_id", "kind", "default", "sent_at", "deadline", "grace_timer", "rejected", "credited",
                 "auto", "through")

    def __init__(self, request_id: str, kind: int, default: Action | None, sent_at: float) -> None:
        self.request_id = request_id
        self.kind = kind
        self.default = default  # None: the engine's default for the state the request was sent in
        self.sent_at = sent_at
        self.deadline = _NEVER  # monotonic() after which the default is played
        self.grace_timer: asyncio.TimerHandle | None = None
        self.rejected = 0
        self.credited = 0.0  # server stall time the deadline was already extended by (lag.py)
        self.auto = False  # sent on auto-play: it waits AUTO_LISTEN_S, not the seat's clock (until seat_back)
        self.through = 0  # the seat's events up to here went with this request, as last sent

    def budget_s(self, clock: SeatClock) -> float:
        """How long this request may be open: AUTO_LISTEN_S on auto-play, else the clock's."""
        return AUTO_LISTEN_S if self.auto else clock.budget_s()


@dataclass(eq=False)
class SeatSlot:
    seat: int
    name: str
    clock: SeatClock
    house: Strategy | None = None
    delivered: int = 0  # events up to here were handed to the seat's stream
    # ... and up to here surely reached the bot: it answered a request sent with them. A
    # stream can die with messages in flight, so a reconnect replays from here.
    confirmed: int = 0
    pending: Pending | None = None
    consecutive_defaults: int = 0
    auto: bool = False
    auto_played: int = 0  # decisions auto-played since auto-play started (for the log's summary)
    away_since: float | None = None
    issued: set[str] = field(default_factory=set)  # every request id sent to this seat
    # The provenance of the seat's own answers: BOT for a remote bot, HUMAN for a person
    # on the web Playboard (same stream, clock and checks; see heartsd.web.seats).
    provenance: int = P.PROVENANCE_BOT
    thinking: bool = False  # a searching house strategy is deciding in a worker process (thinking.py)
    # The declared version the seat's bot must be connected as (a tournament froze it at its
    # start), or None: any. Another version's stream is, to this seat, no stream at all.
    version: str | None = None
    # The stream this seat is being caught up on (catchup.py), part by part as it reads:
    # meanwhile what the match sends the seat waits for its turn there.
    catching_up: BotSession | None = None
    # A stream of the seat's bot that may not play it: the one a tournament's table started
    # without (draining, or declaring other rulesets: Arena.unable); its next stream may.
    shut_out: BotSession | None = None

    def played_by(self, session: BotSession) -> bool:
        """Whether ``session`` (of this seat's bot) may play this seat: its version is the
        frozen one, if any, and it is not the stream the seat started without."""
        return (self.version is None or session.version == self.version) and session is not self.shut_out

    @property
    def label(self) -> str:
        return f"house:{self.house.name}" if self.house else self.name


def house_decision(house: Strategy, view: SeatView) -> Action:
    """What a house strategy does with ``view`` (for the phase the view is in)."""
    return house_action(view.phase, choose(house, view))


def house_action(phase: Phase, choice: Any) -> Action:
    """The action of a strategy's raw choice (thinking.choose) in ``phase``."""
    if phase is Phase.PASSING:
        return PassAction(tuple(choice))
    if phase is Phase.MOON_CHOICE:
        return MoonAction(choice)
    return PlayAction(choice)


class MatchStopped(Exception):
    pass


# Compiled (setup.py), a native class: the conformance kit's runner (conformance.py) is a
# Python subclass that arranges one event per match.
@mypyc_attr(allow_interpreted_subclasses=True)
class MatchRunner:
    def __init__(
        self,
        arena: MatchHost,
        match_id: str,
        rules: Ruleset,
        fmt: MatchFormat,
        seed: int,
        seats: list[SeatSlot],
        policy: ClockPolicy,
        house_delay_s: float = 0.0,
        rated: bool = False,
    ) -> None:
        self.arena = arena
        self.id = match_id
        self.match = Match(rules, fmt, seed)
        self.rules = rules
        self.seats = seats
        self._slots_by_bot: dict[str, tuple[SeatSlot, ...]] = {}  # remote seats by bot name
        for slot in seats:
            if slot.house is None:
                self._slots_by_bot[slot.name] = (*self._slots_by_bot.get(slot.name, ()), slot)
        self.policy = policy
        self._grace_s = policy.grace_ms / 1000
        self._waste_per_request = policy.max_illegal + 2  # see BotSession.allow_waste
        self.house_delay_s = house_delay_s
        self.rated = rated
        self.log_events = EventLog()
        self.decisions: list[Decision] = []
        self._recorded = 0  # decisions the encoder has in the record already
        # Every message of the match is assembled by its encoder, from parts it keeps.
        self._encoder = MatchEncoder(match_id, rules)
        self._ruleset_pb = self._encoder.ruleset_pb
        self.status = P.MATCH_STATUS_RUNNING
        self.result: game_pb2.MatchResult | None = None
        self.created = wall_time()
        self.started_at = monotonic()
        # When each deal may be shown (releases.py): this match's own, or its set's.
        self.set_id = ""
        self.table = TableState()  # what the releases see of this match (kept up to date: _update_releases)
        self.releases = DealReleases([self.table])
        self.deal_starts: list[int] = []  # the sequence of each deal's deal_started event
        self.watchers: set[asyncio.Event] = self.table.watchers  # spectators' wake-ups, one set for both
        self.finished = asyncio.Event()
        self._stopping: tuple[int, str] | None = None
        self._checkpoint: asyncio.Task[None] | None = None
        self._last_checkpoint = monotonic()
        self._done = asyncio.Event()
        self._advancing = False
        self._current_deal: Any = None  # the deal in play (_start_deal): its events' deal
        self._broken = False  # hearts_broken already published for the current deal
        self._deal_end_due = False  # a deal ended inside this _advance: flush its seats at the end
        self._house_ready = False
        self._house_timer: asyncio.TimerHandle | None = None
        # One timer per match for the request deadlines, set for the earliest one: an
        # answer does not cancel it, so requests answered in time cost no timer at all.
        self._deadline_timer: asyncio.TimerHandle | None = None
        self._deadline_at = math.inf
        self._requests_sent = 0
        # The shuffle ledger (shuffles.py): deals below reserved_deals are in it (None:
        # every deal, a fixed-deals match); a game deals the next chunk once it is.
        self.strict_shuffles = False
        self.reserved_deals: int | None = None
        self._holding = False  # the next deal waits for its shuffle's ledger rows
        self._reserving: asyncio.Task[None] | None = None
        # Request ids need not be secret (an answer is only matched against the
        # sender's own seats), only unique: a random prefix per match plus a counter.
        self._id_prefix = f"r-{secrets.token_hex(4)}-"
        self._loop = asyncio.get_running_loop()
        # Kept typed: both are compiled with the runner, so asking them is a native call.
        self._monitor: LoopMonitor = arena.loop_monitor  # the server's stalls during a request (lag.py)
        self._sessions: SessionRegistry = arena.sessions
        self.log = structlog.get_logger("heartsd.match").bind(match_id=match_id, ruleset=rules.name)

    # -- public surface -------------------------------------------------------------

    @property
    def seat_infos(self) -> list[game_pb2.SeatInfo]:
        return [game_pb2.SeatInfo(seat=s.seat, name=s.label, house=s.house is not None,
                                  human=s.provenance == P.PROVENANCE_HUMAN) for s in self.seats]

    @property
    def house_only(self) -> bool:
        return all(s.house is not None for s in self.seats)

    @property
    def deals_completed(self) -> int:
        return len(self.match.results)

    @property
    def playing(self) -> bool:
        """Whether seats of this match still hold cards (it is neither over nor stopping)."""
        return self._stopping is None and self.result is None and not self.match.is_over

    def seats_of(self, bot: str) -> tuple[SeatSlot, ...]:
        """The remote seats ``bot`` holds here (looked up on every answer: kept in a dict)."""
        return self._slots_by_bot.get(bot, ())

    def seats_for(self, session: BotSession) -> list[SeatSlot]:
        """The seats of ``session``'s bot here that ``session`` may play (SeatSlot.played_by)."""
        return [slot for slot in self._slots_by_bot.get(session.bot, ()) if slot.played_by(session)]

    def frozen_refusal(self, session: BotSession) -> str:
        """Why ``session`` may not play its bot's seats here, where it may not (else "")."""
        for slot in self._slots_by_bot.get(session.bot, ()):
            if not slot.played_by(session):
                return (f"this match is played by {session.bot!r} as version {slot.version!r}, frozen when its "
                        f"tournament started; this stream is version {session.version!r}: connect as "
                        f"{slot.version!r} to play it")
        return ""

    def take_answer(self, session: BotSession, answer: bot_pb2.Answer) -> tuple[bool, bot_pb2.AnswerRejected | None]:
        """An answer of ``session``'s bot to this match: (False, None) if it answers no open
        request of its seats here (the arena says why), else (True, the rejection to send or
        None). Here rather than in the arena, which only routes, so that every answer is
        handled by compiled code from the match on."""
        slot = self._answered_slot(session, answer.request_id)
        if slot is None:
            return False, None
        return True, self.on_answer(slot, answer)

    def _answered_slot(self, session: BotSession, request_id: str) -> SeatSlot | None:
        """The seat of ``session``'s bot whose open request ``request_id`` is, if any. Its
        events sent with that request count as read when ``session`` is the bot's stream."""
        for slot in self._slots_by_bot.get(session.bot, ()):
            pending = slot.pending
            if pending is not None and pending.request_id == request_id:
                if not slot.played_by(session):
                    return None  # another version of the bot: not its seat (the arena says why)
                if pending.through > slot.confirmed and self._sessions.get(session.bot) is session:
                    slot.confirmed = pending.through  # it read the request as last sent (to this stream)
                return slot
        return None

    def announce(self, text: str) -> None:
        """A notice about the whole match (``seat`` -1), sent to every seat and spectator
        now rather than with the next request: e.g. the server shutting down."""
        if self.result is not None:
            return
        self.log_events.add(P.Event(notice=P.Notice(text=text, seat=-1)))
        self._flush_seats()
        self._wake_watchers()

    def stop(self, status: int, reason: str) -> None:
        """End the match early (cancel, shutdown); it is recorded with ``status``."""
        if self._stopping is None and self.result is None and not self.match.is_over:
            self._stopping = (status, reason)
            for slot in self.seats:
                self._close_pending(slot)
            self._done.set()
            self._update_releases()  # its cards are no longer held: its set's other tables may show theirs

    async def run(self) -> None:
        self.log.info("match started", seats=[s.label for s in self.seats])  # the seed would reveal the hands
        try:
            self._start_events()
            self._advance()
            await self._done.wait()
        except Exception:
            self.log.exception("match failed")
            self._stopping = self._stopping or (P.MATCH_STATUS_ABORTED, "server error")
        await self._finish()

    # -- moving the match on ------------------------------------------------------------

    def _advance(self) -> None:
        """Move the match as far as it goes without waiting: house seats play, remote
        seats get their requests. Called after every applied action, so an answer
        leads to the next request without a task switch."""
        if self._advancing:
            return  # the running call loops and sees the new state
        self._advancing = True
        try:
            moves = 0
            while True:
                match = self.match
                if match.outcome is not None or self._stopping is not None:  # Match.is_over, without a call
                    self._done.set()
                    return
                if self._holding:
                    return
                if moves >= MOVES_PER_TURN:
                    self._loop.call_soon(self._advance)  # let other matches and streams run
                    return
                moved = False
                for seat in match.deal.to_act():  # Match.to_act() while not over
                    slot = self.seats[seat]
                    if slot.pending is not None:
                        continue
                    if slot.house is not None:
                        if slot.thinking:
                            continue
                        if self.house_delay_s > 0 and not self._house_ready:
                            self._schedule_house()
                            continue
                        self._house_ready = False
                        if self._deal_end_due and self.match.deal.phase is _PLAYING:
                            self._flush_deal_end()  # before a house seat's card of the next deal
                        if slot.house.searches:
                            self._house_think(slot)
                            continue
                        self._house_move(slot)
                        moved = True
                    else:
                        # A request changes nothing, unless defaulted at once. (Asked of the
                        # method: mypy still holds slot.pending narrowed to None here, and a
                        # compiled build would check the new request against that.)
                        moved = not self._request_decision(slot)
                    if moved:
                        moves += 1
                        break  # the state changed: look again
                if not moved:
                    return
        except Exception:
            self.log.exception("match failed")
            self._stopping = self._stopping or (P.MATCH_STATUS_ABORTED, "server error")
            self._done.set()
        finally:
            self._advancing = False
            if self._deal_end_due:  # a deal ended: what its seats were not asked with goes now
                self._flush_deal_end()

    def _flush_deal_end(self) -> None:
        self._deal_end_due = False
        self._flush_seats()

    def _flush_seats(self) -> None:
        """Send every remote seat its undelivered events (none: no message)."""
        for slot in self.seats:
            if slot.house is None:
                self._send(slot, None)

    def _schedule_house(self) -> None:
        if self._house_timer is None:
            self._house_timer = self._loop.call_later(self.house_delay_s, self._house_tick)

    def _house_tick(self) -> None:
        self._house_timer = None
        self._house_ready = True
        self._guarded(self._advance)

    def _house_move(self, slot: SeatSlot) -> None:
        assert slot.house is not None
        start = perf_counter()
        action = house_decision(slot.house, self.match.view(slot.seat))
        self._apply(slot.seat, action, P.PROVENANCE_HOUSE, perf_counter() - start, 0)

    def _house_think(self, slot: SeatSlot) -> None:
        """Let a searching strategy (Monte Carlo: ~85 ms a play) decide in a worker process
        (thinking.py), so that the event loop, and every other match and stream on it,
        never waits for it, nor for the interpreter's lock it would hold in a thread. The
        view is an immutable snapshot; the action is applied back on the loop."""
        assert slot.house is not None
        slot.thinking = True
        start = perf_counter()
        view = self.match.view(slot.seat)
        thought = asyncio.ensure_future(self.arena.think(slot.house, view))
        phase = view.phase
        thought.add_done_callback(lambda done: self._guarded(self._house_thought, slot, done, start, phase))

    def _house_thought(self, slot: SeatSlot, done: asyncio.Future[Any], start: float, phase: Phase) -> None:
        slot.thinking = False
        if self._stopping is not None or self.match.is_over or done.cancelled():
            return
        action = house_action(phase, done.result())  # a strategy's error aborts the match, as on the loop
        self._apply(slot.seat, action, P.PROVENANCE_HOUSE, perf_counter() - start, 0)
        self._advance()

    def _request_decision(self, slot: SeatSlot) -> bool:
        """Send ``slot`` its request and time it (by its clock; AUTO_LISTEN_S on auto-play), or
        play the default at once if its bot is gone past the grace period; whether the
        request is still open."""
        match = self.match
        now = monotonic()
        self._requests_sent += 1
        phase = match.deal.phase
        kind = _PLAY if phase is _PLAYING else KIND[phase]
        # The default is a function of the state the request is sent in, which stays as it is
        # while the request is open (the seat's hand and the trick wait for its answer): it is
        # worked out when needed (_default), except the moon's, which the request shows.
        default = match.default_action(slot.seat) if kind == _MOON else None
        pending = Pending(f"{self._id_prefix}{self._requests_sent}", kind, default, now)
        slot.pending = pending
        slot.issued.add(pending.request_id)
        session = self._send(slot, self._request(slot, pending, 0))
        if session is not None:  # a new request: the bot may get its retries and a late answer rejected
            session.allow_waste(self._waste_per_request)
        away_since = slot.away_since
        if away_since is not None and now - away_since >= self._grace_s:  # no bot to listen for
            self._default(slot, P.PROVENANCE_AUTO if slot.auto else P.PROVENANCE_DISCONNECT)
            return False
        pending.auto = slot.auto
        pending.deadline = deadline = now + pending.budget_s(slot.clock)
        if deadline < self._deadline_at:
            self._arm_deadline(deadline)
        if away_since is not None:
            self._arm_grace(slot, self._grace_s - (now - away_since))
        return True

    def _guarded(self, step: Callable[..., None], *args: Any) -> None:
        """Run ``step(*args)``, a step that starts outside the match task (a timer, an answer).
        An unexpected error aborts this match, recorded, instead of leaving it hanging."""
        try:
            step(*args)
        except Exception:
            self._step_failed()

    def _step_failed(self) -> None:
        """A step that started outside the match task failed: abort the match, recorded."""
        self.log.exception("match step failed")
        if self._stopping is None:
            self._stopping = (P.MATCH_STATUS_ABORTED, "server error")
        for slot in self.seats:
            self._close_pending(slot)
        self._done.set()

    def _arm_deadline(self, when: float) -> None:
        if self._deadline_timer is not None:
            self._deadline_timer.cancel()
        self._deadline_at = when
        self._deadline_timer = self._loop.call_later(max(0.0, when - monotonic()), self._check_deadlines)

    def _check_deadlines(self) -> None:
        """The deadline timer: time out every request past its deadline, then set the timer
        for the earliest one still open."""
        self._deadline_timer, self._deadline_at = None, math.inf
        for slot in self.seats:
            pending = slot.pending
            now = monotonic()
            if pending is not None and pending.deadline <= now + _CLOCK_RESOLUTION:
                # The server's own stalls while the request was open are not the bot's time:
                # the deadline moves by them (a stall still going on included), and only a
                # request late beyond them times out.
                credit = self._monitor.stalled(pending.sent_at, now)
                if credit > pending.credited:
                    pending.deadline += credit - pending.credited
                    pending.credited = credit
                    if pending.deadline > now + _CLOCK_RESOLUTION:
                        continue
                self._guarded(lambda: self._time_out(slot))
        earliest = min((s.pending.deadline for s in self.seats if s.pending is not None), default=math.inf)
        if earliest < self._deadline_at:
            self._arm_deadline(earliest)

    def _time_out(self, slot: SeatSlot) -> None:
        # Sent on auto-play, it waited AUTO_LISTEN_S, not the seat's clock (even if a rejected
        # answer has since ended auto-play): the default is AUTO, and the bank stays.
        if slot.pending is not None and slot.pending.auto:
            self._default(slot, P.PROVENANCE_AUTO)
            return
        slot.clock.exhaust()
        self._default(slot, P.PROVENANCE_TIMEOUT)

    def _arm_grace(self, slot: SeatSlot, delay_s: float) -> None:
        pending = slot.pending
        if pending is None or pending.grace_timer is not None:
            return

        def expire() -> None:
            if slot.pending is pending and slot.away_since is not None:
                self._guarded(lambda: self._default(slot, P.PROVENANCE_DISCONNECT))

        pending.grace_timer = self._loop.call_later(max(0.0, delay_s), expire)

    def _open_for(self, pending: Pending) -> tuple[float, float]:
        """How long ``pending`` has been open, and how much of that the server itself was
        stalled (lag.py; 0.0 almost always), which is not the bot's time."""
        now = monotonic()
        return now - pending.sent_at, self._monitor.stalled(pending.sent_at, now)

    def _default(self, slot: SeatSlot, provenance: int) -> None:
        pending = slot.pending
        assert pending is not None
        elapsed, credit = self._open_for(pending)
        slot.clock.charge(elapsed - credit)  # the time a defaulted decision took still counts
        default = pending.default or self.match.default_action(slot.seat)  # as when it was sent (_request_decision)
        self._resolve(slot, pending, default, provenance, elapsed, credit)
        self._notice(slot, provenance)
        self._advance()

    def _resolve(self, slot: SeatSlot, pending: Pending, action: Action, provenance: int, elapsed: float,
                 credit: float) -> None:
        """Apply ``action`` (already known legal) for a pending request and wake the match."""
        self._close_pending(slot)
        self._apply(slot.seat, action, provenance, elapsed, pending.rejected, credit)

    def _close_pending(self, slot: SeatSlot) -> None:
        pending = slot.pending
        if pending is None:
            return
        slot.pending = None
        if pending.grace_timer is not None:
            pending.grace_timer.cancel()

    # -- answers from bots ------------------------------------------------------------

    def on_answer(self, slot: SeatSlot, answer: bot_pb2.Answer) -> bot_pb2.AnswerRejected | None:
        """Handle a bot's answer for ``slot``; return a rejection to send, or None."""
        pending = slot.pending
        slot.auto = False  # any answer shows the bot is back
        if pending is None or pending.request_id != answer.request_id:
            return self._rejection(answer, bot_pb2.REJECTION_CODE_STALE_REQUEST, "that request is no longer open", False, slot)
        elapsed, credit = self._open_for(pending)
        if elapsed - credit > pending.budget_s(slot.clock):  # late, though its timer has not run yet
            self._guarded(lambda: self._time_out(slot))
            return self._rejection(answer, bot_pb2.REJECTION_CODE_STALE_REQUEST, "too late: the default was played", False, slot)
        try:
            action = self._action_of(pending.kind, answer, self.rules)
            self.match.apply(slot.seat, action)
        except ActionError as exc:
            pending.rejected += 1
            malformed = isinstance(exc, InvalidActionError)
            code = bot_pb2.REJECTION_CODE_MALFORMED if malformed else bot_pb2.REJECTION_CODE_ILLEGAL
            retry = pending.rejected < self.policy.max_illegal
            rejection = self._rejection(answer, code, exc.reason, retry, slot)
            if not retry:
                self.arena.send_to_bot(slot.name, bot_pb2.PlayResponse(rejected=rejection))
                self._guarded(lambda: self._default(slot, P.PROVENANCE_ILLEGAL))
                return None
            return rejection
        self._taken(slot, pending, action, elapsed, credit)
        return None

    def take_play(self, session: BotSession, play: PlayAnswer) -> tuple[bool, bot_pb2.AnswerRejected | None]:
        """:meth:`take_answer` for a play answer read straight from its bytes: the common case
        (an open PLAY request, a card its seat may play, in time) handled without protobuf
        messages; anything else goes the way of :meth:`on_answer` with the answer as a message.
        A subclass (the conformance kit's) gets every answer through its :meth:`on_answer`."""
        slot = self._answered_slot(session, play.request_id)
        if slot is None:
            return False, None
        pending = slot.pending
        assert pending is not None
        if pending.kind != _PLAY or type(self) is not MatchRunner:
            return False, None  # take_answer, with the answer as a message
        elapsed, credit = self._open_for(pending)
        if elapsed - credit > pending.budget_s(slot.clock):
            return True, self.on_answer(slot, play.to_wire())  # late: on_answer plays the default, says why
        action = _PLAY_ACTIONS[play.card]
        try:
            self.match.apply(slot.seat, action)  # checked: a refused play changes nothing
        except ActionError:
            return True, self.on_answer(slot, play.to_wire())  # refused again there, with the reason
        slot.auto = False  # any answer shows the bot is back
        self._taken(slot, pending, action, elapsed, credit)
        return True, None

    def seat_back(self, slot: SeatSlot) -> None:
        """A person is back at a seat on auto-play ("I'm back", or a page opening:
        heartsd.web.seats): the seat leaves auto-play, and a request open on auto-play's
        short wait (AUTO_LISTEN_S) gets the seat's clock, from now: the person clicked to
        play, and that card is theirs too. A bot comes back by answering; the request open
        then keeps its short wait (AUTO default, bank intact), so that a wrong answer followed
        by silence cannot spend the seat's bank."""
        slot.auto = False
        pending = slot.pending
        if pending is None or not pending.auto:
            return
        now = monotonic()
        pending.auto = False
        pending.sent_at = now  # the time before the player came back is not theirs
        pending.credited = 0.0
        pending.deadline = deadline = now + pending.budget_s(slot.clock)
        if deadline < self._deadline_at:
            self._arm_deadline(deadline)

    def _taken(self, slot: SeatSlot, pending: Pending, action: Action, elapsed: float, credit: float) -> None:
        """The bot's answer to ``pending`` was applied: charge its clock, and move on."""
        slot.clock.charge(elapsed - credit)
        slot.consecutive_defaults = 0
        if slot.auto_played:
            self._auto_ended(slot, "its bot answered again")
        self._close_pending(slot)
        try:  # as _guarded does, without a call through Python on every answer
            self._accepted(slot, action, elapsed, pending.rejected, credit)
        except Exception:
            self._step_failed()

    def _accepted(self, slot: SeatSlot, action: Action, elapsed: float, rejected: int, credit: float) -> None:
        self._after_apply(slot.seat, action, slot.provenance, elapsed, rejected, credit)
        self._advance()

    @staticmethod
    def _action_of(kind: int, answer: bot_pb2.Answer, rules: Ruleset) -> Action:
        """The action ``answer`` names for a request of ``kind`` under ``rules``; InvalidActionError
        if it is not one. A pass naming other than ``rules.pass_count`` cards is refused before any is read
        (the count read only for a pass: a play, nearly every answer, reads nothing more),
        with the engine's words: read first (64 KiB hold ~10,000 cards), each was converted
        and checked on the event loop, ~6-9 ms a message, three per PASS request (an attack pass)."""
        which = answer.WhichOneof("action")
        expected = ANSWER_FIELDS[kind]
        if which != expected:
            raise InvalidActionError(f"this request needs a '{expected}' answer, got {which or 'none'}")
        if which == "play":
            card = answer.play
            suit: int = card.suit
            rank: int = card.rank
            if 1 <= suit <= 4 and 2 <= rank <= 14:  # convert.card_from_wire, inline on every answer
                return _PLAY_ACTIONS[(suit - 1) * 13 + rank - 2]
            return _PLAY_ACTIONS[convert.card_from_wire(card)]  # raises, saying why
        if which == "pass_cards":
            cards = answer.pass_cards.cards
            if len(cards) != rules.pass_count:
                raise InvalidActionError(f"pass exactly {rules.pass_count} cards, got {len(cards)}")
            return PassAction(tuple(convert.cards_from_wire(cards)))
        return MoonAction(convert.moon_option_from_wire(answer.moon))

    def _rejection(
        self, answer: bot_pb2.Answer, code: int, reason: str, retry: bool, slot: SeatSlot
    ) -> bot_pb2.AnswerRejected:
        remaining = 0  # also when no retry is left: the default is played at once
        if retry and slot.pending is not None:
            elapsed, credit = self._open_for(slot.pending)
            spent = elapsed - credit
            # decision_ms + bank_ms can pass the wire's int32 (each is one): an attack pass's
            # huge clock made this raise, and the bot's stream end with OK ("leave")
            remaining = min(WIRE_INT32_MAX, max(0, int((slot.pending.budget_s(slot.clock) - spent) * 1000)))
        return bot_pb2.AnswerRejected(
            match_id=self.id, request_id=answer.request_id, code=code, reason=reason, retry=retry, remaining_ms=remaining
        )

    # -- applying and publishing --------------------------------------------------------

    def _apply(self, seat: int, action: Action, provenance: int, elapsed: float, rejected: int,
               credit: float = 0.0) -> None:
        self.match.apply(seat, action)
        self._after_apply(seat, action, provenance, elapsed, rejected, credit)

    def _after_apply(self, seat: int, action: Action, provenance: int, elapsed: float, rejected: int,
                     credit: float = 0.0) -> None:
        if provenance not in _CHOSEN:
            slot = self.seats[seat]
            slot.consecutive_defaults += 1
            # An AUTO default comes from auto-play, so it starts nothing; and if the seat's
            # player answered during its wait (slot.auto is False), auto-play has ended, as
            # docs/protocol.md says, and the next request waits on the seat's clock.
            if slot.consecutive_defaults >= self.policy.auto_after and provenance != P.PROVENANCE_AUTO:
                slot.auto = True
        deal_number = self.match.history[-1][0]
        think_ms = int(elapsed * 1000)
        credit_ms = int(credit * 1000)
        if think_ms > WIRE_INT32_MAX:  # only under a clock past the int32 (see _rejection)
            think_ms = WIRE_INT32_MAX
            credit_ms = min(credit_ms, WIRE_INT32_MAX)
        # Kept as a plain tuple; the record's messages are built once, at the end.
        self.decisions.append(Decision(deal_number, seat, action, provenance, think_ms, rejected, credit_ms))
        self._publish(deal_number, seat, action, provenance)

    def _publish(self, deal_number: int, seat: int, action: Action, provenance: int) -> None:
        """Tell the table what just happened (events, in order), and the encoder what its
        cached request parts no longer show; at a deal's end, send the seats their events,
        checkpoint, and deal on."""
        deal = self._current_deal  # the deal the action belonged to
        log = self.log_events
        encoder = self._encoder
        if type(action) is _PLAY_ACTION:
            log.add_encoded(EVENT_CARD_PLAYED, encoder.card_played(deal, deal_number, seat, action.card, provenance))
            if deal.hearts_broken and not self._broken:
                self._broken = True
                encoder.public_changed()
                log.add(P.Event(hearts_broken=P.HeartsBroken(deal_number=deal_number, trick_number=deal.broken_trick)))
            if not deal.trick:  # the card completed the trick
                log.add_encoded(EVENT_TRICK_WON, encoder.trick_won(deal, deal_number))
        elif isinstance(action, PassAction) and deal.phase is not _PASSING:  # every seat has passed
            per_seat, hidden, revealed = encoder.passes(deal)  # spectators: no cards, no giver (revealed: hands)
            log.add_private_encoded(EVENT_CARDS_PASSED, per_seat, hidden, revealed)
        if deal.is_over:
            totals = list(self.match.totals)
            score = encoder.deal_scored(len(self.match.results) - 1, self.match.results[-1], totals)
            log.add(P.Event(deal_scored=P.DealScored(score=score, totals=totals)))
            self._update_releases()
            if self.match.is_over:
                self._flush_seats()
            else:
                # The seats' deal-end events go with their first request of the next deal
                # where they act at once (every seat's pass), and alone to the others once
                # the match has moved as far as it goes, or before a house seat plays a card
                # (_advance): one message fewer per seat and deal, never later than the next
                # deal's first card.
                self._deal_end_due = True
                if monotonic() - self._last_checkpoint >= CHECKPOINT_EVERY_S:
                    self._save_checkpoint()
                self._next_deal()
        if self.watchers:
            self._wake_watchers()

    def _start_events(self) -> None:
        n = self.rules.players
        started = []
        for s in range(n):
            started.append(P.Event(match_started=self._match_started(s)))
        self.log_events.add_private(started, P.Event(match_started=self._match_started(-1)), P.Event(match_started=self._match_started(-1)))
        self._start_deal()

    def _match_started(self, seat: int) -> game_pb2.MatchStarted:
        return P.MatchStarted(
            match_id=self.id, ruleset=self._ruleset_pb, format=convert.format_to_wire(self.match.format),
            seats=self.seat_infos, your_seat=seat, clock=self.policy.to_wire())

    def _next_deal(self) -> None:
        """Deal the next deal, or hold the match until its shuffle is in the ledger."""
        reserved = self.reserved_deals
        if reserved is not None and self.match.deal.number >= reserved:
            self._holding = True
            self._reserve_more()
            return
        self._start_deal()

    def _reserve_more(self) -> None:
        if self._reserving is None and self.reserved_deals is not None:
            self._reserving = self._loop.create_task(self._reserve(self.reserved_deals))

    async def _reserve(self, first: int) -> None:
        """Put the next chunk of a game's shuffles in the ledger; a refusal (a shuffle dealt
        before: a drawn seed's 2**-63 chance) or a store failure ends the match aborted."""
        try:
            await self.arena.reserve_shuffles(self, first, shuffles.GAME_CHUNK)
        except Exception as exc:
            self.log.warning("could not reserve the next shuffles; aborting the match", exc_info=True)
            reason = "a shuffle of this match was dealt before" if isinstance(exc, shuffles.ShuffleRepeated) else (
                "server error: the next shuffles could not be reserved")
            self.stop(P.MATCH_STATUS_ABORTED, reason)
            return
        finally:
            self._reserving = None
        self.reserved_deals = first + shuffles.GAME_CHUNK
        if self._holding and self._stopping is None and not self.match.is_over:
            self._holding = False
            self._guarded(self._deal_held)

    def _deal_held(self) -> None:
        self._start_deal()
        self._advance()

    def _start_deal(self) -> None:
        deal = self.match.deal
        if self.reserved_deals is not None and deal.number + shuffles.GAME_PREFETCH >= self.reserved_deals:
            self._reserve_more()
        self._current_deal = deal
        self._broken = False
        # Each seat's DealStarted shows its own hand; spectators get none, or all as Hands.
        per_seat, spectator, revealed = self._encoder.deal_started(deal)
        self.log_events.add_private_encoded(EVENT_DEAL_STARTED, per_seat, spectator, revealed)
        self.deal_starts.append(self.log_events.last_sequence)

    def _notice(self, slot: SeatSlot, provenance: int) -> None:
        """Tell the table a default was played. The log gets one line per default, except
        that a seat on auto-play (its bot stopped answering: left, crashed, hung) is
        summarised: one line when auto-play starts and one when it ends (_auto_ended)."""
        seat = slot.seat
        why = {
            P.PROVENANCE_TIMEOUT: "ran out of time",
            P.PROVENANCE_ILLEGAL: "gave too many rejected answers",
            P.PROVENANCE_DISCONNECT: "is disconnected",
            P.PROVENANCE_AUTO: "is being auto-played after repeated defaults",
        }.get(provenance, "")
        if not why:
            return
        if provenance == P.PROVENANCE_AUTO:
            slot.auto_played += 1
            if slot.auto_played == 1:
                self.log.info("auto-play started: the seat's decisions are played by default without waiting "
                              "until its bot answers again", seat=seat, bot=slot.name,
                              after_defaults=slot.consecutive_defaults - 1)
        else:
            self.log.info("default played", seat=seat, bot=slot.name, why=PROVENANCE_NAMES[provenance])
        self.log_events.add(P.Event(notice=P.Notice(
            text=f"seat {seat} {why}; the server played its default", seat=seat, provenance=provenance)))

    def _auto_ended(self, slot: SeatSlot, how: str) -> None:
        self.log.info("auto-play ended", seat=slot.seat, bot=slot.name, how=how, auto_played=slot.auto_played)
        slot.auto_played = 0

    # -- messages to bots -----------------------------------------------------------------

    def _request(self, slot: SeatSlot, pending: Pending, spent_ms: int) -> bytes:
        """The serialized DecisionRequest: everything the seat needs, from its own and public
        state only (assembled by the encoder). ``spent_ms``: the time the request has been
        open (0 unless sent again), so that its clock shows what is left."""
        deal = self.match.deal
        seat = slot.seat
        phase = deal.phase
        # The legal cards as a mask (legal_plays / passable, without building the tuple).
        if phase is _PLAYING:
            turn: int = deal.turn
            legal = deal.legal_mask() if seat == turn else 0
            leader = deal.trick_leader if deal.trick else turn
        else:
            legal = deal.hands[seat] if phase is _PASSING and deal.passed[seat] is None else 0
            leader = -1
        clock = slot.clock
        return self._encoder.request(
            deal, seat, pending.request_id, pending.kind, legal, leader,
            clock.left(spent_ms) if spent_ms > 0 else (clock.decision_ms, clock.bank_ms),
            self.log_events.last_sequence,
            pending.default.option if pending.kind == _MOON else None,  # type: ignore[union-attr]
        )

    def _send(self, slot: SeatSlot, request: bytes | None) -> BotSession | None:
        """Flush the seat's undelivered events, with ``request`` if given, as one message;
        return the session it went to."""
        session = self._sessions.get(slot.name)
        if session is None or not session.connected:
            return None
        if not slot.played_by(session):
            return None  # another version of the bot: to this seat, no stream (Arena.connect)
        if slot.catching_up is session:
            return session  # it gets everything, this request included, at its turn (catch_up)
        events = self.log_events.wire_for_seat(slot.seat, slot.delivered)
        if not events and request is None:
            return session
        slot.delivered = self.log_events.last_sequence
        pending = slot.pending
        if request is not None and pending is not None:  # its request, as last sent: an answer confirms these events
            pending.through = slot.delivered
        session.send(self._encoder.update(slot.seat, events, request))
        return session

    def deliver(self, slot: SeatSlot) -> None:
        """Send the seat its undelivered events now. A bot gets them batched with its next
        request; a person's seat (heartsd.web) follows the table as each card lands."""
        self._send(slot, None)

    def resume(self, slot: SeatSlot, after: int) -> None:
        """Re-send everything after ``after`` and the pending request (reconnect, resume)."""
        self._start_after(slot, after)
        pending = slot.pending
        if pending is not None:  # rebuilt: the clock shows what is left
            elapsed, credit = self._open_for(pending)
            spent = elapsed - credit  # the server's stalls are not spent
            self._send(slot, self._request(slot, pending, int(spent * 1000)))
        else:
            self._send(slot, None)

    def catch_up(self, slot: SeatSlot, session: BotSession) -> bool:
        """Send the seat, whose stream ``session`` is catching up on it (catchup.py), the
        next part of what it has not been sent: EVENTS_PER_PART events, or the rest with
        the pending request; True once it is up to date (from then on its sends are the
        usual ones)."""
        if self.log_events.last_sequence - slot.delivered > EVENTS_PER_PART:
            until = slot.delivered + EVENTS_PER_PART
            session.send(self._part(slot.seat, slot.delivered, until))
            slot.delivered = until
            return False
        slot.catching_up = None
        self.resume(slot, slot.delivered)
        return True

    def _part(self, seat: int, after: int, until: int) -> bytes:
        """An update of the seat's events after ``after`` up to ``until``, with no request:
        one part of what it missed (catch_up, _keep_missed)."""
        return self._encoder.update(seat, self.log_events.wire_for_seat(seat, after, until), None)

    def rewind_to(self, slot: SeatSlot, after: int) -> None:
        """What goes to the seat from now on starts after event ``after`` (a bot's resume)."""
        self._start_after(slot, after)

    def rewind(self, slot: SeatSlot) -> None:
        """The seat's bot (or person) has a new stream: whatever goes to it from now on,
        starting with the first flush, starts where :meth:`replay_from` says. Done the
        moment the session is registered, before its welcome is written: a flush in
        between would otherwise send from the old point, and the replay after it come
        too late for a client that drops what is not newer than what it has."""
        self._start_after(slot, self.replay_from(slot))

    def _start_after(self, slot: SeatSlot, after: int) -> None:
        """The seat's stream is back and gets, from now on, what follows event ``after``."""
        slot.away_since = None
        slot.delivered = max(0, min(after, self.log_events.last_sequence))
        pending = slot.pending
        if pending is not None and pending.grace_timer is not None:
            pending.grace_timer.cancel()
            pending.grace_timer = None

    @staticmethod
    def replay_from(slot: SeatSlot) -> int:
        """Where a replay starts: after the events of the last request the seat answered,
        the last point the server knows its bot read (later ones may have died with a
        stream; clients drop by sequence those they did get)."""
        return min(slot.delivered, slot.confirmed)

    def disconnected(self, slot: SeatSlot) -> None:
        slot.away_since = monotonic()
        if slot.pending is not None:
            self._arm_grace(slot, self._grace_s)

    # -- the end ----------------------------------------------------------------------------

    def _record(self, result: game_pb2.MatchResult) -> spectator_pb2.MatchRecord:
        return spectator_pb2.MatchRecord.FromString(self._record_bytes(result))

    def _record_bytes(self, result: game_pb2.MatchResult) -> bytes:
        """The MatchRecord so far, serialized (its growing parts are encoded once each)."""
        match = self.match
        head = spectator_pb2.MatchRecord(
            match_id=self.id,
            ruleset=self._ruleset_pb,
            format=convert.format_to_wire(match.format),
            seed=match.seed,
            seats=self.seat_infos,
            clock=self.policy.to_wire(),
            result=result,
        )
        recorded = self._recorded
        self._recorded = len(self.decisions)
        return self._encoder.record(head, match, [d.to_bytes() for d in self.decisions[recorded:]])

    def _save_checkpoint(self) -> None:
        """At a deal's end, at most every CHECKPOINT_EVERY_S: store the record so far, so a
        crash keeps it. (The record grows with the match, so every deal would cost O(n^2).)"""
        self._last_checkpoint = monotonic()
        totals = list(self.match.totals)
        deals = len(self.match.results)
        running = convert.result_to_wire(None, P.MATCH_STATUS_RUNNING, "running", totals, deals)
        record = self._record_bytes(running)
        # The host stores one match's checkpoints in the order given (arena: CheckpointWriter's
        # batches), so only the latest is awaited, by _finish.
        self._checkpoint = self._loop.create_task(self.arena.checkpoint(self.id, record, deals, totals))

    async def _finish(self) -> None:
        """Store the record, then announce the end. Whatever fails, the match ends: if
        the result cannot be stored it is announced as aborted, never as a result."""
        match = self.match
        if self._stopping is not None and not match.is_over:
            status, reason = self._stopping
        else:
            status, reason = P.MATCH_STATUS_FINISHED, "completed"
        for slot in self.seats:
            self._close_pending(slot)
            if slot.auto_played:
                self._auto_ended(slot, "the match ended")
        if self._house_timer is not None:
            self._house_timer.cancel()
        if self._deadline_timer is not None:
            self._deadline_timer.cancel()
        totals = list(match.totals)
        status_name = STATUS_NAMES[status]
        try:
            outcome = match.outcome if status == P.MATCH_STATUS_FINISHED else None
            result = convert.result_to_wire(outcome, status, reason, totals, len(match.results))
            record = self._record(result)
            events = self.log_events.revealed_wire(WATCH_EVENTS, P.Event(match_ended=P.MatchEnded(result=result)))
            if self._checkpoint is not None:
                await asyncio.gather(self._checkpoint, return_exceptions=True)
            await self.arena.store_result(self.id, status_name, reason, record, len(match.results), totals, self.rated,
                                          events)
        except Exception:
            self.log.exception("could not store the match; announcing it as aborted")
            status, status_name, reason = P.MATCH_STATUS_ABORTED, "aborted", "server error: the result could not be stored"
            result = convert.result_to_wire(None, status, reason, totals, len(match.results))
        self.status = status
        self.result = result
        self.arena.forget(self)  # its bots are free for new matches before they hear it ended
        self.log_events.add(P.Event(match_ended=P.MatchEnded(result=result)))
        self._update_releases()
        self._flush_seats()
        self._keep_missed()
        self._wake_watchers()
        self.finished.set()
        # A set's other tables may still be dealing this seed's shuffles: its seed is in the
        # record, served once the whole set is over, and not in a log line before.
        seed = {} if self.set_id else {"seed": match.seed}
        self.log.info("match ended", status=status_name, reason=reason, totals=totals, deals=len(match.results),
                      set_id=self.set_id or None, **seed)

    def _keep_missed(self) -> None:
        """The seats whose bot is away at the end (or whose stream the last flush ended:
        its outbox overflowed), and those whose stream is still being caught up: their
        missed events, up to match_ended, wait for its next hello (Arena.missed), or for
        the catching-up stream's turn, which no longer holds this runner for them. With
        nothing kept for later (``missed_events_hold_s`` 0) such a seat leaves its queue all
        the same: a stream that reads nothing would otherwise hold every ended match."""
        missed = self.arena.missed
        keep = missed.hold_s > 0
        for slot in self.seats:
            if slot.house is not None or slot.provenance != P.PROVENANCE_BOT:
                continue
            session = self._sessions.get(slot.name)
            catching_up = slot.catching_up is not None
            if keep and (catching_up or session is None or not session.connected or not slot.played_by(session)):
                last = self.log_events.last_sequence
                parts = [self._part(slot.seat, start, min(start + EVENTS_PER_PART, last))
                         for start in range(self.replay_from(slot), last, EVENTS_PER_PART)]
                missed.keep(slot.name, self.id, slot.seat, parts, slot.version)
            if catching_up:
                self.arena.kept_missed(self, slot)
                slot.catching_up = None

    def _update_releases(self) -> None:
        """Tell the releases (this match's or its set's) what this table has done so far."""
        table = self.table
        table.deals_completed = self.deals_completed
        table.playing = self.playing
        self.releases.update()

    def _wake_watchers(self) -> None:
        for wake in self.watchers:
            wake.set()
