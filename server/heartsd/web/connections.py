"""Open connections to the web front, bounded in total and per address.

Every connection is a file descriptor of the daemon's one process, the same pool the
gRPC server accepts bots from. Unbounded, 1,100 idle connections to the web port (a
loop of ``connect()``, nothing sent) exhausted a 1,024-descriptor process: bots could
no longer connect and the health check went unanswered, even after the flood ended.
So the web front admits at most ``total`` connections at once (and never more than a
quarter of the process's descriptor limit, :func:`connection_cap`) and ``per_peer``
from one address; a connection over either is answered 503 and closed, never handed to
the application. Its answer is a page a person can read when its request asks for a page
(in the page's language where the request names one): it waits for the request's head
at most REFUSAL_READ_S, and only so many refused connections wait at once
(REFUSALS_HELD, REFUSALS_HELD_PER_PEER); past that, and for anything else, it is the
JSON every refusal has, at once. An idle connection (nothing sent yet, or between requests) is closed
after ``IDLE_S`` (aiohttp's keep-alive timeout; its default is an hour), so a client
that opens connections and sends nothing, or half a request, holds them only that long.

:class:`GatedSite` is aiohttp's TCP site with the gate in front of each connection.

>>> gate = ConnectionGate(total=3, per_peer=2)
>>> [gate.admit("ipv4:10.0.0.1") for _ in range(3)], gate.admit("ipv4:10.0.0.2"), gate.admit("ipv4:10.0.0.3")
([True, True, False], True, False)
>>> gate.release("ipv4:10.0.0.1"); gate.admit("ipv4:10.0.0.3"), gate.open
(True, 3)
"""

from __future__ import annotations

import asyncio
import urllib.parse
from collections.abc import Callable
from typing import Any

import structlog
from aiohttp import web

from .. import descriptors
from ..budgets import address_key

log = structlog.get_logger("heartsd.web")
IDLE_S = 15.0  # an idle connection is closed after this (no request yet, or between requests)
BODY_S = 10.0  # a request's body must arrive within this, or the request is a 408 (read_body)
# After an answer to a request whose body was not read whole (a 408, a 413), the rest is
# read and dropped this long before the connection closes (aiohttp's default is 10 s).
LINGER_S = 2.0
LAST_WORDS_S = 2.0  # a connection closed with a last frame (GatedConnection.screen) is cut after this
SHARE_OF_DESCRIPTORS = 4  # the web front holds at most 1/4 of the process's file descriptors
# Its body as every refusal's (errors.py): the English, and the code a page says in its language.
_REFUSAL_BODY = b'{"error": "too many connections; close some and retry", "code": "too_many_connections"}\r\n'
REFUSAL = (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 5\r\n"
           b"Server: heartsd\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n"
           b"Content-Length: %d\r\n\r\n%s" % (len(_REFUSAL_BODY), _REFUSAL_BODY))
# A refused connection waits this long for its request's head, to answer a page's address
# with a page (refusal_for); at most so many at once, in all and from one address, so that
# the refusals themselves hold few descriptors: past them, the JSON at once, as before.
REFUSAL_READ_S = 2.0
REFUSALS_HELD = 32
REFUSALS_HELD_PER_PEER = 4
REQUEST_HEAD_BYTES = 8192  # what is read of a refused request, at most
# The paths that are not pages: the API, the feeds, the pages' files (their refusals are JSON).
NOT_PAGES = ("/api/", "/ws/", "/static/")
LANGUAGES = ("en", "id", "vi")  # the pages' (i18n.js)
# The page a person's browser is answered with over the caps: whole in itself (its stylesheet
# and script would be refused too), in the page's language, or in all three when the request
# names none. Said for either cap: the address's, or the daemon's in all.
_CAP_WORDS = {
    "en": ("Too many connections", "Too many connections are open to this server, from your address or in all. "
           "Close some tabs or windows of this site, wait a few seconds, then reload this page."),
    "id": ("Terlalu banyak koneksi", "Terlalu banyak koneksi yang terbuka ke server ini, dari alamatmu atau "
           "seluruhnya. Tutup beberapa tab atau jendela situs ini, tunggu beberapa detik, lalu muat ulang halaman ini."),
    "vi": ("Quá nhiều kết nối", "Có quá nhiều kết nối đang mở tới máy chủ này, từ địa chỉ của bạn hoặc tổng cộng. "
           "Hãy đóng bớt thẻ hoặc cửa sổ của trang này, đợi vài giây, rồi tải lại trang này."),
}
_STANDALONE_PAGE = """<!doctype html>
<html lang="{lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title} · Hearts Arena</title>
</head>
<body>
<h1>{status} · {title}</h1>
{words}
</body>
</html>
"""


