"""The event log of one match: every event once, with per-seat private variants.

All audiences share one sequence: event ``k`` is the same public fact for every
seat and spectator, except at *private* slots (a deal's own hand, one's own pass),
where each seat gets its own variant and spectators a redacted one. Keeping one
list instead of one per seat keeps a live match small in memory.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Final, cast

from heartsbot.proto import bot_pb2, game_pb2

from .wire import delimited_tag, length_delimited, varint

_monotonic: Final = time.monotonic  # bound once: a module attribute is looked up on every use
SPECTATOR: Final = -1
UPDATE_EVENTS_FIELD: Final = bot_pb2.MatchUpdate.DESCRIPTOR.fields_by_name["events"].number
_SEQUENCE_TAG: Final = varint(game_pb2.Event.DESCRIPTOR.fields_by_name["sequence"].number << 3)


@dataclass(slots=True)
class PrivateSlot:
    """One event with a variant per seat, a redacted one and a revealed one for spectators."""

    per_seat: list[game_pb2.Event]
    spectator: game_pb2.Event
    revealed: game_pb2.Event


@dataclass(slots=True)
class EncodedPrivateSlot:
    """A PrivateSlot kept as encoded Events until a spectator or a test needs messages."""

    per_seat: list[bytes]
    spectator: bytes
    revealed: bytes

    def parsed(self) -> PrivateSlot:
        parse = game_pb2.Event.FromString
        return PrivateSlot([parse(e) for e in self.per_seat], parse(self.spectator), parse(self.revealed))


def _event_bytes(sequence: int, kind_field: int, body: bytes) -> bytes:
    """An Event with ``sequence`` whose oneof field ``kind_field`` holds ``body``, encoded."""
    return b"".join((_SEQUENCE_TAG, varint(sequence), delimited_tag(kind_field), varint(len(body)), body))


class EventLog:
    def __init__(self) -> None:
        # bytes and EncodedPrivateSlot: parsed on demand
        self._slots: list[game_pb2.Event | PrivateSlot | bytes | EncodedPrivateSlot] = []
        self._times: list[float] = []
        # Each slot serialized once as a MatchUpdate.events entry: bytes, or one per seat.
        self._wire: list[bytes | list[bytes]] = []
        self._public_from = 0  # no private slot from this index on: the common case, joined as is

    def __len__(self) -> int:
        return len(self._slots)

    @property
    def last_sequence(self) -> int:
        return len(self._slots)

    def add(self, event: game_pb2.Event) -> None:
        """Append a public event (its ``sequence`` is set here)."""
        event.sequence = len(self._slots) + 1
        self._slots.append(event)
        self._times.append(_monotonic())
        self._wire.append(length_delimited(UPDATE_EVENTS_FIELD, event.SerializeToString()))

    def add_encoded(self, kind_field: int, body: bytes) -> None:
        """Append a public event given as its oneof field number and encoded body: the
        hot path (a card played) skips building the message; it is parsed only if a
        spectator asks."""
        encoded = _event_bytes(len(self._slots) + 1, kind_field, body)
        self._slots.append(encoded)
        self._times.append(_monotonic())
        self._wire.append(length_delimited(UPDATE_EVENTS_FIELD, encoded))

    def _message(self, index: int) -> game_pb2.Event | PrivateSlot:
        slot = self._slots[index]
        if isinstance(slot, bytes):
            slot = self._slots[index] = game_pb2.Event.FromString(slot)
        elif isinstance(slot, EncodedPrivateSlot):
            slot = self._slots[index] = slot.parsed()
        return slot

    def add_private(
        self, per_seat: list[game_pb2.Event], spectator: game_pb2.Event, revealed: game_pb2.Event
    ) -> None:
        sequence = len(self._slots) + 1
        for e in (*per_seat, spectator, revealed):
            e.sequence = sequence
        self._append_private(PrivateSlot(per_seat, spectator, revealed), [e.SerializeToString() for e in per_seat])

    def add_private_encoded(self, kind_field: int, per_seat: list[bytes], spectator: bytes, revealed: bytes) -> None:
        """:meth:`add_private` for events given as their oneof field number and encoded
        bodies (a deal's start, the passes: built from cached card fields, not messages)."""
        sequence = len(self._slots) + 1
        events = [_event_bytes(sequence, kind_field, body) for body in per_seat]
        self._append_private(EncodedPrivateSlot(
            events, _event_bytes(sequence, kind_field, spectator), _event_bytes(sequence, kind_field, revealed)), events)

    def _append_private(self, slot: PrivateSlot | EncodedPrivateSlot, per_seat: list[bytes]) -> None:
        """Append a private slot whose events for each seat are ``per_seat`` (encoded)."""
        self._slots.append(slot)
        self._times.append(_monotonic())
        self._wire.append([length_delimited(UPDATE_EVENTS_FIELD, e) for e in per_seat])
        self._public_from = len(self._wire)

    def for_seat(self, seat: int, after: int, until: int | None = None) -> list[game_pb2.Event]:
        """The events ``seat`` gets after sequence ``after`` (``SPECTATOR`` for spectators),
        up to sequence ``until`` (default: the last)."""
        out = []
        for index in range(after, len(self._slots) if until is None else min(until, len(self._slots))):
            slot = self._message(index)
            if isinstance(slot, PrivateSlot):
                out.append(slot.spectator if seat == SPECTATOR else slot.per_seat[seat])
            else:
                out.append(slot)
        return out

    def wire_for_seat(self, seat: int, after: int, until: int = -1) -> bytes:
        """The ``events`` entries of a MatchUpdate for ``seat`` after sequence ``after`` and
        up to ``until`` (-1: the last), encoded."""
        wire = self._wire[after:] if until < 0 else self._wire[after:until]
        if after >= self._public_from:
            return b"".join(cast("list[bytes]", wire))  # a deal's end: public from here on
        return b"".join([w if isinstance(w, bytes) else w[seat] for w in wire])

    def revealed_wire(self, field: int, ended: game_pb2.Event) -> bytes:
        """Every event with every hand shown, then ``ended`` (numbered here as the next
        event), as the entries of repeated Event field ``field``: what a spectator of the
        match may see once it is over, stored with it (stored_events.py)."""
        entries = []
        for slot in self._slots:
            if isinstance(slot, bytes):
                encoded = slot
            elif isinstance(slot, EncodedPrivateSlot):
                encoded = slot.revealed
            else:
                encoded = (slot.revealed if isinstance(slot, PrivateSlot) else slot).SerializeToString()
            entries.append(length_delimited(field, encoded))
        last = game_pb2.Event()
        last.CopyFrom(ended)
        last.sequence = len(self._slots) + 1
        entries.append(length_delimited(field, last.SerializeToString()))
        return b"".join(entries)

    def spectator_wire(self, field: int, after: int, until: int, revealed: bool = False) -> bytes:
        """The events a spectator gets after sequence ``after`` up to ``until`` (redacted, or
        with every hand shown if ``revealed``), as the entries of repeated Event field
        ``field``, encoded. Nothing is parsed or kept: :meth:`for_seat` keeps every event it
        reads as a message (~1 KiB each, where encoded they are ~40 bytes), and a spectator
        watching running matches from their start made each one keep them all for the rest of
        its life (an attack pass: 64 MB for a 900-deal match, ~1 MB a 16-deal one)."""
        entries = []
        for index in range(after, min(until, len(self._slots))):
            slot = self._slots[index]
            if isinstance(slot, bytes):
                encoded = slot
            elif isinstance(slot, EncodedPrivateSlot):
                encoded = slot.revealed if revealed else slot.spectator
            elif isinstance(slot, PrivateSlot):
                encoded = (slot.revealed if revealed else slot.spectator).SerializeToString()
            else:
                encoded = slot.SerializeToString()
            entries.append(length_delimited(field, encoded))
        return b"".join(entries)

    def revealed_after(self, after: int, until: int | None = None) -> list[tuple[float, game_pb2.Event]]:
        """Events with every hand shown, and when each happened (for delayed spectators),
        after sequence ``after`` and up to ``until`` (default: the last)."""
        out = []
        for index in range(after, len(self._slots) if until is None else min(until, len(self._slots))):
            slot = self._message(index)
            out.append((self._times[index], slot.revealed if isinstance(slot, PrivateSlot) else slot))
        return out
