"""The table view in a real browser: live matches (no hidden card, ever) and replays
(exactly the record's state at any deal and trick)."""

from __future__ import annotations

import re
import time
from typing import Any

from playwright.sync_api import Browser, Page, expect

from hearts_engine import Match, MatchRecord, card_name, cards_of
from heartsbot.proto import admin_pb2, game_pb2

from heartsd.arena import SeatRequest

from .browser import (DESKTOP, HYPHENATED, LONG_HYPHENATED, NARROW, PHONE, RoutedJSON, assert_one_line_each,
                      assert_one_line_in_text, name_lines, overlapping, screenshot, seat_labels, watch_errors)
from .harness import ThreadedDaemon

# Every data-card ever added to the page, with the time (epoch ms) it appeared, until the
# page turns into the replay (the match is over: nothing is held any more).
OBSERVE = """() => {
  window.seen = [];
  window.backsWithIdentity = 0;
  const note = () => {
    if (document.querySelector('.badge.replay')) return;
    const now = performance.timeOrigin + performance.now();
    for (const node of document.querySelectorAll('[data-card]')) window.seen.push([node.dataset.card, now]);
    window.backsWithIdentity += document.querySelectorAll('.card.back[data-card]').length;
  };
  new MutationObserver(note).observe(document.body, {subtree: true, childList: true, attributes: true});
  note();
}"""


def house_match(daemon: ThreadedDaemon, deals: int) -> Any:
    seats = [SeatRequest(house=s) for s in ("heuristic", "random", "heuristic", "random")]
    return daemon.call(lambda: daemon.arena.create_match(
        "standard", 4, admin_pb2.RulesetOptions(), game_pb2.MatchFormat(fixed_deals=deals), None, seats,
        game_pb2.ClockSettings()))


def watching_house_match(daemon: ThreadedDaemon, browser: Browser) -> tuple[Any, Any, list[str]]:
    """A 2-deal house match watched live: (its runner, the page, the page's errors)."""
    runner = house_match(daemon, deals=2)
    page = browser.new_page(viewport=DESKTOP)
    errors = watch_errors(page)
    page.goto(f"{daemon.url}/watch/{runner.id}")
    page.wait_for_selector(".badge.live")
    return runner, page, errors


def replaying_house_match(daemon: ThreadedDaemon, browser: Browser, viewport: Any) -> tuple[Any, Any, list[str]]:
    """A finished 2-deal house match's replay, open at its first deal as dealt: (its runner,
    the page, the page's errors)."""
    runner = house_match(daemon, deals=2)
    daemon.call(lambda: runner.finished.wait(), timeout=60)
    page = browser.new_page(viewport=viewport)
    errors = watch_errors(page)
    page.goto(f"{daemon.url}/watch/{runner.id}?deal=1&step=0")
    expect(page.locator("#table")).to_have_attribute("data-step", "0")
    return runner, page, errors


def test_a_live_table_never_shows_a_card_that_a_seat_still_holds(tmp_path, browser: Browser) -> None:
    """Watched through a whole match, the page never has a data-card before that card was
    played: each card's first appearance is after the server published its CardPlayed
    event (house moves are 60 ms apart, far above the clocks' skew)."""
    with ThreadedDaemon(tmp_path, house_delay_ms=60) as daemon:
        runner, page, errors = watching_house_match(daemon, browser)
        page.evaluate(OBSERVE)
        page.wait_for_selector("#table .trick [data-card]", timeout=20_000)
        screenshot(page, "table-live")
        daemon.call(lambda: runner.finished.wait(), timeout=120)
        page.wait_for_selector(".badge.replay", timeout=20_000)  # over: the page shows the replay
        seen = page.evaluate("window.seen")
        assert page.evaluate("window.backsWithIdentity") == 0
        # When each card was played, on the same wall clock as the page's.
        offset = time.time() - time.monotonic()
        played: dict[tuple[int, str], float] = {}
        deal = -1
        for at, event in runner.log_events.revealed_after(0):
            kind = event.WhichOneof("kind")
            if kind == "deal_started":
                deal = event.deal_started.deal_number
            elif kind == "card_played":
                card = event.card_played.card
                played[(deal, card_name((card.suit - 1) * 13 + card.rank - 2))] = (at + offset) * 1000
        by_card: dict[str, list[float]] = {}
        for (_, card), at in played.items():
            by_card.setdefault(card, []).append(at)
        assert len(seen) > 50, "the page showed the match's cards as they were played"
        for card, at in seen:
            assert card in by_card, f"{card} was never played, yet the page showed it"
            assert any(at >= t - 15 for t in by_card[card]), f"{card} was shown before it was played"
        assert not errors, errors


def _record_state(record: Any, deal: int, tricks: int) -> dict[str, Any]:
    """The engine's state at (deal, after ``tricks`` tricks), from the stored record alone."""
    engine = MatchRecord.from_json(record.engine_record_json)
    match = Match(engine.rules, engine.format, engine.seed)
    steps = iter(engine.actions)
    while match.deal.number < deal:
        step = next(steps)
        match.apply(step.seat, step.action)
    d = match.deal  # kept: after its last trick the match moves on to the next deal
    while tricks and not (len(d.tricks) == tricks and not d.trick):
        step = next(steps)
        match.apply(step.seat, step.action)
    last = d.tricks[-1] if d.tricks else None
    return {
        "hands": [sorted(card_name(c) for c in cards_of(h)) for h in d.hands],
        "trick": sorted(card_name(c) for c in last.cards) if last else [],
        "winner": last.winner if last else None,
        "points": [d.rules.points_of(t) for t in d.taken],
        "totals": list(match.totals),
        "scores": [list(r.score) for r in match.results],
        "leader": last.leader if last else None,
    }


def _page_state(page: Page) -> dict[str, Any]:
    return page.evaluate("""() => ({
      hands: [...document.querySelectorAll('#hands .hand-row')].sort((a, b) => a.dataset.seat - b.dataset.seat)
        .map((row) => [...row.querySelectorAll('[data-card]')].map((c) => c.dataset.card).sort()),
      trick: [...document.querySelectorAll('#table .trick [data-card]')].map((c) => c.dataset.card).sort(),
      winner: [...document.querySelectorAll('#table .trick .winner')].map((c) => Number(c.dataset.seat)),
      leader: [...document.querySelectorAll('#table .trick .leader')].map((c) => Number(c.dataset.seat)),
      points: [...document.querySelectorAll('#table .seat')].sort((a, b) => a.dataset.seat - b.dataset.seat)
        .map((s) => Number(s.querySelector('.seat-stats').textContent.match(/-?\\d+/)[0])),
      scores: [...document.querySelectorAll('#scores tbody tr')].map((r) => [...r.querySelectorAll('td')].map((td) => Number(td.dataset.points))),
      totals: [...document.querySelectorAll('#scores tfoot td')].map((td) => Number(td.dataset.points)),
      deal: Number(document.querySelector('#table').dataset.deal),
      tricksDone: Number(document.querySelector('#table').dataset.tricksDone),
    })""")


