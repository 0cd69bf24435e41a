"""The ladder: registered bots with hashed tokens, and ratings from results.

Ratings use openskill's Plackett-Luce model: it rates multiplayer rankings, is
maintained, and in our measurements (NOTES.md) reached 0.744 pairwise accuracy against a
best possible 0.746 at ~67 µs per update, fifteen times faster than TrueSkill. A tie is
rated as the mean over the orders of its bots, not by openskill's tie update (``_rate``
says why). A bot's conservative rating is mu - 3 sigma; since openskill's sigma shrinks
slowly, the leaderboard also shows points per deal with a confidence interval.

Ratings move in the transaction that stores a rated result, and are a pure function
of the results in the order they were rated (``seq``), so ``recompute`` rebuilds them
exactly (and the values are the same on SQLite and PostgreSQL).

Tokens are shown once and only their SHA-256 is stored: they are 192-bit random
strings, so a fast hash is enough to make a leaked database useless for logging in.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import random
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple
from dataclasses import dataclass

from openskill.models import PlackettLuce

from .db import Database, Transaction
from .spelling import did_you_mean, spelling_key

# tau is the drift added to every sigma before each update. openskill's default (25/300)
# suits people, whose skill wanders; it keeps sigma above ~1.6, so ratings stay a moving
# average and two close bots trade places forever (bench/ladder.py measured it). A bot is
# a program: its strength changes only when its author ships a new version. A tenth of
# the default lets fixed bots' ratings settle, and still moves a changed bot's rating
# within a few dozen matches.
TAU = 25 / 3000
MODEL = PlackettLuce(tau=TAU)
# A tie is rated as the mean over the orders of its bots (_rate): every order while there
# are at most this many, else this many drawn from the ranks alone (a tie of seven is
# 5,040 orders; a duplicate set's hands with many tables could tie more).
MAX_TIE_ORDERS = 720
# Stored with the ratings: when the model changes, they are rebuilt from the results once.
MODEL_ID = f"openskill-plackett-luce tau={TAU!r} ties=mean-of-orders/{MAX_TIE_ORDERS}"


@dataclass(frozen=True)
class RatingHistory:
    """Every bot's rating after each of its rated matches or sets of one ruleset, up to the
    rated order ``seq``: ``by_bot`` (seq, finished_ms, mu, sigma), and the replay's state
    (``ratings``: bot -> (rating, matches)) that :meth:`Ladder.extend_history` goes on
    from. Never changed once made: the next history copies the lists it extends, so a page
    may read this one while the next is built."""

    seq: int
    by_bot: dict[str, list[tuple[int, int, float, float]]]
    ratings: dict[str, tuple[object, int]]
    # time.monotonic() of the replay from scratch it goes on from: a caller rebuilds now and
    # then (web/api.py), so a result row edited by hand shows as it did before, not never.
    rebuilt_at: float


class LadderError(ValueError):
    """A refused ladder operation (unknown bot, duplicate name...)."""


class OwnerSpelling(LadderError):
    """An owner registered already under another spelling (spelling_key)."""


class BotExists(LadderError):
    """``add_bot`` of a name already registered: a sound request the store turns down
    (``heartsd ladder`` exits 3 for it, 2 for an unknown or malformed name)."""


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def new_token() -> str:
    return "hb_" + secrets.token_urlsafe(24)


FLAG_RATE = 0.05  # defaulted decisions (of every kind) above this share of decisions flag a bot


@dataclass(frozen=True)
class Standing:
    bot: str
    owner: str
    mu: float
    sigma: float
    matches: int
    points_per_deal: float
    ppd_ci: float  # half-width of the 95% confidence interval of the mean over its matches (Student's t)
    decisions: int = 0
    timeouts: int = 0
    illegal: int = 0
    disconnects: int = 0
    auto: int = 0  # played by default without waiting, after repeated defaults (a bot that left)
    # Its token is revoked (`heartsd ladder revoke`): it plays no match until `ladder rotate`
    # lets it in again, and keeps its rating meanwhile. Shown, so that a bot put out of the
    # ladder does not look like one that plays (a ladder pass).
    revoked: bool = False

    @property
    def conservative(self) -> float:
        return self.mu - 3 * self.sigma

    @property
    def defaults(self) -> int:
        """Decisions the server played for the bot: timeouts, illegal, disconnect, auto-play."""
        return self.timeouts + self.illegal + self.disconnects + self.auto

    @property
    def default_share(self) -> float:
        return self.defaults / self.decisions if self.decisions else 0.0

    @property
    def unreliable(self) -> bool:
        return self.default_share > FLAG_RATE


MAX_BOT_NAME_CHARS = 64


class Ladder:
    """Bots and ratings on the daemon's database (SQLite or PostgreSQL)."""

    def __init__(self, db: Database) -> None:
        self.db = db  # migrated by the Store that opened it

    # -- bots ---------------------------------------------------------------------

    def add_bot(self, name: str, owner: str) -> str:
        """Register ``name``; return its token (shown once, never stored)."""
        if (not name or not owner or len(name) > MAX_BOT_NAME_CHARS or not name.isascii()
                or not name.replace("-", "").replace("_", "").isalnum()):
            raise LadderError(f"a bot name is 1-{MAX_BOT_NAME_CHARS} ASCII letters, digits, '-' or '_', "
                              "and it needs an owner")
        if owner != owner.strip() or not owner.isprintable():
            raise LadderError(f"owner {owner!r}: printable text without spaces at either end")
        token = new_token()
        with self.db.transaction() as tx:
            tx.lock()  # two registrations at once (PostgreSQL): the spelling checks below see each other
            if taken := tx.query("SELECT owner, revoked_ms FROM bots WHERE name = ?", (name,)):
                # Said with its owner and the way to a new token (an organiser's pass: "exists
                # already" alone, for a bot revoked earlier, left them to guess that rotate
                # brings it back).
                owner_of, revoked = taken[0]
                raise BotExists(f"a bot named {name!r} exists already{', revoked' if revoked is not None else ''} "
                                f"(owner {owner_of!r}): `heartsd ladder rotate {name}` gives it a new token"
                                + (" and lets it in again" if revoked is not None else ""))
            # A name another bot's differs from only in case would pass for it on the
            # leaderboard and in every list ("RB1" beside "rb1"): refused. (Names are ASCII,
            # so no look-alike letters of another script either.)
            for (known,) in tx.query("SELECT name FROM bots"):
                if spelling_key(known) == spelling_key(name):
                    raise BotExists(f"a bot named {known!r} exists already; {name!r} differs from it only in case")
            # Owners are compared exactly (one owner's bots never share a table or a set),
            # so "alice" and "Alice" would be two owners: refuse the second spelling.
            for (known,) in tx.query("SELECT DISTINCT owner FROM bots"):
                if known != owner and spelling_key(known) == spelling_key(owner):
                    raise OwnerSpelling(f"owner {owner!r} is registered already as {known!r}: "
                                      "one owner's bots must share one spelling")
            tx.execute("INSERT INTO bots (name, owner, token_hash, created_ms) VALUES (?, ?, ?, ?)",
                       (name, owner, token_hash(token), _now_ms()))
        return token

    def rotate(self, name: str) -> str:
        """A new token for ``name``; the old one stops working."""
        token = new_token()
        with self.db.transaction() as tx:
            if tx.execute("UPDATE bots SET token_hash = ?, revoked_ms = NULL WHERE name = ?",
                          (token_hash(token), name)) != 1:
                raise LadderError(f"no bot named {name!r}{did_you_mean(name, self._names(tx))}")
        return token

    def revoke(self, name: str) -> None:
        with self.db.transaction() as tx:
            if tx.execute("UPDATE bots SET revoked_ms = ? WHERE name = ? AND revoked_ms IS NULL",
                          (_now_ms(), name)) != 1:
                if tx.query("SELECT 1 FROM bots WHERE name = ?", (name,)):  # not "no active bot ... did you mean"
                    raise LadderError(f"bot {name!r} is revoked already: `heartsd ladder rotate {name}` gives it a "
                                      "new token and lets it in again")
                raise LadderError(f"no active bot named {name!r}{did_you_mean(name, self._names(tx, active=True))}")

    @staticmethod
    def _names(tx: Transaction, active: bool = False) -> list[str]:
        """The registered bots' names (the active ones only if asked), for a refusal's suggestion."""
        return [r[0] for r in tx.query("SELECT name FROM bots" + (" WHERE revoked_ms IS NULL" if active else ""))]

    def bot_for_token(self, token: str) -> str | None:
        rows = self.db.query("SELECT name FROM bots WHERE token_hash = ? AND revoked_ms IS NULL", (token_hash(token),))
        return rows[0][0] if rows else None

    def owners(self, include_revoked: bool = False, names: Sequence[str] | None = None) -> dict[str, str]:
        """Bot -> owner, for active bots (revoked ones too if asked); of ``names`` only, if
        given (a match's rated check reads its seats' rows, not every bot's)."""
        conditions = [] if include_revoked else ["revoked_ms IS NULL"]
        if names is not None:
            if not names:
                return {}
            conditions.append(f"name IN ({', '.join('?' * len(names))})")
        where = f" WHERE {' AND '.join(conditions)}" if conditions else ""
        return dict(self.db.query("SELECT name, owner FROM bots" + where, tuple(names or ())))

    def registrations(self) -> dict[str, tuple[str, bool]]:
        """Bot -> (owner, revoked), for every registered bot, in one query."""
        return {name: (owner, revoked is not None)
                for name, owner, revoked in self.db.query("SELECT name, owner, revoked_ms FROM bots")}

    def has_bot(self, name: str) -> bool:
        """Whether ``name`` is a registered bot, revoked or not (its page and profile stay)."""
        return bool(self.db.query("SELECT 1 FROM bots WHERE name = ?", (name,)))

    def active_token_hashes(self) -> set[str]:
        return {r[0] for r in self.db.query("SELECT token_hash FROM bots WHERE revoked_ms IS NULL")}

    def ensure_ratings(self) -> None:
        """Upgrade paths, run at start: results stored before ratings were kept get their
        rated order (by finish time, then match id); ratings made by another rating model
        than ``MODEL_ID`` (or lost) are rebuilt from the results, once."""
        rows = self.db.query("SELECT value FROM ladder_meta WHERE name = 'rating_model'")
        stale = not rows or rows[0][0] != MODEL_ID
        if stale:
            with self.db.transaction() as tx:
                tx.lock()  # daemons starting at once on PostgreSQL: one replaces the row after the other
                tx.execute("DELETE FROM ladder_meta WHERE name = 'rating_model'")
                tx.execute("INSERT INTO ladder_meta (name, value) VALUES ('rating_model', ?)", (MODEL_ID,))
        if not self.db.query("SELECT 1 FROM results LIMIT 1"):
            return
        unordered = bool(self.db.query("SELECT 1 FROM results WHERE seq = 0 LIMIT 1"))
        if unordered:
            with self.db.transaction() as tx:
                tx.lock()
                order = tx.query("SELECT match_id, MIN(finished_ms) FROM results GROUP BY match_id ORDER BY 2, 1")
                for seq, (match_id, _) in enumerate(order, 1):
                    tx.execute("UPDATE results SET seq = ? WHERE match_id = ?", (seq, match_id))
        if unordered or stale or not self.db.query("SELECT 1 FROM ratings LIMIT 1"):
            for (ruleset,) in self.db.query("SELECT DISTINCT ruleset FROM results"):
                self.recompute(ruleset)

    # -- results and ratings --------------------------------------------------------

    @staticmethod
    def record_result(tx: Transaction, match_id: str, ruleset: str, bots: Sequence[str], ranks: Sequence[int],
                      points: Sequence[int], deals: int,
                      provenance: Sequence[tuple[int, int, int, int, int]] | None = None) -> None:
        """Insert a rated match's result, inside the transaction that stores its record.
        ``provenance`` per seat: (decisions, timeouts, illegal defaults, disconnect defaults,
        auto-played)."""
        now = _now_ms()
        counts = provenance or [(0, 0, 0, 0, 0)] * len(bots)
        tx.lock()  # two matches finishing at once take their seq and ratings one after the other
        seq = tx.query("SELECT COALESCE(MAX(seq), 0) + 1 FROM results")[0][0]
        for seat, (bot, rank, pts) in enumerate(zip(bots, ranks, points)):
            tx.execute(
                "INSERT INTO results (match_id, ruleset, bot, seat, rank, points, deals, finished_ms, "
                "decisions, timeouts, illegal, disconnects, auto, seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (match_id, ruleset, bot, seat, rank, pts, deals, now, *counts[seat], seq),
            )
        # The ratings move in the same transaction: a result is never stored unrated.
        _apply(tx, ruleset, [(list(bots), list(ranks))], bots)

    @staticmethod
    def record_set(tx: Transaction, set_id: str, ruleset: str,
                   tables: Sequence[tuple[str, Sequence[str], Sequence[int], Sequence[int], int,
                                          Sequence[tuple[int, int, int, int, int]]]]) -> None:
        """Insert a finished duplicate set's results, rated together with one ``seq``
        (set_rating_events), inside the transaction that ends its last table.
        ``tables``: (match id, bots, ranks, points, deals, provenance) per table."""
        now = _now_ms()
        tx.lock()
        seq = tx.query("SELECT COALESCE(MAX(seq), 0) + 1 FROM results")[0][0]
        rows = []
        for match_id, bots, ranks, points, deals, provenance in tables:
            for seat, (bot, rank, pts) in enumerate(zip(bots, ranks, points)):
                tx.execute(
                    "INSERT INTO results (match_id, ruleset, bot, seat, rank, points, deals, finished_ms, "
                    "decisions, timeouts, illegal, disconnects, auto, seq, set_id) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (match_id, ruleset, bot, seat, rank, pts, deals, now, *provenance[seat], seq, set_id),
                )
                rows.append(SetRow(match_id, bot, seat, rank, pts))
        _apply(tx, ruleset, set_rating_events(rows), [r.bot for r in rows])

    def reliability(self, ruleset: str) -> dict[str, tuple[int, int, int, int, int]]:
        """Per bot: decisions, timeouts, illegal-answer defaults, disconnect defaults, auto-played
        (a result not yet counted for auto-play, see :meth:`count_auto_defaults`, adds 0)."""
        rows = self.db.query(
            "SELECT bot, SUM(decisions), SUM(timeouts), SUM(illegal), SUM(disconnects), "
            "SUM(CASE WHEN auto < 0 THEN 0 ELSE auto END) FROM results WHERE ruleset = ? GROUP BY bot", (ruleset,))
        return {r[0]: (int(r[1]), int(r[2]), int(r[3]), int(r[4]), int(r[5])) for r in rows}

    def count_auto_defaults(self, provenance_of: Callable[[bytes], Sequence[tuple[int, ...]]]) -> int:
        """Upgrade path, run at start: results stored before auto-played decisions were
        counted (auto = -1) get their count from their match's stored record, so an old
        ladder's reliability figures become honest too. ``provenance_of``: a record's bytes
        to per-seat counts (store._provenance). Returns the matches counted."""
        pending = [r[0] for r in self.db.query("SELECT DISTINCT match_id FROM results WHERE auto < 0")]
        for match_id in pending:
            rows = self.db.query("SELECT record FROM matches WHERE id = ?", (match_id,))
            counts = provenance_of(rows[0][0]) if rows and rows[0][0] is not None else None
            with self.db.transaction() as tx:
                for (seat,) in tx.query("SELECT seat FROM results WHERE match_id = ? AND auto < 0", (match_id,)):
                    auto = counts[seat][4] if counts is not None and seat < len(counts) else 0
                    tx.execute("UPDATE results SET auto = ? WHERE match_id = ? AND seat = ?", (auto, match_id, seat))
        return len(pending)

    def history(self, bot: str, limit: int = 20, ruleset: str | None = None) -> list[tuple[str, str, int, int, int, int]]:
        """The bot's latest rated matches: (match id, ruleset, seat, rank, points, deals)."""
        where, args = ("bot = ? AND ruleset = ?", (bot, ruleset)) if ruleset else ("bot = ?", (bot,))
        return [tuple(r) for r in self.db.query(  # type: ignore[misc]
            f"SELECT match_id, ruleset, seat, rank, points, deals FROM results WHERE {where} "
            "ORDER BY seq DESC, match_id DESC LIMIT ?", (*args, limit))]

    def replay_ratings(self, ruleset: str) -> dict[str, tuple[float, float, int]]:
        """Every rating rebuilt from the stored results, in the order they were rated."""
        return _replay(self.db.query(_REPLAY, (ruleset,)))

    def rating_history(self, ruleset: str) -> dict[str, list[tuple[int, int, float, float]]]:
        """Per bot, its rating after each of its rated matches (or duplicate sets):
        (seq, finished_ms, mu, sigma), replayed from the results exactly as
        :meth:`replay_ratings` rates them."""
        return dict(self.extend_history(ruleset).by_bot)

    def extend_history(self, ruleset: str, since: RatingHistory | None = None) -> RatingHistory:
        """:meth:`rating_history` as it stands now: ``since`` (a history built earlier) and
        the results rated after it, replayed from its state; from scratch without one. A
        ladder's history grows with every result, and rebuilding it whole for each new one
        cost ever more (160 ms at 2,000 results); this costs what the new results do."""
        after = since.seq if since is not None else 0
        rows = self.db.query(_REPLAY_AFTER, (ruleset, after))
        # Read after the rows: every seq among them is committed, so its time is here too.
        when = dict(self.db.query("SELECT seq, MAX(finished_ms) FROM results WHERE ruleset = ? AND seq > ? "
                                  "GROUP BY seq", (ruleset, after)))
        by_bot = dict(since.by_bot) if since is not None else {}
        extended: set[str] = set()  # bots whose list is already this history's own copy

        def trace(seq: int, bot: str, rating: Any) -> None:
            if bot not in extended:
                extended.add(bot)
                by_bot[bot] = list(by_bot.get(bot, ()))
            by_bot[bot].append((int(seq), int(when[seq]), rating.mu, rating.sigma))

        ratings = dict(since.ratings) if since is not None else {}
        _replay(rows, trace, ratings)
        return RatingHistory(max((int(r[0]) for r in rows), default=after), by_bot, ratings,
                             since.rebuilt_at if since is not None else time.monotonic())

    def incomplete_results(self, ruleset: str) -> list[str]:
        """The rated matches and sets of ``ruleset`` whose result rows are not whole, in
        words: a match rated without one of its seats, a set without one of its tables, a
        finished set of the ladder without any, or one rated order (``seq``) that holds other
        than one match or the tables of one set. Replayed as they stand, such rows rate
        another match than the one played: before (an attack pass), with the last-placed
        bot's row of a match deleted, ``recompute`` rewrote every rating as if three bots had
        played it (the loss gone), and with a row of a set's table deleted it ended in a
        traceback."""
        rows = [_RatedSeat(m, int(seq), set_id, int(seat), int(players), match_set) for m, seq, set_id, seat, players,
                match_set in self.db.query(
                    "SELECT r.match_id, r.seq, r.set_id, r.seat, m.players, m.set_id FROM results r JOIN matches m "
                    "ON m.id = r.match_id WHERE r.ruleset = ? ORDER BY r.seq, r.match_id, r.seat", (ruleset,))]
        tables, finished = self._sets(ruleset)
        unrated = sorted(finished - {r.set_id for r in rows})
        return _seat_gaps(rows) + _order_gaps(rows, tables) + [
            f"set {s}: every table finished ({', '.join(sorted(tables[s]))}), but it has no results: a ladder set "
            "is rated once its tables all finish" for s in unrated]

    def _sets(self, ruleset: str) -> tuple[dict[str, set[str]], set[str]]:
        """Every set's tables, and the ladder's sets of ``ruleset`` whose tables all finished
        (outside tournaments every set is the ladder's, rated when its last table ends)."""
        tables: dict[str, set[str]] = {}
        over: set[str] = set()
        unfinished: set[str] = set()
        for match_id, set_id, status, rules, tournament in self.db.query(
                "SELECT id, set_id, status, ruleset, tournament_id FROM matches WHERE set_id <> ''"):
            tables.setdefault(set_id, set()).add(match_id)
            if rules == ruleset and not tournament:
                (over if status == "finished" else unfinished).add(set_id)
        return tables, over - unfinished

    def standings_marker(self, ruleset: str) -> tuple[int, int, int]:
        """What the leaderboard of ``ruleset`` changes with, in one query: its newest result,
        and the bots revoked (how many, the latest revocation), which it marks (Standing.revoked)."""
        row = self.db.query("SELECT (SELECT COALESCE(MAX(seq), 0) FROM results WHERE ruleset = ?), "
                            "(SELECT COUNT(*) FROM bots WHERE revoked_ms IS NOT NULL), "
                            "(SELECT COALESCE(MAX(revoked_ms), 0) FROM bots)", (ruleset,))[0]
        return int(row[0]), int(row[1]), int(row[2])

    def latest_seq(self, ruleset: str) -> int:
        """The rated order of the newest result of ``ruleset`` (0: none): a change marker."""
        return int(self.db.query("SELECT COALESCE(MAX(seq), 0) FROM results WHERE ruleset = ?", (ruleset,))[0][0])

    def stored_ratings(self, ruleset: str) -> dict[str, tuple[float, float, int]]:
        return _ratings(self.db.query(_STORED, (ruleset,)))

    def recompute(self, ruleset: str) -> tuple[int, float]:
        """Rebuild the stored ratings from the results; return (bots, largest change).
        Replay, comparison and rewrite happen in one locked transaction, so a result rated
        meanwhile cannot slip between them. The change is 0.0 unless the stored ratings
        had been tampered with or lost."""
        with self.db.transaction() as tx:
            tx.lock()
            fresh = _replay(tx.query(_REPLAY, (ruleset,)))
            stored = _ratings(tx.query(_STORED, (ruleset,)))
            change = 0.0
            for bot in set(fresh) | set(stored):
                a, b = fresh.get(bot, (0.0, 0.0, 0)), stored.get(bot, (0.0, 0.0, 0))
                change = max(change, abs(a[0] - b[0]), abs(a[1] - b[1]), float(abs(a[2] - b[2])))
            tx.execute("DELETE FROM ratings WHERE ruleset = ?", (ruleset,))
            for bot, (mu, sigma, matches) in fresh.items():
                tx.execute("INSERT INTO ratings (ruleset, bot, mu, sigma, matches) VALUES (?, ?, ?, ?, ?)",
                           (ruleset, bot, mu, sigma, matches))
        return len(fresh), change

    def standings(self, ruleset: str) -> list[Standing]:
        """The leaderboard of ``ruleset``, best conservative rating first."""
        ratings = self.stored_ratings(ruleset)
        per_deal: dict[str, list[float]] = {}
        for bot, points, deals in self.db.query(
                "SELECT bot, points, deals FROM results WHERE ruleset = ? ORDER BY seq, seat", (ruleset,)):
            per_deal.setdefault(bot, []).append(points / max(1, deals))
        registered = self.registrations()
        counts = self.reliability(ruleset)
        out = []
        for bot, (mu, sigma, matches) in ratings.items():
            values = per_deal.get(bot, [0.0])
            mean = sum(values) / len(values)
            ci = _t975(len(values) - 1) * _stdev(values) / math.sqrt(len(values)) if len(values) > 1 else float("inf")
            owner, revoked = registered.get(bot, ("", False))
            out.append(Standing(bot, owner, mu, sigma, matches, mean, ci, *counts.get(bot, (0, 0, 0, 0, 0)),
                                revoked=revoked))
        return sorted(out, key=lambda s: (-s.conservative, s.bot))


