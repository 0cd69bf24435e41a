"""Concurrency budgets per class of caller, so that no class can starve another.

grpc's ``maximum_concurrent_rpcs`` is one budget for every call: 64 spectators watching
a match took every slot and a bot's ``Play`` failed. So calls are counted per class
(bot streams, spectators, admin, infrastructure: health and reflection), each class has
its own total and a limit per peer (one address, any number of connections), and the
server-wide limit is set above their sum (``Settings.rpc_limit()``), so it is never
what refuses a call. A refusal is RESOURCE_EXHAUSTED with a message naming the budget.

:class:`Budget` is the reusable part: the gRPC layer uses it through
:class:`BudgetInterceptor`, and anything else serving spectators (the web front) takes
a slot with :meth:`Budget.hold` around each request or stream.

>>> budget = Budget("spectator", total=2, per_peer=1)
>>> with budget.hold("ipv4:10.0.0.1"):
...     budget.refusal("ipv4:10.0.0.1")
'too many spectator calls from your address at once (at most 1); try again later'
>>> budget.in_use
0

A budget may also bound how fast calls start (``rate``: per peer; ``total_rate``: for
every peer together), in tokens of :class:`~heartsd.rates.RequestRate`: a call costs
one, and a handler whose work grows with the request charges the rest (:meth:`Budget.charge`).
Counting calls at once alone let one address, keeping its 16 spectator calls busy with
quick ones, slow every bot match ~10 times (an attack pass).

>>> from heartsd.rates import RequestRate
>>> paced = Budget("spectator", total=9, per_peer=9, rate=RequestRate(1.0, 2, clock=lambda: 0.0))
>>> paced.acquire("ipv4:10.0.0.1"); paced.acquire("ipv4:10.0.0.1")
>>> paced.charge("ipv4:10.0.0.1", 1)
Traceback (most recent call last):
...
heartsd.budgets.BudgetExhausted: too many spectator calls from your address (at most 1 a second, 2 at once after a pause); try again in 1.0 s

Refused by everyone's rate, a caller keeps its own tokens: retrying through a flood, it
is not then refused on its own rate when the flood is over.

>>> both = Budget("spectator", 9, 9, RequestRate(1.0, 2, clock=lambda: 0.0), RequestRate(1.0, 1, clock=lambda: 0.0))
>>> both.acquire("ipv4:10.0.0.1")
>>> both.acquire("ipv4:10.0.0.2")
Traceback (most recent call last):
...
heartsd.budgets.BudgetExhausted: the server is serving as many spectator calls a second as it allows (1); try again in 1.0 s
>>> both.rate.allow("ipv4:10.0.0.2", 2)
True
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import ipaddress
import urllib.parse
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import grpc
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message
from heartsbot.pacing import RETRY_AFTER_KEY

from .rates import TOTAL_BURST_S, RequestRate

INFRA_CALLS, INFRA_CALLS_PER_PEER = 64, 16  # health checks and reflection (probes, grpcurl)
# ... and how fast one address may make them: a probe asks every few seconds, and grpcurl
# asks reflection a few dozen things. Counted at once alone, one reflection stream from one
# address asked ~12,000 times a second (each request on a stream was free) and bots' decisions
# fell to about half (an attack pass). Each request on a stream costs what a call does.
INFRA_CALLS_PER_S, INFRA_BURST = 20.0, 100
# Health checks (Health/Check) apart from the streams above (Health/Watch, reflection): a
# stream holds its slot for as long as it likes, and 64 of them (4 addresses) refused every
# readiness probe, so Kubernetes took the replica out of its Service (an attack pass). A check
# holds its slot for one request; the per-address rate above bounds how often it may come.
PROBE_CALLS, PROBE_CALLS_PER_PEER = 256, 16
# Bot streams whose token is not known yet (a bot added a moment ago, or a wrong token):
# they wait for a read of the ladder's tokens, and a refused one is held ~0.5 s to deliver
# its status (services.BotService), so they get their own small budget, limited per
# address. Streams with a known token never wait for it.
GREETING_CALLS, GREETING_CALLS_PER_PEER = 64, 8
# How long a one-request call may wait for its request once it has started (it holds its
# budget's slot meanwhile): a real client sends it with the call's headers.
REQUEST_WAIT_S = 10.0
DROP_S = 2.0  # see _drop_the_rest (as the bot stream's services.BotService._end)


class BudgetExhausted(Exception):
    """No slot left, or a rate spent. The gRPC layer answers RESOURCE_EXHAUSTED with
    ``message``; an HTTP front answers 429 (or 503) with it, and Retry-After with
    ``retry_after_s`` when a rate says when."""

    kind = "exhausted"

    def __init__(self, message: str, retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.retry_after_s = retry_after_s


@dataclass
class Budget:
    """At most ``total`` calls at once, and at most ``per_peer`` of them from one peer."""

    name: str
    total: int
    per_peer: int
    rate: RequestRate | None = None  # calls a second per peer
    total_rate: RequestRate | None = None  # calls a second for every peer together
    in_use: int = 0
    peak: int = 0
    refused: int = 0
    _by_peer: dict[str, int] = field(default_factory=dict, repr=False)

    def refusal(self, peer: str) -> str | None:
        """Why a new call from ``peer`` would be refused now, or None."""
        if self.in_use >= self.total:
            return f"the server is serving as many {self.name} calls as it allows ({self.total}); try again later"
        if self._by_peer.get(peer, 0) >= self.per_peer:
            return f"too many {self.name} calls from {_where(peer)} at once (at most {self.per_peer}); try again later"
        return None

    def acquire(self, peer: str, everyone: bool = True) -> None:
        """Take a slot for ``peer`` and a call's token of its rate (and of everyone's, if
        ``everyone``), or raise :class:`BudgetExhausted`."""
        why = self.refusal(peer)
        if why is not None:
            self.refused += 1
            raise BudgetExhausted(why)
        self.charge(peer, 1.0, everyone)
        self.in_use += 1
        self.peak = max(self.peak, self.in_use)
        self._by_peer[peer] = self._by_peer.get(peer, 0) + 1

    def charge(self, peer: str, cost: float, everyone: bool = True) -> None:
        """Spend ``cost`` of the peer's rate, then of everyone's (if ``everyone``), or raise
        :class:`BudgetExhausted`. The peer's comes first: one that is over its own rate
        spends nothing of the others'."""
        rate, total = self.rate, self.total_rate
        if rate is not None and not rate.allow(peer, cost):
            self.refused += 1
            wait = max(0.1, rate.retry_after_s(peer, cost))
            raise BudgetExhausted(f"too many {self.name} calls from {_where(peer)} (at most {rate.rate:g} a second, "
                                  f"{rate.burst} at once after a pause); try again in {wait:.1f} s", wait)
        if everyone and total is not None and not total.allow("", cost):
            if rate is not None:
                rate.refund(peer, cost)  # refused all the same: a caller retrying through a flood keeps its own
            self.refused += 1
            wait = max(0.1, total.retry_after_s("", cost))
            raise BudgetExhausted(f"the server is serving as many {self.name} calls a second as it allows "
                                  f"({total.rate:g}); try again in {wait:.1f} s", wait)

    async def pace(self, peer: str, cost: float) -> None:
        """Spend ``cost`` of the peer's rate, then of everyone's, waiting for them rather than
        refusing: for the parts of a stream already begun, which a refusal would cut off half
        way (a spectator catching up on a long match). Not counted as refused."""
        rate, total = self.rate, self.total_rate
        while rate is not None and not rate.allow(peer, cost):
            await asyncio.sleep(max(0.05, rate.retry_after_s(peer, cost)))
        while total is not None and not total.allow("", cost):
            await asyncio.sleep(max(0.05, total.retry_after_s("", cost)))

    def release(self, peer: str) -> None:
        self.in_use -= 1
        left = self._by_peer[peer] - 1
        if left:
            self._by_peer[peer] = left
        else:
            del self._by_peer[peer]

    @contextlib.contextmanager
    def hold(self, peer: str, everyone: bool = True) -> Iterator[None]:
        """A slot for the block (a request, or a stream for as long as it runs); ``everyone``
        as for :meth:`acquire`."""
        self.acquire(peer, everyone)
        try:
            yield
        finally:
            self.release(peer)