def test_a_replay_scrubbed_to_deal_k_trick_t_shows_the_record_there(tmp_path, browser: Browser) -> None:
    with ThreadedDaemon(tmp_path) as daemon:
        runner = house_match(daemon, deals=3)
        daemon.call(lambda: runner.finished.wait(), timeout=60)
        record = daemon.arena.store.get(runner.id).record
        page = browser.new_page(viewport=DESKTOP)
        errors = watch_errors(page)
        for deal, tricks in ((1, 5), (2, 13), (0, 1), (1, 0)):
            page.goto(f"{daemon.url}/watch/{runner.id}?deal={deal + 1}&trick={tricks}")
            expect(page.locator("#table")).to_have_attribute("data-deal", str(deal))
            want = _record_state(record, deal, tricks)
            got = _page_state(page)
            assert got["deal"] == deal and got["tricksDone"] == tricks
            assert got["hands"] == want["hands"], (deal, tricks)
            assert got["trick"] == want["trick"], (deal, tricks)
            if want["winner"] is not None:
                assert got["winner"] == [want["winner"]] and got["leader"] == [want["leader"]]
            assert got["points"] == want["points"]
            assert got["scores"] == want["scores"] and got["totals"] == want["totals"]
        # Before: "1 tricks" (and "1 pts", "1 deals"): English has a singular.
        page.goto(f"{daemon.url}/watch/{runner.id}?deal=1&trick=1")
        expect(page.locator("#table")).to_have_attribute("data-tricks-done", "1")
        text = page.locator("#table").inner_text()
        assert re.search(r"\b1 trick\b", text) and not re.search(r"\b1 (tricks|pts)\b", text), text
        # Before: both heuristic seats were "heuristic (house)", so a winner or a trick's
        # taker could be either.
        names = page.locator("#main").inner_text()
        assert "heuristic (house, seat 1)" in names and "heuristic (house, seat 3)" in names, names
        # Before: ?step=abc left the page blank, every step's note ended in "null" text
        # (one per missing part), and ?speed=-1 played at full speed.
        page.goto(f"{daemon.url}/watch/{runner.id}?deal=2&step=abc&speed=-1")
        expect(page.locator("h1")).to_have_text(f"Match {runner.id}")  # before: no h1 at all
        expect(page.locator("#table")).to_have_attribute("data-step", "0")
        assert "null" not in page.locator("#decision").inner_text()
        page.click("#step-forward")
        expect(page.locator("#table")).to_have_attribute("data-step", "1")
        assert "null" not in page.locator("#decision").inner_text()
        expect(page.locator("#speed")).to_have_value("1")
        screenshot(page, "replay-desktop")
        # The controls: jump by trick, step, and each decision's provenance and think time.
        page.goto(f"{daemon.url}/watch/{runner.id}?deal=2&step=0")
        expect(page.locator("#table")).to_have_attribute("data-step", "0")
        page.select_option("#jump-trick", value="3")
        expect(page.locator("#table")).to_have_attribute("data-tricks-done", "3")
        step = int(page.locator("#table").get_attribute("data-step"))
        page.click("#step-forward")
        expect(page.locator("#table")).to_have_attribute("data-step", str(step + 1))
        index = page.evaluate("window.location.search")
        assert "step=" in index
        decisions = [d for d in record.decisions]
        first_of_deal = next(i for i, d in enumerate(decisions) if d.deal_number == 1)
        decision = decisions[first_of_deal + step]  # frame step+1 follows decision number `step` of the deal
        prov = page.locator(".decision .prov")
        expect(prov).to_have_attribute("data-provenance", game_pb2.Provenance.Name(decision.provenance)
                                       .removeprefix("PROVENANCE_").lower())
        expect(page.locator(".decision .think")).to_have_attribute("data-think-ms", str(decision.think_ms))
        # Read as text, the parts are apart (before: "played 2♦house bot 0 ms").
        assert re.search(r"\S · \S.* · \d+ ms", page.locator("#decision").inner_text()), page.locator(
            "#decision").inner_text()
        page.click("#step-back")
        expect(page.locator("#table")).to_have_attribute("data-step", str(step))
        page.select_option("#speed", value="8")
        page.click("#play")
        expect(page.locator("#play")).to_have_attribute("aria-label", "Pause")
        page.wait_for_function(f"() => Number(document.querySelector('#table').dataset.step) > {step + 2}")
        page.click("#play")
        expect(page.locator("#play")).to_have_attribute("aria-label", "Play")
        page.select_option("#jump-deal", index=2)  # deals 0, 1, 2: the third
        expect(page.locator("#table")).to_have_attribute("data-deal", "2")
        page.set_viewport_size(PHONE)
        screenshot(page, "replay-phone")
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        assert not errors, errors


def test_pages_switch_language(tmp_path, browser: Browser) -> None:
    with ThreadedDaemon(tmp_path) as daemon:
        page = browser.new_page(viewport=PHONE)
        page.goto(f"{daemon.url}/")
        expect(page.locator("#play-button")).to_have_text("Play against the house")
        # The person's whole clock, the bank included (a newcomer's pass: it was left out).
        decision_s, bank_s = daemon.settings.human_decision_ms // 1000, daemon.settings.human_bank_ms // 1000
        expect(page.locator("main")).to_contain_text(
            f"A person has {decision_s} s per decision, and {bank_s} s more for the whole match")
        page.select_option("#lang", "id")
        expect(page.locator("#play-button")).to_have_text("Main melawan bot rumah")
        page.reload()  # the choice is kept
        expect(page.locator("#play-button")).to_have_text("Main melawan bot rumah")
        page.select_option("#lang", "vi")
        expect(page.locator("#play-button")).to_have_text("Chơi với máy")
        page.click("#play-button")
        page.wait_for_url(re.compile(r"/play/"))
        expect(page.locator("#pass-button")).to_have_text(re.compile(r"^Chuyền bài cho (Tây|Bắc|Đông)$"))
        expect(page.locator("#hand [data-card]").first).to_have_attribute("aria-label", re.compile(r" (chuồn|rô|cơ|bích)$"))
        screenshot(page, "playboard-vi-phone")
        page.select_option("#lang", "id")
        expect(page.locator("#pass-button")).to_have_text(re.compile(r"^Oper kartu ke (Barat|Utara|Timur)$"))
        page.select_option("#lang", "en")
        expect(page.locator("#pass-button")).to_have_text(re.compile(r"^Pass cards to (West|North|East)$"))
        # A trick of one point is "1 pt" (a newcomer's pass: "You win the trick (1 pts)").
        said = page.evaluate("""async () => { const { t } = await import("/static/js/i18n.js");
            return [1, 5].flatMap((points) => [t("you_win_trick", { points, n: points }),
                                               t("wins_trick", { name: "West", points, n: points })]); }""")
        assert said == ["You win the trick (1 pt)", "West wins the trick (1 pt)",
                        "You win the trick (5 pts)", "West wins the trick (5 pts)"], said


FOCUSED = "document.activeElement?.id || document.activeElement?.tagName"


def test_replay_controls_keep_focus_and_take_a_slow_click_at_every_speed(tmp_path, browser: Browser) -> None:
    """Before (a QA pass): every frame drew the controls anew, so Enter on "Step forward"
    worked once and focus then fell to <body> (the slider and the deal picker likewise),
    and a person's click on Pause (press, 150 ms, release) was lost at 2x-8x: the button
    pressed was gone before the release. Now the controls stay and are updated in place."""
    with ThreadedDaemon(tmp_path) as daemon:
        runner, page, errors = replaying_house_match(daemon, browser, DESKTOP)
        page.focus("#step-forward")
        for k in range(1, 4):
            page.keyboard.press("Enter")
            expect(page.locator("#table")).to_have_attribute("data-step", str(k))
            assert page.evaluate(FOCUSED) == "step-forward"
        page.focus("#scrub")
        for k in range(4, 6):
            page.keyboard.press("ArrowRight")
            expect(page.locator("#table")).to_have_attribute("data-step", str(k))
            assert page.evaluate(FOCUSED) == "scrub"
        page.focus("#jump-deal")
        page.keyboard.press("ArrowDown")
        expect(page.locator("#table")).to_have_attribute("data-deal", "1")
        assert page.evaluate(FOCUSED) == "jump-deal"
        page.goto(f"{daemon.url}/watch/{runner.id}?deal=1&step=0")
        for speed in ("2", "4", "8"):
            page.select_option("#speed", speed)
            page.click("#play")
            expect(page.locator("#play")).to_have_attribute("aria-label", "Pause")
            box = page.locator("#play").bounding_box()
            assert box is not None
            page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
            page.mouse.down()
            page.wait_for_timeout(150)  # a person's press: frames go by meanwhile
            page.mouse.up()
            expect(page.locator("#play")).to_have_attribute("aria-label", "Play")
        assert not errors, errors


