"""The Playboard in a real browser (headless Chromium): a person plays whole matches.

These drive the pages as a person does, by clicks or by keys, against house bots on a
real daemon, and compare what the page showed with the stored record.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any
from playwright.sync_api import Browser, Page, expect

from .browser import (DESKTOP, LONG_HYPHENATED, NARROW, PHONE, assert_one_line_in_text, overlapping, screenshot,
                      seat_labels, watch_errors)
from .harness import ThreadedDaemon

TURN = """() => {
  if (document.querySelector('#pass-button')) return 'pass';
  if (document.querySelector('#hand .card.legal')) return 'play';
  if (document.querySelector('#moon[open]')) return 'moon';
  const result = document.querySelector('#result');
  if (result && !result.hidden) return 'over';
  return false;
}"""


def turn(page: Page, timeout_ms: float = 30_000) -> str:
    return page.wait_for_function(TURN, timeout=timeout_ms).json_value()  # type: ignore[no-any-return]


def hand(page: Page) -> list[str]:
    return page.eval_on_selector_all("#hand [data-card]", "cards => cards.map(c => c.dataset.card)")


def lifted(page: Page) -> int:
    return page.locator("#hand .card.lifted").count()


def score_panel(page: Page) -> tuple[list[list[int]], list[int]]:
    rows = page.eval_on_selector_all(
        "#scores tbody tr", "rows => rows.map(r => [...r.querySelectorAll('td')].map(td => Number(td.dataset.points)))")
    totals = page.eval_on_selector_all("#scores tfoot td", "cells => cells.map(td => Number(td.dataset.points))")
    return rows, totals


def start_from_lobby(page: Page, url: str, by_keyboard: bool = False) -> str:
    page.goto(f"{url}/")
    expect(page.locator("#play-button")).to_be_visible()
    if by_keyboard:
        for _ in range(40):
            if page.evaluate("document.activeElement?.id") == "play-button":
                break
            page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement?.id") == "play-button"
        page.keyboard.press("Enter")
    else:
        page.click("#play-button")
    page.wait_for_url(re.compile(r"/play/m-[0-9a-f]+$"))
    return page.url.rsplit("/", 1)[1]


def check_record(daemon: ThreadedDaemon, match_id: str, page: Page) -> None:
    """The match is stored, the person's decisions are HUMAN, the panel is the record's."""
    stored = daemon.arena.store.get(match_id)
    assert stored is not None and stored.status == "finished", stored
    record = stored.record
    assert record.seats[0].human
    assert {d.provenance for d in record.decisions if d.seat == 0} == {7}  # PROVENANCE_HUMAN, every one
    rows, totals = score_panel(page)
    assert rows == [list(d.points) for d in record.deal_scores]
    assert totals == list(record.result.totals)


def test_a_person_plays_a_whole_standard_match_by_clicks(tmp_path, browser: Browser) -> None:
    with ThreadedDaemon(tmp_path) as daemon:
        page = browser.new_page(viewport=DESKTOP)
        errors = watch_errors(page)
        page.goto(f"{daemon.url}/")
        expect(page.locator("#play-button")).to_be_visible()
        screenshot(page, "lobby-desktop")
        match_id = start_from_lobby(page, daemon.url)
        first_pass, illegal_tried = True, False
        while (now := turn(page)) != "over":
            if now == "pass":
                cards = page.locator("#hand [data-card]")
                button = page.locator("#pass-button")
                if first_pass:
                    expect(page.locator("#pass-button")).to_have_text(re.compile(r"^Pass cards to (West|North|East)$"))
                    for k in range(4):
                        if k == 3:
                            expect(button).to_be_enabled()
                        else:
                            expect(button).to_be_disabled()
                        assert lifted(page) == k
                        cards.nth(k).click()  # the fourth stays down (one too many): three lifted
                    assert lifted(page) == 3
                    expect(button).to_be_enabled()
                    screenshot(page, "playboard-pass")
                    first_pass = False
                else:
                    for k in range(3):
                        cards.nth(k).click()
                button.click()
            elif now == "play":
                blocked = page.locator("#hand .card.not-legal")
                if not illegal_tried and blocked.count():
                    illegal = blocked.first.get_attribute("data-card")
                    before = hand(page)
                    blocked.first.click(force=True)  # an unmarked card: the page sends nothing, and says why
                    expect(page.locator("#rejection")).to_contain_text("cannot be played now: ")
                    assert hand(page) == before
                    assert page.evaluate("window.arena.state().request.answered") is False
                    page.evaluate(f"window.arena.play({illegal!r})")  # forced through the page's script
                    expect(page.locator("#rejection")).to_be_visible()
                    expect(page.locator("#rejection")).to_contain_text("Refused:")
                    reason = page.locator("#rejection").inner_text()
                    assert re.search(r"must follow|may not be played|first lead|not broken|queen of spades", reason), reason
                    assert illegal in hand(page)
                    screenshot(page, "playboard-refused")
                    illegal_tried = True
                page.locator("#hand .card.legal").first.click()
            else:
                raise AssertionError(f"unexpected turn {now}")
        expect(page.locator("#result")).to_contain_text("Match over")
        screenshot(page, "playboard-result")
        assert illegal_tried, "no play request ever had an unplayable card"
        check_record(daemon, match_id, page)
        assert not errors, errors


def test_a_person_plays_a_whole_standard_match_by_keyboard(tmp_path, browser: Browser) -> None:
    # House bots at a pace a page sees each state at (instant, a deal's end and the next
    # deal came in one snapshot, and the hand was never seen empty).
    with ThreadedDaemon(tmp_path, web_house_delay_ms=30) as daemon:
        page = browser.new_page(viewport=DESKTOP)
        errors = watch_errors(page)
        match_id = start_from_lobby(page, daemon.url, by_keyboard=True)

        def focus_hand() -> None:
            for _ in range(30):
                if page.evaluate("!!document.activeElement?.closest('#hand')"):
                    return
                page.keyboard.press("Tab")
            raise AssertionError("Tab never reached the hand")

        def focused_index() -> int:
            return page.evaluate("[...document.querySelectorAll('#hand [data-card]')].indexOf(document.activeElement)")

        # The hand is found with Tab once; from then on the focus stays in it, from deal to
        # deal and after the Pass button (a newcomer's pass: it fell to the page at each
        # deal's end, and Enter and the arrows did nothing until Tab found the hand again).
        first = True
        while (now := turn(page)) != "over":
            if first:
                focus_hand()
                first = False
            page.wait_for_function("() => !!document.activeElement?.closest('#hand')", timeout=10_000)
            if now == "pass":
                page.keyboard.press("Home")
                for k in range(3):
                    page.keyboard.press("Enter")  # lift the focused card
                    if k < 2:
                        page.keyboard.press("ArrowRight")
                assert lifted(page) == 3
                page.keyboard.press("Tab")
                assert page.evaluate("document.activeElement?.id") == "pass-button"
                page.keyboard.press("Enter")
            elif now == "play":
                target = page.eval_on_selector_all("#hand [data-card]",
                                                   "cards => cards.findIndex(c => c.classList.contains('legal'))")
                page.keyboard.press("Home")
                for _ in range(target):
                    page.keyboard.press("ArrowRight")
                assert focused_index() == target
                label = page.evaluate("document.activeElement.getAttribute('aria-label')")
                assert re.fullmatch(r"(Two|Three|Four|Five|Six|Seven|Eight|Nine|Ten|Jack|Queen|King|Ace) of "
                                    r"(clubs|diamonds|hearts|spades)", label), label
                page.keyboard.press("Enter")
            else:
                raise AssertionError(f"unexpected turn {now}")
        check_record(daemon, match_id, page)
        assert not errors, errors


def test_the_keyboard_keeps_its_place_in_the_hand_while_the_others_play(tmp_path, browser: Browser) -> None:
    """A keyboard pass: looking over one's hand with the arrow keys while the others played,
    the focus jumped back to the first card with every card played (a house bot's, every
    600 ms), and a screen reader said "Two of clubs" again each time: the hand could not be
    read through while waiting. With no card to play, the focused card keeps the focus; when
    the person's turn comes it goes to a card they can play, as before."""
    with ThreadedDaemon(tmp_path, web_house_delay_ms=1000) as daemon:
        page = browser.new_page(viewport=DESKTOP)
        errors = watch_errors(page)
        start_from_lobby(page, daemon.url)
        kept = 0
        while kept < 2:
            now = turn(page)
            click_turn(page, now, now)
            # The person's card is in, and another's turn is on (or the person's own again).
            waiting = page.wait_for_function("""() => { const s = window.arena.state();
              if (document.querySelector('#hand .card.legal')) return 'mine';
              return s.phase === 'playing' && !s.request && s.hand.length > 4 && s.v; }""").json_value()
            if waiting == "mine":
                continue
            page.locator("#hand [data-card]").first.focus()
            for _ in range(4):
                page.keyboard.press("ArrowRight")
            looked_at = page.evaluate("document.activeElement.dataset.card")
            assert looked_at == hand(page)[4]
            drawn = page.wait_for_function("""(v) => window.arena.state().v !== v && {
              mine: !!document.querySelector('#hand .card.legal'), focused: document.activeElement.dataset.card }""",
                                           arg=waiting).json_value()
            if not drawn["mine"]:  # another's card came: the place in the hand is kept
                assert drawn["focused"] == looked_at, drawn
                kept += 1
            else:  # the person's turn came at once: the focus is on a card to play
                assert page.evaluate("document.activeElement.classList.contains('legal')")
        assert not errors, errors
        page.close()


