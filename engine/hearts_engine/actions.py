"""Actions as small hashable values with a text form that round-trips.

>>> parse_action("pass QS AH KH")
PassAction(cards=(37, 38, 49))
>>> str(parse_action("play 2c")), str(parse_action("moon subtract_from_self"))
('play 2C', 'moon subtract_from_self')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from .cards import Card, card_name, format_cards, parse_card
from .errors import InvalidActionError
from .ruleset import MoonOption


@dataclass(frozen=True, slots=True)
class PassAction:
    """Cards a seat passes; stored sorted so equal passes compare equal."""

    cards: tuple[Card, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "cards", tuple(sorted(self.cards)))

    def __str__(self) -> str:
        return "pass " + format_cards(self.cards)


@dataclass(frozen=True, slots=True)
class PlayAction:
    """One card played to the current trick."""

    card: Card

    def __str__(self) -> str:
        return "play " + card_name(self.card)


@dataclass(frozen=True, slots=True)
class MoonAction:
    """The classic shooter's choice of moon scoring."""

    option: MoonOption

    def __str__(self) -> str:
        return "moon " + self.option.value


Action = Union[PassAction, PlayAction, MoonAction]

# One shared value per card: a play is immutable, so the hot paths (a server applying
# answers, search) index this instead of building a new object per card played.
PLAY_ACTIONS: tuple[PlayAction, ...] = tuple(PlayAction(c) for c in range(52))


def parse_action(text: str) -> Action:
    """Parse ``"pass 2C 3C 4C"``, ``"play QS"`` or ``"moon add_to_others"``."""
    verb, _, rest = text.strip().partition(" ")
    try:
        if verb == "pass":
            return PassAction(tuple(parse_card(t) for t in rest.split()))
        if verb == "play":
            return PlayAction(parse_card(rest))
        if verb == "moon":
            return MoonAction(MoonOption(rest.strip()))
    except ValueError as exc:
        raise InvalidActionError(f"cannot parse action {text!r}: {exc}") from None
    raise InvalidActionError(f"unknown action {text!r}; expected pass, play or moon")
