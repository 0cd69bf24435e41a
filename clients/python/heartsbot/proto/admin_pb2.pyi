from . import game_pb2 as _game_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class RulesetOptions(_message.Message):
    __slots__ = ("target", "hartenjagen_passing", "moon_requires_bonus")
    TARGET_FIELD_NUMBER: _ClassVar[int]
    HARTENJAGEN_PASSING_FIELD_NUMBER: _ClassVar[int]
    MOON_REQUIRES_BONUS_FIELD_NUMBER: _ClassVar[int]
    target: int
    hartenjagen_passing: bool
    moon_requires_bonus: bool
    def __init__(self, target: _Optional[int] = ..., hartenjagen_passing: _Optional[bool] = ..., moon_requires_bonus: _Optional[bool] = ...) -> None: ...

class SeatSpec(_message.Message):
    __slots__ = ("bot", "house")
    BOT_FIELD_NUMBER: _ClassVar[int]
    HOUSE_FIELD_NUMBER: _ClassVar[int]
    bot: str
    house: str
    def __init__(self, bot: _Optional[str] = ..., house: _Optional[str] = ...) -> None: ...

class CreateMatchRequest(_message.Message):
    __slots__ = ("ruleset", "players", "options", "format", "seed", "seats", "clock", "rated", "wait_for_seats_ms")
    RULESET_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    CLOCK_FIELD_NUMBER: _ClassVar[int]
    RATED_FIELD_NUMBER: _ClassVar[int]
    WAIT_FOR_SEATS_MS_FIELD_NUMBER: _ClassVar[int]
    ruleset: str
    players: int
    options: RulesetOptions
    format: _game_pb2.MatchFormat
    seed: int
    seats: _containers.RepeatedCompositeFieldContainer[SeatSpec]
    clock: _game_pb2.ClockSettings
    rated: bool
    wait_for_seats_ms: int
    def __init__(self, ruleset: _Optional[str] = ..., players: _Optional[int] = ..., options: _Optional[_Union[RulesetOptions, _Mapping]] = ..., format: _Optional[_Union[_game_pb2.MatchFormat, _Mapping]] = ..., seed: _Optional[int] = ..., seats: _Optional[_Iterable[_Union[SeatSpec, _Mapping]]] = ..., clock: _Optional[_Union[_game_pb2.ClockSettings, _Mapping]] = ..., rated: _Optional[bool] = ..., wait_for_seats_ms: _Optional[int] = ...) -> None: ...

class CreateMatchResponse(_message.Message):
    __slots__ = ("match_id", "seed", "ruleset", "clock", "seed_drawn")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    RULESET_FIELD_NUMBER: _ClassVar[int]
    CLOCK_FIELD_NUMBER: _ClassVar[int]
    SEED_DRAWN_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seed: int
    ruleset: _game_pb2.Ruleset
    clock: _game_pb2.ClockSettings
    seed_drawn: bool
    def __init__(self, match_id: _Optional[str] = ..., seed: _Optional[int] = ..., ruleset: _Optional[_Union[_game_pb2.Ruleset, _Mapping]] = ..., clock: _Optional[_Union[_game_pb2.ClockSettings, _Mapping]] = ..., seed_drawn: _Optional[bool] = ...) -> None: ...

