"""A byte budget on what a WebSocket's client sends, counted where its bytes arrive.

aiohttp parses every frame a client sends before a handler sees a message: it answers
PINGs itself, takes PONGs, and keeps the pieces of a fragmented message until its last
one. So a handler that closes its socket on any message it did not expect never sees a
flood of control frames or of empty continuation frames: one connection sending them
(~170,000 frames a second, no token needed) took the event loop from every bot (an
attack pass: 3,300 decisions a second down to 17-263 for as long as it lasted).

Pages send little: a spectator's nothing but the answers to the heartbeat's pings and
its close, a person's seat a few answers a minute. So before a socket is opened its
connection's gate (connections.py) starts counting its bytes as they arrive, and a client
that sends more than its bucket holds is disconnected at once, before aiohttp parses them. Bytes
that came with the upgrade request itself are already in aiohttp's hands (it gives them
to the socket's parser as it opens): no browser sends a frame before the server's 101,
so a handshake that brought any is refused (:func:`sent_early`; a review found 20,000
pings sent that way all answered).

The budget is a :class:`heartsd.rates.RequestRate` of bytes keyed by the caller's address,
one for spectators' sockets and one for seats', shared by all of an address's sockets: a
budget per connection gave each reconnect a full burst, and one address reconnecting in a
loop (each burst of 2-byte pings answered) took bots from ~2,200 to ~260 decisions/s (an
attack pass on the first version).

>>> from heartsd.rates import RequestRate
>>> now = 0.0
>>> budget = RequestRate(per_s=10.0, burst=100, clock=lambda: now)
>>> budget.allow("1.2.3.4", cost=60), budget.allow("1.2.3.4", cost=60), budget.allow("5.6.7.8", cost=60)
(True, False, True)
>>> now = 2.0  # 20 bytes back, on the 40 left
>>> budget.allow("1.2.3.4", cost=60)
True
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from aiohttp import web

from ..rates import RequestRate
from . import connections

# A spectator's page answers a ping every HEARTBEAT_S (sockets.py) with at most 131 bytes
# and closes with as many; a person's seat also sends its answers (MAX_MESSAGE_BYTES each,
# ~100 in practice). Each client frame is at least 6 bytes, so these also bound frames.
WATCH_BURST_BYTES = 4096
WATCH_BYTES_PER_S = 256.0
SEAT_BURST_BYTES = 32 * 1024
SEAT_BYTES_PER_S = 4096.0


def watch_budget() -> RequestRate:
    """What every address's spectator sockets together may send."""
    return RequestRate(per_s=WATCH_BYTES_PER_S, burst=WATCH_BURST_BYTES)


def seat_budget() -> RequestRate:
    """What every address's seat sockets together may send."""
    return RequestRate(per_s=SEAT_BYTES_PER_S, burst=SEAT_BURST_BYTES)


OVER_BUDGET = "a web socket's client sent more than pages send; disconnected"
UNMASKED = "a web socket's client sent a frame without a mask (RFC 6455 5.1); closed with 1002"
# The close frame (the server's: not masked) that fails a socket on an unmasked frame.
_UNMASKED_REASON = b"a client's frames must be masked"
UNMASKED_CLOSE = bytes([0x88, 2 + len(_UNMASKED_REASON)]) + (1002).to_bytes(2, "big") + _UNMASKED_REASON


class ClientFrames:
    """Follows the frames a WebSocket's client sends, header by header, however its bytes
    are split, to tell whether every frame so far was masked.

    RFC 6455 (5.1): a server MUST close the connection on a client frame that is not
    masked. aiohttp takes them, and an attack pass flooded with unmasked pings, each 2
    bytes where a masked one is at least 6. Only headers are read; payloads are skipped.

    >>> frames = ClientFrames()
    >>> ping = bytes([0x89, 0x80 | 2]) + b"MASK" + b"hi"
    >>> frames.masked(ping[:3]), frames.masked(ping[3:] + bytes([0x81, 0x80 | 126]))
    (True, True)
    >>> frames.masked((300).to_bytes(2, "big") + b"MASK" + b"x" * 300)  # a 16-bit length
    True
    >>> frames.masked(bytes([0x89, 0x00]))
    False
    """

    __slots__ = ("_header", "_payload_left")

    def __init__(self) -> None:
        self._header = b""  # the part of the next frame's header received so far
        self._payload_left = 0  # bytes of the current frame's payload still to come

    def masked(self, data: bytes) -> bool:
        at, end = 0, len(data)
        while at < end:
            if self._payload_left:
                skipped = min(self._payload_left, end - at)
                self._payload_left -= skipped
                at += skipped
                continue
            wanted = _header_size(self._header) - len(self._header)
            self._header += data[at:at + wanted]
            at += wanted
            if len(self._header) < 2:
                continue
            if not self._header[1] & 0x80:
                return False
            if len(self._header) == _header_size(self._header):
                self._payload_left = _payload_size(self._header)
                self._header = b""
        return True


def _header_size(header: bytes) -> int:
    """The size of a client frame's header (2 while its second byte is not known)."""
    if len(header) < 2:
        return 2
    return 2 + {126: 2, 127: 8}.get(header[1] & 0x7F, 0) + 4  # + the extended length + the mask


def _payload_size(header: bytes) -> int:
    size = header[1] & 0x7F
    return int.from_bytes(header[2:2 + {126: 2, 127: 8}[size]], "big") if size >= 126 else size


def meter(transport: asyncio.Transport | None, budget: RequestRate, peer: str,
          on_refused: Callable[[str], None]) -> None:
    """Screen what ``transport`` receives from now on: bytes past ``budget``'s bucket for
    ``peer`` abort the connection, a frame without a mask fails the socket with 1002 (the
    connection's gate does it, connections.py, which already stands between the transport
    and aiohttp), and ``on_refused`` gets the reason (OVER_BUDGET or UNMASKED). No-op
    without a transport."""
    if transport is None or transport.is_closing():
        return
    gate = transport.get_protocol()
    assert isinstance(gate, connections.GatedConnection), gate  # every web connection comes through one
    frames = ClientFrames()

    def refuse(data: bytes) -> bytes | None:
        if not budget.allow(peer, cost=len(data)):
            on_refused(OVER_BUDGET)
            return b""
        if not frames.masked(data):
            on_refused(UNMASKED)
            return UNMASKED_CLOSE
        return None

    gate.screen(refuse)


def unmeter(transport: asyncio.Transport | None) -> None:
    """Stop screening ``transport`` (:func:`meter`): its handshake was refused, and what
    comes next on the connection is HTTP again, not frames."""
    if transport is not None and isinstance(gate := transport.get_protocol(), connections.GatedConnection):
        gate.screen(None)


class SentEarly(Exception):
    """A WebSocket handshake that brought frames before its answer: refused (400, closed)."""

    MESSAGE = "a WebSocket client sends nothing before the server's 101 answer"


def sent_early(request: web.Request) -> bool:
    """Whether the client sent bytes after its upgrade request, before any answer to it.

    aiohttp keeps them in its request handler's ``_message_tail`` until the socket opens;
    that name is aiohttp's own, and ``tests/web/test_attacks.py`` (frames sent with the
    upgrade) fails on an aiohttp where it is no longer found."""
    return bool(getattr(request.protocol, "_message_tail", b""))
