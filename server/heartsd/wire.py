"""Protobuf wire-format assembly for the hot path: messages from pre-serialized parts.

A decision request repeats a lot that does not change between requests (the ruleset,
the completed tricks, earlier deal scores, each card). Serializing those once and
concatenating bytes is several times cheaper than building and copying nested
message objects, and the result is an ordinary ``PlayResponse`` on the wire: the
protobuf encoding of a message is the concatenation of its fields, in any order.

>>> from heartsbot.proto import bot_pb2, cards_pb2, game_pb2
>>> cards_pb2.Card.FromString(CARD_BYTES[49]) == cards_pb2.Card(suit=4, rank=12)
True
>>> mask_card_fields(1, 1 << 49 | 1) == card_fields(1, [0, 49])
True
>>> length_delimited(3, b"abc")
b'\\x1a\\x03abc'
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from google.protobuf.message import DecodeError
from hearts_engine.cards import CARDS_BY_SUIT_PATTERN
from heartsbot.proto import bot_pb2, cards_pb2, game_pb2


def _encode_varint(value: int) -> bytes:
    if value < 0:
        value += 1 << 64
    out = bytearray()
    while True:
        low = value & 0x7F
        value >>= 7
        if value:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


_SMALL: Final = tuple(_encode_varint(v) for v in range(1 << 14))  # every one- and two-byte varint


_MINUS_ONE: Final = _encode_varint(-1)  # "none" in many int32 fields (no leader, no winner yet)


def varint(value: int) -> bytes:
    """Base-128 varint; negative numbers as 64-bit two's complement (how int32 is sent)."""
    if 0 <= value < 16384:
        return _SMALL[value]
    return _MINUS_ONE if value == -1 else _encode_varint(value)


def length_delimited(field: int, payload: bytes) -> bytes:
    """A bytes, string or sub-message field."""
    size = len(payload)
    if field < 32 and size < 16384:  # nearly always: no call to varint()
        return _TAGS[field] + _SMALL[size] + payload
    return delimited_tag(field) + varint(size) + payload


_TAGS: Final = tuple(_encode_varint(f << 3 | 2) for f in range(32))


def delimited_tag(field: int) -> bytes:
    """The key of a bytes, string or sub-message field (its length and bytes follow)."""
    return _TAGS[field] if field < 32 else varint(field << 3 | 2)


def tag(field: int) -> bytes:
    """The key of a varint field."""
    return varint(field << 3)


def int_field(key: bytes, value: int) -> bytes:
    """A varint field (``key`` from :func:`tag`) as proto3 writes it: nothing when zero."""
    if 0 < value < 16384:
        return key + _SMALL[value]
    return key + varint(value) if value else b""


def packed_ints(field: int, values: Iterable[int]) -> bytes:
    """A packed repeated integer field (nothing when empty); negatives as 64-bit."""
    payload = b"".join([varint(v) for v in values])
    return length_delimited(field, payload) if payload else b""

