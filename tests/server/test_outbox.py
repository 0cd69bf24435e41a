"""The bot session's outbox: a FIFO with one waiting writer (the part of asyncio.Queue used)."""

from __future__ import annotations

import asyncio

import pytest

from heartsd.sessions import Outbox


def test_outbox_is_fifo_wakes_its_reader_and_survives_a_cancelled_get():
    async def scenario() -> list[object]:
        box = Outbox()
        with pytest.raises(asyncio.QueueEmpty):
            box.get_nowait()
        waiting = asyncio.get_running_loop().create_task(box.get())
        await asyncio.sleep(0)
        box.put_nowait(b"a")
        box.put_nowait(None)
        got = [await waiting, await box.get()]
        cancelled = asyncio.get_running_loop().create_task(box.get())
        await asyncio.sleep(0)
        cancelled.cancel()
        await asyncio.gather(cancelled, return_exceptions=True)
        box.put_nowait(b"b")
        assert box.qsize() == 1 and not box.empty()
        got.append(await asyncio.wait_for(box.get(), 1))
        assert box.empty()
        return got

    assert asyncio.run(scenario()) == [b"a", None, b"b"]
