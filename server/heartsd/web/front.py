"""What the web front's handlers share: the arena, a person's seats, what spectators may
see, the callers' limits, and a few request helpers. (app.py builds the application
around one of these; the handlers in api.py and sockets.py only read it.)"""

from __future__ import annotations

from urllib.parse import urlsplit

from aiohttp import web

from ..arena import Arena
from ..config import Settings
from ..budgets import Budget
from .limits import RequestRate
from .seats import HumanSeats, SeatError
from .spectate import Spectating


class WebContext:
    def __init__(self, settings: Settings, arena: Arena) -> None:
        self.settings = settings
        self.arena = arena
        self.seats = HumanSeats(arena, settings)
        self.spectating = Spectating(arena)
        self.rate = RequestRate(settings.web_rate_per_s, settings.web_burst)
        # Calls and live feeds at once: the daemon's spectator budget, shared with gRPC's
        # SpectatorService and LadderService (one address counts the same on both).
        self.budget: Budget = arena.budgets.spectators

    @staticmethod
    def peer(request: web.Request) -> str:
        """The caller's address as the gRPC budgets name it ("ipv4:1.2.3.4", "ipv6:[::1]")."""
        host = request.remote or "unknown"
        return f"ipv6:[{host}]" if ":" in host else f"ipv4:{host}"

    @staticmethod
    def cookie_name(match_id: str) -> str:
        return f"seat-{match_id}"

    @staticmethod
    def check_origin(request: web.Request) -> None:
        """A browser always says where a request comes from: refuse other sites' pages."""
        origin = request.headers.get("Origin")
        if origin and urlsplit(origin).netloc != request.host:
            raise SeatError(403, "requests from other sites are refused")
