"""Chaos soak: run this before opening a ladder to the public.

One heartsd (its own process, as operators run it, SQLite store) plays a fixed number of
matches between honest bots (the reference client) and chaos bots that drop and
reconnect, send garbage, answer at the deadline, stay silent, answer twice and flood
resumes. Once a quarter of the matches are over, every attack of issue 13 comes at once
while the matches go on:

- 1,000 ``WatchMatch`` calls on finished matches;
- a ``hello`` asking for 1,000,000 concurrent matches, then 3,000 rejected answers;
- 2,000 ``resume``s with unique 32 KB match ids;
- a stream that never reads, after 2,000 answers with 60 KB of ids each;
- ``WatchMatch`` streams beyond the spectators' budget, on a live match;
- another process holding the SQLite write lock for 4 s while admin calls with junk
  tokens arrive;
- malformed protobuf bytes on bot streams (50 of one bot in a row: the first 10 are read, the
  rest refused for opening streams too fast);
- a ladder bot whose token is revoked while it is connected;
- and what already held: 300 idle connections, 200 streams that never say hello.

At the end it prints matches finished / aborted / lost, the stored records re-verified by
the rules engine, honest bots' TIMEOUTs, the daemon's resident memory at start and end
and its slope over the last half, its largest event-loop lag (``GetServerStatus``),
what each attack got back, and tracebacks in the daemon's log.

    python bench/soak.py                 # a few minutes; a table
    python bench/soak.py --json          # ... and one JSON object on the last line
    python bench/soak.py --matches 400   # longer

Healthy: matches_lost 0, honest_timeouts 0, rss_growth_mib well under 64,
max_loop_lag_ms under 250, every attack answered with the status it should get.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

ROOT = Path(__file__).resolve().parents[1]
for sub in ("server", "engine", "clients/python"):
    sys.path.insert(0, str(ROOT / sub))

from grpc_health.v1 import health_pb2, health_pb2_grpc  # noqa: E402
from heartsbot.client import BotClient, first_legal_answer  # noqa: E402
from heartsbot.proto import (  # noqa: E402
    admin_pb2,
    admin_pb2_grpc,
    bot_pb2,
    bot_pb2_grpc,
    game_pb2,
    spectator_pb2,
    spectator_pb2_grpc,
)
from heartsbot.strategies import make_strategy  # noqa: E402
from heartsd.services import BOT_STREAM_BURST, GREETINGS_PER_BOT  # noqa: E402

ADMIN = "soak-admin-token"
HONEST = [f"honest{i}" for i in range(8)]
CHAOS = [f"chaos{i}" for i in range(8)]
FLOODERS = ["flood-hello", "flood-resume", "flood-unread", "flood-garbage", "flood-silent"]
TOKENS = {name: f"tok-{name}-{i:04d}-soak" for i, name in enumerate(HONEST + CHAOS + FLOODERS)}
PLAY = "/hearts.v1.BotService/Play"
LOCK_HOLDER = """
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=60)
db.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
db.execute("COMMIT")
"""


def auth(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def slope_per_min(samples: list[tuple[float, float]]) -> float:
    """Least-squares slope of (seconds, MiB) samples, in MiB per minute."""
    if len(samples) < 3:
        return 0.0
    n = len(samples)
    mt = sum(t for t, _ in samples) / n
    mr = sum(r for _, r in samples) / n
    var = sum((t - mt) ** 2 for t, _ in samples)
    return 60 * sum((t - mt) * (r - mr) for t, r in samples) / var if var else 0.0


@dataclass
class Soak:
    target: str
    pid: int
    db: str
    decision_ms: int
    rng: random.Random
    created: list[str] = field(default_factory=list)
    finished: list[str] = field(default_factory=list)  # seen over (any status)
    honest_seats: dict[str, list[int]] = field(default_factory=dict)
    floods: dict[str, Any] = field(default_factory=dict)
    rss: list[tuple[float, float]] = field(default_factory=list)
    chaos_actions: Counter[str] = field(default_factory=Counter)
    stopping: bool = False

    def channel(self) -> grpc.aio.Channel:
        return grpc.aio.insecure_channel(self.target)


# -- chaos bots ----------------------------------------------------------------------------------

async def chaos_bot(soak: Soak, name: str, seed: int) -> None:
    """Plays like a careless or hostile client: reconnects whenever its stream ends."""
    rng = random.Random(seed)
    while not soak.stopping:
        async with soak.channel() as channel:
            call = channel.stream_stream(PLAY, request_serializer=None, response_deserializer=None)(
                metadata=auth(TOKENS[name]))
            try:
                await call.write(bot_pb2.PlayRequest(hello=bot_pb2.Hello(
                    name=name, version="chaos", max_concurrent_matches=2)).SerializeToString())
                async for raw in call:
                    if soak.stopping:
                        break
                    message = bot_pb2.PlayResponse.FromString(raw)
                    if message.HasField("update") and message.update.HasField("request"):
                        if await chaos_answer(soak, rng, call, message.update):
                            break  # this stream is done for (dropped, garbage, flood)
            except (grpc.aio.AioRpcError, asyncio.InvalidStateError):
                pass
            finally:
                call.cancel()
        await asyncio.sleep(rng.uniform(0.05, 1.0))


async def chaos_answer(soak: Soak, rng: random.Random, call: Any, update: bot_pb2.MatchUpdate) -> bool:
    """Answer one request some way; True when the stream should end."""
    request = update.request
    answer = first_legal_answer(request)
    answer.match_id = update.match_id
    play = bot_pb2.PlayRequest(answer=answer).SerializeToString()
    roll = rng.random()
    kind = ("normal" if roll < 0.55 else "late" if roll < 0.62 else "silent" if roll < 0.66
            else "double" if roll < 0.74 else "wrong-id" if roll < 0.82 else "drop" if roll < 0.88
            else "garbage" if roll < 0.91 else "resume-flood" if roll < 0.94 else "normal")
    soak.chaos_actions[kind] += 1
    if kind == "normal":
        await call.write(play)
    elif kind == "late":  # at the very end of its time: on time or just late, the server decides
        left = request.clock.decision_ms + request.clock.bank_ms
        asyncio.get_running_loop().call_later(max(0, left - 20) / 1000, lambda: asyncio.ensure_future(
            _write_quietly(call, play)))
    elif kind == "silent":
        pass
    elif kind == "double":
        await call.write(play)
        await call.write(play)
    elif kind == "wrong-id":
        wrong = bot_pb2.Answer(match_id=update.match_id, request_id="r-guess-" + str(rng.randrange(10**6)),
                               play=answer.play if answer.HasField("play") else None)
        await call.write(bot_pb2.PlayRequest(answer=wrong).SerializeToString())
        await call.write(play)
    elif kind == "drop":
        return True
    elif kind == "garbage":
        await call.write(b"\xff\xfe\xfd not a PlayRequest")
        return True
    elif kind == "resume-flood":
        resume = bot_pb2.PlayRequest(resume=bot_pb2.Resume(match_id=update.match_id, seat=update.seat))
        for _ in range(6):
            await call.write(resume.SerializeToString())
        return True
    return False


async def _write_quietly(call: Any, data: bytes) -> None:
    with contextlib.suppress(Exception):
        await call.write(data)


# -- the matches -------------------------------------------------------------------------------

async def run_matches(soak: Soak, total: int, concurrency: int, deals: int, quarter: asyncio.Event) -> None:
    async with soak.channel() as channel:
        admin = admin_pb2_grpc.AdminServiceStub(channel)
        spectator = spectator_pb2_grpc.SpectatorServiceStub(channel)
        slots = asyncio.Semaphore(concurrency)

        async def one(index: int) -> None:
            async with slots:
                match_id = await create(admin, index)
                if match_id is None:
                    return
                await wait_over(spectator, match_id)
                soak.finished.append(match_id)
                if len(soak.finished) >= total // 4:
                    quarter.set()

        async def create(admin: Any, index: int) -> str | None:
            for attempt in range(200):
                honest = soak.rng.sample(HONEST, soak.rng.choice((2, 3, 4)))
                seats = honest + soak.rng.sample(CHAOS, 4 - len(honest))
                soak.rng.shuffle(seats)
                request = admin_pb2.CreateMatchRequest(ruleset="standard")
                request.format.fixed_deals = deals
                for name in seats:
                    request.seats.add(bot=name)
                try:
                    match_id = (await admin.CreateMatch(request, metadata=auth(ADMIN))).match_id
                except grpc.aio.AioRpcError as exc:  # a chaos bot reconnecting, a bot at its limit, a flood
                    if exc.code() not in (grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.RESOURCE_EXHAUSTED,
                                          grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
                        raise
                    await asyncio.sleep(0.1)
                    continue
                soak.created.append(match_id)
                soak.honest_seats[match_id] = [i for i, n in enumerate(seats) if n in HONEST]
                return match_id
            return None

        await asyncio.gather(*(one(i) for i in range(total)))


async def wait_over(spectator: Any, match_id: str) -> None:
    while True:
        try:
            await spectator.GetMatchRecord(spectator_pb2.GetMatchRecordRequest(match_id=match_id))
            return
        except grpc.aio.AioRpcError as exc:
            if exc.code() == grpc.StatusCode.NOT_FOUND:
                return  # counted as lost at the end
        await asyncio.sleep(0.5)


# -- the floods (issue 13's table, all at once) ---------------------------------------------------

async def raw_stream(soak: Soak, name: str, max_matches: int) -> tuple[grpc.aio.Channel, Any]:
    channel = soak.channel()
    call = channel.stream_stream(PLAY, request_serializer=None, response_deserializer=None)(metadata=auth(TOKENS[name]))
    await call.write(bot_pb2.PlayRequest(hello=bot_pb2.Hello(
        name=name, version="flood", max_concurrent_matches=max_matches)).SerializeToString())
    return channel, call


async def final_status(call: Any, read: bool = True, timeout: float = 60) -> str:
    try:
        async with asyncio.timeout(timeout):
            while read and await call.read() is not grpc.aio.EOF:
                pass
            return (await call.code()).name
    except grpc.aio.AioRpcError as exc:
        return exc.code().name
    except TimeoutError:
        return "STILL_OPEN"


async def write_all(call: Any, messages: Any) -> int:
    """Write until done or the call is over (writing on after the server ended a call makes
    grpc's client report INTERNAL instead of the server's status)."""
    sent = 0
    try:
        for message in messages:
            if call.done():
                break
            await call.write(message)
            sent += 1
    except (grpc.aio.AioRpcError, asyncio.InvalidStateError):
        pass
    return sent


async def flood_hello(soak: Soak) -> dict[str, Any]:
    channel, call = await raw_stream(soak, "flood-hello", 1_000_000)
    junk = bot_pb2.PlayRequest(answer=bot_pb2.Answer(match_id="m-nowhere", request_id="r-1")).SerializeToString()
    granted = -1
    rejected = 0
    writer = asyncio.ensure_future(write_all(call, (junk for _ in range(3000))))
    status = "?"
    try:
        async for raw in call:
            message = bot_pb2.PlayResponse.FromString(raw)
            if message.HasField("welcome"):
                granted = message.welcome.max_concurrent_matches
            rejected += message.HasField("rejected")
        status = (await call.code()).name
    except grpc.aio.AioRpcError as exc:
        status = exc.code().name
    await writer
    await channel.close()
    return {"status": status, "granted": granted, "rejected_before_cut": rejected}


async def flood_resumes(soak: Soak) -> dict[str, Any]:
    channel, call = await raw_stream(soak, "flood-resume", 1_000_000)
    resumes = (bot_pb2.PlayRequest(resume=bot_pb2.Resume(match_id=f"m-{i}-" + "x" * 32_000)).SerializeToString()
               for i in range(2000))
    writer = asyncio.ensure_future(write_all(call, resumes))
    status = await final_status(call)
    sent = await writer
    await channel.close()
    return {"status": status, "sent": sent}


async def flood_unread(soak: Soak) -> dict[str, Any]:
    channel, call = await raw_stream(soak, "flood-unread", 1_000_000)
    answers = (bot_pb2.PlayRequest(answer=bot_pb2.Answer(match_id="m-" + "y" * 30_000, request_id="r-" + "z" * 30_000))
               .SerializeToString() for _ in range(2000))
    sent = await write_all(call, answers)  # and never reads
    await asyncio.sleep(2)
    status = await final_status(call)  # now read what waits, to learn how it ended
    await channel.close()
    return {"status": status, "sent": sent}


async def flood_finished_watches(soak: Soak, calls: int = 1000, concurrency: int = 8) -> dict[str, Any]:
    done, refused, events = 0, 0, 0
    async with soak.channel() as channel:
        stub = spectator_pb2_grpc.SpectatorServiceStub(channel)

        async def worker() -> None:
            nonlocal done, refused, events
            while done < calls:
                match_id = soak.rng.choice(soak.finished)
                try:
                    async for response in stub.WatchMatch(spectator_pb2.WatchMatchRequest(match_id=match_id)):
                        events += len(response.events)
                    done += 1
                except grpc.aio.AioRpcError as exc:
                    if exc.code() != grpc.StatusCode.RESOURCE_EXHAUSTED:
                        raise
                    refused += 1
                    await asyncio.sleep(0.05)

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return {"completed": done, "refused_over_budget": refused, "events": events}


async def flood_spectators(soak: Soak, streams: int = 64, hold_s: float = 5.0) -> dict[str, Any]:
    """Watchers of the live matches beyond the spectators' per-address budget, held a while."""
    async with soak.channel() as channel:
        stub = spectator_pb2_grpc.SpectatorServiceStub(channel)
        codes: Counter[str] = Counter()
        live = [m for m in soak.created if m not in soak.finished] or soak.created[-1:]

        async def watch(match_id: str) -> None:
            try:
                async for _ in stub.WatchMatch(spectator_pb2.WatchMatchRequest(match_id=match_id)):
                    pass
                codes["OK"] += 1
            except grpc.aio.AioRpcError as exc:
                codes[exc.code().name] += 1

        tasks = [asyncio.ensure_future(watch(live[i % len(live)])) for i in range(streams)]
        await asyncio.sleep(hold_s)
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    return dict(codes)


