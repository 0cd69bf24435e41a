"""The daemon's gRPC experiments (heartsd/grpc_core.py): set before gRPC's core loads,
never over the environment's own."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from heartsd.config import ConfigError, Settings
from heartsd.grpc_core import DEFAULT_EXPERIMENTS, ENV, apply_experiments

from .harness import serve_once

UNKNOWN = "no_such_experiment_of_ours"


def test_the_setting_is_checked() -> None:
    assert Settings.load(env={}).grpc_experiments == DEFAULT_EXPERIMENTS == "-event_engine_listener"
    assert Settings.load(env={"HEARTSD_GRPC_EXPERIMENTS": ""}).grpc_experiments == ""  # gRPC's own defaults
    both = "event_engine_poller,-event_engine_listener"
    assert Settings.load(env={"HEARTSD_GRPC_EXPERIMENTS": both}).grpc_experiments == both
    for bad in ("event engine", "-", "a,,b", "Event_Engine", "a;rm -rf"):
        with pytest.raises(ConfigError, match="grpc_experiments: comma-separated gRPC experiment names"):
            Settings.load(env={"HEARTSD_GRPC_EXPERIMENTS": bad})


def test_the_environment_and_a_loaded_core_win() -> None:
    env: dict[str, str] = {}
    assert apply_experiments("-event_engine_listener", env, grpc_loaded=False) == ("-event_engine_listener", True)
    assert env == {ENV: "-event_engine_listener"}
    env = {ENV: "event_engine_poller"}
    assert apply_experiments("-event_engine_listener", env, grpc_loaded=False) == ("event_engine_poller", False)
    assert env == {ENV: "event_engine_poller"}
    env = {}
    assert apply_experiments("-event_engine_listener", env, grpc_loaded=True) == ("", False)  # too late to change
    assert env == {}
    assert apply_experiments("", env, grpc_loaded=False) == ("", True) and env == {}


def test_the_daemon_hands_its_setting_to_grpcs_core_before_it_loads(tmp_path: Path) -> None:
    """gRPC's core names an experiment it does not know as it loads (config.cc, "Unknown
    experiment"): the daemon's setting reached it only if that line is there. Set after
    `import grpc`, it would not be."""
    env = {k: v for k, v in os.environ.items() if k != ENV}
    err = serve_once(tmp_path, {**env, "HEARTSD_GRPC_EXPERIMENTS": UNKNOWN})
    assert f"Unknown experiment: {UNKNOWN}" in err
    # The environment's GRPC_EXPERIMENTS wins, and the log says so.
    err = serve_once(tmp_path, {**env, ENV: "", "HEARTSD_GRPC_EXPERIMENTS": UNKNOWN})
    assert "Unknown experiment" not in err
