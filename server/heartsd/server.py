"""Building and running the daemon: one grpc.aio server with every service.

``build_server(settings, arena)`` binds (port 0 picks a free one) and returns the
server, its port and the health servicer; :func:`serve` adds signal handling and
the graceful shutdown order: NOT_SERVING, stop taking matches, finish or abort and
record running ones, then stop the server.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import errno
import functools
import gc
import hmac
import math
import os
import secrets
import signal
import socket
import sys
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import grpc
import structlog
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from heartsbot.proto import (
    admin_pb2,
    admin_pb2_grpc,
    bot_pb2,
    ladder_pb2,
    ladder_pb2_grpc,
    spectator_pb2,
    spectator_pb2_grpc,
    tournament_pb2,
    tournament_pb2_grpc,
)
from heartsbot.wakeups import drain_grpc_wakeups, drained

from . import descriptors
from .arena import Arena
from .budgets import BudgetInterceptor, Budgets
from .config import Settings
from .db import SETTING, Database, StoreError, is_postgresql, redacted, sqlite_path
from .lease import FENCE_S, HEARTBEAT_S, STALE_S, Lease, LeaseHeld, live_daemons, open_leased
from .orphans import Orphans
from .loop import running_name as running_loop_name
from .services import AdminService, BotService, LadderService, SpectatorService
from .wire import read_play_request
from .store import Store, refuse_damage
from .tournament_service import TournamentService
from .tournaments import Tournaments

if TYPE_CHECKING:
    from heartsbot.client import BotClient

log = structlog.get_logger("heartsd")

# TournamentService's calls that need the admin token (tournament_service.py authorizes them).
TOURNAMENT_ADMIN_METHODS = ("CreateTournament", "PauseTournament", "ResumeTournament", "CancelTournament")

SERVICE_NAMES = (
    bot_pb2.DESCRIPTOR.services_by_name["BotService"].full_name,
    spectator_pb2.DESCRIPTOR.services_by_name["SpectatorService"].full_name,
    admin_pb2.DESCRIPTOR.services_by_name["AdminService"].full_name,
    ladder_pb2.DESCRIPTOR.services_by_name["LadderService"].full_name,
    tournament_pb2.DESCRIPTOR.services_by_name["TournamentService"].full_name,
)


def _response_bytes(message: bot_pb2.PlayResponse | bytes) -> bytes:
    return message if isinstance(message, bytes) else message.SerializeToString()


def add_bot_service(servicer: BotService, server: grpc.aio.Server) -> None:
    """Like the generated ``add_BotServiceServicer_to_server``, except that responses may
    also be pre-serialized ``PlayResponse`` bytes (see wire.py), and bytes that are not a
    ``PlayRequest`` reach the handler as :class:`wire.Unreadable` instead of raising."""
    method = bot_pb2.DESCRIPTOR.services_by_name["BotService"].methods_by_name["Play"]
    handler = grpc.stream_stream_rpc_method_handler(
        servicer.Play,
        request_deserializer=read_play_request,
        response_serializer=_response_bytes,
    )
    generic = grpc.method_handlers_generic_handler(method.containing_service.full_name, {method.name: handler})
    server.add_generic_rpc_handlers((generic,))


def connection_cap(settings: Settings) -> int:
    """The gRPC port's connections at once: ``Settings.connection_limit()``, and never over
    half of the process's descriptors (the web front may hold a quarter; descriptors.py)."""
    return descriptors.share(settings.connection_limit(), 2, descriptors.soft_limit())


