"""``heartsd``: the daemon and its tools.

    heartsd serve [--config FILE] [--port 0] [--bot NAME:TOKEN ...] [--house-matches 2]
    heartsd replay verify [MATCH_ID ...] [--db PATH]
    heartsd replay show MATCH_ID [--db PATH]
    heartsd health [--server HOST:PORT]   (or HEARTS_SERVER; --target is the same)
    heartsd conformance [--port 0] [--name NAME] [--token TOKEN] [-- CLIENT COMMAND ...]
    heartsd admin bots|matches|create|cancel|watch ...   (over gRPC; see heartsd admin --help)

Every serve option can also come from a TOML file (--config) or an environment
variable HEARTSD_<OPTION> (e.g. HEARTSD_DECISION_MS=500); flags win.
"""

from __future__ import annotations

import argparse
import asyncio
import errno
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .config import ClockDefaults, ConfigError, Settings
from .logs import configure

if TYPE_CHECKING:
    from .store import Store, StoredMatch


def _serve(args: argparse.Namespace) -> int:
    flags = {
        "host": args.host,
        "port": args.port,
        "db_path": args.db,
        "instance": args.instance,
        "admin_token": args.admin_token,
        "tls_cert": args.tls_cert,
        "tls_key": args.tls_key,
        "tls_client_ca": args.tls_client_ca,
        "bot_tokens": ",".join(args.bot) if args.bot else None,
        "bot_owners": ",".join(args.bot_owner) if args.bot_owner else None,
        "decision_ms": args.decision_ms,
        "bank_ms": args.bank_ms,
        "max_illegal": args.max_illegal,
        "auto_after": args.auto_after,
        "grace_ms": args.grace_ms,
        "house_matches": args.house_matches,
        "house_ruleset": args.house_ruleset,
        "house_delay_ms": args.house_delay_ms,
        "ladder": True if args.ladder else None,
        "ladder_ruleset": args.ladder_ruleset,
        "ladder_house": ",".join(args.ladder_house) if args.ladder_house else None,
        "ladder_fill": True if args.ladder_fill else None,
        "ladder_same_owner": True if args.ladder_same_owner else None,
        "ladder_deals": args.ladder_deals,
        "ladder_set_tables": args.ladder_set_tables,
        "spectator_delay_s": args.spectator_delay_s,
        "shutdown_grace_s": args.shutdown_grace_s,
        "log_format": args.log_format,
        "log_level": args.log_level,
        "web": args.web,
        "human_decision_ms": args.human_decision_ms,
        "web_house_delay_ms": args.web_house_delay_ms,
    }
    try:
        settings = Settings.load(file=args.config, flags=flags)
    except ConfigError as exc:
        print(f"heartsd: configuration error: {exc}", file=sys.stderr)
        return 2
    configure(settings.log_format, settings.log_level)
    import structlog

    from .config import unknown_env
    from .grpc_core import ENV, apply_experiments

    experiments, ours = apply_experiments(settings.grpc_experiments, os.environ)  # done by _main, normally
    cli_log = structlog.get_logger("heartsd.cli")
    if not ours:
        cli_log.info("gRPC's experiments are the environment's (or gRPC was loaded first), not grpc_experiments",
                     **{ENV: experiments}, grpc_experiments=settings.grpc_experiments)
    for line in unknown_env():
        cli_log.warning(line)
    exposed = _secrets_readable_by_others(args.config)
    if exposed:
        cli_log.warning(exposed)
    from . import loop
    from .db import SETTING, StoreError, redacted
    from .lease import LeaseHeld
    from .server import ListenError

    generated = not args.admin_token and not os.environ.get("HEARTSD_ADMIN_TOKEN") and not _in_file(args.config)
    try:
        loop.run(_serve_saying_if_the_store_is_new(settings, generated), settings.event_loop)
    except (ListenError, LeaseHeld, StoreError) as exc:
        print(f"heartsd: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # stdout's reader went away: main ends quietly
        raise
    except OSError as exc:
        if exc.errno == errno.ENOSPC:  # before (an operator's pass): "[Errno 28] ...", exit 1, no path
            print(f"heartsd: no space left on the filesystem of the store {redacted(settings.db_path)} "
                  f"({SETTING}): free space there, or give another --db", file=sys.stderr)
            return 2
        print(f"heartsd: {exc}", file=sys.stderr)
        return 1
    return 0


async def _serve_saying_if_the_store_is_new(settings: Settings, show_admin_token: bool) -> None:
    """Serve; once serving, warn if the SQLite store was created just now.

    ``--db heartsd.bd`` (a typo) would otherwise start on a new, empty store without a
    word, and the operator's ladder would seem gone. The warning comes once the daemon
    is serving, so a daemon that stops at start (port in use, lease held) says nothing
    of a store it never made."""
    import structlog

    from .db import new_sqlite_file
    from .server import serve

    new_store, made = new_sqlite_file(settings.db_path), "created a new, empty store at"
    if new_store is None and (new_store := _empty_file(settings.db_path)) is not None:
        # An empty file (0 bytes) is a new store to SQLite: `mv heartsd.db.partial heartsd.db`
        # (a killed backup's leftover) or a `touch`ed file served an empty arena without a
        # word (an operator's pass), where a missing file was said.
        made = "the store file was empty (0 bytes, as a `touch`ed file or a killed backup's TARGET.partial may be) " \
               "and now holds a new, empty store:"
    if new_store is None:
        await serve(settings, show_admin_token=show_admin_token)
        return
    ready: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    async def say_when_ready() -> None:
        await ready
        if os.path.isfile(new_store):
            structlog.get_logger("heartsd.cli").warning(
                f"{made} {new_store}; if you meant an existing one, stop heartsd and "
                "check where its path came from (--db, HEARTSD_DB_PATH, or db_path in the --config file) and the "
                "working folder", path=new_store)

    saying = asyncio.get_running_loop().create_task(say_when_ready())
    try:
        await serve(settings, on_ready=ready, show_admin_token=show_admin_token)
    finally:
        saying.cancel()


def _empty_file(url: str) -> str | None:
    """The absolute path of the SQLite store file at ``url`` if it is an empty file (0 bytes,
    no write-ahead log beside it), which SQLite takes for a new database; else None."""
    from .db import is_postgresql, sqlite_path

    if is_postgresql(url):
        return None
    path = sqlite_path(url)
    try:
        if path == ":memory:" or not os.path.isfile(path) or os.path.getsize(path) or os.path.getsize(f"{path}-wal"):
            return None
    except FileNotFoundError:  # no -wal beside it
        pass
    except OSError:
        return None
    return os.path.abspath(path)


def _secrets_readable_by_others(config: str | None) -> str | None:
    """A warning when the config file holds the admin token or bot tokens and other users
    may read it (an operator's pass: a 0644 file, no word said), or None."""
    import stat
    import tomllib

    if not config:
        return None
    try:
        with open(config, "rb") as f:
            mode = os.fstat(f.fileno()).st_mode
            data = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError):
        return None
    held = [key for key in ("admin_token", "bot_tokens") if key in data]
    if not held or not mode & (stat.S_IRGRP | stat.S_IROTH):
        return None
    return (f"config file {config} holds {' and '.join(held)} and other users may read it "
            f"(mode {stat.S_IMODE(mode):04o}): chmod 600 {config}")


