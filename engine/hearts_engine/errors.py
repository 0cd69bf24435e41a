"""Typed errors of the rules engine.

Every error is a ``ValueError`` so callers that only care "was it accepted?" can
catch one thing, while the server maps each subclass to its own in-band reason.
Messages name the problem from the acting seat's point of view and never mention
a card that seat cannot see.
"""

from __future__ import annotations


class RulesetError(ValueError):
    """A ruleset is inconsistent (e.g. an across-pass with three players)."""


class ActionError(ValueError):
    """An action was refused; ``reason`` is safe to show to the acting seat."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class InvalidActionError(ActionError):
    """Malformed input: not a card, the wrong number of cards, duplicates, an unknown option."""


class IllegalActionError(ActionError):
    """Well-formed but against the rules: not in hand, not following suit, hearts not broken."""


class NotYourTurnError(ActionError):
    """The seat may not act now (another seat's turn, or it already acted)."""


class WrongPhaseError(ActionError):
    """The action belongs to another phase (e.g. playing a card while passing)."""


class RecordError(ValueError):
    """A match record does not replay: ``index`` is the first offending action."""

    def __init__(self, index: int, reason: str) -> None:
        super().__init__(f"action {index}: {reason}")
        self.index = index
        self.reason = reason
