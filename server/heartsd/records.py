"""Stored records: re-verification with the engine and a readable trick-by-trick view."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from hearts_engine import Match, MatchRecord, PassAction, PlayAction, card_symbol, replay, verify_record
from hearts_engine.cards import mask_of
from hearts_engine.errors import RecordError

from heartsbot.proto import game_pb2
from heartsbot import convert
from .runner import STATUS_NAMES
from .store import StoredMatch

P = game_pb2
PROVENANCE = {v: k.removeprefix("PROVENANCE_").lower() for k, v in P.Provenance.items()}


def verify(stored: StoredMatch, results: Sequence[tuple[str, int, int, int]] = ()) -> str | None:
    """``None`` if the stored match is what its record replays to, else the problem.

    Checked against the engine's replay of the record's seed and actions: every decision,
    the hands as dealt, every deal's score, the result (totals, ranks and winners of a
    finished match; the totals so far of one that ended early, which must not have reached
    its end); and against the record: the row's status, seats, ruleset, totals and stored
    result, and ``results`` (the ladder's rows of the match: bot, seat, rank, points; if
    any, one for every seat).
    Before (an attack pass), only the decisions, the seed and a finished match's totals and
    winners were checked: reversed ranks, forged hands, deal scores or seat names, a status
    flipped to aborted with other totals, and edited ladder rows all passed."""
    record = stored.record
    if record is None:
        return f"no record ({stored.status}: {stored.reason})"
    replayed: list[Match] = []
    dealt: dict[int, list[int]] = {}  # the hands (masks) each deal started with

    def observe(match: Match) -> None:
        if not replayed:
            replayed.append(match)
        if not match.is_over and match.deal.number not in dealt:
            dealt[match.deal.number] = list(match.deal.dealt)

    try:
        engine = MatchRecord.from_json(record.engine_record_json)
        outcome = verify_record(engine, observe)  # one replay: the actions, the outcome, and `dealt`
    except (RecordError, ValueError) as exc:
        return f"does not replay: {exc}"
    match = replayed[0]
    if len(engine.actions) != len(record.decisions):
        return f"{len(record.decisions)} decisions recorded but the engine record has {len(engine.actions)}"
    for index, (step, decision) in enumerate(zip(engine.actions, record.decisions)):
        if step.seat != decision.seat or step.deal != decision.deal_number or _action_cards(step.action) != convert.cards_from_wire(decision.cards):
            return f"decision {index} differs from the engine record"
    if record.engine_record_json and engine.seed != record.seed:
        return "seed differs"
    if record.ruleset.name != engine.rules.name or stored.ruleset != engine.rules.name:
        return f"ruleset differs: the record says {record.ruleset.name!r}, the row {stored.ruleset!r}, the replay " \
               f"{engine.rules.name!r}"
    names = [s.name for s in record.seats]
    if names != list(stored.seats):
        return f"seats differ: the record has {names}, the row {list(stored.seats)}"
    for deal in record.deals:
        hands = [mask_of(convert.cards_from_wire(h.cards)) for h in deal.hands]
        if dealt.get(deal.deal_number) != hands:
            return f"the hands recorded as dealt in deal {deal.deal_number} are not the seed's"
    scores = [convert.deal_score_to_wire(n, r) for n, r in enumerate(match.results)]
    if list(record.deal_scores) != scores:
        return "the recorded deal scores differ from the replayed ones"
    result = record.result
    if result.status == P.MATCH_STATUS_FINISHED:
        if outcome is None:
            return "marked finished but the match does not reach its end"
        if tuple(result.totals) != outcome.totals or tuple(result.winners) != outcome.winners:
            return f"stored result {tuple(result.totals)} differs from the replayed {outcome.totals}"
        if tuple(result.ranks) != outcome.ranks:
            return f"stored ranks {tuple(result.ranks)} differ from the replayed {outcome.ranks}"
    else:
        if outcome is not None:
            return f"marked {STATUS_NAMES.get(result.status, result.status)} but the replay reaches the match's end"
        if tuple(result.totals) != match.totals:
            return f"stored totals {tuple(result.totals)} differ from the replayed {match.totals}"
    if STATUS_NAMES.get(result.status) != stored.status:
        return f"the row says {stored.status} but the record {STATUS_NAMES.get(result.status, result.status)}"
    if list(stored.totals) != list(result.totals):
        return f"the row's totals {list(stored.totals)} differ from the record's {list(result.totals)}"
    if stored.result is not None and stored.result != result:
        return "the row's stored result differs from the record's"
    if results and result.status != P.MATCH_STATUS_FINISHED:  # its result has no ranks to compare with
        return f"the ladder rated it, but it did not finish ({STATUS_NAMES.get(result.status, result.status)})"
    held = sorted(seat for _, seat, _, _ in results)
    if held and held != list(range(len(names))):  # rated without a seat: its result would be another match's
        return f"the ladder rated it with the results of seat(s) {held} of its {len(names)}, not every seat"
    for bot, seat, rank, points in results:
        if not 0 <= seat < len(names) or names[seat] != bot or rank != result.ranks[seat] or \
                points != result.totals[seat]:
            return f"the ladder's result of {bot!r} (seat {seat}, rank {rank}, {points} points) differs from the record"
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