def _in_file(config: str | None) -> bool:
    """Whether the config file sets the admin token (then it was not generated)."""
    if not config:
        return False
    import tomllib

    try:
        with open(config, "rb") as f:
            return "admin_token" in tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError):
        return False


def _open_store(path: str, write: bool = False):  # type: ignore[no-untyped-def]
    """The existing store at ``path`` (never a new one); read-only unless ``write``.
    A missing, unreadable or too new store ends the command: its message, exit 2."""
    from .db import StoreError
    from .store import Store

    try:
        return Store.open_existing(path, write=write)
    except StoreError as exc:
        print(f"heartsd: {exc}", file=sys.stderr)
        raise SystemExit(2) from None


def _known_ruleset(name: str, command: str) -> None:
    """Exit 2 listing the known rulesets unless ``name`` is one."""
    from .spelling import unknown_ruleset

    if problem := unknown_ruleset(name):
        print(f"{command}: {problem}", file=sys.stderr)
        raise SystemExit(2)


def _backup(args: argparse.Namespace) -> int:
    from . import backup

    return backup.main(args.db, args.target)


def _restored(args: argparse.Namespace) -> int:
    from . import backup

    return backup.restored_main(args.db)


def _verify(args: argparse.Namespace) -> int:
    import dataclasses

    from google.protobuf.message import DecodeError
    from heartsbot.proto.game_pb2 import MatchResult

    from .records import verify

    store = _open_store(args.db)
    verified = failures = skipped = 0
    damage = store.db.damage()
    if damage:  # before (an operator's pass): "80 verified, 0 failed", exit 0, on a damaged file
        print(f"the store file itself is damaged (SQLite's quick_check): {'; '.join(damage)}")
        failures += 1
    ids = args.match_ids or store.ids()
    for match_id in ids:
        try:  # one damaged row is a failure to report, not the end of the run (an attack pass: a traceback)
            stored = store.get(match_id)
            problem = None
            if stored is not None and stored.record is not None:  # the result column as listings read it
                column = store.result_column(match_id)
                stored = dataclasses.replace(stored, result=MatchResult.FromString(column) if column else None)
                problem = verify(stored, store.ladder_results(match_id))
        except (DecodeError, ValueError, TypeError) as exc:  # this row's; a damaged file ends the run (exit 2)
            print(f"{match_id}: FAILED: its row cannot be read ({type(exc).__name__}: {str(exc)[:200]})")
            failures += 1
            continue
        if stored is None:
            print(f"{match_id}: not found")
            failures += 1
        elif stored.status == "running" or stored.record is None:
            print(f"{match_id}: skipped ({stored.status}, no record to verify: {stored.reason or 'in progress'})")
            skipped += 1
        elif problem:
            print(f"{match_id}: FAILED: {problem} ({stored.status})")
            failures += 1
        else:
            print(f"{match_id}: OK ({stored.status}, {stored.deals_played} deals)")
            verified += 1
    print(f"{verified} verified, {failures} failed, {skipped} skipped")
    return 1 if failures else 0


