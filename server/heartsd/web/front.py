"""What the web front's handlers share: the arena, a person's seats, what spectators may
see, the callers' limits, and a few request helpers. (app.py builds the application
around one of these; the handlers in api.py and sockets.py only read it.)"""

from __future__ import annotations

import asyncio
import ipaddress
import json
from typing import Any
from urllib.parse import urlsplit

from aiohttp import hdrs, web

from ..arena import Arena
from ..config import Settings, host_name
from ..budgets import Budget
from . import inbound
from .connections import peer_name
from ..rates import RequestRate
from ..sessions import MAX_ID_CHARS
from .seats import HumanSeats, SeatError
from .spectate import Spectating


def parse_json(text: str) -> Any:
    """Untrusted JSON: ``ValueError`` for anything that does not parse, including nesting
    too deep for the parser (``json`` raises RecursionError at ~1,000 levels: 2 KB)."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None


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
        # A person's seat (its JSON and its socket) is the web's bot: spectators must not
        # starve it, so it has its own budget, bounded by the tables for people (a page,
        # a second tab or a reload in passing, and its JSON at once). Before (an attack
        # pass), 16 watch tabs from the person's own address made the Playboard fail 429.
        self.seat_budget = Budget("seat", total=4 * settings.web_max_tables, per_peer=4 * settings.web_tables_per_peer)
        # What each address's sockets may send, in bytes (inbound.py), spectators' and seats'
        # apart: kept here, so a reconnect does not start with a full bucket.
        self.watch_bytes = inbound.watch_budget()
        self.seat_bytes = inbound.seat_budget()
        self.socket_cut_logs = RequestRate(per_s=1 / 60, burst=1)  # a line a minute per address (sockets.py)

    async def match_known(self, match_id: str) -> bool:
        """Whether ``match_id`` is a match (running here, or in the store)."""
        if match_id in self.arena.runners:
            return True
        return len(match_id) <= MAX_ID_CHARS and await asyncio.to_thread(self.arena.store.has, match_id)

    @staticmethod
    def peer(request: web.Request) -> str:
        """The caller's address as the gRPC budgets key it (``budgets.address_key``)."""
        return peer_name(request.remote)

    @staticmethod
    def cookie_name(match_id: str) -> str:
        return f"seat-{match_id}"

    @staticmethod
    def seat_cookie(request: web.Request, match_id: str) -> str | None:
        """The secret the request's seat cookie for ``match_id`` carries (None without one):
        :func:`cookie_value`, never aiohttp's ``request.cookies``, which parses every pair."""
        return cookie_value(request.headers.get(hdrs.COOKIE, ""), f"seat-{match_id}")

    @staticmethod
    def over_https(request: web.Request) -> bool:
        """Whether the browser reached us over HTTPS: our own TLS, or a proxy that terminated
        it saying so (X-Forwarded-Proto, Forwarded: proto=). Only the seat cookie's Secure
        flag rests on it, so a header nobody vouches for is enough: a client that claims
        HTTPS falsely only stops its own browser sending the cookie over plain HTTP.

        >>> from aiohttp.test_utils import make_mocked_request as req
        >>> [WebContext.over_https(req("POST", "/", headers=h)) for h in ({}, {"X-Forwarded-Proto": "https, http"},
        ...                                                        {"Forwarded": "for=1.2.3.4;proto=HTTPS"})]
        [False, True, True]
        """
        if request.secure:
            return True
        forwarded = request.headers.get("X-Forwarded-Proto", "").split(",")[0].strip().lower()
        return forwarded == "https" or any(f.get("proto", "").lower() == "https" for f in request.forwarded[:1])

    @staticmethod
    def check_origin(request: web.Request) -> None:
        """A browser says where a request comes from (Origin; Sec-Fetch-Site where it sends
        that): refuse other sites' pages."""
        origin = request.headers.get("Origin")
        if (origin and urlsplit(origin).netloc != request.host) or request.headers.get("Sec-Fetch-Site") == "cross-site":
            raise SeatError(403, "requests from other sites are refused", code="other_site")

    def check_seat_request(self, request: web.Request) -> None:
        """A request that takes or plays a seat: from this site (:meth:`check_origin`), under
        a name this front takes seats under (:func:`host_refusal`): a page whose own name
        was pointed at this machine after it loaded (DNS rebinding) is same-origin with
        itself, not with us. (What spectators read is public: it is not checked.)"""
        self.check_origin(request)
        if (why := host_refusal(request.host, self.settings)) is not None:
            raise SeatError(403, why, code="host_not_allowed")

    def check_post(self, request: web.Request) -> None:
        """A state-changing request: from this site, and JSON. A page of another site can
        send a form (text/plain, no preflight) but never JSON without the browser asking
        this server first, which it does not allow: no cross-site request forgery even
        from a browser that sends no Origin."""
        self.check_seat_request(request)
        if request.content_type != "application/json":
            raise SeatError(415, "send this request as JSON (Content-Type: application/json)")