def server_options(settings: Settings) -> list[tuple[str, int]]:
    """The gRPC server's channel arguments.

    ``max_pending_requests``: gRPC's core keeps calls that arrived but are not yet taken
    up by the server in a backlog, and past that many (1,000 by default) refuses new ones
    at random (all past the hard limit, 3,000), with a bare INTERNAL. grpc.aio takes calls
    up one at a time on the event loop, so the bots of a full arena reconnecting at once
    (a restart) lost about one in twenty of a 2,000-stream burst. The backlog now holds
    every call the budgets allow; what is over them is refused by the budgets, with
    RESOURCE_EXHAUSTED and a reason (tests/server/test_reconnect_burst.py).

    Connections: each is a file descriptor, and opening one costs a caller nothing. 1,100
    TCP connections that sent nothing took every descriptor of a 1,024-descriptor daemon:
    the health check and the web front stopped answering (tests/server/test_connection_flood.py).
    So the port accepts at most :func:`connection_cap` connections (gRPC closes the ones
    over it at once), and a connection that has not spoken HTTP/2 within
    ``handshake_timeout_s`` is closed. Not set: ``grpc.max_connection_idle_ms`` (GOAWAY to
    a connection with no call), whose filter costs every call ~0.4 KiB, on each of
    thousands of idle bot streams; an idle connection that spoke HTTP/2 answers keepalive
    pings and holds its slot of the cap.

    Streams opened and reset at once ("rapid reset", CVE-2023-44487): each costs gRPC's core
    a call, and one connection doing ~60,000 a second (no token needed) took bots from
    ~3,800 to ~700 decisions/s (an attack pass). ``ping_on_rst_stream_percent`` 100 answers
    every reset with a ping, which a gRPC client answers at once (one small frame per
    cancelled call). A flood that does not answer it, or whose answer waits behind its own
    frames while the server reads them, is ended when the ping times out
    (``keepalive_timeout_s``; GOAWAY ENHANCE_YOUR_CALM): measured, after ~45,000 streams. A
    client that answers its pings promptly while flooding, or reconnects each time it is
    cut, is not stopped by this: gRPC's core has no per-client reset rate, and a public
    daemon needs a proxy that has one (README, "Limits")."""
    backlog = settings.rpc_limit()
    return [
        ("grpc.so_reuseport", 0),  # a second daemon must not silently share the port
        ("grpc.server.max_pending_requests", backlog),
        ("grpc.server.max_pending_requests_hard_limit", 2 * backlog),
        ("grpc.max_allowed_incoming_connections", connection_cap(settings)),
        ("grpc.server_handshake_timeout_ms", int(settings.handshake_timeout_s * 1000)),
        ("grpc.max_receive_message_length", settings.max_message_bytes),
        ("grpc.max_send_message_length", 16 * 1024 * 1024),
        ("grpc.keepalive_time_ms", int(settings.keepalive_s * 1000)),
        ("grpc.keepalive_timeout_ms", int(settings.keepalive_timeout_s * 1000)),
        ("grpc.http2.ping_timeout_ms", int(settings.keepalive_timeout_s * 1000)),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.http2.min_ping_interval_without_data_ms", 5000),
        ("grpc.http2.max_pings_without_data", 0),
        ("grpc.http2.ping_on_rst_stream_percent", 100),
        # Pings are answered at any rate, never met with GOAWAY "too_many_pings": gRPC's core
        # (1.85) then went on reading the connection and spun a core for as long as the
        # client kept it open (an attack pass: no match moved with two such connections).
        # Answering costs ~3% of a core at 20,000 pings a second; a flood at loopback speed
        # costs while it lasts, as other frame floods do (README, "Limits").
        ("grpc.http2.max_ping_strikes", 0),
    ]


class ListenError(OSError):
    """The daemon cannot listen where it was told to; the message says why and what to do."""


def host_port(host: str, port: int) -> str:
    """``host:port`` as gRPC and people read it: an IPv6 host in brackets, given with or
    without them (``--host ::1`` was "cannot listen on ::1:0": an operator's attack pass).

    >>> host_port("::1", 50051), host_port("[::1]", 0), host_port("127.0.0.1", 7)
    ('[::1]:50051', '[::1]:0', '127.0.0.1:7')
    """
    bare = host.strip("[]")
    return f"[{bare}]:{port}" if ":" in bare else f"{bare}:{port}"


