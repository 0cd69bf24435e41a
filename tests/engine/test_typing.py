"""The engine ships py.typed, so it must pass mypy --strict."""

from __future__ import annotations

from pathlib import Path

import pytest

mypy_api = pytest.importorskip("mypy.api")

ENGINE = Path(__file__).resolve().parents[2] / "engine" / "hearts_engine"


def test_engine_is_fully_typed():
    assert (ENGINE / "py.typed").exists()
    out, err, status = mypy_api.run(["--strict", "--no-incremental", str(ENGINE)])
    assert status == 0, out + err