def _show(args: argparse.Namespace) -> int:
    """Refuses what the daemon serves to nobody (spectating.record): a running match's
    checkpoint (its seed gives every hand still to be dealt) and a table of a duplicate set
    while another table plays the same hands. Before (an attack pass), it printed them with
    no word of it, to an organiser settling a dispute who might paste them where bots'
    owners read; the daemon even keeps such a seed out of its own log."""
    from .records import show

    store = _open_store(args.db)
    try:
        stored = store.get(args.match_id)
        held = _still_held(store, stored) if stored is not None else ""
        if held:
            print(f"heartsd: match {args.match_id} is not shown: {held}", file=sys.stderr)
            return 1
        lines = list(show(stored)) if stored is not None else []
    except Exception as exc:  # a damaged or forged record: the disputed ones (an attack pass: a traceback)
        print(f"heartsd: match {args.match_id} cannot be shown: its stored record does not read or replay "
              f"({type(exc).__name__}: {str(exc)[:200]}); `heartsd replay verify {args.match_id}` says more",
              file=sys.stderr)
        return 1
    if stored is None:
        tournament = (f" ({args.match_id} is a tournament's id: `heartsd tournament show {args.match_id}` lists its "
                      "matches)") if args.match_id.startswith("t-") else ""
        print(f"heartsd: no match {args.match_id}{tournament}", file=sys.stderr)
        return 1
    for line in lines:
        print(line)
    return 0


def _still_held(store: Store, stored: StoredMatch) -> str:
    """Why ``stored``'s record would show cards a seat still holds ("" if it would not)."""
    if stored.status == "running":
        return ("it is still running (on a daemon of this store); its record so far holds its seed, which gives "
                "every hand still to be dealt: show it once it is over")
    if stored.set_id and store.set_running(stored.set_id):
        return ("another table of its duplicate set is still being played with the same hands; show it once "
                "every table of the set is over")
    return ""