def test_a_replay_step_the_server_refuses_is_said_and_the_replay_stays_where_it_was(tmp_path, browser: Browser) -> None:
    """A browser reader's pass: a deal's frames refused (the server's rate, a restart) when a
    control stepped into it were an unhandled promise rejection; the page said nothing, and
    its deal picker showed the deal asked for over the one still shown. Now the refusal is
    said under the controls (in the page's language), the replay and its controls stay where
    they were, autoplay stops, and the next step that works clears it."""
    with ThreadedDaemon(tmp_path) as daemon:
        runner, page, errors = replaying_house_match(daemon, browser, PHONE)
        refused = RoutedJSON({})
        refused.status = 429
        page.route(f"**/api/replay/{runner.id}/deals/1", refused)
        def play_from_the_deals_end() -> None:
            page.select_option("#jump-trick", label="After trick 13")
            expect(page.locator("#table")).to_have_attribute("data-tricks-done", "13")
            page.click("#play")

        for act in (lambda: page.click("#next-deal"), lambda: page.select_option("#jump-deal", label="2"),
                    play_from_the_deals_end):
            asked = len(refused.asked)
            act()
            expect(page.locator("#replay-error")).to_have_text(re.compile(r"^Error: too many requests"))
            assert len(refused.asked) > asked
            expect(page.locator("#table")).to_have_attribute("data-deal", "0")
            expect(page.locator("#jump-deal")).to_have_value("0")
            expect(page.locator("#play")).to_have_attribute("aria-label", "Play")
            page.click("#step-back")  # the first deal is shown; a step that works clears the error
            expect(page.locator("#replay-error")).to_be_empty()
            page.click("#prev-deal")
        page.click("#next-deal")
        page.select_option("#lang", "id")
        expect(page.locator("#replay-error")).to_have_text(re.compile(r"^Galat: terlalu banyak permintaan"))
        page.unroute(f"**/api/replay/{runner.id}/deals/1")
        page.click("#next-deal")
        expect(page.locator("#table")).to_have_attribute("data-deal", "1")
        expect(page.locator("#replay-error")).to_be_empty()
        screenshot(page, "replay-step-refused-phone")
        page.close()
    assert not [e for e in errors if e.startswith("pageerror")], errors
    assert [e for e in errors if "429" in e], errors  # the refusals were the only errors


def test_a_watched_match_that_ends_shows_its_final_frame_and_totals(tmp_path, browser: Browser) -> None:
    """Before (a QA pass): when a watched live match ended the page turned into its replay at
    deal 1, step 0, so the score panel read Total 0/0/0/0 beside "Match over - Winner: ...",
    and a replay opened from the lobby likewise. Now the page that watched the end shows the
    last frame (the final totals), and the result box states every seat's total and rank,
    best first (a newcomer's look: in seat order, "rank 3" was listed before "rank 2")."""
    with ThreadedDaemon(tmp_path, house_delay_ms=40) as daemon:
        runner, page, errors = watching_house_match(daemon, browser)
        daemon.call(lambda: runner.finished.wait(), timeout=120)
        page.wait_for_selector(".badge.replay", timeout=20_000)
        record = daemon.arena.store.get(runner.id).record
        last = record.deal_scores[-1].deal_number
        expect(page.locator("#table")).to_have_attribute("data-deal", str(last))
        frames = page.evaluate(f"fetch('/api/replay/{runner.id}/deals/{last}').then(r => r.json())")["frames"]
        expect(page.locator("#table")).to_have_attribute("data-step", str(len(frames) - 1))
        totals = page.eval_on_selector_all("#scores tfoot td", "cells => cells.map(td => Number(td.dataset.points))")
        assert totals == list(record.result.totals)
        screenshot(page, "table-live-ended")
        page.goto(f"{daemon.url}/watch/{runner.id}")  # as from the lobby: the start of deal 1
        expect(page.locator("#table")).to_have_attribute("data-step", "0")
        final = page.locator("#result .final li")
        expect(final).to_have_count(4)
        shown = final.evaluate_all(
            "items => items.map(i => [Number(i.dataset.rank), Number(i.dataset.seat), Number(i.dataset.points)])")
        assert shown == sorted([r, s, p] for s, (p, r) in enumerate(zip(record.result.totals, record.result.ranks)))
        best = list(record.result.ranks).index(1)
        expect(final.first).to_contain_text(f"{record.result.totals[best]} (rank 1)")
        assert not errors, errors


def test_the_lobby_says_a_set_tables_score_is_held_while_its_other_table_plays(tmp_path, browser: Browser) -> None:
    """An organiser's pass: a duplicate set's table that had finished while the other still
    played was listed "finished, 0 deals" (its score is held back: those seats' cards are
    the other table's hands), which reads as a match that never played. The lobby now
    says the score is held until the set ends, and shows it once the set is over."""
    import asyncio

    from heartsd import duplicate
    from tests.server.harness import Bot, Daemon, random_legal

    names = [f"s{i}" for i in range(8)]
    tokens = {n: f"token-{n}-0123456789" for n in names}
    go_on = asyncio.Event()

    async def held(request: Any, bot: Any) -> Any:
        await go_on.wait()
        return random_legal(1)(request, bot)

    with ThreadedDaemon(tmp_path, bot_tokens=tokens) as daemon:
        target = Daemon(daemon.arena, daemon.web.grpc_port, daemon.settings)

        async def start() -> Any:
            bots = [await Bot(target, n, random_legal(i) if i < 4 else held, token=tokens[n]).start()
                    for i, n in enumerate(names)]
            started = await duplicate.start_set(daemon.arena, "standard", 2, [names[:4], names[4:]], rated=False)
            return bots, started.runners

        bots, (a, b) = daemon.call(start)
        daemon.call(lambda: asyncio.wait_for(a.finished.wait(), 60))
        page = browser.new_page(viewport=DESKTOP)
        errors = watch_errors(page)
        for _ in range(300):
            if daemon.arena.store.get(a.id).status == "finished":
                break
            time.sleep(0.05)
        page.goto(daemon.url)
        row = page.locator(f'#recent li[data-match="{a.id}"]')
        expect(row).to_contain_text("score held until its duplicate set ends")
        expect(row).not_to_contain_text("0 deals")
        table = browser.new_page(viewport=DESKTOP)  # its replay, opened meanwhile: held, said, then shown
        table_errors = watch_errors(table)
        table.goto(f"{daemon.url}/watch/{a.id}")
        expect(table.locator("#status .badge.delayed")).to_be_visible(timeout=20_000)
        expect(table.locator("#status")).to_contain_text("available when every table is over")
        expect(table.locator("#status .error")).to_have_count(0)  # before: "Error: another table ..."
        daemon.loop.call_soon_threadsafe(go_on.set)  # type: ignore[union-attr]
        for _ in range(600):
            if daemon.arena.store.get(b.id).status == "finished":
                break
            time.sleep(0.05)
        expect(table.locator(".badge.replay")).to_be_visible(timeout=30_000)  # without a reload
        page.reload()
        expect(page.locator(f'#recent li[data-match="{a.id}"]')).to_contain_text("2 deals")
        assert not [e for e in table_errors if "409" not in e], table_errors

        async def close() -> None:
            for bot in bots:
                await bot.close()

        daemon.call(close)
        assert not errors, errors