BOXES = """() => {
  const out = [];
  const add = (label, node) => { const r = node.getBoundingClientRect(); out.push([label, {x: r.x, y: r.y, w: r.width, h: r.height}]); };
  document.querySelectorAll('#table .seat').forEach((n) => add(`seat ${n.dataset.seat}`, n));
  document.querySelectorAll('#table .trick [data-card]').forEach((n) => add(`trick ${n.dataset.card}`, n));
  document.querySelectorAll('#hand [data-card]').forEach((n) => add(`hand ${n.dataset.card}`, n));
  return out;
}"""


def _overlaps(boxes: list[tuple[str, dict[str, float]]]) -> list[tuple[str, str]]:
    found = []
    for i, (a, p) in enumerate(boxes):
        for b, q in boxes[i + 1:]:
            dx = min(p["x"] + p["w"], q["x"] + q["w"]) - max(p["x"], q["x"])
            dy = min(p["y"] + p["h"], q["y"] + q["h"]) - max(p["y"], q["y"])
            if dx > 0.5 and dy > 0.5:
                found.append((a, b))
    return found


def _full_trick(page: Page, players: int) -> list[tuple[str, dict[str, float]]]:
    """Play (by clicks) until the table shows a complete trick of ``players`` cards; the
    boxes of the cards and seats, measured in the same instant (a house bot plays on soon)."""
    full = f"document.querySelectorAll('#table .trick [data-card]').length === {players}"
    for _ in range(200):
        now = page.wait_for_function(f"() => ({full}) ? ({BOXES})() : ({TURN})()", timeout=30_000).json_value()
        if isinstance(now, list):
            return now  # type: ignore[no-any-return]
        click_turn(page, now, f"no complete trick was shown ({now})")
    raise AssertionError("no complete trick was shown")


def click_turn(page: Page, now: str, otherwise: str) -> None:
    """Take the turn ``now`` ("pass" or "play") by clicks: the first three cards, or the
    first legal one; any other turn fails with ``otherwise``."""
    if now == "pass":
        for k in range(3):
            page.locator("#hand [data-card]").nth(k).click()
        page.click("#pass-button")
    elif now == "play":
        page.locator("#hand .card.legal").first.click()
    else:
        raise AssertionError(otherwise)


def test_tables_of_3_5_and_7_lay_out_without_overlapping_cards(tmp_path, browser: Browser) -> None:
    with ThreadedDaemon(tmp_path, web_house_delay_ms=500, web_tables_per_peer=3) as daemon:
        for players in (3, 5, 7):
            page = browser.new_page(viewport=DESKTOP)
            errors = watch_errors(page)
            page.goto(f"{daemon.url}/")
            page.select_option("#ruleset", "classic")
            page.select_option("#players", str(players))
            expect(page.locator(f"#opponent-{players - 1}")).to_be_visible()
            page.click("#play-button")
            page.wait_for_url(re.compile(r"/play/"))
            for name, size in (("desktop", DESKTOP), ("phone", PHONE)):
                page.set_viewport_size(size)
                boxes = _full_trick(page, players)
                assert sum(1 for label, _ in boxes if label.startswith("trick")) == players
                assert sum(1 for label, _ in boxes if label.startswith("seat")) == players
                assert not _overlaps(boxes), (players, name, _overlaps(boxes))
                width = page.evaluate("document.documentElement.scrollWidth")
                assert width <= size["width"], f"{players} players at {name} width scrolls sideways ({width}px)"

                screenshot(page, f"playboard-{players}-players-{name}")
            assert not errors, errors
            page.close()



RANKS = "23456789TJQKA"


def _by_rank(code: str) -> tuple[int, int]:
    """The conformance Shooter's order of cards (rank, then suit), for codes like "QS"."""
    return RANKS.index(code[0]), "CDHS".index(code[1])


def open_seat(daemon: ThreadedDaemon, browser: Browser, ruleset: str, seats: list[Any], seed: int | None,
              prepare: Callable[[Any], None], viewport: dict[str, int]) -> tuple[Any, Page, list[str]]:
    """A match of one deal whose first seat (``seats[0]``, a person's) is given to a page
    holding its seat cookie, that page open: (the match's runner, the page, its errors).
    ``prepare`` arranges the runner before it deals (house delays, Feeders)."""
    from heartsbot.proto import admin_pb2, game_pb2

    from heartsd.web.seats import HumanSeat, secret_digest

    secret = "a-secret-for-an-arranged-seat-only"
    arena, front = daemon.arena, daemon.web.front

    async def arrange() -> Any:
        runner = await arena.create_match(ruleset, len(seats), admin_pb2.RulesetOptions(),
                                          game_pb2.MatchFormat(fixed_deals=1), seed, seats,
                                          game_pb2.ClockSettings(), prepare=prepare)
        front.seats.by_match[runner.id] = HumanSeat(arena, runner, runner.seats[0], secret_digest(secret), "test")
        return runner

    runner = daemon.call(arrange)
    context = browser.new_context(viewport=viewport)
    context.add_cookies([{"name": f"seat-{runner.id}", "value": secret, "url": daemon.url}])
    page = context.new_page()
    errors = watch_errors(page)
    page.goto(f"{daemon.url}/play/{runner.id}")
    return runner, page, errors


def at_the_moon_choice(daemon: ThreadedDaemon, browser: Browser) -> tuple[Any, Page, list[str]]:
    """A classic deal arranged like the conformance kit's moon check (its seed, Feeders at
    the other seats), played by clicks on the Shooter's cards until the person has taken
    every penalty card and is asked the moon choice: (the match's runner, the page, its errors)."""
    from heartsd.arena import SeatRequest
    from heartsd.conformance import Feeder, moon_seed

    def prepare(runner: Any) -> None:
        runner.house_delay_s = 0.0
        for slot in runner.seats[1:]:
            slot.house = Feeder()

    seats = [SeatRequest(human="human:h-moon"), *[SeatRequest(house="random")] * 3]
    runner, page, errors = open_seat(daemon, browser, "classic", seats, moon_seed("classic", 0), prepare, DESKTOP)
    while (now := turn(page)) != "moon":
        if now == "pass":
            lowest = sorted(hand(page), key=_by_rank)[:3]
            for code in lowest:
                page.click(f"#hand [data-card='{code}']")
            page.click("#pass-button")
        elif now == "play":
            legal = page.eval_on_selector_all("#hand .card.legal", "cards => cards.map(c => c.dataset.card)")
            page.click(f"#hand [data-card='{max(legal, key=_by_rank)}']")
        else:
            raise AssertionError(f"the deal ended without a moon choice ({now})")
    return runner, page, errors


def test_the_classic_moon_choice_is_a_dialog_and_the_panel_marks_the_moon(tmp_path, browser: Browser) -> None:
    """The person, clicking the Shooter's cards, takes every penalty card; the choice comes
    as a dialog, the answer is checked and recorded as HUMAN, and the score panel marks the moon."""
    from heartsbot.proto import game_pb2

    with ThreadedDaemon(tmp_path) as daemon:
        runner, page, errors = at_the_moon_choice(daemon, browser)
        dialog = page.locator("#moon")
        expect(dialog).to_contain_text("You shot the moon!")
        expect(dialog.locator("[data-moon]")).to_have_count(2)
        expect(dialog.locator("button.primary")).to_contain_text("(default if time runs out)")
        screenshot(page, "playboard-moon")
        dialog.locator("[data-moon='subtract_from_self']").click()
        expect(page.locator("#result")).to_contain_text("Match over")
        expect(page.locator("#scores tbody td.moon[data-seat='0']")).to_contain_text("☾")
        rows, totals = score_panel(page)
        assert rows == [[-26, 0, 0, 0]] and totals == [-26, 0, 0, 0]
        record = daemon.arena.store.get(runner.id).record
        moon = [d for d in record.decisions if d.kind == game_pb2.DECISION_KIND_MOON]
        assert len(moon) == 1 and moon[0].seat == 0 and moon[0].provenance == game_pb2.PROVENANCE_HUMAN
        assert record.deal_scores[0].shooter == 0
        assert record.deal_scores[0].moon_option == game_pb2.MOON_OPTION_SUBTRACT_FROM_SELF
        assert not errors, errors
        page.context.close()


