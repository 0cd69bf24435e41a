"""Settings: every source, every value validated at start."""

from __future__ import annotations

import json
import re

import pytest

from heartsd.config import ConfigError, Settings


def test_precedence_defaults_file_env_flags(tmp_path):
    config = tmp_path / "h.toml"
    config.write_text('port = 7000\nhost = "127.0.0.2"\n[clock]\ndecision_ms = 400\nbank_ms = 100\n[bot_tokens]\nann = "token-ann-123"\n')
    s = Settings.load(file=str(config), env={"HEARTSD_PORT": "7100", "HEARTSD_BANK_MS": "900"}, flags={"port": 7200})
    assert (s.port, s.host, s.clock.decision_ms, s.clock.bank_ms) == (7200, "127.0.0.2", 400, 900)
    assert s.bot_tokens == {"ann": "token-ann-123"}
    assert s.admin_token.startswith("ha_")  # generated when not given; never starts with '-'


def test_bots_given_on_the_command_line_or_in_the_environment_add_to_the_files(tmp_path):
    """An organiser's pass: a late entrant added with `--bot` beside `--config arena.toml`
    replaced the file's whole [bot_tokens]: its five bots were refused "unknown bot token",
    and the file's [bot_owners] stopped the start saying a bot it gave a token had none. The
    tables of bots merge, a later source's entry for the same name winning."""
    config = tmp_path / "h.toml"
    config.write_text('[bot_tokens]\nann = "token-ann-123"\nbob = "token-bob-123"\n[bot_owners]\nann = "annie"\n')
    s = Settings.load(file=str(config), env={"HEARTSD_BOT_TOKENS": "cat:token-cat-123,bob:token-bob-456"},
                      flags={"bot_tokens": "dan:token-dan-123", "bot_owners": "dan:danny"})
    assert s.bot_tokens == {"ann": "token-ann-123", "bob": "token-bob-456", "cat": "token-cat-123",
                            "dan": "token-dan-123"}
    assert s.bot_owners == {"ann": "annie", "dan": "danny"}


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"HEARTSD_PORT": "70000"}, "port: must be 0-65535"),
        ({"HEARTSD_DECISION_MS": "0"}, "decision_ms"),
        ({"HEARTSD_BANK_MS": "-1"}, "bank_ms"),
        ({"HEARTSD_AUTO_AFTER": "0"}, "auto_after: must be at least 1, got 0"),
        ({"HEARTSD_MAX_ILLEGAL": "-1"}, "max_illegal: must not be negative, got -1"),
        ({"HEARTSD_BOT_TOKENS": "ann"}, "NAME:TOKEN"),
        ({"HEARTSD_BOT_TOKENS": "ann:short"}, "at least 8"),
        ({"HEARTSD_BOT_TOKENS": "ann:same-token-1,bob:same-token-1"}, "share a token"),
        ({"HEARTSD_ADMIN_TOKEN": "tok-12345678", "HEARTSD_BOT_TOKENS": "a:tok-12345678"}, "must differ"),
        ({"HEARTSD_ADMIN_TOKEN": "adm4"}, "admin_token: at least 12 characters"),  # an attack pass: any length
        ({"HEARTSD_WEB_HOSTS": "arena.example:443"}, "web_hosts: host names only"),  # never matched a Host
        ({"HEARTSD_LOG_LEVEL": "loud"}, "log_level"),
        ({"HEARTSD_INSTANCE": ""}, "instance: a name"),
        ({"HEARTSD_SPECTATOR_DELAY_S": "-2"}, "must not be negative"),
        ({"HEARTSD_MAX_MESSAGE_BYTES": "10"}, "at least 1024"),
        ({"HEARTSD_MISSED_EVENTS_HOLD_S": "1000000"}, "missed_events_hold_s: 0 .keep none. to 604800"),
        ({"HEARTSD_MISSED_EVENTS_MAX_BYTES": "-1"}, "missed_events_max_bytes: 0"),
        # Found by an operator's attack pass: each started the daemon, then failed.
        ({"HEARTSD_GRACE_MS": "2147483648"}, "grace_ms: at most 2147483647"),  # every match failed, ~300/s
        ({"HEARTSD_DECISION_MS": "9999999999"}, "decision_ms: at most 2147483647"),
        ({"HEARTSD_KEEPALIVE_S": "nan"}, "keepalive_s: expected a finite number"),  # a traceback
        ({"HEARTSD_KEEPALIVE_S": "inf"}, "keepalive_s: expected a finite number"),
        ({"HEARTSD_KEEPALIVE_S": "1e10"}, "keepalive_s: at most 2147483"),  # gRPC's OverflowError
        ({"HEARTSD_KEEPALIVE_TIMEOUT_S": "1e10"}, "keepalive_timeout_s: at most 2147483"),
        ({"HEARTSD_SHUTDOWN_GRACE_S": "nan"}, "shutdown_grace_s: expected a finite number"),  # aborted at once
        # Left from the last operator's pass: a grace typed in ms (a stop then waited months
        # for a stuck match), and house matches without bound (started until memory ran out).
        ({"HEARTSD_SHUTDOWN_GRACE_S": "1e300"}, "shutdown_grace_s: 0 to 86400"),
        ({"HEARTSD_HOUSE_MATCHES": "1000000000"}, "house_matches: 0 to 10000"),
        ({"HEARTSD_HURRIED_EXIT_S": "0"}, "hurried_exit_s: 1 to 3600"),  # would exit before aborting anything
        # An owner for a bot the daemon has no token for is a typo: its real bot would go ownerless.
        ({"HEARTSD_BOT_OWNERS": "ghost:alice"}, "bot_owners: bot 'ghost' has no token in bot_tokens"),
        ({"HEARTSD_BOT_TOKENS": "a:aaaaaaaaaa,b:bbbbbbbbbb", "HEARTSD_BOT_OWNERS": "a:Alice,b:alice"},
         "bot_owners: 'alice' and 'Alice' are one owner spelled two ways"),
        ({"HEARTSD_BOT_TOKENS": "a:aaaaaaaaaa", "HEARTSD_BOT_OWNERS": "a"}, "bot_owners: expected NAME:OWNER"),
        ({"HEARTSD_BOT_TOKENS": "a:aaaaaaaaaa", "HEARTSD_BOT_OWNERS": "a:al\tice"}, "bot_owners: bot 'a' needs an owner"),
        ({"HEARTSD_TOURNAMENT_ABSENT_S": "1e9"}, "tournament_absent_s: 0 .wait for ever. to 604800"),
        ({"HEARTSD_TOURNAMENT_ABSENT_S": "-1"}, "tournament_absent_s: must not be negative"),
    ],
)
def test_bad_values_name_the_setting(env, message):
    with pytest.raises(ConfigError, match=message):
        Settings.load(env=env)