def host_refusal(host: str, settings: Settings) -> str | None:
    """Why a seat may not be taken or played under the name a request's Host gives, or
    None: a loopback name always may; a name of ``web_hosts``; and, with no ``web_hosts``,
    any name when the front listens beyond loopback (it is reachable under names of the
    operator's choosing).

    >>> local = Settings.load(env={}, flags=dict(web="127.0.0.1:8080"))
    >>> [host_refusal(h, local) is None for h in ("localhost:8080", "[::1]:8080", "a.localhost", "LOCALHOST.")]
    [True, True, True, True]
    >>> print(host_refusal("evil.example:8080", local))
    this web front takes seats under loopback names only ('evil.example:8080' is not one); its operator may add names with web_hosts
    >>> named = Settings.load(env={}, flags=dict(web="0.0.0.0:8080", admin_token="x" * 16, web_hosts="Arena.Example."))
    >>> host_refusal("arena.example:443", named) is None, host_refusal("evil.example", named) is None
    (True, False)
    >>> host_refusal("evil.example", Settings.load(env={}, flags=dict(web="0.0.0.0:8080", admin_token="x" * 16)))
    """
    try:
        name = host_name(urlsplit(f"//{host}").hostname or "")
    except ValueError:  # a malformed port or brackets: refused
        pass
    else:
        if is_loopback(name) or name in settings.web_hosts:
            return None
        listening = settings.web_address
        if not settings.web_hosts and listening is not None and not is_loopback(listening[0]):
            return None
    allowed = ", ".join(settings.web_hosts) if settings.web_hosts else None
    return (f"this web front takes seats under loopback names {'and ' + allowed + ' ' if allowed else ''}only "
            f"({host[:100]!r} is not one); its operator may add names with web_hosts")


def is_loopback(name: str) -> bool:
    """``localhost`` (and its subdomains, RFC 6761) or a loopback address."""
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def cookie_value(header: str, name: str) -> str | None:
    """The value of cookie ``name`` in a Cookie header, as aiohttp's parser reads it (the
    last if it is there twice; spaces around the ``=`` and double quotes around the value
    taken away; pairs parted by ``;`` or ``,``), found by looking for the name alone.
    aiohttp's ``request.cookies`` parses every pair: an 8 KB header of 1,600 pairs cost ~6 ms
    of the event loop a request, twelve times a normal one, on every seat request within a
    caller's rate (an attack pass).

    >>> cookie_value("a=1; seat-m=s3cret; xseat-m=no", "seat-m"), cookie_value("seat-m2=x", "seat-m")
    ('s3cret', None)
    >>> cookie_value('seat-m="q"; b=2;seat-m = late', "seat-m"), cookie_value("a=1, seat-m=c", "seat-m")
    ('late', 'c')
    >>> cookie_value("", "seat-m"), cookie_value("seat-m", "seat-m"), cookie_value("seat-m=v=w", "seat-m")
    (None, None, 'v=w')
    """
    last = -1  # where the value of the last pair of that name begins
    at = header.find(name)
    while at != -1:
        after = at + len(name)
        before = at
        while before > 0 and header[before - 1] in " \t":
            before -= 1
        equals = after
        while equals < len(header) and header[equals] in " \t":
            equals += 1
        # The whole name (not the end of another, nor the start of a longer one), then "=".
        if (before == 0 or header[before - 1] in ";,") and equals < len(header) and header[equals] == "=":
            last = equals + 1
        at = header.find(name, after)
    if last == -1:
        return None
    end = min((i for i in (header.find(";", last), header.find(",", last)) if i != -1), default=len(header))
    value = header[last:end].strip(" \t")
    return value[1:-1] if len(value) >= 2 and value[0] == value[-1] == '"' else value
