"""The arena: connected bots, running matches, and the operations on them.

Servicers call into this object; it owns the session registry, the match runners
and the store, and it is where match creation is validated.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import secrets
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import structlog

from hearts_engine import MatchFormat, Ruleset, RulesetError, preset
from hearts_engine.match import FormatKind
from hearts_engine.presets import PRESETS
from heartsbot.proto import admin_pb2, bot_pb2, game_pb2, spectator_pb2
from heartsbot.strategies import KNOWN as KNOWN_STRATEGIES
from heartsbot.strategies import known_strategy, make_strategy

from heartsbot import convert

from . import shuffles
from .budgets import Budgets
from .catchup import CatchUp, low_water
from .checkpoints import CheckpointWriter
from .clock import SeatClock
from .config import Settings
from .lag import LoopMonitor
from .memo import SharedValues
from .runner import ClockPolicy, MatchRunner, SeatSlot
from .seated import Seated
from .missed import MissedEndings
from .sessions import MAX_ID_CHARS, BotSession, SessionRegistry, echo_id
from .wire import PlayAnswer
from .shuffles import ShuffleRepeated
from .slots import Reservation, SlotBook
from .spelling import spelling_key
from .store import NewMatch, Store, TournamentOver
from .store_health import StoreHealth, failure_text, is_store_failure
from .thinking import HouseThinkers
from .tokens import TokenRegistry, TokenState

P = game_pb2
log = structlog.get_logger("heartsd.arena")
# Storing a finished match is tried again after these pauses, then the last attempt's
# error aborts it (its record lost). ~70 s: a PostgreSQL failover takes 5-30 s, and before
# (0.2, 1 and 3 s; an operator's pass) every match that ended during one lost its record.
# While the daemon stops, the first STORE_RETRIES_STOPPING only.
LADDER_STANDINGS_SPACING = 10.0  # the ladder's standings take at most a tenth of the time (memo.SharedValues)
STORE_RETRY_DELAYS_S = (0.2, 1.0, 3.0, 5.0, 10.0, 20.0, 30.0)
STORE_PROBE_S = 10.0  # while the store fails: how often a write asks whether it works again (store_health.py)
STORE_RETRIES_STOPPING = 3
# How often matches whose result could not be stored are tried to be marked aborted in the
# store while the daemon runs (before, only at a clean stop: meanwhile the row said running,
# and `admin watch` sent the organiser to "another daemon" that did not exist).
UNSTORED_RETRY_S = 10.0
UNSTORED = "server error: the result could not be stored"  # the reason such a match is announced with
_TOO_LONG = f"an id longer than any id this server issues ({MAX_ID_CHARS} characters) is not echoed"
SEED_DRAWS = 5  # seeds drawn for a match before giving up (each repeat is a 2**-63 chance)
# At shutdown, after matches were aborted with requests open: their bots' answers are read
# until none comes for SHUTDOWN_QUIET_S (at most SHUTDOWN_LISTEN_S) before the streams end.
SHUTDOWN_QUIET_S, SHUTDOWN_LISTEN_S = 0.3, 2.0


async def wait_unless_hurried(tasks: Sequence[asyncio.Future[Any]], seconds: float,
                              hurry: asyncio.Event | None) -> None:
    """Until ``tasks`` are done, ``seconds`` have passed, or ``hurry`` is set (at once if it is).

    >>> async def demo() -> bool:
    ...     hurry = asyncio.Event()
    ...     hurry.set()
    ...     never = asyncio.get_running_loop().create_future()
    ...     await wait_unless_hurried([never], 3600, hurry)
    ...     return never.done()
    >>> asyncio.run(demo())
    False
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    hurried = asyncio.ensure_future(hurry.wait()) if hurry is not None else None
    waiting: set[asyncio.Future[Any]] = set(tasks)
    try:
        while waiting and (left := deadline - loop.time()) > 0 and not (hurried and hurried.done()):
            _, waiting = await asyncio.wait([*waiting, *([hurried] if hurried else [])], timeout=left,
                                            return_when=asyncio.FIRST_COMPLETED)
            waiting.discard(hurried)  # type: ignore[arg-type]
    finally:
        if hurried is not None:
            hurried.cancel()


class ArenaError(Exception):
    """A refused operation; ``kind`` picks the gRPC status in one place (services.py).
    ``public``: the same, told to anyone (TournamentTable.waiting), where ``message`` is for
    the caller who asked (an admin) and the log; empty when there is no such version.

    ``code`` names a refusal of a fixed set (empty: none), with ``params``, the figures its
    text names (a bot's name; ``waited_s``, the seconds a refusal "waited N s for the seats:"
    waited before it; ``not_free``, the code of why the seats were not free, which a
    shutdown that cut a wait for them short says in brackets): what the web front's pages
    say it by, in their language (i18n.js), where the text is English. Named here, where
    the refusal is made, so that no reader has to recognise the English; gRPC sends the
    text alone, as before."""

    def __init__(self, kind: str, message: str, public: str = "", code: str = "",
                 params: Mapping[str, str] | None = None) -> None:
        message = clipped(message)
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.public = public
        self.code = code
        self.params = dict(params or {})


# A refusal's text, in UTF-8 bytes; ours are far shorter, a caller's echoed input need not
# be. gRPC sends it percent-encoded (three bytes for each one outside printable ASCII), and
# past 8 KiB of metadata a client may refuse it and report RESOURCE_EXHAUSTED instead.
MAX_MESSAGE_BYTES = 1000
# A match's fixed deals, at most (CreateMatch; a tournament's deals_per_match too). Before the
# first card every planned deal's shuffle is fingerprinted (shuffles.py): 2**31-1 deals never
# started, took a worker thread and its memory for good (an attack pass).
MAX_FIXED_DEALS = 1000
# The classic option's game length: a game ends once a total reaches it, and some total
# gains at least 26/4 a deal, so a game to 1,000 lasts at most about 150 deals. Unbounded
# (an attack pass), an admin's 2,000,000,000 made a match that never ends.
MAX_TARGET = 1000
# CreateMatchRequest.options: each field and the preset keyword it sets (hearts_engine's
# presets.py). A field applies only to the presets that take its keyword (Preset.options).
OPTION_KEYWORDS = (("target", "target"), ("hartenjagen_passing", "passing"),
                   ("moon_requires_bonus", "moon_requires_bonus"))
HOUSE_PASS_S = 0.5  # the house-match loop's pause between passes
HOUSE_RETRY_MAX_S = 30.0  # its longest pause after failed starts (doubling from HOUSE_PASS_S)


def utf8_prefix(text: str, limit: int) -> str:
    """The longest start of ``text`` within ``limit`` bytes of UTF-8: a character cut in
    two is dropped whole (a status or close reason must stay text).

    >>> utf8_prefix("né", 2)
    'n'
    """
    return text.encode()[:limit].decode(errors="ignore")


def clipped(message: str, limit: int = MAX_MESSAGE_BYTES) -> str:
    """``message``, cut to ``limit`` bytes of UTF-8 (never inside a character) with a note
    of how much was cut. Refusals quote what the caller sent (an id, a name); before (an
    attack pass), NOT_FOUND for a 60,000-character match id repeated it whole, past what
    common clients accept as a status message; and clipped to 1,000 characters, 1,000
    four-byte ones still came to 12 KB on the wire, and most such calls failed
    RESOURCE_EXHAUSTED instead of NOT_FOUND (a later attack pass).

    >>> short = clipped("m-" + "é" * 600)  # two bytes each: 499 of them fit after "m-"
    >>> len(short.encode()), short[-25:]
    (1025, 'éé… (101 more characters)')
    """
    if len(message.encode()) <= limit:
        return message
    kept = utf8_prefix(message, limit)
    return f"{kept}… ({len(message) - len(kept)} more characters)"


def quoted(value: str, limit: int = 64) -> str:
    """A caller's string as a refusal quotes it: repr'd, clipped past ``limit`` characters
    (with its length)."""
    if len(value) <= limit:
        return repr(value)
    return f"{value[:limit] + '…'!r} ({len(value)} characters)"


