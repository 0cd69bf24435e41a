"""One command-line convention for every client (issue 16, point 4): ``heartsbot play``,
``heartsbot stdio`` (the bridge for bots in any language), ``heartsbot local|leaderboard|
matches`` and the Node bot take the same option names, read HEARTS_SERVER / HEARTS_TOKEN
/ HEARTS_NAME (a flag wins), print ``--version`` and help that shows every default, and
exit with the same codes (README, "Command-line convention"; heartsbot/exits.py). Also:
the stdio bridge names the likely cause of a bot silent at the handshake, and the
conformance kit stops as soon as the client it started exits.

Each test exercises the real programs as subprocesses, against a real daemon where one
is needed."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

from heartsbot.proto import game_pb2 as P

from ..server.harness import BOTS, run, running_daemon
from .test_leaving import connected, draining, exit_of, played
from .test_node_bot import BOT_JS, node

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "clients" / "stdio-examples"
HEARTSBOT = [sys.executable, "-m", "heartsbot.cli"]
EXIT_USAGE, EXIT_REFUSED, EXIT_UNREACHABLE, EXIT_INTERRUPTED = 2, 3, 4, 130
HOUSE3 = ["house:random", "house:random", "house:random"]
# The options every client that plays on a server takes, by these names.
SHARED = {"--server", "--token", "--name", "--rulesets", "--max-matches", "--matches", "--tls", "--ca", "--cert",
          "--key", "--version", "--help"}


def _run(argv: list[str], env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("HEARTS_")}
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                          env={**clean, "COLUMNS": "100", **(env or {})})


def _options(help_text: str) -> dict[str, str]:
    """Option invocation (``--server HOST:PORT``) -> its help text, from argparse's or the
    Node bot's help: an entry starts at a line indented by two spaces then '-'; deeper
    indented lines continue it."""
    entries: dict[str, str] = {}
    current = None
    for line in help_text.splitlines():
        if re.match(r"^  -", line) and not line.startswith("  -- "):  # not a positional "-- COMMAND"
            head, *text = re.split(r"\s{2,}", line.strip(), maxsplit=1)
            current = head
            entries[current] = " ".join(text).strip()
        elif current is not None and line.startswith("    ") and line.strip():
            entries[current] = (entries[current] + " " + line.strip()).strip()
        elif not line.strip() or not line.startswith(" "):
            current = None
    return entries


def _long_names(entries: dict[str, str]) -> set[str]:
    return {word.rstrip(",") for head in entries for word in head.split() if word.startswith("--")}


def _takes_a_value(head: str) -> bool:
    return any(len(variant.split()) > 1 for variant in head.split(", "))


def test_every_client_prints_its_version_and_help_with_every_option_and_default():
    """Today: no --version, most options without help text or a shown default, and the
    same option named --matches in one client and --matches-to-play in the other."""
    top = _run([*HEARTSBOT, "--version"])
    assert top.returncode == 0 and re.fullmatch(r"heartsbot \d+\.\d+\.\d+\n", top.stdout), top
    node_version = _run([node(), str(BOT_JS), "--version"])
    assert node_version.returncode == 0 and re.fullmatch(r"node-bot \d+\.\d+\.\d+\n", node_version.stdout)
    helps = {}
    for command in ("play", "stdio", "local", "leaderboard", "matches"):
        assert _run([*HEARTSBOT, command, "--version"]).stdout == top.stdout, command
        shown = _run([*HEARTSBOT, command, "--help"], env={"HEARTS_TOKEN": "a-secret-token-in-the-environment"})
        assert shown.returncode == 0 and "a-secret-token" not in shown.stdout, "a token never shows as a default"
        helps[command] = shown.stdout
    node_help = _run([node(), str(BOT_JS), "--help"])
    assert node_help.returncode == 0
    helps["node"] = node_help.stdout
    for client, text in helps.items():
        entries = _options(text)
        assert entries, client
        for head, explained in entries.items():
            if head.startswith("-h") or head == "--version":
                continue
            assert explained, f"{client}: {head} has no help text"
            if _takes_a_value(head):
                assert "default" in explained or "required" in explained, f"{client}: {head} shows no default"
        assert "exit codes" in text and "130" in text, f"{client}: the exit-code table is in its help"
    for client in ("play", "stdio", "node"):
        missing = SHARED - _long_names(_options(helps[client]))
        assert not missing, f"{client} lacks the shared options {missing}"
    play = " ".join(helps["play"].split())
    assert "HEARTS_SERVER; default 127.0.0.1:50051" in play and "HEARTS_TOKEN" in play and "HEARTS_NAME" in play
    assert "--matches-to-play" not in helps["play"] + helps["stdio"]


HEARTSD = [sys.executable, "-m", "heartsd.cli"]
# The daemon's client commands: the organiser's tools, the conformance kit, the health check.
HEARTSD_CLIENTS = [["admin", c] for c in ("bots", "matches", "create", "cancel", "watch")] + \
    [["tournament", c] for c in ("create", "list", "show", "watch", "pause", "resume", "cancel", "local")] + \
    [["conformance"], ["health"], ["serve"]]


def _heartsd_help(argv: list[str]) -> str:
    """``heartsd ARGV`` in this process (sixteen interpreters would cost seconds): its
    output, which argparse ends with exit 0."""
    import contextlib
    import io

    import pytest

    from heartsd import cli as heartsd_cli

    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as stopped:
        heartsd_cli.main(argv)
    assert stopped.value.code == 0, (argv, stopped.value.code)
    return out.getvalue()


def test_heartsd_client_commands_print_the_version_and_help_with_every_default(monkeypatch):
    """heartsd admin, tournament, conformance and health are clients of a daemon too, and
    `heartsd serve` is the first command a newcomer reads: every option explained, with
    its default or 'required', and the TLS options by the clients' names where they reach
    a daemon. Before, `heartsd --version` was an error and e.g. `heartsd serve
    --decision-ms`, `--host`, `heartsd conformance --tls-key`, `heartsd health --target`
    and `heartsd admin cancel --reason` had no help text at all."""
    version = _run([*HEARTSD, "--version"])  # the real program, once
    assert version.returncode == 0 and re.fullmatch(r"heartsd \d+\.\d+\.\d+\n", version.stdout), version
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setenv("HEARTSD_ADMIN_TOKEN", "a-secret-admin-token")
    for command in HEARTSD_CLIENTS:
        shown = _heartsd_help([*command, "--help"])
        assert "a-secret-admin-token" not in shown, command
        entries = _options(shown)
        assert entries, command
        for head, explained in entries.items():
            if head.startswith("-h"):
                continue
            assert explained, f"heartsd {' '.join(command)}: {head} has no help text"
            if _takes_a_value(head):
                assert "default" in explained or "required" in explained, \
                    f"heartsd {' '.join(command)}: {head} shows no default"
        if command not in (["tournament", "local"], ["conformance"], ["serve"]):  # they serve (--tls-cert)
            assert {"--tls", "--ca", "--cert", "--key"} <= _long_names(entries), command


def _closed_stdout(argv: list[str]) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` with its stdout a pipe nobody reads any more (``| head`` gone), so
    its first write fails, every time, however fast the reader would have been."""
    read, write = os.pipe()
    os.close(read)
    try:
        clean = {k: v for k, v in os.environ.items() if not k.startswith("HEARTS_")}
        return subprocess.run(argv, stdout=write, stderr=subprocess.PIPE, text=True, timeout=120, env=clean)
    finally:
        os.close(write)


