"""A person's pass over the Playboard and the pages around it (headless Chromium): a
narrow phone, a connection that drops, a clock that runs low, a language chosen by link.

Each test drives the pages as a person does against house bots on a real daemon.
"""

from __future__ import annotations

import json
import re
from typing import Any

from playwright.sync_api import Browser, Page, expect

from .browser import DESKTOP, NARROW, screenshot, watch_errors
from .harness import ThreadedDaemon
from .test_browser_play import (BOXES, _full_trick, _overlaps, at_the_moon_choice, click_turn, label, open_seat,
                                 start_from_lobby, turn)

# Each card of the hand and the Pass button, as a person sees them where the page is now (no
# scrolling): whether the point at its centre is it (not the clock bar over it, not off the
# screen), and the page's scroll.
UNCOVERED = """() => {
  const seen = (node) => {
    const r = node.getBoundingClientRect();
    const x = r.left + r.width / 2, y = r.top + r.height / 2;
    const at = x >= 0 && y >= 0 && x < innerWidth && y < innerHeight ? document.elementFromPoint(x, y) : null;
    return { what: node.dataset.card ?? node.id, shown: Boolean(at && node.contains(at)), top: r.top, bottom: r.bottom,
             under: at ? (at.id || at.className) : 'off the screen' };
  };
  return { scrollY: window.scrollY,
           nodes: [...document.querySelectorAll('#hand [data-card], #pass-button')].map(seen) };
}"""


def covered(page: Page) -> list[dict[str, Any]]:
    """The hand's cards (and the Pass button) a person cannot see or click where the page is."""
    seen = page.evaluate(UNCOVERED)
    return [node for node in seen["nodes"] if not node["shown"]]


def click_at_centre(page: Page, selector: str) -> None:
    """A tap where the element is on the screen now: no scrolling first (Playwright's click
    scrolls, and tries other scrolls when something covers the element)."""
    box = page.locator(selector).first.bounding_box()
    assert box is not None, selector
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)


def test_on_a_narrow_phone_every_card_of_the_hand_shows_above_the_clock(tmp_path, browser: Browser) -> None:
    """Before (a person's pass at 375x667): the clock bar, fixed at the bottom of the screen,
    covered the hand's second row of cards (and the Pass button was below the screen) until
    the page was scrolled: a person could neither see nor tap those cards. The table now gives
    way on a short screen, so the whole hand and the Pass button are on the screen with the
    clock, in every language, and the seats and the trick still do not overlap."""
    with ThreadedDaemon(tmp_path, web_house_delay_ms=300, web_tables_per_peer=3) as daemon:
        for lang in ("en", "id", "vi"):
            page = browser.new_page(viewport=NARROW)
            errors = watch_errors(page)
            page.goto(f"{daemon.url}/")
            page.select_option("#lang", lang)
            start_from_lobby(page, daemon.url)
            expect(page.locator("#pass-button")).to_be_visible()
            expect(page.locator("#clock")).to_be_visible()
            assert page.evaluate("window.scrollY") == 0
            assert not covered(page), (lang, covered(page))
            if lang == "en":
                screenshot(page, "playboard-narrow-pass")
            for k in range(3):  # tapped where they are, as a person does
                click_at_centre(page, f"#hand [data-card]:nth-child({k + 1})")
            expect(page.locator("#hand .card.lifted")).to_have_count(3)
            click_at_centre(page, "#pass-button")
            plays = 0
            while plays < 3:
                now = turn(page)
                assert now == "play", now
                page.wait_for_function("() => !document.querySelector('#clock').hidden")
                assert page.evaluate("window.scrollY") == 0, lang
                assert not covered(page), (lang, covered(page))
                boxes = page.evaluate(BOXES)
                assert not _overlaps(boxes), (lang, _overlaps(boxes))
                if lang == "en" and plays == 0:
                    screenshot(page, "playboard-narrow-play")
                click_at_centre(page, "#hand .card.legal")
                plays += 1
            assert page.evaluate("document.documentElement.scrollWidth") <= NARROW["width"]
            assert not errors, errors
            page.close()


