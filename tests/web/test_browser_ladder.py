"""The leaderboard and a bot page in a real browser, from a real ladder run: house
strategies registered as ladder bots, playing rated matches the matchmaker arranges."""

from __future__ import annotations

import asyncio
import json
import re
import time
import urllib.error
import urllib.request
from typing import Any

from playwright.sync_api import Browser, expect

from heartsbot.proto import game_pb2

from heartsd import tournaments as tours
from heartsd.server import start_ladder

from .browser import (DESKTOP, HYPHENATED, LONG_HYPHENATED, PHONE, RoutedJSON, assert_one_line_each,
                      assert_one_line_in_text, name_lines, screenshot, watch_errors)
from .harness import ThreadedDaemon

RATED = 4


async def connect_bots(daemon: ThreadedDaemon, names: Any, **options: Any) -> list[Any]:
    """Reference clients of ``names`` (random play), each running, once all are welcomed."""
    from heartsbot.client import BotClient
    from heartsbot.strategies import make_strategy

    from tests.server.harness import BOTS

    target = f"127.0.0.1:{daemon.web.grpc_port}"
    clients = [BotClient(target, BOTS[n], make_strategy("random"), n, version="v1", **options) for n in names]
    for c in clients:
        c.task = asyncio.get_running_loop().create_task(c.run())  # type: ignore[attr-defined]
    await asyncio.gather(*(asyncio.wait_for(c.connected.wait(), 30) for c in clients))
    return clients


async def stop_bots(clients: list[Any]) -> None:
    for c in clients:
        c.stop()
    await asyncio.gather(*(c.task for c in clients), return_exceptions=True)


def serve_bot_profile(page: Any, profile: dict[str, Any]) -> None:
    """Answer the page's requests for the profile of the bot "configured" with ``profile``
    (instead of any answer given before): its page is the daemon's, its data the test's."""
    page.unroute("**/api/bots/configured*")
    page.route("**/api/bots/configured*", lambda route: route.fulfill(content_type="application/json",
                                                                      body=json.dumps(profile)))


def test_the_leaderboard_and_a_bot_page_render_from_a_real_ladder_run(tmp_path, browser: Browser) -> None:
    with ThreadedDaemon(tmp_path, ladder=True, ladder_house=("random", "heuristic", "random", "heuristic", "random"),
                        ladder_deals=4, ladder_interval_s=0.2, decision_ms=500) as daemon:
        ladder_run = daemon.call(lambda: start_ladder(daemon.settings, daemon.arena, daemon.web.grpc_port))
        ladder = daemon.arena.store.ladder
        deadline = time.monotonic() + 120
        while ladder.latest_seq("standard") < RATED:
            assert time.monotonic() < deadline, "the ladder did not play its rated matches"
            time.sleep(0.2)
        # Stop matchmaking and let the matches in play finish, so the ratings stand still
        # while the pages are compared with them.
        daemon.loop.call_soon_threadsafe(ladder_run.stop_matchmaking)
        while daemon.arena.runners:
            assert time.monotonic() < deadline, "the ladder's last matches did not finish"
            time.sleep(0.2)
        standings = ladder.standings("standard")
        # A tournament among the same (connected) bots: its standings show on the page too.
        roster = sorted(ladder.owners())
        tour = daemon.call(lambda: daemon.arena.tournaments.create(
            "Web Cup", roster, "standard", 4, 1, 4, None, game_pb2.ClockSettings()))
        while daemon.arena.tournaments.store.get(tour.id).status != "finished":
            assert time.monotonic() < deadline, "the tournament did not finish"
            time.sleep(0.2)
        # A table that cannot start says why on the page. The reason is put in by hand here;
        # where it comes from (the director's wait for seats) is tested over gRPC, in
        # tests/server/test_tournament.py. Paused at once, so its third round stays pending.
        stuck = daemon.call(lambda: daemon.arena.tournaments.create(
            "Stuck Cup", roster, "standard", 4, 3, 4, None, game_pb2.ClockSettings()))
        daemon.call(lambda: daemon.arena.tournaments.set_status(stuck.id, "paused", ""))
        daemon.arena.tournaments._waiting[(stuck.id, 2, 0)] = tours.Waiting("bot 'ghost' is not connected")
        page = browser.new_page(viewport=DESKTOP)
        errors = watch_errors(page)
        page.goto(f"{daemon.url}/leaderboard?ruleset=standard")
        expect(page.locator(f".tournament[data-tournament='{stuck.id}'] .waiting")).to_have_text(
            "Waiting, table 3.1: bot 'ghost' is not connected")
        # Its played matches' links say which round and table (before: "1.1" alone, to a screen reader).
        cup = page.locator(f".tournament[data-tournament='{tour.id}'] a[href^='/watch/']")
        expect(cup.first).to_have_attribute("aria-label", "Round 1, table 1")
        rows = page.locator("#standings tbody tr")
        expect(rows.first).to_be_visible()
        shown = page.eval_on_selector_all("#standings tbody tr", "rows => rows.map(r => r.dataset.bot)")
        listed = [s.bot for s in ladder.standings("standard")]
        assert shown == listed[: len(shown)] and len(shown) >= len(standings) >= 4
        cup = page.locator(f".tournament[data-tournament='{tour.id}']")
        expect(cup).to_contain_text("Web Cup")
        expect(cup).to_contain_text("finished")
        final, _ = daemon.call(lambda: daemon.web.front.spectating.tournament("test", tour.id))
        listed_bots = cup.locator("tbody tr").evaluate_all("rows => rows.map(r => r.dataset.bot)")
        assert listed_bots == [r.bot for r in final.standings.rows] and len(listed_bots) >= 4
        # Ranks the data cannot separate read "2=", as the command line shows them (a newcomer's
        # pass: a plain "1" each), and the points per deal line up on the right like the header.
        ranks = cup.locator("tbody tr td:first-child").all_inner_texts()
        # (a bot that sat the round out, without a deal, has no rank yet: a dash)
        assert ranks == ["—" if not r.deals else f"{r.rank}=" if r.tied_with else str(r.rank)
                         for r in final.standings.rows], ranks
        align = cup.locator("tbody tr td:nth-child(3)").first.evaluate("td => getComputedStyle(td).textAlign")
        assert align == "right", align
        # The page keeps itself current: a table's new reason shows without a reload.
        daemon.arena.tournaments._waiting[(stuck.id, 2, 0)] = tours.Waiting("bot 'ghost' is not connected as v2")
        expect(page.locator(f".tournament[data-tournament='{stuck.id}'] .waiting")).to_have_text(
            "Waiting, table 3.1: bot 'ghost' is not connected as v2", timeout=20_000)
        screenshot(page, "leaderboard-desktop")
        best = shown[0]
        page.click(f"#standings tbody tr[data-bot='{best}'] a")
        page.wait_for_url(f"**/bots/{best}?ruleset=standard")
        expect(page.locator("#heading")).to_have_text(best)
        expect(page).to_have_title(f"{best} · Hearts Arena")  # before: "Leaderboard · Hearts Arena"
        chart = page.locator("#rating-chart")
        expect(chart).to_be_visible()
        history = ladder.rating_history("standard")[best]
        points = page.eval_on_selector_all("#rating-chart circle", "cs => cs.map(c => Number(c.dataset.rating))")
        assert points == [round(mu, 12) for _, _, mu, _ in history] or [round(p, 9) for p in points] == [
            round(mu, 9) for _, _, mu, _ in history]
        entry = next(s for s in ladder.standings("standard") if s.bot == best)
        assert abs(history[-1][2] - entry.mu) < 1e-9  # the chart ends at the rating the board shows
        expect(page.locator("#fig-decisions")).to_have_text(str(entry.decisions))
        matches = page.locator("#bot-matches tbody tr")
        expect(matches.first).to_be_visible()
        ids = page.eval_on_selector_all("#bot-matches tbody tr", "rows => rows.map(r => r.dataset.match)")
        assert ids == [m[0] for m in ladder.history(best, 50, "standard")]
        screenshot(page, "bot-desktop")
        page.set_viewport_size(PHONE)
        screenshot(page, "bot-phone")
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        page.click(f"#bot-matches tbody tr[data-match='{ids[0]}'] a")
        page.wait_for_url(f"**/watch/{ids[0]}*")
        expect(page.locator(".badge.replay")).to_be_visible()
        expect(page.locator("#hands [data-card]").first).to_be_visible()
        assert not errors, errors
        daemon.call(ladder_run.stop)  # the house bots' clients and the matchmaker


