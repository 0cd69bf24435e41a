"""The hot path assembles PlayResponse bytes from pre-encoded parts (heartsd.wire).
Every request of whole matches must parse to exactly what building it field by field
from the engine's state gives."""

from __future__ import annotations

import asyncio
import math
import time

import pytest
from hypothesis import given, settings, strategies as st

from hearts_engine import Deal, PassAction, Phase, record_of, seat_view
from hearts_engine.cards import cards_of
from heartsbot.proto import admin_pb2, bot_pb2, cards_pb2, game_pb2, spectator_pb2
from heartsbot import convert
from heartsd import wire
from heartsd.arena import Arena, SeatRequest
from heartsd.conformance import Feeder, Shooter, moon_seed
from heartsd.config import Settings
from heartsd.sessions import BotSession
from heartsd.store import Store

P = game_pb2


def expected_request(runner, seat: int, parsed: bot_pb2.DecisionRequest,
                     resent_within_ms: int | None = None) -> bot_pb2.DecisionRequest:
    """``resent_within_ms``: the request was sent again (resume) at most this long after it
    was first sent, and its clock shows what is left: the decision time goes first."""
    match = runner.match
    clock = runner.seats[seat].clock
    full = bot_pb2.Clock(decision_ms=clock.decision_ms, bank_ms=clock.bank_ms)
    if resent_within_ms is not None:
        left, whole = parsed.clock.decision_ms + parsed.clock.bank_ms, full.decision_ms + full.bank_ms
        assert whole - resent_within_ms <= left <= whole
        assert parsed.clock.decision_ms <= full.decision_ms and parsed.clock.bank_ms <= full.bank_ms
        assert parsed.clock.bank_ms == full.bank_ms or parsed.clock.decision_ms == 0
        full = parsed.clock
    deal = match.deal
    view = seat_view(deal, seat, match.totals, [r.score for r in match.results])
    n = runner.rules.players
    leader = deal.trick_leader if deal.trick else (deal.turn if deal.phase is Phase.PLAYING else -1)
    request = bot_pb2.DecisionRequest(
        request_id=parsed.request_id,
        kind=parsed.kind,
        deal_number=deal.number,
        your_seat=seat,
        ruleset=convert.ruleset_to_wire(runner.rules),
        hand=convert.cards_to_wire(view.hand),
        legal_cards=convert.cards_to_wire(view.legal),
        pass_count=runner.rules.pass_count,
        pass_direction=convert.PASS_DIRECTIONS[deal.pass_direction],
        pass_to=-1 if deal.pass_direction.value == "hold" else (seat + deal.pass_direction.offset(n)) % n,
        passed=convert.cards_to_wire(view.passed or ()),
        received=convert.cards_to_wire(view.received or ()),
        current_trick=convert.open_trick_to_wire(len(deal.tricks), leader, deal.trick, n),
        tricks=[convert.trick_to_wire(i, t, n) for i, t in enumerate(deal.tricks)],
        hearts_broken=deal.hearts_broken,
        points_taken=view.points_taken,
        hand_sizes=view.hand_sizes,
        totals=view.totals,
        deal_scores=[convert.deal_score_to_wire(i, r) for i, r in enumerate(match.results)],
        clock=full,
        last_sequence=runner.log_events.last_sequence,
        hearts_broken_trick=deal.broken_trick,
        scoring_phase=deal.scoring_phase,
    )
    if parsed.kind == P.DECISION_KIND_MOON:
        request.moon_options.extend(convert.MOON_OPTIONS.values())
        request.default_moon_option = parsed.default_moon_option
    return request


def dealt_hands(match) -> list[spectator_pb2.DealtHands]:
    """Every deal's hands so far, dealt again by the engine from the seed."""
    out = []
    for number in range(match.deal.number + 1):
        shuffle, rotation, _ = match.deal_setup(number)
        deal = Deal.shuffled(match.rules, match.seed, number, shuffle=shuffle, rotation=rotation)
        out.append(spectator_pb2.DealtHands(
            deal_number=number, hands=[P.Hand(cards=convert.cards_to_wire(cards_of(h))) for h in deal.dealt]))
    return out