def _where(peer: str) -> str:
    """How a refusal names the caller: an IPv6 caller is counted by its prefix."""
    return f"your address's /{IPV6_PREFIX}" if peer.endswith(f"/{IPV6_PREFIX}") else "your address"


# The IPv6 prefix one caller is counted by. A host is given a /64 (or more) and may use any
# address in it: keyed by the full address, one attacker had 2^64 "addresses" for every
# per-address limit (an attack pass). A /64 is what a subscriber or server gets.
IPV6_PREFIX = 64
NAT64 = ipaddress.IPv6Network("64:ff9b::/96")  # IPv4 hosts translated into IPv6 (RFC 6052)


def address_key(host: str) -> str:
    """The key of the per-address limits for a caller's host address: an IPv4 address
    itself, an IPv6 address by its /64, and an IPv4 host reaching us over IPv6 (mapped on
    a dual-stack listener, Teredo, 6to4, NAT64) by its IPv4 address: those share a /64 with
    every other host behind the same relay. Anything else (a Unix socket) is its own key.

    >>> address_key("10.0.0.7"), address_key("2001:db8:1:2:aa::1"), address_key("::ffff:10.0.0.7")
    ('ipv4:10.0.0.7', 'ipv6:[2001:db8:1:2::]/64', 'ipv4:10.0.0.7')
    >>> address_key("64:ff9b::a00:7"), address_key("2002:a00:7::1")
    ('ipv4:10.0.0.7', 'ipv4:10.0.0.7')
    """
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return host
    if isinstance(ip, ipaddress.IPv4Address):
        return f"ipv4:{ip}"
    embedded = ip.ipv4_mapped or (ip.teredo[1] if ip.teredo else None) or ip.sixtofour or (
        ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF) if ip in NAT64 else None)
    if embedded is not None:  # an IPv4 host behind IPv6 (mapped, Teredo, 6to4, NAT64): its own address
        return f"ipv4:{embedded}"
    network = ipaddress.IPv6Network((int(ip) >> (128 - IPV6_PREFIX) << (128 - IPV6_PREFIX), IPV6_PREFIX))
    return f"ipv6:[{network.network_address}]/{IPV6_PREFIX}"


