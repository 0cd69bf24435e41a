"""bench/soak.py, shortened (a few matches; every attack of issue 13 at its full size):
nothing lost, no honest bot timed out, every attack got the status it must get, the
records re-verify, and the JSON has the fields operators read. Its memory and loop-lag
numbers are printed, not asserted here (a wall-clock figure on a shared machine); the
memory bounds have tests of their own in tests/server/test_abuse.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_short_soak_loses_nothing_and_every_attack_gets_its_status() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "soak.py"), "--matches", "8", "--json"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    print(done.stdout)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    for key in ("matches_lost", "honest_timeouts", "rss_growth_mib", "max_loop_lag_ms"):
        assert key in result
    assert result["matches"] >= 8 and result["matches_lost"] == 0
    assert result["honest_timeouts"] == 0 and result["honest_decisions"] > 0
    assert result["records_failed"] == 0 and result["records_verified"] == result["matches"]
    assert result["attacks_unexpected"] == [], result["floods"]
    assert result["tracebacks_logged"] == 0
