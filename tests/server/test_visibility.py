"""Hidden information stays hidden: no message to a seat or a live spectator ever
contains a card of another seat's hand before that card is played."""

from __future__ import annotations

import asyncio
import time

import grpc
from google.protobuf.message import Message
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from hearts_engine import MatchRecord, verify_record
from heartsbot.proto import cards_pb2, game_pb2, spectator_pb2, spectator_pb2_grpc
from heartsbot import convert

from .harness import Bot, random_legal, run, running_daemon

P = game_pb2
OFFSETS = {
    P.PASS_DIRECTION_LEFT: lambda n: 1,
    P.PASS_DIRECTION_RIGHT: lambda n: n - 1,
    P.PASS_DIRECTION_ACROSS: lambda n: 2,
    P.PASS_DIRECTION_HOLD: lambda n: 0,
}


def cards_in(message: Message) -> list[int]:
    """Every card in ``message``, except inside the Ruleset (public rule constants)."""
    found: list[int] = []
    if isinstance(message, cards_pb2.Card):
        return [convert.card_from_wire(message)]
    for field, value in message.ListFields():
        if field.message_type is None or field.message_type.name == "Ruleset":
            continue
        items = value if field.is_repeated else [value]
        for item in items:
            found += cards_in(item)
    return found


class Tracker:
    """Replays one audience's messages and checks each card it is shown."""

    def __init__(self, seat: int, record: spectator_pb2.MatchRecord) -> None:
        self.seat = seat
        self.dealt = {d.deal_number: [convert.cards_from_wire(h.cards) for h in d.hands] for d in record.deals}
        self.passes = {}
        for d in record.decisions:
            if d.kind == P.DECISION_KIND_PASS:
                self.passes[(d.deal_number, d.seat)] = convert.cards_from_wire(d.cards)
        self.players = len(record.seats)
        self.deal = 0
        self.exchanged = False
        self.offset = 0
        self.played: set[int] = set()
        self.checked = 0

    def own(self) -> set[int]:
        """My dealt hand and my pass; what I received only once every seat has passed."""
        if self.seat < 0:
            return set()
        mine = set(self.dealt.get(self.deal, [[]] * self.players)[self.seat])
        mine |= set(self.passes.get((self.deal, self.seat), ()))
        if self.exchanged and self.offset:
            giver = (self.seat - self.offset) % self.players
            mine |= set(self.passes.get((self.deal, giver), ()))
        return mine

    def see(self, events, extra: list[Message]) -> None:
        for event in events:
            kind = event.WhichOneof("kind")
            if kind == "deal_started":
                self.deal = event.deal_started.deal_number
                self.played = set()
                self.exchanged = False
                self.offset = OFFSETS[event.deal_started.pass_direction](self.players)
            if kind == "cards_passed":
                self.exchanged = True
            if kind == "card_played":
                self.played.add(convert.card_from_wire(event.card_played.card))
            self._check(event)
        for message in extra:
            self._check(message)

    def _check(self, message: Message) -> None:
        allowed = self.own() | self.played
        for card in cards_in(message):
            self.checked += 1
            assert card in allowed, f"audience {self.seat} was shown {card} in deal {self.deal}: {message}"


def test_no_message_leaks_another_seats_cards(tmp_path):
    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            names = ["alice", "bob", "carol", "dave"]
            bots = [await Bot(daemon, n, random_legal(i)).start() for i, n in enumerate(names)]
            gate = asyncio.Event()
            match_id = await daemon.create_match(names, ruleset="standard", deals=4, seed=99)
            watched = []

            async def watch():
                async with daemon.channel() as channel:
                    stub = spectator_pb2_grpc.SpectatorServiceStub(channel)
                    async for response in stub.WatchMatch(spectator_pb2.WatchMatchRequest(match_id=match_id)):
                        watched.append(response)
                        gate.set()

            watcher = asyncio.get_running_loop().create_task(watch())
            for bot in bots:
                await bot.wait_ended(match_id)
            await asyncio.wait_for(watcher, 10)
            for bot in bots:
                await bot.close()
            return bots, watched, daemon.stored(match_id)

    bots, watched, stored = run(scenario())
    record = stored.record
    for seat, bot in enumerate(bots):
        tracker = Tracker(seat, record)
        for message in bot.received:
            if message.HasField("update"):
                update = message.update
                extra = [update.request] if update.HasField("request") else []
                tracker.see(update.events, extra)
        assert tracker.checked > 100
    spectator = Tracker(-1, record)
    for response in watched:
        spectator.see(response.events, [])
    assert spectator.checked > 100
    assert watched[-1].events[-1].HasField("match_ended")
    assert verify_record(MatchRecord.from_json(record.engine_record_json)) is not None


