"""``heartsbot leaderboard`` and ``heartsbot matches``: what a server shows bot authors,
over its public gRPC services (LadderService, SpectatorService); no token needed.

    heartsbot leaderboard --server HOST:PORT [--ruleset standard]
    heartsbot matches --server HOST:PORT [--status finished] [--limit 20] [--all]
    heartsbot matches --server HOST:PORT --bot NAME       # that bot's latest rated matches

``--server`` defaults to ``HEARTS_SERVER`` (then 127.0.0.1:50051) and the TLS options are
those of every client (:mod:`heartsbot.options`); the exit codes too (:mod:`heartsbot.exits`:
0 done, 2 usage, 3 the server refused the call, 4 it could not be reached).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

import grpc
from google.protobuf import json_format

from . import options, tls
from .exits import EXIT_REFUSED, EXIT_UNREACHABLE, EXIT_USAGE, TABLE
from .pacing import paced
from .proto import game_pb2, ladder_pb2, ladder_pb2_grpc, spectator_pb2, spectator_pb2_grpc

P = game_pb2
STATUSES = {"running": P.MATCH_STATUS_RUNNING, "finished": P.MATCH_STATUS_FINISHED,
            "aborted": P.MATCH_STATUS_ABORTED, "cancelled": P.MATCH_STATUS_CANCELLED}
STATUS_NAMES = {v: k for k, v in STATUSES.items()}


class CallFailed(Exception):
    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


def _call(server: str, method: object, request: object, timeout: float) -> object:
    try:
        return method(request, timeout=timeout)  # type: ignore[operator]
    except grpc.RpcError as exc:
        code, details = exc.code(), exc.details()  # type: ignore[attr-defined]
        if code == grpc.StatusCode.UNAVAILABLE:
            raise CallFailed(f"could not connect to {server} ({details}): is the server running there?",
                             EXIT_UNREACHABLE) from None
        raise CallFailed(f"the server refused: {code.name}: {details}", EXIT_REFUSED) from None


def table(headers: Sequence[str], rows: Sequence[Sequence[object]], right: Sequence[bool]) -> list[str]:
    """Plain aligned columns (the client has no terminal library)."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = []
    for n, row in enumerate(cells):
        lines.append("  ".join(c.rjust(w) if r else c.ljust(w) for c, w, r in zip(row, widths, right)).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return lines


def _waiting(seconds: float) -> None:
    print(f"heartsbot: the server paces listings: the next page in {seconds:.1f} s", file=sys.stderr)


def _json(message: object) -> None:
    print(json_format.MessageToJson(message, preserving_proto_field_name=True, indent=None))  # type: ignore[arg-type]


def leaderboard(args: argparse.Namespace) -> int:
    with tls.channel(args.server, args.tls_config) as channel:
        try:
            response = _call(args.server, ladder_pb2_grpc.LadderServiceStub(channel).GetLeaderboard,
                             ladder_pb2.GetLeaderboardRequest(ruleset=args.ruleset), args.timeout)
        except CallFailed as exc:
            print(f"heartsbot: {exc}", file=sys.stderr)
            return exc.code
    assert isinstance(response, ladder_pb2.GetLeaderboardResponse)
    if args.json:
        _json(response)
        return 0
    print("\n".join(leaderboard_lines(response, args.server)))
    return 0


def leaderboard_lines(response: ladder_pb2.GetLeaderboardResponse, server: str) -> list[str]:
    """The leaderboard as `heartsbot leaderboard` prints it. A flagged bot's column is headed
    and its flag said below the table, as `heartsd ladder leaderboard` does (before, a
    newcomer's pass: a column with no heading, and "UNRELIABLE" in it unexplained).

    >>> board = ladder_pb2.GetLeaderboardResponse(ruleset="standard", entries=[
    ...     ladder_pb2.LeaderboardEntry(rank=1, bot="a", owner="o", matches=3, unreliable=True)])
    >>> for line in leaderboard_lines(board, "h:1"): print(line)  # doctest: +NORMALIZE_WHITESPACE
    standard leaderboard on h:1
    #  bot  owner  rating  sigma  conservative  matches  points/deal  timeouts  left  flag
    -  ---  -----  ------  -----  ------------  -------  -----------  --------  ----  ----------
    1  a    o        0.00   0.00          0.00        3      0.00 ±?         0     0  UNRELIABLE
    UNRELIABLE: more than 5% of the bot's decisions were defaults (timeouts, illegal answers, away, auto-played)
    """
    if not response.entries:
        return [f"no rated {response.ruleset} matches yet on {server}"]
    rows = []
    for e in response.entries:
        ci = f"±{e.points_per_deal_ci:.2f}" if e.points_per_deal_ci else "±?"
        rows.append((e.rank, e.bot, e.owner, f"{e.rating:.2f}", f"{e.uncertainty:.2f}", f"{e.conservative:.2f}",
                     e.matches, f"{e.points_per_deal:.2f} {ci}", e.timeouts, e.disconnect_defaults,
                     "UNRELIABLE" if e.unreliable else ""))
    headers = ("#", "bot", "owner", "rating", "sigma", "conservative", "matches", "points/deal", "timeouts", "left",
               "flag")
    lines = [f"{response.ruleset} leaderboard on {server}",
             *table(headers, rows, [h not in ("bot", "owner", "flag") for h in headers])]
    if any(e.unreliable for e in response.entries):
        lines.append("UNRELIABLE: more than 5% of the bot's decisions were defaults (timeouts, illegal answers, "
                     "away, auto-played)")
    return lines


def matches(args: argparse.Namespace) -> int:
    try:
        return _bot_matches(args) if args.bot else _all_matches(args)
    except CallFailed as exc:
        print(f"heartsbot: {exc}", file=sys.stderr)
        return exc.code


def _all_matches(args: argparse.Namespace) -> int:
    if not 0 < args.limit <= 1000:
        print("heartsbot: --limit must be between 1 and 1000", file=sys.stderr)
        return EXIT_USAGE
    request = spectator_pb2.ListMatchesRequest(limit=args.limit, page_token=args.page_token,
                                               status=STATUSES.get(args.status or "", 0))
    rows = []
    with tls.channel(args.server, args.tls_config) as channel:
        list_matches = paced(spectator_pb2_grpc.SpectatorServiceStub(channel).ListMatches, _waiting)
        while True:
            response = _call(args.server, list_matches, request, args.timeout)
            assert isinstance(response, spectator_pb2.ListMatchesResponse)
            if args.json:
                _json(response)
            for m in response.matches:
                seats = ", ".join(f"{s.name} {m.totals[i]}" if i < len(m.totals) else s.name
                                  for i, s in enumerate(m.seats))
                winner = ", ".join(m.seats[w].name for w in m.result.winners if w < len(m.seats))
                created = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(m.created_unix_ms / 1000))
                rows.append((m.match_id, created, STATUS_NAMES.get(m.status, "?"), m.ruleset, m.deals_played,
                             seats, winner))
            if not (args.all and response.next_page_token):
                break
            request.page_token = response.next_page_token
    if not args.json:
        headers = ("match", "created", "status", "ruleset", "deals", "seats and totals", "winner")
        print("\n".join(table(headers, rows, [h == "deals" for h in headers])))
        more = f"; next page: --page-token {response.next_page_token}" if response.next_page_token else ""
        print(f"{len(rows)} match(es){more}")
    return 0


