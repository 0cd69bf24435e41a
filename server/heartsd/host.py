"""What a match runner needs from whatever hosts it, and nothing more.

The arena hosts matches; the runner only ever reaches a bot's session, sends a bot a
message, says it is over, and stores its checkpoints and result. Naming exactly that
here keeps the dependency one way (arena -> runner): the runner never imports the
arena, and a test or a tool can host a runner with anything that has these members.
"""

from __future__ import annotations

from typing import Any, Protocol

from heartsbot.proto import bot_pb2, spectator_pb2

from .lag import LoopMonitor
from .missed import MissedEndings
from .sessions import SessionRegistry


class MatchHost(Protocol):
    sessions: SessionRegistry
    loop_monitor: LoopMonitor  # the event loop's stalls, credited to the decisions they overlap
    missed: MissedEndings  # what absent bots missed of matches that ended (missed.py)

    def send_to_bot(self, bot: str, message: bot_pb2.PlayResponse) -> None:
        """Send ``message`` to ``bot``'s session, if it is connected."""

    async def think(self, strategy: Any, view: Any, time_limit_s: float | None = None) -> Any:
        """A searching house strategy's raw choice for ``view`` (thinking.choose), made off
        the event loop's interpreter (thinking.py) within ``time_limit_s`` (default: the
        strategy's own). (Typed loosely: a Strategy and a SeatView.)"""

    def kept_missed(self, runner: Any, slot: Any) -> None:
        """``slot``'s stream was still being caught up (catchup.py) when its match ended:
        what it is owed is now kept in ``missed``, to be taken from there in its turn."""

    def forget(self, runner: Any) -> None:
        """The match is over and stored: it no longer holds its bots' places. (``runner``
        is the MatchRunner; typed loosely so that this module need not import it.)"""

    async def checkpoint(self, match_id: str, record: bytes, deals: int, totals: list[int]) -> None:
        """Store a running match's record so far (a serialized MatchRecord). One match's
        checkpoints are stored in the order they are given, a later one never before an
        earlier one (the runner awaits only its latest before storing the result)."""

    async def reserve_shuffles(self, runner: Any, first: int, count: int) -> None:
        """Put the shuffles of deals ``first``... of a running game-format match in the
        ledger before they are dealt (raises shuffles.ShuffleRepeated when refused)."""

    async def store_result(self, match_id: str, status: str, reason: str, record: spectator_pb2.MatchRecord,
                           deals: int, totals: list[int], rated: bool = False, events: bytes | None = None) -> None:
        """Store the finished match (and a rated result, and ``events``: what spectators
        may see of it now that it is over) before its end is announced."""
