"""bench/server.py's --scale mode runs end to end (a tiny curve) and writes its plot: a
smoke test that keeps the benchmark working; it asserts no timing."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.dom.minidom
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_tiny_scale_curve_runs_and_plots(tmp_path: Path) -> None:
    plot = tmp_path / "scale.svg"
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "server.py"), "--scale", "--scale-points", "2,4",
                          "--scale-idle", "6", "--scale-rounds", "1", "--seconds", "0.5", "--plot", str(plot), "--json"],
                         capture_output=True, text=True, timeout=600, check=True).stdout
    result = json.loads(out.splitlines()[-1])
    points = {(p["matches"], p["idle_bots"]): p for p in result["points"]}
    assert set(points) == {(2, 0), (4, 0), (2, 6)}
    for p in points.values():
        assert p["decisions_per_s"] > 0 and p["floor_per_s"] > 0 and p["p99_us"] >= p["p50_us"] > 0
    assert result["compared"] == [4, 2]
    assert len(xml.dom.minidom.parse(str(plot)).getElementsByTagName("polyline")) == 2


def test_the_default_run_reports_memory_per_match_as_a_slope() -> None:
    """The default mode end to end (tiny): memory per live match is the growth between 64
    and 128 matches; the first 64's growth (which includes the store's cache warm-up) is
    reported beside it."""
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "server.py"), "--rounds", "1", "--seconds", "0.5",
                          "--deals", "12", "--json"], capture_output=True, text=True, timeout=600, check=True).stdout
    result = json.loads(out.splitlines()[-1])
    assert result["decisions_per_s"] > 0 and result["floor_per_s"] > 0
    for key in ("rss_per_idle_bot_kib", "rss_per_match_kib", "rss_first_matches_kib"):
        assert result[key] > 0, key
    assert "64 -> 128 matches" in out