def test_escape_does_not_take_the_moon_choice_away(tmp_path, browser: Browser) -> None:
    """A keyboard pass: Escape closed the moon dialog (a modal dialog's default), and nothing
    opened it again: the house waits for the choice, so no snapshot came to draw it, and the
    page said "You shot the moon!" with no way to choose until the clock chose the default.
    The choice stays on the screen until it is made (or made for the person), through any
    number of Escapes, and is made by keyboard."""
    from heartsbot.proto import game_pb2

    with ThreadedDaemon(tmp_path) as daemon:
        runner, page, errors = at_the_moon_choice(daemon, browser)
        dialog = page.get_by_role("dialog", name="You shot the moon!")
        expect(dialog).to_be_visible()
        for _ in range(3):
            page.keyboard.press("Escape")
            expect(dialog).to_be_visible()
        page.keyboard.press("Tab")  # the default has the focus: the other choice is next
        expect(dialog.locator("[data-moon='subtract_from_self']")).to_be_focused()
        page.keyboard.press("Enter")
        expect(page.locator("#result")).to_contain_text("Match over")
        record = daemon.arena.store.get(runner.id).record
        moon = [d for d in record.decisions if d.kind == game_pb2.DECISION_KIND_MOON]
        assert len(moon) == 1 and moon[0].provenance == game_pb2.PROVENANCE_HUMAN
        assert record.deal_scores[0].moon_option == game_pb2.MOON_OPTION_SUBTRACT_FROM_SELF
        assert not errors, errors
        page.context.close()


def test_a_second_tab_is_told_the_seat_is_elsewhere_and_auto_play_can_be_taken_back(tmp_path, browser: Browser) -> None:
    """Before: two tabs on one seat both showed it as theirs, the replaced one's clicks were
    lost and its reconnect took the seat back, for ever; a seat on auto-play (repeated
    time-outs) kept saying "Your turn" while the server played its cards, and only a reload
    took it back. Now the replaced tab says where the seat is and waits for "Play here",
    and a seat on auto-play says so, with a button to take it back."""
    # 3 s to think: after "I'm back" the seat is the person's until its next time-out (at
    # 400 ms a loaded machine went back to auto-play before the page was looked at).
    with ThreadedDaemon(tmp_path, human_decision_ms=3000, human_bank_ms=0, auto_after=1,
                        web_house_delay_ms=200) as daemon:
        context = browser.new_context(viewport=DESKTOP)
        first = context.new_page()
        errors = watch_errors(first)
        match_id = start_from_lobby(first, daemon.url)
        expect(first.locator("#take-back")).to_be_visible(timeout=20_000)  # one time-out: auto-play
        expect(first.locator("#seat-note")).to_contain_text("the server is playing your cards")
        expect(first.locator("#clock")).to_be_hidden()
        screenshot(first, "playboard-auto")
        first.evaluate("window.pressed = document.getElementById('take-back')")
        first.wait_for_timeout(1000)  # snapshots come meanwhile (a house bot plays every 200 ms)
        # The button a person is pressing stays the one on the page: before, every snapshot drew
        # the note again, and a click whose press and release fell on two buttons was lost.
        assert first.evaluate("window.pressed.isConnected && window.pressed === document.getElementById('take-back')")
        first.click("#take-back")
        expect(first.locator("#seat-note")).to_be_hidden()
        second = context.new_page()
        second.goto(f"{daemon.url}/play/{match_id}")
        expect(second.locator("#hand [data-card]").first).to_be_visible()
        expect(first.locator("#seat-note")).to_contain_text("open in another tab or window")
        first.wait_for_timeout(1500)  # it does not reconnect by itself
        expect(first.locator("#play-here")).to_be_visible()
        expect(second.locator("#play-here")).to_have_count(0)
        first.click("#play-here")  # the person takes it back here on purpose
        expect(second.locator("#play-here")).to_be_visible()
        expect(first.locator("#seat-note")).not_to_contain_text("another tab")
        assert not errors, errors
        context.close()


def test_a_tab_whose_seat_is_elsewhere_offers_no_decision_it_cannot_send(tmp_path, browser: Browser) -> None:
    """A second-tab pass: the tab whose seat another one took kept its open request as if it
    were live: cards went up, "Pass cards to West" was enabled and pressed, and nothing was
    sent (its socket was closed), while its clock ran on and, once the other tab had passed
    and played, it still read "Lift 3 cards to pass". It now offers no decision while the
    seat is elsewhere (no playable or liftable card, no Pass button, no clock) and says
    where the seat is, in each language; "Play here" gives it the seat's open request back."""
    with ThreadedDaemon(tmp_path, web_house_delay_ms=200) as daemon:
        context = browser.new_context(viewport=DESKTOP)
        first = context.new_page()
        errors = watch_errors(first)
        match_id = start_from_lobby(first, daemon.url)
        expect(first.locator("#pass-button")).to_be_visible()
        expect(first.locator("#clock")).to_be_visible()
        first.locator("#hand [data-card]").nth(0).click()
        second = context.new_page()
        second.goto(f"{daemon.url}/play/{match_id}")
        expect(second.locator("#pass-button")).to_be_visible()
        expect(first.locator("#play-here")).to_be_visible()
        expect(first.locator("#pass-button")).to_have_count(0)
        expect(first.locator("#clock")).to_be_hidden()
        expect(first.locator("#status")).to_contain_text("This seat is open in another tab or window.")
        first.locator("#hand [data-card]").nth(1).click(force=True)  # not lifted: this tab cannot pass
        expect(first.locator("#hand [data-card][aria-pressed='true']")).to_have_count(0)
        expect(first.locator("#hand [data-card][aria-disabled='false']")).to_have_count(0)
        first.select_option("#lang", "id")  # drawn again: still nothing to decide here
        expect(first.locator("#pass-button")).to_have_count(0)
        expect(first.locator("#status")).to_contain_text("Kursi ini terbuka di tab atau jendela lain.")
        first.select_option("#lang", "en")
        first.click("#play-here")
        expect(first.locator("#pass-button")).to_be_visible()  # the request, open still, is this tab's again
        expect(first.locator("#clock")).to_be_visible()
        expect(second.locator("#play-here")).to_be_visible()
        assert not errors, errors
        context.close()


def test_an_answer_lost_with_its_connection_can_be_given_again(tmp_path, browser: Browser) -> None:
    """A dropped-connection pass: the person passed, the connection died before the answer
    reached the server, and the page reconnected; the server sent the same request again,
    still open, but the page took it as answered ("Passed. Waiting for the others…", no Pass
    button) while the person's clock ran down to the server's default. An answer the server
    has not confirmed is not taken as given once its connection is gone: the request sent
    again is the person's to answer, with the cards they had lifted, and the pass is theirs."""
    from heartsbot.proto import game_pb2

    from hearts_engine.actions import PassAction

    sockets: list[str] = []

    def first_loses_the_answer(ws: Any) -> None:
        """The page's first socket carries the server's messages; the first answer the page
        sends on it is lost, and the connection with it. Later sockets carry everything."""
        server = ws.connect_to_server()
        sockets.append(ws.url)
        if len(sockets) > 1:
            return

        def from_page(message: Any) -> None:
            ws.close(code=1011)
            server.close()

        ws.on_message(from_page)

    with ThreadedDaemon(tmp_path, web_house_delay_ms=200) as daemon:
        page = browser.new_page(viewport=DESKTOP)
        errors = watch_errors(page)
        page.route_web_socket(re.compile(r"/socket$"), first_loses_the_answer)
        match_id = start_from_lobby(page, daemon.url)
        button = page.locator("#pass-button")
        expect(button).to_be_visible()
        chosen = sorted(page.locator("#hand [data-card]").nth(k).get_attribute("data-card") for k in range(3))
        for code in chosen:
            page.click(f"#hand [data-card='{code}']")
        button.click()
        expect(button).to_be_visible()  # the request, sent again, is open
        expect(page.locator("#hand .card.lifted")).to_have_count(3)
        button.click()
        page.wait_for_function("() => window.arena.state()?.passed?.length === 3", timeout=30_000)
        assert sorted(page.evaluate("window.arena.state().passed")) == chosen
        runner = daemon.arena.runners[match_id]
        passes = [d for d in list(runner.decisions) if d.seat == 0 and isinstance(d.action, PassAction)]
        assert [d.provenance for d in passes] == [game_pb2.PROVENANCE_HUMAN], passes
        assert len(sockets) == 2, sockets
        assert not [e for e in errors if e.startswith("pageerror")], errors
        page.close()


def test_on_a_phone_the_clock_of_an_open_request_is_on_the_screen(tmp_path, browser: Browser) -> None:
    """Before: on a phone the side column (the clock) came after the hand, partly off the
    screen while the person had to act (its top at 722 px of a 740 px screen)."""
    small = {"width": 375, "height": 667}
    with ThreadedDaemon(tmp_path) as daemon:
        page = browser.new_page(viewport=small)
        errors = watch_errors(page)
        start_from_lobby(page, daemon.url)
        expect(page.locator("#pass-button")).to_be_visible()
        clock = page.locator("#clock")
        expect(clock).to_be_visible()
        box = clock.bounding_box()
        assert box is not None and 0 <= box["y"] and box["y"] + box["height"] <= small["height"], box
        screenshot(page, "playboard-phone-clock")
        assert not errors, errors


