"""What one audience knows of a table, folded from the messages it was sent.

A person's seat is fed its own ``MatchUpdate``s (the events and decision requests a bot
in that seat would get, and nothing else); a live spectator is fed the spectator
events. :class:`TableTracker` keeps only what those messages said and turns it into
the JSON snapshot the page renders. It cannot show more than its audience was sent:
it has no other input. Every decision request replaces what the tracker had folded
from events, because a request is complete in itself.

This is bookkeeping, not rules: which cards are legal comes only from the server's
request, who won a trick only from its TrickWon event.
"""

from __future__ import annotations

import time
from collections import deque
from typing import Any

from heartsbot.proto import bot_pb2, game_pb2

from heartsbot import convert
from . import present

P = game_pb2
NOTICES_KEPT = 5
# The provenances of a decision the server made for a seat (a Notice names the seat).
DEFAULTED = frozenset({P.PROVENANCE_TIMEOUT, P.PROVENANCE_ILLEGAL, P.PROVENANCE_DISCONNECT, P.PROVENANCE_AUTO})


def _empty_trick(number: int = 0, leader: int = -1) -> dict[str, Any]:
    return {"number": number, "leader": leader, "cards": []}


class TableTracker:
    """One audience's table: ``seat`` >= 0 for a seat's own view, -1 for a spectator."""

    def __init__(self, seat: int = -1) -> None:
        self.seat = seat
        self.version = 0
        self.match_id = ""
        self.rules: dict[str, Any] = {}
        self.seats: list[dict[str, Any]] = []
        self.players = 0
        self.hand_size = 0
        self.deal = -1
        self.pass_direction = "hold"
        self.pass_to = -1
        self.exchanged = False
        self.hand: list[int] | None = None  # engine cards, own seat only
        self.hands: list[list[int]] | None = None  # every hand, only if the feed revealed them
        self.hand_sizes: list[int] = []
        self.passed: list[str] | None = None
        self.received: list[str] | None = None
        self.trick: dict[str, Any] = _empty_trick()
        self.last_trick: dict[str, Any] | None = None
        self.hearts_broken = False
        self.points_taken: list[int] = []
        self.tricks_won: list[int] = []
        self.totals: list[int] = []
        self.deal_scores: list[dict[str, Any]] = []
        self.request: dict[str, Any] | None = None
        self._request_at = 0.0
        self.rejection: dict[str, Any] | None = None
        self.notices: deque[dict[str, Any]] = deque(maxlen=NOTICES_KEPT)
        # What the server last decided for this seat (a time-out...), until the seat answers
        # again: what kind of decision, and the cards it played or passed or the moon option.
        self.defaulted: dict[str, Any] | None = None
        self._defaults = 0
        self._asked: dict[str, Any] | None = None  # the request last sent and not answered
        self._own_play: str | None = None  # the seat's last card played
        self._own_moon: str | None = None  # the moon option of the seat's last moon
        self._played_for: tuple[str, str | None] | None = None  # (request id, the card the page answered it with)
        self.result: dict[str, Any] | None = None
        # The deal before this one as it ended: its last trick (with its winner and points),
        # what each seat took, and whether hearts were broken. Its TrickWon comes with the
        # next deal's start, so without it a page never had the last trick to show (table.js
        # holds it in view a moment).
        self.deal_end: dict[str, Any] | None = None
        self.last_sequence = 0

    # -- input ---------------------------------------------------------------------

    def apply_update(self, update: bot_pb2.MatchUpdate) -> None:
        """A seat's MatchUpdate: its events, then its request if it has one."""
        self.apply_events(update.events)
        if update.HasField("request"):
            self._apply_request(update.request)
            self.version += 1

    def apply_events(self, events: Any) -> None:
        for event in events:
            if event.sequence and event.sequence <= self.last_sequence:
                continue  # sent again after a reconnect
            self.last_sequence = max(self.last_sequence, event.sequence)
            kind = event.WhichOneof("kind")
            handler = getattr(self, f"_on_{kind}", None)
            if handler is not None:
                handler(getattr(event, kind))
            self.version += 1

    def rejected(self, rejection: bot_pb2.AnswerRejected) -> None:
        code = present.REJECTIONS.get(rejection.code, "unknown")
        self.rejection = {"reason": rejection.reason, "code": code, "retry": rejection.retry,
                          "request_id": rejection.request_id, "why": None}
        request = self.request
        if code == "illegal" and request is not None and request["id"] == rejection.request_id \
                and self._played_for is not None and self._played_for[0] == rejection.request_id:
            # A card the rules refuse: the engine's reason for it, as the request named it
            # (present.unplayable), for the page to say in its language (the text stays too).
            self.rejection["why"] = request["unplayable"].get(self._played_for[1])
        if self.request is not None and self.request["id"] == rejection.request_id:
            self.request["answered"] = not rejection.retry
            self._asked = self._asking(self.request)  # open again, or its default comes now
        self.version += 1

    def refused(self, reason: str) -> None:
        """An input the web front refused before it became an answer (not a card code...)."""
        self.rejection = {"reason": reason, "code": "malformed", "retry": True, "request_id": "", "why": None}
        self.version += 1

    def forget_request(self) -> None:
        """The seat's stream starts again (a page reconnected): the server re-sends the
        request that is open now, if any; the one kept here may be resolved already."""
        if self.request is not None:
            self.request = None
            self.version += 1

    def answered(self, request_id: str, play: Any = None) -> None:
        """An answer to ``request_id`` went to the server (it may still be rejected);
        ``play``: the card code it played, if it was a play (as the page sent it)."""
        self._played_for = (request_id, play if isinstance(play, str) else None)
        if self.request is not None and self.request["id"] == request_id:
            self.request["answered"] = True
            self.rejection = None
            self.defaulted = None  # the person plays again: what the server did for them is past
            self._asked = None
            self.version += 1

    # -- events --------------------------------------------------------------------

    def _on_match_started(self, e: game_pb2.MatchStarted) -> None:
        self.match_id = e.match_id
        self.rules = present.ruleset(e.ruleset)
        self.seats = [present.seat(s) for s in e.seats]
        self.players = e.ruleset.players
        self.hand_size = e.ruleset.hand_size
        self.totals = [0] * self.players
        self.points_taken = [0] * self.players
        self.tricks_won = [0] * self.players
        self.hand_sizes = [0] * self.players

    def _on_deal_started(self, e: game_pb2.DealStarted) -> None:
        n = self.players
        if self.deal >= 0 and self.last_trick is not None:
            self.deal_end = {"deal": self.deal, "last_trick": self.last_trick, "points_taken": list(self.points_taken),
                             "tricks_won": list(self.tricks_won), "hearts_broken": self.hearts_broken}
        self.deal = e.deal_number
        self.pass_direction = present.PASS_DIRECTIONS.get(e.pass_direction, "hold")
        self.pass_to = -1
        self.exchanged = self.pass_direction == "hold"
        self.hand = sorted(convert.cards_from_wire(e.hand)) if self.seat >= 0 else None
        self.hands = [sorted(convert.cards_from_wire(h.cards)) for h in e.hands] if len(e.hands) == n else None
        self.hand_sizes = [self.hand_size] * n
        self.passed = self.received = None
        self.trick = _empty_trick()
        self.last_trick = None
        self.hearts_broken = False
        self.points_taken = [0] * n
        self.tricks_won = [0] * n
        self.rejection = None

    def _on_cards_passed(self, e: game_pb2.CardsPassed) -> None:
        self.exchanged = True
        if self.seat >= 0 and self.hand is not None and (e.passed or e.received):
            passed = convert.cards_from_wire(e.passed)
            received = convert.cards_from_wire(e.received)
            self.hand = sorted(set(self.hand) - set(passed) | set(received))
            self.passed, self.received = present.sorted_hand(passed), present.sorted_hand(received)
            d = self.defaulted
            if d is not None and d["kind"] == "pass" and d["cards"] is None and d["deal"] == self.deal:
                d["cards"] = self.passed  # passed for the seat before the others had passed
        if len(e.hands) == self.players:  # a released deal: every hand after the exchange
            self.hands = [sorted(convert.cards_from_wire(h.cards)) for h in e.hands]
        elif self.hands is not None:
            self.hands = None  # the feed names no passed cards: the dealt hands are out of date
        if self.request is not None and self.request["kind"] == "pass":
            self.request = None

    def _on_card_played(self, e: game_pb2.CardPlayed) -> None:
        card = convert.card_from_wire(e.card)
        if not self.trick["cards"]:
            self.trick = _empty_trick(e.trick_number, e.seat)
        self.trick["cards"].append({"seat": e.seat, "card": present.card(e.card)})
        if 0 <= e.seat < len(self.hand_sizes):
            self.hand_sizes[e.seat] = max(0, self.hand_sizes[e.seat] - 1)
        if e.seat == self.seat:
            self._own_play = present.card(e.card)
        if e.seat == self.seat and self.hand is not None and card in self.hand:
            self.hand.remove(card)
            if self.request is not None and self.request["kind"] == "play":
                self.request = None
        if self.hands is not None and card in self.hands[e.seat]:
            self.hands[e.seat].remove(card)

    def _on_trick_won(self, e: game_pb2.TrickWon) -> None:
        self.last_trick = present.trick(e.trick, e.points)
        self.trick = _empty_trick(e.trick.number + 1, e.trick.winner)
        if 0 <= e.trick.winner < self.players:
            self.tricks_won[e.trick.winner] += 1
            self.points_taken[e.trick.winner] += e.points

    def _on_hearts_broken(self, e: game_pb2.HeartsBroken) -> None:
        self.hearts_broken = True

    def _on_deal_scored(self, e: game_pb2.DealScored) -> None:
        self.deal_scores.append(present.deal_score(e.score))
        if e.score.shooter == self.seat >= 0:
            self._own_moon = present.MOON_OPTIONS.get(e.score.moon_option)
        self.totals = list(e.totals)
        if self.request is not None and self.request["kind"] == "moon":
            self.request = None

    def _on_match_ended(self, e: game_pb2.MatchEnded) -> None:
        self.result = present.result(e.result)
        self.request = None

    def _on_notice(self, e: game_pb2.Notice) -> None:
        self.notices.append({"text": e.text, "seat": e.seat, "provenance": present.PROVENANCES.get(e.provenance)})
        if e.seat == self.seat >= 0 and e.provenance in DEFAULTED:
            self._defaulted(e.provenance)

    def _defaulted(self, provenance: int) -> None:
        """The server decided for this seat (its Notice comes after the decision's events,
        and after the next deal's start when it ended a deal): which decision is the request
        last sent and not answered; what was decided, the seat's own events. A request this
        audience never saw (its page was away) is said without its kind."""
        asked, self._asked = self._asked, None
        kind = asked["kind"] if asked is not None else "unknown"
        cards: list[str] | None = None
        option = None
        if kind == "play":
            cards = [self._own_play] if self._own_play else None
        elif kind == "pass" and asked is not None:
            # The cards are known once every seat has passed (now or later: _on_cards_passed).
            cards = self.passed if asked["deal"] == self.deal and self.exchanged else None
        elif kind == "moon":
            option = self._own_moon
        self._defaults += 1
        self.defaulted = {"n": self._defaults, "provenance": present.PROVENANCES.get(provenance), "kind": kind,
                          "cards": cards, "option": option, "deal": asked["deal"] if asked is not None else self.deal}

    # -- requests ------------------------------------------------------------------

    def _apply_request(self, r: bot_pb2.DecisionRequest) -> None:
        """A decision request is the seat's whole state: take all of it."""
        self.deal = r.deal_number
        self.pass_direction = present.PASS_DIRECTIONS.get(r.pass_direction, "hold")
        self.pass_to = r.pass_to
        self.hand = sorted(convert.cards_from_wire(r.hand))
        self.hand_sizes = list(r.hand_sizes)
        self.points_taken = list(r.points_taken)
        self.totals = list(r.totals)
        self.hearts_broken = r.hearts_broken
        self.deal_scores = [present.deal_score(d) for d in r.deal_scores]
        self.passed = present.sorted_hand(convert.cards_from_wire(r.passed)) if r.passed else None
        self.received = present.sorted_hand(convert.cards_from_wire(r.received)) if r.received else None
        kind = present.KINDS.get(r.kind, "unknown")
        if kind != "pass":
            self.exchanged = True
        won = [0] * self.players
        for t in r.tricks:
            won[t.winner] += 1
        self.tricks_won = won
        if not r.tricks:
            self.last_trick = None
        elif self.last_trick is None or self.last_trick["number"] != r.tricks[-1].number:
            self.last_trick = present.trick(r.tricks[-1])  # its points come with its TrickWon event
        self.trick = present.trick(r.current_trick)
        self.trick.pop("winner", None)
        legal = convert.cards_from_wire(r.legal_cards)
        led = convert.card_from_wire(r.current_trick.cards[0].card) if r.current_trick.cards else -1
        self.request = {
            "id": r.request_id, "kind": kind, "legal": present.sorted_hand(legal),
            # why each other card may not be played (the engine's reason): the page says it
            # when one is clicked, instead of sending a card the server would refuse
            "unplayable": present.unplayable(self.hand, legal, led, not r.tricks) if kind == "play" else {},
            "pass_count": r.pass_count, "pass_to": r.pass_to,
            "moon_options": [present.MOON_OPTIONS[o] for o in r.moon_options if o in present.MOON_OPTIONS],
            "default_moon": present.MOON_OPTIONS.get(r.default_moon_option),
            "decision_ms": r.clock.decision_ms, "bank_ms": r.clock.bank_ms, "answered": False,
        }
        self._request_at = time.monotonic()
        self._asked = self._asking(self.request)
        if self.rejection is not None and self.rejection["retry"]:
            self.rejection = None  # a final refusal (the default was played) stays until the next answer

    def _asking(self, request: dict[str, Any]) -> dict[str, Any]:
        return {"id": request["id"], "kind": request["kind"], "deal": self.deal}

    # -- output --------------------------------------------------------------------

    @property
    def phase(self) -> str:
        if self.result is not None:
            return "over"
        if self.request is not None and self.request["kind"] == "moon":
            return "moon"
        if not self.exchanged:
            return "passing"
        return "playing" if self.deal >= 0 else "starting"

    def snapshot(self) -> dict[str, Any]:
        """The page's view: JSON-ready, made only of what this audience was sent."""
        request = None
        if self.request is not None:
            request = dict(self.request, age_ms=int((time.monotonic() - self._request_at) * 1000))
        return {
            "v": self.version, "match_id": self.match_id, "ruleset": self.rules, "seats": self.seats,
            "you": self.seat, "deal": self.deal, "phase": self.phase, "pass_direction": self.pass_direction,
            "pass_to": self.pass_to,
            "hand": present.sorted_hand(self.hand) if self.hand is not None else None,
            "hands": [present.sorted_hand(h) for h in self.hands] if self.hands is not None else None,
            "hand_sizes": self.hand_sizes, "passed": self.passed, "received": self.received,
            "trick": self.trick, "last_trick": self.last_trick, "hearts_broken": self.hearts_broken,
            "points_taken": self.points_taken, "tricks_won": self.tricks_won, "totals": self.totals,
            "deal_scores": self.deal_scores, "request": request, "rejection": self.rejection,
            "notices": list(self.notices), "defaulted": self.defaulted, "result": self.result,
            "deal_end": self.deal_end,
        }

