"""Hearts Arena rules engine: pure, dependency-free, deterministic.

Start with :func:`preset` for a ruleset, :class:`Deal` for one deal and
:class:`Match` for a whole match; :func:`seat_view` is what one seat may know,
:func:`determinize` samples a full deal consistent with it, and
:func:`verify_record` re-checks a stored match.

>>> from hearts_engine import Match, MatchFormat, preset, parse_card
>>> m = Match(preset("standard"), MatchFormat.fixed(4, duplicate=True), seed=42)
>>> m.deal.phase.value, m.deal.pass_direction.value
('passing', 'left')

The hot modules may be compiled (mypyc; see engine/setup.py): :data:`COMPILED` says
whether they run compiled here, and ``HEARTS_ENGINE_PURE=1`` in the environment runs
the Python sources instead. Both behave identically.
"""

from pathlib import Path as _Path

from ._select import use_sources as _use_sources

_use_sources(__name__, _Path(__file__).parent)  # before any submodule is imported

from .actions import PLAY_ACTIONS, Action, MoonAction, PassAction, PlayAction, parse_action
from .cards import Card, Mask, card_name, card_symbol, cards_of, format_cards, mask_of, parse_card, parse_cards
from .deal import Deal, Phase, Trick, Unplayable, deal_at_position, why_unplayable
from .errors import (
    ActionError,
    IllegalActionError,
    InvalidActionError,
    NotYourTurnError,
    RecordError,
    RulesetError,
    WrongPhaseError,
)
from .match import FormatKind, Match, MatchFormat
from .presets import PRESETS, preset
from .record import MatchRecord, RecordedAction, record_of, replay, verify_record
from .ruleset import (
    FirstTrickFallback,
    HartenjagenPhases,
    HeartsBreak,
    MoonOption,
    MoonScoring,
    PassDirection,
    Ruleset,
)
from .scoring import DealResult, Outcome
from .views import SeatView, determinize, sample_hands, seat_view

from . import deal as _deal  # noqa: E402

COMPILED: bool = not str(_deal.__file__).endswith(".py")
"""True when the compiled (mypyc) modules run, False for the pure-Python sources."""

__all__ = [
    "COMPILED",
    "Action",
    "ActionError",
    "Card",
    "Deal",
    "DealResult",
    "FirstTrickFallback",
    "FormatKind",
    "HartenjagenPhases",
    "HeartsBreak",
    "IllegalActionError",
    "InvalidActionError",
    "Mask",
    "Match",
    "MatchFormat",
    "MatchRecord",
    "MoonAction",
    "MoonOption",
    "MoonScoring",
    "NotYourTurnError",
    "Outcome",
    "PRESETS",
    "PassAction",
    "PassDirection",
    "Phase",
    "PLAY_ACTIONS",
    "PlayAction",
    "RecordError",
    "RecordedAction",
    "Ruleset",
    "RulesetError",
    "SeatView",
    "Trick",
    "Unplayable",
    "WrongPhaseError",
    "card_name",
    "card_symbol",
    "cards_of",
    "deal_at_position",
    "determinize",
    "format_cards",
    "mask_of",
    "parse_action",
    "parse_card",
    "parse_cards",
    "preset",
    "record_of",
    "replay",
    "sample_hands",
    "seat_view",
    "verify_record",
    "why_unplayable",
]