def _ladder(args: argparse.Namespace) -> int:
    from heartsbot.exits import EXIT_REFUSED, EXIT_USAGE

    from .db import StoreError
    from .ladder import BotExists, LadderError, OwnerSpelling, places
    from .store import Store

    if getattr(args, "ruleset", None) is not None:
        _known_ruleset(args.ruleset, "heartsd ladder")
    if args.ladder_command == "add-bot" and args.create:
        try:
            store = Store(args.db)
        except StoreError as exc:
            print(f"heartsd: {exc}", file=sys.stderr)
            return 2
    else:
        store = _open_store(args.db, write=args.ladder_command != "leaderboard")
    ladder = store.ladder
    try:
        if args.ladder_command == "add-bot":
            token = ladder.add_bot(args.name, args.owner)
            print(f"bot {args.name} (owner {args.owner}) registered. Its token, shown only this once:")
            print(token)
        elif args.ladder_command == "rotate":
            token = ladder.rotate(args.name)
            print(f"new token for {args.name} (the old one no longer works), shown only this once:")
            print(token)
        elif args.ladder_command == "revoke":
            ladder.revoke(args.name)
            print(f"bot {args.name}: token revoked")
        elif args.ladder_command == "recompute":
            # Rebuilt from edited result rows, the ratings would hide the edit: a second run then
            # said "identical" (an attack pass). Such rows are named and nothing is rewritten.
            unlike = store.ladder_rows_unlike_their_matches(args.ruleset)
            if unlike:
                for line in unlike[:20]:
                    print(line)
                print(f"{args.ruleset}: {len(unlike)} result row(s) differ from their matches' records; no rating "
                      "was rewritten. `heartsd replay verify` checks the records; restore the store from a copy")
                return 1
            bots, change = ladder.recompute(args.ruleset)
            verdict = "identical" if change == 0.0 else f"DIFFERENT (largest change {change:.6g})"
            print(f"{args.ruleset}: {bots} ratings rebuilt from the stored results; {verdict} to the stored ones")
            if change:
                return 1
        elif args.ladder_command == "leaderboard":
            standings = ladder.standings(args.ruleset)
            if not standings:
                print(f"no rated {args.ruleset} matches yet")
            else:
                print(f"{'#':>3}  {'bot':<20}{'owner':<20}{'rating':>8}{'sigma':>7}{'conservative':>14}{'matches':>9}"
                      f"{'points/deal':>18}  {'decisions':>9} {'defaulted':>9}  timeout/illegal/left/auto")
                for i, s in zip(places(standings), standings):  # equal ratings share a rank, as on the web
                    ci = "±?" if s.ppd_ci == float("inf") else f"±{s.ppd_ci:.2f}"  # one match: no interval, as heartsbot says
                    flag = ("  UNRELIABLE" if s.unreliable else "") + ("  REVOKED" if s.revoked else "")
                    kinds = f"{s.timeouts}/{s.illegal}/{s.disconnects}/{s.auto}"
                    print(f"{i:>3}  {s.bot:<20}{s.owner:<20}{s.mu:>8.2f}{s.sigma:>7.2f}{s.conservative:>14.2f}"
                          f"{s.matches:>9}{s.points_per_deal:>11.2f} {ci:>6}  {s.decisions:>9} "
                          f"{s.default_share:>8.1%}  {kinds:<25}{flag}")
                print("defaulted: decisions the server played for the bot (timeout, illegal answers, away, "
                      "auto-played after it stopped answering); UNRELIABLE above 5%")
    except LadderError as exc:
        # The clients' codes (README, "Command-line convention"), never 1 ("the bot failed"):
        # a name or an owner spelling already taken is refused (3); an unknown or malformed name is usage (2).
        print(f"heartsd ladder: {exc}", file=sys.stderr)
        return EXIT_REFUSED if isinstance(exc, (BotExists, OwnerSpelling)) else EXIT_USAGE
    finally:
        store.close()
    return 0


