"""Full matches over real gRPC: every preset, remote and house bots, consistent scores."""

from __future__ import annotations

import pytest

from hearts_engine import MatchRecord, verify_record

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