def _file_refused(config, text: str, message: str) -> None:  # type: ignore[no-untyped-def]
    """A config file of ``text`` stops the load with a ConfigError matching ``message``."""
    config.write_text(text)
    with pytest.raises(ConfigError, match=message):
        Settings.load(file=str(config), env={})


def test_unknown_settings_and_unreadable_files(tmp_path):
    config = tmp_path / "h.toml"
    _file_refused(config, "colour = 3\n", "unknown settings: colour$")  # resembles nothing: no guess
    # An organiser's pass: `db = ...` (the flag is --db) said only "unknown settings: db",
    # where the environment's HEARTSD_DB already pointed to HEARTSD_DB_PATH.
    _file_refused(config, 'db = "x.db"\nprot = 1\n',
                  re.escape("unknown settings: db (did you mean db_path?), prot (did you mean port?)"))
    _file_refused(config, "port = [\n", "h.toml")
    with pytest.raises(ConfigError, match="No such file"):
        Settings.load(file=str(tmp_path / "missing.toml"), env={})


def test_fractional_integers_are_refused_not_truncated(tmp_path):
    """Before: decision_ms = 1.7 in a file became 1 and port = 50051.9 became 50051."""
    config = tmp_path / "h.toml"
    for line, name in (("decision_ms = 1.7", "decision_ms"), ("port = 50051.9", "port"), ("[clock]\nbank_ms = 2.5", "bank_ms")):
        _file_refused(config, line + "\n", f"{name}: expected an integer")
    config.write_text("decision_ms = 500.0\n")  # a whole number written as a float is that number
    assert Settings.load(file=str(config), env={}).clock.decision_ms == 500


def test_the_clock_section_takes_clock_settings_once(tmp_path):
    """Before: [clock] took any key: [clock] admin_token = "..." set the admin token (and the
    start-up message called it generated), and decision_ms at the top and under [clock]
    silently gave the second."""
    config = tmp_path / "h.toml"
    _file_refused(config, '[clock]\nadmin_token = "secret-from-file-123"\n',
                  "clock.admin_token: not a clock setting .the clock takes decision_ms")
    _file_refused(config, "decision_ms = 500\n[clock]\ndecision_ms = 2000\n",
                  "decision_ms: given both at the top and under .clock.")


def test_ladder_settings_without_the_ladder_are_named_as_idle():
    """Before (an operator's attack pass): --ladder-house and --ladder-fill without --ladder
    started no ladder and said nothing; heartsd serve now warns about each (server.py)."""
    idle = Settings.load(env={}, flags={"ladder_house": "random,heuristic", "ladder_fill": True}).idle_settings()
    assert idle == ["ladder_house", "ladder_fill"]
    assert Settings.load(env={}, flags={"ladder": True, "ladder_house": "random"}).idle_settings() == []
    assert Settings.load(env={}).idle_settings() == []


def test_a_config_file_that_is_not_utf8_is_a_configuration_error(tmp_path):
    """Before (an operator's pass): a UnicodeDecodeError traceback, exit 1."""
    config = tmp_path / "latin1.toml"
    config.write_bytes('house_ruleset = "caf\xe9"\n'.encode("latin-1"))
    with pytest.raises(ConfigError, match="not UTF-8"):
        Settings.load(file=str(config))