def test_the_lobby_keeps_its_lists_and_the_keyboards_place_through_its_refreshes(tmp_path, browser: Browser) -> None:
    """A spectator's pass: the lobby drew its match lists anew every 5 s whatever came, so a
    keyboard user on a match's link lost their place (focus went back to the page) every
    5 s; it asked again every 5 s even while a request was unanswered, and a refused
    refresh (the server's rate, a restart) replaced the live list with the error. Now it
    draws only what changed, keeps focus on the same match's link when it does, keeps what
    it shows through a refusal and waits longer after one."""

    def item(match_id: str, deals: int) -> dict[str, Any]:
        seats = [{"seat": i, "name": f"bot{i}", "house": False, "human": False} for i in range(4)]
        return {"match_id": match_id, "ruleset": "standard", "seats": seats, "status": "running", "deals": deals,
                "totals": [], "withheld": False}

    lists = RoutedJSON({"live": [item("m-a", 1), item("m-b", 1)], "recent": []})
    with ThreadedDaemon(tmp_path) as daemon:
        page = browser.new_page(viewport=DESKTOP)
        errors = watch_errors(page)
        page.route("**/api/matches", lists)
        page.clock.install()
        page.goto(daemon.url)
        link = page.locator('#live li[data-match="m-b"] a')
        expect(link).to_be_visible()
        page.eval_on_selector("#live ul", "list => { list.dataset.kept = 'yes'; }")

        assert lists.asked_within(page, 5_000) == 1
        assert page.eval_on_selector("#live ul", "list => list.dataset.kept") == "yes", "drawn again unchanged"
        link.focus()
        lists.body["live"] = [item("m-a", 2), item("m-b", 2)]
        assert lists.asked_within(page, 5_000) == 1
        expect(page.locator('#live li[data-match="m-b"]')).to_contain_text("2")
        expect(page.locator('#live li[data-match="m-b"] a')).to_be_focused()
        lists.status = 429
        assert lists.asked_within(page, 5_000) == 1
        expect(page.locator('#live li[data-match="m-a"]')).to_be_visible()  # kept through the refusal
        assert page.locator("#live .error").count() == 0
        assert lists.asked_within(page, 5_000) == 0, "after a refusal the page waits longer"
        page.close()
    assert not [e for e in errors if e.startswith("pageerror")], errors


def test_the_lobby_says_a_running_matchs_deals_are_those_played_so_far(tmp_path, browser: Browser) -> None:
    """A newcomer's look at the lobby: a running match read "6 deals · running", as a finished
    one reads "16 deals · finished", though it was the deals played so far of a longer match."""

    def item(match_id: str, status: str, deals: int) -> dict[str, Any]:
        seats = [{"seat": i, "name": f"bot{i}", "house": False, "human": False} for i in range(4)]
        return {"match_id": match_id, "ruleset": "standard", "seats": seats, "status": status, "deals": deals,
                "totals": [], "withheld": False}

    lists = RoutedJSON({"live": [item("m-a", "running", 6), item("m-b", "running", 1)],
                        "recent": [item("m-c", "finished", 16)]})
    with ThreadedDaemon(tmp_path) as daemon:
        page = browser.new_page(viewport=DESKTOP)
        page.route("**/api/matches", lists)
        page.goto(daemon.url)
        expect(page.locator('#live li[data-match="m-a"] .muted')).to_have_text("6 deals played · running")
        expect(page.locator('#live li[data-match="m-b"] .muted')).to_have_text("1 deal played · running")
        expect(page.locator('#recent li[data-match="m-c"] .muted')).to_have_text("16 deals · finished")
        page.select_option("#lang", "id")
        expect(page.locator('#live li[data-match="m-a"] .muted')).to_have_text("6 ronde dimainkan · berjalan")
        page.close()


def test_a_held_replay_says_why_in_the_pages_language(tmp_path, browser: Browser) -> None:
    """The last closing note: a replay held while its duplicate set's other table plays said
    why in the daemon's English on the Indonesian and Vietnamese pages. The refusal now
    carries its code (set_running) and the page says it in its language."""
    with ThreadedDaemon(tmp_path) as daemon:
        arena = daemon.arena
        done = house_match(daemon, deals=1)
        daemon.call(lambda: done.finished.wait(), timeout=30)
        playing = daemon.call(lambda: arena.create_match(  # the set's other table, slowly
            "standard", 4, admin_pb2.RulesetOptions(), game_pb2.MatchFormat(fixed_deals=2), None,
            [SeatRequest(house="random")] * 4, game_pb2.ClockSettings(),
            prepare=lambda r: setattr(r, "house_delay_s", 1.0)))
        with arena.store.db.transaction() as tx:
            tx.execute("UPDATE matches SET set_id = 'set-1' WHERE id IN (?, ?)", (done.id, playing.id))
        page = browser.new_page(viewport=DESKTOP)
        errors = watch_errors(page)
        page.goto(f"{daemon.url}/watch/{done.id}?lang=vi")
        expect(page.locator("#status .badge.delayed")).to_be_visible(timeout=20_000)
        expect(page.locator("#status")).to_contain_text("một bàn khác trong bộ trùng lặp của trận này vẫn đang chơi")
        page.select_option("#lang", "id")  # said again in the new language, not at the next ask only
        expect(page.locator("#status")).to_contain_text("meja lain dari set duplikat pertandingan ini masih dimainkan",
                                                        timeout=1_000)
        page.select_option("#lang", "en")
        expect(page.locator("#status")).to_contain_text("available when every table is over", timeout=1_000)
        daemon.loop.call_soon_threadsafe(arena.cancel, playing.id, "")  # type: ignore[union-attr]
        expect(page.locator(".badge.replay")).to_be_visible(timeout=30_000)  # the set is over: shown
    assert not [e for e in errors if "409" not in e], errors


def test_a_match_without_a_record_says_so_and_is_not_taken_for_a_held_one(tmp_path, browser: Browser) -> None:
    """A match without a record (its server was killed before its first checkpoint) was
    taken for a held replay: "Delayed" with the refusal's words, asked for again every 3 s
    for ever. Only the refusals of a replay that comes later by itself (their codes) are
    held now; this one is said once, as an error, in the page's language."""
    with ThreadedDaemon(tmp_path) as daemon:
        gone = house_match(daemon, deals=1)
        daemon.call(lambda: gone.finished.wait(), timeout=30)
        with daemon.arena.store.db.transaction() as tx:
            tx.execute("UPDATE matches SET record = NULL WHERE id = ?", (gone.id,))
        page = browser.new_page(viewport=DESKTOP)
        errors = watch_errors(page)
        asked: list[str] = []
        page.on("request", lambda r: asked.append(r.url) if "/api/replay/" in r.url else None)
        page.goto(f"{daemon.url}/watch/{gone.id}?lang=id")
        expect(page.locator("#status .error")).to_contain_text("Galat: pertandingan ini tidak punya catatan",
                                                               timeout=20_000)
        expect(page.locator("#status .badge.delayed")).to_have_count(0)
        time.sleep(3.5)  # past HELD_RETRY_MS: not asked for again
        expect(page.locator("#status .error")).to_contain_text("tidak punya catatan")
        assert len(asked) == 1, asked
    assert not [e for e in errors if "409" not in e], errors


# Every state of the live table while it is delayed: (deal, cards on the table, face-up hand cards).
OBSERVE_DELAYED = """() => {
  window.states = [];
  const note = () => {
    if (document.querySelector('.badge.replay')) return;
    window.states.push([Number(document.querySelector('#table').dataset.deal),
      document.querySelectorAll('#table .trick [data-card]').length,
      document.querySelectorAll('#hands .hand-row [data-card]').length,
      document.querySelector('#status')?.textContent ?? '']);
  };
  new MutationObserver(note).observe(document.body, {subtree: true, childList: true, attributes: true});
}"""


