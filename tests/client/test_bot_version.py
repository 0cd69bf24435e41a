"""The version a Python bot declares in hello, which a tournament freezes.

Before: ``heartsbot play`` always sent "heartsbot", so a tournament's rule "a bot that
comes back as another version is not seated" could not tell an author's changed code
(a newcomer walkthrough). Now it is the strategy's ``version``, or a digest of the file
that defines it, or ``--bot-version``.
"""

from __future__ import annotations

import asyncio
import hashlib
import subprocess
import sys
import textwrap

from heartsbot.loading import load_strategy, version_of
from heartsbot.proto import admin_pb2, admin_pb2_grpc
from tests.server.harness import ADMIN, BOTS, auth, run, running_daemon

SOURCE = textwrap.dedent("""
    from heartsbot.strategies import Strategy

    class Mine(Strategy):
        def choose_pass(self, view):
            return list(view.legal)[:view.pass_count]

        def choose_play(self, view):
            return view.legal[0]
""")


def test_a_strategy_file_declares_a_digest_of_its_source_and_a_change_is_a_new_version(tmp_path):
    path = tmp_path / "mine.py"
    path.write_text(SOURCE)
    first = version_of(load_strategy(str(path)))
    assert first == "src-" + hashlib.sha256(SOURCE.encode()).hexdigest()[:12]
    path.write_text(SOURCE + "\n# a change\n")
    assert version_of(load_strategy(str(path))) != first
    path.write_text(SOURCE + "    version = 'v7'\n")
    assert version_of(load_strategy(str(path))) == "v7"
    built_in = version_of(load_strategy("random"))
    assert built_in.startswith("src-") and len(built_in) == 16


def test_heartsbot_play_sends_the_version_and_bot_version_overrides_it(tmp_path):
    path = tmp_path / "mine.py"
    path.write_text(SOURCE)

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            seen = {}
            for label, extra in (("default", []), ("flag", ["--bot-version", "2026.12-rc1"])):
                proc = subprocess.Popen(
                    [sys.executable, "-m", "heartsbot.cli", "play", "--server", daemon.target, "--token",
                     BOTS["alice"], "--name", "alice", "--strategy", str(path), *extra],
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                try:
                    async with daemon.channel() as channel:
                        stub = admin_pb2_grpc.AdminServiceStub(channel)
                        for _ in range(200):
                            bots = (await stub.ListBots(admin_pb2.ListBotsRequest(), metadata=auth(ADMIN))).bots
                            alice = next((b for b in bots if b.name == "alice" and b.connected), None)
                            if alice is not None:
                                seen[label] = alice.version
                                break
                            await asyncio.sleep(0.05)
                finally:
                    proc.terminate()
                    await asyncio.to_thread(proc.wait, 20)  # the daemon runs on this loop
                for _ in range(200):  # gone before the next one connects
                    if daemon.arena.sessions.get("alice") is None:
                        break
                    await asyncio.sleep(0.05)
            return seen

    seen = run(scenario())
    assert seen == {"default": "src-" + hashlib.sha256(SOURCE.encode()).hexdigest()[:12], "flag": "2026.12-rc1"}


def test_strategies_made_with_different_parameters_declare_different_versions():
    """An organiser's pass: graded-0, graded-36 and graded-100r all declared one version (one
    source file), so a bot killed as graded-0 and restarted as graded-100r was seated as the
    version its tournament froze. Strategies named by their class keep the file's digest."""
    from heartsbot.strategies import make_strategy

    graded = {version_of(make_strategy(n)) for n in ("graded-0", "graded-36", "graded-100r")}
    assert len(graded) == 3, graded
    assert version_of(make_strategy("random")).count("-") == 1  # src-<digest>, as before
