"""bench/whole_process.py end to end (a tiny window): both servers are counted under
callgrind, per operation and by shared object. A smoke test: it asserts no speed."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_the_whole_process_comparison_counts_both_servers_by_object() -> None:
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "whole_process.py"), "--seconds", "1", "--json"],
                         capture_output=True, text=True, timeout=600, check=True).stdout
    result = json.loads(out.splitlines()[-1])
    assert result["operations"]["heartsd"] > 0 and result["operations"]["floor"] > 0
    per_op = result["instructions_per_operation"]
    assert per_op["heartsd"] > 10_000 and per_op["floor"] > 10_000
    grpc = next(name for name in result["by_object"] if name.startswith("cygrpc"))  # gRPC's core, in both
    assert result["by_object"][grpc]["heartsd"] > 0 and result["by_object"][grpc]["floor"] > 0
    assert any(name.startswith("libpython") for name in result["by_object"])
