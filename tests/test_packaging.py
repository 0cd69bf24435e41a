"""Each distribution installs alone: the engine with no dependency, the client with only
gRPC, protobuf and the engine, and a client-only install plays a match on a server.

Real virtual environments and real pip (dependencies come from the pip cache the
suite's own install filled, or from the package index), so this proves what a bot
author or a researcher gets, not what this repository's editable install happens to
provide.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from tests.server.harness import BOTS, run, running_daemon

ROOT = Path(__file__).resolve().parents[1]
DAEMON_ONLY = {"hearts-arena", "psycopg", "psycopg-binary", "openskill", "structlog", "grpcio-health-checking",
               "grpcio-reflection"}


def _venv(path: Path) -> Path:
    venv.EnvBuilder(with_pip=True, clear=True).create(path)
    return path / "bin"


def _pip(bin_dir: Path, *folders: str, pure: bool = False) -> None:
    """``pip install`` the repository ``folders`` as a user would, from a copy (a
    non-editable build writes build/ and *.egg-info into the folder it builds). ``pure``:
    the engine without its compiled modules (HEARTS_ENGINE_PURE=1), a quicker build."""
    sources = bin_dir.parent.parent / "src"
    for folder in folders:
        shutil.copytree(ROOT / folder, sources / folder, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__", "node_modules",
                                                      "*.so", "_compiled.json"))
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    if pure:
        env["HEARTS_ENGINE_PURE"] = "1"
    env.pop("PYTHONPATH", None)
    result = subprocess.run([str(bin_dir / "python"), "-m", "pip", "install", "--quiet",
                             *(f"./{folder}" for folder in folders)],
                            capture_output=True, text=True, env=env, cwd=sources, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr


def _installed(bin_dir: Path) -> set[str]:
    listing = subprocess.run([str(bin_dir / "python"), "-m", "pip", "list", "--format", "json"],
                             capture_output=True, text=True, check=True, cwd="/")
    return {p["name"].lower() for p in json.loads(listing.stdout)}


def _clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return env


@pytest.fixture(scope="module")
def engine_only(tmp_path_factory: pytest.TempPathFactory) -> Path:
    bin_dir = _venv(tmp_path_factory.mktemp("engine-venv") / "venv")
    _pip(bin_dir, "./engine")
    return bin_dir


@pytest.fixture(scope="module")
def client_only(tmp_path_factory: pytest.TempPathFactory) -> Path:
    bin_dir = _venv(tmp_path_factory.mktemp("client-venv") / "venv")
    _pip(bin_dir, "./engine", "./clients/python", pure=True)  # the compiled install is engine_only's
    return bin_dir


def test_the_engine_installs_alone_with_no_dependency_and_plays(engine_only: Path, tmp_path: Path):
    assert _installed(engine_only) - {"pip", "setuptools", "wheel"} == {"hearts-engine"}
    record = tmp_path / "m.json"
    played = subprocess.run([str(engine_only / "hearts-engine"), "play", "--ruleset", "classic", "--players", "5",
                             "--seed", "42", "--record", str(record)],
                            capture_output=True, text=True, cwd=tmp_path, env=_clean_env(), timeout=120)
    assert played.returncode == 0, played.stderr
    assert "seat 4" in played.stdout
    verified = subprocess.run([str(engine_only / "hearts-engine"), "verify", str(record)],
                              capture_output=True, text=True, cwd=tmp_path, env=_clean_env(), timeout=120)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    # A user's install compiles the engine where it can (scripts/test's compiled pass sets
    # HEARTS_ENGINE_EXPECT), and needs nothing at run time for that (mypy only builds it).
    compiled = subprocess.run([str(engine_only / "python"), "-c", "import hearts_engine; print(hearts_engine.COMPILED)"],
                              capture_output=True, text=True, cwd=tmp_path, env=_clean_env(), check=True)
    expected = os.environ.get("HEARTS_ENGINE_EXPECT")
    if expected is not None:
        assert compiled.stdout.strip() == str(expected == "compiled")
    imports = subprocess.run([str(engine_only / "python"), "-c", "import heartsbot"], capture_output=True,
                             text=True, cwd=tmp_path, env=_clean_env())
    assert imports.returncode != 0, "the engine's environment must not see the client"


def test_the_client_installs_without_the_daemon(client_only: Path, tmp_path: Path):
    installed = _installed(client_only)
    assert {"hearts-engine", "heartsbot", "grpcio", "protobuf"} <= installed
    assert not installed & DAEMON_ONLY, installed & DAEMON_ONLY
    probe = subprocess.run(
        [str(client_only / "python"), "-c",
         "import heartsbot.client, heartsbot.stdio, heartsbot.cli, heartsbot.proto.bot_pb2\n"
         "import importlib.util, sys\n"
         "sys.exit(0 if importlib.util.find_spec('heartsd') is None and importlib.util.find_spec('hearts') is None else 1)"],
        capture_output=True, text=True, cwd=tmp_path, env=_clean_env())
    assert probe.returncode == 0, probe.stderr
    local = subprocess.run([str(client_only / "heartsbot"), "local"], capture_output=True, text=True,
                           cwd=tmp_path, env=_clean_env(), timeout=60)
    assert local.returncode == 2 and "daemon (heartsd) is not installed" in local.stderr


def test_a_client_only_install_plays_a_match_on_a_running_daemon(client_only: Path, tmp_path: Path):
    async def scenario():  # type: ignore[no-untyped-def]
        async with running_daemon(tmp_path) as daemon:
            bot = await asyncio.create_subprocess_exec(
                str(client_only / "heartsbot"), "play", "--server", daemon.target, "--token", BOTS["alice"],
                "--name", "alice", "--strategy", "heuristic", cwd=str(tmp_path), env=_clean_env(),
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
            try:
                for _ in range(300):
                    if daemon.arena.sessions.get("alice") is not None:
                        break
                    await asyncio.sleep(0.1)
                match_id = await daemon.create_match(["alice", "house:random", "house:heuristic", "house:random"],
                                                     deals=2, seed=4)
                await daemon.wait_finished(match_id)
                return daemon.stored(match_id)
            finally:
                bot.terminate()
                await bot.communicate()

    stored = run(scenario())
    assert stored.status == "finished"
    mine = [d for d in stored.record.decisions if d.seat == 0]
    assert len(mine) == 2 * 14 and all(d.provenance == 1 for d in mine)  # every decision its own (BOT)


def test_third_party_stubs_of_hearts_v1_load_beside_ours(tmp_path: Path):
    """A client that generates its own hearts.v1 stubs from proto/ (protoc's usual
    top-level `hearts` package) imports them in the same interpreter as ours, in either
    order, and the messages interoperate (same descriptors, same full names)."""
    subprocess.run([sys.executable, "-m", "grpc_tools.protoc", "-I", str(ROOT / "proto"),
                    f"--python_out={tmp_path}", f"--grpc_python_out={tmp_path}",
                    *map(str, sorted((ROOT / "proto" / "hearts" / "v1").glob("*.proto")))], check=True)
    for first, second in (("theirs", "ours"), ("ours", "theirs")):
        code = "\n".join((
            "import importlib",
            "theirs_name, ours_name = 'hearts.v1.bot_pb2', 'heartsbot.proto.bot_pb2'",
            f"order = {[first, second]!r}",
            "loaded = {k: importlib.import_module(theirs_name if k == 'theirs' else ours_name) for k in order}",
            f"assert loaded['theirs'].__file__.startswith({str(tmp_path)!r})",
            f"assert not loaded['ours'].__file__.startswith({str(tmp_path)!r})",
            "hello = loaded['theirs'].PlayRequest(hello=loaded['theirs'].Hello(name='x', rulesets=['standard']))",
            "assert loaded['ours'].PlayRequest.FromString(hello.SerializeToString()).hello.name == 'x'",
        ))
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                env={**os.environ, "PYTHONPATH": str(tmp_path)}, cwd=tmp_path)
        assert result.returncode == 0, (first, result.stderr)


def test_our_stubs_do_not_take_the_hearts_package_name():
    """Ours are heartsbot.proto, with protoc's descriptor file and package names."""
    from heartsbot.proto import bot_pb2

    assert bot_pb2.DESCRIPTOR.name == "hearts/v1/bot.proto" and bot_pb2.DESCRIPTOR.package == "hearts.v1"
    import importlib.util

    assert importlib.util.find_spec("hearts") is None
