"""What a spectator may see of a match, and when: the one place that decides it.

Bots remember everything they are shown, bots of one owner share it, and spectators
may talk to bots (DESIGN.md, "Threat model"). So whatever reaches an audience that is
not a seat (the gRPC SpectatorService, the web front) goes through this module:

- :func:`watch`: a match's events, live, as a spectator may see them;
- :func:`record`: the full record of a match that is over;
- :func:`summaries`: the match list.

Each raises :class:`~heartsd.arena.ArenaError` with the status kind to report, so every
caller maps refusals the same way.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from heartsbot.proto import game_pb2, spectator_pb2

from .arena import ArenaError
from .events import SPECTATOR

if TYPE_CHECKING:
    from .arena import Arena

P = game_pb2
STATUS_VALUES = {
    "running": P.MATCH_STATUS_RUNNING,
    "finished": P.MATCH_STATUS_FINISHED,
    "aborted": P.MATCH_STATUS_ABORTED,
    "cancelled": P.MATCH_STATUS_CANCELLED,
}


async def watch(arena: Arena, match_id: str, from_sequence: int = 0) -> AsyncIterator[list[game_pb2.Event]]:
    """The events of a running match after ``from_sequence``, in batches, until it ends.

    Without a spectator delay no event shows a card before it is played; with one
    (``Settings.spectator_delay_s``) every hand is shown, that much later."""
    runner = arena.runners.get(match_id)
    if runner is None:
        stored = await asyncio.to_thread(arena.store.get, match_id)
        if stored is None:
            raise ArenaError("not_found", f"no match {match_id}")
        raise ArenaError("precondition", "the match is over: fetch it with GetMatchRecord")
    delay = arena.settings.spectator_delay_s
    cursor = int(from_sequence)
    if cursor > runner.log_events.last_sequence:
        raise ArenaError("out_of_range",
                         f"from_sequence {cursor} is beyond the last event ({runner.log_events.last_sequence})")
    wake = asyncio.Event()
    runner.watchers.add(wake)
    try:
        while True:
            wake.clear()
            if delay > 0:  # hands revealed, every event held back by the delay
                now = time.monotonic()
                due = runner.log_events.revealed_after(cursor)
                batch = [e for at, e in itertools.takewhile(lambda x: x[0] + delay <= now, due)]
                if not batch and due:
                    await asyncio.sleep(due[0][0] + delay - now)
                    continue
            else:
                batch = runner.log_events.for_seat(SPECTATOR, cursor)
            if batch:
                cursor += len(batch)
                yield batch
                if batch[-1].HasField("match_ended"):
                    return
                continue
            if runner.finished.is_set():
                return
            await wake.wait()
    finally:
        runner.watchers.discard(wake)


async def record(arena: Arena, match_id: str) -> spectator_pb2.MatchRecord:
    """The full record of a match that is over (hands, every decision, the seed)."""
    if match_id in arena.runners:
        raise ArenaError("precondition", "the match is still running; its record is available when it is over")
    stored = await asyncio.to_thread(arena.store.get, match_id)
    if stored is None:
        raise ArenaError("not_found", f"no match {match_id}")
    if stored.record is None:
        raise ArenaError("precondition", f"match {match_id} has no record ({stored.status}: {stored.reason})")
    return stored.record


async def summaries(arena: Arena, status: str | None, limit: int) -> list[spectator_pb2.MatchSummary]:
    """Live and stored matches, newest first: running ones from this daemon's runners,
    the others from the store (``status``: only those; ``None``: all)."""
    out = []
    if status in (None, "running"):
        for runner in sorted(arena.runners.values(), key=lambda r: -r.created):
            out.append(spectator_pb2.MatchSummary(
                match_id=runner.id, ruleset=runner.rules.name, seats=runner.seat_infos,
                status=P.MATCH_STATUS_RUNNING, created_unix_ms=int(runner.created * 1000),
                deals_played=len(runner.match.results), totals=runner.match.totals))
    if status != "running":
        stored = await asyncio.to_thread(arena.store.list, status, limit)
        for m in stored:
            if m.status == "running":
                continue
            out.append(spectator_pb2.MatchSummary(
                match_id=m.id, ruleset=m.ruleset,
                seats=[P.SeatInfo(seat=i, name=n, house=n.startswith("house:")) for i, n in enumerate(m.seats)],
                status=STATUS_VALUES[m.status], created_unix_ms=m.created_ms, deals_played=m.deals_played,
                totals=m.totals, result=m.record.result if m.record else None))
    return out[:limit]