@dataclass(frozen=True)
class SetRow:
    """One bot's stored result in a set: its table (match id), seat, table rank, points."""

    match_id: str
    bot: str
    seat: int
    rank: int
    points: int


def set_rating_events(rows: Sequence[SetRow]) -> list[tuple[list[str], list[int]]]:
    """The rating updates of one finished duplicate set (duplicate.py), in order: (bots, ranks) each, lower rank
    better, equal ranks tied. First each table's ranks (by match id), then for every seat
    number the holders of that hand ranked by the points they took with it."""
    events: list[tuple[list[str], list[int]]] = []
    by_table: dict[str, list[SetRow]] = {}
    for row in sorted(rows, key=lambda r: (r.match_id, r.seat)):
        by_table.setdefault(row.match_id, []).append(row)
    for table in by_table.values():
        events.append(([r.bot for r in table], [r.rank for r in table]))
    for seat in sorted({r.seat for r in rows}):
        holders = [r for r in sorted(rows, key=lambda r: r.match_id) if r.seat == seat]
        points = [r.points for r in holders]
        events.append(([r.bot for r in holders], [1 + sum(p < own for p in points) for own in points]))
    return events


class _RatedSeat(NamedTuple):
    """One result row as Ladder.incomplete_results reads it, with its match's seats and set."""

    match_id: str
    seq: int
    set_id: str
    seat: int
    players: int  # its match's
    match_set: str  # its match's set id


