"""Deal scoring, the moon, match end and final ranks: each rule in one function.

These are pure functions of plain values, so the match-level rules can be tested
without playing cards:

>>> rules = Ruleset()
>>> match_outcome(rules, [DealResult(score=(26, 0, 0, 0), phase=1, shooter=None)] * 4)
Outcome(totals=(104, 0, 0, 0), ranks=(4, 1, 1, 1), winners=(1, 2, 3), deals=4)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .cards import Mask
from .ruleset import MoonOption, Ruleset


@dataclass(frozen=True)
class DealResult:
    """What one finished deal added to the totals.

    ``phase`` is 1 for an adding deal, 2 for a Hartenjagen subtracting deal.
    ``points_taken`` are the card points each seat took, before any moon handling.
    """

    score: tuple[int, ...]
    phase: int = 1
    shooter: int | None = None
    moon_option: MoonOption | None = None
    points_taken: tuple[int, ...] = ()


@dataclass(frozen=True)
class Outcome:
    """The end of a match: totals, rank per seat (1 = best, ties share), the winners."""

    totals: tuple[int, ...]
    ranks: tuple[int, ...]
    winners: tuple[int, ...]
    deals: int


def moon_shooter(rules: Ruleset, taken: Sequence[Mask]) -> int | None:
    """The seat that took every penalty card in play (and the bonus cards if required)."""
    need = rules.penalty_mask & rules.deck
    if rules.moon_requires_bonus:
        need |= rules.bonus_mask & rules.deck
    for seat, cards in enumerate(taken):
        if cards & need == need:
            return seat
    return None


def deal_score(
    rules: Ruleset,
    taken: Sequence[Mask],
    shooter: int | None,
    option: MoonOption | None,
    phase: int = 1,
) -> tuple[int, ...]:
    """Points each seat adds to its total for a finished deal.

    Moon scoring replaces only the shooter's *penalty* points; bonus cards stay
    with whoever took them. In Hartenjagen phase 2 every seat subtracts the
    penalty points it took, which for a shooter is the deal total. A seat took no
    trick exactly when it took no card.
    """
    bonus = [rules.bonus_of(m) for m in taken] if rules.bonus_mask else [0] * len(taken)
    if phase == 2:
        return tuple([b - rules.penalty_of(m) for m, b in zip(taken, bonus)])
    if shooter is None:
        extra = rules.no_trick_bonus
        return tuple([rules.penalty_of(m) + b + (0 if m else extra) for m, b in zip(taken, bonus)])
    total = rules.deal_total
    if option is MoonOption.SUBTRACT_FROM_SELF:
        return tuple([(-total if s == shooter else 0) + b for s, b in enumerate(bonus)])
    return tuple([(0 if s == shooter else total) + b for s, b in enumerate(bonus)])


def rank_seats(totals: Sequence[int], last_deal: Sequence[int] | None) -> tuple[int, ...]:
    """Rank 1 is best (lowest). Seats equal on (total, last-deal score) share a rank.

    ``last_deal=None`` ranks by total alone (Hartenjagen).
    """
    keys = [(t, last_deal[s] if last_deal is not None else 0) for s, t in enumerate(totals)]
    return tuple(1 + sum(1 for other in keys if other < key) for key in keys)


def totals_of(results: Sequence[DealResult], players: int) -> tuple[int, ...]:
    """Sum of the deal scores."""
    totals = [0] * players
    for r in results:
        for s, v in enumerate(r.score):
            totals[s] += v
    return tuple(totals)


def next_phase(rules: Ruleset, results: Sequence[DealResult]) -> int:
    """The scoring phase of the next deal: 2 once a Hartenjagen phase-1 target was reached."""
    if rules.phases is None:
        return 1
    if results and results[-1].phase == 2:
        return 2
    totals = totals_of(results, rules.players)
    return 2 if results and max(totals) >= rules.phases.phase1_target else 1


def match_outcome(rules: Ruleset, results: Sequence[DealResult], fixed_deals: int | None = None) -> Outcome | None:
    """The outcome if the match is over after ``results``, else ``None``.

    ``fixed_deals`` switches to the fixed-deals format: the match ends after that
    many deals whatever the totals, ranked like the ruleset's game.
    """
    if not results:
        return None
    n = rules.players
    totals = totals_of(results, n)
    last = results[-1].score if rules.last_deal_tie_break else None
    if fixed_deals is not None:
        return _outcome(totals, last, len(results)) if len(results) >= fixed_deals else None
    if rules.phases is None:
        return _outcome(totals, last, len(results)) if max(totals) >= rules.target else None
    if results[-1].phase != 2:
        return None
    ranks = rank_seats(totals, None)
    phase2_deals = sum(1 for r in results if r.phase == 2)
    sole_leader = ranks.count(1) == 1
    if (min(totals) <= 0 and sole_leader) or phase2_deals >= rules.phases.phase2_cap:
        return _outcome(totals, None, len(results))
    return None


def _outcome(totals: tuple[int, ...], last: Sequence[int] | None, deals: int) -> Outcome:
    ranks = rank_seats(totals, last)
    return Outcome(totals, ranks, tuple(s for s, r in enumerate(ranks) if r == 1), deals)


def default_moon_option(
    rules: Ruleset,
    results: Sequence[DealResult],
    deal: DealResult,
    fixed_deals: int | None = None,
) -> MoonOption:
    """The classic timeout default for a moon whose ``deal`` result used ADD_TO_OTHERS.

    "+26 to every other seat", unless that would end the match without the shooter
    as the sole winner; then "-26 to own score".
    """
    outcome = match_outcome(rules, [*results, deal], fixed_deals)
    if outcome is None or outcome.winners == (deal.shooter,):
        return MoonOption.ADD_TO_OTHERS
    return MoonOption.SUBTRACT_FROM_SELF
