"""bench/server.py's modes run end to end (tiny: --scale with its plot, the default run, --work-sweep, --shaped): a
smoke test that keeps the benchmark working; it asserts no timing."""

from __future__ import annotations

import json
import os
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
    for side in ("latency", "floor_latency", "throughput", "floor_throughput"):  # CPU per decision / round trip
        cpu = result["cpu_us"][side]
        # The process's time includes its loop thread's, but /proc samples and adjusts each
        # in ticks on its own: in half-second windows on a loaded machine the floor's (one
        # busy thread) read 64.1 us for the process against 80.1 for its thread. Loosely:
        assert cpu["server"] >= 0.5 * cpu["loop_thread"] > 0 and cpu["client"] > 0, side
    assert "CPU us per decision, one stream: loop / server / client" in out
    for side in ("throughput", "floor_throughput"):  # the server's context switches per operation
        switches = result["context_switches"][side]
        assert switches["server"] > 0 and 0 <= switches["loop_preempted"] <= switches["server"], side
    assert "server context switches per decision, 64 matches: all / loop preempted" in out
    # One 12-deal match, one bot in every seat: 660 requests, and 17 updates of events alone
    # (3 seats at each of the 3 deals before a deal without passing, the last deal's end and
    # match_ended to 4 seats): 677 / 660. A separate update at every deal's end gave 712 / 660.
    assert result["updates_per_decision"] == round(677 / 660, 3)
    assert "updates per decision (whole matches)" in out
    assert len(result["latency_ratios"]) == 1 and result["latency_ratio"] == result["latency_ratios"][0]


def test_the_work_sweep_puts_the_ratios_in_server_work() -> None:
    """--work-sweep (tiny): the floor at each busy-wait against the plain floor, heartsd
    beside them, and where each bar and heartsd fall on that curve (None off the curve)."""
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "server.py"), "--work-sweep", "60", "--rounds", "1",
                          "--seconds", "0.5", "--json"], capture_output=True, text=True, timeout=600, check=True).stdout
    result = json.loads(out.splitlines()[-1])
    assert result["work_us"] == [0.0, 60.0]
    assert result["floor_latency_ratio"][0] == result["floor_throughput_ratio"][0] == 1.0
    assert all(r > 0 for r in (*result["floor_per_s"], *result["floor_p50_us"]))
    assert result["heartsd_latency_ratio"] > 0 and result["heartsd_throughput_ratio"] > 0
    for key in ("work_us_at_latency_1_3", "work_us_at_throughput_0_6", "heartsd_work_us_by_throughput"):
        assert result[key] is None or 0 <= result[key] <= 60, key
    assert "the floor reaches latency 1.3 at W =" in out


def test_the_shaped_server_plays_heartsds_routing_with_no_game() -> None:
    """--shaped (tiny): the floor, the server shaped like heartsd's bot streams with no game
    and a busy-wait per answer, and heartsd, each measured with its CPU per message. Every
    answer of the shaped server's bots leads to a request for the next seat's bot, so its
    rate is nonzero only if the routing works."""
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "server.py"), "--shaped", "--floor-work-us", "5",
                          "--rounds", "1", "--seconds", "0.5", "--json"],
                         capture_output=True, text=True, timeout=600, check=True).stdout
    result = json.loads(out.splitlines()[-1])
    assert result["shaped_work_us"] == 5.0 and result["message_bytes"] > 500
    assert all(result[f"{k}_per_s"] > 0 for k in ("floor", "shaped", "heartsd"))
    assert result["shaped_ratio"] > 0 and result["heartsd_ratio"] > 0
    assert all(result["cpu_us"][k]["loop_thread"] > 0 for k in ("floor", "shaped", "heartsd"))
    assert "heartsd's shape, no game" in out


def test_a_bars_crossing_is_read_off_the_curve_between_its_points() -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from server import _crossing
    finally:
        sys.path.remove(str(ROOT / "bench"))
    assert round(_crossing([0, 20, 40], [1.0, 0.8, 0.6], 0.7), 9) == 30  # descending (throughput)
    assert round(_crossing([0, 20, 40], [1.0, 1.2, 1.6], 1.4), 9) == 30  # ascending (latency)
    assert _crossing([0, 20], [1.0, 0.8], 0.5) is None  # beyond the sweep


def test_the_drain_comparison_runs_heartsd_and_the_floor_each_way() -> None:
    """--compare-drain (tiny, a smoke test: no timing): heartsd and the ping-pong floor, each
    with gRPC's wake-ups drained and not, all four measured with their CPU."""
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "server.py"), "--compare-drain", "--rounds", "1",
                          "--seconds", "0.5", "--json"], capture_output=True, text=True, timeout=600, check=True).stdout
    result = json.loads(out.splitlines()[-1])
    kinds = ("heartsd", "heartsd_drained", "floor", "floor_drained")
    assert all(result[f"{k}_per_s"] > 0 and result["cpu_us"][k]["loop_thread"] > 0 for k in kinds)
    assert {"heartsd_gain", "floor_gain", "ratio_neither_drained", "ratio_both_drained"} <= set(result)
    assert "drained/not: heartsd" in out


def test_the_floor_drains_as_the_daemon_does() -> None:
    """The ping-pong server drains gRPC's wake-ups when heartsd's setting says so, and not
    otherwise (heartsbot/wakeups.py; HEARTSD_GRPC_WAKEUP_DRAIN is the daemon's own variable)."""
    probe = ("import asyncio, os, sys; sys.argv = ['x']; sys.path.insert(0, 'bench'); import server as B\n"
             "from heartsbot.wakeups import drained\n"
             "async def main():\n"
             "    task = asyncio.ensure_future(B.floor_server())\n"
             "    loop = asyncio.get_running_loop()\n"
             "    for _ in range(200):  # until the server is up (its reader is there then)\n"
             "        await asyncio.sleep(0.05)\n"
             "        if drained(loop) is not None:\n"
             "            break\n"
             "    print('DRAINED', drained(loop) is not None, flush=True)\n"
             "    os._exit(0)\n"
             "asyncio.run(main())\n")
    for value, expected in ((None, "True"), ("false", "False"), ("true", "True")):
        env = {k: v for k, v in os.environ.items() if k != "HEARTSD_GRPC_WAKEUP_DRAIN"}
        if value is not None:
            env["HEARTSD_GRPC_WAKEUP_DRAIN"] = value
        out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, cwd=ROOT,
                             env=env).stdout
        assert f"DRAINED {expected}" in out, (value, out)