def probe_port(host: str, port: int, setting: str = "--port (HEARTSD_PORT; 0 picks a free one)") -> None:
    """Fail with a clear :class:`ListenError` if ``host:port`` cannot be bound, before gRPC
    tries (it logs a C-level error and raises a generic RuntimeError)."""
    if port == 0:
        return
    try:
        infos = socket.getaddrinfo(host.strip("[]") or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise ListenError(f"cannot listen on {host_port(host, port)}: {host!r} is not a known address ({exc.strerror}); "
                          "fix --host (HEARTSD_HOST)") from None
    for family, kind, proto, _, address in infos:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as gRPC does: TIME_WAIT is no conflict
            try:
                probe.bind(address)
            except OSError as exc:
                raise ListenError(listen_problem(host, port, exc.errno, setting)) from None


def listen_problem(host: str, port: int, code: int | None,
                   setting: str = "--port (HEARTSD_PORT; 0 picks a free one)") -> str:
    where = f"cannot listen on {host_port(host, port)}"
    if code == errno.EADDRINUSE:
        return (f"{where}: the port is in use (another heartsd, or another program); stop it, or choose another "
                f"{setting}")
    if code == errno.EADDRNOTAVAIL:
        return f"{where}: {host} is not an address of this machine; fix --host (HEARTSD_HOST)"
    if code == errno.EACCES:
        return f"{where}: permission denied (ports below 1024 need privileges); choose another --port (HEARTSD_PORT)"
    return f"{where}; check --host and --port (HEARTSD_HOST, HEARTSD_PORT)"


def new_server(settings: Settings, budgets: Budgets) -> tuple[grpc.aio.Server, int]:
    """A gRPC server bound to the settings' address (port 0: a free one), its calls counted
    against ``budgets`` (the arena's); (server, port). Bound before anything else happens,
    so a daemon that cannot listen touches nothing."""
    probe_port(settings.host, settings.port)
    cap = connection_cap(settings)
    if cap < settings.connection_limit():
        log.warning("gRPC connections capped below max_connections by the file descriptor limit; raise it "
                    "(ulimit -n) to serve more bots", max_connections=settings.connection_limit(), cap=cap,
                    descriptors=descriptors.soft_limit())
    # The bot stream (SERVICE_NAMES[0]) counts itself against budgets.bots: BotService.Play.
    # A tournament's admin calls are admin calls: as spectator calls (before, a contract
    # check), public reads from the organiser's address refused them RESOURCE_EXHAUSTED.
    interceptor = BudgetInterceptor({
        SERVICE_NAMES[1]: budgets.spectators,
        SERVICE_NAMES[3]: budgets.spectators,  # the ladder's reads are public, like spectating
        SERVICE_NAMES[4]: budgets.spectators,  # tournaments: their public reads
        **{f"{SERVICE_NAMES[4]}/{method}": budgets.admin for method in TOURNAMENT_ADMIN_METHODS},
        SERVICE_NAMES[2]: budgets.admin,
        health_pb2.DESCRIPTOR.services_by_name["Health"].full_name: budgets.infra,  # Watch: a stream
        health_pb2.DESCRIPTOR.services_by_name["Health"].full_name + "/Check": budgets.probes,
        reflection.SERVICE_NAME: budgets.infra,
    }, admin=budgets.admin, public=budgets.spectators,
       is_admin=lambda token: hmac.compare_digest(token.encode(), settings.admin_token.encode()))
    server = grpc.aio.server(options=server_options(settings), maximum_concurrent_rpcs=settings.rpc_limit(),
                             interceptors=[interceptor])
    address = host_port(settings.host, settings.port)
    tls = settings.tls_files()
    try:
        if tls is None:
            port = server.add_insecure_port(address)
        else:
            cert, key, client_ca = tls
            credentials = grpc.ssl_server_credentials(
                [(key, cert)], root_certificates=client_ca, require_client_auth=client_ca is not None)
            port = server.add_secure_port(address, credentials)
    except RuntimeError:
        port = 0
    if port == 0:
        raise ListenError(listen_problem(settings.host, settings.port, None))
    # grpc.aio's completion reader is on the loop now (the server made it): one pass per batch
    if settings.grpc_wakeup_drain and not drain_grpc_wakeups(asyncio.get_running_loop()):
        log.info("grpc wake-ups not drained: its reader is not on this loop's selector (uvloop, or another gRPC)",
                 event_loop=running_loop_name())
    return server, port


async def build_server(settings: Settings, arena: Arena) -> tuple[grpc.aio.Server, int, health.aio.HealthServicer]:
    server, port = new_server(settings, arena.budgets)
    return server, port, add_services(server, arena)


def add_services(server: grpc.aio.Server, arena: Arena) -> health.aio.HealthServicer:
    """Every service on ``server`` (before it starts); the health servicer."""
    arena.loop_monitor.start()  # the loop's lag: exported, and never charged to a bot (lag.py)
    add_bot_service(BotService(arena), server)
    spectator_pb2_grpc.add_SpectatorServiceServicer_to_server(SpectatorService(arena), server)
    admin_pb2_grpc.add_AdminServiceServicer_to_server(AdminService(arena), server)
    ladder_pb2_grpc.add_LadderServiceServicer_to_server(LadderService(arena), server)
    arena.tournaments = Tournaments(arena)  # type: ignore[attr-defined]  # the directors of this daemon's tournaments
    tournament_pb2_grpc.add_TournamentServiceServicer_to_server(TournamentService(arena.tournaments), server)  # type: ignore[attr-defined]
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection(
        (*SERVICE_NAMES, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name, reflection.SERVICE_NAME), server
    )
    return health_servicer


@dataclass
class LadderRun:
    """The ladder's tasks in this process: the matchmaker and the house bots' clients."""

    matchmaker: asyncio.Task[None] | None = None
    house: list[tuple[BotClient, asyncio.Task[None]]] = field(default_factory=list)
    stopping: bool = False

    def stop_matchmaking(self) -> None:
        if self.matchmaker is not None:
            self.matchmaker.cancel()

    def drain_house(self) -> None:
        """The house bots take no new match and finish their running ones: unrated ones in the
        shutdown's grace (a rated one ends at once: Arena.shutdown)."""
        self.stopping = True
        for client, _ in self.house:
            client.drain("server shutdown")

    def house_left(self, bot: str, task: asyncio.Task[None]) -> None:
        """A house bot's client ended before the daemon stopped: its token changed. Before
        (an attack pass), two daemons of one store both given --ladder-house took the house
        bots from each other at each start (a start rotates their tokens), and the first
        one's just left, logged at info: its ladder went on without them, unexplained."""
        if self.stopping or task.cancelled():
            return
        if (error := task.exception()) is not None:  # not a token change: say what it was (a review)
            log.error("a house bot stopped playing here", bot=bot, error=str(error) or type(error).__name__)
            return
        log.warning("a house bot stopped playing here: its token changed. Another daemon of this store started "
                    "with --ladder-house plays it now (give --ladder-house to one daemon of a store), or an organiser "
                    "rotated or revoked it", bot=bot)

    async def stop(self) -> None:
        self.stopping = True
        self.stop_matchmaking()
        for client, task in self.house:
            client.stop()
            task.cancel()
        tasks = [t for _, t in self.house] + ([self.matchmaker] if self.matchmaker else [])
        await asyncio.gather(*tasks, return_exceptions=True)


async def start_ladder(settings: Settings, arena: Arena, port: int) -> LadderRun:
    """The matchmaker, and the house strategies playing as registered ladder bots over
    loopback gRPC like any other bot (each start issues them fresh tokens)."""
    if not settings.ladder:
        return LadderRun()
    from heartsbot.client import BotClient
    from heartsbot.strategies import make_strategy

    from .ladder import LadderError
    from .matchmaker import LadderSettings, Matchmaker

    loop = asyncio.get_running_loop()
    run = LadderRun()
    ladder = arena.store.ladder
    seen: dict[str, int] = {}
    house: set[str] = set()
    for i, name in enumerate(settings.ladder_house):
        seen[name] = seen.get(name, 0) + 1
        bot = f"house-{name}" if seen[name] == 1 else f"house-{name}-{seen[name]}"
        try:
            token = ladder.add_bot(bot, owner=bot)
        except LadderError:
            if ladder.owners(include_revoked=True).get(bot) != bot:
                log.warning("not taking over a registered bot for a house strategy", bot=bot)
                continue
            if bot not in ladder.owners():
                log.info("house bot revoked by an organiser: not playing it", bot=bot)
                continue
            token = ladder.rotate(bot)
        # Seeded afresh at every start: seeded with its place in the list, it passed the same
        # positions of its hand after every start, and its receiver learned what it still held.
        strategy = make_strategy(name, seed=secrets.randbits(63))
        client = BotClient(f"127.0.0.1:{port}", token, strategy, bot, rulesets=[settings.ladder_ruleset], max_matches=2,
                           think=arena.think if strategy.searches else None)
        house.add(bot)
        task = loop.create_task(client.run())
        task.add_done_callback(functools.partial(run.house_left, bot))
        run.house.append((client, task))
    matchmaker = Matchmaker(arena, LadderSettings(settings.ladder_ruleset, settings.ladder_deals,
                                                  settings.ladder_interval_s, settings.ladder_same_owner,
                                                  house=frozenset(house), fill_only=settings.ladder_fill,
                                                  set_tables=settings.ladder_set_tables))
    run.matchmaker = loop.create_task(matchmaker.run())
    log.info("ladder on", ruleset=settings.ladder_ruleset, house_bots=sorted(house))  # those started, not those asked
    return run


@contextlib.asynccontextmanager
async def embedded(settings: Settings, arena_class: type[Arena] = Arena,
                   grace_s: float = 1.0, leased: bool = False) -> AsyncIterator[tuple[Arena, int]]:
    """A daemon inside this process (its store, arena and gRPC server on ``settings``),
    serving until the block ends: for tests, ``heartsbot local``, the conformance kit and
    benchmarks. Yields (arena, bound port). ``leased``: the store may be an operator's
    (``--db``), and is refused, a StoreError, while any daemon serves it (local_store)."""
    store, lease = local_store(settings) if leased else (Store(settings.db_path, settings.instance), None)
    arena = arena_class(settings, store)
    try:
        server, port, health_servicer = await build_server(settings, arena)
        await server.start()
        await set_serving(health_servicer, True)
        stop_reporting = report_store_health(arena, health_servicer)
        await arena.tournaments.resume_all()  # type: ignore[attr-defined]
        try:
            yield arena, port
        finally:
            stop_reporting()
            await arena.tournaments.stop()  # type: ignore[attr-defined]
            await arena.shutdown(grace_s)
            await server.stop(0.5)
    finally:
        arena.thinkers.close()
        await close_leased(store, lease)


async def close_leased(store: Store, lease: Lease | None, release_row: bool = True) -> None:
    """Close ``store`` and let go of its ``lease`` (lease.open_leased's) in the one safe order:
    a lease that is a row in the store is released through it (off the event loop), before it
    closes; a lock on the database file after the store's last connection. ``release_row``
    False: a store that cannot be reached, where the release would wait on it (the row goes
    stale instead)."""
    if lease is not None and not lease.outlives_store and release_row:
        await asyncio.to_thread(lease.release)
    store.close()
    if lease is not None and lease.outlives_store:
        lease.release()


def local_store(settings: Settings) -> tuple[Store, Lease | None]:
    """The store of a command's embedded daemon (``heartsbot local --db``, ``heartsd
    tournament local --db``), refused (StoreError) while any daemon serves it, and leased
    for the command's run as ``heartsd serve`` leases it. Before (an organiser's pass), such
    a command on the store of a running arena was a second daemon of its instance there: it
    directed that daemon's tournaments too, and wrote its own tournament and matches into the
    arena's history."""
    live = live_daemons(settings.db_path)  # looked at before this process holds any lock of the file
    if live:
        raise StoreError(f"another heartsd is running on the store {settings.db_path} ({'; '.join(live)}): this "
                         f"command would write its matches into that daemon's store. Leave {SETTING} out (a store "
                         "of its own for this run) or name another file")
    try:
        return open_leased(settings.db_path, settings.instance, lambda: Store(settings.db_path, settings.instance))
    except LeaseHeld as exc:  # a daemon that started since the look above
        raise StoreError(f"{exc}") from None


def tune_gc() -> None:
    """Keep what start-up made (it lives as long as the daemon) out of every collection,
    and collect less often: a decision allocates many short-lived objects and no cycles.
    Called once the daemon has started; benchmarks of the daemon's work call it too."""
    gc.freeze()
    gc.set_threshold(50_000, 20, 20)


async def set_serving(health_servicer: health.aio.HealthServicer, serving: bool) -> None:
    status = health_pb2.HealthCheckResponse.SERVING if serving else health_pb2.HealthCheckResponse.NOT_SERVING
    for name in ("", *SERVICE_NAMES):
        await health_servicer.set(name, status)


async def serve(
    settings: Settings, on_ready: asyncio.Future[int] | None = None, stop: asyncio.Event | None = None,
    show_admin_token: bool = False,
) -> None:
    """Run until SIGTERM/SIGINT (or until ``stop`` is set), then shut down gracefully.

    The order protects a live daemon from a second one started by mistake: bind the
    port (ListenError), then take the store's lease for this instance (LeaseHeld), and
    only then open the store and mark aborted the matches this instance left running."""
    before, after = descriptors.raise_limit()
    if before != after:
        log.info("file descriptor limit raised", before=before, after=after)
    budgets = Budgets.from_settings(settings)
    server, port = new_server(settings, budgets)
    try:
        web = settings.web_address
        if web is not None:  # the web front's port too (it binds once the arena exists)
            probe_port(*web, setting="--web HOST:PORT (HEARTSD_WEB)")
        store, lease = open_leased(settings.db_path, settings.instance, functools.partial(_open_checked, settings))
    except BaseException:
        await server.stop(None)
        raise
    unreachable = False
    try:
        await _serve(settings, server, port, store, lease, budgets, on_ready, stop, show_admin_token)
    except StoreUnreachable:
        unreachable = True  # a release through the store would wait on it; the row goes stale instead
        raise
    finally:
        await close_leased(store, lease, release_row=not unreachable)


def _open_checked(settings: Settings) -> Store:
    """The daemon's store, its SQLite file checked first (``store_check``: refuse_damage) on a
    read-only connection of its own, before the store's read-write one exists. Checked on
    that one (as it was: Store had a ``check`` argument), a refusal closed it, and SQLite's close checkpointed the
    file's -wal into it and deleted the log (an organiser's pass: a backup put back beside
    the old -wal; the refusal said to move the -wal away, which was gone by then, and the
    copy had been written into)."""
    path = sqlite_path(settings.db_path)
    if settings.store_check and not is_postgresql(settings.db_path) and os.path.isfile(path):
        reader = Database.open(settings.db_path, create=False, read_only=True)
        try:
            refuse_damage(reader, settings.db_path)
        finally:
            reader.close()
    return Store(settings.db_path, settings.instance)


def stop_signals() -> tuple[signal.Signals, ...]:
    """SIGTERM, SIGINT, and SIGHUP unless it is ignored (``nohup heartsd serve``): a daemon
    started from a terminal that closes (an SSH session ending) got SIGHUP and died at once,
    with no drain and its running matches left for the next start to mark aborted (an
    operator's pass). Now it shuts down as on SIGTERM."""
    hup = () if signal.getsignal(signal.SIGHUP) is signal.SIG_IGN else (signal.SIGHUP,)
    return (signal.SIGTERM, signal.SIGINT, *hup)


def _on_signal(sig: signal.Signals, action: Callable[..., None], *args: Any) -> None:
    """``action(*args)``; after SIGHUP, first point stdout and stderr that were the closed
    terminal at /dev/null: writing to a hung-up terminal fails (EIO), and the first log line
    of the shutdown would end the daemon before its drain (the review of this change)."""
    if sig == signal.SIGHUP:
        devnull = os.open(os.devnull, os.O_WRONLY)
        for fd in (1, 2):
            if os.isatty(fd):
                os.dup2(devnull, fd)
        os.close(devnull)
    action(*args)


class _Hurry:
    """The signals that come during the stop: the first aborts and records the running
    matches now (the stop's own signal was the one before it); one more while they are being
    aborted (their records stuck behind a store that does not answer) exits at once, as an
    operator pressing Ctrl-C again expects. Before, every signal after the second did
    nothing, and only SIGKILL ended a daemon stuck on its store. The matches not recorded
    then are marked aborted, with their last checkpoint, at the next start, as after a crash.
    A stop the store's loss began (_keep_lease) is hurried already: its first signal is
    counted, not taken for a second (a review: it exited at once, saying "another")."""

    def __init__(self, hurry: asyncio.Event) -> None:
        self.hurry = hurry
        self.signalled = False

    def __call__(self) -> None:
        if self.signalled:
            _exit_now(1, "another signal while the running matches are aborted: exiting now; those not recorded "
                         "yet are marked aborted at the next start")
        self.signalled = True
        if self.hurry.is_set():
            log.warning("signal: the running matches are being aborted already; another signal exits at once")
            return
        log.warning("second signal: aborting and recording the running matches now; another signal exits at once")
        self.hurry.set()


def _exit_now(code: int, why: str) -> None:
    """End the process at once: no thread joined, nothing waited for."""
    log.error(why)
    with contextlib.suppress(Exception):
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(code)


def _bound_exit(seconds: float) -> threading.Timer:
    """After ``seconds``, end the process (exit 2) if it still runs.

    Started when the stop is hurried (a second signal, or the store lost, _keep_lease): the
    running matches are aborted then, and their records written; a store that does not
    answer held the exit for as long as its writes and the threads stuck in them took
    (PostgreSQL's connection timeouts bound each, but a stop makes several), so a fenced
    daemon's supervisor waited to start it again. What was not recorded is marked aborted
    at the next start, as after a crash."""
    timer = threading.Timer(seconds, _exit_now, (2, f"the stop did not end within {seconds:g} s of aborting the "
                                                   "running matches (hurried_exit_s; is the store answering?): "
                                                   "exiting now; the matches not recorded are marked aborted at "
                                                   "the next start"))
    timer.daemon = True
    timer.start()
    return timer


async def _bound_exit_when(hurry: asyncio.Event, seconds: float) -> None:
    await hurry.wait()
    _bound_exit(seconds)


class StoreUnreachable(StoreError):
    """The daemon stopped because it could not renew its store lease (_keep_lease): exit 2,
    so a supervisor starts it again, and it serves once the store answers."""


async def _keep_lease(lease: Lease, stop: asyncio.Event, hurry: asyncio.Event) -> str | None:
    """Renew the lease; if another daemon took it over (this one stalled past STALE_S),
    this one stops: that daemon has already marked this one's matches aborted. So it does
    when its SQLite store was moved or deleted under it (FileLease.heartbeat), and the
    running matches are aborted at once, as after a second signal, also when that happens
    during the shutdown's grace: a match let finish would be announced finished into a file
    nobody opens again (an operator's pass: 19 matches after the loss).

    It also stops when the lease has gone unrenewed for FENCE_S, the heartbeat failing or
    not answering at all (a store behind a network that drops packets): past STALE_S
    another daemon of this instance may take the lease over and publish the seeds of the
    matches this one still plays. Before (an attack pass on PostgreSQL), a daemon cut off
    from its store retried for ever and sent 81 more requests while every hand was public.
    Returns why it stopped the daemon: "lost", or the "unrenewed" message (then the daemon
    exits 2, StoreUnreachable)."""
    loop = asyncio.get_running_loop()
    # Its own thread: in the default pool a renewal waited behind every store call (a review:
    # a saturated pool fenced a daemon whose store was fine); one renewal at a time.
    renewer = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="heartsd-lease")
    fence_s = FENCE_S if lease.taken_over_when_stale else math.inf
    renewed = sent = loop.time()  # when the last renewal that succeeded was sent (the lease was just taken)
    try:
        while True:
            # Every HEARTBEAT_S from the last one sent, or at once if that one took longer.
            await asyncio.sleep(max(0.0, sent + HEARTBEAT_S - loop.time()))
            sent = loop.time()
            renewal = loop.run_in_executor(renewer, lease.heartbeat)
            while True:  # a renewal that does not answer is waited for, not doubled, while the fence nears
                done, _ = await asyncio.wait({renewal}, timeout=HEARTBEAT_S)
                if done or loop.time() - renewed >= fence_s:
                    break
            if done:
                try:
                    held = renewal.result()
                except Exception:
                    log.warning("could not renew the store lease; retrying", exc_info=True)
                else:
                    if not held:
                        log.error(lease.lost_reason)
                        log.warning("the store is lost: aborting the running matches now, not finishing them into it")
                        hurry.set()
                        stop.set()
                        return "lost"
                    renewed = sent
            unrenewed = loop.time() - renewed
            if unrenewed >= fence_s:
                why = (f"could not renew the store lease for {unrenewed:.0f} s: another daemon of this instance may "
                       f"take it over after {STALE_S:.0f} s, so this one aborted its running matches and stopped; "
                       f"it serves again once started with the store reachable")
                log.error(why, fence_s=FENCE_S)
                hurry.set()
                stop.set()
                return why
    finally:
        renewer.shutdown(wait=False)