def test_tables_of_3_4_5_and_7_give_way_on_a_narrow_phone_and_keep_their_seats_apart(tmp_path, browser: Browser) -> None:
    """The table gives way on a short screen down to a floor per table size (playboard.js
    TABLE_FLOOR). At 375x667 a hand of 17 cards (three rows) and its Pass button show above
    the clock for 3 to 5 players; on a screen shorter still (375x480) the table stops at its
    floor, where its seats and a full trick's cards still do not overlap. 7 players keep
    the table they had (their seats need it): the hand's cards show, the page scrolls for the rest."""
    with ThreadedDaemon(tmp_path, web_house_delay_ms=500, web_tables_per_peer=4) as daemon:
        for players in (3, 4, 5, 7):
            page = browser.new_page(viewport=NARROW)
            errors = watch_errors(page)
            page.goto(f"{daemon.url}/")
            page.select_option("#ruleset", "classic")
            page.select_option("#players", str(players))
            expect(page.locator(f"#opponent-{players - 1}")).to_be_visible()
            page.click("#play-button")
            page.wait_for_url(re.compile(r"/play/"))
            expect(page.locator("#pass-button")).to_be_visible()
            hidden = [c["what"] for c in covered(page)]
            assert hidden == ([] if players < 7 else ["pass-button"]), (players, hidden)
            boxes = _full_trick(page, players)
            assert not _overlaps(boxes), (players, _overlaps(boxes))
            page.set_viewport_size({"width": NARROW["width"], "height": 480})
            boxes = page.evaluate(BOXES)
            assert not _overlaps(boxes), (players, "at the floor", _overlaps(boxes))
            assert page.evaluate("document.documentElement.scrollWidth") <= NARROW["width"]
            assert not errors, errors
            page.close()


class CuttableSeat:
    """The Playboard's seat socket, routed through the test: ``cut()`` drops the connection
    (as a phone losing its network does) and refuses every new one until ``restore()``;
    ``answers`` holds what the page sent the server, each parsed."""

    def __init__(self) -> None:
        self.offline = False
        self.hold = False  # the server's messages wait (a slow network) until release()
        self.held: list[tuple[Any, Any]] = []
        self.answers: list[dict[str, Any]] = []
        self.refused = 0
        self._live: list[tuple[Any, Any]] = []

    def __call__(self, ws: Any) -> None:
        if self.offline:
            self.refused += 1
            ws.close(code=1011, reason="offline")
            return
        server = ws.connect_to_server()
        self._live.append((ws, server))

        def from_page(message: Any) -> None:
            self.answers.append(json.loads(message))
            server.send(message)

        def from_server(message: Any) -> None:
            if self.hold:
                self.held.append((ws, message))
            else:
                ws.send(message)

        ws.on_message(from_page)
        server.on_message(from_server)

    def release(self) -> None:
        self.hold = False
        for ws, message in self.held:
            ws.send(message)
        self.held.clear()

    def cut(self) -> None:
        self.offline = True
        for ws, server in self._live:
            ws.close(code=1011, reason="offline")
            server.close()
        self._live.clear()

    def restore(self) -> None:
        self.offline = False


def _to_a_play_request(page: Page) -> None:
    while (now := turn(page)) == "pass":
        click_turn(page, now, now)
    assert now == "play", now


