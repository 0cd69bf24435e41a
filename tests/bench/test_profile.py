"""bench/profile.py: its step markers route and count as documented, its workloads still
run against today's engine and daemon, and (under valgrind) the steps add up to the total."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import heartsd
from heartsd.runner import MatchRunner

ROOT = Path(__file__).resolve().parents[2]


def _load():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("bench_profile", ROOT / "bench" / "profile.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


profile = _load()


def test_every_marker_calls_the_step_once_and_returns_its_value() -> None:
    for name, make in profile.MARKERS.items():
        calls = []
        wrapped = make(lambda *a: calls.append(a) or sum(a))
        assert wrapped(2, 3) == 5, name
        assert calls == [(2, 3)], name


def test_steps_are_counted_only_in_a_region_and_never_nested() -> None:
    steps = profile.Steps()
    inner = steps.wrap("inner", lambda x: x + 1)
    outer = steps.wrap("outer", lambda x: inner(x) * 2)
    assert outer(1) == 4  # outside a region: a plain call, not counted
    assert steps.calls == {"inner": 0, "outer": 0}
    assert steps.region(lambda: outer(1) + inner(0))() == 5
    assert steps.calls == {"inner": 1, "outer": 1}  # inner inside outer counts as outer's
    assert set(steps.names.values()) <= set(profile.MARKERS)
    assert len(set(steps.names.values())) == 2


def test_a_warm_up_wraps_nothing() -> None:
    steps = profile.Steps(measure=False)
    func = lambda: 1  # noqa: E731
    assert steps.wrap("x", func) is func and steps.region(func) is func


def test_the_workloads_run_on_todays_engine_and_daemon() -> None:
    assert profile.deal_workload(3, profile.Steps(measure=False)) == 3
    steps = profile.Steps()
    made = profile.decision_workload(1, steps)
    assert made == 12 * 52 + 9 * 4  # one whole 12-deal match: every play, and the passes (3 deals in 4 pass)
    assert all(steps.calls[s] > 0 for s in steps.calls), steps.calls  # every patched step was reached
    # ... and every step of a compiled class is named by the C function callgrind counts
    assert len(steps.calls) + len(steps.native) == 6, (steps.calls, steps.native)
    assert all(symbol.startswith("CPyDef_runner___MatchRunner___") for symbol in steps.native.values())
    if heartsd.COMPILED:
        assert "record: the stored match (_record_bytes)" in steps.native
        assert profile.native_symbol(MatchRunner, "_record_bytes") == profile.NATIVE_REGION


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_the_deal_profile_adds_up_under_valgrind() -> None:
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "profile.py"), "deal", "--count", "20", "--json"],
                         capture_output=True, text=True, check=True, timeout=600).stdout
    result = json.loads(out.splitlines()[-1])["deal"]
    total = result["instructions_per_unit"]
    steps = result["steps"]
    assert total > 50_000
    assert steps["play (checked apply, next legal set)"] > 0.2 * total
    loop = steps["the loop itself (is_over, turn)"]
    assert abs(loop) < 0.1 * total, steps  # the markers' own cost is taken off