def test_the_leaderboards_ruleset_picker_keeps_focus(tmp_path, browser: Browser) -> None:
    """Before (a QA pass): choosing a ruleset by keyboard drew the picker anew, and focus
    fell to <body> after one arrow key."""
    with ThreadedDaemon(tmp_path) as daemon:
        page = browser.new_page(viewport=DESKTOP)
        errors = watch_errors(page)
        page.goto(f"{daemon.url}/leaderboard?ruleset=standard")
        picker = page.locator("#ruleset")
        expect(picker).to_have_value("standard")
        page.focus("#ruleset")
        page.keyboard.press("ArrowUp")  # standard is the last of them
        expect(page.locator("#heading")).not_to_have_text("Leaderboard: standard")
        chosen = picker.input_value()
        expect(page.locator("#heading")).to_have_text(f"Leaderboard: {chosen}")
        page.wait_for_load_state("networkidle")
        assert page.evaluate("document.activeElement?.id") == "ruleset"
        page.keyboard.press("ArrowUp")  # and on, from the keyboard
        expect(page.locator("#heading")).not_to_have_text(f"Leaderboard: {chosen}")
        assert page.evaluate("document.activeElement?.id") == "ruleset"
        assert not errors, errors


def test_why_a_tournaments_table_waits_is_said_in_the_pages_language(tmp_path, browser: Browser, monkeypatch) -> None:
    """The last closing note: a table's waiting reason (a roster bot gone) read "bot 'dave' is
    not connected" on the Indonesian and Vietnamese leaderboards too, the daemon's English.
    Now the director's reason carries its code (waiting_key) and the page says it in its
    language; the English page keeps the daemon's words. The wait for the seats the daemon
    says before it ("waited 0.3 s for the seats: ...") is said too: before, the translated
    text lost it."""
    monkeypatch.setattr(tours, "SEAT_WAIT_S", 0.3)
    names = ("alice", "bob", "carol", "dave")
    with ThreadedDaemon(tmp_path) as daemon:
        clients = daemon.call(lambda: connect_bots(daemon, names, max_matches=2, backoff_s=(0.05, 0.5)))
        directors = daemon.arena.tournaments
        tour = daemon.call(lambda: directors.create("Leavers Cup", list(names), "standard", 4, 200, 1, None,
                                                    game_pb2.ClockSettings()))
        deadline = time.monotonic() + 60
        while directors.store.get(tour.id).matches[1] < 1:
            assert time.monotonic() < deadline, "no match of the tournament finished"
            time.sleep(0.1)
        daemon.call(lambda: stop_bots(clients[-1:]))  # dave leaves: the next table waits for him
        # Said once the director has waited SEAT_WAIT_S for the seats (a reason said at once has no wait).
        while not any(w.text.startswith("waited") for w in directors.waiting(tour.id).values()):
            assert time.monotonic() < deadline, "no table said why it waits"
            time.sleep(0.1)
        try:
            page = browser.new_page(viewport=DESKTOP)
            errors = watch_errors(page)
            page.goto(f"{daemon.url}/leaderboard?ruleset=standard&lang=id")
            # (as a screen reader reads it: the bot it names is drawn as a name, one line, aria-hidden)
            waits = page.locator(f".tournament[data-tournament='{tour.id}'] .waiting .sr-only")
            expect(waits.first).to_have_text(re.compile(
                r"^Menunggu, meja \d+\.\d+: sudah menunggu kursinya 0\.3 dtk: bot “dave” tidak terhubung$"))
            page.select_option("#lang", "vi")
            expect(waits.first).to_have_text(re.compile(
                r"^Đang chờ, bàn \d+\.\d+: đã chờ ghế 0\.3 giây: bot “dave” chưa kết nối$"))
            page.select_option("#lang", "en")  # the daemon's own words
            expect(waits.first).to_have_text(re.compile(
                r"^Waiting, table \d+\.\d+: waited 0\.3 s for the seats: bot 'dave' is not connected$"))
            assert not errors, errors
        finally:
            daemon.call(lambda: directors.set_status(tour.id, "cancelled", ""))
            daemon.call(lambda: stop_bots(clients[:-1]))