def expected_record(runner, result: game_pb2.MatchResult) -> spectator_pb2.MatchRecord:
    """The record so far, built message by message from the runner's decisions and the engine."""
    match = runner.match
    return spectator_pb2.MatchRecord(
        match_id=runner.id, ruleset=convert.ruleset_to_wire(runner.rules), format=convert.format_to_wire(match.format),
        seed=match.seed, seats=runner.seat_infos, clock=runner.policy.to_wire(),
        decisions=[d.to_wire() for d in runner.decisions],
        deal_scores=[convert.deal_score_to_wire(i, r) for i, r in enumerate(match.results)],
        deals=dealt_hands(match), result=result, engine_record_json=record_of(match).to_json())


def assert_private_events(runner) -> None:
    """Deal starts and passes (encoded from bytes) are, for every audience, the messages
    built from the engine's deals and the recorded passes."""
    match, n = runner.match, runner.rules.players
    dealt = dealt_hands(match)
    passes = {(d.deal_number, d.seat): d.action.cards for d in runner.decisions if isinstance(d.action, PassAction)}

    def expected(event: game_pb2.Event, seat: int | None) -> game_pb2.Event:
        """``seat`` None: a spectator with revealed hands; -1: one without."""
        out = game_pb2.Event(sequence=event.sequence)
        if event.HasField("deal_started"):
            number = event.deal_started.deal_number
            shuffle, rotation, schedule = match.deal_setup(number)
            out.deal_started.deal_number = number
            out.deal_started.pass_direction = convert.PASS_DIRECTIONS[match.rules.pass_direction(schedule)]
            if seat is None:
                out.deal_started.hands.extend(dealt[number].hands)
            elif seat >= 0:
                out.deal_started.hand.extend(dealt[number].hands[seat].cards)
        else:
            number = event.cards_passed.deal_number
            out.cards_passed.deal_number = number
            out.cards_passed.received_from = -1
            if seat is not None and seat >= 0:
                _, _, schedule = match.deal_setup(number)
                giver = (seat - match.rules.pass_direction(schedule).offset(n)) % n
                out.cards_passed.passed.extend(convert.cards_to_wire(passes[number, seat]))
                out.cards_passed.received.extend(convert.cards_to_wire(passes[number, giver]))
                out.cards_passed.received_from = giver
            if seat is None:  # every hand after the exchange
                _, _, schedule = match.deal_setup(number)
                offset = match.rules.pass_direction(schedule).offset(n)
                for s, dealt_hand in enumerate(dealt[number].hands):
                    held = set(convert.cards_from_wire(dealt_hand.cards)) - set(passes[number, s])
                    held |= set(passes[number, (s - offset) % n])
                    out.cards_passed.hands.add(cards=convert.cards_to_wire(sorted(held)))
        return out

    audiences = {seat: runner.log_events.for_seat(seat, 0) for seat in (*range(n), -1)}
    audiences[None] = [e for _, e in runner.log_events.revealed_after(0)]
    checked = {"deal_started": 0, "cards_passed": 0}
    for seat, events in audiences.items():
        for event in events:
            kind = event.WhichOneof("kind")
            if kind in checked:
                assert event == expected(event, seat), (seat, event)
                checked[kind] += 1
    assert checked["deal_started"] == (n + 2) * len(match.results)  # every deal, every audience
    assert checked["cards_passed"] > 0 or not passes


def assert_same_view(client_view, runner, seat: int) -> None:
    """What a client rebuilds from the request is what the server's engine would show."""
    match = runner.match
    server_view = seat_view(match.deal, seat, match.totals, [r.score for r in match.results])
    for name in ("seat", "rules", "deal_number", "pass_direction", "phase", "hand", "passed", "received", "tricks",
                 "trick", "trick_leader", "legal", "hand_sizes", "points_taken", "tricks_won", "hearts_broken",
                 "broken_trick", "scoring_phase", "totals", "deal_scores"):
        assert getattr(client_view, name) == getattr(server_view, name), name


