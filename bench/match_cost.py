"""What a match costs the daemon besides its decisions: creating it and storing it.

``bench/profile.py decision`` counts a decision's own work; a match's creation (checks,
the runner, its running row and shuffle-ledger rows in one transaction) and its end (the
record, its result in one transaction, the announcement) are paid once per match, and are
not in that count. Here they are measured in process, as CPU time of every thread (the
store's writes run in worker threads): rounds of 1-deal matches and of 4-deal matches, in
alternating order, each answered at once by one in-process bot in all four seats (the
answer is built as the benchmark's bots build it, so that part is in the per-decision
figure). Each round's two runs give two equations, CPU = matches x M + decisions x D;
M and D are the medians over the rounds, with their spread.

The numbers to read are same-run ratios (this machine's speed changes minute to minute):
``match_in_decisions`` (M / D: a match costs as much as that many decisions) and
``share_of_12_deal_match`` (M over a 12-deal match's whole CPU). ``store_us_per_match`` is
the store writes' part of M (thread CPU of ``Store.start`` and ``Store.finish``).

    python bench/match_cost.py            # table
    python bench/match_cost.py --json     # ... plus one JSON object on the last line
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for sub in ("engine", "clients/python", "server"):
    sys.path.insert(0, str(ROOT / sub))

SHORT, LONG = 1, 4  # deals per match of the two kinds of run


class StoreClock:
    """Thread CPU spent in the store's per-match writes (wrapped methods)."""

    def __init__(self, store_class: Any) -> None:
        self.seconds = 0.0
        self._undo: list[Callable[[], None]] = []
        for name in ("start", "finish"):
            real = getattr(store_class, name)

            def timed(*args: Any, _real: Any = real, **kwargs: Any) -> Any:
                began = time.thread_time()
                try:
                    return _real(*args, **kwargs)
                finally:
                    self.seconds += time.thread_time() - began

            setattr(store_class, name, timed)
            self._undo.append(lambda _name=name, _real=real: setattr(store_class, _name, _real))

    def close(self) -> None:
        for undo in self._undo:
            undo()


async def play(arena: Any, session: Any, deals: int, matches: int) -> tuple[float, int]:
    """``matches`` matches of ``deals`` deals one after another; (CPU seconds, decisions)."""
    from heartsbot.client import first_legal_answer
    from heartsbot.proto import admin_pb2, bot_pb2, game_pb2

    from heartsd.arena import SeatRequest
    from heartsd.wire import PlayAnswer, read_play_request

    made = 0
    began = time.process_time()
    for _ in range(matches):
        runner = await arena.create_match("standard", 4, admin_pb2.RulesetOptions(),
                                          game_pb2.MatchFormat(fixed_deals=deals), None, [SeatRequest(bot="b0")] * 4,
                                          game_pb2.ClockSettings(decision_ms=3_600_000))
        outbox = session.outbox
        ended = 0
        while ended < 4:  # one match_ended per seat; waiting sleeps, as a daemon's loop does
            raw = await outbox.get()
            assert isinstance(raw, bytes)
            update = bot_pb2.PlayResponse.FromString(raw).update
            if not update.HasField("request"):
                ended += any(event.HasField("match_ended") for event in update.events)
                continue
            reply = first_legal_answer(update.request)
            reply.match_id = update.match_id
            message = read_play_request(bot_pb2.PlayRequest(answer=reply).SerializeToString())
            if type(message) is PlayAnswer:
                arena.answer_play(session, message)
            else:
                arena.answer(session, message.answer)
            made += 1
        await runner.finished.wait()
    return time.process_time() - began, made


async def measure(rounds: int, matches: int) -> dict[str, Any]:
    from heartsd import logs, runner as runner_module
    from heartsd.arena import Arena
    from heartsd.config import Settings
    from heartsd.sessions import BotSession
    from heartsd.store import Store

    logs.configure("json", "error")
    runner_module.CHECKPOINT_EVERY_S = float("inf")  # checkpoints follow wall time: none here
    tmp = tempfile.mkdtemp(prefix="hearts-match-cost-")
    path = os.path.join(tmp, "bench.db")
    store = Store(path)
    arena = Arena(Settings(db_path=path), store)
    session = BotSession("b0", "", frozenset(), 1)
    arena.connect(session)
    clock = StoreClock(Store)
    try:
        await play(arena, session, SHORT, max(2, matches // 4))  # warm-up
        per_match, per_decision, store_share = [], [], []
        for r in range(rounds):
            runs = {}
            for deals in ((SHORT, LONG) if r % 2 == 0 else (LONG, SHORT)):
                count = matches if deals == SHORT else max(1, matches * SHORT // LONG)
                clock.seconds = 0.0
                cpu, made = await play(arena, session, deals, count)
                runs[deals] = (cpu, made, count, clock.seconds)
            (c1, d1, n1, s1), (c4, d4, n4, s4) = runs[SHORT], runs[LONG]
            # Two equations: c = n x M + d x D.
            det = n1 * d4 - n4 * d1
            m = (c1 * d4 - c4 * d1) / det
            d = (n1 * c4 - n4 * c1) / det
            per_match.append(m * 1e6)
            per_decision.append(d * 1e6)
            store_share.append((s1 + s4) / (n1 + n4) * 1e6)
    finally:
        clock.close()
        await arena.shutdown(1.0)
        store.close()
        shutil.rmtree(tmp, ignore_errors=True)
    m, d = statistics.median(per_match), statistics.median(per_decision)
    decisions_12 = 12 * (runs[LONG][1] / runs[LONG][2]) / LONG  # decisions in a 12-deal match
    return {
        "match_us": round(m), "decision_us": round(d, 1),
        "match_us_rounds": [round(x) for x in per_match], "decision_us_rounds": [round(x, 1) for x in per_decision],
        "match_in_decisions": round(m / d, 1),
        "share_of_12_deal_match": round(m / (m + decisions_12 * d), 3),
        "store_us_per_match": round(statistics.median(store_share)),
        "decisions_per_12_deal_match": round(decisions_12),
        "rounds": rounds,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--matches", type=int, default=40, help="1-deal matches per round (a quarter as many 4-deal)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.rounds < 1 or args.matches < 4:
        parser.error("--rounds at least 1, --matches at least 4")
    r = asyncio.run(measure(args.rounds, args.matches))
    rows = [
        ("CPU per match, besides its decisions (us)", f"{r['match_us']:,}"),
        ("  per round", " ".join(f"{x:,}" for x in r["match_us_rounds"])),
        ("CPU per decision (us)", f"{r['decision_us']}"),
        ("  per round", " ".join(str(x) for x in r["decision_us_rounds"])),
        ("a match costs as much as N decisions", f"{r['match_in_decisions']}"),
        (f"share of a 12-deal match ({r['decisions_per_12_deal_match']} decisions)", f"{r['share_of_12_deal_match']:.1%}"),
        ("of a match: the store's writes (us)", f"{r['store_us_per_match']:,}"),
    ]
    print(f"Match cost (in process, every thread's CPU; {r['rounds']} rounds)")
    for label, value in rows:
        print(f"  {label:<58} {value:>20}")
    if args.json:
        print(json.dumps(r))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
