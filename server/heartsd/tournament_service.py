"""``hearts.v1.TournamentService``: convert, delegate to tournaments.py, convert back."""

from __future__ import annotations

import asyncio
import bisect
import json
import math
from collections.abc import Callable, Hashable, Mapping
from typing import NamedTuple

import grpc

from heartsbot.proto import game_pb2, tournament_pb2, tournament_pb2_grpc

from . import pages
from . import tournaments as tours
from .arena import ArenaError
from .memo import SharedValues, derived
from .rates import MAX_PAGE
from .services import authorize_admin, charged_by_size, grpc_errors
from .standings import Standings

STATUS = {
    "running": tournament_pb2.TOURNAMENT_STATUS_RUNNING,
    "paused": tournament_pb2.TOURNAMENT_STATUS_PAUSED,
    "finished": tournament_pb2.TOURNAMENT_STATUS_FINISHED,
    "cancelled": tournament_pb2.TOURNAMENT_STATUS_CANCELLED,
}


def _number(value: float | None) -> float:
    """A standings statistic on the wire, which has no null: 0.0 for a bot without deals
    (its ``deals`` says so); stored standings from before hold NaN there."""
    return 0.0 if value is None or math.isnan(value) else value


def standings_to_wire(standings: dict[str, object], json_text: str) -> tournament_pb2.TournamentStandings:
    out = tournament_pb2.TournamentStandings(test=str(standings["test"]), shuffles=int(standings["shuffles"]),  # type: ignore[call-overload]
                                             json=json_text)
    for b in standings["bots"]:  # type: ignore[attr-defined]
        out.rows.add(rank=b["rank"], bot=b["bot"], version=b["version"], points_per_deal=_number(b["points_per_deal"]),
                     ci_low=_number(b["ci_low"]), ci_high=_number(b["ci_high"]), p_best=b["p_best"], deals=b["deals"],
                     matches=b["matches"], tied_with=b["tied_with"], decisions=b["decisions"], timeouts=b["timeouts"],
                     illegal_defaults=b["illegal"], disconnect_defaults=b["disconnects"], auto_defaults=b["auto"])
    for h in standings["head_to_head"]:  # type: ignore[attr-defined]
        out.head_to_head.add(**h)
    return out


def tournament_to_wire(t: tours.TournamentRow, standings: tournament_pb2.TournamentStandings | None = None,
                       summary: bool = False,
                       waiting: Mapping[tuple[int, int], tours.Waiting] | None = None) -> tournament_pb2.Tournament:
    """``standings``: the tournament's, final or so far; ``waiting``: (round, table) -> why that
    table's match has not started (Tournaments.waiting)."""
    out = tournament_pb2.Tournament(
        id=t.id, name=t.name, status=STATUS[t.status], ruleset=t.ruleset, players=t.players, rounds=t.rounds,
        deals_per_match=t.deals, created_unix_ms=t.created_ms, reason=t.reason,
        seed=t.seed if t.seed_public else 0,  # with the key, the seed gives every shuffle
        shuffle_key=(t.shuffle_key or b"") if t.seed_public else b"")
    out.clock.CopyFrom(game_pb2.ClockSettings(**{k: v for k, v in t.clock.items() if k != tours.FROZEN}))
    for r in t.roster:
        out.roster.add(bot=r["bot"], owner=r["owner"], version=r["version"])
    out.matches_total, out.matches_finished = t.matches
    if summary:
        return out
    for row in t.tables:
        said = (waiting or {}).get((row.round, row.table)) if row.status in ("pending", "starting") else None
        why = said.text if said is not None else ""
        counts = row.status in ("running", "finished")  # a pending row's match was an attempt that did not count
        out.tables.add(round=row.round, table=row.table, bots=row.seats, status=row.status,
                       match_id=row.match_id if counts else "", attempts=row.attempts, waiting=why)
    if standings is not None:
        out.standings.CopyFrom(standings)
    return out


LIST_TOURNAMENTS = "ListTournaments"
DEFAULT_PAGE = 100  # ListTournamentsRequest.limit 0, as ListMatches
TOURNAMENTS_KEPT = 16  # tournaments kept read and built for GetTournament, those built last


class _Built(NamedTuple):
    """A tournament as read from the store, its answer without the standings, and the size
    of that answer (what a caller is charged by)."""

    row: tours.TournamentRow
    wire: tournament_pb2.Tournament
    size: int


