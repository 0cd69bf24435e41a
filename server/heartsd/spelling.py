"""When two spellings name one owner or bot: shared by the ladder's registrations and the
configured bots' owners (config.py), which must agree on who is one person."""

from __future__ import annotations

import unicodedata


def spelling_key(name: str) -> str:
    """What two spellings of one owner or bot name share (case and Unicode compatibility
    forms): a second spelling is refused, not taken for another owner or bot.

    >>> spelling_key("Ａlice") == spelling_key("alice") == spelling_key("ALICE")
    True
    """
    return unicodedata.normalize("NFKC", name).casefold()
