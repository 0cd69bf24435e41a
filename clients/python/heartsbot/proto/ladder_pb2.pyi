from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class GetLeaderboardRequest(_message.Message):
    __slots__ = ("ruleset",)
    RULESET_FIELD_NUMBER: _ClassVar[int]
    ruleset: str
    def __init__(self, ruleset: _Optional[str] = ...) -> None: ...

class LeaderboardEntry(_message.Message):
    __slots__ = ("rank", "bot", "owner", "rating", "uncertainty", "conservative", "matches", "points_per_deal", "points_per_deal_ci", "decisions", "timeouts", "illegal_defaults", "disconnect_defaults", "unreliable", "auto_defaults", "default_share", "revoked")
    RANK_FIELD_NUMBER: _ClassVar[int]
    BOT_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    RATING_FIELD_NUMBER: _ClassVar[int]
    UNCERTAINTY_FIELD_NUMBER: _ClassVar[int]
    CONSERVATIVE_FIELD_NUMBER: _ClassVar[int]
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    POINTS_PER_DEAL_FIELD_NUMBER: _ClassVar[int]
    POINTS_PER_DEAL_CI_FIELD_NUMBER: _ClassVar[int]
    DECISIONS_FIELD_NUMBER: _ClassVar[int]
    TIMEOUTS_FIELD_NUMBER: _ClassVar[int]
    ILLEGAL_DEFAULTS_FIELD_NUMBER: _ClassVar[int]
    DISCONNECT_DEFAULTS_FIELD_NUMBER: _ClassVar[int]
    UNRELIABLE_FIELD_NUMBER: _ClassVar[int]
    AUTO_DEFAULTS_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_SHARE_FIELD_NUMBER: _ClassVar[int]
    REVOKED_FIELD_NUMBER: _ClassVar[int]
    rank: int
    bot: str
    owner: str
    rating: float
    uncertainty: float
    conservative: float
    matches: int
    points_per_deal: float
    points_per_deal_ci: float
    decisions: int
    timeouts: int
    illegal_defaults: int
    disconnect_defaults: int
    unreliable: bool
    auto_defaults: int
    default_share: float
    revoked: bool
    def __init__(self, rank: _Optional[int] = ..., bot: _Optional[str] = ..., owner: _Optional[str] = ..., rating: _Optional[float] = ..., uncertainty: _Optional[float] = ..., conservative: _Optional[float] = ..., matches: _Optional[int] = ..., points_per_deal: _Optional[float] = ..., points_per_deal_ci: _Optional[float] = ..., decisions: _Optional[int] = ..., timeouts: _Optional[int] = ..., illegal_defaults: _Optional[int] = ..., disconnect_defaults: _Optional[int] = ..., unreliable: _Optional[bool] = ..., auto_defaults: _Optional[int] = ..., default_share: _Optional[float] = ..., revoked: _Optional[bool] = ...) -> None: ...

class GetLeaderboardResponse(_message.Message):
    __slots__ = ("ruleset", "entries")
    RULESET_FIELD_NUMBER: _ClassVar[int]
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    ruleset: str
    entries: _containers.RepeatedCompositeFieldContainer[LeaderboardEntry]
    def __init__(self, ruleset: _Optional[str] = ..., entries: _Optional[_Iterable[_Union[LeaderboardEntry, _Mapping]]] = ...) -> None: ...

class GetBotProfileRequest(_message.Message):
    __slots__ = ("bot", "ruleset", "limit")
    BOT_FIELD_NUMBER: _ClassVar[int]
    RULESET_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    bot: str
    ruleset: str
    limit: int
    def __init__(self, bot: _Optional[str] = ..., ruleset: _Optional[str] = ..., limit: _Optional[int] = ...) -> None: ...

class BotMatch(_message.Message):
    __slots__ = ("match_id", "ruleset", "seat", "rank", "points", "deals")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    RULESET_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    RANK_FIELD_NUMBER: _ClassVar[int]
    POINTS_FIELD_NUMBER: _ClassVar[int]
    DEALS_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    ruleset: str
    seat: int
    rank: int
    points: int
    deals: int
    def __init__(self, match_id: _Optional[str] = ..., ruleset: _Optional[str] = ..., seat: _Optional[int] = ..., rank: _Optional[int] = ..., points: _Optional[int] = ..., deals: _Optional[int] = ...) -> None: ...

class GetBotProfileResponse(_message.Message):
    __slots__ = ("bot", "owner", "standing", "matches")
    BOT_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    STANDING_FIELD_NUMBER: _ClassVar[int]
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    bot: str
    owner: str
    standing: LeaderboardEntry
    matches: _containers.RepeatedCompositeFieldContainer[BotMatch]
    def __init__(self, bot: _Optional[str] = ..., owner: _Optional[str] = ..., standing: _Optional[_Union[LeaderboardEntry, _Mapping]] = ..., matches: _Optional[_Iterable[_Union[BotMatch, _Mapping]]] = ...) -> None: ...
