"""Continuous matchmaking for the ladder: rated matches among connected bots.

Every tick, for the ladder's ruleset: the connected, registered bots with a free match
slot are candidates. While there are enough bots of different owners, they play
duplicate sets (duplicate.py): ``set_tables`` tables dealt the same fresh shuffles at
the same time, never two bots of one owner in a set, so each bot is compared with the
bots that held its cards. Bots that cannot make a set (too few owners connected, or
they waited ``set_wait_s`` for one) play plain tables: the one with the fewest rated
matches anchors a table, and the others closest to it in rating fill it, never two bots
of one owner at a table (unless allowed). Every deal is a shuffle never dealt before
(shuffles.py): bots remember what they are shown, so no shuffle is ever replayed.
Only finished matches are rated; an aborted one simply leaves its bots free for the
next tick, which reschedules them.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable
from itertools import chain, islice
from dataclasses import dataclass
from typing import TYPE_CHECKING

import structlog

from hearts_engine import preset
from heartsbot.proto import admin_pb2, game_pb2

from .arena import ArenaError, SeatRequest
from .closest import ClosestFirst
from .duplicate import form_set, start_set

if TYPE_CHECKING:
    from .arena import Arena

log = structlog.get_logger("heartsd.ladder")

FAILING_LOG_S = 60.0  # while matchmaking ticks fail: how often it is said again


@dataclass(frozen=True)
class LadderSettings:
    ruleset: str = "standard"
    # Deals per match; 0, the default, means the players times the length of the pass
    # schedule (standard: 16), so every match passes every way equally often.
    deals: int = 0
    interval_s: float = 1.0
    same_owner: bool = False
    # Registered house bots (--ladder-house). With fill_only they take a seat only to
    # complete a table that the other connected bots cannot fill by themselves.
    house: frozenset[str] = frozenset()
    fill_only: bool = False
    # Four bots that just played together wait up to this long for others to come free
    # before being seated together again, so small ladders keep mixing their tables.
    repeat_wait_s: float = 30.0
    # Tables per duplicate set (below 2: no sets, plain tables only), and how long a free
    # bot waits for a set to form while enough owners are connected to make one.
    set_tables: int = 2
    set_wait_s: float = 30.0


class RepeatWaits:
    """How long four bots who just played together wait before meeting again, so that small
    ladders keep mixing their tables: a table is held while it is every one of its bots'
    last, other ladder bots are busy (they may come free to mix with), and ``wait_s`` has
    not passed since it was first held after it played.

    Its wait starts afresh each time the table plays, plain or as a duplicate set's table:
    before (an attack pass), a table held once and then played in a set kept its old start,
    and its next plain meeting did not wait at all. A wait is kept only while its table is
    still every one of its bots' last (before, kept for ever once its bots moved on).

    >>> waits, busy = RepeatWaits(wait_s=30.0), lambda: True
    >>> waits.played(frozenset("abcd"))
    >>> waits.held(frozenset("abcd"), 0.0, busy), waits.held(frozenset("abcd"), 31.0, busy)
    (True, False)
    """

    def __init__(self, wait_s: float) -> None:
        self.wait_s = wait_s
        self._last: dict[str, frozenset[str]] = {}  # each bot's last table
        self._since: dict[frozenset[str], float] = {}  # a held table: since when

    def __len__(self) -> int:
        return len(self._since)

    def played(self, table: frozenset[str]) -> None:
        """``table`` starts a match (plain, or a duplicate set's table)."""
        for bot in table:
            moved_on = self._last.get(bot)
            if moved_on is not None and moved_on != table:
                self._since.pop(moved_on, None)  # no longer every one of its bots' last table
            self._last[bot] = table
        self._since.pop(table, None)  # its next wait starts afresh

    def held(self, table: frozenset[str], now: float, others_busy: Callable[[], bool]) -> bool:
        """Whether ``table`` waits now; ``others_busy()``, whether other ladder bots play
        matches, is asked only of a table that just played (it scans every busy bot)."""
        if any(self._last.get(b) != table for b in table) or not others_busy():
            return False
        return now - self._since.setdefault(table, now) < self.wait_s


class Matchmaker:
    def __init__(self, arena: Arena, settings: LadderSettings, seed: int | None = None) -> None:
        self.arena = arena
        self.settings = settings
        self.rules = preset(settings.ruleset)
        self.deals = settings.deals or self.rules.players * len(self.rules.pass_schedule)
        self.rng = random.Random(seed)
        self.created = 0
        self._tokens_since: float | None = None  # the tick's start: its tables share one read of the tokens
        self._repeats = RepeatWaits(settings.repeat_wait_s)
        self._free_since: dict[str, float] = {}  # when each free bot started waiting for a set
        self.sets_created = 0

    async def run(self) -> None:
        """A tick every ``interval_s``. A tick that fails (the store full or away) is logged
        with its traceback once, then once every FAILING_LOG_S while it goes on failing, and
        its end once: before (an attack pass), a full disk wrote a traceback every second."""
        failing_since: float | None = None
        told = 0.0
        failures = 0
        while self.arena.accepting:
            try:
                await asyncio.to_thread(self._refresh)
                await self.tick()
            except Exception as exc:
                failures += 1
                now = time.monotonic()
                if failing_since is None:
                    failing_since = told = now
                    log.exception("matchmaking tick failed; retrying every tick")
                elif now - told >= FAILING_LOG_S:
                    told = now
                    log.error("matchmaking still failing", failed_ticks=failures, since_s=round(now - failing_since),
                              error=str(exc) or type(exc).__name__)
            else:
                if failing_since is not None:
                    log.warning("matchmaking works again", failed_ticks=failures)
                    failing_since, failures = None, 0
            await asyncio.sleep(self.settings.interval_s)

    def _refresh(self) -> None:
        self._owners = self.arena.ladder_owners()  # active bots only, none a configured bot
        self._ratings = self.arena.store.ladder.stored_ratings(self.settings.ruleset)  # one small table, not every result

    def candidates(self) -> list[str]:
        out = []
        for session in self.arena.sessions.all():
            bot = session.bot
            if (bot in self._owners and not session.drain_reason and session.plays(self.settings.ruleset)
                    and self.arena.free_slots(bot) > 0):
                out.append(bot)
        return out

    async def tick(self) -> list[str]:
        """Create every table that can be filled now; return the new match ids. Tokens
        revoked or rotated (by the CLI, in another process) are seen first: one fresh read
        of the ladder's tokens serves every table of the tick."""
        self._tokens_since = time.monotonic()
        if await self.arena.tokens.refreshed(since=self._tokens_since):
            self.arena.check_tokens()
        free = self.candidates()
        self.rng.shuffle(free)
        free.sort(key=self._played)
        now = time.monotonic()
        self._free_since = {b: self._free_since.get(b, now) for b in free}
        created: list[str] = []
        if self.settings.set_tables >= 2:
            fillers_only = self.settings.fill_only and self.settings.house
            pool = [b for b in free if not (fillers_only and b in self.settings.house)]
            seated = set(pool)
            created += await self._sets(pool)  # pool keeps the bots left unseated
            seated -= set(pool)
            free = [b for b in free if b not in seated]
            if self._sets_possible():  # the others wait for a set, up to set_wait_s
                free = [b for b in free if (fillers_only and b in self.settings.house)
                        or now - self._free_since[b] >= self.settings.set_wait_s]
        if not (self.settings.fill_only and self.settings.house):
            return created + await self._seat(free, free)
        guests = [b for b in free if b not in self.settings.house]
        fillers = [b for b in free if b in self.settings.house]
        created += await self._seat(guests, guests)  # full tables of guests first; guests keeps the rest
        if guests and fillers:
            created += await self._seat(guests + fillers, guests)  # house bots complete their tables
        return created

    def _sets_possible(self) -> bool:
        """Whether the connected ladder bots (free or playing) have owners enough for a set."""
        owners = {self._owners[s.bot] for s in self.arena.sessions.all()
                  if s.bot in self._owners and s.plays(self.settings.ruleset)
                  and not (self.settings.fill_only and s.bot in self.settings.house)}
        return len(owners) >= self.settings.set_tables * self.rules.players

    async def _sets(self, pool: list[str]) -> list[str]:
        """Start every duplicate set ``pool`` (fewest matches first) can make; ``pool``
        keeps the bots left unseated. Returns the new match ids."""
        created: list[str] = []
        closest = ClosestFirst(pool, self._mu)
        try:
            while True:
                tables = form_set(closest, self._owners, self._mu, self.rules.players, self.settings.set_tables,
                                  self.rng)
                if tables is None:
                    return created
                try:
                    started = await start_set(self.arena, self.settings.ruleset, self.deals, tables, rated=True,
                                              tokens_since=self._tokens_since)
                except ArenaError as exc:
                    log.warning("could not start a duplicate set", tables=tables, why=exc.message)
                    return created
                for table in tables:
                    for bot in table:
                        closest.remove(bot)
                    self._repeats.played(frozenset(table))
                self.created += len(tables)
                self.sets_created += 1
                created += started.match_ids
                log.info("ladder duplicate set", set_id=started.id, matches=started.match_ids, tables=tables)
        finally:
            pool[:] = closest.bots()

    def _hold_repeat(self, table: frozenset[str]) -> bool:
        """True while ``table`` is the table its bots just played at, other ladder bots are
        busy in matches (they may come free to mix with), and the wait is still short."""
        def others_busy() -> bool:
            sessions = self.arena.sessions
            return any(bot in self._owners and bot not in table and sessions.get(bot) is not None
                       for bot in self.arena.busy_bots())

        return self._repeats.held(table, time.monotonic(), others_busy)

    def _played(self, bot: str) -> int:
        return self._ratings[bot][2] if bot in self._ratings else 0

    def _mu(self, bot: str) -> float:
        return self._ratings[bot][0] if bot in self._ratings else 25.0

    async def _seat(self, free: list[str], anchors: list[str]) -> list[str]:
        """Make tables from ``free`` (fewest matches first), each anchored by one of
        ``anchors``; start their matches; ``free`` keeps the bots left unseated."""
        n = self.rules.players
        pool = ClosestFirst(free, self._mu)
        anchoring = set(anchors)
        created: list[str] = []
        try:
            for anchor in [a for a in free if a in anchoring]:
                if anchor not in pool:
                    continue  # seated at an earlier table
                if len(pool) < n:
                    break
                pool.remove(anchor)
                table = [anchor]
                owners = {self._owners[anchor]}
                closest = pool.closest_to(self._mu(anchor))
                # The closest 2(n-1) in rating, sampled: close games, yet tables keep mixing,
                # so the ladder never splits into strata whose ratings cannot be compared.
                window = list(islice(closest, 2 * (n - 1)))
                self.rng.shuffle(window)
                for bot in chain(window, closest):
                    if len(table) == n:
                        break
                    if not self.settings.same_owner and self._owners[bot] in owners:
                        continue
                    table.append(bot)
                    owners.add(self._owners[bot])
                if len(table) < n or self._hold_repeat(frozenset(table)):
                    pool.append(anchor)  # the anchor waits for more owners, or for other tablemates
                    continue
                for bot in table[1:]:
                    pool.remove(bot)
                created += await self._start_table(table)
        finally:
            free[:] = pool.bots()
        return created

    async def _start_table(self, table: list[str]) -> list[str]:
        """Start a plain rated match of ``table``: its id, or none if it was refused."""
        self.rng.shuffle(table)
        try:
            runner = await self.arena.create_match(
                self.settings.ruleset, self.rules.players, admin_pb2.RulesetOptions(),
                game_pb2.MatchFormat(fixed_deals=self.deals), None, [SeatRequest(bot=b) for b in table],
                game_pb2.ClockSettings(), rated=True, tokens_since=self._tokens_since, purpose="ladder")
        except ArenaError as exc:
            log.warning("could not start a ladder match", seats=table, why=exc.message)
            return []
        self.created += 1
        self._repeats.played(frozenset(table))
        log.info("ladder match", match_id=runner.id, seats=table)
        return [runner.id]