def test_a_card_clicked_while_reconnecting_is_kept_said_and_sent_once_when_back(tmp_path, browser: Browser) -> None:
    """Before (a person's pass): a card clicked while the page was reconnecting did nothing at
    all, and said nothing but the status line (which the next drawing replaced). Now the
    page keeps the choice for the open request, says so where the person clicked and to a
    screen reader, and sends it once the connection is back, once: the card is played, as
    the person's (HUMAN), with nothing refused."""
    from heartsbot.proto import game_pb2

    seat = CuttableSeat()
    with ThreadedDaemon(tmp_path, web_house_delay_ms=200, grace_ms=20_000, human_decision_ms=30_000) as daemon:
        page = browser.new_page(viewport=DESKTOP)
        errors = watch_errors(page)
        page.route_web_socket(re.compile(r"/socket$"), seat)
        match_id = start_from_lobby(page, daemon.url)
        _to_a_play_request(page)
        request_id = page.evaluate("window.arena.state().request.id")
        seat.cut()
        expect(page.locator("#status")).to_contain_text("reconnecting")
        for _ in range(100):  # the page tries again meanwhile (refused: still offline)
            if seat.refused:
                break
            page.wait_for_timeout(100)
        assert seat.refused >= 1
        card = page.locator("#hand .card.legal").first.get_attribute("data-card")
        page.click(f"#hand [data-card='{card}']")
        note = page.locator("#pending")
        expect(note).to_be_visible()
        expect(note).to_have_text(f"Not connected: {label(card)} will be played as soon as the connection is back.")
        expect(page.locator("#announce")).to_have_text(note.inner_text())
        expect(page.locator(f"#hand [data-card='{card}']")).to_have_class(re.compile(r"\bchosen\b"))
        screenshot(page, "playboard-pending-play")
        page.wait_for_timeout(1500)  # still offline: nothing was sent meanwhile
        assert [a for a in seat.answers if a.get("request_id") == request_id] == []
        seat.restore()
        expect(note).to_be_hidden(timeout=15_000)
        page.wait_for_function(f"() => window.arena.state().request?.id !== {request_id!r}", timeout=15_000)
        sent = [a for a in seat.answers if a.get("request_id") == request_id]
        assert sent == [{"type": "answer", "request_id": request_id, "play": card}], sent
        runner = daemon.arena.runners[match_id]
        mine = [d for d in list(runner.decisions) if d.seat == 0]
        assert all(d.rejected == 0 for d in mine), mine
        assert mine[-1].provenance == game_pb2.PROVENANCE_HUMAN
        assert not [e for e in errors if e.startswith("pageerror")], errors
        page.close()


def test_a_card_clicked_before_the_reconnected_seats_snapshot_is_kept_not_sent_on_a_guess(
        tmp_path, browser: Browser) -> None:
    """The socket is open again but the seat's snapshot has not come yet (a slow network):
    the request the page shows may be over by now, so a card clicked then is kept as while
    reconnecting, not sent on the page's guess, and goes once the snapshot says the request
    is still open."""
    seat = CuttableSeat()
    with ThreadedDaemon(tmp_path, web_house_delay_ms=200, grace_ms=20_000, human_decision_ms=30_000) as daemon:
        page = browser.new_page(viewport=DESKTOP)
        errors = watch_errors(page)
        page.route_web_socket(re.compile(r"/socket$"), seat)
        start_from_lobby(page, daemon.url)
        _to_a_play_request(page)
        request_id = page.evaluate("window.arena.state().request.id")
        seat.cut()
        expect(page.locator("#status")).to_contain_text("reconnecting")
        seat.hold = True
        seat.restore()
        for _ in range(100):  # connected again, the server's messages held
            if seat._live:
                break
            page.wait_for_timeout(100)
        assert seat._live
        card = page.locator("#hand .card.legal").first.get_attribute("data-card")
        page.click(f"#hand [data-card='{card}']")
        expect(page.locator("#pending")).to_contain_text("Not connected")
        page.wait_for_timeout(500)
        assert [a for a in seat.answers if a.get("request_id") == request_id] == []
        seat.release()
        expect(page.locator("#pending")).to_be_hidden(timeout=15_000)
        page.wait_for_function(f"() => window.arena.state().request?.id !== {request_id!r}", timeout=15_000)
        assert [a for a in seat.answers if a.get("request_id") == request_id] == [
            {"type": "answer", "request_id": request_id, "play": card}]
        assert not [e for e in errors if e.startswith("pageerror")], errors
        page.close()


