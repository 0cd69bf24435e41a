"""Checkpoints of many running matches share their transactions (heartsd/checkpoints.py).

At 1,024 live matches a deal ends about every 10 ms somewhere, and each end stored the
match's record in a transaction of its own, from a worker thread of its own: the
store's one connection and the default worker threads, which CreateMatch and finished
matches' results need too, went to checkpoints. Now the checkpoints that come due while
one batch is written are written together, in one transaction.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time

from heartsbot.proto import game_pb2, spectator_pb2

from .harness import run, running_daemon

P = game_pb2
MATCHES = 20


def _record(match_id: str) -> bytes:
    return spectator_pb2.MatchRecord(match_id=match_id, result=P.MatchResult(status=P.MATCH_STATUS_RUNNING)).SerializeToString()


def test_checkpoints_that_come_due_while_the_store_is_busy_share_one_transaction(tmp_path):
    ids = [f"m-ckpt{i}" for i in range(MATCHES)]

    async def scenario() -> tuple[int, list[int]]:
        async with running_daemon(tmp_path) as daemon:
            arena = daemon.arena
            store = arena.store
            for match_id in ids:
                store.insert_running(match_id, "standard", 4, ["a", "b", "c", "d"], 7)
            transactions = []
            real = store.db.transaction

            @contextlib.contextmanager
            def counted():  # type: ignore[no-untyped-def]
                transactions.append(threading.get_ident())
                with real() as tx:
                    yield tx

            store.db.transaction = counted  # type: ignore[method-assign]
            busy = threading.Event()
            blocker = threading.Thread(target=lambda: _hold(store, busy))
            blocker.start()
            await asyncio.to_thread(busy.wait)  # another writer holds the store
            try:
                first = asyncio.ensure_future(arena.checkpoint(ids[0], _record(ids[0]), 1, [1, 2, 3, 4]))
                await asyncio.sleep(0.1)  # its batch is waiting for the store
                rest = [asyncio.ensure_future(arena.checkpoint(m, _record(m), 2, [5, 6, 7, 8])) for m in ids[1:]]
                await asyncio.sleep(0.1)
            finally:
                busy.clear()  # the other writer lets go
            await asyncio.gather(first, *rest)
            blocker.join()
            store.db.transaction = real  # type: ignore[method-assign]
            return len(transactions), [store.get(m).deals_played for m in ids]

    count, deals = run(scenario())
    assert deals == [1] + [2] * (MATCHES - 1)  # every checkpoint stored
    assert count == 2, f"{count} transactions for {MATCHES} checkpoints"  # the first, then the 19 together


def _hold(store, busy: threading.Event) -> None:  # type: ignore[no-untyped-def]
    """Hold the store's one connection, as a long write would, until ``busy`` is cleared."""
    with store.db._lock:
        busy.set()
        while busy.is_set():
            time.sleep(0.01)
