"""``hearts-engine``: play a quick match with random legal moves, or verify a record file.

Meant for trying a ruleset out and for checking stored records by hand::

    hearts-engine play --ruleset classic --players 5 --seed 42
    hearts-engine verify match.json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
from collections.abc import Sequence

from .errors import RecordError, RulesetError
from .match import Match, MatchFormat
from .presets import PRESETS, preset
from .record import MatchRecord, record_of, verify_record


def _play(args: argparse.Namespace) -> int:
    # Checked before the match is played (it was a traceback after it).
    if args.record and not os.access(os.path.dirname(os.path.abspath(args.record)), os.W_OK | os.X_OK):
        raise ValueError(f"--record {args.record}: its folder does not exist or is not writable")
    if args.record and os.path.isdir(args.record):  # a traceback after the match, before
        raise ValueError(f"--record {args.record}: a folder; name a file in it")
    rules = preset(args.ruleset, players=args.players)
    fmt = MatchFormat.fixed(args.deals, args.duplicate) if args.deals else MatchFormat.game()
    match = Match(rules, fmt, seed=args.seed)
    rng = random.Random(args.seed)
    while not match.is_over:
        seat = match.to_act()[0]
        if match.deal.phase.value == "passing":
            match.apply(seat, match.default_action(seat))
        else:
            match.apply(seat, rng.choice(match.legal_actions(seat)))
    print(f"{rules.name}, {rules.players} players, seed {args.seed}: random legal play")
    print(match.score_sheet())
    if args.record:
        with open(args.record, "w", encoding="utf-8") as fh:
            fh.write(record_of(match).to_json())
        print(f"record written to {args.record}")
    return 0


def _verify(args: argparse.Namespace) -> int:
    try:
        with open(args.record, encoding="utf-8") as fh:
            record = MatchRecord.from_dict(json.load(fh))
        outcome = verify_record(record)
    except (OSError, ValueError) as exc:
        kind = "tampered" if isinstance(exc, RecordError) else "unreadable"
        print(f"{args.record}: {kind}: {exc}", file=sys.stderr)
        return 1
    state = "finished" if outcome else "unfinished"
    print(f"{args.record}: OK ({len(record.actions)} actions, {state}, outcome {outcome})")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="hearts-engine", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    play = sub.add_parser("play", help="play one match with random legal moves and print the score sheet")
    play.add_argument("--ruleset", default="standard", choices=sorted(PRESETS))
    play.add_argument("--players", type=int, default=None)
    play.add_argument("--seed", type=int, default=42)
    play.add_argument("--deals", type=int, default=0, help="fixed number of deals (default: play a game)")
    play.add_argument("--duplicate", action="store_true", help="duplicate seating (with --deals)")
    play.add_argument("--record", help="write the match record (JSON) here")
    play.set_defaults(run=_play)
    verify = sub.add_parser("verify", help="re-verify a match record file")
    verify.add_argument("record")
    verify.set_defaults(run=_verify)
    args = parser.parse_args(argv)
    try:
        return int(args.run(args))
    except (RulesetError, ValueError) as exc:
        parser.error(str(exc))
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