def test_a_delayed_spectator_sees_all_hands_only_after_the_delay(tmp_path):
    """With a 0.3 s spectator delay, the spectator gets the match's first event no sooner
    than 0.3 s after the match started, and the deal's hands no sooner than 0.3 s after
    the deal's last card was played. Both are measured against the times the server
    recorded (the runner's start, the event log's times), not against when the test
    happened to start watching: on a loaded machine that can be well after the start."""
    delay_s = 0.3

    async def scenario():
        async with running_daemon(tmp_path, spectator_delay_s=delay_s, house_delay_ms=5) as daemon:
            match_id = await daemon.create_match(["house:random"] * 4, deals=1, seed=3)
            runner = daemon.arena.runners[match_id]
            received = []  # (time.monotonic() on arrival, events)
            async with daemon.channel() as channel:
                stub = spectator_pb2_grpc.SpectatorServiceStub(channel)
                async for response in stub.WatchMatch(spectator_pb2.WatchMatchRequest(match_id=match_id)):
                    received.append((time.monotonic(), list(response.events)))
            return received, runner

    received, runner = run(scenario())
    events = [e for _, batch in received for e in batch]
    started = next(e.deal_started for e in events if e.HasField("deal_started"))
    assert len(started.hands) == 4 and all(len(h.cards) == 13 for h in started.hands)
    first_at = received[0][0]
    assert first_at >= runner.started_at + delay_s, "the first event came before the delay was over"
    hands_at = next(at for at, batch in received if any(e.HasField("deal_started") for e in batch))
    happened = runner.log_events.revealed_after(0)
    last_card_at = max(at for at, e in happened if e.HasField("card_played"))
    assert hands_at >= last_card_at + delay_s, "the hands were shown before the delay after the deal's end was over"


def test_the_match_list_shows_a_delayed_matchs_score_only_after_the_delay(tmp_path):
    """Before: with a spectator delay, WatchMatch showed nothing yet while ListMatches (and
    the web lobby) showed the live deals played and totals (a second attack pass). The list
    now shows what a watcher may see: here nothing during a 60 s delay, and the whole score
    once the match is over."""

    async def scenario():
        async with running_daemon(tmp_path, spectator_delay_s=60, house_delay_ms=1) as daemon:
            match_id = await daemon.create_match(["house:random"] * 4, deals=3, seed=4)
            runner = daemon.arena.runners[match_id]
            for _ in range(600):
                if runner.deals_completed >= 2:
                    break
                await asyncio.sleep(0.01)
            async with daemon.channel() as channel:
                stub = spectator_pb2_grpc.SpectatorServiceStub(channel)
                during = (await stub.ListMatches(spectator_pb2.ListMatchesRequest())).matches[0]
                completed = runner.deals_completed
                await daemon.wait_finished(match_id)
                after = (await stub.ListMatches(spectator_pb2.ListMatchesRequest())).matches[0]
            return during, completed, after

    during, completed, after = run(scenario())
    assert completed >= 2
    assert during.status == P.MATCH_STATUS_RUNNING
    assert during.deals_played == 0 and not any(during.totals), (during.deals_played, list(during.totals))
    assert after.deals_played == 3 and sum(after.totals) > 0


def test_health_serving_reflection_and_listing(tmp_path):
    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            match_id = await daemon.create_match(["house:random"] * 4, deals=1)
            await daemon.wait_finished(match_id)
            async with daemon.channel() as channel:
                health = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(service=""))
                bot_health = await health_pb2_grpc.HealthStub(channel).Check(
                    health_pb2.HealthCheckRequest(service="hearts.v1.BotService"))
                stub = reflection_pb2_grpc.ServerReflectionStub(channel)
                responses = stub.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(list_services="")]))
                services = []
                async for r in responses:
                    services += [s.name for s in r.list_services_response.service]
                listing = await spectator_pb2_grpc.SpectatorServiceStub(channel).ListMatches(
                    spectator_pb2.ListMatchesRequest())
                record = await spectator_pb2_grpc.SpectatorServiceStub(channel).GetMatchRecord(
                    spectator_pb2.GetMatchRecordRequest(match_id=match_id))
            return health, bot_health, services, listing, record, match_id

    health, bot_health, services, listing, record, match_id = run(scenario())
    assert health.status == health_pb2.HealthCheckResponse.SERVING
    assert bot_health.status == health_pb2.HealthCheckResponse.SERVING
    assert {"hearts.v1.BotService", "hearts.v1.SpectatorService", "hearts.v1.AdminService"} <= set(services)
    assert "grpc.health.v1.Health" in services
    assert [m.match_id for m in listing.matches] == [match_id]
    assert listing.matches[0].status == P.MATCH_STATUS_FINISHED
    assert record.record.result.status == P.MATCH_STATUS_FINISHED and len(record.record.deals) == 1
    assert grpc.StatusCode.OK  # keep the import honest


def test_32_concurrent_matches_complete_correctly(tmp_path):
    async def scenario():
        async with running_daemon(tmp_path) as daemon:
            names = ["alice", "bob", "carol", "dave", "erin", "frank", "gina"]
            bots = [await Bot(daemon, n, random_legal(i), max_matches=32).start() for i, n in enumerate(names)]
            ids = []
            for i in range(32):
                seats = [names[(i + k) % 7] for k in range(4)]
                ids.append(await daemon.create_match(seats, deals=2, seed=i))
            for match_id in ids:
                await daemon.wait_finished(match_id, timeout=120)
            for bot in bots:
                await bot.close()
            return [daemon.stored(m) for m in ids]

    stored = run(scenario())
    assert len(stored) == 32 and all(s.status == "finished" for s in stored)
    for s in stored:
        engine = MatchRecord.from_json(s.record.engine_record_json)
        outcome = verify_record(engine)
        assert list(outcome.totals) == list(s.record.result.totals) == s.totals
        assert all(d.provenance == P.PROVENANCE_BOT for d in s.record.decisions)
