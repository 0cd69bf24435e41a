"""Honest reliability: every decision the server plays for a bot counts, the leaderboard
shows it as a share of the bot's decisions, and a bot that left mid-match is flagged."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import structlog
from heartsbot.proto import game_pb2, ladder_pb2, ladder_pb2_grpc

from heartsd.store import Store

from .harness import Bot, random_legal, run, running_daemon

P = game_pb2
HEARTSD = [sys.executable, "-m", "heartsd.cli"]


def leaves_after(decisions: int):
    """A bot that answers ``decisions`` requests, then stops answering (as if it had left)."""
    answered = [0]
    policy = random_legal(7)

    def answer(request, bot):
        answered[0] += 1
        return policy(request, bot) if answered[0] <= decisions else None

    return answer


def rated_match_with_a_bot_that_leaves(tmp_path):
    names = ["r1", "r2", "r3", "quitter"]

    async def scenario():
        async with running_daemon(tmp_path, log_level="info") as daemon:
            ladder = daemon.arena.store.ladder
            tokens = {n: ladder.add_bot(n, f"owner-{n}") for n in names}
            bots = [await Bot(daemon, n, leaves_after(10) if n == "quitter" else random_legal(i), token=tokens[n]).start()
                    for i, n in enumerate(names)]
            with structlog.testing.capture_logs() as logs:
                match_id = await daemon.create_match(names, deals=4, rated=True,
                                                     clock=dict(decision_ms=60, bank_ms=60))
                await bots[0].wait_ended(match_id)
            async with daemon.channel() as channel:
                board = await ladder_pb2_grpc.LadderServiceStub(channel).GetLeaderboard(
                    ladder_pb2.GetLeaderboardRequest(ruleset="standard"))
            for b in bots:
                await b.close()
            return ladder.standings("standard"), board, logs, daemon.stored(match_id), daemon.settings.db_path

    return run(scenario())


def test_a_bot_that_leaves_mid_match_is_counted_and_flagged(tmp_path):
    standings, board, logs, stored, db = rated_match_with_a_bot_that_leaves(tmp_path)
    quitter = next(s for s in standings if s.bot == "quitter")
    seat = [s.name for s in stored.record.seats].index("quitter")
    mine = [d.provenance for d in stored.record.decisions if d.seat == seat]
    n = len(mine)  # its passes and plays of 4 deals
    assert quitter.decisions == n and n > 50
    assert quitter.timeouts == 3 and quitter.auto == mine.count(P.PROVENANCE_AUTO) == n - 10 - 3
    assert quitter.default_share == (n - 10) / n and quitter.unreliable
    assert not any(s.unreliable for s in standings if s.bot != "quitter")
    entry = next(e for e in board.entries if e.bot == "quitter")
    assert entry.auto_defaults == n - 13 and entry.timeouts == 3 and entry.unreliable
    assert abs(entry.default_share - (n - 10) / n) < 1e-9
    # The log: a line per default up to auto-play, then one when it starts and one at the end.
    mine_logged = [e for e in logs if e.get("bot") == "quitter"]
    assert [e["event"] for e in mine_logged if e["event"] == "default played"] == ["default played"] * 3
    started = [e for e in mine_logged if e["event"].startswith("auto-play started")]
    ended = [e for e in mine_logged if e["event"] == "auto-play ended"]
    assert len(started) == 1 and len(ended) == 1 and ended[0]["auto_played"] == n - 13
    # The command-line leaderboard shows the share and the flag.
    out = subprocess.run([*HEARTSD, "ladder", "leaderboard", "--db", db], capture_output=True, text=True)
    line = next(ln for ln in out.stdout.splitlines() if "quitter" in ln)
    assert f"{(n - 10) / n:.1%}" in line and f"3/0/0/{n - 13}" in line and line.rstrip().endswith("UNRELIABLE"), out.stdout


def test_results_stored_before_auto_play_was_counted_get_their_count_at_start(tmp_path):
    standings, _, _, _, db = rated_match_with_a_bot_that_leaves(tmp_path)
    store = Store(db)
    with store.db.transaction() as tx:
        tx.execute("UPDATE results SET auto = -1")  # as a store migrated from before the column
    assert next(s for s in store.ladder.standings("standard") if s.bot == "quitter").auto == 0
    store.close()
    store = Store(db)  # a start counts them from the stored records
    again = {s.bot: (s.auto, s.default_share) for s in store.ladder.standings("standard")}
    store.close()
    assert again == {s.bot: (s.auto, s.default_share) for s in standings}
    assert again["quitter"][0] > 30