def test_a_delayed_table_plays_each_released_deal_card_by_card_with_every_hand(tmp_path, browser: Browser) -> None:
    """A browser pass: with a spectator delay the "live" page got one snapshot per deal,
    each at its 13th trick (no card was ever seen played), never drew the released hands
    the feed carries, and said "Live" while it was a deal and the delay behind. Each
    released deal is now played out card by card with every hand face up (it is over:
    RULES.md's delay shows every hand), and the page says it is delayed and by how long."""
    with ThreadedDaemon(tmp_path, house_delay_ms=100, spectator_delay_s=1) as daemon:
        runner, page, errors = watching_delayed(daemon, browser)
        page.evaluate(OBSERVE_DELAYED)
        page.wait_for_selector("#hands .hand-row [data-card]", timeout=60_000)
        page.wait_for_selector("#table .trick [data-card]", timeout=60_000)
        screenshot(page, "table-delayed")
        daemon.call(lambda: runner.finished.wait(), timeout=120)
        page.wait_for_selector(".badge.replay", timeout=60_000)
        states = page.evaluate("window.states")
    first_deal = [s for s in states if s[0] == 0]
    on_table = {cards for _, cards, _, _ in first_deal}
    assert {1, 2, 3} <= on_table, on_table  # before: only whole deals, at their end
    assert any(hands > 0 and cards > 0 for _, cards, hands, _ in first_deal), "no hand was shown face up"
    assert all("1 s" in status for _, _, _, status in states if status), {s[3] for s in states}
    assert not errors, errors


def watching_delayed(daemon: ThreadedDaemon, browser: Browser) -> tuple[Any, Any, list[str]]:
    runner = house_match(daemon, deals=2)
    page = browser.new_page(viewport=DESKTOP)
    errors = watch_errors(page)
    page.goto(f"{daemon.url}/watch/{runner.id}")
    page.wait_for_selector(".badge.delayed", timeout=30_000)
    return runner, page, errors


def test_an_address_of_nothing_reads_as_not_found(tmp_path, browser: Browser) -> None:
    """A browser pass: /watch/<no such match> kept the title "Watch" and drew an error over
    an empty green table; /bots/<no such bot> showed its name as the title and the empty
    Reliability, Rating over time and Latest matches sections. Both are 404 already; the
    page now reads as one: its title and heading say so, the reason, a way back."""
    with ThreadedDaemon(tmp_path) as daemon:
        page = browser.new_page(viewport=DESKTOP)
        for address, says in ((f"/watch/m-{'0' * 16}", "no match"), ("/bots/nosuchbot", "nosuchbot")):
            page.goto(f"{daemon.url}{address}")
            expect(page.locator("h1")).to_have_text("Not found", timeout=20_000)
            expect(page).to_have_title(re.compile(r"^Not found · Hearts Arena$"))
            expect(page.locator("main [role=alert]")).to_contain_text(says)
            expect(page.locator("main a[href='/']")).to_be_visible()
            assert page.locator("#table, #chart-title, #matches-title").count() == 0, address
            page.select_option("#lang", "id")  # the page's own redraw must not bring its sections back
            expect(page.locator("h1")).to_have_text("Tidak ditemukan")
            expect(page).to_have_title(re.compile(r"^Tidak ditemukan · "))
            # in the page's language too (a browser pass: the server's English "no match ..."):
            expect(page.locator("main [role=alert]")).to_contain_text(re.compile(r"^Tidak ada (pertandingan|bot)"))
            page.select_option("#lang", "en")


def test_a_duplicate_sets_table_plays_each_released_deal_card_by_card(tmp_path, browser: Browser) -> None:
    """A duplicate set's table is shown a deal at a time, once every table of the set has
    ended it (the other tables hold those cards). Watched live it jumped to each deal's end
    (the same browser pass as the delayed table); it is now played out card by card, and
    says why it is behind, without showing any hand."""
    import asyncio

    from heartsd import duplicate
    from tests.server.harness import Bot, Daemon, random_legal

    names = [f"d{i}" for i in range(8)]
    tokens = {n: f"token-{n}-0123456789" for n in names}

    def paced(pause_s: float) -> Any:
        async def policy(request: Any, bot: Any) -> Any:
            await asyncio.sleep(pause_s)
            return random_legal(5)(request, bot)
        return policy

    with ThreadedDaemon(tmp_path, bot_tokens=tokens) as daemon:
        target = Daemon(daemon.arena, daemon.web.grpc_port, daemon.settings)

        async def start() -> Any:
            bots = [await Bot(target, n, paced(0.02 if i < 4 else 0.05), token=tokens[n]).start()
                    for i, n in enumerate(names)]
            started = await duplicate.start_set(daemon.arena, "standard", 3, [names[:4], names[4:]], rated=False)
            return bots, started.runners

        bots, (a, b) = daemon.call(start)
        page = browser.new_page(viewport=DESKTOP)
        errors = watch_errors(page)
        page.goto(f"{daemon.url}/watch/{a.id}")
        page.wait_for_selector(".badge.delayed", timeout=30_000)
        page.evaluate(OBSERVE_DELAYED)
        daemon.call(lambda: b.finished.wait(), timeout=120)
        page.wait_for_selector(".badge.replay", timeout=60_000)
        states = page.evaluate("window.states")

        async def close() -> None:
            for bot in bots:
                await bot.close()

        daemon.call(close)
    first_deal = [s for s in states if s[0] == 0]
    assert {1, 2, 3} <= {cards for _, cards, _, _ in first_deal}, states  # before: each deal at its end
    assert all(hands == 0 for _, _, hands, _ in states), "a hand was shown"
    assert any("every table of its duplicate set" in status for _, _, _, status in states), {s[3] for s in states}
    assert not errors, errors


# How long the first deal's last trick was in view, taken (four cards, its winner marked):
# the longest stretch, in ms, from the page's own clock; and whether hearts read broken
# meanwhile, as they are at every deal's end (all its cards are played).
OBSERVE_LAST_TRICK = """() => {
  window.lastTrick = { since: null, longest: 0, heartsNotBroken: 0 };
  const note = () => {
    const trick = document.querySelector('#table .trick.complete[aria-label="Trick 13"]');
    const shown = Boolean(trick && trick.querySelectorAll('[data-card]').length === 4 && trick.querySelector('.winner')
                          && document.querySelector('#table').dataset.deal !== '1');
    const now = performance.now(), seen = window.lastTrick;
    if (shown && seen.since === null) seen.since = now;
    if (shown && document.querySelector('.hearts-state').dataset.broken !== '1') seen.heartsNotBroken += 1;
    if (!shown && seen.since !== null) { seen.longest = Math.max(seen.longest, now - seen.since); seen.since = null; }
  };
  new MutationObserver(note).observe(document.body, {subtree: true, childList: true, attributes: true});
  setInterval(note, 50);
}"""


# Whenever the live table changes: each seat's count of cards in hand as shown, whether a
# seat showed an empty hand as a bare "0" (beside its position, "North 0", it read as a score),
# and each seat label a screen reader hears with one card or one point ("1 cards" before).
OBSERVE_EMPTY_HANDS = """() => {
  window.emptyHands = { bare: [], counted: 0, emptied: 0, one: 0, plural: [] };
  const note = () => {
    for (const seat of document.querySelectorAll('#table .seat')) {
      const count = seat.querySelector('.count');
      if (count) window.emptyHands.counted += 1;
      const label = seat.getAttribute('aria-label') || '';
      if (/: 1 card,/.test(label)) window.emptyHands.one += 1;
      if (/\\b1 (cards|points)\\b/.test(label)) window.emptyHands.plural.push(label);
      if (/: 0 cards,/.test(seat.getAttribute('aria-label') || '')) {
        window.emptyHands.emptied += 1;
        if (count) window.emptyHands.bare.push(seat.querySelector('.line').textContent);
      }
    }
  };
  new MutationObserver(note).observe(document.body, {subtree: true, childList: true, attributes: true});
}"""


