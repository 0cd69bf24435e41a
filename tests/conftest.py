"""Shared fixtures: a PostgreSQL server for the whole run (see tests/postgres.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.postgres import cluster, fresh_database


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
