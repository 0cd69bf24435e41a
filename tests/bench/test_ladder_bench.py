"""bench/ladder.py still runs against today's daemon, and its own checks hold: both
tables of every duplicate set held the same hands, no bot was dealt a shuffle twice
(records and ledger), the engine replays the ladder's matches, no defaults."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_short_ladder_run_in_both_modes_passes_its_checks() -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "ladder.py"), "--matches", "8", "--repeats", "1",
         "--calibration", "0", "--json"], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["max_shuffle_repeats_per_bot"] == 0 and result["dealt_shuffles_not_in_ledger"] == 0
    assert result["bot_shuffle_pairs_checked"] >= 16 * 4 * 4  # two modes of 8+ matches, 4 seats, 4 deals
    sets, tables = result["duplicate_sets_with_the_same_hands_at_both_tables"].split("/")
    assert sets == tables and int(tables) >= 4
    same, replayed = result["matches_replayed_identically_by_engine"].split("/")
    assert same == replayed and int(replayed) >= 16
    assert result["non_bot_decisions_duplicate"] == result["non_bot_decisions_plain"] == 0