def _bot_matches(args: argparse.Namespace) -> int:
    with tls.channel(args.server, args.tls_config) as channel:
        profile = _call(args.server, ladder_pb2_grpc.LadderServiceStub(channel).GetBotProfile,
                        ladder_pb2.GetBotProfileRequest(bot=args.bot, ruleset=args.ruleset, limit=min(args.limit, 200)),
                        args.timeout)
    assert isinstance(profile, ladder_pb2.GetBotProfileResponse)
    if args.json:
        _json(profile)
        return 0
    print(f"latest rated {args.ruleset} matches of {args.bot} on {args.server}")
    rows = [(m.match_id, m.seat, m.rank, m.points, m.deals, f"{m.points / m.deals:.2f}" if m.deals else "")
            for m in profile.matches]
    headers = ("match", "seat", "rank", "points", "deals", "points/deal")
    print("\n".join(table(headers, rows, [h != "match" for h in headers])))
    if profile.HasField("standing"):
        s = profile.standing
        print(f"rank {s.rank}, rating {s.rating:.2f} ± {s.uncertainty:.2f}, {s.matches} rated matches, "
              f"{s.points_per_deal:.2f} points per deal")
    return 0


def add_parsers(sub: argparse._SubParsersAction,  # type: ignore[type-arg]
                formatter: type[argparse.HelpFormatter]) -> list[argparse.ArgumentParser]:
    def command(name: str, text: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=text, description=f"{text}\n\n{TABLE}", formatter_class=formatter)

    board = command("leaderboard", "a server's ladder ranking (LadderService)")
    listing = command("matches", "a server's matches, or one bot's rated matches")
    for p in (board, listing):
        options.add_server(p)
        p.add_argument("--ruleset", default="standard", help="the ladder's ruleset")
        p.add_argument("--json", action="store_true", help="print the response as JSON")
        p.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for the server's answer")
        tls.add_options(p)
    board.set_defaults(run=leaderboard)
    listing.add_argument("--bot", help="list this bot's latest rated matches instead (GetBotProfile; "
                                       "default: every match)")
    listing.add_argument("--status", choices=sorted(STATUSES), help="only matches with this status (default: any)")
    listing.add_argument("--limit", type=int, default=20, help="matches per page (at most 1000)")
    listing.add_argument("--page-token", default="", help="the next page, as printed after the previous one (default: the first)")
    listing.add_argument("--all", action="store_true", help="follow every page to the end")
    listing.set_defaults(run=matches)
    return [board, listing]