# The wider IPv6 prefixes one holder may be given many /64s of: a home's delegated prefix
# (often a /56 or /48) or a provider's allocation (a /32). A limit that must not be filled
# from one network counts them too (web/seats.py).
IPV6_NETWORKS = (48, 32)


def address_networks(key: str) -> list[str]:
    """The wider networks an :func:`address_key` lies in, that one holder may have many
    /64s of (IPV6_NETWORKS); none for an IPv4 address, whose holders are counted one by one.

    >>> address_networks("ipv6:[2001:db8:1:2::]/64"), address_networks("ipv4:10.0.0.7")
    (['ipv6:[2001:db8:1::]/48', 'ipv6:[2001:db8::]/32'], [])
    """
    if not (key.startswith("ipv6:[") and key.endswith(f"]/{IPV6_PREFIX}")):
        return []
    ip = int(ipaddress.IPv6Address(key[6:-len(f"]/{IPV6_PREFIX}")]))
    return [f"ipv6:[{ipaddress.IPv6Address(ip >> (128 - n) << (128 - n))}]/{n}" for n in IPV6_NETWORKS]


def peer_address(peer: str) -> str:
    """grpc's ``context.peer()`` without the port, as :func:`address_key`: the key of the
    per-peer limits. gRPC writes an IPv6 peer's brackets URL-encoded.

    >>> peer_address("ipv4:127.0.0.1:50312"), peer_address("ipv6:%5B2001:db8::1%5D:50312"), peer_address("unix:/tmp/s")
    ('ipv4:127.0.0.1', 'ipv6:[2001:db8::]/64', 'unix:/tmp/s')
    """
    if peer.startswith("ipv4:"):  # the common case, without parsing
        return peer.rpartition(":")[0]
    if peer.startswith("ipv6:"):
        host = urllib.parse.unquote(peer[5:]).rpartition(":")[0]
        return address_key(host.removeprefix("[").removesuffix("]"))
    return peer


