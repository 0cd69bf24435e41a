"""How a ladder's matchmaking tick grows with its connected bots (issue 18: cost with work).

The matchmaker ticks every second on the daemon's event loop: everything it does between
two awaits holds every running match's decisions. Here an embedded daemon (its real
store, arena and matchmaker) has N registered ladder bots of N owners connected, each
declaring one match at a time, and two kinds of tick are measured at each N:

- the *seating* tick, where every bot is free and N / 4 tables are made and started, in
  duplicate sets of ``--set-tables`` tables (2, the daemon's default; 1: plain tables);
- the *busy* tick, once every bot plays (each tick must still look at every bot), the
  median of five.

For each: the event loop's CPU while the tick ran (``time.thread_time`` of the loop's
thread: the tick and whatever else ran meanwhile) and the longest the loop went without
running a 1 ms heartbeat; for the seating tick also its wall time (the store's writes run
in a worker thread) and the garbage collector's full collections. The garbage collector is
set as the daemon sets it once started (``tune_gc``): without that, full collections of
60-170 ms while a thousand matches are created were most of the longest holds. The bots' sessions are the daemon's own (``BotSession``),
connected without a gRPC stream: nothing reads their requests, which only sit in their
outboxes (the clock is 10 minutes), and the tick does not touch the wire.

The numbers to read are the ratios, ``growth``: CPU per bot at the largest N over CPU per
bot at the smallest, in the same run (1 when a tick's cost is linear in the bots). Before
the arena indexed each bot's matches and the tick sorted by rating once (2026-12-07), a
busy tick with 4,000 bots in 1,000 matches held the loop 450-700 ms (250 bots: 13 ms),
and the seating tick checked every session's token once per table.

    python bench/matchmaking.py                 # table
    python bench/matchmaking.py --json          # ... plus one JSON object on the last line
    python bench/matchmaking.py --points 250,1000,4000
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for sub in ("engine", "clients/python", "server"):
    sys.path.insert(0, str(ROOT / sub))

from heartsd.config import Settings  # noqa: E402
from heartsd.logs import configure  # noqa: E402
from heartsd.matchmaker import LadderSettings, Matchmaker  # noqa: E402
from heartsd.server import embedded, tune_gc  # noqa: E402
from heartsd.sessions import BotSession  # noqa: E402

BUSY_TICKS = 5
CLOCK_MS = 600_000  # nobody answers: the matches wait, their bots stay busy


class Heartbeat:
    """A task that sleeps 1 ms at a time and keeps the longest gap between its runs: how
    long the event loop was held by something else."""

    def __init__(self) -> None:
        self.longest_s = 0.0
        self._task = asyncio.get_running_loop().create_task(self._beat())

    async def _beat(self) -> None:
        last = time.perf_counter()
        while True:
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            self.longest_s = max(self.longest_s, now - last)
            last = now

    def reset(self) -> None:
        self.longest_s = 0.0

    async def stop(self) -> None:
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)


class FullCollections:
    """The garbage collector's full (generation 2) collections while it is on: how many,
    and the longest, measured with ``gc.callbacks``. One of them holds the loop as long as
    it takes to walk every tracked object."""

    def __init__(self) -> None:
        self.count = 0
        self.longest_s = 0.0
        self._began = 0.0
        gc.callbacks.append(self._on)

    def _on(self, phase: str, info: dict[str, int]) -> None:
        if info["generation"] != 2:
            return
        if phase == "start":
            self._began = time.perf_counter()
        else:
            self.count += 1
            self.longest_s = max(self.longest_s, time.perf_counter() - self._began)

    def reset(self) -> None:
        self.count, self.longest_s = 0, 0.0

    def close(self) -> None:
        gc.callbacks.remove(self._on)


class Tick:
    """One tick's measures."""

    def __init__(self, cpu_s: float, wall_s: float, hold_s: float, made: int, collections: FullCollections) -> None:
        self.cpu_s = cpu_s
        self.wall_s = wall_s
        self.hold_s = hold_s
        self.made = made
        self.full_collections = collections.count
        self.longest_collection_s = collections.longest_s


