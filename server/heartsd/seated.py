"""Which matches each bot sits in: the arena's index of its matches by bot.

A bot's matches were found by asking every running match whether it seats the bot. The
matchmaker asks that of every connected ladder bot on every tick (its free slots), and
``ListBots`` of every bot: O(bots x matches). With 4,000 ladder bots in 1,000 matches a
tick held the event loop 450-700 ms of every second (``bench/matchmaking.py``). The arena
keeps this index instead: a match is added when it starts (its row still being written:
it holds its bots' places from then) and removed when it is forgotten or fails to start.

>>> class Match:
...     def __init__(self, id, names): self.id, self.names = id, names
>>> seated = Seated()
>>> m1, m2 = Match("m1", ["a", "b"]), Match("m2", ["a", "a", "c"])
>>> seated.add(m1, m1.names); seated.add(m2, m2.names)
>>> seated.count("a"), [m.id for m in seated.of("a")], seated.count("z")
(2, ['m1', 'm2'], 0)
>>> seated.remove(m1, m1.names)
>>> seated.count("a"), seated.count("b"), sorted(seated.bots())
(1, 0, ['a', 'c'])
"""

from __future__ import annotations

from collections.abc import Iterable, KeysView
from typing import Generic, Protocol, TypeVar


class _HasId(Protocol):
    @property
    def id(self) -> str: ...


M = TypeVar("M", bound=_HasId)


class Seated(Generic[M]):
    """Bot name -> the matches seating it (each once, however many of its seats), in the
    order they started."""

    def __init__(self) -> None:
        self._by_bot: dict[str, dict[str, M]] = {}

    def add(self, match: M, bots: Iterable[str]) -> None:
        for bot in bots:
            self._by_bot.setdefault(bot, {})[match.id] = match

    def remove(self, match: M, bots: Iterable[str]) -> None:
        """Idempotent: a match forgotten twice, or never added, changes nothing."""
        for bot in bots:
            matches = self._by_bot.get(bot)
            if matches is not None and matches.get(match.id) is match:
                del matches[match.id]
                if not matches:
                    del self._by_bot[bot]

    def of(self, bot: str) -> tuple[M, ...]:
        matches = self._by_bot.get(bot)
        return tuple(matches.values()) if matches else ()

    def count(self, bot: str) -> int:
        matches = self._by_bot.get(bot)
        return len(matches) if matches else 0

    def bots(self) -> KeysView[str]:
        """The bots seated in at least one match."""
        return self._by_bot.keys()