def test_a_closed_stdout_ends_every_command_quietly_with_141(tmp_path):
    """`heartsd ladder leaderboard | head -1` and `heartsbot leaderboard | head -3` printed
    a BrokenPipeError traceback; `heartsd admin matches | head -2` exited 1 (rich's
    answer) with no message. Each entry point now ends quietly with 141 (128 + SIGPIPE,
    as a shell reports `cat` or `grep` cut short by `| head`)."""
    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            server = ["--server", daemon.target]
            commands = {
                "heartsd ladder leaderboard": [*HEARTSD, "ladder", "leaderboard", "--db", daemon.settings.db_path],
                "heartsd replay verify": [*HEARTSD, "replay", "verify", "--db", daemon.settings.db_path],
                "heartsd admin matches": [*HEARTSD, "admin", "matches", *server],
                "heartsd admin matches --json": [*HEARTSD, "admin", "matches", "--json", *server],
                "heartsd tournament list": [*HEARTSD, "tournament", "list", *server],
                "heartsd health": [*HEARTSD, "health", *server],
                "heartsbot leaderboard": [*HEARTSBOT, "leaderboard", *server],
                "heartsbot matches": [*HEARTSBOT, "matches", *server],
            }
            done = await asyncio.gather(*(asyncio.to_thread(_closed_stdout, argv) for argv in commands.values()))
            return dict(zip(commands, done))

    for command, done in run(scenario()).items():
        assert (done.returncode, done.stderr) == (141, ""), (command, done.returncode, done.stderr)