def test_why_a_shutdown_found_a_tables_seats_not_free_is_said_in_the_pages_language(tmp_path, browser: Browser) -> None:
    """A table waiting for its seats when the daemon begins to shut down says "the server is
    shutting down (the seats were not free: bot 'ghost' is not connected)". Before, the
    Indonesian and Vietnamese pages said its code alone, "server sedang dimatikan": the
    bracket was dropped. Now it is said in every language, as the wait of a deadline
    ("waited 0.3 s for the seats: ...") is; a reason in brackets the language has no words
    for leaves the daemon's words whole. The reasons are put in by hand here, as the
    director says them (Waiting from the ArenaError); where the figure comes from is tested
    in tests/web/test_reason_codes.py. Paused at once, so its later rounds stay pending."""
    said = "the server is shutting down (the seats were not free: {})"
    names = ("alice", "bob", "carol", "dave")
    with ThreadedDaemon(tmp_path) as daemon:
        clients = daemon.call(lambda: connect_bots(daemon, names))  # a tournament's bots are connected at its start
        directors = daemon.arena.tournaments
        stuck = daemon.call(lambda: directors.create("Closing Cup", list(names), "standard", 4, 3, 1, None,
                                                     game_pb2.ClockSettings()))
        daemon.call(lambda: directors.set_status(stuck.id, "paused", ""))
        directors._waiting[(stuck.id, 1, 0)] = tours.Waiting(
            said.format("bot 'ghost' is not connected"), "shutting_down", {"not_free": "not_connected", "bot": "ghost"})
        directors._waiting[(stuck.id, 2, 0)] = tours.Waiting(
            said.format("a reason of a newer daemon"), "shutting_down", {"not_free": "newer_reason"})
        page = browser.new_page(viewport=DESKTOP)
        errors = watch_errors(page)
        page.goto(f"{daemon.url}/leaderboard?ruleset=standard&lang=id")
        tour = page.locator(f".tournament[data-tournament='{stuck.id}']")
        # (the one that names a bot as a screen reader reads it: the bot drawn as a name, one line, aria-hidden)
        known, unknown = tour.locator(".waiting[data-table='1.0'] .sr-only"), tour.locator(".waiting[data-table='2.0']")
        expect(known).to_have_text(
            "Menunggu, meja 2.1: server sedang dimatikan (kursinya belum tersedia: bot “ghost” tidak terhubung)")
        expect(unknown).to_have_text("Menunggu, meja 3.1: " + said.format("a reason of a newer daemon"))
        page.select_option("#lang", "vi")
        expect(known).to_have_text("Đang chờ, bàn 2.1: máy chủ đang tắt (ghế chưa trống: bot “ghost” chưa kết nối)")
        expect(unknown).to_have_text("Đang chờ, bàn 3.1: " + said.format("a reason of a newer daemon"))
        page.select_option("#lang", "en")  # the daemon's own words
        expect(known).to_have_text("Waiting, table 2.1: " + said.format("bot 'ghost' is not connected"))
        assert not errors, errors
        daemon.call(lambda: directors.set_status(stuck.id, "cancelled", ""))
        daemon.call(lambda: stop_bots(clients))


# A bot that left mid-match: few timeouts, most of its decisions auto-played (the QA pass's
# bot: "Timeouts 1.4%" beside its "unreliable" flag).
QUITTER = {"rank": 1, "bot": "quitter", "owner": "qa", "rating": 25.0, "uncertainty": 8.0, "conservative": 1.0,
           "matches": 2, "points_per_deal": 9.0, "points_per_deal_ci": 1.0, "decisions": 1000, "timeouts": 14,
           "illegal_defaults": 1, "disconnect_defaults": 2, "auto_defaults": 913, "default_share": 0.93,
           "unreliable": True, "revoked": True}


def test_the_standing_sent_to_pages_carries_every_default_and_the_share_that_flags_a_bot() -> None:
    """Before: present.standing left out auto_defaults and default_share (ladder.py's
    Standing.default_share, what sets the flag), so no page could show them."""
    from heartsbot.proto import ladder_pb2

    from heartsd.web import present

    entry = ladder_pb2.LeaderboardEntry(bot="quitter", decisions=1000, timeouts=14, illegal_defaults=1,
                                        disconnect_defaults=2, auto_defaults=913, default_share=0.93, unreliable=True,
                                        revoked=True)
    shown = present.standing(entry)
    assert shown["auto_defaults"] == 913 and shown["default_share"] == 0.93 and shown["unreliable"] is True
    assert shown["revoked"] is True  # a bot put out of the ladder keeps its rank, marked (ladder.Standing.revoked)


def test_the_leaderboard_and_bot_page_show_the_default_share_that_flags_a_bot(tmp_path, browser: Browser) -> None:
    """Before (a QA pass): a bot flagged "unreliable" with 93% of its decisions auto-played
    showed "1.4%" (timeouts and disconnects only) beside the flag, and its page had no
    auto-play figure. Now the share shown is the server's default_share (every kind of
    default), and the bot page lists auto-played defaults."""
    import json

    with ThreadedDaemon(tmp_path) as daemon:
        daemon.web.arena.store.ladder.add_bot("quitter", "qa")  # its page is a bot's on the ladder (not a 404)
        page = browser.new_page(viewport=DESKTOP)
        errors = watch_errors(page)
        board = {"ruleset": "standard", "entries": [QUITTER], "rulesets": ["standard"]}
        profile = {"bot": "quitter", "owner": "qa", "ruleset": "standard", "standing": QUITTER, "matches": [],
                   "history": []}
        page.route("**/api/leaderboard?*", lambda route: route.fulfill(content_type="application/json",
                                                                       body=json.dumps(board)))
        page.route("**/api/bots/quitter?*", lambda route: route.fulfill(content_type="application/json",
                                                                        body=json.dumps(profile)))
        page.goto(f"{daemon.url}/leaderboard?ruleset=standard")
        row = page.locator("#standings tbody tr[data-bot='quitter']")
        expect(row.locator(".flag:not(.revoked)")).to_have_text(" unreliable")
        expect(row.locator(".flag.revoked")).to_have_text(" revoked")
        expect(row.locator("td").last).to_have_text("93.0%")
        expect(page.locator("#standings thead th").last).to_have_text("Defaults")
        # what orders the standings (a newcomer's look: a higher rating ranked lower read as a mistake)
        expect(page.locator("#board #ranked-by")).to_contain_text("Ranked by the conservative rating")
        page.select_option("#lang", "id")
        expect(page.locator("#board #ranked-by")).to_contain_text("Diurutkan menurut rating konservatif")
        page.select_option("#lang", "en")
        page.goto(f"{daemon.url}/bots/quitter?ruleset=standard")
        expect(page.locator("#fig-auto")).to_have_text("913 (91.3%)")
        expect(page.locator("#fig-rank")).to_have_text("1")
        expect(page.locator("dt:has(+ #fig-rank)")).to_have_text("Rank")  # before: "#", beside "1"
        expect(page.locator("#fig-defaults")).to_have_text("93.0%")
        expect(page.locator("#standing .flag.revoked")).to_have_text("revoked")
        assert not errors, errors


def test_a_configured_bot_off_the_ladder_has_a_page_that_says_so(tmp_path, browser: Browser) -> None:
    """A newcomer's pass: tournament standings link to every bot's page, and a configured
    bot that is not on the ladder (only in tournaments) got a page whose API answered 404:
    "Error: no ladder bot" above empty rating, reliability and match sections. Its API now
    answers what there is (``ladder`` false, no standing, no matches) and the page says the
    bot is not on the ladder instead of showing an error; a name no bot has is still 404."""
    with ThreadedDaemon(tmp_path, bot_tokens={"configured": "token-configured-1"}) as daemon:

        def get(path: str) -> tuple[int, Any]:
            try:
                with urllib.request.urlopen(f"{daemon.url}{path}") as r:
                    return r.status, json.loads(r.read())
            except urllib.error.HTTPError as exc:
                return exc.code, exc.read().decode()

        (status, body), (nobody, _) = get("/api/bots/configured"), get("/api/bots/nobody")
        page = browser.new_page(viewport=DESKTOP)
        errors = watch_errors(page)
        page.goto(f"{daemon.url}/bots/configured")
        expect(page.locator("#standing")).to_contain_text("Not on the ladder")
        shown = page.locator("main").inner_text()
        page.close()
    assert status == 200 and body["ladder"] is False and body["standing"] is None and body["matches"] == [], body
    assert nobody == 404
    assert "Error" not in shown and "no ladder bot" not in shown, shown
    assert not [e for e in errors if e.startswith("pageerror")], errors


