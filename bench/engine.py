"""Engine speed: random full deals per second, ours against OpenSpiel's C++ hearts.

Both loops do the same work: deal (our shuffle / OpenSpiel's 52 chance actions),
pass three cards left from every seat, then play 13 tricks, every action picked with
``random.choice`` from the legal set returned by the public API (ours goes through
the *checked* entry points). Within a round the loops take turns in slices of ~20 ms
(the order flips every turn), so a change in machine load hits every side of a round
alike: ``ratio`` is the median of the rounds' ratios (ours / OpenSpiel's, each round
its own pair), printed with their spread; each side's best round is printed too. The engine measured is the installed one, compiled or
pure (``HEARTS_ENGINE_PURE=1`` runs the pure-Python sources); the output says which.

Also measured: fast playouts (``Deal.copy().playout``) from the first lead, and Monte
Carlo samples (``determinize`` a seat's view mid-deal, then play out).

    python bench/engine.py            # table
    python bench/engine.py --json     # ... plus one JSON object on the last line
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))

from hearts_engine import COMPILED, Deal, PassDirection, Phase, determinize, preset, seat_view  # noqa: E402

RULES = preset("standard")


def ours_loop(count: int, rng: random.Random, start: int) -> None:
    choice, sample = rng.choice, rng.sample
    for i in range(start, start + count):
        deal = Deal.shuffled(RULES, 12345, i, pass_direction=PassDirection.LEFT)
        for seat in range(4):
            deal.pass_cards(seat, sample(deal.passable(seat), 3))
        while not deal.is_over:
            seat = deal.turn
            deal.play(seat, choice(deal.legal_plays(seat)))


def openspiel_loops() -> dict[str, Callable[[int, random.Random, int], None]]:
    """Two ways to drive OpenSpiel, both passing left then playing random legal cards.

    ``canonical`` samples chance nodes from ``chance_outcomes()`` (OpenSpiel's API for
    chance, right for any game); ``uniform`` takes ``random.choice(legal_actions())``
    at chance nodes too, a shortcut that is only valid because a Hearts deal is
    uniform, and is the fastest loop pyspiel allows.
    """
    try:
        import pyspiel
    except ImportError:
        return {}
    game = pyspiel.load_game("hearts(qs_breaks_hearts=false)")

    def canonical(count: int, rng: random.Random, start: int) -> None:
        choice = rng.choice
        for _ in range(count):
            state = game.new_initial_state()
            state.apply_action(1)  # pass left
            while not state.is_terminal():
                if state.is_chance_node():
                    state.apply_action(choice(state.chance_outcomes())[0])
                else:
                    state.apply_action(choice(state.legal_actions()))

    def uniform(count: int, rng: random.Random, start: int) -> None:
        choice = rng.choice
        for _ in range(count):
            state = game.new_initial_state()
            state.apply_action(1)  # pass left
            while not state.is_terminal():
                state.apply_action(choice(state.legal_actions()))

    return {"canonical": canonical, "uniform": uniform}


def playout_loop(count: int, rng: random.Random, start: int) -> None:
    base = Deal.shuffled(RULES, 999, 3)  # a hold deal: play starts at once
    for _ in range(count):
        base.copy().playout(rng)


def mc_sample_loop(count: int, rng: random.Random, start: int) -> None:
    deal = Deal.shuffled(RULES, 777, 3)
    for _ in range(17):  # four tricks and a card in
        deal.push_play(rng.choice(deal.legal_plays(deal.turn)))
    view = seat_view(deal, deal.turn)
    for _ in range(count):
        determinize(view, rng).playout(rng)


def rate(loop: Callable[[int, random.Random, int], None], seconds: float, rng: random.Random) -> float:
    """Deals per second over about ``seconds``, calibrated with a short first batch.

    The garbage collector is paused while timing, as ``timeit`` does, for both loops.
    """
    batch, done, spent = 50, 0, 0.0
    gc.collect()
    gc.disable()
    try:
        while spent < seconds:
            start = time.perf_counter()
            loop(batch, rng, done)
            spent += time.perf_counter() - start
            done += batch
            batch = max(50, int(done / spent * 0.25))
    finally:
        gc.enable()
    return done / spent


def interleaved(loops: dict[str, Callable[[int, random.Random, int], None]], seconds: float,
                rng: random.Random, slice_s: float = 0.02) -> dict[str, float]:
    """One round: deals per second of each loop, the loops taking turns in slices of about
    ``slice_s`` (the order flips every turn) for about ``seconds`` each. A change in the
    machine's load (other processes on the same cores) lasts far longer than a slice, so
    it slows every loop of the round alike and cancels out of their ratio."""
    sizes = {name: max(1, int(rate(loop, slice_s, rng) * slice_s)) for name, loop in loops.items()}
    done = dict.fromkeys(loops, 0)
    spent = dict.fromkeys(loops, 0.0)
    order = list(loops)
    gc.collect()
    gc.disable()
    try:
        while min(spent.values()) < seconds:
            for name in order:
                start = time.perf_counter()
                loops[name](sizes[name], rng, done[name])
                spent[name] += time.perf_counter() - start
                done[name] += sizes[name]
            order.reverse()
    finally:
        gc.enable()
    return {name: done[name] / spent[name] for name in loops}


def _fmt(value: float | None, digits: int = 0) -> str:
    return "n/a" if value is None else f"{value:,.{digits}f}"


def _round(value: float | None, digits: int = 1) -> float | None:
    return None if value is None else round(value, digits)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print a JSON object on the last line")
    parser.add_argument("--rounds", type=int, default=7, help="alternating rounds (odd: a true median)")
    parser.add_argument("--seconds", type=float, default=1.0, help="per round and loop")
    args = parser.parse_args()
    rng = random.Random(1)
    theirs = openspiel_loops()
    loops = {"ours": ours_loop, **theirs}
    rounds: dict[str, list[float]] = {name: [] for name in loops}
    for _ in range(args.rounds):
        for name, value in interleaved(loops, args.seconds, rng).items():
            rounds[name].append(value)
    playouts = rate(playout_loop, args.seconds, rng)
    samples = rate(mc_sample_loop, args.seconds, rng)
    best = {name: max(values) for name, values in rounds.items()}
    engine = "compiled" if COMPILED else "pure Python"

    def paired(name: str) -> list[float]:
        return [o / t for o, t in zip(rounds["ours"], rounds.get(name, []))]

    def median(name: str) -> float | None:
        return statistics.median(paired(name)) if name in rounds else None

    def spread(name: str) -> str:
        values = paired(name)
        return f"{min(values):.2f}-{max(values):.2f}" if values else "n/a"

    rows = [
        (f"ours ({engine}): public checked API, random full deals/s (best round)", f"{best['ours']:,.0f}"),
        ("OpenSpiel, chance via chance_outcomes(), deals/s (best round)", _fmt(best.get("canonical"))),
        ("OpenSpiel, chance via legal_actions() shortcut, deals/s (best round)", _fmt(best.get("uniform"))),
        ("ratio ours / OpenSpiel canonical (median of rounds)", _fmt(median("canonical"), 2)),
        ("  per-round spread", spread("canonical")),
        ("ratio ours / OpenSpiel shortcut (median of rounds)", _fmt(median("uniform"), 2)),
        ("  per-round spread", spread("uniform")),
        ("fast playouts from the first lead /s", f"{playouts:,.0f}"),
        ("Monte Carlo samples (determinize + playout) /s", f"{samples:,.0f}"),
    ]
    width = max(len(r[0]) for r in rows)
    print(f"engine benchmark: {args.rounds} alternating rounds of {args.seconds:g} s per loop")
    if not theirs:
        print("  (OpenSpiel is not installed: pip install open_spiel==2.0.2)")
    for label, value in rows:
        print(f"  {label:<{width}}  {value:>10}")
    if args.json:
        print(
            json.dumps(
                {
                    "engine": engine,
                    "ratio": _round(median("canonical"), 3),
                    "ratio_rounds": [round(x, 3) for x in paired("canonical")],
                    "ratio_vs_shortcut": _round(median("uniform"), 3),
                    "ratio_vs_shortcut_rounds": [round(x, 3) for x in paired("uniform")],
                    "ours_deals_per_s": round(best["ours"], 1),
                    "openspiel_deals_per_s": _round(best.get("canonical")),
                    "openspiel_shortcut_deals_per_s": _round(best.get("uniform")),
                    "best_round_ratio": _round(best["ours"] / best["canonical"], 3) if "canonical" in best else None,
                    "playouts_per_s": round(playouts, 1),
                    "mc_samples_per_s": round(samples, 1),
                    "rounds": {name: [round(x) for x in values] for name, values in rounds.items()},
                }
            )
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
