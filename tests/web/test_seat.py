"""A person's seat over the web front: the same runner, checks and clock as a bot.

Each test drives the real daemon and its web front over HTTP and WebSocket (aiohttp's
client), as the Playboard does.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp
from heartsbot.proto import game_pb2

from heartsd.records import verify

from tests.server.harness import run
from tests.web.harness import take_seat, web_daemon

P = game_pb2


def client(**kw: Any) -> aiohttp.ClientSession:
    return aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True), **kw)


class Page:
    """What the Playboard does with its socket: read snapshots, send answers."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.ws = ws
        self.snapshots: list[dict[str, Any]] = []
        self.sent: set[str] = set()  # requests answered (snapshots already in flight may still show them open)

    async def next(self, timeout: float = 20) -> dict[str, Any]:
        message = await self.ws.receive(timeout=timeout)
        assert message.type == aiohttp.WSMsgType.TEXT, message
        snapshot = json.loads(message.data)
        self.snapshots.append(snapshot)
        return snapshot

    async def until(self, test: Any, timeout: float = 30) -> dict[str, Any]:
        async def wait() -> dict[str, Any]:
            while True:
                snapshot = await self.next()
                if test(snapshot):
                    return snapshot

        return await asyncio.wait_for(wait(), timeout)

    async def answer(self, request: dict[str, Any], **what: Any) -> None:
        self.sent.add(request["id"])
        await self.ws.send_str(json.dumps({"type": "answer", "request_id": request["id"], **what}))

    def open_request(self, snapshot: dict[str, Any]) -> dict[str, Any] | None:
        """The snapshot's request if it is open and not answered yet (or refused since)."""
        request = snapshot.get("request")
        if not request or request["answered"]:
            return None
        refused = snapshot["rejection"] and snapshot["rejection"]["request_id"] == request["id"]
        return request if request["id"] not in self.sent or refused else None


def visible_cards(snapshot: dict[str, Any]) -> set[str]:
    cards = set(snapshot["hand"] or [])
    for key in ("passed", "received"):
        cards |= set(snapshot[key] or [])
    for trick in (snapshot["trick"], snapshot["last_trick"]):
        if trick:
            cards |= {c["card"] for c in trick["cards"]}
    for hand in snapshot["hands"] or []:
        cards |= set(hand)
    return cards


async def play_out(page: Page, on_request: Any = None) -> dict[str, Any]:
    """Answer every request with the first legal choice until the match ends."""
    while True:
        snapshot = await page.until(lambda s: page.open_request(s) is not None or s["result"] is not None, 60)
        if snapshot["result"] is not None:
            return snapshot
        request = page.open_request(snapshot)
        assert request is not None
        if on_request is not None and await on_request(page, snapshot, request):
            continue
        if request["kind"] == "pass":
            await page.answer(request, **{"pass": request["legal"][: request["pass_count"]]})
        elif request["kind"] == "play":
            await page.answer(request, play=request["legal"][0])
        else:
            await page.answer(request, moon=request["default_moon"])


async def answer_once(page: Page, runner: Any, snapshot: dict[str, Any]) -> tuple[list[Any], int]:
    """Answer the snapshot's open request with a legal choice; once the runner has taken
    it: seat 0's decisions, and the index of that one."""
    request = page.open_request(snapshot)
    assert request is not None
    before = len([d for d in runner.decisions if d.seat == 0])
    if request["kind"] == "pass":
        await page.answer(request, **{"pass": request["legal"][:3]})
    else:
        await page.answer(request, play=request["legal"][0])
    await page.until(lambda s: len([d for d in runner.decisions if d.seat == 0]) > before, 10)
    return [d for d in runner.decisions if d.seat == 0], before


