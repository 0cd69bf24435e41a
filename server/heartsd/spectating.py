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
import bisect
import contextlib
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING

from heartsbot.proto import game_pb2, spectator_pb2

from . import rates, stored_events
from .arena import ArenaError
from .budgets import Budget

if TYPE_CHECKING:
    from .arena import Arena
    from .runner import MatchRunner

P = game_pb2
# At most this many events in one batch of a running match (what the store's windows of a
# finished one hold, about): sent from its start at once, a 900-deal match's 62,000 events
# held the event loop ~250 ms per watcher, and one address may start 20 a second (an attack pass).
EVENTS_PER_BATCH = 1024
BATCHES_PER_CALL = 16  # see paced: a batch spends at least this share of a call
WATCH_EVENTS_FIELD = spectator_pb2.WatchMatchResponse.DESCRIPTOR.fields_by_name["events"].number
STATUS_VALUES = {
    "running": P.MATCH_STATUS_RUNNING,
    "finished": P.MATCH_STATUS_FINISHED,
    "aborted": P.MATCH_STATUS_ABORTED,
    "cancelled": P.MATCH_STATUS_CANCELLED,
}


async def paced(batches: AsyncGenerator[list[game_pb2.Event], None], budget: Budget,
                peer: str) -> AsyncGenerator[list[game_pb2.Event], None]:
    """``batches`` (of :func:`watch`), each spending ``peer``'s rate of ``budget`` by its
    size, a call's worth per EVENTS_PER_BATCH events; when the rate is spent the next batch
    waits for it, the stream never cut half way. One call however much it sent, watching a
    long match from its start over and over (~140 ms of the event loop for 900 deals) kept
    the loop from the bots (an attack pass, on gRPC; the web's feeds are watches too).

    A batch spends at least 1 / BATCHES_PER_CALL of a call, however few its events: a live
    match's events go out a few at a time, at each of its moves, and each batch costs the
    daemon ~70 us of the loop (its wake-up, its bytes, its write), a call ~1 ms. Charged by
    its events alone, one address's 16 watchers of a busy match cut the bots' decisions to
    about a third for a fraction of a call (an attack pass); now a watcher paced by its rate
    gets fewer, larger batches. Closing it closes ``batches``."""
    try:
        async for batch in batches:
            yield batch
            await budget.pace(peer, max(len(batch) / EVENTS_PER_BATCH, 1 / BATCHES_PER_CALL))  # for the next
    finally:
        await batches.aclose()


def paced_skips(budget: Budget, peer: str) -> Callable[[int], Awaitable[None]]:
    """:func:`watch`'s ``skipped``: the stored events a watch of a finished match reads and
    passes over (up to its ``from_sequence``) spend ``peer``'s rate of ``budget`` as sent ones
    do (:func:`paced`), a call's worth per EVENTS_PER_BATCH, waiting for it. Charged nothing,
    a watch from beyond the end of a 1,000-deal match read and scanned its 69,000 events for
    one call, ~6 a second from one address, and took an honest bot from ~1,600 decisions a
    second to ~420 (an attack pass)."""
    async def pace(count: int) -> None:
        while count > 0:  # at most a call's worth at a time: a cost beyond the burst never comes
            part = min(count, EVENTS_PER_BATCH)
            await budget.pace(peer, part / EVENTS_PER_BATCH)
            count -= part

    return pace


def charged_by_size(budget: Budget, peer: str) -> Callable[[int], None]:
    """:func:`record`'s ``charge``: a record spends ``peer``'s rate of ``budget`` by its size
    too, one call's worth more per ``rates.RECORD_BYTES_PER_TOKEN`` of the match's stored
    events (a 1,000-deal record, 3.5 MB, took ~70 ms a call: an attack pass), refused
    (BudgetExhausted) before it is loaded."""
    def charge(size: int) -> None:
        budget.charge(peer, min(size / rates.RECORD_BYTES_PER_TOKEN, rates.LARGEST_CALL_COST - 1))

    return charge


