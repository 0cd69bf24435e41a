"""Behaviours that clients depend on, exactly as proto/ and docs/protocol.md word them.

An independent client written from the contract alone found these worded vaguely or
contradictorily; the server's behaviour was consistent, so the words were fixed and each
behaviour is pinned here: the default card, the one sequence numbering for every
audience, a ruleset without passing, hearts broken where hearts may always be led, the
moon option of a deal score, and the batching of a seat's own card_played.
"""

from __future__ import annotations

import asyncio

import grpc
import pytest

from hearts_engine import Deal, MoonOption, PassDirection, Phase, preset
from hearts_engine.scoring import DealResult
from heartsbot.proto import bot_pb2, game_pb2, spectator_pb2
from heartsbot import convert
from heartsd.store import NewMatch, Store
from tests.engine.scenario import hands

from .harness import Bot, random_legal, run, running_daemon, spectator_pb2_grpc

P = game_pb2
NAMES = ["alice", "bob", "carol", "dave"]
ALL_CLUBS = "2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC"


def _card_key(card) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    return (card.suit, card.rank)


def test_the_default_play_is_the_first_legal_card_in_card_order_not_the_lowest_rank(tmp_path):
    """A seat that never answers gets, for every play, the first card of its request's
    legal_cards, which are in card order (clubs to spades, two to ace): the documented
    default. At least one of those requests has a lower-ranked card later in the list,
    so "the lowest legal card" read as the lowest rank would be caught."""

    async def silent(request, bot):  # type: ignore[no-untyped-def]
        return None

    async def scenario():  # type: ignore[no-untyped-def]
        async with running_daemon(tmp_path, decision_ms=30, bank_ms=0) as daemon:
            bots = [await Bot(daemon, NAMES[0], silent).start()]
            bots += [await Bot(daemon, n, random_legal(i)).start() for i, n in enumerate(NAMES[1:], 1)]
            match_id = await daemon.create_match(NAMES, deals=2, seed=11)
            await bots[0].wait_ended(match_id)
            for bot in bots:
                await bot.close()
            return bots[0], daemon.stored(match_id).record

    bot, record = run(scenario())
    requests = [m.update.request for m in bot.received
                if m.HasField("update") and m.update.HasField("request")
                and m.update.request.kind == P.DECISION_KIND_PLAY]
    plays = [d for d in record.decisions if d.seat == 0 and d.kind == P.DECISION_KIND_PLAY]
    assert len(requests) == len(plays) == 26
    lower_rank_later = 0
    for request, decision in zip(requests, plays):
        legal = list(request.legal_cards)
        assert legal == sorted(legal, key=_card_key), "legal_cards are in card order"
        assert decision.provenance in (P.PROVENANCE_TIMEOUT, P.PROVENANCE_AUTO)
        assert _card_key(decision.cards[0]) == _card_key(legal[0])
        lower_rank_later += any(c.rank < legal[0].rank for c in legal[1:])
    assert lower_rank_later > 0, "no request distinguished card order from rank order"
    passes = [m.update.request for m in bot.received if m.HasField("update")
              and m.update.HasField("request") and m.update.request.kind == P.DECISION_KIND_PASS]
    passed = [d for d in record.decisions if d.seat == 0 and d.kind == P.DECISION_KIND_PASS]
    for request, decision in zip(passes, passed, strict=True):
        assert [_card_key(c) for c in decision.cards] == [_card_key(c) for c in request.legal_cards[-request.pass_count:]]


