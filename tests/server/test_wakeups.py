"""gRPC's wake-ups drained (heartsbot/wakeups.py): one event-loop pass handles every
completion queued, where grpc.aio's reader took one pass per completion."""

from __future__ import annotations

import asyncio
import collections
import functools
import logging
import os
import socket
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from heartsbot.wakeups import DrainedWakeups, drain_grpc_wakeups, drained
import heartsd.budgets
from heartsd.budgets import INFRA_CALLS_PER_PEER
from heartsd.config import Settings

from .harness import running_daemon, serve_once


class PollerCompletionQueue:
    """gRPC's reader, as grpcio 1.85's source has it (aio/completion_queue.pyx.pxi): a
    completion is queued *before* its byte is written to a non-blocking socket, and
    ``_handle_events`` reads one byte (BlockingIOError if another loop's reader took it)
    and then handles every completion queued."""

    def __init__(self) -> None:
        self.read_socket, self.write_socket = socket.socketpair()
        self.read_socket.setblocking(False)
        self.queue: collections.deque[int] = collections.deque()
        self.handled: list[int] = []
        self.calls = 0

    def complete(self, n: int) -> None:
        self.queue.append(n)
        self.write_socket.send(b"1")

    def _handle_events(self, loop: Any) -> None:
        self.calls += 1
        self.read_socket.recv(1)
        while self.queue:
            self.handled.append(self.queue.popleft())

    def close(self) -> None:
        self.read_socket.close()
        self.write_socket.close()


@pytest.fixture
def cq_on_a_loop() -> Any:
    """The model's reader registered on a fresh selector loop, as gRPC registers its own."""
    loop = asyncio.new_event_loop()
    cq = PollerCompletionQueue()
    loop.add_reader(cq.read_socket, functools.partial(cq._handle_events, loop))
    try:
        yield cq, loop
    finally:
        loop.remove_reader(cq.read_socket)
        loop.close()
        cq.close()


def test_one_pass_takes_every_waiting_completion_and_a_pass_with_nothing_waiting_is_skipped(cq_on_a_loop) -> None:
    cq, loop = cq_on_a_loop
    assert drain_grpc_wakeups(loop)
    reader = drained(loop)
    assert reader is not None
    for n in range(7):
        cq.complete(n)
    reader()
    assert cq.handled == list(range(7)) and cq.calls == 1
    assert (reader.passes, reader.dropped) == (1, 6)
    with pytest.raises(BlockingIOError):  # every byte taken: no more passes for these completions
        cq.read_socket.recv(16)
    reader()  # woken with nothing waiting (spurious): gRPC's reader is not called for nothing
    assert cq.calls == 1
    cq.complete(7)
    reader()
    assert cq.handled == list(range(8)) and cq.calls == 2 and reader.dropped == 6


def test_a_completion_whose_byte_comes_after_the_look_is_still_handled(cq_on_a_loop) -> None:
    """The byte of a completion queued between the wrapper's look and gRPC's reader stays,
    so the loop is woken for it once more (harmless: the queue is empty by then)."""
    cq, loop = cq_on_a_loop
    original = cq._handle_events

    def handle_with_one_arriving(context_loop: Any) -> None:
        if cq.calls == 0:
            cq.complete(99)  # arrives after the wrapper looked at the socket
        original(context_loop)

    reader = DrainedWakeups(cq.read_socket, functools.partial(handle_with_one_arriving, loop), loop)
    cq.complete(1)
    reader()
    assert cq.handled == [1, 99]
    reader()  # its byte
    assert cq.calls == 2 and cq.handled == [1, 99]


def test_a_completion_for_a_closed_loop_strands_none_queued_behind_it(cq_on_a_loop) -> None:
    """gRPC's reader stops at a completion whose loop is closed (``call_soon_threadsafe``
    raises "Event loop is closed": an earlier ``asyncio.run`` left a call open) and leaves
    the rest queued for the passes their bytes bring. A byte dropped before that pass would
    leave them with no wake-up at all, so the wrapper drops bytes only after a pass that
    handled the whole queue. (Seen in a pure-Python test pass: a bot in a later test of the
    same worker was never welcomed.)"""
    cq, loop = cq_on_a_loop
    assert drain_grpc_wakeups(loop)
    reader = drained(loop)
    assert reader is not None
    original = cq._handle_events

    def closed_loop_first(context_loop: Any) -> None:
        cq.calls += 1
        cq.read_socket.recv(1)
        if cq.queue and cq.queue[0] < 0:
            cq.queue.popleft()
            raise RuntimeError("Event loop is closed")
        cq.calls -= 1
        original(context_loop)

    reader.handler = functools.partial(closed_loop_first, loop)
    cq.complete(-1)  # for the closed loop
    cq.complete(1)
    cq.complete(2)
    with pytest.raises(RuntimeError, match="closed"):
        reader()
    assert cq.handled == [] and reader.dropped == 0
    reader()  # the wake-up the next byte brings
    assert cq.handled == [1, 2]
    reader()  # the last byte's pass finds the queue empty, as gRPC's own would
    assert cq.handled == [1, 2]
    with pytest.raises(BlockingIOError):
        cq.read_socket.recv(16)


