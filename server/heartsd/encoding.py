"""The bytes of one match: every message the runner sends or stores, assembled from
pre-encoded parts (wire.py) rather than built as protobuf messages.

A decision request repeats much that does not change from one request to the next (the
ruleset, the completed tricks, earlier deal scores, each card), and message count and
construction, not size, drive the cost per decision (NOTES.md). So a :class:`MatchEncoder`
keeps, per match, the encoded parts that stay the same for a deal or a trick, and joins
them into a ``DecisionRequest``, a ``MatchUpdate``, an event body or the stored
``MatchRecord``: concatenated fields are one message on the wire.

The runner (runner.py) decides what happens: whom to ask, the clock, defaults, applying
an answer, what to publish and when to store. This module only turns those facts into
bytes, and is told (``public_changed``, ``deal_started``, ``trick_won``, ...) when a
cached part stops being true. ``tests/server/test_wire.py`` checks every assembled request,
event and record of whole matches against the same messages built field by field.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from hearts_engine import Action, Deal, Match, MatchRecord as EngineRecord, PassAction, PassDirection, PlayAction, Ruleset
from hearts_engine.scoring import DealResult
from heartsbot import convert
from heartsbot.proto import bot_pb2, game_pb2, spectator_pb2

from . import wire

if TYPE_CHECKING:
    from collections.abc import Iterable

P: Final = game_pb2

# Field numbers and pre-encoded tags, all read from the generated descriptors (so a
# renumbered field in proto/ cannot go unnoticed: the wire test would fail).
RESPONSE_UPDATE: Final = bot_pb2.PlayResponse.DESCRIPTOR.fields_by_name["update"].number
UPDATE_MATCH_ID: Final = bot_pb2.MatchUpdate.DESCRIPTOR.fields_by_name["match_id"].number
UPDATE_SEAT: Final = bot_pb2.MatchUpdate.DESCRIPTOR.fields_by_name["seat"].number
UPDATE_REQUEST: Final = bot_pb2.MatchUpdate.DESCRIPTOR.fields_by_name["request"].number
_UPDATE_REQUEST_TAG: Final = wire.delimited_tag(UPDATE_REQUEST)
_RESPONSE_UPDATE_TAG: Final = wire.delimited_tag(RESPONSE_UPDATE)
_REQUEST_FIELDS: Final = bot_pb2.DecisionRequest.DESCRIPTOR.fields_by_name
REQUEST_RULESET: Final = _REQUEST_FIELDS["ruleset"].number
REQUEST_HAND: Final = _REQUEST_FIELDS["hand"].number
REQUEST_LEGAL: Final = _REQUEST_FIELDS["legal_cards"].number
REQUEST_PASSED: Final = _REQUEST_FIELDS["passed"].number
REQUEST_RECEIVED: Final = _REQUEST_FIELDS["received"].number
REQUEST_TRICKS: Final = _REQUEST_FIELDS["tricks"].number
REQUEST_DEAL_SCORES: Final = _REQUEST_FIELDS["deal_scores"].number
REQUEST_CURRENT_TRICK: Final = _REQUEST_FIELDS["current_trick"].number
REQUEST_ID: Final = _REQUEST_FIELDS["request_id"].number
REQUEST_HAND_SIZES: Final = _REQUEST_FIELDS["hand_sizes"].number
REQUEST_POINTS_TAKEN: Final = _REQUEST_FIELDS["points_taken"].number
REQUEST_TOTALS: Final = _REQUEST_FIELDS["totals"].number
REQUEST_CLOCK: Final = _REQUEST_FIELDS["clock"].number
_KIND_FIELDS: Final = tuple(wire.tag(_REQUEST_FIELDS["kind"].number) + wire.varint(k)  # by DecisionKind (0-3)
                            for k in range(max(P.DecisionKind.values()) + 1))
_DEAL_NUMBER: Final = wire.tag(_REQUEST_FIELDS["deal_number"].number)
_YOUR_SEAT: Final = wire.tag(_REQUEST_FIELDS["your_seat"].number)
_PASS_COUNT: Final = wire.tag(_REQUEST_FIELDS["pass_count"].number)
_PASS_DIRECTION: Final = wire.tag(_REQUEST_FIELDS["pass_direction"].number)
_PASS_TO: Final = wire.tag(_REQUEST_FIELDS["pass_to"].number)
_HEARTS_BROKEN: Final = wire.tag(_REQUEST_FIELDS["hearts_broken"].number) + wire.varint(1)
_LAST_SEQUENCE: Final = wire.tag(_REQUEST_FIELDS["last_sequence"].number)
_BROKEN_TRICK: Final = wire.tag(_REQUEST_FIELDS["hearts_broken_trick"].number)
_SCORING_PHASE: Final = wire.tag(_REQUEST_FIELDS["scoring_phase"].number)
_CLOCK_DECISION: Final = wire.tag(bot_pb2.Clock.DESCRIPTOR.fields_by_name["decision_ms"].number)
_CLOCK_BANK: Final = wire.tag(bot_pb2.Clock.DESCRIPTOR.fields_by_name["bank_ms"].number)
_TRICK_FIELDS: Final = game_pb2.Trick.DESCRIPTOR.fields_by_name
TRICK_NUMBER: Final = _TRICK_FIELDS["number"].number
TRICK_LEADER: Final = _TRICK_FIELDS["leader"].number
TRICK_CARDS: Final = _TRICK_FIELDS["cards"].number
_TRICK_NUMBER_TAG: Final = wire.tag(TRICK_NUMBER)
_TRICK_LEADER_TAG: Final = wire.tag(TRICK_LEADER)
_TRICK_WINNER_TAG: Final = wire.tag(_TRICK_FIELDS["winner"].number)
EVENT_TRICK_WON: Final = game_pb2.Event.DESCRIPTOR.fields_by_name["trick_won"].number
_WON_FIELDS: Final = game_pb2.TrickWon.DESCRIPTOR.fields_by_name
_WON_DEAL_TAG: Final = wire.tag(_WON_FIELDS["deal_number"].number)
_WON_TRICK: Final = _WON_FIELDS["trick"].number
_WON_POINTS_TAG: Final = wire.tag(_WON_FIELDS["points"].number)
TRICK_OPEN_WINNER: Final = game_pb2.Trick(winner=-1).SerializeToString()  # winner -1: in progress
# Trick.number and .leader of an open trick, by number and leader + 1 (leader -1: nobody leads yet).
_OPEN_TRICK_HEADS: Final = tuple(
    tuple(_TRICK_NUMBER_TAG + wire.varint(number) + _TRICK_LEADER_TAG + wire.varint(leader) for leader in range(-1, 8))
    for number in range(53)
)
EVENT_CARD_PLAYED: Final = game_pb2.Event.DESCRIPTOR.fields_by_name["card_played"].number
EVENT_DEAL_STARTED: Final = game_pb2.Event.DESCRIPTOR.fields_by_name["deal_started"].number
EVENT_CARDS_PASSED: Final = game_pb2.Event.DESCRIPTOR.fields_by_name["cards_passed"].number
_STARTED_FIELDS: Final = game_pb2.DealStarted.DESCRIPTOR.fields_by_name
_STARTED_DEAL_TAG: Final = wire.tag(_STARTED_FIELDS["deal_number"].number)
_STARTED_DIRECTION_TAG: Final = wire.tag(_STARTED_FIELDS["pass_direction"].number)
STARTED_HAND: Final = _STARTED_FIELDS["hand"].number
STARTED_HANDS: Final = _STARTED_FIELDS["hands"].number
HAND_CARDS: Final = game_pb2.Hand.DESCRIPTOR.fields_by_name["cards"].number
_DEALT_DEAL_TAG: Final = wire.tag(spectator_pb2.DealtHands.DESCRIPTOR.fields_by_name["deal_number"].number)
DEALT_HANDS: Final = spectator_pb2.DealtHands.DESCRIPTOR.fields_by_name["hands"].number
_PASSED_FIELDS: Final = game_pb2.CardsPassed.DESCRIPTOR.fields_by_name
_PASSED_DEAL_TAG: Final = wire.tag(_PASSED_FIELDS["deal_number"].number)
PASSED_PASSED: Final = _PASSED_FIELDS["passed"].number
PASSED_RECEIVED: Final = _PASSED_FIELDS["received"].number
PASSED_HANDS: Final = _PASSED_FIELDS["hands"].number
_PASSED_FROM_TAG: Final = wire.tag(_PASSED_FIELDS["received_from"].number)
_PLAYED_FIELDS: Final = game_pb2.CardPlayed.DESCRIPTOR.fields_by_name
_PLAYED_DEAL_TAG: Final = wire.tag(_PLAYED_FIELDS["deal_number"].number)
_PLAYED_TRICK_TAG: Final = wire.tag(_PLAYED_FIELDS["trick_number"].number)
_PLAYED_SEAT_TAG: Final = wire.tag(_PLAYED_FIELDS["seat"].number)
_PLAYED_CARD: Final = _PLAYED_FIELDS["card"].number
_PLAYED_CARD_FIELDS: Final = tuple(wire.card_fields(_PLAYED_CARD, (c,)) for c in range(52))
_PLAYED_PROVENANCE_TAG: Final = wire.tag(_PLAYED_FIELDS["provenance"].number)
# CardPlayed's seat and card fields, per seat and card; its provenance field per provenance.
_PLAYED_SEAT_CARD: Final = tuple(tuple(_PLAYED_SEAT_TAG + wire.varint(s) + _PLAYED_CARD_FIELDS[c] for c in range(52)) for s in range(8))
_TRICK_CARD_FIELDS: Final = tuple(wire.played_card_field(TRICK_CARDS, s, c) for s in range(8) for c in range(52))
_PLAYED_PROVENANCES: Final = {p: _PLAYED_PROVENANCE_TAG + wire.varint(p) for p in game_pb2.Provenance.values()}
_DECISION_FIELDS: Final = spectator_pb2.RecordedDecision.DESCRIPTOR.fields_by_name
_DECISION_TAGS: Final = {name: wire.tag(f.number) for name, f in _DECISION_FIELDS.items()}  # varint fields
_DECISION_CARDS: Final = _DECISION_FIELDS["cards"].number
_DECISION_PLAY: Final = _DECISION_TAGS["kind"] + wire.varint(P.DECISION_KIND_PLAY)
_DECISION_PASS: Final = _DECISION_TAGS["kind"] + wire.varint(P.DECISION_KIND_PASS)
_DECISION_MOON: Final = _DECISION_TAGS["kind"] + wire.varint(P.DECISION_KIND_MOON)
_DECISION_PLAYED: Final = tuple(_DECISION_PLAY + wire.card_fields(_DECISION_CARDS, (c,)) for c in range(52))
_DECISION_DEAL: Final = _DECISION_TAGS["deal_number"]
_DECISION_THINK: Final = _DECISION_TAGS["think_ms"]
_DECISION_REJECTED: Final = _DECISION_TAGS["rejected_answers"]
_DECISION_CREDIT: Final = _DECISION_TAGS["stall_credit_ms"]
_DECISION_SEATS: Final = tuple(wire.int_field(_DECISION_TAGS["seat"], s) for s in range(8))
_DECISION_PROVENANCES: Final = {p: wire.int_field(_DECISION_TAGS["provenance"], p) for p in game_pb2.Provenance.values()}
_PLAY_JSON: Final = tuple(json.dumps(str(PlayAction(c))) for c in range(52))  # each play's "action" in the engine record
# A recorded play's JSON after its deal number, by seat and card.
_SEAT_PLAY_JSON: Final = tuple(tuple(f',"seat":{s},"action":{_PLAY_JSON[c]}}}' for c in range(52)) for s in range(8))
_PLAY_ACTION: Final = PlayAction  # compared by identity with an action's type
_RECORD_FIELDS: Final = spectator_pb2.MatchRecord.DESCRIPTOR.fields_by_name
RECORD_DECISIONS: Final = _RECORD_FIELDS["decisions"].number
RECORD_DEALS: Final = _RECORD_FIELDS["deals"].number
RECORD_DEAL_SCORES: Final = _RECORD_FIELDS["deal_scores"].number
WATCH_EVENTS: Final = spectator_pb2.WatchMatchResponse.DESCRIPTOR.fields_by_name["events"].number  # the stored replay's windows
_ENCODE_HAND: Final = wire.mask_encoder(REQUEST_HAND)
_ENCODE_LEGAL: Final = wire.mask_encoder(REQUEST_LEGAL)
_NO_ACTIONS: Final = '"actions":[]'
_MOON_OPTIONS_FIELD: Final = bot_pb2.DecisionRequest(moon_options=list(convert.MOON_OPTIONS.values())).SerializeToString()
_DEFAULT_MOON_FIELDS: Final = {
    option: bot_pb2.DecisionRequest(default_moon_option=wire_option).SerializeToString()
    for option, wire_option in convert.MOON_OPTIONS.items()
}


def decision_bytes(deal_number: int, seat: int, action: Action, provenance: int, think_ms: int, rejected: int,
                   credit_ms: int) -> bytes:
    """A ``RecordedDecision``, encoded (the runner's ``Decision.to_bytes``)."""
    if type(action) is _PLAY_ACTION:
        kind = _DECISION_PLAYED[action.card]  # type: ignore[attr-defined]
    elif isinstance(action, PassAction):
        kind = _DECISION_PASS + wire.card_fields(_DECISION_CARDS, action.cards)
    else:
        kind = _DECISION_MOON + wire.int_field(_DECISION_TAGS["moon"], convert.MOON_OPTIONS[action.option])  # type: ignore[attr-defined]
    encoded = b"".join((
        wire.int_field(_DECISION_DEAL, deal_number),
        _DECISION_SEATS[seat],
        kind,
        _DECISION_PROVENANCES[provenance],
        wire.int_field(_DECISION_THINK, think_ms),
    ))
    if rejected or credit_ms:  # rare: most answers come first time, and no stall overlaps them
        encoded += wire.int_field(_DECISION_REJECTED, rejected) + wire.int_field(_DECISION_CREDIT, credit_ms)
    return encoded


class MatchEncoder:
    """The encoded parts of one match's messages, and the messages joined from them."""

    def __init__(self, match_id: str, rules: Ruleset) -> None:
        self.rules = rules
        self.ruleset_pb = convert.ruleset_to_wire(rules)
        self._ruleset_field = wire.length_delimited(REQUEST_RULESET, self.ruleset_pb.SerializeToString())
        self._match_id_field = wire.length_delimited(UPDATE_MATCH_ID, match_id.encode())
        self._seat_fields = [wire.varint(UPDATE_SEAT << 3) + wire.varint(s) for s in range(rules.players)]
        self._hand_sizes_head = wire.delimited_tag(REQUEST_HAND_SIZES) + wire.varint(rules.players)
        # Request parts. The public ones change at most once per card played; whoever
        # changes what they show calls public_changed() (None: encode again when needed).
        self._public_fields: bytes | None = None
        self._clock_fields: dict[int, bytes] = {}
        self._deal_fields: list[bytes] = []  # per seat, for the current deal (deal_started)
        self._trick_fields: list[bytes] = []  # DecisionRequest.tricks entries of this deal
        self._deal_score_fields: list[bytes] = []  # DecisionRequest.deal_scores entries
        self._pass_fields: list[bytes] = []  # DecisionRequest.passed + received per seat, once passed
        self._points_taken = [0] * rules.players
        self._card_points = tuple(rules.points_of(1 << card) for card in range(52))  # each card's value
        self._totals = [0] * rules.players
        self._trick_cards = b""  # Trick.cards of the trick in progress, encoded as they are played
        # DecisionRequest.hand_sizes: from the dealt hands, less each card played (a pass gives
        # and takes as many cards), re-encoded at each card rather than counted per request.
        self._sizes: list[int] = []
        self._sizes_field = b""
        self._played_head = b""  # CardPlayed's deal and trick fields, for the trick in progress
        # The stored record's parts, each encoded once as the match goes.
        self._dealt_wire = b""  # MatchRecord.deals entries
        self._scores_wire = b""  # MatchRecord.deal_scores entries
        self._decisions_wire = b""
        self._actions_json: list[str] = []

    # -- requests and updates ---------------------------------------------------------

    def request(self, deal: Deal, seat: int, request_id: str, kind: int, legal: int, leader: int,
                clock_left: tuple[int, int], last_sequence: int, default_moon: object | None = None) -> bytes:
        """A serialized DecisionRequest for ``seat``: everything it needs, from its own and
        public state only. ``legal`` is the legal cards' mask, ``leader`` the open trick's
        (-1 while passing), ``clock_left`` the (decision, bank) ms left; ``default_moon``
        the MoonOption applied if a MOON request is not answered."""
        decision_ms, bank_ms = clock_left
        return b"".join((
            wire.length_delimited(REQUEST_ID, request_id.encode()),
            _KIND_FIELDS[kind],
            self._deal_fields[seat],
            self._public_fields or self._encode_public_fields(deal),
            self._sizes_field,
            self.clock_field(decision_ms, bank_ms),
            wire.int_field(_LAST_SEQUENCE, last_sequence),
            _MOON_OPTIONS_FIELD + _DEFAULT_MOON_FIELDS[default_moon] if default_moon is not None else b"",  # type: ignore[index]
            _ENCODE_HAND.encode(deal.hands[seat]),
            _ENCODE_LEGAL.encode(legal),
            self._current_trick_field(deal, leader),
            self._pass_fields[seat] if self._pass_fields else b"",
        ))

    def update(self, seat: int, events: bytes, request: bytes | None) -> bytes:
        """A serialized PlayResponse carrying a MatchUpdate: ``events`` (encoded
        MatchUpdate.events entries, EventLog.wire_for_seat) and the request, if any."""
        # One join of every part, the lengths worked out first: the request (most of the
        # bytes) is copied once, not once per level of nesting.
        seat_field = self._seat_fields[seat]
        request_head = b"" if request is None else _UPDATE_REQUEST_TAG + wire.varint(len(request))
        size = (len(self._match_id_field) + len(seat_field) + len(events) + len(request_head)
                + (0 if request is None else len(request)))
        return b"".join((_RESPONSE_UPDATE_TAG, wire.varint(size), self._match_id_field, seat_field, events,
                         request_head, request or b""))

    def public_changed(self) -> None:
        """Something the public request fields show changed (e.g. hearts broken)."""
        self._public_fields = None

    def _encode_public_fields(self, deal: Deal) -> bytes:
        """The request fields every seat gets alike that change at most once a trick
        (never empty: the ruleset is one): hearts broken (and when), the points taken,
        the totals, the scoring phase, the completed tricks and earlier deal scores."""
        encoded = self._public_fields = b"".join((
            _HEARTS_BROKEN if deal.hearts_broken else b"",
            wire.packed_ints(REQUEST_POINTS_TAKEN, self._points_taken),
            wire.packed_ints(REQUEST_TOTALS, self._totals),
            wire.int_field(_BROKEN_TRICK, deal.broken_trick),
            wire.int_field(_SCORING_PHASE, deal.scoring_phase),
            self._ruleset_field,
            *self._trick_fields,
            *self._deal_score_fields,
        ))
        return encoded

    def clock_field(self, decision_ms: int, bank_ms: int) -> bytes:
        """DecisionRequest.clock, encoded (a few values recur: kept, at most 65)."""
        left = decision_ms << 32 | bank_ms  # both below 2**31: an int key, no tuple to make and hash
        field = self._clock_fields.get(left)
        if field is None:
            if len(self._clock_fields) > 64:
                self._clock_fields.clear()
            body = wire.int_field(_CLOCK_DECISION, decision_ms) + wire.int_field(_CLOCK_BANK, bank_ms)
            field = self._clock_fields[left] = wire.length_delimited(REQUEST_CLOCK, body)
        return field

    def _current_trick_field(self, deal: Deal, leader: int) -> bytes:
        """DecisionRequest.current_trick: the trick in progress (no cards when leading); its
        cards were encoded as they were played (card_played)."""
        head = _OPEN_TRICK_HEADS[len(deal.tricks)][leader + 1]
        return wire.length_delimited(REQUEST_CURRENT_TRICK, head + self._trick_cards + TRICK_OPEN_WINNER)

    # -- events (bodies for EventLog.add_encoded / add_private_encoded) -----------------

    def deal_started(self, deal: Deal) -> tuple[list[bytes], bytes, bytes]:
        """A new deal: the per-deal request parts start afresh, its dealt hands join the
        record, and DealStarted's bodies come back: per seat (its own hand), for
        spectators (no hand) and revealed (every hand)."""
        self._trick_fields = []
        self._pass_fields = []
        self._points_taken = [0] * self.rules.players
        self._trick_cards = b""
        self._sizes = [hand.bit_count() for hand in deal.dealt]
        self._encode_sizes()
        self.public_changed()
        self._encode_deal_fields(deal)
        head = wire.int_field(_STARTED_DEAL_TAG, deal.number) + wire.int_field(
            _STARTED_DIRECTION_TAG, convert.PASS_DIRECTIONS[deal.pass_direction])
        hands = [wire.mask_card_fields(HAND_CARDS, h) for h in deal.dealt]  # Hand messages
        per_seat = [head + wire.mask_card_fields(STARTED_HAND, h) for h in deal.dealt]
        revealed = head + b"".join([wire.length_delimited(STARTED_HANDS, h) for h in hands])
        dealt = wire.int_field(_DEALT_DEAL_TAG, deal.number) + b"".join([wire.length_delimited(DEALT_HANDS, h) for h in hands])
        self._dealt_wire += wire.length_delimited(RECORD_DEALS, dealt)
        return per_seat, head, revealed

    def _encode_deal_fields(self, deal: Deal) -> None:
        """Per seat, the request fields that stay the same for the whole deal."""
        n = self.rules.players
        hold = deal.pass_direction is PassDirection.HOLD
        common = b"".join((
            wire.int_field(_DEAL_NUMBER, deal.number),
            wire.int_field(_PASS_COUNT, self.rules.pass_count),
            wire.int_field(_PASS_DIRECTION, convert.PASS_DIRECTIONS[deal.pass_direction]),
        ))
        self._deal_fields = [
            common
            + wire.int_field(_YOUR_SEAT, seat)
            + wire.int_field(_PASS_TO, -1 if hold else (seat + deal.pass_direction.offset(n)) % n)
            for seat in range(n)
        ]

    def passes(self, deal: Deal) -> tuple[list[bytes], bytes, bytes]:
        """The pass is complete: CardsPassed's bodies per seat (its pass, what it received
        and from whom), for spectators (no cards, no giver) and revealed (every hand after
        the exchange); the request fields too."""
        n = self.rules.players
        offset = deal.pass_direction.offset(n)
        number = wire.int_field(_PASSED_DEAL_TAG, deal.number)
        per_seat = []
        self._pass_fields = []
        for s in range(n):
            giver = (s - offset) % n
            passed, received = deal.passed[s] or 0, deal.passed[giver] or 0
            per_seat.append(b"".join((
                number, wire.mask_card_fields(PASSED_PASSED, passed), wire.mask_card_fields(PASSED_RECEIVED, received),
                wire.int_field(_PASSED_FROM_TAG, giver))))
            self._pass_fields.append(wire.mask_card_fields(REQUEST_PASSED, passed) + wire.mask_card_fields(REQUEST_RECEIVED, received))
        spectator = number + wire.int_field(_PASSED_FROM_TAG, -1)
        revealed = spectator + b"".join(
            [wire.length_delimited(PASSED_HANDS, wire.mask_card_fields(HAND_CARDS, h)) for h in deal.hands])
        return per_seat, spectator, revealed

    def _encode_sizes(self) -> None:
        self._sizes_field = self._hand_sizes_head + bytes(self._sizes)  # packed: each size below 128 is one byte

    def card_played(self, deal: Deal, deal_number: int, seat: int, card: int, provenance: int) -> bytes:
        """CardPlayed's body for a card just applied to ``deal``; the card joins the open
        trick's encoded cards (a trick's first card also encodes its deal and trick fields),
        and leaves its seat's hand size."""
        self._sizes[seat] -= 1
        self._encode_sizes()
        if len(deal.trick) == 1:
            self._played_head = b"".join((
                _PLAYED_DEAL_TAG, wire.varint(deal_number), _PLAYED_TRICK_TAG, wire.varint(len(deal.tricks))))
        self._trick_cards += _TRICK_CARD_FIELDS[seat * 52 + card]
        return self._played_head + _PLAYED_SEAT_CARD[seat][card] + _PLAYED_PROVENANCES[provenance]

    def trick_won(self, deal: Deal, deal_number: int) -> bytes:
        """The trick just completed: it joins the request's tricks, its winner's points
        taken change, and TrickWon's body comes back."""
        tricks = deal.tricks
        trick_no = len(tricks) - 1
        trick = tricks[-1]
        winner: int = trick.winner
        encoded = b"".join((  # convert.trick_to_wire(trick_no, trick, players), encoded
            wire.int_field(_TRICK_NUMBER_TAG, trick_no),
            wire.int_field(_TRICK_LEADER_TAG, trick.leader),
            self._trick_cards,
            wire.int_field(_TRICK_WINNER_TAG, winner),
        ))
        self._trick_cards = b""
        self._trick_fields.append(wire.length_delimited(REQUEST_TRICKS, encoded))
        # A ruleset's points are a sum over the cards (Ruleset.points_of): the trick's are
        # added to its winner's, as the engine's taken cards grow by the trick.
        card_points = self._card_points
        points = 0
        for card in trick.cards:
            points += card_points[card]
        self._points_taken[winner] += points
        self.public_changed()
        return b"".join((
            wire.int_field(_WON_DEAL_TAG, deal_number),
            wire.length_delimited(_WON_TRICK, encoded),
            wire.int_field(_WON_POINTS_TAG, points),
        ))

    def deal_scored(self, number: int, result: DealResult, totals: Sequence[int]) -> game_pb2.DealScore:
        """A deal was scored: it joins the requests' and the record's deal scores, the
        totals change; its DealScore comes back (for the DealScored event)."""
        score = convert.deal_score_to_wire(number, result)
        encoded = score.SerializeToString()
        self._deal_score_fields.append(wire.length_delimited(REQUEST_DEAL_SCORES, encoded))
        self._scores_wire += wire.length_delimited(RECORD_DEAL_SCORES, encoded)
        self._totals = list(totals)
        self.public_changed()
        return score

    # -- the record ---------------------------------------------------------------------

    def record(self, head: spectator_pb2.MatchRecord, match: Match, new_decisions: Sequence[bytes]) -> bytes:
        """The MatchRecord so far, serialized: ``head`` (the fixed fields), the engine's
        record, the deal scores, the dealt hands and the decisions (``new_decisions``: the
        encoded RecordedDecisions made since the last call), each encoded once however often
        a record is stored."""
        head.engine_record_json = self._engine_record_json(match)
        if new_decisions:
            self._decisions_wire += b"".join([wire.length_delimited(RECORD_DECISIONS, d) for d in new_decisions])
        return head.SerializeToString() + self._scores_wire + self._dealt_wire + self._decisions_wire

    def _engine_record_json(self, match: Match) -> str:
        """``record_of(match).to_json()``, with each action's JSON made only once."""
        history: list[tuple[int, int, Action]] = match.history  # typed: unpacked and formatted natively
        cached = self._actions_json
        # Exactly json.dumps(RecordedAction(d, s, a).to_dict(), separators=(",", ":")).
        for d, s, a in history[len(cached):]:
            if type(a) is _PLAY_ACTION:
                cached.append(f'{{"deal":{d}' + _SEAT_PLAY_JSON[s][a.card])  # type: ignore[attr-defined]
            else:
                cached.append(f'{{"deal":{d},"seat":{s},"action":{json.dumps(str(a))}}}')
        head, empty, tail = EngineRecord(match.rules, match.format, match.seed, (), match.outcome).to_json().partition(_NO_ACTIONS)
        assert empty, "the engine record's JSON has no actions array"
        return f"{head}\"actions\":[{','.join(cached)}]{tail}"
