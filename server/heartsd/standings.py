"""Final tournament standings that a participant can check: points per deal with 95%
confidence intervals, ranks that share a number where the data cannot separate two
bots, the probability of each bot being the best, a head-to-head table and every bot's
defaults.

Everything comes from one bootstrap **over shuffles**: a shuffle (one deal's deck, played
at every table of its duplicate set) is the unit of luck, so each replicate draws the
tournament's shuffles with replacement and recomputes every bot's points per deal from
the deals played on them. Deals on one shuffle stay together, so the luck two bots share
(the same cards at different tables) cancels in their comparison.

- ``ci_low``/``ci_high``: the 2.5 and 97.5 percentiles of a bot's points per deal.
- ``p_best``: the share of replicates in which the bot has the fewest points per deal.
- Ranks: bot A is *separated* from B when the paired bootstrap over shuffles puts A's
  points per deal below B's with a two-sided p below 5% after Holm's correction over
  every pair (``TEST``). A bot's rank is 1 + the number of bots separated ahead of it
  (or, if higher, the rank of a bot with fewer points per deal: separation is not
  transitive, and no bot ranks ahead of one that scored better), so bots the data cannot
  separate share a rank, and ``tied_with`` names them.

Lower points are better (Hearts penalties). The bootstrap's random draws come from the
tournament's seed: the same results give the same standings, to the last digit.

>>> deals = [Deal(f"s{s}", f"m{s}", bot, p) for s in range(40)
...          for bot, p in (("good", s % 3), ("bad", 6 + s % 5))]
>>> table = compute(deals, [], {}, seed=1, replicates=500)
>>> [(r.bot, r.rank, r.p_best) for r in table.rows]
[('good', 1, 1.0), ('bad', 2, 0.0)]
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import math
import random
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field

from .ladder import FLAG_RATE
from typing import Any

REPLICATES = 2000
# Below this many shuffles the bootstrap's resamples are too few and too alike to trust its
# tails: the standings say so (their ``test``), as the statistics literature does for a
# bootstrap over a few clusters.
FEW_SHUFFLES = 30
ALPHA = 0.05
TEST = ("paired bootstrap over shuffles (2000 replicates, two-sided), Holm-corrected over all pairs at 5%; "
        "rank = 1 + the bots separated ahead, and never ahead of a bot with fewer points per deal")


CSV_COLUMNS = ("rank", "bot", "version", "points_per_deal", "ci_low", "ci_high", "p_best", "deals", "matches",
               "points", "tied_with", "decisions", "timeouts", "illegal", "disconnects", "auto", "unreliable")


@dataclass(frozen=True)
class Deal:
    """One bot's points on one deal of a tournament match."""

    shuffle: str  # the deck's key: the same for every table that played it
    match_id: str
    bot: str
    points: int


@dataclass(frozen=True)
class TableResult:
    """One finished match: its seats in order, final points and ranks."""

    match_id: str
    bots: tuple[str, ...]
    points: tuple[int, ...]
    ranks: tuple[int, ...]
    deals: int


@dataclass
class Reliability:
    decisions: int = 0
    timeouts: int = 0
    illegal: int = 0
    disconnects: int = 0
    auto: int = 0

    @property
    def defaults(self) -> int:
        return self.timeouts + self.illegal + self.disconnects + self.auto

    @property
    def unreliable(self) -> bool:
        """More than the ladder's share (FLAG_RATE) of its decisions were defaults: its place
        says more about its absence than its play (an organiser's pass: a bot away from two of
        its four matches ranked fifth, unflagged)."""
        return self.decisions > 0 and self.defaults / self.decisions > FLAG_RATE


def reliability_of(row: Any) -> Reliability:
    """The Reliability of a TournamentStandingsRow (the wire's names for its defaults)."""
    return Reliability(row.decisions, row.timeouts, row.illegal_defaults, row.disconnect_defaults, row.auto_defaults)


@dataclass
class Row:
    bot: str
    rank: int
    points_per_deal: float
    ci_low: float
    ci_high: float
    p_best: float
    deals: int
    matches: int
    points: int
    tied_with: list[str] = field(default_factory=list)
    version: str = ""
    reliability: Reliability = field(default_factory=Reliability)


@dataclass
class HeadToHead:
    """``a`` against ``b`` in the matches where they sat at one table."""

    a: str
    b: str
    matches: int = 0
    a_ahead: int = 0
    b_ahead: int = 0
    level: int = 0
    points_diff_per_deal: float = 0.0  # a's points per deal minus b's, in those matches (negative: a did better)


