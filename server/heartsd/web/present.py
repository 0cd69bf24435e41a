"""Wire messages (hearts.v1) as the JSON the pages read: the web front's one converter.

Cards are their engine names (``"QS"``, ``"TH"``), the same text every face-up card
carries in the page as ``data-card``. Enums are short lower-case words.

>>> from heartsbot.proto import cards_pb2
>>> card(cards_pb2.Card(suit=4, rank=12))
'QS'
>>> PASS_DIRECTIONS[2], PROVENANCES[7], MOON_OPTIONS[1]
('right', 'human', 'add_to_others')
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from heartsbot.proto import bot_pb2, cards_pb2, game_pb2, ladder_pb2, spectator_pb2, tournament_pb2

from hearts_engine import card_name, mask_of, why_unplayable

from heartsbot import convert

from ..orphans import INTERRUPTED_ELSEWHERE
from ..schedule import sharing_owners
from ..standings import reliability_of
from ..tournaments import CANCELLED, Waiting

P = game_pb2


def _names(enum: Any, prefix: str) -> dict[int, str]:
    return {v: k.removeprefix(prefix).lower() for k, v in enum.items() if v}


PASS_DIRECTIONS = _names(P.PassDirection, "PASS_DIRECTION_")
PROVENANCES = _names(P.Provenance, "PROVENANCE_")
MOON_OPTIONS = _names(P.MoonOption, "MOON_OPTION_")
MOON_VALUES = {v: k for k, v in MOON_OPTIONS.items()}
KINDS = _names(P.DecisionKind, "DECISION_KIND_")
STATUSES = _names(P.MatchStatus, "MATCH_STATUS_")
TOURNAMENT_STATUSES = _names(tournament_pb2.TournamentStatus, "TOURNAMENT_STATUS_")
REJECTIONS = _names(bot_pb2.RejectionCode, "REJECTION_CODE_")
# Why a match ended, where the reason is one of a fixed set: a key the pages say in their
# language (i18n.js ``end_<key>``); any other reason (an operator's own words) has none and
# is shown as it is. The texts of the runner and the arena (``runner.stop``'s callers, the
# store's abort of interrupted matches), and the web front's own, made from these (seats.py).
LEFT = "the person left the table"  # "Leave table"
LEFT_AWAY = LEFT + " (no page for {s} s)"  # no page had the seat for web_abandon_s
UNPLAYED = "nobody played at the table within {s} s of taking it"  # seats.OPEN_WITHIN_S
END_REASONS = {"server shutdown": "shutdown", "server stopped while the match was running": "interrupted",
               "cancelled by an admin": "admin", "server error": "server_error",
               "server error: the result could not be stored": "not_stored", LEFT: "left",
               CANCELLED: "tournament_cancelled", "a shuffle of this match was dealt before": "shuffle_repeated",
               "server error: the next shuffles could not be reserved": "not_reserved",
               "conformance check timed out": "conformance_timeout"}
_FIGURES = {"s": r"\d+(?:\.\d+)?", "instance": r"[^,()]+"}  # what a template's {name} may be


def _template(text: str) -> re.Pattern[str]:
    """The reasons made from ``text``, each ``{name}`` in it a figure (re.escape leaves it
    as ``\\{name\\}``)."""
    return re.compile(re.sub(r"\\\{(\w+)\\\}", lambda m: f"(?P<{m[1]}>{_FIGURES[m[1]]})", re.escape(text)))


_END_TEMPLATES = [(key, _template(text)) for key, text in (("left_away", LEFT_AWAY), ("unplayed", UNPLAYED),
                                                           ("interrupted_elsewhere", INTERRUPTED_ELSEWHERE))]


def end_reason(reason: str) -> dict[str, Any] | None:
    """The key (and its figures) of a reason a match ended with, if it is one of the fixed set.

    >>> end_reason("server shutdown"), end_reason(LEFT_AWAY.format(s=60))
    ({'key': 'shutdown'}, {'key': 'left_away', 's': '60'})
    >>> end_reason("the server shutdown was planned for today") is None  # an operator's words
    True
    >>> end_reason(INTERRUPTED_ELSEWHERE.format(instance="east"))
    {'key': 'interrupted_elsewhere', 'instance': 'east'}
    """
    if (key := END_REASONS.get(reason)) is not None:
        return {"key": key}
    for key, pattern in _END_TEMPLATES:
        if (found := pattern.fullmatch(reason)) is not None:
            return {"key": key, **found.groupdict()}
    return None


# A hand is shown sorted by suit with the colours alternating (clubs, diamonds, spades,
# hearts), low to high: presentation only, the server's order of legal cards is kept.
_SUIT_ORDER = (0, 1, 3, 2)


def card(message: cards_pb2.Card) -> str:
    return card_name(convert.card_from_wire(message))


def cards(messages: Iterable[cards_pb2.Card]) -> list[str]:
    return [card_name(c) for c in convert.cards_from_wire(messages)]


def sorted_hand(ids: Iterable[int]) -> list[str]:
    """Engine cards as names, sorted for display by suit (alternating colours) and rank."""
    return [card_name(c) for c in sorted(ids, key=lambda c: (_SUIT_ORDER[c // 13], c % 13))]


def unplayable(hand: list[int], legal: list[int], led: int, first_trick: bool) -> dict[str, dict[str, str]]:
    """Why the seat to play may not play each card of ``hand`` that is not ``legal``, by
    card name: the engine's reason (``why_unplayable``, the one that refuses such a card)
    as a key for a page to translate, the card or suit it names, and its English text.
    ``led`` is the card led to the trick in progress (-1 to lead). It reads only what the
    seat knows (its own hand and legal cards, the trick on the table).

    >>> from hearts_engine import parse_cards
    >>> unplayable(parse_cards("2C 8D AH"), parse_cards("2C"), parse_cards("KC")[0], False)["8D"]
    {'reason': 'follow_suit', 'text': 'you must follow clubs', 'suit': 'C'}
    """
    hand_mask, legal_mask = mask_of(hand), mask_of(legal)
    led_suit = led // 13 if led >= 0 else -1
    reasons: dict[str, dict[str, str]] = {}
    for c in hand:
        if legal_mask >> c & 1:
            continue
        why = why_unplayable(c, hand_mask, legal_mask, led_suit, first_trick)
        entry = {"reason": why.reason, "text": str(why)}
        if why.card >= 0:
            entry["card"] = card_name(why.card)
        if why.suit >= 0:
            entry["suit"] = "CDHS"[why.suit]
        reasons[card_name(c)] = entry
    return reasons


def seat(info: game_pb2.SeatInfo) -> dict[str, Any]:
    return {"seat": info.seat, "name": info.name, "house": info.house, "human": info.human}


def ruleset(rules: game_pb2.Ruleset) -> dict[str, Any]:
    return {
        "name": rules.name, "players": rules.players, "hand_size": rules.hand_size,
        "pass_count": rules.pass_count, "target": rules.target, "moon": rules.moon,
        "deal_total": rules.deal_total,
    }


def trick(t: game_pb2.Trick, points: int | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"number": t.number, "leader": t.leader,
                           "cards": [{"seat": p.seat, "card": card(p.card)} for p in t.cards]}
    if t.winner >= 0:
        out["winner"] = t.winner
    if points is not None:
        out["points"] = points
    return out


def deal_score(score: game_pb2.DealScore) -> dict[str, Any]:
    return {
        "deal": score.deal_number, "points": list(score.points), "taken": list(score.points_taken),
        "shooter": score.shooter, "moon": MOON_OPTIONS.get(score.moon_option), "phase": score.phase or 1,
    }


def result(r: game_pb2.MatchResult) -> dict[str, Any]:
    return {
        "status": STATUSES.get(r.status, "unknown"), "reason": r.reason, "reason_key": end_reason(r.reason),
        "totals": list(r.totals),
        "ranks": list(r.ranks), "winners": list(r.winners), "deals": r.deals,
    }


def summary(m: spectator_pb2.MatchSummary) -> dict[str, Any]:
    out = {
        "match_id": m.match_id, "ruleset": m.ruleset, "seats": [seat(s) for s in m.seats],
        "status": STATUSES.get(m.status, "unknown"), "created_ms": m.created_unix_ms,
        "deals": m.deals_played, "totals": list(m.totals), "withheld": m.withheld,
    }
    if m.HasField("result"):
        out["result"] = result(m.result)
    return out


def standing(e: ladder_pb2.LeaderboardEntry) -> dict[str, Any]:
    return {
        "rank": e.rank, "bot": e.bot, "owner": e.owner, "rating": e.rating, "uncertainty": e.uncertainty,
        "conservative": e.conservative, "matches": e.matches, "points_per_deal": e.points_per_deal,
        "points_per_deal_ci": e.points_per_deal_ci if e.matches > 1 else None,
        "decisions": e.decisions, "timeouts": e.timeouts, "illegal_defaults": e.illegal_defaults,
        "disconnect_defaults": e.disconnect_defaults, "auto_defaults": e.auto_defaults,
        "default_share": e.default_share, "unreliable": e.unreliable,  # every default's share: what flags it
        "revoked": e.revoked,
    }


def bot_match(m: ladder_pb2.BotMatch) -> dict[str, Any]:
    return {"match_id": m.match_id, "ruleset": m.ruleset, "seat": m.seat, "rank": m.rank,
            "points": m.points, "deals": m.deals}


def rating_history(points: Sequence[tuple[int, int, float, float]], limit: int) -> list[dict[str, Any]]:
    """A bot's rating after its rated matches, (seq, finished ms, mu, sigma) each, as its
    page's chart reads it: at most ``limit`` points (``limit`` >= 2), spread evenly over the
    matches, the first and the newest always, each with ``n``, its match's number for the
    bot (from 1), by which the chart places it. A point per match grew with the ladder for
    good: 1.9 MB at 20,000 matches, on each refresh of the page.

    >>> [p["n"] for p in rating_history([(s, 0, 25.0, 8.3) for s in range(1, 11)], 4)]
    [1, 4, 7, 10]
    >>> rating_history([(7, 1700000000000, 25.5, 8.1)], 4)
    [{'n': 1, 'seq': 7, 'finished_ms': 1700000000000, 'rating': 25.5, 'uncertainty': 8.1}]
    """
    count = len(points)
    picked = range(count) if count <= limit else sorted({round(i * (count - 1) / (limit - 1)) for i in range(limit)})
    return [{"n": i + 1, "seq": points[i][0], "finished_ms": points[i][1], "rating": points[i][2],
             "uncertainty": points[i][3]} for i in picked]


def reason_key(code: str, params: Mapping[str, str]) -> dict[str, Any] | None:
    """A reason of a fixed set as the pages read it: its code (ArenaError.code) as ``key``,
    with the figures it names; None for a reason without one (shown as written).

    >>> reason_key("not_connected", {"bot": "ghost"}), reason_key("", {})
    ({'key': 'not_connected', 'bot': 'ghost'}, None)
    """
    return {"key": code, **params} if code else None


def tournament(t: tournament_pb2.Tournament, waiting: Mapping[tuple[int, int], Waiting] | None = None
               ) -> dict[str, Any]:
    """``waiting``: why each table waits (Tournaments.waiting), for the code of each table's
    ``waiting`` text (``waiting_key``), given only where the text is the same one: a reason
    that changed since ``t`` was read is never said by another's code."""
    said = waiting or {}

    def waiting_key(x: tournament_pb2.TournamentTable) -> dict[str, Any] | None:
        why = said.get((x.round, x.table))
        return reason_key(why.code, why.params) if why is not None and x.waiting and why.text == x.waiting else None

    return {
        "id": t.id, "name": t.name, "status": TOURNAMENT_STATUSES.get(t.status, "unknown"), "ruleset": t.ruleset,
        "players": t.players, "rounds": t.rounds, "matches_finished": t.matches_finished,
        "matches_total": t.matches_total, "reason": t.reason, "test": t.standings.test,
        # A bot without deals has no points per deal nor interval (null: the page shows a dash),
        # where 0.0 drew it as the best bot of a tournament cancelled early (an organiser's pass).
        "standings": [{"rank": r.rank, "bot": r.bot, "version": r.version,
                       "points_per_deal": r.points_per_deal if r.deals else None,
                       "ci_low": r.ci_low if r.deals else None, "ci_high": r.ci_high if r.deals else None,
                       "p_best": r.p_best, "matches": r.matches, "unreliable": reliability_of(r).unreliable,
                       "deals": r.deals, "tied_with": list(r.tied_with)} for r in t.standings.rows],
        "tables": [{"round": x.round, "table": x.table, "bots": list(x.bots), "status": x.status,
                    "match_id": x.match_id, "waiting": x.waiting, "waiting_key": waiting_key(x)} for x in t.tables],
        # The tables where bots of one owner sit together (the roster left no other way), said
        # on the page as `tournament create` and `show` say it: they share what they know.
        "shared": [{"owner": owner, "round": round_, "bots": bots} for owner, round_, bots in sharing_owners(
            ((x.round, x.bots) for x in t.tables), {r.bot: r.owner for r in t.roster})],
    }