def _seat_gaps(rows: Sequence[_RatedSeat]) -> list[str]:
    """Matches rated without every seat, across rated orders, or as of another set than theirs."""
    problems = []
    by_match: dict[str, list[_RatedSeat]] = {}
    for row in rows:
        by_match.setdefault(row.match_id, []).append(row)
        if row.set_id != row.match_set:
            problems.append(f"{row.match_id}: seat {row.seat} is rated as of set {row.set_id or 'none'!r}, the "
                            f"match is of set {row.match_set or 'none'!r}")
    for match_id, seated in by_match.items():
        held = sorted(r.seat for r in seated)
        if held != list(range(seated[0].players)):
            problems.append(f"{match_id}: rated with the results of seat(s) {held} of its {seated[0].players}: a "
                            "rated match is rated with every seat")
        orders = sorted({r.seq for r in seated})
        if len(orders) > 1:
            problems.append(f"{match_id}: its seats are rated at different places of the rated order {orders}")
    return problems


def _order_gaps(rows: Sequence[_RatedSeat], tables: Mapping[str, set[str]]) -> list[str]:
    """Rated orders holding other than one match or one set, and sets rated without a table."""
    problems = []
    by_seq: dict[int, set[tuple[str, str]]] = {}  # seq -> its (set id, match id)s
    for row in rows:
        by_seq.setdefault(row.seq, set()).add((row.set_id, row.match_id))
    for seq, members in by_seq.items():
        set_ids = {set_id for set_id, _ in members}
        if len(set_ids) > 1 or (set_ids == {""} and len(members) > 1):
            problems.append(f"rated order {seq} holds the results of {len(members)} matches "
                            f"({', '.join(sorted(m for _, m in members))}), not one match or one set")
        elif set_ids != {""}:
            (set_id,) = set_ids
            missing = sorted(tables.get(set_id, set()) - {m for _, m in members})
            if missing:
                problems.append(f"set {set_id}: rated without the results of its table(s) {', '.join(missing)}")
    return problems