@dataclass
class Standings:
    rows: list[Row]
    head_to_head: list[HeadToHead]
    shuffles: int
    test: str = TEST

    def to_dict(self) -> dict[str, object]:
        return {
            "bots": [
                {"bot": r.bot, "version": r.version, "rank": r.rank, "points_per_deal": _measured(r.points_per_deal),
                 "ci_low": _measured(r.ci_low), "ci_high": _measured(r.ci_high), "p_best": round(r.p_best, 4),
                 "deals": r.deals, "matches": r.matches, "points": r.points, "tied_with": r.tied_with,
                 **{k: v for k, v in asdict(r.reliability).items()}, "unreliable": r.reliability.unreliable}
                for r in self.rows],
            "head_to_head": [asdict(h) | {"points_diff_per_deal": round(h.points_diff_per_deal, 4)}
                             for h in self.head_to_head],
            "shuffles": self.shuffles,
            "test": self.test,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), separators=(",", ":"))

    def to_csv(self) -> str:
        return self.csv_from_dict(self.to_dict())

    @staticmethod
    def csv_from_dict(standings: Mapping[str, Any]) -> str:
        """The standings rows (as in :meth:`to_dict`) as CSV, one bot a line, best first.
        A text cell is exported as :func:`spreadsheet_text`: a version is what its bot declared."""
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(CSV_COLUMNS)
        for bot in standings["bots"]:
            writer.writerow([spreadsheet_text(" ".join(bot[c]) if c == "tied_with" else bot.get(c, ""))
                             for c in CSV_COLUMNS])
        return out.getvalue()


def spreadsheet_text(value: Any) -> Any:
    """``value`` as a CSV cell: a text a spreadsheet would read as a formula (=, +, -, @, a tab
    or a carriage return first) gets a quote before it; numbers stay as they are. A bot's
    declared version such as ``=HYPERLINK(...)`` became a live formula in the organiser's
    spreadsheet (an attack pass, 2026-12-07).

    >>> spreadsheet_text("=HYPERLINK(A2)"), spreadsheet_text("v2"), spreadsheet_text(-0.5)
    ("'=HYPERLINK(A2)", 'v2', -0.5)
    """
    if isinstance(value, str) and value.startswith(("=", "+", "-", "@", "\t", "\r")):
        return "'" + value
    return value


def _measured(value: float) -> float | None:
    """A statistic for the JSON and CSV exports: None (null, an empty cell) for a bot without
    deals, whose NaN made ``--json`` output that strict JSON parsers refuse and ``nan`` cells."""
    return None if math.isnan(value) else round(value, 4)


def compute(deals: Sequence[Deal], tables: Sequence[TableResult], reliability: Mapping[str, Reliability],
            seed: int, replicates: int = REPLICATES, versions: Mapping[str, str] | None = None,
            roster: Sequence[str] = ()) -> Standings:
    """The standings of a tournament from its deals and finished matches."""
    bots = sorted({d.bot for d in deals} | set(roster))
    index = {b: i for i, b in enumerate(bots)}
    by_shuffle: dict[str, list[list[float]]] = {}  # shuffle -> [points per bot, deals per bot]
    for d in deals:
        sums = by_shuffle.setdefault(d.shuffle, [[0.0] * len(bots), [0.0] * len(bots)])
        sums[0][index[d.bot]] += d.points
        sums[1][index[d.bot]] += 1
    shuffles = [by_shuffle[k] for k in sorted(by_shuffle)]
    # Per shuffle, only the bots that played it (sparse: a shuffle is played by one set's bots).
    sparse = [[(i, pts[i], cnt[i]) for i in range(len(bots)) if cnt[i]] for pts, cnt in shuffles]
    totals = [sum(s[0][i] for s in shuffles) for i in range(len(bots))]
    counts = [sum(s[1][i] for s in shuffles) for i in range(len(bots))]
    mean = [totals[i] / counts[i] if counts[i] else math.nan for i in range(len(bots))]
    rng = random.Random(f"standings:{seed}")
    samples: list[list[float]] = [[] for _ in bots]
    best = [0.0] * len(bots)
    n = len(sparse)
    for _ in range(replicates if n else 0):
        pts = [0.0] * len(bots)
        cnt = [0.0] * len(bots)
        for k in (rng.randrange(n) for _ in range(n)):
            for i, p, c in sparse[k]:
                pts[i] += p
                cnt[i] += c
        ppd = [pts[i] / cnt[i] if cnt[i] else math.nan for i in range(len(bots))]
        for i, v in enumerate(ppd):
            samples[i].append(v)
        present = [v for v in ppd if not math.isnan(v)]
        if present:
            low = min(present)
            winners = [i for i, v in enumerate(ppd) if v == low]
            for i in winners:
                best[i] += 1 / len(winners)
    separated = _separated(samples, len(bots))
    rows = []
    matches = defaultdict(int)
    for t in tables:
        for b in t.bots:
            matches[b] += 1
    ranks = _ranks(mean, separated)
    played = [counts[i] > 0 for i in range(len(bots))]
    for i, bot in enumerate(bots):
        # A bot without deals is separated from nobody, yet level with no bot that played.
        tied = [bots[j] for j in range(len(bots))
                if j != i and played[j] == played[i] and (i, j) not in separated and (j, i) not in separated]
        low, high = _percentiles(samples[i])
        rows.append(Row(bot, ranks[i], mean[i], low, high, best[i] / replicates if n else 0.0, int(counts[i]),
                        matches[bot], int(totals[i]), tied, (versions or {}).get(bot, ""),
                        reliability.get(bot, Reliability())))
    rows.sort(key=lambda r: (r.rank, math.inf if math.isnan(r.points_per_deal) else r.points_per_deal, r.bot))
    caution = (f"; only {len(shuffles)} shuffles: a bootstrap over fewer than {FEW_SHUFFLES} is optimistic (its "
               "intervals too narrow, its separations too easy): play more deals before a prize rests on it"
               if len(shuffles) < FEW_SHUFFLES else "")
    return Standings(rows, head_to_head(tables, bots), len(shuffles), TEST + caution)