def test_a_seat_with_no_cards_left_shows_no_count(tmp_path, browser: Browser) -> None:
    """A newcomer's look at a live table: once a deal's last trick is taken, each seat's line
    read "North 0", its empty hand's count beside its position, which read as the seat's score
    (the score table beside it heads its columns "North" too). A seat with no card left shows
    no count; its label for a screen reader still says "0 cards". (A later pass: the label read
    "1 cards" and "1 points" too; it now says "1 card", "1 point".)"""
    with ThreadedDaemon(tmp_path, house_delay_ms=40) as daemon:
        runner = house_match(daemon, deals=2)
        page = browser.new_page(viewport=DESKTOP)
        errors = watch_errors(page)
        page.goto(f"{daemon.url}/watch/{runner.id}")
        page.evaluate(OBSERVE_EMPTY_HANDS)
        expect(page.locator("#table")).to_have_attribute("data-deal", "1", timeout=30_000)  # deal 1 ended, held in view
        seen = page.evaluate("window.emptyHands")
        daemon.call(lambda: runner.finished.wait(), timeout=120)
        page.close()
    assert seen["counted"] and seen["emptied"], seen  # hands were counted, and emptied at the deal's end
    assert not seen["bare"], seen["bare"][:4]
    assert seen["one"] and not seen["plural"], seen["plural"][:4]  # "1 card", "1 point": never "1 cards"
    assert not [e for e in errors if e.startswith("pageerror")], errors


def test_a_deals_last_trick_is_held_in_view_before_the_next_deal(tmp_path, browser: Browser) -> None:
    """A QA pass: the 13th trick's TrickWon comes with the next deal's start, so the live
    table drew the next deal at once and no viewer ever saw the last trick taken (nor who
    took it). It is now held in view a moment, as the deal ended, before the next deal."""
    with ThreadedDaemon(tmp_path, house_delay_ms=40) as daemon:
        runner = house_match(daemon, deals=3)
        page = browser.new_page(viewport=DESKTOP)
        errors = watch_errors(page)
        page.goto(f"{daemon.url}/watch/{runner.id}")
        page.evaluate(OBSERVE_LAST_TRICK)
        expect(page.locator("#table")).to_have_attribute("data-deal", "1", timeout=30_000)
        expect(page.locator(".badge.live")).to_be_visible()  # the live table's next deal, not the replay's
        seen = page.evaluate("window.lastTrick")
        daemon.call(lambda: runner.finished.wait(), timeout=120)
    assert seen["longest"] >= 1000, f"the last trick of deal 1 was in view {seen['longest']:.0f} ms"
    assert seen["heartsNotBroken"] == 0, "the deal as it ended read 'Hearts not broken' (the next deal's)"
    assert not errors, errors


def test_a_match_over_before_its_first_card_says_how_it_ended(tmp_path, browser: Browser) -> None:
    """A browser pass: the table page of a match cancelled before any card was played read
    only "Replay · Nothing here yet." (as if something were to come), and never said that it
    was over nor why. It now says no card was played, and the result: over, and the reason."""
    with ThreadedDaemon(tmp_path, house_delay_ms=10_000) as daemon:
        runner = house_match(daemon, deals=2)
        daemon.loop.call_soon_threadsafe(daemon.arena.cancel, runner.id, "")  # type: ignore[union-attr]
        daemon.call(lambda: runner.finished.wait(), timeout=30)
        page = browser.new_page(viewport=DESKTOP)
        errors = watch_errors(page)
        page.goto(f"{daemon.url}/watch/{runner.id}")
        expect(page.locator("#status")).to_contain_text("No card was played in this match.")
        expect(page.locator("#result")).to_contain_text("Match over")
        expect(page.locator("#result")).to_contain_text("The match ended: cancelled by an admin.")
        page.select_option("#lang", "id")
        expect(page.locator("#status")).to_contain_text("Tidak ada kartu yang dimainkan")
        expect(page.locator("#result")).to_contain_text("Pertandingan berakhir: dibatalkan oleh admin.")
        page.close()
    assert not [e for e in errors if "409" not in e], errors


def test_an_address_that_is_no_page_reads_in_the_pages_language(tmp_path, browser: Browser) -> None:
    """A browser pass: /nope (a mistyped address) was English on the Indonesian and
    Vietnamese pages, without the header and language menu every other page has. It now
    has them and says it is not found in the page's language, with the same ways on."""
    with ThreadedDaemon(tmp_path) as daemon:
        page = browser.new_page(viewport=PHONE)
        errors = watch_errors(page)
        response = page.goto(f"{daemon.url}/nope?lang=id")
        assert response is not None and response.status == 404
        expect(page.locator("h1")).to_have_text("Tidak ditemukan")
        expect(page).to_have_title("Tidak ditemukan · Hearts Arena")
        expect(page.locator("main [role=alert]")).to_have_text("Tidak ada halaman di alamat ini.")
        # The ways on keep the language of the address (i18n.js pageHref), the menu's choice too.
        expect(page.locator("main a[href='/?lang=id']")).to_have_text("Kembali ke lobi")
        expect(page.locator("main a[href='/leaderboard?lang=id']")).to_be_visible()
        page.select_option("#lang", "en")
        expect(page.locator("h1")).to_have_text("Not found")
        expect(page.locator("main [role=alert]")).to_have_text("There is no page at this address.")
        expect(page.locator("main a[href='/?lang=en']")).to_have_text("Back to the lobby")
        page.close()
    assert not [e for e in errors if "404" not in e], errors


def test_a_last_trick_already_drawn_is_held_for_the_rest_of_the_moment(tmp_path, browser: Browser) -> None:
    """The deal-end hold (table.js) as a function: a last trick that came in a snapshot of its
    own (a feed's batches may split anywhere) was drawn taken and replaced by the next deal
    at the very next snapshot, tens of ms later, never held; it is now held for what is left
    of the moment, and one drawn the whole moment long already is not held again."""
    with ThreadedDaemon(tmp_path) as daemon:
        page = browser.new_page(viewport=DESKTOP)
        page.goto(f"{daemon.url}/")
        said = page.evaluate("""async () => {
          const { dealEndHold } = await import("/static/js/table.js");
          const trick = { number: 12, leader: 1, winner: 2, cards: [1, 2, 3, 0].map((seat) => ({ seat, card: "2C" })) };
          const ended = { ruleset: { players: 4 }, deal: 0, trick: { number: 13, leader: 2, cards: [] }, last_trick: trick,
                          hand_sizes: [0, 0, 0, 0], deal_end: null };
          const next = { ruleset: { players: 4 }, deal: 1, trick: { number: 0, leader: -1, cards: [] }, last_trick: null,
                         hand_sizes: [13, 13, 13, 13], hearts_broken: false,
                         deal_end: { deal: 0, last_trick: trick, points_taken: [0, 0, 1, 0], tricks_won: [3, 3, 4, 3],
                                     hearts_broken: true } };
          const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
          let redrawn = 0;
          const view = dealEndHold(() => { redrawn += 1; }, 400);
          view(ended);
          await sleep(100);
          const soon = view(next);  // 100 ms after the last trick was drawn: held ~300 ms more
          const heldThen = view.holding();
          await sleep(200);
          const still = view.holding();
          await sleep(250);
          const after = [view.holding(), redrawn, view(next).deal];
          const late = dealEndHold(() => {}, 400);  // drawn the whole moment already: not held again
          late(ended);
          await sleep(450);
          return { soon: [soon.deal, soon.last_trick?.number, soon.hearts_broken], heldThen, still, after,
                   late: late(next).deal, lateHolding: late.holding() };
        }""")
        page.close()
    assert said == {"soon": [0, 12, True], "heldThen": True, "still": True, "after": [False, 1, 1], "late": 1,
                    "lateHolding": False}, said


