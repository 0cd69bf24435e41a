from . import cards_pb2 as _cards_pb2
from . import game_pb2 as _game_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ListMatchesRequest(_message.Message):
    __slots__ = ("status", "limit", "page_token")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    status: _game_pb2.MatchStatus
    limit: int
    page_token: str
    def __init__(self, status: _Optional[_Union[_game_pb2.MatchStatus, str]] = ..., limit: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class MatchSummary(_message.Message):
    __slots__ = ("match_id", "ruleset", "seats", "status", "created_unix_ms", "deals_played", "totals", "result", "withheld")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    RULESET_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    CREATED_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    DEALS_PLAYED_FIELD_NUMBER: _ClassVar[int]
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    WITHHELD_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    ruleset: str
    seats: _containers.RepeatedCompositeFieldContainer[_game_pb2.SeatInfo]
    status: _game_pb2.MatchStatus
    created_unix_ms: int
    deals_played: int
    totals: _containers.RepeatedScalarFieldContainer[int]
    result: _game_pb2.MatchResult
    withheld: bool
    def __init__(self, match_id: _Optional[str] = ..., ruleset: _Optional[str] = ..., seats: _Optional[_Iterable[_Union[_game_pb2.SeatInfo, _Mapping]]] = ..., status: _Optional[_Union[_game_pb2.MatchStatus, str]] = ..., created_unix_ms: _Optional[int] = ..., deals_played: _Optional[int] = ..., totals: _Optional[_Iterable[int]] = ..., result: _Optional[_Union[_game_pb2.MatchResult, _Mapping]] = ..., withheld: _Optional[bool] = ...) -> None: ...

class ListMatchesResponse(_message.Message):
    __slots__ = ("matches", "next_page_token")
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    matches: _containers.RepeatedCompositeFieldContainer[MatchSummary]
    next_page_token: str
    def __init__(self, matches: _Optional[_Iterable[_Union[MatchSummary, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class WatchMatchRequest(_message.Message):
    __slots__ = ("match_id", "from_sequence")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    FROM_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    from_sequence: int
    def __init__(self, match_id: _Optional[str] = ..., from_sequence: _Optional[int] = ...) -> None: ...

class WatchMatchResponse(_message.Message):
    __slots__ = ("events",)
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[_game_pb2.Event]
    def __init__(self, events: _Optional[_Iterable[_Union[_game_pb2.Event, _Mapping]]] = ...) -> None: ...

class GetMatchRecordRequest(_message.Message):
    __slots__ = ("match_id",)
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    def __init__(self, match_id: _Optional[str] = ...) -> None: ...

class RecordedDecision(_message.Message):
    __slots__ = ("deal_number", "seat", "kind", "cards", "moon", "provenance", "think_ms", "rejected_answers", "stall_credit_ms")
    DEAL_NUMBER_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    MOON_FIELD_NUMBER: _ClassVar[int]
    PROVENANCE_FIELD_NUMBER: _ClassVar[int]
    THINK_MS_FIELD_NUMBER: _ClassVar[int]
    REJECTED_ANSWERS_FIELD_NUMBER: _ClassVar[int]
    STALL_CREDIT_MS_FIELD_NUMBER: _ClassVar[int]
    deal_number: int
    seat: int
    kind: _game_pb2.DecisionKind
    cards: _containers.RepeatedCompositeFieldContainer[_cards_pb2.Card]
    moon: _game_pb2.MoonOption
    provenance: _game_pb2.Provenance
    think_ms: int
    rejected_answers: int
    stall_credit_ms: int
    def __init__(self, deal_number: _Optional[int] = ..., seat: _Optional[int] = ..., kind: _Optional[_Union[_game_pb2.DecisionKind, str]] = ..., cards: _Optional[_Iterable[_Union[_cards_pb2.Card, _Mapping]]] = ..., moon: _Optional[_Union[_game_pb2.MoonOption, str]] = ..., provenance: _Optional[_Union[_game_pb2.Provenance, str]] = ..., think_ms: _Optional[int] = ..., rejected_answers: _Optional[int] = ..., stall_credit_ms: _Optional[int] = ...) -> None: ...

class MatchRecord(_message.Message):
    __slots__ = ("match_id", "ruleset", "format", "seed", "seats", "clock", "decisions", "deal_scores", "deals", "result", "engine_record_json")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    RULESET_FIELD_NUMBER: _ClassVar[int]
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    CLOCK_FIELD_NUMBER: _ClassVar[int]
    DECISIONS_FIELD_NUMBER: _ClassVar[int]
    DEAL_SCORES_FIELD_NUMBER: _ClassVar[int]
    DEALS_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    ENGINE_RECORD_JSON_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    ruleset: _game_pb2.Ruleset
    format: _game_pb2.MatchFormat
    seed: int
    seats: _containers.RepeatedCompositeFieldContainer[_game_pb2.SeatInfo]
    clock: _game_pb2.ClockSettings
    decisions: _containers.RepeatedCompositeFieldContainer[RecordedDecision]
    deal_scores: _containers.RepeatedCompositeFieldContainer[_game_pb2.DealScore]
    deals: _containers.RepeatedCompositeFieldContainer[DealtHands]
    result: _game_pb2.MatchResult
    engine_record_json: str
    def __init__(self, match_id: _Optional[str] = ..., ruleset: _Optional[_Union[_game_pb2.Ruleset, _Mapping]] = ..., format: _Optional[_Union[_game_pb2.MatchFormat, _Mapping]] = ..., seed: _Optional[int] = ..., seats: _Optional[_Iterable[_Union[_game_pb2.SeatInfo, _Mapping]]] = ..., clock: _Optional[_Union[_game_pb2.ClockSettings, _Mapping]] = ..., decisions: _Optional[_Iterable[_Union[RecordedDecision, _Mapping]]] = ..., deal_scores: _Optional[_Iterable[_Union[_game_pb2.DealScore, _Mapping]]] = ..., deals: _Optional[_Iterable[_Union[DealtHands, _Mapping]]] = ..., result: _Optional[_Union[_game_pb2.MatchResult, _Mapping]] = ..., engine_record_json: _Optional[str] = ...) -> None: ...

class DealtHands(_message.Message):
    __slots__ = ("deal_number", "hands")
    DEAL_NUMBER_FIELD_NUMBER: _ClassVar[int]
    HANDS_FIELD_NUMBER: _ClassVar[int]
    deal_number: int
    hands: _containers.RepeatedCompositeFieldContainer[_game_pb2.Hand]
    def __init__(self, deal_number: _Optional[int] = ..., hands: _Optional[_Iterable[_Union[_game_pb2.Hand, _Mapping]]] = ...) -> None: ...

class GetMatchRecordResponse(_message.Message):
    __slots__ = ("record",)
    RECORD_FIELD_NUMBER: _ClassVar[int]
    record: MatchRecord
    def __init__(self, record: _Optional[_Union[MatchRecord, _Mapping]] = ...) -> None: ...
