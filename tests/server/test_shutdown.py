"""Shutdown order: on SIGTERM the in-process ladder house bots keep playing until their
matches end (within the grace); a second SIGINT/SIGTERM aborts and records at once."""

from __future__ import annotations

import signal
import time

from heartsd.store import Store

from .test_daemon_process import start

# mc thinks most of its decision time: a 4-deal match lasts several seconds.
LADDER = ("--ladder", "--ladder-house", "mc", "heuristic", "random", "heuristic", "--decision-ms", "150",
          "--ladder-deals", "4")


def running_ladder_match(db: str, deals_played: int = 0) -> str:
    """Wait for a ladder match (house bots) that is running; its id."""
    deadline = time.time() + 60
    while time.time() < deadline:
        store = Store.open_existing(db)
        running = [m for m in store.list(status="running") if m.seats[0].startswith("house-")]
        store.close()
        if running:
            return running[0].id
        time.sleep(0.1)
    raise AssertionError("no ladder match started")


def test_sigterm_lets_the_house_bots_finish_their_ladder_matches(tmp_path):
    db = str(tmp_path / "d.db")
    proc, _ = start(tmp_path, *LADDER, "--shutdown-grace-s", "60")
    match_id = running_ladder_match(db)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(90) == 0
    store = Store.open_existing(db)
    stored = store.get(match_id)
    rated = {r[0] for r in store.db.query("SELECT DISTINCT match_id FROM results")}
    store.close()
    assert stored.status == "finished", (stored.status, stored.reason)
    assert match_id in rated, "the match played out during the grace is rated"


def test_a_second_signal_aborts_and_records_at_once(tmp_path):
    db = str(tmp_path / "d.db")
    # A long grace: the match would finish in it unless the second signal aborts it.
    proc, _ = start(tmp_path, *LADDER, "--shutdown-grace-s", "600")
    match_id = running_ladder_match(db)
    proc.send_signal(signal.SIGTERM)
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(60) == 0, "the second signal did not cut the 600 s grace short"
    err = proc.stderr.read()
    assert "second signal" in err, err
    store = Store.open_existing(db)
    stored = store.get(match_id)
    rated = {r[0] for r in store.db.query("SELECT DISTINCT match_id FROM results")}
    store.close()
    assert (stored.status, stored.reason) == ("aborted", "server shutdown")
    assert stored.record is not None and stored.record.decisions, "aborted and recorded with its decisions"
    assert match_id not in rated
