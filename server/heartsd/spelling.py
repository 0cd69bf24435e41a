"""When two spellings name one owner or bot: shared by the ladder's registrations and the
configured bots' owners (config.py), which must agree on who is one person; and which
known name a mistyped one most resembles, for the refusals that name it."""

from __future__ import annotations

import difflib
import unicodedata
from collections.abc import Iterable


def spelling_key(name: str) -> str:
    """What two spellings of one owner or bot name share (case and Unicode compatibility
    forms): a second spelling is refused, not taken for another owner or bot.

    >>> spelling_key("Ａlice") == spelling_key("alice") == spelling_key("ALICE")
    True
    """
    return unicodedata.normalize("NFKC", name).casefold()


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """" (did you mean 'X'?)" for the known name ``name`` most resembles (one spelling of it,
    or the closest by difflib), else "": an organiser's typo names what they meant.

    >>> did_you_mean("alcie", ["alice", "bob"]), did_you_mean("ALICE", ["alice"]), did_you_mean("zed", ["alice"])
    (" (did you mean 'alice'?)", " (did you mean 'alice'?)", '')
    """
    names = sorted(set(known) - {name})
    same = [k for k in names if spelling_key(k) == spelling_key(name)]
    close = same or difflib.get_close_matches(name, names, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def unknown_ruleset(name: str) -> str:
    """"" for a ruleset preset's name, else the line that refuses it: the known ones, and
    the one it most resembles. Said by every command that takes a ruleset, before a daemon
    is asked (an operator's pass: `tournament create --ruleset standrad` was the daemon's
    refusal, exit 3, as if the arena had said no to a valid request).

    >>> unknown_ruleset("standard"), unknown_ruleset("standrad")
    ('', "unknown ruleset 'standrad'; known: classic, hartenjagen, hartenjagen-quick, omnibus, standard (did you mean 'standard'?)")
    """
    from hearts_engine.presets import PRESETS

    if name in PRESETS:
        return ""
    return f"unknown ruleset {name!r}; known: {', '.join(sorted(PRESETS))}{did_you_mean(name, PRESETS)}"
