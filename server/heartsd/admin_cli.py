"""``heartsd admin``: run an arena from the terminal, over its public gRPC API.

    heartsd admin bots [--all]                          # connected (and registered) bots, their slots and matches
    heartsd admin matches [--status S] [--limit N] [--all | --page-token T]
    heartsd admin create --seat alice --seat house:heuristic ... [--deals N] [--wait S] [--target N]
    heartsd admin cancel MATCH_ID [--reason TEXT]
    heartsd admin watch MATCH_ID                        # the match live: trick, tricks, score sheet

Every command talks to a running daemon (``--server``, or HEARTS_SERVER; default
127.0.0.1:50051) with the admin token (``--admin-token`` or HEARTSD_ADMIN_TOKEN); ``watch``
and ``matches`` need no token (they are the spectators' API). A daemon that serves TLS
is reached with the TLS options every client takes (``--tls``, ``--ca``, ``--cert``,
``--key``: heartsbot.tls). ``--json`` prints the
response as JSON instead of tables. Output is drawn with rich (tables, a live view).

Exit codes, those of every Hearts Arena client (heartsbot.exits): 0 done; 2 a usage
error; 3 the daemon refused the call (its status and reason are printed); 4 the daemon
could not be reached.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import grpc
from google.protobuf import json_format
from rich.console import Console
from rich.live import Live
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from heartsbot import tls
from heartsbot.exits import EXIT_REFUSED, EXIT_UNREACHABLE, EXIT_USAGE
from heartsbot.help import DefaultsHelp
from heartsbot.pacing import paced
from .logs import printable  # re-exported: the CLI's commands escape with it too
from heartsbot.options import DEFAULT_SERVER, INT32_MAX, at_least, seconds, server_target, shuffle_seed
from heartsbot.proto import admin_pb2, admin_pb2_grpc, game_pb2, spectator_pb2, spectator_pb2_grpc

from .watch import STATUS, TableView

P = game_pb2
STATUSES = {"running": P.MATCH_STATUS_RUNNING, "finished": P.MATCH_STATUS_FINISHED,
            "aborted": P.MATCH_STATUS_ABORTED, "cancelled": P.MATCH_STATUS_CANCELLED}


class Refused(Exception):
    """The daemon answered with an error status (``code``, when it came over gRPC)."""

    def __init__(self, message: str, code: grpc.StatusCode | None = None) -> None:
        super().__init__(message)
        self.code = code


class _Console(Console):
    """rich's console, but a closed stdout raises BrokenPipeError like a plain print, for
    heartsd's entry point to end quietly (heartsbot.exits.quiet_on_closed_stdout): rich's
    own answer is exit 1, the code the clients keep for a bot that failed."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise BrokenPipeError(errno.EPIPE, "stdout was closed")


def literal(*cells: str) -> list[Text]:
    r"""Strings that came from the daemon (bot names, versions, owners, rulesets, reasons),
    as table cells drawn as they are, their control and format characters escaped. rich
    reads a plain string as markup, so a bot whose hello.version is "1.0[/]" would crash an
    organiser's command, and "[link=...]" would plant a link in their terminal; and a raw
    escape sequence does the same without markup (an attack pass: a version cleared the
    screen and planted a link, and a line break drew a made-up row). The daemon refuses
    such versions now; a store may still hold one from before, frozen in a roster.

    >>> [cell.plain for cell in literal("v1.0", "1.0\x1b[2J\r\n", "a\u202eb")]
    ['v1.0', '1.0\\x1b[2J\\r\\n', 'a\\u202eb']
    """
    return [Text(printable(cell)) for cell in cells]


