"""House strategies that search think in worker processes (heartsd/thinking.py)."""

from __future__ import annotations

import asyncio
import os
import random
import subprocess
import sys
import time

import pytest
from hearts_engine import Match, Phase, preset
from heartsbot.strategies import make_strategy
from heartsbot.strategies import monte_carlo

from heartsd import thinking
from heartsd.runner import house_decision
from heartsd.thinking import HouseThinkers, _think, choose

from .harness import run


def playing_view(forced: bool):  # type: ignore[no-untyped-def]
    """A seat's view in play: with one legal card (``forced``) or several."""
    match = Match(preset("standard"), seed=11)
    house = make_strategy("heuristic", 1)
    while True:
        seat = match.deal.to_act()[0]
        view = match.view(seat)
        if view.phase is Phase.PLAYING and (len(view.legal) == 1) == forced:
            return view
        match.apply(seat, house_decision(house, view))


def test_a_worker_chooses_as_the_strategy_would_in_process_from_a_seed_drawn_from_the_seat():
    """The worker builds the strategy from its name and a seed drawn from the seat's own
    strategy: a seat's choices stay a function of its seed, the same in both places."""
    view = playing_view(forced=False)
    seat_strategy = make_strategy("random", 5)  # its choices follow its generator
    seed = random.Random(5).getrandbits(63)  # what think() draws from the seat's generator

    async def scenario():  # type: ignore[no-untyped-def]
        thinkers = HouseThinkers(1)
        try:
            return await thinkers.think(seat_strategy, view), thinkers.worker_pids()
        finally:
            thinkers.close()

    choice, pids = run(scenario())
    assert choice == choose(make_strategy("random", seed), view)
    assert pids and os.getpid() not in pids


def test_a_forced_mc_play_leaves_its_wait_to_the_caller_and_time_spent_queued_counts(monkeypatch):
    """mc answers a forced play when its budget is up (its answer times must tell nothing),
    and in a worker that wait would hold the worker idle while other seats' searches
    queue: the worker returns at once with when to answer, and the caller waits. A search
    that waited for a free worker has that much less budget left."""

    def no_sleep(seconds: float) -> None:
        raise AssertionError(f"the worker slept {seconds} s")

    monkeypatch.setattr(monte_carlo.time, "sleep", no_sleep)
    forced = playing_view(forced=True)
    asked = time.perf_counter()
    choice, answer_at = _think("mc", 3, 0.5, asked, forced)
    returned = time.perf_counter()
    assert choice == forced.legal[0]
    # returned at once (no_sleep), with when to answer: its budget's end (BUDGET_SHARE of the
    # limit), counted from no later than it returned (no bound on the call's own time: on a
    # loaded machine it may outlast 0.5 s)
    share = monte_carlo.BUDGET_SHARE * 0.5
    assert asked + share < answer_at <= returned + share
    made = []

    def made_strategy(*args, **kwargs):  # type: ignore[no-untyped-def]
        made.append(make_strategy(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(thinking, "make_strategy", made_strategy)
    asked = time.perf_counter() - 10.0  # asked 10 s ago: nothing is left of a 0.5 s limit
    choice, answer_at = _think("mc", 3, 0.5, asked, playing_view(forced=False))
    assert choice in playing_view(forced=False).legal
    # its minimum budget, not a fresh 0.5 s (before, a wall-clock bound on answer_at, which a
    # loaded machine's slow start of the search passed by half a millisecond)
    assert [s.time_limit_s for s in made] == [0.0]


def test_the_caller_waits_out_a_forced_plays_budget():
    """Seen from the daemon, a forced mc play still takes its budget (as in process)."""
    forced = playing_view(forced=True)
    strategy = make_strategy("mc", 2)
    strategy.time_limit_s = 0.2

    async def scenario() -> float:
        thinkers = HouseThinkers(1)
        try:
            await thinkers.think(make_strategy("heuristic", 1), forced)  # the worker started
            started = time.perf_counter()
            await thinkers.think(strategy, forced)
            return time.perf_counter() - started
        finally:
            thinkers.close()

    assert run(scenario()) >= 0.2 * monte_carlo.BUDGET_SHARE - 0.005


@pytest.mark.parametrize("victim", [0, 1])
def test_a_killed_worker_costs_a_search_in_a_thread_and_leaves_nothing_behind(victim):
    """A worker that dies (the OOM killer) breaks the pool: the search that finds it broken
    is made in a thread instead, not failed (which would abort its match), and the next
    search starts new workers. The others of the broken pool are killed: one that died
    holding the task queue's lock left them waiting for ever, and the interpreter, which
    joins the pool's manager thread at exit, hung (the review; 2 of 4 runs with 2 workers).
    Run in a process of its own, which must exit, with either worker killed."""
    code = f"""
import asyncio, os, time
from hearts_engine import Match, preset
from heartsbot.strategies import make_strategy
from heartsd.thinking import HouseThinkers

async def main():
    view = Match(preset("standard"), seed=11).view(0)
    thinkers = HouseThinkers(2)
    thinkers.warm()
    while len(thinkers.worker_pids()) < 2:
        await asyncio.sleep(0.05)
    await thinkers.think(make_strategy("random", 1), view)
    first = thinkers.worker_pids()
    os.kill(first[{victim}], 9)
    await asyncio.sleep(0.3)
    recovered = await thinkers.think(make_strategy("random", 2), view)
    await thinkers.think(make_strategy("random", 3), view)
    later = thinkers.worker_pids()
    thinkers.close()
    print(" ".join(map(str, first)), "|", " ".join(map(str, later)), "|", len(recovered), flush=True)

asyncio.run(main())
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    first, later, passed = (part.split() for part in done.stdout.strip().splitlines()[-1].split("|"))
    assert passed == ["3"]  # the search that found the pool broken still chose a pass
    assert later and not set(later) & set(first)
    time.sleep(0.5)
    left = [p for p in map(int, first) if os.path.exists(f"/proc/{p}")
            and open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()[0] != "Z"]
    assert not left, f"workers {left} of the broken pool outlived it"


def test_workers_do_not_outlive_a_killed_daemon():
    """Killed (SIGKILL), the daemon cannot stop its workers, which would otherwise wait on
    their task queue for ever: each checks every second whether its parent is gone."""
    code = (
        "import os, sys\n"
        "from heartsd.thinking import HouseThinkers\n"
        "t = HouseThinkers(2)\n"
        "t.warm()\n"
        "import time\n"
        "while len(t.worker_pids()) < 2: time.sleep(0.05)\n"
        "time.sleep(1.0)\n"
        "print(' '.join(map(str, t.worker_pids())), flush=True)\n"
        "os.kill(os.getpid(), 9)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    pids = [int(p) for p in proc.stdout.split()]
    assert len(pids) == 2, proc.stderr
    alive = pids
    for _ in range(100):
        alive = [p for p in pids if os.path.exists(f"/proc/{p}") and "Z" not in open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()[0]]
        if not alive:
            break
        time.sleep(0.1)
    assert not alive, f"workers {alive} outlived their daemon"


@pytest.mark.parametrize("value", [-1, 65])
def test_house_think_processes_out_of_range_is_refused(value):
    from heartsd.config import ConfigError, Settings

    with pytest.raises(ConfigError, match="house_think_processes"):
        Settings.load(env={"HEARTSD_HOUSE_THINK_PROCESSES": str(value)}, flags={"port": 0})
