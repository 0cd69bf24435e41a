"""Replays: a finished match's record played again by the engine, one frame per decision.

The record says what was decided; the engine says what followed (hands, tricks,
winners, scores), so the page shows states the rules produced and computes none.
Each frame is the table after one decision, with every hand shown (the match is
over), in the shape the live table and the Playboard use (see tables.py), plus the
decision itself: who, what, its provenance and the think time the server measured.

Frames are made one deal at a time (a page asks for the deal it shows), so a long
record costs what is looked at, and a replay keeps the frames of its ``DEALS_KEPT`` most
recently asked deals. A frame says how many deals are scored (``deals_scored``); the
scores themselves are in the index, once. (Each frame used to carry every earlier deal's
score: deal 199 of a 200-deal record answered 1.1 MB, and scrubbing 40 of its deals kept
107 MiB, growing with the square of the record's length.)

A deal's frames start from the match as that deal began (``Match.at_deal``: the results
of the deals before it), not from the first action: the results come from one match
played forward as far as any page has asked, once per replay. (Each uncached deal used
to replay every earlier action: one visitor asking for random late deals of a 500-deal
match at the documented request rate held the interpreter for most of every second, and
the bots' decisions fell from ~1,000/s to ~20/s, an attack pass.)
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from typing import Any

from heartsbot.proto import spectator_pb2

from hearts_engine import Deal, DealResult, Match, MatchRecord, MoonAction, PassAction, Phase, PlayAction, card_name, mask_of
from hearts_engine.cards import cards_of

from . import present

DEALS_KEPT = 16
PHASES = {Phase.PASSING: "passing", Phase.PLAYING: "playing", Phase.MOON_CHOICE: "moon"}


class Replay:
    def __init__(self, record: spectator_pb2.MatchRecord) -> None:
        self.record = record
        self.engine = MatchRecord.from_json(record.engine_record_json)
        self.rules = self.engine.rules
        self.steps = list(self.engine.actions)
        self.decisions = list(record.decisions)
        if len(self.decisions) != len(self.steps):
            raise ValueError(f"{len(self.decisions)} decisions recorded but the engine record has {len(self.steps)}")
        self.deal_starts: dict[int, int] = {}  # deal number -> index of its first step
        for index, step in enumerate(self.steps):
            self.deal_starts.setdefault(step.deal, index)
        self._frames: OrderedDict[int, list[dict[str, Any]]] = OrderedDict()
        self._forward = Match(self.engine.rules, self.engine.format, self.engine.seed)  # see _results_before
        self._forward_steps = 0
        self._forward_lock = threading.Lock()  # frames are made in worker threads
        # The index as the page reads it, made once here (a replay is built in the replay
        # work's worker thread: web/api.py) and served as it is: made per request on the
        # event loop, a 1,000-deal match's took ~24 ms, and one visitor asking for it at the
        # web rate held the loop half of every second (an attack pass, 2026-12-07).
        self.index_json = json.dumps(self.index()).encode()

    @property
    def deal_numbers(self) -> list[int]:
        return sorted(self.deal_starts)

    def index(self) -> dict[str, Any]:
        """What the page needs before it shows a deal: seats, deals, their tricks, scores."""
        r = self.record
        deals = []
        for number in self.deal_numbers:
            plays = sum(1 for s in self._steps_of(number) if isinstance(s.action, PlayAction))
            deals.append({"number": number, "tricks": plays // self.rules.players,
                          "frames": len(self._steps_of(number)) + 1})
        return {
            "match_id": r.match_id, "ruleset": present.ruleset(r.ruleset), "seats": [present.seat(s) for s in r.seats],
            "clock": {"decision_ms": r.clock.decision_ms, "bank_ms": r.clock.bank_ms},
            "deals": deals, "deal_scores": [present.deal_score(d) for d in r.deal_scores],
            "result": present.result(r.result), "decisions": len(self.decisions),
        }

    def _steps_of(self, number: int) -> list[Any]:
        start = self.deal_starts[number]
        end = start
        while end < len(self.steps) and self.steps[end].deal == number:
            end += 1
        return self.steps[start:end]

    def cached_frames(self, number: int) -> list[dict[str, Any]] | None:
        """Deal ``number``'s frames if they are made already (no work: no worker thread)."""
        return self._frames.get(number)

    def frames(self, number: int) -> list[dict[str, Any]]:
        """Deal ``number``: the table as dealt, then after each of its decisions."""
        if number not in self.deal_starts:
            raise KeyError(number)
        cached = self._frames.get(number)
        if cached is None:
            cached = self._frames[number] = self._play(number)
            while len(self._frames) > DEALS_KEPT:
                self._frames.popitem(last=False)
        self._frames.move_to_end(number)
        return cached

    def _results_before(self, number: int) -> list[DealResult]:
        """The results of the deals before deal ``number``: the forward match is played on
        to that deal's start if it is not there yet, and never again from the first action."""
        start = self.deal_starts[number]
        with self._forward_lock:
            forward = self._forward
            while self._forward_steps < start:
                step = self.steps[self._forward_steps]
                forward.apply(step.seat, step.action)
                self._forward_steps += 1
            return forward.results[:number]

    def _play(self, number: int) -> list[dict[str, Any]]:
        engine = self.engine
        match = Match.at_deal(engine.rules, engine.format, engine.seed, self._results_before(number))
        start = self.deal_starts[number]
        deal = match.deal
        assert deal.number == number, (deal.number, number)
        frames = [self._frame(match, deal, None)]
        index = start
        while index < len(self.steps) and self.steps[index].deal == number:
            step = self.steps[index]
            match.apply(step.seat, step.action)
            frames.append(self._frame(match, deal, index))
            index += 1
        return frames

    def _frame(self, match: Match, deal: Deal, index: int | None) -> dict[str, Any]:
        rules = self.rules
        n = rules.players
        exchanged = all(p is not None for p in deal.passed) or deal.phase is not Phase.PASSING
        last = deal.tricks[-1] if deal.tricks else None
        frame: dict[str, Any] = {
            "deal": deal.number, "phase": "scored" if deal.is_over else PHASES.get(deal.phase, "playing"),
            "pass_direction": deal.pass_direction.value,
            "hands": [present.sorted_hand(cards_of(h)) for h in deal.hands],
            "hand_sizes": [h.bit_count() for h in deal.hands],
            "passes": [present.sorted_hand(cards_of(p)) if p is not None else None for p in deal.passed],
            "exchanged": exchanged,
            "trick": {"number": len(deal.tricks), "leader": deal.trick_leader if deal.trick else (
                deal.turn if deal.phase is Phase.PLAYING else -1),
                "cards": [{"seat": (deal.trick_leader + i) % n, "card": card_name(c)}
                          for i, c in enumerate(deal.trick)]},
            "last_trick": None if last is None else {
                "number": len(deal.tricks) - 1, "leader": last.leader, "winner": last.winner,
                "points": rules.points_of(mask_of(last.cards)),
                "cards": [{"seat": (last.leader + i) % n, "card": card_name(c)} for i, c in enumerate(last.cards)]},
            "tricks_done": len(deal.tricks),
            "hearts_broken": deal.hearts_broken,
            "points_taken": [rules.points_of(t) for t in deal.taken],
            "tricks_won": deal.tricks_won,
            "totals": list(match.totals),
            "deals_scored": len(match.results),  # the index's first deal_scores
            "decision": None if index is None else self._decision(index),
        }
        return frame

    def _decision(self, index: int) -> dict[str, Any]:
        d = self.decisions[index]
        action = self.steps[index].action
        out: dict[str, Any] = {
            "index": index, "seat": d.seat, "kind": present.KINDS.get(d.kind, "unknown"),
            "provenance": present.PROVENANCES.get(d.provenance, "unknown"), "think_ms": d.think_ms,
            "rejected": d.rejected_answers,
        }
        if isinstance(action, PlayAction):
            out["cards"] = [card_name(action.card)]
        elif isinstance(action, PassAction):
            out["cards"] = present.sorted_hand(action.cards)
        elif isinstance(action, MoonAction):
            out["moon"] = action.option.value
        return out
