"""How fast the ladder finds the true order, with duplicate deals and without.

Eight bots of known strength play on the ladder over real gRPC (an embedded heartsd,
one heartsbot client per bot, the matchmaker): the heuristic strategy playing a
"random" legal card in a share 0, 0.1, ..., 0.7 of positions (a fixed function of the
position, so each bot is deterministic and its strength known). After each
rated match the leaderboard (by conservative rating) is compared with the true order;
the result is the number of matches after which it equals the true order and stays so
until the end of the run. Both runs use 4-deal matches (one duplicate block).

    python bench/ladder.py --matches 300 --json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for sub in ("server", "server/generated", "clients/python"):
    sys.path.insert(0, str(ROOT / sub))

from heartsbot.client import BotClient  # noqa: E402
from heartsbot.strategies import HeuristicStrategy  # noqa: E402
from heartsd.arena import Arena  # noqa: E402
from heartsd.config import Settings  # noqa: E402
from heartsd.logs import configure  # noqa: E402
from heartsd.matchmaker import LadderSettings, Matchmaker  # noqa: E402
from heartsd.server import build_server  # noqa: E402
from heartsd.store import Store  # noqa: E402

NOISE = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7)


class Noisy(HeuristicStrategy):
    """The heuristic, except that in a share ``noise`` of positions it plays a random legal
    card. The "random" choice is a fixed function of the position (hand, trick, tricks so
    far), so the bot plays a replayed hand the same way: its strength is known, and
    duplicate deals can cancel the luck of the deal completely."""

    noise = 0.0

    def choose_play(self, view):  # type: ignore[no-untyped-def]
        position = random.Random(hash((view.hand, view.trick, len(view.tricks), self.noise)))
        if position.random() < self.noise:
            return position.choice(view.legal)
        return super().choose_play(view)


def bot_name(i: int) -> str:
    return f"noise{int(NOISE[i] * 100):03d}"


async def run_ladder(duplicate: bool, matches: int, seed: int) -> tuple[int | None, list[list[str]]]:
    configure("console", "error")
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings.load(env={}, flags=dict(port=0, db_path=str(Path(tmp) / "l.db"), log_level="error",
                                                    admin_token="bench-admin-token", decision_ms=2000))
        store = Store(settings.db_path)
        arena = Arena(settings, store)
        server, port, _ = await build_server(settings, arena)
        await server.start()
        clients = []
        for i, noise in enumerate(NOISE):
            token = store.ladder.add_bot(bot_name(i), owner=f"owner{i}")
            strategy = Noisy(seed * 100 + i)
            strategy.noise = noise
            clients.append(BotClient(f"127.0.0.1:{port}", token, strategy, bot_name(i), max_matches=1))
        tasks = [asyncio.get_running_loop().create_task(c.run()) for c in clients]
        await asyncio.gather(*(c.connected.wait() for c in clients))
        maker = Matchmaker(arena, LadderSettings(blocks=1, interval_s=0.02, duplicate=duplicate), seed=seed)
        maker_task = asyncio.get_running_loop().create_task(maker.run())
        truth = [bot_name(i) for i in range(len(NOISE))]
        orders: list[list[str]] = []
        seen = 0
        while seen < matches:
            await asyncio.sleep(0.05)
            rows = store.db.query("SELECT COUNT(DISTINCT match_id) FROM results")
            rated = int(rows[0][0])
            while seen < min(rated, matches):
                seen += 1
                orders.append([s.bot for s in store.ladder.standings("standard")])
        maker_task.cancel()
        for c in clients:
            c.stop()
        await asyncio.gather(*tasks, maker_task, return_exceptions=True)
        await arena.shutdown(2)
        await server.stop(0.5)
        store.close()
    settled = None
    for k in range(len(orders) - 1, -1, -1):
        if orders[k] != truth:
            break
        settled = k + 1
    return settled, orders


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=300, help="rated matches per run")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    out: dict[str, object] = {"matches_per_run": args.matches, "bots": len(NOISE)}
    print(f"ladder convergence: {len(NOISE)} bots of known order, {args.matches} rated 4-deal matches per run")
    for duplicate in (True, False):
        start = time.perf_counter()
        settled, _ = asyncio.run(run_ladder(duplicate, args.matches, args.seed))
        label = "duplicate" if duplicate else "plain"
        shown = settled if settled is not None else f"not within {args.matches}"
        print(f"  {label:<9}: true order reached and kept after {shown} matches ({time.perf_counter() - start:.0f} s)")
        out[f"matches_to_true_order_{label}"] = settled
    if args.json:
        print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