def test_one_sequence_numbering_for_every_seat_and_for_spectators(tmp_path):
    """Event k is the same public fact for every seat and for a spectator; only events
    that carry cards (deal_started, cards_passed) differ per audience, in content, not
    in kind or number."""

    async def scenario():  # type: ignore[no-untyped-def]
        async with running_daemon(tmp_path) as daemon:
            slow = asyncio.Event()

            async def paced(request, bot):  # type: ignore[no-untyped-def]
                await slow.wait()  # nothing is played until the spectator watches
                return random_legal(len(bot.events))(request, bot)

            bots = [await Bot(daemon, n, paced).start() for n in NAMES]
            match_id = await daemon.create_match(NAMES, deals=2, seed=5)
            watched: list[game_pb2.Event] = []
            async with daemon.channel() as channel:
                stub = spectator_pb2_grpc.SpectatorServiceStub(channel)
                call = stub.WatchMatch(spectator_pb2.WatchMatchRequest(match_id=match_id))
                slow.set()
                async for response in call:
                    watched.extend(response.events)
            for bot in bots:
                await bot.wait_ended(match_id)
                await bot.close()
            return [_events_of(bot, match_id) for bot in bots], watched

    per_seat, watched = run(scenario())
    length = len(per_seat[0])
    assert length > 50
    for events in per_seat:
        assert [e.sequence for e in events] == list(range(1, length + 1))
    private = {"deal_started", "cards_passed", "match_started"}
    for k in range(length):
        kinds = {events[k].WhichOneof("kind") for events in per_seat}
        assert len(kinds) == 1, f"event {k + 1} differs in kind between seats: {kinds}"
        kind = kinds.pop()
        if kind not in private:
            assert len({events[k].SerializeToString() for events in per_seat}) == 1, f"event {k + 1} ({kind})"
    assert [e.sequence for e in watched] == list(range(1, length + 1))
    assert [e.WhichOneof("kind") for e in watched] == [e.WhichOneof("kind") for e in per_seat[0]]
    for k, event in enumerate(watched):
        if event.WhichOneof("kind") not in private:
            assert event.SerializeToString() == per_seat[0][k].SerializeToString(), f"event {k + 1}"


def _events_of(bot: Bot, match_id: str) -> list[game_pb2.Event]:
    return [e for (m, _), events in bot.events.items() if m == match_id for e in events]


def test_a_ruleset_without_passing_sends_no_pass_request_and_says_hold(tmp_path):
    """Hartenjagen (no passing): pass_count stays the ruleset's 3, the schedule is
    [HOLD], no PASS request and no cards_passed event is ever sent, and every request
    says pass_direction HOLD and pass_to -1."""

    async def scenario():  # type: ignore[no-untyped-def]
        async with running_daemon(tmp_path) as daemon:
            bots = [await Bot(daemon, n, random_legal(i)).start() for i, n in enumerate(NAMES)]
            match_id = await daemon.create_match(NAMES, ruleset="hartenjagen", deals=2, seed=3)
            for bot in bots:
                await bot.wait_ended(match_id)
            for bot in bots:
                await bot.close()
            return bots

    bots = run(scenario())
    for bot in bots:
        requests = [m.update.request for m in bot.received if m.HasField("update") and m.update.HasField("request")]
        assert len(requests) == 26
        for request in requests:
            assert request.kind == P.DECISION_KIND_PLAY
            assert request.pass_count == 3
            assert list(request.ruleset.pass_schedule) == [P.PASS_DIRECTION_HOLD]
            assert request.pass_direction == P.PASS_DIRECTION_HOLD
            assert request.pass_to == -1
            assert not request.passed and not request.received
        events = [e for events in bot.events.values() for e in events]
        assert not any(e.HasField("cards_passed") for e in events)


def test_hearts_are_reported_broken_where_hearts_may_always_be_led(tmp_path):
    """Hartenjagen lets hearts be led at any time, yet hearts_broken follows its
    hearts_break rule ("any_heart"): the event comes once per deal at the first heart
    played, and requests say so from then on."""

    async def scenario():  # type: ignore[no-untyped-def]
        async with running_daemon(tmp_path) as daemon:
            bots = [await Bot(daemon, n, random_legal(i)).start() for i, n in enumerate(NAMES)]
            match_id = await daemon.create_match(NAMES, ruleset="hartenjagen", deals=3, seed=8)
            for bot in bots:
                await bot.wait_ended(match_id)
            for bot in bots:
                await bot.close()
            return bots[0]

    bot = run(scenario())
    events = [e for events in bot.events.values() for e in events]
    assert not events[0].match_started.ruleset.hearts_lead_restricted
    assert events[0].match_started.ruleset.hearts_break == "any_heart"
    deal, first_heart, broken = -1, {}, {}
    for e in events:
        kind = e.WhichOneof("kind")
        if kind == "deal_started":
            deal = e.deal_started.deal_number
        elif kind == "card_played" and e.card_played.card.suit == 3 and deal not in first_heart:
            first_heart[deal] = e.card_played.trick_number
        elif kind == "hearts_broken":
            assert deal not in broken, "hearts broken twice in one deal"
            broken[deal] = e.hearts_broken.trick_number
    assert broken and broken == first_heart
    requests = [m.update.request for m in bot.received if m.HasField("update") and m.update.HasField("request")]
    seen = [(r.deal_number, r.hearts_broken, r.hearts_broken_trick) for r in requests]
    for number, is_broken, trick in seen:
        assert is_broken == (trick >= 0)
        if is_broken:
            assert trick == broken[number]


