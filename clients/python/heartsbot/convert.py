"""The only module that knows both the wire types (``hearts.v1``) and the engine's.

Cards are engine ints ``suit * 13 + rank`` on one side and ``Card(suit, rank)`` with
``Suit`` 1..4 and ``Rank`` 2..14 on the other. Messages built again and again (cards,
completed tricks) are built once and copied.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from hearts_engine import (
    DealResult,
    Phase,
    SeatView,
    card_name,
    MatchFormat,
    MoonOption,
    Outcome,
    PassDirection,
    Ruleset,
    Trick,
)
from hearts_engine.errors import InvalidActionError

from .proto import bot_pb2, cards_pb2, game_pb2

CARD_MESSAGES: tuple[cards_pb2.Card, ...] = tuple(
    cards_pb2.Card(suit=c // 13 + 1, rank=c % 13 + 2) for c in range(52)
)

PASS_DIRECTIONS = {
    PassDirection.LEFT: game_pb2.PASS_DIRECTION_LEFT,
    PassDirection.RIGHT: game_pb2.PASS_DIRECTION_RIGHT,
    PassDirection.ACROSS: game_pb2.PASS_DIRECTION_ACROSS,
    PassDirection.HOLD: game_pb2.PASS_DIRECTION_HOLD,
}
MOON_OPTIONS = {
    MoonOption.ADD_TO_OTHERS: game_pb2.MOON_OPTION_ADD_TO_OTHERS,
    MoonOption.SUBTRACT_FROM_SELF: game_pb2.MOON_OPTION_SUBTRACT_FROM_SELF,
}
MOON_FROM_WIRE = {v: k for k, v in MOON_OPTIONS.items()}


def card_to_wire(card: int) -> cards_pb2.Card:
    return CARD_MESSAGES[card]


def cards_to_wire(cards: Iterable[int]) -> list[cards_pb2.Card]:
    return [CARD_MESSAGES[c] for c in cards]


def card_from_wire(card: cards_pb2.Card) -> int:
    """The engine card of a wire card; :class:`InvalidActionError` if it is not one."""
    suit, rank = card.suit, card.rank
    if not 1 <= suit <= 4 or not 2 <= rank <= 14:
        raise InvalidActionError(f"not a card: suit {suit}, rank {rank} (suits 1-4, ranks 2-14)")
    return (suit - 1) * 13 + rank - 2


def cards_from_wire(cards: Iterable[cards_pb2.Card]) -> list[int]:
    return [card_from_wire(c) for c in cards]


def moon_option_from_wire(value: int) -> MoonOption:
    try:
        return MOON_FROM_WIRE[value]
    except KeyError:
        raise InvalidActionError(f"not a moon option: {value}") from None


def ruleset_to_wire(rules: Ruleset) -> game_pb2.Ruleset:
    phases = rules.phases
    return game_pb2.Ruleset(
        name=rules.name,
        players=rules.players,
        removed_cards=cards_to_wire(rules.removed_cards),
        hand_size=rules.hand_size,
        pass_count=rules.pass_count,
        pass_schedule=[PASS_DIRECTIONS[d] for d in rules.pass_schedule],
        first_trick_no_points=rules.first_trick_no_points,
        hearts_lead_restricted=rules.hearts_lead_restricted,
        hearts_break=rules.hearts_break.value,
        queen_breaks_hearts=rules.queen_breaks_hearts,
        lead_heart_instead_of_queen=rules.lead_heart_instead_of_queen,
        heart_points=rules.heart_points,
        card_values=[game_pb2.CardValue(card=CARD_MESSAGES[c], points=v) for c, v in rules.card_points],
        moon=rules.moon.value,
        moon_requires_bonus=rules.moon_requires_bonus,
        no_trick_bonus=rules.no_trick_bonus,
        target=rules.target,
        phase1_target=phases.phase1_target if phases else 0,
        phase2_cap=phases.phase2_cap if phases else 0,
        last_deal_tie_break=rules.last_deal_tie_break,
        deal_total=rules.deal_total,
        first_lead=CARD_MESSAGES[rules.first_lead],
        first_trick_fallback=rules.first_trick_fallback.value,
    )


PASS_FROM_WIRE = {v: k for k, v in PASS_DIRECTIONS.items()}


def ruleset_from_wire(pb: game_pb2.Ruleset) -> Ruleset:
    """The engine ruleset a request describes (``RulesetError`` if it is inconsistent)."""
    return Ruleset.from_dict({
        "name": pb.name,
        "players": pb.players,
        "removed_cards": [card_name(c) for c in cards_from_wire(pb.removed_cards)],
        "pass_count": pb.pass_count,
        "pass_schedule": [PASS_FROM_WIRE[d].value for d in pb.pass_schedule],
        "first_trick_no_points": pb.first_trick_no_points,
        "first_trick_fallback": pb.first_trick_fallback or "any_card",
        "hearts_lead_restricted": pb.hearts_lead_restricted,
        "hearts_break": pb.hearts_break,
        "queen_breaks_hearts": pb.queen_breaks_hearts,
        "lead_heart_instead_of_queen": pb.lead_heart_instead_of_queen,
        "heart_points": pb.heart_points,
        "card_points": {card_name(card_from_wire(v.card)): v.points for v in pb.card_values},
        "moon": pb.moon,
        "moon_requires_bonus": pb.moon_requires_bonus,
        "no_trick_bonus": pb.no_trick_bonus,
        "target": pb.target,
        "phases": {"phase1_target": pb.phase1_target, "phase2_cap": pb.phase2_cap} if pb.phase1_target else None,
        "last_deal_tie_break": pb.last_deal_tie_break,
    })


_PHASE_OF_KIND = {
    game_pb2.DECISION_KIND_PASS: Phase.PASSING,
    game_pb2.DECISION_KIND_PLAY: Phase.PLAYING,
    game_pb2.DECISION_KIND_MOON: Phase.MOON_CHOICE,
}


def view_from_request(request: bot_pb2.DecisionRequest, rules: Ruleset | None = None) -> SeatView:
    """The engine's :class:`SeatView` of a decision request, so one strategy runs the same
    in the server (house bots) and in a client. Pass ``rules`` to skip re-parsing them."""
    rules = rules or ruleset_from_wire(request.ruleset)
    seat = request.your_seat
    tricks = tuple(
        Trick(t.leader, tuple(card_from_wire(p.card) for p in t.cards), t.winner) for t in request.tricks
    )
    current = request.current_trick
    phase = _PHASE_OF_KIND[request.kind]
    won = [0] * rules.players
    for t in tricks:
        won[t.winner] += 1
    return SeatView(
        seat=seat,
        rules=rules,
        deal_number=request.deal_number,
        pass_direction=PASS_FROM_WIRE[request.pass_direction],
        phase=phase,
        hand=tuple(sorted(cards_from_wire(request.hand))),
        passed=tuple(sorted(cards_from_wire(request.passed))) or None,
        received=tuple(sorted(cards_from_wire(request.received))) or None,
        tricks=tricks,
        trick=tuple(card_from_wire(p.card) for p in current.cards),
        trick_leader=current.leader if current.cards else -1,
        to_act=(seat,),
        legal=tuple(sorted(cards_from_wire(request.legal_cards))),
        hand_sizes=tuple(request.hand_sizes),
        points_taken=tuple(request.points_taken),
        tricks_won=tuple(won),
        hearts_broken=request.hearts_broken,
        broken_trick=request.hearts_broken_trick if request.hearts_broken else -1,
        scoring_phase=request.scoring_phase or 1,
        shooter=seat if phase is Phase.MOON_CHOICE else None,
        moon_option=None,
        deal_score=None,
        totals=tuple(request.totals),
        deal_scores=tuple(tuple(d.points) for d in request.deal_scores),
    )


def format_to_wire(fmt: MatchFormat) -> game_pb2.MatchFormat:
    return game_pb2.MatchFormat(fixed_deals=fmt.deals or 0, duplicate=fmt.duplicate)


def format_from_wire(fmt: game_pb2.MatchFormat) -> MatchFormat:
    if fmt.fixed_deals < 0:
        raise ValueError(f"fixed_deals must not be negative, got {fmt.fixed_deals}")
    if fmt.fixed_deals == 0:
        if fmt.duplicate:
            raise ValueError("duplicate seating needs fixed_deals")
        return MatchFormat.game()
    return MatchFormat.fixed(fmt.fixed_deals, fmt.duplicate)


def trick_to_wire(number: int, trick: Trick, players: int) -> game_pb2.Trick:
    return game_pb2.Trick(
        number=number,
        leader=trick.leader,
        winner=trick.winner,
        cards=[
            game_pb2.PlayedCard(seat=(trick.leader + i) % players, card=CARD_MESSAGES[c])
            for i, c in enumerate(trick.cards)
        ],
    )


def open_trick_to_wire(number: int, leader: int, cards: Sequence[int], players: int) -> game_pb2.Trick:
    return game_pb2.Trick(
        number=number,
        leader=leader,
        winner=-1,
        cards=[game_pb2.PlayedCard(seat=(leader + i) % players, card=CARD_MESSAGES[c]) for i, c in enumerate(cards)],
    )


def deal_score_to_wire(number: int, result: DealResult) -> game_pb2.DealScore:
    return game_pb2.DealScore(
        deal_number=number,
        points=result.score,
        points_taken=result.points_taken,
        shooter=-1 if result.shooter is None else result.shooter,
        moon_option=MOON_OPTIONS.get(result.moon_option, 0) if result.moon_option else 0,
        phase=result.phase,
    )


def result_to_wire(outcome: Outcome | None, status: int, reason: str, totals: Sequence[int], deals: int) -> game_pb2.MatchResult:
    if outcome is None:
        return game_pb2.MatchResult(status=status, totals=totals, deals=deals, reason=reason)
    return game_pb2.MatchResult(
        status=status,
        totals=outcome.totals,
        ranks=outcome.ranks,
        winners=outcome.winners,
        deals=outcome.deals,
        reason=reason,
    )
