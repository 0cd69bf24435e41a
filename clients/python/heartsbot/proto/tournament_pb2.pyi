from . import game_pb2 as _game_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class TournamentStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TOURNAMENT_STATUS_UNSPECIFIED: _ClassVar[TournamentStatus]
    TOURNAMENT_STATUS_RUNNING: _ClassVar[TournamentStatus]
    TOURNAMENT_STATUS_PAUSED: _ClassVar[TournamentStatus]
    TOURNAMENT_STATUS_FINISHED: _ClassVar[TournamentStatus]
    TOURNAMENT_STATUS_CANCELLED: _ClassVar[TournamentStatus]
TOURNAMENT_STATUS_UNSPECIFIED: TournamentStatus
TOURNAMENT_STATUS_RUNNING: TournamentStatus
TOURNAMENT_STATUS_PAUSED: TournamentStatus
TOURNAMENT_STATUS_FINISHED: TournamentStatus
TOURNAMENT_STATUS_CANCELLED: TournamentStatus

class CreateTournamentRequest(_message.Message):
    __slots__ = ("name", "bots", "ruleset", "players", "rounds", "deals_per_match", "seed", "clock", "shuffle_key")
    NAME_FIELD_NUMBER: _ClassVar[int]
    BOTS_FIELD_NUMBER: _ClassVar[int]
    RULESET_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    ROUNDS_FIELD_NUMBER: _ClassVar[int]
    DEALS_PER_MATCH_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    CLOCK_FIELD_NUMBER: _ClassVar[int]
    SHUFFLE_KEY_FIELD_NUMBER: _ClassVar[int]
    name: str
    bots: _containers.RepeatedScalarFieldContainer[str]
    ruleset: str
    players: int
    rounds: int
    deals_per_match: int
    seed: int
    clock: _game_pb2.ClockSettings
    shuffle_key: bytes
    def __init__(self, name: _Optional[str] = ..., bots: _Optional[_Iterable[str]] = ..., ruleset: _Optional[str] = ..., players: _Optional[int] = ..., rounds: _Optional[int] = ..., deals_per_match: _Optional[int] = ..., seed: _Optional[int] = ..., clock: _Optional[_Union[_game_pb2.ClockSettings, _Mapping]] = ..., shuffle_key: _Optional[bytes] = ...) -> None: ...

