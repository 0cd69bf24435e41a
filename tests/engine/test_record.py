"""Records replay to the identical result; the verifier names the first bad action."""

from __future__ import annotations

import dataclasses
import random

import pytest

from hearts_engine import (
    Match,
    MatchFormat,
    MatchRecord,
    PassAction,
    PlayAction,
    RecordError,
    preset,
    record_of,
    replay,
    verify_record,
)
from hearts_engine.scoring import Outcome

from .test_rules_match import play_random


def finished(name="classic", players=4, fmt=None, seed=21) -> Match:
    match = Match(preset(name, players=players), fmt or MatchFormat.game(), seed=seed)
    play_random(match, random.Random(seed))
    return match


def test_a_record_replays_to_the_identical_result_through_json():
    match = finished()
    record = MatchRecord.from_json(record_of(match).to_json())
    again = replay(record)
    assert again.results == match.results and again.outcome == match.outcome
    assert verify_record(record) == match.outcome


def test_a_changed_card_is_reported_at_the_first_offending_action():
    match = finished("standard", fmt=MatchFormat.fixed(2), seed=3)
    record = record_of(match)
    plays = [i for i, a in enumerate(record.actions) if isinstance(a.action, PlayAction)]
    index = plays[5]
    step = record.actions[index]
    legal_now = replay(dataclasses.replace(record, actions=record.actions[:index])).deal.legal_plays(step.seat)
    bad = next(c for c in range(52) if c not in legal_now)
    actions = list(record.actions)
    actions[index] = dataclasses.replace(step, action=PlayAction(bad))
    with pytest.raises(RecordError) as err:
        verify_record(dataclasses.replace(record, actions=tuple(actions)))
    assert err.value.index == index


def test_a_swapped_seat_or_deal_number_is_caught():
    record = record_of(finished("standard", fmt=MatchFormat.fixed(1), seed=4))
    actions = list(record.actions)
    i = len(actions) - 3
    actions[i] = dataclasses.replace(actions[i], seat=(actions[i].seat + 1) % 4)
    with pytest.raises(RecordError) as err:
        verify_record(dataclasses.replace(record, actions=tuple(actions)))
    assert err.value.index == i and "turn" in err.value.reason
    actions = list(record.actions)
    actions[0] = dataclasses.replace(actions[0], deal=3)
    with pytest.raises(RecordError) as err:
        verify_record(dataclasses.replace(record, actions=tuple(actions)))
    assert err.value.index == 0


def test_a_tampered_pass_and_a_tampered_outcome_are_caught():
    record = record_of(finished("standard", fmt=MatchFormat.fixed(1), seed=5))
    first = record.actions[0]
    assert isinstance(first.action, PassAction)
    actions = list(record.actions)
    actions[0] = dataclasses.replace(first, action=PassAction(first.action.cards[:2]))
    with pytest.raises(RecordError) as err:
        verify_record(dataclasses.replace(record, actions=tuple(actions)))
    assert err.value.index == 0 and "exactly 3" in err.value.reason
    o = record.outcome
    forged = Outcome(o.totals, o.ranks, (0,) if o.winners != (0,) else (1,), o.deals)
    with pytest.raises(RecordError, match="differs") as err:
        verify_record(dataclasses.replace(record, outcome=forged))
    assert err.value.index == len(record.actions)


def test_actions_after_the_end_and_truncated_records():
    record = record_of(finished("standard", fmt=MatchFormat.fixed(1), seed=6))
    extra = dataclasses.replace(record, actions=record.actions + (record.actions[-1],))
    with pytest.raises(RecordError, match="after the match ended"):
        verify_record(extra)
    partial = dataclasses.replace(record, actions=record.actions[:10], outcome=None)
    assert verify_record(partial) is None


def test_malformed_records_raise_value_errors():
    with pytest.raises(ValueError):
        MatchRecord.from_dict({"version": 99})
    good = record_of(finished("standard", fmt=MatchFormat.fixed(1), seed=6)).to_dict()
    good["actions"][0]["action"] = "dance 2C"
    with pytest.raises(ValueError):
        MatchRecord.from_dict(good)


@pytest.mark.parametrize(
    ("name", "players"),
    [("standard", 4), ("classic", 3), ("classic", 7), ("hartenjagen", 3), ("hartenjagen-quick", 4), ("omnibus", 4)],
)
def test_every_preset_replays(name, players):
    match = finished(name, players, seed=players)
    assert verify_record(MatchRecord.from_json(record_of(match).to_json())) == match.outcome
