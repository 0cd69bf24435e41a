"""The conformance kit: put one connected bot through every behaviour of the protocol.

``heartsd conformance`` starts a real daemon (an embedded, throwaway store) with one
bot account, waits for a client to connect with that account, and plays short
matches against house bots, each arranged so that one behaviour must happen:

========== ================================================================================
hello      the client authenticates, says ``hello`` with the account's name, is welcomed
pass       it answers a PASS request with legal cards
play       it answers every PLAY request of a deal with a legal card
moon       it answers a MOON request (classic rules; the kit plays the seat to a shot moon,
           provenance AUTO, and only asks the choice)
rejection  one answer is rejected on purpose (``retry: true``, code ILLEGAL): it answers the
           same request again, with a different choice, in time
late       one answer is treated as arriving after its deadline: the default is played
           (TIMEOUT), the answer is rejected as stale, and it goes on answering correctly
resume     the kit cuts the stream (UNAVAILABLE) when a request is due: it reconnects within
           the grace period, gets the pending request again and finishes the match; later the
           kit cuts it again as the bot's answer arrives, which is lost with the stream: on the
           new stream the bot answers that request again (the same request_id)
drain      in the middle of a match the kit interrupts the client (SIGINT, as Ctrl-C does, when
           the kit started it; otherwise it asks you to press Ctrl-C): it sends ``drain``,
           answers the rest of the match itself, and leaves when the server ends the stream
           (OK) without reconnecting; a client the kit started must then exit with status 0
========== ================================================================================

The matches are real: the same runner, clock and rules as a production daemon; the
only differences are the arranged events above, made by :class:`ConformanceRunner`.
A behaviour fails with the reason (which decision, which provenance, what was missing).

    heartsd conformance --port 0 -- node clients/node/bot.js --server {target} --token {token} --name {name}
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import secrets
import signal
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from hearts_engine import Match, MatchFormat, MoonAction, PassAction, Phase, PlayAction, preset
from hearts_engine.cards import HEARTS, QUEEN_OF_SPADES, RANK_OF, SUIT_OF, Card, format_cards
from heartsbot.proto import admin_pb2, bot_pb2, game_pb2
from heartsbot.stdio import VERSION_PREFIX as STDIO_VERSION_PREFIX
from heartsbot.strategies import Strategy

from .arena import Arena, SeatRequest
from .config import Settings
from .runner import P, Decision, MatchRunner, SeatSlot
from .sessions import BotSession

BEHAVIOURS = ("hello", "pass", "play", "moon", "rejection", "late", "resume", "drain")
DEFAULT_NAME = "conformance-bot"
HOUSE = "random"
# Every check's clock: a second a decision and a short bank, so a missed answer costs
# seconds, not the production default's eleven.
CLOCK = game_pb2.ClockSettings(decision_ms=1000, bank_ms=2000)
CUT_AT_REQUEST = 6  # the resume check cuts the stream instead of sending this request
DRAIN_AT_REQUEST = 4  # the drain check interrupts the client as this request goes out
MANUAL_HOUSE_DELAY_S = 0.5  # the drain check without a client command: time to press Ctrl-C
REJECT_REASON = "conformance check: this answer is rejected on purpose; answer the same request again with another card"
LATE_REASON = "too late: the default was played"
CUT_REASON = "conformance check: the stream is cut on purpose; reconnect and resume"
LOSE_FROM_REQUEST = 10  # the resume check's second cut loses the bot's answer to this request or a later one
LOST_REASON = ("conformance check: the stream is cut on purpose as your answer arrived, which is lost with it; "
               "reconnect and answer the request the new stream sends, although you answered it here")


@dataclass
class Result:
    behaviour: str
    passed: bool
    detail: str


# -- the scripted seats of the moon check ------------------------------------------------


def _by_rank(card: Card) -> tuple[int, int]:
    return RANK_OF[card], SUIT_OF[card]


class Shooter(Strategy):
    """Keeps its high cards and always plays its highest legal card."""

    name = "conformance-shooter"

    def choose_pass(self, view):  # type: ignore[no-untyped-def]
        return sorted(view.legal, key=_by_rank)[: view.rules.pass_count]

    def choose_play(self, view):  # type: ignore[no-untyped-def]
        return max(view.legal, key=_by_rank)


class Feeder(Strategy):
    """Ducks whenever it can and throws its penalty cards when it cannot follow."""

    name = "conformance-feeder"

    def choose_pass(self, view):  # type: ignore[no-untyped-def]
        return sorted(view.legal, key=_by_rank)[-view.rules.pass_count:]

    def choose_play(self, view):  # type: ignore[no-untyped-def]
        legal = view.legal
        if view.trick and all(SUIT_OF[c] != SUIT_OF[view.trick[0]] for c in legal):  # void: feed
            if QUEEN_OF_SPADES in legal:
                return QUEEN_OF_SPADES
            hearts = [c for c in legal if SUIT_OF[c] == HEARTS]
            return max(hearts or legal, key=_by_rank)
        return min(legal, key=_by_rank)


@functools.cache
def moon_seed(ruleset: str = "classic", seat: int = 0, first: int = 1) -> int:
    """The first seed from ``first`` whose one-deal match, played by a Shooter at ``seat``
    and Feeders elsewhere, ends with ``seat`` choosing how to score a shot moon."""
    rules = preset(ruleset)
    for seed in range(first, first + 20_000):
        match = Match(rules, MatchFormat.fixed(1), seed)
        players = [Shooter() if s == seat else Feeder() for s in range(rules.players)]
        while match.deal.phase is not Phase.MOON_CHOICE and not match.is_over:
            actor = match.to_act()[0]
            view = match.view(actor)
            if match.deal.phase is Phase.PASSING:
                match.apply(actor, PassAction(tuple(players[actor].choose_pass(view))))
            else:
                match.apply(actor, PlayAction(players[actor].choose_play(view)))
        if match.deal.phase is Phase.MOON_CHOICE and match.to_act() == (seat,):
            return seed
    raise RuntimeError("no seed found for the moon check")


# -- the runner with the arranged events -------------------------------------------------


@dataclass
class Arrangement:
    """What one conformance match arranges, and what it observed."""

    kind: str = ""  # "", "moon", "rejection", "late", "resume"
    target: str | None = None  # the request id the arranged event happened to
    target_index: int | None = None  # its decision's index in the match's decisions
    rejected_answer: bot_pb2.Answer | None = None
    second_answer_same: bool = False
    requests: int = 0
    cut_at: float | None = None
    reconnected_after_s: float | None = None
    lost_at: float | None = None  # the resume check's second cut, which lost an answer
    lost_target: str | None = None  # the request whose answer it lost
    lost_index: int | None = None  # that request's decision's index
    back_after_lost_s: float | None = None
    resumed_from: list[int] = field(default_factory=list)
    rejections: list[str] = field(default_factory=list)  # the reasons of every rejection sent
    cue: Callable[[], None] | None = None  # the drain check: interrupt the client
    cued_at: float | None = None
    drained_at: float | None = None
    drained_session: BotSession | None = None


class ConformanceRunner(MatchRunner):
    """A match runner that arranges one event for the bot's seat (see the module doc)."""

    arrangement = Arrangement()
    shooter = Shooter()

    def _request_decision(self, slot: SeatSlot) -> bool:
        a = self.arrangement
        if a.kind == "moon" and self.match.deal.phase is not Phase.MOON_CHOICE:
            # The kit plays this seat to a shot moon; the bot is only asked the choice.
            view = self.match.view(slot.seat)
            if self.match.deal.phase is Phase.PASSING:
                action: PassAction | PlayAction = PassAction(tuple(self.shooter.choose_pass(view)))
            else:
                action = PlayAction(self.shooter.choose_play(view))
            self._apply(slot.seat, action, P.PROVENANCE_AUTO, 0.0, 0)
            slot.consecutive_defaults, slot.auto = 0, False
            return False  # no request is open: the match moved on
        return super()._request_decision(slot)

    def _send(self, slot: SeatSlot, request: bytes | None) -> BotSession | None:
        a = self.arrangement
        if request is not None and slot.house is None:
            a.requests += 1
            if a.kind == "resume" and a.requests == CUT_AT_REQUEST and a.cut_at is None:
                session = self.arena.sessions.get(slot.name)
                if session is not None:
                    a.cut_at = time.monotonic()
                    a.target = slot.pending.request_id if slot.pending else None
                    session.close(CUT_REASON, "unavailable")
                    return None  # not delivered: the reconnect must bring it
            if a.kind == "drain" and a.requests == DRAIN_AT_REQUEST and a.cued_at is None and a.cue is not None:
                a.cued_at = time.monotonic()
                a.cue()
        return super()._send(slot, request)

    def resume(self, slot: SeatSlot, after: int) -> None:
        a = self.arrangement
        if a.cut_at is not None and a.reconnected_after_s is None:
            a.reconnected_after_s = time.monotonic() - a.cut_at
        elif a.lost_at is not None and a.back_after_lost_s is None:
            a.back_after_lost_s = time.monotonic() - a.lost_at
        super().resume(slot, after)

    def _rejection(self, answer: bot_pb2.Answer, code: int, reason: str, retry: bool,
                   slot: SeatSlot) -> bot_pb2.AnswerRejected:
        if reason not in (REJECT_REASON, LATE_REASON):  # the arranged ones
            self.arrangement.rejections.append(_named(code, reason, answer.request_id))
        return super()._rejection(answer, code, reason, retry, slot)

    def on_answer(self, slot: SeatSlot, answer: bot_pb2.Answer) -> bot_pb2.AnswerRejected | None:
        a = self.arrangement
        pending = slot.pending
        # While a card is being played only one seat acts, so the next decision recorded
        # is the one to this request: its index is known now.
        if pending is not None and a.kind == "rejection":
            if a.target is None and pending.kind == P.DECISION_KIND_PLAY and len(
                    self.match.deal.legal_plays(slot.seat)) >= 2:
                a.target, a.target_index, a.rejected_answer = pending.request_id, len(self.decisions), answer
                pending.rejected += 1
                return self._rejection(answer, bot_pb2.REJECTION_CODE_ILLEGAL, REJECT_REASON, True, slot)
            if pending.request_id == a.target and a.rejected_answer is not None:
                a.second_answer_same = a.second_answer_same or answer.play == a.rejected_answer.play
        if (pending is not None and a.kind == "resume" and a.reconnected_after_s is not None and a.lost_at is None
                and a.requests >= LOSE_FROM_REQUEST and pending.request_id == answer.request_id):
            # As if the stream broke as the answer arrived: it is lost, the request stays open,
            # and the new stream must bring an answer to it again.
            session = self.arena.sessions.get(slot.name)
            if session is not None:
                a.lost_at, a.lost_target, a.lost_index = time.monotonic(), pending.request_id, len(self.decisions)
                session.close(LOST_REASON, "unavailable")
                return None
        if pending is not None and a.kind == "late" and a.target is None and pending.kind == P.DECISION_KIND_PLAY:
            # As if the answer had arrived just after the deadline: the timer fires first.
            a.target, a.target_index = pending.request_id, len(self.decisions)
            self._guarded(lambda: self._time_out(slot))
            return self._rejection(answer, bot_pb2.REJECTION_CODE_STALE_REQUEST, LATE_REASON, False, slot)
        return super().on_answer(slot, answer)