def test_the_lobby_offers_to_resume_a_seat_this_browser_took(tmp_path, browser: Browser) -> None:
    """Before: a person who went back to the lobby found their running match listed as
    "Watch" only, with no way back to the seat but the browser's history."""
    with ThreadedDaemon(tmp_path) as daemon:
        context = browser.new_context(viewport=DESKTOP)
        page = context.new_page()
        errors = watch_errors(page)
        match_id = start_from_lobby(page, daemon.url)
        expect(page.locator("#pass-button")).to_be_visible()
        page.goto(f"{daemon.url}/")
        resume = page.locator(f"#live li[data-match='{match_id}'] a.resume")
        expect(resume).to_have_text("Resume")
        resume.click()
        page.wait_for_url(f"**/play/{match_id}")
        expect(page.locator("#pass-button")).to_be_visible()  # the seat, its request still open
        expect(page.locator("h1")).to_have_text(f"Your seat in match {match_id}")  # before: no h1 at all
        stranger = browser.new_page(viewport=DESKTOP)  # another browser: the same match is "Watch"
        stranger.goto(f"{daemon.url}/")
        expect(stranger.locator(f"#live li[data-match='{match_id}'] a")).to_have_text("Watch")
        assert not errors, errors
        stranger.close()
        context.close()


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_after_a_restart_a_seat_page_stops_retrying_and_says_the_match_is_over(tmp_path, browser: Browser) -> None:
    """Before (a QA pass): after a daemon restart the Playboard retried its seat's socket
    every 8 s for ever (each attempt refused with 404) under "Connection lost,
    reconnecting…", with a live-looking Pass button and its clock running down; and a live
    table kept its "Live" badge, with nothing said, while the daemon was down. Now the seat
    page asks whether the seat is still there, and once the server says it is not, it stops,
    says how the match ended (its stored record: aborted, server shutdown) and links to the
    replay; the live table says its connection is lost."""
    from heartsd.arena import SeatRequest
    from heartsbot.proto import admin_pb2, game_pb2

    web = f"127.0.0.1:{_free_port()}"  # the same address after the restart, as a real daemon's
    context = browser.new_context(viewport=DESKTOP)
    page = context.new_page()
    errors = watch_errors(page)  # refused sockets and requests are console errors here: scripts' only
    sockets: list[str] = []
    page.on("websocket", lambda ws: sockets.append(ws.url))
    # House bots at a followable pace: the person's match cannot be played out by defaults
    # within the shutdown's grace (1 s), and is aborted, as on a real restart.
    with ThreadedDaemon(tmp_path, web=web, house_delay_ms=200, web_house_delay_ms=200) as daemon:
        match_id = start_from_lobby(page, daemon.url)
        expect(page.locator("#pass-button")).to_be_visible()
        seats = [SeatRequest(house="random")] * 4
        runner = daemon.call(lambda: daemon.arena.create_match(
            "standard", 4, admin_pb2.RulesetOptions(), game_pb2.MatchFormat(fixed_deals=10), None, seats,
            game_pb2.ClockSettings()))
        table = context.new_page()
        table.goto(f"{daemon.url}/watch/{runner.id}")
        expect(table.locator(".badge.live")).to_be_visible()
        url = daemon.url
    # The daemon is down.
    expect(table.locator("#status")).to_contain_text("Connection lost")
    expect(table.locator(".badge.live")).to_have_count(0)
    with ThreadedDaemon(tmp_path, web=web) as daemon:
        stored = daemon.arena.store.get(match_id)
        assert (stored.status, stored.reason) == ("aborted", "server shutdown")
        result = page.locator("#result")
        expect(result).to_contain_text("Match over", timeout=30_000)
        expect(result).to_contain_text("The match ended: server shutdown.")  # the stored record's reason
        expect(result).not_to_contain_text("null")  # a newcomer's pass: "null" stood where no rank was
        expect(result.locator(f"a[href='/watch/{match_id}']")).to_be_visible()
        expect(page.locator("#status")).not_to_contain_text("reconnecting")
        expect(page.locator("#pass-button")).to_have_count(0)
        expect(page.locator("#hand .card.legal")).to_have_count(0)
        expect(page.locator("#clock")).to_be_hidden()
        # The live table, back, finds the match over (409): it shows the replay where the
        # page left off, at its end, not at deal 1, step 0 (a review: it opened the start).
        expect(table.locator(".badge.replay")).to_be_visible(timeout=30_000)
        index = table.evaluate(f"fetch('/api/replay/{runner.id}').then(r => r.json())")
        last = index["deals"][-1]["number"]
        frames = table.evaluate(f"fetch('/api/replay/{runner.id}/deals/{last}').then(r => r.json())")["frames"]
        expect(table.locator("#table")).to_have_attribute("data-deal", str(last))
        expect(table.locator("#table")).to_have_attribute("data-step", str(len(frames) - 1))
        tried = len(sockets)
        page.wait_for_timeout(9000)  # longer than the longest wait between two attempts (8 s)
        assert len(sockets) == tried, sockets[tried:]
        screenshot(page, "playboard-after-restart")
        page.goto(f"{url}/watch/{match_id}")  # the link's page: the replay of the aborted match
        expect(page.locator(".badge.replay")).to_be_visible()
    assert not [e for e in errors if e.startswith("pageerror")], errors
    context.close()


def test_a_seat_page_reopened_after_its_table_was_given_back_says_the_match_is_over(tmp_path, browser: Browser) -> None:
    """A dropped-connection pass: a person away longer than web_abandon_s (a phone asleep, a
    network gone for a minute) has their table given back, the match cancelled. Their page,
    opened again (or reconnecting) while the seat lingers, showed the board as they had left
    it: "Your turn: play a marked card.", a clock running, cards marked playable, for a match
    that was over; nothing ever changed it. The seat's page learns only from the seat's
    messages, and the match ended while no page had them. It now says the match is over and
    why, with the replay's link, and offers nothing to play."""
    with ThreadedDaemon(tmp_path, web_house_delay_ms=200, web_abandon_s=2) as daemon:
        context = browser.new_context(viewport=DESKTOP)
        page = context.new_page()
        match_id = start_from_lobby(page, daemon.url)
        while (now := turn(page)) == "pass":
            click_turn(page, now, now)
        assert now == "play", now
        page.close()  # away: no page has the seat
        runner = daemon.arena.runners[match_id]
        daemon.call(lambda: runner.finished.wait(), timeout=30)
        stored = daemon.arena.store.get(match_id)
        assert (stored.status, stored.reason) == ("cancelled", "the person left the table (no page for 2 s)"), stored
        page = context.new_page()
        errors = watch_errors(page)
        page.goto(f"{daemon.url}/play/{match_id}")
        result = page.locator("#result")
        expect(result).to_contain_text("Match over")
        expect(result).to_contain_text("The match ended: the person left the table (no page for 2 s).")
        expect(result.locator(f"a[href='/watch/{match_id}']")).to_be_visible()
        expect(page.locator("#hand .card.legal")).to_have_count(0)
        expect(page.locator("#clock")).to_be_hidden()
        expect(page.locator("#leave-button")).to_have_count(0)
        page.select_option("#lang", "vi")
        expect(result).to_contain_text("người chơi đã rời bàn (không mở trang trong 2 giây)")
        assert not errors, errors
        context.close()


def test_after_passing_the_status_says_the_page_waits_for_the_others(tmp_path, browser: Browser) -> None:
    """Before (a QA pass): once the person had passed, the status line still said "Lift 3
    cards to pass to East." while the pass bar said "Passed. Waiting for the others…"."""
    with ThreadedDaemon(tmp_path, web_house_delay_ms=3000) as daemon:  # the others pass slowly
        page = browser.new_page(viewport=DESKTOP)
        errors = watch_errors(page)
        start_from_lobby(page, daemon.url)
        expect(page.locator("#pass-button")).to_be_visible()
        expect(page.locator("#status")).to_contain_text("Lift 3 cards to pass")
        for k in range(3):
            page.locator("#hand [data-card]").nth(k).click()
        page.click("#pass-button")
        seen = page.wait_for_function("""() => document.body.dataset.phase === 'passing'
          && document.querySelector('#pass-bar').textContent.includes('Waiting for the others')
          && document.querySelector('#status').textContent""").json_value()
        assert "Waiting for the others" in seen and "Lift" not in seen, seen
        page.select_option("#lang", "vi")  # every language has it
        expect(page.locator("#status")).to_contain_text("Đang chờ người khác")
        assert not errors, errors


