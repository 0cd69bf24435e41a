"""A ruleset is a frozen value: every rule of RULES.md is one named parameter.

Presets (``standard``, ``classic``, ...) are just parameter values, built in
:mod:`hearts_engine.presets`. Each parameter is read in exactly one place of the
engine, so a variant never needs a subclass or an ``if preset == ...``.

Validation happens on construction, so an inconsistent ruleset cannot exist:

>>> Ruleset(players=3, removed_cards=(parse_card("2D"),), pass_schedule=(PassDirection.ACROSS,))
Traceback (most recent call last):
...
hearts_engine.errors.RulesetError: an across pass needs exactly 4 players, got 3
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .cards import (
    CLUBS,
    DECK_SIZE,
    FULL_DECK,
    HEARTS,
    QUEEN_OF_SPADES,
    SUIT_MASKS,
    SUIT_OF,
    Card,
    Mask,
    card_name,
    lowest,
    parse_card,
)
from .errors import RulesetError

MIN_PLAYERS = 3
MAX_PLAYERS = 7


class PassDirection(enum.Enum):
    """Where passed cards go: left is the next seat clockwise (+1)."""

    LEFT = "left"
    RIGHT = "right"
    ACROSS = "across"
    HOLD = "hold"

    def offset(self, players: int) -> int:
        """Seat offset of the receiver: ``(seat + offset) % players``."""
        if self is PassDirection.RIGHT:
            return players - 1
        return _FIXED_OFFSETS[self.value]


_FIXED_OFFSETS = {"left": 1, "across": 2, "hold": 0}


class HeartsBreak(enum.Enum):
    """What counts as "hearts have been broken" for the lead restriction."""

    DISCARD = "discard"
    """A heart played by a seat unable to follow suit (``standard``)."""
    ANY_HEART = "any_heart"
    """Any heart played, led or followed (``classic``, OpenSpiel)."""


class FirstTrickFallback(enum.Enum):
    """What a void hand may play on a restricted first trick if it holds only penalty cards."""

    ANY_CARD = "any_card"
    """Any card of the hand (RULES.md's decision; OpenSpiel agrees)."""
    QUEEN_LAST = "queen_last"
    """Any penalty card but Q♠, unless Q♠ is all that is left."""


class MoonScoring(enum.Enum):
    """How a deal in which one seat took every penalty card is scored."""

    ADD_TO_OTHERS = "add_to_others"
    """Shooter 0, every other seat + the deal total (``standard``, Hartenjagen phase 1)."""
    SHOOTER_CHOICE = "shooter_choice"
    """The shooter chooses :class:`MoonOption` (``classic``)."""


class MoonOption(enum.Enum):
    """The classic shooter's choice."""

    ADD_TO_OTHERS = "add_to_others"
    SUBTRACT_FROM_SELF = "subtract_from_self"


@dataclass(frozen=True)
class HartenjagenPhases:
    """Phase 1 adds penalties until a total reaches ``phase1_target``; phase 2 subtracts.

    Phase 2 ends at the first deal after which some total is at or below 0 and
    exactly one seat has the lowest total, or after ``phase2_cap`` phase-2 deals.
    """

    phase1_target: int
    phase2_cap: int = 50


@dataclass(frozen=True)
class Ruleset:
    """Every rule of a variant. Defaults are the ``standard`` game.

    Derived tables (deck mask, card values, the first lead) are computed once at
    construction and kept out of equality and ``repr``.
    """

    name: str = "custom"
    players: int = 4
    removed_cards: tuple[Card, ...] = ()
    pass_count: int = 3
    pass_schedule: tuple[PassDirection, ...] = (
        PassDirection.LEFT,
        PassDirection.RIGHT,
        PassDirection.ACROSS,
        PassDirection.HOLD,
    )
    first_trick_no_points: bool = True
    first_trick_fallback: FirstTrickFallback = FirstTrickFallback.ANY_CARD
    hearts_lead_restricted: bool = True
    hearts_break: HeartsBreak = HeartsBreak.DISCARD
    queen_breaks_hearts: bool = False
    lead_heart_instead_of_queen: bool = False
    heart_points: int = 1
    card_points: tuple[tuple[Card, int], ...] = ((QUEEN_OF_SPADES, 13),)
    moon: MoonScoring = MoonScoring.ADD_TO_OTHERS
    moon_requires_bonus: bool = False
    no_trick_bonus: int = 0
    target: int = 100
    phases: HartenjagenPhases | None = None
    last_deal_tie_break: bool = True

    deck: Mask = field(init=False, repr=False, compare=False)
    hand_size: int = field(init=False, repr=False, compare=False)
    first_lead: Card = field(init=False, repr=False, compare=False)
    points_by_card: tuple[int, ...] = field(init=False, repr=False, compare=False)
    penalty_mask: Mask = field(init=False, repr=False, compare=False)
    bonus_mask: Mask = field(init=False, repr=False, compare=False)
    deal_total: int = field(init=False, repr=False, compare=False)
    _hearts_in_play: Mask = field(init=False, repr=False, compare=False)
    _special_penalties: tuple[tuple[Mask, int], ...] = field(init=False, repr=False, compare=False)
    _bonuses: tuple[tuple[Mask, int], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._validate()
        deck = FULL_DECK
        for c in self.removed_cards:
            deck &= ~(1 << c)
        values = [0] * DECK_SIZE
        for c in range(DECK_SIZE):
            if deck >> c & 1 and SUIT_OF[c] == HEARTS:
                values[c] = self.heart_points
        for c, v in self.card_points:
            values[c] = v
        penalty = sum(1 << c for c in range(DECK_SIZE) if values[c] > 0)
        bonus = sum(1 << c for c in range(DECK_SIZE) if values[c] < 0)
        put = object.__setattr__
        put(self, "deck", deck)
        put(self, "hand_size", deck.bit_count() // self.players)
        put(self, "first_lead", lowest(deck & SUIT_MASKS[CLUBS]))
        put(self, "points_by_card", tuple(values))
        put(self, "penalty_mask", penalty)
        put(self, "bonus_mask", bonus)
        put(self, "deal_total", sum(v for v in values if v > 0))
        put(self, "_hearts_in_play", deck & SUIT_MASKS[HEARTS])
        put(self, "_special_penalties", tuple((1 << c, v) for c, v in self.card_points if v > 0))
        put(self, "_bonuses", tuple((1 << c, v) for c, v in self.card_points if v < 0))
        if self.deal_total <= 0:
            raise RulesetError("the deck in use holds no penalty card, so no deal can score")

    def _validate(self) -> None:
        n = self.players
        if not isinstance(n, int) or not MIN_PLAYERS <= n <= MAX_PLAYERS:
            raise RulesetError(f"players must be between {MIN_PLAYERS} and {MAX_PLAYERS}, got {n}")
        removed = self.removed_cards
        if any(not isinstance(c, int) or not 0 <= c < DECK_SIZE for c in removed):
            raise RulesetError(f"removed_cards holds something that is not a card: {removed}")
        if len(set(removed)) != len(removed):
            raise RulesetError("removed_cards lists a card twice")
        size = DECK_SIZE - len(removed)
        if size % n:
            raise RulesetError(f"a deck of {size} cards cannot be dealt evenly to {n} players")
        if all(SUIT_OF[c] != CLUBS or c in removed for c in range(DECK_SIZE)):
            raise RulesetError("the deck in use has no club, so no card can make the first lead")
        if not self.pass_schedule:
            raise RulesetError("pass_schedule is empty; use (hold,) for no passing")
        for direction in self.pass_schedule:
            if not isinstance(direction, PassDirection):
                raise RulesetError(f"unknown pass direction: {direction!r}")
            if direction is PassDirection.ACROSS and n != 4:
                raise RulesetError(f"an across pass needs exactly 4 players, got {n}")
        passes = any(d is not PassDirection.HOLD for d in self.pass_schedule)
        if passes and not 1 <= self.pass_count < size // n:
            raise RulesetError(
                f"pass_count must be between 1 and {size // n - 1} (hand size - 1), got {self.pass_count}"
            )
        seen: set[Card] = set()
        for c, v in self.card_points:
            if not isinstance(c, int) or not 0 <= c < DECK_SIZE:
                raise RulesetError(f"card_points names something that is not a card: {c!r}")
            if c in seen:
                raise RulesetError(f"card_points values {card_name(c)} twice")
            if SUIT_OF[c] == HEARTS:
                raise RulesetError(f"card_points names the heart {card_name(c)}; hearts use heart_points")
            if c in removed:
                raise RulesetError(f"card_points values {card_name(c)}, which is removed from the deck")
            if not isinstance(v, int):
                raise RulesetError(f"the value of {card_name(c)} must be an integer, got {v!r}")
            seen.add(c)
        if self.heart_points < 0:
            raise RulesetError(f"heart_points must not be negative, got {self.heart_points}")
        if self.target < 1:
            raise RulesetError(f"target must be at least 1, got {self.target}")
        if self.phases is not None:
            if self.phases.phase1_target < 1 or self.phases.phase2_cap < 1:
                raise RulesetError("the Hartenjagen phase-1 target and phase-2 cap must be at least 1")
            if self.moon is MoonScoring.SHOOTER_CHOICE:
                raise RulesetError("the shooter's moon choice cannot be combined with Hartenjagen phases")
        if self.moon_requires_bonus and not any(v < 0 for _, v in self.card_points):
            raise RulesetError("moon_requires_bonus is set but the ruleset has no bonus card")

    # -- derived helpers ------------------------------------------------------

    def pass_direction(self, deal_number: int) -> PassDirection:
        """The pass direction of deal ``deal_number`` (deal 0 uses the schedule's first entry)."""
        return self.pass_schedule[deal_number % len(self.pass_schedule)]

    def card_value(self, c: Card) -> int:
        """Points for taking card ``c`` (negative for a bonus card)."""
        return self.points_by_card[c]

    def penalty_of(self, taken: Mask) -> int:
        """Penalty points (positive values) of the cards in ``taken``."""
        points = (taken & self._hearts_in_play).bit_count() * self.heart_points
        for bit, value in self._special_penalties:
            if taken & bit:
                points += value
        return points

    def bonus_of(self, taken: Mask) -> int:
        """Bonus points (negative values) of the cards in ``taken``."""
        points = 0
        for bit, value in self._bonuses:
            if taken & bit:
                points += value
        return points

    def points_of(self, taken: Mask) -> int:
        """Sum of the values of the cards in ``taken``."""
        return self.penalty_of(taken) + self.bonus_of(taken)

    def with_options(self, **changes: Any) -> Ruleset:
        """A copy with some parameters changed; validated like any ruleset."""
        return dataclasses.replace(self, **changes)

    # -- wire form ------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict that :meth:`from_dict` turns back into an equal ruleset."""
        return {
            "name": self.name,
            "players": self.players,
            "removed_cards": [card_name(c) for c in self.removed_cards],
            "pass_count": self.pass_count,
            "pass_schedule": [d.value for d in self.pass_schedule],
            "first_trick_no_points": self.first_trick_no_points,
            "first_trick_fallback": self.first_trick_fallback.value,
            "hearts_lead_restricted": self.hearts_lead_restricted,
            "hearts_break": self.hearts_break.value,
            "queen_breaks_hearts": self.queen_breaks_hearts,
            "lead_heart_instead_of_queen": self.lead_heart_instead_of_queen,
            "heart_points": self.heart_points,
            "card_points": {card_name(c): v for c, v in self.card_points},
            "moon": self.moon.value,
            "moon_requires_bonus": self.moon_requires_bonus,
            "no_trick_bonus": self.no_trick_bonus,
            "target": self.target,
            "phases": None
            if self.phases is None
            else {"phase1_target": self.phases.phase1_target, "phase2_cap": self.phases.phase2_cap},
            "last_deal_tie_break": self.last_deal_tie_break,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Ruleset:
        """Inverse of :meth:`to_dict`; unknown keys or bad values raise :class:`RulesetError`."""
        known = {f.name for f in dataclasses.fields(cls) if f.init}
        unknown = set(data) - known
        if unknown:
            raise RulesetError(f"unknown ruleset parameters: {', '.join(sorted(unknown))}")
        kw: dict[str, Any] = dict(data)
        try:
            if "removed_cards" in kw:
                kw["removed_cards"] = tuple(parse_card(c) for c in kw["removed_cards"])
            if "pass_schedule" in kw:
                kw["pass_schedule"] = tuple(PassDirection(d) for d in kw["pass_schedule"])
            if "first_trick_fallback" in kw:
                kw["first_trick_fallback"] = FirstTrickFallback(kw["first_trick_fallback"])
            if "hearts_break" in kw:
                kw["hearts_break"] = HeartsBreak(kw["hearts_break"])
            if "card_points" in kw:
                kw["card_points"] = tuple((parse_card(c), v) for c, v in dict(kw["card_points"]).items())
            if "moon" in kw:
                kw["moon"] = MoonScoring(kw["moon"])
            if kw.get("phases") is not None:
                kw["phases"] = HartenjagenPhases(**kw["phases"])
        except (TypeError, ValueError) as exc:
            raise RulesetError(f"bad ruleset parameter: {exc}") from exc
        return cls(**kw)
