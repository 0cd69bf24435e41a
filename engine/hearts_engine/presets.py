"""The named rulesets of RULES.md, looked up by name.

>>> r = preset("classic", players=5)
>>> r.players, [card_name(c) for c in r.removed_cards], card_name(r.first_lead)
(5, ['2D', '2C'], '3C')
>>> preset("hartenjagen", players=3).deal_total
16
>>> sorted(PRESETS)
['classic', 'hartenjagen', 'hartenjagen-quick', 'omnibus', 'standard']
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .cards import (
    CLUBS,
    DIAMONDS,
    JACK_OF_CLUBS,
    JACK_OF_DIAMONDS,
    QUEEN_OF_SPADES,
    SUITS,
    Card,
    card,
    card_name,  # noqa: F401  (used by the doctest)
)
from .errors import RulesetError
from .ruleset import HartenjagenPhases, HeartsBreak, MoonScoring, PassDirection, Ruleset

LEFT, RIGHT, ACROSS, HOLD = PassDirection.LEFT, PassDirection.RIGHT, PassDirection.ACROSS, PassDirection.HOLD
FOUR_PLAYER_SCHEDULE = (LEFT, RIGHT, ACROSS, HOLD)
ODD_SCHEDULE = (LEFT, RIGHT)


def _two(suit: int) -> Card:
    return card(0, suit)


_CLASSIC_REMOVED: dict[int, tuple[Card, ...]] = {
    3: (_two(DIAMONDS),),
    4: (),
    5: (_two(DIAMONDS), _two(CLUBS)),
    6: (_two(DIAMONDS), card(1, DIAMONDS), card(1, CLUBS), card(2, CLUBS)),
    7: (_two(DIAMONDS), card(1, DIAMONDS), card(1, CLUBS)),
}
_HARTENJAGEN_3P_REMOVED = tuple(card(rank, suit) for suit in SUITS for rank in range(4))
_HARTENJAGEN_POINTS = ((JACK_OF_CLUBS, 2), (QUEEN_OF_SPADES, 5))


def _players(name: str, players: int | None, allowed: range, default: int = 4) -> int:
    n = default if players is None else players
    if n not in allowed:
        counts = f"{allowed.start}" if len(allowed) == 1 else f"{allowed.start} to {allowed.stop - 1}"
        raise RulesetError(f"{name} is played by {counts} players, got {n}")
    return n


def standard(players: int | None = None) -> Ruleset:
    """Seeds 000/003: four players, pass left/right/across/hold, 26 points, moon adds to others."""
    _players("standard", players, range(4, 5))
    return Ruleset(name="standard")


def classic(players: int | None = None, target: int = 100) -> Ruleset:
    """Seed 002: 3 to 7 players, Q♠ breaks hearts, the shooter chooses the moon scoring."""
    n = _players("classic", players, range(3, 8))
    if target < 50:
        raise RulesetError(f"the classic target must be at least 50, got {target}")
    return Ruleset(
        name="classic",
        players=n,
        removed_cards=_CLASSIC_REMOVED[n],
        pass_schedule=FOUR_PLAYER_SCHEDULE if n == 4 else ODD_SCHEDULE,
        hearts_break=HeartsBreak.ANY_HEART,
        queen_breaks_hearts=True,
        moon=MoonScoring.SHOOTER_CHOICE,
        target=target,
    )


def _hartenjagen(name: str, players: int | None, passing: bool, targets: dict[int, int]) -> Ruleset:
    n = _players(name, players, range(3, 5))
    schedule = (FOUR_PLAYER_SCHEDULE if n == 4 else ODD_SCHEDULE) if passing else (HOLD,)
    return Ruleset(
        name=name,
        players=n,
        removed_cards=_HARTENJAGEN_3P_REMOVED if n == 3 else (),
        pass_schedule=schedule,
        first_trick_no_points=False,
        hearts_lead_restricted=False,
        hearts_break=HeartsBreak.ANY_HEART,
        card_points=_HARTENJAGEN_POINTS,
        phases=HartenjagenPhases(phase1_target=targets[n]),
        last_deal_tie_break=False,
    )


def hartenjagen(players: int | None = None, passing: bool = False) -> Ruleset:
    """Seed 001: 3 or 4 players, J♣ 2 and Q♠ 5, no restrictions, two scoring phases."""
    return _hartenjagen("hartenjagen", players, passing, {3: 80, 4: 100})


def hartenjagen_quick(players: int | None = None, passing: bool = False) -> Ruleset:
    """Hartenjagen with phase-1 targets 40 (three players) and 50 (four)."""
    return _hartenjagen("hartenjagen-quick", players, passing, {3: 40, 4: 50})


def omnibus(players: int | None = None, moon_requires_bonus: bool = False) -> Ruleset:
    """``standard`` plus J♦ worth -10 to whoever takes it."""
    _players("omnibus", players, range(4, 5))
    base = Ruleset()
    return base.with_options(
        name="omnibus",
        card_points=base.card_points + ((JACK_OF_DIAMONDS, -10),),
        moon_requires_bonus=moon_requires_bonus,
    )


@dataclass(frozen=True)
class Preset:
    """A named ruleset family: ``build(players=..., **options)`` gives one ruleset."""

    name: str
    summary: str
    players: tuple[int, ...]
    build: Callable[..., Ruleset]

    @functools.cached_property  # read once: every preset() call asks it
    def options(self) -> tuple[str, ...]:
        """The preset's own keywords besides ``players``: what ``preset(name, **options)``
        hands to it rather than to :meth:`Ruleset.with_options`.

        >>> PRESETS["classic"].options, PRESETS["standard"].options
        (('target',), ())
        """
        keywords = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
        return tuple(name for name, p in inspect.signature(self.build).parameters.items()
                     if name != "players" and p.kind in keywords)


PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset("standard", "4 players; hearts 1, Q♠ 13; moon adds 26 to the others", (4,), standard),
        Preset("classic", "3-7 players; Q♠ breaks hearts; the shooter chooses", tuple(range(3, 8)), classic),
        Preset("hartenjagen", "3-4 players; J♣ 2, Q♠ 5; add then subtract", (3, 4), hartenjagen),
        Preset("hartenjagen-quick", "hartenjagen with lower phase-1 targets", (3, 4), hartenjagen_quick),
        Preset("omnibus", "standard plus J♦ = -10", (4,), omnibus),
    )
}


def preset(name: str, players: int | None = None, **options: Any) -> Ruleset:
    """The ruleset of preset ``name`` for ``players`` (its default when omitted).

    ``options`` are the preset's own keywords (``target`` for classic, ``passing`` for
    Hartenjagen, ``moon_requires_bonus`` for omnibus) or any :class:`Ruleset` field.
    """
    try:
        p = PRESETS[name]
    except KeyError:
        raise RulesetError(f"unknown ruleset {name!r}; known: {', '.join(sorted(PRESETS))}") from None
    own = {k: options.pop(k) for k in list(options) if k in p.options}
    ruleset = p.build(players, **own)
    return ruleset.with_options(**options) if options else ruleset

