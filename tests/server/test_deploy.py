"""The deploy files: what can be checked without a Docker engine on this machine."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import grpc
import psycopg
from grpc_health.v1 import health_pb2, health_pb2_grpc

from heartsbot.proto import admin_pb2, admin_pb2_grpc, game_pb2, spectator_pb2, spectator_pb2_grpc

from ..postgres import fresh_database

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
    result = subprocess.run([sys.executable, "-m", "heartsd.cli", "serve"], capture_output=True, text=True,
                            env={k: v for k, v in {**os.environ, **env}.items() if k != "HEARTSD_ADMIN_TOKEN"},
                            timeout=60)
    assert result.returncode == 2 and "admin_token" in result.stderr, result.stderr


# -- Kubernetes (deploy/kubernetes/heartsd.yaml) ---------------------------------------------

MANIFEST = ROOT / "deploy" / "kubernetes" / "heartsd.yaml"
POD_SECRETS = {"admin-token": "k8s-admin-token-for-tests", "postgres-password": "unused-with-trust",
               "bot-tokens": "alice:alice-token-k8s,bob:bob-token-k8s"}


def _manifest() -> dict[tuple[str, str], dict]:
    import yaml

    return {(d["kind"], d["metadata"]["name"]): d for d in yaml.safe_load_all(MANIFEST.read_text()) if d}


def _container(manifest: dict[tuple[str, str], dict]) -> dict:
    [container] = manifest[("StatefulSet", "heartsd")]["spec"]["template"]["spec"]["containers"]
    return container


def _image_env() -> dict[str, str]:
    """The image's own environment (deploy/Dockerfile's ENV lines)."""
    env: dict[str, str] = {}
    for line in (ROOT / "deploy" / "Dockerfile").read_text().replace("\\\n", " ").splitlines():
        if line.startswith("ENV "):
            for item in line[4:].split():
                key, _, value = item.partition("=")
                env[key] = value.strip('"')
    return env


def _pod_env(container: dict, pod: str, db_url: str) -> dict[str, str]:
    """What the container of pod ``pod`` sees: the image's environment, then the manifest's
    (a field reference resolved to the pod's name, a secret to POD_SECRETS), the database
    URL replaced by ``db_url``."""
    env = _image_env()
    for item in container["env"]:
        source = item.get("valueFrom")
        if source is None:
            env[item["name"]] = item["value"]
        elif "fieldRef" in source:
            assert source["fieldRef"]["fieldPath"] == "metadata.name"
            env[item["name"]] = pod
        else:
            env[item["name"]] = POD_SECRETS[source["secretKeyRef"]["key"]]
    env["HEARTSD_DB_PATH"] = db_url
    return env


def test_the_kubernetes_manifest_wires_settings_secrets_probes_and_services():
    from urllib.parse import urlsplit

    from heartsd.config import _FIELDS, OTHER_ENV

    manifest = _manifest()
    stateful = manifest[("StatefulSet", "heartsd")]
    pod = stateful["spec"]["template"]
    container = _container(manifest)
    env = {item["name"]: item for item in container["env"]}
    # Every variable is a setting (or the PostgreSQL client's password), spelt right.
    for name in env:
        assert name == "PGPASSWORD" or name in OTHER_ENV or name.removeprefix("HEARTSD_").lower() in _FIELDS, name
    assert env["HEARTSD_INSTANCE"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.name"
    # Secrets come from the Secret, never from the file; the store's URL holds no password.
    for name in ("HEARTSD_ADMIN_TOKEN", "HEARTSD_BOT_TOKENS", "PGPASSWORD"):
        assert env[name]["valueFrom"]["secretKeyRef"]["name"] == "heartsd", name
    url = urlsplit(env["HEARTSD_DB_PATH"]["value"])
    assert url.scheme == "postgresql" and url.password is None
    assert "kind: Secret" not in MANIFEST.read_text()
    # The pod stops within its grace: longer than the daemon's own.
    assert pod["spec"]["terminationGracePeriodSeconds"] > float(env["HEARTSD_SHUTDOWN_GRACE_S"]["value"])
    # Probes ask the daemon's gRPC port, which is the image's; none restarts a daemon.
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports["grpc"] == int(_image_env()["HEARTSD_PORT"])
    for probe in ("readinessProbe", "startupProbe"):
        assert container[probe]["grpc"]["port"] == ports["grpc"], probe
    assert "livenessProbe" not in container
    web = container["args"][container["args"].index("--web") + 1]
    assert int(web.rsplit(":", 1)[1]) == ports["web"]
    assert pod["spec"]["securityContext"]["runAsUser"] == 1000 and "--uid 1000" in (ROOT / "deploy" / "Dockerfile").read_text()
    # Every Service reaches these pods by a port they have; the StatefulSet's is headless.
    labels = pod["metadata"]["labels"]
    assert stateful["spec"]["selector"]["matchLabels"].items() <= labels.items()
    services = {name: d for (kind, name), d in manifest.items() if kind == "Service"}
    assert services[stateful["spec"]["serviceName"]]["spec"]["clusterIP"] == "None"
    for name, service in services.items():
        assert service["spec"]["selector"].items() <= labels.items(), name
        for port in service["spec"]["ports"]:
            assert port["targetPort"] in ports, (name, port)
    assert services["heartsd-web"]["spec"]["sessionAffinity"] == "ClientIP"
    for name in ("heartsd", "heartsd-web"):
        assert services[name]["spec"]["externalTrafficPolicy"] == "Local", name
    budget = manifest[("PodDisruptionBudget", "heartsd")]
    assert budget["spec"]["selector"]["matchLabels"].items() <= labels.items()


def _stopped(proc: subprocess.Popen[str], within_s: float) -> int | None:
    """``proc``'s exit code once it stops within ``within_s``; killed (None) if it does not."""
    try:
        return proc.wait(within_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return None


def test_the_kubernetes_pods_settings_run_as_two_daemons_on_one_postgresql(postgres_server, tmp_path):
    """The StatefulSet's two pods, as local processes: the image's entry point and the
    manifest's arguments and environment (ports 0 here), on one real PostgreSQL database.
    Each is ready to the readiness probe's call, runs under its pod's instance name, and
    plays a match the other replica then shows finished; SIGTERM stops each within the grace."""
    container = _container(_manifest())
    args = [a.rsplit(":", 1)[0] + ":0" if a.endswith(":8080") else a for a in container["args"]]
    clean = {k: v for k, v in os.environ.items() if not k.startswith("HEARTSD_")}
    procs: dict[str, subprocess.Popen[str]] = {}
    ports: dict[str, int] = {}
    with fresh_database(postgres_server) as db_url:
        try:
            for pod in ("heartsd-0", "heartsd-1"):
                env = {**clean, **_pod_env(container, pod, db_url), "HEARTSD_PORT": "0", "HEARTSD_LOG_LEVEL": "warning"}
                log = tmp_path / f"{pod}.log"  # a file, not a pipe nobody drains
                with log.open("w") as errors:
                    procs[pod] = proc = subprocess.Popen([sys.executable, "-m", "heartsd.cli", "serve", *args],
                                                         env=env, text=True, stdout=subprocess.PIPE, stderr=errors)
                first = proc.stdout.readline()  # type: ignore[union-attr]
                assert "listening on" in first, (pod, first, proc.poll(), log.read_text())
                ports[pod] = int(first.rsplit(":", 1)[1])
            seen = asyncio.run(_a_match_on_each_replica(ports))
            with psycopg.connect(db_url) as connection:
                instances = {row[0] for row in connection.execute("SELECT instance FROM leases")}
                hosts = dict(connection.execute("SELECT id, instance FROM matches").fetchall())
        finally:
            for proc in procs.values():
                proc.send_signal(signal.SIGTERM)
            grace = float(_pod_env(container, "", "")["HEARTSD_SHUTDOWN_GRACE_S"])
            codes = {pod: _stopped(proc, grace + 10) for pod, proc in procs.items()}
    for pod, (health, match_id, status) in seen.items():
        assert health == health_pb2.HealthCheckResponse.SERVING, pod
        assert hosts[match_id] == pod and status == game_pb2.MATCH_STATUS_FINISHED, pod
    assert instances == set(ports)
    assert codes == {pod: 0 for pod in procs}


async def _a_match_on_each_replica(ports: dict[str, int]) -> dict[str, tuple[int, str, int]]:
    """(health status, match id, its status as the other replica shows it) per replica."""
    seen: dict[str, tuple[int, str]] = {}
    metadata = (("authorization", f"Bearer {POD_SECRETS['admin-token']}"),)
    for pod, port in ports.items():
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            health = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
            request = admin_pb2.CreateMatchRequest(ruleset="standard", format=game_pb2.MatchFormat(fixed_deals=1))
            for _ in range(4):
                request.seats.add(house="random")
            created = await admin_pb2_grpc.AdminServiceStub(channel).CreateMatch(request, metadata=metadata)
            seen[pod] = (health.status, created.match_id)
    shown: dict[str, tuple[int, str, int]] = {}
    for pod, (health_status, match_id) in seen.items():
        other = next(port for p, port in ports.items() if p != pod)
        async with grpc.aio.insecure_channel(f"127.0.0.1:{other}") as channel:
            stub = spectator_pb2_grpc.SpectatorServiceStub(channel)
            for _ in range(300):
                try:
                    record = (await stub.GetMatchRecord(spectator_pb2.GetMatchRecordRequest(match_id=match_id))).record
                except grpc.aio.AioRpcError as exc:  # still running there (a loaded machine): refused, as it must be
                    assert exc.code() == grpc.StatusCode.FAILED_PRECONDITION, exc
                    await asyncio.sleep(0.1)
                    continue
                if record.result.status == game_pb2.MATCH_STATUS_FINISHED:
                    break
                await asyncio.sleep(0.1)
            shown[pod] = (health_status, match_id, record.result.status)
    return shown
