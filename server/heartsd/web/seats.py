"""A person's seat: a seat kind of the match runner, played from the browser.

To the runner a person's seat is a remote seat like a bot's (``SeatSlot`` with
provenance HUMAN and a person's clock): it is sent the same ``MatchUpdate``s, its
answers go through ``Arena.answer`` and the runner's checks (the engine's checked
entry points, the clock, max_illegal, defaults, auto-play), and a page that goes away
is a bot that disconnected (the grace period, then defaults). What the page is shown
is folded from those messages only (tables.py), so it knows exactly what a bot in that
seat would know.

Only the person who took the seat can act for it: taking it returns a per-seat secret
(set as an HttpOnly, SameSite=Strict cookie); only its SHA-256 is kept. A spectator link
(/watch/<id>) is a different page on the public feed.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import math
import secrets
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import structlog
from heartsbot.proto import admin_pb2, bot_pb2, cards_pb2, game_pb2

from hearts_engine import parse_card

from heartsbot import convert
from ..arena import HUMAN_PREFIX, Arena, ArenaError, SeatRequest
from ..budgets import address_networks
from ..config import Settings
from ..runner import MatchRunner, SeatSlot
from ..sessions import BotSession
from . import present
from .tables import TableTracker

P = game_pb2

log = structlog.get_logger("heartsd.web")
LINGER_S = 600.0  # a finished seat's page still shows the result (and a reload works) this long
OPEN_WITHIN_S = 15.0  # a seat no page opens within this gives its table back (HumanSeat._away)
LEAVE_WAIT_S = 10.0  # "Leave table" answers once the match is stored, or after this
LEFT = present.LEFT  # the reason a match is recorded with after "Leave table" (present: END_REASONS)
NOT_A_CARD = cards_pb2.Card()  # suit 0, rank 0: the runner rejects it as malformed, as for a bot


class SeatError(Exception):
    """A refused request about a seat; ``status`` is the HTTP status (app.py maps it).
    ``code`` names a refusal of a fixed set, for a page to act on and say in its language
    (i18n.js ``refusal_<code>``); the message stays the English for any other reader."""

    def __init__(self, status: int, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code


def secret_digest(secret: str) -> bytes:
    return hashlib.sha256(secret.encode()).digest()


class HumanSeat:
    """One person's seat in one running match, and the page (at most one) playing it."""

    def __init__(self, arena: Arena, runner: MatchRunner, slot: SeatSlot, digest: bytes, peer: str,
                 abandon_s: float = math.inf) -> None:
        self.arena = arena
        self.runner = runner
        self.slot = slot
        self.peer = peer
        self._digest = digest
        self.tracker = TableTracker(slot.seat)
        self.changed = asyncio.Event()
        self.session: BotSession | None = None
        self._on_replaced: Callable[[], None] | None = None  # tells the page that had the seat
        self._tasks: list[asyncio.Task[None]] = []
        self.finished_at: float | None = None
        self._abandon_s = abandon_s
        self._abandon_timer: asyncio.TimerHandle | None = None
        self._taken_at = time.monotonic()
        self._played = False  # the seat has answered a decision (a person, not just a page)
        self._away()  # no page has it yet

    @property
    def match_id(self) -> str:
        return self.runner.id

    @property
    def live(self) -> bool:
        return not self.runner.finished.is_set()

    def owns(self, secret: str | None) -> bool:
        return bool(secret) and hmac.compare_digest(secret_digest(secret or ""), self._digest)

    # -- a page connects and leaves ----------------------------------------------------

    def attach(self, on_replaced: Callable[[], None] | None = None) -> BotSession:
        """A page took the seat: it gets a session like a bot's stream (replacing the
        page that had it, which ``on_replaced`` of that page then tells: another tab took
        the seat) and everything the seat was sent but has not seen yet."""
        replaced, self._on_replaced = self._on_replaced, on_replaced
        if replaced is not None and self.session is not None:
            replaced()
        self.detach(self.session)
        if self._abandon_timer is not None:
            self._abandon_timer.cancel()
            self._abandon_timer = None
        session = BotSession(self.slot.name, "web", frozenset({self.runner.rules.name}), 1)
        session.on_overflow = lambda: self.detach(session)
        self.session = session
        if self.live:
            # A page that opens shows the person is back: their seat leaves auto-play now
            # (a bot leaves it with its first answer; a person should not lose a card to it).
            self.runner.seat_back(self.slot)
            # What was pending when the last page left may have been defaulted since: the
            # resume below sends the request that is open now, if any.
            self.tracker.forget_request()
            self.arena.connect(session)
            loop = asyncio.get_running_loop()
            self._tasks = [loop.create_task(self._pump(session)), loop.create_task(self._follow(session))]
            self.arena.resume_all(session)
        else:
            self._ended_away()
        self.changed.set()
        return session

    def _ended_away(self) -> None:
        """The match ended while no page had the seat (its table given back after
        ``abandon_s``, a shutdown...): the seat's view is folded from the seat's messages
        only, and its MatchEnded went to no page, so it is folded in here, from the runner's
        result. Before, a page reopened (or reconnecting) after a minute away showed the
        board as it was left, "Your turn" with its clock running, for a match that was over."""
        if self.tracker.result is None and self.runner.result is not None:
            self.tracker.apply_events([P.Event(match_ended=P.MatchEnded(result=self.runner.result))])

    def detach(self, session: BotSession | None) -> None:
        """The page left (or another took the seat): the seat goes the way of a
        disconnected bot (the grace period, then the server's defaults)."""
        if session is None or session is not self.session:
            return
        self.session = None
        for task in self._tasks:
            task.cancel()
        self._tasks = []
        self.arena.disconnect(session)
        self._away()

    def close(self) -> None:
        """The web front forgets the seat (it stops, or the match is long over)."""
        self.detach(self.session)
        if self._abandon_timer is not None:
            self._abandon_timer.cancel()
            self._abandon_timer = None

    def _away(self) -> None:
        """No page has the seat: if none comes back within ``abandon_s`` the table is given
        back (the match is cancelled). Otherwise a seat nobody opens, or one left for good,
        would hold one of the few tables for people (web_max_tables) until its clock and
        auto-play had played the whole match: about five minutes of a standard match.

        A seat that has not answered a decision yet has OPEN_WITHIN_S from when it was
        taken, however often a page opens and leaves it: its page opens it, and its
        person answers, moments after taking it. Before (attack passes), 16 POSTs a minute
        from 8 addresses, never opening a page (or opening it once), held every table for
        people."""
        if self._abandon_timer is not None or not self.live or not math.isfinite(self._abandon_s):
            return
        wait_s, unplayed = self._abandon_s, False
        if not self._played:
            left = max(0.0, self._taken_at + OPEN_WITHIN_S - time.monotonic())
            wait_s, unplayed = min(left, wait_s), left < wait_s
        self._abandon_timer = asyncio.get_running_loop().call_later(wait_s, self._abandon, wait_s, unplayed)

    def _abandon(self, wait_s: float, unplayed: bool) -> None:
        self._abandon_timer = None
        if self.session is None and self.live:
            why = (present.UNPLAYED.format(s=f"{OPEN_WITHIN_S:g}") if unplayed
                   else present.LEFT_AWAY.format(s=f"{wait_s:g}"))
            self._give_back(why, after_s=wait_s)

    async def leave(self) -> None:
        """The person left on purpose ("Leave table" on their page): the table is given back
        at once, as when no page has had the seat for ``abandon_s``, and the match is over
        (recorded as cancelled) when this returns. Before, closing the tab was the only
        way out, and the house played the seat's defaults for a minute first."""
        if self.live:
            self._give_back(LEFT, after_s=0.0)
        with contextlib.suppress(asyncio.TimeoutError):  # stored within moments; the page's socket says it too
            await asyncio.wait_for(self.runner.finished.wait(), LEAVE_WAIT_S)

    def _give_back(self, why: str, after_s: float) -> None:
        """End the seat's match early: cancelled, with ``why`` as its recorded reason."""
        log.info("a person's table was left; the match is cancelled", match_id=self.match_id, after_s=after_s,
                 played=self._played, why=why)
        self.runner.stop(P.MATCH_STATUS_CANCELLED, why)

    async def _pump(self, session: BotSession) -> None:
        """The seat's messages, as a bot's stream would carry them, into its tracker."""
        while True:
            message = await session.outbox.get()
            if message is None:
                return
            response = bot_pb2.PlayResponse.FromString(message) if isinstance(message, bytes) else message
            kind = response.WhichOneof("kind")
            if kind == "update":
                self.tracker.apply_update(response.update)
            elif kind == "rejected":
                self.tracker.rejected(response.rejected)
            self.changed.set()
            if self.tracker.result is not None and self.finished_at is None:
                self.finished_at = time.monotonic()

    async def _follow(self, session: BotSession) -> None:
        """A bot gets other seats' cards with its next request; a person sees each card as
        it lands: every change to the match flushes the seat's own undelivered events."""
        wake = asyncio.Event()
        self.runner.watchers.add(wake)
        try:
            while session.connected and self.live:
                await wake.wait()
                wake.clear()
                self.runner.deliver(self.slot)
        finally:
            self.runner.watchers.discard(wake)

    # -- the person's input ------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """The page's view (tables.py), and whether the server plays the seat by default
        now (auto-play after repeated time-outs): the person's own state, which a bot
        learns from its notices, shown so the page can say so and offer to take it back."""
        return {**self.tracker.snapshot(), "auto": self.slot.auto and self.live}

    def answer(self, session: BotSession, message: Any) -> bool:
        """Handle one message from the page. Returns False once the session has spent its
        budget of rejected answers (the page is then cut off, like a flooding bot)."""
        if session is not self.session:
            return False
        if isinstance(message, dict) and message.get("type") == "back":
            # "I am here": the seat leaves auto-play, as when a page opens; the next request
            # waits for the person's clock again. Anything else would be a wasted message.
            if not (self.slot.auto and self.live):
                return not session.wasted()
            self.runner.seat_back(self.slot)
            self.changed.set()
            return True
        try:
            answer = answer_from_page(message)
        except ValueError as exc:
            self.tracker.refused(str(exc))
            self.changed.set()
            return not session.wasted()
        answer.match_id = self.match_id
        self.tracker.answered(answer.request_id, message.get("play"))
        rejection = self.arena.answer(session, answer)
        if rejection is not None:
            self.tracker.rejected(rejection)
        else:
            self._played = True
        self.changed.set()
        return rejection is None or not session.wasted()


def answer_from_page(message: Any) -> bot_pb2.Answer:
    """The Answer a page's message asks for. Its shape is checked here (``ValueError``);
    its content (which cards, which option, in time) only by the runner, as for a bot:
    a card code that is not a card becomes a non-card the runner rejects as malformed.

    >>> answer_from_page({"type": "answer", "request_id": "r-1", "play": "QS"}).play.rank
    12
    >>> answer_from_page({"type": "answer", "request_id": "r-1", "play": "ZZ"}).play.suit
    0
    >>> answer_from_page({"type": "answer", "request_id": "r-1"})
    Traceback (most recent call last):
    ...
    ValueError: an answer needs one of 'pass', 'play' or 'moon'
    """
    if not isinstance(message, dict) or message.get("type") != "answer":
        raise ValueError("unknown message: the page sends only answers")
    request_id = message.get("request_id")
    if not isinstance(request_id, str) or not 0 < len(request_id) <= 64:
        raise ValueError("an answer needs the request_id of the request it answers")
    answer = bot_pb2.Answer(request_id=request_id)
    kinds = [k for k in ("pass", "play", "moon") if k in message]
    if len(kinds) != 1:
        raise ValueError("an answer needs one of 'pass', 'play' or 'moon'")
    value = message[kinds[0]]
    if kinds[0] == "play":
        if not isinstance(value, str):
            raise ValueError("'play' is a card code such as \"QS\"")
        answer.play.CopyFrom(_card(value))
    elif kinds[0] == "pass":
        if not isinstance(value, list) or len(value) > 16 or not all(isinstance(c, str) for c in value):
            raise ValueError("'pass' is a list of card codes")
        answer.pass_cards.cards.extend(_card(c) for c in value)
    else:
        if not isinstance(value, str):
            raise ValueError("'moon' is add_to_others or subtract_from_self")
        answer.moon = present.MOON_VALUES.get(value, 0)
    return answer


def _card(code: str) -> cards_pb2.Card:
    try:
        return convert.card_to_wire(parse_card(code[:8]))
    except ValueError:
        return NOT_A_CARD


class HumanSeats:
    """Every person's seat on this daemon, by match id."""

    def __init__(self, arena: Arena, settings: Settings) -> None:
        self.arena = arena
        self.settings = settings
        self.by_match: dict[str, HumanSeat] = {}
        # Seats being taken (their match is being created) per address: counted with the
        # live ones, so requests sent at once cannot all pass the caps before any is seated.
        self._taking: dict[str, int] = {}

    def get(self, match_id: str) -> HumanSeat | None:
        self._forget_old()
        return self.by_match.get(match_id)

    def owned(self, match_id: str, secret: str | None) -> HumanSeat:
        """The seat of ``match_id`` if ``secret`` (the caller's cookie) is its secret."""
        seat = self.get(match_id)
        if seat is None:
            raise SeatError(404, "no seat of yours in that match (it may be over: see its replay)", code="no_seat")
        if not seat.owns(secret):
            raise SeatError(403, f"this seat belongs to the person who took it; watch the match at "
                                 f"/watch/{quote(match_id, safe='')}", code="not_your_seat")
        return seat

    def options(self) -> dict[str, Any]:
        return {"opponents": list(self.settings.web_opponents),
                "human_decision_ms": self.settings.human_decision_ms, "human_bank_ms": self.settings.human_bank_ms}

    def _check_network(self, peer: str, live: list[HumanSeat]) -> None:
        """Refuse a table past one network's share of every table for people: a quarter to
        one /48, half to one /32 (budgets.address_networks; at least web_tables_per_peer).
        Before (an attack pass), the tables were counted by /64 only, and one home's /56
        holds 256 of them: one person took every table."""
        for network, share in zip(address_networks(peer), (4, 2)):
            cap = max(self.settings.web_tables_per_peer, self.settings.web_max_tables // share)
            held = sum(1 for s in live if network in address_networks(s.peer))
            held += sum(n for p, n in self._taking.items() if network in address_networks(p))
            if held >= cap:
                raise SeatError(429, f"too many tables are played from your network ({network.partition(']')[2]}); "
                                     "finish one, or try again when others have", code="tables_per_network")

    async def take(self, peer: str, ruleset: Any, players: Any, opponents: Any) -> tuple[HumanSeat, str]:
        """Start a match against house bots with a person's seat; return it and its secret."""
        self._forget_old()
        if not isinstance(ruleset, str) or not isinstance(players, int) or isinstance(players, bool):
            raise SeatError(400, "ruleset (text) and players (a number) are required")
        if not 3 <= players <= 7:
            raise SeatError(400, f"players must be 3 to 7, got {players}")
        allowed = self.settings.web_opponents
        if opponents is None:
            opponents = [allowed[0]] * (players - 1)
        if not isinstance(opponents, list) or len(opponents) != players - 1:
            raise SeatError(400, f"opponents: a list of {players - 1} house strategies")
        unknown = [o for o in opponents if o not in allowed]
        if unknown:
            raise SeatError(400, f"opponents may be {', '.join(allowed)}, not {', '.join(map(str, unknown))}")
        live = [s for s in self.by_match.values() if s.live]
        if len(live) + sum(self._taking.values()) >= self.settings.web_max_tables:
            raise SeatError(503, "every table for people is taken; try again in a few minutes", code="tables_full")
        if sum(1 for s in live if s.peer == peer) + self._taking.get(peer, 0) >= self.settings.web_tables_per_peer:
            n = self.settings.web_tables_per_peer
            raise SeatError(429, f"you already play {n} match{'es' if n != 1 else ''} here; finish one first",
                            code="tables_per_peer")
        self._check_network(peer, live)
        name = f"{HUMAN_PREFIX}h-{secrets.token_hex(4)}"
        seats = [SeatRequest(human=name), *(SeatRequest(house=o) for o in opponents)]
        delay_s = self.settings.web_house_delay_ms / 1000

        def prepare(runner: MatchRunner) -> None:
            runner.house_delay_s = delay_s  # house bots at a person's table play at a followable pace

        self._taking[peer] = self._taking.get(peer, 0) + 1
        try:
            runner = await self.arena.create_match(
                ruleset, players, admin_pb2.RulesetOptions(), game_pb2.MatchFormat(), None, seats,
                game_pb2.ClockSettings(), prepare=prepare)
        except ArenaError as exc:
            raise SeatError({"invalid": 400, "unavailable": 503}.get(exc.kind, 409), exc.message,
                            exc.code or None) from None
        finally:
            if self._taking[peer] == 1:
                del self._taking[peer]
            else:
                self._taking[peer] -= 1
        secret = secrets.token_urlsafe(32)
        seat = HumanSeat(self.arena, runner, runner.seats[0], secret_digest(secret), peer, self.settings.web_abandon_s)
        self.by_match[runner.id] = seat
        log.info("a person took a seat", match_id=runner.id, seat=0, ruleset=ruleset, opponents=opponents)
        return seat, secret

    def _forget_old(self) -> None:
        """Seats of matches over for LINGER_S are dropped (their page then shows the replay)."""
        now = time.monotonic()
        for match_id, seat in list(self.by_match.items()):
            if not seat.live:
                if seat.finished_at is None:
                    seat.finished_at = now
                elif now - seat.finished_at > LINGER_S:
                    seat.close()
                    del self.by_match[match_id]

    def close(self) -> None:
        for seat in self.by_match.values():
            seat.close()
        self.by_match.clear()

