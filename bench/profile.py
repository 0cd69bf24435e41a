"""Where the time goes, counted in CPU instructions: a random deal, and a server decision.

Timings on a shared 2-core machine swing by 2x from one second to the next; instruction
counts do not. Each workload runs once under ``valgrind --tool=callgrind`` (which counts
every instruction the process executes, whatever else the machine is doing), and each
step of it is called through its own *marker*: a C function of the standard library that
calls a Python callable and is used nowhere else in the workload (``operator.call``,
``itertools.starmap``, ...). The marker's inclusive instruction count is then exactly that
step's cost, on the pure-Python engine and on the compiled one alike. Steps never nest (a
step called inside another is counted in the outer one), so they add up; what the measured
region spends outside every step is shown as "between steps". Only the measured region is
collected (``--toggle-collect``), after a warm-up outside it.

Two workloads:

``deal``      the loop ``bench/engine.py`` times: shuffle and deal, every seat passes three
              random cards, then 52 random legal plays through the checked public API.
              Steps: deal, pass, play (checked apply, which also works out the next seat's
              legal cards), legal query (``legal_plays``), and the benchmark's own random
              picks (``random.choice`` / ``sample``).
``decision``  heartsd's work per decision, in process (no sockets): a bot's answer is parsed
              and handed to the arena exactly as the gRPC reader does, which validates and
              applies it, publishes the events, builds and queues the next request; whole
              12-deal matches of four seats, including creating and storing each match.
              The gRPC read and write themselves are not in it (bench/server.py measures
              those against a bare ping-pong).

    python bench/profile.py                  # both workloads, a table each
    python bench/profile.py deal --top 15    # ... and the 15 costliest C functions inside
    python bench/profile.py --json           # one JSON object on the last line

A step that is a method of a compiled (mypyc) class cannot be wrapped in a marker: it is
counted by its C function instead (``CPyDef_runner___MatchRunner____request`` for the
runner's ``_request``), whose inclusive count callgrind reports by name; a compiled step
that is a region (the stored record, built when a match ends) toggles collection itself.

Counts are per deal / per decision, rounded to 100; they repeat exactly for the same code,
Python and libraries. Nothing here is a wall-clock time.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import functools
import gc
import itertools
import json
import operator
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for sub in ("engine", "clients/python", "server"):
    sys.path.insert(0, str(ROOT / sub))

# C functions that call a Python callable, each the marker of one step. None of them
# appears in the engine's, the daemon's or asyncio's code measured here. The first two call
# the step directly; the others through a small predicate, whose extra cost is measured and
# taken off (see _marker_overhead), so the most frequent steps get the first ones.
_ONE = (0,)
MARKERS: dict[str, Callable[[Callable[..., Any]], Callable[..., Any]]] = {
    "_operator_call": lambda f: lambda *a: operator.call(f, *a),
    "starmap_next": lambda f: lambda *a: next(itertools.starmap(f, (a,))),
    "takewhile_next": lambda f: lambda *a: _first(itertools.takewhile(lambda _: _Box.put(f(*a), True), _ONE)),
    "dropwhile_next": lambda f: lambda *a: _first(itertools.dropwhile(lambda _: _Box.put(f(*a), False), _ONE)),
    "filterfalse_next": lambda f: lambda *a: _first(itertools.filterfalse(lambda _: _Box.put(f(*a), False), _ONE)),
    "functools_reduce": lambda f: lambda *a: functools.reduce(lambda _x, _y: f(*a), (0, 0)),
    "groupby_next": lambda f: lambda *a: _first(itertools.groupby(_ONE, key=lambda _: _Box.put(f(*a), True))),
    "defdict_missing": lambda f: lambda *a: collections.defaultdict(lambda: f(*a))[0],
}
REGION_MARKER = "sys_call_tracing"  # a measured region with marked steps: sys.call_tracing(region, args)
PLAIN_MARKER = "accumulate_next"  # the same region without markers: its true total
# Called between the warm-up, the plain run and the marked run: callgrind writes each one's
# counts to a file of its own (--dump-before), so a compiled step is counted in one run.
PHASE_MARKER = "sys_getallocatedblocks"


class _Box:
    """Carries a step's return value out of the predicate-style markers."""

    value: Any = None

    @classmethod
    def put(cls, value: Any, verdict: bool) -> bool:
        cls.value = value
        return verdict