RANK_WORDS = {"2": "Two", "3": "Three", "4": "Four", "5": "Five", "6": "Six", "7": "Seven", "8": "Eight", "9": "Nine",
              "T": "Ten", "J": "Jack", "Q": "Queen", "K": "King", "A": "Ace"}
SUIT_WORDS = {"C": "clubs", "D": "diamonds", "H": "hearts", "S": "spades"}


def label(code: str) -> str:
    """A card's name as the page says it in English ("8D" -> "Eight of diamonds")."""
    return f"{RANK_WORDS[code[0]]} of {SUIT_WORDS[code[1]]}"


def test_a_card_beyond_the_pass_count_stays_down_and_the_page_says_why(tmp_path, browser: Browser) -> None:
    """Before (a browser audit): a fourth card went up, "4 of 3 lifted.", and the Pass button
    went off with no word why. Now the card stays down, the pass bar and the screen reader
    (aria-live) say the person passes 3 cards and must lower one first, and the three lifted
    can still be passed; lowering one lets another go up."""
    full = "You pass 3 cards: lower one first."
    with ThreadedDaemon(tmp_path) as daemon:
        page = browser.new_page(viewport=DESKTOP)
        errors = watch_errors(page)
        start_from_lobby(page, daemon.url)
        button = page.locator("#pass-button")
        expect(button).to_be_visible()
        cards = page.locator("#hand [data-card]")
        for k in range(3):
            cards.nth(k).click()
        expect(button).to_be_enabled()
        cards.nth(3).click()  # one too many
        expect(page.locator("#pass-bar .pass-full")).to_have_text(full)
        expect(page.locator("#announce")).to_have_text(full)
        assert page.get_attribute("#announce", "aria-live") in ("polite", "assertive")
        expect(cards.nth(3)).to_have_attribute("aria-pressed", "false")
        expect(page.locator("#pass-bar .lifted-count")).to_have_text("3 of 3 lifted.")
        assert lifted(page) == 3
        expect(button).to_be_enabled()
        screenshot(page, "playboard-pass-full")
        cards.nth(0).click()  # lowered: the message goes, and the fourth may go up
        expect(page.locator("#pass-bar .pass-full")).to_have_count(0)
        cards.nth(3).click()
        expect(cards.nth(3)).to_have_attribute("aria-pressed", "true")
        chosen = sorted(cards.nth(k).get_attribute("data-card") for k in (1, 2, 3))
        button.click()
        page.wait_for_function("() => window.arena.state()?.passed?.length === 3", timeout=30_000)
        assert sorted(page.evaluate("window.arena.state().passed")) == chosen
        assert not errors, errors


def _why_unplayable(state: dict[str, Any]) -> tuple[str, str]:
    """Why the seat may not play a card it holds, worked out here from what the page shows
    (its hand, the trick, the tricks taken), independently of the server: (kind, English)."""
    hand, trick = state["hand"], state["trick"]["cards"]
    if trick:
        led = trick[0]["card"][1]
        if any(c[1] == led for c in hand):
            return "follow", f"you must follow {SUIT_WORDS[led]}"
        return "first_trick", "no point cards on the first trick"
    if not any(state["tricks_won"]):
        return "first_lead", "the first lead must be Two of clubs"
    if [c for c in hand if c[1] != "H"] == ["QS"]:
        return "lead_queen", "with only hearts and the queen of spades, lead the queen of spades"
    return "not_broken", "hearts are not broken yet"


def test_an_unplayable_card_says_the_rule_that_stops_it(tmp_path, browser: Browser) -> None:
    """Before (a browser audit): clicking an unmarked card said only "Eight of diamonds
    cannot be played now: play a marked card.". Now it says the rule (must follow clubs,
    hearts not broken, no points on the first trick...), as the server's request gives it
    for each card it would refuse, in the page's language; the card is not sent (no
    refused answer counts against the seat). Checked at every play of two deals against
    the rules worked out from what the page shows."""
    with ThreadedDaemon(tmp_path) as daemon:
        page = browser.new_page(viewport=DESKTOP)
        errors = watch_errors(page)
        match_id = start_from_lobby(page, daemon.url)
        kinds: set[str] = set()
        translated = False
        while (now := turn(page)) != "over" and page.evaluate("window.arena.state().deal") < 2:
            if now == "pass":
                for k in range(3):
                    page.locator("#hand [data-card]").nth(k).click()
                page.click("#pass-button")
                continue
            assert now == "play", now
            blocked = page.locator("#hand .card.not-legal")
            if blocked.count():
                code = blocked.first.get_attribute("data-card")
                kind, why = _why_unplayable(page.evaluate("window.arena.state()"))
                blocked.first.click(force=True)
                said = f"{label(code)} cannot be played now: {why}."
                expect(page.locator("#rejection")).to_have_text(said)
                expect(page.locator("#announce")).to_have_text(said)
                assert page.evaluate("window.arena.state().request.answered") is False
                kinds.add(kind)
                if kind == "follow" and not translated:  # every language says it
                    page.select_option("#lang", "id")
                    blocked.first.click(force=True)
                    expect(page.locator("#rejection")).to_contain_text("tidak bisa dimainkan sekarang: kamu harus mengikuti")
                    page.select_option("#lang", "vi")
                    blocked.first.click(force=True)
                    expect(page.locator("#rejection")).to_contain_text("bạn phải đánh theo chất")
                    page.select_option("#lang", "en")
                    translated = True
            page.locator("#hand .card.legal").first.click()
        assert "follow" in kinds, kinds
        assert translated
        # Nothing was sent for the unmarked cards: the server refused no answer of the seat.
        runner = daemon.arena.runners[match_id]
        assert all(d.rejected == 0 for d in list(runner.decisions) if d.seat == 0)
        assert not errors, errors


def test_a_screen_reader_is_told_when_the_person_is_asked_to_pass_or_play(tmp_path, browser: Browser) -> None:
    """A screen reader's pass: nothing said that the person was asked for a decision. The
    status line ("Lift 3 cards to pass to West.", "Your turn: play a marked card.") is no
    live region, and the page's announcements said only the others' cards: a person who
    could not see the table heard "heuristic (house, seat 4) played Five of clubs" and had
    to work out that it was their turn, while their clock ran. Each request is now said once
    as it comes (after the card played before it), in the page's language."""
    with ThreadedDaemon(tmp_path, web_house_delay_ms=200) as daemon:
        page = browser.new_page(viewport=DESKTOP)
        errors = watch_errors(page)
        start_from_lobby(page, daemon.url)
        said = page.locator("#announce")
        assert said.get_attribute("aria-live") == "assertive"
        expect(said).to_have_text(re.compile(r"^Lift 3 cards to pass to (West|North|East)\.$"))
        click_turn(page, turn(page), "the first deal starts with a pass")
        for _ in range(3):  # the person's next plays: each said as it is asked
            assert turn(page) == "play"
            if page.evaluate("window.arena.state().trick.cards.length"):
                expect(said).to_have_text(re.compile(  # with the cards received, at the deal's first play
                    r" played [A-Za-z ]+\. (You received [A-Za-z, ]+\. )?Your turn: play a marked card\.$"))
            else:
                expect(said).to_have_text(re.compile(r"(^|\. )Your lead\.$"))
            click_turn(page, "play", "")
        assert turn(page) == "play"
        page.select_option("#lang", "vi")  # drawn again: said in the language chosen when next asked
        click_turn(page, "play", "")
        assert turn(page) == "play"
        expect(said).to_have_text(re.compile(r"(Đến lượt bạn: đánh một lá được đánh dấu\.|Bạn đánh trước\.)$"))
        assert not errors, errors
        page.close()


def test_a_screen_reader_is_told_the_cards_the_person_received(tmp_path, browser: Browser) -> None:
    """A screen reader's pass: after the exchange three cards of the hand were others', and
    only the pass bar's line said which ("You received …"), a line no screen reader reads
    unless it is looked for: the person's hand changed unsaid. The cards received are now
    said with the first play the person is asked for in the deal, once."""
    with ThreadedDaemon(tmp_path, web_house_delay_ms=200) as daemon:
        page = browser.new_page(viewport=DESKTOP)
        errors = watch_errors(page)
        start_from_lobby(page, daemon.url)
        said = page.locator("#announce")
        click_turn(page, turn(page), "the first deal starts with a pass")
        assert turn(page) == "play"
        received = page.evaluate("window.arena.state().received")
        assert len(received) == 3, received
        expect(said).to_contain_text(f"You received {', '.join(label(c) for c in received)}. ")
        expect(said).to_have_text(re.compile(r"(Your turn: play a marked card|Your lead)\.$"))
        click_turn(page, "play", "")
        assert turn(page) == "play"
        expect(said).to_have_text(re.compile(r"(Your turn: play a marked card|Your lead)\.$"))
        expect(said).not_to_contain_text("You received")  # said once
        assert not errors, errors
        page.close()


