"""The ladder's integrity, as an organiser with prize money checks it from outside: the
ratings against the stored matches, and what a bot can do to a result it does not like."""

from __future__ import annotations

import subprocess
import sys

from heartsd.matchmaker import LadderSettings, Matchmaker
from heartsd.store import Store

from .harness import ladder_bots, play_rated_match, run, running_daemon

HEARTSD = [sys.executable, "-m", "heartsd.cli"]


def play_rated_set(tmp_path) -> list[str]:  # type: ignore[no-untyped-def]
    """A daemon on ``tmp_path``/heartsd.db plays one rated duplicate set (eight ladder bots
    of eight owners, the matchmaker's first tick, one deal a table) to its end and stops;
    the ids of the set's tables."""

    async def scenario() -> list[str]:
        async with running_daemon(tmp_path) as daemon:
            bots = await ladder_bots(daemon, daemon.arena.store.ladder, [f"s{i}" for i in range(8)])
            maker = Matchmaker(daemon.arena, LadderSettings(deals=1), seed=3)
            maker._refresh()
            tables = await maker.tick()
            for match_id in tables:
                await daemon.wait_finished(match_id)
            for b in bots:
                await b.close()
            return tables

    tables = run(scenario())
    assert len(tables) == 2, "eight bots of eight owners make one set of two tables"
    return tables


def _heartsd(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*HEARTSD, *args], capture_output=True, text=True, timeout=60)


def _drop_result_row(db: str, match_id: str) -> str:
    """Delete the ladder's row of the last-placed bot of ``match_id`` (a loss erased); its bot."""
    store = Store(db)
    try:
        with store.db.transaction() as tx:
            bot, seat = tx.query("SELECT bot, seat FROM results WHERE match_id = ? ORDER BY rank DESC, seat LIMIT 1",
                                 (match_id,))[0]
            tx.execute("DELETE FROM results WHERE match_id = ? AND seat = ?", (match_id, seat))
        return str(bot)
    finally:
        store.close()


def _ratings(db: str) -> dict[str, tuple[float, float, int]]:
    store = Store(db)
    try:
        return store.ladder.stored_ratings("standard")
    finally:
        store.close()


def _missing_rows_are_named_and_nothing_is_rewritten(db: str, match_id: str) -> None:
    before = _ratings(db)
    for _ in range(2):  # a second run must not find the rewritten ratings "identical"
        out = _heartsd("ladder", "recompute", "--db", db)
        assert out.returncode == 1, out.stdout + out.stderr
        assert "Traceback" not in out.stderr, out.stderr
        assert "no rating was rewritten" in out.stdout and match_id in out.stdout, out.stdout
    assert _ratings(db) == before
    verify = _heartsd("replay", "verify", "--db", db, match_id)
    assert verify.returncode == 1 and f"{match_id}: FAILED" in verify.stdout, verify.stdout + verify.stderr
    assert "seat" in verify.stdout, verify.stdout


def test_a_rated_match_missing_a_result_row_is_refused_not_rated_without_it(tmp_path):
    """Before: with the last-placed bot's row of a rated match deleted, `ladder recompute`
    said DIFFERENT and rewrote every rating from the three rows left (the loss erased, as
    if the match had been played by three), a second run said "identical", and `replay
    verify` said OK. A rated match's rows must cover every seat."""
    match_id = play_rated_match(tmp_path, ["g1", "g2", "g3", "g4"], deals=1)
    db = str(tmp_path / "heartsd.db")
    assert _heartsd("ladder", "recompute", "--db", db).returncode == 0
    _drop_result_row(db, match_id)
    _missing_rows_are_named_and_nothing_is_rewritten(db, match_id)


def test_a_rated_set_missing_a_result_row_is_refused_not_a_traceback(tmp_path):
    """Before: with one row of a rated set's table deleted, the hand that bot held had one
    holder left, and `ladder recompute` (and every replay of the ratings: a daemon's start
    after a model change, a bot's page) ended in openskill's ValueError ("at least 2
    teams"), while `replay verify` said OK."""
    tables = play_rated_set(tmp_path)
    db = str(tmp_path / "heartsd.db")
    assert _heartsd("ladder", "recompute", "--db", db).returncode == 0
    dropped = _drop_result_row(db, tables[0])
    _missing_rows_are_named_and_nothing_is_rewritten(db, tables[0])
    store = Store(db)
    try:  # the replay behind a bot's page and a start's rebuild rates what is left, without a traceback
        assert set(store.ladder.replay_ratings("standard")) == {f"s{i}" for i in range(8)} - {dropped}
    finally:
        store.close()


def test_ladder_rows_of_a_match_that_did_not_finish_fail_verify_not_a_traceback(tmp_path):
    """Before: rows in the ladder's results for a match that was cancelled (or aborted),
    whose result has no ranks, made `replay verify` end in an IndexError traceback instead
    of naming the match; only a finished match is ever rated."""
    names = ["c1", "c2", "c3", "c4"]

    async def scenario() -> str:
        async with running_daemon(tmp_path) as daemon:
            bots = await ladder_bots(daemon, daemon.arena.store.ladder, names)
            for b in bots:
                b.policy = lambda request, bot: None  # thinking: the match waits for them
            match_id = await daemon.create_match(names, deals=1, rated=True)
            daemon.arena.cancel(match_id, "test: cancelled")
            await daemon.wait_finished(match_id)
            for b in bots:
                await b.close()
            return match_id

    match_id = run(scenario())
    db = str(tmp_path / "heartsd.db")
    store = Store(db)
    try:
        assert store.get(match_id).status == "cancelled" and not store.ladder_results(match_id)
        with store.db.transaction() as tx:  # a win given for it, by hand
            for seat, bot in enumerate(names):
                tx.execute("INSERT INTO results (match_id, ruleset, bot, seat, rank, points, deals, finished_ms, seq) "
                           "VALUES (?, 'standard', ?, ?, ?, 0, 1, 0, 1)", (match_id, bot, seat, seat + 1))
    finally:
        store.close()
    verify = _heartsd("replay", "verify", "--db", db, match_id)
    assert "Traceback" not in verify.stderr, verify.stderr
    assert verify.returncode == 1 and f"{match_id}: FAILED" in verify.stdout and "cancelled" in verify.stdout, \
        verify.stdout
    recompute = _heartsd("ladder", "recompute", "--db", db)
    assert recompute.returncode == 1 and "no rating was rewritten" in recompute.stdout, recompute.stdout