def test_deal_score_moon_option_says_how_the_moon_changed_the_score():
    """DealScore.moon_option as the server sends it (convert.deal_score_to_wire of the
    engine's DealResult): ADD_TO_OTHERS for a standard, omnibus and Hartenjagen phase-1
    moon; the classic shooter's choice; UNSPECIFIED without a moon and for a Hartenjagen
    phase-2 moon (the shooter subtracts what it took, like everyone in that phase)."""
    def score(rules, phase: int = 1, choice: MoonOption | None = None, shooter_takes_all: bool = True):  # type: ignore[no-untyped-def]
        if shooter_takes_all:
            deal = Deal(rules, hands(rules, {0: ALL_CLUBS}), PassDirection.HOLD, scoring_phase=phase)
        else:
            deal = Deal.shuffled(rules, seed=1, number=0)
        while deal.phase is Phase.PLAYING:
            deal.play(deal.turn, deal.legal_plays(deal.turn)[0])
        if deal.phase is Phase.MOON_CHOICE:
            deal.choose_moon(deal.shooter, choice)
        result = DealResult(deal.score, phase, deal.shooter, deal.moon_option,
                            tuple(rules.points_of(t) for t in deal.taken))
        return convert.deal_score_to_wire(0, result)

    for name in ("standard", "omnibus", "hartenjagen"):
        wire = score(preset(name))
        assert (wire.shooter, wire.moon_option) == (0, P.MOON_OPTION_ADD_TO_OTHERS), name
    classic = preset("classic")
    assert score(classic, choice=MoonOption.SUBTRACT_FROM_SELF).moon_option == P.MOON_OPTION_SUBTRACT_FROM_SELF
    assert score(classic, choice=MoonOption.ADD_TO_OTHERS).moon_option == P.MOON_OPTION_ADD_TO_OTHERS
    phase2 = score(preset("hartenjagen"), phase=2)
    assert (phase2.shooter, phase2.moon_option, phase2.points[0]) == (0, P.MOON_OPTION_UNSPECIFIED, -20)
    nobody = score(preset("standard"), shooter_takes_all=False)
    assert nobody.moon_option == P.MOON_OPTION_UNSPECIFIED and nobody.shooter == -1


def test_a_seats_own_card_played_arrives_with_its_next_request_or_the_deals_end(tmp_path):
    """No update is sent to a seat just to echo its answer: every update carries a
    request, or ends a deal (deal_scored) or the match (match_ended); the seat's own
    card_played is in the next of those."""

    async def scenario():  # type: ignore[no-untyped-def]
        async with running_daemon(tmp_path) as daemon:
            bot = await Bot(daemon, "alice", random_legal(1)).start()
            match_id = await daemon.create_match(["alice", "house:random", "house:random", "house:random"],
                                                 deals=2, seed=21)
            await bot.wait_ended(match_id)
            await bot.close()
            return bot

    bot = run(scenario())
    updates = [m.update for m in bot.received if m.HasField("update")]
    answered = 0
    for update in updates:
        kinds = {e.WhichOneof("kind") for e in update.events}
        assert update.HasField("request") or kinds & {"deal_scored", "match_ended"}, kinds
    for before, after in zip(updates, updates[1:]):
        if before.HasField("request") and before.request.kind == P.DECISION_KIND_PLAY:
            mine = [e for e in after.events if e.HasField("card_played") and e.card_played.seat == 0]
            assert len(mine) == 1, "the seat's own card arrives in the next update"
            answered += 1
    assert answered == 26


