"""A replay's deals cost what they hold: a late deal is not played again from the first
action. Counted in engine actions applied (no clock), on a real stored match."""

from __future__ import annotations

from hearts_engine import Match

from heartsd.web.replays import Replay
from tests.server.harness import run, running_daemon

HOUSE4 = ["house:random"] * 4
DEALS = 24


def stored_record(tmp_path):
    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            match_id = await daemon.create_match(HOUSE4, deals=DEALS, seed=11)
            await daemon.wait_finished(match_id)
            return daemon.stored(match_id).record

    return run(scenario())


def frames_from_the_first_action(replay: Replay, number: int):
    """Deal ``number`` as replays made it before: every earlier action applied."""
    engine = replay.engine
    match = Match(engine.rules, engine.format, engine.seed)
    start = replay.deal_starts[number]
    for step in replay.steps[:start]:
        match.apply(step.seat, step.action)
    deal = match.deal
    frames = [replay._frame(match, deal, None)]
    for index in range(start, start + len(replay._steps_of(number))):
        match.apply(replay.steps[index].seat, replay.steps[index].action)
        frames.append(replay._frame(match, deal, index))
    return frames


def test_late_deals_are_not_replayed_from_the_start_and_show_the_same_frames(tmp_path, monkeypatch):
    """Before (an attack pass), each uncached deal applied every earlier action: deals asked
    from the last back to the first applied about DEALS / 2 times the match's actions. Now
    the actions before the furthest deal asked are applied once, and each deal's own."""
    replay = Replay(stored_record(tmp_path))
    applied = [0]
    apply = Match.apply

    def counted(self, seat, action):
        applied[0] += 1
        return apply(self, seat, action)

    monkeypatch.setattr(Match, "apply", counted)
    order = sorted(replay.deal_numbers, reverse=True)
    made = {number: replay.frames(number) for number in order}
    monkeypatch.setattr(Match, "apply", apply)
    last = order[0]
    assert len(order) == DEALS
    assert applied[0] == replay.deal_starts[last] + len(replay.steps)  # the way there once, then each deal
    for number in order:
        assert made[number] == frames_from_the_first_action(replay, number), number


def test_replay_work_runs_one_request_at_a_time(tmp_path, monkeypatch):
    """Deals asked at once are made one after another, in one worker thread at a time: a
    deal's frames are pure Python, and threads making them together held the interpreter
    away from the event loop and its bots. Deals already made are served without waiting."""
    import asyncio
    import threading
    import time

    import aiohttp

    from tests.web.harness import house_match, web_daemon

    inside = [0, 0]  # now, most at once
    lock = threading.Lock()
    frames = Replay.frames

    def watched(self, number):
        with lock:
            inside[0] += 1
            inside[1] = max(inside[1], inside[0])
        time.sleep(0.05)  # long enough for any other request's thread to enter meanwhile
        try:
            return frames(self, number)
        finally:
            with lock:
                inside[0] -= 1

    monkeypatch.setattr(Replay, "frames", watched)

    async def main():
        async with web_daemon(tmp_path) as web, aiohttp.ClientSession() as http:
            runner = await house_match(web.arena, deals=6)
            await runner.finished.wait()

            async def deal(n):
                async with http.get(f"{web.url}/api/replay/{runner.id}/deals/{n}") as r:
                    return r.status

            first = await asyncio.gather(*(deal(n) for n in range(6)))
            again = await asyncio.gather(*(deal(n) for n in range(6)))  # made already: served at once
            return first, again

    first, again = run(main())
    assert first == again == [200] * 6
    assert inside[1] == 1


def test_each_replay_job_rests_for_its_share_of_the_interpreter(tmp_path, monkeypatch):
    """After every job (a record parsed, a deal's frames made) the replay slot stays idle
    for rest_after(the job's CPU time): one at a time was not enough, as a visitor cycling
    more long matches than the cache keeps had jobs run back to back (an attack pass)."""
    import aiohttp

    from heartsd.web import api
    from tests.web.harness import house_match, web_daemon

    costs = []

    def recorded(cost_s):
        costs.append(cost_s)
        return 0.0

    monkeypatch.setattr(api, "rest_after", recorded)

    async def main():
        async with web_daemon(tmp_path) as web, aiohttp.ClientSession() as http:
            runner = await house_match(web.arena, deals=2)
            await runner.finished.wait()
            statuses = []
            for path in ("", "/deals/0", "/deals/1", "/deals/1"):  # the index builds the replay; deal 1 twice
                async with http.get(f"{web.url}/api/replay/{runner.id}{path}") as r:
                    statuses.append(r.status)
            return statuses

    assert run(main()) == [200] * 4
    assert len(costs) == 3 and all(c > 0 for c in costs)  # the build, deals 0 and 1; deal 1 again was made