def leaderboard_showing(page: Any, url: str, tour: dict[str, Any]) -> None:
    """Open the leaderboard with ``tour`` as the only tournament the page is given."""
    page.route("**/api/tournaments", lambda route: route.fulfill(content_type="application/json",
                                                                 body=json.dumps({"tournaments": [tour]})))
    page.goto(f"{url}/leaderboard?ruleset=standard")


def test_a_tournaments_standings_flag_a_bot_mostly_played_by_defaults_and_dash_one_that_never_played(
        tmp_path, browser: Browser) -> None:
    """An organiser's pass: the page's tournament standings had no reliability columns nor
    flag, and a bot with no deal (a tournament cancelled early) showed 0.00, the best score.
    Now a flagged bot reads "unreliable" as on the ladder, and one without deals a dash, its
    rank and p(best) too (a tournament just started read "1=" and 0.00 for every bot)."""
    row = {"rank": 1, "bot": "ok", "version": "v1", "points_per_deal": 3.5, "ci_low": 3.0, "ci_high": 4.0,
           "p_best": 0.6, "matches": 2, "deals": 8, "tied_with": [], "unreliable": False}
    tour = {"id": "t-1", "name": "Flag Cup", "status": "cancelled", "ruleset": "standard", "players": 4, "rounds": 3,
            "matches_finished": 1, "matches_total": 6, "reason": "", "test": "", "tables": [],
            "standings": [row, {**row, "rank": 2, "bot": "quitter", "points_per_deal": 9.0, "unreliable": True},
                          {**row, "rank": 3, "bot": "absent", "points_per_deal": None, "ci_low": None,
                           "ci_high": None, "p_best": 0.0, "matches": 0, "deals": 0}]}
    with ThreadedDaemon(tmp_path) as daemon:
        page = browser.new_page(viewport=DESKTOP)
        errors = watch_errors(page)
        leaderboard_showing(page, daemon.url, tour)
        cup = page.locator(".tournament[data-tournament='t-1']")
        expect(cup.locator("tbody tr[data-bot='quitter'] .flag")).to_have_text(" unreliable")
        expect(cup.locator("tbody tr[data-bot='ok'] .flag")).to_have_count(0)
        absent = cup.locator("tbody tr[data-bot='absent'] td")
        expect(absent.nth(2)).to_have_text("—")
        expect(absent.nth(3)).to_have_text("— – —")
        # nor a rank or a chance of being best (a newcomer's look: "3" and 0.00); those who played keep theirs
        expect(absent.nth(0)).to_have_text("—")
        expect(absent.nth(4)).to_have_text("—")
        expect(cup.locator("tbody tr[data-bot='ok'] td").nth(0)).to_have_text("1")
        expect(cup.locator("tbody tr[data-bot='ok'] td").nth(4)).to_have_text("0.60")
        assert not errors, errors


def test_a_hyphenated_bot_name_is_one_line_of_why_a_tournaments_table_waits_on_a_phone(
        tmp_path, browser: Browser) -> None:
    """Looking for other places a bot name broke at its hyphens: why a tournament's table
    waits ("Waiting, table 3.1: bot '<name>' is not connected", in the daemon's words or in
    the page's language) broke a roster bot's long name at its hyphens on a phone. Now the
    bot its reason names (waiting_key) is one line (nameWords), with the whole name as its
    title, in every language; a screen reader reads the line whole."""
    bot = LONG_HYPHENATED[0]
    tour = {"id": "t-1", "name": "Wait Cup", "status": "running", "ruleset": "standard", "players": 4, "rounds": 3,
            "matches_finished": 0, "matches_total": 3, "reason": "", "test": "", "standings": [],
            "tables": [{"round": 0, "table": 0, "status": "pending", "match_id": "",
                        "waiting": f"waited 0.3 s for the seats: bot '{bot}' is not connected",
                        "waiting_key": {"key": "not_connected", "bot": bot, "waited_s": "0.3"}}]}
    said = {"en": f"Waiting, table 1.1: waited 0.3 s for the seats: bot '{bot}' is not connected",
            "id": f"Menunggu, meja 1.1: sudah menunggu kursinya 0.3 dtk: bot “{bot}” tidak terhubung"}
    with ThreadedDaemon(tmp_path) as daemon:
        page = browser.new_page(viewport=PHONE)
        errors = watch_errors(page)
        leaderboard_showing(page, daemon.url, tour)
        waiting = page.locator(".tournament[data-tournament='t-1'] .waiting")
        for lang in ("en", "id"):
            page.select_option("#lang", lang)
            expect(waiting).to_contain_text(said[lang].split(":")[0])
            assert_one_line_in_text(page, ".tournament[data-tournament='t-1'] .waiting", [bot])
            expect(waiting.locator(".sr-only")).to_have_text(said[lang])
        screenshot(page, "leaderboard-hyphenated-waiting-phone")
        page.close()
    assert not [e for e in errors if e.startswith("pageerror")], errors


def test_the_leaderboard_says_where_one_owners_bots_share_a_tournament_table(tmp_path, browser: Browser) -> None:
    """A tournament whose roster left no way to keep one owner's bots apart (they share what
    they know) was shown with nothing said of it, where `tournament create` and `show` say
    so. The page now says each such table, in its language, each name one line."""
    bots = [LONG_HYPHENATED[0], "bot-two"]
    tour = {"id": "t-1", "name": "Owner Cup", "status": "running", "ruleset": "standard", "players": 4, "rounds": 2,
            "matches_finished": 0, "matches_total": 2, "reason": "", "test": "", "standings": [], "tables": [],
            "shared": [{"owner": "team-ann", "round": 1, "bots": bots}]}
    said = {"en": f"Round 2: {bots[0]}, bot-two share a table, bots of one owner (team-ann); the roster left no other way",
            "id": f"Babak 2: {bots[0]}, bot-two berbagi meja, bot dari satu pemilik (team-ann); susunan peserta tidak "
                  "memberi cara lain"}
    with ThreadedDaemon(tmp_path) as daemon:
        page = browser.new_page(viewport=PHONE)
        errors = watch_errors(page)
        leaderboard_showing(page, daemon.url, tour)
        shared = page.locator(".tournament[data-tournament='t-1'] .shared")
        for lang in ("en", "id"):
            page.select_option("#lang", lang)
            expect(shared.locator(".sr-only")).to_have_text(said[lang])
            assert_one_line_in_text(page, ".tournament[data-tournament='t-1'] .shared", [*bots, "team-ann"])
        page.close()
    assert not [e for e in errors if e.startswith("pageerror")], errors