@pytest.mark.parametrize("dsn", ["host=127.0.0.1 port=1 password=S3cretPW", "dbname=arena user=x"])
def test_a_keyword_connection_string_is_refused_without_repeating_it(tmp_path, monkeypatch, dsn):
    """Before (an operator's pass): libpq's keyword form was taken for a SQLite path, made a
    file named after it, and printed it, password included, in the new-store warning."""
    from heartsd.db import Database, StoreError

    monkeypatch.chdir(tmp_path)  # where a SQLite file of that name would be made
    with pytest.raises(ConfigError, match="postgresql://USER") as refused:
        Settings.load(env={}, flags={"db_path": dsn})
    assert dsn not in str(refused.value)
    with pytest.raises(StoreError, match="keyword connection string") as store_refused:
        Database.open(dsn)
    assert "S3cret" not in str(store_refused.value)
    assert not list(tmp_path.iterdir())


def test_a_store_that_cannot_be_written_at_start_is_a_clear_error_not_a_traceback(tmp_path, monkeypatch, capsys):
    """Before (an operator's pass): a store on a full filesystem ended `heartsd serve` in a
    traceback (sqlite3.OperationalError, from marking the last run's matches aborted), exit
    1. Now exit 2, naming the store, the setting and what to do. (The filesystem is the
    boundary faked here; a real one measured the same: /tmp/opqa/diskfull_start.sh.)"""
    import sqlite3

    from heartsd import cli
    from heartsd.store import Store

    def full(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(Store, "abort_interrupted", full)
    db = tmp_path / "s.db"
    assert cli.main(["serve", "--port", "0", "--db", str(db), "--log-level", "error"]) == 2
    err = capsys.readouterr().err
    assert f"cannot write to the store {db}" in err and "--db" in err and "free space" in err, err
    assert "Traceback" not in err


def test_a_config_file_with_tokens_that_others_may_read_is_warned_about(tmp_path):
    """Before (an operator's pass): an admin token in a world-readable (0644) config file
    got no word. Now the start-up says so and how to fix it; a 0600 file is quiet."""
    from heartsd.cli import _secrets_readable_by_others

    config = tmp_path / "h.toml"
    config.write_text('admin_token = "a-long-admin-token-123"\n[bot_tokens]\nalice = "token-alice-0123"\n')
    config.chmod(0o644)
    warning = _secrets_readable_by_others(str(config))
    assert warning is not None and "admin_token and bot_tokens" in warning and "chmod 600" in warning
    config.chmod(0o600)
    assert _secrets_readable_by_others(str(config)) is None
    config.write_text("decision_ms = 500\n")
    config.chmod(0o644)
    assert _secrets_readable_by_others(str(config)) is None


def test_a_configured_bot_name_that_would_read_as_a_house_seat_or_hide_text_is_refused(tmp_path):
    """Found by an attack pass: `[bot_tokens]` in a config file took any name, so a bot
    configured as "house:mc" was listed to spectators as the house's own Monte Carlo seat
    (the CLI's and the environment's NAME:TOKEN never allowed a colon), and one with a
    newline or spaces around it read as another name. Such names are refused, saying why."""
    config = tmp_path / "h.toml"
    for name in ("house:mc", "alice\\n", " alice"):
        _file_refused(config, f'[bot_tokens]\n"{name}" = "token-0123456789"\n',
                      "bot_tokens: bot .* is 1-64 printable characters without ':'")
    config.write_text('[bot_tokens]\n"alice.v2-ü" = "token-0123456789"\n')  # what was taken stays taken
    assert Settings.load(file=str(config), env={}).bot_tokens == {"alice.v2-ü": "token-0123456789"}


@pytest.mark.parametrize(("source", "key"), [
    ({"admin_token": "admin-token-from-a-windows-file\r"}, "admin_token"),
    ({"admin_token": "admin-token-ending-in-a-space "}, "admin_token"),
    ({"admin_token": "jeton-d'administration-épelé"}, "admin_token"),
    ({"bot_tokens": {"ann": "token-ann-123\r"}}, "bot_tokens"),
    ({"bot_tokens": {"ann": "jeton-d'annë-123"}}, "bot_tokens"),
])
def test_a_token_no_client_can_send_stops_the_start(tmp_path, source, key):
    """An organiser's pass: `admin_token` read from a file written on Windows (its line end
    kept: HEARTSD_ADMIN_TOKEN from a CRLF env file) started the daemon, and then no client
    could ever call its admin API: a gRPC header carries printable ASCII only, so the CLI
    with the same value failed "INTERNAL: Invalid metadata", and without the line end got
    "unknown admin token" (the daemon strips what it reads, never what it was given). A bot
    token with a letter beyond ASCII locked its bot out alike. Such a token now stops the
    start, naming the setting."""
    config = tmp_path / "h.toml"
    lines = [f"admin_token = {json.dumps(source['admin_token'])}"] if "admin_token" in source else []
    if "bot_tokens" in source:
        lines += ["[bot_tokens]"] + [f"{n} = {json.dumps(t)}" for n, t in source["bot_tokens"].items()]
    config.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=f"^{key}: .*printable ASCII"):
        Settings.load(file=str(config), env={})