@dataclass(frozen=True)
class Budgets:
    """The daemon's budgets, one per class of caller (built from Settings)."""

    bots: Budget
    spectators: Budget
    admin: Budget
    infra: Budget
    probes: Budget
    greeting: Budget

    @classmethod
    def from_settings(cls, settings: Any) -> Budgets:
        """Bot streams have no per-peer limit below their total (many bots may share one
        address: a lab, a NAT); spectators do."""
        return cls(
            bots=Budget("bot stream", settings.max_bot_streams, settings.max_bot_streams),
            spectators=Budget("spectator", settings.max_spectator_calls, settings.max_spectator_calls_per_peer,
                              RequestRate(settings.spectator_calls_per_s, settings.spectator_burst),
                              RequestRate(settings.spectator_calls_total_per_s,
                                          round(TOTAL_BURST_S * settings.spectator_calls_total_per_s))),
            admin=Budget("admin", settings.max_admin_calls, settings.max_admin_calls),
            infra=Budget("health or reflection", INFRA_CALLS, INFRA_CALLS_PER_PEER,
                         RequestRate(INFRA_CALLS_PER_S, INFRA_BURST)),
            probes=Budget("health check", PROBE_CALLS, PROBE_CALLS_PER_PEER,
                          RequestRate(INFRA_CALLS_PER_S, INFRA_BURST)),
            greeting=Budget("unauthenticated bot stream", GREETING_CALLS, GREETING_CALLS_PER_PEER),
        )

    def all(self) -> tuple[Budget, ...]:
        return (self.bots, self.spectators, self.admin, self.infra, self.probes, self.greeting)

    @property
    def total(self) -> int:
        return sum(b.total for b in self.all())


class BudgetInterceptor(grpc.aio.ServerInterceptor):
    """Counts each call against the budget of its service (``budgets``: full service name ->
    Budget) from its first byte to its end; a call over budget ends RESOURCE_EXHAUSTED
    before its handler runs. Only the call's start and end are touched: nothing per message.

    It is the one wrapper around every call but the bot stream, so it also answers a request
    that does not decode: INVALID_ARGUMENT naming the message type, where grpc's own
    deserializer failure ended the call UNKNOWN with a Python exception's text
    ("Unexpected <class 'google.protobuf.message.DecodeError'>").

    A service that counts its calls itself (the bot stream, with :func:`admit` and
    ``Budget.release``: no wrapper kept alive per idle stream; it reads its own messages
    with wire.read_play_request) is left out of ``budgets``."""

    def __init__(self, budgets: Mapping[str, Budget], admin: Budget | None = None,
                 is_admin: Callable[[str], bool] | None = None, public: Budget | None = None) -> None:
        self._budgets = dict(budgets)  # "pkg.Service" or "pkg.Service/Method" (which comes first)
        # A call bound for ``admin`` without a token ``is_admin`` accepts counts against
        # ``public`` instead (bounded per address; its handler then says why it is refused).
        # Before, such calls took the operator's admin slots, whose per-address limit is
        # their total: 32 header-only calls from one address locked the operator out.
        self._admin, self._is_admin, self._public = admin, is_admin, public

    def budget_of(self, method: str) -> Budget | None:
        """The budget of ``method`` ("/pkg.Service/Method"): its own, else its service's."""
        name = method[1:]
        return self._budgets.get(name) or self._budgets.get(name.split("/")[0])

    async def intercept_service(self, continuation: Callable[..., Any], details: grpc.HandlerCallDetails) -> Any:
        handler = await continuation(details)
        budget = self.budget_of(details.method) if handler is not None else None
        if budget is self._admin and budget is not None and self._is_admin is not None and not self._is_admin(
                bearer_of(details.invocation_metadata)):
            budget = self._public
        if budget is None:
            return handler
        # A one-request method is served as a client-streaming one reading its one request
        # (the same bytes on the wire): gRPC runs a one-request handler only once its request
        # has come, so a call sending headers alone held a slot of gRPC's server-wide limit
        # and none of ours (an attack pass: one connection of such calls kept every bot out).
        if handler.unary_unary is not None:
            return grpc.stream_unary_rpc_method_handler(
                _counted(budget, handler.unary_unary, True), _tolerant(handler.request_deserializer),
                handler.response_serializer)
        if handler.unary_stream is not None:
            return grpc.stream_stream_rpc_method_handler(
                _counted(budget, handler.unary_stream, True), _tolerant(handler.request_deserializer),
                handler.response_serializer)
        if handler.stream_unary is not None:
            return grpc.stream_unary_rpc_method_handler(
                _counted(budget, _reading_tolerantly(handler.stream_unary), False), _tolerant(handler.request_deserializer),
                handler.response_serializer)
        return grpc.stream_stream_rpc_method_handler(
            _counted(budget, _reading_tolerantly(handler.stream_stream), False), _tolerant(handler.request_deserializer),
            handler.response_serializer)


