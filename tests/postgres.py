"""A throwaway PostgreSQL cluster for the tests (initdb + pg_ctl in a temp dir).

Uses $HEARTS_TEST_PG if set (a server URL); otherwise starts a cluster with the
machine's PostgreSQL binaries (scripts/test installs Debian's package if they are
missing), as the ``postgres`` user when running as root, since initdb refuses root.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def _binary(name: str) -> str:
    found = shutil.which(name)
    if found:
        return found
    for candidate in sorted(Path("/usr/lib/postgresql").glob(f"*/bin/{name}"), reverse=True):
        return str(candidate)
    raise RuntimeError(f"PostgreSQL's {name} is not installed (scripts/test installs Debian's postgresql package)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def cluster() -> Iterator[str]:
    """Yield a server URL (postgresql://postgres@127.0.0.1:PORT/postgres)."""
    if os.environ.get("HEARTS_TEST_PG"):
        yield os.environ["HEARTS_TEST_PG"]
        return
    root = Path(tempfile.mkdtemp(prefix="hearts-pg-"))
    as_user: list[str] = []
    if os.geteuid() == 0:
        shutil.chown(root, "postgres")
        as_user = ["runuser", "-u", "postgres", "--"]
    data = root / "data"
    port = _free_port()
    run = lambda *args: subprocess.run([*as_user, *args], check=True, capture_output=True, text=True)  # noqa: E731
    run(_binary("initdb"), "-D", str(data), "-A", "trust", "-U", "postgres", "--no-sync")
    run(_binary("pg_ctl"), "-D", str(data), "-l", str(root / "log"), "-w", "start",
        "-o", f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off")
    try:
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run([*as_user, _binary("pg_ctl"), "-D", str(data), "-m", "immediate", "stop"], capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


@contextmanager
def fresh_database(server_url: str) -> Iterator[str]:
    """A new empty database on the server, dropped afterwards."""
    import psycopg

    name = "t_" + uuid.uuid4().hex[:12]
    with psycopg.connect(server_url, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    try:
        yield server_url.rsplit("/", 1)[0] + "/" + name
    finally:
        with psycopg.connect(server_url, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
