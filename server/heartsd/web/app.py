"""The web front: an aiohttp application on the daemon's own event loop.

Pages are static HTML shells with ES modules (``static/``, shipped in the package, no
build step); they read JSON (api.py) and live WebSocket feeds (sockets.py). Errors
become HTTP statuses in one place (:func:`_errors`), every request is charged to its
caller's rate (:func:`_rate_limit`), and every response carries a strict
Content-Security-Policy (scripts and styles from this origin only).
"""

from __future__ import annotations

import asyncio
import functools
import html
import posixpath
import warnings
from collections.abc import Awaitable, Callable
from pathlib import Path

import structlog
from aiohttp import web
from aiohttp.web_urldispatcher import MatchInfoError, UrlMappingMatchInfo

from hearts_engine.presets import PRESETS

from ..arena import Arena, ArenaError
from ..budgets import BudgetExhausted
from ..config import Settings
from ..db import damaged
from ..ladder import MAX_BOT_NAME_CHARS
from . import connections, inbound, sockets
from .api import SHARED_WORK, Api
from .errors import DAMAGED, DAMAGED_CODE, HTTP_OF_ARENA, HTTP_OF_GRPC, INTERNAL, INTERNAL_CODE
from .front import WebContext
from .httplog import HttpLog
from .seats import SeatError
from .spectate import Refused

log = structlog.get_logger("heartsd.web")
STATIC = Path(__file__).parent / "static"
PAGES = {"lobby": "index.html", "play": "play.html", "watch": "watch.html", "leaderboard": "leaderboard.html",
         "bot": "bot.html"}
# No page may be framed by another site (a framed Playboard could be clicked through a
# disguise), nor read by one (COOP/CORP); nothing is inline or from another origin.
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
                               "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
                               "frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}