def standalone_page(status: int, words: dict[str, tuple[str, str]], lang: str | None) -> str:
    """A refusal's page whole in itself (its stylesheet and script would be refused too, and
    the pages' policy allows no inline style or script): ``words`` (language -> title, text)
    in ``lang``, or in each of the pages' languages when the request names none.

    >>> page = standalone_page(503, {c: ("T-" + c, "x") for c in LANGUAGES}, None)
    >>> '<html lang="en">' in page, "<h1>503 · T-en</h1>" in page, page.count("<p lang=")
    (True, True, 3)
    """
    said = [lang] if lang else list(LANGUAGES)
    text = "\n".join(f'<p lang="{code}">{words[code][1]}</p>' for code in said)
    return _STANDALONE_PAGE.format(lang=said[0], status=status, title=words[said[0]][0], words=text)


def page_language(query: str, accept_language: str) -> str | None:
    """The pages' language a request names: its ``?lang=`` (as the pages read it), else the
    first of its Accept-Language the pages have; None if neither names one.

    >>> page_language("lang=vi", "id"), page_language("", "fr-FR,id;q=0.9,en;q=0.8")
    ('vi', 'id')
    >>> page_language("", "en;q=0.5, vi-VN"), page_language("lang=xx", "fr"), page_language("", "")
    ('vi', None, None)
    """
    asked = urllib.parse.parse_qs(query).get("lang", [])
    if asked and asked[0] in LANGUAGES:
        return asked[0]
    ranked: list[tuple[float, int, str]] = []
    for i, item in enumerate(accept_language.split(",")[:32]):
        tag, _, params = item.strip().partition(";")
        q = 1.0
        if params.strip().startswith("q="):
            try:
                q = float(params.strip()[2:])
            except ValueError:
                continue
        primary = tag.strip().split("-")[0].lower()
        if primary in LANGUAGES and q > 0:
            ranked.append((-q, i, primary))
    return min(ranked)[2] if ranked else None


