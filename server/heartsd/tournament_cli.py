"""``heartsd tournament``: run a competition from the terminal (TournamentService over gRPC).

    heartsd tournament create --bot alice --bot bob ... [--rounds 7] [--deals 16] [--seed S] [--again]
    heartsd tournament list [--limit N] [--all | --page-token T]
    heartsd tournament show ID [--json | --csv]        # progress, standings, head-to-head
    heartsd tournament watch ID                        # a progress bar until it ends, then the standings
    heartsd tournament pause|resume|cancel ID
    heartsd tournament local --bots graded-0 heuristic random ... [--rounds 3] [--json]

``local`` needs no server: it starts a daemon in this process, connects one bot per
strategy over loopback gRPC (named after its strategy), runs the tournament and prints
the standings (with ``--json``, as one JSON object on the last line). The others talk to
a running daemon (``--server`` or HEARTS_SERVER; the admin token from ``--admin-token``
or HEARTSD_ADMIN_TOKEN for create, pause, resume and cancel; TLS with the clients'
``--tls``, ``--ca``, ``--cert``, ``--key``).

Exit codes, those of every Hearts Arena client (heartsbot.exits): 0 done; 2 a usage
error; 3 the daemon refused the call; 4 the daemon could not be reached.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import os
import secrets
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from heartsbot import tls
from heartsbot.help import DefaultsHelp
from heartsbot.options import at_least, shuffle_seed
from heartsbot.pacing import paced, retry_after_s
from heartsbot.proto import game_pb2, tournament_pb2, tournament_pb2_grpc

from .admin_cli import (DEFAULT_SERVER, Refused, admin_token, daemon_target, literal, naming_the_kind, open_channel,
                        printable, run_command, translate_error, wait_seconds)
from .ladder import FLAG_RATE
from .live_standings import LIVE_REFRESH_S
from .rates import MAX_PAGE
from .schedule import sharing_owners
from .standings import Standings, reliability_of

STATUS = {v: k.removeprefix("TOURNAMENT_STATUS_").lower() for k, v in tournament_pb2.TournamentStatus.items()}
# `create` waits for the schedule, drawn before the tournament is: ~13 s for 32 bots and 25
# rounds, ~4 minutes for 64 bots and 100 rounds (the other commands answer in a second).
CREATE_TIMEOUT_S = 600.0


def add_parser(sub: Any) -> None:
    tour = sub.add_parser("tournament", help="create, follow and export tournaments (over gRPC), or run one locally",
                          description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = tour.add_subparsers(dest="tournament_command", required=True)

    def command(name: str, text: str, run: Callable[[argparse.Namespace, Console], int],
                remote: bool = True) -> argparse.ArgumentParser:
        p = commands.add_parser(name, help=text, description=text, formatter_class=DefaultsHelp)
        if remote:
            p.add_argument("--server", default=os.environ.get("HEARTS_SERVER", DEFAULT_SERVER), type=daemon_target, metavar="HOST:PORT",
                           help="the daemon (env HEARTS_SERVER)")
            p.add_argument("--admin-token", help="the daemon's admin token (env HEARTSD_ADMIN_TOKEN; default: "
                                                 "none, which only list, show and watch accept)")
            p.add_argument("--timeout", type=wait_seconds, default=30.0, help="seconds to wait for the daemon's answer")
            tls.add_options(p)
        p.set_defaults(run=lambda args: run_command(args, run, "heartsd tournament"))
        return p

    create = command("create", "freeze a roster of connected bots and start the schedule", _create)
    create.set_defaults(timeout=CREATE_TIMEOUT_S)
    create.add_argument("--bot", action="append", required=True, help="a roster bot (required; repeat for each)")
    create.add_argument("--name", default="tournament", help="a name to show")
    create.add_argument("--again", action="store_true",
                        help="start it even if a running or paused tournament has this name and these bots (without "
                             "it, that is refused as a command given twice)")
    _settings(create)
    create.add_argument("--shuffle-key", type=_shuffle_key, metavar="HEX",
                        help="a finished tournament's published shuffle key (64 hex digits), with its --seed, to play "
                             "its shuffles again, e.g. on a fresh store (default: a secret one, drawn by the daemon)")
    listing = command("list", "tournaments, newest first, a page at a time", _list)
    listing.add_argument("--limit", type=int, default=20, help=f"tournaments per page (at most {MAX_PAGE})")
    listing.add_argument("--page-token", default="",
                         help="the next_page_token a previous page printed (default: the first page)")
    listing.add_argument("--all", action="store_true", help="follow every page to the end")
    listing.add_argument("--json", action="store_true",
                         help="print one JSON object: the tournaments (as show --json's \"tournament\", without "
                              "tables) and next_page_token")
    show = command("show", "a tournament's progress, standings and head-to-head table", _show)
    show.add_argument("id")
    export = show.add_mutually_exclusive_group()  # both: JSON alone was printed, and nothing said so
    export.add_argument("--json", action="store_true", help="print the standings as one JSON object")
    export.add_argument("--csv", action="store_true", help="print the standings as CSV")
    watch = command("watch", "follow a tournament with a progress bar, then print its standings", _watch)
    watch.add_argument("id")
    watch.add_argument("--interval", type=wait_seconds, default=1.0, help="seconds between polls")
    for name, text in (("pause", "start no new round until resumed (running matches finish)"),
                       ("resume", "continue a paused tournament"), ("cancel", "stop a tournament for good")):
        p = command(name, text, _move)
        p.add_argument("id")
        p.add_argument("--reason", default="", help="why, for the record (default: none)")
    local = command("local", "run a tournament of house strategies on a daemon in this process", _local, remote=False)
    local.add_argument("--bots", nargs="+", required=True, metavar="STRATEGY",
                       help="one bot per strategy: random, heuristic, mc, graded-Q (a strategy twice: two bots; "
                            "required)")
    local.add_argument("--json", action="store_true", help="end with the standings as one JSON object")
    local.add_argument("--csv", metavar="FILE", help="also write the standings as CSV to FILE, a new file unless "
                                                     "--overwrite (default: none)")
    local.add_argument("--overwrite", action="store_true",
                       help="with --csv: replace FILE if it exists, once the new standings are written in full "
                            "(without it, an existing FILE is refused, exit 2, before the tournament runs)")
    local.add_argument("--db", help="keep everything in this SQLite file (default: a temporary one)")
    _settings(local)


def _settings(p: argparse.ArgumentParser) -> None:
    p.add_argument("--ruleset", default="standard", help="the preset")
    p.add_argument("--players", type=at_least(0), default=0, help="seats per table (0: the preset's default)")
    p.add_argument("--rounds", type=at_least(1), default=3, help="rounds; each bot plays one match a round")
    p.add_argument("--deals", type=at_least(0), default=0, help="fixed deals per match (0: four per seat)")
    p.add_argument("--seed", type=shuffle_seed, help="the schedule and shuffles derive from it (the shuffles keyed with "
                   "a secret key, except in 'local', where the seed alone replays them) (default: random)")
    p.add_argument("--decision-ms", type=at_least(0), default=0, help="time per decision (0: the daemon's default)")


def _check_settings(args: argparse.Namespace) -> None:
    """The operator's own mistakes in a tournament's options, said (exit 2, README's exit
    codes: an unknown ruleset, a bad option) before a daemon is asked: before (an operator's
    pass), `create --ruleset standrad` came back as the daemon's refusal, exit 3, and so did
    `--players 9`. What the daemon refuses of the request as a whole (a roster too small for
    a table, a bot on it twice) stays its refusal, exit 3, as a bot it does not know does."""
    from hearts_engine import preset

    from .spelling import unknown_ruleset

    if problem := unknown_ruleset(args.ruleset):
        raise ValueError(problem)
    try:
        preset(args.ruleset, players=args.players or None)
    except ValueError as exc:
        raise ValueError(f"--players: {exc}") from None
    if getattr(args, "shuffle_key", None) is not None and args.seed is None:
        # Without its seed, a published key deals other shuffles than the tournament's, and
        # nothing said so (an operator's pass): the replay the option promises did not happen.
        raise ValueError("--shuffle-key plays a finished tournament's shuffles again only with that tournament's "
                         "--seed (both printed by `heartsd tournament show`): give both")


def _stub(channel: grpc.Channel) -> tournament_pb2_grpc.TournamentServiceStub:
    return tournament_pb2_grpc.TournamentServiceStub(channel)


def _call(args: argparse.Namespace, method: Any, request: Any, admin: bool = False) -> Any:
    token = admin_token(args)
    metadata = (("authorization", f"Bearer {token}"),) if admin and token else ()
    try:
        return method(request, metadata=metadata, timeout=args.timeout)
    except grpc.RpcError as exc:
        raise translate_error(exc, args.server) from None


def _shuffle_key(value: str) -> bytes:
    """An argparse ``type``: 32 bytes as 64 hex digits (``tournament show`` prints them)."""
    try:
        key = bytes.fromhex(value)
    except ValueError:
        key = b""
    if len(key) != 32:
        raise argparse.ArgumentTypeError(f"a shuffle key is 64 hex digits, got {value[:80]!r}")
    return key


def _request(args: argparse.Namespace, bots: list[str], name: str,
             local: bool = False) -> tournament_pb2.CreateTournamentRequest:
    request = tournament_pb2.CreateTournamentRequest(name=name, bots=bots, ruleset=args.ruleset, players=args.players,
                                                     rounds=args.rounds, deals_per_match=args.deals)
    if args.seed is not None:
        request.seed = args.seed
        if local:  # house strategies only, nobody to keep a hand from: the seed alone replays it
            request.shuffle_key = hashlib.sha256(f"tournament local:{args.seed}".encode()).digest()
    if getattr(args, "shuffle_key", None) is not None:
        request.shuffle_key = args.shuffle_key
    request.clock.decision_ms = args.decision_ms
    return request


def _create(args: argparse.Namespace, console: Console) -> int:
    _check_settings(args)
    with open_channel(args) as channel, console.status("drawing the schedule and starting the tournament "
                                                       "(minutes for many bots and rounds)"):
        if not args.again and admin_token(args):  # without one, the create is refused anyway (UNAUTHENTICATED)
            _refuse_a_second(args, channel)
        # The daemon stops drawing when the call ends: say so, not "Deadline Exceeded".
        with _deadline_means(f"no answer within {args.timeout:g} s (--timeout): the daemon was most likely still "
                             "drawing the schedule (minutes for many bots and rounds), which stops with the call, so "
                             "the tournament was most likely not created (see heartsd tournament list); try again "
                             "with a longer --timeout"):
            t = _call(args, _stub(channel).CreateTournament, _request(args, args.bot, args.name), admin=True).tournament
    console.print(f"tournament {t.id} started: {len(t.roster)} bots, {t.rounds} rounds, {t.matches_total} matches; "
                  f"follow it with: heartsd tournament watch {t.id}", markup=False)
    for line in shared_tables(t):
        print(f"heartsd tournament: warning: {line}", file=sys.stderr)
    return 0


def shared_tables(t: tournament_pb2.Tournament) -> list[str]:
    """What an organiser should know before a prize rides on it: the tables where the
    schedule seats two bots of one owner together (``schedule.sharing_owners``), said once
    per owner.

    >>> t = tournament_pb2.Tournament(players=4, roster=[tournament_pb2.RosterEntry(bot=b, owner=o)
    ...     for b, o in (("a1", "ann"), ("a2", "ann"), ("b", "b"), ("c", "c"))])
    >>> _ = t.tables.add(round=0, table=0, bots=["a1", "b", "a2", "c"])
    >>> shared_tables(t)
    ["bots of owner 'ann' share a table (round 1: 'a1' and 'a2'): the owner has 2 of the 4 bots and a round has 1 table of 4, so the roster leaves no other way (take bots out, or add bots of other owners)"]
    """
    owners = {r.bot: r.owner for r in t.roster}
    shared: dict[str, list[str]] = {}  # owner -> "round N: 'a' and 'b'", in round order
    for owner, round_, together in sharing_owners(((row.round, row.bots) for row in t.tables), owners):
        shared.setdefault(owner, []).append(f"round {round_ + 1}: {' and '.join(map(repr, together))}")
    tables = len(t.roster) // t.players if t.players else 0
    lines = []
    for owner, where in shared.items():
        mine = sum(1 for o in owners.values() if o == owner)
        lines.append(f"bots of owner {owner!r} share a table ({'; '.join(where)}): the owner has {mine} of the "
                     f"{len(t.roster)} bots and a round has {tables} table{'s' if tables != 1 else ''} of {t.players}, "
                     "so the roster leaves no other way (take bots out, or add bots of other owners)")
    return lines


@contextlib.contextmanager
def _deadline_means(said: str) -> Iterator[None]:
    """A call's DEADLINE_EXCEEDED, said as ``said`` (what the deadline means for that call)
    instead of gRPC's bare "Deadline Exceeded"; any other refusal as it is."""
    try:
        yield
    except Refused as exc:
        if exc.code != grpc.StatusCode.DEADLINE_EXCEEDED:
            raise
        raise Refused(said) from None