async def watch(arena: Arena, match_id: str, from_sequence: int = 0, finished: bool = True,
                skipped: Callable[[int], Awaitable[None]] | None = None) -> AsyncIterator[list[game_pb2.Event]]:
    """The events of a running match after ``from_sequence``, in batches, until it ends;
    of a match that is over, its stored events at once (``finished=False``: refused
    instead, for a caller that shows a finished match another way, e.g. the web replay).

    Without a spectator delay, no event shows a card before it is played, and a plain
    match's events come as they happen. A table of a duplicate set holds the cards that
    its sibling tables hold: its events of a deal come once that deal is released (has
    ended at every table of the set still playing). With a delay
    (``Settings.spectator_delay_s``) every hand is shown: a deal's events, hands included,
    come ``delay`` after the deal's release, never while anyone still holds its cards.
    ``skipped``: see stored_events.stream (:func:`paced_skips`)."""
    runner = arena.runners.get(match_id)
    if runner is None:
        async for batch in _watch_stored(arena, match_id, int(from_sequence), finished, skipped):
            yield batch
        return
    delay = arena.settings.spectator_delay_s
    cursor = int(from_sequence)
    # Against what a spectator may see now, never the live count: a set table's or a
    # delayed match's events beyond it (how many, and so when a seat is void of a suit:
    # a hearts_broken mid-trick) are still cards a seat holds.
    visible, _ = visible_until(runner, delay, time.monotonic())
    if cursor > visible:
        raise ArenaError("out_of_range", f"from_sequence {cursor} is beyond the last event a spectator may see "
                         f"now ({visible})")
    wake = asyncio.Event()
    # Woken at each event only where each event may show more: a set's table or a delayed
    # match shows more only at a release (or its delay's timer). Woken at every event, such
    # a watcher found nothing new almost every time, for none of the rate (an attack pass).
    wakers = runner.watchers if delay <= 0 and not runner.releases.in_set else runner.table.release_watchers
    wakers.add(wake)
    try:
        while True:
            wake.clear()
            limit, wake_at = visible_until(runner, delay, time.monotonic())
            if limit > cursor:
                until = min(limit, cursor + EVENTS_PER_BATCH)
                batch = list(spectator_pb2.WatchMatchResponse.FromString(
                    runner.log_events.spectator_wire(WATCH_EVENTS_FIELD, cursor, until, revealed=delay > 0)).events)
                cursor = until
                yield batch
                if batch[-1].HasField("match_ended"):
                    return
                continue
            if runner.finished.is_set() and cursor >= runner.log_events.last_sequence:
                return
            if wake_at is None:
                await wake.wait()
            else:
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(wake.wait(), max(0.0, wake_at - time.monotonic()))
    finally:
        wakers.discard(wake)


async def _watch_stored(arena: Arena, match_id: str, from_sequence: int, finished: bool = True,
                        skipped: Callable[[int], Awaitable[None]] | None = None
                        ) -> AsyncIterator[list[game_pb2.Event]]:
    """A match that is over: its stored events, every hand shown (what its record shows
    too), once no table of its duplicate set is still played with its hands. Streamed
    from the store in small windows (stored_events.py), never parsing the record."""
    state = await asyncio.to_thread(arena.store.match_state, match_id)
    if state is None:
        raise ArenaError("not_found", f"no match {match_id}", code="no_match")
    status, set_id, size, record_size = state
    if status == "running":
        raise ArenaError("precondition", "the match is running on another daemon of this store: watch it there",
                         code="running_elsewhere")
    await _set_over(arena, set_id, "its events")  # first: a record is refused then too (an attack pass)
    if not finished:
        raise ArenaError("precondition", "the match is over: fetch it with GetMatchRecord", code="over")
    if size is None:  # it ended with its server: its record is its last checkpoint, if it reached one
        if record_size:
            raise ArenaError("precondition", "no events were stored for this match (it ended with its server); "
                             "fetch its record up to its last checkpoint with GetMatchRecord", code="no_events")
        raise ArenaError("precondition", "no events and no record were stored for this match (its server stopped "
                         "before the match's first checkpoint)", code="no_events")
    try:
        async for batch in stored_events.stream(arena.store, match_id, size, from_sequence, skipped):
            yield batch
    except stored_events.OutOfRange as exc:
        raise ArenaError("out_of_range", str(exc)) from None


async def _set_over(arena: Arena, set_id: str, what: str) -> None:
    """Refuse while a table of duplicate set ``set_id`` is still played with these hands."""
    if set_id and await asyncio.to_thread(arena.store.set_running, set_id):
        raise ArenaError("precondition", "another table of this match's duplicate set is still being played with "
                         f"the same hands; {what} are available when every table is over", code="set_running")


def visible_until(runner: MatchRunner, delay: float, now: float) -> tuple[int, float | None]:
    """The last event sequence a spectator may see at ``now``, and when that may grow by
    itself (``None``: only when the match moves on). See :func:`watch` and releases.py."""
    log = runner.log_events
    in_set = runner.releases.in_set
    if delay <= 0 and not in_set:
        return log.last_sequence, None
    starts = runner.deal_starts  # events before starts[0] (match_started) belong to no deal
    releases = runner.releases
    if delay > 0:
        if now < runner.started_at + delay:
            return 0, runner.started_at + delay
        shown = 0
        while shown < len(starts):
            released = releases.release_time(shown)
            if released is None:
                break
            if released + delay > now:
                return starts[shown] - 1, released + delay
            shown += 1
    else:
        shown = int(min(releases.released, len(starts)))
    return (starts[shown] - 1 if shown < len(starts) else log.last_sequence), None