TRICK = """() => ({ played: window.arena.state().trick.cards.map((p) => [p.seat, p.card]),
  labels: [...document.querySelectorAll('#table .trick [data-card]')].map((c) => [c.dataset.card, c.getAttribute('aria-label')]) })"""


def test_a_screen_reader_hears_who_played_each_card_of_the_trick(tmp_path, browser: Browser) -> None:
    """A screen reader's pass: the trick read "Trick 1: Two of clubs, Queen of clubs, Five of
    clubs", each card by itself, so who played which (who was winning the trick) was said
    only once, as each card landed, and lost to anyone who came to the trick later (a
    reload, a look back at the table). Each card of the trick now says who played it, as the
    announcement did, in the page's language; its data-card is the card's still."""
    names = {"en": {0: "You", **{s: f"heuristic (house, seat {s + 1})" for s in range(1, 4)}},
             "vi": {0: "Bạn", **{s: f"heuristic (máy, ghế {s + 1})" for s in range(1, 4)}}}
    with ThreadedDaemon(tmp_path, web_house_delay_ms=1000) as daemon:  # the others' cards stay in view
        page = browser.new_page(viewport=DESKTOP)
        errors = watch_errors(page)
        start_from_lobby(page, daemon.url)
        while (now := turn(page)) == "pass" or not page.evaluate("window.arena.state().trick.cards.length"):
            click_turn(page, now, now)  # until the person's turn comes with cards on the trick
        shown = page.evaluate(TRICK)
        assert shown["labels"] == [[card, f"{names['en'][seat]} played {label(card)}"] for seat, card in shown["played"]]
        page.select_option("#lang", "vi")
        shown = page.evaluate(TRICK)
        for (seat, _), (_, said) in zip(shown["played"], shown["labels"], strict=True):
            assert said.startswith(f"{names['vi'][seat]} đánh "), said
        assert not errors, errors
        page.close()


def test_a_default_after_a_time_out_is_said_with_its_cards(tmp_path, browser: Browser) -> None:
    """Before (a browser audit): when the person's clock ran out the server passed or played
    for them and the page said nothing (the hand just changed). Now a line, in a polite
    live region, says what the server did for them: the three cards it passed, the card it
    played; they are the ones the match applied (its decisions, TIMEOUT)."""
    from heartsbot.proto import game_pb2

    from hearts_engine import card_name

    with ThreadedDaemon(tmp_path, human_decision_ms=2000, human_bank_ms=0, auto_after=100) as daemon:
        page = browser.new_page(viewport=DESKTOP)
        errors = watch_errors(page)
        match_id = start_from_lobby(page, daemon.url)
        note = page.locator("#defaulted")
        expect(note).to_have_attribute("aria-live", "polite")
        expect(note).to_have_attribute("role", "status")
        expect(note).to_contain_text("Time ran out: the server passed", timeout=30_000)

        def timed_out() -> list[Any]:
            runner = daemon.arena.runners[match_id]
            return [d.action for d in list(runner.decisions)
                    if d.seat == 0 and d.provenance == game_pb2.PROVENANCE_TIMEOUT]

        passed = sorted(card_name(c) for c in timed_out()[0].cards)
        shown = page.evaluate("window.arena.state().passed")
        assert sorted(shown) == passed
        expect(note).to_have_text(f"Time ran out: the server passed {', '.join(label(c) for c in shown)} for you.")
        screenshot(page, "playboard-defaulted-pass")
        expect(note).to_contain_text("Time ran out: the server played", timeout=30_000)
        played = re.fullmatch(r"Time ran out: the server played (.+) for you\.", note.inner_text())
        assert played, note.inner_text()
        cards = [label(card_name(a.card)) for a in timed_out()[1:]]
        assert played.group(1) in cards, (played.group(1), cards)
        assert not errors, errors


def test_leave_table_asks_then_ends_the_match_at_once(tmp_path, browser: Browser) -> None:
    """Before (a browser audit): the only way out of a seat was closing the tab; the house
    then played the seat's defaults for 60 s before the table was given back. Now a "Leave
    table" button asks first (Stay keeps the match going), then ends the match at once,
    recorded as cancelled because the person left; the page says so and links to the lobby."""
    with ThreadedDaemon(tmp_path) as daemon:
        page = browser.new_page(viewport=DESKTOP)
        errors = watch_errors(page)
        match_id = start_from_lobby(page, daemon.url)
        expect(page.locator("#pass-button")).to_be_visible()
        leave = page.get_by_role("button", name="Leave table")
        leave.click()
        dialog = page.get_by_role("dialog", name="Leave this table?")
        expect(dialog).to_be_visible()
        expect(dialog).to_contain_text("The match ends now for everyone")
        expect(page.locator("#leave-stay")).to_be_focused()  # the safe choice is the default
        screenshot(page, "playboard-leave")
        page.keyboard.press("Enter")  # Stay
        expect(dialog).to_be_hidden()
        expect(page.locator("#pass-button")).to_be_visible()
        assert match_id in daemon.arena.runners
        leave.click()
        dialog.get_by_role("button", name="Leave and end the match").click()
        result = page.locator("#result")
        expect(result).to_contain_text("Match over")
        expect(result).to_contain_text("You left the table: the match is over (recorded as cancelled).")
        expect(page.get_by_role("button", name="Leave table")).to_have_count(0)
        expect(page.locator("#pass-button")).to_have_count(0)
        stored = daemon.arena.store.get(match_id)
        assert (stored.status, stored.reason) == ("cancelled", "the person left the table"), stored
        result.get_by_role("link", name="Back to the lobby").click()
        page.wait_for_url(f"{daemon.url}/")
        assert not errors, errors


def test_the_seat_page_of_a_table_that_never_was_says_so_and_links_only_to_real_pages(tmp_path, browser: Browser) -> None:
    """A QA pass: /play/<an id no match ever had> said "Error: no seat of yours in that match
    (it may be over: see its replay)" and linked to its Watch page, itself a 404. It now
    reads as not found (title, heading), says there is no such table, and links to the
    lobby only; a match that is there but not this browser's seat still links to its table."""
    from heartsd.arena import SeatRequest
    from heartsbot.proto import admin_pb2, game_pb2

    with ThreadedDaemon(tmp_path) as daemon:
        page = browser.new_page(viewport=DESKTOP)
        errors = watch_errors(page)
        nothing = f"m-{'0' * 16}"
        page.goto(f"{daemon.url}/play/{nothing}")
        expect(page.locator("h1")).to_have_text("Not found")
        expect(page).to_have_title("Not found · Hearts Arena")
        expect(page.locator("main [role=alert]")).to_contain_text(f"There is no table “{nothing}”")
        expect(page.locator("main a[href='/']")).to_be_visible()
        for href in page.eval_on_selector_all("main a", "links => links.map(a => a.getAttribute('href'))"):
            assert page.request.get(f"{daemon.url}{href}").status == 200, href
        page.select_option("#lang", "id")
        expect(page.locator("h1")).to_have_text("Tidak ditemukan")
        expect(page.locator("main [role=alert]")).to_contain_text(f"Tidak ada meja “{nothing}”")
        page.select_option("#lang", "en")
        seats = [SeatRequest(house="random")] * 4  # a match that is, with no seat of this browser
        runner = daemon.call(lambda: daemon.arena.create_match(
            "standard", 4, admin_pb2.RulesetOptions(), game_pb2.MatchFormat(fixed_deals=1), None, seats,
            game_pb2.ClockSettings()))
        page.goto(f"{daemon.url}/play/{runner.id}")
        expect(page.locator(f"#status a[href='/watch/{runner.id}']")).to_be_visible()
        expect(page.locator("h1")).not_to_have_text("Not found")
        page.close()
    assert not [e for e in errors if e.startswith("pageerror")], errors


def test_a_refusal_for_too_many_requests_is_said_in_the_pages_language(tmp_path, browser: Browser) -> None:
    """A browser pass: over the address's rate, the lobby's Play said "too many requests;
    slow down" on the Indonesian and Vietnamese pages too: a 429 carried no code. It now
    says it in the page's language, and English keeps the server's words."""
    said, errors = {}, []
    for lang in ("id", "en"):
        (tmp_path / lang).mkdir()
        with ThreadedDaemon(tmp_path / lang, web_rate_per_s=0.01, web_burst=40) as daemon:
            page = browser.new_page(viewport=DESKTOP)
            errors.append(watch_errors(page))
            page.goto(f"{daemon.url}/?lang={lang}")
            expect(page.locator("#play-button")).to_be_visible()
            for _ in range(40):  # the rest of this address's burst, spent (the rate gives one back per 100 s)
                if page.request.get(f"{daemon.url}/api/options").status == 429:
                    break
            page.click("#play-button")
            expect(page.locator("#play-error")).not_to_be_empty()
            said[lang] = page.locator("#play-error").text_content()
            page.close()
    assert said["id"] == "Galat: terlalu banyak permintaan dari alamatmu; tunggu sebentar, lalu coba lagi", said
    assert said["en"] == "Error: too many requests; slow down", said
    assert not [e for seen in errors for e in seen if e.startswith("pageerror")], errors