def test_another_loop_reading_the_socket_gets_it_handed_back_to_grpcs_reader(cq_on_a_loop, caplog) -> None:
    """gRPC binds a reader per event loop to the same socket. When another loop's reader
    takes the byte this one's gRPC reader was to read, dropping bytes could leave a queued
    completion with no wake-up: the wrapper gives the socket back to gRPC's own reader."""
    cq, loop = cq_on_a_loop
    assert drain_grpc_wakeups(loop)
    reader = drained(loop)
    assert reader is not None
    original = cq._handle_events

    def raced(context_loop: Any) -> None:
        cq.read_socket.recv(1)  # the other loop's reader, just before this one
        original(context_loop)

    reader.handler = functools.partial(raced, loop)
    cq.complete(1)
    with caplog.at_level(logging.WARNING, logger="heartsbot"):
        reader()
    assert drained(loop) is None  # gRPC's reader (the one it was given) is the loop's reader again
    assert any("another event loop reads gRPC's socket" in r.getMessage() for r in caplog.records)


def test_a_loop_without_a_selector_map_is_left_alone() -> None:
    class Proactorish:  # asyncio's proactor loop keeps its proactor where a selector would be
        _selector = object()

    assert drain_grpc_wakeups(Proactorish()) is False  # type: ignore[arg-type]
    assert drained(Proactorish()) is None  # type: ignore[arg-type]


async def _health_burst(target: str, calls: int) -> list[int]:
    """``calls`` health checks, as many at once as one address may make (INFRA_CALLS_PER_PEER:
    a call holds its budget from its first byte since 6c0ed80, and 400 at once from one
    address met RESOURCE_EXHAUSTED in a CI run)."""
    gate = asyncio.Semaphore(INFRA_CALLS_PER_PEER)
    async with grpc.aio.insecure_channel(target) as channel:
        stub = health_pb2_grpc.HealthStub(channel)

        async def check() -> Any:
            async with gate:
                return await stub.Check(health_pb2.HealthCheckRequest())

        replies = await asyncio.wait_for(asyncio.gather(*(check() for _ in range(calls))), 60)
    return [r.status for r in replies]


def test_a_daemons_loop_drains_grpcs_wake_ups_and_loses_no_completion(tmp_path: Any, monkeypatch: Any) -> None:
    monkeypatch.setattr(heartsd.budgets, "INFRA_BURST", 1000)  # 400 checks at once from one address

    async def main() -> None:
        async with running_daemon(tmp_path) as daemon:
            loop = asyncio.get_running_loop()
            reader = drained(loop)
            assert reader is not None, "grpc.aio's reader was not found on the loop (a gRPC upgrade?)"
            assert drain_grpc_wakeups(loop)  # once is enough: a second call finds it there
            assert drained(loop) is reader
            before = reader.passes
            statuses = await _health_burst(daemon.target, 400)  # this process is the client too
            assert statuses == [health_pb2.HealthCheckResponse.SERVING] * 400
            assert reader.passes > before
            assert reader.dropped > 0  # some pass took more than one completion

    asyncio.run(main())


def test_the_setting_leaves_grpcs_reader_alone(tmp_path: Any) -> None:
    assert Settings.load(env={}).grpc_wakeup_drain is True
    assert Settings.load(env={"HEARTSD_GRPC_WAKEUP_DRAIN": "false"}).grpc_wakeup_drain is False

    async def main() -> None:
        async with running_daemon(tmp_path, grpc_wakeup_drain=False) as daemon:
            assert drained(asyncio.get_running_loop()) is None
            assert await _health_burst(daemon.target, 50) == [health_pb2.HealthCheckResponse.SERVING] * 50

    asyncio.run(main())


def test_a_loop_without_grpcs_reader_is_left_as_it_is() -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()  # no gRPC server or channel made on it
        before = [(key.fileobj, key.data) for key in loop._selector.get_map().values()]  # type: ignore[attr-defined]
        assert drain_grpc_wakeups(loop) is False and drained(loop) is None
        assert [(key.fileobj, key.data) for key in loop._selector.get_map().values()] == before  # type: ignore[attr-defined]

    asyncio.run(main())


def test_heartsd_serve_drains_on_asyncios_loop_and_says_so(tmp_path: Any) -> None:
    """`heartsd serve` makes its gRPC server apart from the embedded daemon's path: its
    start-up line says whether the drain is on (a benchmark found it off there once)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HEARTSD_")}
    assert '"grpc_wakeups_drained": true' in serve_once(tmp_path, env)
    err = serve_once(tmp_path, {**env, "HEARTSD_GRPC_WAKEUP_DRAIN": "false"})
    assert '"grpc_wakeups_drained": false' in err and "grpc wake-ups not drained" not in err


def test_on_uvloop_nothing_is_drained_and_the_log_says_why(tmp_path: Any) -> None:
    """uvloop has no selector map to find gRPC's reader in: the daemon leaves it as it is,
    serves as before, and says so."""
    pytest.importorskip("uvloop")
    env = {k: v for k, v in os.environ.items() if not k.startswith("HEARTSD_")}
    err = serve_once(tmp_path, {**env, "HEARTSD_EVENT_LOOP": "uvloop"})
    assert '"grpc_wakeups_drained": false' in err and "grpc wake-ups not drained" in err
    assert '"event_loop": "uvloop"' in err
