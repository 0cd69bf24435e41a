"""The contract: buf lint passes and the generated Python code is current."""

from __future__ import annotations

import filecmp
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUF = ROOT / "tools" / "buf" / "node_modules" / ".bin" / "buf"


def test_buf_lint_passes():
    assert BUF.exists(), "buf is not installed: scripts/test runs `npm ci --prefix tools/buf` (needs Node.js)"
    result = subprocess.run([str(BUF), "lint"], cwd=ROOT / "proto", capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_buf_lint_fails_on_a_bad_proto(tmp_path):
    bad = tmp_path / "proto"
    shutil.copytree(ROOT / "proto", bad)
    (bad / "hearts" / "v1" / "bad.proto").write_text(
        'syntax = "proto3";\npackage hearts.v1;\nenum color { RED = 0; }\n'
    )
    result = subprocess.run([str(BUF), "lint"], cwd=bad, capture_output=True, text=True)
    assert result.returncode != 0 and "bad.proto" in result.stdout + result.stderr


def test_generated_code_is_current(tmp_path):
    out = tmp_path / "generated"
    env_python = sys.executable
    subprocess.run(["bash", str(ROOT / "scripts" / "gen_proto"), str(out)], cwd=ROOT, check=True,
                   env={"PYTHON": env_python, "PATH": "/usr/bin:/bin"})
    committed = ROOT / "clients" / "python" / "heartsbot" / "proto"
    fresh = out
    names = sorted(p.relative_to(committed).as_posix() for p in committed.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    assert names == sorted(p.relative_to(fresh).as_posix() for p in fresh.rglob("*") if p.is_file())
    for name in names:
        assert filecmp.cmp(committed / name, fresh / name, shallow=False), f"{name} differs: run scripts/gen_proto"