def test_the_leaderboard_keeps_what_it_shows_through_unchanged_and_refused_refreshes(tmp_path, browser: Browser) -> None:
    """A spectator's pass: the leaderboard drew its table anew every 10 s though nothing had
    changed (a selection in it, or a screen reader's place, was lost each time), asked
    again every 10 s even while a request was unanswered, and a refresh the server refused
    (its rate, a restart) replaced the standings with the error until the next one. Now it
    draws only what changed, asks one request at a time, keeps what it shows through a
    refusal and waits longer after one, as a bot's page does."""
    board = RoutedJSON({"ruleset": "standard", "entries": [QUITTER], "rulesets": ["standard"]})
    with ThreadedDaemon(tmp_path) as daemon:
        page = browser.new_page(viewport=DESKTOP)
        errors = watch_errors(page)
        page.route("**/api/leaderboard?*", board)
        page.clock.install()
        page.goto(f"{daemon.url}/leaderboard?ruleset=standard")
        expect(page.locator("#standings tbody tr[data-bot='quitter']")).to_be_visible()
        page.eval_on_selector("#standings", "table => { table.dataset.kept = 'yes'; }")

        assert board.asked_within(page, 10_000) == 1
        assert page.eval_on_selector("#standings", "table => table.dataset.kept") == "yes", "drawn again unchanged"
        board.status = 429
        assert board.asked_within(page, 10_000) == 1
        expect(page.locator("#standings tbody tr[data-bot='quitter']")).to_be_visible()  # kept through the refusal
        assert page.locator("#board [role=alert], #board .error").count() == 0
        assert board.asked_within(page, 10_000) == 0, "after a refusal the page waits longer"
        board.status = 200
        board.body["entries"] = [{**QUITTER, "matches": QUITTER["matches"] + 1}]
        assert board.asked_within(page, 20_000) >= 1
        expect(page.locator("#standings tbody tr[data-bot='quitter'] td").nth(6)).to_have_text(str(QUITTER["matches"] + 1))
        page.close()
    assert not [e for e in errors if e.startswith("pageerror")], errors


def test_a_hyphenated_bot_name_is_one_line_of_the_leaderboard_on_a_phone(tmp_path, browser: Browser) -> None:
    """Before: on a phone the leaderboard broke ladder bots' names at their hyphens,
    "montecarlo-" over "information-" over "set-search-" over "v2". Now a name is one line
    (its table scrolls sideways, as it did); one too long loses its middle to an ellipsis and
    keeps its start and its end, with the whole name as its title and its link's name. So is
    its owner's name (ladder house bots are their own owners): it broke as the bot's did."""
    names = ["house-heuristic", "house-heuristic-2", "montecarlo-information-set-search-v2", "alpha-beta-pruner-v3"]
    board = RoutedJSON({"ruleset": "standard", "rulesets": ["standard"],
                        "entries": [{**QUITTER, "bot": n, "owner": n, "rank": i + 1} for i, n in enumerate(names)]})
    with ThreadedDaemon(tmp_path) as daemon:
        page = browser.new_page(viewport=PHONE)
        errors = watch_errors(page)
        page.route("**/api/leaderboard?*", board)
        page.goto(f"{daemon.url}/leaderboard?ruleset=standard")
        expect(page.locator("#standings tbody tr")).to_have_count(len(names))
        for size in (PHONE, DESKTOP):
            page.set_viewport_size(size)
            drawn = name_lines(page, "#standings tbody a")
            assert [d["title"] for d in drawn] == names, drawn
            for name, link in zip(names, drawn):
                assert link["lines"] == 1 and link["first"] and link["last"], (size, name, link)
                expect(page.get_by_role("link", name=name, exact=True)).to_have_count(1)
            owners = name_lines(page, "#standings tbody td:nth-child(3) .name")
            assert [o["title"] for o in owners] == names, owners
            for name, owner in zip(names, owners):
                assert owner["lines"] == 1 and owner["first"] and owner["last"], (size, name, owner)
            expect(page.locator("#standings tbody td:nth-child(3) .sr-only")).to_have_text(names)
            assert page.evaluate("document.documentElement.scrollWidth") <= size["width"]
        page.set_viewport_size(PHONE)
        screenshot(page, "leaderboard-hyphenated-names-phone")
        page.close()
    assert not [e for e in errors if e.startswith("pageerror")], errors


def test_a_hyphenated_bot_name_is_one_line_of_its_pages_heading_on_a_phone(tmp_path, browser: Browser) -> None:
    """Before: a bot page's heading broke the bot's name at its hyphens on a phone
    ("montecarlo-information-" over "set-search-v2-..."), as the leaderboard no longer does.
    Now it is one line (nameWords): one too long loses its middle to an ellipsis and keeps
    its start and its end, with the whole name as the heading's title and its name."""
    from tests.server.harness import BOTS

    with ThreadedDaemon(tmp_path, bot_tokens={**BOTS, **{n: f"token-{i}-0123456789" for i, n in enumerate(HYPHENATED)}}) as daemon:
        page = browser.new_page(viewport=PHONE)
        errors = watch_errors(page)
        for name in HYPHENATED:
            page.goto(f"{daemon.url}/bots/{name}")
            expect(page.locator("#standing")).to_contain_text("Not on the ladder")  # configured: its profile came
            assert_one_line_each(page, "h1#heading", [name])
            expect(page.get_by_role("heading", level=1, name=name, exact=True)).to_have_count(1)
        screenshot(page, "bot-page-hyphenated-name-phone")
        page.close()
    assert not [e for e in errors if e.startswith("pageerror")], errors


def test_a_hyphenated_bot_name_is_one_line_of_its_pages_not_found_and_ruleset_links_on_a_phone(
        tmp_path, browser: Browser) -> None:
    """Looking for other places a bot name broke at its hyphens: a bot page asked for a
    ruleset that is none links to the bot's page in each ruleset there is ("<name> ·
    standard"), and one of a bot that is none says "There is no bot named “<name>”.": both
    broke a long name at its hyphens on a phone. Now the name is one line (nameWords), with
    the whole name as its title; a screen reader reads each link and the message whole."""
    from tests.server.harness import BOTS

    bot, nobody = LONG_HYPHENATED[0], LONG_HYPHENATED[1]
    with ThreadedDaemon(tmp_path, bot_tokens={**BOTS, bot: "token-long-0123456789"}) as daemon:
        page = browser.new_page(viewport=PHONE)
        errors = watch_errors(page)
        page.goto(f"{daemon.url}/bots/{bot}?ruleset=nope")
        expect(page.locator("h1")).to_have_text("Unknown ruleset")
        links = page.locator("main .ways a[href^='/bots/']")
        expect(links.first).to_be_visible()
        rulesets = [href.split("ruleset=")[1] for href in links.evaluate_all("links => links.map(a => a.getAttribute('href'))")]
        assert "standard" in rulesets, rulesets
        assert_one_line_in_text(page, "main .ways", [bot] * len(rulesets))
        for ruleset in rulesets:
            expect(page.get_by_role("link", name=f"{bot} · {ruleset}", exact=True)).to_have_count(1)
        screenshot(page, "bot-page-hyphenated-ruleset-links-phone")
        page.goto(f"{daemon.url}/bots/{nobody}")
        expect(page.locator("main [role=alert]")).to_contain_text("There is no bot named")
        assert_one_line_in_text(page, "main [role=alert]", [nobody])
        expect(page.locator("main [role=alert] .sr-only")).to_have_text(f"There is no bot named “{nobody}”.")
        screenshot(page, "bot-page-hyphenated-not-found-phone")
        page.close()
    assert not [e for e in errors if e.startswith("pageerror")], [e for e in errors if e.startswith("pageerror")]