def test_strategy_is_required_and_never_silently_heuristic():
    """Today `heartsbot play` without --strategy plays `heuristic` under your bot's name."""
    missing = _run([*HEARTSBOT, "play", "--server", "127.0.0.1:1", "--token", "t" * 10, "--name", "x"])
    assert missing.returncode == EXIT_USAGE and "--strategy" in missing.stderr, missing
    unknown = _run([*HEARTSBOT, "play", "--server", "127.0.0.1:1", "--token", "t" * 10, "--name", "x",
                    "--strategy", "genius"])
    assert unknown.returncode == EXIT_USAGE and "unknown strategy 'genius'" in unknown.stderr, unknown
    no_token = _run([*HEARTSBOT, "play", "--strategy", "random", "--name", "x"])
    assert no_token.returncode == EXIT_USAGE and "--token (or HEARTS_TOKEN) is required" in no_token.stderr


def test_refused_and_unreachable_exit_the_same_way_in_every_client(tmp_path):
    """Today a refused token exits 2 from heartsbot and 1 from the Node bot, and the Node
    bot retries a server it never reached forever. The environment names the right
    server, token and name; the one flag given wins over it."""
    bridge = [*HEARTSBOT, "stdio", "--", "sh", str(EXAMPLES / "first_legal.sh")]
    clients = {"play": [*HEARTSBOT, "play", "--strategy", "random"], "node": [node(), str(BOT_JS)],
               "stdio": bridge}

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            env = {"HEARTS_SERVER": daemon.target, "HEARTS_TOKEN": BOTS["alice"], "HEARTS_NAME": "alice"}
            runs = {}
            for client, argv in clients.items():
                # stdio's options go before its "--"
                def with_flags(*flags: str, argv: list[str] = argv) -> list[str]:
                    cut = argv.index("--") if "--" in argv else len(argv)
                    return [*argv[:cut], *flags, *argv[cut:]]

                runs[(client, "token")] = with_flags("--token", "wrong-token-0123456789")
                runs[(client, "name")] = with_flags("--name", "bob")
                runs[(client, "server")] = with_flags("--server", "127.0.0.1:1")
            runs[("matches", "token")] = [*HEARTSBOT, "matches", "--page-token", "not-a-page-token"]
            runs[("leaderboard", "server")] = [*HEARTSBOT, "leaderboard", "--server", "127.0.0.1:1"]
            done = await asyncio.gather(*(asyncio.to_thread(_run, argv, env) for argv in runs.values()))
            return dict(zip(runs, done))

    for (client, wrong), done in run(scenario()).items():
        if wrong == "server":
            assert done.returncode == EXIT_UNREACHABLE, (client, done.stderr)
            assert "could not connect to 127.0.0.1:1" in done.stderr, (client, done.stderr)
        else:
            assert done.returncode == EXIT_REFUSED, (client, wrong, done.stderr)
            status = {"token": "UNAUTHENTICATED", "name": "PERMISSION_DENIED"}[wrong]
            assert status in done.stderr or client == "matches", (client, done.stderr)


