"""How well the ladder's ratings order bots when tables tie: its tie rule against openskill's.

The ladder rates a tie as the mean of openskill's Plackett-Luce updates over every order
of the tied bots (``heartsd.ladder._rate``); openskill's own tie update rates ranks
1, 1, 3, 4 at equal ratings with the third level with the co-winners. This replays the same
simulated matches through both and prints, for each, the share of bot pairs that the
leaderboard's order (conservative rating mu - 3 sigma) and mu alone put in the order of
their true strengths, and the time an update of a match takes.

The simulation: ``--bots`` bots with true strengths drawn from N(25, ``--spread``); each
match seats four of them at random; each bot's match score is its strength plus N(0, 25/6)
noise (openskill's beta), rounded down to a multiple of ``--grain``, so that close scores
tie (the share of tables with a tie is printed); ranks follow the scores. Close bots (the
default spread, 2) make luck matter as in Hearts. Pure Python, no daemon: it measures the
rule, not the store.

    python bench/rating_ties.py                 # 200 bots, 12,000 matches
    python bench/rating_ties.py --json          # ... plus one JSON object on the last line
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

from heartsd.ladder import MODEL, _rate  # noqa: E402


def openskill_own(ratings: list[object], ranks: list[int]) -> list[object]:
    """openskill's update, ties included (what the ladder did before)."""
    return [team[0] for team in MODEL.rate([[r] for r in ratings], ranks=ranks)]  # type: ignore[list-item]


def simulate(bots: int, matches: int, spread: float, grain: float, seed: int
             ) -> tuple[list[float], list[tuple[list[int], list[int]]]]:
    draw = random.Random(seed)
    strength = [draw.gauss(25, spread) for _ in range(bots)]
    played = []
    for _ in range(matches):
        table = draw.sample(range(bots), 4)
        scores = [math.floor((strength[b] + draw.gauss(0, 25 / 6)) / grain) for b in table]
        played.append((table, [1 + sum(s > own for s in scores) for own in scores]))
    return strength, played


def accuracy(order: list[float], strength: list[float]) -> float:
    pairs = right = 0
    for i in range(len(strength)):
        for j in range(i + 1, len(strength)):
            pairs += 1
            right += (order[i] - order[j]) * (strength[i] - strength[j]) > 0
    return right / pairs


def rate_all(rule: object, bots: int, played: list[tuple[list[int], list[int]]]) -> tuple[list[object], float]:
    ratings = [MODEL.rating(name=f"b{b}") for b in range(bots)]
    start = time.perf_counter()
    for table, ranks in played:
        for b, after in zip(table, rule([ratings[b] for b in table], ranks)):  # type: ignore[operator]
            ratings[b] = after
    return ratings, (time.perf_counter() - start) / len(played) * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bots", type=int, default=200)
    parser.add_argument("--matches", type=int, default=12_000)
    parser.add_argument("--spread", type=float, default=2.0, help="SD of the true strengths")
    parser.add_argument("--grain", type=float, default=1.0, help="score resolution: larger, more ties")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="also print one JSON object on the last line")
    args = parser.parse_args()
    if args.bots < 4 or args.matches < 1 or args.grain <= 0 or args.spread <= 0:
        parser.error("--bots at least 4, --matches at least 1, --grain and --spread above 0")
    strength, played = simulate(args.bots, args.matches, args.spread, args.grain, args.seed)
    tied = sum(len(set(ranks)) < 4 for _, ranks in played) / len(played)
    out: dict[str, object] = {"bots": args.bots, "matches": args.matches, "tables_with_a_tie": round(tied, 3)}
    print(f"{args.bots} bots, {args.matches} matches, {tied:.1%} of tables with a tie")
    for name, rule in (("openskill's tie update", openskill_own), ("the ladder's (mean over orders)", _rate)):
        ratings, us = rate_all(rule, args.bots, played)
        conservative = accuracy([r.mu - 3 * r.sigma for r in ratings], strength)  # type: ignore[attr-defined]
        by_mu = accuracy([r.mu for r in ratings], strength)  # type: ignore[attr-defined]
        print(f"  {name:<32} pairwise accuracy {conservative:.4f} (mu alone {by_mu:.4f}), {us:.0f} us per match")
        out["ladder" if rule is _rate else "openskill"] = {
            "accuracy": round(conservative, 4), "accuracy_mu": round(by_mu, 4), "us_per_match": round(us, 1)}
    if args.json:
        print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