def test_each_tables_tab_names_its_seats_and_its_match(tmp_path, browser: Browser) -> None:
    """A spectator's pass: every table's tab read "Watch · Hearts Arena", so with several
    tables open none could be told from another. A table's tab now names its seats (house
    seats by their strategy) and its match, live and as a replay, in the page's language."""
    with ThreadedDaemon(tmp_path, house_delay_ms=40) as daemon:
        runners = [house_match(daemon, deals=2) for _ in range(2)]
        pages, errors = [], []
        for runner in runners:
            page = browser.new_page(viewport=DESKTOP)
            errors += watch_errors(page)
            page.goto(f"{daemon.url}/watch/{runner.id}")
            expect(page).to_have_title(f"heuristic, random, heuristic, random · Match {runner.id} · Hearts Arena")
            pages.append(page)
        assert pages[0].title() != pages[1].title()
        page, runner = pages[0], runners[0]
        page.select_option("#lang", "id")
        expect(page).to_have_title(f"heuristic, random, heuristic, random · Pertandingan {runner.id} · Hearts Arena")
        page.select_option("#lang", "en")
        daemon.call(lambda: runner.finished.wait(), timeout=120)
        expect(page.locator(".badge.replay")).to_be_visible(timeout=20_000)
        expect(page).to_have_title(f"heuristic, random, heuristic, random · Match {runner.id} · Hearts Arena")
        for other in pages:
            other.close()
    assert not errors, errors


# A table drawn by table.js with seats of the given names, beside the page's own (its seat
# labels as seat_labels reads them): ladder bots' names, up to the 64 characters a name may have.
PROBE = """async (names) => {
  const { renderTable } = await import('/static/js/table.js');
  document.querySelector('#probe')?.remove();
  const root = document.createElement('div'), info = document.createElement('div');
  root.id = 'probe';
  document.querySelector('.play-area').append(root, info);
  const n = names.length;
  renderTable(root, info, { ruleset: { players: n }, phase: 'playing', trick: { leader: -1, cards: [] },
                            seats: names.map((name, seat) => ({ seat, name, house: false, human: false })),
                            hand_sizes: Array(n).fill(13), points_taken: Array(n).fill(0), tricks_won: Array(n).fill(0) });
}"""


def test_seat_labels_show_whole_names_that_tell_the_seats_apart(tmp_path, browser: Browser) -> None:
    """A spectator's pass: a seat's name was cut to one line of its box, "heuristic (ho…" for
    both of a table's heuristic seats (on a desktop too), and a ladder bot's "house-heu…" for
    house-heuristic and house-heuristic-2. A label now wraps, whole ("heuristic, seat 3": a
    house seat without "house"); a very long name shows its start and its end (which tell
    seats apart), and every label has the whole name as its title; on a phone and a desktop
    alike, every label within its box and the table."""
    want = ["heuristic (house, seat 1)", "random (house, seat 2)", "heuristic (house, seat 3)", "random (house, seat 4)"]
    shown = ["heuristic, seat 1", "random, seat 2", "heuristic, seat 3", "random, seat 4"]
    long = "montecarlo-information-set-search-with-an-opponent-model-v"
    ladder = ["house-heuristic", f"{long}1", "house-heuristic-2", f"{long}2"]
    with ThreadedDaemon(tmp_path, house_delay_ms=100) as daemon:
        runner = house_match(daemon, deals=2)
        page = browser.new_page(viewport=DESKTOP)
        errors = watch_errors(page)
        page.goto(f"{daemon.url}/watch/{runner.id}")
        expect(page.locator("#table .seat")).to_have_count(4)
        page.evaluate(PROBE, ladder)
        for size in (DESKTOP, PHONE):
            page.set_viewport_size(size)
            seats = seat_labels(page, "#table")
            assert [s["title"] for s in seats] == want, seats
            assert [s["text"] for s in seats] == shown, seats
            probe = seat_labels(page, "#probe")
            assert [s["title"] for s in probe] == ladder, probe
            texts = [s["text"] for s in probe]
            assert len(set(texts)) == len(texts), texts
            for name, text in zip(ladder, texts):
                head, _, tail = text.partition("…")
                assert text == name or (name.startswith(head) and name.endswith(tail) and tail), (name, text)
            for label in seats + probe:
                assert not label["overflows"] and label["inside"], (size, label)
            assert not overlapping(seats) and not overlapping(probe), size
        screenshot(page, "table-seat-labels-phone")
        page.close()
        daemon.call(lambda: runner.finished.wait(), timeout=120)
    assert not errors, errors


def test_a_hyphenated_bot_name_is_one_line_of_its_seat_on_a_phone(tmp_path, browser: Browser) -> None:
    """Before: on a phone a ladder bot's name broke at its hyphens, "house-" over
    "heuristic-2" (up to three lines of a seat), where a line break says a new word. Now a
    name is one line however narrow its seat: one wider than it loses its middle to an
    ellipsis and keeps its start and its end (what tells house-heuristic from
    house-heuristic-2), within its box, with the whole name as its title."""
    names = ["house-heuristic", "house-heuristic-2", "alpha-beta-pruner-v3", "mc-ismcts-opponent-model-v2"]
    with ThreadedDaemon(tmp_path, house_delay_ms=100) as daemon:
        runner = house_match(daemon, deals=2)
        page = browser.new_page(viewport=PHONE)
        errors = watch_errors(page)
        page.goto(f"{daemon.url}/watch/{runner.id}")
        expect(page.locator("#table .seat")).to_have_count(4)
        page.evaluate(PROBE, names)
        for size in (PHONE, DESKTOP):
            page.set_viewport_size(size)
            drawn = name_lines(page, "#probe .seat .who")
            assert [d["title"] for d in drawn] == names, drawn
            for name, label in zip(names, drawn):
                assert label["lines"] == 1 and label["first"] and label["last"], (size, name, label)
            for label in seat_labels(page, "#probe"):
                assert not label["overflows"] and label["inside"], (size, label)
        page.set_viewport_size(PHONE)
        screenshot(page, "table-hyphenated-names-phone")
        page.close()
        daemon.call(lambda: runner.finished.wait(), timeout=120)
    assert not errors, errors


def test_a_hyphenated_bot_name_is_one_line_of_the_lobbys_seat_list_on_a_phone(tmp_path, browser: Browser) -> None:
    """Before: the lobby's seat list broke ladder bots' names at their hyphens on a phone
    ("house-heuristic-" over "2"), as the seat labels and the leaderboard no longer do. Now
    each name is one line (nameWords), with the whole name as its title; a screen reader
    reads the list whole."""
    seats = [{"seat": i, "name": n, "house": False, "human": False} for i, n in enumerate(HYPHENATED)]
    item = {"match_id": "m-a", "ruleset": "standard", "seats": seats, "status": "finished", "deals": 16,
            "totals": [26, 0, 104, 52], "withheld": False}
    with ThreadedDaemon(tmp_path) as daemon:
        page = browser.new_page(viewport=PHONE)
        errors = watch_errors(page)
        page.route("**/api/matches", RoutedJSON({"live": [], "recent": [item]}))
        page.goto(daemon.url)
        expect(page.locator('#recent li[data-match="m-a"]')).to_be_visible()
        assert_one_line_each(page, '#recent li[data-match="m-a"] .seats .name', HYPHENATED)
        expect(page.locator('#recent li[data-match="m-a"] .seats .sr-only')).to_have_text(
            f"{', '.join(HYPHENATED)} — 26 / 0 / 104 / 52")
        screenshot(page, "lobby-hyphenated-names-phone")
        page.close()
    assert not [e for e in errors if e.startswith("pageerror")], errors