def test_an_unknown_ruleset_is_a_usage_error_in_every_client(tmp_path):
    """Before: `--rulesets bogus` exited 2 (usage, as the convention's table says) from
    heartsbot but 3 from the Node bot, which leaves the presets to the server and took its
    INVALID_ARGUMENT for a refusal. A typo in an option is a usage error in every client."""
    clients = {"play": [*HEARTSBOT, "play", "--strategy", "random", "--rulesets", "bogus"],
               "node": [node(), str(BOT_JS), "--rulesets", "bogus"],
               "stdio": [*HEARTSBOT, "stdio", "--rulesets", "bogus", "--", "sh", str(EXAMPLES / "first_legal.sh")]}

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            env = {"HEARTS_SERVER": daemon.target, "HEARTS_TOKEN": BOTS["alice"], "HEARTS_NAME": "alice"}
            done = await asyncio.gather(*(asyncio.to_thread(_run, argv, env) for argv in clients.values()))
            return dict(zip(clients, done))

    for client, done in run(scenario()).items():
        assert done.returncode == EXIT_USAGE, (client, done.returncode, done.stderr)
        assert "bogus" in done.stderr, (client, done.stderr)


def test_hearts_environment_and_matches_work_in_every_client(tmp_path):
    """HEARTS_SERVER / HEARTS_TOKEN / HEARTS_NAME alone, and --matches 1: each client plays
    one match and exits 0. Today heartsbot ignores the environment (--server, --token and
    --name are required) and the Node bot has no --matches (its --matches-to-play still
    works, saying it is deprecated)."""
    awk = EXAMPLES / "lowest.awk"
    commands = {
        "play": [*HEARTSBOT, "play", "--strategy", "heuristic", "--matches", "1"],
        "stdio": [*HEARTSBOT, "stdio", "--matches", "1", "--", "mawk", "-W", "interactive", "-f", str(awk)],
        "node": [node(), str(BOT_JS), "--matches", "1"],
        "node, old name": [node(), str(BOT_JS), "--matches-to-play", "1"],
    }

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            env = {"HEARTS_SERVER": daemon.target, "HEARTS_TOKEN": BOTS["alice"], "HEARTS_NAME": "alice"}
            clean = {k: v for k, v in os.environ.items() if not k.startswith("HEARTS_")}
            out = {}
            for name, argv in commands.items():
                proc = await asyncio.create_subprocess_exec(*argv, env={**clean, **env},
                                                            stdout=asyncio.subprocess.PIPE,
                                                            stderr=asyncio.subprocess.PIPE)
                for _ in range(1200):
                    if daemon.arena.sessions.get("alice") is not None or proc.returncode is not None:
                        break
                    await asyncio.sleep(0.05)
                match_id = await daemon.create_match(["alice", *HOUSE3], deals=1)
                await daemon.wait_finished(match_id)
                _, err = await asyncio.wait_for(proc.communicate(), 60)
                out[name] = (proc.returncode, err.decode(), daemon.stored(match_id).status)
                while daemon.arena.sessions.get("alice") is not None:
                    await asyncio.sleep(0.02)
            board = await asyncio.to_thread(_run, [*HEARTSBOT, "leaderboard"], env)
            return out, board, daemon.target

    out, board, target = run(scenario())
    for name, (code, err, status) in out.items():
        assert code == 0 and status == "finished", (name, code, err)
    assert "--matches-to-play is deprecated: use --matches" in out["node, old name"][1]
    assert "deprecated" not in out["node"][1]
    assert board.returncode == 0 and f"on {target}" in board.stdout, board  # HEARTS_SERVER, no --server


