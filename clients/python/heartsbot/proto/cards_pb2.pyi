from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Suit(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SUIT_UNSPECIFIED: _ClassVar[Suit]
    SUIT_CLUBS: _ClassVar[Suit]
    SUIT_DIAMONDS: _ClassVar[Suit]
    SUIT_HEARTS: _ClassVar[Suit]
    SUIT_SPADES: _ClassVar[Suit]

class Rank(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RANK_UNSPECIFIED: _ClassVar[Rank]
    RANK_TWO: _ClassVar[Rank]
    RANK_THREE: _ClassVar[Rank]
    RANK_FOUR: _ClassVar[Rank]
    RANK_FIVE: _ClassVar[Rank]
    RANK_SIX: _ClassVar[Rank]
    RANK_SEVEN: _ClassVar[Rank]
    RANK_EIGHT: _ClassVar[Rank]
    RANK_NINE: _ClassVar[Rank]
    RANK_TEN: _ClassVar[Rank]
    RANK_JACK: _ClassVar[Rank]
    RANK_QUEEN: _ClassVar[Rank]
    RANK_KING: _ClassVar[Rank]
    RANK_ACE: _ClassVar[Rank]
SUIT_UNSPECIFIED: Suit
SUIT_CLUBS: Suit
SUIT_DIAMONDS: Suit
SUIT_HEARTS: Suit
SUIT_SPADES: Suit
RANK_UNSPECIFIED: Rank
RANK_TWO: Rank
RANK_THREE: Rank
RANK_FOUR: Rank
RANK_FIVE: Rank
RANK_SIX: Rank
RANK_SEVEN: Rank
RANK_EIGHT: Rank
RANK_NINE: Rank
RANK_TEN: Rank
RANK_JACK: Rank
RANK_QUEEN: Rank
RANK_KING: Rank
RANK_ACE: Rank

class Card(_message.Message):
    __slots__ = ("suit", "rank")
    SUIT_FIELD_NUMBER: _ClassVar[int]
    RANK_FIELD_NUMBER: _ClassVar[int]
    suit: Suit
    rank: Rank
    def __init__(self, suit: _Optional[_Union[Suit, str]] = ..., rank: _Optional[_Union[Rank, str]] = ...) -> None: ...
