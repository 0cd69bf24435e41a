"""A whole match: deals in sequence from one seed, totals, the end, final ranks.

A match is reproducible from (ruleset, format, seed, actions): see
:mod:`hearts_engine.record`.

>>> import random
>>> from hearts_engine.presets import preset
>>> m = Match(preset("standard"), MatchFormat.fixed(2), seed=1)
>>> rng = random.Random(0)
>>> while not m.is_over:
...     seat = m.to_act()[0]
...     m.apply(seat, rng.choice(m.legal_actions(seat)))
>>> m.outcome.deals, len(m.results)
(2, 2)
"""

from __future__ import annotations

import enum
import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .actions import PLAY_ACTIONS, Action, MoonAction, PassAction, PlayAction
from .cards import Card
from .deal import Deal, Phase
from .errors import InvalidActionError, WrongPhaseError
from .ruleset import MoonOption, Ruleset
from .scoring import DealResult, Outcome, deal_score, default_moon_option, match_outcome, next_phase, totals_of
from .shuffle import check_seed
from .views import SeatView, seat_view


class FormatKind(enum.Enum):
    GAME = "game"
    """Deals until the ruleset's end condition (the seeds' game)."""
    FIXED = "fixed"
    """A fixed number of deals, ranked by total points."""


@dataclass(frozen=True)
class MatchFormat:
    """How long a match lasts and how hands are seated.

    With ``duplicate``, deals come in blocks of ``players``: every deal of a block
    replays the same shuffle (and pass direction) with the hands rotated one seat
    further clockwise, so every seat plays every hand once.
    """

    kind: FormatKind = FormatKind.GAME
    deals: int | None = None
    duplicate: bool = False

    @classmethod
    def game(cls) -> MatchFormat:
        return cls()

    @classmethod
    def fixed(cls, deals: int, duplicate: bool = False) -> MatchFormat:
        return cls(FormatKind.FIXED, deals, duplicate)

    def check(self, rules: Ruleset) -> None:
        """Raise ``ValueError`` if this format does not fit ``rules``."""
        if self.kind is FormatKind.GAME:
            if self.deals is not None or self.duplicate:
                raise ValueError("the game format takes no deal count and no duplicate seating")
            return
        if not isinstance(self.deals, int) or self.deals < 1:
            raise ValueError(f"a fixed-deals match needs at least 1 deal, got {self.deals!r}")
        if self.duplicate and self.deals % rules.players:
            raise ValueError(
                f"duplicate seating needs a multiple of {rules.players} deals (one per seat), got {self.deals}"
            )

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind.value, "deals": self.deals, "duplicate": self.duplicate}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MatchFormat:
        return cls(FormatKind(data["kind"]), data.get("deals"), bool(data.get("duplicate", False)))