def test_a_second_ctrl_c_exits_130_in_every_client(tmp_path):
    """The table's 130 holds for the Node bot and the stdio bridge as for heartsbot play
    (tests/client/test_leaving.py): the first Ctrl-C drains, the second leaves at once."""
    commands = {"node": [node(), str(BOT_JS)],
                "stdio": [*HEARTSBOT, "stdio", "--", "sh", str(EXAMPLES / "first_legal.sh")]}

    async def scenario():
        async with running_daemon(tmp_path, house_delay_ms=40) as daemon:
            out = {}
            for (name, argv), bot in zip(commands.items(), ("bob", "carol")):
                env = {"HEARTS_SERVER": daemon.target, "HEARTS_TOKEN": BOTS[bot], "HEARTS_NAME": bot}
                proc = await asyncio.create_subprocess_exec(*argv, env={**os.environ, **env},
                                                            stdout=asyncio.subprocess.PIPE,
                                                            stderr=asyncio.subprocess.PIPE)
                await connected(daemon, proc, bot)
                match_id = await daemon.create_match([bot, *HOUSE3], deals=3)
                await played(daemon, match_id, 2)
                proc.send_signal(signal.SIGINT)
                await draining(daemon, bot)
                proc.send_signal(signal.SIGINT)
                out[name] = await exit_of(proc)
                if match_id in daemon.arena.runners:
                    daemon.arena.runners[match_id].stop(P.MATCH_STATUS_CANCELLED, "test over")
            return out

    for name, (code, err) in run(scenario()).items():
        assert code == EXIT_INTERRUPTED and "abandoning 1 match" in err, (name, code, err)


def test_the_stdio_bridge_names_a_buffering_bot_at_the_handshake(tmp_path):
    """Today a stdio bot in plain mawk (which reads a pipe in blocks without -W
    interactive) or one whose output a pipe buffers hangs at the handshake with no hint.
    The bridge now says, while it still waits (5 s into its default 30 s), that the bot
    is running but silent, the likely cause and the fix for its interpreter; Ctrl-C then
    stops it (130), and a bot still silent at the timeout is named again (exit 1)."""
    buffered = tmp_path / "buffered.py"
    buffered.write_text(  # stdout block-buffered, as on any pipe (whatever PYTHONUNBUFFERED says)
        "import os, sys, time\nsys.stdin.readline()\nout = os.fdopen(1, 'w', buffering=8192)\n"
        "out.write('ok\\n')\ntime.sleep(60)\n")
    bots = {"mawk": ["mawk", "-f", str(EXAMPLES / "lowest.awk")], "python": [sys.executable, str(buffered)]}
    fixes = {"mawk": ["mawk -W interactive", "fflush()"], "python": ["-u", "flush=True"]}
    bridge = [*HEARTSBOT, "stdio", "--server", "127.0.0.1:1", "--token", "t" * 10, "--name", "x"]
    hint = re.compile(r"has not answered 'hearts 1' with 'ok' after (\d+) s and is still running: (.*)")

    async def while_waiting(bot: list[str]) -> tuple[str, int]:
        proc = await asyncio.create_subprocess_exec(*bridge, "--", *bot, stderr=asyncio.subprocess.PIPE)
        assert proc.stderr is not None
        seen = ""
        try:
            while not hint.search(seen):
                line = await asyncio.wait_for(proc.stderr.readline(), 60)
                assert line, f"the bridge ended without a hint: {seen}"
                seen += line.decode()
        finally:
            proc.send_signal(signal.SIGINT)
            seen += (await asyncio.wait_for(proc.communicate(), 30))[1].decode()
        return seen, proc.returncode

    async def scenario():
        return await asyncio.gather(
            asyncio.gather(*(while_waiting(bot) for bot in bots.values())),
            asyncio.gather(*(asyncio.to_thread(_run, [*bridge, "--handshake-timeout", "4", "--", *bot])
                             for bot in bots.values())))

    waiting, timed_out = run(scenario())
    for name, (err, code), done in zip(bots, waiting, timed_out):
        found = hint.search(err)
        assert found and found.group(1) == "5", (name, err)
        assert "buffer" in found.group(2) and all(fix in found.group(2) for fix in fixes[name]), (name, err)
        assert code == EXIT_INTERRUPTED, (name, code, err)
        assert done.returncode == 1, (name, done.stderr)
        assert "after 2 s and is still running" in done.stderr, (name, done.stderr)
        last = next(line for line in done.stderr.splitlines() if "within 4 s" in line)
        assert "did not answer 'hearts 1' with 'ok' within 4 s although it is running: " in last, last
        assert all(fix in last for fix in fixes[name]), last


