"""The ladder: registered bots with hashed tokens, and ratings from results.

Ratings use openskill's Plackett-Luce model: it rates multiplayer rankings with ties
directly, is maintained, and in our measurements (NOTES.md) reached 0.744 pairwise
accuracy against a best possible 0.746 at ~67 µs per update, fifteen times faster
than TrueSkill. A bot's conservative rating is mu - 3 sigma; since openskill's sigma
shrinks slowly, the leaderboard also shows points per deal with a confidence interval.

Ratings are a pure function of the stored results in order, so ``recompute`` rebuilds
them exactly (same values on SQLite and PostgreSQL).

Tokens are shown once and only their SHA-256 is stored: they are 192-bit random
strings, so a fast hash is enough to make a leaked database useless for logging in.
"""

from __future__ import annotations

import hashlib
import math
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass

from openskill.models import PlackettLuce

from .db import Database, Transaction

MODEL = PlackettLuce()


class LadderError(ValueError):
    """A refused ladder operation (unknown bot, duplicate name...)."""


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def new_token() -> str:
    return "hb_" + secrets.token_urlsafe(24)


FLAG_RATE = 0.05  # timeouts + disconnect defaults above this share of decisions flag a bot


@dataclass(frozen=True)
class Standing:
    bot: str
    owner: str
    mu: float
    sigma: float
    matches: int
    points_per_deal: float
    ppd_ci: float  # half-width of the 95% confidence interval
    decisions: int = 0
    timeouts: int = 0
    illegal: int = 0
    disconnects: int = 0

    @property
    def conservative(self) -> float:
        return self.mu - 3 * self.sigma

    @property
    def unreliable(self) -> bool:
        return self.decisions > 0 and (self.timeouts + self.disconnects) / self.decisions > FLAG_RATE


class Ladder:
    """Bots and ratings on the daemon's database (SQLite or PostgreSQL)."""

    def __init__(self, db: Database) -> None:
        self.db = db  # migrated by the Store that opened it

    # -- bots ---------------------------------------------------------------------

    def add_bot(self, name: str, owner: str) -> str:
        """Register ``name``; return its token (shown once, never stored)."""
        if not name or not owner or len(name) > 64 or not name.replace("-", "").replace("_", "").isalnum():
            raise LadderError("a bot name is 1-64 letters, digits, '-' or '_', and it needs an owner")
        token = new_token()
        with self.db.transaction() as tx:
            if tx.query("SELECT 1 FROM bots WHERE name = ?", (name,)):
                raise LadderError(f"a bot named {name!r} exists already")
            tx.execute("INSERT INTO bots (name, owner, token_hash, created_ms) VALUES (?, ?, ?, ?)",
                       (name, owner, token_hash(token), _now_ms()))
        return token

    def rotate(self, name: str) -> str:
        """A new token for ``name``; the old one stops working."""
        token = new_token()
        with self.db.transaction() as tx:
            if tx.execute("UPDATE bots SET token_hash = ?, revoked_ms = NULL WHERE name = ?",
                          (token_hash(token), name)) != 1:
                raise LadderError(f"no bot named {name!r}")
        return token

    def revoke(self, name: str) -> None:
        with self.db.transaction() as tx:
            if tx.execute("UPDATE bots SET revoked_ms = ? WHERE name = ? AND revoked_ms IS NULL",
                          (_now_ms(), name)) != 1:
                raise LadderError(f"no active bot named {name!r}")

    def bot_for_token(self, token: str) -> str | None:
        rows = self.db.query("SELECT name FROM bots WHERE token_hash = ? AND revoked_ms IS NULL", (token_hash(token),))
        return rows[0][0] if rows else None

    def owners(self) -> dict[str, str]:
        return dict(self.db.query("SELECT name, owner FROM bots"))

    # -- results and ratings --------------------------------------------------------

    @staticmethod
    def record_result(tx: Transaction, match_id: str, ruleset: str, bots: Sequence[str], ranks: Sequence[int],
                      points: Sequence[int], deals: int,
                      provenance: Sequence[tuple[int, int, int, int]] | None = None) -> None:
        """Insert a rated match's result, inside the transaction that stores its record.
        ``provenance`` per seat: (decisions, timeouts, illegal defaults, disconnect defaults)."""
        now = _now_ms()
        counts = provenance or [(0, 0, 0, 0)] * len(bots)
        for seat, (bot, rank, pts) in enumerate(zip(bots, ranks, points)):
            tx.execute(
                "INSERT INTO results (match_id, ruleset, bot, seat, rank, points, deals, finished_ms, "
                "decisions, timeouts, illegal, disconnects) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (match_id, ruleset, bot, seat, rank, pts, deals, now, *counts[seat]),
            )

    def reliability(self, ruleset: str) -> dict[str, tuple[int, int, int, int]]:
        """Per bot: decisions, timeouts, illegal-answer defaults, disconnect defaults."""
        rows = self.db.query(
            "SELECT bot, SUM(decisions), SUM(timeouts), SUM(illegal), SUM(disconnects) FROM results "
            "WHERE ruleset = ? GROUP BY bot", (ruleset,))
        return {r[0]: (int(r[1]), int(r[2]), int(r[3]), int(r[4])) for r in rows}

    def history(self, bot: str, limit: int = 20) -> list[tuple[str, str, int, int, int, int]]:
        """The bot's latest rated matches: (match id, ruleset, seat, rank, points, deals)."""
        return [tuple(r) for r in self.db.query(  # type: ignore[misc]
            "SELECT match_id, ruleset, seat, rank, points, deals FROM results WHERE bot = ? "
            "ORDER BY finished_ms DESC, match_id DESC LIMIT ?", (bot, limit))]

    def standings(self, ruleset: str) -> list[Standing]:
        """Ratings recomputed from every stored result of ``ruleset``, best first."""
        rows = self.db.query(
            "SELECT match_id, bot, rank, points, deals FROM results WHERE ruleset = ? "
            "ORDER BY finished_ms, match_id, seat", (ruleset,))
        ratings: dict[str, object] = {}
        matches: dict[str, int] = {}
        per_deal: dict[str, list[float]] = {}
        current: str | None = None
        table: list[tuple[str, int]] = []

        def rate() -> None:
            if len(table) < 2:
                return
            teams = [[ratings.setdefault(bot, MODEL.rating(name=bot))] for bot, _ in table]
            updated = MODEL.rate(teams, ranks=[rank for _, rank in table])  # type: ignore[arg-type]
            for (bot, _), team in zip(table, updated):
                ratings[bot] = team[0]

        for match_id, bot, rank, points, deals in rows:
            if match_id != current:
                rate()
                table = []
                current = match_id
            table.append((bot, rank))
            matches[bot] = matches.get(bot, 0) + 1
            per_deal.setdefault(bot, []).append(points / max(1, deals))
        rate()
        owners = self.owners()
        counts = self.reliability(ruleset)
        out = []
        for bot, rating in ratings.items():
            values = per_deal[bot]
            mean = sum(values) / len(values)
            ci = 1.96 * _stdev(values) / math.sqrt(len(values)) if len(values) > 1 else float("inf")
            out.append(Standing(bot, owners.get(bot, ""), rating.mu, rating.sigma, matches[bot], mean, ci,  # type: ignore[attr-defined]
                                *counts.get(bot, (0, 0, 0, 0))))
        return sorted(out, key=lambda s: (-s.conservative, s.bot))


def _stdev(values: Sequence[float]) -> float:
    mean = sum(values) / len(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))


def _now_ms() -> int:
    return int(time.time() * 1000)
