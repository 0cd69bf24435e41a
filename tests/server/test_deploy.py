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
    assert "heartsd health --target 127.0.0.1:50051 $$HEARTSD_HEALTH_OPTIONS" in compose
    assert "heartsd health --target 127.0.0.1:50051 $HEARTSD_HEALTH_OPTIONS" in dockerfile
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


def test_no_default_admin_token_beyond_loopback_and_tls_is_documented(tmp_path):
    compose = (ROOT / "deploy" / "compose.yaml").read_text()
    dockerfile = (ROOT / "deploy" / "Dockerfile").read_text()
    assert "change-me" not in compose and "${HEARTSD_ADMIN_TOKEN:?" in compose, "compose refuses to start without one"
    for text in (compose, dockerfile):
        assert "HEARTSD_TLS_CERT" in text and "HEARTSD_TLS_KEY" in text and "HEARTSD_TLS_CLIENT_CA" in text
    # The image's own settings (listening on 0.0.0.0) and no admin token: heartsd refuses.
    env = {}
    for line in dockerfile.replace("\\\n", " ").splitlines():
        if line.startswith("ENV "):
            for item in line[4:].split():
                key, _, value = item.partition("=")
                env[key] = value.strip('"')
    assert env["HEARTSD_HOST"] == "0.0.0.0"
    env.update(HEARTSD_DB_PATH=str(tmp_path / "d.db"), HEARTSD_PORT="0")
    import os

    result = subprocess.run([sys.executable, "-m", "heartsd.cli", "serve"], capture_output=True, text=True,
                            env={k: v for k, v in {**os.environ, **env}.items() if k != "HEARTSD_ADMIN_TOKEN"},
                            timeout=60)
    assert result.returncode == 2 and "admin_token" in result.stderr, result.stderr
