"""Duplicate sets: the same shuffles played at the same time at several tables.

As at duplicate bridge, luck is cancelled *across tables*, never by replaying a shuffle
to the same bots (they remember it; RULES.md, "Fair duplicate for remote bots"). A set
is ``k`` tables of ``n`` different bots, never two of one owner in the whole set, each
table an ordinary fixed-deals match from the same seed: the bot in seat ``h`` at every
table holds the same cards, deal after deal. Each bot's result is then compared with
those of the other bots that held its hands.

This module is the reusable piece (the ladder uses it; tournaments can):

- :func:`form_set` picks and seats the bots of a set from free ones;
- :func:`start_set` validates it, creates its matches in one store transaction (their
  shuffles in the ledger before any card is dealt) and starts them;
- while any table of a set is running (on any daemon of the store), what spectators and
  records may show is gated (:mod:`heartsd.spectating`, :mod:`heartsd.releases`);
- :func:`rating_events` turns a finished set's stored results into its rating updates,
  a pure function of the stored rows, so ``heartsd ladder recompute`` stays exact.

How a set is rated, and why: each table ranks its bots by their points, as any rated
match does; then the holders of each hand are ranked against one another by the points
they took with it (:func:`rating_events`). The second comparison is evidence no plain
match has: two bots of about the same rating (see :func:`form_set`) that held the same
cards against comparable opponents. Measured with the engine alone (the eight bots of
bench/ladder.py, two tables of four a round, 4-deal matches, 6 runs of 1,200 matches,
each rule on its own simulated ladder; matches until the true order is reached and
kept, median; share of the second half in the true order; adjacent pairs in order by mu,
of 7, over the run and over the first 100 rounds):

=============================================  ======  =====  ====  =========
plain tables, fresh shuffles                      923   0.85  6.49  5.60
set, table ranks only                            1083   0.90  6.57  5.59
set, table ranks + holders of each hand (this)   1077   0.84  6.56  5.86
set, holders of each hand only                   1171   0.40  5.91  5.14
set, points minus half the hand's mean           1201   0.64  6.33  5.54
set, all 8 by points minus the other holder's    1201   0.09  5.20  4.85
=============================================  ======  =====  ====  =========

Ranking all ``k * n`` bots of a set by their points minus the other holders' mean loses
what a table's ranks say (a strong bot and a weak one that each matched their hand's
other holder look alike), and subtracting the hand's value adds the other holder's luck
of play. Across tables the luck of the deal cancels much less than in-match duplicate
seating did: in Hearts most of a result's variance is the play (which cards the passer
gives, how the other three play them), and the other table's opponents differ. The
stronger of two adjacent bots finishes ahead of the other in 59% of their meetings at
one table, and in 60-61% of the sets where they held the same hand (57-58% when sets are
seated at random rather than by rating neighbours).
"""

from __future__ import annotations

import asyncio
import random
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain, islice
from typing import TYPE_CHECKING

from heartsbot.proto import admin_pb2, game_pb2

from .arena import ArenaError, SeatRequest, SeedRefused, invalid
from .closest import ClosestFirst
from .releases import DealReleases
from .ladder import SetRow, set_rating_events as rating_events
from .shuffles import ShuffleRepeated

if TYPE_CHECKING:
    from .arena import Arena
    from .runner import ClockPolicy, MatchRunner
    from .slots import Reservation

__all__ = ["DuplicateSet", "SetRow", "form_set", "rating_events", "start_set"]
SEED_DRAWS = 5


@dataclass(eq=False)
class DuplicateSet:
    """A running set: its tables' runners share one seed and one :class:`DealReleases`."""

    id: str
    runners: list[MatchRunner]
    releases: DealReleases
    tables: list[list[str]] = field(default_factory=list)

    @property
    def match_ids(self) -> list[str]:
        return [r.id for r in self.runners]