@dataclass(frozen=True)
class SeatProblem:
    """Why a bot cannot be seated now. ``detail`` names what only the asker and the operator
    may see (the bot's live version, its drain reason in its owner's words, its token's
    state, its slots and matches); ``public`` only what the roster and the match list show
    already. Before (an attack pass), the public waiting text of a tournament table carried
    the detail: a bot's unreleased version string, and a drain reason its owner could write
    on the leaderboard page. A revoked token reads as not connected: a text of its own
    would tell the token's state."""

    detail: str
    public: str
    code: str  # ArenaError.code: the public text's name, with ``params`` its figures
    params: Mapping[str, str]
    busy: bool = False  # only its match slots are taken: it comes free as its matches end

    @classmethod
    def plain(cls, text: str, code: str, params: Mapping[str, str]) -> SeatProblem:
        """A problem anyone may read as it is."""
        return cls(text, text, code, params)

    def error(self, kind: str, detail: str | None = None, public: str | None = None,
              **figures: str) -> ArenaError:
        """An ArenaError of ``kind`` for this problem: its texts (or ``detail`` and
        ``public``, which say more around them), its code, and its figures with those the
        texts add (``figures``: a seat's wait, ``waited_s``)."""
        return ArenaError(kind, self.detail if detail is None else detail, self.public if public is None else public,
                          self.code, {**self.params, **figures})


def invalid(message: str) -> ArenaError:
    return ArenaError("invalid", message)


def precondition(message: str) -> ArenaError:
    return ArenaError("precondition", message)


class SeedRefused(ArenaError):
    """An explicit seed that would deal a shuffle dealt before, in a strict match."""


class TournamentStopped(ArenaError):
    """A tournament's match not started: the tournament was cancelled or had ended by the
    time the match would have been written (store.TournamentOver)."""


def house_seed(seed: int, seat: int) -> int:
    """The seed of a house strategy's generator at ``seat`` of a match dealt from ``seed``:
    a hash, never the seed itself. The match's seed gives every hand, and a house bot's
    choices can be watched (a random bot's cards in every ladder match): seeded with
    ``seed + seat`` (an attack pass), they were plain arithmetic of it.

    >>> house_seed(77, 1) == house_seed(77, 1) != house_seed(78, 0)
    True
    """
    return int.from_bytes(hashlib.sha256(b"hearts-arena/v1/house/%d/%d" % (seed, seat)).digest()[:8], "big")


def _remote_bots(runner: MatchRunner) -> set[str]:
    """The bots a match seats over the wire (house seats are not bots' slots)."""
    return {slot.name for slot in runner.seats if slot.house is None}


def not_found(message: str) -> ArenaError:
    return ArenaError("not_found", message)


HUMAN_PREFIX = "human:"  # a person's seat (heartsd.web): never a bot's name


def _draining(bot: str, reason: str) -> str:
    because = f" ({reason})" if reason else ""
    return f"bot {bot!r} is draining{because}: it finishes its running matches and takes no new one"


@dataclass(frozen=True)
class SeatRequest:
    bot: str | None = None
    house: str | None = None
    human: str | None = None  # "human:<id>": a person plays the seat through heartsd.web


