"""Match records: (ruleset, format, seed, every action) replays to the identical result.

>>> import random
>>> from hearts_engine.presets import preset
>>> from hearts_engine.match import Match, MatchFormat
>>> m = Match(preset("standard"), MatchFormat.fixed(1), seed=9)
>>> rng = random.Random(4)
>>> while not m.is_over:
...     seat = m.to_act()[0]
...     m.apply(seat, rng.choice(m.legal_actions(seat)))
>>> record = record_of(m)
>>> verify_record(MatchRecord.from_json(record.to_json())) == m.outcome
True
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from .actions import Action, parse_action
from .errors import ActionError, RecordError, RulesetError
from .match import Match, MatchFormat
from .ruleset import Ruleset
from .scoring import Outcome

RECORD_VERSION = 1


@dataclass(frozen=True)
class RecordedAction:
    """One accepted action: the deal it belongs to, the seat, the action."""

    deal: int
    seat: int
    action: Action

    def to_dict(self) -> dict[str, Any]:
        return {"deal": self.deal, "seat": self.seat, "action": str(self.action)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RecordedAction:
        return cls(int(data["deal"]), int(data["seat"]), parse_action(str(data["action"])))


@dataclass(frozen=True)
class MatchRecord:
    """Everything needed to replay a match; ``outcome`` is the claimed result, if finished."""

    rules: Ruleset
    format: MatchFormat
    seed: int
    actions: tuple[RecordedAction, ...]
    outcome: Outcome | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": RECORD_VERSION,
            "ruleset": self.rules.to_dict(),
            "format": self.format.to_dict(),
            "seed": self.seed,
            "actions": [a.to_dict() for a in self.actions],
            "outcome": None
            if self.outcome is None
            else {
                "totals": list(self.outcome.totals),
                "ranks": list(self.outcome.ranks),
                "winners": list(self.outcome.winners),
                "deals": self.outcome.deals,
            },
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), separators=(",", ":"))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MatchRecord:
        try:
            if data.get("version") != RECORD_VERSION:
                raise ValueError(f"unsupported record version {data.get('version')!r}")
            o = data.get("outcome")
            outcome = None
            if o is not None:
                outcome = Outcome(tuple(o["totals"]), tuple(o["ranks"]), tuple(o["winners"]), int(o["deals"]))
            return cls(
                Ruleset.from_dict(data["ruleset"]),
                MatchFormat.from_dict(data["format"]),
                int(data["seed"]),
                tuple(RecordedAction.from_dict(a) for a in data["actions"]),
                outcome,
            )
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, (RulesetError, ActionError)):
                raise
            raise ValueError(f"malformed match record: {exc!r}") from exc

    @classmethod
    def from_json(cls, text: str) -> MatchRecord:
        return cls.from_dict(json.loads(text))


def record_of(match: Match) -> MatchRecord:
    """The record of ``match`` so far (with its outcome once it is over)."""
    return MatchRecord(
        match.rules,
        match.format,
        match.seed,
        tuple(RecordedAction(d, s, a) for d, s, a in match.history),
        match.outcome,
    )


def replay(record: MatchRecord, observe: Callable[[Match], None] | None = None) -> Match:
    """Replay every action with the checked entry points; raise :class:`RecordError` at the
    first bad one. ``observe(match)`` sees the match before the first action and after each
    one, so a verifier that checks more (the hands each deal started with) needs no second
    replay."""
    match = Match(record.rules, record.format, record.seed)
    if observe is not None:
        observe(match)
    for index, step in enumerate(record.actions):
        if match.is_over:
            raise RecordError(index, f"{step.action} after the match ended")
        if step.deal != match.deal.number:
            raise RecordError(index, f"recorded for deal {step.deal}, but deal {match.deal.number} is in play")
        try:
            match.apply(step.seat, step.action)
        except ActionError as exc:
            raise RecordError(index, f"seat {step.seat} {step.action}: {exc.reason}") from exc
        if observe is not None:
            observe(match)
    return match


def verify_record(record: MatchRecord, observe: Callable[[Match], None] | None = None) -> Outcome | None:
    """Re-verify a record; return the recomputed outcome (``None`` for an unfinished match).

    Raises :class:`RecordError` naming the first offending action, or the result if
    the claimed outcome differs from the replayed one (index = number of actions).
    ``observe``: as for :func:`replay`.
    """
    match = replay(record, observe)
    if record.outcome is not None and record.outcome != match.outcome:
        raise RecordError(
            len(record.actions),
            f"claimed outcome {record.outcome} differs from the replayed {match.outcome}",
        )
    return match.outcome


def tamper(record: MatchRecord, index: int, action: Action) -> MatchRecord:
    """A copy with action ``index`` replaced (for tests of the verifier)."""
    actions = list(record.actions)
    actions[index] = replace(actions[index], action=action)
    return replace(record, actions=tuple(actions))