def _first(iterator: Any) -> Any:
    for _ in iterator:
        break
    return _Box.value


class Steps:
    """Marks steps (each through its own marker, never nested: a step called inside another
    is counted in the outer one) and regions (what is collected: sys.call_tracing, never
    nested either, so valgrind's collection toggles on at entry and off at exit)."""

    def __init__(self, measure: bool = True, marked: bool = True) -> None:
        self.measure = measure  # False: a warm-up, nothing wrapped or collected
        self.marked = marked  # False: regions only (through PLAIN_MARKER), for the true total
        self.names: dict[str, str] = {}  # step name -> marker function
        self.calls: dict[str, int] = {}
        self.native: dict[str, str] = {}  # step name -> C function, for methods of compiled classes
        self._in_step = False
        self._in_region = False

    def wrap(self, step: str, func: Callable[..., Any]) -> Callable[..., Any]:
        if not (self.measure and self.marked):
            return func
        if step not in self.names:
            self.names[step] = list(MARKERS)[len(self.names)]
            self.calls[step] = 0
        through = MARKERS[self.names[step]](func)

        def call(*args: Any) -> Any:
            if self._in_step or not self._in_region:  # counted in the outer step / not measured
                return func(*args)
            self._in_step = True
            self.calls[step] += 1
            try:
                return through(*args)
            finally:
                self._in_step = False

        return call

    def region(self, func: Callable[..., Any]) -> Callable[..., Any]:
        if not self.measure:
            return func
        if not self.marked:
            return lambda *args: list(itertools.accumulate((0, 0), lambda _a, _b: func(*args)))[1]

        def call(*args: Any) -> Any:
            if self._in_region:
                return func(*args)
            self._in_region = True
            try:
                return sys.call_tracing(func, args)
            finally:
                self._in_region = False

        return call


# -- the workloads (run inside valgrind) ------------------------------------------------------

def deal_workload(count: int, steps: Steps) -> int:
    """``count`` random deals as bench/engine.py plays them, each step marked."""
    from hearts_engine import Deal, PassDirection, preset

    rules = preset("standard")
    rng = random.Random(1)
    left = PassDirection.LEFT
    # The most frequent steps first: they get the markers that call them directly.
    play = steps.wrap("play (checked apply, next legal set)", Deal.play)
    legal = steps.wrap("legal query (legal_plays)", Deal.legal_plays)
    choice = steps.wrap("benchmark's random picks", rng.choice)
    sample = steps.wrap("benchmark's random picks", rng.sample)
    passable = steps.wrap("pass (passable, pass_cards)", Deal.passable)
    pass_cards = steps.wrap("pass (passable, pass_cards)", Deal.pass_cards)
    shuffled = steps.wrap("deal (shuffle, set up)", Deal.shuffled)

    def deals() -> None:
        for i in range(count):
            deal = shuffled(rules, 12345, i, None, 0, left)  # pass_direction=LEFT
            for seat in range(4):
                pass_cards(deal, seat, sample(passable(deal, seat), 3))
            while not deal.is_over:
                seat = deal.turn
                play(deal, seat, choice(legal(deal, seat)))

    steps.region(deals)()
    return count


def decision_workload(count: int, steps: Steps) -> int:
    """Whole 12-deal matches of one in-process bot in all four seats, until at least
    ``count`` decisions were made; returns the number made."""
    return asyncio.run(_decisions(count, steps))


def native_symbol(owner: type, name: str) -> str:
    """The C function mypyc compiles method ``name`` of class ``owner`` to."""
    return f"CPyDef_{owner.__module__.rsplit('.', 1)[-1]}___{owner.__name__}___{name}"