_REPLAY = ("SELECT seq, set_id, match_id, bot, seat, rank, points FROM results WHERE ruleset = ? "
           "ORDER BY seq, match_id, seat")
_REPLAY_AFTER = ("SELECT seq, set_id, match_id, bot, seat, rank, points FROM results WHERE ruleset = ? AND seq > ? "
                 "ORDER BY seq, match_id, seat")
_STORED = "SELECT bot, mu, sigma, matches FROM ratings WHERE ruleset = ?"


def _ratings(rows: Sequence[tuple[Any, ...]]) -> dict[str, tuple[float, float, int]]:
    return {r[0]: (r[1], r[2], r[3]) for r in rows}


def _replay(rows: Sequence[tuple[Any, ...]], trace: Callable[[int, str, Any], None] | None = None,
            ratings: dict[str, tuple[object, int]] | None = None) -> dict[str, tuple[float, float, int]]:
    """The ratings from results in rated order: each ``seq`` is one rated match, or one
    duplicate set (its rating events: set_rating_events), as :func:`_apply` rated it.
    ``trace(seq, bot, rating)`` sees each bot's rating once its match or set is rated.
    ``ratings`` (bot -> (rating, matches)): the state to go on from, updated in place
    (its rating objects are never changed: each update makes new ones)."""
    if ratings is None:
        ratings = {}
    by_seq: dict[int, list[tuple[Any, ...]]] = {}
    for row in rows:
        by_seq.setdefault(row[0], []).append(row)  # dicts keep the rated order
    for group in by_seq.values():
        if group[0][1]:  # a duplicate set
            set_rows = [SetRow(match_id, bot, seat, rank, points) for _, _, match_id, bot, seat, rank, points in group]
            events = set_rating_events(set_rows)
            played = [r.bot for r in set_rows]
        else:
            played = [r[3] for r in group]
            events = [(played, [r[5] for r in group])]
        for bots, ranks in events:
            if len(bots) < 2:
                continue  # one bot is ranked against nobody (rows lost: Ladder.incomplete_results names them)
            before = [ratings.get(b, (MODEL.rating(name=b), 0))[0] for b in bots]
            for bot, rating in zip(bots, _rate(before, ranks)):
                ratings[bot] = (rating, ratings.get(bot, (None, 0))[1])
        for bot in played:
            ratings[bot] = (ratings[bot][0], ratings[bot][1] + 1)
        if trace is not None:
            for bot in dict.fromkeys(played):
                trace(group[0][0], bot, ratings[bot][0])
    return {b: (r.mu, r.sigma, n) for b, (r, n) in ratings.items()}  # type: ignore[attr-defined]


