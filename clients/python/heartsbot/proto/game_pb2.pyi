from . import cards_pb2 as _cards_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class PassDirection(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PASS_DIRECTION_UNSPECIFIED: _ClassVar[PassDirection]
    PASS_DIRECTION_LEFT: _ClassVar[PassDirection]
    PASS_DIRECTION_RIGHT: _ClassVar[PassDirection]
    PASS_DIRECTION_ACROSS: _ClassVar[PassDirection]
    PASS_DIRECTION_HOLD: _ClassVar[PassDirection]

class MoonOption(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MOON_OPTION_UNSPECIFIED: _ClassVar[MoonOption]
    MOON_OPTION_ADD_TO_OTHERS: _ClassVar[MoonOption]
    MOON_OPTION_SUBTRACT_FROM_SELF: _ClassVar[MoonOption]

class DecisionKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DECISION_KIND_UNSPECIFIED: _ClassVar[DecisionKind]
    DECISION_KIND_PASS: _ClassVar[DecisionKind]
    DECISION_KIND_PLAY: _ClassVar[DecisionKind]
    DECISION_KIND_MOON: _ClassVar[DecisionKind]

class Provenance(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PROVENANCE_UNSPECIFIED: _ClassVar[Provenance]
    PROVENANCE_BOT: _ClassVar[Provenance]
    PROVENANCE_TIMEOUT: _ClassVar[Provenance]
    PROVENANCE_ILLEGAL: _ClassVar[Provenance]
    PROVENANCE_DISCONNECT: _ClassVar[Provenance]
    PROVENANCE_AUTO: _ClassVar[Provenance]
    PROVENANCE_HOUSE: _ClassVar[Provenance]
    PROVENANCE_HUMAN: _ClassVar[Provenance]

class MatchStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MATCH_STATUS_UNSPECIFIED: _ClassVar[MatchStatus]
    MATCH_STATUS_RUNNING: _ClassVar[MatchStatus]
    MATCH_STATUS_FINISHED: _ClassVar[MatchStatus]
    MATCH_STATUS_ABORTED: _ClassVar[MatchStatus]
    MATCH_STATUS_CANCELLED: _ClassVar[MatchStatus]
PASS_DIRECTION_UNSPECIFIED: PassDirection
PASS_DIRECTION_LEFT: PassDirection
PASS_DIRECTION_RIGHT: PassDirection
PASS_DIRECTION_ACROSS: PassDirection
PASS_DIRECTION_HOLD: PassDirection
MOON_OPTION_UNSPECIFIED: MoonOption
MOON_OPTION_ADD_TO_OTHERS: MoonOption
MOON_OPTION_SUBTRACT_FROM_SELF: MoonOption
DECISION_KIND_UNSPECIFIED: DecisionKind
DECISION_KIND_PASS: DecisionKind
DECISION_KIND_PLAY: DecisionKind
DECISION_KIND_MOON: DecisionKind
PROVENANCE_UNSPECIFIED: Provenance
PROVENANCE_BOT: Provenance
PROVENANCE_TIMEOUT: Provenance
PROVENANCE_ILLEGAL: Provenance
PROVENANCE_DISCONNECT: Provenance
PROVENANCE_AUTO: Provenance
PROVENANCE_HOUSE: Provenance
PROVENANCE_HUMAN: Provenance
MATCH_STATUS_UNSPECIFIED: MatchStatus
MATCH_STATUS_RUNNING: MatchStatus
MATCH_STATUS_FINISHED: MatchStatus
MATCH_STATUS_ABORTED: MatchStatus
MATCH_STATUS_CANCELLED: MatchStatus

class CardValue(_message.Message):
    __slots__ = ("card", "points")
    CARD_FIELD_NUMBER: _ClassVar[int]
    POINTS_FIELD_NUMBER: _ClassVar[int]
    card: _cards_pb2.Card
    points: int
    def __init__(self, card: _Optional[_Union[_cards_pb2.Card, _Mapping]] = ..., points: _Optional[int] = ...) -> None: ...

class Ruleset(_message.Message):
    __slots__ = ("name", "players", "removed_cards", "hand_size", "pass_count", "pass_schedule", "first_trick_no_points", "hearts_lead_restricted", "hearts_break", "queen_breaks_hearts", "lead_heart_instead_of_queen", "heart_points", "card_values", "moon", "moon_requires_bonus", "no_trick_bonus", "target", "phase1_target", "phase2_cap", "last_deal_tie_break", "deal_total", "first_lead", "first_trick_fallback")
    NAME_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    REMOVED_CARDS_FIELD_NUMBER: _ClassVar[int]
    HAND_SIZE_FIELD_NUMBER: _ClassVar[int]
    PASS_COUNT_FIELD_NUMBER: _ClassVar[int]
    PASS_SCHEDULE_FIELD_NUMBER: _ClassVar[int]
    FIRST_TRICK_NO_POINTS_FIELD_NUMBER: _ClassVar[int]
    HEARTS_LEAD_RESTRICTED_FIELD_NUMBER: _ClassVar[int]
    HEARTS_BREAK_FIELD_NUMBER: _ClassVar[int]
    QUEEN_BREAKS_HEARTS_FIELD_NUMBER: _ClassVar[int]
    LEAD_HEART_INSTEAD_OF_QUEEN_FIELD_NUMBER: _ClassVar[int]
    HEART_POINTS_FIELD_NUMBER: _ClassVar[int]
    CARD_VALUES_FIELD_NUMBER: _ClassVar[int]
    MOON_FIELD_NUMBER: _ClassVar[int]
    MOON_REQUIRES_BONUS_FIELD_NUMBER: _ClassVar[int]
    NO_TRICK_BONUS_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    PHASE1_TARGET_FIELD_NUMBER: _ClassVar[int]
    PHASE2_CAP_FIELD_NUMBER: _ClassVar[int]
    LAST_DEAL_TIE_BREAK_FIELD_NUMBER: _ClassVar[int]
    DEAL_TOTAL_FIELD_NUMBER: _ClassVar[int]
    FIRST_LEAD_FIELD_NUMBER: _ClassVar[int]
    FIRST_TRICK_FALLBACK_FIELD_NUMBER: _ClassVar[int]
    name: str
    players: int
    removed_cards: _containers.RepeatedCompositeFieldContainer[_cards_pb2.Card]
    hand_size: int
    pass_count: int
    pass_schedule: _containers.RepeatedScalarFieldContainer[PassDirection]
    first_trick_no_points: bool
    hearts_lead_restricted: bool
    hearts_break: str
    queen_breaks_hearts: bool
    lead_heart_instead_of_queen: bool
    heart_points: int
    card_values: _containers.RepeatedCompositeFieldContainer[CardValue]
    moon: str
    moon_requires_bonus: bool
    no_trick_bonus: int
    target: int
    phase1_target: int
    phase2_cap: int
    last_deal_tie_break: bool
    deal_total: int
    first_lead: _cards_pb2.Card
    first_trick_fallback: str
    def __init__(self, name: _Optional[str] = ..., players: _Optional[int] = ..., removed_cards: _Optional[_Iterable[_Union[_cards_pb2.Card, _Mapping]]] = ..., hand_size: _Optional[int] = ..., pass_count: _Optional[int] = ..., pass_schedule: _Optional[_Iterable[_Union[PassDirection, str]]] = ..., first_trick_no_points: _Optional[bool] = ..., hearts_lead_restricted: _Optional[bool] = ..., hearts_break: _Optional[str] = ..., queen_breaks_hearts: _Optional[bool] = ..., lead_heart_instead_of_queen: _Optional[bool] = ..., heart_points: _Optional[int] = ..., card_values: _Optional[_Iterable[_Union[CardValue, _Mapping]]] = ..., moon: _Optional[str] = ..., moon_requires_bonus: _Optional[bool] = ..., no_trick_bonus: _Optional[int] = ..., target: _Optional[int] = ..., phase1_target: _Optional[int] = ..., phase2_cap: _Optional[int] = ..., last_deal_tie_break: _Optional[bool] = ..., deal_total: _Optional[int] = ..., first_lead: _Optional[_Union[_cards_pb2.Card, _Mapping]] = ..., first_trick_fallback: _Optional[str] = ...) -> None: ...

class MatchFormat(_message.Message):
    __slots__ = ("fixed_deals", "duplicate")
    FIXED_DEALS_FIELD_NUMBER: _ClassVar[int]
    DUPLICATE_FIELD_NUMBER: _ClassVar[int]
    fixed_deals: int
    duplicate: bool
    def __init__(self, fixed_deals: _Optional[int] = ..., duplicate: _Optional[bool] = ...) -> None: ...

class ClockSettings(_message.Message):
    __slots__ = ("decision_ms", "bank_ms", "max_illegal", "auto_after", "grace_ms")
    DECISION_MS_FIELD_NUMBER: _ClassVar[int]
    BANK_MS_FIELD_NUMBER: _ClassVar[int]
    MAX_ILLEGAL_FIELD_NUMBER: _ClassVar[int]
    AUTO_AFTER_FIELD_NUMBER: _ClassVar[int]
    GRACE_MS_FIELD_NUMBER: _ClassVar[int]
    decision_ms: int
    bank_ms: int
    max_illegal: int
    auto_after: int
    grace_ms: int
    def __init__(self, decision_ms: _Optional[int] = ..., bank_ms: _Optional[int] = ..., max_illegal: _Optional[int] = ..., auto_after: _Optional[int] = ..., grace_ms: _Optional[int] = ...) -> None: ...

class SeatInfo(_message.Message):
    __slots__ = ("seat", "name", "house", "human")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    HOUSE_FIELD_NUMBER: _ClassVar[int]
    HUMAN_FIELD_NUMBER: _ClassVar[int]
    seat: int
    name: str
    house: bool
    human: bool
    def __init__(self, seat: _Optional[int] = ..., name: _Optional[str] = ..., house: _Optional[bool] = ..., human: _Optional[bool] = ...) -> None: ...

class PlayedCard(_message.Message):
    __slots__ = ("seat", "card")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    seat: int
    card: _cards_pb2.Card
    def __init__(self, seat: _Optional[int] = ..., card: _Optional[_Union[_cards_pb2.Card, _Mapping]] = ...) -> None: ...

class Trick(_message.Message):
    __slots__ = ("number", "leader", "cards", "winner")
    NUMBER_FIELD_NUMBER: _ClassVar[int]
    LEADER_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    number: int
    leader: int
    cards: _containers.RepeatedCompositeFieldContainer[PlayedCard]
    winner: int
    def __init__(self, number: _Optional[int] = ..., leader: _Optional[int] = ..., cards: _Optional[_Iterable[_Union[PlayedCard, _Mapping]]] = ..., winner: _Optional[int] = ...) -> None: ...

class DealScore(_message.Message):
    __slots__ = ("deal_number", "points", "points_taken", "shooter", "moon_option", "phase")
    DEAL_NUMBER_FIELD_NUMBER: _ClassVar[int]
    POINTS_FIELD_NUMBER: _ClassVar[int]
    POINTS_TAKEN_FIELD_NUMBER: _ClassVar[int]
    SHOOTER_FIELD_NUMBER: _ClassVar[int]
    MOON_OPTION_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    deal_number: int
    points: _containers.RepeatedScalarFieldContainer[int]
    points_taken: _containers.RepeatedScalarFieldContainer[int]
    shooter: int
    moon_option: MoonOption
    phase: int
    def __init__(self, deal_number: _Optional[int] = ..., points: _Optional[_Iterable[int]] = ..., points_taken: _Optional[_Iterable[int]] = ..., shooter: _Optional[int] = ..., moon_option: _Optional[_Union[MoonOption, str]] = ..., phase: _Optional[int] = ...) -> None: ...

class MatchResult(_message.Message):
    __slots__ = ("status", "totals", "ranks", "winners", "deals", "reason")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    RANKS_FIELD_NUMBER: _ClassVar[int]
    WINNERS_FIELD_NUMBER: _ClassVar[int]
    DEALS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    status: MatchStatus
    totals: _containers.RepeatedScalarFieldContainer[int]
    ranks: _containers.RepeatedScalarFieldContainer[int]
    winners: _containers.RepeatedScalarFieldContainer[int]
    deals: int
    reason: str
    def __init__(self, status: _Optional[_Union[MatchStatus, str]] = ..., totals: _Optional[_Iterable[int]] = ..., ranks: _Optional[_Iterable[int]] = ..., winners: _Optional[_Iterable[int]] = ..., deals: _Optional[int] = ..., reason: _Optional[str] = ...) -> None: ...

class Event(_message.Message):
    __slots__ = ("sequence", "match_started", "deal_started", "cards_passed", "card_played", "trick_won", "hearts_broken", "deal_scored", "match_ended", "notice")
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    MATCH_STARTED_FIELD_NUMBER: _ClassVar[int]
    DEAL_STARTED_FIELD_NUMBER: _ClassVar[int]
    CARDS_PASSED_FIELD_NUMBER: _ClassVar[int]
    CARD_PLAYED_FIELD_NUMBER: _ClassVar[int]
    TRICK_WON_FIELD_NUMBER: _ClassVar[int]
    HEARTS_BROKEN_FIELD_NUMBER: _ClassVar[int]
    DEAL_SCORED_FIELD_NUMBER: _ClassVar[int]
    MATCH_ENDED_FIELD_NUMBER: _ClassVar[int]
    NOTICE_FIELD_NUMBER: _ClassVar[int]
    sequence: int
    match_started: MatchStarted
    deal_started: DealStarted
    cards_passed: CardsPassed
    card_played: CardPlayed
    trick_won: TrickWon
    hearts_broken: HeartsBroken
    deal_scored: DealScored
    match_ended: MatchEnded
    notice: Notice
    def __init__(self, sequence: _Optional[int] = ..., match_started: _Optional[_Union[MatchStarted, _Mapping]] = ..., deal_started: _Optional[_Union[DealStarted, _Mapping]] = ..., cards_passed: _Optional[_Union[CardsPassed, _Mapping]] = ..., card_played: _Optional[_Union[CardPlayed, _Mapping]] = ..., trick_won: _Optional[_Union[TrickWon, _Mapping]] = ..., hearts_broken: _Optional[_Union[HeartsBroken, _Mapping]] = ..., deal_scored: _Optional[_Union[DealScored, _Mapping]] = ..., match_ended: _Optional[_Union[MatchEnded, _Mapping]] = ..., notice: _Optional[_Union[Notice, _Mapping]] = ...) -> None: ...

class MatchStarted(_message.Message):
    __slots__ = ("match_id", "ruleset", "format", "seats", "your_seat", "clock")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    RULESET_FIELD_NUMBER: _ClassVar[int]
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    YOUR_SEAT_FIELD_NUMBER: _ClassVar[int]
    CLOCK_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    ruleset: Ruleset
    format: MatchFormat
    seats: _containers.RepeatedCompositeFieldContainer[SeatInfo]
    your_seat: int
    clock: ClockSettings
    def __init__(self, match_id: _Optional[str] = ..., ruleset: _Optional[_Union[Ruleset, _Mapping]] = ..., format: _Optional[_Union[MatchFormat, _Mapping]] = ..., seats: _Optional[_Iterable[_Union[SeatInfo, _Mapping]]] = ..., your_seat: _Optional[int] = ..., clock: _Optional[_Union[ClockSettings, _Mapping]] = ...) -> None: ...

class DealStarted(_message.Message):
    __slots__ = ("deal_number", "pass_direction", "hand", "hands")
    DEAL_NUMBER_FIELD_NUMBER: _ClassVar[int]
    PASS_DIRECTION_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    HANDS_FIELD_NUMBER: _ClassVar[int]
    deal_number: int
    pass_direction: PassDirection
    hand: _containers.RepeatedCompositeFieldContainer[_cards_pb2.Card]
    hands: _containers.RepeatedCompositeFieldContainer[Hand]
    def __init__(self, deal_number: _Optional[int] = ..., pass_direction: _Optional[_Union[PassDirection, str]] = ..., hand: _Optional[_Iterable[_Union[_cards_pb2.Card, _Mapping]]] = ..., hands: _Optional[_Iterable[_Union[Hand, _Mapping]]] = ...) -> None: ...

class Hand(_message.Message):
    __slots__ = ("cards",)
    CARDS_FIELD_NUMBER: _ClassVar[int]
    cards: _containers.RepeatedCompositeFieldContainer[_cards_pb2.Card]
    def __init__(self, cards: _Optional[_Iterable[_Union[_cards_pb2.Card, _Mapping]]] = ...) -> None: ...

class CardsPassed(_message.Message):
    __slots__ = ("deal_number", "passed", "received", "received_from", "hands")
    DEAL_NUMBER_FIELD_NUMBER: _ClassVar[int]
    PASSED_FIELD_NUMBER: _ClassVar[int]
    RECEIVED_FIELD_NUMBER: _ClassVar[int]
    RECEIVED_FROM_FIELD_NUMBER: _ClassVar[int]
    HANDS_FIELD_NUMBER: _ClassVar[int]
    deal_number: int
    passed: _containers.RepeatedCompositeFieldContainer[_cards_pb2.Card]
    received: _containers.RepeatedCompositeFieldContainer[_cards_pb2.Card]
    received_from: int
    hands: _containers.RepeatedCompositeFieldContainer[Hand]
    def __init__(self, deal_number: _Optional[int] = ..., passed: _Optional[_Iterable[_Union[_cards_pb2.Card, _Mapping]]] = ..., received: _Optional[_Iterable[_Union[_cards_pb2.Card, _Mapping]]] = ..., received_from: _Optional[int] = ..., hands: _Optional[_Iterable[_Union[Hand, _Mapping]]] = ...) -> None: ...

class CardPlayed(_message.Message):
    __slots__ = ("deal_number", "trick_number", "seat", "card", "provenance")
    DEAL_NUMBER_FIELD_NUMBER: _ClassVar[int]
    TRICK_NUMBER_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    PROVENANCE_FIELD_NUMBER: _ClassVar[int]
    deal_number: int
    trick_number: int
    seat: int
    card: _cards_pb2.Card
    provenance: Provenance
    def __init__(self, deal_number: _Optional[int] = ..., trick_number: _Optional[int] = ..., seat: _Optional[int] = ..., card: _Optional[_Union[_cards_pb2.Card, _Mapping]] = ..., provenance: _Optional[_Union[Provenance, str]] = ...) -> None: ...

class TrickWon(_message.Message):
    __slots__ = ("deal_number", "trick", "points")
    DEAL_NUMBER_FIELD_NUMBER: _ClassVar[int]
    TRICK_FIELD_NUMBER: _ClassVar[int]
    POINTS_FIELD_NUMBER: _ClassVar[int]
    deal_number: int
    trick: Trick
    points: int
    def __init__(self, deal_number: _Optional[int] = ..., trick: _Optional[_Union[Trick, _Mapping]] = ..., points: _Optional[int] = ...) -> None: ...

class HeartsBroken(_message.Message):
    __slots__ = ("deal_number", "trick_number")
    DEAL_NUMBER_FIELD_NUMBER: _ClassVar[int]
    TRICK_NUMBER_FIELD_NUMBER: _ClassVar[int]
    deal_number: int
    trick_number: int
    def __init__(self, deal_number: _Optional[int] = ..., trick_number: _Optional[int] = ...) -> None: ...

class DealScored(_message.Message):
    __slots__ = ("score", "totals")
    SCORE_FIELD_NUMBER: _ClassVar[int]
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    score: DealScore
    totals: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, score: _Optional[_Union[DealScore, _Mapping]] = ..., totals: _Optional[_Iterable[int]] = ...) -> None: ...

class MatchEnded(_message.Message):
    __slots__ = ("result",)
    RESULT_FIELD_NUMBER: _ClassVar[int]
    result: MatchResult
    def __init__(self, result: _Optional[_Union[MatchResult, _Mapping]] = ...) -> None: ...

class Notice(_message.Message):
    __slots__ = ("text", "seat", "provenance")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    PROVENANCE_FIELD_NUMBER: _ClassVar[int]
    text: str
    seat: int
    provenance: Provenance
    def __init__(self, text: _Optional[str] = ..., seat: _Optional[int] = ..., provenance: _Optional[_Union[Provenance, str]] = ...) -> None: ...
