"""bench/rating_ties.py rates the same simulated tables both ways and says what it measured."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BENCH = str(ROOT / "bench" / "rating_ties.py")


def test_the_rating_ties_bench_rates_both_ways_and_refuses_a_bad_setting() -> None:
    out = subprocess.run([sys.executable, BENCH, "--bots", "12", "--matches", "300", "--grain", "2", "--json"],
                         capture_output=True, text=True, timeout=300, check=True).stdout
    result = json.loads(out.strip().splitlines()[-1])
    assert (result["bots"], result["matches"]) == (12, 300)
    assert 0 < result["tables_with_a_tie"] < 1, result  # the setting makes ties: both rules are exercised
    for rule in ("openskill", "ladder"):
        assert 0.5 < result[rule]["accuracy"] <= 1 and result[rule]["us_per_match"] > 0, result
    assert "pairwise accuracy" in out and "of tables with a tie" in out
    refused = subprocess.run([sys.executable, BENCH, "--grain", "0"], capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and "--grain and --spread above 0" in refused.stderr