def _apply(tx: Transaction, ruleset: str, events: Sequence[tuple[list[str], list[int]]], played: Sequence[str]) -> None:
    """Rate ``events`` in order (one Plackett-Luce update each) on the stored ratings, and
    count one more rated match for each bot of ``played``."""
    current: dict[str, tuple[object, int]] = {}
    for bot in dict.fromkeys(b for bots, _ in events for b in bots):
        row = tx.query("SELECT mu, sigma, matches FROM ratings WHERE ruleset = ? AND bot = ?", (ruleset, bot))
        current[bot] = (MODEL.rating(name=bot, mu=row[0][0], sigma=row[0][1]), row[0][2]) if row else (
            MODEL.rating(name=bot), 0)
    for bots, ranks in events:
        if len(bots) < 2:
            continue  # as _replay: never so when a result is stored whole
        for bot, rating in zip(bots, _rate([current[b][0] for b in bots], ranks)):
            current[bot] = (rating, current[bot][1])
    for bot in played:
        current[bot] = (current[bot][0], current[bot][1] + 1)
    for bot, (rating, matches) in current.items():
        tx.execute("DELETE FROM ratings WHERE ruleset = ? AND bot = ?", (ruleset, bot))
        tx.execute("INSERT INTO ratings (ruleset, bot, mu, sigma, matches) VALUES (?, ?, ?, ?, ?)",
                   (ruleset, bot, rating.mu, rating.sigma, matches))  # type: ignore[attr-defined]