def _refuse_a_second(args: argparse.Namespace, channel: grpc.Channel) -> None:
    """A usage error if a running or paused tournament of the daemon has this name and this
    roster: the same command given twice (pasted again, or retried after a timeout that the
    daemon outlived). Before (an organiser's pass), the second one started beside the first,
    both holding the same bots' slots, and the two tournaments of one name told apart only
    by their ids. Every page of the listing is read (newest first): the check read only the
    newest ``MAX_PAGE`` (an operator's pass), so a league paused while a thousand newer
    tournaments were played was started again beside itself."""
    list_tournaments = paced(_stub(channel).ListTournaments, lambda seconds: None)  # as `list` waits when paced
    request = tournament_pb2.ListTournamentsRequest(limit=MAX_PAGE)
    while True:
        with _deadline_means(f"no answer within {args.timeout:g} s (--timeout) to the check for a running "
                             "tournament of this name and these bots, made before creating one: nothing was created "
                             "(see heartsd tournament list); try again with a longer --timeout, or with --again to "
                             "skip the check"):
            listing = _call(args, list_tournaments, request)
        for t in listing.tournaments:
            if (STATUS.get(t.status) in ("running", "paused") and t.name == (args.name or "tournament")
                    and sorted(r.bot for r in t.roster) == sorted(args.bot)):
                raise ValueError(
                    f"tournament {t.id} ({printable(t.name)}) has these bots and is {STATUS.get(t.status)} "
                    f"({t.matches_finished}/{t.matches_total} matches): was this command given twice? Follow it with "
                    f"`heartsd tournament watch {t.id}`; to start another beside it, add --again (or give another "
                    "--name)")
        if not listing.next_page_token:
            return
        request.page_token = listing.next_page_token