class Match:
    """A match in progress. Deals start by themselves as the previous one is scored."""

    def __init__(self, rules: Ruleset, format: MatchFormat | None = None, seed: int = 0) -> None:
        self.rules = rules
        self.format = format or MatchFormat.game()
        self.format.check(rules)
        self.seed = check_seed(seed)
        self.results: list[DealResult] = []
        self.history: list[tuple[int, int, Action]] = []  # (deal number, seat, action)
        self.outcome: Outcome | None = None
        self.deal = self._new_deal(0)

    @classmethod
    def at_deal(cls, rules: Ruleset, format: MatchFormat | None, seed: int, results: Sequence[DealResult]) -> Match:
        """The match as it stood when deal ``len(results)`` began, given the results of
        every deal before it: a deal depends only on the seed, its number and those results,
        so a replay can show a late deal without applying every earlier action. Its
        ``history`` starts there.

        >>> from hearts_engine import preset
        >>> whole = Match(preset("standard"), MatchFormat.fixed(3), seed=7)
        >>> while whole.deal.number < 2:
        ...     seat = whole.to_act()[0]
        ...     whole.apply(seat, whole.default_action(seat))
        >>> late = Match.at_deal(whole.rules, whole.format, 7, whole.results)
        >>> (late.deal.number, late.deal.hands == whole.deal.hands, late.totals == whole.totals)
        (2, True, True)
        """
        match = cls(rules, format, seed)
        if results:
            match.results = list(results)
            match.deal = match._new_deal(len(results))
        return match

    # -- structure --------------------------------------------------------------

    @property
    def _fixed_deals(self) -> int | None:
        return self.format.deals if self.format.kind is FormatKind.FIXED else None

    def deal_setup(self, number: int) -> tuple[int, int, int]:
        """(shuffle number, rotation, schedule index) of deal ``number``."""
        if self.format.duplicate:
            block, rotation = divmod(number, self.rules.players)
            return block, rotation, block
        return number, 0, number

    def _new_deal(self, number: int) -> Deal:
        shuffle, rotation, schedule = self.deal_setup(number)
        phase = 1 if self._fixed_deals is not None else next_phase(self.rules, self.results)
        return Deal.shuffled(
            self.rules,
            self.seed,
            number,
            shuffle=shuffle,
            rotation=rotation,
            pass_direction=self.rules.pass_direction(schedule),
            scoring_phase=phase,
        )

    # -- queries ----------------------------------------------------------------

    @property
    def is_over(self) -> bool:
        return self.outcome is not None

    @property
    def totals(self) -> tuple[int, ...]:
        return totals_of(self.results, self.rules.players)

    def to_act(self) -> tuple[int, ...]:
        return () if self.outcome else self.deal.to_act()

    def legal_actions(self, seat: int) -> list[Action]:
        """Every legal action of ``seat`` now. Passing lists every possible pass, so prefer
        :meth:`Deal.passable` when you only need the cards."""
        deal = self.deal
        if self.outcome is not None or seat not in deal.to_act():
            return []
        if deal.phase is Phase.PASSING:
            return [PassAction(c) for c in itertools.combinations(deal.passable(seat), self.rules.pass_count)]
        if deal.phase is Phase.MOON_CHOICE:
            return [MoonAction(o) for o in MoonOption]
        return [PlayAction(c) for c in deal.legal_plays(seat)]

    def default_action(self, seat: int) -> Action:
        """A legal action the server may play for ``seat`` when it does not answer.

        Passing: the last ``pass_count`` cards in card order; playing: the first legal card
        in card order (clubs to spades, two to ace: not the lowest rank); the moon choice:
        the classic timeout rule of RULES.md. (A play is checked first, before the match's
        outcome: a match only ends on a scored deal, so no deal is being played then.)
        """
        deal = self.deal
        if deal.phase is Phase.PLAYING and seat == deal.turn:  # asked before every play: checked first
            return PLAY_ACTIONS[deal.legal_plays(seat)[0]]
        if self.outcome is not None or seat not in deal.to_act():
            raise WrongPhaseError(f"seat {seat} has nothing to do now")
        if deal.phase is Phase.PASSING:
            return PassAction(deal.passable(seat)[-self.rules.pass_count :])
        return MoonAction(self.default_moon_option())

    def default_moon_option(self) -> MoonOption:
        deal = self.deal
        assert deal.shooter is not None
        provisional = DealResult(
            deal_score(self.rules, deal.taken, deal.shooter, MoonOption.ADD_TO_OTHERS),
            deal.scoring_phase,
            deal.shooter,
            MoonOption.ADD_TO_OTHERS,
        )
        return default_moon_option(self.rules, self.results, provisional, self._fixed_deals)

    def view(self, seat: int) -> SeatView:
        """What ``seat`` may know now: the current deal plus the match's scores so far."""
        return seat_view(self.deal, seat, self.totals, [r.score for r in self.results])

    # -- actions ----------------------------------------------------------------

    def apply(self, seat: int, action: Action) -> None:
        """Apply ``action`` for ``seat``, checked; scores the deal and starts the next one."""
        if self.outcome is not None:
            raise WrongPhaseError("the match is over")
        self.deal.apply(seat, action)
        self._after(seat, action)

    def play(self, seat: int, card: Card) -> None:
        self.apply(seat, PlayAction(card))

    def pass_cards(self, seat: int, cards: Iterable[Card]) -> None:
        try:
            chosen = tuple(cards)
        except TypeError:
            raise InvalidActionError(f"expected a list of cards, got {cards!r}") from None
        self.apply(seat, PassAction(chosen))

    def choose_moon(self, seat: int, option: MoonOption) -> None:
        self.apply(seat, MoonAction(option))

    def _after(self, seat: int, action: Action) -> None:
        deal = self.deal
        self.history.append((deal.number, seat, action))
        if not deal.is_over:
            return
        assert deal.score is not None
        self.results.append(
            DealResult(
                deal.score,
                deal.scoring_phase,
                deal.shooter,
                deal.moon_option,
                tuple(self.rules.points_of(t) for t in deal.taken),
            )
        )
        self.outcome = match_outcome(self.rules, self.results, self._fixed_deals)
        if self.outcome is None:
            self.deal = self._new_deal(deal.number + 1)

    # -- presentation -------------------------------------------------------------

    def score_sheet(self, names: Sequence[str] | None = None) -> str:
        """One row per deal (points, then running totals) and the winner, as plain text."""
        n = self.rules.players
        names = list(names or [f"seat {s}" for s in range(n)])
        width = max(11, *(len(x) + 2 for x in names))
        head = "deal  " + "".join(f"{x:>{width}}" for x in names)
        lines = [head, "-" * len(head)]
        running = [0] * n
        for i, r in enumerate(self.results):
            running = [a + b for a, b in zip(running, r.score)]
            cells = "".join(f"{f'{p:+d} ({t})':>{width}}" for p, t in zip(r.score, running))
            note = ""
            if r.shooter is not None:
                note = f"  moon: {names[r.shooter]}"
            if r.phase == 2:
                note += "  phase 2"
            lines.append(f"{i:>4}  {cells}{note}")
        lines.append("-" * len(head))
        lines.append("total " + "".join(f"{t:>{width}}" for t in running))
        if self.outcome:
            winners = ", ".join(names[w] for w in self.outcome.winners)
            label = "winner" if len(self.outcome.winners) == 1 else "co-winners"
            lines.append(f"{label}: {winners}")
        return "\n".join(lines)
