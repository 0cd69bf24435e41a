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



def test_a_busy_outbox_looks_its_loop_up_once(monkeypatch: pytest.MonkeyPatch):
    """Each ``asyncio.get_running_loop()`` makes a ``getpid`` system call (it checks the
    loop belongs to this process): a writer waiting once per message made ~0.6 of them
    per decision, the only system call heartsd made beyond the ping-pong floor's."""
    looked_up = []
    real = asyncio.get_running_loop

    def counted() -> asyncio.AbstractEventLoop:
        looked_up.append(1)
        return real()

    async def scenario() -> list[object]:
        loop = real()
        box = Outbox()
        got = []
        monkeypatch.setattr(asyncio, "get_running_loop", counted)
        try:
            for i in range(100):
                waiting = loop.create_task(box.get())
                await asyncio.sleep(0)  # the writer waits: the box is empty
                box.put_nowait(bytes([i]))
                got.append(await waiting)
        finally:
            monkeypatch.undo()
        return got

    assert asyncio.run(scenario()) == [bytes([i]) for i in range(100)]
    assert len(looked_up) == 1