ALIGNMENTS = """table => [...table.querySelectorAll("thead th")].map((th, i) => [
  getComputedStyle(th).textAlign,
  [...new Set([...table.querySelectorAll(`tbody td:nth-child(${i + 1})`)].map((td) => getComputedStyle(td).textAlign))]])"""


def test_each_columns_heading_is_aligned_as_its_cells(tmp_path, browser: Browser) -> None:
    """A look at the pages: the leaderboard's "Owner" heading stood right-aligned over its
    names, left-aligned, and the bot page's "Seat" heading over its numbers, left-aligned
    (one rule for every table's third column). Words are left, numbers right, and each
    heading as its column."""
    board = {"ruleset": "standard", "entries": [QUITTER], "rulesets": ["standard"]}
    profile = {"bot": "quitter", "owner": "qa", "ruleset": "standard", "ladder": True, "standing": QUITTER,
               "history": [], "matches": [{"match_id": "m-1", "ruleset": "standard", "seat": 2, "rank": 1,
                                           "points": 3, "deals": 4}]}
    with ThreadedDaemon(tmp_path) as daemon:
        page = browser.new_page(viewport=DESKTOP)
        page.route("**/api/leaderboard?*", lambda route: route.fulfill(content_type="application/json",
                                                                       body=json.dumps(board)))
        page.route("**/api/bots/quitter?*", lambda route: route.fulfill(content_type="application/json",
                                                                        body=json.dumps(profile)))
        page.goto(f"{daemon.url}/leaderboard?ruleset=standard")
        expect(page.locator("#standings tbody tr")).to_have_count(1)
        standings = page.eval_on_selector("#standings", ALIGNMENTS)
        page.goto(f"{daemon.url}/bots/quitter?ruleset=standard")
        expect(page.locator("#bot-matches tbody tr")).to_have_count(1)
        matches = page.eval_on_selector("#bot-matches", ALIGNMENTS)
        page.close()
    for columns in (standings, matches):
        assert all(cells == [heading] for heading, cells in columns), columns
    assert [h for h, _ in standings] == ["right", "left", "left"] + ["right"] * 6, standings  # rank, bot, owner, ...
    assert [h for h, _ in matches] == ["left", "left"] + ["right"] * 4, matches  # match, ruleset, then numbers


def test_a_leaderboard_or_bot_page_of_no_ruleset_reads_as_not_found(tmp_path, browser: Browser) -> None:
    """A QA pass: /leaderboard?ruleset=nope answered 200 with "Error: unknown ruleset" inside a
    page headed "Leaderboard: nope" (and kept polling it); /bots/<bot>?ruleset=nope likewise
    under the bot's name. Both are an address of nothing, as /watch/<unknown> is: answered
    404, the title and heading say the ruleset is unknown, with the pages there are."""
    with ThreadedDaemon(tmp_path, bot_tokens={"configured": "token-configured-1"}) as daemon:

        def status(path: str) -> int:
            try:
                with urllib.request.urlopen(f"{daemon.url}{path}") as r:
                    return r.status
            except urllib.error.HTTPError as exc:
                return exc.code

        statuses = {path: status(path) for path in ("/leaderboard", "/leaderboard?ruleset=classic",
                                                     "/leaderboard?ruleset=nope", "/bots/configured",
                                                     "/bots/configured?ruleset=nope")}
        assert statuses == {"/leaderboard": 200, "/leaderboard?ruleset=classic": 200, "/leaderboard?ruleset=nope": 404,
                            "/bots/configured": 200, "/bots/configured?ruleset=nope": 404}, statuses
        page = browser.new_page(viewport=DESKTOP)
        errors = watch_errors(page)
        for address, link in (("/leaderboard?ruleset=nope", "/leaderboard?ruleset=standard"),
                              ("/bots/configured?ruleset=nope", "/bots/configured?ruleset=standard")):
            page.goto(f"{daemon.url}{address}")
            expect(page.locator("h1")).to_have_text("Unknown ruleset")
            expect(page).to_have_title("Unknown ruleset · Hearts Arena")
            expect(page.locator("main [role=alert]")).to_have_text("There is no ruleset named “nope”.")
            expect(page.locator(f'main a[href="{link}"]')).to_be_visible()
            expect(page.locator("main a[href='/']")).to_be_visible()
            assert page.locator("#board, #standings, #standing-title, #tournaments").count() == 0, address
            page.select_option("#lang", "vi")  # the page's own redraw must not bring its sections back
            expect(page.locator("h1")).to_have_text("Luật chơi không tồn tại")
            expect(page.locator("main [role=alert]")).to_contain_text("nope")
            page.select_option("#lang", "en")
        page.close()
    assert not [e for e in errors if e.startswith("pageerror")], errors


def test_a_bot_pages_matches_count_seats_from_one_as_the_table_pages_do(tmp_path, browser: Browser) -> None:
    """A browser pass: a bot page listed its matches' seats from 0 (the wire's index), so the
    bot that sat "heuristic (house, seat 3)" on the table page of a match read "Seat 2" on
    its own page. Seats are counted from 1 on every page now; and the column of each match's
    number of deals is headed "Deals", not "Deal", and of its place "Rank", not "#"."""
    profile = {"bot": "configured", "owner": "o", "ruleset": "standard", "ladder": True, "standing": None,
               "history": [], "matches": [{"match_id": "m-1", "ruleset": "standard", "seat": 0, "rank": 1,
                                           "points": 3, "deals": 4},
                                          {"match_id": "m-2", "ruleset": "standard", "seat": 3, "rank": 2,
                                           "points": 9, "deals": 4}]}
    with ThreadedDaemon(tmp_path, bot_tokens={"configured": "token-configured-1"}) as daemon:
        page = browser.new_page(viewport=DESKTOP)
        serve_bot_profile(page, profile)
        page.goto(f"{daemon.url}/bots/configured")
        cells = page.locator("#bot-matches tbody td:nth-child(3)")
        expect(cells).to_have_text(["1", "4"])
        # the bot's place in each match is headed "Rank" ("#" read as the row's number)
        expect(page.locator("#bot-matches thead th").nth(3)).to_have_text("Rank")
        # and the last column, how many deals each match had, says so (it read "Deal": "Deal 4")
        expect(page.locator("#bot-matches thead th").last).to_have_text("Deals")
        page.select_option("#lang", "vi")
        expect(page.locator("#bot-matches thead th").last).to_have_text("Số ván")
        expect(page.locator("#bot-matches thead th").nth(3)).to_have_text("Hạng")
        page.close()


