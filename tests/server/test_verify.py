"""`heartsd replay verify`: a stored match is what its record replays to, or the problem.

Each forgery below passed before (an attack pass: only the decisions, the seed and a
finished match's totals and winners were checked)."""

from __future__ import annotations

import copy
import dataclasses

import pytest

from heartsbot.proto import game_pb2
from heartsd.records import verify
from heartsd.store import Store

from .harness import play_rated_match, run, running_daemon

P = game_pb2


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    """A rated match of four ladder bots, finished, and a store to read it from."""
    tmp_path = tmp_path_factory.mktemp("verify")

    match_id = play_rated_match(tmp_path, ["v1", "v2", "v3", "v4"], deals=2)
    store = Store(str(tmp_path / "heartsd.db"))
    yield store.get(match_id), store.ladder_results(match_id)
    store.close()


def _forged(stored, change):
    """A copy of ``stored`` (a frozen row) with ``change`` applied: to its record in place,
    or, when it returns a dict, to the row's fields."""
    forged = copy.deepcopy(stored)
    fields = change(forged)
    return dataclasses.replace(forged, **fields) if isinstance(fields, dict) else forged


def _swap_first_cards(stored):
    hands = stored.record.deals[0].hands
    a, b = hands[0].cards[0], hands[1].cards[0]
    a_copy, b_copy = type(a)(), type(b)()
    a_copy.CopyFrom(a)
    b_copy.CopyFrom(b)
    a.CopyFrom(b_copy)
    b.CopyFrom(a_copy)


def _aborted_with_more_points(stored):
    stored.record.result.status = P.MATCH_STATUS_ABORTED
    stored.record.result.totals[0] += 50
    return {"status": "aborted", "totals": list(stored.record.result.totals), "result": None}


FORGERIES = {
    "ranks reversed": (lambda s: s.record.result.ranks.reverse(), "stored ranks"),
    "aborted, 50 points more": (_aborted_with_more_points, "reaches the match's end"),
    "two dealt cards swapped": (_swap_first_cards, "hands recorded as dealt in deal 0"),
    "a deal score edited": (lambda s: s.record.deal_scores[0].points.__setitem__(0, 99), "deal scores"),
    "a seat renamed": (lambda s: setattr(s.record.seats[1], "name", "impostor"), "seats differ"),
    "the row's status": (lambda s: {"status": "cancelled"}, "the row says cancelled"),
    "the row's totals": (lambda s: {"totals": [0, 0, 0, 0]}, "the row's totals"),
    "the ruleset's name": (lambda s: setattr(s.record.ruleset, "name", "classic"), "ruleset differs"),
}


def test_the_untouched_match_verifies(played):
    stored, results = played
    assert len(results) == 4 and verify(stored, results) is None


@pytest.mark.parametrize("forgery", sorted(FORGERIES))
def test_a_forged_record_or_row_fails_with_what_was_forged(played, forgery):
    stored, results = played
    change, named = FORGERIES[forgery]
    problem = verify(_forged(stored, change), results)
    assert problem is not None and named in problem, problem


def test_an_edited_ladder_result_fails(played):
    stored, results = played
    bot, seat, rank, points = results[2]
    problem = verify(stored, [*results[:2], (bot, seat, rank, points + 7), *results[3:]])
    assert problem is not None and f"the ladder's result of {bot!r}" in problem


def test_an_edited_result_column_fails_replay_verify(tmp_path):
    """The row's result column is what listings and recompute's check read: edited alone,
    it went unnoticed (a review of the verify change: get() never read it)."""
    import subprocess
    import sys

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            match_id = await daemon.create_match(["house:random"] * 4, deals=1)
            await daemon.wait_finished(match_id)
            return match_id

    match_id = run(scenario())
    db = str(tmp_path / "heartsd.db")
    store = Store(db)
    forged = P.MatchResult.FromString(store.result_column(match_id))
    forged.totals[0] += 13
    with store.db.transaction() as tx:
        tx.execute("UPDATE matches SET result = ? WHERE id = ?", (forged.SerializeToString(), match_id))
    store.close()
    out = subprocess.run([sys.executable, "-m", "heartsd.cli", "replay", "verify", "--db", db],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and "the row's stored result differs from the record's" in out.stdout, out.stdout


def test_a_record_that_does_not_parse_does_not_stop_the_result_fill_at_start(tmp_path):
    """The fill now runs at every start: one damaged record among the rows without a result
    raised from Store() and the daemon could not start (a review of the fill change)."""
    store = Store(str(tmp_path / "s.db"))
    with store.db.transaction() as tx:
        tx.execute("INSERT INTO matches (id, created_ms, status, reason, ruleset, players, seats, seed, deals_played, "
                   "totals, record) VALUES ('m-bad', 1, 'finished', '', 'standard', 4, '[]', '1', 0, '[]', ?)",
                   (b"\xff\x00garbage",))
    store.close()
    store = Store(str(tmp_path / "s.db"))  # starts; the row is left for replay verify to name
    assert store.result_column("m-bad") is None
    store.close()


def test_a_match_is_replayed_once_to_verify_it(played, monkeypatch):
    """Before: `heartsd replay verify` replayed every match twice (once to check its actions
    and outcome, once more for its dealt hands and deal scores), so verifying a store took
    twice as long as it needs. Now one replay gives all of it."""
    from hearts_engine import Match

    stored, results = played
    applied = []
    real_apply = Match.apply

    def counted(self, seat, action):  # type: ignore[no-untyped-def]
        applied.append(seat)
        return real_apply(self, seat, action)

    monkeypatch.setattr(Match, "apply", counted)
    assert verify(stored, results) is None
    assert len(applied) == len(stored.record.decisions)  # before: twice as many


def test_verify_reports_a_damaged_store_file_and_fails(tmp_path, capsys):
    """Before (an operator's pass): a backup put back beside the old file's -wal, as the
    daemon's own message could be read to advise, had SQLite replay that log onto it; many
    pages were damaged, yet `heartsd replay verify` printed "80 verified, 0 failed" and
    exited 0 (the rows it read still read). Now it runs SQLite's quick_check first, says
    the file is damaged, and exits 1. Made here the same way: a log written after the
    backup's point, replayed onto the backup."""
    import shutil
    import sqlite3

    from heartsd import cli

    live, backup = tmp_path / "live.db", tmp_path / "restored.db"
    store = Store(str(live))
    for i in range(300):
        store.insert_running(f"m-{i:04d}", "standard", 4, ["a", "b", "c", "d"], 1)
    store.close()
    shutil.copy(live, backup)
    con = sqlite3.connect(live)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA wal_autocheckpoint=0")
    con.execute("UPDATE matches SET ruleset = 'x' || ruleset || hex(randomblob(200))")
    con.commit()
    con.execute("PRAGMA wal_checkpoint(PASSIVE)")  # the file moves on from the backup
    con.execute("DELETE FROM matches WHERE rowid % 3 = 0")
    con.commit()
    shutil.copy(f"{live}-wal", f"{backup}-wal")  # the old file's log, beside the backup put back
    con.close()
    assert cli.main(["replay", "verify", "--db", str(backup), "m-0001"]) == 1
    out = capsys.readouterr().out
    assert "the store file itself is damaged" in out and "m-0001: skipped" in out, out