async def timed_tick(maker: Matchmaker, beat: Heartbeat, collections: FullCollections) -> Tick:
    """One tick, timed: the loop's CPU, its wall time, the longest hold, the tables made
    and the full collections during it."""
    await asyncio.to_thread(maker._refresh)
    await asyncio.sleep(0.005)  # the heartbeat runs once before the tick
    beat.reset()
    collections.reset()
    cpu, wall = time.thread_time(), time.perf_counter()
    made = await maker.tick()
    cpu, wall = time.thread_time() - cpu, time.perf_counter() - wall
    await asyncio.sleep(0.005)  # the heartbeat runs after the tick: a hold at its end is counted
    return Tick(cpu, wall, beat.longest_s, len(made), collections)


async def point(bots: int, set_tables: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings.load(env={}, flags=dict(
            port=0, db_path=str(Path(tmp) / "heartsd.db"), admin_token="a" * 32, log_level="error",
            decision_ms=CLOCK_MS, bank_ms=CLOCK_MS, grace_ms=CLOCK_MS))
        async with embedded(settings) as (arena, _port):
            names = [f"b{i}" for i in range(bots)]
            # Registered in one transaction: `ladder add-bot` compares each new name with
            # every known one (spellings), which is the CLI's time, not the daemon's.
            with arena.store.ladder.db.transaction() as tx:
                for name in names:
                    tx.execute("INSERT INTO bots (name, owner, token_hash, created_ms) VALUES (?, ?, ?, ?)",
                               (name, f"owner-{name}", f"bench-{name}", 1))
            await arena.tokens.refreshed()
            for name in names:
                arena.connect(BotSession(bot=name, version="bench", rulesets=frozenset(), max_matches=1,
                                         token_hash=f"bench-{name}"))
            maker = Matchmaker(arena, LadderSettings(deals=4, set_tables=set_tables), seed=1)
            tune_gc()  # as the daemon does once it has started (server.serve)
            beat, collections = Heartbeat(), FullCollections()
            try:
                seating = await timed_tick(maker, beat, collections)
                busy = [await timed_tick(maker, beat, collections) for _ in range(BUSY_TICKS)]
            finally:
                await beat.stop()
                collections.close()
            for runner in list(arena.runners.values()):
                runner.stop(3, "bench over")
    return {
        "bots": bots, "tables": seating.made, "busy_tables": sum(b.made for b in busy),
        "seat_loop_ms": seating.cpu_s * 1e3, "seat_wall_ms": seating.wall_s * 1e3,
        "seat_hold_ms": seating.hold_s * 1e3, "seat_full_collections": seating.full_collections,
        "seat_longest_collection_ms": seating.longest_collection_s * 1e3,
        "busy_loop_ms": statistics.median(b.cpu_s for b in busy) * 1e3,
        "busy_hold_ms": max(b.hold_s for b in busy) * 1e3,
    }


async def run(points: list[int], set_tables: int = 2) -> dict[str, Any]:
    configure("console", "error", cache=False)
    results = []
    for n in points:
        results.append(await point(n, set_tables))
        r = results[-1]
        print(f"{n:>6} bots: seating tick {r['seat_loop_ms']:8.1f} ms loop CPU, {r['seat_wall_ms'] / 1e3:6.2f} s wall "
              f"({r['tables']} tables, held {r['seat_hold_ms']:6.1f} ms at most, "
              f"{r['seat_full_collections']} full collections, the longest {r['seat_longest_collection_ms']:.0f} ms); "
              f"busy tick {r['busy_loop_ms']:7.1f} ms (held {r['busy_hold_ms']:6.1f} ms at most)", flush=True)
    first, last = results[0], results[-1]

    def growth(key: str) -> float:
        return (last[key] / last["bots"]) / (first[key] / first["bots"])

    return {"set_tables": set_tables, "gc_threshold": list(gc.get_threshold()), "points": results, "seat_growth": growth("seat_loop_ms"), "busy_growth": growth("busy_loop_ms")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--points", default="250,1000,4000", help="connected ladder bots at each point")
    parser.add_argument("--set-tables", type=int, default=2,
                        help="tables per duplicate set, as ladder_set_tables (default 2, the daemon's; 1: plain tables)")
    parser.add_argument("--json", action="store_true", help="also print one JSON object on the last line")
    args = parser.parse_args()
    points = [int(p) for p in args.points.split(",")]
    if len(points) < 2 or any(p < 4 for p in points):
        parser.error("--points: at least two points of 4 bots or more")
    result = asyncio.run(run(points, args.set_tables))
    print(f"growth, CPU per bot at {points[-1]} over at {points[0]} bots (1 = linear): "
          f"seating tick {result['seat_growth']:.2f}, busy tick {result['busy_growth']:.2f}")
    if args.json:
        print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