def test_a_person_plays_a_whole_match_and_the_record_says_human(tmp_path) -> None:
    async def main() -> None:
        async with web_daemon(tmp_path) as web, client() as http:
            seat = await take_seat(http, web.url, opponents=["heuristic", "random", "heuristic"])
            match_id = seat["match_id"]
            async with http.ws_connect(f"{web.url}/api/seat/{match_id}/socket") as ws:
                page = Page(ws)
                final = await play_out(page)
            assert final["result"]["status"] == "finished"
            stored = web.arena.store.get(match_id)
            record = stored.record
            assert verify(stored) is None
            assert record.seats[0].human and record.seats[0].name.startswith("human:")
            assert not any(s.human for s in record.seats[1:])
            mine = [d for d in record.decisions if d.seat == 0]
            assert mine and all(d.provenance == P.PROVENANCE_HUMAN for d in mine)
            assert all(d.provenance == P.PROVENANCE_HOUSE for d in record.decisions if d.seat != 0)
            assert [s["points"] for s in final["deal_scores"]] == [list(d.points) for d in record.deal_scores]
            assert final["totals"] == list(record.result.totals)
            # The seat was shown its own hand and played cards only: never another hand.
            dealt = {d.deal_number: d for d in record.deals}
            for snapshot in page.snapshots:
                assert snapshot["hands"] is None and snapshot["you"] == 0
                if snapshot["deal"] < 0:
                    continue
                hands = dealt[snapshot["deal"]].hands
                others = {f"{'23456789TJQKA'[c.rank - 2]}{'CDHS'[c.suit - 1]}" for h in hands[1:] for c in h.cards}
                played = {c["card"] for t in (snapshot["trick"], snapshot["last_trick"]) if t for c in t["cards"]}
                leaked = (visible_cards(snapshot) & others) - played - set(snapshot["received"] or [])
                assert not leaked, (snapshot["deal"], leaked)

    run(main())


def test_web_answers_are_checked_by_the_runner_with_reasons(tmp_path) -> None:
    """A bad answer from the page is rejected by the runner like a bot's, and the page is
    told why; after max_illegal rejections the default is played (provenance ILLEGAL)."""

    async def main() -> None:
        async with web_daemon(tmp_path, max_illegal=3) as web, client() as http:
            seat = await take_seat(http, web.url)
            async with http.ws_connect(f"{web.url}/api/seat/{seat['match_id']}/socket") as ws:
                page = Page(ws)
                snapshot = await page.until(lambda s: page.open_request(s) is not None)
                request = page.open_request(snapshot)
                assert request["kind"] == "pass"
                await page.answer(request, play=request["legal"][0])  # the wrong kind of answer
                refused = await page.until(lambda s: s["rejection"] is not None)
                assert refused["rejection"]["code"] == "malformed" and "pass_cards" in refused["rejection"]["reason"]
                assert refused["rejection"]["retry"] and not refused["request"]["answered"]
                await page.answer(request, **{"pass": ["ZZ", "QS", "AH"]})  # not a card
                refused = await page.until(lambda s: s["rejection"] is not None and "not a card" in s["rejection"]["reason"])
                await ws.send_str("not json at all")
                refused = await page.until(lambda s: s["rejection"] is not None and "only answers" in s["rejection"]["reason"])
                await page.answer(request, **{"pass": request["legal"][:3]})
                # Now an illegal play: a card that is not in the legal list.
                while True:  # play on until a request where some card of the hand is not legal
                    snapshot = await page.until(lambda s: page.open_request(s) is not None)
                    request = page.open_request(snapshot)
                    if request["kind"] == "play" and len(request["legal"]) < len(snapshot["hand"]):
                        break
                    await page.answer(request, play=request["legal"][0])
                illegal = next(c for c in snapshot["hand"] if c not in request["legal"])
                for attempt in range(3):
                    await page.answer(request, play=illegal)
                    refused = await page.until(lambda s: s["rejection"] is not None)
                    assert refused["rejection"]["code"] == "illegal", refused["rejection"]
                    assert refused["rejection"]["retry"] == (attempt < 2)
                def moved_on(s: dict[str, Any]) -> bool:
                    return s["request"] is None or s["request"]["id"] != request["id"]

                if not moved_on(refused):
                    await page.until(moved_on)
                runner = web.arena.runners[seat["match_id"]]
                mine = [d for d in runner.decisions if d.seat == 0]
                assert mine[0].provenance == P.PROVENANCE_HUMAN and mine[0].rejected == 2
                assert any(d.provenance == P.PROVENANCE_ILLEGAL and d.rejected == 3 for d in mine)

    run(main())


