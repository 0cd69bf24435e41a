"""What the web front's handlers share: the arena, a person's seats, what spectators may
see, the callers' limits, and a few request helpers. (app.py builds the application
around one of these; the handlers in api.py and sockets.py only read it.)"""

from __future__ import annotations

from urllib.parse import urlsplit

from aiohttp import web

from ..arena import Arena
from ..config import Settings
from .limits import PeerLimits
from .seats import HumanSeats, SeatError
from .spectate import Spectating


class WebContext:
    def __init__(self, settings: Settings, arena: Arena) -> None:
        self.settings = settings
        self.arena = arena
        self.seats = HumanSeats(arena, settings)
        self.spectating = Spectating(arena)
        self.limits = PeerLimits(settings.web_rate_per_s, settings.web_burst, settings.web_max_sockets,
                                 settings.web_sockets_per_peer)

    @staticmethod
    def peer(request: web.Request) -> str:
        return request.remote or "unknown"

    @staticmethod
    def cookie_name(match_id: str) -> str:
        return f"seat-{match_id}"

    @staticmethod
    def check_origin(request: web.Request) -> None:
        """A browser always says where a request comes from: refuse other sites' pages."""
        origin = request.headers.get("Origin")
        if origin and urlsplit(origin).netloc != request.host:
            raise SeatError(403, "requests from other sites are refused")