def add_parser(sub: Any) -> None:
    """The ``admin`` command and its subcommands, under heartsd's parser."""
    admin = sub.add_parser("admin", help="create, cancel, list and watch matches; list bots (over gRPC)",
                           description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = admin.add_subparsers(dest="admin_command", required=True)

    def command(name: str, text: str, run: Callable[[argparse.Namespace, Console], int]) -> argparse.ArgumentParser:
        p = commands.add_parser(name, help=text, description=text, formatter_class=DefaultsHelp)
        p.add_argument("--server", default=os.environ.get("HEARTS_SERVER", DEFAULT_SERVER), type=daemon_target, metavar="HOST:PORT",
                       help="the daemon (env HEARTS_SERVER)")
        p.add_argument("--admin-token",
                       help="the daemon's admin token (env HEARTSD_ADMIN_TOKEN; printed by heartsd serve; "
                            "default: none, which only matches and watch accept)")
        p.add_argument("--json", action="store_true", help="print the response as JSON")
        p.add_argument("--timeout", type=wait_seconds, default=10.0, help="seconds to wait for the daemon's answer")
        tls.add_options(p)
        p.set_defaults(run=lambda args: run_command(args, run))
        return p

    bots = command("bots", "list connected bots (draining or not): version, slots in use, reserved, their matches",
                   _bots)
    bots.add_argument("--all", action="store_true", help="also list registered and configured bots not connected")
    matches = command("matches", "list matches, newest first, a page at a time", list_matches)
    matches.add_argument("--status", choices=sorted(STATUSES), help="only matches with this status (default: any)")
    matches.add_argument("--limit", type=int, default=20, help="matches per page (at most 1000)")
    matches.add_argument("--page-token", default="",
                         help="the next_page_token a previous page printed (default: the first page)")
    matches.add_argument("--all", action="store_true", help="follow every page to the end")
    create = command("create", "start a match between connected bots and/or house bots", _create)
    create.add_argument("--seat", action="append", required=True, metavar="BOT|house:STRATEGY",
                        help="a seat, clockwise from seat 0 (required; repeat once per seat)")
    create.add_argument("--ruleset", default="standard", help="standard, classic, hartenjagen, hartenjagen-quick, omnibus")
    create.add_argument("--deals", type=at_least(0), default=0, help="fixed deals (0: a game to the preset's end)")
    create.add_argument("--seed", type=shuffle_seed, help="the shuffle seed (default: random)")
    create.add_argument("--rated", action="store_true", help="count the result on the ladder")
    create.add_argument("--decision-ms", type=at_least(0), default=0, help="time per decision (0: the daemon's default)")
    # The ruleset options (CreateMatchRequest.options); the daemon refuses one its preset does not take.
    create.add_argument("--target", type=at_least(1), default=0, help="classic: the target total (default: 100)")
    create.add_argument("--hartenjagen-passing", action="store_true", help="hartenjagen: play with passing")
    create.add_argument("--moon-requires-bonus", action="store_true", help="omnibus: the moon also needs J♦")
    create.add_argument("--wait", type=seconds(INT32_MAX // 1000), default=0.0, metavar="SECONDS",
                        help="wait this long for busy or absent bots, holding their next free slots")
    cancel = command("cancel", "stop a running match; it is recorded as cancelled", _cancel)
    cancel.add_argument("match_id")
    cancel.add_argument("--reason", default="cancelled by an admin", help="why, for the record")
    watch = command("watch", "watch a live match: the trick in play, the deal's tricks, the score sheet", _watch)
    watch.add_argument("match_id")
    watch.add_argument("--plain", action="store_true",
                       help="print the table after each trick instead of a live view (also when not a terminal)")


def run_command(args: argparse.Namespace, command: Callable[[argparse.Namespace, Console], int],
                prog: str = "heartsd admin") -> int:
    """Run one subcommand with a console sized for where it prints, its errors mapped to
    the exit codes of every client (2 usage, 3 refused, 4 unreachable: heartsbot.exits)."""
    console = _Console()
    if not console.is_terminal:  # a pipe or a file: no wrapping at 80 columns
        console = _Console(width=200)
    try:
        return command(args, console)
    except BrokenPipeError:  # a ConnectionError, but stdout's, not the daemon's
        raise
    except Refused as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return EXIT_REFUSED
    except ValueError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except ConnectionError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return EXIT_UNREACHABLE


def daemon_target(value: str) -> str:
    """``--server`` (an argparse ``type``): heartsbot's HOST:PORT or gRPC target, but not a
    web address. Before (an operator's pass), ``--server http://127.0.0.1:50051`` (as the web
    front's address is written) was taken for a target URI and failed as "could not connect
    ... errors resolving http://...: is heartsd running there?", exit 4.

    >>> daemon_target("127.0.0.1:50051")
    '127.0.0.1:50051'
    >>> daemon_target("https://arena.example:443")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: expected HOST:PORT, got 'https://arena.example:443': the daemon's gRPC address, without https:// (arena.example:443; add --tls for TLS)
    """
    scheme, sep, rest = value.partition("://")
    if sep and scheme.lower() in ("http", "https"):
        tls = "; add --tls for TLS" if scheme.lower() == "https" else ""
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {value!r}: the daemon's gRPC address, without "
                                         f"{scheme}:// ({rest.rstrip('/')}{tls})")
    return str(server_target(value))


def wait_seconds(value: str) -> float:
    """An argparse ``type``: a --timeout or --interval, above 0 and at most a day. Before (an
    operator's pass), ``--timeout 0``, ``-1``, ``nan`` or ``inf`` ended every call at once as
    "DEADLINE_EXCEEDED: Deadline Exceeded", exit 3, a daemon there or not, and ``watch
    --interval -1`` as "sleep length must be non-negative".

    >>> wait_seconds("2.5")
    2.5
    >>> wait_seconds("0")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: must be above 0 and at most 86400 seconds, got 0
    """
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {value!r}") from None
    if not 0 < number <= 86400:  # NaN fails too
        raise argparse.ArgumentTypeError(f"must be above 0 and at most 86400 seconds, got {value}")
    return number


def admin_token(args: argparse.Namespace) -> str:
    """The admin token to present (``--admin-token``, else HEARTSD_ADMIN_TOKEN; never a
    shown default), without the spaces and line ends around it, which the daemon strips too:
    read from a file written on Windows, its line end made every call fail "INTERNAL: Invalid
    metadata" (exit 3, as if the daemon refused; an organiser's pass). One holding a
    character no gRPC header carries is a usage error (exit 2) saying so."""
    from heartsbot.options import sendable

    token = (args.admin_token or os.environ.get("HEARTSD_ADMIN_TOKEN", "")).strip()
    if not sendable(token):
        raise ValueError("the admin token (--admin-token or HEARTSD_ADMIN_TOKEN) holds a character a gRPC header "
                         "cannot carry: an admin token is printable ASCII")
    return token


def _call(args: argparse.Namespace, method: Any, request: Any, auth: bool = True, timeout: float | None = None) -> Any:
    token = admin_token(args)
    metadata = (("authorization", f"Bearer {token}"),) if auth and token else ()
    try:
        return method(request, metadata=metadata, timeout=timeout or args.timeout)
    except grpc.RpcError as exc:
        raise translate_error(exc, args.server) from None


def translate_error(exc: grpc.RpcError, server: str) -> Exception:
    """The refusal as the CLI prints it, its text escaped (logs.printable): a refusal may
    quote what a bot wrote (a drain reason), and its escapes would reach the terminal."""
    code, details = exc.code(), printable(exc.details() or "")  # type: ignore[attr-defined]
    if code == grpc.StatusCode.UNAVAILABLE:
        if "http1.x server" in details or "Failed parsing HTTP/2" in details:
            # Before (an operator's pass): "... is heartsd running there?" of heartsd's own web front.
            return ConnectionError(f"{server} answers HTTP/1, not gRPC: is it a web front (heartsd serve --web)? "
                                   "--server takes the daemon's gRPC port (serve --port, 50051 by default)")
        if "WRONG_VERSION_NUMBER" in details:
            return ConnectionError(f"could not connect to {server} over TLS: the server there does not speak TLS "
                                   "(heartsd serves it only with --tls-cert); leave out --tls")
        if "CERTIFICATE_VERIFY_FAILED" in details:
            return ConnectionError(f"could not connect to {server} over TLS: its certificate is not trusted "
                                   f"({details.rsplit('SSL_ERROR_SSL: ', 1)[-1].removesuffix(': OK')}); give the CA "
                                   "that signed it with --ca FILE (a self-signed certificate is its own CA)")
        hint = " (a daemon that serves TLS closes a connection without it: then add --tls)" \
            if "Socket closed" in details else ""
        return ConnectionError(f"could not connect to {server} ({details}): is heartsd running there?{hint}")
    if code == grpc.StatusCode.UNAUTHENTICATED:
        details += " (pass --admin-token or set HEARTSD_ADMIN_TOKEN)"
    # The server names the request's field; here it is a flag (a newcomer's pass).
    details = details.replace("set wait_for_seats_ms to wait for it", "pass --wait SECONDS to wait for it")
    return Refused(f"{code.name}: {details}", code)


# An id of the other kind, named where a command finds no match or tournament of that id.
OTHER_ID = {"match": ("t-", "a tournament's id: `heartsd tournament {verb} {id}`"),
            "tournament": ("m-", "a match's id: `heartsd admin {verb} {id}`")}


@contextlib.contextmanager
def naming_the_kind(wanted: str, given: str, verb: str) -> Iterator[None]:
    """A NOT_FOUND for ``given`` that is the other kind's id (a tournament's given to an
    admin command, a match's to a tournament command) says so and which command takes it:
    before (an operator's pass), "NOT_FOUND: no match t-...", as if it had gone."""
    try:
        yield
    except Refused as exc:
        prefix, what = OTHER_ID[wanted]
        if exc.code != grpc.StatusCode.NOT_FOUND or not given.startswith(prefix):
            raise
        raise Refused(f"{exc} ({given} is {what.format(verb=verb, id=given)})", exc.code) from None


def open_channel(args: argparse.Namespace) -> grpc.Channel:
    """A channel to ``--server``, over TLS with the options every client takes (--tls,
    --ca, --cert, --key: heartsbot.tls); a bad combination or file is a usage error."""
    return tls.channel(args.server, tls.from_args(args))


def print_json(console: Console, message: Any) -> None:
    console.print_json(json_format.MessageToJson(message, preserving_proto_field_name=True, indent=None))


def _bots(args: argparse.Namespace, console: Console) -> int:
    with open_channel(args) as channel:
        response = _call(args, admin_pb2_grpc.AdminServiceStub(channel).ListBots,
                         admin_pb2.ListBotsRequest(include_registered=args.all))
    if args.json:
        print_json(console, response)
        return 0
    table = Table(title=f"bots on {args.server}")
    for column in ("bot", "connected", "version", "owner", "slots used", "reserved", "rulesets", "matches"):
        table.add_column(column, justify="right" if column in ("slots used", "reserved") else "left")
    for bot in response.bots:
        # a draining bot is connected but takes no new match: say so, not "yes"
        state = ("draining" if bot.draining else "yes") if bot.connected else ("revoked" if bot.revoked else "no")
        slots = f"{bot.active_matches}/{bot.max_concurrent_matches}" if bot.connected else str(bot.active_matches)
        matches = ", ".join(f"{m.match_id} ({m.purpose})" for m in bot.matches)
        table.add_row(*literal(bot.name, state, bot.version, bot.owner, slots, str(bot.reserved_slots or ""),
                               ", ".join(bot.rulesets) or ("all" if bot.connected else ""), matches))
    console.print(table)
    if not response.bots:
        console.print("no bot is connected" + ("" if args.all else " (--all lists registered ones too)"))
    return 0


def list_matches(args: argparse.Namespace, console: Console) -> int:
    if not 0 < args.limit <= 1000:
        raise ValueError("--limit must be between 1 and 1000")
    request = spectator_pb2.ListMatchesRequest(limit=args.limit, page_token=args.page_token,
                                               status=STATUSES.get(args.status or "", 0))
    table = Table(title=f"matches on {args.server}" + (f" ({args.status})" if args.status else ""))
    for column in ("match", "created", "status", "ruleset", "deals", "seats and totals", "winner"):
        table.add_column(column)
    rows = 0
    # With --all, one JSON object holds every page (as `tournament list --json --all`):
    # before (an organiser's pass, checking the standings against the matches with a
    # script), each page was a JSON object of its own, and a JSON parser refused the output.
    every = spectator_pb2.ListMatchesResponse()
    with open_channel(args) as channel:
        list_matches = paced(spectator_pb2_grpc.SpectatorServiceStub(channel).ListMatches, lambda seconds: print(
            f"heartsd admin: the server paces listings: the next page in {seconds:.1f} s", file=sys.stderr))
        while True:
            response = _call(args, list_matches, request, auth=False)
            every.matches.extend(response.matches)
            every.next_page_token = response.next_page_token
            for m in response.matches:
                rows += 1
                seats = ", ".join(f"{s.name} {t}" if i < len(m.totals) else s.name
                                  for i, (s, t) in enumerate(zip(m.seats, [*m.totals] + [0] * len(m.seats))))
                if not m.seats:  # a row the daemon could not read: listed with why
                    seats = m.result.reason
                winner = ", ".join(m.seats[w].name for w in m.result.winners if w < len(m.seats))
                created = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(m.created_unix_ms / 1000))
                table.add_row(*literal(m.match_id, created, STATUS.get(m.status, "?"), m.ruleset,
                                       "withheld until its set ends" if m.withheld else str(m.deals_played),
                                       seats, winner))
            if not (args.all and response.next_page_token):
                break
            request.page_token = response.next_page_token
    if args.json:
        print_json(console, every)
        return 0
    console.print(table)
    console.print(f"{rows} match(es)" + (f"; next page: --page-token {response.next_page_token}"
                                         if response.next_page_token else ""))
    return 0