def _named(code: int, reason: str, request_id: str) -> str:
    """A rejection as a check's report names it: its code, reason and the id answered."""
    name = bot_pb2.RejectionCode.Name(code).removeprefix("REJECTION_CODE_")
    return f"{name}: {reason} (request_id {request_id[:64]!r})"


class ConformanceArena(Arena):
    """An arena whose matches are :class:`ConformanceRunner`, which notes ``resume`` messages,
    the rejections the arena makes itself (an answer that names no open request: the runner
    never sees it) and when the bot connects."""

    runner_class = ConformanceRunner

    def __init__(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self.connected_at: list[float] = []  # monotonic times of the bot's welcomes
        self.refusals: list[str] = []  # "CODE: details" of every stream ended before its welcome

    def stream_refused(self, code: Any, details: str) -> None:
        self.refusals.append(f"{getattr(code, 'name', code)}: {details}")

    def refused(self) -> str:
        """What the server said to the last stream it refused, for a report ("" if none)."""
        if not self.refusals:
            return ""
        return f"; the server refused {len(self.refusals)} stream(s), the last with {self.refusals[-1]}"

    def answer(self, session: BotSession, answer: bot_pb2.Answer) -> bot_pb2.AnswerRejected | None:
        runner = self.runners.get(answer.match_id)
        noted = len(runner.arrangement.rejections) if isinstance(runner, ConformanceRunner) else 0
        rejection = super().answer(session, answer)
        if (rejection is not None and isinstance(runner, ConformanceRunner)
                and len(runner.arrangement.rejections) == noted):  # the arena's, not the runner's
            runner.arrangement.rejections.append(_named(rejection.code, rejection.reason, answer.request_id))
        return rejection

    def resume_all(self, session: BotSession) -> None:
        self.connected_at.append(time.monotonic())
        super().resume_all(session)

    def resume(self, session, request):  # type: ignore[no-untyped-def]
        runner = self.runners.get(request.match_id)
        if isinstance(runner, ConformanceRunner):
            runner.arrangement.resumed_from.append(int(request.last_sequence))
        return super().resume(session, request)

    def drain(self, session: BotSession, reason: str, cause: int) -> None:
        for runner in self.runners.values():
            if isinstance(runner, ConformanceRunner) and runner.seats_of(session.bot):
                a = runner.arrangement
                if a.kind == "drain" and a.drained_at is None:
                    a.drained_at, a.drained_session = time.monotonic(), session
        super().drain(session, reason, cause)


# -- the checks ----------------------------------------------------------------------------


class Kit:
    """Runs the checks against the bot ``name`` connected to ``arena``."""

    def __init__(self, arena: Arena, name: str, timeout_s: float = 60.0, progress: bool = False,
                 grace_ms: int = 10_000, interrupt: Callable[[], None] | None = None,
                 exited: Callable[[float], Awaitable[int | None]] | None = None) -> None:
        self.arena = arena
        self.name = name
        self.timeout_s = timeout_s
        self.progress = progress
        self.grace_ms = grace_ms
        self.results: list[Result] = []
        # The drain check: how to interrupt the client (SIGINT to the command the kit
        # started; None: ask the person at the terminal), and how to learn its exit status.
        self.interrupt = interrupt
        self.exited = exited

    async def run(self) -> list[Result]:
        """Every check in turn; ``self.results`` holds those done so far (the kit reads
        them when its client exits before the end)."""
        results = self.results = [await self._hello()]
        if not results[0].passed:
            results += [Result(b, False, "not run: the bot never connected") for b in BEHAVIOURS[1:]]
            return results
        results += await self._pass_and_play()
        for check in (self._moon, self._rejection, self._late, self._resume, self._drain):
            results.append(await check())
        return results

    def _say(self, text: str) -> None:
        if self.progress:
            print(f"  ... {text}", file=sys.stderr, flush=True)

    async def _connected(self) -> bool:
        deadline = time.monotonic() + self.timeout_s
        while time.monotonic() < deadline:
            session = self.arena.sessions.get(self.name)
            if session is not None and session.connected:
                return True
            await asyncio.sleep(0.02)
        return False

    async def _hello(self) -> Result:
        self._say(f"waiting up to {self.timeout_s:.0f} s for the bot {self.name!r} to connect")
        if not await self._connected():
            refused = self.arena.refused() if isinstance(self.arena, ConformanceArena) else ""
            return Result("hello", False, f"no bot connected as {self.name!r} within {self.timeout_s:.0f} s{refused}")
        session = self.arena.sessions.get(self.name)
        assert session is not None
        detail = f"said hello as {self.name!r} (version {session.version!r}) and was welcomed"
        if session.version.startswith(STDIO_VERSION_PREFIX):  # what passes is the bridge, not the bot behind it
            detail += ("; this is heartsbot stdio, so these checks test the bridge, which answers for its bot "
                       "whenever the bot's answer is missing, late or illegal: the bridge's stderr names each "
                       "such answer and counts them at exit ('N answered by the bridge')")
        return Result("hello", True, detail)

    async def _play(self, arrangement: Arrangement, ruleset: str = "standard", seed: int = 1,
                    clock: game_pb2.ClockSettings | None = None, house: Sequence[Strategy] = (),
                    house_delay_s: float = 0.0) -> tuple[ConformanceRunner | None, str]:
        """One one-deal match, the bot at seat 0; the runner, or None and why."""
        if not await self._connected():
            return None, f"the bot was not connected (waited {self.timeout_s:.0f} s)"
        rules = preset(ruleset)
        seats = [SeatRequest(bot=self.name)] + [SeatRequest(house=HOUSE)] * (rules.players - 1)
        def arrange(runner: MatchRunner) -> None:  # before anything of the match happens
            assert isinstance(runner, ConformanceRunner)
            runner.arrangement = arrangement
            runner.house_delay_s = house_delay_s or runner.house_delay_s
            for slot, strategy in zip(runner.seats[1:], house):
                slot.house = strategy

        runner = await self.arena.create_match(ruleset, rules.players, admin_pb2.RulesetOptions(),
                                               game_pb2.MatchFormat(fixed_deals=1), seed, seats,
                                               clock or CLOCK, prepare=arrange)
        assert isinstance(runner, ConformanceRunner)
        try:
            await asyncio.wait_for(runner.finished.wait(), self.timeout_s)
        except asyncio.TimeoutError:
            runner.stop(P.MATCH_STATUS_ABORTED, "conformance check timed out")
            await runner.finished.wait()
            return None, f"the match did not finish within {self.timeout_s:.0f} s"
        if runner.status != P.MATCH_STATUS_FINISHED:
            return None, f"the match ended {runner.result.reason if runner.result else 'without a result'}"
        return runner, ""

    @staticmethod
    def _mine(runner: MatchRunner, kinds: tuple[type, ...] = (PassAction, PlayAction, MoonAction)) -> list[Decision]:
        return [d for d in runner.decisions if d.seat == 0 and isinstance(d.action, kinds)]

    @staticmethod
    def _flaws(decisions: Sequence[Decision], runner: ConformanceRunner | None = None) -> str:
        bad = [d for d in decisions if d.provenance != P.PROVENANCE_BOT or d.rejected]
        if not bad:
            return ""
        d = bad[0]
        what = P.Provenance.Name(d.provenance).removeprefix("PROVENANCE_")
        return (f"{len(bad)} of {len(decisions)} decisions were not clean answers; the first was {what}"
                f" after {d.rejected} rejected answer(s) to it" + Kit._said(runner))

    @staticmethod
    def _said(runner: ConformanceRunner | None) -> str:
        """What the server rejected of the bot's answers in ``runner``'s match, if anything:
        an answer late or naming a wrong id is no answer to its request, and without this a
        report read as if the bot had never answered."""
        said = runner.arrangement.rejections if runner is not None else []
        if not said:
            return ""
        return f"; the server rejected {len(said)} of its answers, the first with {said[0]}"

    async def _pass_and_play(self) -> list[Result]:
        self._say("pass and play: one standard deal")
        runner, why = await self._play(Arrangement())
        if runner is None:
            return [Result("pass", False, why), Result("play", False, why)]
        passes, plays = self._mine(runner, (PassAction,)), self._mine(runner, (PlayAction,))
        results = []
        flaw = self._flaws(passes, runner)
        if not passes:
            results.append(Result("pass", False, "the deal had no pass from the bot"))
        else:
            passed = passes[0].action
            assert isinstance(passed, PassAction)
            results.append(Result("pass", not flaw, flaw or f"passed {format_cards(passed.cards)}"))
        flaw = self._flaws(plays, runner)
        results.append(Result("play", not flaw and len(plays) == 13,
                              flaw or f"played {len(plays)} legal cards, every one its own answer"))
        return results

    async def _moon(self) -> Result:
        self._say("moon: a classic deal the kit plays to a shot moon for the bot")
        seed = await asyncio.to_thread(moon_seed)
        runner, why = await self._play(Arrangement(kind="moon"), ruleset="classic", seed=seed,
                                       house=[Feeder(), Feeder(), Feeder()])
        if runner is None:
            return Result("moon", False, why)
        moons = self._mine(runner, (MoonAction,))
        if not moons:
            return Result("moon", False, "the deal ended without a moon choice (the kit's arrangement failed)")
        flaw = self._flaws(moons, runner)
        option = moons[0].action
        assert isinstance(option, MoonAction)
        return Result("moon", not flaw, flaw or f"chose {option.option.name.lower()} when asked")

    async def _arranged(self, kind: str, seed: int, never: str) -> tuple[
            ConformanceRunner, Arrangement, Decision] | Result:
        """Play a match arranging ``kind``; the runner, the arrangement and the decision the
        arranged event happened to, or the failed Result (``never``: it never happened)."""
        a = Arrangement(kind=kind)
        runner, why = await self._play(a, seed=seed)
        if runner is None:
            return Result(kind, False, why)
        if a.target_index is None or a.target_index >= len(runner.decisions):
            return Result(kind, False, never + self._said(runner))
        return runner, a, runner.decisions[a.target_index]

    async def _rejection(self) -> Result:
        self._say("rejection: one answer is rejected on purpose")
        arranged = await self._arranged("rejection", 2, "no answer of the bot was to an open play request with two "
                                                        "legal cards, so none could be rejected on purpose")
        if isinstance(arranged, Result):
            return arranged
        runner, a, target = arranged
        if target.provenance != P.PROVENANCE_BOT:
            what = P.Provenance.Name(target.provenance).removeprefix("PROVENANCE_")
            return Result("rejection", False, f"it did not answer again after a rejection with retry=true; "
                          f"the server played its default ({what})")
        if a.second_answer_same:
            return Result("rejection", False, "it answered again with the card that was just rejected")
        flaw = self._flaws([d for d in self._mine(runner) if d is not target], runner)
        return Result("rejection", not flaw, flaw or "answered the rejected request again with another legal card")

    async def _late(self) -> Result:
        self._say("late: one answer counts as arriving after its deadline")
        arranged = await self._arranged("late", 3, "no answer of the bot was to an open play request, so none could "
                                                   "count as late")
        if isinstance(arranged, Result):
            return arranged
        runner, a, target = arranged
        assert target.seat == 0 and target.provenance == P.PROVENANCE_TIMEOUT, target
        before = [d for d in runner.decisions[:a.target_index] if d.seat == 0]
        after = [d for d in runner.decisions[a.target_index + 1:] if d.seat == 0]
        flaw = self._flaws(before + after, runner)
        if flaw:
            return Result("late", False, f"around its late answer: {flaw}")
        return Result("late", True, f"its late answer was refused as stale; it answered the next {len(after)} "
                      "requests itself")

    async def _resume(self) -> Result:
        self._say("resume: the stream is cut when a request is due")
        a = Arrangement(kind="resume")
        clock = game_pb2.ClockSettings(decision_ms=CLOCK.decision_ms, bank_ms=CLOCK.bank_ms, grace_ms=self.grace_ms)
        runner, why = await self._play(a, seed=4, clock=clock)
        if runner is None:
            return Result("resume", False, why)
        if a.cut_at is None:
            return Result("resume", False, "the kit could not cut the stream (too few requests)")
        if a.reconnected_after_s is None:
            # The match may have ended before the bot came back (its seat auto-played): a
            # client that returns within the grace period still did its part of the check.
            back = await self._back_after(a.cut_at, a.cut_at + self.grace_ms / 1000)
            if not back:
                return Result("resume", False, "it never reconnected after the stream was cut")
            flaw = self._flaws(self._mine(runner), runner)
            return Result("resume", False, f"it reconnected {back[0]:.2f} s after the cut, but its match was over "
                          "by then, so there was nothing to resume" + (f": {flaw}" if flaw else ""))
        how = (f"sent resume from sequence {a.resumed_from[0]}" if a.resumed_from
               else "took the server's automatic re-send")
        first = f"it reconnected {a.reconnected_after_s:.2f} s after the cut and {how}"
        if a.lost_at is None or a.lost_index is None:
            flaw = self._flaws(self._mine(runner), runner)
            return Result("resume", False, f"{first}; the kit could not cut the stream again as an answer arrived "
                          "(too few answers after the first cut)" + (f": {flaw}" if flaw else ""))
        if a.back_after_lost_s is None:
            back = await self._back_after(a.lost_at, a.lost_at + self.grace_ms / 1000)
            return Result("resume", False, f"{first}; after the second cut (as its answer arrived) " + (
                f"it reconnected {back[0]:.2f} s later, but its match was over by then" if back
                else "it never reconnected"))
        lost = runner.decisions[a.lost_index] if a.lost_index < len(runner.decisions) else None
        if lost is None or lost.seat != 0 or lost.provenance != P.PROVENANCE_BOT:
            what = P.Provenance.Name(lost.provenance).removeprefix("PROVENANCE_") if lost is not None else "none"
            return Result("resume", False, (
                f"{first}; after the second cut, which lost its answer to request {a.lost_target!r}, it reconnected "
                f"but did not answer that request again when the new stream sent it (the server played {what}): "
                "answer every request a new stream sends, even one answered on the old stream"))
        flaw = self._flaws(self._mine(runner), runner)
        return Result("resume", not flaw, flaw or (
            f"reconnected {a.reconnected_after_s:.2f} s after the cut, {how}; reconnected "
            f"{a.back_after_lost_s:.2f} s after a second cut that lost an answer and answered that request again; "
            "finished the match"))


    async def _back_after(self, since: float, until: float) -> list[float]:
        """How long after ``since`` the bot connected again, waiting until ``until`` (monotonic)."""
        while True:
            back = [t - since for t in getattr(self.arena, "connected_at", ()) if t > since]
            if back or time.monotonic() >= until:
                return back
            await asyncio.sleep(0.02)

    async def _drain(self) -> Result:
        manual = self.interrupt is None
        self._say("drain: the client is interrupted (Ctrl-C) in the middle of a match")

        def ask() -> None:
            print("  >>> drain check: press Ctrl-C in your bot now (it must drain: finish this match, then leave)",
                  file=sys.stderr, flush=True)

        a = Arrangement(kind="drain", cue=self.interrupt or ask)
        runner, why = await self._play(a, seed=5, house_delay_s=MANUAL_HOUSE_DELAY_S if manual else 0.0)
        if runner is None:
            return Result("drain", False, why)
        if a.cued_at is None:
            return Result("drain", False, "the kit could not interrupt the client (too few requests)")
        if a.drained_at is None:
            return Result("drain", False, "it never sent drain after it was interrupted (Ctrl-C); the match was "
                          "played to its end anyway" if not manual else "no drain arrived during the match")
        flaw = self._flaws(self._mine(runner), runner)
        if flaw:
            return Result("drain", False, f"while draining: {flaw}")
        session = a.drained_session
        assert session is not None
        deadline = time.monotonic() + 5
        while session.connected and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        if session.connected or not session.close_reason.startswith("drained"):
            return Result("drain", False, f"its stream did not end as drained ({session.close_reason or 'still open'})")
        await asyncio.sleep(1.0)
        again = self.arena.sessions.get(self.name)
        if again is not None:
            return Result("drain", False, "it connected again after its stream ended drained; a drained client leaves")
        exit_note = ""
        if self.exited is not None:
            code = await self.exited(10.0)
            if code is None:
                return Result("drain", False, "it was still running 10 s after its stream ended drained")
            if code != 0:
                return Result("drain", False, f"it exited with status {code} after draining; a clean leave is 0")
            exit_note = " and exited 0"
        took = a.drained_at - a.cued_at
        when = "the prompt to press Ctrl-C" if manual else "Ctrl-C"
        return Result("drain", True, f"sent drain {took:.2f} s after {when}, answered the rest of the match itself, "
                      f"and left when the stream ended{exit_note}")


# -- running it: an embedded daemon, an optional client command, the report ------------------


def report(results: Sequence[Result]) -> list[str]:
    width = max(len(r.behaviour) for r in results)
    lines = [f"  {'PASS' if r.passed else 'FAIL'}  {r.behaviour:<{width}}  {r.detail}" for r in results]
    failed = [r.behaviour for r in results if not r.passed]
    lines.append(f"all {len(results)} behaviours passed" if not failed
                 else f"{len(failed)} of {len(results)} behaviours failed: {', '.join(failed)}")
    return lines


@contextlib.asynccontextmanager
async def kit_server(host: str, port: int, name: str, token: str,
                     tls: dict[str, str] | None = None) -> AsyncIterator[tuple[ConformanceArena, str]]:
    """A daemon with one bot account ``name``/``token`` and a throwaway store; (arena, target).
    ``tls``: the TLS settings (tls_cert, tls_key, tls_client_ca) for a kit served over TLS."""
    from .server import embedded  # the gRPC layer only when actually serving

    with tempfile.TemporaryDirectory(prefix="heartsd-conformance-") as tmp:
        settings = Settings.load(env={}, flags=dict(
            host=host, port=port, db_path=str(Path(tmp) / "conformance.db"), admin_token=secrets.token_urlsafe(16),
            bot_tokens=f"{name}:{token}", log_level="error", shutdown_grace_s=1, **(tls or {})))
        async with embedded(settings, ConformanceArena) as (arena, bound):
            assert isinstance(arena, ConformanceArena)
            yield arena, f"{host}:{bound}"


CLIENT_EXIT_GRACE_S = 3.0  # a client that exits by itself: the check under way may still finish


async def _until_client_exits(kit: Kit, child: asyncio.subprocess.Process | None,
                              interrupted: list[bool]) -> list[Result]:
    """Run the checks; if the client the kit started exits on its own (not asked to by the
    drain check), stop soon after instead of waiting out every check's timeout: what was
    not checked yet fails, naming the exit."""
    checks = asyncio.ensure_future(kit.run())
    if child is None:
        return await checks
    exit_waiter = asyncio.ensure_future(child.wait())
    try:
        await asyncio.wait({checks, exit_waiter}, return_when=asyncio.FIRST_COMPLETED)
        if checks.done() or interrupted:
            return await checks
        try:
            return await asyncio.wait_for(asyncio.shield(checks), CLIENT_EXIT_GRACE_S)
        except asyncio.TimeoutError:
            checks.cancel()
            await asyncio.gather(checks, return_exceptions=True)
        code = child.returncode
        why = f"status {code}" if code is not None and code >= 0 else f"signal {-(code or 0)}"
        done = {r.behaviour for r in kit.results}
        refused = kit.arena.refused() if isinstance(kit.arena, ConformanceArena) else ""
        print(f"the client exited ({why}) before the checks were done; stopping", file=sys.stderr, flush=True)
        return kit.results + [Result(b, False, f"not run: the client exited with {why} first{refused}")
                              for b in BEHAVIOURS if b not in done]
    finally:
        exit_waiter.cancel()


async def run_kit(host: str, port: int, name: str, token: str, timeout_s: float, command: Sequence[str],
                  as_json: bool, tls: dict[str, str] | None = None) -> int:
    """The ``heartsd conformance`` command: serve, optionally start the client, check, report."""
    async with kit_server(host, port, name, token, tls) as (arena, target):
        print(f"conformance server on {target}: connect your bot as {name!r} with token {token}", flush=True)
        child = None
        if command:
            values = {"target": target, "token": token, "name": name}
            argv = [part.format(**values) for part in command]
            env = dict(os.environ, HEARTS_SERVER=target, HEARTS_TOKEN=token, HEARTS_NAME=name)
            child = await asyncio.create_subprocess_exec(*argv, env=env, start_new_session=True)
        try:
            interrupt = exited = None
            interrupted: list[bool] = []  # the drain check asked the client to leave
            if child is not None:
                process = child

                def interrupt() -> None:
                    interrupted.append(True)
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(process.pid, signal.SIGINT)

                async def exited(within_s: float) -> int | None:
                    try:
                        return await asyncio.wait_for(process.wait(), within_s)
                    except asyncio.TimeoutError:
                        return None

            kit = Kit(arena, name, timeout_s, progress=not as_json, interrupt=interrupt, exited=exited)
            results = await _until_client_exits(kit, child, interrupted)
        finally:
            if child is not None and child.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(child.pid, signal.SIGTERM)
                try:
                    await asyncio.wait_for(child.wait(), 5)
                except asyncio.TimeoutError:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(child.pid, signal.SIGKILL)
            if child is not None:  # what the client started and left running ends with it (an attack pass)
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(child.pid, signal.SIGKILL)
    for line in report(results):
        print(line)
    if as_json:
        print(json.dumps({"passed": all(r.passed for r in results), "behaviours": [asdict(r) for r in results]}))
    return 0 if all(r.passed for r in results) else 1