def play_highest(seat: int, request: bot_pb2.DecisionRequest) -> bot_pb2.Answer:
    answer = bot_pb2.Answer(request_id=request.request_id)
    if request.kind == P.DECISION_KIND_PASS:
        answer.pass_cards.cards.extend(request.legal_cards[: request.pass_count])
    elif request.kind == P.DECISION_KIND_PLAY:
        answer.play.CopyFrom(request.legal_cards[-1])
    else:
        answer.moon = request.default_moon_option
    return answer


def shoot_the_moon(seat: int, request: bot_pb2.DecisionRequest) -> bot_pb2.Answer:
    """Seat 0 shoots the moon, fed by the others (on conformance.moon_seed's deal)."""
    strategy = Shooter() if seat == 0 else Feeder()
    view = convert.view_from_request(request)
    answer = bot_pb2.Answer(request_id=request.request_id)
    if request.kind == P.DECISION_KIND_PASS:
        answer.pass_cards.cards.extend(convert.cards_to_wire(strategy.choose_pass(view)))
    elif request.kind == P.DECISION_KIND_PLAY:
        answer.play.CopyFrom(convert.card_to_wire(strategy.choose_play(view)))
    else:
        answer.moon = P.MOON_OPTION_SUBTRACT_FROM_SELF
    return answer


@pytest.mark.parametrize(("ruleset", "players", "deals", "seed", "answer_for"), [
    ("standard", 4, 3, 5, play_highest),
    ("classic", 5, 3, 5, play_highest),
    ("classic", 6, 2, 5, play_highest),
    ("omnibus", 4, 2, 5, play_highest),
    ("hartenjagen", 3, 3, 5, play_highest),
    ("hartenjagen", 3, 0, 5, play_highest),  # a whole game: phase-2 deals (each seat subtracts what it takes)
    ("classic", 4, 1, None, shoot_the_moon),  # the shooter's choice
])
def test_assembled_requests_equal_requests_built_field_by_field(tmp_path, ruleset, players, deals, seed, answer_for):
    """Along the way: every 41st request is first answered with the wrong kind of action
    (rejected, then answered right: the record counts it), and every 53rd is resumed from
    a few events back instead of answered (sent again, with the clock left)."""
    seed = moon_seed(ruleset, 0) if seed is None else seed

    async def scenario() -> int:
        names = [f"b{i}" for i in range(players)]
        settings = Settings.load(env={}, flags=dict(
            port=0, db_path=str(tmp_path / "w.db"), admin_token="admin-token-wire",
            bot_tokens={n: f"token-{n}-wire-test" for n in names}, log_level="error"))
        arena = Arena(settings, Store(settings.db_path))
        sessions = [BotSession(n, "t", frozenset(), 4) for n in names]
        for s in sessions:
            arena.connect(s)
        runner = await arena.create_match(ruleset, players, admin_pb2.RulesetOptions(), P.MatchFormat(fixed_deals=deals),
                                          seed, [SeatRequest(bot=n) for n in names], P.ClockSettings())
        checked = 0
        resumed: dict[str, int] = {}  # request id -> the most ms between its sending and its resending
        kinds: set[int] = set()
        phases: set[int] = set()
        while not runner.finished.is_set():
            progressed = False
            for session in sessions:
                while not session.outbox.empty():
                    raw = session.outbox.get_nowait()
                    if raw is None:
                        continue
                    message = bot_pb2.PlayResponse.FromString(raw) if isinstance(raw, bytes) else raw
                    if not message.HasField("update") or not message.update.HasField("request"):
                        continue
                    request = message.update.request
                    seat = message.update.seat
                    assert request == expected_request(runner, seat, request, resumed.get(request.request_id))
                    kinds.add(request.kind)
                    phases.add(request.scoring_phase)
                    assert_same_view(convert.view_from_request(request), runner, seat)
                    assert [e.sequence for e in message.update.events] == sorted(e.sequence for e in message.update.events)
                    checked += 1
                    if checked % 37 == 0:  # records are built incrementally: check them along the way
                        running = convert.result_to_wire(None, P.MATCH_STATUS_RUNNING, "running", list(runner.match.totals), 0)
                        assert runner._record(running) == expected_record(runner, running)
                        assert all(d.to_bytes() == d.to_wire().SerializeToString() for d in runner.decisions)
                    if checked % 53 == 0 and request.request_id not in resumed:
                        back = max(0, request.last_sequence - 3)
                        sent_at = runner.seats[seat].pending.sent_at
                        assert arena.resume(session, bot_pb2.Resume(match_id=runner.id, seat=seat, last_sequence=back)) is None
                        resumed[request.request_id] = math.ceil((time.monotonic() - sent_at) * 1000) + 1
                        progressed = True
                        continue
                    answer = answer_for(seat, request)
                    answer.match_id = runner.id
                    if checked % 41 == 0:
                        wrong = bot_pb2.Answer(match_id=runner.id, request_id=request.request_id, moon=P.MOON_OPTION_ADD_TO_OTHERS)
                        if request.kind == P.DECISION_KIND_MOON:
                            wrong = bot_pb2.Answer(match_id=runner.id, request_id=request.request_id)
                            wrong.play.CopyFrom(convert.card_to_wire(0))
                        rejection = arena.answer(session, wrong)
                        assert rejection is not None and rejection.code == bot_pb2.REJECTION_CODE_MALFORMED and rejection.retry
                    assert arena.answer(session, answer) is None
                    progressed = True
            if not progressed:
                await asyncio.sleep(0)
        stored = arena.store.get(runner.id)
        assert stored.record == expected_record(runner, stored.record.result)
        assert any(d.rejected for d in runner.decisions)
        assert_private_events(runner)
        await arena.shutdown(1)
        return checked, resumed, kinds, phases

    checked, resumed, kinds, phases = asyncio.run(scenario())
    assert checked > 40 and resumed
    if answer_for is shoot_the_moon:
        assert P.DECISION_KIND_MOON in kinds
    if deals == 0:
        assert phases == {1, 2}