def test_a_choice_kept_while_reconnecting_is_not_sent_once_its_request_is_over(tmp_path, browser: Browser) -> None:
    """A card clicked while the connection was down, for a request the server settled
    meanwhile (the person's time ran out: the server played for them), is never sent when
    the connection is back: the page says it was not, and the server's line says what it did."""
    seat = CuttableSeat()
    with ThreadedDaemon(tmp_path, web_house_delay_ms=200, grace_ms=500, human_decision_ms=3000,
                        human_bank_ms=0) as daemon:
        page = browser.new_page(viewport=DESKTOP)
        errors = watch_errors(page)
        page.route_web_socket(re.compile(r"/socket$"), seat)
        match_id = start_from_lobby(page, daemon.url)
        _to_a_play_request(page)
        request_id = page.evaluate("window.arena.state().request.id")
        before = len([d for d in list(daemon.arena.runners[match_id].decisions) if d.seat == 0])
        seat.cut()
        card = page.locator("#hand .card.legal").first.get_attribute("data-card")
        page.click(f"#hand [data-card='{card}']")
        expect(page.locator("#pending")).to_contain_text("Not connected")
        runner = daemon.arena.runners[match_id]
        # The server settles the request without the page (the grace period, then its default).
        for _ in range(150):
            if len([d for d in list(runner.decisions) if d.seat == 0]) > before:
                break
            page.wait_for_timeout(100)
        else:
            raise AssertionError("the server never settled the request")
        seat.restore()
        note = page.locator("#pending")
        expect(note).to_have_text(f"Not sent: {label(card)} was for a decision that is over (the server made it).",
                                  timeout=15_000)
        page.wait_for_timeout(1000)
        assert [a for a in seat.answers if a.get("request_id") == request_id] == []
        assert not [e for e in errors if e.startswith("pageerror")], errors
        page.close()



# What the page's live region said, in order (each change of its text).
RECORD_SAID = """() => {
  window.said = [];
  const region = document.querySelector('#announce');
  new MutationObserver(() => { if (region.textContent) window.said.push(region.textContent); })
    .observe(region, { childList: true, characterData: true, subtree: true });
}"""


def test_a_screen_reader_is_told_once_per_request_when_the_clock_runs_low(tmp_path, browser: Browser) -> None:
    """Before (a screen reader's pass): the clock was drawn only (a red number under 5 s),
    never said: a person who could not see it lost decisions to the clock unwarned. With 10 s
    left before the server decides (the decision's time and what is left of the bank), the
    live region says so, once per request; a request answered in time is never warned of."""
    with ThreadedDaemon(tmp_path, web_house_delay_ms=0, human_decision_ms=30_000, human_bank_ms=0,
                        grace_ms=60_000) as daemon:
        page = browser.new_page(viewport=DESKTOP)
        errors = watch_errors(page)
        page.clock.install()
        start_from_lobby(page, daemon.url)
        expect(page.locator("#pass-button")).to_be_visible()
        page.evaluate(RECORD_SAID)
        page.clock.fast_forward(15_000)  # 15 s of the page's 30: nothing said yet
        page.wait_for_timeout(600)
        assert not [s for s in page.evaluate("window.said") if "left" in s], page.evaluate("window.said")
        page.clock.fast_forward(6_000)  # 9 s left
        page.wait_for_function("() => window.said.some((s) => s.includes('left'))", timeout=5_000)
        page.clock.fast_forward(3_000)
        page.wait_for_timeout(600)
        warned = [s for s in page.evaluate("window.said") if "left" in s]
        assert len(warned) == 1, warned
        said = re.fullmatch(r"(\d+) seconds left to pass your cards\.", warned[0])  # 9 less the real time gone by
        assert said and 3 <= int(said.group(1)) <= 10, warned
        click_turn(page, "pass", "")
        assert turn(page) == "play"
        page.wait_for_timeout(600)
        assert len([s for s in page.evaluate("window.said") if "left" in s]) == 1  # a new request: not warned yet
        page.select_option("#lang", "vi")
        page.clock.fast_forward(22_000)
        page.wait_for_function("() => window.said.some((s) => s.includes('giây'))", timeout=5_000)
        warned = [s for s in page.evaluate("window.said") if "giây" in s]
        said = re.fullmatch(r"Còn (\d+) giây để đánh bài\.", warned[0])
        assert said and 2 <= int(said.group(1)) <= 10, warned
        expect(page.locator("#clock strong")).to_have_class(re.compile(r"\blow\b"))
        assert not errors, errors
        page.close()


