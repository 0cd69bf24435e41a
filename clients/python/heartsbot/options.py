"""The command-line options every Hearts Arena client shares, by the same names and with
the same defaults (the Node bot in clients/node spells them the same way):

``--server HOST:PORT`` (env ``HEARTS_SERVER``, default 127.0.0.1:50051), ``--token``
(env ``HEARTS_TOKEN``), ``--name`` (env ``HEARTS_NAME``), ``--rulesets``,
``--max-matches N`` (default 1), ``--matches N`` (default 0: until Ctrl-C), the TLS
options of :mod:`heartsbot.tls`, and ``--version``. A flag wins over the environment,
the environment over the default.

The environment is read after parsing, not as an argparse default, so a token in
``HEARTS_TOKEN`` never shows up in ``--help`` (which prints every default).

>>> p = argparse.ArgumentParser(prog="x")
>>> add_server(p)
>>> resolve(p, p.parse_args([]), env={"HEARTS_SERVER": "arena:1"}).server
'arena:1'
>>> resolve(p, p.parse_args(["--server", "mine:2"]), env={"HEARTS_SERVER": "arena:1"}).server
'mine:2'
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Mapping

from hearts_engine.shuffle import MAX_SEED

from . import __version__, tls

DEFAULT_SERVER = "127.0.0.1:50051"
# option destination -> the environment variable that stands in for it
ENVIRONMENT = {"server": "HEARTS_SERVER", "token": "HEARTS_TOKEN", "name": "HEARTS_NAME"}


def server_target(value: str) -> str:
    """``--server`` checked (an argparse ``type``): HOST:PORT with a port 1-65535 (an IPv6
    host in brackets), or a gRPC target URI (``dns:///...``, ``unix:...``) as given. Before,
    gRPC took 127.0.0.1:99999 as port 34463 and a bare host as port 443 (an attack pass).

    >>> server_target("[::1]:50051"), server_target("unix:/tmp/heartsd.sock")
    ('[::1]:50051', 'unix:/tmp/heartsd.sock')
    >>> server_target("127.0.0.1")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: expected HOST:PORT, got '127.0.0.1' (no port; heartsd listens on 50051 by default)
    """
    if "://" in value or value.startswith("unix:"):
        return value
    host, sep, port = value.rpartition(":")
    if not sep or not host or (":" in host and not (host.startswith("[") and host.endswith("]"))):
        why = "an IPv6 address goes in brackets, [::1]:50051" if ":" in host else \
            "no port; heartsd listens on 50051 by default"
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {value!r} ({why})")
    if not (port.isascii() and port.isdigit() and 1 <= int(port) <= 65535):
        raise argparse.ArgumentTypeError(f"expected HOST:PORT with a port 1-65535, got {value!r}")
    return value


INT32_MAX = 2**31 - 1  # the protocol's int32 fields


def at_least(least: int, most: int = INT32_MAX) -> Callable[[str], int]:
    """An argparse ``type``: an integer of at least ``least``, so each option states its one
    minimum at parsing (``heartsbot local --matches`` said "at least 1" for 0 and "at least
    0" for -2: an attack pass), and at most ``most`` (the protocol's int32 by default: before,
    an operator's pass, ``--deals 99999999999`` said only "Value out of range").

    >>> at_least(1)("3")
    3
    """
    def parse(value: str) -> int:
        try:
            number = int(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {value!r}") from None
        if number < least:
            raise argparse.ArgumentTypeError(f"must be at least {least}, got {number}")
        if number > most:
            raise argparse.ArgumentTypeError(f"must be at most {most}, got {number}")
        return number

    return parse


def seconds(most: float) -> Callable[[str], float]:
    """An argparse ``type``: a number of seconds, 0 to ``most``.

    >>> seconds(10)("2.5")
    2.5
    """
    def parse(value: str) -> float:
        try:
            number = float(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number of seconds, got {value!r}") from None
        if not 0 <= number <= most:  # NaN fails too
            raise argparse.ArgumentTypeError(f"must be 0 to {most:.10g} seconds, got {value}")
        return number

    return parse


def shuffle_seed(value: str) -> int:
    """An argparse ``type``: a shuffle seed, 0 to 2**64-1 (it was "Value out of range" from
    protobuf, naming no option).

    >>> shuffle_seed("-5")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: a shuffle seed is 0 to 18446744073709551615, got -5
    """
    try:
        seed = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer 0 to {MAX_SEED}, got {value!r}") from None
    if not 0 <= seed <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"a shuffle seed is 0 to {MAX_SEED}, got {seed}")
    return seed


def add_version(p: argparse.ArgumentParser) -> None:
    p.add_argument("--version", action="version", version=f"heartsbot {__version__}",
                   help="print the version and exit")


def add_server(p: argparse.ArgumentParser) -> None:
    p.add_argument("--server", metavar="HOST:PORT", type=server_target,
                   help=f"the server (env HEARTS_SERVER; default {DEFAULT_SERVER})")


def add_bot_connection(p: argparse.ArgumentParser) -> None:
    """What a bot that plays on a server takes: the server, its token and name, how many
    matches at once and in all, TLS."""
    add_server(p)
    p.add_argument("--token", help="the bot's token, sent as 'authorization: Bearer TOKEN' "
                                   "(env HEARTS_TOKEN; required)")
    p.add_argument("--name", help="the bot name the token was issued for (env HEARTS_NAME; required)")
    p.add_argument("--rulesets", nargs="*", metavar="RULESET", help="rulesets the bot plays (default: all)")
    p.add_argument("--max-matches", type=at_least(1), default=1, metavar="N",
                   help="matches at once (hello.max_concurrent_matches)")
    p.add_argument("--matches", type=at_least(0), default=0, metavar="N",
                   help="play N matches, then finish them and exit 0 (default: 0, until Ctrl-C)")
    tls.add_options(p)


def sendable(token: str) -> bool:
    """Whether ``token`` can go in a gRPC header as it is: printable ASCII, no space at
    either end (the daemon strips what it reads). Every token a daemon issues is; one read
    from a file written on Windows keeps a "\\r", and one typed may hold a letter beyond ASCII.

    >>> sendable("ha_abc-DEF_123"), sendable("token-1234\\r"), sendable("jeton-épelé-1234")
    (True, False, False)
    """
    return token == token.strip() and all(" " <= c <= "~" for c in token)


def resolve(p: argparse.ArgumentParser, args: argparse.Namespace,
            env: Mapping[str, str] | None = None) -> argparse.Namespace:
    """Fill ``--server``/``--token``/``--name`` left out from the environment (then the
    default server); a bot option still missing is a usage error (exit 2) naming both."""
    env = os.environ if env is None else env
    for dest, var in ENVIRONMENT.items():
        if hasattr(args, dest) and not getattr(args, dest):
            setattr(args, dest, env.get(var) or None)
    if hasattr(args, "server") and not args.server:
        args.server = DEFAULT_SERVER
    if hasattr(args, "server"):
        try:
            server_target(args.server)  # from HEARTS_SERVER: a flag's was checked by argparse
        except argparse.ArgumentTypeError as exc:
            p.error(f"HEARTS_SERVER: {exc}")
    missing = [f"--{dest} (or {ENVIRONMENT[dest]})" for dest in ("token", "name")
               if hasattr(args, dest) and not getattr(args, dest)]
    if missing:
        p.error(f"{' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} required")
    if getattr(args, "token", None):
        # Sent as it is, a "\r" kept from a file failed every connect "INTERNAL: Invalid
        # metadata", logged as the server refusing, retried for ever (an organiser's pass).
        args.token = args.token.strip()
        if not sendable(args.token):
            p.error("--token (or HEARTS_TOKEN) holds a character a gRPC header cannot carry: a token is "
                    "printable ASCII (as every token heartsd issues)")
    return args