def test_the_conformance_kit_stops_as_soon_as_its_client_exits(tmp_path):
    """Today it waits its whole --timeout after the client died (60 s by default; here 600,
    so waiting it would overrun the subprocess limit). Two clients: one that exits at once
    with status 3, one (the stdio bridge) whose bot gives up after its first request."""
    quitter = tmp_path / "quitter.sh"
    quitter.write_text('read -r greeting\necho ok\nread -r request\necho "i give up" >&2\nexit 3\n')
    kit = [sys.executable, "-m", "heartsd.cli", "conformance", "--port", "0", "--timeout", "600", "--json", "--"]
    clients = {
        "exits at once": [sys.executable, "-c", "import sys; sys.exit(3)"],
        "exits mid-check": [*HEARTSBOT, "stdio", "--server", "{target}", "--token", "{token}", "--name", "{name}",
                            "--", "sh", str(quitter)],
    }

    async def scenario():
        return await asyncio.gather(*(asyncio.to_thread(_run, [*kit, *argv], None, 300) for argv in clients.values()))

    at_once, mid_check = run(scenario())
    for done, status in ((at_once, 3), (mid_check, 1)):
        assert done.returncode == 1, done.stdout + done.stderr
        assert f"the client exited (status {status}) before the checks were done" in done.stderr, done.stderr
    import json

    first = json.loads(at_once.stdout.strip().splitlines()[-1])
    assert not first["passed"] and all("client exited with status 3" in b["detail"] or b["behaviour"] == "hello"
                                       for b in first["behaviours"]), first
    second = json.loads(mid_check.stdout.strip().splitlines()[-1])
    hello = next(b for b in second["behaviours"] if b["behaviour"] == "hello")
    assert hello["passed"], second
    assert any("not run: the client exited with status 1 first" in b["detail"] for b in second["behaviours"]), second


def test_the_documented_exit_codes_are_the_ones_every_client_uses():
    """One table (README, clients/node/README.md, docs/stdio.md) for the codes heartsbot
    (heartsbot/exits.py), heartsd admin and the Node bot (its EXIT) really use."""
    from heartsbot import exits
    from heartsd import admin_cli

    def table(path: Path, heading: str) -> dict[int, str]:
        text = path.read_text()
        start = text.index(heading)
        end = text.find("\n#", start + len(heading))  # the next heading, or the end
        section = text[start:end if end != -1 else None]
        found = {}
        for line in section.splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if line.startswith("|") and len(cells) == 2 and cells[0].isdigit():
                found[int(cells[0])] = cells[1]
        return found

    readme = table(ROOT / "README.md", "### Command-line convention")
    codes = {exits.EXIT_OK: "done", exits.EXIT_FAILED: "the bot failed", exits.EXIT_USAGE: "usage",
             exits.EXIT_REFUSED: "refused by the server", exits.EXIT_UNREACHABLE: "could not be reached",
             exits.EXIT_INTERRUPTED: "interrupted"}
    # heartsbot and heartsd (not the Node bot) also end quietly when their stdout's reader goes
    ours = {**codes, exits.EXIT_CLOSED_PIPE: "reader went away"}
    assert set(readme) == set(ours), readme
    assert all(words in readme[code] for code, words in ours.items()), readme
    source = BOT_JS.read_text()
    node_exits = dict(re.findall(r"(\w+): (\d+)", re.search(r"const EXIT = \{(.*?)\};", source).group(1)))
    assert {int(v) for v in node_exits.values()} == set(codes) - {exits.EXIT_FAILED}
    assert int(node_exits["refused"]) == exits.EXIT_REFUSED and int(node_exits["unreachable"]) == 4
    assert int(node_exits["usage"]) == exits.EXIT_USAGE and int(node_exits["abandoned"]) == 130
    node_readme = table(ROOT / "clients" / "node" / "README.md", "Exit codes (the same in every client)")
    assert set(node_readme) == {int(v) for v in node_exits.values()}, node_readme
    stdio = table(ROOT / "docs" / "stdio.md", "## Exit status")
    assert set(stdio) == set(codes), stdio
    assert (admin_cli.EXIT_REFUSED, admin_cli.EXIT_USAGE, admin_cli.EXIT_UNREACHABLE) == (3, 2, 4)