async def _bots_after_a_match(tmp_path, seats: list[str], deals: int, seed: int) -> list[Bot]:  # type: ignore[no-untyped-def]
    """One match of random legal bots in ``seats`` (names, or "house:..."), played to its end:
    the bots, with everything they received."""
    async with running_daemon(tmp_path) as daemon:
        names = [s for s in seats if not s.startswith("house:")]
        bots = [await Bot(daemon, n, random_legal(i)).start() for i, n in enumerate(names)]
        match_id = await daemon.create_match(seats, deals=deals, seed=seed)
        for bot in bots:
            await bot.wait_ended(match_id)
        for bot in bots:
            await bot.close()
        return bots


def test_a_deals_last_events_come_with_the_next_deals_first_request_or_alone_at_once(tmp_path):
    """A deal's end is one message per seat, not two: its last events (the last trick,
    deal_scored) travel with the next deal's deal_started and, where the seat acts at once,
    its request (every seat's pass; at a deal without passing, the opening lead). A seat
    that does not act at once still gets them at once, before any card of the next deal.
    The match's last deal ends in an update of its own, before match_ended."""

    lone_deal_ends = 0
    # Five deals of the standard rotation: left, right, across, hold, left.
    for bot in run(_bots_after_a_match(tmp_path, NAMES, deals=5, seed=5)):
        updates = [m.update for m in bot.received if m.HasField("update")]
        ends = [u for u in updates if any(e.HasField("deal_scored") for e in u.events)]
        assert len(ends) == 5, bot.name
        for deal, update in enumerate(ends[:4], 1):  # every deal but the last
            kinds = [e.WhichOneof("kind") for e in update.events]
            assert "deal_started" in kinds[kinds.index("deal_scored"):], (bot.name, deal, kinds)
            next_deal = kinds[kinds.index("deal_started"):]
            assert "card_played" not in next_deal, (bot.name, deal, kinds)  # at once: before the next deal's first card
            if deal in (1, 2, 4):  # the next deal passes: every seat's pass request comes with it
                assert update.HasField("request") and update.request.kind == P.DECISION_KIND_PASS, (bot.name, deal)
            elif not update.HasField("request"):  # deal 4 holds: only the two of clubs is asked at once
                lone_deal_ends += 1
            else:
                assert update.request.kind == P.DECISION_KIND_PLAY
        last = ends[4]
        assert not last.HasField("request")
        assert not any(e.HasField("match_ended") for e in last.events)  # announced once stored
        assert updates[-1].events[-1].HasField("match_ended")
    assert lone_deal_ends == 3  # the three seats without the two of clubs at the held deal


def test_a_deals_end_reaches_every_seat_before_a_house_seat_leads_the_next_deal(tmp_path):
    """At a deal without passing the opening lead may be a house seat's, played at once:
    the bots' deal-end update still comes before that card, not with it."""

    house_leads = 0
    for seed in range(1, 5):
        (tmp_path / str(seed)).mkdir()
        seats = [*NAMES[:2], "house:random", "house:random"]
        for bot in run(_bots_after_a_match(tmp_path / str(seed), seats, deals=4, seed=seed)):
            ends = [m.update for m in bot.received
                    if m.HasField("update") and any(e.HasField("deal_scored") for e in m.update.events)]
            held = ends[2]  # the end of deal 3: deal 4 holds, and its lead is played at once
            kinds = [e.WhichOneof("kind") for e in held.events]
            assert "card_played" not in kinds[kinds.index("deal_scored"):], (seed, bot.name, kinds)
            events = [e for m in bot.received if m.HasField("update") for e in m.update.events]
            starts = [i for i, e in enumerate(events) if e.HasField("deal_started")]
            lead = next(e for e in events[starts[3]:] if e.HasField("card_played"))
            house_leads += lead.card_played.seat >= 2
    assert house_leads  # some deal 4 was led by a house seat (seats 2 and 3)