def report_store_health(arena: Arena, health_servicer: health.aio.HealthServicer) -> Callable[[], None]:
    """While the store takes no writes the health check answers NOT_SERVING (and SERVING
    again once it does): an orchestrator or an operator polling it sees the failure, where
    before it saw SERVING (an operator's pass). Returns what ends that at a stop, whose
    NOT_SERVING then stays; the log still tells of the store."""
    loop = asyncio.get_running_loop()
    pending: set[asyncio.Task[None]] = set()
    stopping = asyncio.Event()

    def changed(ok: bool) -> None:
        if ok:
            log.warning("the store takes writes again", failures=arena.store_health.failures)
        else:
            log.error("the store is failing: the health check answers NOT_SERVING until it takes writes again",
                      error=arena.store_health.error)
        async def apply() -> None:
            if not stopping.is_set():
                await set_serving(health_servicer, ok)

        if not stopping.is_set():
            task = loop.create_task(apply())
            pending.add(task)
            task.add_done_callback(pending.discard)

    arena.store_health.on_change = changed
    return stopping.set


async def _serve(settings: Settings, server: grpc.aio.Server, port: int, store: Store, lease: Lease | None,
                 budgets: Budgets, on_ready: asyncio.Future[int] | None, stop: asyncio.Event | None, show_admin_token: bool) -> None:
    try:
        aborted = store.abort_interrupted()
    except Exception as exc:  # sqlite3's or psycopg's: before (an operator's pass), a traceback and exit 1
        raise StoreError(f"cannot write to the store {redacted(settings.db_path)} ({SETTING}) at start: "
                         f"{exc}{'; free space on its filesystem' if 'full' in str(exc) else ''}") from None
    if aborted:
        log.warning("matches interrupted by the last stop are marked aborted", matches=aborted)
    orphans = Orphans(settings, store, lease)
    await asyncio.to_thread(orphans.abort_matches)
    arena = Arena(settings, store, budgets)
    health_servicer = add_services(server, arena)
    arena.tournaments.adopt = orphans.adopt_tournament  # type: ignore[attr-defined]
    web = None
    if settings.web:  # its port was probed before the store was opened (serve)
        from .web.app import WebFront

        web = WebFront(settings, arena)
        await web.start()
    await server.start()
    await set_serving(health_servicer, True)
    stop_reporting = report_store_health(arena, health_servicer)
    stop = stop or asyncio.Event()
    hurry = asyncio.Event()  # a second signal, or the store lost: abort the running matches now
    keeper = asyncio.get_running_loop().create_task(_keep_lease(lease, stop, hurry)) if lease is not None else None
    bounding = asyncio.get_running_loop().create_task(_bound_exit_when(hurry, settings.hurried_exit_s))
    loop = asyncio.get_running_loop()
    signals = stop_signals()
    for sig in signals:
        try:
            loop.add_signal_handler(sig, _on_signal, sig, stop.set)
        except (NotImplementedError, RuntimeError):
            pass
    log.info("heartsd serving", host=settings.host, port=port, db=redacted(settings.db_path),
             event_loop=running_loop_name(), grpc_wakeups_drained=drained(loop) is not None)
    # Read the ladder's tokens now, not at the first bot's call: that read warns of configured
    # bots whose names ladder registrations also bear, or bear in another case (check_tokens).
    # Before (an organiser's pass), a daemon no bot had called yet said nothing of them.
    arena.tokens.start()
    for name in settings.idle_settings():
        log.warning("a ladder setting is given but the ladder is off (--ladder, HEARTSD_LADDER): it does nothing",
                    setting=name)
    if show_admin_token:
        print(f"admin token (generated for this run): {settings.admin_token}", flush=True)
    print(f"heartsd listening on {host_port(settings.host, port)}", flush=True)
    if web is not None:
        print(f"heartsd web front on {web.url}", flush=True)
    if on_ready is not None:
        on_ready.set_result(port)
    if settings.searching_strategies():
        arena.thinkers.warm()
    arena.start_house_matches()
    ladder = await start_ladder(settings, arena, port)
    await arena.tournaments.resume_all()  # type: ignore[attr-defined]
    tune_gc()
    await stop.wait()
    # The order: NOT_SERVING and no new match; the rated ones end at once, the others may
    # finish within the grace; a second signal aborts and records them.
    hurrier = _Hurry(hurry)
    for sig in signals:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, _on_signal, sig, hurrier)
    log.info("shutting down: running matches may finish; a second signal (SIGINT, SIGTERM, SIGHUP) aborts and "
             "records them now",
             running_matches=len(arena.runners), grace_s=settings.shutdown_grace_s)
    stop_reporting()
    await set_serving(health_servicer, False)
    ladder.stop_matchmaking()
    ladder.drain_house()
    await arena.tournaments.stop()  # type: ignore[attr-defined]
    if web is not None:
        await web.stop()  # its seats go the way of disconnected bots; running matches end below
    await arena.shutdown(settings.shutdown_grace_s, hurry)
    await ladder.stop()
    arena.thinkers.close()
    await server.stop(2)
    bounding.cancel()  # a timer it started runs on: what follows may wait on threads stuck in the store
    if keeper is not None:
        keeper.cancel()
    log.info("stopped")
    if keeper is not None and keeper.done() and not keeper.cancelled() and (why := keeper.result()) not in (None, "lost"):
        raise StoreUnreachable(why)
