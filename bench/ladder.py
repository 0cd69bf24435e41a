"""How fast the ladder finds the true order, with duplicate sets and without.

Eight bots of known strength, each of its own owner, play rated 4-deal matches on the
ladder over real gRPC (an embedded heartsd, one heartsbot client per bot, the real
matchmaker, ratings and leaderboard). After every rating event (a plain match, or a whole
duplicate set: two matches) the leaderboard (the standings order: conservative rating
mu - 3 sigma; mu alone is reported too) is compared with the true order; a run's result
is the number of matches after which it equals the true order and stays so to the end of
the run. Each mode runs ``--repeats`` times (modes alternate; independent matchmaking
seeds and deals) and the median is reported, a run that never settles counting as
matches + 1; every value is printed too, since one run of a "first time it stays right"
statistic is very noisy. Duplicate: each round is one duplicate set (heartsd/duplicate.py),
two tables of four dealt the same four fresh shuffles at once, the two holders of each
hand neighbours in rating, rated by both tables' ranks and then each hand's two holders
by their points. Plain: two tables of four independent fresh shuffles each. No bot is
ever dealt a shuffle twice in either mode: ``max_shuffle_repeats_per_bot`` counts it from
every stored record's dealt hands and from the store's ledger (must be 0). The matchmaker
is ticked whenever all eight bots are free: ticking every 20 ms, it reseats the four bots
of whichever table ends first together at once, and the same two tables repeat for
several rounds.

The bots: the heuristic strategy, "reckless" in a share q = 0, 0.2, 0.36, 0.52, 0.67,
0.84, 1 of its plays, and the last also playing a random card wherever the heuristic
would play. A reckless play takes the trick if it can (highest card), discards the
lowest non-point card when void, leads the highest card. Which plays are reckless is a
fixed function of the position (hand, trick, tricks played), the same draw for every
bot, so each bot is deterministic, plays a replayed hand the same way, and has a fixed
strength. Measured with the engine (4,000 random tables of four of the eight, duplicate
4-deal matches), points per deal +-0.14: 3.34, 4.40, 5.39, 6.42, 7.25, 8.31, 9.32,
10.09; adjacent bots are 0.8 to 1.1 points per deal apart, about as far as eight Hearts
bots can be (from the heuristic to worse than random is ~7). Every run re-measures this
(``--calibration``) and checks the order, checks that both tables of every duplicate set
held the same hands deal by deal, replays 100 matches per run with the engine and
the calibrated bots (they must score exactly what the ladder stored), and counts
decisions not made by the bots (defaults; must be 0).

What in-match duplicate seating bought (the engine, in process, where nobody remembers:
each table played both ways on the same shuffle; rated play no longer uses it, since a
bot remembers the first rotation): over one match, the points difference of adjacent bots has an SD of 17.1
instead of 21.5, and the stronger finishes ahead ~62% instead of ~59% of the time: for
the same evidence on the order of two adjacent bots duplicate needs ~0.63 of the plain
matches (variance ratio, steady across calibrations; by ranks, which is all the ratings
see, 0.5 to 0.6, noisier). Why not more: duplicate
deals cancel who holds which hand, but once one card differs the rest of the deal plays
differently, and between bots this unlike that luck of the play dominates: replaying one
shuffle, duplicate, with the same four bots in each of the six seatings leaves 80% of the
variance of a 4-deal points difference. Bots that play alike gain much more (bots that
differ only in how they handle the queen of spades: SD 24 plain, 11 duplicate).

Why runs must be long: with openskill's default tau (25/300, added to sigma before every
update) sigma stays above ~1.6, ratings stay a moving average and adjacent bots keep
trading places; the ladder therefore uses a tenth of it (heartsd/ladder.py). Even so,
"reaches the true order and keeps it to the end" is a long-tail statistic: in 600-match
runs both modes mostly settle near the end (the cap), in 1,000-match runs they separate.

Measured before issue 12, when rated matches were in-match duplicate (each shuffle
replayed rotated to the same four bots, which a bot with a memory exploits), on this
2-core machine (shared), ladder tau = 25/3000: --matches 1000 --repeats 3: medians 380
in-match duplicate / 982 plain (0.39); true order held in 99% / 61% of second halves.

Duplicate sets across tables against plain, measured since: see the README's
"Benchmarks" section (the latest run's numbers and command).

    python bench/ladder.py --json                      # 1000 matches x 3 runs per mode, ~27 min
    python bench/ladder.py --matches 200 --repeats 1   # a quick look
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for sub in ("engine", "clients/python", "server"):
    sys.path.insert(0, str(ROOT / sub))

from hearts_engine import Match, MatchFormat, Phase, preset  # noqa: E402
from heartsbot.client import BotClient  # noqa: E402
from heartsbot.strategies.graded import GradedStrategy  # noqa: E402
from heartsd.config import Settings  # noqa: E402
from heartsbot import convert  # noqa: E402
from heartsd.ladder import MODEL, SetRow, _rate, set_rating_events  # noqa: E402
from heartsd.shuffles import hands_fingerprint  # noqa: E402
from heartsd.logs import configure  # noqa: E402
from heartsd.matchmaker import LadderSettings, Matchmaker  # noqa: E402
from heartsd.server import embedded  # noqa: E402

# (reckless share, random share of the other plays), strongest first: the true order.
LEVELS = ((0.0, 0.0), (0.2, 0.0), (0.36, 0.0), (0.52, 0.0), (0.67, 0.0), (0.84, 0.0), (1.0, 0.0), (1.0, 1.0))
DEALS = 4  # one duplicate block of one deal per seat
REPLAYS = 100  # matches per run replayed with the engine to check the bots play as calibrated
RULES = preset("standard")


def make_bot(i: int) -> GradedStrategy:
    """The heuristic, reckless in a share LEVELS[i] of its plays (heartsbot's graded
    strategies: deterministic, a fixed strength, a replayed hand played the same way)."""
    bot = GradedStrategy(i)
    bot.reckless, bot.rand = LEVELS[i]
    return bot


def bot_name(i: int) -> str:
    reckless, rand = LEVELS[i]
    return f"reckless{round(reckless * 100):03d}" + ("-random" if rand else "")


# -- the true strengths, with the engine alone ---------------------------------------------


def play(bots: list[GradedStrategy], seed: int, duplicate: bool) -> tuple[tuple[int, ...], tuple[int, ...]]:
    match = Match(RULES, MatchFormat.fixed(DEALS, duplicate=duplicate), seed=seed)
    while not match.is_over:
        seat = match.to_act()[0]
        view = match.view(seat)
        if match.deal.phase is Phase.PASSING:
            match.pass_cards(seat, bots[seat].choose_pass(view))
        elif match.deal.phase is Phase.MOON_CHOICE:
            match.choose_moon(seat, bots[seat].choose_moon(view))
        else:
            match.play(seat, bots[seat].choose_play(view))
    assert match.outcome is not None
    return match.totals, match.outcome.ranks


def calibrate(tables: int, seed: int) -> dict[str, object]:
    """Random 4-bot tables from the eight, each played as a duplicate and as a plain match
    (same seating and seed): points per deal per bot, and for bots adjacent in the true
    order that met, the SD of their points difference and how often the stronger one
    finished ahead."""
    rng = random.Random(seed)
    bots = [make_bot(i) for i in range(len(LEVELS))]
    per_deal: dict[bool, list[list[float]]] = {d: [[] for _ in LEVELS] for d in (True, False)}
    diffs: dict[bool, list[float]] = {True: [], False: []}
    ahead: dict[bool, list[float]] = {True: [], False: []}
    for k in range(tables):
        table = rng.sample(range(len(LEVELS)), 4)
        match_seed = rng.getrandbits(63)
        for duplicate in (True, False):
            totals, ranks = play([bots[b] for b in table], match_seed, duplicate)
            for b, t in zip(table, totals):
                per_deal[duplicate][b].append(t / DEALS)
            for i, a in enumerate(table):
                for j, b in enumerate(table):
                    if b == a + 1:
                        diffs[duplicate].append(totals[j] - totals[i])
                        ahead[duplicate].append(1.0 if ranks[i] < ranks[j] else 0.5 if ranks[i] == ranks[j] else 0.0)
    strength = [statistics.mean(v) for v in per_deal[True]]
    ci = [1.96 * statistics.stdev(v) / math.sqrt(len(v)) for v in per_deal[True]]
    out: dict[str, object] = {
        "tables": tables,
        "points_per_deal": [round(s, 2) for s in strength],
        "points_per_deal_ci": [round(c, 2) for c in ci],
        "true_order_confirmed": all(strength[i] + ci[i] < strength[i + 1] - ci[i + 1] for i in range(len(LEVELS) - 1)),
    }
    for duplicate, label in ((True, "duplicate"), (False, "plain")):
        out[f"adjacent_points_sd_{label}"] = round(statistics.stdev(diffs[duplicate]), 2)
        out[f"adjacent_ahead_{label}"] = round(statistics.mean(ahead[duplicate]), 3)
    # Duplicate matches needed per plain match for the same evidence on the order of two
    # adjacent bots: from how often the stronger is ahead (ranks, what the ratings use),
    # and from the points difference (same expected difference, so the variance ratio).
    edge = [2 * statistics.mean(ahead[d]) - 1 for d in (True, False)]
    out["equal_evidence_match_ratio_ranks"] = round((edge[1] / edge[0]) ** 2, 2) if edge[0] > 0 else None
    out["equal_evidence_match_ratio_points"] = round(
        (statistics.stdev(diffs[True]) / statistics.stdev(diffs[False])) ** 2, 2)
    return out


# -- the ladder, over gRPC ------------------------------------------------------------


def _conservative_key(item: tuple[str, object]) -> tuple[float, str]:
    name, rating = item
    return (-(rating.mu - 3 * rating.sigma), name)  # type: ignore[attr-defined]


async def run_ladder(duplicate: bool, matches: int, seed: int, progress: str) -> dict[str, object]:
    configure("console", "error")
    names = [bot_name(i) for i in range(len(LEVELS))]
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings.load(env={}, flags=dict(port=0, db_path=str(Path(tmp) / "l.db"), log_level="error",
                                                    admin_token="bench-admin-token", decision_ms=5000))
        async with embedded(settings, grace_s=2) as (arena, port):
            store = arena.store
            clients = []
            for i, name in enumerate(names):
                token = store.ladder.add_bot(name, owner=f"owner{i}")
                clients.append(BotClient(f"127.0.0.1:{port}", token, make_bot(i), name, max_matches=1))
            tasks = [asyncio.get_running_loop().create_task(c.run()) for c in clients]
            await asyncio.gather(*(c.connected.wait() for c in clients))
            # duplicate: sets of two tables dealt the same shuffles at once (heartsd/duplicate.py);
            # plain: two tables of independent fresh shuffles. Both never repeat a shuffle.
            maker = Matchmaker(arena, LadderSettings(deals=DEALS, set_tables=2 if duplicate else 1), seed=seed)
            created, shown = 0, 0
            while True:
                if not arena.runners:  # every bot is free: the previous round is stored and rated
                    if created >= matches:
                        break
                    await asyncio.to_thread(maker._refresh)
                    created += len(await maker.tick())
                    rated = int(store.db.query("SELECT COUNT(DISTINCT match_id) FROM results")[0][0])
                    if rated >= shown + 100:
                        shown = rated - rated % 100
                        print(f"  {progress}: {rated}/{matches} matches, {time.perf_counter() - start:.0f} s",
                              file=sys.stderr, flush=True)
                await asyncio.sleep(0.005)
            rows = store.db.query("SELECT seq, set_id, match_id, bot, seat, rank, points FROM results "
                                  "WHERE ruleset = 'standard' ORDER BY seq, match_id, seat")
            standings = [s.bot for s in store.ladder.standings("standard")]
            stored = store.ladder.stored_ratings("standard")
            reliability = store.ladder.reliability("standard")
            repeats = shuffle_repeats(store)
            sets_same = sets_checked = 0
            replays = []
            by_set: dict[str, list[list[frozenset[tuple[int, int]]]]] = {}
            for match_id in sorted({r[2] for r in rows}):
                stored_match = store.get(match_id)
                record = stored_match.record  # type: ignore[union-attr]
                hands = [[frozenset((c.suit, c.rank) for c in h.cards) for h in d.hands] for d in record.deals]
                if stored_match.set_id:  # type: ignore[union-attr]
                    by_set.setdefault(stored_match.set_id, []).append(hands)  # type: ignore[union-attr]
                if len(replays) < REPLAYS:
                    seats = [names.index(s.name) for s in record.seats]
                    replays.append((record.seed, seats, tuple(sum(d.points[s] for d in record.deal_scores) for s in range(4))))
            for tables in by_set.values():
                sets_checked += 1
                sets_same += len(tables) == 2 and tables[0] == tables[1]
            for c in clients:
                c.stop()
            await asyncio.gather(*tasks, return_exceptions=True)
    # The same matches played again by the engine alone, with the calibrated bots: the
    # bots on the ladder are exactly the bots whose strength was measured.
    same = sum(play([make_bot(i) for i in seats], seed, False)[0] == totals for seed, seats, totals in replays)
    fallbacks = sum(c.stats.fallbacks for c in clients)
    defaults = sum(t + i + d + a for _, t, i, d, a in reliability.values())  # every kind, auto-play too
    # The leaderboard after every rating event (a plain match, or a whole set: two
    # matches): the ratings are a pure function of the results in rated order (what
    # `heartsd ladder recompute` relies on), replayed here with the ladder's own rules.
    groups: dict[int, list[tuple[object, ...]]] = {}
    for row in rows:
        groups.setdefault(row[0], []).append(row)
    ratings = {n: MODEL.rating(name=n) for n in names}
    by_conservative: list[list[str]] = []
    by_mu: list[list[str]] = []
    played: list[int] = []  # matches played after each rating event
    ahead: list[float] = []
    for seq in sorted(groups):
        group = groups[seq]
        if group[0][1]:
            events = set_rating_events([SetRow(m, b, st, r, p) for _, _, m, b, st, r, p in group])  # type: ignore[arg-type]
        else:
            events = [([r[3] for r in group], [r[5] for r in group])]  # type: ignore[misc]
        for bots, ranks in events:
            for bot, rating in zip(bots, _rate([ratings[b] for b in bots], ranks)):
                ratings[bot] = rating  # type: ignore[assignment]
        tables_in_group = len({r[2] for r in group})
        played.append((played[-1] if played else 0) + tables_in_group)
        by_conservative.append([n for n, _ in sorted(ratings.items(), key=_conservative_key)])
        by_mu.append(sorted(names, key=lambda n: (-ratings[n].mu, n)))
        for match_id in {r[2] for r in group}:
            place = {r[3]: r[5] for r in group if r[2] == match_id}
            for i in range(len(names) - 1):
                if names[i] in place and names[i + 1] in place:
                    a, b = place[names[i]], place[names[i + 1]]
                    ahead.append(1.0 if a < b else 0.5 if a == b else 0.0)
    if standings != by_conservative[-1]:
        raise RuntimeError(f"replayed leaderboard {by_conservative[-1]} differs from the stored one {standings}")
    drift = max(abs(stored[n][0] - ratings[n].mu) for n in names)
    half = played[-1] / 2
    second_half = [o for o, k in zip(by_conservative, played) if k > half]
    at = settled(by_conservative, names)
    at_mu = settled(by_mu, names)
    return {
        "settled": None if at is None else played[at - 1],
        "settled_mu": None if at_mu is None else played[at_mu - 1],
        "matches": played[-1],
        "true_order_share_second_half": sum(o == names for o in second_half) / max(1, len(second_half)),
        "adjacent_ahead": statistics.mean(ahead) if ahead else float("nan"),
        "final_order": by_conservative[-1] if by_conservative else [],
        "sets_same_hands": (sets_same, sets_checked),
        "shuffle_repeats": repeats,
        "replayed": (same, len(replays)),
        "fallbacks": fallbacks + defaults,
        "rating_drift": drift,
        "seconds": time.perf_counter() - start,
    }


def shuffle_repeats(store: object) -> dict[str, int]:
    """No bot was dealt a shuffle twice: counted from every stored record's dealt hands
    (a fingerprint of each deal, heartsd/shuffles.py), and checked against the ledger."""
    seen: dict[tuple[str, str], int] = {}
    for match_id in store.ids():  # type: ignore[attr-defined]
        record = store.get(match_id).record  # type: ignore[attr-defined]
        for dealt in record.deals:
            fp = hands_fingerprint([convert.cards_from_wire(h.cards) for h in dealt.hands])
            for seat in record.seats:
                seen[(seat.name, fp)] = seen.get((seat.name, fp), 0) + 1
    ledger = {(bot, fp) for bot, fp, _, _ in store.dealt()}  # type: ignore[attr-defined]
    ledger_repeats = store.db.query(  # type: ignore[attr-defined]
        "SELECT COUNT(*) FROM (SELECT bot, fingerprint FROM dealt_shuffles GROUP BY bot, fingerprint "
        "HAVING COUNT(*) > 1) AS repeated")[0][0]
    return {"max_per_bot_records": max(seen.values()) - 1, "ledger_repeats": int(ledger_repeats),
            "dealt_not_in_ledger": len(set(seen) - ledger), "pairs": len(seen)}


def settled(orders: list[list[str]], truth: list[str]) -> int | None:
    """The number of matches after which every later leaderboard is the true order."""
    out = None
    for k in range(len(orders) - 1, -1, -1):
        if orders[k] != truth:
            break
        out = k + 1
    return out


def median_of(values: list[int | None], never: int) -> float:
    return statistics.median(v if v is not None else never for v in values)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=1000, help="rated matches per run")
    parser.add_argument("--repeats", type=int, default=3, help="runs per mode")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--calibration", type=int, default=2000,
                        help="engine-only random tables to measure the bots' strengths (0: skip)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    start = time.perf_counter()
    names = [bot_name(i) for i in range(len(LEVELS))]
    out: dict[str, object] = {"matches_per_run": args.matches, "repeats": args.repeats, "bots": len(LEVELS),
                              "deals_per_match": DEALS, "true_order": names}
    print(f"ladder convergence: {len(LEVELS)} bots of known order, {args.matches} rated {DEALS}-deal matches "
          f"per run, {args.repeats} run(s) per mode")
    if args.calibration:
        print(f"  calibrating with the engine ({args.calibration} random tables, each duplicate and plain)...",
              file=sys.stderr, flush=True)
        cal = calibrate(args.calibration, args.seed)
        out["calibration"] = cal
        pts, ci = cal["points_per_deal"], cal["points_per_deal_ci"]
        print("  true strength, points per deal (engine, duplicate):")
        for i, name in enumerate(names):
            print(f"    {name:<22} {pts[i]:6.2f} ± {ci[i]:.2f}")  # type: ignore[index]
        print(f"  true order confirmed (95% CIs apart): {cal['true_order_confirmed']}")
        print(f"  adjacent bots, per match: SD of the points difference {cal['adjacent_points_sd_duplicate']} "
              f"duplicate vs {cal['adjacent_points_sd_plain']} plain; stronger ahead "
              f"{cal['adjacent_ahead_duplicate']:.1%} vs {cal['adjacent_ahead_plain']:.1%}; for the same "
              f"evidence duplicate needs {cal['equal_evidence_match_ratio_ranks']} of the plain matches by ranks, "
              f"{cal['equal_evidence_match_ratio_points']} by points")
    results: dict[str, list[dict[str, object]]] = {"duplicate": [], "plain": []}
    for r in range(args.repeats):
        for duplicate in (True, False):
            label = "duplicate" if duplicate else "plain"
            progress = f"{label} run {r + 1}/{args.repeats}"
            res = asyncio.run(run_ladder(duplicate, args.matches, args.seed + r, progress))
            results[label].append(res)
            shown = f"after {res['settled']} matches" if res["settled"] is not None else "never"
            print(f"  {progress}: true order reached and kept {shown} "
                  f"(by mu: {res['settled_mu'] if res['settled_mu'] is not None else 'never'}); "
                  f"true order in {res['true_order_share_second_half']:.0%} of the second half; "
                  f"{res['seconds']:.0f} s", flush=True)
    never = args.matches + 1
    for label, runs in results.items():
        values = [r["settled"] for r in runs]
        mu_values = [r["settled_mu"] for r in runs]
        out[f"matches_to_true_order_{label}"] = median_of(values, never)  # type: ignore[arg-type]
        out[f"matches_to_true_order_{label}_runs"] = values
        out[f"matches_to_true_order_by_mu_{label}"] = median_of(mu_values, never)  # type: ignore[arg-type]
        out[f"matches_to_true_order_by_mu_{label}_runs"] = mu_values
        out[f"true_order_share_second_half_{label}"] = round(
            statistics.mean(r["true_order_share_second_half"] for r in runs), 3)  # type: ignore[misc]
        out[f"adjacent_ahead_{label}"] = round(statistics.mean(r["adjacent_ahead"] for r in runs), 3)  # type: ignore[misc]
        out[f"non_bot_decisions_{label}"] = sum(r["fallbacks"] for r in runs)  # type: ignore[misc]
        print(f"  {label:<9}: median {out[f'matches_to_true_order_{label}']} matches to the true order "
              f"(runs: {', '.join(str(v) if v is not None else 'never' for v in values)}; never counts as {never}); "
              f"true order in {out[f'true_order_share_second_half_{label}']:.0%} of second halves; "
              f"stronger adjacent bot ahead in {out[f'adjacent_ahead_{label}']:.1%} of their meetings")
    sets_same = sum(r["sets_same_hands"][0] for r in results["duplicate"])  # type: ignore[index]
    sets_checked = sum(r["sets_same_hands"][1] for r in results["duplicate"])  # type: ignore[index]
    same = sum(r["replayed"][0] for runs in results.values() for r in runs)  # type: ignore[index]
    replayed = sum(r["replayed"][1] for runs in results.values() for r in runs)  # type: ignore[index]
    repeats = [r["shuffle_repeats"] for runs in results.values() for r in runs]
    out["max_shuffle_repeats_per_bot"] = max(max(x["max_per_bot_records"], x["ledger_repeats"]) for x in repeats)  # type: ignore[index]
    out["dealt_shuffles_not_in_ledger"] = sum(x["dealt_not_in_ledger"] for x in repeats)  # type: ignore[index]
    out["bot_shuffle_pairs_checked"] = sum(x["pairs"] for x in repeats)  # type: ignore[index]
    out["matches_replayed_identically_by_engine"] = f"{same}/{replayed}"
    out["duplicate_sets_with_the_same_hands_at_both_tables"] = f"{sets_same}/{sets_checked}"
    plain_d, dup_d = out["matches_to_true_order_plain"], out["matches_to_true_order_duplicate"]
    out["duplicate_to_plain_matches_ratio"] = round(dup_d / plain_d, 2) if plain_d else None  # type: ignore[operator]
    out["seconds"] = round(time.perf_counter() - start)
    print(f"  duplicate sets whose two tables held the same hands deal by deal: {sets_same}/{sets_checked}; "
          f"(bot, shuffle) pairs checked: {out['bot_shuffle_pairs_checked']}, most repeats of one: "
          f"{out['max_shuffle_repeats_per_bot']}, dealt but not in the ledger: {out['dealt_shuffles_not_in_ledger']}; "
          f"defaults not played by the bots: {out['non_bot_decisions_duplicate']} + {out['non_bot_decisions_plain']}; "
          f"ladder matches the engine replays with the same scores: {same}/{replayed}; {out['seconds']} s in all")
    if args.json:
        print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
