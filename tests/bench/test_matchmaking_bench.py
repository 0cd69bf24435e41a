"""bench/matchmaking.py runs against today's daemon: it seats every bot and reports both ticks' growth."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_matchmaking_bench_seats_every_bot_and_prints_the_growth_of_both_ticks() -> None:
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "matchmaking.py"), "--points", "8,40", "--json"],
                         capture_output=True, text=True, timeout=300, check=True).stdout
    result = json.loads(out.strip().splitlines()[-1])
    assert "growth, CPU per bot at 40 over at 8 bots (1 = linear)" in out
    small, large = result["points"]
    assert (small["bots"], small["tables"], large["bots"], large["tables"]) == (8, 2, 40, 10)
    assert small["busy_tables"] == large["busy_tables"] == 0, "every bot plays: a busy tick seats nobody"
    assert all(p[key] > 0 for p in result["points"] for key in ("seat_loop_ms", "busy_loop_ms", "seat_hold_ms"))
    assert all(p["seat_wall_ms"] >= p["seat_loop_ms"] and p["seat_full_collections"] >= 0 for p in result["points"])
    assert result["gc_threshold"] == daemon_gc_threshold(), "measured with the garbage collector set as the daemon sets it"


def daemon_gc_threshold() -> list[int]:
    """What the daemon's ``tune_gc`` sets, read in this process and then undone."""
    from heartsd.server import tune_gc

    before = gc.get_threshold()
    try:
        tune_gc()
        return list(gc.get_threshold())
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
    assert result["seat_growth"] > 0 and result["busy_growth"] > 0


def test_the_matchmaking_bench_refuses_points_it_cannot_compare() -> None:
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "matchmaking.py"), "--points", "250"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "at least two points" in out.stderr