def _list(args: argparse.Namespace, console: Console) -> int:
    if not 0 < args.limit <= MAX_PAGE:
        raise ValueError(f"--limit must be between 1 and {MAX_PAGE}")
    request = tournament_pb2.ListTournamentsRequest(limit=args.limit, page_token=args.page_token)
    table = Table(title=f"tournaments on {args.server}")
    for column in ("id", "name", "status", "ruleset", "bots", "rounds", "matches", "created"):
        table.add_column(column)
    rows = 0
    exported: list[dict[str, object]] = []
    with open_channel(args) as channel:
        list_tournaments = paced(_stub(channel).ListTournaments, lambda seconds: print(
            f"heartsd tournament: the server paces listings: the next page in {seconds:.1f} s", file=sys.stderr))
        while True:
            response = _call(args, list_tournaments, request)
            for t in response.tournaments:
                rows += 1
                exported.append({k: v for k, v in export_head(t).items() if k != "tables"})
                table.add_row(*literal(t.id, t.name, STATUS.get(t.status, "?"), t.ruleset, str(len(t.roster)),
                                       str(t.rounds), f"{t.matches_finished}/{t.matches_total}",
                                       time.strftime("%Y-%m-%d %H:%M", time.localtime(t.created_unix_ms / 1000))))
            if not (args.all and response.next_page_token):
                break
            request.page_token = response.next_page_token
    if args.json:  # scripts read this; an organiser's pass found no way to list tournaments but as a table
        print(json.dumps({"tournaments": exported, "next_page_token": response.next_page_token}))
        return 0
    console.print(table)
    console.print(f"{rows} tournament(s)" + (f"; next page: --page-token {response.next_page_token}"
                                             if response.next_page_token else ""))
    return 0


