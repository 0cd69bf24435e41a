"""Stored records: re-verification with the engine and a readable trick-by-trick view."""

from __future__ import annotations

from collections.abc import Iterator

from hearts_engine import MatchRecord, PassAction, PlayAction, card_symbol, replay, verify_record
from hearts_engine.errors import RecordError

from heartsbot.proto import game_pb2
from heartsbot import convert
from .store import StoredMatch

P = game_pb2
PROVENANCE = {v: k.removeprefix("PROVENANCE_").lower() for k, v in P.Provenance.items()}


def verify(stored: StoredMatch) -> str | None:
    """``None`` if the stored record replays to its stored result, else the problem."""
    record = stored.record
    if record is None:
        return f"no record ({stored.status}: {stored.reason})"
    try:
        engine = MatchRecord.from_json(record.engine_record_json)
        outcome = verify_record(engine)
    except (RecordError, ValueError) as exc:
        return f"does not replay: {exc}"
    if len(engine.actions) != len(record.decisions):
        return f"{len(record.decisions)} decisions recorded but the engine record has {len(engine.actions)}"
    for index, (step, decision) in enumerate(zip(engine.actions, record.decisions)):
        if step.seat != decision.seat or step.deal != decision.deal_number or _action_cards(step.action) != convert.cards_from_wire(decision.cards):
            return f"decision {index} differs from the engine record"
    if record.engine_record_json and engine.seed != record.seed:
        return "seed differs"
    result = record.result
    if result.status == P.MATCH_STATUS_FINISHED:
        if outcome is None:
            return "marked finished but the match does not reach its end"
        if tuple(result.totals) != outcome.totals or tuple(result.winners) != outcome.winners:
            return f"stored result {tuple(result.totals)} differs from the replayed {outcome.totals}"
    return None


def _action_cards(action: object) -> list[int]:
    if isinstance(action, PlayAction):
        return [action.card]
    if isinstance(action, PassAction):
        return sorted(action.cards)
    return []


def show(stored: StoredMatch) -> Iterator[str]:
    """Lines of a readable record: hands, passes, tricks and the score sheet."""
    record = stored.record
    yield f"match {stored.id}: {stored.ruleset}, {stored.players} players, {stored.status} ({stored.reason})"
    if record is None:
        return
    names = [s.name for s in record.seats]
    yield "seats: " + ", ".join(f"{i} {n}" for i, n in enumerate(names))
    yield f"seed {record.seed}, {len(record.decisions)} decisions"
    engine = MatchRecord.from_json(record.engine_record_json)
    match = replay(engine)
    decisions = list(record.decisions)
    steps = list(engine.actions)
    deal_numbers = sorted({s.deal for s in steps})
    index = 0
    for number in deal_numbers:
        yield ""
        yield f"== deal {number} =="
        dealt = next((d for d in record.deals if d.deal_number == number), None)
        if dealt is not None:
            for seat, hand in enumerate(dealt.hands):
                yield f"  {names[seat]:>16}: " + " ".join(card_symbol(c) for c in convert.cards_from_wire(hand.cards))
        trick: list[str] = []
        while index < len(steps) and steps[index].deal == number:
            step, decision = steps[index], decisions[index]
            tag = "" if decision.provenance in (P.PROVENANCE_BOT, P.PROVENANCE_HOUSE, P.PROVENANCE_HUMAN) else f" [{PROVENANCE[decision.provenance]}]"
            if isinstance(step.action, PassAction):
                yield f"  {names[step.seat]} passes " + " ".join(card_symbol(c) for c in step.action.cards) + tag
            elif isinstance(step.action, PlayAction):
                trick.append(f"{names[step.seat]} {card_symbol(step.action.card)}{tag}")
                if len(trick) == len(names):
                    yield "  trick: " + ", ".join(trick)
                    trick = []
            else:
                yield f"  {names[step.seat]} chooses {step.action}{tag}"
            index += 1
        if trick:
            yield "  trick (unfinished): " + ", ".join(trick)
        score = next((d for d in record.deal_scores if d.deal_number == number), None)
        if score is not None:
            moon = f", moon by {names[score.shooter]}" if score.shooter >= 0 else ""
            yield "  points: " + ", ".join(f"{names[s]} {p:+d}" for s, p in enumerate(score.points)) + moon
    yield ""
    yield match.score_sheet(names)
    result = record.result
    yield f"result: {P.MatchStatus.Name(result.status).removeprefix('MATCH_STATUS_').lower()} ({result.reason})"

