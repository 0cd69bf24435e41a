"""Daemon settings: defaults < config file (TOML) < environment (HEARTSD_*) < flags.

Every value is validated at start, so a typo stops the daemon with a message that
names the setting instead of surfacing in the middle of a match.

>>> s = Settings.load(env={"HEARTSD_DECISION_MS": "250"}, flags={"port": 0})
>>> s.port, s.clock.decision_ms, s.clock.bank_ms
(0, 250, 10000)
>>> Settings.load(env={"HEARTSD_PORT": "http"})
Traceback (most recent call last):
...
heartsd.config.ConfigError: port: expected an integer, got 'http'
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
import secrets
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from heartsbot.options import sendable  # a token a gRPC header carries: the clients' rule, checked at start too

from .grpc_core import DEFAULT_EXPERIMENTS, experiments_problem
from .spelling import spelling_key


# libpq's "host=... port=... password=..." form. Before (an operator's pass) it was taken
# for a SQLite path: a file named after it, password included, and the password printed
# in the new-store warning.
KEYWORD_DSN: Final = re.compile(
    r"\s*(host|hostaddr|port|dbname|user|password|passfile|service|sslmode|connect_timeout)\s*=", re.IGNORECASE)
# What a libpq keyword string given as the store is told (its value is never repeated: it
# may hold a password); Settings and Database.open both refuse one.
KEYWORD_DSN_REFUSED: Final = ("looks like a PostgreSQL keyword connection string (host=... port=...), which would be "
                              "taken for a SQLite file name; give a URL: postgresql://USER:PASSWORD@HOST:PORT/DBNAME")
# Settings that are tables of bots: a source adds to (or, for a name it repeats, overrides)
# what an earlier source gave, rather than replacing the table. Before (an organiser's pass),
# `heartsd serve --config arena.toml --bot late:TOKEN` served `late` alone: the file's five
# bots were refused "unknown bot token" (and an owner of one of them stopped the start,
# saying that bot had no token, as the file plainly gave it one).
MERGED: Final = ("bot_tokens", "bot_owners")
# An empty store path: a variable set but empty (HEARTSD_DB_PATH=$UNSET_VARIABLE).
EMPTY_STORE_PATH: Final = ("empty: name a SQLite file (e.g. heartsd.db) or a postgresql:// URL (a variable set but "
                           "empty, as from a shell variable that is not set?)")
# Before (an organiser's pass), an admin token that kept a file's line end started the daemon, and no
# client could call its admin API again ("INTERNAL: Invalid metadata"; without the line end,
# "unknown admin token"): such a token (options.sendable) now stops the start.
UNSENDABLE: Final = ("holds a character no client can send (a gRPC header carries printable ASCII only; a line end "
                     "kept from a file written on Windows? a letter beyond ASCII?): use printable ASCII, without "
                     "spaces at either end")


MAX_THINK_PROCESSES: Final = 64  # house_think_processes: each is an interpreter (~40 MB)
MAX_HOUSE_MATCHES: Final = 10_000  # house_matches: each match holds memory and a share of the event loop
MAX_SHUTDOWN_GRACE_S: Final = 86_400  # shutdown_grace_s: a day
MAX_HURRIED_EXIT_S: Final = 3_600  # hurried_exit_s: an hour


class ConfigError(ValueError):
    """A setting is missing, malformed or out of range."""


@dataclass(frozen=True)
class ClockDefaults:
    """Per-match enforcement defaults (a match may override each)."""

    decision_ms: int = 1000
    bank_ms: int = 10_000
    max_illegal: int = 3
    auto_after: int = 3
    grace_ms: int = 15_000


@dataclass(frozen=True)
class Settings:
    host: str = "127.0.0.1"
    port: int = 50051
    db_path: str = "heartsd.db"
    # Which daemon owns a running match in a shared store: at start a daemon marks only
    # its own interrupted matches aborted. Give each replica sharing one PostgreSQL a
    # stable name of its own (e.g. the StatefulSet pod name).
    instance: str = "heartsd"
    admin_token: str = ""
    # TLS: the server's certificate chain and key (PEM files); with tls_client_ca every
    # client must present a certificate signed by that CA (mutual TLS).
    tls_cert: str = ""
    tls_key: str = ""
    tls_client_ca: str = ""
    bot_tokens: Mapping[str, str] = field(default_factory=dict)
    # The owner of a bot of bot_tokens (a bot not named here is its own owner): tournaments
    # and duplicate sets never seat two bots of one owner together (Arena.owners).
    bot_owners: Mapping[str, str] = field(default_factory=dict)
    clock: ClockDefaults = field(default_factory=ClockDefaults)
    max_message_bytes: int = 64 * 1024
    spectator_delay_s: float = 0.0
    shutdown_grace_s: float = 10.0
    # After a second signal, or the store lost, the daemon exits within this long even if
    # its store does not answer (server._bound_exit).
    hurried_exit_s: float = 60.0
    house_matches: int = 0
    house_ruleset: str = "standard"
    house_strategies: tuple[str, ...] = ("heuristic", "heuristic", "random", "random")
    house_delay_ms: int = 0
    # Worker processes for house strategies that search (mc; thinking.py), below the
    # daemon's CPU priority; 0: one per CPU.
    house_think_processes: int = 0
    ladder: bool = False
    ladder_ruleset: str = "standard"
    ladder_deals: int = 0  # deals per rated match; 0: the players times the pass schedule's length (16 in standard)
    ladder_set_tables: int = 2  # tables per duplicate set (duplicate.py); 1: plain tables only
    ladder_interval_s: float = 1.0
    ladder_same_owner: bool = False
    ladder_house: tuple[str, ...] = ()
    ladder_fill: bool = False  # house bots only complete tables the connected bots cannot fill
    log_format: str = "json"
    log_level: str = "info"
    event_loop: str = "asyncio"  # asyncio, uvloop, or auto (uvloop where installed): see loop.py
    grpc_experiments: str = DEFAULT_EXPERIMENTS  # GRPC_EXPERIMENTS unless the environment sets it: grpc_core.py
    grpc_wakeup_drain: bool = True  # one loop pass per batch of gRPC completions: wakeups.py
    # SQLite's quick_check of the store file at start: a damaged file is refused (store.py,
    # refuse_damage). Off serves it anyway, as far as it reads.
    store_check: bool = True
    keepalive_s: float = 20.0
    keepalive_timeout_s: float = 10.0
    # Calls at once per class of caller (budgets.py), so no class can starve another; the
    # server-wide limit (max_concurrent_rpcs, 0: derived) must stay above their sum.
    max_bot_streams: int = 2000
    max_spectator_calls: int = 500
    max_spectator_calls_per_peer: int = 16
    # How fast spectator calls may start (gRPC's SpectatorService, LadderService and
    # TournamentService, the web front's JSON requests and live feeds): per address, and
    # for every address together (its burst: 3 seconds' worth). A call costs 1; a
    # ListMatches page 1 + its limit / 20 (budgets.py).
    spectator_calls_per_s: float = 20.0
    spectator_burst: int = 60
    spectator_calls_total_per_s: float = 200.0
    max_admin_calls: int = 32
    max_concurrent_rpcs: int = 0
    # Connections to the gRPC port at once (0: derived, the sum of the budgets above, one
    # connection per call; never over half the process's descriptors, descriptors.py), and
    # how long a new connection may take to speak HTTP/2 (a TCP connection that sends
    # nothing holds a descriptor until then).
    max_connections: int = 0
    handshake_timeout_s: float = 10.0
    # Limits per bot stream (README, "Limits"): the concurrency a bot may declare in hello
    # (its rejection budget and per-stream state derive from the capped value), and the
    # bytes waiting to be sent to it before a stream that does not read is ended.
    max_matches_per_bot: int = 64
    max_outbox_bytes: int = 16 * 1024 * 1024
    # New streams a bot may open: BOT_STREAM_BURST in a row, then this many a minute
    # (rates.py); 0: no limit.
    bot_streams_per_minute: int = 30
    # A match that ends while one of its bots is away: that seat's missed events, up to
    # match_ended, wait for the bot's next hello this long, within this many bytes for
    # every such seat together (missed.py; the oldest go first).
    missed_events_hold_s: float = 600.0
    missed_events_max_bytes: int = 16 * 1024 * 1024
    # A tournament's table waits this long for a roster bot that is not connected (or is
    # connected as another version than the frozen one); then its match starts without it,
    # the bot's seats played as a disconnected bot's are (the grace, then defaults) until it
    # connects. 0: wait for ever (a bot that left held its round, and a leader could hold
    # the tournament where it led).
    tournament_absent_s: float = 600.0
    # The web front (heartsd.web): "HOST:PORT" to serve it on, "" for none. A person's
    # seat has its own clock (people think slower than bots); house bots at a person's
    # table pause between moves so the play can be followed.
    web: str = ""
    human_decision_ms: int = 30_000
    human_bank_ms: int = 60_000
    web_house_delay_ms: int = 600
    web_opponents: tuple[str, ...] = ("heuristic", "random")  # house strategies a person may pick
    # Host names a seat may be taken or played under (besides loopback names). Empty: any
    # name when the web front listens beyond loopback, only loopback names when it listens
    # on loopback, so a page whose name is pointed at 127.0.0.1 (DNS rebinding) cannot.
    web_hosts: tuple[str, ...] = ()
    web_max_tables: int = 16  # live matches with a person's seat, on this daemon
    web_tables_per_peer: int = 2
    web_abandon_s: float = 60.0  # a person's table with no page open this long is cancelled
    # Open connections to the web front (each a file descriptor shared with the gRPC
    # server's bots): at most this many, and never over a quarter of the process's
    # descriptor limit (heartsd.web.connections); per address (a browser opens ~6).
    web_max_connections: int = 1024
    web_connections_per_peer: int = 64
    # Every web caller (by address) gets this request rate; what it may hold open at once
    # (requests, live feeds) is the spectator budget (max_spectator_calls[_per_peer]).
    web_rate_per_s: float = 20.0
    web_burst: int = 60

    @property
    def web_address(self) -> tuple[str, int] | None:
        """``web`` as (host, port), or None when the web front is off."""
        if not self.web:
            return None
        host, sep, port = self.web.rpartition(":")
        if "/" in self.web:  # http://127.0.0.1:8080 was "not a known address ...; fix --host" (an operator's pass)
            raise ConfigError(f"web: HOST:PORT to listen on (e.g. 127.0.0.1:8080), without http:// or a path, got "
                              f"{self.web!r}")
        if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
            raise ConfigError(f"web: expected HOST:PORT (e.g. 127.0.0.1:8080), got {self.web!r}")
        return host.strip("[]"), int(port)

    @property
    def think_processes(self) -> int:
        """house_think_processes, with 0 resolved to one per CPU this process may run on
        (its affinity, not the host's count), at most MAX_THINK_PROCESSES."""
        usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
        return self.house_think_processes or min(usable, MAX_THINK_PROCESSES)

    def searching_strategies(self) -> list[str]:
        """The configured house strategies that search (thinking.py: their workers are
        started with the daemon, so the first searches need not wait for them)."""
        from heartsbot.strategies import make_strategy

        names = {*self.house_strategies} if self.house_matches else set()
        names |= {*self.ladder_house} if self.ladder else set()
        names |= {*self.web_opponents} if self.web else set()
        return sorted(n for n in names if make_strategy(n).searches)

    def rpc_limit(self) -> int:
        """grpc's server-wide ``maximum_concurrent_rpcs``: above the sum of every class's
        budget (budgets.py), so a refusal always comes from the budget of the caller's class."""
        from .budgets import GREETING_CALLS, INFRA_CALLS, PROBE_CALLS

        derived = (self.max_bot_streams + self.max_spectator_calls + self.max_admin_calls + INFRA_CALLS
                   + PROBE_CALLS + GREETING_CALLS + 16)
        return max(self.max_concurrent_rpcs, derived)

    def connection_limit(self) -> int:
        """Connections the gRPC port accepts at once: ``max_connections``, or if 0 one for
        every call the budgets allow (a bot's connection usually carries its one stream).
        The descriptor limit may cap it further (server.server_options)."""
        return self.max_connections or self.rpc_limit()

    @classmethod
    def load(
        cls,
        file: str | None = None,
        env: Mapping[str, str] | None = None,
        flags: Mapping[str, Any] | None = None,
    ) -> Settings:
        """Merge the sources and validate; raise :class:`ConfigError` naming the bad setting."""
        raw: dict[str, Any] = {}
        tables: dict[str, dict[str, str]] = {}  # MERGED: each source adds its bots to the last's

        def given(key: str, value: Any) -> None:
            if key in MERGED:
                tables.setdefault(key, {}).update(_FIELDS[key](key, value))
                value = tables[key]
            raw[key] = value

        if file:
            try:
                for key, value in _flatten(tomllib.loads(Path(file).read_text(encoding="utf-8"))).items():
                    given(key, value)
            except OSError as exc:
                raise ConfigError(f"config file {file}: {exc.strerror}") from None
            except tomllib.TOMLDecodeError as exc:
                raise ConfigError(f"config file {file}: {exc}") from None
            except UnicodeDecodeError as exc:  # before (an operator's pass): a traceback, exit 1
                raise ConfigError(f"config file {file}: not UTF-8 text, as TOML must be "
                                  f"(byte {exc.start}: {exc.reason})") from None
        env = os.environ if env is None else env
        for key in _FIELDS:
            value = env.get("HEARTSD_" + key.upper())
            if value is not None:
                given(key, value)
        for key, value in (flags or {}).items():
            if value is not None:
                given(key, value)
        unknown = set(raw) - set(_FIELDS)
        if unknown:  # each with the setting it most resembles (an organiser's pass: `db = ...` had none)
            raise ConfigError("unknown settings: " + ", ".join(
                f"{key}{_nearest(key, list(_FIELDS))}" for key in sorted(unknown)))
        values = {key: _FIELDS[key](key, value) for key, value in raw.items()}
        clock_keys = {f.name for f in dataclasses.fields(ClockDefaults)}
        clock = ClockDefaults(**{k: values.pop(k) for k in list(values) if k in clock_keys})
        settings = cls(clock=clock, **values)
        settings._check()
        if not settings.admin_token:
            if not is_loopback(settings.host):
                raise ConfigError(
                    f"admin_token: heartsd listens on {settings.host or 'every interface'}, beyond this machine, and "
                    "would make up an admin token nobody can see in its logs; set one (--admin-token, "
                    "HEARTSD_ADMIN_TOKEN, or admin_token in --config), or listen on 127.0.0.1 (--host)")
            # A prefix, so a generated token never starts with '-': it is pasted after
            # --admin-token, where a leading '-' reads as an option.
            settings = dataclasses.replace(settings, admin_token="ha_" + secrets.token_urlsafe(24))
        return settings

    def idle_settings(self) -> list[str]:
        """Settings given a value that does nothing in this configuration: the ladder's
        while the ladder is off (``heartsd serve`` warns about each; before, a
        --ladder-house without --ladder started nothing, silently)."""
        if self.ladder:
            return []
        defaults = Settings()
        return [f.name for f in dataclasses.fields(self)
                if f.name.startswith("ladder_") and getattr(self, f.name) != getattr(defaults, f.name)]

    def tls_files(self) -> tuple[bytes, bytes, bytes | None] | None:
        """(certificate chain, key, client CA or None) read from the TLS settings; None
        without TLS."""
        if not self.tls_cert:
            return None
        ca = _read_pem("tls_client_ca", self.tls_client_ca) if self.tls_client_ca else None
        return _read_pem("tls_cert", self.tls_cert), _read_pem("tls_key", self.tls_key), ca

    def _check(self) -> None:
        if bool(self.tls_cert) != bool(self.tls_key):
            raise ConfigError("tls_cert and tls_key: give both (--tls-cert FILE --tls-key FILE) or neither")
        if self.tls_client_ca and not self.tls_cert:
            raise ConfigError("tls_client_ca: mutual TLS needs the server's own --tls-cert and --tls-key too")
        if self.tls_files() is not None:  # each file readable and PEM, or a ConfigError naming it
            _check_key_pair(self.tls_cert, self.tls_key)
        if not self.db_path.strip():  # HEARTSD_DB_PATH=$UNSET: "[Errno 2] No such file or directory: ''", exit 1
            raise ConfigError(f"db_path (--db, HEARTSD_DB_PATH): {EMPTY_STORE_PATH}")
        if KEYWORD_DSN.match(self.db_path):  # its value is not repeated: it may hold a password
            raise ConfigError(f"db_path (--db, HEARTSD_DB_PATH): this {KEYWORD_DSN_REFUSED}")
        if not 0 <= self.port <= 65535:
            raise ConfigError(f"port: must be 0-65535, got {self.port}")
        c = self.clock
        if c.decision_ms < 1:
            raise ConfigError(f"decision_ms: must be at least 1, got {c.decision_ms}")
        for name in ("bank_ms", "grace_ms"):
            if getattr(c, name) < 0:
                raise ConfigError(f"{name}: must not be negative")
        # Each named with the value given, as decision_ms is (an organiser's pass: "max_illegal
        # must be >= 0 and auto_after >= 1" did not say which of the two was wrong).
        if c.max_illegal < 0:
            raise ConfigError(f"max_illegal: must not be negative, got {c.max_illegal}")
        if c.auto_after < 1:
            raise ConfigError(f"auto_after: must be at least 1, got {c.auto_after}")
        if not self.instance or len(self.instance) > 200:
            raise ConfigError("instance: a name of 1 to 200 characters")
        if self.max_message_bytes < 1024:
            raise ConfigError("max_message_bytes: at least 1024")
        for key in ("max_bot_streams", "max_spectator_calls", "max_spectator_calls_per_peer", "max_admin_calls"):
            if getattr(self, key) < 1:
                raise ConfigError(f"{key}: at least 1")
        if self.max_concurrent_rpcs and self.max_concurrent_rpcs < self.rpc_limit():
            raise ConfigError(f"max_concurrent_rpcs: {self.max_concurrent_rpcs} is below the sum of the per-class "
                              f"budgets plus headroom ({self.rpc_limit()}); spectators could then starve bots. "
                              "Leave it 0 (derived) or raise it")
        if self.max_connections < 0:
            raise ConfigError("max_connections: 0 (derived from the budgets) or more")
        for key in ("keepalive_s", "keepalive_timeout_s"):  # gRPC takes them in ms, a 32-bit integer
            if getattr(self, key) > INT32_MAX // 1000:
                raise ConfigError(f"{key}: at most {INT32_MAX // 1000} seconds, got {getattr(self, key):g}")
        if not 0.1 <= self.handshake_timeout_s <= 600:
            raise ConfigError(f"handshake_timeout_s: 0.1 to 600 seconds, got {self.handshake_timeout_s:g}")
        if self.max_matches_per_bot < 1:
            raise ConfigError("max_matches_per_bot: at least 1")
        if self.bot_streams_per_minute < 0:
            raise ConfigError("bot_streams_per_minute: 0 (no limit) or more")
        if self.max_outbox_bytes < 64 * 1024:
            raise ConfigError("max_outbox_bytes: at least 65536 (64 KiB)")
        if not 0 <= self.missed_events_hold_s <= 7 * 86400:
            raise ConfigError(f"missed_events_hold_s: 0 (keep none) to 604800 (a week), got {self.missed_events_hold_s:g}")
        if not 0 <= self.tournament_absent_s <= 7 * 86400:
            raise ConfigError(f"tournament_absent_s: 0 (wait for ever) to 604800 (a week), got {self.tournament_absent_s:g}")
        if self.missed_events_max_bytes < 0:
            raise ConfigError("missed_events_max_bytes: 0 (keep none) or more")
        if self.log_format not in ("json", "console"):
            raise ConfigError(f"log_format: json or console, got {self.log_format!r}")
        from .loop import CHOICES, uvloop_installed

        if self.event_loop not in CHOICES:
            raise ConfigError(f"event_loop: {', '.join(CHOICES)}, got {self.event_loop!r}")
        if self.event_loop == "uvloop" and not uvloop_installed():
            raise ConfigError("event_loop: uvloop is not installed (pip install uvloop, or use asyncio)")
        if (problem := experiments_problem(self.grpc_experiments)) is not None:
            raise ConfigError(f"grpc_experiments: {problem}, got {self.grpc_experiments!r}")
        if self.log_level not in ("debug", "info", "warning", "error"):
            raise ConfigError(f"log_level: debug, info, warning or error, got {self.log_level!r}")
        if not 0 <= self.house_matches <= MAX_HOUSE_MATCHES:  # each holds ~30-480 KiB and a share of the loop
            raise ConfigError(f"house_matches: 0 to {MAX_HOUSE_MATCHES}, got {self.house_matches}")
        if not 0 <= self.shutdown_grace_s <= MAX_SHUTDOWN_GRACE_S:  # a grace typed in ms would hold a stop for months
            raise ConfigError(f"shutdown_grace_s: 0 to {MAX_SHUTDOWN_GRACE_S} seconds (a day), got {self.shutdown_grace_s:g}")
        if not 1 <= self.hurried_exit_s <= MAX_HURRIED_EXIT_S:
            raise ConfigError(f"hurried_exit_s: 1 to {MAX_HURRIED_EXIT_S} seconds, got {self.hurried_exit_s:g}")
        if not 0 <= self.house_think_processes <= MAX_THINK_PROCESSES:
            raise ConfigError(f"house_think_processes: 0 (one per CPU) to {MAX_THINK_PROCESSES}, "
                              f"got {self.house_think_processes}")
        if self.ladder_set_tables < 1:
            raise ConfigError("ladder_set_tables: 1 (no duplicate sets) or more")
        web = self.web_address  # raises ConfigError when malformed
        if web is not None:  # the listener's probe would say "fix --host" of a --web typo
            import socket

            try:
                socket.getaddrinfo(web[0] or None, web[1], type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
            except (OSError, UnicodeError) as exc:
                raise ConfigError(f"web: {web[0]!r} is not a known address ({getattr(exc, 'strerror', None) or exc}); "
                                  "fix --web HOST:PORT (HEARTSD_WEB)") from None
        if web is not None and web[1] == self.port != 0 and _may_share(self.host, web[0]):
            # Before (an operator's pass), gRPC bound the port, then the web front's probe said
            # "the port is in use (another heartsd, or another program)": heartsd itself.
            raise ConfigError(f"--web {self.web} and --port {self.port} name the same port (the settings web and "
                              "port; HEARTSD_WEB, HEARTSD_PORT): gRPC and the web front each need a port of their "
                              "own; choose another for one of them (0 picks a free one)")
        if self.human_decision_ms < 1 or self.human_bank_ms < 0 or self.web_house_delay_ms < 0:
            raise ConfigError("human_decision_ms must be >= 1; human_bank_ms and web_house_delay_ms >= 0")
        for name in ("web_max_tables", "web_tables_per_peer", "web_burst", "web_max_connections",
                     "web_connections_per_peer"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name}: must be at least 1")
        from .rates import LARGEST_CALL_COST, TOTAL_BURST_S  # not budgets: it loads gRPC, not to be loaded yet

        if self.spectator_calls_per_s <= 0 or self.spectator_burst < LARGEST_CALL_COST:
            raise ConfigError(f"spectator_calls_per_s: must be above 0; spectator_burst: at least {LARGEST_CALL_COST} "
                              "(a 1,000-match ListMatches page's cost)")
        if round(TOTAL_BURST_S * self.spectator_calls_total_per_s) < LARGEST_CALL_COST:
            raise ConfigError(f"spectator_calls_total_per_s: at least {LARGEST_CALL_COST / TOTAL_BURST_S:g} (its "
                              f"burst, {TOTAL_BURST_S} seconds' worth, must hold a 1,000-match ListMatches page's "
                              f"cost, {LARGEST_CALL_COST})")
        if self.web_rate_per_s <= 0 or self.web_abandon_s <= 0:
            raise ConfigError("web_rate_per_s and web_abandon_s: must be above 0")
        if self.ladder_deals < 0:
            raise ConfigError("ladder_deals: 0 (the players times the pass schedule's length) or more")
        from heartsbot.strategies import KNOWN, known_strategy

        from .spelling import unknown_ruleset

        for key in ("house_ruleset", "ladder_ruleset"):
            if problem := unknown_ruleset(getattr(self, key)):
                raise ConfigError(f"{key}: {problem}")
        for name in (*self.ladder_house, *self.house_strategies, *self.web_opponents):
            if not known_strategy(name):
                raise ConfigError(f"unknown house strategy {name!r}; known: {KNOWN}")
        for name, token in self.bot_tokens.items():
            # A name with a colon read as a house seat ("house:mc"; NAME:TOKEN never allowed
            # one), and one with a newline or spaces around it as another bot's (an attack pass).
            if not name or len(name) > 64 or ":" in name or not name.isprintable() or name != name.strip():
                raise ConfigError(f"bot_tokens: bot {name!r} is 1-64 printable characters without ':', "
                                  "and without spaces at either end")
            if len(token) < 8:
                raise ConfigError(f"bot_tokens: bot {name!r} needs a token of at least 8 characters")
            if not sendable(token):
                raise ConfigError(f"bot_tokens: the token of bot {name!r} {UNSENDABLE}")
        if len(set(self.bot_tokens.values())) != len(self.bot_tokens):
            raise ConfigError("bot_tokens: two bots share a token")
        spellings: dict[str, str] = {}
        for name, owner in self.bot_owners.items():
            if name not in self.bot_tokens:
                raise ConfigError(f"bot_owners: bot {name!r} has no token in bot_tokens (--bot NAME:TOKEN); "
                                  "a ladder bot's owner is given at `ladder add-bot --owner`")
            if not owner or len(owner) > 64 or owner != owner.strip() or not owner.isprintable():
                raise ConfigError(f"bot_owners: bot {name!r} needs an owner of 1 to 64 printable characters, without "
                                  f"spaces around them, got {owner!r}")  # "alice " would be a second owner
            known = spellings.setdefault(spelling_key(owner), owner)
            if known != owner:  # one person, two owners: their bots would be seated together
                raise ConfigError(f"bot_owners: {owner!r} and {known!r} are one owner spelled two ways; spell it once")
        if self.admin_token and len(self.admin_token) < 12:  # it can do anything: no short guessable one
            raise ConfigError("admin_token: at least 12 characters (leave it unset on 127.0.0.1 for a generated one)")
        if self.admin_token and not sendable(self.admin_token):
            raise ConfigError(f"admin_token: {UNSENDABLE}")
        if self.admin_token and self.admin_token in self.bot_tokens.values():
            raise ConfigError("admin_token: must differ from every bot token")


# HEARTSD_* variables that are not settings: the deployment's (deploy/Dockerfile: the health
# check's options) and the build's (setup.py: the Python sources instead of the compiled
# encoders; a failed compile fails the install; the build the tests expect).
OTHER_ENV = frozenset({"HEARTSD_HEALTH_OPTIONS", "HEARTSD_PURE", "HEARTSD_REQUIRE_COMPILED", "HEARTSD_EXPECT"})


def unknown_env(env: Mapping[str, str] | None = None) -> list[str]:
    """A warning for each HEARTSD_* variable that names no setting, with the one it most
    resembles: a typo in an environment variable is otherwise ignored without a word (in
    the config file it is an error, but the environment is shared with other programs).

    >>> unknown_env({"HEARTSD_DECISON_MS": "300", "HEARTSD_PORT": "1", "HOME": "/"})
    ['HEARTSD_DECISON_MS names no setting and is ignored (did you mean HEARTSD_DECISION_MS?)']

    A flag's name whose setting is longer (``--db``: ``db_path``) points to that setting
    (before, an operator's pass: "did you mean HEARTSD_WEB?"):

    >>> unknown_env({"HEARTSD_DB": "/srv/hearts.db"})
    ['HEARTSD_DB names no setting and is ignored (did you mean HEARTSD_DB_PATH?)']
    """
    env = os.environ if env is None else env
    known = ["HEARTSD_" + key.upper() for key in _FIELDS]
    return [f"{name} names no setting and is ignored{_nearest(name, known)}" for name in sorted(env)
            if name.startswith("HEARTSD_") and name not in known and name not in OTHER_ENV]


def _nearest(name: str, known: Sequence[str]) -> str:
    """" (did you mean X?)" for the known name ``name`` most resembles, else "": the one
    setting it begins (``db``: ``db_path``), or the closest spelling."""
    import difflib

    longer = [k for k in known if k.startswith(name + "_")]
    close = longer if len(longer) == 1 else difflib.get_close_matches(name, known, n=1)
    return f" (did you mean {close[0]}?)" if close else ""


def _may_share(host: str, other: str) -> bool:
    """Whether listening on ``host`` and on ``other`` at one port would collide: they name a
    common address, or one of them every address (0.0.0.0 the IPv4 ones, :: all of them). A
    name that does not resolve counts as colliding (one port named twice is said first).

    >>> _may_share("127.0.0.1", "localhost"), _may_share("0.0.0.0", "127.0.0.1"), _may_share("::", "127.0.0.1")
    (True, True, True)
    >>> _may_share("127.0.0.1", "127.0.0.2"), _may_share("0.0.0.0", "::1")
    (False, False)
    """
    import ipaddress
    import socket

    def addresses(name: str) -> set[ipaddress.IPv4Address | ipaddress.IPv6Address]:
        infos = socket.getaddrinfo(name.strip("[]") or None, None, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        return {ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos}

    try:
        mine, theirs = addresses(host), addresses(other)
    except (OSError, ValueError):
        return True
    for a in mine:
        for b in theirs:
            if a == b or (a.is_unspecified and (a.version == 6 or b.version == 4)) or (
                    b.is_unspecified and (b.version == 6 or a.version == 4)):
                return True
    return False


def is_loopback(host: str) -> bool:
    """Whether ``host`` only listens on this machine (127.0.0.0/8, ::1, localhost)."""
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _check_key_pair(cert: str, key: str) -> None:
    """``key`` is the private key of ``cert``'s certificate. Before (an operator's pass), a
    key of another pair, or the two files swapped, passed the PEM checks and then failed
    in gRPC as "cannot listen on 127.0.0.1:0; check --host and --port"."""
    import ssl

    def no_password() -> bytes:
        raise ConfigError("tls_key: the key is encrypted; gRPC takes an unencrypted PEM key only")

    try:
        ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).load_cert_chain(cert, key, password=no_password)
    except ssl.SSLError as exc:
        raise ConfigError(f"tls_cert and tls_key: the key in {key} is not the private key of the certificate in "
                          f"{cert} (or the two files are swapped): {exc.reason or exc}") from None


def _read_pem(key: str, path: str) -> bytes:
    from heartsbot.tls import read_pem

    try:
        data = read_pem(key, path)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    assert data is not None
    return data


def _flatten(data: Mapping[str, Any]) -> dict[str, Any]:
    """A config file's settings in one namespace: ``[clock]`` holds the clock's only, and a
    setting given both at the top and under it is an error. (Before, ``[clock]`` took any key,
    the admin token included, and the second of two decision_ms won silently.)"""
    out = {key: value for key, value in data.items() if not (key == "clock" and isinstance(value, Mapping))}
    clock = data.get("clock")
    if isinstance(clock, Mapping):
        names = [f.name for f in dataclasses.fields(ClockDefaults)]
        for key, value in clock.items():
            if key not in names:
                raise ConfigError(f"clock.{key}: not a clock setting (the clock takes {', '.join(names)})")
            if key in out:
                raise ConfigError(f"{key}: given both at the top and under [clock]; give it once")
            out[key] = value
    return out


INT32_MAX: Final = 2**31 - 1  # the wire's int32 (clock fields) and gRPC's channel arguments


def _int(key: str, value: Any) -> int:
    """A whole number that fits a 32-bit signed integer: 1.7 is refused, not cut to 1, and
    2147483648 ms is refused at start, where it made every match fail (an attack pass)."""
    if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
        raise ConfigError(f"{key}: expected an integer, got {value!r}")
    try:
        result = int(value)
    except (TypeError, ValueError, OverflowError):
        raise ConfigError(f"{key}: expected an integer, got {value!r}") from None
    if not -INT32_MAX - 1 <= result <= INT32_MAX:
        raise ConfigError(f"{key}: at most {INT32_MAX} in size, got {result}")
    return result


def _float(key: str, value: Any) -> float:
    try:
        result = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{key}: expected a number, got {value!r}") from None
    if not math.isfinite(result):
        raise ConfigError(f"{key}: expected a finite number, got {value!r}")
    if result < 0:
        raise ConfigError(f"{key}: must not be negative, got {value!r}")
    return result


def _bool(key: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off", ""):
        return False
    raise ConfigError(f"{key}: expected true or false, got {value!r}")


def _str(key: str, value: Any) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"{key}: expected text, got {value!r}")
    return value


def _pairs(key: str, value: Any, what: str) -> dict[str, str]:
    """``{"name": "value"}`` from a file, or ``"name:value,name:value"`` from env/flags."""
    if isinstance(value, Mapping):
        return {str(k): str(v) for k, v in value.items()}
    items = value.split(",") if isinstance(value, str) else list(value)
    result: dict[str, str] = {}
    for item in items:
        item = item.strip()
        if not item:
            continue
        name, sep, token = item.partition(":")
        if not sep:
            raise ConfigError(f"{key}: expected NAME:{what}, got {item!r}")
        result[name.strip()] = token.strip()
    return result


def _tokens(key: str, value: Any) -> dict[str, str]:
    return _pairs(key, value, "TOKEN")


def _owners(key: str, value: Any) -> dict[str, str]:
    return _pairs(key, value, "OWNER")


def _strategies(key: str, value: Any) -> tuple[str, ...]:
    items = value.split(",") if isinstance(value, str) else list(value)
    return tuple(str(i).strip() for i in items if str(i).strip())


def host_name(name: str) -> str:
    """A host name as compared: lower case, without the root's trailing dot, in its ASCII
    (IDNA) form, which is what browsers send. ValueError when it has no such form.

    >>> host_name("Bücher.Example."), host_name("[::1]".strip("[]"))
    ('xn--bcher-kva.example', '::1')
    """
    name = name.lower().removesuffix(".")
    if name.isascii():
        return name
    try:
        return name.encode("idna").decode("ascii")
    except UnicodeError:
        raise ValueError(f"not a host name: {name!r}") from None


def _host_names(key: str, value: Any) -> tuple[str, ...]:
    """Host names, as a list or "a,b", as the web front compares them (host_name):
    a name only, no port or scheme."""
    names = []
    for name in _strategies(key, value):
        if any(c in name for c in ":/@[] "):
            raise ConfigError(f"{key}: host names only (no port, scheme or address brackets), got {name!r}")
        try:
            names.append(host_name(name))
        except ValueError as exc:
            raise ConfigError(f"{key}: {exc}") from None
    return tuple(names)


_FIELDS = {
    "host": _str,
    "port": _int,
    "db_path": _str,
    "instance": _str,
    "admin_token": _str,
    "tls_cert": _str,
    "tls_key": _str,
    "tls_client_ca": _str,
    "bot_tokens": _tokens,
    "bot_owners": _owners,
    "decision_ms": _int,
    "bank_ms": _int,
    "max_illegal": _int,
    "auto_after": _int,
    "grace_ms": _int,
    "max_message_bytes": _int,
    "spectator_delay_s": _float,
    "shutdown_grace_s": _float,
    "hurried_exit_s": _float,
    "house_matches": _int,
    "house_ruleset": _str,
    "house_strategies": _strategies,
    "house_delay_ms": _int,
    "house_think_processes": _int,
    "ladder": _bool,
    "ladder_ruleset": _str,
    "ladder_deals": _int,
    "ladder_set_tables": _int,
    "ladder_interval_s": _float,
    "ladder_same_owner": _bool,
    "ladder_house": _strategies,
    "ladder_fill": _bool,
    "log_format": _str,
    "log_level": _str,
    "event_loop": _str,
    "grpc_experiments": _str,
    "grpc_wakeup_drain": _bool,
    "store_check": _bool,
    "keepalive_s": _float,
    "keepalive_timeout_s": _float,
    "max_concurrent_rpcs": _int,
    "max_connections": _int,
    "handshake_timeout_s": _float,
    "max_bot_streams": _int,
    "max_spectator_calls": _int,
    "max_spectator_calls_per_peer": _int,
    "spectator_calls_per_s": _float,
    "spectator_burst": _int,
    "spectator_calls_total_per_s": _float,
    "max_admin_calls": _int,
    "max_matches_per_bot": _int,
    "max_outbox_bytes": _int,
    "bot_streams_per_minute": _int,
    "missed_events_hold_s": _float,
    "tournament_absent_s": _float,
    "missed_events_max_bytes": _int,
    "web": _str,
    "human_decision_ms": _int,
    "human_bank_ms": _int,
    "web_house_delay_ms": _int,
    "web_opponents": _strategies,
    "web_hosts": _host_names,
    "web_max_tables": _int,
    "web_tables_per_peer": _int,
    "web_abandon_s": _float,
    "web_max_connections": _int,
    "web_connections_per_peer": _int,
    "web_rate_per_s": _float,
    "web_burst": _int,
}