def _show(args: argparse.Namespace, console: Console) -> int:
    with open_channel(args) as channel, naming_the_kind("tournament", args.id, "watch"):
        t = _call(args, _get_tournament(channel), tournament_pb2.GetTournamentRequest(id=args.id)).tournament
    if args.json:
        print(json.dumps({**json.loads(t.standings.json or "{}"), "tournament": export_head(t)}))
    elif args.csv:
        print(Standings.csv_from_dict(json.loads(t.standings.json)), end="")
    else:
        print_tournament(console, t)
    return 0


def _move(args: argparse.Namespace, console: Console) -> int:
    method = {"pause": "PauseTournament", "resume": "ResumeTournament", "cancel": "CancelTournament"}[
        args.tournament_command]
    request = getattr(tournament_pb2, f"{method}Request")(id=args.id, reason=args.reason)
    verb = "cancel" if args.tournament_command == "cancel" else "watch"  # admin has no pause
    with open_channel(args) as channel, naming_the_kind("tournament", args.id, verb):
        t = _call(args, getattr(_stub(channel), method), request, admin=True).tournament
    console.print(f"tournament {t.id}: {STATUS.get(t.status, '?')} ({t.matches_finished}/{t.matches_total} matches)",
                  markup=False)
    return 0


class TournamentProgress:
    """A tournament's progress as it is followed: a bar on a terminal; elsewhere (a pipe, a
    file, a CI log) one line each time a match finishes or the state changes, since a bar
    draws nothing there and a long tournament looked hung (a conformance pass: five minutes
    of `tournament local` with no output)."""

    def __init__(self, console: Console) -> None:
        self._console = console
        self._bar: Progress | None = None
        self._task: Any = None
        self._shown = ""
        self._start = time.monotonic()

    def __enter__(self) -> "TournamentProgress":
        if self._console.is_terminal:
            self._bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TimeElapsedColumn(), console=self._console, transient=True)
            self._bar.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)

    def update(self, t: tournament_pb2.Tournament) -> None:
        running = sum(1 for row in t.tables if row.status == "running")
        waits = [row.waiting for row in t.tables if row.waiting]
        state = (status_text(t) + (f", {running} playing" if running else "")
                 + (f"; waiting: {waits[0]}" if waits else ""))
        if self._bar is not None:
            if self._task is None:
                self._task = self._bar.add_task("", total=t.matches_total)
            self._bar.update(self._task, completed=t.matches_finished,
                             description=f"{escape(t.name)} ({t.id}) {escape(state)}")
            return
        line = f"{t.name} ({t.id}): {t.matches_finished}/{t.matches_total} matches, {state}"
        if line != self._shown:
            self._shown = line
            elapsed = int(time.monotonic() - self._start)
            self._console.print(f"{line} [{elapsed // 60}:{elapsed % 60:02d}]", markup=False, highlight=False)


