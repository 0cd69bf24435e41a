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


def test_a_searching_house_strategy_decides_in_lower_priority_worker_processes(tmp_path, monkeypatch):
    """Before: a house seat's Monte Carlo search (~85 ms a play) ran on the daemon's event
    loop, so every other match, bot stream and health check waited for each of its plays.
    Then it ran in a worker thread, where it held the interpreter's lock: the loop waited
    for the lock at every wake-up, and two house mc matches cut 16 remote matches to ~14%
    of their decisions/s (``bench/server.py --beside-house``). Now it runs in worker
    processes (heartsd/thinking.py) at nice +10: they, not the daemon, spend the CPU of the
    searches, the loop keeps running (a ticker counts on), and the match is the same as
    ever: every decision the house's, the record verifies."""
    import asyncio
    import os

    from heartsbot.strategies.monte_carlo import MonteCarloStrategy

    monkeypatch.setattr(MonteCarloStrategy, "time_limit_s", 0.02)  # the loop's strategy passes it on
    ticks = [0]

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
            workers = daemon.arena.thinkers.worker_pids()
            return daemon.stored(match_id), {pid: worker_state(pid) for pid in workers}

    def worker_state(pid: int) -> tuple[int, int, int]:
        """(parent pid, nice, CPU ticks used) from /proc/PID/stat."""
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        return int(fields[1]), int(fields[16]), int(fields[11]) + int(fields[12])

    stored, workers = run(scenario())
    assert stored.status == "finished"
    assert workers, "no worker process searched"
    assert all(parent == os.getpid() and nice >= 10 for parent, nice, _ in workers.values()), workers
    assert sum(cpu for _, _, cpu in workers.values()) > 0, "the workers did not search"
    assert ticks[0] > 0
    assert verify_record(MatchRecord.from_json(stored.record.engine_record_json)) is not None
    assert {d.provenance for d in stored.record.decisions} == {game_pb2.PROVENANCE_HOUSE}
