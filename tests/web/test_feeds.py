"""The spectators' side of the web front without a browser: live feeds carry no hidden
card and stay bounded for a slow reader; replays only once a match is over."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp

from heartsd.web import sockets

from tests.server.harness import run
from tests.web.harness import house_match, web_daemon


def test_a_live_feed_shows_played_cards_only_and_replays_wait_for_the_end(tmp_path) -> None:
    async def main() -> None:
        async with web_daemon(tmp_path, house_delay_ms=5) as web, aiohttp.ClientSession() as http:
            runner = await house_match(web.arena, deals=2)
            async with http.get(f"{web.url}/api/replay/{runner.id}") as r:
                assert r.status == 409 and "still running" in (await r.json())["error"]
            played: set[str] = set()
            snapshots = 0
            async with http.ws_connect(f"{web.url}/ws/watch/{runner.id}") as ws:
                async for message in ws:
                    snapshot = json.loads(message.data)
                    snapshots += 1
                    assert snapshot["hand"] is None and snapshot["hands"] is None and snapshot["you"] == -1
                    assert snapshot["passed"] is None and snapshot["received"] is None and snapshot["request"] is None
                    for trick in (snapshot["trick"], snapshot["last_trick"]):
                        for card in (trick or {}).get("cards", []):
                            played.add(card["card"])
            # Snapshots are coalesced (at most ten a second), so only some cards are seen;
            # the last snapshot has the result.
            assert snapshots > 1 and played and snapshot["result"]["status"] == "finished"
            await runner.finished.wait()
            async with http.get(f"{web.url}/api/replay/{runner.id}") as r:
                index = await r.json()
            assert [d["number"] for d in index["deals"]] == [0, 1] and all(d["tricks"] == 13 for d in index["deals"])
            async with http.get(f"{web.url}/api/replay/{runner.id}/deals/1") as r:
                frames = (await r.json())["frames"]
            assert len(frames) == 1 + 4 + 52 and frames[0]["decision"] is None
            assert all(len(set(sum(f["hands"], []))) == sum(f["hand_sizes"]) for f in frames)
            assert frames[-1]["totals"] == list(web.arena.store.get(runner.id).record.result.totals)
            # A deal's number in ASCII digits only: int() alone served deal 1 at "１" and "+1",
            # deal 10 at "1_0" (an attack pass: one deal under many addresses).
            for path, status in ((f"/api/replay/{runner.id}/deals/7", 404), ("/api/replay/m-nope", 404),
                                 (f"/api/replay/{runner.id}/deals/x", 404), (f"/api/replay/{runner.id}/deals/%EF%BC%91", 404),
                                 (f"/api/replay/{runner.id}/deals/+1", 404), (f"/api/replay/{runner.id}/deals/%201", 404),
                                 (f"/api/replay/{runner.id}/deals/0_1", 404), (f"/api/replay/{runner.id}/deals/01", 200)):
                async with http.get(web.url + path) as r:
                    assert r.status == status, path
            async with http.ws_connect(f"{web.url}/ws/watch/{runner.id}") as ws:  # over: the page loads the replay
                refusal = json.loads((await ws.receive(timeout=5)).data)
                assert refusal["status"] == 409

    run(main())


class StuckSocket:
    """A WebSocket whose reader never reads: every send waits forever."""

    def __init__(self) -> None:
        self.closed = False
        self.sends = 0
        self.closed_with: tuple[int, bytes] | None = None

    async def send_str(self, data: str) -> None:
        self.sends += 1
        await asyncio.Event().wait()

    async def close(self, code: int = 1000, message: bytes = b"") -> None:
        self.closed = True
        self.closed_with = (code, message)


def test_a_slow_reader_costs_one_snapshot_then_is_cut_off(monkeypatch) -> None:
    """However many changes happen while a reader is stuck, one snapshot is in flight and
    nothing queues; after SEND_TIMEOUT_S the socket is closed."""
    monkeypatch.setattr(sockets, "SEND_TIMEOUT_S", 0.3)

    async def main() -> tuple[StuckSocket, int]:
        ws = StuckSocket()
        changed = asyncio.Event()
        built = 0

        def snapshot() -> dict[str, Any]:
            nonlocal built
            built += 1
            return {"v": built}

        sender = asyncio.get_running_loop().create_task(sockets.send_latest(ws, snapshot, changed))  # type: ignore[arg-type]
        for _ in range(10_000):
            changed.set()
            await asyncio.sleep(0)
        await asyncio.wait_for(sender, 5)
        return ws, built

    ws, built = run(main())
    assert ws.sends == 1 and built == 1
    assert ws.closed_with is not None and ws.closed_with[0] == 1008 and b"too slow" in ws.closed_with[1]


def test_a_missing_page_or_file_gets_a_proper_404(tmp_path) -> None:
    """Before: a missing static file was a 404 with an empty octet-stream body, which
    Chromium takes for a failed download (ERR_INVALID_RESPONSE), and a page address that
    is not one (/nope, /watch/) showed the raw JSON {"error": ...} as the page."""
    async def main() -> None:
        async with web_daemon(tmp_path) as web, aiohttp.ClientSession() as http:
            async with http.get(f"{web.url}/static/nope.js") as r:
                assert r.status == 404 and (await r.json())["error"] == "no file /static/nope.js"
            async with http.get(f"{web.url}/static/js/watch.js") as r:
                assert r.status == 200 and "replay" in await r.text()  # real files still served
            async with http.get(f"{web.url}/static/../app.py") as r:
                assert r.status in (403, 404) and "aiohttp" not in await r.text()
            for path in ("/nope", "/watch/", "/bots/", "/leaderboard/"):
                async with http.get(f"{web.url}{path}") as r:
                    body = await r.text()
                    assert r.status == 404 and r.content_type == "text/html", path
                    assert '<a href="/">' in body and "Not Found" in body, path
            async with http.get(f"{web.url}/api/nope") as r:
                assert r.status == 404 and "error" in await r.json()  # the API keeps JSON

    run(main())