class PauseTournamentRequest(_message.Message):
    __slots__ = ("id", "reason")
    ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    id: str
    reason: str
    def __init__(self, id: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class ResumeTournamentRequest(_message.Message):
    __slots__ = ("id", "reason")
    ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    id: str
    reason: str
    def __init__(self, id: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class CancelTournamentRequest(_message.Message):
    __slots__ = ("id", "reason")
    ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    id: str
    reason: str
    def __init__(self, id: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class GetTournamentRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class ListTournamentsRequest(_message.Message):
    __slots__ = ("limit", "page_token")
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    limit: int
    page_token: str
    def __init__(self, limit: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class RosterEntry(_message.Message):
    __slots__ = ("bot", "owner", "version")
    BOT_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    bot: str
    owner: str
    version: str
    def __init__(self, bot: _Optional[str] = ..., owner: _Optional[str] = ..., version: _Optional[str] = ...) -> None: ...

class TournamentTable(_message.Message):
    __slots__ = ("round", "table", "bots", "status", "match_id", "attempts", "waiting")
    ROUND_FIELD_NUMBER: _ClassVar[int]
    TABLE_FIELD_NUMBER: _ClassVar[int]
    BOTS_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    WAITING_FIELD_NUMBER: _ClassVar[int]
    round: int
    table: int
    bots: _containers.RepeatedScalarFieldContainer[str]
    status: str
    match_id: str
    attempts: int
    waiting: str
    def __init__(self, round: _Optional[int] = ..., table: _Optional[int] = ..., bots: _Optional[_Iterable[str]] = ..., status: _Optional[str] = ..., match_id: _Optional[str] = ..., attempts: _Optional[int] = ..., waiting: _Optional[str] = ...) -> None: ...

class StandingRow(_message.Message):
    __slots__ = ("rank", "bot", "version", "points_per_deal", "ci_low", "ci_high", "p_best", "deals", "matches", "tied_with", "decisions", "timeouts", "illegal_defaults", "disconnect_defaults", "auto_defaults")
    RANK_FIELD_NUMBER: _ClassVar[int]
    BOT_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    POINTS_PER_DEAL_FIELD_NUMBER: _ClassVar[int]
    CI_LOW_FIELD_NUMBER: _ClassVar[int]
    CI_HIGH_FIELD_NUMBER: _ClassVar[int]
    P_BEST_FIELD_NUMBER: _ClassVar[int]
    DEALS_FIELD_NUMBER: _ClassVar[int]
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    TIED_WITH_FIELD_NUMBER: _ClassVar[int]
    DECISIONS_FIELD_NUMBER: _ClassVar[int]
    TIMEOUTS_FIELD_NUMBER: _ClassVar[int]
    ILLEGAL_DEFAULTS_FIELD_NUMBER: _ClassVar[int]
    DISCONNECT_DEFAULTS_FIELD_NUMBER: _ClassVar[int]
    AUTO_DEFAULTS_FIELD_NUMBER: _ClassVar[int]
    rank: int
    bot: str
    version: str
    points_per_deal: float
    ci_low: float
    ci_high: float
    p_best: float
    deals: int
    matches: int
    tied_with: _containers.RepeatedScalarFieldContainer[str]
    decisions: int
    timeouts: int
    illegal_defaults: int
    disconnect_defaults: int
    auto_defaults: int
    def __init__(self, rank: _Optional[int] = ..., bot: _Optional[str] = ..., version: _Optional[str] = ..., points_per_deal: _Optional[float] = ..., ci_low: _Optional[float] = ..., ci_high: _Optional[float] = ..., p_best: _Optional[float] = ..., deals: _Optional[int] = ..., matches: _Optional[int] = ..., tied_with: _Optional[_Iterable[str]] = ..., decisions: _Optional[int] = ..., timeouts: _Optional[int] = ..., illegal_defaults: _Optional[int] = ..., disconnect_defaults: _Optional[int] = ..., auto_defaults: _Optional[int] = ...) -> None: ...

class HeadToHead(_message.Message):
    __slots__ = ("a", "b", "matches", "a_ahead", "b_ahead", "level", "points_diff_per_deal")
    A_FIELD_NUMBER: _ClassVar[int]
    B_FIELD_NUMBER: _ClassVar[int]
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    A_AHEAD_FIELD_NUMBER: _ClassVar[int]
    B_AHEAD_FIELD_NUMBER: _ClassVar[int]
    LEVEL_FIELD_NUMBER: _ClassVar[int]
    POINTS_DIFF_PER_DEAL_FIELD_NUMBER: _ClassVar[int]
    a: str
    b: str
    matches: int
    a_ahead: int
    b_ahead: int
    level: int
    points_diff_per_deal: float
    def __init__(self, a: _Optional[str] = ..., b: _Optional[str] = ..., matches: _Optional[int] = ..., a_ahead: _Optional[int] = ..., b_ahead: _Optional[int] = ..., level: _Optional[int] = ..., points_diff_per_deal: _Optional[float] = ...) -> None: ...

class TournamentStandings(_message.Message):
    __slots__ = ("rows", "head_to_head", "test", "shuffles", "json")
    ROWS_FIELD_NUMBER: _ClassVar[int]
    HEAD_TO_HEAD_FIELD_NUMBER: _ClassVar[int]
    TEST_FIELD_NUMBER: _ClassVar[int]
    SHUFFLES_FIELD_NUMBER: _ClassVar[int]
    JSON_FIELD_NUMBER: _ClassVar[int]
    rows: _containers.RepeatedCompositeFieldContainer[StandingRow]
    head_to_head: _containers.RepeatedCompositeFieldContainer[HeadToHead]
    test: str
    shuffles: int
    json: str
    def __init__(self, rows: _Optional[_Iterable[_Union[StandingRow, _Mapping]]] = ..., head_to_head: _Optional[_Iterable[_Union[HeadToHead, _Mapping]]] = ..., test: _Optional[str] = ..., shuffles: _Optional[int] = ..., json: _Optional[str] = ...) -> None: ...

class Tournament(_message.Message):
    __slots__ = ("id", "name", "status", "ruleset", "players", "rounds", "deals_per_match", "roster", "tables", "matches_finished", "matches_total", "standings", "seed", "created_unix_ms", "reason", "shuffle_key", "clock")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    RULESET_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    ROUNDS_FIELD_NUMBER: _ClassVar[int]
    DEALS_PER_MATCH_FIELD_NUMBER: _ClassVar[int]
    ROSTER_FIELD_NUMBER: _ClassVar[int]
    TABLES_FIELD_NUMBER: _ClassVar[int]
    MATCHES_FINISHED_FIELD_NUMBER: _ClassVar[int]
    MATCHES_TOTAL_FIELD_NUMBER: _ClassVar[int]
    STANDINGS_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    CREATED_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    SHUFFLE_KEY_FIELD_NUMBER: _ClassVar[int]
    CLOCK_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    status: TournamentStatus
    ruleset: str
    players: int
    rounds: int
    deals_per_match: int
    roster: _containers.RepeatedCompositeFieldContainer[RosterEntry]
    tables: _containers.RepeatedCompositeFieldContainer[TournamentTable]
    matches_finished: int
    matches_total: int
    standings: TournamentStandings
    seed: int
    created_unix_ms: int
    reason: str
    shuffle_key: bytes
    clock: _game_pb2.ClockSettings
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., status: _Optional[_Union[TournamentStatus, str]] = ..., ruleset: _Optional[str] = ..., players: _Optional[int] = ..., rounds: _Optional[int] = ..., deals_per_match: _Optional[int] = ..., roster: _Optional[_Iterable[_Union[RosterEntry, _Mapping]]] = ..., tables: _Optional[_Iterable[_Union[TournamentTable, _Mapping]]] = ..., matches_finished: _Optional[int] = ..., matches_total: _Optional[int] = ..., standings: _Optional[_Union[TournamentStandings, _Mapping]] = ..., seed: _Optional[int] = ..., created_unix_ms: _Optional[int] = ..., reason: _Optional[str] = ..., shuffle_key: _Optional[bytes] = ..., clock: _Optional[_Union[_game_pb2.ClockSettings, _Mapping]] = ...) -> None: ...

class CreateTournamentResponse(_message.Message):
    __slots__ = ("tournament",)
    TOURNAMENT_FIELD_NUMBER: _ClassVar[int]
    tournament: Tournament
    def __init__(self, tournament: _Optional[_Union[Tournament, _Mapping]] = ...) -> None: ...

class GetTournamentResponse(_message.Message):
    __slots__ = ("tournament",)
    TOURNAMENT_FIELD_NUMBER: _ClassVar[int]
    tournament: Tournament
    def __init__(self, tournament: _Optional[_Union[Tournament, _Mapping]] = ...) -> None: ...

class PauseTournamentResponse(_message.Message):
    __slots__ = ("tournament",)
    TOURNAMENT_FIELD_NUMBER: _ClassVar[int]
    tournament: Tournament
    def __init__(self, tournament: _Optional[_Union[Tournament, _Mapping]] = ...) -> None: ...

class ResumeTournamentResponse(_message.Message):
    __slots__ = ("tournament",)
    TOURNAMENT_FIELD_NUMBER: _ClassVar[int]
    tournament: Tournament
    def __init__(self, tournament: _Optional[_Union[Tournament, _Mapping]] = ...) -> None: ...

class CancelTournamentResponse(_message.Message):
    __slots__ = ("tournament",)
    TOURNAMENT_FIELD_NUMBER: _ClassVar[int]
    tournament: Tournament
    def __init__(self, tournament: _Optional[_Union[Tournament, _Mapping]] = ...) -> None: ...

class ListTournamentsResponse(_message.Message):
    __slots__ = ("tournaments", "next_page_token")
    TOURNAMENTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    tournaments: _containers.RepeatedCompositeFieldContainer[Tournament]
    next_page_token: str
    def __init__(self, tournaments: _Optional[_Iterable[_Union[Tournament, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...
