"""One deal: simultaneous passing, trick play, the moon choice, scoring.

Two tiers, as in python-chess: checked entry points (:meth:`Deal.pass_cards`,
:meth:`Deal.play`, :meth:`Deal.choose_moon`, :meth:`Deal.apply`) that raise typed
:class:`~hearts_engine.errors.ActionError` subclasses for untrusted input, and
unchecked ``push_*`` methods for search code that already knows a move is legal.

>>> from hearts_engine.presets import preset
>>> deal = Deal.shuffled(preset("standard"), seed=7, number=3)   # deal 3 holds
>>> deal.phase, card_name(deal.legal_plays(deal.turn)[0])
(<Phase.PLAYING: 'playing'>, '2C')
>>> import random
>>> score = deal.playout(random.Random(1))
>>> sum(score) in (26, 78)    # 26 points, or a moon: 0 + 3 * 26
True
"""

from __future__ import annotations

import enum
import random
from collections.abc import Iterable, Sequence
from typing import Final, NamedTuple, cast

from .actions import Action, MoonAction, PassAction, PlayAction
from .cards import (
    CARDS_BY_SUIT_PATTERN,
    DECK_SIZE,
    HEARTS,
    QUEEN_OF_SPADES,
    SUIT_MASKS,
    SUIT_OF,
    Card,
    Mask,
    card_name,
    cards_of,
    lowest,
    mask_of,
)
from .errors import IllegalActionError, InvalidActionError, NotYourTurnError, WrongPhaseError
from .ruleset import FirstTrickFallback, HeartsBreak, MoonOption, MoonScoring, PassDirection, Ruleset
from .scoring import deal_score, moon_shooter
from .shuffle import deal_hands

HEARTS_MASK: Final = SUIT_MASKS[HEARTS]
QUEEN_BIT: Final = 1 << QUEEN_OF_SPADES
SUIT_NAMES: Final = ("clubs", "diamonds", "hearts", "spades")


class Unplayable(NamedTuple):
    """Why a card of the hand of the seat to play is not among its legal cards: a
    ``reason`` (one of UNPLAYABLE_REASONS) and the card or suit it names (-1 if none).
    ``str()`` is the refusal's text; a page translates the reason and its parameters.

    >>> str(Unplayable("follow_suit", suit=0))
    'you must follow clubs'
    """

    reason: str
    card: int = -1
    suit: int = -1

    def __str__(self) -> str:
        name = card_name(self.card) if self.card >= 0 else ""
        suit = SUIT_NAMES[self.suit] if self.suit >= 0 else ""
        return UNPLAYABLE_REASONS[self.reason].format(card=name, suit=suit)


UNPLAYABLE_REASONS: Final = {
    "follow_suit": "you must follow {suit}",
    "first_trick": "{card} may not be played on the first trick",
    "first_lead": "the first lead must be {card}",
    "lead_queen": "with only hearts and the queen of spades, lead the queen of spades",
    "hearts_not_broken": "hearts are not broken yet",
}


def why_unplayable(card: Card, hand: Mask, legal: Mask, led_suit: int, first_trick: bool) -> Unplayable:
    """Why ``card`` of ``hand`` may not be played when only ``legal`` may: ``led_suit`` is
    the suit led to the trick in progress (-1 to lead it), ``first_trick`` whether no
    trick of the deal is complete. The one explanation of a refused play, from what the
    seat to play knows (its hand, its legal cards, the public table): the checked
    :meth:`Deal.play` raises it, and a person's page shows it before a card is sent.
    Only meaningful for a card in ``hand`` and not in ``legal``.

    >>> from hearts_engine import parse_card, parse_cards
    >>> hand = mask_of(parse_cards("2C 8D QS AH"))
    >>> str(why_unplayable(parse_card("8D"), hand, mask_of([parse_card("2C")]), 0, False))
    'you must follow clubs'
    >>> why_unplayable(parse_card("AH"), hand, mask_of(parse_cards("2C 8D QS")), -1, False).reason
    'hearts_not_broken'
    """
    if led_suit >= 0 and hand & SUIT_MASKS[led_suit]:
        return Unplayable("follow_suit", suit=led_suit)
    if led_suit >= 0:
        return Unplayable("first_trick", card=card)
    if first_trick:
        return Unplayable("first_lead", card=lowest(legal))
    if hand & ~HEARTS_MASK == QUEEN_BIT:
        return Unplayable("lead_queen")
    return Unplayable("hearts_not_broken")


