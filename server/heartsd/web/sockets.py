"""The live feeds: a person's seat and a spectator's table, over WebSocket.

Each connection is sent snapshots of its table (tables.py), newest only: while one
is being written, further changes are folded into the table, and the next snapshot
shows them all. A slow reader therefore costs one snapshot in flight and the
transport's buffer, never a growing queue, and a reader that takes longer than
SEND_TIMEOUT_S for one snapshot is disconnected.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections import deque
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import structlog
from aiohttp import WSMessage, WSMsgType, web

from heartsbot.proto import game_pb2

from ..arena import ArenaError, utf8_prefix
from ..db import damaged
from ..rates import RequestRate
from . import inbound
from .errors import DAMAGED, DAMAGED_CODE, HTTP_OF_ARENA, INTERNAL, INTERNAL_CODE
from .front import parse_json
from .tables import TableTracker

if TYPE_CHECKING:
    from .front import WebContext

SEND_TIMEOUT_S = 10.0
HEARTBEAT_S = 20.0  # pings; a peer that stops answering them is dropped
MAX_MESSAGE_BYTES = 4096  # a page sends small answers only
WATCH_INTERVAL_S = 0.1  # at most ten snapshots a second to a spectator: people watch, not bots
PACE_S = 0.25  # a delayed table's released deal, played out: one card this far from the next

log = structlog.get_logger("heartsd.web")


async def send_latest(ws: web.WebSocketResponse, snapshot: Callable[[], dict[str, Any]],
                      changed: asyncio.Event, interval_s: float = 0.0) -> None:
    """Send ``snapshot()`` each time ``changed`` is set (coalescing), until the socket closes."""
    encode = SnapshotEncoder()
    while not ws.closed:
        await changed.wait()
        changed.clear()
        try:
            await asyncio.wait_for(ws.send_str(encode(snapshot())), SEND_TIMEOUT_S)
        except (asyncio.TimeoutError, ConnectionError, RuntimeError):
            await _close(ws, 1008, "too slow: snapshots were not read")
            return
        if interval_s:
            await asyncio.sleep(interval_s)


class SnapshotEncoder:
    """A socket's snapshots as compact JSON, the table's ``deal_scores`` (a row per deal
    scored, the one part that grows with the match) encoded again only when they change:
    the tracker appends to its list, or replaces it (tables.py). Encoded whole for every
    snapshot, a 1,000-deal match's late snapshots took ~2.4 ms each (87 KB), up to ten a
    second per watcher, and one address's 16 watchers of such a match held the event loop
    ~40% of the time (an attack pass, 2026-12-07).

    >>> encode = SnapshotEncoder()
    >>> scores = [{"deal": 0}]
    >>> encode({"v": 1, "deal_scores": scores})
    '{"v":1,"deal_scores":[{"deal":0}]}'
    >>> scores.append({"deal": 1}); encode({"v": 2, "deal_scores": scores})
    '{"v":2,"deal_scores":[{"deal":0},{"deal":1}]}'
    """

    def __init__(self) -> None:
        self._scores: list[Any] | None = None  # the list last encoded (held: its id is never another's)
        self._length = 0
        self._encoded = "[]"

    def __call__(self, snapshot: dict[str, Any]) -> str:
        rest = dict(snapshot)
        scores = rest.pop("deal_scores", None)
        if scores is None or not rest:  # nothing that grows (a refusal, a test's own)
            return json.dumps(snapshot, separators=(",", ":"))
        if scores is not self._scores or len(scores) != self._length:
            self._scores, self._length = scores, len(scores)
            self._encoded = json.dumps(scores, separators=(",", ":"))
        return f'{json.dumps(rest, separators=(",", ":"))[:-1]},"deal_scores":{self._encoded}}}'


# A page whose seat another tab or window took: the page says so and does not reconnect
# by itself (two tabs would take the seat from each other for ever). 4000-4999 are the
# application's own close codes (RFC 6455).
REPLACED = 4000
ELSEWHERE = "this seat is open in another tab or window"
MAX_CLOSE_REASON_BYTES = 123  # a control frame's 125 bytes of payload, less the close code's 2


async def _close(ws: web.WebSocketResponse, code: int, message: str) -> None:
    """Close with ``message`` as the reason: at most 123 bytes of UTF-8 (RFC 6455), cut
    between characters. Cut inside one (a refusal quoting the caller's id), the reason was
    not text, and the client had to fail the connection (1007) instead of closing it."""
    reason = utf8_prefix(message, MAX_CLOSE_REASON_BYTES).encode()
    with contextlib.suppress(Exception):
        await asyncio.wait_for(ws.close(code=code, message=reason), 2.0)


def _socket() -> web.WebSocketResponse:
    return web.WebSocketResponse(heartbeat=HEARTBEAT_S, max_msg_size=MAX_MESSAGE_BYTES, compress=False)


async def _open(ws: web.WebSocketResponse, request: web.Request, front: WebContext, peer: str,
                budget: RequestRate) -> None:
    """Open ``ws``, with what its client sends metered by ``budget`` (the address's, shared
    by its sockets) from before it opens: past it, the connection is cut before aiohttp
    parses a byte more; a frame without a mask fails it with 1002; a handshake that brought
    frames with it is refused (inbound.py says why). Each is logged once a minute per address at most: an address reconnecting in a
    loop was cut ~80 times a second, each a warning line."""

    def say(event: str) -> None:
        if front.socket_cut_logs.allow(peer):
            log.warning(event, peer=peer, path=request.path, burst_bytes=budget.burst, bytes_per_s=budget.rate)

    inbound.meter(request.transport, budget, peer, lambda reason: say(f"{reason} (logged once a minute per address)"))
    if inbound.sent_early(request):
        say("a web socket's client sent frames before the handshake's answer; refused (logged once a minute "
            "per address)")
        raise inbound.SentEarly(inbound.SentEarly.MESSAGE)
    try:
        await ws.prepare(request)
    except web.HTTPException:  # aiohttp refused the handshake: the connection is HTTP again
        inbound.unmeter(request.transport)
        raise


async def play(request: web.Request, front: WebContext, match_id: str, peer: str) -> web.WebSocketResponse:
    """The Playboard's socket: the seat's snapshots out, the person's answers in."""
    seat = front.seats.owned(match_id, front.seat_cookie(request, match_id))
    ws = _socket()
    with front.seat_budget.hold(peer):  # a slot of the seat budget (not the spectators') for its life
        await _open(ws, request, front, peer, front.seat_bytes)
        loop = asyncio.get_running_loop()
        tasks: dict[str, asyncio.Task[None]] = {}

        def replaced() -> None:
            """Another tab took the seat: this page stops showing it at once (its sender
            would otherwise take the new page's first wake-up) and is told why."""
            if "sender" in tasks:
                tasks["sender"].cancel()
            tasks["close"] = loop.create_task(_close(ws, REPLACED, ELSEWHERE))

        session = seat.attach(on_replaced=replaced)
        sender = tasks["sender"] = loop.create_task(send_latest(ws, seat.snapshot, seat.changed))
        try:
            # Like a bot's stream: each message is an answer checked by the runner, and one
            # that moves nothing on (rejected, stale, not an answer) spends the session's
            # budget of wasted messages (BotSession.wasted), refilled by each request sent.
            while (message := await _next_message(ws)) is not None:
                if message.type is not WSMsgType.TEXT:
                    break
                try:
                    data = parse_json(message.data)
                except ValueError:
                    data = None
                if not seat.answer(session, data):
                    if seat.session is not session:  # another tab took the seat meanwhile
                        await _close(ws, REPLACED, ELSEWHERE)
                    else:
                        await _close(ws, 1008, "too many rejected answers; reload the page")
                    break
        finally:
            sender.cancel()
            seat.detach(session)
    return ws


async def watch(request: web.Request, front: WebContext, match_id: str, peer: str) -> web.WebSocketResponse:
    """A spectator's socket: the live table, made only of spectator events (what gRPC
    WatchMatch sends: heartsd.spectating). A refusal (unknown match, over) is sent as an error."""
    ws = _socket()
    with front.budget.hold(peer):
        await _open(ws, request, front, peer, front.watch_bytes)
        tracker = TableTracker(-1)
        changed = asyncio.Event()
        loop = asyncio.get_running_loop()
        delay_s = front.settings.spectator_delay_s
        # A duplicate set's table shows each deal once every table of the set has ended it:
        # released whole, like a delayed table's, and played out the same way.
        runner = front.arena.runners.get(match_id)
        set_table = runner is not None and bool(runner.set_id)
        feed = loop.create_task(_feed(front, peer, match_id, tracker, changed, ws, delay_s > 0 or set_table))
        sender = loop.create_task(send_latest(
            ws, lambda: {**tracker.snapshot(), "delay_s": delay_s, "set_table": set_table}, changed, WATCH_INTERVAL_S))
        try:
            # Spectators have nothing to say: the page sends nothing, so anything sent
            # ends the socket (a client streaming frames at it costs one frame).
            if (message := await _next_message(ws)) is not None and message.type in (WSMsgType.TEXT,
                                                                                     WSMsgType.BINARY):
                await _close(ws, 1008, "spectators send nothing on this socket")
        finally:
            feed.cancel()
            sender.cancel()
            await asyncio.gather(feed, sender, return_exceptions=True)
    return ws


async def _refuse(ws: web.WebSocketResponse, reason: str, status: int, code: int, refusal: str = "") -> None:
    """Tell the page why its feed ends (``{"error", "status"}``, and ``"code"``, ``refusal``,
    for a refusal of a fixed set, as the JSON API says it: errors.py), then close."""
    with contextlib.suppress(Exception):
        await ws.send_str(json.dumps({"error": reason, "status": status, **({"code": refusal} if refusal else {})}))
    await _close(ws, code, reason)


async def _next_message(ws: web.WebSocketResponse) -> WSMessage | None:
    """``ws``'s next message, as ``async for`` on it gives them; None once it closes or its
    client leaves, also while aiohttp answers its ping, which raised out of the handler as
    a logged traceback (an attack pass)."""
    try:
        message = await ws.receive()
    except ConnectionError:
        return None
    return None if message.type in (WSMsgType.CLOSE, WSMsgType.CLOSING, WSMsgType.CLOSED) else message


class PlayedOut:
    """Events that come together (a delayed table's deal, released whole once it has ended
    and the delay has passed) applied one card at a time, PACE_S apart, so that the page
    shows the deal played. Before (a browser pass), a delayed table showed each deal at its
    last trick only. Never more than a deal behind: once the next deal is in, the rest of
    the one played out is shown at once."""

    def __init__(self, tracker: TableTracker, changed: asyncio.Event) -> None:
        self.tracker = tracker
        self.changed = changed
        self._queue: deque[game_pb2.Event] = deque()
        self._deals_queued = 0
        self._arrived = asyncio.Event()
        self._task = asyncio.get_running_loop().create_task(self._play())

    def add(self, events: Iterable[game_pb2.Event]) -> None:
        for event in events:
            self._queue.append(event)
            self._deals_queued += event.HasField("deal_started")
        self._arrived.set()

    def flush(self) -> None:
        """Everything still queued, at once (the match is over)."""
        self._task.cancel()
        while self._queue:
            self._apply(self._queue.popleft())

    def close(self) -> None:
        self._task.cancel()

    def _apply(self, event: game_pb2.Event) -> None:
        self._deals_queued -= event.HasField("deal_started")
        self.tracker.apply_events((event,))
        self.changed.set()

    async def _play(self) -> None:
        while True:
            await self._arrived.wait()
            self._arrived.clear()
            while self._queue:
                event = self._queue.popleft()
                self._apply(event)
                if event.HasField("card_played") and self._queue and not self._deals_queued:
                    await asyncio.sleep(PACE_S)


async def _feed(front: WebContext, peer: str, match_id: str, tracker: TableTracker, changed: asyncio.Event,
                ws: web.WebSocketResponse, delayed: bool = False) -> None:
    events = front.spectating.events(peer, match_id)
    played_out = PlayedOut(tracker, changed) if delayed else None
    try:
        async for batch in events:
            if played_out is not None:
                played_out.add(batch)
                continue
            tracker.apply_events(batch)
            changed.set()
    except ArenaError as exc:
        await _refuse(ws, exc.message, HTTP_OF_ARENA.get(exc.kind, 500), 1000, exc.code)
        return
    except Exception as exc:  # a defect or a damaged store: said and closed, never a socket left open holding its slot
        if (why := damaged(exc)) is not None:
            log.error("the store is damaged", match_id=match_id, error=why)
            await _refuse(ws, DAMAGED, 500, 1011, DAMAGED_CODE)
        else:
            log.exception("a spectator's feed failed", match_id=match_id)
            await _refuse(ws, INTERNAL, 500, 1011, INTERNAL_CODE)
        return
    finally:
        await events.aclose()
        if played_out is not None:
            played_out.close()
    if played_out is not None:
        played_out.flush()
    # The match ended: the last snapshot goes out, then the socket closes.
    await asyncio.sleep(WATCH_INTERVAL_S * 2)
    while changed.is_set():
        await asyncio.sleep(WATCH_INTERVAL_S)
    await _close(ws, 1000, "the match is over")