class CancelMatchRequest(_message.Message):
    __slots__ = ("match_id", "reason")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    reason: str
    def __init__(self, match_id: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class CancelMatchResponse(_message.Message):
    __slots__ = ("result",)
    RESULT_FIELD_NUMBER: _ClassVar[int]
    result: _game_pb2.MatchResult
    def __init__(self, result: _Optional[_Union[_game_pb2.MatchResult, _Mapping]] = ...) -> None: ...

class ListBotsRequest(_message.Message):
    __slots__ = ("include_registered",)
    INCLUDE_REGISTERED_FIELD_NUMBER: _ClassVar[int]
    include_registered: bool
    def __init__(self, include_registered: _Optional[bool] = ...) -> None: ...

class ConnectedBot(_message.Message):
    __slots__ = ("name", "version", "rulesets", "max_concurrent_matches", "active_matches", "connected", "registered", "owner", "revoked", "matches", "reserved_slots", "draining")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    RULESETS_FIELD_NUMBER: _ClassVar[int]
    MAX_CONCURRENT_MATCHES_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_MATCHES_FIELD_NUMBER: _ClassVar[int]
    CONNECTED_FIELD_NUMBER: _ClassVar[int]
    REGISTERED_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    REVOKED_FIELD_NUMBER: _ClassVar[int]
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    RESERVED_SLOTS_FIELD_NUMBER: _ClassVar[int]
    DRAINING_FIELD_NUMBER: _ClassVar[int]
    name: str
    version: str
    rulesets: _containers.RepeatedScalarFieldContainer[str]
    max_concurrent_matches: int
    active_matches: int
    connected: bool
    registered: bool
    owner: str
    revoked: bool
    matches: _containers.RepeatedCompositeFieldContainer[BotMatchSlot]
    reserved_slots: int
    draining: bool
    def __init__(self, name: _Optional[str] = ..., version: _Optional[str] = ..., rulesets: _Optional[_Iterable[str]] = ..., max_concurrent_matches: _Optional[int] = ..., active_matches: _Optional[int] = ..., connected: _Optional[bool] = ..., registered: _Optional[bool] = ..., owner: _Optional[str] = ..., revoked: _Optional[bool] = ..., matches: _Optional[_Iterable[_Union[BotMatchSlot, _Mapping]]] = ..., reserved_slots: _Optional[int] = ..., draining: _Optional[bool] = ...) -> None: ...

class BotMatchSlot(_message.Message):
    __slots__ = ("match_id", "purpose")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    PURPOSE_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    purpose: str
    def __init__(self, match_id: _Optional[str] = ..., purpose: _Optional[str] = ...) -> None: ...

class ListBotsResponse(_message.Message):
    __slots__ = ("bots",)
    BOTS_FIELD_NUMBER: _ClassVar[int]
    bots: _containers.RepeatedCompositeFieldContainer[ConnectedBot]
    def __init__(self, bots: _Optional[_Iterable[_Union[ConnectedBot, _Mapping]]] = ...) -> None: ...

class GetServerStatusRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class CallBudget(_message.Message):
    __slots__ = ("name", "limit", "per_peer", "in_use", "peak", "refused")
    NAME_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    PER_PEER_FIELD_NUMBER: _ClassVar[int]
    IN_USE_FIELD_NUMBER: _ClassVar[int]
    PEAK_FIELD_NUMBER: _ClassVar[int]
    REFUSED_FIELD_NUMBER: _ClassVar[int]
    name: str
    limit: int
    per_peer: int
    in_use: int
    peak: int
    refused: int
    def __init__(self, name: _Optional[str] = ..., limit: _Optional[int] = ..., per_peer: _Optional[int] = ..., in_use: _Optional[int] = ..., peak: _Optional[int] = ..., refused: _Optional[int] = ...) -> None: ...

class GetServerStatusResponse(_message.Message):
    __slots__ = ("loop_lag_ms", "max_loop_lag_ms", "recent_max_stall_ms", "loop_stalls", "loop_stalled_ms", "bot_sessions", "running_matches", "budgets", "resident_bytes", "max_loop_busy_ms", "store_failing_since_ms", "store_error", "unstored_matches")
    LOOP_LAG_MS_FIELD_NUMBER: _ClassVar[int]
    MAX_LOOP_LAG_MS_FIELD_NUMBER: _ClassVar[int]
    RECENT_MAX_STALL_MS_FIELD_NUMBER: _ClassVar[int]
    LOOP_STALLS_FIELD_NUMBER: _ClassVar[int]
    LOOP_STALLED_MS_FIELD_NUMBER: _ClassVar[int]
    BOT_SESSIONS_FIELD_NUMBER: _ClassVar[int]
    RUNNING_MATCHES_FIELD_NUMBER: _ClassVar[int]
    BUDGETS_FIELD_NUMBER: _ClassVar[int]
    RESIDENT_BYTES_FIELD_NUMBER: _ClassVar[int]
    MAX_LOOP_BUSY_MS_FIELD_NUMBER: _ClassVar[int]
    STORE_FAILING_SINCE_MS_FIELD_NUMBER: _ClassVar[int]
    STORE_ERROR_FIELD_NUMBER: _ClassVar[int]
    UNSTORED_MATCHES_FIELD_NUMBER: _ClassVar[int]
    loop_lag_ms: float
    max_loop_lag_ms: float
    recent_max_stall_ms: float
    loop_stalls: int
    loop_stalled_ms: float
    bot_sessions: int
    running_matches: int
    budgets: _containers.RepeatedCompositeFieldContainer[CallBudget]
    resident_bytes: int
    max_loop_busy_ms: float
    store_failing_since_ms: int
    store_error: str
    unstored_matches: int
    def __init__(self, loop_lag_ms: _Optional[float] = ..., max_loop_lag_ms: _Optional[float] = ..., recent_max_stall_ms: _Optional[float] = ..., loop_stalls: _Optional[int] = ..., loop_stalled_ms: _Optional[float] = ..., bot_sessions: _Optional[int] = ..., running_matches: _Optional[int] = ..., budgets: _Optional[_Iterable[_Union[CallBudget, _Mapping]]] = ..., resident_bytes: _Optional[int] = ..., max_loop_busy_ms: _Optional[float] = ..., store_failing_since_ms: _Optional[int] = ..., store_error: _Optional[str] = ..., unstored_matches: _Optional[int] = ...) -> None: ...