def _get_tournament(channel: grpc.Channel) -> Callable[..., Any]:
    """GetTournament, waiting when the server paces it: a large tournament's answer spends
    the caller's spectator rate by its size (an attack pass), and watch polls it."""
    return paced(_stub(channel).GetTournament, lambda seconds: None)


def _watch(args: argparse.Namespace, console: Console) -> int:
    """Follow the tournament to its end. A daemon that stops once it has answered (a restart,
    its shutdown's grace, a crash) is waited for, saying so once, on a new channel each try
    (a channel's own reconnection backs off to minutes): a tournament outlives its daemon's
    restarts. Before (an organiser's pass), the watch ended with exit 4 at the first SIGTERM."""
    request = tournament_pb2.GetTournamentRequest(id=args.id)
    answered, away, t = False, "", None
    with TournamentProgress(Console(stderr=True)) as progress:  # stdout: the results
        while t is None or STATUS.get(t.status) not in ("finished", "cancelled"):
            with open_channel(args) as channel:
                get_tournament = _get_tournament(channel)
                while True:
                    try:
                        with naming_the_kind("tournament", args.id, "watch"):
                            t = _call(args, get_tournament, request).tournament
                    except ConnectionError as exc:
                        if not answered:
                            raise
                        if not away:
                            away = str(exc)
                            print(f"heartsd tournament: {away}; waiting for it to answer again (Ctrl-C to stop "
                                  "watching; the tournament goes on without the watch)", file=sys.stderr, flush=True)
                        break
                    if away:
                        print("heartsd tournament: the daemon answers again", file=sys.stderr, flush=True)
                        away = ""
                    answered = True
                    progress.update(t)
                    if STATUS.get(t.status) in ("finished", "cancelled"):
                        break
                    time.sleep(args.interval)
            if STATUS.get(t.status) not in ("finished", "cancelled"):
                time.sleep(max(args.interval, 1.0))
    assert t is not None
    print_tournament(console, t)
    return 0


def export_head(t: tournament_pb2.Tournament) -> dict[str, object]:
    """What ``show --json`` says of the tournament beside its standings, so that an export
    stands alone (an organiser's pass: it held the standings only, and a running or cancelled
    tournament's export looked like a finished one's): its id, name, status and why, its
    rules and clock, its seed and shuffle key once published, and every table's match."""
    return {
        "id": t.id, "name": t.name, "status": STATUS.get(t.status, "?"), "reason": t.reason, "ruleset": t.ruleset,
        "players": t.players, "rounds": t.rounds, "deals_per_match": t.deals_per_match,
        "matches_finished": t.matches_finished, "matches_total": t.matches_total,
        "seed": t.seed or None, "shuffle_key": t.shuffle_key.hex() or None,
        "clock": {k: getattr(t.clock, k) for k in ("decision_ms", "bank_ms", "max_illegal", "auto_after", "grace_ms")},
        "roster": [{"bot": r.bot, "owner": r.owner, "version": r.version} for r in t.roster],
        "tables": [{"round": x.round + 1, "table": x.table + 1, "bots": list(x.bots), "status": x.status,
                    "match_id": x.match_id, "attempts": x.attempts} for x in t.tables],
    }


def diff_text(diff: float) -> str:
    """A head-to-head points-per-deal difference, signed, one decimal; one that rounds to
    zero is "0.0" (it printed "-0.0" and "+0.0": an organiser's pass).

    >>> diff_text(-0.04), diff_text(0.04), diff_text(1.25), diff_text(-2.0)
    ('0.0', '0.0', '+1.2', '-2.0')
    """
    shown = f"{diff:+.1f}"
    return "0.0" if float(shown) == 0 else shown


def clock_text(clock: game_pb2.ClockSettings) -> str:
    """A tournament's clock in words (its zeros, for one created before clocks were frozen,
    the server's setting when each match starts).

    >>> clock_text(game_pb2.ClockSettings(decision_ms=1000, bank_ms=10000, max_illegal=3, auto_after=3, grace_ms=15000))
    '1,000 ms a decision, a 10,000 ms bank, 3 rejected answers, auto-play after 3 defaults, 15,000 ms grace'
    """
    def value(number: int, unit: str = "") -> str:
        return f"{number:,}{unit}" if number else "the server's"

    return (f"{value(clock.decision_ms, ' ms')} a decision, a {value(clock.bank_ms, ' ms')} bank, "
            f"{value(clock.max_illegal)} rejected answers, auto-play after {value(clock.auto_after)} defaults, "
            f"{value(clock.grace_ms, ' ms')} grace")