def test_a_bot_pages_match_ids_are_one_line_on_a_phone(tmp_path, browser: Browser) -> None:
    """A browser reader's pass at 375 px: a bot page's match ids broke at their hyphen, "m-"
    over "671141204c903963", where a line break reads as two words. Each is one line now
    (the table scrolls sideways, as it did), and the page is no wider than the screen."""
    ids = ["m-671141204c903963", "m-c145ec54f35a9fd3"]
    profile = {"bot": "configured", "owner": "o", "ruleset": "standard", "ladder": True, "standing": None,
               "history": [], "matches": [{"match_id": m, "ruleset": "standard", "seat": 2, "rank": 3,
                                           "points": 13, "deals": 16} for m in ids]}
    with ThreadedDaemon(tmp_path, bot_tokens={"configured": "token-configured-1"}) as daemon:
        page = browser.new_page(viewport={"width": 375, "height": 800})
        errors = watch_errors(page)
        serve_bot_profile(page, profile)
        page.goto(f"{daemon.url}/bots/configured")
        links = page.locator("#bot-matches tbody td:first-child a")
        expect(links).to_have_text(ids)
        assert links.evaluate_all("links => links.map((a) => a.getClientRects().length)") == [1, 1]
        assert page.evaluate("document.documentElement.scrollWidth") <= 375
        page.close()
    assert not [e for e in errors if e.startswith("pageerror")], errors


def test_a_bot_pages_chart_counts_every_match_of_a_thinned_history(tmp_path, browser: Browser) -> None:
    """The server sends at most api.HISTORY_POINTS points of a bot's rating history, each
    numbered by its match (``n``): the chart places each at its match and its axis ends at
    the bot's match count, not at the number of points (which read 4 for 20,000 matches)."""
    history = [{"n": n, "seq": n, "finished_ms": 0, "rating": 25.0 + n / 10_000, "uncertainty": 8.0 - n / 5_000}
               for n in (1, 5_000, 10_000, 20_000)]
    profile = {"bot": "configured", "owner": "o", "ruleset": "standard", "ladder": True, "standing": None,
               "history": history, "matches": []}
    with ThreadedDaemon(tmp_path, bot_tokens={"configured": "token-configured-1"}) as daemon:
        page = browser.new_page(viewport=DESKTOP)
        serve_bot_profile(page, profile)
        page.goto(f"{daemon.url}/bots/configured")
        chart = page.locator("#rating-chart")
        expect(chart.locator("text").last).to_have_text("20000")
        expect(chart).to_have_attribute("aria-label", re.compile(r", 20000 matches$", re.IGNORECASE))
        xs = page.eval_on_selector_all("#rating-chart circle", "cs => cs.map(c => Number(c.getAttribute('cx')))")
        left, right = xs[0], xs[-1]
        # each point where its match is: the 5,000th a quarter of the way, not a third
        assert abs((xs[1] - left) / (right - left) - 4_999 / 19_999) < 0.01, xs
        page.close()


def test_a_bot_page_shows_a_rated_match_that_finishes_while_it_is_open(tmp_path, browser: Browser) -> None:
    """A spectator's pass: a bot's page never refreshed itself, so a rated match the bot
    finished while its page was open showed only after a reload. The page now asks for the
    profile again now and then (the page's timers are driven here by Playwright's clock,
    so the test waits for no interval), and draws it again only when it has changed."""
    bot = "house-heuristic-2"
    with ThreadedDaemon(tmp_path, ladder=True, ladder_house=("heuristic", "random", "heuristic", "random"),
                        ladder_deals=4, ladder_interval_s=0.2, decision_ms=500) as daemon:
        ladder_run = daemon.call(lambda: start_ladder(daemon.settings, daemon.arena, daemon.web.grpc_port))
        ladder = daemon.arena.store.ladder
        deadline = time.monotonic() + 120

        def played() -> list[str]:
            return [m[0] for m in ladder.history(bot, 50, "standard")]

        while not played():
            assert time.monotonic() < deadline, "the ladder did not play a rated match"
            time.sleep(0.1)
        page = browser.new_page(viewport=DESKTOP)
        errors = watch_errors(page)
        asked: list[str] = []
        page.on("requestfinished", lambda r: asked.append(r.url) if "/api/bots/" in r.url else None)
        page.clock.install()  # the page's timers run when the test says so
        page.goto(f"{daemon.url}/bots/{bot}?ruleset=standard")
        expect(page.locator("#bot-matches tbody tr").first).to_be_visible()
        shown = page.eval_on_selector_all("#bot-matches tbody tr", "rows => rows.map(r => r.dataset.match)")
        # A rated match of the bot finishes while its page is open; then the ladder stops.
        while set(played()) <= set(shown):
            assert time.monotonic() < deadline, "the bot played no other rated match"
            time.sleep(0.1)
        daemon.loop.call_soon_threadsafe(ladder_run.stop_matchmaking)  # type: ignore[union-attr]
        while daemon.arena.runners:
            assert time.monotonic() < deadline, "the ladder's last matches did not finish"
            time.sleep(0.1)
        final = played()

        def next_poll() -> None:
            """The page's next request for the profile, answered, its clock run as far as it takes."""
            count = len(asked)
            for _ in range(200):
                page.clock.run_for(5_000)
                if len(asked) > count:
                    return
            raise AssertionError("the page did not ask for its profile again")

        next_poll()
        rows = page.locator("#bot-matches tbody tr")
        expect(rows.first).to_have_attribute("data-match", final[0])  # without a reload
        expect(rows).to_have_count(len(final))
        standing = next(s for s in ladder.standings("standard") if s.bot == bot)
        # The profile's standing is the leaderboard's, rebuilt at most a tenth of the time
        # (memo.py); its matches, the newest results. A poll right after the last result may
        # show the standing before it (a fresh-clone run: four matches listed, "2" rated),
        # and a later one shows it.
        for _ in range(50):
            if page.locator("#fig-matches").inner_text().strip() == str(standing.matches):
                break
            time.sleep(0.1)
            next_poll()
        expect(page.locator("#fig-matches")).to_have_text(str(standing.matches))
        # Nothing new: the page is left as it is (its table not drawn again). The standing may
        # still be rebuilt once after the last result (memo.py; under a loaded run's three
        # workers it was, after the check above): the page draws that change, then nothing.
        for _ in range(5):
            page.eval_on_selector("#bot-matches", "table => { table.dataset.kept = 'yes'; }")
            next_poll()
            next_poll()  # asked only once the one before was answered and handled
            if page.eval_on_selector("#bot-matches", "table => table.dataset.kept") == "yes":
                break
        assert page.eval_on_selector("#bot-matches", "table => table.dataset.kept") == "yes"
        assert page.eval_on_selector_all("#bot-matches tbody tr", "rows => rows.map(r => r.dataset.match)") == final
        page.close()
        daemon.call(ladder_run.stop)
    assert not errors, errors


