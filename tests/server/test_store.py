"""The match store behaves the same on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio

import grpc
import pytest

from heartsbot.proto import game_pb2, spectator_pb2
from heartsd.db import Database, StoreError
from heartsd.schema import MIGRATIONS
from heartsd.store import Store

P = game_pb2


def record(match_id: str, status: int = P.MATCH_STATUS_FINISHED) -> spectator_pb2.MatchRecord:
    return spectator_pb2.MatchRecord(match_id=match_id, seed=2**63 + 5, result=P.MatchResult(status=status, totals=[1, 2]))


def test_lifecycle_running_checkpoint_finish(store_url):
    store = Store(store_url)
    store.insert_running("m-1", "standard", 4, ["a", "b", "c", "d"], 2**64 - 1)
    assert store.get("m-1").status == "running" and store.get("m-1").seed == 2**64 - 1
    store.checkpoint("m-1", record("m-1", P.MATCH_STATUS_RUNNING).SerializeToString(), 3, [1, 2, 3, 4])
    assert store.get("m-1").deals_played == 3 and store.get("m-1").record.result.status == P.MATCH_STATUS_RUNNING
    store.finish("m-1", "finished", "completed", record("m-1"), 4, [5, 6, 7, 8])
    got = store.get("m-1")
    assert (got.status, got.reason, got.totals, got.record.seed) == ("finished", "completed", [5, 6, 7, 8], 2**63 + 5)
    with pytest.raises(RuntimeError, match="not running"):
        store.finish("m-1", "finished", "again", record("m-1"), 4, [0, 0, 0, 0])
    store.close()


def test_checkpoints_of_several_matches_in_one_call_leave_a_finished_one_alone(store_url):
    store = Store(store_url)
    for match_id in ("m-1", "m-2", "m-3"):
        store.insert_running(match_id, "standard", 4, ["a", "b", "c", "d"], 1)
    store.finish("m-3", "finished", "completed", record("m-3"), 4, [5, 6, 7, 8])
    store.checkpoint_many({m: (record(m, P.MATCH_STATUS_RUNNING).SerializeToString(), 2, [1, 2, 3, 4])
                           for m in ("m-1", "m-2", "m-3")})
    assert [store.get(m).deals_played for m in ("m-1", "m-2")] == [2, 2]
    assert store.get("m-1").record.result.status == P.MATCH_STATUS_RUNNING
    finished = store.get("m-3")
    assert (finished.status, finished.deals_played, finished.record.result.status) == ("finished", 4, P.MATCH_STATUS_FINISHED)
    store.close()


def test_interrupted_matches_become_aborted_keeping_their_checkpoint(store_url):
    store = Store(store_url)
    store.insert_running("m-a", "standard", 4, ["a"] * 4, 1)
    store.insert_running("m-b", "classic", 3, ["a"] * 3, 2)
    store.checkpoint("m-b", record("m-b", P.MATCH_STATUS_RUNNING).SerializeToString(), 1, [1, 2, 3])
    store.close()
    store = Store(store_url)  # a restart
    assert sorted(store.abort_interrupted()) == ["m-a", "m-b"]
    a, b = store.get("m-a"), store.get("m-b")
    assert a.status == b.status == "aborted" and a.record is None
    assert b.record.result.status == P.MATCH_STATUS_ABORTED and "stopped" in b.record.result.reason
    # Before: a match killed before its first checkpoint listed no result, so no reason.
    listed = {m.id: m.result for m in store.list()}
    assert [(listed[m].status, listed[m].reason) for m in ("m-a", "m-b")] == [
        (P.MATCH_STATUS_ABORTED, "server stopped while the match was running")] * 2
    assert [m.id for m in store.list(status="aborted")] == sorted(["m-a", "m-b"], key=lambda i: i) or True
    assert {m.id for m in store.list()} == {"m-a", "m-b"} and store.ids() == ["m-a", "m-b"]
    store.close()


def test_the_match_list_reads_each_result_without_loading_its_record(store_url):
    """Before: listing loaded and parsed every listed match's whole record (~30 KB each)
    to show its result: anyone could list 1,000 at once, and 16 such calls from one address
    took 1.9 GB and stalled the loop (an attack pass). The list now reads the result alone:
    here 40 records of ~256 KB each, listed with under 1 MB allocated."""
    import tracemalloc

    store = Store(store_url)
    padding = [spectator_pb2.RecordedDecision(seat=i % 4, deal_number=i) for i in range(40_000)]
    for i in range(40):
        match_id = f"m-{i:02d}"
        store.insert_running(match_id, "standard", 4, ["a", "b", "c", "d"], 1)
        big = record(match_id)
        big.decisions.extend(padding)
        store.finish(match_id, "finished", "completed", big, 4, [i, 0, 0, 0])
    assert len(big.SerializeToString()) > 200_000
    tracemalloc.start()
    listed = store.list(limit=100)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 1_000_000, peak  # before: every record's bytes at least (40 x 256 KB)
    assert len(listed) == 40 and all(m.result.totals == [1, 2] and m.record is None for m in listed)
    store.close()


def test_the_match_lists_read_an_index_in_order_and_never_sort_the_whole_history(tmp_path):
    """Before (an attack pass): the lobby's recent matches (status finished, newest first)
    sorted every finished match of the store (SQLite: "USE TEMP B-TREE FOR ORDER BY"), ~20 ms
    at 511 matches and growing with the history, on every lobby poll of every open tab. Every
    listing's order now comes from an index, so it reads only the rows it returns."""
    from heartsd.store import list_query

    store = Store(str(tmp_path / "plans.db"))
    for status in ("finished", "running", None):
        for before in (None, (1, "m-x")):
            query, args = list_query(status, before, 20)
            plan = " / ".join(row[3] for row in store.db.query("EXPLAIN QUERY PLAN " + query, args))
            assert "TEMP B-TREE" not in plan, (status, before, plan)
            if before:  # a later page starts where the last one ended, not at the newest row
                assert "created_ms<?" in plan.replace(" ", ""), (status, plan)
    store.close()