class Undecodable:
    """What :func:`_tolerant` gives for request bytes that are not the method's message."""

    __slots__ = ("message",)

    def __init__(self, message: str) -> None:
        self.message = message


def _tolerant(deserializer: Callable[[bytes], Any] | None) -> Callable[[bytes], Any] | None:
    """``deserializer``, giving an :class:`Undecodable` instead of raising, and for a request
    with a NUL character in a text field (:func:`nul_field`)."""
    if deserializer is None:
        return None
    message_type = getattr(getattr(deserializer, "__self__", None), "DESCRIPTOR", None)
    name = message_type.full_name if message_type is not None else "request"
    refusal = f"the request is not a valid {name} (protobuf decoding failed)"

    def read(data: bytes) -> Any:
        try:
            request = deserializer(data)
        except Exception:  # DecodeError; a wrong wire type or bad UTF-8 in a string field alike
            return Undecodable(refusal)
        if isinstance(request, Message) and (field := nul_field(request)):
            return Undecodable(f"{name}.{field} holds a NUL character (U+0000), which no text of this API may hold")
        return request

    return read


def nul_field(message: Message) -> str:
    """The first string field of ``message`` (nested ones and map keys included) holding a NUL
    character, as a dotted path; "" when none does.

    Protobuf strings may hold U+0000 and SQLite stores it, but PostgreSQL refuses it in text:
    an attack pass's NUL in a cancel reason failed the match's record for a minute of retries
    (health NOT_SERVING meanwhile) and then lost it, and a NUL in an id answered INTERNAL with a
    traceback. No name, id, reason or token has a use for one, so every call but the bot stream
    (whose texts are checked where they are read) is refused at its door, on either store.

    >>> from heartsbot.proto import admin_pb2
    >>> nul_field(admin_pb2.CancelMatchRequest(match_id="m-1", reason="oops\\x00"))
    'reason'
    >>> nul_field(admin_pb2.CancelMatchRequest(match_id="m-1"))
    ''
    """
    for described, value in message.ListFields():
        if described.type == FieldDescriptor.TYPE_STRING:
            if any("\x00" in text for text in (value if described.is_repeated else (value,))):
                return described.name
        elif described.type == FieldDescriptor.TYPE_MESSAGE:
            entry = described.message_type
            if entry.GetOptions().map_entry:
                for key, item in value.items():
                    if isinstance(key, str) and "\x00" in key or isinstance(item, str) and "\x00" in item:
                        return described.name
                    if isinstance(item, Message) and (inner := nul_field(item)):
                        return f"{described.name}.{inner}"
                continue
            for item in value if described.is_repeated else (value,):
                if inner := nul_field(item):
                    return f"{described.name}.{inner}"
    return ""


async def _refuse_undecodable(request: Any, context: grpc.aio.ServicerContext) -> None:
    if type(request) is Undecodable:
        await context.abort(grpc.StatusCode.INVALID_ARGUMENT, request.message)


def _reading_tolerantly(behavior: Callable[..., Any]) -> Callable[..., Any]:
    """A client-streaming ``behavior`` (grpc reflection's, here) whose requests end the call
    INVALID_ARGUMENT at the first message that did not decode; the same kind of callable."""

    async def checked(requests: Any, context: grpc.aio.ServicerContext) -> Any:
        async for request in requests:
            await _refuse_undecodable(request, context)
            yield request

    if inspect.isasyncgenfunction(behavior):
        async def stream(requests: Any, context: grpc.aio.ServicerContext) -> Any:
            async for response in behavior(checked(requests, context), context):
                yield response

        return stream

    async def call(requests: Any, context: grpc.aio.ServicerContext) -> Any:
        return await behavior(checked(requests, context), context)

    return call