def test_a_resume_at_or_beyond_the_newest_event_sends_the_pending_request_alone_or_nothing(tmp_path):
    """resume{last_sequence} at or beyond the seat's newest event: with a request pending, an
    update with no events and that request; with none pending (the seat has answered and waits
    for another), nothing at all, which docs/protocol.md now says rather than promising an
    update. Carol's unknown request id after her resume is the marker: the stream's messages
    go out in order, so whatever the resume sent would come before its rejection."""
    held: dict[str, bot_pb2.DecisionRequest] = {}

    def bob_holds(request, bot):  # type: ignore[no-untyped-def]
        held.setdefault("bob", request)
        return None

    async def scenario():  # type: ignore[no-untyped-def]
        async with running_daemon(tmp_path, decision_ms=600_000, bank_ms=0) as daemon:
            carol = await Bot(daemon, "carol", random_legal(1)).start()
            bob = await Bot(daemon, "bob", bob_holds).start()
            match_id = await daemon.create_match(["carol", "bob", "house:random", "house:random"], seed=4)
            runner = daemon.arena.runners[match_id]
            while "bob" not in held or runner.seats[0].pending is not None or not carol.events.get((match_id, 0)):
                await asyncio.sleep(0.01)  # carol has passed, bob holds the pass: nothing new for carol
            newest = carol.events[(match_id, 0)][-1].sequence
            before = len(carol.received)
            carol.send(bot_pb2.PlayRequest(resume=bot_pb2.Resume(match_id=match_id, seat=0, last_sequence=newest)))
            carol.send(bot_pb2.PlayRequest(answer=bot_pb2.Answer(match_id=match_id, request_id="r-marker",
                                                                  play=held["bob"].hand[0])))
            while not carol.rejections:
                await asyncio.sleep(0.01)
            carol_after = carol.received[before:]
            asked = len(bob.received)
            bob.send(bot_pb2.PlayRequest(resume=bot_pb2.Resume(match_id=match_id, seat=1, last_sequence=10**9)))
            while len(bob.received) == asked:
                await asyncio.sleep(0.01)
            bob_after = bob.received[asked:]
            for bot in (carol, bob):
                await bot.close()
            return carol_after, bob_after

    carol_after, bob_after = run(scenario())
    assert [m.WhichOneof("kind") for m in carol_after] == ["rejected"]
    assert carol_after[0].rejected.code == bot_pb2.REJECTION_CODE_UNKNOWN_REQUEST
    (update,) = [m.update for m in bob_after]
    assert not update.events and update.request.request_id == held["bob"].request_id


def test_watching_a_match_that_ended_with_its_server_says_whether_its_record_has_anything(tmp_path):
    """WatchMatch of a match that ended with its server (no stored events) sent every caller
    to GetMatchRecord, which refuses a match that never reached its first checkpoint ("has
    no record"): a client following the message went in a circle. It now says which: the
    record up to the last checkpoint, or nothing stored at all."""
    seats = ["alice", "bob", "house:random", "house:random"]
    store = Store(str(tmp_path / "heartsd.db"))  # the daemon's store, as a crash left it
    store.start([NewMatch("m-never-checked", "standard", 4, seats, 7), NewMatch("m-checked", "standard", 4, seats, 8)])
    store.checkpoint("m-checked", spectator_pb2.MatchRecord(match_id="m-checked").SerializeToString(), 1, [0] * 4)
    assert sorted(store.abort_interrupted()) == ["m-checked", "m-never-checked"]  # as `heartsd serve` does at start
    store.close()

    async def scenario():  # type: ignore[no-untyped-def]
        async with running_daemon(tmp_path) as daemon:
            outcomes = {}
            async with daemon.channel() as channel:
                stub = spectator_pb2_grpc.SpectatorServiceStub(channel)
                for match_id in ("m-never-checked", "m-checked"):
                    with pytest.raises(grpc.aio.AioRpcError) as watched:
                        async for _ in stub.WatchMatch(spectator_pb2.WatchMatchRequest(match_id=match_id)):
                            pass
                    try:
                        record = await stub.GetMatchRecord(spectator_pb2.GetMatchRecordRequest(match_id=match_id))
                        fetched = record.record.result.status
                    except grpc.aio.AioRpcError as exc:
                        fetched = exc.code()
                    outcomes[match_id] = (watched.value.code(), watched.value.details(), fetched)
            return outcomes

    outcomes = run(scenario())
    code, details, fetched = outcomes["m-never-checked"]
    assert code == grpc.StatusCode.FAILED_PRECONDITION and fetched == grpc.StatusCode.FAILED_PRECONDITION
    assert "GetMatchRecord" not in details and "no record" in details, details
    code, details, fetched = outcomes["m-checked"]
    assert code == grpc.StatusCode.FAILED_PRECONDITION and fetched == P.MATCH_STATUS_ABORTED
    assert "GetMatchRecord" in details, details