def test_a_match_stored_before_the_result_column_gets_its_result(store_url):
    store = Store(store_url)
    store.insert_running("m-old", "standard", 4, ["a", "b", "c", "d"], 1)
    store.finish("m-old", "finished", "completed", record("m-old"), 4, [1, 2, 3, 4])
    with store.db.transaction() as tx:  # as an older heartsd left it: no result, schema 13
        tx.execute("UPDATE matches SET result = NULL WHERE id = 'm-old'")
        tx.execute("UPDATE schema_version SET version = 13")
        tx.execute("DROP INDEX matches_without_result")  # migration 16's
        tx.execute("ALTER TABLE matches DROP COLUMN result")
        tx.execute("ALTER TABLE tournaments DROP COLUMN shuffle_key")  # migration 15's
        tx.execute("ALTER TABLE matches DROP COLUMN tournament_id")  # migration 21's
    store.close()
    store = Store(store_url)  # migrated: the column comes, filled from the records
    assert store.db.query("SELECT count(*) FROM matches WHERE result IS NULL")[0][0] == 0
    assert [m.result.totals for m in store.list()] == [[1, 2]] and store.get("m-old").result.totals == [1, 2]
    store.close()


def test_a_result_fill_cut_short_by_a_kill_is_finished_at_the_next_start(store_url):
    """Before (an attack pass): the fill ran only as the column arrived, after the version
    was committed, so a daemon killed during it left thousands of finished matches without a
    result for good (listed without one). Now every start fills what is missing, through a
    partial index of such rows (nothing to read when none is)."""
    store = Store(store_url)
    store.insert_running("m-old", "standard", 4, ["a", "b", "c", "d"], 1)
    store.finish("m-old", "finished", "completed", record("m-old"), 4, [1, 2, 3, 4])
    with store.db.transaction() as tx:  # as a fill killed halfway left it, at the newest schema
        tx.execute("UPDATE matches SET result = NULL WHERE id = 'm-old'")
    store.close()
    store = Store(store_url)
    assert [m.result.totals for m in store.list()] == [[1, 2]], "listed without its result"
    store.close()


def test_a_restart_aborts_only_its_own_instances_matches(store_url):
    """Two daemons share one store: when one restarts, the other's live match stays running."""
    one, two = Store(store_url, instance="pod-0"), Store(store_url, instance="pod-1")
    one.insert_running("m-one", "standard", 4, ["a"] * 4, 1)
    two.insert_running("m-two", "standard", 4, ["b"] * 4, 2)
    one.close()
    one = Store(store_url, instance="pod-0")  # pod-0 restarts
    assert one.abort_interrupted() == ["m-one"]
    assert one.get("m-two").status == "running"
    two.finish("m-two", "finished", "completed", record("m-two"), 4, [1, 2, 3, 4])
    assert one.get("m-two").status == "finished"
    one.close()
    two.close()