# A seat's socket sits under its JSON resource, so the seat's cookie (scoped to that
# path: api.py) goes with the seat's own requests only.
SEAT_SOCKET, SEAT_SOCKET_PATH = "seat-socket", "/api/seat/{match_id}/socket"
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class WebFront(WebContext):
    """The web front of one daemon; :meth:`start` binds it, :meth:`stop` ends it."""

    def __init__(self, settings: Settings, arena: Arena) -> None:
        super().__init__(settings, arena)
        self.api = Api(self)
        self.app = self._build()
        self._runner: web.AppRunner | None = None
        self.site: connections.GatedSite | None = None
        self.port = 0

    # -- lifecycle ---------------------------------------------------------------------

    async def start(self) -> int:
        """Bind ``settings.web`` (port 0 picks one) and serve; return the port."""
        address = self.settings.web_address
        assert address is not None, "the web front is off (settings.web is empty)"
        host, port = address
        # aiohttp's own reports (malformed requests) as our log lines (httplog.py); idle
        # connections closed after IDLE_S, and a bounded number open (connections.py).
        # Request bodies are never inflated (_plain_bodies says why).
        self._runner = web.AppRunner(self.app, access_log=None, handle_signals=False, shutdown_timeout=2.0,
                                     logger=HttpLog(), keepalive_timeout=connections.IDLE_S,
                                     lingering_time=connections.LINGER_S, auto_decompress=False)
        await self._runner.setup()
        wanted = self.settings.web_max_connections
        total = connections.connection_cap(wanted)
        if total < wanted:
            log.warning("web connections capped below web_max_connections by the file descriptor limit",
                        web_max_connections=wanted, cap=total)
        site = connections.GatedSite(self._runner, host, port,
                                     connections.ConnectionGate(total, self.settings.web_connections_per_peer))
        try:
            await site.start()
        except OSError as exc:
            await self._runner.cleanup()
            raise OSError(f"cannot bind the web front to {host}:{port}: {exc.strerror}") from None
        self.site = site
        self.port = site.port
        log.info("web front serving", host=host, port=self.port)
        return self.port

    @property
    def url(self) -> str:
        host = (self.settings.web_address or ("127.0.0.1", 0))[0]
        shown = "127.0.0.1" if host in ("", "0.0.0.0") else f"[{host}]" if ":" in host else host
        return f"http://{shown}:{self.port}/"

    async def stop(self) -> None:
        self.seats.close()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    # -- the application ---------------------------------------------------------------

    def _build(self) -> web.Application:
        with warnings.catch_warnings():  # aiohttp's one way to take a router is deprecated, not gone
            warnings.simplefilter("ignore", DeprecationWarning)
            app = web.Application(router=_Router(), client_max_size=16 * 1024,
                                  middlewares=[self._errors, _plain_bodies, self._rate_limit, _static_files])
        app.on_response_prepare.append(_security_headers)
        known_by_page = {"play": self._match_known, "watch": self._match_known, "leaderboard": _ruleset_known,
                         "bot": self._bot_known}
        for name, path in (("lobby", "/"), ("play", "/play/{match_id}"), ("watch", "/watch/{match_id}"),
                           ("leaderboard", "/leaderboard"), ("bot", "/bots/{bot}")):
            app.router.add_get(path, _page(PAGES[name], known_by_page.get(name)), name=name)
        app.router.add_static("/static/", STATIC, name="static")
        app.router.add_routes(self.api.routes())
        app.router.add_get(SEAT_SOCKET_PATH, self._play_socket, name=SEAT_SOCKET)
        app.router.add_get("/ws/watch/{match_id}", self._watch_socket)
        return app

    async def _match_known(self, request: web.Request) -> bool:
        """Whether the page's match exists (running here, or in the store)."""
        return await self.match_known(request.match_info["match_id"])

    async def _bot_known(self, request: web.Request) -> bool:
        """Whether the page's bot is one: on the ladder (revoked ones keep their page) or
        configured (bot_tokens: tournament standings link to them). A name no bot can have
        is not looked up (PostgreSQL refuses a NUL in a string); a store that does not
        answer serves the page, whose own call then says what is wrong."""
        if not await _ruleset_known(request):  # /bots/x?ruleset=nope: no such page either
            return False
        bot = request.match_info["bot"]
        if bot in self.settings.bot_tokens:
            return True
        if not bot or len(bot) > MAX_BOT_NAME_CHARS or not bot.isprintable():
            return False
        try:
            return await asyncio.to_thread(self.arena.store.ladder.has_bot, bot)
        except Exception:
            log.warning("a bot page could not look its bot up; served as one", exc_info=True)
            return True

    async def _play_socket(self, request: web.Request) -> web.StreamResponse:
        self.check_seat_request(request)
        return await sockets.play(request, self, request.match_info["match_id"], self.peer(request))

    async def _watch_socket(self, request: web.Request) -> web.StreamResponse:
        self.check_origin(request)
        return await sockets.watch(request, self, request.match_info["match_id"], self.peer(request))

    @web.middleware
    async def _errors(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """Every refusal as an HTTP status with a JSON body {"error": reason}: the one mapping."""
        try:
            if "\x00" in request.path or "\x00" in request.query_string:
                # No page or id holds one; PostgreSQL refuses it in text, and an id with one
                # answered 500 with a traceback there (an attack pass), 404 on SQLite.
                raise web.HTTPBadRequest(text="the address holds a NUL character (%00), which no page or id has")
            return await handler(request)
        except SeatError as exc:
            return _error(exc.status, exc.message, exc.code)
        except BudgetExhausted as exc:
            return _too_many(exc.message, exc.retry_after_s)
        except Refused as exc:
            return _with_retry_after(_error(HTTP_OF_GRPC.get(exc.code, 500), exc.details, exc.reason or None),
                                     exc.retry_after_s)
        except ArenaError as exc:
            return _error(HTTP_OF_ARENA.get(exc.kind, 500), exc.message, exc.code or None)
        except inbound.SentEarly as exc:
            return _closing(_error(400, str(exc)))
        except connections.ClientGone:
            log.debug("the client hung up while sending its request body", path=request.path)
            return _closing(_error(400, "the request body was cut off"))
        except web.HTTPException as exc:
            if exc.status < 400:
                raise
            if exc.status == 408:  # the rest of its body may come yet: nothing more is read
                return _closing(_error(408, exc.text or exc.reason))
            if not request.path.startswith(connections.NOT_PAGES):  # a person typed or followed it
                return _error_page(exc.status, exc.reason)
            return _error(exc.status, exc.text or exc.reason)
        except Exception as exc:
            if (why := damaged(exc)) is not None:  # an edited or damaged row: said, not "internal error"
                log.error("the store is damaged", path=request.path, error=why)
                return _error(500, DAMAGED, DAMAGED_CODE)
            log.exception("web handler failed", path=request.path)
            return _error(500, INTERNAL, INTERNAL_CODE)

    @web.middleware
    async def _rate_limit(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """Every request spends its caller's rate; a JSON request also holds a slot of the
        spectator budget while it runs (a live feed holds one for its life: sockets.py), or
        of the seat budget for a person's own seat."""
        peer = self.peer(request)
        if not self.rate.allow(peer):
            # and the connection closed: requests pipelined on it past the rate were each
            # answered 429 on it, ~10,000 a second that kept the loop busy (an attack pass)
            retry_after_s = self.rate.retry_after_s(peer)
            if not request.path.startswith(connections.NOT_PAGES):  # a person asked for a page
                lang = connections.page_language(request.query_string, request.headers.get("Accept-Language", ""))
                return _closing(_with_retry_after(_over_rate_page(retry_after_s, lang), retry_after_s))
            return _closing(_too_many("too many requests; slow down", retry_after_s))
        if request.path.startswith("/api/") and request.match_info.route.name != SEAT_SOCKET:  # it holds its own
            if request.body_exists:
                await connections.read_body(request)  # before any slot: a slow body holds only its connection
            # What is made once for every caller or paced on its own (api.SHARED_WORK) spends
            # only its address's rate, not everyone's: a crowd of lobbies (a poll every 5 s
            # each) must not spend what bounds the daemon's uncached spectator work.
            resource = request.match_info.route.resource
            everyone = resource is None or resource.canonical not in SHARED_WORK
            with (self.seat_budget if request.path.startswith("/api/seat/") else self.budget).hold(peer, everyone):
                return await handler(request)
        return await handler(request)


# More slashes than any address of ours has (the deepest, /api/replay/{match_id}/deals/{deal},
# has 5): such a path is no page, file or call.
MAX_PATH_SLASHES = 32


class _Router(web.UrlDispatcher):
    """aiohttp's router, answering a path deeper than any route "not found" at once. It looks
    a path up a level at a time, hashing each prefix anew (levels x length): an 8 KB path of
    4,000 levels held the event loop ~5 ms, before any middleware ran, the rate's included.
    An attack pass: ~130 such requests a second, each on a new connection, took the bots from
    ~1,600 decisions a second to ~230 (p99 50 ms)."""

    async def resolve(self, request: web.Request) -> UrlMappingMatchInfo:
        if request.rel_url.raw_path.count("/") > MAX_PATH_SLASHES:
            return MatchInfoError(web.HTTPNotFound())
        return await super().resolve(request)


@web.middleware
async def _static_files(request: web.Request, handler: Handler) -> web.StreamResponse:
    """A missing static file is a 404 with a reason (:func:`_errors` makes it JSON): aiohttp
    answers one with an empty octet-stream body, which a browser takes for a failed download
    (ERR_INVALID_RESPONSE). After the rate's middleware: in the error middleware, ahead of
    it, a missing file was answered without spending the rate (an attack pass: ~1,250 a
    second from one client, never refused)."""
    if request.match_info.route.name == "static" and not _static_file(request.match_info.get("filename", "")):
        raise web.HTTPNotFound(text=f"no file {request.path}")
    return await handler(request)


@web.middleware
async def _plain_bodies(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Refuse a compressed request body, unread: 415. Inflated by aiohttp (its default),
    a gzip body was inflated on the event loop before the 16 KiB body limit applied: four
    POSTs of ~1 MB (1 GiB inflated) stalled the loop ~5 s, gRPC health checks included
    (an attack pass). No page sends one, so the runner no longer inflates (start) and
    this says why the body is refused."""
    encoding = request.headers.get("Content-Encoding", "identity").strip().lower()
    if encoding not in ("", "identity") and request.body_exists:
        raise web.HTTPUnsupportedMediaType(
            text=f"request bodies are taken as sent: Content-Encoding {encoding[:40]!r} is not accepted")
    return await handler(request)


def _error(status: int, message: str, code: str | None = None) -> web.Response:
    """{"error": reason}, and {"code": ...} where the refusal is one of a fixed set (errors.py)."""
    return web.json_response({"error": message} if code is None else {"error": message, "code": code}, status=status)


def _too_many(message: str, retry_after_s: float | None) -> web.Response:
    """429, with Retry-After when a rate says when, and the code pages say in their language."""
    return _with_retry_after(_error(429, message, code="too_many"), retry_after_s)


# A page asked for over the address's rate (connections.standalone_page): its words in each of the
# pages' languages, its title and what to do ({wait}: the seconds).
OVER_RATE_WORDS = {
    "en": ("Too many requests", "Too many requests came from your address just now: wait {wait}, then reload this page."),
    "id": ("Terlalu banyak permintaan", "Terlalu banyak permintaan dari alamatmu: tunggu {wait}, lalu muat ulang halaman ini."),
    "vi": ("Quá nhiều yêu cầu", "Quá nhiều yêu cầu từ địa chỉ của bạn: hãy đợi {wait}, rồi tải lại trang này."),
}


def _over_rate_page(retry_after_s: float, lang: str | None) -> web.Response:
    """429 for a page address: a page a person can read (before, the API's JSON body shown
    as text), in the language the request names (``?lang=``, Accept-Language:
    connections.page_language), or in each of the pages' three when it names none; it has no
    script to choose one."""
    s = max(1, round(retry_after_s))
    waits = {"en": f"{s} second{'s' if s != 1 else ''}", "id": f"{s} detik", "vi": f"{s} giây"}
    words = {code: (title, text.format(wait=waits[code])) for code, (title, text) in OVER_RATE_WORDS.items()}
    return web.Response(text=connections.standalone_page(429, words, lang), status=429, content_type="text/html")


def _with_retry_after(response: web.Response, retry_after_s: float | None) -> web.Response:
    """``response`` with Retry-After (whole seconds, at least 1) when a refusal says when."""
    if retry_after_s is not None:
        response.headers["Retry-After"] = str(max(1, round(retry_after_s)))
    return response


def _closing(response: web.Response) -> web.Response:
    """``response``, and the connection closed after it."""
    response.force_close()
    return response


@functools.cache
def _static_names() -> frozenset[str]:
    """The files inside static/ (shipped in the package), as relative POSIX paths: listed once."""
    return frozenset(path.relative_to(STATIC).as_posix() for path in STATIC.rglob("*") if path.is_file())


def _static_file(filename: str) -> bool:
    """Whether ``filename`` names a file inside static/ (what add_static would serve): looked
    up among :func:`_static_names`, its dot segments taken away as text. Before (an attack
    pass), each name was resolved on the file system, on the event loop, level by level and
    then against every parent: a name of 4,000 levels held the loop ~58 ms a request."""
    return posixpath.normpath(filename) in _static_names()


ERROR_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{reason} · Hearts Arena</title>
<link rel="stylesheet" href="/static/css/arena.css">
<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">
<script type="module" src="/static/js/error.js"></script>
</head>
<body class="page-error" data-status="{status}">
<header id="top"></header>
<main id="main">
  <h1>{status} · {reason}</h1>
  <p>There is no page at this address.</p>
  <p><a href="/">Go to the lobby</a> · <a href="/leaderboard">Leaderboard</a></p>
</main>
</body>
</html>
"""


def _error_page(status: int, reason: str) -> web.Response:
    """A page address that is not one (/nope, /watch/, /bots/): a page with a way back,
    not a JSON body shown as text. The API and feeds keep their JSON errors. Its script
    (error.js) gives it the header and language menu of every page, and says a 404 in the
    page's language (a browser pass: it was English on the Indonesian and Vietnamese pages)."""
    text = ERROR_PAGE.format(status=status, reason=html.escape(reason))
    return web.Response(text=text, status=status, content_type="text/html")


async def _ruleset_known(request: web.Request) -> bool:
    """Whether the page's ?ruleset= names a ruleset (none: the standard one, as the
    ladder's handlers read it). A QA pass: /leaderboard?ruleset=nope answered 200 with an
    error inside the page; there is no leaderboard there, so it answers 404 as a match or
    bot that is not one does, and the page says the ruleset is unknown."""
    return (request.query.get("ruleset") or "standard") in PRESETS


def _page(filename: str, known: Callable[[web.Request], Awaitable[bool]] | None = None) -> Handler:
    """A page's file. With ``known``, a page of nothing known (a match id that was never
    one) is the same page answered 404, not 200: the page says what is wrong as before, and
    a crawler or a link checker sees the address is not one (a QA pass: soft 404s)."""
    path = STATIC / filename

    async def handler(request: web.Request) -> web.StreamResponse:
        status = 200 if known is None or await known(request) else 404
        return web.FileResponse(path, status=status, headers={"Cache-Control": "no-cache"})

    return handler


async def _security_headers(request: web.Request, response: web.StreamResponse) -> None:
    for key, value in SECURITY_HEADERS.items():
        response.headers.setdefault(key, value)
    response.headers["Server"] = "heartsd"  # aiohttp's default names its and Python's versions
    if request.path.startswith("/api/"):
        response.headers.setdefault("Cache-Control", "no-store")  # a seat's answers stay out of caches