def _health(args: argparse.Namespace) -> int:
    """Exit 0 when the daemon at ``--server`` answers SERVING (for container health checks)."""
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    from heartsbot import tls

    try:
        settings = tls.from_args(args)
    except ValueError as exc:
        print(f"heartsd health: {exc}", file=sys.stderr)
        return 2
    with tls.channel(args.server, settings, args.tls_name) as channel:
        try:
            response = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=args.timeout)
        except grpc.RpcError as exc:
            print(f"{args.server}: {exc.code().name}", file=sys.stderr)
            return 1
    name = health_pb2.HealthCheckResponse.ServingStatus.Name(response.status)
    print(f"{args.server}: {name}")
    return 0 if response.status == health_pb2.HealthCheckResponse.SERVING else 1


def _conformance(args: argparse.Namespace) -> int:
    """Put one client through every protocol behaviour; exit 0 when all pass."""
    import secrets

    from .conformance import run_kit

    command = list(args.client_command)
    if command[:1] == ["--"]:
        command = command[1:]
    # Prefixed: the token is substituted after --token in the client's command, where a
    # random one starting with '-' would read as an option (about 1 run in 64).
    token = args.token or "ct_" + secrets.token_urlsafe(24)
    configure("console", "error")
    try:
        tls = {k: v for k, v in (("tls_cert", args.tls_cert), ("tls_key", args.tls_key),
                                 ("tls_client_ca", args.tls_client_ca)) if v}
        return asyncio.run(run_kit(args.host, args.port, args.name, token, args.timeout, command, args.json, tls))
    except ConfigError as exc:
        print(f"heartsd conformance: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # stdout's reader went away: main ends quietly
        raise
    except OSError as exc:
        print(f"heartsd conformance: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


# What a Ctrl-C leaves, said by the commands whose interruption an operator may wonder about.
INTERRUPTED = {
    ("tournament", "watch"): "stopped watching; the tournament goes on",
    ("admin", "watch"): "stopped watching; the match goes on",
    ("tournament", "create"): "`heartsd tournament list` shows whether the daemon started the tournament before it",
    ("admin", "create"): "`heartsd admin matches --status running` shows whether the daemon started the match before it",
    ("admin", "cancel"): "`heartsd admin matches` shows whether the daemon cancelled the match before it",
    **{("tournament", move): f"`heartsd tournament show ID` shows whether the daemon did the {move} before it"
       for move in ("pause", "resume", "cancel")},
    ("store", "backup"): "no copy was written",
}


def _interrupted(args: argparse.Namespace) -> int:
    """A command stopped by Ctrl-C (SIGINT): one line saying which and what it leaves, and
    exit 130 (heartsbot.exits). Before (an organiser's pass), every command but ``serve``,
    ``conformance`` and ``tournament local`` printed a KeyboardInterrupt traceback, also
    ``tournament watch``, whose own message says Ctrl-C is how to stop watching. (``serve``
    handles its signals itself once it runs: this is its start, before the store is open.)"""
    from heartsbot.exits import EXIT_INTERRUPTED

    sub = next((v for k, v in vars(args).items() if k.endswith("_command") and isinstance(v, str)), "")
    name = " ".join(p for p in ("heartsd", args.command, sub) if p)
    note = INTERRUPTED.get((args.command, sub))
    print(f"{name}: interrupted (Ctrl-C)" + (f": {note}" if note else ""), file=sys.stderr)
    return EXIT_INTERRUPTED


def main(argv: Sequence[str] | None = None) -> int:
    from heartsbot.exits import quiet_on_closed_stdout

    return quiet_on_closed_stdout(lambda: _main(argv))


def _grpc_experiments_first(argv: Sequence[str]) -> None:
    """``heartsd serve``: hand the ``grpc_experiments`` setting (from the file or the
    environment: it has no flag) to gRPC's core before anything imports grpc, as the other
    commands' parsers below do; the core reads it once, as it loads (grpc_core.py). A
    configuration that does not load is left to :func:`_serve` to report."""
    if not argv or argv[0] != "serve":
        return
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--config")
    known, _ = pre.parse_known_args(argv[1:])
    try:
        settings = Settings.load(file=known.config)
    except ConfigError:
        return
    from .grpc_core import apply_experiments

    apply_experiments(settings.grpc_experiments, os.environ)


def _main(argv: Sequence[str] | None) -> int:
    _grpc_experiments_first(sys.argv[1:] if argv is None else argv)
    from heartsbot.help import DefaultsHelp
    from heartsbot.options import DEFAULT_SERVER

    from . import __version__

    parser = argparse.ArgumentParser(prog="heartsd", description="The Hearts Arena daemon.")
    parser.add_argument("--version", action="version", version=f"heartsd {__version__}",
                        help="print the version and exit")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run the daemon",
                           description="Run the daemon. Every setting also comes from --config (TOML) or "
                                       "HEARTSD_<SETTING> in the environment: defaults < file < environment < flags "
                                       "(README, \"Settings\"); the defaults shown are the built-in ones.")
    # The built-in defaults (heartsd.config), shown in the help: a flag left out is None here,
    # so that the file and the environment can still set it.
    d, clock = Settings(), ClockDefaults()
    serve.add_argument("--config", metavar="FILE", help="TOML settings file (default: none)")
    serve.add_argument("--host", help=f"the address to listen on (default {d.host}; beyond loopback needs an "
                                      "admin token)")
    serve.add_argument("--port", type=int, help=f"the gRPC port; 0 picks a free port (printed at start; default {d.port})")
    serve.add_argument("--db", help=f"SQLite path or postgresql:// URL (default {d.db_path})")
    serve.add_argument("--instance", help=f"this daemon's name in a store shared by several (default {d.instance})")
    serve.add_argument("--admin-token", help="required when --host listens beyond loopback (default: generated "
                                             "and printed at start)")
    serve.add_argument("--tls-cert", metavar="FILE",
                       help="serve TLS with this PEM certificate chain (and --tls-key; default: no TLS)")
    serve.add_argument("--tls-key", metavar="FILE", help="the PEM private key of --tls-cert (default: none)")
    serve.add_argument("--tls-client-ca", metavar="FILE",
                       help="mutual TLS: every client must present a certificate signed by this PEM CA (default: none)")
    serve.add_argument("--bot", action="append", metavar="NAME:TOKEN",
                       help="a bot and its token (repeatable; default: none, ladder bots have their own)")
    serve.add_argument("--bot-owner", action="append", metavar="NAME:OWNER",
                       help="the owner of a --bot (repeatable; default: each is its own owner): tournaments and "
                            "duplicate sets never seat two bots of one owner together")
    serve.add_argument("--decision-ms", type=int, help=f"a bot's time per decision (default {clock.decision_ms})")
    serve.add_argument("--bank-ms", type=int, help=f"extra time for the whole match (default {clock.bank_ms})")
    serve.add_argument("--max-illegal", type=int, help="rejected answers per decision before the default is "
                                                       f"played (default {clock.max_illegal})")
    serve.add_argument("--auto-after", type=int, help="consecutive defaults after which a seat is played without "
                                                      f"waiting, until its bot answers again (default {clock.auto_after})")
    serve.add_argument("--grace-ms", type=int, help="how long a disconnected bot may be away before its seat is "
                                                    f"defaulted (default {clock.grace_ms})")
    serve.add_argument("--house-matches", type=int,
                       help=f"keep this many house-bot matches running (default {d.house_matches})")
    serve.add_argument("--house-ruleset", help=f"the ruleset of those matches (default {d.house_ruleset})")
    serve.add_argument("--house-delay-ms", type=int,
                       help=f"pause between house moves (watchable demos; default {d.house_delay_ms})")
    serve.add_argument("--ladder", action="store_true", help="run continuous rated matchmaking")
    serve.add_argument("--ladder-ruleset", help=f"the ladder's ruleset (default {d.ladder_ruleset})")
    serve.add_argument("--ladder-house", nargs="*", metavar="STRATEGY",
                       help="house strategies to play on the ladder as registered bots (e.g. random heuristic mc; "
                            "default: none)")
    serve.add_argument("--ladder-deals", type=int, metavar="N",
                       help="deals per rated match, each a fresh shuffle "
                            "(default 0: the players times the pass schedule's length, 16 in standard)")
    serve.add_argument("--ladder-set-tables", type=int, metavar="K",
                       help="tables per duplicate set: K tables of different owners' bots play the same fresh "
                            "shuffles at once (default 2; 1: plain tables only)")
    serve.add_argument("--ladder-fill", action="store_true",
                       help="house bots only complete tables the connected bots cannot fill (default: they play always)")
    serve.add_argument("--ladder-same-owner", action="store_true",
                       help="let two bots of one owner meet at a plain ladder table (a duplicate set never mixes them)")
    serve.add_argument("--spectator-delay-s", type=float,
                       help="show spectators every hand, this many seconds after its deal ended "
                            f"(default {d.spectator_delay_s:g}: off, no card is shown before it is played)")
    serve.add_argument("--shutdown-grace-s", type=float,
                       help="on SIGTERM or Ctrl-C, how long running matches may finish before they are "
                            f"aborted and recorded (default {d.shutdown_grace_s:g}; a second signal hurries)")
    serve.add_argument("--web", metavar="HOST:PORT",
                       help="serve the web front (lobby, Playboard, live tables, replays, leaderboard); port 0 picks "
                            "one (default: no web front)")
    serve.add_argument("--human-decision-ms", type=int, help="a person's time per decision on the web (default 30000)")
    serve.add_argument("--web-house-delay-ms", type=int, help="pause between house moves at a person's table (default 600)")
    serve.add_argument("--log-format", choices=["json", "console"], help=f"one JSON object a line, or for a "
                                                                          f"person (default {d.log_format})")
    serve.add_argument("--log-level", choices=["debug", "info", "warning", "error"],
                       help=f"the least important lines logged (default {d.log_level})")
    serve.set_defaults(run=_serve)
    replay = sub.add_parser("replay", help="check or print stored matches")
    replay_sub = replay.add_subparsers(dest="replay_command", required=True)
    verify = replay_sub.add_parser("verify", help="re-verify stored records with the rules engine")
    verify.add_argument("match_ids", nargs="*", metavar="MATCH_ID")
    verify.add_argument("--db", default=os.environ.get("HEARTSD_DB_PATH", "heartsd.db"))
    verify.set_defaults(run=_verify)
    show = replay_sub.add_parser("show", help="print a match trick by trick with its score sheet")
    show.add_argument("match_id")
    show.add_argument("--db", default=os.environ.get("HEARTSD_DB_PATH", "heartsd.db"))
    show.set_defaults(run=_show)
    store = sub.add_parser("store", help="copy the store while the daemon runs, or mark one restored")
    store_sub = store.add_subparsers(dest="store_command", required=True)
    copy = store_sub.add_parser("backup", help="a consistent copy of a SQLite store (its -wal's commits included), "
                                               "checked; safe while the daemon runs")
    copy.add_argument("target", help="the new file to write (never overwritten); written as TARGET.partial, renamed "
                                      "once checked: a TARGET.partial left behind is a backup that was killed, not "
                                      "a backup (the next backup to TARGET replaces it)")
    copy.add_argument("--db", default=os.environ.get("HEARTSD_DB_PATH", "heartsd.db"), help="the store to copy")
    copy.set_defaults(run=_backup)
    restored = store_sub.add_parser(
        "restored", help="after restoring a copy made any other way than `store backup` (pg_dump, a file "
                         "copy), before a daemon starts on it: unplayed tournament tables deal fresh shuffles")
    restored.add_argument("--db", default=os.environ.get("HEARTSD_DB_PATH", "heartsd.db"), help="the restored store")
    restored.set_defaults(run=_restored)
    ladder = sub.add_parser("ladder", help="ladder bots, tokens and the leaderboard")
    ladder_sub = ladder.add_subparsers(dest="ladder_command", required=True)
    default_db = os.environ.get("HEARTSD_DB_PATH", "heartsd.db")
    add = ladder_sub.add_parser("add-bot", help="register a bot and print its token once")
    add.add_argument("name")
    add.add_argument("--owner", required=True)
    add.add_argument("--create", action="store_true",
                     help="create the store if there is none (otherwise a missing store is an error)")
    for name, text in (("rotate", "issue a new token (printed once), retiring the old one"),
                       ("revoke", "refuse the bot's token from now on")):
        p = ladder_sub.add_parser(name, help=text)
        p.add_argument("name")
    board = ladder_sub.add_parser("leaderboard", help="print the ratings of a ruleset")
    board.add_argument("--ruleset", default="standard")
    rebuild = ladder_sub.add_parser("recompute", help="rebuild every rating from the stored results and compare")
    rebuild.add_argument("--ruleset", default="standard")
    for p in ladder_sub.choices.values():
        p.add_argument("--db", default=default_db, help="SQLite path or postgresql:// URL")
    ladder.set_defaults(run=_ladder)
    from .admin_cli import daemon_target, wait_seconds

    health = sub.add_parser("health", help="check that a daemon answers SERVING", formatter_class=DefaultsHelp)
    # --server and HEARTS_SERVER, as every client (README, "Command-line convention");
    # --target is its first name, still used by deploy/'s health checks.
    health.add_argument("--server", "--target", dest="server", default=os.environ.get("HEARTS_SERVER", DEFAULT_SERVER), type=daemon_target,
                        metavar="HOST:PORT", help="the daemon (env HEARTS_SERVER; --target is the same option)")
    health.add_argument("--timeout", type=wait_seconds, default=3.0, help="seconds to wait for its answer")
    from heartsbot import tls

    tls.add_options(health)
    health.add_argument("--tls-name", default="", metavar="NAME",
                        help="the name on the server's certificate, when --server is another (e.g. 127.0.0.1; "
                             "default: --server's host)")
    health.set_defaults(run=_health)
    kit = sub.add_parser(
        "conformance", help="check a bot client against every protocol behaviour",
        description="Start a test server, wait for one bot to connect (or start it: the command after --, "
                    "with {target} {token} {name} replaced and HEARTS_SERVER/HEARTS_TOKEN/HEARTS_NAME set), "
                    "put it through hello, pass, play, moon, rejection, late, resume and drain, and print which "
                    "behaviours passed. Exit 0 when all did. See docs/protocol.md.", formatter_class=DefaultsHelp)
    kit.add_argument("--host", default="127.0.0.1", help="the address the kit's test server listens on")
    kit.add_argument("--port", type=int, default=50052, help="0 picks a free port (printed at start)")
    kit.add_argument("--name", default="conformance-bot", help="the bot name the client must say hello with")
    kit.add_argument("--token", help="the token the client must present (default: generated, printed)")
    kit.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for the bot and for each match")
    kit.add_argument("--json", action="store_true", help="also print the results as one JSON line at the end")
    kit.add_argument("--tls-cert", metavar="FILE",
                     help="serve the kit over TLS with this PEM certificate (and --tls-key; default: no TLS)")
    kit.add_argument("--tls-key", metavar="FILE", help="the PEM private key of --tls-cert (default: none)")
    kit.add_argument("--tls-client-ca", metavar="FILE",
                     help="mutual TLS: require client certificates signed by this CA (default: none)")
    kit.add_argument("client_command", nargs=argparse.REMAINDER, metavar="-- COMMAND",
                     help="the client to start, e.g. -- node bot.js --server {target} --token {token} --name {name}")
    kit.set_defaults(run=_conformance)
    from .admin_cli import add_parser as add_admin_parser

    add_admin_parser(sub)
    from .tournament_cli import add_parser as add_tournament_parser

    add_tournament_parser(sub)
    args = parser.parse_args(argv)
    from .db import damaged

    try:
        return int(args.run(args))
    except KeyboardInterrupt:
        return _interrupted(args)
    except Exception as exc:
        if (why := damaged(exc)) is None:
            raise
        print(f"heartsd: {why}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