def test_only_the_person_who_took_the_seat_can_act(tmp_path) -> None:
    async def main() -> None:
        async with web_daemon(tmp_path) as web, client() as http, client() as other:
            seat = await take_seat(http, web.url)
            match_id = seat["match_id"]
            async with http.get(f"{web.url}/api/seat/{match_id}") as r:
                assert r.status == 200
            async with other.get(f"{web.url}/api/seat/{match_id}") as r:
                error = (await r.json())["error"]
                # the page to watch it at, whole (a newcomer's pass: "/watch/" with no match)
                assert r.status == 403 and "belongs to the person" in error and f"/watch/{match_id}" in error, error
            other.cookie_jar.update_cookies({f"seat-{match_id}": "a-guessed-secret"})
            for session in (other,):
                try:
                    async with session.ws_connect(f"{web.url}/api/seat/{match_id}/socket"):
                        raise AssertionError("a stranger opened the seat's socket")
                except aiohttp.WSServerHandshakeError as exc:
                    assert exc.status == 403
            async with other.get(f"{web.url}/api/seat/m-doesnotexist") as r:
                assert r.status == 404
            # The spectator link is another page with another feed: no hand at all.
            async with other.ws_connect(f"{web.url}/ws/watch/{match_id}") as ws:
                snapshot = json.loads((await ws.receive(timeout=10)).data)
                assert snapshot["you"] == -1 and snapshot["hand"] is None and snapshot["hands"] is None
                assert snapshot["request"] is None

    run(main())


def test_other_sites_cannot_take_seats_or_open_them(tmp_path) -> None:
    async def main() -> None:
        async with web_daemon(tmp_path) as web, client() as http:
            async with http.post(f"{web.url}/api/play", json={"ruleset": "standard", "players": 4},
                                 headers={"Origin": "http://evil.example"}) as r:
                assert r.status == 403
            seat = await take_seat(http, web.url)
            try:
                async with http.ws_connect(f"{web.url}/api/seat/{seat['match_id']}/socket", origin="http://evil.example"):
                    raise AssertionError("a cross-site socket was accepted")
            except aiohttp.WSServerHandshakeError as exc:
                assert exc.status == 403

    run(main())


def test_bad_requests_to_take_a_seat_get_reasons(tmp_path) -> None:
    async def main() -> None:
        async with web_daemon(tmp_path, web_tables_per_peer=1) as web, client() as http:
            cases = [
                ({"ruleset": "nope", "players": 4}, 400, "unknown ruleset"),
                ({"ruleset": "standard", "players": 5}, 400, "standard"),
                ({"ruleset": "standard", "players": "4"}, 400, "players"),
                ({"ruleset": "standard", "players": 4, "opponents": ["mc", "mc", "mc"]}, 400, "opponents may be"),
                ({"ruleset": "standard", "players": 4, "opponents": ["random"]}, 400, "a list of 3"),
            ]
            for body, status, words in cases:
                async with http.post(f"{web.url}/api/play", json=body) as r:
                    assert r.status == status, (body, r.status)
                    assert words in (await r.json())["error"], body
            async with http.post(f"{web.url}/api/play", data="{not json", headers={"Content-Type": "application/json"}) as r:
                assert r.status == 400
            await take_seat(http, web.url)
            async with http.post(f"{web.url}/api/play", json={"ruleset": "standard", "players": 4}) as r:
                assert r.status == 429 and "finish one first" in (await r.json())["error"]

    run(main())


def test_web_callers_are_rate_limited(tmp_path) -> None:
    async def main() -> None:
        async with web_daemon(tmp_path, web_rate_per_s=0.5, web_burst=3) as web, client() as http:
            statuses = []
            for _ in range(5):
                async with http.get(f"{web.url}/api/options") as r:
                    statuses.append(r.status)
                    if r.status == 429:
                        assert int(r.headers["Retry-After"]) >= 1
            assert statuses == [200, 200, 200, 429, 429]

    run(main())


def test_open_live_feeds_per_caller_are_capped(tmp_path) -> None:
    async def main() -> None:
        async with web_daemon(tmp_path, max_spectator_calls_per_peer=2, house_matches=1, house_delay_ms=50) as web, client() as http:
            web.arena.start_house_matches()
            while not web.arena.runners:
                await asyncio.sleep(0.05)
            match_id = next(iter(web.arena.runners))
            first = await http.ws_connect(f"{web.url}/ws/watch/{match_id}")
            second = await http.ws_connect(f"{web.url}/ws/watch/{match_id}")
            try:
                async with http.ws_connect(f"{web.url}/ws/watch/{match_id}"):
                    raise AssertionError("a third feed was opened")
            except aiohttp.WSServerHandshakeError as exc:
                assert exc.status == 429
            await first.close()
            await asyncio.sleep(0.1)
            third = await http.ws_connect(f"{web.url}/ws/watch/{match_id}")
            await third.close()
            await second.close()

    run(main())


