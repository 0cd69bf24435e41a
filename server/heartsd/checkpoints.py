"""Running matches' checkpoints, written together.

A match stores its record so far at a deal's end (at most every
``runner.CHECKPOINT_EVERY_S``), so that a crash keeps it. With a thousand live matches
that is a hundred checkpoints a second, and written one transaction each, from the
default worker threads, they took every worker and the store's one connection in turn:
a CreateMatch or a finished match's result waited behind them, and the worker threads'
commits contended with the event loop for the interpreter. Here every checkpoint that
comes due while a batch is being written joins the next batch, and a batch is one
transaction in one worker thread. What a crash can lose is unchanged: a checkpoint is
written as soon as the batch before it is.

>>> import asyncio
>>> batches = []
>>> writer = CheckpointWriter(lambda batch: batches.append(sorted(batch)))
>>> async def deal_ends(*matches):
...     await asyncio.gather(*(writer.write(m, b"record", 1, [0, 0, 0, 0]) for m in matches))
>>> asyncio.run(deal_ends("m-1", "m-2", "m-3"))
>>> asyncio.run(deal_ends("m-1"))
>>> batches  # three checkpoints due together: one transaction
[['m-1', 'm-2', 'm-3'], ['m-1']]
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import NamedTuple


class Checkpoint(NamedTuple):
    record: bytes  # a serialized MatchRecord, the match so far
    deals: int
    totals: list[int]


class CheckpointWriter:
    """Batches checkpoints for ``write_many`` (called in a worker thread with
    {match id: Checkpoint}; the store writes them in one transaction)."""

    def __init__(self, write_many: Callable[[dict[str, Checkpoint]], None]) -> None:
        self._write_many = write_many
        self._pending: dict[str, Checkpoint] = {}
        self._written: asyncio.Future[None] | None = None  # done when the pending batch is
        self._writer: asyncio.Task[None] | None = None

    async def write(self, match_id: str, record: bytes, deals: int, totals: list[int]) -> None:
        """Store ``match_id``'s checkpoint; return when it is written (raise what the
        write raised). A newer checkpoint of a match still waiting replaces the older,
        so at most one per match is ever held."""
        loop = asyncio.get_running_loop()
        self._pending[match_id] = Checkpoint(record, deals, totals)
        if self._written is None:
            self._written = loop.create_future()
        written = self._written
        if self._writer is None:
            self._writer = loop.create_task(self._drain())
        await asyncio.shield(written)  # a caller that gives up does not cancel the others' batch

    async def _drain(self) -> None:
        try:
            while self._pending:
                batch, self._pending = self._pending, {}
                written, self._written = self._written, None
                assert written is not None
                try:
                    await asyncio.to_thread(self._write_many, batch)
                except asyncio.CancelledError:  # the loop is closing: nobody waits any more
                    written.cancel()
                    if self._written is not None:
                        self._written.cancel()
                    self._pending, self._written = {}, None
                    raise
                except Exception as exc:  # every caller of the batch sees it
                    written.set_exception(exc)
                    written.exception()  # retrieved: callers that gave up do not warn
                else:
                    written.set_result(None)
        finally:
            self._writer = None
