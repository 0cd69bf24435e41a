"""``heartsbot``: play on a server, or run local matches against house strategies.

    heartsbot play --server HOST:PORT --token TOKEN --name NAME --strategy heuristic [--matches N]
    heartsbot local --ruleset standard --seed 42 --strategies mc heuristic random random
    heartsbot local --matches 20 --strategies mybot.py heuristic heuristic heuristic
    heartsbot stdio --server HOST:PORT --token TOKEN --name NAME -- ./mybot ARGS
    heartsbot leaderboard --server HOST:PORT [--ruleset standard]
    heartsbot matches --server HOST:PORT [--bot NAME] [--status finished]

Every client takes the same options (``--server``/``HEARTS_SERVER``, ``--token``/
``HEARTS_TOKEN``, ``--name``/``HEARTS_NAME``, ``--max-matches``, ``--matches``, TLS,
``--version``: :mod:`heartsbot.options`) and exits with the same codes
(:mod:`heartsbot.exits`).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import textwrap
from collections.abc import Callable, Coroutine, Sequence
from importlib.metadata import entry_points
from typing import Any

from . import options, tls
from .exits import EXIT_INTERRUPTED, EXIT_OK, EXIT_REFUSED, EXIT_UNREACHABLE, EXIT_USAGE
from .exits import TABLE as EXIT_CODES
from .exits import quiet_on_closed_stdout
from .help import DefaultsHelp
from .loading import load_strategy, version_of

READY_TIMEOUT_S = 30.0  # the stdio bridge's handshake (stdio.READY_TIMEOUT_S)


def _play(args: argparse.Namespace) -> int:
    from .client import BotClient, FatalError, UnreachableError, leave_on_signals, sent_away_message
    from .logs import configure

    configure(args.log_level)
    try:
        strategy = load_strategy(args.strategy, args.seed)
    except ValueError as exc:
        print(f"heartsbot: {exc}", file=sys.stderr)
        return EXIT_USAGE

    def ended(match_id: str, seat: int, result: object) -> None:
        report = client.stats.reports.get(match_id)
        if report is not None:
            print(report.line(), flush=True)

    client = BotClient(args.server, args.token, strategy, args.name, rulesets=args.rulesets or (),
                       max_matches=args.max_matches, on_match_end=ended, tls=args.tls_config,
                       drain_after=args.matches, version=args.bot_version or version_of(strategy))

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
        return EXIT_REFUSED
    except UnreachableError as exc:
        print(f"heartsbot: {exc}", file=sys.stderr)
        return EXIT_UNREACHABLE
    except KeyboardInterrupt:  # before the signal handlers were in place
        return EXIT_INTERRUPTED
    if client.sent_away:
        say(sent_away_message(client.sent_away, client.sent_away_cause))
    print(client.stats.summary() + (" (left at once, abandoning running matches)" if abandoned else ""),
          file=sys.stderr)
    return EXIT_INTERRUPTED if abandoned else EXIT_OK


def _local(args: argparse.Namespace) -> int:
    run_local = _daemon_command("local")
    if run_local is None:
        print("heartsbot local runs matches on a daemon embedded in this process, and the daemon (heartsd) "
              "is not installed. Install it (from the repository: pip install ./engine ./clients/python .), "
              "or play on a running server with 'heartsbot play'.", file=sys.stderr)
        return EXIT_USAGE
    try:
        return asyncio.run(run_local(args))
    except ValueError as exc:
        print(f"heartsbot: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


def _stdio(args: argparse.Namespace) -> int:
    from .logs import configure
    from .stdio import run_bridge

    configure("warning")  # the client's own warnings (connection lost ...) on stderr
    command = args.bot[1:] if args.bot[:1] == ["--"] else args.bot
    if not command:
        print("heartsbot stdio: name the bot to run after --, e.g. -- ./mybot ARGS", file=sys.stderr)
        return EXIT_USAGE
    try:
        return asyncio.run(run_bridge(command, args.server, args.token, args.name, rulesets=args.rulesets or (),
                                      max_matches=args.max_matches, matches=args.matches, trace=args.trace,
                                      ready_timeout_s=args.handshake_timeout, tls=args.tls_config))
    except KeyboardInterrupt:  # Ctrl-C while the bot starts, before there is anything to drain
        return EXIT_INTERRUPTED


def _daemon_command(name: str) -> Callable[[argparse.Namespace], Coroutine[Any, Any, int]] | None:
    """A command the daemon's distribution provides (entry point group ``heartsbot.commands``):
    the client never imports the daemon, the daemon registers what needs it."""
    found = entry_points(group="heartsbot.commands", name=name)
    return next((ep.load() for ep in found), None)


class _Help(DefaultsHelp, argparse.RawDescriptionHelpFormatter):
    """Each option's default, and the description's own line breaks (the exit-code table)."""


def build_parser() -> argparse.ArgumentParser:
    """Every heartsbot command; each option has help text that shows its default."""
    from .remote import add_parsers

    parser = argparse.ArgumentParser(prog="heartsbot", description="The Hearts Arena bot client.",
                                     epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    options.add_version(parser)
    sub = parser.add_subparsers(dest="command", required=True)

    def command(name: str, text: str, description: str = "") -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=text, formatter_class=_Help,
                           description=textwrap.fill(description or text, 88) + "\n\n" + EXIT_CODES)
        options.add_version(p)
        return p

    play = command("play", "connect a bot to a server and play until Ctrl-C (or --matches)",
                   "Play until Ctrl-C or --matches. The first Ctrl-C (or SIGTERM) drains: the bot finishes its "
                   "running matches and takes no new ones, then exits 0; a second leaves at once, abandoning them "
                   "(exit 130).")
    options.add_bot_connection(play)
    play.add_argument("--strategy", required=True,
                      help="random, heuristic, mc, graded-Q, package.module:Class or file.py[:Class] (required: "
                           "there is no default, so a house strategy never plays under your bot's name)")
    play.add_argument("--seed", type=int, default=0, help="the strategy's random seed")
    play.add_argument("--bot-version", metavar="V", help="the version sent in hello, which a tournament freezes "
                      "(default: the strategy's `version`, else src- and a digest of its source file)")
    play.add_argument("--log-level", choices=["debug", "info", "warning", "error"], default="info",
                      help="debug logs every answer")
    play.set_defaults(run=_play)
    local = command("local", "run matches on an embedded server over real gRPC (a strategy per seat)")
    local.add_argument("--ruleset", default="standard", help="the preset")
    local.add_argument("--players", type=int, default=None, help="seats (default: one per --strategies)")
    local.add_argument("--seed", type=options.shuffle_seed, default=42, help="the first match's shuffle seed (then +1 a match)")
    local.add_argument("--strategies", nargs="+", default=["heuristic", "heuristic", "random", "random"],
                       metavar="STRATEGY", help="one per seat, clockwise from seat 0")
    local.add_argument("--matches", type=options.at_least(1), default=1, metavar="N", help="matches to play")
    local.add_argument("--deals", type=options.at_least(0), default=0,
                       help="fixed deals per match, at most 1000 (0: a game to the end)")
    local.add_argument("--decision-ms", type=options.at_least(1), default=200,
                       help="time per decision (mc thinks most of it)")
    local.add_argument("--db", metavar="FILE",
                       help="keep the matches in this SQLite file (default: a temporary one)")
    local.add_argument("--tls-cert", metavar="FILE", help="the embedded daemon serves TLS with this PEM certificate "
                       "(and --tls-key); the seats trust it, or --ca (default: no TLS)")
    local.add_argument("--tls-key", metavar="FILE", help="the PEM private key of --tls-cert (default: none)")
    local.add_argument("--tls-client-ca", metavar="FILE", help="mutual TLS: the daemon requires client certificates "
                       "signed by this CA (the seats present --cert and --key; default: none)")
    tls.add_options(local)
    local.set_defaults(run=_local)
    stdio = command("stdio", "play a bot in any language through lines on its stdin/stdout (docs/stdio.md)")
    options.add_bot_connection(stdio)
    stdio.add_argument("--trace", action="store_true", help="copy every line to and from the bot to stderr")
    stdio.add_argument("--handshake-timeout", type=float, default=READY_TIMEOUT_S, metavar="SECONDS",
                       help="how long the bot has to answer 'hearts 1' with 'ok'")
    stdio.add_argument("bot", nargs=argparse.REMAINDER, metavar="-- COMMAND [ARGS]", help="the bot to run")
    stdio.set_defaults(run=_stdio)
    for p in add_parsers(sub, _Help):
        options.add_version(p)
    for name, p in sub.choices.items():
        p.set_defaults(parser=p)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    return quiet_on_closed_stdout(lambda: _main(argv))


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    options.resolve(args.parser, args)
    unknown = _unknown_rulesets(getattr(args, "rulesets", None) or ())
    if unknown:
        print(unknown, file=sys.stderr)
        return EXIT_USAGE
    try:
        args.tls_config = tls.from_args(args) if hasattr(args, "tls") else None
    except ValueError as exc:
        print(f"heartsbot: {exc}", file=sys.stderr)
        return EXIT_USAGE
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

