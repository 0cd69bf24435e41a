"""A real daemon with its web front on loopback, for the web and browser tests.

:func:`web_daemon` runs it in this test's event loop (API tests with an aiohttp
client); :class:`ThreadedDaemon` runs it in a thread of its own, so a synchronous
Playwright browser can drive pages while the daemon's loop keeps playing.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator, Callable
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp

from heartsbot.proto import admin_pb2, game_pb2

from heartsd.arena import Arena, SeatRequest
from heartsd.config import Settings
from heartsd.logs import configure
from heartsd.server import embedded
from heartsd.web.app import WebFront

from tests.server.harness import ADMIN, BOTS

OUTPUT = Path(__file__).resolve().parents[2] / "test-output" / "web"  # screenshots (gitignored)


def web_settings(tmp_path: Path, **overrides: Any) -> Settings:
    configure("console", overrides.pop("log_level", "warning"), cache=False)
    flags: dict[str, Any] = dict(port=0, web="127.0.0.1:0", db_path=str(tmp_path / "heartsd.db"), admin_token=ADMIN,
                                 bot_tokens=BOTS, log_level="warning", web_house_delay_ms=0, decision_ms=2000,
                                 bank_ms=5000, grace_ms=3000)
    flags.update(overrides)
    return Settings.load(env={}, flags=flags)


@dataclass
class Web:
    arena: Arena
    front: WebFront
    grpc_port: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.front.port}"


@contextlib.asynccontextmanager
async def web_daemon(tmp_path: Path, **overrides: Any) -> AsyncIterator[Web]:
    settings = web_settings(tmp_path, **overrides)
    async with embedded(settings) as (arena, port):
        front = WebFront(settings, arena)
        await front.start()
        try:
            yield Web(arena, front, port)
        finally:
            await front.stop()


class ThreadedDaemon:
    """The daemon and its web front on an event loop in a background thread."""

    def __init__(self, tmp_path: Path, **overrides: Any) -> None:
        self.settings = web_settings(tmp_path, **overrides)
        self._ready: Future[Web] = Future()
        self._stop: asyncio.Event | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self._thread = threading.Thread(target=self._main, name="web-daemon", daemon=True)

    def __enter__(self) -> ThreadedDaemon:
        self._thread.start()
        self.web = self._ready.result(timeout=30)
        return self

    def __exit__(self, *exc: Any) -> None:
        assert self.loop is not None and self._stop is not None
        self.loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(30)

    @property
    def url(self) -> str:
        return self.web.url

    @property
    def arena(self) -> Arena:
        return self.web.arena

    def call(self, make: Callable[[], Any], timeout: float = 60) -> Any:
        """Run a coroutine made by ``make()`` on the daemon's loop and return its result."""
        assert self.loop is not None
        return asyncio.run_coroutine_threadsafe(make(), self.loop).result(timeout)

    def _main(self) -> None:
        asyncio.run(self._serve())

    async def _serve(self) -> None:
        self.loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        try:
            async with embedded(self.settings) as (arena, port):
                front = WebFront(self.settings, arena)
                await front.start()
                self._ready.set_result(Web(arena, front, port))
                await self._stop.wait()
                await front.stop()
        except BaseException as exc:  # noqa: BLE001 - reported to the test thread
            if not self._ready.done():
                self._ready.set_exception(exc)
            raise


async def take_seat(client: aiohttp.ClientSession, url: str, **body: Any) -> dict[str, Any]:
    """POST /api/play; the seat's cookie lands in the client's cookie jar."""
    async with client.post(f"{url}/api/play", json={"ruleset": "standard", "players": 4, **body}) as response:
        data = await response.json()
        assert response.status == 200, data
        return data  # type: ignore[no-any-return]


async def house_match(arena: Any, deals: int) -> Any:
    """A house-only match of ``deals`` deals, started on ``arena`` directly: its runner."""
    seats = [SeatRequest(house="heuristic"), SeatRequest(house="random")] * 2
    return await arena.create_match("standard", 4, admin_pb2.RulesetOptions(), game_pb2.MatchFormat(fixed_deals=deals),
                                    None, seats, game_pb2.ClockSettings())
