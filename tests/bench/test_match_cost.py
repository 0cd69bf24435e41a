"""bench/match_cost.py runs against today's daemon and solves its two unknowns sensibly."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_match_cost_prints_a_match_and_a_decision_and_their_ratio() -> None:
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "match_cost.py"), "--rounds", "3", "--matches", "8",
                          "--json"], capture_output=True, text=True, timeout=300, check=True).stdout
    result = json.loads(out.strip().splitlines()[-1])
    assert "a match costs as much as N decisions" in out
    # A 1-deal match is 56 decisions here (4 passes, 52 plays), a 12-deal one 660 (no pass every 4th deal).
    assert result["decisions_per_12_deal_match"] == 660
    assert result["match_us"] > 0 and result["decision_us"] > 0 and result["store_us_per_match"] > 0
    assert abs(result["match_in_decisions"] - result["match_us"] / result["decision_us"]) < 1
    assert 0 < result["share_of_12_deal_match"] < 1