def cap_page(lang: str | None) -> bytes:
    """The answer over the caps to a page's request: the page in ``lang`` (None: in each
    language), with the headers every page has that it needs (no script, no style)."""
    body = standalone_page(503, _CAP_WORDS, lang).encode()
    return (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/html; charset=utf-8\r\nRetry-After: 5\r\n"
            b"Server: heartsd\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-store\r\n"
            b"Content-Security-Policy: default-src 'none'; base-uri 'none'; form-action 'none'; "
            b"frame-ancestors 'none'\r\nX-Frame-Options: DENY\r\nReferrer-Policy: no-referrer\r\n"
            b"Connection: close\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))


def refusal_for(head: bytes) -> bytes:
    r"""The answer over the caps to the request that starts with ``head`` (its head, or what
    came of it): a page a person can read (cap_page) for a GET of a page's address, else the
    JSON every refusal has (REFUSAL), as API callers read it.

    >>> refusal_for(b"GET /api/options HTTP/1.1\r\nHost: x\r\n\r\n") == REFUSAL, refusal_for(b"") == REFUSAL
    (True, True)
    >>> page = refusal_for(b"GET /leaderboard?ruleset=standard HTTP/1.1\r\nAccept-Language: vi-VN,vi;q=0.9\r\n\r\n")
    >>> page.startswith(b"HTTP/1.1 503"), b"text/html" in page, '<html lang="vi">' in page.decode()
    (True, True, True)
    """
    line, _, rest = head.partition(b"\r\n")
    parts = line.split(b" ")
    if len(parts) != 3 or parts[0] != b"GET" or not parts[2].startswith(b"HTTP/"):
        return REFUSAL
    path, _, query = parts[1].decode("latin-1").partition("?")
    if not path.startswith("/") or path.startswith(NOT_PAGES):
        return REFUSAL
    accept_language = ""
    for header in rest.split(b"\r\n"):
        name, _, value = header.partition(b":")
        if name.strip().lower() == b"accept-language":
            accept_language = value.decode("latin-1")
    return cap_page(page_language(query, accept_language))


def peer_name(host: str | None) -> str:
    """An address as the daemon's budgets key it (``budgets.address_key``: "ipv4:1.2.3.4",
    "ipv6:[2001:db8::]/64"), so one caller counts the same over gRPC and the web."""
    return address_key(host or "unknown")


def connection_cap(wanted: int) -> int:
    """``wanted``, or less if the process may not open that many more descriptors:
    the rest belong to bots' gRPC connections and the store (heartsd.descriptors)."""
    return descriptors.share(wanted, SHARE_OF_DESCRIPTORS, descriptors.soft_limit())


class ConnectionGate:
    """How many connections are open, in total and per peer; whether one more may be."""

    def __init__(self, total: int, per_peer: int) -> None:
        self.total = total
        self.per_peer = per_peer
        self.open = 0
        self.refused = 0
        self._by_peer: dict[str, int] = {}
        self.held = 0  # refused connections waiting for their request (hold)
        self._held_by_peer: dict[str, int] = {}

    def admit(self, peer: str) -> bool:
        if self.open >= self.total or self._by_peer.get(peer, 0) >= self.per_peer:
            self.refused += 1
            return False
        self.open += 1
        self._by_peer[peer] = self._by_peer.get(peer, 0) + 1
        return True

    def release(self, peer: str) -> None:
        self.open -= 1
        left = self._by_peer[peer] - 1
        if left:
            self._by_peer[peer] = left
        else:
            del self._by_peer[peer]

    def hold(self, peer: str) -> bool:
        """Whether a refused connection from ``peer`` may wait for its request (to be
        answered as a page, refusal_for): within REFUSALS_HELD, REFUSALS_HELD_PER_PEER.

        >>> gate = ConnectionGate(total=0, per_peer=0)
        >>> [gate.hold("ipv4:10.0.0.1") for _ in range(REFUSALS_HELD_PER_PEER + 1)][-2:], gate.held
        ([True, False], 4)
        >>> gate.unhold("ipv4:10.0.0.1"); gate.held
        3
        """
        if self.held >= REFUSALS_HELD or self._held_by_peer.get(peer, 0) >= REFUSALS_HELD_PER_PEER:
            return False
        self.held += 1
        self._held_by_peer[peer] = self._held_by_peer.get(peer, 0) + 1
        return True

    def unhold(self, peer: str) -> None:
        self.held -= 1
        left = self._held_by_peer[peer] - 1
        if left:
            self._held_by_peer[peer] = left
        else:
            del self._held_by_peer[peer]


class GatedConnection(asyncio.Protocol):
    """One connection: refused at once over the gate's limits, otherwise handed to the
    aiohttp request handler made for it (every protocol callback passes through)."""

    def __init__(self, gate: ConnectionGate, handlers: Callable[[], asyncio.Protocol]) -> None:
        self._gate = gate
        self._handlers = handlers
        self._inner: asyncio.Protocol | None = None
        self._peer = ""
        self._transport: asyncio.Transport | None = None
        self._screen: Callable[[bytes], bytes | None] | None = None  # once screen() sets one
        self._refused = False
        self._head: bytearray | None = None  # a refused connection's request, while it is waited for
        self._held = False  # it holds a place of the gate's refusals (hold) until it is lost
        self._wait: asyncio.TimerHandle | None = None

    def screen(self, refuse: Callable[[bytes], bytes | None] | None) -> None:
        """From now on, each piece of what arrives goes to ``refuse`` before aiohttp: if it
        answers bytes, nothing more is passed on, those bytes are the connection's last
        (a WebSocket close frame), and it is closed; an empty answer aborts it at once.
        heartsd.web.inbound screens a WebSocket's client (its byte budget, its masks);
        ``None`` ends the screening (a handshake refused: the connection is HTTP again)."""
        self._screen = refuse

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        address = transport.get_extra_info("peername")
        peer = peer_name(address[0] if isinstance(address, tuple) and address else None)
        self._peer = peer
        self._transport = transport  # type: ignore[assignment]
        if not self._gate.admit(peer):
            assert isinstance(transport, asyncio.Transport)
            if not self._gate.hold(peer):  # too many refusals wait already: the JSON at once
                transport.write(REFUSAL)
                transport.close()
                return
            self._held = True
            self._head = bytearray()  # its request is waited for (data_received), then answered
            self._wait = asyncio.get_running_loop().call_later(REFUSAL_READ_S, self._refuse)
            return
        self._inner = self._handlers()
        self._inner.connection_made(transport)

    def _refuse(self) -> None:
        """Answer a refused connection by what came of its request (refusal_for), and close it."""
        if self._head is None:
            return
        head, self._head = bytes(self._head), None
        if self._wait is not None:
            self._wait.cancel()
        assert self._transport is not None
        self._transport.write(refusal_for(head))
        self._transport.close()  # connection_lost follows once it is sent, or within LAST_WORDS_S
        asyncio.get_running_loop().call_later(LAST_WORDS_S, self._transport.abort)

    def data_received(self, data: bytes) -> None:
        if self._head is not None:  # refused: its request's head, at most REQUEST_HEAD_BYTES of it
            self._head += data[: REQUEST_HEAD_BYTES - len(self._head)]
            if b"\r\n\r\n" in self._head or len(self._head) >= REQUEST_HEAD_BYTES:
                self._refuse()
            return
        if self._inner is None or self._refused:
            return
        if self._screen is not None and (last := self._screen(data)) is not None:
            self._refused = True  # nothing more is passed on
            assert self._transport is not None
            if last:
                self._transport.write(last)
                self._transport.close()  # connection_lost follows once it is sent...
                # ... or, from a client that does not read it, within LAST_WORDS_S (a review:
                # its connection and its gate slot stayed as long as it did not read).
                asyncio.get_running_loop().call_later(LAST_WORDS_S, self._transport.abort)
            else:
                self._transport.abort()  # connection_lost follows, and ends the handler's read
            return
        self._inner.data_received(data)

    def eof_received(self) -> bool | None:
        if self._head is not None:  # refused, and its client sends no more: answered by what came
            self._refuse()
            return True  # closed once the answer is sent
        return self._inner.eof_received() if self._inner is not None else None

    def connection_lost(self, exc: Exception | None) -> None:
        if self._held:
            self._held = False
            self._head = None
            if self._wait is not None:
                self._wait.cancel()
            self._gate.unhold(self._peer)
        if self._inner is not None:
            self._gate.release(self._peer)
            inner, self._inner = self._inner, None
            inner.connection_lost(exc)

    def pause_writing(self) -> None:
        if self._inner is not None:
            self._inner.pause_writing()

    def resume_writing(self) -> None:
        if self._inner is not None:
            self._inner.resume_writing()


class GatedSite(web.BaseSite):
    """aiohttp's TCP site, each connection through ``gate`` (see the module docstring)."""

    def __init__(self, runner: web.BaseRunner, host: str, port: int, gate: ConnectionGate, **kw: Any) -> None:
        super().__init__(runner, **kw)
        self._host = host
        self._port = port
        self.gate = gate
        self.port = port

    @property
    def name(self) -> str:
        return f"http://{self._host}:{self.port}"

    async def start(self) -> None:
        await super().start()
        handlers = self._runner.server
        assert handlers is not None
        self._server = await asyncio.get_running_loop().create_server(
            lambda: GatedConnection(self.gate, handlers), self._host, self._port, backlog=self._backlog,
            reuse_address=True, reuse_port=False)
        if self._server.sockets:
            self.port = self._server.sockets[0].getsockname()[1]


class ClientGone(Exception):
    """The client hung up while its request body was on its way: nobody to answer."""


async def read_body(request: web.Request) -> None:
    """Read a request's whole body (at most the app's client_max_size), within BODY_S.

    Done before a request takes any slot of a budget (app.py): the idle timeout does not
    apply once a handler runs, so before (an attack pass) a POST that announced 100 bytes
    and sent none held a spectator slot for ever, and 32 addresses x 16 such connections
    took the whole spectator budget. Now a slow body holds only its connection, which the
    connection caps bound, and for BODY_S at most. aiohttp keeps what was read:
    ``request.text()`` later reads nothing again."""
    try:
        await asyncio.wait_for(request.read(), BODY_S)
    except asyncio.TimeoutError:
        raise web.HTTPRequestTimeout(text=f"the request body did not arrive within {BODY_S:g} s") from None
    except ConnectionError:
        raise ClientGone() from None