def visible_deals(runner: MatchRunner, delay: float, now: float) -> int:
    """How many of a running match's ended deals a spectator may see the scores of at
    ``now``: those whose events :func:`visible_until` shows (a set's released deals; with
    a spectator delay, those released at least ``delay`` ago). Before, the match list
    showed a delayed match's live score and deals played."""
    limit, _ = visible_until(runner, delay, now)
    return min(len(runner.match.results), bisect.bisect_right(runner.deal_starts, limit))


async def record(arena: Arena, match_id: str,
                 charge: Callable[[int], None] | None = None) -> spectator_pb2.MatchRecord:
    """The full record of a match that is over (hands, every decision, the seed).

    Refused while the match runs on any daemon of the store (the stored status decides,
    not this daemon's runners: a checkpoint holds the seed), and while any table of its
    duplicate set does (its hands are theirs). ``charge``, if given, is told the size of
    the match's stored events before the record is loaded (it may refuse by raising); of
    the record itself where no events were stored (a match that ended with its server,
    whose record is its last checkpoint: before, charged nothing by size)."""
    if match_id in arena.runners:
        raise ArenaError("precondition", "the match is still running; its record is available when it is over",
                         code="running")
    state = await asyncio.to_thread(arena.store.match_state, match_id)  # the checks first: no record loaded
    if state is None:
        raise ArenaError("not_found", f"no match {match_id}", code="no_match")
    if state[0] == "running":
        raise ArenaError("precondition", "the match is still running (on another daemon of this store); "
                         "its record is available when it is over", code="running_elsewhere")
    await _set_over(arena, state[1], "its record and events")
    if charge is not None:
        charge(state[2] if state[2] is not None else state[3])
    stored = await asyncio.to_thread(arena.store.get, match_id)
    if stored is None or stored.record is None:
        reason = f"{stored.status}: {stored.reason}" if stored is not None else "gone"
        raise ArenaError("precondition", f"match {match_id} has no record ({reason})", code="no_record")
    return stored.record


async def summaries(arena: Arena, status: str | None, limit: int) -> list[spectator_pb2.MatchSummary]:
    """The newest ``limit`` matches (``status``: only those; ``None``: all); see :func:`page`."""
    return (await page(arena, status, limit))[0]


async def page(arena: Arena, status: str | None, limit: int, after: tuple[int, str] | None = None
               ) -> tuple[list[spectator_pb2.MatchSummary], tuple[int, str] | None]:
    """One page of the match list, newest first, after the match whose (created_ms, id) is
    ``after``; and the key to pass as ``after`` for the next page (None on the last).

    Every match has its row from its start (``running``), so the store alone gives one
    order to page through; this daemon's live matches show their live totals. A table of
    a duplicate set shows only its released deals' scores while it runs, and its result
    once every table of its set is over."""
    stored = await asyncio.to_thread(arena.store.list, status, limit + 1, after)
    running_sets = await asyncio.to_thread(arena.store.running_sets)  # one query, not one per table
    delay = arena.settings.spectator_delay_s
    now = time.monotonic()
    out = []
    for m in stored[:limit]:
        runner = arena.runners.get(m.id) if m.status == "running" else None
        if runner is not None:
            shown = runner.match.results[:visible_deals(runner, delay, now)]
            totals = [sum(r.score[s] for r in shown) for s in range(runner.rules.players)]
            out.append(spectator_pb2.MatchSummary(
                match_id=m.id, ruleset=m.ruleset, seats=runner.seat_infos, status=P.MATCH_STATUS_RUNNING,
                created_unix_ms=m.created_ms, deals_played=len(shown), totals=totals))
            continue
        # Another daemon's running match: its checkpointed score is not delayed (nor released).
        hidden = (bool(m.set_id) and (m.status == "running" or m.set_id in running_sets)
                  or delay > 0 and m.status == "running")
        out.append(spectator_pb2.MatchSummary(
            match_id=m.id, ruleset=m.ruleset,
            seats=[P.SeatInfo(seat=i, name=n, house=n.startswith("house:"), human=n.startswith("human:"))
                   for i, n in enumerate(m.seats)],
            status=STATUS_VALUES[m.status], created_unix_ms=m.created_ms,
            deals_played=0 if hidden else m.deals_played, totals=[] if hidden else m.totals,
            result=m.result if m.status != "running" and not hidden else None,
            withheld=hidden and m.status != "running"))
    last = (stored[limit - 1].created_ms, stored[limit - 1].id) if len(stored) > limit else None
    return out, last