def test_an_error_a_page_shows_is_said_again_when_the_language_changes(tmp_path, browser: Browser) -> None:
    """A page whose first load was refused (here, the address's rate) said "Error: ..." in
    the language it came in, and kept it there when the person chose another language, while
    the rest of the page changed (the lobby's live list, the leaderboard, a bot's page). It is
    said again in the language chosen."""
    refused = RoutedJSON({})
    refused.status = 429
    with ThreadedDaemon(tmp_path, bot_tokens={"configured": "token-configured-1"}) as daemon:
        page = browser.new_page(viewport=DESKTOP)
        errors = watch_errors(page)
        for pattern in ("**/api/matches", "**/api/leaderboard?*", "**/api/bots/configured?*"):
            page.route(pattern, refused)
        for address, where, title, drawn in (("/?lang=id", "#live", "#live-title", "Trận đang diễn ra"),
                                             ("/leaderboard?lang=id", "#board", "#heading", "Bảng xếp hạng: standard"),
                                             ("/bots/configured?lang=id", "#standing", "#standing-title", "Điểm xếp hạng")):
            page.goto(f"{daemon.url}{address}")
            said = page.locator(f"{where} [role=alert]")
            expect(said).to_have_text("Galat: terlalu banyak permintaan dari alamatmu; tunggu sebentar, lalu coba lagi")
            page.select_option("#lang", "vi")
            expect(page.locator(title)).to_have_text(drawn)  # the page drawn in Vietnamese
            expect(said).to_have_text("Lỗi: quá nhiều yêu cầu từ địa chỉ của bạn; hãy đợi một lát rồi thử lại")
            page.select_option("#lang", "en")  # the server's words
            expect(said).to_have_text("Error: too many requests")
        page.close()
    assert not [e for e in errors if e.startswith("pageerror")], errors


def test_a_bot_pages_chart_of_one_match_reads_as_one_match(tmp_path, browser: Browser) -> None:
    """A bot that has played one rated match: its chart's axis read "1" at its left end and
    "1" at its right (the first match and the last, the same one), and its label "1 Matches".
    Now the one point is labelled under it as its match, its band is a bar across it, and the
    label says "1 match"."""
    profile = {"bot": "configured", "owner": "o", "ruleset": "standard", "ladder": True, "standing": None,
               "history": [{"n": 1, "seq": 7, "finished_ms": 0, "rating": 26.1, "uncertainty": 7.9}], "matches": []}
    with ThreadedDaemon(tmp_path, bot_tokens={"configured": "token-configured-1"}) as daemon:
        page = browser.new_page(viewport=DESKTOP)
        errors = watch_errors(page)
        serve_bot_profile(page, profile)
        page.goto(f"{daemon.url}/bots/configured")
        chart = page.locator("#rating-chart")
        expect(chart).to_have_attribute("aria-label", "Rating 26.10 ± 7.90, 1 match")
        # the rating ticks are decimals ("2.4"); the rest of the chart's words name matches
        axis = "svg => [...svg.querySelectorAll('text')].filter((t) => !/^-?\\d+\\.\\d$/.test(t.textContent))"
        labels = chart.evaluate(f"{axis}.map((t) => t.textContent)")
        assert labels == ["Match 1"], labels
        middle = chart.evaluate(f"svg => {{ const box = ({axis})(svg)[0].getBBox(); return box.x + box.width / 2; }}")
        cx = float(chart.locator("circle").get_attribute("cx"))
        assert abs(middle - cx) < 1, (middle, cx)  # under its point
        # its band (± uncertainty), which a band one point wide did not draw, a bar across it
        expect(chart.locator("line.spread")).to_have_attribute("x1", str(cx).removesuffix(".0"))
        screenshot(page, "bot-one-match")
        page.select_option("#lang", "vi")
        expect(chart).to_have_attribute("aria-label", re.compile(r", 1 trận$"))
        assert chart.evaluate(f"{axis}.map((t) => t.textContent)") == ["Trận 1"]
        page.close()
    assert not [e for e in errors if e.startswith("pageerror")], errors


def test_a_bot_pages_chart_says_what_its_lines_are(tmp_path, browser: Browser) -> None:
    """A newcomer's look at a bot page: the chart's heading named its band, but not its solid
    line, its dashed line (the conservative rating, by which the leaderboard ranks) nor what
    its axis counts. A legend under it says each, in the page's language; no chart, no legend."""
    history = [{"n": n, "seq": n, "finished_ms": 0, "rating": 25.0 + n, "uncertainty": 8.0 - n} for n in (1, 2, 3)]
    profile = {"bot": "configured", "owner": "o", "ruleset": "standard", "ladder": True, "standing": None,
               "history": history, "matches": []}
    with ThreadedDaemon(tmp_path, bot_tokens={"configured": "token-configured-1"}) as daemon:
        page = browser.new_page(viewport=DESKTOP)
        errors = watch_errors(page)
        serve_bot_profile(page, profile)
        page.goto(f"{daemon.url}/bots/configured")
        legend = page.locator("#chart #chart-legend")
        expect(legend).to_contain_text("Dashed line: the conservative rating (rating − 3 × uncertainty)")
        expect(legend).to_contain_text("Solid line: the rating after each rated match")
        page.select_option("#lang", "id")
        expect(legend).to_contain_text("Garis putus-putus: rating konservatif")
        serve_bot_profile(page, {**profile, "history": []})
        page.reload()
        expect(page.locator("#chart")).to_contain_text("Belum ada pertandingan berperingkat")
        expect(legend).to_have_count(0)
        page.close()
    assert not [e for e in errors if e.startswith("pageerror")], errors


def test_the_leaderboards_ruleset_picker_reads_as_the_page_does(tmp_path, browser: Browser) -> None:
    """A newcomer's look at the leaderboard: its ruleset picker was in the browser's small
    control type (13 px beside the page's 16 px) and sat on the standings' top edge. It is in
    the page's type now, the lobby's choices are, with room under it."""
    board = {"ruleset": "standard", "entries": [QUITTER], "rulesets": ["classic", "standard"]}
    with ThreadedDaemon(tmp_path) as daemon:
        page = browser.new_page(viewport=DESKTOP)
        page.route("**/api/leaderboard?*", lambda route: route.fulfill(content_type="application/json",
                                                                       body=json.dumps(board)))
        page.goto(f"{daemon.url}/leaderboard?ruleset=standard")
        expect(page.locator("#standings tbody tr")).to_have_count(1)
        sizes = page.evaluate("""() => [document.querySelector('#ruleset'), document.querySelector('#pick label'),
                                       document.body].map((e) => getComputedStyle(e).fontSize)""")
        picker, table = page.locator("#ruleset").bounding_box(), page.locator("#standings").bounding_box()
        page.close()
    assert sizes[0] == sizes[1] == sizes[2], sizes
    assert picker is not None and table is not None and table["y"] - (picker["y"] + picker["height"]) >= 6, (picker, table)
