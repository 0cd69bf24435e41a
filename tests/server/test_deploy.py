"""The deploy files: what can be checked without a Docker engine on this machine."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_compose_and_dockerfile_wire_the_health_check_and_the_daemon():
    compose = (ROOT / "deploy" / "compose.yaml").read_text()
    dockerfile = (ROOT / "deploy" / "Dockerfile").read_text()
    assert "dockerfile: deploy/Dockerfile" in compose and "healthcheck:" in compose
    assert '"heartsd", "health"' in compose and '"heartsd", "health"' in dockerfile
    assert 'ENTRYPOINT ["heartsd", "serve"]' in dockerfile and "--house-matches" in dockerfile
    copied = " ".join(line for line in dockerfile.splitlines() if line.startswith("COPY"))
    for path in ("pyproject.toml", "README.md", "engine", "server", "clients"):
        assert path in copied and (ROOT / path).exists()
    assert "pip install --no-cache-dir ./engine ./clients/python ." in dockerfile


def test_health_command_fails_without_a_daemon():
    result = subprocess.run(
        [sys.executable, "-m", "heartsd.cli", "health", "--target", "127.0.0.1:1", "--timeout", "1"],
        capture_output=True, text=True,
    )
    assert result.returncode == 1 and "UNAVAILABLE" in result.stderr
