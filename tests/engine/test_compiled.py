"""The compiled engine (mypyc, engine/setup.py) and the pure-Python one are the same engine.

scripts/test runs the whole suite on the compiled build and every engine test (each rule
test and cross-check), the client's and the server's match tests on the pure one
(HEARTS_PURE_PASS=all: the whole suite on both); these tests check that the run really used the build it says, that the two builds
give identical results on a broad random workload, that a stale extension never runs, and
that a build without a working C compiler falls back to the pure package.
"""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import hearts_engine
from hearts_engine import (
    PRESETS,
    ActionError,
    Deal,
    Match,
    MatchFormat,
    determinize,
    preset,
    seat_view,
)

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "engine" / "hearts_engine"


def _has_compiled_build() -> bool:
    return (PACKAGE / "_compiled.json").is_file()


def test_the_expected_engine_runs() -> None:
    """scripts/test says which build each pass must run; a silent fallback fails here."""
    expected = os.environ.get("HEARTS_ENGINE_EXPECT")
    if expected is None:
        pytest.skip("HEARTS_ENGINE_EXPECT is set by scripts/test")
    assert hearts_engine.COMPILED == (expected == "compiled")
    suffix = Path(hearts_engine.deal.__file__ or "").suffix
    assert (suffix == ".so") == (expected == "compiled"), hearts_engine.deal.__file__


def workload_digest(matches: int = 12) -> str:
    """Everything observable of many random matches, hashed: every legal set and view,
    every refusal's error type and reason, sampled deals, playouts and scores."""
    digest = hashlib.sha256()

    def see(*values: object) -> None:
        digest.update(repr(values).encode())

    rng = random.Random(20261201)
    for name in sorted(PRESETS):
        for players in (3, 4, 5, 6):
            try:
                rules = preset(name, players=players)
            except ValueError:
                continue
            for m in range(matches // 4):
                match = Match(rules, MatchFormat.fixed(players, duplicate=m % 2 == 0), seed=rng.randrange(2**64))
                while not match.is_over:
                    seat = match.to_act()[0]
                    deal = match.deal
                    actions = match.legal_actions(seat)
                    view = seat_view(deal, seat)
                    see(seat, deal.phase, actions[:5], len(actions), view)
                    for bad in (rng.choice((-2, -1, 52, 99)), True, "2C", None, 1.5):  # never a card
                        try:
                            deal.play(rng.randrange(-1, players + 1), bad)  # type: ignore[arg-type]
                        except ActionError as exc:
                            see(type(exc).__name__, exc.reason)
                    if deal.phase.value == "playing" and deal.tricks and rng.random() < 0.1:
                        sampled = determinize(view, rng)
                        see(sampled.hands, sampled.copy().playout(random.Random(rng.random())))
                    match.apply(seat, rng.choice(actions))
                see(match.outcome, match.totals)
    for number in range(40):
        deal = Deal.shuffled(preset("standard"), 7, number)
        see(deal.dealt, deal.copy().playout(random.Random(number)))
    return digest.hexdigest()


def test_compiled_and_pure_engines_give_identical_results() -> None:
    if not _has_compiled_build():
        pytest.skip("no compiled build here (no C compiler when the engine was installed)")
    env = {k: v for k, v in os.environ.items() if k != "HEARTS_ENGINE_PURE"}
    if hearts_engine.COMPILED:
        env["HEARTS_ENGINE_PURE"] = "1"  # the other build: the sources
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import test_compiled as t, hearts_engine as h; "
            "print(h.COMPILED, t.workload_digest())")
    out = subprocess.run([sys.executable, "-c", code, str(Path(__file__).parent)], env=env, cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout.split()
    assert out[0] == str(not hearts_engine.COMPILED)  # the subprocess ran the other build
    assert out[1] == workload_digest()


def _copy_package(tmp_path: Path) -> Path:
    copy = tmp_path / "hearts_engine"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def _import_compiled_flag(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != "HEARTS_ENGINE_PURE"} | env
    environment["PYTHONPATH"] = str(tmp_path)
    return subprocess.run([sys.executable, "-c", "import hearts_engine, sys; print(hearts_engine.COMPILED, "
                           "hearts_engine.deal.__file__.startswith(sys.argv[1]))", str(tmp_path)],
                          env=environment, cwd=tmp_path, capture_output=True, text=True, check=True)


def test_hearts_engine_pure_runs_the_sources_and_a_stale_extension_never_runs(tmp_path: Path) -> None:
    if not _has_compiled_build():
        pytest.skip("no compiled build here")
    copy = _copy_package(tmp_path)
    assert _import_compiled_flag(tmp_path).stdout.split() == ["True", "True"]
    assert _import_compiled_flag(tmp_path, HEARTS_ENGINE_PURE="1").stdout.split() == ["False", "True"]
    with (copy / "deal.py").open("a") as source:
        source.write("\n# edited after the build\n")
    stale = _import_compiled_flag(tmp_path)
    assert stale.stdout.split() == ["False", "True"]
    assert "deal.py changed since it was compiled" in stale.stderr


@pytest.mark.skipif(bool(os.environ.get("HEARTS_ENGINE_PURE")), reason="tests the build: once, in the compiled pass")
def test_without_a_working_c_compiler_the_build_is_the_pure_package(tmp_path: Path) -> None:
    pytest.importorskip("mypyc")
    source = tmp_path / "engine"
    shutil.copytree(ROOT / "engine", source,
                    ignore=shutil.ignore_patterns("__pycache__", "build", "*.so", "_compiled.json", "*.egg-info"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("HEARTS_ENGINE_")}
    env["CC"] = "false"  # a compiler that always fails
    built = tmp_path / "lib"
    result = subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--build-lib", str(built)],
                            cwd=source, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "installing the pure-Python package only" in result.stderr
    assert not list(built.rglob("*.so")) and not list(built.rglob("_compiled.json"))
    env["HEARTS_ENGINE_REQUIRE_COMPILED"] = "1"
    strict = subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--build-lib", str(built)],
                            cwd=source, env=env, capture_output=True, text=True, timeout=600)
    assert strict.returncode != 0 and "HEARTS_ENGINE_REQUIRE_COMPILED" in strict.stderr
