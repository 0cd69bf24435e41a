"""Strategy strength on duplicate deals: every strategy plays every deal from every seat.

For each pairing "A vs 3 x B", a block is one shuffle played four times with the hands
rotated (MatchFormat.fixed(4, duplicate=True)) and A always in seat 0, so over a block
A and the Bs hold every hand once. The margin is B's mean points per deal minus A's
(points saved per deal by A; positive: A is stronger), with a 95% confidence interval
from the per-block differences. Decisions run in-process (the engine, no gRPC), the time
budget per decision is --time-limit (default 0.1 s), blocks run on --workers processes.

    python bench/strength.py --deals 1000 --json
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for sub in ("engine", "clients/python", "server"):
    sys.path.insert(0, str(ROOT / sub))

from hearts_engine import Match, MatchFormat, Phase, preset  # noqa: E402
from heartsbot.strategies import make_strategy  # noqa: E402

PAIRINGS = (("heuristic", "random"), ("mc", "heuristic"))


def play_block(args: tuple[str, str, int, float]) -> tuple[float, float]:
    """One shuffle, four rotations: (A's mean points per deal, the Bs' mean)."""
    a, b, block, time_limit = args
    match = Match(preset("standard"), MatchFormat.fixed(4, duplicate=True), seed=10_000 + block)
    bots = [make_strategy(a if seat == 0 else b, seed=block * 10 + seat) for seat in range(4)]
    for bot in bots:
        bot.time_limit_s = time_limit
    while not match.is_over:
        seat = match.to_act()[0]
        view = match.view(seat)
        phase = match.deal.phase
        if phase is Phase.PASSING:
            match.pass_cards(seat, bots[seat].choose_pass(view))
        elif phase is Phase.MOON_CHOICE:
            match.choose_moon(seat, bots[seat].choose_moon(view))
        else:
            match.play(seat, bots[seat].choose_play(view))
    totals = match.totals
    return totals[0] / 4, sum(totals[1:]) / 12


def measure(a: str, b: str, deals: int, time_limit: float, workers: int) -> dict[str, float]:
    blocks = max(1, math.ceil(deals / 4))
    jobs = [(a, b, k, time_limit) for k in range(blocks)]
    start = time.perf_counter()
    results = []
    with ProcessPoolExecutor(workers) as pool:
        for i, r in enumerate(pool.map(play_block, jobs, chunksize=max(1, blocks // (workers * 8))), 1):
            results.append(r)
            if sys.stderr.isatty() and i % max(1, blocks // 50) == 0:
                print(f"\r  {a} vs 3 {b}: {i}/{blocks} blocks", end="", file=sys.stderr, flush=True)
    if sys.stderr.isatty():
        print(file=sys.stderr)
    diffs = [bp - ap for ap, bp in results]
    margin = statistics.mean(diffs)
    half = 1.96 * statistics.stdev(diffs) / math.sqrt(len(diffs)) if len(diffs) > 1 else float("inf")
    a_pts = [ap for ap, _ in results]
    b_pts = [bp for _, bp in results]
    return {
        "a_points_per_deal": statistics.mean(a_pts),
        "a_ci": 1.96 * statistics.stdev(a_pts) / math.sqrt(len(a_pts)) if len(a_pts) > 1 else 0.0,
        "b_points_per_deal": statistics.mean(b_pts),
        "b_ci": 1.96 * statistics.stdev(b_pts) / math.sqrt(len(b_pts)) if len(b_pts) > 1 else 0.0,
        "margin": margin,
        "ci_low": margin - half,
        "ci_high": margin + half,
        "deals": blocks * 4,
        "seconds": time.perf_counter() - start,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=1000, help="deals per pairing (rounded up to whole blocks of 4)")
    parser.add_argument("--time-limit", type=float, default=0.1, help="seconds per decision")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    out: dict[str, float] = {"time_limit_s": args.time_limit}
    print(f"strength on duplicate deals, {args.time_limit:g} s per decision, {args.workers} workers")
    for a, b in PAIRINGS:
        r = measure(a, b, args.deals, args.time_limit, args.workers)
        key = f"{a}_vs_{b}"
        print(f"  {a} vs 3 {b} ({r['deals']} deals, {r['seconds']:.0f} s): "
              f"{a} {r['a_points_per_deal']:.2f} ± {r['a_ci']:.2f}, {b} {r['b_points_per_deal']:.2f} ± {r['b_ci']:.2f} "
              f"points/deal; margin {r['margin']:.2f} [{r['ci_low']:.2f}, {r['ci_high']:.2f}]")
        out.update({f"{key}_margin": r["margin"], f"{key}_margin_ci_low": r["ci_low"],
                    f"{key}_margin_ci_high": r["ci_high"], f"{key}_deals": r["deals"],
                    f"{a}_points_per_deal_vs_{b}": r["a_points_per_deal"],
                    f"{b}_points_per_deal_vs_{a}": r["b_points_per_deal"]})
    if args.json:
        print(json.dumps({k: round(v, 4) if isinstance(v, float) else v for k, v in out.items()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