class Arena:
    runner_class: type[MatchRunner] = MatchRunner  # the conformance kit runs arranged matches

    def __init__(self, settings: Settings, store: Store, budgets: Budgets | None = None) -> None:
        self.settings = settings
        self.store = store
        self.checkpoints = CheckpointWriter(store.checkpoint_many)
        self.sessions = SessionRegistry()
        self.untaken_answers = 0  # answers no open request took (late, stale, unknown): see shutdown
        # Seats' missed events of matches that ended while their bot was away (missed.py).
        self.missed = MissedEndings(settings.missed_events_hold_s, settings.missed_events_max_bytes)
        self.runners: dict[str, MatchRunner] = {}
        self._catching_up: dict[BotSession, CatchUp] = {}  # streams still owed what they missed (catchup.py)
        self._tasks: set[asyncio.Task[None]] = set()
        self._starting: dict[str, MatchRunner] = {}  # created, their row being written (create_match)
        self._seated: Seated[MatchRunner] = Seated()  # the matches of each bot, those being started too
        self._starts: set[asyncio.Future[MatchRunner]] = set()
        self.store_health = StoreHealth()  # whether the store takes writes (GetServerStatus, the health check)
        self._retrying: set[str] = set()  # matches whose result is being tried again
        self._unstored: set[str] = set()  # matches whose result could not be stored (a full disk)
        self._marking: asyncio.Task[None] | None = None  # marks them aborted once the store takes writes
        self._probing: asyncio.Task[None] | None = None  # writes now and then while the store fails
        self._stopping = asyncio.Event()  # set with accepting = False: store retries stop pausing
        self._house_task: asyncio.Task[None] | None = None
        self.slots = SlotBook()  # reservations of bots' match slots (slots.py)
        self.purposes: dict[str, str] = {}  # match id -> what started it: admin, ladder, house, tournament ...
        # bot -> (tournament, version) of each tournament this daemon directs that froze the
        # bot's version at its start (set by tournaments.Tournaments): see version_conflict.
        self.frozen_by_tournaments: Callable[[str], list[tuple[str, str]]] = lambda bot: []
        self.accepting = True
        memory = store.path in (":memory:", "sqlite:///:memory:")  # a second connection would see another database
        self.tokens = TokenRegistry(settings.bot_tokens, url=None if memory else store.path,
                                    shared=store.db if memory else None)
        self.tokens.on_change = self.check_tokens
        self._shadowed_warned: list[str] = []  # the shadowed ladder registrations last warned of (check_tokens)
        self._twins_warned: list[tuple[str, str]] = []  # and the names that differ only in case
        self._connects = 0  # sessions registered so far (connect)
        self._tokens_checked: tuple[int, int] | None = None  # what check_tokens' last scan saw
        # Calls at once per class of caller (budgets.py); given when the server that counts
        # them was made first (serve binds its port before the store and the arena exist).
        self.budgets = budgets or Budgets.from_settings(settings)
        self.loop_monitor = LoopMonitor()  # started with the server or the first match
        # Worker processes for house strategies that search (thinking.py), started lazily.
        self.thinkers = HouseThinkers(settings.think_processes)
        # The ladder's public views (standings, rating histories), rebuilt once per new
        # result for every caller of the gRPC services and the web front alike (memo.py);
        # the standings, which read every result, at most a tenth of the time.
        self.ladder_views = SharedValues()
        self.ladder_standings = SharedValues(spacing=LADDER_STANDINGS_SPACING)

    # -- bots -------------------------------------------------------------------------

    async def authenticate(self, token: str) -> tuple[str, str] | None:
        """(bot, token hash) for a bot token, from memory (tokens.py). Unless the token is a
        configured one, the answer waits for a read of the ladder's bots begun after the
        call: a bot added a moment ago gets in, one revoked a moment ago does not. Calls
        arriving together share that read, so guessing tokens never loads the database."""
        found = self.tokens.lookup(token)
        if found is not None and self.tokens.is_configured(found[1]):
            return found
        if not await self.tokens.refreshed():
            return found  # the store does not answer: the last view decides
        found = self.tokens.lookup(token)
        if found is None and (name := self.tokens.shadowed(token)) is not None:
            raise ArenaError("unauthenticated", f"bot {name!r} is configured in this daemon's [bot_tokens]: a ladder "
                             f"registration under its name (`heartsd ladder add-bot {name}`) signs nothing in; "
                             "register the bot under another name")
        return found

    def check_tokens(self) -> None:
        """The registry saw the ladder's tokens change: end the sessions of revoked bots at
        once (their seats go the disconnect way), and hand rotated ones to :meth:`token_rotated`.

        Every match that seats a ladder bot calls it, and a scan of every session per match
        made a matchmaking tick that seats many bots quadratic (1,000 matches for 4,000 bots
        read 4 million token states on the event loop). With the same tokens as the last scan
        and no session registered since, there is nothing new to find: a session's token was
        looked up in a view at least as old as the newest scan's, or it connected after it."""
        checked = (self.tokens.changes, self._connects)
        if checked == self._tokens_checked:
            return
        self._tokens_checked = checked
        shadowed = self.tokens.shadowed_registrations()
        if shadowed and shadowed != self._shadowed_warned:
            log.warning("ladder registrations under the names of configured bots sign nothing in; register those "
                        "bots under other names (or revoke the registrations)", bots=shadowed)
        self._shadowed_warned = shadowed
        twins = self.tokens.case_twins()
        if twins and twins != self._twins_warned:
            log.warning("configured bots and ladder registrations whose names differ only in case: on the "
                        "leaderboard and in tournaments one passes for the other; rename one of each pair",
                        pairs=[f"{a} / {b}" for a, b in twins])
        self._twins_warned = twins
        for session in self.sessions.all():
            state = self.tokens.state(session.bot, session.token_hash)
            if state is TokenState.REVOKED:
                log.info("ending the session of a revoked bot", bot=session.bot)
                self.end_session(session, "this bot's token was revoked by an organiser", "unauthenticated")
            elif state is TokenState.ROTATED:
                self.token_rotated(session)

    def token_refusal(self, bot: str, hashed: str) -> str:
        """Why a stream whose token was good when it opened may not be welcomed ("" if it
        may): the token was revoked, or rotated, before the stream said hello. A revocation
        ends the sessions registered when the registry sees it (:meth:`check_tokens`), so a
        bot that held back a second stream's hello until its token was revoked was welcomed
        after all, and handed its running matches to play on with the revoked token (an
        attack pass). As a new stream with that token would be: a rotated token too, which
        opens no new stream."""
        state = self.tokens.state(bot, hashed)
        if state is TokenState.REVOKED:
            return "this bot's token was revoked by an organiser"
        if state is TokenState.ROTATED:
            return "this bot's token was rotated: connect with its new token"
        return ""

    def token_rotated(self, session: BotSession) -> None:
        """The bot of ``session`` was given a new token (``heartsd ladder rotate``); the
        session still runs on the old one. It drains: it finishes its running matches
        and takes no new one, then ends cleanly (the old token opens no new stream)."""
        self.drain(session, "token rotated", bot_pb2.DRAIN_CAUSE_TOKEN_ROTATED)

    def end_session(self, session: BotSession, reason: str, status: str) -> None:
        """End a bot's stream with ``status`` (an ArenaError kind) and ``reason``."""
        session.close(reason, status)
        self.disconnect(session)

    def stream_refused(self, code: Any, details: str) -> None:
        """A bot stream was ended before its welcome, with ``code`` (a grpc.StatusCode) and
        ``details``. Nothing to do here: the conformance kit's arena keeps them to tell a
        client author why their client's stream was refused."""

    def connect(self, session: BotSession) -> list[bot_pb2.ActiveMatch]:
        """Register a session (replacing an older one); its seats replay from what surely
        reached the bot (runner.rewind), from now on, as the stream reads (catchup.py):
        :meth:`resume_all` starts once the welcome is written."""
        self.sessions.open(session)
        self._connects += 1
        self.slots.changed()
        session.outbox.low_water = low_water(session.max_outbox_bytes)
        catch_up = self._catch_up(session)
        active = []
        for runner in self._running(session.bot):
            for slot in runner.seats_of(session.bot):
                if not slot.played_by(session):
                    # Another version than its tournament froze: the seat's bot is away, as
                    # if this stream did not exist (grace, then its defaults), and the stream
                    # hears nothing of the match. Its frozen version takes the seat back.
                    if slot.away_since is None:
                        runner.disconnected(slot)
                    continue
                runner.rewind(slot)
                catch_up.add_seat(runner, slot)
                active.append(bot_pb2.ActiveMatch(
                    match_id=runner.id, seat=slot.seat, last_sequence=runner.log_events.last_sequence,
                    request_pending=slot.pending is not None))
        return active

    def resume_all(self, session: BotSession) -> None:
        """After the welcome: send every active match's missed events and pending request
        (owed since :meth:`connect`), and what the bot missed of matches that ended while
        it was away, as the stream reads them."""
        catch_up = self._catch_up(session)
        if session.connected and self.sessions.get(session.bot) is session:  # else they wait for the next
            for key in self.missed.keys(session.bot, session.version):
                catch_up.add_missed(key)
        catch_up.feed()

    def _catch_up(self, session: BotSession) -> CatchUp:
        """What ``session``'s stream is still owed (catchup.py)."""
        catch_up = self._catching_up.get(session)
        if catch_up is None:
            catch_up = self._catching_up[session] = CatchUp(session, self.missed, self._caught_up)
        return catch_up

    def _caught_up(self, catch_up: CatchUp) -> None:
        """Everything the stream was owed has been handed to it: a draining session whose
        matches are over may end now (its last messages were queued behind what it was owed)."""
        session = catch_up.session
        if self._catching_up.get(session) is catch_up:
            del self._catching_up[session]
        self._end_if_drained(session)

    async def think(self, strategy: Any, view: Any, time_limit_s: float | None = None) -> Any:
        """A searching house strategy's choice, made in a worker process (MatchHost)."""
        return await self.thinkers.think(strategy, view, time_limit_s)

    def kept_missed(self, runner: MatchRunner, slot: SeatSlot) -> None:
        """A seat being caught up when its match ended: what it is owed is in ``missed``
        now, and its stream's catch-up takes it from there (MatchHost)."""
        catch_up = self._catching_up.get(slot.catching_up) if slot.catching_up is not None else None
        if catch_up is not None:
            catch_up.kept_missed(runner, slot)

    def disconnect(self, session: BotSession) -> None:
        catch_up = self._catching_up.pop(session, None)
        if catch_up is not None:
            catch_up.release()
        if not self.sessions.close(session):
            return  # replaced by a newer session: nothing is away
        for runner in self._running(session.bot):
            for slot in runner.seats_for(session):  # the others were away all along (connect)
                runner.disconnected(slot)

    def drain(self, session: BotSession, reason: str, cause: int) -> None:
        """The session finishes its running matches and takes no new one; it ends (OK)
        when the last has ended, at once if there is none. Idempotent. ``cause``: a
        ``DrainCause``, sent with ``reason`` in every ``draining``."""
        if session.drain_reason or not session.connected:
            return
        session.drain_reason = reason
        session.drain_cause = cause
        active = self._playable_by(session)
        log.info("bot draining", bot=session.bot, session=session.id, reason=reason, active=len(active))
        if active:
            session.send(bot_pb2.PlayResponse(draining=bot_pb2.Draining(reason=reason, active_matches=active,
                                                                        cause=cause)))
        self._end_if_drained(session)

    def _end_if_drained(self, session: BotSession) -> None:
        """A draining session with no match left gets its last message, a ``draining`` with
        no active match, and its stream ends with OK."""
        if (session.drain_reason and session.connected and session not in self._catching_up
                and not self._playable_by(session)):
            session.send(bot_pb2.PlayResponse(draining=bot_pb2.Draining(reason=session.drain_reason,
                                                                        cause=session.drain_cause)))
            session.close(f"drained ({session.drain_reason}): every match finished")
            log.info("bot drained", bot=session.bot, session=session.id)

    def send_to_bot(self, bot: str, message: bot_pb2.PlayResponse) -> None:
        session = self.sessions.get(bot)
        if session is not None:
            session.send(message)

    def answer(self, session: BotSession, answer: bot_pb2.Answer) -> bot_pb2.AnswerRejected | None:
        runner = self.runners.get(answer.match_id)
        if runner is not None:
            taken, rejection = runner.take_answer(session, answer)  # an open request's: nearly always
            if taken:
                return rejection
        self.untaken_answers += 1
        slots = runner.seats_for(session) if runner else []
        if runner is None or not slots:
            refusal = runner.frozen_refusal(session) if runner else ""
            return self._unknown_match(answer.match_id, answer.request_id,
                                       refusal or "you are not seated in that match")
        stale = False
        for slot in slots:
            slot.auto = False  # an answer, even a stale one, shows the bot is listening
            stale = stale or answer.request_id in slot.issued
        if stale:
            return bot_pb2.AnswerRejected(
                match_id=answer.match_id, request_id=answer.request_id, code=bot_pb2.REJECTION_CODE_STALE_REQUEST,
                reason="that request is already resolved (answered, or defaulted when its time ran out)")
        request_id = echo_id(answer.request_id)
        reason = ("no request with that id was sent to you in this match" if request_id else
                  _TOO_LONG if answer.request_id else "an answer needs the request_id of the request it answers")
        return bot_pb2.AnswerRejected(
            match_id=answer.match_id, request_id=request_id, code=bot_pb2.REJECTION_CODE_UNKNOWN_REQUEST, reason=reason)

    def answer_play(self, session: BotSession, play: PlayAnswer) -> bot_pb2.AnswerRejected | None:
        """:meth:`answer` for a play answer read straight from its bytes (wire.play_answer)."""
        runner = self.runners.get(play.match_id)
        if runner is not None:
            taken, rejection = runner.take_play(session, play)  # an open play request's: nearly always
            if taken:
                return rejection
        return self.answer(session, play.to_wire())  # anything else: the answer as a message says why

    @staticmethod
    def _unknown_match(match_id: str, request_id: str, reason: str) -> bot_pb2.AnswerRejected:
        """UNKNOWN_MATCH, echoing only ids that could be ours (sessions.MAX_ID_CHARS)."""
        match_echo, request_echo = echo_id(match_id), echo_id(request_id)
        if len(match_echo) < len(match_id) or len(request_echo) < len(request_id):
            reason = _TOO_LONG
        return bot_pb2.AnswerRejected(match_id=match_echo, request_id=request_echo,
                                      code=bot_pb2.REJECTION_CODE_UNKNOWN_MATCH, reason=reason)

    def seat_held(self, session: BotSession, match_id: str, seat: int) -> SeatSlot | None:
        """The seat ``session``'s bot holds in a running match, if it does and ``session`` may
        play it (SeatSlot.played_by)."""
        runner = self.runners.get(match_id)
        return next((s for s in runner.seats_for(session) if s.seat == seat), None) if runner else None

    def resume(self, session: BotSession, request: bot_pb2.Resume) -> bot_pb2.AnswerRejected | None:
        slot = self.seat_held(session, request.match_id, request.seat)
        if slot is None:
            runner = self.runners.get(request.match_id)
            return self._unknown_match(request.match_id, "", (runner.frozen_refusal(session) if runner else "") or
                                       "you are not seated in that match at that seat (it may have ended)")
        self.runners[request.match_id].rewind_to(slot, int(request.last_sequence))
        catch_up = self._catch_up(session)
        catch_up.add_seat(self.runners[request.match_id], slot)
        catch_up.feed()
        return None

    def _running(self, bot: str) -> list[MatchRunner]:
        """The running matches that seat ``bot`` (not those still being started)."""
        return [r for r in self._seated.of(bot) if self.runners.get(r.id) is r]

    def _playable_by(self, session: BotSession) -> list[str]:
        """The ids of the matches, running or starting, in which ``session`` may play a seat
        (a tournament's only for the version frozen at its start), in order."""
        return sorted(r.id for r in self._seated.of(session.bot) if r.seats_for(session))

    def version_conflict(self, bot: str, version: str) -> str:
        """Why a new stream of ``bot`` declared as ``version`` may not replace its live one
        ("" if it may): the live one plays a running match frozen to its version (a
        tournament's), which the new one could not play, or is the version a tournament this
        daemon directs froze, whose next matches the new one could not play. Replaced, it
        would be told to leave and not come back, and its seats would take defaults to the end
        (before, between a tournament's matches it was replaced)."""
        live = self.sessions.get(bot)
        if live is None or not live.connected or live.version == version:
            return ""
        for runner in self._seated.of(bot):
            for slot in runner.seats_of(bot):
                if slot.version is not None and slot.played_by(live):
                    return (f"bot {bot!r} is playing match {runner.id} of a tournament as version {slot.version!r}, "
                            f"the version frozen at its start, on a stream still open; a stream as {version!r} "
                            f"cannot play it: connect as {slot.version!r}, or once that match is over")
        for tournament_id, frozen in self.frozen_by_tournaments(bot):
            if frozen == live.version:
                return (f"bot {bot!r} plays tournament {tournament_id} as version {frozen!r}, the version frozen at "
                        f"its start, on a stream still open; a stream as {version!r} would take its place and the "
                        f"tournament's next matches would play the bot by its defaults: connect as {frozen!r}, or "
                        "once the tournament is over")
        return ""

    def active_matches(self, bot: str) -> int:
        """Matches ``bot`` is seated in, counting those still being started."""
        return self._seated.count(bot)

    def matches_of(self, bot: str) -> list[tuple[str, str]]:
        """(match id, purpose) of every match ``bot`` is seated in, those being started too."""
        return [(r.id, self.purposes.get(r.id, "admin")) for r in self._seated.of(bot)]

    def busy_bots(self) -> Iterable[str]:
        """The bots seated in at least one match (those being started too)."""
        return self._seated.bots()

    def free_slots(self, bot: str, reservation: Reservation | None = None) -> int:
        """Match slots of ``bot`` that nobody holds or waits for: its declared limit, less
        the matches it is in, less the slots promised to waiting reservations (those older
        than ``reservation``, when it is the one asking). 0 when it is not connected."""
        session = self.sessions.get(bot)
        if session is None:
            return 0
        return session.max_matches - self.active_matches(bot) - self.slots.promised(bot, before=reservation)

    def _seat_problem(self, wanted: dict[str, int], ruleset: str, reservation: Reservation | None,
                      versions: Mapping[str, str] | None = None) -> SeatProblem | None:
        """Why the bots in ``wanted`` (name -> seats) cannot all be seated now, or None."""
        for bot in wanted:
            if (problem := self._bot_problem(bot, ruleset, reservation, versions)) is not None:
                return problem
        return None

    def _bot_problem(self, bot: str, ruleset: str, reservation: Reservation | None,
                     versions: Mapping[str, str] | None) -> SeatProblem | None:
        """Why ``bot`` cannot be seated now, or None."""
        session = self.sessions.get(bot)
        if session is None and not self.tokens.known_bot(bot):
            # Publicly just not connected (a token's state is the operator's); the log says why
            # it will not be (an organiser's pass: a token removed at a restart read the same).
            return SeatProblem(f"bot {bot!r} is not connected, and no token of this daemon names it any more "
                               "([bot_tokens], or a ladder registration not revoked): it cannot connect until one does",
                               f"bot {bot!r} is not connected", code="not_connected", params={"bot": bot})
        if session is None:
            return SeatProblem.plain(f"bot {bot!r} is not connected", code="not_connected", params={"bot": bot})
        if versions is not None and bot in versions and session.version != versions[bot]:
            return SeatProblem(
                f"bot {bot!r} is connected as version {session.version!r}; this match needs the version "
                f"frozen at the start, {versions[bot]!r}",
                f"bot {bot!r} is not connected as the version frozen at the start, {versions[bot]!r}",
                code="not_frozen_version", params={"bot": bot, "version": versions[bot]})
        if self.tokens.state(bot, session.token_hash) in (TokenState.REVOKED, TokenState.ROTATED):
            # Its session ends within about a second; publicly it is just not connected.
            return SeatProblem(f"bot {bot!r} is connected with a token that no longer counts",
                               f"bot {bot!r} is not connected", code="not_connected", params={"bot": bot})
        if not session.plays(ruleset):
            return SeatProblem.plain(f"bot {bot!r} does not play {ruleset}", code="not_playing_ruleset",
                                     params={"bot": bot, "ruleset": ruleset})
        if session.drain_reason:
            return SeatProblem(_draining(bot, session.drain_reason), _draining(bot, ""), code="draining",
                               params={"bot": bot})
        if self.free_slots(bot, reservation) < 1:  # a match takes one slot, however many seats
            held = ", ".join(f"{purpose} {match_id}" for match_id, purpose in self.matches_of(bot))
            text = (f"bot {bot!r} has no free match slot: it plays at most {session.max_matches} at once "
                    f"and is in {self.active_matches(bot)} now ({held or 'none'})")
            promised = self.slots.promised(bot, before=reservation)
            if promised:
                waiting = ", ".join(self.slots.holders(bot)[: 3])
                text += f", and {promised} slot(s) are promised to waiting matches ({waiting})"
            return SeatProblem(text, f"bot {bot!r} is busy in other matches", code="busy", params={"bot": bot},
                               busy=True)
        return None

    def unable(self, bot: str, ruleset: str, versions: Mapping[str, str] | None = None) -> bool:
        """Whether ``bot`` cannot take a seat of ``ruleset`` however long its match waits for
        a free slot: any refusal of :meth:`_bot_problem` but a busy bot's (not connected,
        another version than ``versions`` froze, a token that no longer counts, not playing
        the ruleset, draining)."""
        problem = self._bot_problem(bot, ruleset, None, versions)
        return problem is not None and not problem.busy

    def _check_still_absent(self, absent: frozenset[str], ruleset: str, versions: Mapping[str, str] | None) -> None:
        """A bot the match was to start without that can be seated again is waited for like
        the others (its free slot included): refused "unavailable", for the caller to ask
        again, instead of seated past its match limit or ahead of a waiting match."""
        back = sorted(b for b in absent if not self.unable(b, ruleset, versions))
        if back:
            text = f"bot {back[0]!r} is back: its seats are waited for again"
            raise ArenaError("unavailable", text, text, code="back", params={"bot": back[0]})

    async def _wait_for_seats(self, wanted: dict[str, int], ruleset: str, reservation: Reservation,
                              deadline: float, wait_s: float, versions: Mapping[str, str] | None = None) -> None:
        """Hold ``reservation`` until every bot of ``wanted`` can be seated, or ``deadline``
        (loop time) passes; ``wait_s`` is how long that was, for the message."""
        while (problem := self._seat_problem(wanted, ruleset, reservation, versions)) is not None:
            draining = [b for b in wanted if (s := self.sessions.get(b)) is not None and s.drain_reason]
            if draining:  # it will not come free on this stream: no point waiting
                raise problem.error("precondition")
            if not self.accepting:  # the wait did not run out: the server is going away
                # Why the seats were not free, said in brackets, is a figure of its own too
                # (``not_free``: the problem's code, with its figures), as ``waited_s`` is for
                # the deadline: before, a page saying "shutting_down" in its language dropped it.
                why = "the server is shutting down (the seats were not free: "
                raise ArenaError("unavailable", why + problem.detail + ")", why + problem.public + ")",
                                 code="shutting_down", params={**problem.params, "not_free": problem.code})
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                # Its code is the problem's: what the seats still wait for; the wait, said before it,
                # is a figure of its own (``waited_s``), so that a page saying the code in its
                # language says the wait too (before, "waited 30 s" was English only).
                waited = f"waited {wait_s:g} s for the seats: "
                raise problem.error("deadline", waited + problem.detail, waited + problem.public,
                                    waited_s=f"{wait_s:g}")
            await self.slots.wait_change(min(left, 1.0))

    # -- matches ------------------------------------------------------------------------

    async def create_match(
        self,
        ruleset: str,
        players: int,
        options: admin_pb2.RulesetOptions,
        fmt: game_pb2.MatchFormat,
        seed: int | None,
        seats: list[SeatRequest],
        clock: game_pb2.ClockSettings | ClockPolicy,
        rated: bool = False,
        prepare: Callable[[MatchRunner], None] | None = None,
        tokens_since: float | None = None,
        purpose: str = "admin",
        wait_s: float = 0.0,
        versions: Mapping[str, str] | None = None,
        strict: bool | None = None,
        absent: frozenset[str] = frozenset(),
        tournament: str = "",
    ) -> MatchRunner:
        """Validate and start a match. The database is used from a worker thread, never on
        the event loop: a slow store (a remote PostgreSQL) must not stall running matches,
        whose clocks keep running while the loop is blocked. ``prepare`` adjusts the runner
        before anything of the match happens (the conformance kit arranges its matches).
        A bot's token is checked against a view of the ladder read after ``tokens_since``
        (default: this call), so a bot revoked a moment ago is not seated.

        Its shuffles go into the ledger with the match (shuffles.py). A rated match, or one
        whose seed the server draws, never deals a shuffle dealt before: a drawn seed that
        would is replaced by another; a rated match with an explicit seed is refused. An
        unrated match with an organiser's explicit seed may repeat shuffles (organisers and
        ``heartsbot local --seed`` test with fixed seeds), unless ``strict`` (a tournament's
        seeds): then such a seed is refused with :class:`SeedRefused`.

        ``purpose`` says what started it (admin, ladder, house, a tournament), for listings
        and for the message that explains a busy bot. With ``wait_s`` > 0 the named bots'
        slots are reserved and waited for (slots.py) instead of refused when busy.
        ``versions`` (bot -> version) seats a bot only while it is connected with that
        declared version (a tournament froze it at the start). The bots in ``absent`` are
        not waited for: their seats start as a disconnected bot's do (the grace, then
        defaults), until they connect (a tournament's table that waited long enough).
        ``tournament``: the id of the tournament it is played for, which must still run
        when its row is written (:class:`TournamentStopped`)."""
        self.loop_monitor.start()
        if rated and seed is not None:  # before (an attack pass): accepted, and its hands known to whoever chose it
            raise invalid("a rated match draws its own seed: an explicit one is known to whoever chose it, and it "
                          "gives every hand (leave seed unset)")
        rules, match_format = self.check_match(ruleset, players, options, fmt, seats, rated)
        if rated:
            await self.check_rated(seats)
        policy = self._policy(clock)
        if seed is not None and not 0 <= seed < 2**64:
            raise invalid("seed must be below 2**64")
        reservation = await self.claim_seats(ruleset, seats, tokens_since, purpose, wait_s, versions, absent)
        explicit = seed is not None
        try:
            for attempt in range(SEED_DRAWS):
                runner = self.new_runner(rules, match_format, seed if explicit else secrets.randbits(63), seats,
                                         policy, rated, strict=(rated or not explicit) if strict is None else strict,
                                         versions=versions, absent=absent)
                if prepare is not None:
                    prepare(runner)
                try:
                    await self.start([runner], purpose, reservation, tournament)
                    return runner
                except ShuffleRepeated as exc:
                    if explicit:
                        raise SeedRefused("precondition", f"seed {seed} deals a shuffle that was dealt before (match "
                                          f"{exc.match_id}, deal {exc.deal}): a tournament's match never repeats a shuffle; "
                                          "leave the seed unset to have one drawn") from None
                    log.warning("a drawn seed deals a shuffle dealt before; drawing another", attempt=attempt + 1)
            raise ArenaError("unavailable", f"no fresh seed in {SEED_DRAWS} draws")
        finally:
            if reservation is not None:
                self.slots.release(reservation)

    def check_match(self, ruleset: str, players: int, options: admin_pb2.RulesetOptions, fmt: game_pb2.MatchFormat,
                    seats: list[SeatRequest], rated: bool) -> tuple[Ruleset, MatchFormat]:
        """The ruleset and format of a requested match, validated against its seats."""
        if not self.accepting:
            raise ArenaError("unavailable", "the server is shutting down", code="shutting_down")
        if ruleset not in PRESETS:
            raise invalid(f"unknown ruleset {ruleset!r}; known: {', '.join(sorted(PRESETS))}")
        extra: dict[str, object] = {}
        for field, keyword in OPTION_KEYWORDS:
            if not (value := getattr(options, field)):
                continue
            if keyword not in PRESETS[ruleset].options:  # before, standard with target 1 ended after a deal
                takers = ", ".join(name for name, p in sorted(PRESETS.items()) if keyword in p.options)
                raise invalid(f"options.{field} applies to {takers} only, not {ruleset}")
            extra[keyword] = value
        if int(extra.get("target", 0)) > MAX_TARGET:  # type: ignore[call-overload]
            raise invalid(f"options.target is at most {MAX_TARGET} (a game to it lasts up to about 150 deals), "
                          f"got {extra['target']}")
        try:
            rules = preset(ruleset, players=players or len(seats) or None, **extra)
            match_format = convert.format_from_wire(fmt)
            match_format.check(rules)
        except (RulesetError, TypeError, ValueError) as exc:
            raise invalid(str(exc)) from None
        if (match_format.deals or 0) > MAX_FIXED_DEALS:
            raise invalid(f"a match has at most {MAX_FIXED_DEALS} deals (format.fixed_deals), got {match_format.deals}")
        if len(seats) != rules.players:
            raise invalid(f"{ruleset} with {rules.players} players needs {rules.players} seats, got {len(seats)}")
        if match_format.duplicate and any(s.bot or s.human for s in seats):
            raise invalid("in-match duplicate seating (format.duplicate) replays each shuffle to the same seats, "
                          "and a bot remembers what it was shown: only house seats may play it (rated play "
                          "compares bots across tables instead)")
        if rated and match_format.kind is not FormatKind.FIXED:
            raise invalid("a rated match needs fixed deals (format.fixed_deals)")
        for i, spec in enumerate(seats):
            if spec.bot == "":  # else taken for a house seat of no strategy (an attack pass)
                raise invalid(f"seat {i}: a bot seat needs the bot's name")
            if spec.human is not None and not spec.human.startswith(HUMAN_PREFIX):
                raise invalid(f"a person's seat is named {HUMAN_PREFIX}<id>, not {spec.human!r}")
            if not spec.bot and not spec.human and not known_strategy(spec.house or ""):
                raise invalid(f"unknown house strategy {spec.house!r}; known: {KNOWN_STRATEGIES}")
        return rules, match_format

    def owners(self, bots: Sequence[str] | None = None) -> dict[str, str]:
        """Bot -> owner: the ladder's registered bots, and the configured ones
        (``Settings.bot_owners``; a configured bot not named there is its own owner), of
        ``bots`` only if given. A configured owner spelled as a registered one is that
        owner. Reads the store: call it in a thread. Before (an attack pass), configured
        bots had no owner at all, so a tournament seated one person's two bots in one
        duplicate set and at one table.

        Given ``bots``, two of them share an owner here exactly when they do in the whole
        map: configured owners never differ in spelling alone (config.py), nor do
        registered ones (Ladder.add_bot), and a configured owner is respelled only as a
        registered owner, whose bot, if it is one of ``bots``, was read. Every duplicate
        set of a matchmaking tick read every registration (~10 ms each at 4,000 bots, in
        threads holding the GIL: 5 of the 7 s of a tick seating 1,000 tables)."""
        registered = self.ladder_owners(bots)
        spelled = {spelling_key(owner): owner for owner in registered.values()}
        wanted = None if bots is None else set(bots)
        configured = {bot: spelled.get(spelling_key(owner), owner) for bot, owner in self.settings.bot_owners.items()
                      if wanted is None or bot in wanted}
        return {**configured, **registered}

    def ladder_owners(self, bots: Sequence[str] | None = None) -> dict[str, str]:
        """Bot -> owner of the ladder's bots (of ``bots`` only, if given): its registrations
        not revoked, but none under a configured bot's name, which is not that bot
        (TokenRegistry.shadowed). Before (an organiser's pass), the rated check and the
        matchmaker read the registrations themselves, so the configured bob played rated
        matches as mallory's registered bob. Reads the store: call it in a thread."""
        configured = self.tokens.configured_names
        return {bot: owner for bot, owner in self.store.ladder.owners(names=bots).items() if bot not in configured}

    async def check_rated(self, seats: list[SeatRequest]) -> None:
        """Rated seats: registered ladder bots, each once, never two of one owner. Reads the
        seats' registrations only: every bot's, read for every table, made a tick seating
        4,000 bots hold the event loop ~0.8 s at a time (the reads' threads held the GIL)."""
        registered = await asyncio.to_thread(self.ladder_owners, sorted({s.bot for s in seats if s.bot}))
        strangers = [s.bot or f"house:{s.house}" for s in seats if not s.bot or s.bot not in registered]
        if strangers:
            raise invalid(f"a rated match seats only registered ladder bots, not {', '.join(strangers)}")
        names = [s.bot for s in seats]
        if len(set(names)) != len(names):
            raise invalid("a rated match seats each bot once")
        owners = [registered[n] for n in names if n]
        if not self.settings.ladder_same_owner and len(set(owners)) != len(owners):
            raise invalid("a rated match never seats two bots of one owner (see ladder_same_owner)")

    async def check_seats_free(self, ruleset: str, seats: list[SeatRequest], tokens_since: float | None = None,
                               versions: Mapping[str, str] | None = None,
                               reservation: Reservation | None = None, absent: frozenset[str] = frozenset()) -> None:
        """Every seated bot (but those in ``absent``) is connected with a token that counts
        (checked against a view of the ladder read after ``tokens_since``), plays ``ruleset``
        and has a free match slot (one nobody waits for: slots.py); a precondition error
        says which bot and why."""
        wanted = self._wanted(seats, absent)
        self._check_still_absent(absent, ruleset, versions)
        await self._check_seat_tokens(wanted, tokens_since)
        if (problem := self._seat_problem(wanted, ruleset, reservation, versions)) is not None:
            hint = "; set wait_for_seats_ms to wait for it" if "slot" in problem.detail else ""
            raise problem.error("precondition", problem.detail + hint)

    async def claim_seats(self, ruleset: str, seats: list[SeatRequest], tokens_since: float | None, purpose: str,
                          wait_s: float, versions: Mapping[str, str] | None = None,
                          absent: frozenset[str] = frozenset()) -> Reservation | None:
        """:meth:`check_seats_free`, or with ``wait_s`` > 0 wait in line for the seats: the
        returned reservation holds them (no await may come before the match takes them)."""
        wanted = self._wanted(seats, absent)
        if wait_s <= 0 or not wanted:
            await self.check_seats_free(ruleset, seats, tokens_since, versions, absent=absent)
            return None
        reservation = self.slots.reserve({bot: 1 for bot in wanted}, purpose)
        try:
            deadline = asyncio.get_running_loop().time() + wait_s
            while True:
                await self._wait_for_seats(wanted, ruleset, reservation, deadline, wait_s, versions)
                await self._check_seat_tokens(wanted, tokens_since)
                if self._seat_problem(wanted, ruleset, reservation, versions) is None:
                    self._check_still_absent(absent, ruleset, versions)
                    return reservation
        except BaseException:
            self.slots.release(reservation)
            raise

    @staticmethod
    def _wanted(seats: list[SeatRequest], absent: frozenset[str] = frozenset()) -> dict[str, int]:
        """Bot -> its seats, of the bots that must be seated now (not those in ``absent``)."""
        wanted: dict[str, int] = {}
        for spec in seats:
            if spec.bot and spec.bot not in absent:
                if spec.bot.startswith(HUMAN_PREFIX):
                    raise invalid(f"{spec.bot!r} is a person's seat, not a bot")
                wanted[spec.bot] = wanted.get(spec.bot, 0) + 1
        return wanted

    async def _check_seat_tokens(self, wanted: dict[str, int], tokens_since: float | None) -> None:
        """Make sure the tokens of the connected ``wanted`` bots are checked against a view
        of the ladder read after ``tokens_since`` (sessions of revoked tokens are closed)."""
        if any(s is not None and not self.tokens.is_configured(s.token_hash) for s in map(self.sessions.get, wanted)):
            if not await self.tokens.refreshed(since=tokens_since):
                raise ArenaError("unavailable", "the bots' tokens cannot be checked now (the store does not answer)")
            self.check_tokens()

    def new_runner(self, rules: Ruleset, match_format: MatchFormat, seed: int, seats: list[SeatRequest],
                   policy: ClockPolicy, rated: bool, strict: bool,
                   versions: Mapping[str, str] | None = None, absent: frozenset[str] = frozenset()) -> MatchRunner:
        """A runner for a validated match (not started: see :meth:`start`). ``versions``: the
        bots' versions frozen by a tournament, which alone may play their seats throughout.
        ``absent``: bots the match starts without; a stream of theirs that is connected but
        cannot take the seat (draining, other rulesets) is shut out of it, so the seat starts
        away and takes no slot of that stream (a bot's next stream may play it)."""
        match_id = "m-" + secrets.token_hex(8)
        slots = []
        for seat, spec in enumerate(seats):
            clock_state = SeatClock(policy.decision_ms, policy.bank_ms)
            if spec.bot:
                slots.append(SeatSlot(seat, spec.bot, clock_state, version=versions.get(spec.bot) if versions else None,
                                      shut_out=self.sessions.get(spec.bot) if spec.bot in absent else None))
            elif spec.human:  # same stream, checks and defaults as a bot; a person's clock
                human_clock = SeatClock(self.settings.human_decision_ms, self.settings.human_bank_ms)
                slots.append(SeatSlot(seat, spec.human, human_clock, provenance=P.PROVENANCE_HUMAN))
            else:
                house = make_strategy(spec.house or "", seed=house_seed(seed, seat))
                slots.append(SeatSlot(seat, f"house:{spec.house}", clock_state, house=house))
        runner = self.runner_class(self, match_id, rules, match_format, seed, slots, policy,
                                   house_delay_s=self.settings.house_delay_ms / 1000, rated=rated)
        runner.strict_shuffles = strict
        runner.reserved_deals = shuffles.planned_deals(match_format)
        return runner

    async def start(self, runners: list[MatchRunner], purpose: str = "admin",
                    reservation: Reservation | None = None, tournament: str = "") -> None:
        """Insert the runners' rows and ledger rows in one transaction, then start them.

        While their rows are written the matches hold their bots' places (active_matches)
        but are not listed, cancellable or playable; from then on they hold the slots of
        ``reservation``, which is served. The start is shielded: once the rows may be
        committed, a cancelled caller (an RPC deadline, shutdown) no longer strands them.
        A ``tournament``'s matches start only while it runs (:class:`TournamentStopped`)."""
        for runner in runners:
            self._starting[runner.id] = runner
            self._seated.add(runner, _remote_bots(runner))
            self.purposes[runner.id] = purpose
        if reservation is not None:
            self.slots.release(reservation)
        start = asyncio.ensure_future(self._start(runners, tournament))
        self._starts.add(start)
        start.add_done_callback(self._started)
        try:
            await asyncio.shield(start)
        except TournamentOver as exc:
            raise TournamentStopped("precondition", str(exc)) from None

    def _started(self, start: asyncio.Future[None]) -> None:
        self._starts.discard(start)
        if not start.cancelled() and isinstance(start.exception(), (ShuffleRepeated, TournamentOver)):
            return  # the caller draws another seed or refuses; a tournament's director stops
        if not start.cancelled() and start.exception() is not None:  # also seen by the caller, if still there
            log.warning("a match could not be started", exc_info=start.exception())

    async def _write(self, write: Callable[..., Any], *args: Any) -> Any:
        """``write(*args)`` in a worker thread: one of the arena's writes to the store, each
        reported to ``store_health`` (only a driver's or the system's error is a failure: a
        refused shuffle or a match another daemon ended says nothing of the store)."""
        health = self.store_health
        began = health.changes
        try:
            result = await asyncio.to_thread(write, *args)
        except Exception as exc:
            if is_store_failure(exc):
                health.failed(exc, began)
                self._probe_store()
            raise
        health.worked(began)
        return result

    def _probe_store(self) -> None:
        """While the store fails, a write every STORE_PROBE_S tells when it works again, even
        on a daemon with nothing else to write (whose health check would otherwise stay
        NOT_SERVING, and no new match start to clear it)."""
        if self._probing is None or self._probing.done():
            self._probing = asyncio.get_running_loop().create_task(self._probe_until_stored())

    async def _probe_until_stored(self) -> None:
        while not self.store_health.ok and self.accepting:
            with contextlib.suppress(asyncio.TimeoutError):  # a stop cuts the pause short
                await asyncio.wait_for(self._stopping.wait(), STORE_PROBE_S)
            if not self.store_health.ok and self.accepting:
                with contextlib.suppress(Exception):
                    await self._write(self.store.probe_write)

    async def _start(self, runners: list[MatchRunner], tournament: str) -> None:
        try:
            await self._write(self._insert, runners, tournament)
        except BaseException:
            for runner in runners:
                self.purposes.pop(runner.id, None)
                self._seated.remove(runner, _remote_bots(runner))
            raise
        finally:
            for runner in runners:
                self._starting.pop(runner.id, None)
            self.slots.changed()
        for runner in runners:
            self.runners[runner.id] = runner
            self._mark_unserved_away(runner)
            if not self.accepting:  # shutdown began during the write: record it as aborted
                runner.stop(P.MATCH_STATUS_ABORTED, "server shutdown")
            task = asyncio.get_running_loop().create_task(self._run(runner))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    def _mark_unserved_away(self, runner: MatchRunner) -> None:
        """A bot that left, or came back as a version its seat is not frozen to, while the
        match's rows were written (connect and disconnect see running matches only): its
        seats start away, so they get the disconnect's grace and defaults, not timeouts."""
        for slot in runner.seats:
            if slot.house is None and slot.provenance == P.PROVENANCE_BOT and slot.away_since is None:
                session = self.sessions.get(slot.name)
                if session is None or not session.connected or not slot.played_by(session):
                    runner.disconnected(slot)

    def _insert(self, runners: list[MatchRunner], tournament: str) -> None:
        """(Worker thread.) The running rows, with the ledger rows of the shuffles they deal first."""
        new = []
        for r in runners:
            match = r.match
            fingerprints = shuffles.deal_fingerprints(r.rules, match.format, match.seed, 0, r.reserved_deals)
            new.append(NewMatch(r.id, r.rules.name, r.rules.players, [s.label for s in r.seats], match.seed,
                                fingerprints, r.set_id, tournament))
        self.store.start(new, any(r.strict_shuffles for r in runners))

    async def reserve_shuffles(self, runner: MatchRunner, first: int, count: int) -> None:
        """Ledger rows for the next ``count`` deals of a running game-format match."""
        def reserve() -> None:
            match = runner.match
            fingerprints = shuffles.deal_fingerprints(runner.rules, match.format, match.seed, first, count)
            self.store.reserve_shuffles(runner.id, [s.label for s in runner.seats], first, fingerprints,
                                        runner.strict_shuffles)

        await self._write(reserve)

    def _policy(self, clock: game_pb2.ClockSettings | ClockPolicy) -> ClockPolicy:
        """The clock a match plays: ``clock``'s values, its zeros the daemon's settings; a
        ClockPolicy is one already resolved (a tournament's, frozen when it was created)."""
        if isinstance(clock, ClockPolicy):
            return clock
        d = self.settings.clock
        values = {
            "decision_ms": clock.decision_ms or d.decision_ms,
            "bank_ms": clock.bank_ms or d.bank_ms,
            "max_illegal": clock.max_illegal or d.max_illegal,
            "auto_after": clock.auto_after or d.auto_after,
            "grace_ms": clock.grace_ms or d.grace_ms,
        }
        for name, value in values.items():
            if value < 0 or (name in ("decision_ms", "auto_after") and value < 1):
                raise invalid(f"clock.{name} out of range: {value}")
        return ClockPolicy(**values)

    async def _run(self, runner: MatchRunner) -> None:
        try:
            await runner.run()
        finally:
            self.forget(runner)
            for bot in _remote_bots(runner):  # its match_ended is on the way
                session = self.sessions.get(bot)
                if session is not None:
                    self._end_if_drained(session)

    async def _abort_unstored(self, final: bool = True) -> None:
        """The matches of this daemon whose result could not be stored (a full disk),
        announced aborted, are marked so in the store now, those only (another daemon of the
        instance may be running its own matches: a lease taken over, or a daemon without a
        lease on the same store): every UNSTORED_RETRY_S while the daemon runs, and at a
        clean stop (``final``). Before (an attack pass), such rows stayed running until this
        instance's next start, maybe never: meanwhile other daemons of the store listed
        them as running, and refused the records of their sets' other tables."""
        if not self._unstored:
            return
        asked = sorted(self._unstored)  # a match may join while the store is written
        try:
            left = await self._write(self.store.abort_interrupted, UNSTORED, asked)
        except Exception:
            if final:
                log.warning("matches whose result could not be stored are still 'running' in the store; the next "
                            "start marks them aborted", matches=sorted(self._unstored), exc_info=True)
            return
        self._unstored.difference_update(asked)
        if left:
            log.warning("matches whose result could not be stored are marked aborted", matches=left)

    def _unstored_match(self, match_id: str) -> None:
        self._unstored.add(match_id)
        if self._marking is None or self._marking.done():
            self._marking = asyncio.get_running_loop().create_task(self._mark_unstored())

    async def _mark_unstored(self) -> None:
        while self._unstored and self.accepting:
            await asyncio.sleep(UNSTORED_RETRY_S)
            await self._abort_unstored(final=False)

    def forget(self, runner: MatchRunner) -> None:
        """The match is over and stored: it no longer counts against its bots' limits."""
        self.runners.pop(runner.id, None)
        self._seated.remove(runner, _remote_bots(runner))
        for slot in runner.seats:
            session = self.sessions.get(slot.name) if slot.house is None else None
            if session is not None:
                session.resumes.pop((runner.id, slot.seat), None)
        self.purposes.pop(runner.id, None)
        self.slots.changed()

    async def store_result(self, match_id: str, status: str, reason: str, record: spectator_pb2.MatchRecord,
                           deals: int, totals: list[int], rated: bool = False, events: bytes | None = None) -> None:
        """Store the finished match; retried after a failure (e.g. a database reconnect),
        unless the failed attempt did commit: the row then holds this status and reason.
        A row another daemon ended meanwhile (it took this instance's lease over while this
        one stalled, and marked its matches aborted) is not ours: that raises, and the match
        is announced aborted. Before (an attack pass), any row no longer running counted as
        our commit, and a match was announced finished that the store held aborted, with
        no record."""
        try:
            await self._store_result(match_id, status, reason, record, deals, totals, rated, events)
        finally:
            self._retrying.discard(match_id)

    @property
    def unstored_matches(self) -> int:
        """Finished matches whose result the store has not taken: being tried again, or
        given up on and not yet marked aborted."""
        return len(self._retrying | self._unstored)

    async def _store_result(self, match_id: str, status: str, reason: str, record: spectator_pb2.MatchRecord,
                            deals: int, totals: list[int], rated: bool, events: bytes | None) -> None:
        for tried, delay in enumerate((*STORE_RETRY_DELAYS_S, None)):
            try:
                await self._write(self.store.finish, match_id, status, reason, record, deals, totals, rated, events)
                return
            except Exception as exc:
                self._retrying.add(match_id)
                if delay is None or (not self.accepting and tried >= STORE_RETRIES_STOPPING):
                    self._unstored_match(match_id)  # its row stays running until marked aborted
                    raise
                # The store's own words (a full disk, a lost connection) for its failures; a
                # traceback only for the first failure of another kind, a defect of ours.
                # Before (an organiser's pass), every retry of every match printed one.
                log.warning("storing a result failed; retrying", match_id=match_id, retry_in=delay,
                            error=failure_text(exc), exc_info=tried == 0 and not is_store_failure(exc))
            with contextlib.suppress(asyncio.TimeoutError):  # a stop cuts the pause short
                await asyncio.wait_for(self._stopping.wait(), delay)
            try:
                ended = await asyncio.to_thread(self.store.ended_as, match_id)
            except Exception:
                continue  # the store is still unreachable: try again
            if ended == (status, reason):
                return  # the failed attempt did commit
            if ended is not None:
                raise RuntimeError(f"match {match_id} was ended in the store by another daemon ({ended[0]}: "
                                   f"{ended[1]}); its result here is not stored")

    async def checkpoint(self, match_id: str, record: bytes, deals: int, totals: list[int]) -> None:
        began = self.store_health.changes
        try:
            await self.checkpoints.write(match_id, record, deals, totals)
        except Exception as exc:
            if is_store_failure(exc):
                self.store_health.failed(exc, began)
                self._probe_store()
                log.warning("checkpoint failed", match_id=match_id, error=failure_text(exc))
            else:
                log.exception("checkpoint failed", match_id=match_id)
        else:
            self.store_health.worked(began)

    def cancel(self, match_id: str, reason: str) -> MatchRunner:
        """Stop a match running here; for any other, :meth:`not_running` says why not."""
        runner = self.runners.get(match_id)
        if runner is None:
            raise not_found(f"no match {match_id} is running here")
        runner.stop(P.MATCH_STATUS_CANCELLED, reason or "cancelled by an admin")
        return runner

    async def not_running(self, match_id: str) -> ArenaError:
        """Why ``match_id`` cannot be cancelled here: it is over, or unknown (the store is
        read in a worker thread, never on the event loop)."""
        instance = await asyncio.to_thread(self.store.running_on, match_id)
        if instance is not None and instance != self.settings.instance:
            return precondition(f"match {match_id} runs on another daemon of this store (instance {instance}): "
                                "cancel it there; if that daemon no longer runs, the next daemon to start on this "
                                "store marks it aborted")  # before (an attack pass): "already over"
        if await asyncio.to_thread(self.store.match_state, match_id) is not None:
            return precondition(f"match {match_id} is already over")
        return not_found(f"no match {match_id}")

    # -- house matches (the demo / warm-up load) -------------------------------------------

    def start_house_matches(self) -> None:
        if self.settings.house_matches > 0:
            self._house_task = asyncio.get_running_loop().create_task(self._house_loop())

    async def _house_loop(self) -> None:
        """Keep ``house_matches`` house matches running: at most that many started per pass,
        so matches that end at once cannot spin the loop, and a start that fails (a full
        disk) is logged and tried again after a pause that doubles, up to HOUSE_RETRY_MAX_S.
        Before, one failed start ended the loop for good, and a misconfigured clock started
        ~300 failing matches a second."""
        s = self.settings
        retry = HOUSE_PASS_S
        while self.accepting:
            missing = s.house_matches - sum(1 for r in self.runners.values() if r.house_only)
            try:
                for _ in range(missing):
                    rules = preset(s.house_ruleset)
                    seats = [SeatRequest(house=s.house_strategies[i % len(s.house_strategies)])
                             for i in range(rules.players)]
                    await self.create_match(s.house_ruleset, rules.players, admin_pb2.RulesetOptions(),
                                            game_pb2.MatchFormat(), None, seats, game_pb2.ClockSettings(),
                                            purpose="house")
                pause, retry = HOUSE_PASS_S, HOUSE_PASS_S
            except Exception as exc:
                if not self.accepting:
                    return
                pause, retry = retry, min(retry * 2, HOUSE_RETRY_MAX_S)
                log.warning("a house match could not be started; trying again", retry_s=pause,
                            why=exc.message if isinstance(exc, ArenaError) else repr(exc))
            await asyncio.sleep(pause)

    # -- shutdown ---------------------------------------------------------------------------

    async def started(self) -> None:
        """Until every match being started (its rows being written) is running, or failed."""
        if self._starts:
            await asyncio.wait(list(self._starts))

    async def _until_bots_quiet(self) -> None:
        """Matches were aborted with requests open, and their bots may be answering them
        now: read those answers (each is rejected, its match over) until none comes for
        SHUTDOWN_QUIET_S, for at most SHUTDOWN_LISTEN_S, so that the status is the last thing
        on a quiet stream. Ended at once, a stream the bot was writing to lost its status
        now and then under load: the daemon closed the connection with the answers unread,
        and the bot saw 'Stream removed' or INTERNAL instead of UNAVAILABLE ("come back")."""
        if not self.sessions.all():
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + SHUTDOWN_LISTEN_S
        while (left := deadline - loop.time()) > 0:
            heard = self.untaken_answers
            await asyncio.sleep(min(SHUTDOWN_QUIET_S, left))
            if self.untaken_answers == heard:
                return

    def _counts(self, runner: MatchRunner) -> bool:
        """Whether the match's result counts beyond it: rated, or a tournament's table."""
        return runner.rated or self.purposes.get(runner.id, "").startswith("tournament ")

    async def shutdown(self, grace_s: float, hurry: asyncio.Event | None = None) -> None:
        """Stop accepting matches, abort at once those whose result counts (_counts), let the
        others finish for ``grace_s`` (or until ``hurry`` is set: a second signal), then abort
        and record the rest."""
        self.accepting = False
        self._stopping.set()
        self.tokens.stop()
        self.loop_monitor.stop()
        if self._house_task is not None:
            self._house_task.cancel()
        if self._starts:  # matches whose rows are being written join the running ones...
            # ... unless hurried: a daemon fenced off its store (server._keep_lease) must stop
            # its running matches now, not after starts stuck on that store (a review).
            await wait_unless_hurried(list(self._starts), max(grace_s, 1.0), hurry)
        for runner in list(self.runners.values()):
            if self._counts(runner):
                # Not given the grace: a rated match that may finish in it is rated only if every
                # bot answers in time, so a bot behind at its end voided it (and its whole set)
                # by thinking within its clock (an attack pass), and a tournament's table was
                # dealt again on fresh shuffles. It ends now, as a crash ends it.
                runner.stop(P.MATCH_STATUS_ABORTED, "server shutdown")
                continue
            runner.announce(f"the server is shutting down: this match may finish within {grace_s:g} s, "
                            "else it ends aborted")
        tasks = list(self._tasks)
        if tasks:
            await wait_unless_hurried(tasks, grace_s, hurry)
            done = {t for t in tasks if t.done()}
            for runner in list(self.runners.values()):
                runner.stop(P.MATCH_STATUS_ABORTED, "server shutdown")
            if len(done) < len(tasks):
                await asyncio.wait(tasks, timeout=30)
                await self._until_bots_quiet()
        if self._marking is not None:
            self._marking.cancel()
            await asyncio.gather(self._marking, return_exceptions=True)  # not two writes at once
        await self._abort_unstored()
        for session in self.sessions.all():  # UNAVAILABLE: not "leave" (OK) but "come back later"
            session.close("the server is shutting down: connect again when it is back", "unavailable")
