from . import cards_pb2 as _cards_pb2
from . import game_pb2 as _game_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class DrainCause(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DRAIN_CAUSE_UNSPECIFIED: _ClassVar[DrainCause]
    DRAIN_CAUSE_ASKED: _ClassVar[DrainCause]
    DRAIN_CAUSE_TOKEN_ROTATED: _ClassVar[DrainCause]
    DRAIN_CAUSE_REPLACED: _ClassVar[DrainCause]

class RejectionCode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    REJECTION_CODE_UNSPECIFIED: _ClassVar[RejectionCode]
    REJECTION_CODE_ILLEGAL: _ClassVar[RejectionCode]
    REJECTION_CODE_MALFORMED: _ClassVar[RejectionCode]
    REJECTION_CODE_UNKNOWN_REQUEST: _ClassVar[RejectionCode]
    REJECTION_CODE_STALE_REQUEST: _ClassVar[RejectionCode]
    REJECTION_CODE_UNKNOWN_MATCH: _ClassVar[RejectionCode]
DRAIN_CAUSE_UNSPECIFIED: DrainCause
DRAIN_CAUSE_ASKED: DrainCause
DRAIN_CAUSE_TOKEN_ROTATED: DrainCause
DRAIN_CAUSE_REPLACED: DrainCause
REJECTION_CODE_UNSPECIFIED: RejectionCode
REJECTION_CODE_ILLEGAL: RejectionCode
REJECTION_CODE_MALFORMED: RejectionCode
REJECTION_CODE_UNKNOWN_REQUEST: RejectionCode
REJECTION_CODE_STALE_REQUEST: RejectionCode
REJECTION_CODE_UNKNOWN_MATCH: RejectionCode

class PlayRequest(_message.Message):
    __slots__ = ("hello", "answer", "resume", "drain")
    HELLO_FIELD_NUMBER: _ClassVar[int]
    ANSWER_FIELD_NUMBER: _ClassVar[int]
    RESUME_FIELD_NUMBER: _ClassVar[int]
    DRAIN_FIELD_NUMBER: _ClassVar[int]
    hello: Hello
    answer: Answer
    resume: Resume
    drain: Drain
    def __init__(self, hello: _Optional[_Union[Hello, _Mapping]] = ..., answer: _Optional[_Union[Answer, _Mapping]] = ..., resume: _Optional[_Union[Resume, _Mapping]] = ..., drain: _Optional[_Union[Drain, _Mapping]] = ...) -> None: ...

class Drain(_message.Message):
    __slots__ = ("reason",)
    REASON_FIELD_NUMBER: _ClassVar[int]
    reason: str
    def __init__(self, reason: _Optional[str] = ...) -> None: ...

class Hello(_message.Message):
    __slots__ = ("name", "version", "rulesets", "max_concurrent_matches")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    RULESETS_FIELD_NUMBER: _ClassVar[int]
    MAX_CONCURRENT_MATCHES_FIELD_NUMBER: _ClassVar[int]
    name: str
    version: str
    rulesets: _containers.RepeatedScalarFieldContainer[str]
    max_concurrent_matches: int
    def __init__(self, name: _Optional[str] = ..., version: _Optional[str] = ..., rulesets: _Optional[_Iterable[str]] = ..., max_concurrent_matches: _Optional[int] = ...) -> None: ...

class Resume(_message.Message):
    __slots__ = ("match_id", "seat", "last_sequence")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    LAST_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat: int
    last_sequence: int
    def __init__(self, match_id: _Optional[str] = ..., seat: _Optional[int] = ..., last_sequence: _Optional[int] = ...) -> None: ...

class Answer(_message.Message):
    __slots__ = ("match_id", "request_id", "pass_cards", "play", "moon")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    PASS_CARDS_FIELD_NUMBER: _ClassVar[int]
    PLAY_FIELD_NUMBER: _ClassVar[int]
    MOON_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    request_id: str
    pass_cards: PassCards
    play: _cards_pb2.Card
    moon: _game_pb2.MoonOption
    def __init__(self, match_id: _Optional[str] = ..., request_id: _Optional[str] = ..., pass_cards: _Optional[_Union[PassCards, _Mapping]] = ..., play: _Optional[_Union[_cards_pb2.Card, _Mapping]] = ..., moon: _Optional[_Union[_game_pb2.MoonOption, str]] = ...) -> None: ...

class PassCards(_message.Message):
    __slots__ = ("cards",)
    CARDS_FIELD_NUMBER: _ClassVar[int]
    cards: _containers.RepeatedCompositeFieldContainer[_cards_pb2.Card]
    def __init__(self, cards: _Optional[_Iterable[_Union[_cards_pb2.Card, _Mapping]]] = ...) -> None: ...

class PlayResponse(_message.Message):
    __slots__ = ("welcome", "update", "rejected", "draining")
    WELCOME_FIELD_NUMBER: _ClassVar[int]
    UPDATE_FIELD_NUMBER: _ClassVar[int]
    REJECTED_FIELD_NUMBER: _ClassVar[int]
    DRAINING_FIELD_NUMBER: _ClassVar[int]
    welcome: Welcome
    update: MatchUpdate
    rejected: AnswerRejected
    draining: Draining
    def __init__(self, welcome: _Optional[_Union[Welcome, _Mapping]] = ..., update: _Optional[_Union[MatchUpdate, _Mapping]] = ..., rejected: _Optional[_Union[AnswerRejected, _Mapping]] = ..., draining: _Optional[_Union[Draining, _Mapping]] = ...) -> None: ...

class Draining(_message.Message):
    __slots__ = ("reason", "active_matches", "cause")
    REASON_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_MATCHES_FIELD_NUMBER: _ClassVar[int]
    CAUSE_FIELD_NUMBER: _ClassVar[int]
    reason: str
    active_matches: _containers.RepeatedScalarFieldContainer[str]
    cause: DrainCause
    def __init__(self, reason: _Optional[str] = ..., active_matches: _Optional[_Iterable[str]] = ..., cause: _Optional[_Union[DrainCause, str]] = ...) -> None: ...

class Welcome(_message.Message):
    __slots__ = ("session_id", "bot_name", "server_version", "active_matches", "max_concurrent_matches")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    SERVER_VERSION_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_MATCHES_FIELD_NUMBER: _ClassVar[int]
    MAX_CONCURRENT_MATCHES_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    bot_name: str
    server_version: str
    active_matches: _containers.RepeatedCompositeFieldContainer[ActiveMatch]
    max_concurrent_matches: int
    def __init__(self, session_id: _Optional[str] = ..., bot_name: _Optional[str] = ..., server_version: _Optional[str] = ..., active_matches: _Optional[_Iterable[_Union[ActiveMatch, _Mapping]]] = ..., max_concurrent_matches: _Optional[int] = ...) -> None: ...

class ActiveMatch(_message.Message):
    __slots__ = ("match_id", "seat", "last_sequence", "request_pending")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    LAST_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    REQUEST_PENDING_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat: int
    last_sequence: int
    request_pending: bool
    def __init__(self, match_id: _Optional[str] = ..., seat: _Optional[int] = ..., last_sequence: _Optional[int] = ..., request_pending: _Optional[bool] = ...) -> None: ...

class MatchUpdate(_message.Message):
    __slots__ = ("match_id", "seat", "events", "request")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    REQUEST_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat: int
    events: _containers.RepeatedCompositeFieldContainer[_game_pb2.Event]
    request: DecisionRequest
    def __init__(self, match_id: _Optional[str] = ..., seat: _Optional[int] = ..., events: _Optional[_Iterable[_Union[_game_pb2.Event, _Mapping]]] = ..., request: _Optional[_Union[DecisionRequest, _Mapping]] = ...) -> None: ...

class Clock(_message.Message):
    __slots__ = ("decision_ms", "bank_ms")
    DECISION_MS_FIELD_NUMBER: _ClassVar[int]
    BANK_MS_FIELD_NUMBER: _ClassVar[int]
    decision_ms: int
    bank_ms: int
    def __init__(self, decision_ms: _Optional[int] = ..., bank_ms: _Optional[int] = ...) -> None: ...

class DecisionRequest(_message.Message):
    __slots__ = ("request_id", "kind", "deal_number", "your_seat", "ruleset", "hand", "legal_cards", "pass_count", "pass_direction", "pass_to", "passed", "received", "current_trick", "tricks", "hearts_broken", "points_taken", "hand_sizes", "totals", "deal_scores", "clock", "moon_options", "default_moon_option", "last_sequence", "hearts_broken_trick", "scoring_phase")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    DEAL_NUMBER_FIELD_NUMBER: _ClassVar[int]
    YOUR_SEAT_FIELD_NUMBER: _ClassVar[int]
    RULESET_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    LEGAL_CARDS_FIELD_NUMBER: _ClassVar[int]
    PASS_COUNT_FIELD_NUMBER: _ClassVar[int]
    PASS_DIRECTION_FIELD_NUMBER: _ClassVar[int]
    PASS_TO_FIELD_NUMBER: _ClassVar[int]
    PASSED_FIELD_NUMBER: _ClassVar[int]
    RECEIVED_FIELD_NUMBER: _ClassVar[int]
    CURRENT_TRICK_FIELD_NUMBER: _ClassVar[int]
    TRICKS_FIELD_NUMBER: _ClassVar[int]
    HEARTS_BROKEN_FIELD_NUMBER: _ClassVar[int]
    POINTS_TAKEN_FIELD_NUMBER: _ClassVar[int]
    HAND_SIZES_FIELD_NUMBER: _ClassVar[int]
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    DEAL_SCORES_FIELD_NUMBER: _ClassVar[int]
    CLOCK_FIELD_NUMBER: _ClassVar[int]
    MOON_OPTIONS_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_MOON_OPTION_FIELD_NUMBER: _ClassVar[int]
    LAST_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    HEARTS_BROKEN_TRICK_FIELD_NUMBER: _ClassVar[int]
    SCORING_PHASE_FIELD_NUMBER: _ClassVar[int]
    request_id: str
    kind: _game_pb2.DecisionKind
    deal_number: int
    your_seat: int
    ruleset: _game_pb2.Ruleset
    hand: _containers.RepeatedCompositeFieldContainer[_cards_pb2.Card]
    legal_cards: _containers.RepeatedCompositeFieldContainer[_cards_pb2.Card]
    pass_count: int
    pass_direction: _game_pb2.PassDirection
    pass_to: int
    passed: _containers.RepeatedCompositeFieldContainer[_cards_pb2.Card]
    received: _containers.RepeatedCompositeFieldContainer[_cards_pb2.Card]
    current_trick: _game_pb2.Trick
    tricks: _containers.RepeatedCompositeFieldContainer[_game_pb2.Trick]
    hearts_broken: bool
    points_taken: _containers.RepeatedScalarFieldContainer[int]
    hand_sizes: _containers.RepeatedScalarFieldContainer[int]
    totals: _containers.RepeatedScalarFieldContainer[int]
    deal_scores: _containers.RepeatedCompositeFieldContainer[_game_pb2.DealScore]
    clock: Clock
    moon_options: _containers.RepeatedScalarFieldContainer[_game_pb2.MoonOption]
    default_moon_option: _game_pb2.MoonOption
    last_sequence: int
    hearts_broken_trick: int
    scoring_phase: int
    def __init__(self, request_id: _Optional[str] = ..., kind: _Optional[_Union[_game_pb2.DecisionKind, str]] = ..., deal_number: _Optional[int] = ..., your_seat: _Optional[int] = ..., ruleset: _Optional[_Union[_game_pb2.Ruleset, _Mapping]] = ..., hand: _Optional[_Iterable[_Union[_cards_pb2.Card, _Mapping]]] = ..., legal_cards: _Optional[_Iterable[_Union[_cards_pb2.Card, _Mapping]]] = ..., pass_count: _Optional[int] = ..., pass_direction: _Optional[_Union[_game_pb2.PassDirection, str]] = ..., pass_to: _Optional[int] = ..., passed: _Optional[_Iterable[_Union[_cards_pb2.Card, _Mapping]]] = ..., received: _Optional[_Iterable[_Union[_cards_pb2.Card, _Mapping]]] = ..., current_trick: _Optional[_Union[_game_pb2.Trick, _Mapping]] = ..., tricks: _Optional[_Iterable[_Union[_game_pb2.Trick, _Mapping]]] = ..., hearts_broken: _Optional[bool] = ..., points_taken: _Optional[_Iterable[int]] = ..., hand_sizes: _Optional[_Iterable[int]] = ..., totals: _Optional[_Iterable[int]] = ..., deal_scores: _Optional[_Iterable[_Union[_game_pb2.DealScore, _Mapping]]] = ..., clock: _Optional[_Union[Clock, _Mapping]] = ..., moon_options: _Optional[_Iterable[_Union[_game_pb2.MoonOption, str]]] = ..., default_moon_option: _Optional[_Union[_game_pb2.MoonOption, str]] = ..., last_sequence: _Optional[int] = ..., hearts_broken_trick: _Optional[int] = ..., scoring_phase: _Optional[int] = ...) -> None: ...

class AnswerRejected(_message.Message):
    __slots__ = ("match_id", "request_id", "code", "reason", "retry", "remaining_ms")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    RETRY_FIELD_NUMBER: _ClassVar[int]
    REMAINING_MS_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    request_id: str
    code: RejectionCode
    reason: str
    retry: bool
    remaining_ms: int
    def __init__(self, match_id: _Optional[str] = ..., request_id: _Optional[str] = ..., code: _Optional[_Union[RejectionCode, str]] = ..., reason: _Optional[str] = ..., retry: _Optional[bool] = ..., remaining_ms: _Optional[int] = ...) -> None: ...
