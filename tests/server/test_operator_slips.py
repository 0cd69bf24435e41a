"""An operator's slips with heartsd's commands, each through the real CLI on a real daemon
or a real SQLite store: the web front named on the gRPC port, a backup killed half-way or
run twice at once, a typo in a tournament's ruleset, a --csv that names an existing file,
a command given twice while a thousand newer tournaments hide the first."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from heartsd.store import Store

from .harness import ADMIN, Bot, run, running_daemon
from .test_operations import HEARTSD, _serving, free_port, heartsd

RULESETS = "known: classic, hartenjagen, hartenjagen-quick, omnibus, standard"


# -- heartsd serve ----------------------------------------------------------------------------


@pytest.mark.parametrize("web_host", ["127.0.0.1", "localhost", "0.0.0.0"])
def test_the_web_front_on_the_grpc_port_is_said_plainly_before_anything_binds(tmp_path, web_host):
    """An operator's pass: `heartsd serve --port 8080 --web 127.0.0.1:8080` bound gRPC to
    8080, then refused the web front's port as "in use (another heartsd, or another
    program)": heartsd itself, and the operator went looking for another program. It is a
    configuration error now, said before any port is bound or store made: one line naming
    both options, exit 2."""
    port = free_port()
    out = heartsd("serve", "--port", str(port), "--web", f"{web_host}:{port}", "--db", str(tmp_path / "new.db"))
    assert out.returncode == 2, out
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "same port" in lines[0], out.stderr
    assert f"--web {web_host}:{port}" in lines[0] and f"--port {port}" in lines[0], out.stderr
    assert "another program" not in out.stderr and out.stdout == "", out
    assert not (tmp_path / "new.db").exists()
    # From the environment too, and the web front on its own port is served as before.
    env = {**os.environ, "HEARTSD_PORT": str(port), "HEARTSD_WEB": f"127.0.0.1:{port}"}
    by_env = subprocess.run([*HEARTSD, "serve", "--db", str(tmp_path / "new.db")], capture_output=True, text=True,
                            timeout=60, env=env)
    assert by_env.returncode == 2 and "same port" in by_env.stderr, by_env


def test_the_web_front_on_the_same_port_of_another_address_is_served(tmp_path):
    """The refusal is for a port both would bind: 127.0.0.1:P and 127.0.0.2:P do not meet."""
    port = free_port()
    daemon, _ = _serving("--host", "127.0.0.1", "--web", f"127.0.0.2:{port}", "--db", str(tmp_path / "h.db"),
                         "--admin-token", ADMIN)
    daemon.send_signal(signal.SIGTERM)
    assert daemon.wait(60) == 0


def test_serve_on_an_empty_file_says_it_made_a_new_store_as_for_a_missing_one(tmp_path):
    """An operator's pass: `mv heartsd.db.partial heartsd.db` (a killed backup's leftover, 0
    bytes) or a `touch`ed file, then `heartsd serve`: SQLite takes an empty file for a new
    database, and the daemon served an empty arena without the warning a missing file gets."""
    import select

    db = tmp_path / "heartsd.db"
    db.write_bytes(b"")
    daemon = subprocess.Popen([*HEARTSD, "serve", "--port", "0", "--db", str(db), "--admin-token", ADMIN,
                               "--log-format", "json", "--log-level", "warning"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)
    seen = b""
    try:
        assert b"listening on" in daemon.stdout.readline()  # type: ignore[union-attr]
        deadline = time.monotonic() + 20  # the warning follows "listening on"
        while b"new, empty store" not in seen and time.monotonic() < deadline:
            if select.select([daemon.stderr], [], [], 1)[0]:
                seen += os.read(daemon.stderr.fileno(), 65536)  # type: ignore[union-attr]
    finally:
        daemon.send_signal(signal.SIGTERM)
        _, err = daemon.communicate(timeout=60)
    events = [json.loads(line) for line in (seen + err).decode().splitlines() if line.startswith("{")]
    said = [e for e in events if "new, empty store" in str(e["event"])]
    assert len(said) == 1 and said[0]["level"] == "warning" and said[0]["path"] == str(db), events
    assert str(said[0]["event"]).startswith("the store file was empty (0 bytes"), said


# -- heartsd store backup ---------------------------------------------------------------------


def _store_of_some_size(tmp_path: Path) -> str:
    """A store of ~4 MiB: a backup of it takes many steps."""
    db = str(tmp_path / "h.db")
    Store(db).close()
    with contextlib.closing(sqlite3.connect(db)) as conn, conn:
        conn.execute("CREATE TABLE filler (x BLOB)")
        conn.executemany("INSERT INTO filler VALUES (?)", [(os.urandom(4096),) for _ in range(1000)])
    return db


# `heartsd store backup` as the command runs it (backup.main), its copy made in small steps:
# SLOWED sleeps between steps and says "copying" at its first; KILLED kills itself (SIGKILL)
# at its fifth, as `kill -9` would, leaving what such a backup leaves.
SLOWED = ("import sys, time\nfrom heartsd import backup\nbackup.PAGES_PER_STEP = 16\nreal = backup.backup\n"
          "def slowed(source, target, progress=None):\n"
          "    def step(done, total):\n"
          "        if done <= 16:\n            print('copying', flush=True)\n"
          "        time.sleep(0.03)\n"
          "    return real(source, target, step)\n"
          "backup.backup = slowed\nsys.exit(backup.main(sys.argv[1], sys.argv[2]))\n")
KILLED = ("import os, signal, sys\nfrom heartsd import backup\nbackup.PAGES_PER_STEP = 64\nsteps = []\n"
          "def step(done, total):\n    steps.append(done)\n"
          "    if len(steps) == 5:\n        os.kill(os.getpid(), signal.SIGKILL)\n"
          "backup.backup(sys.argv[1], sys.argv[2], step)\n")


def _checks_out(db: str) -> bool:
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        return bool(conn.execute("PRAGMA quick_check").fetchone()[0] == "ok"
                    and conn.execute("SELECT COUNT(*) FROM filler").fetchone()[0] == 1000)


def test_a_partial_copy_left_by_a_killed_backup_is_replaced_by_the_next_and_said(tmp_path):
    """An operator's pass: `kill -9` of a `heartsd store backup` (a cron job's timeout, the
    OOM killer) left TARGET.partial and TARGET.partial-journal beside the target, which no
    message or document explained; the next backup to that target wrote into them without a
    word. Now it replaces them and says on stderr what the leftover was (not a backup); the
    help and the README say what a TARGET.partial is."""
    db = _store_of_some_size(tmp_path)
    backups = tmp_path / "backups"
    backups.mkdir()
    target = str(backups / "copy.db")
    killed = subprocess.run([sys.executable, "-c", KILLED, db, target], capture_output=True, text=True, timeout=60)
    assert killed.returncode == -signal.SIGKILL, killed
    assert os.path.exists(f"{target}.partial") and not os.path.exists(target)
    again = heartsd("store", "backup", "--db", db, target)
    assert again.returncode == 0 and "the copy checks out" in again.stdout, again
    said = again.stderr.strip().splitlines()
    assert len(said) == 1 and f"replaced {target}.partial" in said[0], again.stderr
    assert "stopped before it ended" in said[0] and "not a backup" in said[0], again.stderr
    assert sorted(os.listdir(backups)) == ["copy.db"]
    assert _checks_out(target)
    helped = heartsd("store", "backup", "--help")
    assert "TARGET.partial" in helped.stdout and "killed" in helped.stdout, helped.stdout


def test_a_second_backup_to_the_same_target_while_the_first_runs_is_refused_and_the_first_finishes(tmp_path):
    """An operator's pass: a backup run again to the same target while the first still ran
    (a cron job overlapping a hand-run one) wrote into the first's TARGET.partial; the first
    then ended in a FileNotFoundError traceback, exit 1, its copy renamed away under it. The
    second is refused now, exit 2, naming the backup that runs; the first finishes sound."""
    db = _store_of_some_size(tmp_path)
    target = str(tmp_path / "copy.db")
    first = subprocess.Popen([sys.executable, "-c", SLOWED, db, target], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        assert first.stdout.readline().strip() == "copying"  # type: ignore[union-attr]
        second = heartsd("store", "backup", "--db", db, target)
        out, err = first.communicate(timeout=120)
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    assert second.returncode == 2, second
    assert "another `heartsd store backup`" in second.stderr and "is running now" in second.stderr, second.stderr
    assert "Traceback" not in second.stderr and second.stdout == "", second
    assert first.returncode == 0 and "the copy checks out" in out, (out, err)
    assert "Traceback" not in err and sorted(p.name for p in tmp_path.iterdir()
                                             if p.name.startswith("copy")) == ["copy.db"]
    assert _checks_out(target)


def test_a_backup_stopped_by_sigterm_removes_its_partial_copy_and_says_so(tmp_path):
    """An operator's pass: `timeout 1h heartsd store backup ...` (a cron job's limit) or a
    closed terminal ended the backup by SIGTERM or SIGHUP, as by SIGKILL: its TARGET.partial
    stayed. It ends now as Ctrl-C does: the partial copy removed, one line, exit 128+signal."""
    db = _store_of_some_size(tmp_path)
    target = str(tmp_path / "copy.db")
    for number in (signal.SIGTERM, signal.SIGHUP):
        backup = subprocess.Popen([sys.executable, "-c", SLOWED, db, target], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        try:
            assert backup.stdout.readline().strip() == "copying"  # type: ignore[union-attr]
            backup.send_signal(number)
            _, err = backup.communicate(timeout=60)
        finally:
            if backup.poll() is None:
                backup.kill()
                backup.wait()
        assert backup.returncode == 128 + number, (backup.returncode, err)
        assert err.strip().splitlines()[-1] == (f"heartsd store backup: stopped ({signal.Signals(number).name}): no "
                                                "copy was written"), err
        assert not [p.name for p in tmp_path.iterdir() if p.name.startswith("copy")]


# -- heartsd tournament create / admin create: the operator's input --------------------------


def test_a_tournaments_settings_mistyped_are_usage_errors_said_before_the_daemon_is_asked(tmp_path):
    """An operator's pass: `heartsd tournament create --ruleset standrad` (and `admin create`,
    and an unknown house strategy, and `--players 9`) came back as the daemon's refusal, exit
    3 ("refused by the server"), where README's exit codes say an unknown ruleset or strategy
    is a usage error. Each is exit 2 now with one line (an unknown name lists the known ones
    and the one it resembles), said before the daemon is asked; the daemon's own refusals (a
    bot it does not know) stay exit 3."""
    daemon, target = _serving("--db", str(tmp_path / "h.db"), "--admin-token", ADMIN)
    ask = ["--server", target, "--admin-token", ADMIN]
    roster = ["--bot", "alice", "--bot", "bob", "--bot", "carol", "--bot", "dave"]
    try:
        cases = {
            ("tournament", "create", *ask, *roster, "--ruleset", "standrad"):
                f"unknown ruleset 'standrad'; {RULESETS} (did you mean 'standard'?)",
            ("admin", "create", *ask, *["--seat", "house:random"] * 4, "--ruleset", "Classic"):
                f"unknown ruleset 'Classic'; {RULESETS} (did you mean 'classic'?)",
            ("tournament", "create", *ask, *roster, "--players", "9"):
                "--players: standard is played by 4 players, got 9",
            ("admin", "create", *ask, "--seat", "house:heurstic", *["--seat", "house:random"] * 3):
                "--seat house:heurstic: unknown house strategy 'heurstic'; known: heuristic, mc, random, graded-Q or "
                "graded-Qr (Q from 0 to 100) (did you mean 'heuristic'?)",
            ("tournament", "create", *ask, *roster, "--shuffle-key", "ab" * 32):
                "--shuffle-key plays a finished tournament's shuffles again only with that tournament's --seed (both "
                "printed by `heartsd tournament show`): give both",
        }
        said = {args: heartsd(*args) for args in cases}
        unknown = heartsd("tournament", "create", *ask, *roster)  # the arena's state: refused (3)
        listed = heartsd("tournament", "list", *ask, "--json")
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(60)
    for args, message in cases.items():
        out = said[args]
        prog = f"heartsd {args[0]}"
        assert (out.returncode, out.stderr.strip(), out.stdout) == (2, f"{prog}: {message}", ""), (args, out)
    assert unknown.returncode == 3 and "unknown bots" in unknown.stderr, unknown
    assert json.loads(listed.stdout)["tournaments"] == []


def test_the_daemons_address_mistaken_is_said_as_such(tmp_path):
    """An operator's pass: `--server http://127.0.0.1:50051` (written as the web front's
    address is) and `--server` naming the web front's port both said "could not connect ...:
    is heartsd running there?", exit 4, of a daemon that was; `--tls` to a daemon without TLS
    said "WRONG_VERSION_NUMBER"; `--timeout 0` (or -1, nan, inf) was "DEADLINE_EXCEEDED", exit
    3, a daemon there or not, and `watch --interval -1` "sleep length must be non-negative"."""
    web = free_port()
    daemon, target = _serving("--db", str(tmp_path / "h.db"), "--admin-token", ADMIN, "--web", f"127.0.0.1:{web}")
    try:
        scheme = heartsd("tournament", "list", "--server", f"http://{target}")
        https = heartsd("admin", "bots", "--server", f"https://{target}/")
        front = heartsd("tournament", "list", "--server", f"127.0.0.1:{web}")
        tls = heartsd("admin", "matches", "--server", target, "--tls")
        timeouts = [heartsd("tournament", "list", "--server", target, "--timeout", t) for t in ("0", "-1", "nan", "inf")]
        interval = heartsd("tournament", "watch", "t-x", "--server", target, "--interval", "-1")
        health = heartsd("health", "--server", target, "--timeout", "0")
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(60)
    assert scheme.returncode == 2 and "without http:// (" + target + ")" in scheme.stderr, scheme
    assert https.returncode == 2 and "without https://" in https.stderr and "add --tls" in https.stderr, https
    assert front.returncode == 4, front
    assert front.stderr.strip() == (f"heartsd tournament: 127.0.0.1:{web} answers HTTP/1, not gRPC: is it a web front "
                                    "(heartsd serve --web)? --server takes the daemon's gRPC port (serve --port, "
                                    "50051 by default)"), front.stderr
    assert tls.returncode == 4 and "does not speak TLS" in tls.stderr and "leave out --tls" in tls.stderr, tls
    for out in (*timeouts, interval, health):
        assert out.returncode == 2 and "must be above 0 and at most 86400 seconds" in out.stderr, out
        assert "DEADLINE" not in out.stderr


def test_a_tls_daemon_reached_without_tls_or_an_untrusted_certificate_is_said_as_such(tmp_path):
    """An operator's pass: `heartsd tournament list` without --tls to a daemon serving TLS
    said "... Socket closed): is heartsd running there?", and with --tls but without its CA
    the same question after a line of SSL internals. The first now says that a TLS daemon
    closes such connections; the second, that the certificate is not trusted and --ca."""
    from tests.tls import make_pki

    pki = make_pki(tmp_path / "pki")
    daemon, target = _serving("--db", str(tmp_path / "h.db"), "--admin-token", ADMIN, "--tls-cert",
                              str(pki.server_cert), "--tls-key", str(pki.server_key))
    try:
        plain = heartsd("tournament", "list", "--server", target)
        untrusted = heartsd("tournament", "list", "--server", target, "--tls", "--ca", str(pki.other_ca))
        trusted = heartsd("tournament", "list", "--server", target, "--tls", "--ca", str(pki.ca))
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(60)
    assert plain.returncode == 4 and "serves TLS closes a connection without it: then add --tls" in plain.stderr, plain
    assert untrusted.returncode == 4, untrusted
    assert untrusted.stderr.strip().splitlines()[-1].startswith(
        f"heartsd tournament: could not connect to {target} over TLS: its certificate is not trusted ("), untrusted
    assert "--ca FILE" in untrusted.stderr and "is heartsd running there" not in untrusted.stderr, untrusted
    assert trusted.returncode == 0, trusted


def test_a_match_id_given_for_a_tournament_or_back_is_said_to_be_one(tmp_path):
    """An operator's pass: `heartsd admin watch t-...` (a tournament's id, from `tournament
    list`) said "NOT_FOUND: no match t-...", as if the tournament were gone; so did
    `tournament show m-...` of a match, and `replay show t-...`. Each names the kind of id
    it was given and the command that takes it (still exit 3: the daemon found none)."""
    db = str(tmp_path / "h.db")
    daemon, target = _serving("--db", db, "--admin-token", ADMIN)
    ask = ["--server", target, "--admin-token", ADMIN]
    try:
        said = {args: heartsd(*args, *ask) for args in (
            ("admin", "watch", "t-0123456789ab"), ("admin", "cancel", "t-0123456789ab"),
            ("tournament", "show", "m-0123456789abcdef"), ("tournament", "cancel", "m-0123456789abcdef"))}
        plain = heartsd("tournament", "show", "t-0123456789ab", *ask)
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(60)
    for (prog, verb, given), out in said.items():
        other = "heartsd tournament" if prog == "admin" else "heartsd admin"
        kind = "a tournament's id" if prog == "admin" else "a match's id"
        verb = "watch" if verb == "show" else verb
        assert out.returncode == 3, out
        assert out.stderr.strip().endswith(f"({given} is {kind}: `{other} {verb} {given}`)"), out.stderr
    assert plain.returncode == 3 and plain.stderr.strip() == "heartsd tournament: NOT_FOUND: no tournament t-0123456789ab"
    replay = heartsd("replay", "show", "t-0123456789ab", "--db", db)
    assert replay.returncode == 1 and "a tournament's id: `heartsd tournament show t-0123456789ab`" in replay.stderr


def test_a_web_address_written_as_a_url_or_a_host_that_is_not_is_said_of_web_not_host(tmp_path):
    """An operator's pass: `--web http://127.0.0.1:8080` and `--web arena.invalid:8080` were
    "cannot listen on ...: not a known address; fix --host (HEARTSD_HOST)": --host was right."""
    url = heartsd("serve", "--port", "0", "--web", "http://127.0.0.1:8080", "--db", str(tmp_path / "h.db"))
    unknown = heartsd("serve", "--port", "0", "--web", "arena.invalid:8080", "--db", str(tmp_path / "h.db"))
    assert url.returncode == 2 and "without http://" in url.stderr and "--host" not in url.stderr, url
    assert unknown.returncode == 2 and "fix --web HOST:PORT" in unknown.stderr, unknown
    assert "--host" not in unknown.stderr and not (tmp_path / "h.db").exists()


def test_heartsbot_local_refuses_seeds_past_the_largest_before_it_plays(tmp_path):
    """An operator's pass: `heartsbot local --matches 3 --seed 18446744073709551615` played
    one match, then ended "Value out of range: 18446744073709551616" (the next match's seed)."""
    out = subprocess.run([sys.executable, "-m", "heartsbot.cli", "local", "--strategies", "random", "random",
                          "random", "random", "--deals", "1", "--matches", "3", "--seed", str(2**64 - 1)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and out.stdout == "", out
    assert "--seed" in out.stderr and str(2**64 - 3) in out.stderr and "Value out of range" not in out.stderr, out


# -- heartsd tournament local --csv -----------------------------------------------------------


LOCAL = ["tournament", "local", "--bots", "random", "random", "random", "random", "--rounds", "1", "--deals", "1"]


def test_tournament_local_never_overwrites_a_csv_file_unless_told_to(tmp_path):
    """An operator's pass: `heartsd tournament local --csv standings.csv` replaced last
    week's standings.csv without a word. An existing file is refused now, exit 2, before the
    tournament runs; `--overwrite` replaces it, once the new standings are written in full
    (its mode kept). `--overwrite` without --csv, and --csv naming the --db store, are usage
    errors: the store would have been overwritten by a CSV."""
    kept = tmp_path / "standings.csv"
    kept.write_text("bot,rank\nlast-week,1\n")
    refused = heartsd(*LOCAL, "--csv", str(kept))
    assert refused.returncode == 2 and refused.stdout == "", refused
    assert refused.stderr.strip() == (f"heartsd tournament: --csv {kept} exists: name a new file, or add --overwrite "
                                      "to replace it"), refused.stderr
    assert kept.read_text() == "bot,rank\nlast-week,1\n"
    kept.chmod(0o640)
    replaced = heartsd(*LOCAL, "--csv", str(kept), "--overwrite")
    assert replaced.returncode == 0, replaced
    assert kept.read_text().startswith("rank,bot,") and "random-2" in kept.read_text()
    assert kept.stat().st_mode & 0o777 == 0o640
    new = tmp_path / "new.csv"
    made = heartsd(*LOCAL, "--csv", str(new))
    assert made.returncode == 0 and "random-4" in new.read_text(), made
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.csv", "standings.csv"]  # no temporary left
    alone = heartsd(*LOCAL, "--overwrite")
    assert alone.returncode == 2 and "--overwrite is for --csv" in alone.stderr, alone
    store = tmp_path / "trial.db"
    same = heartsd(*LOCAL, "--db", str(store), "--csv", str(store), "--overwrite")
    assert same.returncode == 2 and "is the --db store" in same.stderr, same
    assert not store.exists()
    # A device is written to, not refused or replaced: --csv /dev/stdout prints the CSV.
    piped = heartsd(*LOCAL, "--csv", "/dev/stdout")
    assert piped.returncode == 0 and piped.stdout.rstrip().splitlines()[-5].startswith("rank,bot,"), piped


# -- heartsd tournament create: the command given twice, however many tournaments ---------------


def test_a_tournament_created_twice_is_refused_behind_a_thousand_newer_ones(tmp_path, capsys):
    """An operator's pass: the check that refuses `tournament create` given twice (a running
    or paused tournament of this name and roster) read only the newest 1,000 tournaments: a
    league paused while 1,000 newer tournaments were played (a day of automated qualifiers)
    was started a second time beside itself, holding the same bots. Every page is read now."""
    import asyncio

    from heartsd import cli

    names = ["alice", "bob", "carol", "dave"]

    async def scenario():  # type: ignore[no-untyped-def]
        async with running_daemon(tmp_path) as daemon:
            bots = [await Bot(daemon, n).start() for n in names]
            base = ["--server", daemon.target, "--admin-token", ADMIN]
            roster = sum((["--bot", n] for n in names), [])

            def tour(*argv: str) -> tuple[int, str, str]:
                code = cli.main(["tournament", *argv])
                out, err = capsys.readouterr()
                return code, out, err

            first = await asyncio.to_thread(tour, "create", *base, *roster, "--rounds", "3", "--name", "league")
            league = first[1].split()[1]
            await asyncio.to_thread(tour, "pause", *base, league)
            tournaments = daemon.arena.tournaments.store  # type: ignore[attr-defined]
            with tournaments._write() as tx:  # 1,000 finished ones, newer, as a day of qualifiers leaves them
                for i in range(1000):
                    tx.execute(
                        "INSERT INTO tournaments (id, name, created_ms, finished_ms, status, reason, ruleset, players, "
                        "rounds, deals, seed, clock, roster, instance) SELECT ?, 'qualifier', created_ms + ?, "
                        "created_ms + ?, 'finished', 'completed', ruleset, players, rounds, deals, seed, clock, roster, "
                        "instance FROM tournaments WHERE id = ?", (f"t-q{i:05d}", 1000 + i, 2000 + i, league))
            twice = await asyncio.to_thread(tour, "create", *base, *roster, "--rounds", "3", "--name", "league")
            listed = await asyncio.to_thread(tour, "list", *base, "--all", "--json")
            for b in bots:
                await b.close()
            return first, league, twice, listed

    first, league, twice, listed = run(scenario())
    assert first[0] == 0, first
    running = [t["id"] for t in json.loads(listed[1])["tournaments"] if t["status"] in ("running", "paused")]
    assert running == [league], running  # nothing started beside it
    assert twice[0] == 2 and league in twice[2] and "given twice" in twice[2], twice