def test_a_person_who_leaves_is_defaulted_then_resumes_like_a_bot(tmp_path) -> None:
    """Closing the page is a disconnect: after the grace period the server plays the seat's
    defaults (DISCONNECT); opening it again resumes with the pending request."""

    async def main() -> None:
        # House bots 50 ms apart: a seat defaulted at once while away must not see the match end.
        async with web_daemon(tmp_path, grace_ms=200, human_decision_ms=60_000, web_house_delay_ms=50) as web, client() as http:
            seat = await take_seat(http, web.url)
            match_id = seat["match_id"]
            async with http.ws_connect(f"{web.url}/api/seat/{match_id}/socket") as ws:
                first = Page(ws)
                await first.until(lambda s: first.open_request(s) is not None)
            runner = web.arena.runners[match_id]
            for _ in range(100):
                if any(d.seat == 0 and d.provenance == P.PROVENANCE_DISCONNECT for d in runner.decisions):
                    break
                await asyncio.sleep(0.05)
            assert any(d.seat == 0 and d.provenance == P.PROVENANCE_DISCONNECT for d in runner.decisions)
            async with http.ws_connect(f"{web.url}/api/seat/{match_id}/socket") as ws:
                page = Page(ws)
                snapshot = await page.until(lambda s: page.open_request(s) is not None)
                mine, before = await answer_once(page, runner, snapshot)
                assert mine[before].provenance == P.PROVENANCE_HUMAN, [P.Provenance.Name(d.provenance) for d in mine]

    run(main())


def test_a_person_has_their_own_clock(tmp_path) -> None:
    """The person's decision time is theirs (human_decision_ms), enforced by the runner:
    no answer in time is a TIMEOUT default; bots keep the match's clock."""

    async def main() -> None:
        async with web_daemon(tmp_path, human_decision_ms=250, human_bank_ms=0, decision_ms=5000) as web, client() as http:
            seat = await take_seat(http, web.url)
            async with http.ws_connect(f"{web.url}/api/seat/{seat['match_id']}/socket") as ws:
                page = Page(ws)
                snapshot = await page.until(lambda s: page.open_request(s) is not None)
                assert page.open_request(snapshot)["decision_ms"] <= 250
                runner = web.arena.runners[seat["match_id"]]
                assert runner.seats[0].clock.decision_ms == 250 and runner.seats[1].clock.decision_ms == 5000
                await page.until(lambda s: any(n["provenance"] == "timeout" for n in s["notices"]), 10)
                assert runner.decisions[0].seat == 0 or any(
                    d.seat == 0 and d.provenance == P.PROVENANCE_TIMEOUT for d in runner.decisions)

    run(main())


def test_a_second_page_on_a_seat_closes_the_first_with_a_reason_it_can_show(tmp_path) -> None:
    """Before: the page a second tab replaced kept its socket and showed the seat as its
    own; its clicks were refused with "too many rejected answers; reload the page", and its
    reconnect took the seat back from the other tab, for ever. Now it is closed at once
    with 4000 and a reason (the page says so and waits for "Play here")."""

    async def main() -> None:
        async with web_daemon(tmp_path, human_decision_ms=60_000) as web, client() as http:
            seat = await take_seat(http, web.url)
            url = f"{web.url}/api/seat/{seat['match_id']}/socket"
            async with http.ws_connect(url) as first_ws:
                first = Page(first_ws)
                await first.until(lambda s: first.open_request(s) is not None)
                async with http.ws_connect(url) as second_ws:
                    second = Page(second_ws)
                    snapshot = await second.until(lambda s: second.open_request(s) is not None)
                    closed = None
                    while closed is None:
                        message = await first_ws.receive(timeout=10)
                        if message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED):
                            closed = (first_ws.close_code, message.extra)
                    assert closed == (4000, "this seat is open in another tab or window")
                    request = second.open_request(snapshot)
                    assert request is not None and request["kind"] == "pass"
                    await second.answer(request, **{"pass": request["legal"][:3]})
                    await second.until(lambda s: s["request"] is None or s["request"]["id"] != request["id"]
                                       or s["request"]["answered"], 10)

    run(main())