def test_a_low_clock_at_the_moon_choice_is_said_in_its_dialog(tmp_path, browser: Browser) -> None:
    """The moon choice is a modal dialog: the page behind it, its live region with it, is
    inert to a screen reader there. Its low clock is said in the dialog (its own live
    region): 15 s a decision, no bank, so the third of it (5 s) is the threshold."""
    from heartsbot.proto import game_pb2

    with ThreadedDaemon(tmp_path, human_decision_ms=15_000, human_bank_ms=0) as daemon:
        runner, page, errors = at_the_moon_choice(daemon, browser)
        dialog = page.get_by_role("dialog", name="You shot the moon!")
        note = dialog.locator(".moon-note")
        assert note.get_attribute("aria-live") == "assertive"
        expect(note).to_have_text(re.compile(r"^[1-5] seconds? left to choose\.$"), timeout=15_000)
        dialog.locator("[data-moon='subtract_from_self']").click()
        expect(page.locator("#result")).to_contain_text("Match over")
        record = daemon.arena.store.get(runner.id).record
        moon = [d for d in record.decisions if d.kind == game_pb2.DECISION_KIND_MOON]
        assert len(moon) == 1 and moon[0].provenance == game_pb2.PROVENANCE_HUMAN
        assert not errors, errors
        page.context.close()


def test_a_language_given_in_the_address_is_kept_by_the_links_followed_from_the_page(
        tmp_path, browser: Browser) -> None:
    """Before (a person's pass): /leaderboard?lang=vi was Vietnamese, but its links (the
    lobby, a match) led to pages in the browser's saved language: only the menu kept a
    choice. A page opened with ?lang=xx now gives xx to every link of this site it shows, and
    the saved choice is left as it was (a shared link does not change it); the menu's choice
    is saved, and the address says it too, so a reload keeps what was chosen."""
    with ThreadedDaemon(tmp_path) as daemon:
        context = browser.new_context(viewport=DESKTOP)
        page = context.new_page()
        errors = watch_errors(page)
        page.goto(f"{daemon.url}/")
        page.select_option("#lang", "id")  # the saved choice: Indonesian
        page.goto(f"{daemon.url}/leaderboard?lang=vi")
        expect(page.locator("header nav a").first).to_have_text("Sảnh")
        hrefs = page.eval_on_selector_all("a[href]", "links => links.map((a) => a.getAttribute('href'))")
        assert hrefs and all(re.search(r"[?&]lang=vi(&|#|$)", h) for h in hrefs), hrefs
        page.locator("header nav a").first.click()  # the lobby
        page.wait_for_url(re.compile(r"/\?lang=vi$"))
        expect(page.locator("#play-button")).to_have_text("Chơi với máy")
        assert page.evaluate("localStorage.getItem('lang')") == "id"  # the saved choice is unchanged
        page.goto(f"{daemon.url}/leaderboard")  # no ?lang: the saved choice
        expect(page.locator("header nav a").first).to_have_text("Lobi")
        links = page.eval_on_selector_all("header a[href]", "links => links.map((a) => a.getAttribute('href'))")
        assert links == ["/", "/", "/leaderboard"], links  # nothing added without ?lang
        page.goto(f"{daemon.url}/?lang=vi")
        page.select_option("#lang", "en")  # the menu on a page opened with ?lang: chosen, saved, and in the address
        page.wait_for_url(re.compile(r"/\?lang=en$"))
        assert page.evaluate("localStorage.getItem('lang')") == "en"
        page.reload()
        expect(page.locator("header nav a").first).to_have_text("Lobby")
        assert page.locator("header nav a").nth(1).get_attribute("href") == "/leaderboard?lang=en"
        assert not errors, errors
        context.close()