def form_set(free: Sequence[str] | ClosestFirst, owners: Mapping[str, str], mu: Callable[[str], float],
             players: int, tables: int, rng: random.Random) -> list[list[str]] | None:
    """Bots for one set from ``free`` (in priority order: the first anchors it), seated.

    Returns ``tables`` lists of ``players`` bot names (seat order), or ``None`` when
    ``free`` has too few bots of different owners. The anchor's closest bots in rating
    fill the set (the closest ``2 (size - 1)`` sampled, so sets keep mixing). Seating:
    the bots sorted by rating are cut into groups of ``tables`` neighbours, and each
    group holds one hand (one seat number) at every table: so each bot is compared with
    bots of about its rating that held its cards, and the tables are of comparable
    strength (each has one bot of every group). The matchmaker passes its free bots as a
    :class:`ClosestFirst`, which finds the closest without sorting them all for each set."""
    size = players * tables
    pool = free if isinstance(free, ClosestFirst) else ClosestFirst(free, mu)
    anchor = pool.first()
    if anchor is None:
        return None
    chosen = [anchor]
    used = {owners[anchor]}
    others = pool.closest_to(mu(anchor), but=anchor)
    window = list(islice(others, 2 * (size - 1)))
    rng.shuffle(window)
    for bot in chain(window, others):
        if len(chosen) == size:
            break
        if owners[bot] not in used:
            chosen.append(bot)
            used.add(owners[bot])
    if len(chosen) < size:
        return None
    ranked = sorted(chosen, key=lambda b: (-mu(b), rng.random()))
    groups = [ranked[i:i + tables] for i in range(0, size, tables)]
    rng.shuffle(groups)  # which seat each group's hand is dealt to
    for group in groups:
        rng.shuffle(group)  # which table each holder of the hand plays at
    return [[groups[seat][table] for seat in range(players)] for table in range(tables)]


async def start_set(arena: Arena, ruleset: str, deals: int, tables: Sequence[Sequence[str]], rated: bool = True,
                    clock: game_pb2.ClockSettings | ClockPolicy | None = None, tokens_since: float | None = None,
                    purpose: str = "ladder", seed: int | None = None, reservation: Reservation | None = None,
                    versions: Mapping[str, str] | None = None, absent: frozenset[str] = frozenset(),
                    tournament: str = "") -> DuplicateSet:
    """Validate and start a set: every table a fixed-deals match of ``deals`` deals from one
    drawn seed, all inserted in one transaction with their shuffles in the ledger.

    Refused (:class:`ArenaError`, INVALID_ARGUMENT) unless there are at least two tables
    of the ruleset's player count, every bot is in the set once, and no two bots share an
    owner; rated sets seat only registered ladder bots. A tournament gives its own ``seed``
    (refused with :class:`SeedRefused` if it deals a shuffle dealt before), the
    ``reservation`` that holds the bots' slots (slots.py), the ``versions`` it froze and
    the bots it no longer waits for (``absent``) and its id (``tournament``; see
    :meth:`Arena.create_match`)."""
    if len(tables) < 2:
        raise invalid("a duplicate set needs at least two tables")
    options, fmt = admin_pb2.RulesetOptions(), game_pb2.MatchFormat(fixed_deals=deals)
    clock = clock or game_pb2.ClockSettings()
    seats = [[SeatRequest(bot=b) for b in table] for table in tables]
    checked = [arena.check_match(ruleset, len(t), options, fmt, t, rated) for t in seats]
    rules, match_format = checked[0]
    everyone = [b for table in tables for b in table]
    if len(set(everyone)) != len(everyone):
        raise invalid("a duplicate set seats each bot once")
    owners = await asyncio.to_thread(arena.owners, sorted(everyone))  # the set's bots' rows alone (each once: above)
    if len({owners.get(b, b) for b in everyone}) != len(everyone):  # a bot of no known owner is its own
        raise invalid("a duplicate set never seats two bots of one owner: they would share the cards they hold")
    if rated:
        for table in seats:
            await arena.check_rated(table)
    policy = arena._policy(clock)
    await arena.check_seats_free(ruleset, [s for table in seats for s in table], tokens_since, versions, reservation,
                                 absent)
    explicit = seed
    for _ in range(SEED_DRAWS):
        seed = secrets.randbits(63) if explicit is None else explicit
        set_id = "s-" + secrets.token_hex(8)
        runners = [arena.new_runner(rules, match_format, seed, table, policy, rated, strict=True, versions=versions,
                                    absent=absent) for table in seats]
        releases = DealReleases([runner.table for runner in runners])
        for runner in runners:
            runner.set_id = set_id
            runner.releases = releases
        try:
            await arena.start(runners, purpose, reservation, tournament)
        except ShuffleRepeated as exc:
            if explicit is not None:
                raise SeedRefused("precondition", f"seed {seed} deals a shuffle that was dealt before (match "
                                  f"{exc.match_id}, deal {exc.deal})") from None
            continue
        return DuplicateSet(set_id, runners, releases, [list(t) for t in tables])
    raise ArenaError("unavailable", f"no fresh seed in {SEED_DRAWS} draws")