# The compiled step that is a region (the stored record, built when a match ends, outside
# any answer): callgrind collects inside it by itself (--toggle-collect).
NATIVE_REGION = "CPyDef_runner___MatchRunner____record_bytes"


def _patch(steps: Steps, undo: list[Callable[[], None]], owner: Any, name: str, step: str, region: bool = False) -> None:
    if not steps.measure or (not steps.marked and not region):
        return
    original = getattr(owner, name)
    if not isinstance(original, types.FunctionType):  # compiled: counted by its C function
        if steps.marked:
            steps.names.pop(step, None)
            steps.calls.pop(step, None)
            steps.native[step] = native_symbol(owner, name)
        assert not region or native_symbol(owner, name) == NATIVE_REGION, "a compiled region needs its --toggle-collect"
        return
    wrapped = steps.wrap(step, original)
    setattr(owner, name, steps.region(wrapped) if region else wrapped)
    undo.append(lambda: setattr(owner, name, original))


async def _decisions(count: int, steps: Steps) -> int:
    from heartsbot.proto import admin_pb2, bot_pb2, game_pb2
    from heartsbot.client import first_legal_answer

    from hearts_engine import Match
    from heartsd import logs, runner as runner_module
    from heartsd.arena import Arena, SeatRequest
    from heartsd.config import Settings
    from heartsd.runner import MatchRunner
    from heartsd.wire import PlayAnswer, read_play_request
    from heartsd.sessions import BotSession
    from heartsd.store import Store

    logs.configure("json", "error")
    runner_module.CHECKPOINT_EVERY_S = float("inf")  # checkpoints follow wall time: none here
    tmp = tempfile.mkdtemp(prefix="hearts-profile-")
    store = Store(os.path.join(tmp, "profile.db"))
    arena = Arena(Settings(db_path=os.path.join(tmp, "profile.db")), store)
    session = BotSession("b0", "", frozenset(), 1)
    arena.connect(session)
    undo: list[Callable[[], None]] = []
    _patch(steps, undo, MatchRunner, "_request", "request assembly (_request)")
    _patch(steps, undo, Match, "apply", "engine: validate + apply (Match.apply)")
    _patch(steps, undo, MatchRunner, "_send", "send: update framing, outbox (_send)")
    _patch(steps, undo, MatchRunner, "_publish", "publish: events, tricks, scores (_publish)")
    # The stored record is built once a match, when it ends (outside any answer).
    _patch(steps, undo, MatchRunner, "_record_bytes", "record: the stored match (_record_bytes)", region=True)
    parse = steps.wrap("parse the answer (read_play_request)", read_play_request)

    def serve(data: bytes) -> Any:  # what the stream reader (BotService._read) does with one message
        message = parse(data)
        if type(message) is PlayAnswer:
            return arena.answer_play(session, message)
        return arena.answer(session, message.answer)

    serve_marked = steps.region(serve)
    made = 0
    seed = 0
    clock = game_pb2.ClockSettings(decision_ms=3_600_000)  # no timeout, however slow valgrind is
    while made < count:
        runner = await arena.create_match("standard", 4, admin_pb2.RulesetOptions(), game_pb2.MatchFormat(fixed_deals=12),
                                          seed, [SeatRequest(bot="b0")] * 4, clock)
        seed += 1
        outbox = session.outbox
        while not runner.finished.is_set():
            if outbox.empty():
                await asyncio.sleep(0)
                continue
            raw = outbox.get_nowait()
            assert isinstance(raw, bytes)
            update = bot_pb2.PlayResponse.FromString(raw).update
            if not update.HasField("request"):
                continue
            reply = first_legal_answer(update.request)
            reply.match_id = update.match_id
            rejection = serve_marked(bot_pb2.PlayRequest(answer=reply).SerializeToString())
            assert rejection is None, rejection
            made += 1
        while not outbox.empty():
            outbox.get_nowait()
    for restore in undo:
        restore()
    await arena.shutdown(1.0)
    store.close()
    shutil.rmtree(tmp, ignore_errors=True)
    return made