class Phase(enum.Enum):
    PASSING = "passing"
    PLAYING = "playing"
    MOON_CHOICE = "moon_choice"
    SCORED = "scored"


# The phases as module constants: the hot paths compare against these (a global load,
# where ``Phase.PASSING`` is a slower class-attribute lookup through the enum metaclass).
# Being Final, the compiled build (mypyc) reads them, and every constant here, without a
# dictionary lookup.
_PASSING: Final = Phase.PASSING
_PLAYING: Final = Phase.PLAYING
_MOON_CHOICE: Final = Phase.MOON_CHOICE
_SCORED: Final = Phase.SCORED
_HOLD: Final = PassDirection.HOLD
_DISCARD: Final = HeartsBreak.DISCARD


class Trick(NamedTuple):
    """A completed trick: who led, the cards in play order, who won it."""

    leader: int
    cards: tuple[Card, ...]
    winner: int

    def seat_of(self, index: int, players: int) -> int:
        """The seat that played ``cards[index]``."""
        return (self.leader + index) % players


_BIT: Final = tuple(1 << c for c in range(DECK_SIZE))
_SUIT_SHIFT: Final = (0, 13, 26, 39)
_new_trick: Final = tuple.__new__  # builds a Trick without NamedTuple's Python-level __new__


class Deal:
    """The state of one deal. Seats are ``0 .. players - 1``, clockwise.

    Public attributes are for reading; change the state only through the action
    methods. :func:`hearts_engine.views.seat_view` is the gate for what a seat may see.
    """

    __slots__ = (
        "rules",
        "players",
        "number",
        "pass_direction",
        "scoring_phase",
        "dealt",
        "hands",
        "passed",
        "phase",
        "turn",
        "trick",
        "trick_leader",
        "led_suit",
        "trick_mask",
        "tricks",
        "taken",
        "played",
        "hearts_broken",
        "broken_trick",
        "shooter",
        "moon_option",
        "score",
        "_pending_passes",
        "_lead_restricted",
        "_first_trick_restricted",
        "_break_needs_discard",
        "_breakers",
        "_penalty",
        "_legal",
        "_legal_cards",
        "is_over",
    )
    _legal_cards: tuple[Card, ...]

    def __new__(cls, *args: object, **kwargs: object) -> Deal:
        """Only allocates: ``Deal.__new__(Deal)`` is a blank deal that the constructors
        below fill in without re-checking what they know (spelled out, rather than left
        to ``object.__new__``, so that the compiled build allows it too)."""
        return super().__new__(cls)

    def __init__(
        self,
        rules: Ruleset,
        hands: Sequence[Mask],
        pass_direction: PassDirection = PassDirection.HOLD,
        number: int = 0,
        scoring_phase: int = 1,
    ) -> None:
        """Set up a deal from explicit hands (tests, puzzles, replaying a position).

        ``hands`` must partition the ruleset's deck into equal hands.
        """
        n = rules.players
        if len(hands) != n:
            raise InvalidActionError(f"expected {n} hands, got {len(hands)}")
        union = 0
        for h in cast("Sequence[object]", hands):  # untrusted: checked item by item
            if type(h) is not int or h & union or h.bit_count() != rules.hand_size:
                raise InvalidActionError(f"hands must be disjoint and hold {rules.hand_size} cards each")
            union |= h
        if union != rules.deck:
            raise InvalidActionError("hands must hold exactly the cards of the ruleset's deck")
        self._setup(rules, hands, pass_direction, number, scoring_phase)

    def _setup(
        self,
        rules: Ruleset,
        hands: Sequence[Mask],
        pass_direction: PassDirection,
        number: int,
        scoring_phase: int,
    ) -> None:
        n = rules.players
        self.rules = rules
        self.players = n
        self.number = number
        self.pass_direction = pass_direction
        self.scoring_phase = scoring_phase
        self.dealt = tuple(hands)
        self.hands = list(hands)
        self.passed: list[Mask | None] = [None] * n
        self.trick: list[Card] = []
        self.trick_leader = -1
        self.led_suit = -1
        self.trick_mask = 0
        self.tricks: list[Trick] = []
        self.taken = [0] * n
        self.played = 0
        self.hearts_broken = False
        self.broken_trick = -1  # index of the trick in which hearts were broken
        self.shooter: int | None = None
        self.moon_option: MoonOption | None = None
        self.score: tuple[int, ...] | None = None
        self.is_over = False  # True once the deal is scored
        self._read_rules(rules)
        if pass_direction is _HOLD or rules.pass_count == 0:
            self._pending_passes = 0
            self._start_play()
        else:
            self.phase = _PASSING
            self.turn = -1
            self._pending_passes = n

    def _read_rules(self, rules: Ruleset) -> None:
        """Copy the rule flags the hot path reads into slots (one attribute load each)."""
        self._lead_restricted = rules.hearts_lead_restricted
        self._first_trick_restricted = rules.first_trick_no_points
        self._break_needs_discard = rules.hearts_break is _DISCARD
        # The cards that may break hearts, until they are broken; then 0 (_break_hearts).
        self._breakers = HEARTS_MASK | (QUEEN_BIT if rules.queen_breaks_hearts else 0)
        self._penalty = rules.penalty_mask
        # The legal cards of the seat to play, as a mask and as a tuple, kept up to date
        # by every action while PLAYING; 0 and () in every other phase, so the fast path
        # of play() refuses every card there.
        self._legal = 0
        self._legal_cards = ()

    @classmethod
    def shuffled(
        cls,
        rules: Ruleset,
        seed: int,
        number: int = 0,
        shuffle: int | None = None,
        rotation: int = 0,
        pass_direction: PassDirection | None = None,
        scoring_phase: int = 1,
    ) -> Deal:
        """Deal ``number`` of a match with ``seed``.

        ``shuffle`` (default ``number``) picks the shuffle; ``rotation`` moves every
        hand ``rotation`` seats clockwise (duplicate seating). The pass direction
        defaults to the schedule entry for ``number``.
        """
        hands = deal_hands(seed, number if shuffle is None else shuffle, rules.deck, rules.players)
        if rotation:
            n = rules.players
            hands = [hands[(s - rotation) % n] for s in range(n)]
        direction = rules.pass_direction(number) if pass_direction is None else pass_direction
        deal = cls.__new__(cls)  # the shuffle partitions the deck by construction: skip the check
        deal._setup(rules, hands, direction, number, scoring_phase)
        return deal

    # -- queries --------------------------------------------------------------

    @property
    def first_trick(self) -> bool:
        return not self.tricks

    @property
    def tricks_won(self) -> list[int]:
        """How many tricks each seat has won so far."""
        won = [0] * self.players
        for t in self.tricks:
            won[t.winner] += 1
        return won

    def to_act(self) -> tuple[int, ...]:
        """The seats that may act now: every seat yet to pass, or the one seat to play or choose."""
        if self.phase is Phase.PASSING:
            return tuple(s for s, p in enumerate(self.passed) if p is None)
        if self.phase is Phase.SCORED:
            return ()
        return (self.turn,)

    def received_by(self, seat: int) -> Mask | None:
        """Cards ``seat`` received in the pass, once every seat has passed."""
        if self.phase is Phase.PASSING or self.pass_direction is PassDirection.HOLD:
            return None
        giver = (seat - self.pass_direction.offset(self.players)) % self.players
        return self.passed[giver]

    def legal_mask(self) -> Mask:
        """Legal cards for the seat to play, as a mask (only meaningful while PLAYING)."""
        return self._legal

    def legal_plays(self, seat: int) -> tuple[Card, ...]:
        """Cards ``seat`` may play now, ascending; empty when it is not that seat's turn."""
        return self._legal_cards if seat == self.turn else ()

    def _cache_legal(self) -> None:
        """Work out the legal cards of the seat to play, as a mask and as a tuple.

        The play path fills in the common cases itself (following suit, an unrestricted
        lead) and calls this for the rest. Each rule flag is read exactly once, in this
        cascade of early returns.
        """
        hand = self.hands[self.turn]
        if self.trick:
            led = self.led_suit
            follow = hand & SUIT_MASKS[led]
            if follow:
                self._legal = follow
                self._legal_cards = CARDS_BY_SUIT_PATTERN[led][follow >> _SUIT_SHIFT[led]]
                return
            legal = hand
            if self._first_trick_restricted and not self.tricks:
                safe = hand & ~self._penalty
                if safe:
                    legal = safe
                elif self.rules.first_trick_fallback is FirstTrickFallback.QUEEN_LAST and hand != QUEEN_BIT:
                    legal = hand & ~QUEEN_BIT
        elif not self.tricks:
            first = self.rules.first_lead
            self._legal = 1 << first
            self._legal_cards = (first,)
            return
        else:
            legal = hand
            if self._lead_restricted and not self.hearts_broken:
                others = hand & ~HEARTS_MASK
                if others and not (others == QUEEN_BIT and self.rules.lead_heart_instead_of_queen):
                    legal = others
        self._legal = legal
        self._legal_cards = cards_of(legal)

    def passable(self, seat: int) -> tuple[Card, ...]:
        """Cards ``seat`` may pass now (its dealt hand), empty if it may not pass."""
        if self.phase is not _PASSING or self.passed[seat] is not None:
            return ()
        return cards_of(self.hands[seat])

    # -- checked entry points ---------------------------------------------------

    # The checked entry points take untrusted input, so their parameters are typed as what
    # they accept (anything) and narrowed by the checks: a compiled build then refuses a
    # wrong type with the same typed error as the pure one, not a TypeError at the call.

    def apply(self, seat: object, action: object) -> None:
        """Apply any action for ``seat``, checked."""
        if isinstance(action, PlayAction):
            self.play(seat, action.card)
        elif isinstance(action, PassAction):
            self.pass_cards(seat, action.cards)
        elif isinstance(action, MoonAction):
            self.choose_moon(seat, action.option)
        else:
            raise InvalidActionError(f"not an action: {action!r}")

    def pass_cards(self, seat: object, cards: object) -> None:
        """Choose the cards ``seat`` passes; they move once every seat has chosen.

        As in :meth:`play`, the accepted path is as short as possible (one compound
        test, one pass over the cards, one test of the mask) and :meth:`_refuse_pass`
        explains any refusal.
        """
        try:
            items = list(cast("Iterable[object]", cards))
        except TypeError:
            raise InvalidActionError(f"expected a list of cards, got {cards!r}") from None
        if (
            self.phase is _PASSING
            and type(seat) is int
            and 0 <= seat < self.players
            and self.passed[seat] is None
            and len(items) == self.rules.pass_count
        ):
            mask = 0
            for c in items:
                if type(c) is not int or not 0 <= c < DECK_SIZE:
                    break
                mask |= _BIT[c]
            else:
                if mask.bit_count() == len(items) and not mask & ~self.hands[seat]:
                    self.push_pass(seat, mask)
                    return
        self._refuse_pass(seat, items)

    def _refuse_pass(self, seat: object, cards: list[object]) -> None:
        seat = self._check_seat(seat)
        if self.phase is not Phase.PASSING:
            raise WrongPhaseError(f"cannot pass cards now: the deal is {self.phase.value}")
        if self.passed[seat] is not None:
            raise NotYourTurnError(f"seat {seat} has already passed this deal")
        chosen = _check_cards(cards)
        k = self.rules.pass_count
        if len(chosen) != k:
            raise InvalidActionError(f"pass exactly {k} cards, got {len(chosen)}")
        mask = sum(map(_BIT.__getitem__, chosen))
        if mask.bit_count() != k:
            raise InvalidActionError("a card is listed twice")
        raise IllegalActionError(f"{card_name(lowest(mask & ~self.hands[seat]))} is not in your hand")

    def play(self, seat: object, card: object) -> None:
        """Play ``card`` for ``seat``, checked.

        The accepted path is one compound test; any refusal is explained by
        :meth:`_refuse_play`, which works out the precise error.
        """
        if type(seat) is int and seat == self.turn and type(card) is int and card >= 0 and self._legal >> card & 1:
            self.push_play(card)
        else:
            self._refuse_play(seat, card)

    def _refuse_play(self, seat: object, played: object) -> None:
        seat = self._check_seat(seat)
        if self.phase is not Phase.PLAYING:
            raise WrongPhaseError(f"cannot play a card now: the deal is {self.phase.value}")
        (card,) = _check_cards((played,))
        if seat != self.turn:
            raise NotYourTurnError(f"it is seat {self.turn}'s turn to play, not seat {seat}'s")
        if not self.hands[seat] >> card & 1:
            raise IllegalActionError(f"{card_name(card)} is not in your hand")
        raise IllegalActionError(self._why_illegal(card))

    def choose_moon(self, seat: object, option: object) -> None:
        """The shooter's choice of moon scoring (``classic``)."""
        seat = self._check_seat(seat)
        if self.phase is not Phase.MOON_CHOICE:
            raise WrongPhaseError(f"there is no moon choice to make: the deal is {self.phase.value}")
        if seat != self.turn:
            raise NotYourTurnError(f"only the shooter, seat {self.turn}, chooses the moon scoring")
        if not isinstance(option, MoonOption):
            raise InvalidActionError(f"not a moon option: {option!r}")
        self.push_moon(option)

    def _check_seat(self, seat: object) -> int:
        if type(seat) is not int or not 0 <= seat < self.players:
            raise InvalidActionError(f"seat must be between 0 and {self.players - 1}, got {seat!r}")
        return seat

    def _why_illegal(self, c: Card) -> str:
        led = self.led_suit if self.trick else -1
        return str(why_unplayable(c, self.hands[self.turn], self._legal, led, not self.tricks))

    # -- unchecked fast path ----------------------------------------------------

    def push_pass(self, seat: int, mask: Mask) -> None:
        """Record ``seat``'s pass without checks; exchange once all have passed."""
        passed = self.passed
        passed[seat] = mask
        self._pending_passes -= 1
        if self._pending_passes == 0:
            n = self.players
            offset = self.pass_direction.offset(n)
            # Seat r keeps what it did not pass and receives what seat r - offset passed.
            self.hands[:] = [
                hand & ~passed[r] | passed[(r - offset) % n]  # type: ignore[operator]
                for r, hand in enumerate(self.hands)
            ]
            self._start_play()

    def push_play(self, card: Card) -> None:
        """Play ``card`` for the seat to act, without checks."""
        seat = self.turn
        bit = 1 << card
        hands = self.hands
        hands[seat] = hands[seat] ^ bit  # (not ^=: the compiled build keeps it a machine-int op)
        trick = self.trick
        if not trick:
            self.trick_leader = seat
            self.led_suit = SUIT_OF[card]
        # _breakers is 0 once hearts are broken. A lead is never a discard (its suit is
        # the led suit), so under the discard rule only the queen can break on a lead.
        if bit & self._breakers:
            if not self._break_needs_discard or card == QUEEN_OF_SPADES or SUIT_OF[card] != self.led_suit:
                self._break_hearts()
        trick.append(card)
        trick_mask = self.trick_mask | bit
        n = self.players
        if len(trick) < n:
            self.trick_mask = trick_mask
            seat = self.turn = (seat + 1) % n
            # The common cases, inlined: the next seat can follow suit, or it cannot and
            # the first trick is over, so any card goes. Otherwise see _cache_legal().
            led = self.led_suit
            hand = hands[seat]
            follow = hand & SUIT_MASKS[led]
            if follow:
                self._legal = follow
                self._legal_cards = CARDS_BY_SUIT_PATTERN[led][follow >> _SUIT_SHIFT[led]]
            elif self.tricks:
                self._legal = hand
                self._legal_cards = cards_of(hand)
            else:
                self._cache_legal()
            return
        # The trick is complete.
        led = self.led_suit
        leader = self.trick_leader
        winner = (leader + trick.index((trick_mask & SUIT_MASKS[led]).bit_length() - 1)) % n
        taken = self.taken
        taken[winner] = taken[winner] | trick_mask
        self.played |= trick_mask
        tricks = self.tricks
        tricks.append(_new_trick(Trick, (leader, tuple(trick), winner)))
        self.trick = []
        self.trick_mask = 0
        self.turn = winner
        if len(tricks) == self.rules.hand_size:
            self._finish_play()
        elif self.hearts_broken or not self._lead_restricted:
            # The winner leads with no restriction: every card of its hand (inlined).
            hand = hands[winner]
            self._legal = hand
            self._legal_cards = cards_of(hand)
        else:
            self._cache_legal()

    def _break_hearts(self) -> None:
        self.hearts_broken = True
        self.broken_trick = len(self.tricks)
        self._breakers = 0  # nothing breaks hearts twice: push_play's test fails at once

    def push_moon(self, option: MoonOption) -> None:
        """Apply the shooter's moon choice without checks."""
        self.moon_option = option
        self._score()

    def _start_play(self) -> None:
        self.phase = _PLAYING
        first = self.rules.first_lead
        for seat, hand in enumerate(self.hands):
            if hand >> first & 1:
                self.turn = seat
                break
        self._cache_legal()

    def _finish_play(self) -> None:
        self._legal = 0
        self._legal_cards = ()
        self.shooter = moon_shooter(self.rules, self.taken)
        if self.shooter is not None and self.scoring_phase == 1:
            if self.rules.moon is MoonScoring.SHOOTER_CHOICE:
                self.phase = _MOON_CHOICE
                self.turn = self.shooter
                return
            self.moon_option = MoonOption.ADD_TO_OTHERS
        self._score()

    def _score(self) -> None:
        self.score = deal_score(self.rules, self.taken, self.shooter, self.moon_option, self.scoring_phase)
        self.phase = _SCORED
        self.is_over = True
        self.turn = -1

    # -- simulation ---------------------------------------------------------------

    def copy(self) -> Deal:
        """An independent copy (for search): every slot, the lists copied."""
        other = Deal.__new__(Deal)
        other.rules = self.rules
        other.players = self.players
        other.number = self.number
        other.pass_direction = self.pass_direction
        other.scoring_phase = self.scoring_phase
        other.dealt = self.dealt
        other.hands = list(self.hands)
        other.passed = list(self.passed)
        other.phase = self.phase
        other.turn = self.turn
        other.trick = list(self.trick)
        other.trick_leader = self.trick_leader
        other.led_suit = self.led_suit
        other.trick_mask = self.trick_mask
        other.tricks = list(self.tricks)
        other.taken = list(self.taken)
        other.played = self.played
        other.hearts_broken = self.hearts_broken
        other.broken_trick = self.broken_trick
        other.shooter = self.shooter
        other.moon_option = self.moon_option
        other.score = self.score
        other._pending_passes = self._pending_passes
        other._lead_restricted = self._lead_restricted
        other._first_trick_restricted = self._first_trick_restricted
        other._break_needs_discard = self._break_needs_discard
        other._breakers = self._breakers
        other._penalty = self._penalty
        other._legal = self._legal
        other._legal_cards = self._legal_cards
        other.is_over = self.is_over
        return other

    def playout(
        self,
        rng: random.Random,
        moon_option: MoonOption = MoonOption.ADD_TO_OTHERS,
    ) -> tuple[int, ...]:
        """Play random legal actions to the end of this deal, in place; return the score.

        Copy first (:meth:`copy`) to keep the position. Passing seats pass random cards;
        a moon choice takes ``moon_option``.
        """
        if self.phase is Phase.PASSING:
            k = self.rules.pass_count
            for s in self.to_act():
                self.push_pass(s, mask_of(rng.sample(cards_of(self.hands[s]), k)))
        choice = rng.choice
        while self.phase is Phase.PLAYING:
            self.push_play(choice(self._legal_cards))
        if self.phase is Phase.MOON_CHOICE:
            self.push_moon(moon_option)
        assert self.score is not None
        return self.score


