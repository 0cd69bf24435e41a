"""A finished match's events, streamed from the store in bounded windows.

When a match ends, what a spectator may then see of it (every event, every hand shown)
is stored with its result as the entries of ``WatchMatchResponse.events``
(``matches.events``). Watching it reads that column a window of ``WINDOW`` bytes at a
time and sends whole entries, so a watcher holds at most one window: watching a
finished match used to load and parse its whole record per call, and the parsed
records stayed alive in reference cycles through the abort's traceback (the daemon
collects garbage rarely: ``gc.set_threshold(50_000, ...)``), ~3.6 MB per call for a
300-deal match. What may be shown, and when, is decided by spectating.py first.

>>> body = spectator_pb2.WatchMatchResponse(events=[game_pb2.Event(sequence=s) for s in (1, 2)]).SerializeToString()
>>> complete_entries(body[:-1])  # the second entry is cut: only the first is whole
(1, 4)
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Protocol

from google.protobuf.message import DecodeError
from heartsbot.proto import game_pb2, spectator_pb2

WINDOW = 64 * 1024
_TAG = spectator_pb2.WatchMatchResponse.DESCRIPTOR.fields_by_name["events"].number << 3 | 2


class EventSource(Protocol):
    def events_window(self, match_id: str, offset: int, size: int) -> bytes: ...


class CorruptEvents(DecodeError):
    """A match's stored events do not parse (an edited or damaged row): DATA_LOSS to callers
    (db.damaged), as a record that does not parse is."""


class OutOfRange(ValueError):
    """``from_sequence`` is beyond the match's last event."""


def complete_entries(window: bytes, skip: int = 0) -> tuple[int, int]:
    """(entries, bytes) of the whole entries at the start of ``window``. An entry longer
    than the window gives (0, -needed bytes) so that the caller can read that much."""
    pos = count = 0
    size = len(window)
    while pos < size:
        if window[pos] != _TAG:
            raise CorruptEvents("stored events are corrupt")
        length, shift, at = 0, 0, pos + 1
        while True:
            if at >= size:
                return (count, pos) if count else (0, -(size + 16))
            byte = window[at]
            length |= (byte & 0x7F) << shift
            at += 1
            if byte < 0x80:
                break
            shift += 7
        end = at + length
        if end > size:
            return (count, pos) if count else (0, -end)
        pos = end
        count += 1
    return count, pos


async def stream(store: EventSource, match_id: str, size: int, from_sequence: int = 0,
                 skipped: Callable[[int], Awaitable[None]] | None = None) -> AsyncIterator[list[game_pb2.Event]]:
    """The stored events after ``from_sequence``, one window's whole entries at a time (each
    read in a worker thread). Raises :class:`OutOfRange` beyond the last event. ``skipped``,
    if given, is awaited with the count of each window's events read and passed over (those
    up to ``from_sequence``): they cost what sent ones do, but the caller sees none of them."""
    offset, skip = 0, from_sequence
    window_size = WINDOW
    while offset < size:
        window = await asyncio.to_thread(store.events_window, match_id, offset, window_size)
        if not window:
            break
        count, used = complete_entries(window)
        if count == 0:
            window_size = max(window_size, -used)  # one entry larger than a window: read it whole
            continue
        window_size = WINDOW
        start = passed = 0
        while skip and start < used:  # the first ``from_sequence`` events are not sent
            start += _entry_span(window, start)
            skip -= 1
            passed += 1
        offset += used
        if passed and skipped is not None:
            await skipped(passed)
        if start < used:
            yield list(spectator_pb2.WatchMatchResponse.FromString(window[start:used]).events)
    if skip:
        raise OutOfRange(f"from_sequence {from_sequence} is beyond the last event ({from_sequence - skip})")


def _entry_span(window: bytes, start: int) -> int:
    """The length in bytes of the entry at ``start`` (tag, length and payload)."""
    length, shift, at = 0, 0, start + 1
    while True:
        byte = window[at]
        length |= (byte & 0x7F) << shift
        at += 1
        if byte < 0x80:
            return at - start + length
        shift += 7