def status_text(t: tournament_pb2.Tournament) -> str:
    """Its status with the reason an organiser gave (a pause's, a cancel's): before (an
    organiser's pass), `pause --reason lunch` and `cancel --reason ...` were kept and exported
    in --json, but `show` and `watch` said only "paused" or "cancelled"; a finished one's
    "completed" says nothing more.

    >>> status_text(tournament_pb2.Tournament(status=tournament_pb2.TOURNAMENT_STATUS_PAUSED, reason="lunch"))
    'paused (lunch)'
    >>> status_text(tournament_pb2.Tournament(status=tournament_pb2.TOURNAMENT_STATUS_FINISHED, reason="completed"))
    'finished'
    """
    status = STATUS.get(t.status, "?")
    shown = printable(t.reason) if t.reason and not (status == "finished" and t.reason == "completed") else ""
    return f"{status} ({shown})" if shown else status


def print_tournament(console: Console, t: tournament_pb2.Tournament) -> None:
    console.print(f"[bold]{escape(printable(t.name))}[/bold] ({t.id}): {escape(status_text(t))}, {escape(t.ruleset)}, {t.players} seats, "
                  f"{t.rounds} rounds, {t.matches_finished}/{t.matches_total} matches, "
                  f"{t.deals_per_match} deals each" + (f"; seed {t.seed}" if t.seed else "")
                  + (f", shuffle key {t.shuffle_key.hex()}" if t.shuffle_key else ""))
    if t.HasField("clock"):
        console.print(f"clock: {clock_text(t.clock)}", markup=False)
    for row in t.tables:
        if row.waiting:
            console.print(f"round {row.round + 1} table {row.table + 1} waits: {printable(row.waiting)}", markup=False)
    if t.tables:  # the way from a tournament to its matches' replays (`heartsd replay show ID`)
        schedule = Table(title="tables (each match's replay: heartsd replay show MATCH)")
        for column in ("round", "table", "bots", "status", "match", "attempts"):
            schedule.add_column(column)
        for row in t.tables:
            schedule.add_row(*literal(str(row.round + 1), str(row.table + 1), ", ".join(row.bots),
                                      row.status, row.match_id,
                                      str(row.attempts)))
        console.print(schedule)
    for line in shared_tables(t):  # as `tournament create` said (a tournament created by the API too)
        console.print(f"note: {line}", markup=False)
    s = t.standings
    table = Table(title="standings (points per deal: fewer is better)")
    for column in ("rank", "bot", "version", "points/deal", "95% CI", "P(best)", "deals", "matches", "timeouts",
                   "illegal", "left", "auto", "tied with"):
        table.add_column(column, justify="left" if column in ("bot", "version", "tied with") else "right")
    ranks = [r.rank for r in s.rows]
    for r in s.rows:
        rank = f"{r.rank}=" if ranks.count(r.rank) > 1 else str(r.rank)
        ci = f"{r.ci_low:.2f} .. {r.ci_high:.2f}" if r.deals else ""
        bot = f"{r.bot}  UNRELIABLE" if reliability_of(r).unreliable else r.bot
        table.add_row(*literal(rank, bot, r.version, f"{r.points_per_deal:.2f}" if r.deals else "", ci,
                               f"{r.p_best:.3f}", str(r.deals), str(r.matches), str(r.timeouts), str(r.illegal_defaults),
                               str(r.disconnect_defaults), str(r.auto_defaults), ", ".join(r.tied_with)))
    console.print(table)
    if any(reliability_of(r).unreliable for r in s.rows):
        console.print(f"UNRELIABLE: more than {FLAG_RATE:.0%} of the bot's decisions were defaults (timeouts, "
                      "illegal answers, disconnects, auto-play): its place says more about its absence than its play",
                      markup=False)
    if s.test:
        console.print(f"ranks: {s.test}; {s.shuffles} shuffles", markup=False)
    counted = sum(r.matches for r in s.rows) // max(t.players, 1)
    if counted < t.matches_finished:  # an organiser's pass: 1/5 matches over standings of 0 deals, unexplained
        console.print(f"these standings count {counted} of the {t.matches_finished} finished matches: while a "
                      f"tournament runs they are computed again at most every {LIVE_REFRESH_S:g} s (show it again "
                      "for the rest), and a table of a duplicate set counts once its set is over", markup=False)
    bots = [r.bot for r in s.rows]
    if s.head_to_head:
        h2h = {(h.a, h.b): h for h in s.head_to_head}
        grid = Table(title="head to head at one table: matches ranked ahead-behind (points/deal difference)")
        grid.add_column("")
        for b in bots:
            grid.add_column(literal(b)[0], justify="center")
        for a in bots:
            cells = []
            for b in bots:
                h = h2h.get((a, b)) or h2h.get((b, a))
                if a == b or h is None:
                    cells.append("")
                    continue
                mine, theirs = (h.a_ahead, h.b_ahead) if h.a == a else (h.b_ahead, h.a_ahead)
                diff = h.points_diff_per_deal if h.a == a else -h.points_diff_per_deal
                cells.append(f"{mine}-{theirs} ({diff_text(diff)})")
            grid.add_row(*literal(a, *cells))
        console.print(grid)