def _check_cards(cards: Iterable[object]) -> list[Card]:
    try:
        items = list(cards)
    except TypeError:
        raise InvalidActionError(f"expected a list of cards, got {cards!r}") from None
    checked: list[Card] = []
    for c in items:
        if type(c) is not int or not 0 <= c < DECK_SIZE:
            raise InvalidActionError(f"not a card: {c!r} (cards are integers 0..51)")
        checked.append(c)
    return checked


def deal_at_position(
    rules: Ruleset,
    hands: Sequence[Mask],
    tricks: Sequence[Trick],
    trick: Sequence[Card],
    trick_leader: int,
    broken_trick: int,
    number: int = 0,
    pass_direction: PassDirection = PassDirection.HOLD,
    scoring_phase: int = 1,
) -> Deal:
    """A deal in the play phase at a given position: current hands plus public history.

    This is how a Monte Carlo bot turns a sampled set of hands into a state to
    play out. ``dealt`` and ``passed`` are unknown here and left as the current hands.
    """
    n = rules.players
    played = 0
    for t in tricks:
        for c in t.cards:
            played |= 1 << c
    for c in trick:
        played |= 1 << c
    union = played
    for h in hands:
        if h & union:
            raise InvalidActionError("hands overlap each other or the cards already played")
        union |= h
    if union != rules.deck:
        raise InvalidActionError("hands plus played cards must be exactly the ruleset's deck")
    deal = Deal.__new__(Deal)
    deal.rules = rules
    deal.players = n
    deal.number = number
    deal.pass_direction = pass_direction
    deal.scoring_phase = scoring_phase
    deal.dealt = tuple(hands)
    deal.hands = list(hands)
    deal.passed = [None] * n
    deal._pending_passes = 0
    deal.tricks = list(tricks)
    deal.trick = list(trick)
    deal.trick_leader = trick_leader if trick else -1
    deal.led_suit = SUIT_OF[trick[0]] if trick else -1
    deal.trick_mask = 0
    for c in trick:
        deal.trick_mask |= 1 << c
    deal.taken = [0] * n
    for t in tricks:
        for c in t.cards:
            deal.taken[t.winner] |= 1 << c
    deal.played = played & ~deal.trick_mask
    deal.hearts_broken = broken_trick >= 0
    deal.broken_trick = broken_trick
    deal.shooter = None
    deal.moon_option = None
    deal.score = None
    deal.is_over = False
    deal._read_rules(rules)
    if deal.hearts_broken:
        deal._breakers = 0
    deal.phase = Phase.PLAYING
    if trick:
        deal.turn = (trick_leader + len(trick)) % n
    elif tricks:
        deal.turn = tricks[-1].winner
    else:
        deal.turn = next(s for s, h in enumerate(hands) if h >> rules.first_lead & 1)
    if len(tricks) == rules.hand_size:
        deal._finish_play()
    else:
        deal._cache_legal()
    return deal
