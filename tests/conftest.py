"""Shared fixtures: a PostgreSQL server for the whole run (see tests/postgres.py), and a
guard that no daemon or bot process a test started outlives it."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from heartsd.grpc_core import DEFAULT_EXPERIMENTS, ENV
from tests.postgres import cluster, fresh_database

# The servers the tests start in this process serve as `heartsd serve` does, on the
# daemon's gRPC experiments (grpc_core.py: the core reads them as grpc is first imported,
# which is after this). GRPC_EXPERIMENTS= in the environment runs the suite on gRPC's own.
os.environ.setdefault(ENV, DEFAULT_EXPERIMENTS)

# Tests send SIGINT to the daemons and bots they start (Ctrl-C). A suite started with SIGINT
# ignored (under nohup, by some job runners) passed that on to every child, which then never
# saw it: a helper's runs failed the stdio bridge's Ctrl-C test every time that way. Caught
# (not ignored) here, SIGINT is back to its default in every process a test starts.
signal.signal(signal.SIGINT, signal.default_int_handler)

# Processes of ours that a test starts and must stop itself; a test that fails before
# stopping one would leave it running (burning CPU for every later test) without this.
OURS = ("heartsd", "heartsbot", "clients/node/bot.js", "bench/")


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    with cluster() as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def store_url(request: pytest.FixtureRequest, tmp_path) -> Iterator[str]:  # type: ignore[no-untyped-def]
    """Each store test runs on SQLite and on a real PostgreSQL server."""
    if request.param == "sqlite":
        yield str(tmp_path / "store.db")
    else:
        with fresh_database(request.getfixturevalue("postgres_server")) as url:
            yield url


def _our_children() -> dict[int, str]:
    """Child processes of this pytest that run our programs: pid -> command line."""
    found: dict[int, str] = {}
    proc = Path("/proc")
    if not proc.is_dir():
        return found
    me = os.getpid()
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            if parent != me:
                continue
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, ValueError, IndexError):
            continue
        if any(name in command for name in OURS):
            found[int(entry.name)] = command
    return found


@pytest.fixture(autouse=True)
def _no_stray_processes() -> Iterator[None]:
    before = set(_our_children())
    yield
    for pid in set(_our_children()) - before:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
