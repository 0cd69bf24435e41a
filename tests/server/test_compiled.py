"""The daemon's compiled encoders (mypyc, setup.py) and their Python sources are the same code.

scripts/test runs the whole suite on the compiled build, and the encoders' tests (the
byte-for-byte cross-check of tests/server/test_wire.py, the match and visibility tests, the
doctests) again with ``HEARTSD_PURE=1``. These tests check that each pass ran the build it
says, that both builds send and store the same bytes for whole matches of every preset,
that a stale extension never runs, and that a build without a C compiler is the pure package.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

import heartsd
from hearts_engine import PRESETS, preset
from heartsbot.client import first_legal_answer
from heartsbot.proto import admin_pb2, bot_pb2, game_pb2
from heartsd import logs, runner as runner_module
from heartsd.arena import Arena, SeatRequest
from heartsd.config import Settings
from heartsd.sessions import BotSession
from heartsd.store import Store

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "server" / "heartsd"


def _has_compiled_build() -> bool:
    return (PACKAGE / "_compiled.json").is_file()


def test_the_expected_daemon_build_runs() -> None:
    """scripts/test says which build each pass must run; a silent fallback fails here."""
    expected = os.environ.get("HEARTSD_EXPECT")
    if expected is None:
        pytest.skip("HEARTSD_EXPECT is set by scripts/test")
    from heartsd import wire

    assert heartsd.COMPILED == (expected == "compiled")
    assert (Path(wire.__file__ or "").suffix == ".so") == (expected == "compiled"), wire.__file__


class _FrozenTime:
    """The runner's clock, stopped: every answer takes 0 ms, so the clock fields and think
    times of the bytes are the same in every run. Stopped long before the real clock's
    start: the loop monitor (lag.py) measures the server's stalls on the real clock, and
    against a stopped clock ahead of it (1,000 s, on a machine up for less) it saw one
    stall as long as the difference, and credited it (a different digest in every run)."""

    @staticmethod
    def monotonic() -> float:
        return -1e9

    perf_counter = monotonic

    @staticmethod
    def time() -> float:
        return 1_800_000_000.0


_CLOCKS = ("monotonic", "perf_counter", "wall_time", "CHECKPOINT_EVERY_S")


async def _matches_digest(tmp: Path) -> str:
    kept = [getattr(runner_module, name) for name in _CLOCKS]
    for name, frozen in zip(_CLOCKS, (_FrozenTime.monotonic, _FrozenTime.perf_counter, _FrozenTime.time, math.inf)):
        setattr(runner_module, name, frozen)
    try:
        return await _digest_of_matches(tmp)
    finally:  # the suite's later tests in this process need the runner's real clock
        for name, value in zip(_CLOCKS, kept):
            setattr(runner_module, name, value)


async def _digest_of_matches(tmp: Path) -> str:
    digest = hashlib.sha256()
    rng = random.Random(20261202)
    store = Store(str(tmp / "digest.db"))
    arena = Arena(Settings(db_path=str(tmp / "digest.db")), store)
    session = BotSession("b0", "", frozenset(), 8)
    arena.connect(session)
    clock = game_pb2.ClockSettings(decision_ms=3_600_000)
    for number, name in enumerate(sorted(PRESETS)):
        for players in (3, 4, 5, 6):
            try:
                preset(name, players=players)
            except ValueError:
                continue
            runner = await arena.create_match(name, players, admin_pb2.RulesetOptions(),
                                              game_pb2.MatchFormat(fixed_deals=2), 1000 * number + players,
                                              [SeatRequest(bot="b0")] * players, clock)
            ids = [(runner.id.encode(), b"m-" + b"0" * (len(runner.id) - 2)),
                   (runner._id_prefix.encode(), b"r-" + b"0" * (len(runner._id_prefix) - 2))]
            outbox = session.outbox
            while not (runner.finished.is_set() and outbox.empty()):  # the match's last updates too
                if outbox.empty():
                    await asyncio.sleep(0)
                    continue
                raw = outbox.get_nowait()
                assert isinstance(raw, bytes)
                update = bot_pb2.PlayResponse.FromString(raw).update
                for real, fixed in ids:
                    raw = raw.replace(real, fixed)
                digest.update(raw)
                if not update.HasField("request"):
                    continue
                request = update.request
                reply = first_legal_answer(request)
                if request.kind == game_pb2.DECISION_KIND_PLAY and rng.random() < 0.5:
                    reply.play.CopyFrom(rng.choice(request.legal_cards))
                reply.match_id = update.match_id
                if len(runner.decisions) == 1:
                    time.sleep(0.003)  # a think time the stopped clock must not see (else 3 ms, in one build)
                assert arena.answer(session, reply) is None
            assert all(d.think_ms == 0 for d in runner.decisions), "the runner's clock was not stopped"
            record = runner._record_bytes(game_pb2.MatchResult())
            for real, fixed in ids:
                record = record.replace(real, fixed)
            digest.update(record)
    await arena.shutdown(1.0)
    store.close()
    return digest.hexdigest()


def matches_digest(tmp: Path) -> str:
    """Every byte the daemon sends and stores for whole matches of every preset and player
    count, ids fixed and the clock stopped, hashed."""
    return asyncio.run(_matches_digest(tmp))


def test_compiled_and_pure_encoders_send_and_store_identical_bytes(tmp_path: Path) -> None:
    if not _has_compiled_build():
        pytest.skip("no compiled build here (no C compiler when the daemon was installed)")
    env = {k: v for k, v in os.environ.items() if k != "HEARTSD_PURE"}
    if heartsd.COMPILED:
        env["HEARTSD_PURE"] = "1"  # the other build: the sources
    other = tmp_path / "other"
    other.mkdir()
    code = ("import sys, pathlib; sys.path.insert(0, sys.argv[1]); import test_compiled as t, heartsd; "
            "t.logs.configure('json', 'error'); print(heartsd.COMPILED, t.matches_digest(pathlib.Path(sys.argv[2])))")
    out = subprocess.run([sys.executable, "-c", code, str(Path(__file__).parent), str(other)], env=env, cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout.split()
    assert out[0] == str(not heartsd.COMPILED)  # the subprocess ran the other build
    here = tmp_path / "here"
    here.mkdir()
    assert out[1] == matches_digest(here)


def _import_flag(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != "HEARTSD_PURE"} | env
    environment["PYTHONPATH"] = str(tmp_path)
    return subprocess.run([sys.executable, "-c", "import heartsd, heartsd.wire as w, sys; print(heartsd.COMPILED, "
                           "w.__file__.startswith(sys.argv[1]), w.__file__.endswith('.py'))", str(tmp_path)],
                          env=environment, cwd=tmp_path, capture_output=True, text=True, check=True)


def test_heartsd_pure_runs_the_sources_and_a_stale_extension_never_runs(tmp_path: Path) -> None:
    if not _has_compiled_build():
        pytest.skip("no compiled build here")
    copy = tmp_path / "heartsd"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    assert _import_flag(tmp_path).stdout.split() == ["True", "True", "False"]
    assert _import_flag(tmp_path, HEARTSD_PURE="1").stdout.split() == ["False", "True", "True"]
    with (copy / "wire.py").open("a") as source:
        source.write("\n# edited after the build\n")
    stale = _import_flag(tmp_path)
    assert stale.stdout.split() == ["False", "True", "True"]
    assert "wire.py changed since it was compiled (rebuild: pip install -e .)" in stale.stderr


@pytest.mark.skipif(bool(os.environ.get("HEARTSD_PURE")), reason="tests the build: once, in the compiled pass")
def test_without_a_working_c_compiler_the_daemon_build_is_the_pure_package(tmp_path: Path) -> None:
    pytest.importorskip("mypyc")
    source = tmp_path / "project"
    for part in ("setup.py", "pyproject.toml", "README.md", "engine/mypyc_build.py"):
        (source / part).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / part, source / part)
    shutil.copytree(PACKAGE, source / "server" / "heartsd",
                    ignore=shutil.ignore_patterns("__pycache__", "*.so", "_compiled.json"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("HEARTSD_")}
    env["CC"] = "false"  # a compiler that always fails
    built = tmp_path / "lib"
    result = subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--build-lib", str(built)],
                            cwd=source, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "hearts-arena: installing the pure-Python package only" in result.stderr
    assert not list(built.rglob("*.so")) and not list(built.rglob("_compiled.json"))
    env["HEARTSD_REQUIRE_COMPILED"] = "1"
    strict = subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--build-lib", str(built)],
                            cwd=source, env=env, capture_output=True, text=True, timeout=600)
    assert strict.returncode != 0 and "HEARTSD_REQUIRE_COMPILED" in strict.stderr


def test_the_runner_needs_no_mypy_to_run() -> None:
    """runner.py takes mypyc's class decorator from mypy_extensions, which comes with mypy:
    a build dependency only. Without it, the runner (either build) and the conformance kit's
    Python subclass of it still load."""
    code = ("import sys; sys.modules['mypy_extensions'] = None\n"
            "import heartsd.runner as r, heartsd.conformance as c\n"
            "assert issubclass(c.ConformanceRunner, r.MatchRunner)\n"
            "print(r.__file__.endswith('.py'))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert out.strip() == str(not heartsd.COMPILED)
