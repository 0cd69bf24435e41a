"""``heartsbot``: play on a server, or run local matches against house strategies.

    heartsbot play --server HOST:PORT --token TOKEN --name NAME --strategy heuristic
    heartsbot local --ruleset standard --seed 42 --strategies mc heuristic random random
    heartsbot local --matches 20 --strategies mybot.py heuristic heuristic heuristic
    heartsbot stdio --server HOST:PORT --token TOKEN --name NAME -- ./mybot ARGS
    heartsbot leaderboard --server HOST:PORT [--ruleset standard]
    heartsbot matches --server HOST:PORT [--bot NAME] [--status finished]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable, Coroutine, Sequence
from importlib.metadata import entry_points
from typing import Any

from . import tls
from .loading import load_strategy


def _play(args: argparse.Namespace) -> int:
    from .client import BotClient, FatalError, UnreachableError, leave_on_signals
    from .logs import configure

    configure(args.log_level)

    strategy = load_strategy(args.strategy, args.seed)

    def ended(match_id: str, seat: int, result: object) -> None:
        report = client.stats.reports.get(match_id)
        if report is not None:
            print(report.line(), flush=True)

    client = BotClient(args.server, args.token, strategy, args.name, rulesets=args.rulesets or (),
                       max_matches=args.max_matches, on_match_end=ended, tls=args.tls_config)

    def say(text: str) -> None:
        print(f"heartsbot: {text}", file=sys.stderr, flush=True)

    async def main() -> bool:
        left_at_once = leave_on_signals(client, say)
        await client.run()
        return left_at_once()

    try:
        abandoned = asyncio.run(main())
    except FatalError as exc:
        print(f"heartsbot: the server refused the bot: {exc}", file=sys.stderr)
        return 2
    except UnreachableError as exc:
        print(f"heartsbot: {exc}", file=sys.stderr)
        return 4
    print(client.stats.summary() + (" (left at once, abandoning running matches)" if abandoned else ""),
          file=sys.stderr)
    return 130 if abandoned else 0


def _local(args: argparse.Namespace) -> int:
    run_local = _daemon_command("local")
    if run_local is None:
        print("heartsbot local runs matches on a daemon embedded in this process, and the daemon (heartsd) "
              "is not installed. Install it (from the repository: pip install ./engine ./clients/python .), "
              "or play on a running server with 'heartsbot play'.", file=sys.stderr)
        return 2
    try:
        return asyncio.run(run_local(args))
    except ValueError as exc:
        print(f"heartsbot: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


def _stdio(args: argparse.Namespace) -> int:
    from .logs import configure
    from .stdio import run_bridge

    configure("warning")  # the client's own warnings (connection lost ...) on stderr
    command = args.bot[1:] if args.bot[:1] == ["--"] else args.bot
    if not command:
        print("heartsbot stdio: name the bot to run after --, e.g. -- ./mybot ARGS", file=sys.stderr)
        return 2
    try:
        return asyncio.run(run_bridge(command, args.server, args.token, args.name, rulesets=args.rulesets or (),
                                      max_matches=args.max_matches, matches=args.matches, trace=args.trace,
                                      tls=args.tls_config))
    except KeyboardInterrupt:
        return 0


def _daemon_command(name: str) -> Callable[[argparse.Namespace], Coroutine[Any, Any, int]] | None:
    """A command the daemon's distribution provides (entry point group ``heartsbot.commands``):
    the client never imports the daemon, the daemon registers what needs it."""
    found = entry_points(group="heartsbot.commands", name=name)
    return next((ep.load() for ep in found), None)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="heartsbot", description="The Hearts Arena bot client.")
    sub = parser.add_subparsers(dest="command", required=True)
    play = sub.add_parser("play", help="connect a bot to a server and play until Ctrl-C",
                          description="Play until Ctrl-C. The first Ctrl-C (or SIGTERM) drains: the bot finishes "
                                      "its running matches and takes no new ones, then exits 0; a second leaves at "
                                      "once, abandoning them (exit 130).")
    play.add_argument("--server", required=True, metavar="HOST:PORT")
    play.add_argument("--token", required=True)
    play.add_argument("--name", required=True, help="the bot name the token was issued for")
    play.add_argument("--strategy", default="heuristic", help="random, heuristic, mc, module:Class or file.py[:Class]")
    play.add_argument("--rulesets", nargs="*", help="rulesets the bot plays (default: all)")
    play.add_argument("--max-matches", type=int, default=4)
    play.add_argument("--seed", type=int, default=0)
    tls.add_options(play)
    play.add_argument("--log-level", choices=["debug", "info", "warning", "error"], default="info",
                      help="debug logs every answer")
    play.set_defaults(run=_play)
    local = sub.add_parser("local", help="run matches on an embedded server over real gRPC")
    local.add_argument("--ruleset", default="standard")
    local.add_argument("--players", type=int, default=None)
    local.add_argument("--seed", type=int, default=42)
    local.add_argument("--strategies", nargs="+", default=["heuristic", "heuristic", "random", "random"])
    local.add_argument("--matches", type=int, default=1)
    local.add_argument("--deals", type=int, default=0, help="fixed deals per match (default: a game to the end)")
    local.add_argument("--decision-ms", type=int, default=200, help="time per decision (mc thinks most of it)")
    local.add_argument("--db", help="keep the matches in this SQLite file (default: a temporary one)")
    local.add_argument("--tls-cert", metavar="FILE", help="the embedded daemon serves TLS with this PEM certificate "
                       "(and --tls-key); the seats trust it, or --ca")
    local.add_argument("--tls-key", metavar="FILE", help="the PEM private key of --tls-cert")
    local.add_argument("--tls-client-ca", metavar="FILE", help="mutual TLS: the daemon requires client certificates "
                       "signed by this CA (the seats present --cert and --key)")
    tls.add_options(local)
    local.set_defaults(run=_local)
    stdio = sub.add_parser("stdio", help="play a bot in any language through lines on its stdin/stdout (docs/stdio.md)")
    stdio.add_argument("--server", required=True, metavar="HOST:PORT")
    stdio.add_argument("--token", required=True)
    stdio.add_argument("--name", required=True, help="the bot name the token was issued for")
    stdio.add_argument("--rulesets", nargs="*", help="rulesets the bot plays (default: all)")
    stdio.add_argument("--max-matches", type=int, default=1,
                       help="matches at once (default 1; the bot still gets one request at a time)")
    stdio.add_argument("--matches", type=int, default=0, help="play this many matches, then drain and exit (default: until Ctrl-C)")
    stdio.add_argument("--trace", action="store_true", help="copy every line to and from the bot to stderr")
    tls.add_options(stdio)
    stdio.add_argument("bot", nargs=argparse.REMAINDER, metavar="-- COMMAND [ARGS]", help="the bot to run")
    stdio.set_defaults(run=_stdio)
    from .help import DefaultsHelp
    from .remote import add_parsers

    add_parsers(sub, DefaultsHelp)
    args = parser.parse_args(argv)
    unknown = _unknown_rulesets(getattr(args, "rulesets", None) or ())
    if unknown:
        print(unknown, file=sys.stderr)
        return 2
    try:
        args.tls_config = tls.from_args(args) if hasattr(args, "tls") else None
    except ValueError as exc:
        print(f"heartsbot: {exc}", file=sys.stderr)
        return 2
    return int(args.run(args))


def _unknown_rulesets(names: Sequence[str]) -> str:
    """The message for ``--rulesets`` naming rulesets that do not exist ("" if all do)."""
    from hearts_engine.presets import PRESETS

    unknown = [n for n in names if n not in PRESETS]
    if not unknown:
        return ""
    return f"heartsbot: unknown ruleset{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}; " \
           f"known: {', '.join(sorted(PRESETS))}"


if __name__ == "__main__":
    raise SystemExit(main())