def test_a_seat_on_auto_play_says_so_and_the_person_takes_it_back(tmp_path) -> None:
    """Before: after repeated time-outs the server played the seat by default, the page
    showed nothing of it (its requests were answered before a click could land), and only
    a reload took the seat back. Now the snapshot says `auto`, and a "back" message takes
    the seat back: the next request waits for the person again."""

    async def main() -> None:
        async with web_daemon(tmp_path, human_decision_ms=300, human_bank_ms=0, auto_after=1,
                              web_house_delay_ms=50) as web, client() as http:
            seat = await take_seat(http, web.url)
            runner = web.arena.runners[seat["match_id"]]
            async with http.ws_connect(f"{web.url}/api/seat/{seat['match_id']}/socket") as ws:
                page = Page(ws)
                assert (await page.next())["auto"] is False
                await page.until(lambda s: s["auto"], 20)  # one time-out, and the server plays for the seat
                await ws.send_str(json.dumps({"type": "back"}))
                snapshot = await page.until(lambda s: not s["auto"] and page.open_request(s) is not None, 20)
                mine, before = await answer_once(page, runner, snapshot)
                assert mine[0].provenance == P.PROVENANCE_TIMEOUT
                assert mine[before].provenance == P.PROVENANCE_HUMAN, [P.Provenance.Name(d.provenance) for d in mine]

    run(main())


def test_back_while_an_auto_played_request_is_open_keeps_the_seat_back(tmp_path) -> None:
    """Before: on auto-play a request waits AUTO_LISTEN_S (20 ms) for its seat, then the
    default is played. A "back" that came in that window left the request on its 20 ms: it
    timed out, and that time-out put the seat straight back on auto-play (auto_after), so
    the person's click was undone (a browser test saw it once under load). Now "back" gives
    the open request the seat's clock, from the moment the person came back."""

    async def main() -> None:
        async with web_daemon(tmp_path, human_decision_ms=2000, human_bank_ms=0, auto_after=1,
                              web_house_delay_ms=50) as web, client() as http:
            seat = await take_seat(http, web.url)
            human = web.front.seats.get(seat["match_id"])
            assert human is not None
            slot = human.slot
            async with http.ws_connect(f"{web.url}/api/seat/{seat['match_id']}/socket") as ws:
                page = Page(ws)
                await page.until(lambda s: s["auto"], 20)  # one time-out: the server plays for the seat
                for _ in range(20_000):  # the next request opened on auto-play, caught inside its 20 ms
                    pending = slot.pending
                    if pending is not None and pending.auto:
                        break
                    await asyncio.sleep(0.0005)
                else:
                    raise AssertionError("no auto-played request was seen open")
                assert human.session is not None and human.answer(human.session, {"type": "back"})
                await asyncio.sleep(0.3)  # 15 times the auto-play window
                assert slot.auto is False and slot.pending is pending, "the click was undone"
                assert not pending.auto and pending.deadline - pending.sent_at >= 1.9  # the seat's clock

    run(main())


def test_leaving_a_table_is_the_seat_holders_alone_and_ends_the_match_at_once(tmp_path) -> None:
    """"Leave table" (POST /api/seat/<id>/leave) is checked as every request that plays a
    seat: the seat's cookie, this site only, JSON only. The person's own request ends the
    match at once, recorded as cancelled; a second one finds it over."""
    async def main() -> None:
        async with web_daemon(tmp_path) as web, client() as http, client() as other:
            seat = await take_seat(http, web.url)
            match_id = seat["match_id"]
            url = f"{web.url}/api/seat/{match_id}/leave"
            async with other.post(url, json={}) as r:
                assert r.status == 403 and "belongs to the person" in (await r.json())["error"]
            async with http.post(url, json={}, headers={"Origin": "http://evil.example"}) as r:
                assert r.status == 403
            async with http.post(url, data="{}", headers={"Content-Type": "text/plain"}) as r:
                assert r.status == 415  # a form another site could send without asking
            async with http.post(f"{web.url}/api/seat/m-doesnotexist/leave", json={}) as r:
                assert r.status == 404
            assert match_id in web.arena.runners
            async with http.post(url, json={}) as r:
                assert r.status == 200 and (await r.json())["left"] is True
            stored = web.arena.store.get(match_id)
            assert (stored.status, stored.reason) == ("cancelled", "the person left the table")
            async with http.post(url, json={}) as r:
                assert r.status == 409 and "over already" in (await r.json())["error"]

    run(main())