def test_the_servers_fixed_reasons_are_said_in_the_pages_language(tmp_path, browser: Browser) -> None:
    """A QA pass: on the Indonesian and Vietnamese pages every reason from the server was
    English: a refused answer ("too late: the default was played", "you must follow clubs"),
    why a match ended ("server shutdown", "the person left the table"), a refused seat
    ("you already play 1 matches here"; English now says "1 match"). Those of a fixed set
    now come with a key the page says in its language (a refusal's code, a card's rule, a
    match's end); any other reason (an operator's own words) stays as the server wrote it."""
    from heartsd.arena import SeatRequest
    from heartsbot.proto import admin_pb2, game_pb2

    with ThreadedDaemon(tmp_path, web_tables_per_peer=1, house_delay_ms=100, web_house_delay_ms=100) as daemon:
        page = browser.new_page(viewport=DESKTOP)
        errors = watch_errors(page)
        page.goto(f"{daemon.url}/?lang=vi")
        match_id = start_from_lobby(page, daemon.url)
        # A second seat from the same address: refused with a code, said in Indonesian.
        lobby = browser.new_page(viewport=DESKTOP)
        lobby.goto(f"{daemon.url}/?lang=id")
        lobby.click("#play-button")
        expect(lobby.locator("#play-error")).to_have_text(
            "Galat: kamu sudah memainkan pertandingan sebanyak yang diizinkan di sini; selesaikan satu dulu")
        lobby.close()
        # A card the rules refuse, sent anyway (a script): refused with the engine's rule, in Vietnamese.
        page.select_option("#lang", "vi")
        while (now := turn(page)) == "pass":
            for k in range(3):
                page.locator("#hand [data-card]").nth(k).click()
            page.click("#pass-button")
        assert now == "play", now
        while not page.locator("#hand .card.not-legal").count():
            page.locator("#hand .card.legal").first.click()
            assert turn(page) == "play"
        blocked = page.locator("#hand .card.not-legal").first.get_attribute("data-card")
        page.evaluate(f"window.arena.play('{blocked}')")
        expect(page.locator("#rejection")).to_contain_text(re.compile(
            r"^Bị từ chối: (bạn phải đánh theo chất|không được đánh lá có điểm|lá mở đầu tiên|chưa mở cơ|khi chỉ còn cơ)"))
        # Two answers to one request: the second is too late, said by its code.
        page.locator("#hand .card.legal").first.wait_for()
        legal = page.eval_on_selector_all("#hand .card.legal", "cards => cards.map(c => c.dataset.card)")
        page.evaluate(f"window.arena.play('{legal[0]}'); window.arena.play('{legal[0]}')")
        expect(page.locator("#rejection")).to_have_text(
            "Bị từ chối: quá muộn: quyết định đó đã được đưa ra (đã trả lời, hoặc máy chủ đã đánh thay bạn khi hết giờ)")
        # The person leaves; their page says so, the table page says why the match ended.
        page.click("#leave-button")
        page.click("#leave-confirm")
        expect(page.locator("#result")).to_contain_text("Bạn đã rời bàn")
        table = browser.new_page(viewport=DESKTOP)
        table.goto(f"{daemon.url}/watch/{match_id}?lang=id")
        expect(table.locator("#result")).to_contain_text("Pertandingan berakhir: pemain meninggalkan meja.")
        # An operator's own words are theirs: shown as written, in any language.
        seats = [SeatRequest(house="random")] * 4
        runners = [daemon.call(lambda: daemon.arena.create_match(
            "standard", 4, admin_pb2.RulesetOptions(), game_pb2.MatchFormat(fixed_deals=5), None, seats,
            game_pb2.ClockSettings())) for _ in range(2)]
        for runner, reason in zip(runners, ("", "server shutdown for the night")):
            while not list(runner.decisions):  # a card played: a replay to open
                time.sleep(0.05)
            daemon.loop.call_soon_threadsafe(daemon.arena.cancel, runner.id, reason)  # type: ignore[union-attr]
            daemon.call(lambda: runner.finished.wait(), timeout=30)
        table.goto(f"{daemon.url}/watch/{runners[0].id}?lang=id")
        expect(table.locator("#result")).to_contain_text("Pertandingan berakhir: dibatalkan oleh admin.")
        table.select_option("#lang", "vi")
        expect(table.locator("#result")).to_contain_text("Trận đấu kết thúc: bị quản trị viên huỷ.")
        table.goto(f"{daemon.url}/watch/{runners[1].id}?lang=vi")
        expect(table.locator("#result")).to_contain_text("Trận đấu kết thúc: server shutdown for the night.")
        table.close()
        page.close()
    assert not [e for e in errors if e.startswith("pageerror")], errors


def test_a_refusal_of_play_is_said_again_when_the_language_changes(tmp_path, browser: Browser) -> None:
    """A refusal already under the lobby's form stayed in the language it came in, or was
    gone: switching the language drew the form anew without it, while the rest of the page
    changed. It is said again in the language chosen (the server's words in English), and
    kept until Play is tried again or a choice changes."""
    with ThreadedDaemon(tmp_path, web_tables_per_peer=1, house_delay_ms=100, web_house_delay_ms=100) as daemon:
        page = browser.new_page(viewport=DESKTOP)
        errors = watch_errors(page)
        start_from_lobby(page, daemon.url)  # this address's one table
        lobby = browser.new_page(viewport=DESKTOP)
        errors += watch_errors(lobby)
        lobby.goto(f"{daemon.url}/?lang=id")
        lobby.click("#play-button")
        said = lobby.locator("#play-error")
        expect(said).to_have_text(
            "Galat: kamu sudah memainkan pertandingan sebanyak yang diizinkan di sini; selesaikan satu dulu")
        lobby.select_option("#lang", "vi")
        expect(lobby.locator("#play-title")).to_have_text("Chơi với máy")
        expect(said).to_have_text("Lỗi: bạn đã chơi số trận tối đa được phép ở đây; hãy chơi xong một trận trước")
        lobby.select_option("#lang", "en")
        expect(said).to_have_text("Error: you already play 1 match here; finish one first")
        lobby.select_option("#opponent-1", index=1)  # another choice: the refusal was of the last one
        expect(said).to_be_empty()
        lobby.close()
        page.close()
    assert not [e for e in errors if e.startswith("pageerror")], errors


def test_the_last_trick_of_a_deal_is_held_in_view_before_the_next_pass(tmp_path, browser: Browser) -> None:
    """A QA pass: at the Playboard the 13th trick's TrickWon comes with the next deal's pass
    request, so the page showed the new hand and "Pass cards" at once and the person never
    saw the last trick taken. It is now held in view a moment, then the next deal's pass."""
    from .test_browser_watch import OBSERVE_LAST_TRICK

    with ThreadedDaemon(tmp_path, web_house_delay_ms=50) as daemon:
        page = browser.new_page(viewport=DESKTOP)
        errors = watch_errors(page)
        start_from_lobby(page, daemon.url)
        page.evaluate(OBSERVE_LAST_TRICK)
        while page.evaluate("window.arena.state()?.deal ?? 0") < 1:
            now = turn(page)
            click_turn(page, now, now)
        # The deal may have ended on the person's own card, a moment ago: the hold may be on still.
        page.wait_for_function("() => window.lastTrick.since === null", timeout=10_000)  # a function: an expression is eval-ed, which the CSP refuses
        seen = page.evaluate("window.lastTrick")
        page.close()
    assert seen["longest"] >= 1000, f"the last trick of deal 1 was in view {seen['longest']:.0f} ms"
    assert seen["heartsNotBroken"] == 0, "the deal as it ended read 'Hearts not broken' (the next deal's)"
    assert not errors, errors


def test_the_playboards_tab_names_the_seat_in_each_language(tmp_path, browser: Browser) -> None:
    """A browser pass: the Playboard's tab read "Play · Hearts Arena", and on the Indonesian
    and Vietnamese pages "Putar" and "Phát", the replay's Play button (play a recording), not
    a seat at a table. It now reads "Your seat" in each language, as its heading does."""
    with ThreadedDaemon(tmp_path) as daemon:
        page = browser.new_page(viewport=PHONE)
        start_from_lobby(page, daemon.url)
        expect(page).to_have_title("Your seat · Hearts Arena")
        for lang, title in (("id", "Kursimu · Hearts Arena"), ("vi", "Ghế của bạn · Hearts Arena")):
            page.select_option("#lang", lang)
            expect(page).to_have_title(title)
        page.close()


