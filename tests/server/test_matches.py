"""Full matches over real gRPC: every preset, remote and house bots, consistent scores."""

from __future__ import annotations

import pytest

from hearts_engine import MatchRecord, verify_record
from heartsbot.proto import game_pb2

from .harness import Bot, random_legal, run, running_daemon

PRESET_SEATS = [
    ("standard", 4),
    ("classic", 3),
    ("classic", 5),
    ("classic", 7),
    ("hartenjagen", 3),
    ("hartenjagen-quick", 4),
    ("omnibus", 4),
]
NAMES = ["alice", "bob", "carol", "dave", "erin", "frank", "gina"]


@pytest.mark.parametrize(("ruleset", "players"), PRESET_SEATS)
def test_full_match_of_every_preset_with_remote_bots(tmp_path, ruleset, players):
    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            bots = [await Bot(daemon, NAMES[i], random_legal(i)).start() for i in range(players)]
            seats = NAMES[:players]
            match_id = await daemon.create_match(seats, ruleset=ruleset, deals=2, seed=7)
            results = [await bot.wait_ended(match_id) for bot in bots]
            stored = daemon.stored(match_id)
            for bot in bots:
                await bot.close()
            return results, stored

    results, stored = run(scenario())
    assert all(r == results[0] for r in results)
    assert stored.status == "finished"
    record = stored.record
    assert verify_record(MatchRecord.from_json(record.engine_record_json)) is not None
    assert list(results[0].totals) == [sum(d.points[s] for d in record.deal_scores) for s in range(players)]
    assert len(record.deal_scores) == 2


def test_a_searching_house_strategy_decides_off_the_event_loop(tmp_path, monkeypatch):
    """Before: a house seat's Monte Carlo search (~85 ms a play) ran on the daemon's event
    loop, so every other match, bot stream and health check waited for each of its plays.
    Now it runs in a worker thread: its plays happen on another thread, the loop keeps
    running (a ticker counts on while a play is being searched), and the match is the
    same as ever: every decision the house's, the record verifies."""
    import asyncio
    import threading

    from heartsbot.strategies.monte_carlo import MonteCarloStrategy

    searched_on: set[int] = set()
    ticks_while_searching = [0]
    ticks = [0]
    search = MonteCarloStrategy.choose_play

    def watched_search(self, view):  # type: ignore[no-untyped-def]
        searched_on.add(threading.get_ident())
        before = ticks[0]
        card = search(self, view)
        ticks_while_searching[0] += ticks[0] - before
        return card

    monkeypatch.setattr(MonteCarloStrategy, "choose_play", watched_search)
    monkeypatch.setattr(MonteCarloStrategy, "time_limit_s", 0.02)

    async def scenario():
        async def ticker() -> None:
            while True:
                ticks[0] += 1
                await asyncio.sleep(0.001)

        async with running_daemon(tmp_path) as daemon:
            ticking = asyncio.ensure_future(ticker())
            match_id = await daemon.create_match(["house:mc", "house:mc", "house:random", "house:mc"], deals=1)
            await daemon.wait_finished(match_id)
            ticking.cancel()
            return threading.get_ident(), daemon.stored(match_id)

    loop_thread, stored = run(scenario())
    assert stored.status == "finished"
    assert searched_on and loop_thread not in searched_on
    assert ticks_while_searching[0] > 0
    assert verify_record(MatchRecord.from_json(stored.record.engine_record_json)) is not None
    assert {d.provenance for d in stored.record.decisions} == {game_pb2.PROVENANCE_HOUSE}