def _rate(ratings: Sequence[object], ranks: Sequence[int]) -> list[object]:
    """One Plackett-Luce update of a table (each bot a team of one; lower rank better).

    Equal ranks tie, and a tie means that the order of its bots is not known: the update is
    the mean (of mu and of sigma) of openskill's updates for each strict order the ranks
    allow, each as likely. openskill's own tie update (Weng & Lin's Algorithm 4, which it
    follows exactly) rates a tie oddly beside other places: at equal ratings, ranks [1, 1,
    3, 4] gave the third the co-winners' mu and a smaller sigma, so a higher conservative
    rating than theirs, and [1, 2, 2, 4] left the two seconds below where they started (a
    conformance pass; openskill.py issue #155). A table without a tie rates exactly as
    openskill does."""
    if len(set(ranks)) == len(ranks):
        teams = MODEL.rate([[r] for r in ratings], ranks=list(ranks))  # type: ignore[list-item]
        return [team[0] for team in teams]
    orders = _tie_orders(ranks)
    mus: list[list[float]] = [[] for _ in ranks]
    sigmas: list[list[float]] = [[] for _ in ranks]
    for order in orders:
        for i, team in enumerate(MODEL.rate([[r] for r in ratings], ranks=order)):  # type: ignore[list-item]
            mus[i].append(team[0].mu)
            sigmas[i].append(team[0].sigma)
    # fsum: exactly rounded, so tied bots of equal ratings, whose terms come in other
    # orders, rate exactly alike
    return [MODEL.rating(mu=math.fsum(m) / len(orders), sigma=math.fsum(s) / len(orders), name=getattr(r, "name", None))
            for r, m, s in zip(ratings, mus, sigmas)]