def test_the_readmes_ladder_same_owner_is_a_flag_of_heartsd_serve(monkeypatch):
    """The README promised `heartsd serve --ladder-same-owner`, which was not a flag
    (argparse: unrecognized arguments). It is one now, in the help, and it reaches the
    daemon's settings (the serve stops right after they are read)."""
    from heartsd import cli as heartsd_cli
    from heartsd.config import ConfigError, Settings

    real_load = Settings.load
    loaded: list[Settings] = []

    def load_then_stop(*args, **kwargs):
        loaded.append(real_load(*args, **kwargs))
        raise ConfigError("stopped by the test once the settings are read")

    monkeypatch.setattr(Settings, "load", load_then_stop)
    assert heartsd_cli.main(["serve", "--port", "0", "--ladder", "--ladder-same-owner"]) == 2
    # the last load is the serve's (the first, without flags, reads grpc_experiments: cli._grpc_experiments_first)
    assert loaded and loaded[-1].ladder_same_owner is True
    loaded.clear()
    assert heartsd_cli.main(["serve", "--port", "0", "--ladder"]) == 2
    assert loaded and loaded[-1].ladder_same_owner is False
    shown = _run([*HEARTSD, "serve", "--help"])
    assert "--ladder-same-owner" in shown.stdout
    readme = (ROOT / "README.md").read_text()
    assert "--ladder-same-owner" in readme


def test_a_server_address_gets_a_port_in_range_or_a_usage_error_in_every_client():
    """Before (an operator's attack pass): gRPC took --server 127.0.0.1:99999 as port
    34463, a bare host as port 443, and ::1:50051 as an unresolvable name; now each is a
    usage error (exit 2) that says what is wrong, from a flag or from HEARTS_SERVER."""
    for server, why in (("127.0.0.1:99999", "port 1-65535"), ("127.0.0.1", "no port"),
                        ("::1:50051", "in brackets"), ("host:0", "port 1-65535")):
        for command in ([*HEARTSD, "health", "--server", server], [*HEARTSD, "admin", "bots", "--server", server],
                        [*HEARTSD, "tournament", "list", "--server", server]):
            done = subprocess.run(command, capture_output=True, text=True, timeout=60)
            assert done.returncode == 2 and why in done.stderr, (command, done.stderr)
        env = {**os.environ, "HEARTS_SERVER": server}
        done = subprocess.run([*HEARTSBOT, "play", "--token", "t-12345678", "--name", "n", "--strategy", "random"],
                              capture_output=True, text=True, timeout=60, env=env)
        assert done.returncode == 2 and "HEARTS_SERVER" in done.stderr and why in done.stderr, done.stderr


