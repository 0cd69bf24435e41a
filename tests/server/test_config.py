"""Settings: every source, every value validated at start."""

from __future__ import annotations

import pytest

from heartsd.config import ConfigError, Settings


def test_precedence_defaults_file_env_flags(tmp_path):
    config = tmp_path / "h.toml"
    config.write_text('port = 7000\nhost = "127.0.0.2"\n[clock]\ndecision_ms = 400\nbank_ms = 100\n[bot_tokens]\nann = "token-ann-123"\n')
    s = Settings.load(file=str(config), env={"HEARTSD_PORT": "7100", "HEARTSD_BANK_MS": "900"}, flags={"port": 7200})
    assert (s.port, s.host, s.clock.decision_ms, s.clock.bank_ms) == (7200, "127.0.0.2", 400, 900)
    assert s.bot_tokens == {"ann": "token-ann-123"}
    assert s.admin_token.startswith("ha_")  # generated when not given; never starts with '-'


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"HEARTSD_PORT": "70000"}, "port: must be 0-65535"),
        ({"HEARTSD_DECISION_MS": "0"}, "decision_ms"),
        ({"HEARTSD_BANK_MS": "-1"}, "bank_ms"),
        ({"HEARTSD_AUTO_AFTER": "0"}, "auto_after"),
        ({"HEARTSD_BOT_TOKENS": "ann"}, "NAME:TOKEN"),
        ({"HEARTSD_BOT_TOKENS": "ann:short"}, "at least 8"),
        ({"HEARTSD_BOT_TOKENS": "ann:same-token-1,bob:same-token-1"}, "share a token"),
        ({"HEARTSD_ADMIN_TOKEN": "tok-12345678", "HEARTSD_BOT_TOKENS": "a:tok-12345678"}, "must differ"),
        ({"HEARTSD_LOG_LEVEL": "loud"}, "log_level"),
        ({"HEARTSD_INSTANCE": ""}, "instance: a name"),
        ({"HEARTSD_SPECTATOR_DELAY_S": "-2"}, "must not be negative"),
        ({"HEARTSD_MAX_MESSAGE_BYTES": "10"}, "at least 1024"),
        ({"HEARTSD_MISSED_EVENTS_HOLD_S": "1000000"}, "missed_events_hold_s: 0 .keep none. to 604800"),
        ({"HEARTSD_MISSED_EVENTS_MAX_BYTES": "-1"}, "missed_events_max_bytes: 0"),
    ],
)
def test_bad_values_name_the_setting(env, message):
    with pytest.raises(ConfigError, match=message):
        Settings.load(env=env)


def test_unknown_settings_and_unreadable_files(tmp_path):
    config = tmp_path / "h.toml"
    config.write_text("colour = 3\n")
    with pytest.raises(ConfigError, match="unknown settings: colour"):
        Settings.load(file=str(config), env={})
    config.write_text("port = [\n")
    with pytest.raises(ConfigError, match="h.toml"):
        Settings.load(file=str(config), env={})
    with pytest.raises(ConfigError, match="No such file"):
        Settings.load(file=str(tmp_path / "missing.toml"), env={})