CARD_BYTES: Final[tuple[bytes, ...]] = tuple(
    cards_pb2.Card(suit=c // 13 + 1, rank=c % 13 + 2).SerializeToString() for c in range(52)
)
_CARD_FIELDS: Final[dict[int, tuple[bytes, ...]]] = {}


def card_fields(field: int, cards: Iterable[int]) -> bytes:
    """A repeated ``Card`` field holding ``cards`` (engine ids)."""
    table = _CARD_FIELDS.get(field)
    if table is None:
        table = _CARD_FIELDS[field] = tuple(length_delimited(field, b) for b in CARD_BYTES)
    return b"".join([table[c] for c in cards])


def _rank_group_fields(field: int) -> tuple[tuple[bytes, ...], ...]:
    """For each suit, the encoded card fields of every pattern of its ranks 2-8 (7 bits,
    128 patterns) and of its ranks 9-A (6 bits, 64 patterns): 768 entries per field."""
    groups = []
    for suit in range(4):
        patterns = CARDS_BY_SUIT_PATTERN[suit]
        groups.append(tuple(card_fields(field, patterns[p]) for p in range(128)))
        groups.append(tuple(card_fields(field, patterns[p << 7]) for p in range(64)))
    return tuple(groups)


_MASK_ENCODERS: Final[dict[int, MaskEncoder]] = {}


class MaskEncoder:
    """``card_fields(field, cards_of(mask))`` for a hand mask (card ``13 * suit + rank``)
    from eight lookups in small tables: for each suit, its ranks 2-8 (128 patterns) and
    9-A (64). A hand is encoded for every request: 768 entries stay in the CPU cache
    between requests, where a table of every 13-bit suit pattern (8,192 per suit) measured
    slower in the loaded server. A class, not a closure: compiled, ``encode`` is a native
    call with a native int."""

    def __init__(self, field: int) -> None:
        (self.c_lo, self.c_hi, self.d_lo, self.d_hi,
         self.h_lo, self.h_hi, self.s_lo, self.s_hi) = _rank_group_fields(field)

    def encode(self, mask: int) -> bytes:
        return b"".join((
            self.c_lo[mask & 127], self.c_hi[mask >> 7 & 63], self.d_lo[mask >> 13 & 127], self.d_hi[mask >> 20 & 63],
            self.h_lo[mask >> 26 & 127], self.h_hi[mask >> 33 & 63], self.s_lo[mask >> 39 & 127], self.s_hi[mask >> 46 & 63],
        ))


def mask_encoder(field: int) -> MaskEncoder:
    """The :class:`MaskEncoder` of ``field``, made once and kept."""
    made = _MASK_ENCODERS.get(field)
    if made is None:
        made = _MASK_ENCODERS[field] = MaskEncoder(field)
    return made


def mask_card_fields(field: int, mask: int) -> bytes:
    """``card_fields(field, cards_of(mask))``; see :func:`mask_encoder` (one per field)."""
    return mask_encoder(field).encode(mask)


_PLAYED: Final[dict[int, tuple[bytes, ...]]] = {}
_PLAYED_SEAT: Final = game_pb2.PlayedCard.DESCRIPTOR.fields_by_name["seat"].number
_PLAYED_CARD: Final = game_pb2.PlayedCard.DESCRIPTOR.fields_by_name["card"].number


def played_card_field(field: int, seat: int, card: int) -> bytes:
    """A ``PlayedCard{seat, card}`` field (seat 0..7)."""
    table = _PLAYED.get(field)
    if table is None:
        table = _PLAYED[field] = tuple(
            length_delimited(field, varint(_PLAYED_SEAT << 3) + varint(s) + length_delimited(_PLAYED_CARD, CARD_BYTES[c]))
            for s in range(8)
            for c in range(52)
        )
    return table[seat * 52 + card]


_ANSWER_KEY: Final = bot_pb2.PlayRequest.DESCRIPTOR.fields_by_name["answer"].number << 3 | 2
_MATCH_ID_KEY: Final = bot_pb2.Answer.DESCRIPTOR.fields_by_name["match_id"].number << 3 | 2
_REQUEST_ID_KEY: Final = bot_pb2.Answer.DESCRIPTOR.fields_by_name["request_id"].number << 3 | 2
_PLAY_KEY: Final = bot_pb2.Answer.DESCRIPTOR.fields_by_name["play"].number << 3 | 2
_SUIT_KEY: Final = cards_pb2.Card.DESCRIPTOR.fields_by_name["suit"].number << 3
_RANK_KEY: Final = cards_pb2.Card.DESCRIPTOR.fields_by_name["rank"].number << 3


class PlayAnswer:
    """A ``PlayRequest`` that is an ``Answer`` with a ``play``, read straight from its bytes
    (:func:`play_answer`): the message nearly every decision brings. It answers ``WhichOneof``
    as the message would, and :meth:`to_wire` is that message."""

    __slots__ = ("match_id", "request_id", "card")

    def __init__(self, match_id: str, request_id: str, card: int) -> None:
        self.match_id = match_id
        self.request_id = request_id
        self.card = card  # an engine card: 13 * suit + rank, both from 0

    def WhichOneof(self, group: str) -> str:  # noqa: N802 (the protobuf method it stands in for)
        return "answer"

    def to_wire(self) -> bot_pb2.Answer:
        answer = bot_pb2.Answer(match_id=self.match_id, request_id=self.request_id)
        answer.play.suit, answer.play.rank = self.card // 13 + 1, self.card % 13 + 2
        return answer


def play_answer(data: bytes) -> PlayAnswer | None:
    """``data`` as a :class:`PlayAnswer` if it is exactly a PlayRequest holding an Answer with
    a match id, a request id and a play of a real card, encoded as every protobuf library
    writes one (fields in order, one-byte lengths, nothing else); ``None`` for any other
    bytes, which the caller parses with protobuf. For the bytes it reads, the result is what
    protobuf reads: strings are checked UTF-8 as protobuf checks them (else ``None``).

    >>> raw = bot_pb2.PlayRequest(answer=bot_pb2.Answer(
    ...     match_id="m-1", request_id="r-1", play=cards_pb2.Card(suit=4, rank=12))).SerializeToString()
    >>> found = play_answer(raw)
    >>> found.match_id, found.request_id, found.card, found.to_wire() == bot_pb2.PlayRequest.FromString(raw).answer
    ('m-1', 'r-1', 49, True)
    >>> play_answer(raw + b"\\x00") is None, play_answer(raw[:-1]) is None
    (True, True)
    """
    size = len(data)
    if size < 14 or size > 129 or data[0] != _ANSWER_KEY or data[1] != size - 2 or data[2] != _MATCH_ID_KEY:
        return None
    match_end = 4 + data[3]  # a length byte of 128 or more would be a longer varint: never fits below
    if match_end + 2 > size or data[match_end] != _REQUEST_ID_KEY:
        return None
    request_end = match_end + 2 + data[match_end + 1]
    if request_end + 6 != size or data[3] == 0 or data[match_end + 1] == 0:
        return None
    if (data[request_end] != _PLAY_KEY or data[request_end + 1] != 4 or data[request_end + 2] != _SUIT_KEY
            or data[request_end + 4] != _RANK_KEY):
        return None
    suit, rank = data[request_end + 3], data[request_end + 5]
    if not (1 <= suit <= 4 and 2 <= rank <= 14):
        return None
    try:
        return PlayAnswer(data[4:match_end].decode(), data[match_end + 2:request_end].decode(), (suit - 1) * 13 + rank - 2)
    except UnicodeDecodeError:
        return None


class Unreadable:
    """What the bot stream's request deserializer gives for bytes that are not a
    ``PlayRequest``: the handler ends the stream with INVALID_ARGUMENT and a message, where
    a raising deserializer would make grpc log a traceback and end it with UNKNOWN. It
    answers ``WhichOneof`` like a message, so the stream reader needs no extra check."""

    __slots__ = ()
    MESSAGE: Final = "a message is not a valid hearts.v1.PlayRequest (protobuf decoding failed)"

    def WhichOneof(self, group: str) -> str:  # noqa: N802 (the protobuf method it stands in for)
        return "unreadable"


UNREADABLE: Final = Unreadable()


def read_play_request(data: bytes) -> bot_pb2.PlayRequest | PlayAnswer | Unreadable:
    """The bot stream's request deserializer (server.add_bot_service): a play answer, as
    nearly every message is, read straight from its bytes (:func:`play_answer`), else the
    message, or :data:`UNREADABLE`. Here, compiled, as grpc calls it for every message."""
    answer = play_answer(data)
    if answer is not None:
        return answer
    try:
        return bot_pb2.PlayRequest.FromString(data)
    except DecodeError:
        return UNREADABLE