def one_deal_seat(daemon: ThreadedDaemon, browser: Browser, viewport: dict[str, int]) -> tuple[Any, Page, list[str]]:
    """A person's seat at a standard match of one deal against heuristic house bots, its page
    open: (the match's runner, the page, its errors)."""
    from heartsd.arena import SeatRequest

    def prepare(runner: Any) -> None:
        runner.house_delay_s = 0.0

    seats = [SeatRequest(human="human:h-0ne0dea1"), *[SeatRequest(house="heuristic")] * 3]
    return open_seat(daemon, browser, "standard", seats, None, prepare, viewport)


def test_at_the_match_end_the_result_is_said_and_shown(tmp_path, browser: Browser) -> None:
    """Before (a person's pass on a phone, with a screen reader): at the match's end the last
    thing said was the last card played, and the result (who won, the person's rank, the
    replay's link) was below the screen, the focus fallen to the page with the last card.
    The result is now said, and its heading takes the focus (on the screen; the replay's
    link next by Tab), in the page's language."""
    with ThreadedDaemon(tmp_path) as daemon:
        for lang in ("en", "vi"):
            runner, page, errors = one_deal_seat(daemon, browser, NARROW)
            if lang != "en":
                page.select_option("#lang", lang)
            while (now := turn(page)) != "over":
                click_turn(page, now, now)
            said = page.locator("#announce")
            if lang == "en":
                expect(said).to_have_text(re.compile(
                    r"(^|\. )Match over\. (You won!|Winners?: .+\.) You finished [1-4] of 4\.$"))  # after the last card, if new
            else:
                expect(said).to_have_text(re.compile(r"(^|\. )Trận đấu kết thúc\. .+ Bạn xếp hạng [1-4] trên 4\.$"))
            heading = page.locator("#result h2")
            expect(heading).to_be_focused()
            shown = page.evaluate("""() => { const r = document.querySelector('#result h2').getBoundingClientRect();
              const at = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
              return Boolean(at && at.closest('#result')) && r.bottom <= innerHeight; }""")
            assert shown
            page.keyboard.press("Tab")
            expect(page.locator("#result a").first).to_be_focused()
            if lang == "en":
                screenshot(page, "playboard-narrow-result")
            assert not errors, errors
            page.context.close()


def test_the_headers_links_are_one_line_each_on_a_narrow_phone(tmp_path, browser: Browser) -> None:
    """Before: on a 375 px phone the Vietnamese header's "Bảng xếp hạng" broke over two lines
    ("Bảng xếp" over "hạng"), as if two links. Each link of the header is one line, in every
    language, and the page is no wider than the screen."""
    with ThreadedDaemon(tmp_path) as daemon:
        page = browser.new_page(viewport=NARROW)
        errors = watch_errors(page)
        for lang in ("en", "id", "vi"):
            page.goto(f"{daemon.url}/leaderboard?lang={lang}")
            expect(page.locator("header nav a").first).to_be_visible()
            lines = page.eval_on_selector_all(
                "header a", """links => links.map((a) => {
                  const range = document.createRange();
                  range.selectNodeContents(a);  // its text's lines (a link of a flex row is a box of its own)
                  return [a.textContent, new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size];
                })""")
            assert all(n == 1 for _, n in lines), (lang, lines)
            assert page.evaluate("document.documentElement.scrollWidth") <= NARROW["width"], lang
        assert not errors, errors
        page.close()


def test_a_request_that_never_reaches_the_server_is_said_in_the_pages_language(tmp_path, browser: Browser) -> None:
    """Before (a person's pass, the network gone or a proxy in front down): the lobby's Play
    said "Lỗi: Failed to fetch" on a Vietnamese page (the browser's own English words), and a
    proxy's error page in place of the JSON said "Error: Bad Gateway". Each is now said as
    what it means for the person, in the page's language (and again in the one chosen)."""
    with ThreadedDaemon(tmp_path) as daemon:
        page = browser.new_page(viewport=DESKTOP)
        errors = watch_errors(page)
        page.goto(f"{daemon.url}/?lang=vi")
        expect(page.locator("#play-button")).to_be_visible()
        page.route("**/api/play", lambda route: route.abort("internetdisconnected"))
        page.click("#play-button")
        said = page.locator("#play-error")
        expect(said).to_have_text("Lỗi: không kết nối được với máy chủ; hãy kiểm tra kết nối mạng rồi thử lại")
        page.select_option("#lang", "en")
        expect(said).to_have_text("Error: the server could not be reached; check your connection and try again")
        page.unroute("**/api/play")
        page.route("**/api/play", lambda route: route.fulfill(status=502, content_type="text/html",
                                                              body="<html><h1>502 Bad Gateway</h1></html>"))
        page.click("#play-button")
        expect(said).to_have_text("Error: the server is not answering (HTTP 502); try again in a moment")
        page.select_option("#lang", "id")
        expect(said).to_have_text("Galat: server tidak menjawab (HTTP 502); coba lagi sebentar lagi")
        assert not [e for e in errors if e.startswith("pageerror")], errors
        page.close()