def _create(args: argparse.Namespace, console: Console) -> int:
    from heartsbot.strategies import KNOWN, STRATEGIES, known_strategy

    from .spelling import did_you_mean, unknown_ruleset

    # An unknown ruleset or strategy is a usage error (exit 2, README's exit codes), said
    # before the daemon is asked, with the name it resembles: it was the daemon's refusal,
    # exit 3 (an operator's pass). The daemon's other refusals stay exit 3.
    if problem := unknown_ruleset(args.ruleset):
        raise ValueError(problem)
    for seat in args.seat:
        if seat.startswith("house:") and not known_strategy(house := seat.removeprefix("house:")):
            raise ValueError(f"--seat {seat}: unknown house strategy {house!r}; known: {KNOWN}"
                             f"{did_you_mean(house, STRATEGIES)}")
    request = admin_pb2.CreateMatchRequest(ruleset=args.ruleset, players=len(args.seat), rated=args.rated,
                                           wait_for_seats_ms=int(args.wait * 1000))
    for seat in args.seat:
        if seat.startswith("house:"):
            request.seats.add(house=seat.removeprefix("house:"))
        else:
            request.seats.add(bot=seat)
    request.format.fixed_deals = args.deals
    if args.seed is not None:
        request.seed = args.seed
    request.clock.decision_ms = args.decision_ms
    request.options.target = args.target
    request.options.hartenjagen_passing = args.hartenjagen_passing
    request.options.moon_requires_bonus = args.moon_requires_bonus
    with open_channel(args) as channel:
        response = _call(args, admin_pb2_grpc.AdminServiceStub(channel).CreateMatch, request,
                         timeout=args.timeout + args.wait)
    if args.json:
        print_json(console, response)
    else:
        console.print(f"match {response.match_id} started ({response.ruleset.name}, {len(args.seat)} seats); "
                      f"watch it with: heartsd admin watch {response.match_id}", markup=False)
    return 0


