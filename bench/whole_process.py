"""Instructions per operation of the whole server process, heartsd against the ping-pong
floor, by shared object: where the distance between them is, counted rather than timed.

``bench/profile.py decision`` counts heartsd's own work per decision in process; this
counts everything the server process runs in a throughput window (every thread: gRPC's C
core, asyncio, protobuf, the store), under ``valgrind --tool=callgrind``, with the same
64-match load (and the same 64-stream ping-pong) as ``bench/server.py``'s throughput
windows. Instrumentation is switched on only for the window (``callgrind_control``), so
start-up is not counted.

Counts are stable on a busy machine; what valgrind changes is time: the server runs ~50
times slower, so work that happens per stretch of time rather than per decision is
overcounted (a match's checkpoint, at most every 5 s, comes at every deal), and the bots
batch differently. Read per-object differences, not the total, as the finding.

    python bench/whole_process.py [--seconds 20] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import server as bench  # bench/server.py, beside this file

LINE = re.compile(r"\s*([\d,]+)\s+\([^)]*\)\s+(\S.*?)\s+\[(.*)\]\s*$")
TOTAL = re.compile(r"\s*([\d,]+)\s+\(.*?\)\s+PROGRAM TOTALS")


class CallgrindWindow:
    """A bench meter (``start``/``stop(operations)``) that counts the window's instructions
    in the server: instrumentation on at the start, a dump at the end."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.operations = 0

    def start(self) -> None:
        subprocess.run(["callgrind_control", "-i", "on", str(self.pid)], check=True, capture_output=True)

    def stop(self, operations: int) -> None:
        subprocess.run(["callgrind_control", "-d", str(self.pid)], check=True, capture_output=True)
        self.operations = operations


def by_object(dump: str) -> tuple[int, collections.Counter[str]]:
    """(total instructions, instructions per shared object) of a callgrind dump."""
    out = subprocess.run(["callgrind_annotate", "--threshold=100", "--inclusive=no", dump],
                         capture_output=True, text=True, check=True).stdout
    total, objects = 0, collections.Counter[str]()
    for line in out.splitlines():
        if m := TOTAL.match(line):
            total = int(m.group(1).replace(",", ""))
        elif m := LINE.match(line):
            objects[m.group(3).rsplit("/", 1)[-1]] += int(m.group(1).replace(",", ""))
    return total, objects


def measure(kind: str, seconds: float, work: Path) -> tuple[int, collections.Counter[str], int]:
    out = work / f"{kind}.callgrind"
    prefix = ("valgrind", "--tool=callgrind", "--instr-atstart=no", "--dump-instr=no", f"--callgrind-out-file={out}")
    if kind == "heartsd":
        proc, port, _ = bench.start_heartsd(work / "heartsd", 64, loop="asyncio", prefix=prefix)
    else:
        proc, port = bench.start_floor(0.0, "asyncio", prefix=prefix)
    meter = CallgrindWindow(proc.pid)
    try:
        if kind == "heartsd":
            asyncio.run(bench.heartsd_throughput(port, seconds, matches=64, meter=meter))  # type: ignore[arg-type]
        else:
            asyncio.run(bench.floor_throughput(port, 900, 64, seconds, meter=meter))  # type: ignore[arg-type]
    finally:
        bench.stop(proc)
    dumps = sorted(work.glob(f"{kind}.callgrind.*"))  # the window's dump (the final one is the exit's)
    total, objects = by_object(str(dumps[0]))
    return total, objects, meter.operations


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="the window, in wall time under valgrind")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="whole-process-") as tmp:
        results = {kind: measure(kind, args.seconds, Path(tmp)) for kind in ("heartsd", "floor")}
    per_op = {kind: {o: n / ops for o, n in objects.items()} for kind, (_, objects, ops) in results.items()}
    report = {
        "operations": {kind: ops for kind, (_, _, ops) in results.items()},
        "instructions_per_operation": {kind: round(total / ops) for kind, (total, _, ops) in results.items()},
        "by_object": {o: {"heartsd": round(per_op["heartsd"].get(o, 0)), "floor": round(per_op["floor"].get(o, 0))}
                      for o in sorted(per_op["heartsd"].keys() | per_op["floor"].keys(),
                                      key=lambda o: -per_op["heartsd"].get(o, 0))
                      if max(per_op["heartsd"].get(o, 0), per_op["floor"].get(o, 0)) >= 100},
    }
    if args.json:
        print(json.dumps(report))
        return 0
    ops, ipo = report["operations"], report["instructions_per_operation"]
    print(f"heartsd: {ipo['heartsd']:,} instructions per decision ({ops['heartsd']:,} decisions); "
          f"floor: {ipo['floor']:,} per round trip ({ops['floor']:,})")
    print(f"{'object':48s} {'heartsd':>10s} {'floor':>10s} {'difference':>11s}")
    for name, row in report["by_object"].items():
        print(f"{name[:48]:48s} {row['heartsd']:10,} {row['floor']:10,} {row['heartsd'] - row['floor']:11,}")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