def _tie_orders(ranks: Sequence[int]) -> list[list[int]]:
    """The strict ranks (1..n) consistent with ``ranks``: every one while there are at most
    MAX_TIE_ORDERS; else at most that many, drawn by a generator seeded with the ranks alone
    (the same results always rate alike: a rebuild, SQLite and PostgreSQL), each draw with
    its tied groups rotated through every shift, so that each tied bot takes each of its
    tie's places equally often (at most the shifts' count, if it alone is more).

    >>> _tie_orders([1, 1, 3])
    [[1, 2, 3], [2, 1, 3]]
    """
    groups = [[i for i, r in enumerate(ranks) if r == rank] for rank in sorted(set(ranks))]
    count = math.prod(math.factorial(len(g)) for g in groups)

    def strict(arranged: Sequence[Sequence[int]]) -> list[int]:
        order = [0] * len(ranks)
        for place, seat in enumerate((seat for group in arranged for seat in group), 1):
            order[seat] = place
        return order

    if count <= MAX_TIE_ORDERS:
        return [strict(arranged) for arranged in itertools.product(*(itertools.permutations(g) for g in groups))]
    shifts = math.lcm(*(len(g) for g in groups))
    draw = random.Random("tie-orders:" + ",".join(map(str, ranks)))
    orders = []
    for _ in range(max(1, MAX_TIE_ORDERS // shifts)):
        drawn = [draw.sample(g, len(g)) for g in groups]
        for shift in range(shifts):
            orders.append(strict([g[shift % len(g):] + g[:shift % len(g)] for g in drawn]))
    return orders


def places(standings: Sequence[Standing]) -> list[int]:
    """The leaderboard's rank of each of ``standings`` (best first): bots of equal
    conservative rating share a rank, and the next rank counts them all ("1, 1, 3").

    Before (a ladder pass), ranks were positions, so of two bots whose ratings are equal (the
    co-winners of their first match) the one whose name sorts first was ranked above the
    other, on the leaderboard, the bot's profile and ``heartsd ladder leaderboard``.

    >>> rated = [Standing("b", "", 30.0, 1.0, 1, 0.0, 0.0), Standing("a", "", 30.0, 1.0, 1, 0.0, 0.0),
    ...          Standing("c", "", 20.0, 1.0, 1, 0.0, 0.0)]
    >>> places(rated)
    [1, 1, 3]
    """
    out: list[int] = []
    for i, s in enumerate(standings):
        out.append(out[-1] if i and s.conservative == standings[i - 1].conservative else i + 1)
    return out


# Student's t, 97.5% quantile, by degrees of freedom (1 to 30); beyond, _t975's expansion.
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
         2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)


def _t975(df: int) -> float:
    """The factor of a 95% confidence interval's half-width, in standard errors, of a mean of
    ``df`` + 1 values: Student's t (the normal's 1.96 made a bot's interval over two matches
    6.5 times too narrow). Beyond the table, the Cornish-Fisher expansion of t in 1/df,
    within 1e-4 of it there.

    >>> _t975(1), round(_t975(30), 3), round(_t975(31), 3), round(_t975(10_000), 3)
    (12.706, 2.042, 2.04, 1.96)
    """
    if df <= len(_T975):
        return _T975[df - 1]
    z = 1.959964
    return (z + (z ** 3 + z) / (4 * df) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df ** 2)
            + (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / (384 * df ** 3))


def _stdev(values: Sequence[float]) -> float:
    mean = sum(values) / len(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))


def _now_ms() -> int:
    return int(time.time() * 1000)