def _cancel(args: argparse.Namespace, console: Console) -> int:
    with open_channel(args) as channel, naming_the_kind("match", args.match_id, "cancel"):
        response = _call(args, admin_pb2_grpc.AdminServiceStub(channel).CancelMatch,
                         admin_pb2.CancelMatchRequest(match_id=args.match_id, reason=args.reason))
    if args.json:
        print_json(console, response)
    else:
        console.print(f"match {args.match_id} cancelled after {response.result.deals} deals; "
                      f"totals {list(response.result.totals)}", markup=False)
    return 0


def watch_events(args: argparse.Namespace, match_id: str) -> Iterator[game_pb2.Event]:
    """The public events of ``match_id`` as they happen (SpectatorService.WatchMatch)."""
    with open_channel(args) as channel:
        stream = spectator_pb2_grpc.SpectatorServiceStub(channel).WatchMatch(
            spectator_pb2.WatchMatchRequest(match_id=match_id))
        try:
            for response in stream:
                yield from response.events
        except grpc.RpcError as exc:
            raise translate_error(exc, args.server) from None


def _named(events: Iterator[game_pb2.Event], match_id: str) -> Iterator[game_pb2.Event]:
    with naming_the_kind("match", match_id, "watch"):
        yield from events


def _watch(args: argparse.Namespace, console: Console) -> int:
    view = TableView()
    events = _named(watch_events(args, args.match_id), args.match_id)
    if args.plain or not console.is_terminal:
        for event in events:
            view.apply(event)
            if event.HasField("trick_won") or event.HasField("deal_scored") or event.HasField("match_ended"):
                console.print(view.render())
    else:
        with Live(view.render(), console=console, auto_refresh=False, transient=False) as live:
            for event in events:
                view.apply(event)
                live.update(view.render(), refresh=True)
    if args.json and view.result is not None:
        print_json(console, view.result)
    return 0