def test_where_a_command_writes_is_checked_before_it_works(tmp_path):
    """Before (an operator's attack pass): `hearts-engine play --record` into a missing
    folder, and `heartsd tournament local --csv` or `--db` there, failed with a traceback
    after the match or the whole tournament (whose results, in the default temporary
    store, were lost). Now each is a usage error (exit 2) naming the option, at once."""
    missing = tmp_path / "nowhere"
    for command, option in (
        ([sys.executable, "-m", "hearts_engine.cli", "play", "--record", str(missing / "m.json")], "--record"),
        ([*HEARTSD, "tournament", "local", "--bots", "random", "random", "random", "random", "--csv",
          str(missing / "x.csv")], "--csv"),
        ([*HEARTSD, "tournament", "local", "--bots", "random", "random", "random", "random", "--db",
          str(missing / "t.db")], "--db"),
        # a folder named as the file (an organiser's pass: a traceback after the tournament, exit 1)
        ([*HEARTSD, "tournament", "local", "--bots", "random", "random", "random", "random", "--csv",
          str(tmp_path)], "--csv"),
        ([sys.executable, "-m", "hearts_engine.cli", "play", "--record", str(tmp_path)], "--record"),
    ):
        done = subprocess.run(command, capture_output=True, text=True, timeout=60)
        assert done.returncode == 2 and option in done.stderr, (command, done.stderr)
        assert "Traceback" not in done.stderr and not done.stdout.strip(), done  # nothing was played


def test_a_huge_decision_time_plays_instead_of_refusing_an_option_nobody_gave():
    """`heartsbot local --decision-ms 300000000` (~3.5 days: "no clock") was refused with
    "bank_ms: at most 2147483647", an option the command does not even have: its bank,
    ten decisions, went past the wire's int32. The bank now stops there."""
    done = subprocess.run([*HEARTSBOT, "local", "--decision-ms", "300000000", "--deals", "1",
                           "--strategies", "random", "random", "random", "random"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "bank_ms" not in done.stderr


def test_counts_and_seeds_are_usage_errors_naming_the_option_and_its_range():
    """Before (an operator's attack pass): `heartsbot local --matches 0` said "at least 1"
    and `--matches -2` "at least 0"; a negative or too large --seed was protobuf's "Value
    out of range: -5" (or a tournament run first), naming no option."""
    for command, option, why in (
        ([*HEARTSBOT, "local", "--matches", "0"], "--matches", "at least 1"),
        ([*HEARTSBOT, "local", "--matches", "-2"], "--matches", "at least 1"),
        # a traceback (the server's INVALID_ARGUMENT) before, for both
        ([*HEARTSBOT, "local", "--deals", "-1"], "--deals", "at least 0"),
        ([*HEARTSBOT, "local", "--deals", "5000"], "--deals", "at most 1000"),
        ([*HEARTSBOT, "local", "--decision-ms", "0"], "--decision-ms", "at least 1"),
        ([*HEARTSBOT, "local", "--seed", "-1"], "--seed", "0 to 18446744073709551615"),
        ([*HEARTSBOT, "local", "--seed", str(2**64)], "--seed", "0 to 18446744073709551615"),
        ([*HEARTSD, "admin", "create", "--seat", "house:random", "--seed", "-5"], "--seed", "0 to 18446744073709551615"),
        ([*HEARTSD, "tournament", "local", "--bots", "random", "random", "random", "random", "--seed", "-5"], "--seed",
         "0 to 18446744073709551615"),
        ([*HEARTSBOT, "play", "--token", "t-12345678", "--name", "n", "--strategy", "random", "--max-matches", "0"],
         "--max-matches", "at least 1"),
        # "Value out of range: 99999999999" (or 999999999000, in ms) before, naming no option
        ([*HEARTSD, "admin", "create", "--seat", "house:random", "--deals", "99999999999"], "--deals",
         "at most 2147483647"),
        ([*HEARTSD, "admin", "create", "--seat", "house:random", "--wait", "999999999"], "--wait",
         "0 to 2147483 seconds"),
        ([*HEARTSD, "tournament", "create", "--bots", "a", "b", "c", "d", "--decision-ms", "99999999999"],
         "--decision-ms", "at most 2147483647"),
        # an organiser's pass: both exports asked for, JSON alone was printed, and nothing said so
        ([*HEARTSD, "tournament", "show", "t-1", "--json", "--csv"], "--csv", "not allowed with argument --json"),
    ):
        done = subprocess.run(command, capture_output=True, text=True, timeout=60)
        assert done.returncode == 2 and option in done.stderr and why in done.stderr, (command, done.stderr)
