"""The only module that knows both the wire types (``hearts.v1``) and the engine's.

Cards are engine ints ``suit * 13 + rank`` on one side and ``Card(suit, rank)`` with
``Suit`` 1..4 and ``Rank`` 2..14 on the other. Messages built again and again (cards,
completed tricks) are built once and copied.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from hearts.v1 import cards_pb2, game_pb2

from hearts_engine import (
    DealResult,
    MatchFormat,
    MoonOption,
    Outcome,
    PassDirection,
    Ruleset,
    Trick,
)
from hearts_engine.errors import InvalidActionError

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
