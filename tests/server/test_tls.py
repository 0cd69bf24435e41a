"""TLS and mutual TLS, end to end with a throwaway CA made here: full matches by the Python
client, the Node bot and the stdio bridge; health and the conformance kit; refusals."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from heartsbot.client import BotClient
from heartsbot.proto import game_pb2
from heartsbot.strategies import make_strategy
from heartsbot.tls import Tls
from tests.tls import Pki, make_pki

from ..client.test_node_bot import BOT_JS, node
from .harness import ADMIN, BOTS, run, running_daemon

P = game_pb2
ROOT = Path(__file__).resolve().parents[2]
HEARTSD = [sys.executable, "-m", "heartsd.cli"]
HEARTSBOT = [sys.executable, "-m", "heartsbot.cli"]
SH_BOT = ["sh", str(ROOT / "clients" / "stdio-examples" / "first_legal.sh")]
HOUSE3 = ["house:random"] * 3


@pytest.fixture(scope="module")
def pki(tmp_path_factory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


def server_tls(pki: Pki, mutual: bool) -> dict[str, str]:
    settings = dict(tls_cert=str(pki.server_cert), tls_key=str(pki.server_key))
    if mutual:
        settings["tls_client_ca"] = str(pki.ca)
    return settings


def client_options(pki: Pki, mutual: bool) -> list[str]:
    options = ["--tls", "--ca", str(pki.ca)]
    return options + (["--cert", str(pki.client_cert), "--key", str(pki.client_key)] if mutual else [])


def tls_of(pki: Pki, mutual: bool) -> Tls:
    return Tls(ca=pki.ca.read_bytes(), cert=pki.client_cert.read_bytes() if mutual else None,
               key=pki.client_key.read_bytes() if mutual else None)


def full_match(tmp_path, pki: Pki, mutual: bool, name: str, command: list[str], tail: list[str] = ()):
    """Run ``command`` + its TLS options + ``tail`` (a client) against a TLS daemon; one whole game."""

    async def scenario():
        async with running_daemon(tmp_path, client_tls=tls_of(pki, mutual), **server_tls(pki, mutual)) as daemon:
            proc = await asyncio.create_subprocess_exec(
                *[part.format(target=daemon.target, token=BOTS[name], name=name) for part in command],
                *client_options(pki, mutual), *tail, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd=ROOT)
            for _ in range(800):
                if daemon.arena.sessions.get(name) is not None or proc.returncode is not None:
                    break
                await asyncio.sleep(0.025)
            assert daemon.arena.sessions.get(name) is not None, (await proc.communicate())[1].decode()
            match_id = await daemon.create_match([name, *HOUSE3], deals=0, seed=12)  # a game to the target
            await daemon.wait_finished(match_id, 120)
            if proc.returncode is None and "play" in command:
                proc.send_signal(signal.SIGINT)  # heartsbot play plays until Ctrl-C
            _, err = await asyncio.wait_for(proc.communicate(), 60)
            return proc.returncode, err.decode(), daemon.stored(match_id)

    code, err, stored = run(scenario())
    assert code == 0, err
    assert stored.status == "finished" and len(stored.record.deal_scores) >= 2, "a whole game"
    assert {d.provenance for d in stored.record.decisions if d.seat == 0} == {P.PROVENANCE_BOT}


CLIENTS = {
    "python": [*HEARTSBOT, "play", "--server", "{target}", "--token", "{token}", "--name", "{name}",
               "--strategy", "random"],
    "stdio": [*HEARTSBOT, "stdio", "--server", "{target}", "--token", "{token}", "--name", "{name}",
              "--matches", "1"],
}


@pytest.mark.parametrize("mutual", [False, True], ids=["tls", "mtls"])
@pytest.mark.parametrize("client", ["python", "node", "stdio"])
def test_a_full_match_over_tls(tmp_path, pki, client, mutual):
    if client == "node":
        command = [node(), str(BOT_JS), "--server", "{target}", "--token", "{token}", "--name", "{name}",
                   "--matches", "1"]
    elif client == "stdio":
        full_match(tmp_path, pki, mutual, "carol", CLIENTS["stdio"], ["--", *SH_BOT])
        return
    else:
        command = CLIENTS["python"]
    full_match(tmp_path, pki, mutual, "alice", command)


def health(target: str, *options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*HEARTSD, "health", "--target", target, "--timeout", "5", *options],
                          capture_output=True, text=True, timeout=60)


def test_health_over_tls_and_clients_without_the_ca_or_certificate_are_refused(tmp_path, pki):
    async def scenario(mutual: bool):
        async with running_daemon(tmp_path, client_tls=tls_of(pki, mutual), **server_tls(pki, mutual)) as daemon:
            target = daemon.target
            results = {
                "ca": await asyncio.to_thread(health, target, "--ca", str(pki.ca)),
                "named": await asyncio.to_thread(health, target, "--ca", str(pki.ca), "--tls-name", "localhost"),
                "plain": await asyncio.to_thread(health, target),
                "system CAs": await asyncio.to_thread(health, target, "--tls"),
                "another CA": await asyncio.to_thread(health, target, "--ca", str(pki.other_ca)),
            }
            if mutual:
                results["ca and certificate"] = await asyncio.to_thread(
                    health, target, "--ca", str(pki.ca), "--cert", str(pki.client_cert), "--key", str(pki.client_key))
                results["a stranger's certificate"] = await asyncio.to_thread(
                    health, target, "--ca", str(pki.ca), "--cert", str(pki.stranger_cert),
                    "--key", str(pki.stranger_key))
            # A bot client without the CA never gets in.
            bot = BotClient(target, BOTS["bob"], make_strategy("random"), "bob", tls=Tls(ca=pki.other_ca.read_bytes()),
                            backoff_s=(0.05, 0.1))
            task = asyncio.get_running_loop().create_task(bot.run())
            await asyncio.sleep(1.5)
            connected = bot.connected.is_set() or daemon.arena.sessions.get("bob") is not None
            bot.stop()
            await asyncio.gather(task, return_exceptions=True)
            return results, connected, bot.stats.reconnects

    results, connected, retries = run(scenario(False))
    assert results["ca"].returncode == 0 and "SERVING" in results["ca"].stdout, results["ca"].stderr
    assert results["named"].returncode == 0, "127.0.0.1, checked against the certificate's name localhost"
    for refused in ("plain", "system CAs", "another CA"):
        assert results[refused].returncode == 1 and "UNAVAILABLE" in results[refused].stderr, refused
    assert not connected and retries >= 1
    results, connected, _ = run(scenario(True))
    assert results["ca and certificate"].returncode == 0
    for refused in ("ca", "plain", "another CA", "a stranger's certificate"):
        assert results[refused].returncode == 1 and "UNAVAILABLE" in results[refused].stderr, refused
    assert not connected


def test_the_conformance_kit_over_tls_with_the_python_client(tmp_path, pki):
    client = [*HEARTSBOT, "play", "--strategy", "heuristic", "--server", "{target}", "--token", "{token}",
              "--name", "{name}", "--tls", "--ca", str(pki.ca), "--cert", str(pki.client_cert),
              "--key", str(pki.client_key)]
    kit = subprocess.run([*HEARTSD, "conformance", "--port", "0", "--timeout", "30", "--json",
                          "--tls-cert", str(pki.server_cert), "--tls-key", str(pki.server_key),
                          "--tls-client-ca", str(pki.ca), "--", *client],
                         capture_output=True, text=True, timeout=180)
    assert kit.returncode == 0, kit.stdout + kit.stderr
    assert json.loads(kit.stdout.strip().splitlines()[-1])["passed"]


def test_tls_settings_are_checked_at_start(tmp_path, pki):
    for args, message in ((["--tls-cert", str(pki.server_cert)], "tls_cert and tls_key: give both"),
                          (["--tls-client-ca", str(pki.ca)], "tls_client_ca: mutual TLS needs"),
                          (["--tls-cert", str(tmp_path / "nope.pem"), "--tls-key", str(pki.server_key)],
                           "tls_cert: cannot read"),
                          (["--tls-cert", str(pki.server_key.parent / "missing"), "--tls-key", str(pki.server_key)],
                           "tls_cert: cannot read"),
                          # Before (an operator's pass): "cannot listen on 127.0.0.1:0; check --host and --port".
                          (["--tls-cert", str(pki.server_cert), "--tls-key", str(pki.client_key)],
                           "is not the private key of the certificate"),
                          (["--tls-cert", str(pki.server_key), "--tls-key", str(pki.server_cert)],
                           "is not the private key of the certificate")):
        out = subprocess.run([*HEARTSD, "serve", "--port", "0", "--db", str(tmp_path / "d.db"), *args],
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 2 and message in out.stderr, out.stderr
    bad = subprocess.run([*HEARTSBOT, "play", "--server", "127.0.0.1:1", "--token", "t", "--name", "n",
                          "--strategy", "random", "--cert", str(pki.client_cert)], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "--cert and --key go together" in bad.stderr


def test_listening_beyond_loopback_needs_an_admin_token(tmp_path):
    out = subprocess.run([*HEARTSD, "serve", "--host", "0.0.0.0", "--port", "0", "--db", str(tmp_path / "d.db")],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "admin_token" in out.stderr and "HEARTSD_ADMIN_TOKEN" in out.stderr, out.stderr
    assert not (tmp_path / "d.db").exists()


@pytest.mark.parametrize("mutual", [False, True], ids=["tls", "mtls"])
def test_heartsbot_local_over_tls(tmp_path, pki, mutual):
    options = ["--tls-cert", str(pki.server_cert), "--tls-key", str(pki.server_key), "--ca", str(pki.ca)]
    if mutual:
        options += ["--tls-client-ca", str(pki.ca), "--cert", str(pki.client_cert), "--key", str(pki.client_key)]
    out = subprocess.run([*HEARTSBOT, "local", "--deals", "1", "--strategies", "random", "random", "random", "random",
                          *options], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "standard, 4 players" in out.stdout


def test_heartsd_admin_tournament_and_heartsbot_leaderboard_over_mutual_tls(tmp_path, pki):
    """The organiser's and the author's read-only commands take the TLS options every
    client takes (--tls, --ca, --cert, --key): before, heartsd admin and heartsd
    tournament opened only plain channels, so a daemon serving TLS could not be run from
    them. Without the options they fail as unreachable (4), a lone --cert is a usage
    error (2)."""
    from heartsbot import cli as heartsbot_cli
    from heartsd import cli as heartsd_cli

    tls_options = client_options(pki, True)

    async def scenario():
        async with running_daemon(tmp_path, client_tls=tls_of(pki, True), **server_tls(pki, True)) as daemon:
            base = ["--server", daemon.target]
            admin = ["--admin-token", ADMIN, "--timeout", "5"]
            runs = {
                "admin bots": ["admin", "bots", *base, *admin, *tls_options],
                "admin matches": ["admin", "matches", *base, *admin, *tls_options],
                "tournament list": ["tournament", "list", *base, *admin, *tls_options],
                "admin bots, plain": ["admin", "bots", *base, *admin],
                "tournament list, plain": ["tournament", "list", *base, *admin],
                "admin bots, a lone --cert": ["admin", "bots", *base, *admin, "--cert", str(pki.client_cert)],
            }
            done = {name: await asyncio.to_thread(heartsd_cli.main, argv) for name, argv in runs.items()}
            done["leaderboard"] = await asyncio.to_thread(heartsbot_cli.main, ["leaderboard", *base, *tls_options])
            done["leaderboard, plain"] = await asyncio.to_thread(
                heartsbot_cli.main, ["leaderboard", *base, "--timeout", "5"])
            return done

    done = run(scenario())
    for name in ("admin bots", "admin matches", "tournament list", "leaderboard"):
        assert done[name] == 0, (name, done)
    for name in ("admin bots, plain", "tournament list, plain", "leaderboard, plain"):
        assert done[name] == 4, (name, done)
    assert done["admin bots, a lone --cert"] == 2, done