# name: (workload, default count, unit, what "between steps" is)
WORKLOADS: dict[str, tuple[Callable[[int, Steps], int], int, str, str]] = {
    "deal": (deal_workload, 200, "deal", "the loop itself (is_over, turn)"),
    "decision": (decision_workload, 1300, "decision",  # two 12-deal matches (660 decisions each)
                 "the rest: answer routing, checks, clock, _advance, _request_decision"),
}


def inner(name: str, count: int, plain_only: bool) -> None:
    """Runs inside valgrind: a warm-up (not collected), then the measured runs."""
    work = WORKLOADS[name][0]
    work(max(1, count // 10), Steps(measure=False))  # collected only inside a region
    gc.collect()
    gc.disable()  # a collection lands wherever the allocation count says: keep it out
    sys.getallocatedblocks()  # PHASE_MARKER: the warm-up's counts end here
    plain = work(count, Steps(marked=False))  # the true total, no marker in the way
    if plain_only:
        return
    sys.getallocatedblocks()  # PHASE_MARKER: the plain run's counts end here
    steps = Steps()
    units = work(count, steps)
    assert units == plain, (units, plain)
    print("STEPS " + json.dumps({"units": units, "markers": steps.names, "calls": steps.calls, "native": steps.native}),
          flush=True)


# -- the parent: run, then read the counts ------------------------------------------------------

def _inclusive(out_file: Path) -> tuple[dict[str, int], list[tuple[int, str]]]:
    """Inclusive instructions per function, and the top exclusive ones, from callgrind."""
    def annotate(inclusive: bool) -> str:
        return subprocess.run(["callgrind_annotate", "--auto=no", "--threshold=100",
                               f"--inclusive={'yes' if inclusive else 'no'}", str(out_file)],
                              capture_output=True, text=True, check=True).stdout

    line_re = re.compile(r"^\s*([\d,]+) \(\s*[\d.]+%\)\s+(\S.*)$")

    def rows(text: str) -> list[tuple[int, str]]:
        found = []
        for line in text.splitlines():
            m = line_re.match(line)
            if m and "PROGRAM TOTALS" not in line:
                where = m.group(2).split(" [")[0]
                found.append((int(m.group(1).replace(",", "")), where.rsplit(":", 1)[-1].strip()))
        return found

    totals: dict[str, int] = {}
    for value, function in rows(annotate(True)):
        totals[function] = max(totals.get(function, 0), value)
    exclusive: dict[str, int] = {}
    for value, function in rows(annotate(False)):
        exclusive[function] = exclusive.get(function, 0) + value
    return totals, sorted(((v, f) for f, v in exclusive.items()), reverse=True)


def _marker_overheads(markers: set[str], tmp: Path) -> dict[str, float]:
    """Per call, what each marker adds beyond the direct one (operator.call): measured on
    a no-op and taken off each step's count."""
    out = tmp / "overhead.out"
    code = (f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); import profile as p\n"
            "for m in p.MARKERS:\n"
            "    wrap = p.MARKERS[m](lambda *a: None)\n"
            "    sys.call_tracing(lambda: [wrap(1, 2) for _ in range(1000)], ())\n")
    _callgrind([sys.executable, "-c", code], out)
    inclusive, _ = _inclusive(out)
    direct = inclusive.get("_operator_call", 0) / 1000
    return {m: max(0.0, inclusive.get(m, 0) / 1000 - direct) for m in markers}


def _callgrind(command: list[str], out: Path) -> str:
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    proc = subprocess.run(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--collect-atstart=no",
         f"--toggle-collect={REGION_MARKER}", f"--toggle-collect={PLAIN_MARKER}",
         f"--toggle-collect={NATIVE_REGION}", f"--dump-before={PHASE_MARKER}", *command],
        capture_output=True, text=True, env=env, cwd=ROOT)
    if proc.returncode != 0:
        raise RuntimeError(f"valgrind failed:\n{proc.stderr[-3000:]}")
    return proc.stdout