def _ranks(mean: Sequence[float], separated: set[tuple[int, int]]) -> list[int]:
    """Each bot's rank: 1 + the bots separated ahead of it, or, if higher, the rank of a bot
    with fewer points per deal. Separation is not transitive (a bot with a few spread-out
    deals is separated from nobody), and alone it ranked such a bot ahead of better-scoring
    ones (a newcomer's pass). Bots without deals come last, in the same way."""
    def points(i: int) -> float:
        return math.inf if math.isnan(mean[i]) else mean[i]

    ranks = [1 + sum(1 for j in range(len(mean)) if (j, i) in separated) for i in range(len(mean))]
    fewer = 1  # the highest rank among bots with fewer points than the current ones
    same = 1  # the highest rank among bots with the current points
    previous = -math.inf
    for i in sorted(range(len(mean)), key=points):
        if points(i) > previous:
            fewer, previous = max(fewer, same), points(i)
        ranks[i] = max(ranks[i], fewer)
        same = max(same, ranks[i])
    # Bots without deals share the rank after every bot that played: separated from nobody,
    # they were "1=" beside the leaders in a tournament cancelled early (an organiser's pass).
    unranked = 1 + sum(1 for m in mean if not math.isnan(m))
    return [unranked if math.isnan(m) else r for m, r in zip(mean, ranks)]


def _percentiles(values: Sequence[float]) -> tuple[float, float]:
    present = sorted(v for v in values if not math.isnan(v))
    if not present:
        return math.nan, math.nan
    lo = present[int(0.025 * (len(present) - 1))]
    hi = present[int(math.ceil(0.975 * (len(present) - 1)))]
    return lo, hi


def _separated(samples: Sequence[Sequence[float]], bots: int) -> set[tuple[int, int]]:
    """Pairs (a, b): a's points per deal is below b's, significantly (Holm over all pairs)."""
    tests = []
    for a, b in itertools.combinations(range(bots), 2):
        diffs = [x - y for x, y in zip(samples[a], samples[b]) if not (math.isnan(x) or math.isnan(y))]
        if not diffs:
            continue
        below = sum(1 for d in diffs if d < 0) + 0.5 * sum(1 for d in diffs if d == 0)
        share = below / len(diffs)
        p = min(1.0, 2 * min(share, 1 - share) + 1 / (len(diffs) + 1))
        tests.append((p, (a, b) if share > 0.5 else (b, a)))
    tests.sort()
    out = set()
    m = len(tests)
    for k, (p, pair) in enumerate(tests):
        if p > ALPHA / (m - k):
            break  # Holm: stop at the first test that fails its threshold
        out.add(pair)
    return out


def head_to_head(tables: Sequence[TableResult], bots: Sequence[str]) -> list[HeadToHead]:
    pairs: dict[tuple[str, str], HeadToHead] = {}
    diffs: dict[tuple[str, str], list[float]] = defaultdict(list)
    for t in tables:
        for x, y in itertools.combinations(range(len(t.bots)), 2):
            a, b = sorted((t.bots[x], t.bots[y]))
            ia, ib = (x, y) if t.bots[x] == a else (y, x)
            h = pairs.setdefault((a, b), HeadToHead(a, b))
            h.matches += 1
            if t.ranks[ia] < t.ranks[ib]:
                h.a_ahead += 1
            elif t.ranks[ib] < t.ranks[ia]:
                h.b_ahead += 1
            else:
                h.level += 1
            diffs[(a, b)].append((t.points[ia] - t.points[ib]) / max(1, t.deals))
    for key, h in pairs.items():
        h.points_diff_per_deal = sum(diffs[key]) / len(diffs[key])
    return [pairs[k] for k in sorted(pairs)]


# -- in the daemon's worker process (live_standings.py): this module, workers.py and the
# standard library only, so the worker starts small (the daemon's modules cost ~53 MB) --

def compute_in_worker(inputs: Mapping[str, Any]) -> tuple[int, Standings]:
    """:func:`compute` of ``inputs``, and the process that ran it."""
    import os

    return os.getpid(), compute(**inputs)
