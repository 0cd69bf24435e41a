"""``heartsd serve --web`` as users run it: a real process, its printed address, its errors."""

from __future__ import annotations

import asyncio
import json
import signal
import socket
import subprocess
import urllib.request

from tests.server.test_daemon_process import HEARTSD, start


def test_serve_web_prints_its_address_and_serves_the_lobby(tmp_path) -> None:
    proc, _ = start(tmp_path, "--web", "127.0.0.1:0")
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("heartsd web front on http://127.0.0.1:"), line
        url = line.split(" on ", 1)[1].strip()
        with urllib.request.urlopen(url) as page:
            body = page.read().decode()
            assert page.status == 200 and '<script type="module" src="/static/js/lobby.js">' in body
            assert "script-src 'self'" in page.headers["Content-Security-Policy"]
        with urllib.request.urlopen(url + "static/js/playboard.js") as script:
            assert "javascript" in script.headers["Content-Type"]
        with urllib.request.urlopen(url + "api/options") as options:
            names = [r["name"] for r in json.load(options)["rulesets"]]
            assert "standard" in names and "classic" in names
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0


def test_a_bad_or_taken_web_address_stops_the_daemon_with_a_clear_message(tmp_path) -> None:
    bad = subprocess.run([*HEARTSD, "serve", "--port", "0", "--web", "localhost"], capture_output=True, text=True)
    assert bad.returncode == 2 and "web: expected HOST:PORT" in bad.stderr
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        bad = subprocess.run([*HEARTSD, "serve", "--port", "0", "--db", str(tmp_path / "d.db"), "--web", f"127.0.0.1:{port}"],
                             capture_output=True, text=True, timeout=30)
    # Probed before the store is touched (issue 14): one line, exit 2, naming the setting.
    assert bad.returncode == 2 and f"cannot listen on 127.0.0.1:{port}: the port is in use" in bad.stderr, bad.stderr
    assert "--web" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1, bad.stderr


def test_a_page_of_a_match_that_never_was_answers_404(tmp_path) -> None:
    """A QA pass: /watch/m-doesnotexist and /play/m-doesnotexist answered 200 with the error
    shown inside the page (soft 404s), so a link checker or crawler saw a page there. The
    page is the same (it says what is wrong), answered 404; a match that exists, running or
    over, answers 200."""
    import aiohttp

    from tests.server.harness import run
    from tests.web.harness import house_match, web_daemon

    async def main() -> dict[str, int]:
        statuses = {}
        async with web_daemon(tmp_path) as web, aiohttp.ClientSession() as http:
            runner = await house_match(web.arena, deals=1)
            for path in (f"/watch/{runner.id}", f"/play/{runner.id}", "/watch/m-doesnotexist", "/play/m-doesnotexist",
                         "/watch/" + "m" * 5000):
                async with http.get(web.url + path) as r:
                    statuses[path[:40]] = r.status
                    assert "text/html" in r.headers["Content-Type"]
            await asyncio.wait_for(runner.finished.wait(), 60)
            async with http.get(f"{web.url}/watch/{runner.id}") as r:
                statuses["finished"] = r.status
        return statuses

    statuses = run(main())
    assert list(statuses.values()) == [200, 200, 404, 404, 404, 200], statuses


def test_the_page_of_a_bot_that_is_not_on_the_ladder_answers_404(tmp_path) -> None:
    """/bots/<name> answered 200 for any name (a soft 404 left by the first pass): the page
    then said "no ladder bot" inside, where a crawler or a link checker saw a page. A bot
    on the ladder answers 200 (its page), and so does a configured bot (bot_tokens:
    tournament standings link to it); any other name the same page answered 404, as a match
    page of a match that never was does, and a name no bot can have (a NUL) is not looked up."""
    import aiohttp

    from tests.server.harness import run
    from tests.web.harness import web_daemon

    async def main() -> dict[str, int]:
        statuses = {}
        async with web_daemon(tmp_path, bot_tokens={"configured": "token-configured-1"}) as web, \
                aiohttp.ClientSession() as http:
            await asyncio.to_thread(web.arena.store.ladder.add_bot, "listed", "someone")
            for name in ("listed", "configured", "nobody", "Listed", "x" * 5000, "%00", "a%00b"):
                async with http.get(f"{web.url}/bots/{name}") as r:
                    statuses[name[:10]] = r.status
                    assert "text/html" in r.headers["Content-Type"]
        return statuses

    statuses = run(main())
    # A NUL in any address is 400 before any handler (test_attacks: PostgreSQL refused it in text).
    assert statuses == {"listed": 200, "configured": 200, "nobody": 404, "Listed": 404, "x" * 10: 404, "%00": 400,
                        "a%00b": 400}, statuses


def test_the_ladder_handlers_refusals_answer_their_status_and_reason(tmp_path) -> None:
    """An attack pass: every refusal of the ladder's handlers run for the web (an unknown
    ruleset, an unknown bot) answered 500 "internal error" and logged a traceback: the web
    front's stand-in gRPC context took no ``trailing_metadata``, which every refusal passes.
    Now each answers its own status with the handler's reason, as gRPC callers get it."""
    import aiohttp

    from tests.server.harness import run
    from tests.web.harness import web_daemon

    async def main() -> dict[str, tuple[int, str]]:
        answers = {}
        async with web_daemon(tmp_path) as web, aiohttp.ClientSession() as http:
            await asyncio.to_thread(web.arena.store.ladder.add_bot, "listed", "someone")
            for path in ("/api/leaderboard?ruleset=nope", "/api/bots/nobody", "/api/bots/listed?ruleset=zzz",
                         "/api/leaderboard?ruleset=standard"):
                async with http.get(web.url + path) as r:
                    answers[path] = (r.status, (await r.json()).get("error", ""))
        return answers

    answers = run(main())
    statuses = {path: status for path, (status, _) in answers.items()}
    assert statuses == {"/api/leaderboard?ruleset=nope": 400, "/api/bots/nobody": 404,
                        "/api/bots/listed?ruleset=zzz": 400, "/api/leaderboard?ruleset=standard": 200}, answers
    for path, (status, error) in answers.items():
        assert status == 200 or (error and "internal" not in error), (path, error)