def _counted(budget: Budget, behavior: Callable[..., Any], one_request: bool) -> Callable[..., Any]:
    """``behavior`` as a client-streaming handler holding a slot of ``budget`` from the
    call's start to its end (so per-address limits bound even calls whose request has not
    come); the same kind of callable (a coroutine function, or an async generator function
    streaming its responses). ``one_request``: ``behavior`` takes the call's one request,
    waited for at most REQUEST_WAIT_S; else the requests as they come."""

    async def argument(requests: Any, context: grpc.aio.ServicerContext, peer: str) -> Any:
        return await _the_request(context) if one_request else _charged(budget, peer, requests, context)

    if inspect.isasyncgenfunction(behavior):
        async def stream(requests: Any, context: grpc.aio.ServicerContext) -> Any:
            peer = await admit(budget, context)
            try:
                async for response in behavior(await argument(requests, context, peer), context):
                    yield response
            finally:
                budget.release(peer)

        return stream

    async def call(requests: Any, context: grpc.aio.ServicerContext) -> Any:
        peer = await admit(budget, context)
        try:
            return await behavior(await argument(requests, context, peer), context)
        finally:
            budget.release(peer)

    return call


async def _charged(budget: Budget, peer: str, requests: Any, context: grpc.aio.ServicerContext) -> Any:
    """A client-streaming call's ``requests``, each after the first (which its call's start
    paid for) spending a call's worth of ``budget``'s rates: the work is per request, and a
    stream of free requests (reflection's) kept the event loop from the bots (an attack pass).
    Past the rate the call ends RESOURCE_EXHAUSTED, saying when to try again."""
    paid = True
    async for request in requests:
        if not paid:
            try:
                budget.charge(peer, 1.0)
            except BudgetExhausted as exc:
                await _drop_the_rest(requests)
                await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, exc.message,
                                    trailing_metadata=retry_metadata(exc))
        paid = False
        yield request


async def _drop_the_rest(requests: Any) -> None:
    """Read and drop what the client is still sending (until it ends its side, for at most
    DROP_S of sending), before the call ends: a gRPC client whose write fails on a stream
    already ended reports INTERNAL ("Internal error from Core") rather than our status and
    reason. Not with a timed read: one that times out ends the call OK (NOTES.md), and the
    client's quiet stream holds no more than an idle one does."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + DROP_S
    with contextlib.suppress(Exception):  # a broken stream
        async for _ in requests:
            if loop.time() > deadline:
                return


async def _the_request(context: grpc.aio.ServicerContext) -> Any:
    """The call's one request, decoded; the call ends INVALID_ARGUMENT when none comes within
    REQUEST_WAIT_S, when the client ends its side without one, or when it does not decode."""
    try:
        request = await asyncio.wait_for(context.read(), REQUEST_WAIT_S)
    except asyncio.TimeoutError:
        await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"no request message within {REQUEST_WAIT_S:g} s")
    if request is grpc.aio.EOF:
        await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "the call ended without its request message")
    await _refuse_undecodable(request, context)
    return request


def bearer_of(metadata: Any) -> str:
    """The ``authorization: Bearer <token>`` of a call's metadata, or ""."""
    for key, value in metadata or ():
        if key == "authorization":
            scheme, _, token = str(value).partition(" ")
            if scheme.lower() == "bearer":
                return token.strip()
    return ""


async def admit(budget: Budget, context: grpc.aio.ServicerContext) -> str:
    """Take a slot for the call's peer (returned), or end the call RESOURCE_EXHAUSTED. The
    caller releases it (``budget.release(peer)``) when the call ends."""
    peer = peer_address(context.peer())
    try:
        budget.acquire(peer)
    except BudgetExhausted as exc:
        await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, exc.message, trailing_metadata=retry_metadata(exc))
    return peer


def retry_metadata(exc: Exception) -> tuple[tuple[str, str], ...]:
    """The trailing metadata of a refusal: when a spent rate says when to come back, that,
    in ``retry-after-ms`` (heartsbot.pacing waits for it; docs/protocol.md)."""
    wait = getattr(exc, "retry_after_s", None)
    return () if wait is None else ((RETRY_AFTER_KEY, str(max(1, round(wait * 1000)))),)