def test_varints_and_fields():
    assert wire.varint(0) == b"\x00" and wire.varint(300) == b"\xac\x02"
    assert wire.varint(-1) == b"\xff" * 9 + b"\x01"
    assert wire.varint(1 << 20) == bytes([0x80, 0x80, 0x40])
    assert P.Trick.FromString(wire.played_card_field(3, 6, 0)).cards[0] == P.PlayedCard(seat=6, card={"suit": 1, "rank": 2})


def test_mask_card_fields_match_card_fields():
    import random

    from hearts_engine.cards import cards_of

    rng = random.Random(7)
    for mask in [0, (1 << 52) - 1, 1, 1 << 51, *(rng.getrandbits(52) & rng.getrandbits(52) for _ in range(2000))]:
        assert wire.mask_card_fields(11, mask) == wire.card_fields(11, cards_of(mask))


def test_decision_bytes_match_the_message_for_every_provenance():
    from hearts_engine import MoonAction, MoonOption, PassAction, PlayAction
    from heartsd.runner import Decision

    actions = [PlayAction(0), PlayAction(51), PassAction((0, 13, 49)), MoonAction(MoonOption.SUBTRACT_FROM_SELF)]
    for provenance in P.Provenance.values():
        for action in actions:
            for deal, seat, think, rejected in [(0, 0, 0, 0), (1, 3, 999, 1), (25, 5, 70_000, 4)]:
                decision = Decision(deal, seat, action, provenance, think, rejected)
                assert decision.to_bytes() == decision.to_wire().SerializeToString()


# -- answers read straight from their bytes (wire.play_answer) ---------------------------

def _protobuf_reading(raw: bytes) -> bot_pb2.Answer | None:
    """What protobuf reads from ``raw``: the Answer with a play, or None (not one, or not a message)."""
    try:
        message = bot_pb2.PlayRequest.FromString(raw)
    except Exception:
        return None
    if message.WhichOneof("kind") != "answer" or message.answer.WhichOneof("action") != "play":
        return None
    return message.answer