# -- heartsd tournament local --------------------------------------------------------------

def _local(args: argparse.Namespace, console: Console) -> int:
    from hearts_engine import preset
    from heartsbot.strategies import make_strategy

    from .db import StoreError, check_writable, for_local_db

    for spec in args.bots:
        make_strategy(spec)  # an unknown name is a usage error before anything starts
    # So are an unknown ruleset (it was exit 3, "refused", with no server involved) and
    # --players. An unknown ruleset is refused in the engine's words here (tests hold them),
    # without the name it resembles that `create` adds.
    preset(args.ruleset)
    _check_settings(args)
    if args.csv:
        _check_csv(args.csv, args.overwrite, args.db)
    elif args.overwrite:
        raise ValueError("--overwrite is for --csv FILE (it lets the standings replace FILE); --db's store is never "
                         "overwritten")
    if args.db:
        try:
            check_writable(args.db)
        except StoreError as exc:
            raise for_local_db(exc) from None
    interrupted: list[str] = []  # the tournament a Ctrl-C cancelled (run_local)
    try:
        t = asyncio.run(run_local(args, interrupted))
    except KeyboardInterrupt:
        kept = (f": tournament {interrupted[0]} cancelled in {args.db}, with its standings so far (heartsd serve "
                f"--db {args.db}, then heartsd tournament show {interrupted[0]})") if interrupted and args.db else ""
        print(f"heartsd tournament local: interrupted (Ctrl-C){kept}", file=sys.stderr)
        return 130
    except StoreError as exc:  # the embedded daemon refused --db: another application's file, a damaged one ...
        raise for_local_db(exc) from None
    standings = json.loads(t.standings.json)
    print_tournament(console, t)
    written = _write_csv(args.csv, Standings.csv_from_dict(standings), args.overwrite, t.id) if args.csv else 0
    if args.json:
        print(json.dumps(standings, separators=(",", ":")), flush=True)
    return written


def _check_csv(path: str, overwrite: bool, db: str | None) -> None:
    """Where --csv writes, checked before the tournament runs: a bad folder was a traceback
    after it, and with the default temporary store the results were lost. An existing file
    was overwritten without a word (an operator's pass: last week's standings lost to a trial
    run): refused now unless ``overwrite``; --db's store named as --csv is refused even so.
    A device or a pipe (``--csv /dev/stdout``) is written to, as it always was."""
    if os.path.isdir(path):
        raise ValueError(f"--csv {path}: a folder; name a file in it")
    if db and _same_file(path, db):
        raise ValueError(f"--csv {path} is the --db store: name another file for the standings")
    if os.path.exists(path) and not os.path.isfile(path):  # /dev/stdout, a named pipe
        if not os.access(path, os.W_OK):
            raise ValueError(f"--csv {path}: cannot be written")
        return
    if not os.access(os.path.dirname(os.path.abspath(path)), os.W_OK | os.X_OK):
        raise ValueError(f"--csv {path}: its folder does not exist or is not writable")
    if os.path.lexists(path) and not overwrite:
        raise ValueError(f"--csv {path} exists: name a new file, or add --overwrite to replace it")