def test_the_leaderboards_bot_names_stay_in_view_as_its_table_scrolls_sideways_on_a_phone(
        tmp_path, browser: Browser) -> None:
    """Before (a person's pass on a 375 px phone): the leaderboard's table (nine columns)
    scrolls sideways, and scrolled to its ratings it showed numbers with no bot beside them:
    which bot a row was, was off the screen. The rank and the bot stay in view (sticky)
    wherever the table is scrolled, and a column scrolled under them does not show through."""
    from .browser import RoutedJSON
    from .test_browser_ladder import QUITTER

    names = ["house-heuristic", "house-heuristic-2", "montecarlo-information-set-search-v2", "alpha-beta-pruner-v3"]
    board = RoutedJSON({"ruleset": "standard", "rulesets": ["standard"],
                        "entries": [{**QUITTER, "bot": n, "owner": n, "rank": i + 1} for i, n in enumerate(names)]})
    with ThreadedDaemon(tmp_path) as daemon:
        page = browser.new_page(viewport=NARROW)
        errors = watch_errors(page)
        page.route("**/api/leaderboard?*", board)
        page.goto(f"{daemon.url}/leaderboard?ruleset=standard&lang=vi")
        expect(page.locator("#standings tbody tr")).to_have_count(len(names))
        assert page.evaluate("(() => { const b = document.querySelector('#board'); return b.scrollWidth > b.clientWidth; })()")
        page.evaluate("document.querySelector('#board').scrollLeft = 1e6")  # to the last column
        seen = page.evaluate("""() => [...document.querySelectorAll('#standings tbody tr')].map((row) => {
          const on = (cell) => { const r = cell.getBoundingClientRect(); const x = r.left + Math.min(r.width / 2, 12), y = r.top + r.height / 2;
            const at = document.elementFromPoint(x, y); return x >= 0 && x < innerWidth && Boolean(at && cell.contains(at)); };
          return [on(row.cells[0]), on(row.cells[1]), on(row.cells[row.cells.length - 1])]; })""")
        assert seen == [[True, True, True]] * len(names), seen
        screenshot(page, "leaderboard-scrolled-phone")
        assert not [e for e in errors if e.startswith("pageerror")], errors
        page.close()


def test_a_tables_seats_are_groups_not_landmarks(tmp_path, browser: Browser) -> None:
    """A screen reader's pass: each seat of the table was a region landmark (a <section> with
    a name), so a table of 4 added 4 landmarks (7 for 7 players) beside the page's banner,
    navigation, main and side, and moving by landmarks went seat by seat before reaching
    the scores. A seat is a named group (as the trick is), read as before."""
    with ThreadedDaemon(tmp_path) as daemon:
        page = browser.new_page(viewport=DESKTOP)
        errors = watch_errors(page)
        start_from_lobby(page, daemon.url)
        expect(page.locator("#pass-button")).to_be_visible()
        expect(page.get_by_role("region")).to_have_count(0)
        expect(page.get_by_role("group", name=re.compile(r"^You, South: 13 cards, 0 points$"))).to_have_count(1)
        expect(page.get_by_role("group", name=re.compile(r"^heuristic \(house, seat \d\), (West|North|East): "))).to_have_count(3)
        assert not errors, errors
        page.close()