def test_a_hyphenated_bot_name_is_one_line_of_a_replays_hands_on_a_phone(tmp_path, browser: Browser) -> None:
    """Before: a replay's hands named their owners in words that broke at their hyphens on
    a phone. Now each owner's name is one line (nameWords), with the whole name as its title;
    a screen reader reads each owner and position whole. (A real replay; its seats renamed.)"""
    import json

    def renamed(route: Any) -> None:
        index = route.fetch().json()
        for seat, name in zip(index["seats"], HYPHENATED):
            seat.update(name=name, house=False, human=False)
        route.fulfill(content_type="application/json", body=json.dumps(index))

    with ThreadedDaemon(tmp_path) as daemon:
        runner = house_match(daemon, deals=1)
        daemon.call(lambda: runner.finished.wait(), timeout=120)
        page = browser.new_page(viewport=PHONE)
        errors = watch_errors(page)
        page.route(f"**/api/replay/{runner.id}", renamed)
        page.goto(f"{daemon.url}/watch/{runner.id}?deal=1&trick=3")
        expect(page.locator("#hands .hand-row")).to_have_count(4)
        assert_one_line_each(page, "#hands .hand-owner .name", HYPHENATED)
        expect(page.locator("#hands .hand-owner .sr-only")).to_have_text(
            [f"{name} · {where}" for name, where in zip(HYPHENATED, ("South", "West", "North", "East"))])
        screenshot(page, "replay-hyphenated-names-phone")
        page.close()
    assert not [e for e in errors if e.startswith("pageerror")], errors


def renamed_replay(daemon: ThreadedDaemon, browser: Browser, query: str) -> tuple[Any, Page, list[str]]:
    """A finished 1-deal house match's replay at ``query``, its seats renamed LONG_HYPHENATED
    (ladder bots): (its runner, the page at the narrowest phone's width, the page's errors)."""
    import json

    def renamed(route: Any) -> None:
        index = route.fetch().json()
        for seat, name in zip(index["seats"], LONG_HYPHENATED):
            seat.update(name=name, house=False, human=False)
        route.fulfill(content_type="application/json", body=json.dumps(index))

    runner = house_match(daemon, deals=1)
    daemon.call(lambda: runner.finished.wait(), timeout=120)
    page = browser.new_page(viewport=NARROW)
    errors = watch_errors(page)
    page.route(f"**/api/replay/{runner.id}", renamed)
    page.goto(f"{daemon.url}/watch/{runner.id}?{query}")
    expect(page.locator("#hands .hand-row")).to_have_count(4)
    return runner, page, errors


def test_a_hyphenated_bot_name_is_one_line_of_a_replays_trick_caption_on_a_phone(tmp_path, browser: Browser) -> None:
    """Before (a browser reader's pass): the caption under a replay's table ("<name> leads ·
    <name> wins the trick") broke a long ladder bot's name at its hyphens on a phone. Now
    each name is one line (nameWords), with the whole name as its title; a screen reader
    reads the caption whole."""
    with ThreadedDaemon(tmp_path) as daemon:
        runner, page, errors = renamed_replay(daemon, browser, "deal=1&trick=3")
        expect(page.locator("#table .trick .card.winner")).to_have_count(1)
        leader = int(page.locator("#table .trick .card.leader").get_attribute("data-seat"))
        winner = int(page.locator("#table .trick .card.winner").get_attribute("data-seat"))
        want = [LONG_HYPHENATED[leader], LONG_HYPHENATED[winner]]
        assert_one_line_in_text(page, "#table-info .trick-caption", want)
        expect(page.locator("#table-info .leader-text .sr-only")).to_have_text(f"{want[0]} leads")
        expect(page.locator("#table-info .winner-text .sr-only")).to_have_text(
            re.compile(rf"^{re.escape(want[1])} wins the trick \(\d+ pts?\)$"))
        screenshot(page, "replay-hyphenated-caption-phone")
        page.close()
    assert not [e for e in errors if e.startswith("pageerror")], errors


def test_a_hyphenated_bot_name_is_one_line_of_a_replays_result_on_a_phone(tmp_path, browser: Browser) -> None:
    """Before (a browser reader's pass): a replay's result ("Winner: <name>", then each
    seat's "<name>: 52 (rank 4)") broke a long ladder bot's name at its hyphens on a phone.
    Now each name is one line (nameWords), with the whole name as its title; a screen reader
    reads each line whole."""
    with ThreadedDaemon(tmp_path) as daemon:
        runner, page, errors = renamed_replay(daemon, browser, "deal=1&trick=3")
        final = page.locator("#result .final li")
        expect(final).to_have_count(4)
        result = page.evaluate(f"fetch('/api/replay/{runner.id}').then(r => r.json())")["result"]
        seats = final.evaluate_all("items => items.map(i => Number(i.dataset.seat))")
        winners = [LONG_HYPHENATED[s] for s in result["winners"]]
        assert_one_line_in_text(page, "#result", winners + [LONG_HYPHENATED[s] for s in seats])
        expect(page.locator("#result p .sr-only")).to_have_text(
            f"{'Winners' if len(winners) > 1 else 'Winner'}: {', '.join(winners)}")
        expect(final.locator(".sr-only")).to_have_text(
            [f"{LONG_HYPHENATED[s]}: {result['totals'][s]} (rank {result['ranks'][s]})" for s in seats])
        screenshot(page, "replay-hyphenated-result-phone")
        page.close()
    assert not [e for e in errors if e.startswith("pageerror")], errors


def test_a_hyphenated_bot_name_is_one_line_of_a_replays_decision_note_on_a_phone(tmp_path, browser: Browser) -> None:
    """Before: the note under a replay's controls ("<name> played 2♦") broke a long ladder
    bot's name at its hyphens on a phone, as the trick caption did. Now the name is one line
    (nameWords), with the whole name as its title; a screen reader reads the note whole."""
    with ThreadedDaemon(tmp_path) as daemon:
        runner, page, errors = renamed_replay(daemon, browser, "deal=1&trick=3")
        expect(page.locator("#table")).to_have_attribute("data-tricks-done", "3")
        step = int(page.locator("#table").get_attribute("data-step"))
        frames = page.evaluate(f"fetch('/api/replay/{runner.id}/deals/0').then(r => r.json())")["frames"]
        name = LONG_HYPHENATED[frames[step]["decision"]["seat"]]
        assert_one_line_in_text(page, "#decision .what", [name])
        expect(page.locator("#decision .what .sr-only")).to_have_text(re.compile(rf"^{re.escape(name)} played \S+$"))
        screenshot(page, "replay-hyphenated-decision-phone")
        page.close()
    assert not [e for e in errors if e.startswith("pageerror")], errors


def test_a_browser_over_the_connection_cap_is_shown_a_page_in_its_language(tmp_path, browser: Browser) -> None:
    """Before: a person whose address had too many connections open (tabs of live tables, a
    shared address) asked for a page and was shown the API's JSON as text. Now the page says
    it in the browser's language (its Accept-Language, or the page's ?lang=), whole in itself."""
    import socket

    with ThreadedDaemon(tmp_path, web_connections_per_peer=1) as daemon:
        held = socket.create_connection(("127.0.0.1", daemon.web.front.port))  # the address's one connection
        try:
            for locale, address, lang, heading in (("id-ID", "/leaderboard", "id", "503 · Terlalu banyak koneksi"),
                                                   ("en-GB", "/?lang=vi", "vi", "503 · Quá nhiều kết nối"),
                                                   ("en-US", "/watch/m-1", "en", "503 · Too many connections")):
                page = browser.new_page(viewport=DESKTOP, locale=locale)
                errors = watch_errors(page)
                response = page.goto(f"{daemon.url}{address}")
                assert response is not None and response.status == 503
                expect(page.locator("h1")).to_have_text(heading)
                expect(page.locator("html")).to_have_attribute("lang", lang)
                expect(page.locator("body")).not_to_contain_text('"error"')
                screenshot(page, f"connection-cap-{lang}")
                page.close()
                assert not [e for e in errors if e.startswith("pageerror")], errors
        finally:
            held.close()