def _same_file(a: str, b: str) -> bool:
    """Whether the paths ``a`` and ``b`` name one file (existing or not)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def _write_csv(path: str, text: str, overwrite: bool, tournament_id: str) -> int:
    """Write the standings to ``path``; 0, or 2 having said why they are elsewhere or not
    written. A new file is created exclusively: one that appeared while the tournament ran is
    kept, and the standings go beside it (named after the tournament). Replaced
    (``overwrite``), the old file stays whole until the new one is written in full."""
    try:
        if os.path.exists(path) and not os.path.isfile(path):  # a device or a pipe: written to, never replaced
            with open(path, "w") as f:
                f.write(text)
            return 0
        if overwrite:
            path = os.path.realpath(path)  # a symlink's file is replaced, not the symlink
            folder, name = os.path.split(path)
            fd, temporary = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".tmp")
            try:
                with os.fdopen(fd, "w") as f:
                    f.write(text)
                try:  # the replaced file's mode (mkstemp's is 0600), or a new file's
                    mode = os.stat(path).st_mode & 0o7777
                except OSError:
                    mode = 0o666 & ~_umask()
                os.chmod(temporary, mode)
                os.replace(temporary, path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.remove(temporary)
                raise
            return 0
        try:
            with open(path, "x") as f:
                f.write(text)
            return 0
        except FileExistsError:
            root, ext = os.path.splitext(path)
            beside = f"{root}-{tournament_id}{ext or '.csv'}"
            with open(beside, "x") as f:
                f.write(text)
            print(f"heartsd tournament: --csv {path} appeared while the tournament ran and was kept; the standings "
                  f"are in {beside}", file=sys.stderr)
            return 2
    except OSError as exc:  # the folder went away, the disk filled: the standings were printed above
        print(f"heartsd tournament: could not write --csv {path} ({exc.strerror or exc}); the standings are printed "
              "above", file=sys.stderr)
        return 2


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


async def run_local(args: argparse.Namespace, interrupted: list[str] | None = None) -> tournament_pb2.Tournament:
    """Start a daemon here, one BotClient per strategy, run the tournament to its end.

    Interrupted (Ctrl-C: asyncio.run cancels this task), the tournament is cancelled before
    the daemon stops, and its id put in ``interrupted``. Before (an organiser's pass), it was
    left running in ``--db``'s store, and the next ``tournament local`` on that store resumed
    it beside its own: the old one's matches played, and aborted at its end, by bots of the
    same names."""
    from heartsbot.client import BotClient
    from heartsbot.strategies import make_strategy

    from .config import Settings
    from .logs import configure
    from .server import embedded

    names = []
    for spec in args.bots:
        name = spec if spec not in names else f"{spec}-{sum(1 for n in names if n.startswith(spec)) + 1}"
        names.append(name)
    tokens = {n: secrets.token_urlsafe(16) for n in names}
    admin = secrets.token_urlsafe(16)
    configure("console", "error", cache=False)
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings.load(env={}, flags=dict(
            port=0, db_path=args.db or str(Path(tmp) / "tournament.db"), admin_token=admin, bot_tokens=tokens,
            log_level="error", **({"decision_ms": args.decision_ms} if args.decision_ms else {})))
        async with embedded(settings, leased=True) as (arena, port):
            target = f"127.0.0.1:{port}"
            clients = [BotClient(target, tokens[n], make_strategy(spec, seed=i), n, version=f"house/{spec}",
                                 max_matches=2) for i, (n, spec) in enumerate(zip(names, args.bots))]
            tasks = [asyncio.get_running_loop().create_task(c.run()) for c in clients]
            created: list[str] = []
            try:
                await asyncio.gather(*(asyncio.wait_for(c.connected.wait(), 20) for c in clients))
                return await _run_tournament(target, admin, args, names, created)
            except asyncio.CancelledError:
                if created:
                    with contextlib.suppress(Exception):  # already over: nothing to cancel
                        await arena.tournaments.set_status(  # type: ignore[attr-defined]
                            created[0], "cancelled", "tournament local interrupted (Ctrl-C)")
                        if interrupted is not None:
                            interrupted.append(created[0])
                raise
            finally:
                for c in clients:
                    c.stop()
                await asyncio.gather(*tasks, return_exceptions=True)
    raise AssertionError("unreachable")


async def _run_tournament(target: str, admin: str, args: argparse.Namespace, names: list[str],
                          created: list[str]) -> tournament_pb2.Tournament:
    """Create the tournament on the embedded daemon (its id put in ``created``) and follow it
    to its end; a refusal (too few bots for the tables) is reported as ``tournament create``
    reports it."""
    try:
        async with grpc.aio.insecure_channel(target) as channel:
            stub = tournament_pb2_grpc.TournamentServiceStub(channel)
            answer = await stub.CreateTournament(_request(args, names, "local", local=True),
                                                 metadata=(("authorization", f"Bearer {admin}"),))
            tournament_id = answer.tournament.id
            created.append(tournament_id)
            with TournamentProgress(Console(stderr=True)) as progress:  # stdout is for the results
                while True:
                    try:
                        t = (await stub.GetTournament(tournament_pb2.GetTournamentRequest(id=tournament_id))).tournament
                    except grpc.aio.AioRpcError as exc:  # a large tournament's answer spends the rate by its size
                        if (wait := retry_after_s(exc)) is None:
                            raise
                        await asyncio.sleep(wait)
                        continue
                    progress.update(t)
                    if STATUS.get(t.status) in ("finished", "cancelled"):
                        return t
                    await asyncio.sleep(0.2)
    except grpc.aio.AioRpcError as exc:
        raise translate_error(exc, target) from None