def profile(name: str, count: int, top: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        out = tmp / f"{name}.out"
        stdout = _callgrind([sys.executable, __file__, "--inner", name, "--count", str(count)], out)
        info = json.loads(next(line[6:] for line in stdout.splitlines() if line.startswith("STEPS ")))
        inclusive, _ = _inclusive(out)  # the last dump: the marked run
        plain, _ = _inclusive(out.with_name(out.name + ".2"))  # the plain run (.1: the warm-up)
        overheads = _marker_overheads(set(info["markers"].values()), tmp)
        if top:  # what the unmarked region spends, by C function
            _callgrind([sys.executable, __file__, "--inner", name, "--count", str(count), "--plain-only"], out)
            exclusive = _inclusive(out)[1]
    units = info["units"]
    steps = {}
    for step, marker in info["markers"].items():
        raw = inclusive.get(marker, 0)
        steps[step] = max(0.0, raw - overheads[marker] * info["calls"][step]) / units
    for step, symbol in info["native"].items():
        steps[step] = inclusive.get(symbol, 0) / units
    # The plain run's regions, and the compiled record if there is one (a region of its own).
    per_unit = (plain.get(PLAIN_MARKER, 0) + plain.get(NATIVE_REGION, 0)) / units
    steps[WORKLOADS[name][3]] = per_unit - sum(steps.values())
    result: dict[str, Any] = {
        "workload": name,
        "units": units,
        "instructions_per_unit": round(per_unit, -2),
        "steps": {k: round(v, -2) for k, v in steps.items()},
        "engine": _engine_kind(),
        "daemon_encoders": _daemon_kind(),
    }
    if top:
        result["top_functions"] = [(f, round(v / units, -1)) for v, f in exclusive[:top]]
    return result


def _engine_kind() -> str:
    import hearts_engine.deal as deal

    return "compiled" if not deal.__file__.endswith(".py") else "pure Python"


def _daemon_kind() -> str:
    """heartsd's encoders (setup.py): compiled, unless HEARTSD_PURE=1 or no compiler."""
    import heartsd

    return "compiled" if heartsd.COMPILED else "pure Python"


def print_table(result: dict[str, Any]) -> None:
    unit = WORKLOADS[result["workload"]][2]
    per = result["instructions_per_unit"]
    daemon = f", {result['daemon_encoders']} daemon encoders" if result["workload"] == "decision" else ""
    print(f"{result['workload']}: {per:,.0f} instructions per {unit} ({result['units']} {unit}s, "
          f"{result['engine']} engine{daemon})")
    width = max(len(k) for k in result["steps"])
    for step, value in sorted(result["steps"].items(), key=lambda kv: -kv[1]):
        print(f"  {step:<{width}}  {value:>11,.0f}  {100 * value / per:5.1f}%")
    if "top_functions" in result:
        print(f"  costliest functions inside (exclusive instructions per {unit}):")
        for function, value in result["top_functions"]:
            print(f"    {value:>11,.0f}  {function}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workload", nargs="*", choices=[[], *WORKLOADS], default=[],
                        help="deal, decision (default: both)")
    parser.add_argument("--count", type=int, default=0, help="deals / decisions to measure (default per workload)")
    parser.add_argument("--top", type=int, default=0, help="also list the N costliest functions inside the region")
    parser.add_argument("--json", action="store_true", help="print a JSON object on the last line")
    parser.add_argument("--inner", help=argparse.SUPPRESS)
    parser.add_argument("--plain-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inner:
        inner(args.inner, args.count, args.plain_only)
        return 0
    if shutil.which("valgrind") is None or shutil.which("callgrind_annotate") is None:
        print("bench/profile.py counts instructions with valgrind's callgrind: apt-get install valgrind",
              file=sys.stderr)
        return 2
    results = {}
    for name in args.workload or list(WORKLOADS):
        results[name] = profile(name, args.count or WORKLOADS[name][1], args.top)
        print_table(results[name])
    if args.json:
        print(json.dumps(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
