"""What one seat may know, and full deals sampled to be consistent with it.

:func:`seat_view` is the only gate between the full state and a seat: it copies
the seat's own hand, its own pass, the cards it received (only once every seat
has passed) and public play. Nothing in a :class:`SeatView` depends on another
seat's unplayed cards.

:func:`sample_hands` deals the unseen cards to the other seats at random,
respecting everything the view shows: hand sizes, the cards this seat passed,
suits a seat has shown void in, and the all-hearts / only-penalty-cards
inferences the lead and first-trick rules allow. :func:`determinize` turns that
into a :class:`~hearts_engine.deal.Deal` to search from.

>>> import random
>>> from hearts_engine.presets import preset
>>> from hearts_engine.deal import Deal
>>> deal = Deal.shuffled(preset("standard"), seed=5, number=3)
>>> view = seat_view(deal, 2)
>>> len(view.hand), view.received
(13, None)
>>> sampled = determinize(view, random.Random(0))
>>> sampled.hands[2] == deal.hands[2]
True
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from .cards import HEARTS, QUEEN_OF_SPADES, SUIT_MASKS, SUIT_OF, Card, Mask, cards_of, mask_of
from .deal import Deal, Phase, Trick, deal_at_position
from .ruleset import FirstTrickFallback, MoonOption, PassDirection, Ruleset


@dataclass(frozen=True)
class SeatView:
    """Everything one seat may know about the current deal (and the match so far)."""

    seat: int
    rules: Ruleset
    deal_number: int
    pass_direction: PassDirection
    phase: Phase
    hand: tuple[Card, ...]
    passed: tuple[Card, ...] | None
    received: tuple[Card, ...] | None
    tricks: tuple[Trick, ...]
    trick: tuple[Card, ...]
    trick_leader: int
    to_act: tuple[int, ...]
    legal: tuple[Card, ...]
    hand_sizes: tuple[int, ...]
    points_taken: tuple[int, ...]
    tricks_won: tuple[int, ...]
    hearts_broken: bool
    broken_trick: int
    scoring_phase: int
    shooter: int | None
    moon_option: MoonOption | None
    deal_score: tuple[int, ...] | None
    totals: tuple[int, ...]
    deal_scores: tuple[tuple[int, ...], ...]

    @property
    def players(self) -> int:
        return self.rules.players


def seat_view(
    deal: Deal,
    seat: int,
    totals: Sequence[int] | None = None,
    deal_scores: Sequence[Sequence[int]] = (),
) -> SeatView:
    """The view of ``seat``. ``totals`` and ``deal_scores`` are the match's, before this deal."""
    rules = deal.rules
    n = rules.players
    own_pass = deal.passed[seat]
    received = deal.received_by(seat)
    if deal.phase is Phase.PASSING:
        legal = deal.passable(seat)
    elif deal.phase is Phase.PLAYING:
        legal = deal.legal_plays(seat)
    else:
        legal = ()
    played_by = [0] * n
    for t in deal.tricks:
        for i, c in enumerate(t.cards):
            played_by[t.seat_of(i, n)] += 1
    for i, _ in enumerate(deal.trick):
        played_by[(deal.trick_leader + i) % n] += 1
    return SeatView(
        seat=seat,
        rules=rules,
        deal_number=deal.number,
        pass_direction=deal.pass_direction,
        phase=deal.phase,
        hand=cards_of(deal.hands[seat]),
        passed=None if own_pass is None else cards_of(own_pass),
        received=None if received is None else cards_of(received),
        tricks=tuple(deal.tricks),
        trick=tuple(deal.trick),
        trick_leader=deal.trick_leader if deal.trick else -1,
        to_act=deal.to_act(),
        legal=legal,
        hand_sizes=tuple(rules.hand_size - played_by[s] for s in range(n)),
        points_taken=tuple(rules.points_of(t) for t in deal.taken),
        tricks_won=tuple(deal.tricks_won),
        hearts_broken=deal.hearts_broken,
        broken_trick=deal.broken_trick,
        scoring_phase=deal.scoring_phase,
        shooter=deal.shooter if deal.phase in (Phase.MOON_CHOICE, Phase.SCORED) else None,
        moon_option=deal.moon_option,
        deal_score=deal.score,
        totals=tuple(totals) if totals is not None else (0,) * n,
        deal_scores=tuple(tuple(x) for x in deal_scores),
    )


