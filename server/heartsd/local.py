"""``heartsbot local``: an embedded heartsd on a loopback port, one BotClient per seat.

The client distribution does not depend on the daemon, so this command lives here and
the daemon's distribution registers it for ``heartsbot`` (the ``heartsbot.commands``
entry point ``local``); without the daemon installed, ``heartsbot local`` says so.
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import sys
import tempfile
from pathlib import Path

import grpc

from hearts_engine import MatchRecord, preset, replay
from heartsbot.client import BotClient, ClientStats
from heartsbot.loading import load_strategy
from heartsbot.proto import admin_pb2, admin_pb2_grpc, game_pb2, spectator_pb2, spectator_pb2_grpc
from heartsbot.strategies import Strategy
from heartsbot.tls import Tls, aio_channel

from .arena import MAX_FIXED_DEALS

SEED_MAX = 2**64 - 1  # a shuffle seed is a uint64 (heartsbot.options.shuffle_seed)
from .config import INT32_MAX, Settings
from .db import StoreError, for_local_db
from .logs import configure
from .server import embedded


async def run_local(args: argparse.Namespace) -> int:
    """The command: a store the embedded daemon refuses (``--db`` naming another
    application's file, a damaged or newer store) is a usage error, exit 2 (db.for_local_db)."""
    try:
        return await _run_local(args)
    except StoreError as exc:
        raise for_local_db(exc) from None


async def _run_local(args: argparse.Namespace) -> int:
    from .spelling import unknown_ruleset

    if problem := unknown_ruleset(args.ruleset):  # with the name it resembles
        raise ValueError(problem)
    rules = preset(args.ruleset, players=args.players or len(args.strategies))
    if len(args.strategies) != rules.players:
        raise ValueError(f"{args.ruleset} with {rules.players} players needs {rules.players} strategies")
    if args.matches < 1:
        raise ValueError("--matches must be at least 1")
    if args.deals > MAX_FIXED_DEALS:
        raise ValueError(f"--deals: a match has at most {MAX_FIXED_DEALS} deals, got {args.deals}")
    if args.seed + args.matches - 1 > SEED_MAX:  # before (an operator's pass): "Value out of range", after a match
        raise ValueError(f"--seed: the matches play seeds S, S+1, ..., and with --matches {args.matches} the last "
                         f"passes the largest seed, {SEED_MAX}; give a seed of at most {SEED_MAX - args.matches + 1}")
    strategies = [load_strategy(spec, args.seed + seat) for seat, spec in enumerate(args.strategies)]
    names = [f"{seat}-{s.name if s.name != Strategy.name else type(s).__name__}" for seat, s in enumerate(strategies)]
    tokens = {name: secrets.token_urlsafe(16) for name in names}
    admin = secrets.token_urlsafe(16)
    configure("console", "error")
    with tempfile.TemporaryDirectory() as tmp:
        db = args.db or str(Path(tmp) / "local.db")
        settings = Settings.load(env={}, flags=dict(
            port=0, db_path=db, admin_token=admin, bot_tokens=tokens, log_level="error",
            # The bank is ten decisions (at least 2 s), within the wire's int32: a huge
            # --decision-ms was refused as "bank_ms: at most ...", an option nobody gave.
            decision_ms=args.decision_ms, bank_ms=min(INT32_MAX, max(2000, args.decision_ms * 10)),
            tls_cert=getattr(args, "tls_cert", None), tls_key=getattr(args, "tls_key", None),
            tls_client_ca=getattr(args, "tls_client_ca", None)))
        tls = _client_tls(args, settings)
        async with embedded(settings, leased=True) as (_, port):
            target = f"127.0.0.1:{port}"
            clients = [BotClient(target, tokens[n], s, n, max_matches=1, tls=tls) for n, s in zip(names, strategies)]
            tasks = [asyncio.get_running_loop().create_task(c.run()) for c in clients]
            try:
                await asyncio.gather(*(asyncio.wait_for(c.connected.wait(), 10) for c in clients))
                async with aio_channel(target, tls) as channel:
                    records = []
                    for i in range(args.matches):
                        record = await _one_match(channel, admin, args, names, args.seed + i, clients)
                        records.append(record)
                        if args.matches > 1:
                            _progress(i + 1, args.matches)
                if args.matches == 1:
                    _print_sheet(records[0], names)
                else:
                    _print_summary(records, names)
            finally:
                for c in clients:
                    c.stop()
                await asyncio.gather(*tasks, return_exceptions=True)
    failed = [name for name, client in zip(names, clients) if client.stats.failed]
    for name, client in zip(names, clients):
        for line in problem_report(name, client.stats, args.decision_ms):
            print(line, file=sys.stderr)
    if failed:
        print(f"heartsbot local: the strategy of {', '.join(failed)} failed (see above); its moves were "
              "partly played by safe defaults, so these scores do not show its play", file=sys.stderr)
        return 1
    return 0


def problem_report(name: str, stats: ClientStats, decision_ms: int) -> list[str]:
    """Lines telling a bot author what went wrong with the strategy of seat ``name``:
    each kind of failure with its count and first message (and the traceback of the
    first exception), overruns, and the defaults the server played for it."""
    lines = []
    fallbacks = sum(p.count for p in stats.problems.values())
    if fallbacks:
        lines.append(f"{name}: the strategy failed {fallbacks} time(s); each time a safe legal default was answered")
        for problem in stats.problems.values():
            lines.append(f"  {problem.kind} x{problem.count}: {problem.message}")
            if problem.traceback:
                lines.extend("    " + t for t in problem.traceback.rstrip().splitlines())
    if stats.overruns:
        lines.append(f"{name}: {stats.overruns} decision(s) took longer than the {decision_ms} ms decision time "
                     f"(slowest {stats.slowest_s:.2f} s), drawing on the match's time bank")
    server = stats.server_defaults  # over every match (stats.reports keeps the newest only)
    if server:
        kinds = ", ".join(f"{n} {k}" for k, n in sorted(server.items()))
        lines.append(f"{name}: the server played {sum(server.values())} default(s) for it ({kinds})")
    return lines


def _client_tls(args: argparse.Namespace, settings: Settings) -> Tls | None:
    """How the seats connect: as --tls/--ca/--cert/--key say; to a TLS daemon without
    --ca, trusting its own certificate (a self-signed one, made for the occasion)."""
    tls = getattr(args, "tls_config", None)
    files = settings.tls_files()
    if files is None:
        return tls
    if tls is None or tls.ca is None:
        return Tls(ca=files[0], cert=tls.cert if tls else None, key=tls.key if tls else None)
    return tls


async def _one_match(channel: grpc.aio.Channel, admin: str, args: argparse.Namespace, names: list[str], seed: int,
                     clients: list[BotClient]) -> game_pb2.MatchResult:
    request = admin_pb2.CreateMatchRequest(ruleset=args.ruleset, players=len(names), seed=seed)
    request.format.fixed_deals = args.deals
    for name in names:
        request.seats.add(bot=name)
    stub = admin_pb2_grpc.AdminServiceStub(channel)
    try:
        match_id = (await stub.CreateMatch(request, metadata=(("authorization", f"Bearer {admin}"),))).match_id
    except grpc.aio.AioRpcError as exc:
        if exc.code() == grpc.StatusCode.INVALID_ARGUMENT:  # what the options asked for: a usage error
            raise ValueError(exc.details()) from None
        raise
    await clients[0].wait_match(match_id)
    spectator = spectator_pb2_grpc.SpectatorServiceStub(channel)
    response = await spectator.GetMatchRecord(spectator_pb2.GetMatchRecordRequest(match_id=match_id))
    return response.record


def _progress(done: int, total: int) -> None:
    width = 30
    filled = width * done // total
    end = "\n" if done == total else ""
    print(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} matches", end=end, file=sys.stderr, flush=True)


def _print_sheet(record, names: list[str]) -> None:  # type: ignore[no-untyped-def]
    match = replay(MatchRecord.from_json(record.engine_record_json))
    print(f"{match.rules.name}, {match.rules.players} players, seed {record.seed}")
    print(match.score_sheet(names))
    defaults = [d for d in record.decisions if d.provenance not in (game_pb2.PROVENANCE_BOT, game_pb2.PROVENANCE_HOUSE)]
    if defaults:
        print(f"({len(defaults)} decisions were played by the server's default)")


def _print_summary(records, names: list[str]) -> None:  # type: ignore[no-untyped-def]
    n = len(names)
    wins = [0.0] * n
    totals = [0] * n
    deals = 0
    for record in records:
        result = record.result
        for w in result.winners:
            wins[w] += 1 / len(result.winners)
        totals = [a + b for a, b in zip(totals, result.totals)]
        deals += result.deals
    print(f"{len(records)} matches, {deals} deals")
    print(f"{'seat':<18}{'wins':>8}{'mean total':>12}{'points/deal':>13}")
    for seat, name in enumerate(names):
        print(f"{name:<18}{wins[seat]:>8.1f}{totals[seat] / len(records):>12.1f}{totals[seat] / max(1, deals):>13.2f}")