async def flood_locked_store(soak: Soak, hold_s: float = 4.0) -> dict[str, Any]:
    holder = await asyncio.create_subprocess_exec(sys.executable, "-c", LOCK_HOLDER, soak.db, str(hold_s),
                                                  stdout=subprocess.PIPE)
    assert holder.stdout is not None
    await holder.stdout.readline()
    codes: Counter[str] = Counter()
    health_ms: list[float] = []
    until = time.monotonic() + hold_s
    async with soak.channel() as channel:
        admin = admin_pb2_grpc.AdminServiceStub(channel)
        health = health_pb2_grpc.HealthStub(channel)

        async def junk() -> None:
            i = 0
            while time.monotonic() < until:
                i += 1
                try:
                    await admin.ListBots(admin_pb2.ListBotsRequest(), metadata=auth(f"junk-token-{i}"))
                    codes["OK"] += 1
                except grpc.aio.AioRpcError as exc:
                    codes[exc.code().name] += 1
                await asyncio.sleep(0.01)

        async def checks() -> None:
            while time.monotonic() < until:
                began = time.monotonic()
                await health.Check(health_pb2.HealthCheckRequest())
                health_ms.append((time.monotonic() - began) * 1000)
                await asyncio.sleep(0.05)

        await asyncio.gather(junk(), checks())
    await holder.wait()
    return {"junk_admin_calls": dict(codes), "health_max_ms": round(max(health_ms), 1),
            "health_median_ms": round(sorted(health_ms)[len(health_ms) // 2], 1)}


async def flood_garbage(soak: Soak, streams: int = 50) -> dict[str, Any]:
    codes: Counter[str] = Counter()
    for _ in range(streams):
        async with soak.channel() as channel:
            call = channel.stream_stream(PLAY, request_serializer=None, response_deserializer=None)(
                metadata=auth(TOKENS["flood-garbage"]))
            await write_all(call, [b"\xff\xff\xff garbage"])
            codes[await final_status(call)] += 1
    return dict(codes)


async def flood_revoked(soak: Soak) -> dict[str, Any]:
    heartsd = [sys.executable, "-m", "heartsd.cli", "ladder"]
    added = await asyncio.to_thread(subprocess.run, [*heartsd, "add-bot", "soak-ladder", "--owner", "soak", "--db",
                                                     soak.db], capture_output=True, text=True, cwd=ROOT)
    token = added.stdout.strip().splitlines()[-1]
    async with soak.channel() as channel:
        call = bot_pb2_grpc.BotServiceStub(channel).Play(metadata=auth(token))
        await call.write(bot_pb2.PlayRequest(hello=bot_pb2.Hello(name="soak-ladder", version="soak")))
        welcome = await call.read()
        await asyncio.to_thread(subprocess.run, [*heartsd, "revoke", "soak-ladder", "--db", soak.db],
                                capture_output=True, cwd=ROOT)
        began = time.monotonic()
        status = await final_status(call, timeout=15)
        details = await call.details() if status != "STILL_OPEN" else ""
    return {"welcomed": welcome.HasField("welcome"), "status": status, "details": details,
            "ended_after_s": round(time.monotonic() - began, 2)}


async def flood_idle(soak: Soak, connections: int = 300, silent_streams: int = 200) -> dict[str, Any]:
    """Idle connections, and one bot's streams that never say hello: at most
    GREETINGS_PER_BOT of them wait (cut at 10 s), the rest are refused at once."""
    channels = [soak.channel() for _ in range(connections)]
    await asyncio.gather(*(c.channel_ready() for c in channels), return_exceptions=True)
    calls = []
    for i in range(silent_streams):
        calls.append(bot_pb2_grpc.BotServiceStub(channels[i]).Play(metadata=auth(TOKENS["flood-silent"])))
    codes = Counter(await asyncio.gather(*(final_status(c, timeout=20) for c in calls)))
    for c in channels:
        await c.close()
    return dict(codes)


# What each attack must get back (issue 13; proto/ documents each status). The floods are
# ended RESOURCE_EXHAUSTED by the server; a client still writing as its stream ends is
# told INTERNAL by grpc's Python client instead (see services.BotService._end): both mean
# it was cut off, and the rejections it got before show where.
CUT = ("RESOURCE_EXHAUSTED", "INTERNAL")
EXPECTED: dict[str, Any] = {
    "finished_watches": lambda r: r["completed"] >= 1000,
    "huge_hello": lambda r: r["status"] in CUT and r["granted"] == 64 and r["rejected_before_cut"] <= 64 + 4 * 64 + 1,
    "resume_flood": lambda r: r["status"] in CUT,
    "never_reads": lambda r: r["status"] in CUT,
    "spectator_flood": lambda r: r.get("RESOURCE_EXHAUSTED", 0) > 0 and set(r) <= {"OK", "RESOURCE_EXHAUSTED"},
    # junk-token admin calls, 100 a second from one address: refused, and counted as public calls
    # (never the operator's admin slots: budgets.BudgetInterceptor), so beside this soak's own
    # spectator flood from the same address they may all be paced RESOURCE_EXHAUSTED
    "locked_store": lambda r: sum(r["junk_admin_calls"].values()) > 0 and set(r["junk_admin_calls"]) <= {
        "UNAUTHENTICATED", "RESOURCE_EXHAUSTED"},
    # one bot's streams in a row: at least the first BOT_STREAM_BURST read and refused, the rest
    # refused before they are read for opening too fast (bot_streams_per_minute)
    "malformed_bytes": lambda r: r.get("INVALID_ARGUMENT", 0) >= BOT_STREAM_BURST and set(r) <= {
        "INVALID_ARGUMENT", "RESOURCE_EXHAUSTED"},
    "revoked_token": lambda r: r["welcomed"] and r["status"] == "UNAUTHENTICATED" and "revoked" in r["details"],
    "idle_and_silent": lambda r: set(r) <= {"INVALID_ARGUMENT", "RESOURCE_EXHAUSTED"}
    and 0 < r.get("INVALID_ARGUMENT", 0) <= GREETINGS_PER_BOT,
}


def as_expected(name: str, outcome: Any) -> bool:
    try:
        return not isinstance(outcome, str) and bool(EXPECTED[name](outcome))
    except (KeyError, TypeError):
        return False


async def floods(soak: Soak) -> None:
    names = ["finished_watches", "huge_hello", "resume_flood", "never_reads", "spectator_flood",
             "locked_store", "malformed_bytes", "revoked_token", "idle_and_silent"]
    results = await asyncio.gather(
        flood_finished_watches(soak), flood_hello(soak), flood_resumes(soak), flood_unread(soak),
        flood_spectators(soak), flood_locked_store(soak), flood_garbage(soak), flood_revoked(soak),
        flood_idle(soak), return_exceptions=True)
    for name, result in zip(names, results):
        soak.floods[name] = result if not isinstance(result, BaseException) else f"error: {result!r}"


# -- the run -------------------------------------------------------------------------------------

async def sample_rss(soak: Soak, began: float) -> None:
    while not soak.stopping:
        soak.rss.append((time.monotonic() - began, rss_mib(soak.pid)))
        await asyncio.sleep(0.5)


async def soak_run(args: argparse.Namespace, target: str, pid: int, db: str) -> dict[str, Any]:
    soak = Soak(target, pid, db, args.decision_ms, random.Random(args.seed))
    honest = [BotClient(target, TOKENS[n], make_strategy("random", seed=i), n, max_matches=4)
              for i, n in enumerate(HONEST)]
    tasks = [asyncio.ensure_future(c.run()) for c in honest]
    tasks += [asyncio.ensure_future(chaos_bot(soak, n, args.seed * 100 + i)) for i, n in enumerate(CHAOS)]
    await asyncio.sleep(1.5)  # everyone connected
    began = time.monotonic()
    sampler = asyncio.ensure_future(sample_rss(soak, began))
    quarter = asyncio.Event()
    matches = asyncio.ensure_future(run_matches(soak, args.matches, args.concurrency, args.deals, quarter))
    await asyncio.wait({matches, asyncio.ensure_future(quarter.wait())}, return_when=asyncio.FIRST_COMPLETED)
    rss_start = rss_mib(pid)
    flood_began = time.monotonic()
    await floods(soak)
    flood_s = time.monotonic() - flood_began
    await matches
    await asyncio.sleep(1.0)
    rss_end = rss_mib(pid)
    async with soak.channel() as channel:
        status = await admin_pb2_grpc.AdminServiceStub(channel).GetServerStatus(
            admin_pb2.GetServerStatusRequest(), metadata=auth(ADMIN))
    soak.stopping = True
    for c in honest:
        c.stop()
    sampler.cancel()
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, sampler, return_exceptions=True)
    elapsed = time.monotonic() - began
    half = [s for s in soak.rss if s[0] >= elapsed / 2]
    return {
        "load": os.getloadavg(),
        "soak": soak, "rss_start": rss_start, "rss_end": rss_end, "slope": slope_per_min(half),
        "status": status, "elapsed_s": elapsed, "flood_s": flood_s,
    }


def tally(db: str, soak: Soak) -> dict[str, Any]:
    from heartsd.store import Store

    store = Store(db)
    try:
        statuses: Counter[str] = Counter()
        honest_timeouts = honest_decisions = 0
        lost = []
        for match_id in soak.created:
            stored = store.get(match_id)
            if stored is None or stored.status == "running":
                lost.append(match_id)
                continue
            statuses[stored.status] += 1
            if stored.record is not None:
                seats = set(soak.honest_seats.get(match_id, ()))
                for d in stored.record.decisions:
                    if d.seat in seats:
                        honest_decisions += 1
                        honest_timeouts += d.provenance == game_pb2.PROVENANCE_TIMEOUT
    finally:
        store.close()
    return {"statuses": statuses, "lost": lost, "honest_timeouts": honest_timeouts,
            "honest_decisions": honest_decisions}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--matches", type=int, default=80)
    parser.add_argument("--deals", type=int, default=4, help="deals per match")
    parser.add_argument("--concurrency", type=int, default=8, help="matches at once")
    parser.add_argument("--decision-ms", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "soak.db")
        log_path = Path(tmp) / "heartsd.log"
        command = [sys.executable, "-m", "heartsd.cli", "serve", "--port", "0", "--db", db, "--admin-token", ADMIN,
                   "--decision-ms", str(args.decision_ms), "--bank-ms", "5000", "--grace-ms", "2000",
                   "--log-level", "warning", *[a for n, t in TOKENS.items() for a in ("--bot", f"{n}:{t}")]]
        with open(log_path, "w") as log:
            proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=log, text=True, cwd=ROOT)
            try:
                assert proc.stdout is not None
                line = proc.stdout.readline()
                if "listening on" not in line:
                    raise RuntimeError("heartsd did not start: " + log_path.read_text()[-2000:])
                port = int(line.rsplit(":", 1)[1])
                out = asyncio.run(soak_run(args, f"127.0.0.1:{port}", proc.pid, db))
            finally:
                proc.terminate()
                try:
                    proc.wait(30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(5)
        daemon_log = log_path.read_text()
        verify = subprocess.run([sys.executable, "-m", "heartsd.cli", "replay", "verify", "--db", db],
                                capture_output=True, text=True, cwd=ROOT)
        verified = re.search(r"(\d+) verified, (\d+) failed", verify.stdout)
        counts = tally(db, out["soak"])
    soak: Soak = out["soak"]
    status = out["status"]
    result = {
        "matches": len(soak.created),
        "matches_finished": counts["statuses"].get("finished", 0),
        "matches_aborted": counts["statuses"].get("aborted", 0),
        "matches_cancelled": counts["statuses"].get("cancelled", 0),
        "matches_lost": len(counts["lost"]),
        "records_verified": int(verified.group(1)) if verified else 0,
        "records_failed": int(verified.group(2)) if verified else -1,
        "honest_decisions": counts["honest_decisions"],
        "honest_timeouts": counts["honest_timeouts"],
        "rss_start_mib": round(out["rss_start"], 1),
        "rss_end_mib": round(out["rss_end"], 1),
        "rss_growth_mib": round(out["rss_end"] - out["rss_start"], 1),
        "rss_slope_last_half_mib_per_min": round(out["slope"], 2),
        "max_loop_lag_ms": round(status.max_loop_lag_ms, 1),
        "max_loop_busy_ms": round(status.max_loop_busy_ms, 1),
        "load_average": [round(x, 1) for x in out["load"]],
        "loop_stalls": status.loop_stalls,
        "tracebacks_logged": daemon_log.count("Traceback"),
        "elapsed_s": round(out["elapsed_s"], 1),
        "flood_phase_s": round(out["flood_s"], 1),
        "attacks_unexpected": [n for n, o in soak.floods.items() if not as_expected(n, o)],
        "chaos_actions": dict(soak.chaos_actions),
        "floods": soak.floods,
        "budgets": {b.name: {"peak": b.peak, "refused": b.refused} for b in status.budgets},
    }
    print(f"heartsd chaos soak: {result['matches']} matches in {result['elapsed_s']:.0f} s "
          f"(flood phase {result['flood_phase_s']:.0f} s; machine: {os.cpu_count()} cores, shared)")
    rows = [
        ("matches finished / aborted / cancelled / lost", f"{result['matches_finished']} / {result['matches_aborted']}"
         f" / {result['matches_cancelled']} / {result['matches_lost']}"),
        ("records re-verified (failed)", f"{result['records_verified']} ({result['records_failed']})"),
        ("honest-bot TIMEOUTs (of decisions)", f"{result['honest_timeouts']} ({result['honest_decisions']})"),
        ("RSS start -> end (MiB)", f"{result['rss_start_mib']} -> {result['rss_end_mib']}"
         f" ({result['rss_growth_mib']:+})"),
        ("RSS slope over the last half (MiB/min)", str(result["rss_slope_last_half_mib_per_min"])),
        ("largest event-loop lag (ms)", f"{result['max_loop_lag_ms']} (the loop busy at most "
         f"{result['max_loop_busy_ms']} ms of one stall; load average {result['load_average']})"),
        ("tracebacks in the daemon's log", str(result["tracebacks_logged"])),
    ]
    for label, value in rows:
        print(f"  {label:<48} {value}")
    print("  attacks, and what they got:")
    for name, outcome in result["floods"].items():
        print(f"    {name:<18} {'ok ' if as_expected(name, outcome) else 'UNEXPECTED '}{outcome}")
    print(f"  chaos bots' actions: {result['chaos_actions']}")
    if args.json:
        print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
