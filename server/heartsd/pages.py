"""Page tokens for listings: opaque to callers, checked when they come back.

A token holds the sort key of the last item of a page and the filter it was made for,
so the next page starts right after it (keyset paging: items added meanwhile never
shift or repeat later pages) and a token cannot be replayed with another filter.

>>> token = encode((1700000000000, "m-abc"), "finished")
>>> decode(token, "finished")
(1700000000000, 'm-abc')
>>> decode(token, "running")
Traceback (most recent call last):
...
heartsd.arena.ArenaError: this page_token was made for another filter (status finished)
>>> decode(token, "finished", "ListTournaments")
Traceback (most recent call last):
...
heartsd.arena.ArenaError: page_token is not a token from a previous ListTournaments response
"""

from __future__ import annotations

import base64
import binascii
import json

from .arena import ArenaError

# Ours are ~60-80 characters: a created time, an id (at most 64), a status name, a call.
MAX_TOKEN_CHARS = 512
LIST_MATCHES = "ListMatches"


def encode(key: tuple[int, str], scope: str, call: str = LIST_MATCHES) -> str:
    """A token for the page after ``key`` of ``call``'s listing with filter ``scope``. A
    ListMatches token holds three items (as it always did); another call's names its call
    too, so neither listing takes the other's tokens."""
    items: list[object] = [key[0], key[1], scope]
    if call != LIST_MATCHES:
        items.append(call)
    raw = json.dumps(items, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode(token: str, scope: str, call: str = LIST_MATCHES) -> tuple[int, str]:
    """The key in ``token``; ArenaError (INVALID_ARGUMENT) for a token that is not one of
    ``call``'s or was made for another ``scope``. A token comes from anyone: it is bounded
    in length (deep JSON nesting raised RecursionError) and its key must fit the store's
    64-bit integer (a larger one raised OverflowError in the query), and its texts must be
    text the store takes (no lone surrogate, no NUL: PostgreSQL refuses one), each INTERNAL
    before. The NUL check at the door (budgets.nul_field) sees the token's base64 alone."""
    try:
        if len(token) > MAX_TOKEN_CHARS:
            raise ValueError
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        created, item_id, made_for, *made_by = json.loads(raw)
        if made_by != ([] if call == LIST_MATCHES else [call]):
            raise ValueError
        if (type(created) is not int or not -2 ** 63 <= created < 2 ** 63 or not isinstance(item_id, str)
                or not isinstance(made_for, str)):
            raise ValueError
        item_id.encode(), made_for.encode()  # a lone surrogate ("\ud800") is no text the store takes
        if "\x00" in item_id or "\x00" in made_for:  # nor a NUL, on PostgreSQL (INTERNAL before: an attack pass)
            raise ValueError
    except (ValueError, TypeError, binascii.Error, RecursionError):  # UnicodeError is a ValueError
        raise ArenaError("invalid", f"page_token is not a token from a previous {call} response") from None
    if made_for != scope:
        raise ArenaError("invalid", f"this page_token was made for another filter (status {made_for or 'any'})")
    return created, item_id