class _Listing(NamedTuple):
    """Every tournament's summary, newest first, each one's place in that order, and the
    bytes of the summaries before each one (``ends[i]``: of the first ``i``), what a page
    is charged by."""

    tournaments: list[tournament_pb2.Tournament]
    keys: list[tuple[int, str]]
    ends: list[int]


def _order(created_unix_ms: int, tournament_id: str) -> tuple[int, str]:
    """A tournament's sort key in the list: newest first, then by id (the store's order)."""
    return -created_unix_ms, tournament_id


class TournamentService(tournament_pb2_grpc.TournamentServiceServicer):
    def __init__(self, tournaments: tours.Tournaments) -> None:
        self.tournaments = tournaments
        self.arena = tournaments.arena
        # Per tournament: the standings last converted, and their wire form (~3 ms to build
        # for 16 bots, on the loop, for every caller before).
        self._wire: dict[Hashable, tuple[object, tournament_pb2.TournamentStandings]] = {}
        # Per tournament: read with its tables and built once per change of the tournaments
        # (or LIST_FRESH_S, for another daemon's) for every caller, in a worker thread. Before
        # (an attack pass, 2026-12-07), every GetTournament read every table and built the
        # answer on the event loop: ~58 ms for 64 bots and 1,000 rounds (16,000 tables), for
        # one call of the spectator rate, and one address held the loop the whole second.
        self._built = SharedValues(max_age_s=tours.LIST_FRESH_S, keep=TOURNAMENTS_KEPT)

    async def tournament(self, tournament_id: str, charge: Callable[[int], None] | None = None,
                         into: tournament_pb2.Tournament | None = None) -> tournament_pb2.Tournament:
        """The tournament with its tables and standings (final, or so far), written into
        ``into`` if given. ``charge``, if given, is told the answer's size in bytes first (it
        may refuse by raising): it is copied and sent for each caller."""
        built = await self._read(tournament_id)
        if charge is not None:
            charge(built.size)
        t = built.row
        # The standings so far, shared by every caller (the web's too) and computed at most
        # so often in a worker process (live_standings.py says why); the final ones are stored.
        live = await self.tournaments.standings.live(t) if t.standings is None else None
        out = tournament_pb2.Tournament() if into is None else into
        out.CopyFrom(built.wire)
        out.standings.CopyFrom(self._standings_wire(t, live))
        return out

    async def _read(self, tournament_id: str) -> _Built:
        """The tournament read and built as of now (see ``_built``); NOT_FOUND if there is none."""
        directors = self.tournaments
        waiting = directors.waiting(tournament_id)  # why its tables wait: kept in memory, not the store

        def build() -> _Built:
            t = directors.store.get(tournament_id)
            if t is None:
                raise ArenaError("not_found", f"no tournament {tournament_id}")
            wire = tournament_to_wire(t, waiting=waiting)
            return _Built(t, wire, wire.ByteSize())

        marker = (directors.store.changes, tuple(sorted(waiting.items())))
        built: _Built = await self._built.get(tournament_id, marker, build)
        return built

    def _standings_wire(self, t: tours.TournamentRow, live: Standings | None) -> tournament_pb2.TournamentStandings:
        final = t.standings
        if final is not None and self.tournaments.standings.kept(t.id):
            self.tournaments.standings.finished(t)  # a caller that read it running put some back
        if final is not None:
            return derived(self._wire, t.id, "final",
                           lambda: standings_to_wire(final, json.dumps(final, separators=(",", ":"))))
        assert live is not None
        return derived(self._wire, t.id, live, lambda: standings_to_wire(live.to_dict(), live.to_json()))

    @grpc_errors
    async def CreateTournament(self, request: tournament_pb2.CreateTournamentRequest, context: grpc.aio.ServicerContext) -> tournament_pb2.CreateTournamentResponse:  # noqa: N802
        authorize_admin(self.arena, context)
        t = await self.tournaments.create(
            request.name, list(request.bots), request.ruleset, request.players, request.rounds,
            request.deals_per_match, request.seed if request.HasField("seed") else None, request.clock,
            request.shuffle_key)
        return tournament_pb2.CreateTournamentResponse(tournament=tournament_to_wire(t))

    @grpc_errors
    async def GetTournament(self, request: tournament_pb2.GetTournamentRequest, context: grpc.aio.ServicerContext) -> tournament_pb2.GetTournamentResponse:  # noqa: N802
        """The answer spends the caller's spectator rate by its size, as a match record does
        (spectating.charged_by_size): a tournament of 64 bots and 1,000 rounds is ~900 KB, copied
        and sent for each call, and it cost one call."""
        response = tournament_pb2.GetTournamentResponse()
        await self.tournament(request.id, charged_by_size(self.arena, context), response.tournament)
        return response

    @grpc_errors
    async def ListTournaments(self, request: tournament_pb2.ListTournamentsRequest, context: grpc.aio.ServicerContext) -> tournament_pb2.ListTournamentsResponse:  # noqa: N802
        limit = request.limit or DEFAULT_PAGE
        if not 0 < limit <= MAX_PAGE:
            raise ArenaError("invalid", f"limit (the page size) must be between 0 and {MAX_PAGE}; "
                                        "page through more with page_token")
        after = pages.decode(request.page_token, "", LIST_TOURNAMENTS) if request.page_token else None
        # The whole list is built once per change of this daemon's tournaments (or
        # LIST_FRESH_S, for another daemon's) and shared by every caller, the web's too
        # (Tournaments.views): before (an audit), each call read every tournament and built
        # its summary, ~50 ms with 300 tournaments of 64 tables, and one address calling 20
        # times a second left the bots no decision at all. A page is a slice of it: without
        # pages, a few thousand tournaments were more than a client takes in one message.
        listed = await self.listing()
        start = 0 if after is None else bisect.bisect_right(listed.keys, _order(*after))
        page = listed.tournaments[start:start + limit]
        # A page spends the caller's spectator rate by its size, as a match record does: each
        # summary holds its roster, and 1,000 of 64 bots (3.4 MB, ~30 ms a call to copy, send
        # and read) cost one call (an attack pass, 2026-12-07).
        charged_by_size(self.arena, context)(listed.ends[start + len(page)] - listed.ends[start])
        more = start + limit < len(listed.tournaments)
        token = pages.encode((page[-1].created_unix_ms, page[-1].id), "", LIST_TOURNAMENTS) if page and more else ""
        return tournament_pb2.ListTournamentsResponse(tournaments=page, next_page_token=token)

    async def listing(self) -> _Listing:
        """Every tournament's summary, newest first, as built last (see ListTournaments)."""
        listed: _Listing = await self.tournaments.views.get("list", self.tournaments.store.changes, self._list)
        return listed

    def _list(self) -> _Listing:
        """Every tournament's summary, newest first (in a worker thread: memo.SharedValues)."""
        wire = sorted((tournament_to_wire(t, summary=True) for t in self.tournaments.store.list()),
                      key=lambda t: _order(t.created_unix_ms, t.id))  # as the store's, in any collation
        ends = [0]
        for t in wire:
            ends.append(ends[-1] + t.ByteSize())
        return _Listing(wire, [_order(t.created_unix_ms, t.id) for t in wire], ends)

    async def _move(self, request: object, context: grpc.aio.ServicerContext, status: str) -> tournament_pb2.Tournament:
        authorize_admin(self.arena, context)
        await self.tournaments.set_status(request.id, status, request.reason)  # type: ignore[attr-defined]
        return await self.tournament(request.id)  # type: ignore[attr-defined]

    @grpc_errors
    async def PauseTournament(self, request: tournament_pb2.PauseTournamentRequest, context: grpc.aio.ServicerContext) -> tournament_pb2.PauseTournamentResponse:  # noqa: N802
        return tournament_pb2.PauseTournamentResponse(tournament=await self._move(request, context, "paused"))

    @grpc_errors
    async def ResumeTournament(self, request: tournament_pb2.ResumeTournamentRequest, context: grpc.aio.ServicerContext) -> tournament_pb2.ResumeTournamentResponse:  # noqa: N802
        return tournament_pb2.ResumeTournamentResponse(tournament=await self._move(request, context, "running"))

    @grpc_errors
    async def CancelTournament(self, request: tournament_pb2.CancelTournamentRequest, context: grpc.aio.ServicerContext) -> tournament_pb2.CancelTournamentResponse:  # noqa: N802
        return tournament_pb2.CancelTournamentResponse(tournament=await self._move(request, context, "cancelled"))


