"""The JSON endpoints the pages read (and the one they post to: taking a seat).

Every read goes through the spectator and ladder handlers (spectate.py) or the seats
registry (seats.py); nothing here reads a runner or the store by itself.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any, TypeVar

import grpc
from aiohttp import web

from hearts_engine import RulesetError, preset
from hearts_engine.presets import PRESETS

from ..memo import SharedValues, derived
from ..tournaments import LIST_FRESH_S
from . import present
from .front import parse_json
from .replays import Replay
from .seats import SeatError
from .spectate import Refused

if TYPE_CHECKING:
    from .front import WebContext

REPLAYS_KEPT = 8  # finished records replayed, newest used first: a bounded cache for every viewer
# Replay work (a record loaded and parsed, a deal's frames made) runs in one worker thread
# at a time: it is pure Python, and every thread doing it at once holds the interpreter
# away from the event loop, whose bots then wait (an attack pass, web/replays.py).
REPLAY_BUILDS_AT_ONCE = 1
# ... and takes at most this share of the interpreter: after each job its slot stays held,
# idle, three times as long as the job took. One at a time was not enough: a visitor
# cycling late deals of more long matches than REPLAYS_KEPT had a record parsed and played
# forward (~250 ms for 500 deals) back to back, and the bots' decisions still fell to ~5%.
REPLAY_CPU_SHARE = 0.25
RECENT_MATCHES = 30
# The lobby's match lists are built at most once per this, however many tabs poll them (each
# polls every 5 s). Before (an attack pass), each poll read the store twice: 150 open tabs
# made /api/matches take 5.9 s in the median, and every static file 1 s, as they shared the
# worker threads.
LOBBY_S = 1.0
BOT_MATCHES = 50
TOURNAMENTS_SHOWN = 5
# How often a bot page's rating history is replayed from scratch instead of going on from
# the last one: so that a result row edited by hand shows there too. Every 60 s, as the
# other views, it cost 1.47 s of CPU at 80,000 results (an audit): ~25 ms a second, with
# stalls of the event loop up to 41 ms; every 10 minutes, a quarter of a per cent of a core.
HISTORY_REPLAY_S = 600.0
HISTORY_JSON_KEPT = 64  # bots whose rating history is kept encoded (Api._history_json_of)
# Points of a bot page's rating chart at most (present.rating_history): a 640-pixel chart
# shows no more, where a point per match was 1.9 MB at 20,000 matches, on every refresh.
HISTORY_POINTS = 480
# The answers made once for every caller (the lobby's lists for LOBBY_S, the options, the
# leaderboard once per new result) or paced on their own (replays: REPLAY_CPU_SHARE):
# they spend only their caller's spectator rate, not everyone's (app.py).
SHARED_WORK = frozenset({"/api/options", "/api/matches", "/api/leaderboard", "/api/replay/{match_id}",
                         "/api/replay/{match_id}/deals/{deal}"})


def player_counts(name: str) -> list[int]:
    """The table sizes a preset allows (the engine decides, by building the ruleset)."""
    counts = []
    for n in range(3, 8):
        try:
            preset(name, players=n)
        except (RulesetError, TypeError, ValueError):
            continue
        counts.append(n)
    return counts


RULESET_OPTIONS = [{"name": name, "players": player_counts(name), "default_players": preset(name).players}
                   for name in sorted(PRESETS)]


T = TypeVar("T")


def _timed(job: Callable[..., T], *args: Any) -> tuple[T, float]:
    """``job(*args)`` and the CPU time this thread spent on it, in seconds."""
    start = time.thread_time()
    result = job(*args)
    return result, time.thread_time() - start


def rest_after(cost_s: float) -> float:
    """How long the replay slot stays idle after a job that took ``cost_s`` of CPU, so that
    replay work has at most REPLAY_CPU_SHARE of the time.

    >>> rest_after(0.25)
    0.75
    """
    return cost_s * (1 / REPLAY_CPU_SHARE - 1)


class Api:
    def __init__(self, front: WebContext) -> None:
        self.front = front
        self._replays: OrderedDict[str, Replay] = OrderedDict()
        self._replay_work = asyncio.Semaphore(REPLAY_BUILDS_AT_ONCE)
        self._lobby = SharedValues(max_age_s=LOBBY_S)
        self._tournaments = SharedValues(max_age_s=LIST_FRESH_S)
        self._boards: dict[Hashable, tuple[object, str]] = {}  # per ruleset (GetLeaderboard checked it)
        self._history_builds: dict[str, asyncio.Lock] = {}  # per ruleset (bounded: GetBotProfile checks it)
        self._history_json: OrderedDict[Hashable, tuple[object, str]] = OrderedDict()  # (ruleset, bot): _history_json_of

    def routes(self) -> list[web.RouteDef]:
        return [
            web.get("/api/options", self.options),
            web.get("/api/matches", self.matches),
            web.post("/api/play", self.take_seat),
            web.get("/api/seat/{match_id}", self.seat),
            web.post("/api/seat/{match_id}/leave", self.leave_seat),
            web.get("/api/replay/{match_id}", self.replay_index),
            web.get("/api/replay/{match_id}/deals/{deal}", self.replay_deal),
            web.get("/api/leaderboard", self.leaderboard),
            web.get("/api/bots/{bot}", self.bot),
            web.get("/api/tournaments", self.tournaments),
        ]

    async def options(self, request: web.Request) -> web.Response:
        return web.json_response({"rulesets": RULESET_OPTIONS, **self.front.seats.options()})

    async def matches(self, request: web.Request) -> web.Response:
        """The lobby's lists: the same for every caller, so one copy serves all of them."""
        peer = self.front.peer(request)

        async def build() -> bytes:
            spectating = self.front.spectating
            live = await spectating.matches(peer, "running", 200)
            recent = await spectating.matches(peer, "finished", RECENT_MATCHES)
            return json.dumps({"live": [present.summary(m) for m in live],
                               "recent": [present.summary(m) for m in recent]}).encode()

        # A match of this daemon starting or ending shows at once: a person back in the lobby
        # from the seat they just took finds it there (a cached list without it, made before,
        # hid its Resume link in a loaded browser test).
        marker = (int(time.monotonic() // LOBBY_S), tuple(self.front.arena.runners))
        body = await self._lobby.get("lobby", marker, build)
        return web.Response(body=body, content_type="application/json")

    async def take_seat(self, request: web.Request) -> web.Response:
        front = self.front
        front.check_post(request)
        try:
            body = parse_json(await request.text())
        except ValueError:
            raise SeatError(400, "expected a JSON body: {ruleset, players, opponents}") from None
        if not isinstance(body, dict):
            raise SeatError(400, "expected a JSON object: {ruleset, players, opponents}")
        seat, secret = await front.seats.take(front.peer(request), body.get("ruleset"), body.get("players"),
                                               body.get("opponents"))
        response = web.json_response({"match_id": seat.match_id, "seat": seat.slot.seat,
                                      "play_url": f"/play/{seat.match_id}", "watch_url": f"/watch/{seat.match_id}"})
        # Scoped to the seat's own paths (its JSON and its socket): a browser sends it with
        # nothing else, so the seats a person took never pile up in every request's header
        # (aiohttp refuses a Cookie header over 8 KiB: ~120 seats in a day made every page 400).
        response.set_cookie(front.cookie_name(seat.match_id), secret, httponly=True, samesite="Strict",
                            path=f"/api/seat/{seat.match_id}", max_age=24 * 3600, secure=front.over_https(request))
        return response

    async def seat(self, request: web.Request) -> web.Response:
        """Whether the caller holds the seat of this match (its cookie), before its page connects.
        A match that never was is said apart (code ``no_match``): its page then links to
        no Watch page, which would be a 404 too (a QA pass)."""
        match_id = request.match_info["match_id"]
        if self.front.seats.get(match_id) is None and not await self.front.match_known(match_id):
            raise SeatError(404, "there is no match with that id", code="no_match")
        seat = self.front.seats.owned(match_id, self.front.seat_cookie(request, match_id))
        return web.json_response({"match_id": match_id, "seat": seat.slot.seat, "live": seat.live})

    async def leave_seat(self, request: web.Request) -> web.Response:
        """The person leaves their table ("Leave table"): checked as every request that
        plays a seat (same site, a loopback or configured name, JSON: check_post) and by the
        seat's cookie; the match ends at once, cancelled, and is stored when this answers."""
        front = self.front
        front.check_post(request)
        match_id = request.match_info["match_id"]
        seat = front.seats.owned(match_id, front.seat_cookie(request, match_id))
        if not seat.live:
            raise SeatError(409, "the match is over already", code="over_already")
        await seat.leave()
        return web.json_response({"match_id": match_id, "left": True})

    async def _replay(self, request: web.Request) -> Replay:
        match_id = request.match_info["match_id"]
        replay = self._replays.get(match_id)
        if replay is None:
            record = await self.front.spectating.record(self.front.peer(request), match_id)
            replay = await self._replay_job(Replay, record)
            self._replays[match_id] = replay
            while len(self._replays) > REPLAYS_KEPT:
                self._replays.popitem(last=False)
        self._replays.move_to_end(match_id)
        return replay

    async def _replay_job(self, job: Callable[..., T], *args: Any) -> T:
        """``job(*args)`` in a worker thread, within the replay work's bounds (above)."""
        async with self._replay_work:
            result, cost_s = await asyncio.to_thread(_timed, job, *args)
            await asyncio.sleep(rest_after(cost_s))
        return result

    async def replay_index(self, request: web.Request) -> web.Response:
        """A replay's index, made with the replay (Replay.index_json), never per request."""
        return web.Response(body=(await self._replay(request)).index_json, content_type="application/json")

    async def replay_deal(self, request: web.Request) -> web.Response:
        replay = await self._replay(request)
        deal = request.match_info["deal"]
        try:
            if not (deal.isascii() and deal.isdigit() and len(deal) <= 6):  # int() takes "１", "1_0", " 1"
                raise ValueError(deal)
            number = int(deal)
            frames = replay.cached_frames(number)
            if frames is None:
                frames = await self._replay_job(replay.frames, number)
        except (ValueError, KeyError):
            raise SeatError(404, f"no deal {request.match_info['deal']} in match {replay.record.match_id}") from None
        return web.json_response({"deal": number, "frames": frames})

    async def leaderboard(self, request: web.Request) -> web.Response:
        """Its body built once per leaderboard (LadderService keeps one per standings) for
        every caller: before (an audit), each call converted every entry to JSON on the
        event loop, ~10 ms for 500 bots, and a few addresses took most of the loop."""
        ruleset = request.query.get("ruleset", "standard")
        board = await self.front.spectating.leaderboard(self.front.peer(request), ruleset)
        body = derived(self._boards, board.ruleset, board, lambda: json.dumps({
            "ruleset": board.ruleset, "entries": [present.standing(e) for e in board.entries],
            "rulesets": sorted(PRESETS)}))
        return web.Response(text=body, content_type="application/json")

    async def bot(self, request: web.Request) -> web.Response:
        ruleset = request.query.get("ruleset") or "standard"  # as GetBotProfile reads an empty one
        bot = request.match_info["bot"]
        try:
            profile = await self.front.spectating.bot(self.front.peer(request), bot, ruleset, BOT_MATCHES)
        except Refused as exc:
            if exc.code != grpc.StatusCode.NOT_FOUND or bot not in self.front.arena.settings.bot_tokens:
                raise
            # A configured bot off the ladder (tournament standings link to its page): what
            # there is of it, where its page showed "no ladder bot" as an error (a newcomer's pass).
            return web.json_response({"bot": bot, "owner": "", "ruleset": ruleset, "ladder": False,
                                      "standing": None, "matches": [], "history": []})
        points = (await self._history(ruleset)).get(profile.bot, [])
        head = json.dumps({
            "bot": profile.bot, "owner": profile.owner, "ruleset": ruleset or "standard", "ladder": True,
            "standing": present.standing(profile.standing) if profile.HasField("standing") else None,
            "matches": [present.bot_match(m) for m in profile.matches],
        })
        history = self._history_json_of(ruleset, profile.bot, points)
        return web.Response(text=f'{head[:-1]}, "history": {history}}}', content_type="application/json")

    def _history_json_of(self, ruleset: str, bot: str, points: list[tuple[int, int, float, float]]) -> str:
        """A bot's rating history as JSON, encoded once per list of points (a history
        copies only the lists of the bots it extends: ladder.RatingHistory), for the
        HISTORY_JSON_KEPT bots asked for last. It has a point per rated match of the bot and
        grows for as long as the ladder runs: encoded for every request on the event loop,
        ~80 ms at 20,000 matches for one call's worth of the spectator rate, one address
        asking for a long-lived bot's page held the loop most of every second (an attack pass).
        At most HISTORY_POINTS of them are sent (present.rating_history)."""
        key = (ruleset, bot)
        encoded = derived(self._history_json, key, points,
                          lambda: json.dumps(present.rating_history(points, HISTORY_POINTS)))
        self._history_json.move_to_end(key)
        while len(self._history_json) > HISTORY_JSON_KEPT:
            self._history_json.popitem(last=False)
        return encoded

    async def _history(self, ruleset: str) -> dict[str, list[tuple[int, int, float, float]]]:
        """Every bot's rating after each of its rated matches, replayed from the results the
        way the ladder rates them: once per new result, however many pages ask meanwhile
        (memo.py; ``ruleset`` is one GetBotProfile accepted, so the keys are bounded), and
        from the history built last, so a new result costs only its own replay. One build
        of a ruleset at a time: a page asking for a newer result while one runs (a replay
        from scratch takes ~0.5 s at 10,000 results) goes on from it, where it started
        another replay from scratch beside it."""
        ladder = self.front.arena.store.ladder
        views = self.front.arena.ladder_views
        key = ("history", ruleset)
        latest = await asyncio.to_thread(ladder.latest_seq, ruleset)
        async with self._history_builds.setdefault(ruleset, asyncio.Lock()):
            since = views.kept(key)
            if since is not None and time.monotonic() - since.rebuilt_at >= HISTORY_REPLAY_S:
                since = None  # from scratch now and then (HISTORY_REPLAY_S)
            history = await views.get(key, latest, lambda: ladder.extend_history(ruleset, since))
        return history.by_bot  # type: ignore[no-any-return]

    async def tournaments(self, request: web.Request) -> web.Response:
        """The newest tournaments with their standings (final once finished), as the
        TournamentService serves them: built once per change of the tournaments (or every
        LIST_FRESH_S) for every caller. Before (an audit), each call read the list and five
        tournaments with their tables, ~55 ms with 300 of them: one address calling 15 times
        a second left the bots no decision at all."""
        peer = self.front.peer(request)
        service = self.front.spectating.tournaments
        marker = service.tournaments.store.changes if service is not None else 0

        async def build() -> bytes:  # encoded here too: a tournament of 1,000 rounds lists 1,000 tables or more
            listed = (await self.front.spectating.tournament_list(peer))[:TOURNAMENTS_SHOWN]
            return json.dumps({"tournaments": [present.tournament(*await self.front.spectating.tournament(peer, t.id))
                                               for t in listed]}).encode()

        body = await self._tournaments.get("tournaments", marker, build)
        return web.Response(body=body, content_type="application/json")