_TEXT = st.text(min_size=1, max_size=30) | st.text(max_size=70)  # mostly ids a client sends; some not
_ANSWERS = st.builds(
    lambda match_id, request_id, suit, rank, moon: bot_pb2.PlayRequest(answer=bot_pb2.Answer(
        match_id=match_id, request_id=request_id,
        play=cards_pb2.Card(suit=suit, rank=rank)) if moon is None else bot_pb2.Answer(
        match_id=match_id, request_id=request_id, moon=moon)).SerializeToString(),
    _TEXT, _TEXT, st.integers(1, 4) | st.integers(0, 200), st.integers(2, 14) | st.integers(0, 200),
    st.none() | st.none() | st.none() | st.integers(0, 3))


@settings(max_examples=2000, deadline=None)
@given(raw=_ANSWERS)
def test_a_play_answer_read_from_its_bytes_is_what_protobuf_reads(raw: bytes) -> None:
    """Every answer the fast reader takes is the answer protobuf reads from the same bytes;
    every play of a real card with both ids, as clients encode one, is taken."""
    read = wire.play_answer(raw)
    expected = _protobuf_reading(raw)
    if read is None:
        canonical = (expected is not None and expected.match_id and expected.request_id and len(raw) <= 129
                     and 1 <= expected.play.suit <= 4 and 2 <= expected.play.rank <= 14)
        assert not canonical, expected
        return
    assert expected is not None and read.to_wire() == expected
    assert read.card == convert.card_from_wire(expected.play)


def _changed(raw: bytes) -> list[bytes]:
    """Every byte of ``raw`` set to a few telling values (each key of the answer's fields,
    its neighbours, the ends of a byte, a varint's continuation), dropped, or a byte added."""
    values = {0x00, 0x01, 0x02, 0x04, 0x08, 0x0A, 0x10, 0x12, 0x18, 0x22, 0x7F, 0x80, 0xFF}
    out = []
    for i, b in enumerate(raw):
        for v in values | {(b + 1) & 0xFF, (b - 1) & 0xFF}:
            if v != b:
                out.append(raw[:i] + bytes([v]) + raw[i + 1:])
        out.append(raw[:i] + raw[i + 1:])
        out.append(raw[:i] + b"\x00" + raw[i:])
    out += [raw + b"\x00", raw + b"\x08\x01"]
    # More inside the answer, its length grown to match: an unknown field, a moon, a second
    # play (protobuf keeps the last), a second request id.
    for more in (b"\x00", b"\x30\x01", b"\x28\x01", b"\x22\x04\x08\x01\x10\x02", b"\x12\x01x", b"\x22\x00"):
        if len(raw) > 1 and raw[1] + len(more) < 128:
            out.append(raw[:1] + bytes([raw[1] + len(more)]) + raw[2:] + more)
    return out


@settings(max_examples=150, deadline=None)
@given(raw=_ANSWERS)
def test_bytes_changed_anywhere_are_read_as_protobuf_reads_them_or_left_to_it(raw: bytes) -> None:
    """A changed, dropped or added byte anywhere (a broken or hostile client): the fast
    reader either leaves the bytes to protobuf (None) or reads exactly what protobuf reads;
    never a different answer, never an exception."""
    for changed in _changed(raw):
        read = wire.play_answer(changed)
        if read is not None:
            expected = _protobuf_reading(changed)
            assert expected is not None and read.to_wire() == expected, changed.hex()
            assert read.card == convert.card_from_wire(expected.play)  # a real card, the one protobuf reads


def test_a_play_answer_that_is_not_valid_utf8_is_left_to_protobuf() -> None:
    raw = bot_pb2.PlayRequest(answer=bot_pb2.Answer(match_id="m-1", request_id="r-é",
                                                    play=cards_pb2.Card(suit=1, rank=2))).SerializeToString()
    broken = raw.replace("é".encode(), b"\xc3\x28")  # an invalid two-byte sequence, same length
    assert wire.play_answer(raw) is not None and wire.play_answer(broken) is None
    with pytest.raises(Exception):
        bot_pb2.PlayRequest.FromString(broken)  # protobuf refuses it too: the stream ends INVALID_ARGUMENT