def excluded_cards(view: SeatView) -> list[Mask]:
    """Per seat, the cards the view proves that seat does not hold now."""
    rules = view.rules
    n = rules.players
    excluded = [0] * n
    hearts = SUIT_MASKS[HEARTS]
    only_hearts = rules.deck & ~hearts
    if rules.lead_heart_instead_of_queen:
        only_hearts &= ~(1 << QUEEN_OF_SPADES)
    first_trick_inference = (
        rules.first_trick_no_points and rules.first_trick_fallback is FirstTrickFallback.ANY_CARD
    )
    all_tricks = [(t.leader, t.cards) for t in view.tricks]
    if view.trick:
        all_tricks.append((view.trick_leader, view.trick))
    for number, (leader, cards) in enumerate(all_tricks):
        led = SUIT_OF[cards[0]]
        unbroken = view.broken_trick < 0 or view.broken_trick >= number
        if number > 0 and rules.hearts_lead_restricted and unbroken and led == HEARTS:
            excluded[leader] |= only_hearts  # a heart led before hearts broke: held nothing else
        for i, c in enumerate(cards[1:], start=1):
            seat = (leader + i) % n
            if SUIT_OF[c] != led:
                excluded[seat] |= SUIT_MASKS[led]
                if number == 0 and first_trick_inference and (1 << c) & rules.penalty_mask:
                    excluded[seat] |= rules.deck & ~rules.penalty_mask  # held only penalty cards
    return excluded


def sample_hands(view: SeatView, rng: random.Random) -> list[Mask]:
    """Current hands of every seat, random but consistent with ``view``."""
    if view.phase is not Phase.PLAYING:
        raise ValueError("hands can be sampled only while the deal is being played")
    rules = view.rules
    n = rules.players
    me = view.seat
    my_hand = mask_of(view.hand)
    played = mask_of(c for t in view.tricks for c in t.cards) | mask_of(view.trick)
    known = [0] * n
    known[me] = my_hand
    if view.passed is not None and view.pass_direction is not PassDirection.HOLD:
        receiver = (me + view.pass_direction.offset(n)) % n
        known[receiver] |= mask_of(view.passed) & ~played
    excluded = excluded_cards(view)
    need = [view.hand_sizes[s] - known[s].bit_count() for s in range(n)]
    unknown = rules.deck & ~played & ~mask_of(c for m in known for c in cards_of(m))
    allowed = [rules.deck & ~excluded[s] if s != me else 0 for s in range(n)]
    assignment = _assign(cards_of(unknown), need, allowed, rng)
    return [known[s] | assignment[s] for s in range(n)]


def _assign(cards: Sequence[Card], need: list[int], allowed: list[Mask], rng: random.Random) -> list[Mask]:
    """Give each card to a seat that may hold it, filling ``need`` exactly.

    A randomized most-constrained-first greedy pass almost always succeeds; if it
    paints itself into a corner a few times, an augmenting-path matching finds an
    assignment whenever one exists.
    """
    n = len(need)
    eligible = {c: [s for s in range(n) if allowed[s] >> c & 1] for c in cards}
    order = list(cards)
    for _ in range(20):
        rng.shuffle(order)
        order.sort(key=lambda c: len(eligible[c]))
        left = list(need)
        result = [0] * n
        for c in order:
            options = [s for s in eligible[c] if left[s] > 0]
            if not options:
                break
            seat = rng.choices(options, weights=[left[s] for s in options])[0]
            left[seat] -= 1
            result[seat] |= 1 << c
        else:
            return result
    return _assign_by_matching(order, need, eligible)


def _assign_by_matching(cards: Sequence[Card], need: list[int], eligible: dict[Card, list[int]]) -> list[Mask]:
    slots = [s for s in range(len(need)) for _ in range(need[s])]
    owner: dict[int, Card] = {}  # slot index -> card

    def place(c: Card, seen: set[int]) -> bool:
        for i, s in enumerate(slots):
            if s in eligible[c] and i not in seen:
                seen.add(i)
                if i not in owner or place(owner[i], seen):
                    owner[i] = c
                    return True
        return False

    for c in cards:
        if not place(c, set()):
            raise ValueError("no deal is consistent with this view")
    result = [0] * len(need)
    for i, c in owner.items():
        result[slots[i]] |= 1 << c
    return result


def determinize(view: SeatView, rng: random.Random) -> Deal:
    """A :class:`Deal` at the view's position with the unseen cards sampled."""
    return deal_at_position(
        view.rules,
        sample_hands(view, rng),
        view.tricks,
        view.trick,
        view.trick_leader,
        view.broken_trick,
        view.deal_number,
        view.pass_direction,
        view.scoring_phase,
    )