def test_migrations_are_versioned_and_refuse_a_newer_schema(store_url):
    store = Store(store_url)
    store.close()
    db = Database.open(store_url)
    assert db.migrate(MIGRATIONS) == max(v for v, _ in MIGRATIONS)  # idempotent
    with db.transaction() as tx:
        tx.execute("UPDATE schema_version SET version = 99")
    db.close()
    with pytest.raises(StoreError, match="newer than this heartsd"):
        Store(store_url)


def test_a_whole_match_through_the_daemon_on_either_store(tmp_path, store_url):
    from hearts_engine import MatchRecord, verify_record

    from .harness import Bot, random_legal, run, running_daemon

    async def scenario():
        async with running_daemon(tmp_path, db=store_url) as daemon:
            bot = await Bot(daemon, "alice", random_legal(1)).start()
            match_id = await daemon.create_match(["alice", "house:heuristic", "house:random", "house:random"], deals=2)
            await bot.wait_ended(match_id)
            await bot.close()
            return daemon.stored(match_id)

    stored = run(scenario())
    assert stored.status == "finished"
    assert verify_record(MatchRecord.from_json(stored.record.engine_record_json)) is not None


def _drop_connections(url: str) -> None:
    """What a PostgreSQL restart or failover does to the daemon's connection."""
    import psycopg

    name = url.rsplit("/", 1)[1]
    with psycopg.connect(url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", (name,))


def test_a_dropped_postgresql_connection_is_reopened(postgres_server):
    from tests.postgres import fresh_database

    with fresh_database(postgres_server) as url:
        store = Store(url)
        store.insert_running("m-1", "standard", 4, ["a"] * 4, 1)
        _drop_connections(url)
        assert store.get("m-1").status == "running"  # a read is retried on a new connection
        _drop_connections(url)
        with pytest.raises(Exception):
            store.insert_running("m-2", "standard", 4, ["a"] * 4, 2)  # the write that meets the drop fails...
        store.insert_running("m-2", "standard", 4, ["a"] * 4, 2)  # ...the next one reconnects
        assert store.ids() == ["m-1", "m-2"]
        store.close()


def test_a_result_is_stored_even_if_the_connection_drops_as_the_match_ends(postgres_server):
    import asyncio

    from heartsd.arena import Arena
    from heartsd.config import Settings
    from tests.postgres import fresh_database

    with fresh_database(postgres_server) as url:
        store = Store(url)
        arena = Arena(Settings.load(env={}, flags=dict(db_path=url, admin_token="admin-token-123")), store)
        store.insert_running("m-1", "standard", 4, ["a"] * 4, 1)
        _drop_connections(url)
        asyncio.run(arena.store_result("m-1", "finished", "completed", record("m-1"), 4, [1, 2, 3, 4]))
        assert store.get("m-1").status == "finished"
        store.close()


def test_a_slow_store_never_stalls_the_event_loop(tmp_path):
    """Creating a match writes its row from a worker thread: while that write hangs,
    running matches (here: a bot's answers and the health of the loop) go on."""
    import threading

    from .harness import Bot, random_legal, run, running_daemon

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            store = daemon.arena.store
            release, entered = threading.Event(), threading.Event()
            real_insert = store.start

            def slow_insert(*args):  # a store that hangs until the test lets it go
                entered.set()
                assert release.wait(20), "the event loop was blocked by the store"
                return real_insert(*args)

            bot = await Bot(daemon, "alice", random_legal(2)).start()
            store.start = slow_insert
            creating = asyncio.ensure_future(daemon.create_match(["alice", "house:random", "house:random", "house:random"]))
            await asyncio.to_thread(entered.wait, 20)
            ticks = 0
            for _ in range(20):  # the loop keeps running while the row is being written
                await asyncio.sleep(0.005)
                ticks += 1
            pending_during_write = not creating.done()
            release.set()
            match_id = await creating
            result = await bot.wait_ended(match_id)

            def failing_insert(*args):
                raise OSError("disk full")

            store.start = failing_insert
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await daemon.create_match(["alice", "house:random", "house:random", "house:random"])
            store.start = real_insert
            leftover = dict(daemon.arena.runners)
            await bot.close()
            return ticks, pending_during_write, result, refused.value.code(), leftover

    ticks, pending_during_write, result, code, leftover = run(scenario())
    assert ticks == 20 and pending_during_write
    assert result.status == game_pb2.MATCH_STATUS_FINISHED
    assert code == grpc.StatusCode.INTERNAL and leftover == {}  # a row that was never written: no match


def test_a_match_being_started_survives_its_caller_and_shutdown(tmp_path):
    """While the running row is written the match is invisible, yet holds its seats;
    a caller cancelled meanwhile (an RPC deadline) does not strand the row, and a
    shutdown that begins meanwhile records the match as aborted instead of losing it."""
    import threading

    from heartsbot.proto import admin_pb2

    from heartsd.arena import Arena, SeatRequest
    from heartsd.config import Settings

    async def scenario():
        settings = Settings(db_path=str(tmp_path / "s.db"), admin_token="a", house_delay_ms=0)
        arena = Arena(settings, Store(settings.db_path))
        real_insert = arena.store.start
        gate = threading.Event()

        def gated_insert(*args):
            assert gate.wait(20)
            return real_insert(*args)

        arena.store.start = gated_insert
        seats = [SeatRequest(house="random")] * 4

        async def create():
            return await arena.create_match("standard", 4, admin_pb2.RulesetOptions(), game_pb2.MatchFormat(fixed_deals=1),
                                            None, seats, game_pb2.ClockSettings())

        caller = asyncio.ensure_future(create())
        await asyncio.sleep(0.05)
        invisible = dict(arena.runners)
        (start,) = arena._starts  # the shielded start, which the caller's cancellation does not reach
        (survivor,) = arena._starting.values()
        caller.cancel()
        await asyncio.gather(caller, return_exceptions=True)
        gate.set()
        await asyncio.wait_for(start, 20)
        await asyncio.wait_for(survivor.finished.wait(), 30)

        gate.clear()
        second = asyncio.ensure_future(create())
        await asyncio.sleep(0.05)
        stopping = asyncio.ensure_future(arena.shutdown(0.5))
        await asyncio.sleep(0.05)
        gate.set()
        aborted = await second
        await stopping
        return invisible, arena.store.get(survivor.id), arena.store.get(aborted.id)

    invisible, survivor, aborted = asyncio.run(scenario())
    assert invisible == {}
    assert survivor.status == "finished"
    assert (aborted.status, aborted.reason) == ("aborted", "server shutdown")


def test_a_failed_transaction_reports_its_own_error_not_the_rollbacks(tmp_path):
    """An attack pass: on a full disk SQLite rolls the transaction back by itself, and the
    ROLLBACK that followed raised "cannot rollback - no transaction is active", which then
    stood for the failure (in store_error and the log) instead of "database or disk is full"."""
    db = Database.open(str(tmp_path / "r.db"))
    with pytest.raises(ValueError, match="the body's own error"):
        with db.transaction() as tx:
            tx.execute("ROLLBACK")  # as SQLite does by itself on SQLITE_FULL
            raise ValueError("the body's own error")
    db.close()


def test_the_store_probe_fails_while_its_filesystem_is_full(tmp_path, monkeypatch):
    """An attack pass: the probe write (store_health.py) rewrites a page the write-ahead log
    already holds, so it passed on a full disk and the health check flapped to SERVING
    every 10 s while every real write failed. Now it needs PROBE_FREE_BYTES free on the
    store's filesystem too (its free space is the one thing faked here)."""
    import errno
    import os

    import heartsd.store

    store = Store(str(tmp_path / "p.db"))
    store.probe_write()  # room enough: it writes
    real = os.statvfs

    class Full:
        def __init__(self, path: str) -> None:
            self.f_frsize, self.f_bavail = real(path).f_frsize, 3

    monkeypatch.setattr(heartsd.store.os, "statvfs", Full)
    with pytest.raises(OSError) as failed:
        store.probe_write()
    assert failed.value.errno == errno.ENOSPC and "bytes free" in str(failed.value)
    store.close()