def test_the_playboards_seat_labels_show_each_opponents_whole_name(tmp_path, browser: Browser) -> None:
    """A spectator's pass: the Playboard's three house opponents (the lobby's default: all
    heuristic) read "heuristic (ho…" each, cut to one line of their boxes, so which of them
    led or took a trick could not be told. Each label now wraps, whole ("heuristic, seat 3"),
    with the whole name as its title; on a phone and a desktop alike, within its box and the
    table."""
    want = ["You", "heuristic (house, seat 2)", "heuristic (house, seat 3)", "heuristic (house, seat 4)"]
    shown = ["You", "heuristic, seat 2", "heuristic, seat 3", "heuristic, seat 4"]
    with ThreadedDaemon(tmp_path) as daemon:
        page = browser.new_page(viewport=PHONE)
        errors = watch_errors(page)
        start_from_lobby(page, daemon.url)
        expect(page.locator("#table .seat")).to_have_count(4)
        for size in (PHONE, DESKTOP):
            page.set_viewport_size(size)
            seats = seat_labels(page)
            assert [s["title"] for s in seats] == want, seats
            assert [s["text"] for s in seats] == shown, seats
            for label in seats:
                assert not label["overflows"] and label["inside"], (size, label)
            assert not overlapping(seats), size
        page.close()
    assert not errors, errors


def test_the_lobbys_clock_note_and_errors_take_the_forms_width(tmp_path, browser: Browser) -> None:
    """A browser pass: the note under "Play against the house" (a person's time per decision)
    sat in the form grid's label column, a word or two a line ("A person has 30 s / per
    decision, and / 60 s more ..."), and an error would have shared its row. Both now take the
    form's width."""
    with ThreadedDaemon(tmp_path) as daemon:
        page = browser.new_page(viewport=PHONE)
        for viewport in (PHONE, DESKTOP):
            page.set_viewport_size(viewport)
            page.goto(f"{daemon.url}/")
            note = page.locator("form.play-form p.muted")
            expect(note).to_contain_text("per decision")
            form, button = page.locator("form.play-form").bounding_box(), page.locator("#play-button").bounding_box()
            box = note.bounding_box()
            assert form and button and box
            assert box["y"] > button["y"] and box["x"] == button["x"], (box, button)
            assert box["width"] >= 0.8 * form["width"] - 40, (box, form)  # less the form's padding
            assert page.locator("#play-error").evaluate("p => getComputedStyle(p).gridColumnStart") == "1"
            assert page.locator("#play-error").evaluate("p => getComputedStyle(p).gridColumnEnd") == "-1"
        page.close()


def test_a_persons_seat_is_named_in_the_pages_language(tmp_path, browser: Browser) -> None:
    """A browser pass: a person's seat read "Guest 1a2b" on every page in every language (the
    lobby's lists, the table page, its hands and score panel). It is "Tamu 1a2b" in
    Indonesian and "Khách 1a2b" in Vietnamese now."""
    with ThreadedDaemon(tmp_path) as daemon:
        page = browser.new_page(viewport=DESKTOP)
        errors = watch_errors(page)
        match_id = start_from_lobby(page, daemon.url)
        expect(page.locator("#pass-button")).to_be_visible()
        table = browser.new_page(viewport=DESKTOP)
        table.goto(f"{daemon.url}/watch/{match_id}?lang=id")
        seat = table.locator("#table .seat[data-seat='0'] .who")
        expect(seat).to_have_text(re.compile(r"^Tamu [0-9a-f]{8}$"))
        table.select_option("#lang", "vi")
        expect(seat).to_have_text(re.compile(r"^Khách [0-9a-f]{8}$"))
        table.goto(f"{daemon.url}/?lang=id")
        expect(table.locator(f'#live li[data-match="{match_id}"] .seats')).to_contain_text("Tamu ")
        table.close()
        page.close()
    assert not errors, errors



def test_a_refused_card_is_said_in_the_servers_words_on_an_english_page(tmp_path, browser: Browser) -> None:
    """A card the rules refuse, sent anyway, is said on an English page in the server's own
    words, as before the translation of fixed reasons (40391cc): that change said the rule
    from the page's table ("no point cards on the first trick") where the server says "QS
    may not be played on the first trick" (a full-suite run caught it, in
    test_a_person_plays_a_whole_standard_match_by_clicks). Other languages say the rule.
    The seat's socket is played by the test here, to send that refusal."""
    import json

    with ThreadedDaemon(tmp_path) as daemon:
        page = browser.new_page(viewport=DESKTOP)
        match_id = start_from_lobby(page, daemon.url)
        expect(page.locator("#pass-button")).to_be_visible()
        state = page.evaluate("window.arena.state()")
        refused = {**state, "rejection": {"reason": "QS may not be played on the first trick", "code": "illegal",
                                          "retry": True, "request_id": state["request"]["id"],
                                          "why": {"reason": "first_trick", "card": "QS",
                                                  "text": "QS may not be played on the first trick"}}}
        cookies = page.context.cookies()
        page.close()
        seat = browser.new_context(viewport=DESKTOP)
        seat.add_cookies(cookies)
        other = seat.new_page()
        other.route_web_socket(re.compile(r"/socket$"), lambda ws: ws.send(json.dumps(refused)))
        other.goto(f"{daemon.url}/play/{match_id}")
        expect(other.locator("#rejection")).to_have_text("Refused: QS may not be played on the first trick")
        other.select_option("#lang", "vi")
        expect(other.locator("#rejection")).to_have_text("Bị từ chối: không được đánh lá có điểm ở vòng đầu tiên")
        seat.close()


def playing_renamed(browser: Browser, daemon: ThreadedDaemon, change: Any) -> tuple[Page, list[str], dict[str, Any]]:
    """A seat's page at the narrowest phone's width, its socket played by the test: the
    server's first snapshot, its opponents renamed LONG_HYPHENATED (as if ladder bots) and
    then ``change``d, is all the page is sent. (The page, its errors, the snapshot sent.)"""
    import json

    page = browser.new_page(viewport=DESKTOP)
    match_id = start_from_lobby(page, daemon.url)
    expect(page.locator("#pass-button")).to_be_visible()
    state = page.evaluate("window.arena.state()")
    cookies = page.context.cookies()
    page.close()
    for seat in state["seats"]:
        if seat["seat"] != state["you"]:
            seat.update(name=LONG_HYPHENATED[seat["seat"]], house=False, human=False)
    change(state)
    context = browser.new_context(viewport=NARROW)
    context.add_cookies(cookies)
    page = context.new_page()
    errors = watch_errors(page)
    page.route_web_socket(re.compile(r"/socket$"), lambda ws: ws.send(json.dumps(state)))
    page.goto(f"{daemon.url}/play/{match_id}")
    return page, errors, state


def test_a_hyphenated_bot_name_is_one_line_of_the_playboards_status_on_a_phone(tmp_path, browser: Browser) -> None:
    """Looking for other places a bot name broke at its hyphens: the Playboard's status
    ("Waiting for <name>…") would break an opponent's long name (a house strategy's is
    hyphenated too: "graded-50") as the trick caption did. Now the name is one line
    (nameWords), with the whole name as its title; a screen reader reads the status whole."""
    def waiting(state: dict[str, Any]) -> None:
        state.update(phase="playing", request=None, passed=None, received=None,
                     trick={"number": 0, "leader": (state["you"] + 1) % 4, "cards": []})

    with ThreadedDaemon(tmp_path) as daemon:
        page, errors, state = playing_renamed(browser, daemon, waiting)
        name = LONG_HYPHENATED[(state["you"] + 1) % 4]
        expect(page.locator("#status")).to_contain_text("Waiting for")
        assert_one_line_in_text(page, "#status", [name])
        expect(page.locator("#status .sr-only")).to_have_text(f"Waiting for {name}…")
        screenshot(page, "playboard-hyphenated-status-phone")
        page.context.close()
    assert not [e for e in errors if e.startswith("pageerror")], errors


def test_a_hyphenated_bot_name_is_one_line_of_the_playboards_result_on_a_phone(tmp_path, browser: Browser) -> None:
    """Looking for other places a bot name broke at its hyphens: the Playboard's result
    ("Winners: <name>, <name>") would break an opponent's long name as the replay's result
    did. Now each name is one line (nameWords), with the whole name as its title; a screen
    reader reads the line whole."""
    def over(state: dict[str, Any]) -> None:
        others = [s for s in range(4) if s != state["you"]][:2]
        state.update(request=None, result={"status": "finished", "winners": others, "ranks": [1, 1, 3, 4],
                                           "totals": [0, 0, 26, 52], "reason": "", "reason_key": None})

    with ThreadedDaemon(tmp_path) as daemon:
        page, errors, state = playing_renamed(browser, daemon, over)
        names = [LONG_HYPHENATED[s] for s in state["result"]["winners"]]
        expect(page.locator("#result .winner-line")).to_contain_text("Winners:")
        assert_one_line_in_text(page, "#result .winner-line", names)
        expect(page.locator("#result .winner-line .sr-only")).to_have_text(f"Winners: {', '.join(names)}")
        screenshot(page, "playboard-hyphenated-result-phone")
        page.context.close()
    assert not [e for e in errors if e.startswith("pageerror")], errors
