"""What the web front may show of matches: exactly what the gRPC services show.

Hidden information is decided in one place, :mod:`heartsd.spectating` ("what a spectator
may see of a match, and when"): live tables, replays and match lists come from its
functions, the same ones WatchMatch, GetMatchRecord and ListMatches delegate to, so a
change there (a delay, a store shared by several daemons) reaches the browser with no
change here. The leaderboard, bot pages and tournament standings run the
``LadderService`` and ``TournamentService`` handlers themselves, with a small stand-in
for the gRPC context, so they show what gRPC does.

Refusals raise ``ArenaError`` (spectating) or :class:`Refused` (a handler's
``context.abort``); the web front's one error mapper (app.py) turns either into an
HTTP status, with the refusal's code where it has one (ArenaError.code, kept by Refused).
"""

from __future__ import annotations

import sys
from collections.abc import AsyncGenerator, Sequence

import grpc
from heartsbot.pacing import RETRY_AFTER_KEY
from heartsbot.proto import game_pb2, ladder_pb2, spectator_pb2, tournament_pb2

from .. import spectating
from ..arena import Arena, ArenaError
from ..services import LadderService
from ..tournament_service import TournamentService
from ..tournaments import Waiting


class Refused(grpc.aio.AbortError):
    """A spectator or ladder handler refused, with ``code`` (a grpc.StatusCode) and ``details``;
    ``retry_after_s`` when its trailing metadata said when to come back (budgets.retry_metadata);
    ``reason``, the ArenaError.code of the refusal the handler passed on, if it had one."""

    def __init__(self, code: grpc.StatusCode, details: str, retry_after_s: float | None = None,
                 reason: str = "") -> None:
        super().__init__(details)
        self.code = code
        self.details = details
        self.retry_after_s = retry_after_s
        self.reason = reason


class _Context:
    """The part of ``grpc.aio.ServicerContext`` the read-only handlers use. Its ``abort`` takes
    what grpc's does: an attack pass found every ladder refusal a web 500, because the
    handlers pass ``trailing_metadata`` (services.abort_with) and this took none."""

    def __init__(self, peer: str) -> None:
        self._peer = peer

    async def abort(self, code: grpc.StatusCode, details: str = "",
                    trailing_metadata: Sequence[tuple[str, str]] = ()) -> None:
        """Raise :class:`Refused`. A handler aborts while it handles the domain's refusal
        (services.grpc_errors): that one's code goes with it, which gRPC has no place for."""
        wait_ms = dict(trailing_metadata).get(RETRY_AFTER_KEY)
        handled = sys.exc_info()[1]
        raise Refused(code, details, None if wait_ms is None else int(wait_ms) / 1000,
                      handled.code if isinstance(handled, ArenaError) else "")

    def peer(self) -> str:
        return self._peer

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return ()

    def cancelled(self) -> bool:
        return False

    def done(self) -> bool:
        return False


class Spectating:
    """What spectators may see (heartsd.spectating) and the ladder handlers, for the web."""

    def __init__(self, arena: Arena) -> None:
        self.arena = arena
        self.ladder = LadderService(arena)
        directors = getattr(arena, "tournaments", None)  # set by server.build_server
        self.tournaments = TournamentService(directors) if directors is not None else None

    async def matches(self, peer: str, status: str | None = None, limit: int = 100) -> list[spectator_pb2.MatchSummary]:
        return await spectating.summaries(self.arena, status, limit)

    def events(self, peer: str, match_id: str, after: int = 0) -> AsyncGenerator[list[game_pb2.Event], None]:
        """A live match's spectator events after sequence ``after``, batch by batch, until it
        ends, spending the caller's spectator rate by their number as WatchMatch does."""
        return spectating.paced(spectating.watch(self.arena, match_id, after, finished=False),  # over: the replay
                                self.arena.budgets.spectators, peer)

    async def record(self, peer: str, match_id: str) -> spectator_pb2.MatchRecord:
        """The full record of a match that is over (refused while it runs), spending the
        caller's spectator rate by its size as GetMatchRecord does."""
        return await spectating.record(self.arena, match_id,
                                       spectating.charged_by_size(self.arena.budgets.spectators, peer))

    async def leaderboard(self, peer: str, ruleset: str) -> ladder_pb2.GetLeaderboardResponse:
        """GetLeaderboard's answer, without spending ``peer``'s rate by its size: the web's
        leaderboard is made once per standings for every caller (api.py, SHARED_WORK)."""
        return (await self.ladder.leaderboard(ruleset))[0]

    async def bot(self, peer: str, bot: str, ruleset: str, limit: int) -> ladder_pb2.GetBotProfileResponse:
        return await self.ladder.GetBotProfile(
            ladder_pb2.GetBotProfileRequest(bot=bot, ruleset=ruleset, limit=limit), _Context(peer))  # type: ignore[arg-type]

    async def tournament_list(self, peer: str) -> list[tournament_pb2.Tournament]:
        """Every tournament's summary, newest first, as ListTournaments pages them, without
        spending ``peer``'s rate by their size: the web shows its newest few in its answer
        made once per change for every caller (api.py)."""
        if self.tournaments is None:
            return []
        return list((await self.tournaments.listing()).tournaments)

    async def tournament(self, peer: str, tournament_id: str
                         ) -> tuple[tournament_pb2.Tournament, dict[tuple[int, int], Waiting]]:
        """What GetTournament answers, without spending ``peer``'s rate by its size (the web
        shows tournaments only in its answer made once per change for every caller: api.py),
        and why its tables wait as the director says it, with codes a page says in its
        language (``waiting`` has the English only), read with it."""
        assert self.tournaments is not None
        return (await self.tournaments.tournament(tournament_id),
                self.tournaments.tournaments.waiting(tournament_id))
