"""A sound rule-based player following the strategy advice of the original documents.

* Pass: Q♠ (and A♠/K♠) without enough low spades to cover it, high hearts, and the
  highest cards of a short suit to create a void.
* Follow: duck under the winning card with the highest card that still loses;
  when forced to win, win high (keeping low cards for later) but never with Q♠ if
  another card will do; drop Q♠ on A♠/K♠.
* Discard: Q♠ first, then A♠/K♠ while Q♠ is out, then high hearts, then the most
  dangerous card left.
* Lead: low cards of safe suits; low spades to flush Q♠ out when we hold none of
  the top spades.
* Moon: block a would-be shooter by *taking* a trick with a heart in it (feeding it
  a heart does not block: RULES.md); go for the moon when we have taken every
  point so far and hold the top hearts.
"""

from __future__ import annotations

from collections.abc import Sequence

from hearts_engine import SeatView
from hearts_engine.cards import HEARTS, QUEEN_OF_SPADES, SPADES, SUIT_OF, Card

from .base import Strategy

ACE_OF_SPADES = 51
KING_OF_SPADES = 50


def _rank(card: Card) -> int:
    return card % 13


class HeuristicStrategy(Strategy):
    name = "heuristic"

    # -- passing ----------------------------------------------------------------

    def choose_pass(self, view: SeatView) -> Sequence[Card]:
        hand = list(view.hand)
        values = view.rules.points_by_card
        low_spades = sum(1 for c in hand if SUIT_OF[c] == SPADES and c < QUEEN_OF_SPADES)
        lengths = [sum(1 for c in hand if SUIT_OF[c] == s) for s in range(4)]

        def danger(c: Card) -> float:
            suit, rank = SUIT_OF[c], _rank(c)
            if c in (QUEEN_OF_SPADES, KING_OF_SPADES, ACE_OF_SPADES):
                covered = low_spades >= 4
                return 20 + rank if covered else 100 + rank
            score = rank * 2.0 + values[c] * 4
            if suit == HEARTS:
                score += 10
            elif suit != SPADES and lengths[suit] <= 3:
                score += 15 - lengths[suit] * 2  # empty a short suit
            return score

        return sorted(hand, key=danger, reverse=True)[: view.rules.pass_count]

    # -- playing ------------------------------------------------------------------

    def choose_play(self, view: SeatView) -> Card:
        legal = list(view.legal)
        if len(legal) == 1:
            return legal[0]
        rules = view.rules
        values = rules.points_by_card
        me = view.seat
        played = {c for t in view.tricks for c in t.cards} | set(view.trick)
        queen_out = QUEEN_OF_SPADES not in played and QUEEN_OF_SPADES not in view.hand
        threat = self._moon_threat(view)
        shooting = self._shooting(view, played)

        if view.trick:
            led = SUIT_OF[view.trick[0]]
            winning = max(c for c in view.trick if SUIT_OF[c] == led)
            trick_points = sum(values[c] for c in view.trick)
            last = len(view.trick) == rules.players - 1
            if SUIT_OF[legal[0]] == led:
                return self._follow(legal, winning, trick_points, last, threat, shooting)
            return self._discard(legal, values, queen_out, threat, shooting)
        return self._lead(view, legal, values, queen_out, shooting, me)

    def _follow(
        self, legal: list[Card], winning: Card, trick_points: int, last: bool, threat: bool, shooting: bool
    ) -> Card:
        above = [c for c in legal if c > winning]
        below = [c for c in legal if c < winning]
        if shooting and above:
            return max(above)
        if threat and trick_points > 0 and above:
            return _highest_not_queen(above)  # take the points away from the shooter
        if below:
            return max(below)  # duck as high as possible
        if last and trick_points <= 0:
            return _highest_not_queen(legal)  # a free trick: shed the top card
        if not last:
            return min(legal)  # someone after us may still win it
        return _highest_not_queen(legal)

    def _discard(self, legal: list[Card], values: Sequence[int], queen_out: bool, threat: bool, shooting: bool) -> Card:
        if shooting or threat:
            safe = [c for c in legal if values[c] <= 0]  # do not feed a shooter
            if safe:
                return max(safe, key=_rank)
        if QUEEN_OF_SPADES in legal:
            return QUEEN_OF_SPADES
        if queen_out:
            for top in (ACE_OF_SPADES, KING_OF_SPADES):
                if top in legal:
                    return top
        hearts = [c for c in legal if SUIT_OF[c] == HEARTS]
        if hearts:
            return max(hearts)
        return max(legal, key=lambda c: (values[c], _rank(c)))

    def _lead(
        self, view: SeatView, legal: list[Card], values: Sequence[int], queen_out: bool, shooting: bool, me: int
    ) -> Card:
        if shooting:
            return max(legal, key=_rank)
        hand = set(view.hand)
        holds_top_spade = bool(hand & {QUEEN_OF_SPADES, KING_OF_SPADES, ACE_OF_SPADES})

        def cost(c: Card) -> float:
            suit, rank = SUIT_OF[c], _rank(c)
            score = rank + values[c] * 5.0
            if suit == SPADES:
                if c in (QUEEN_OF_SPADES, KING_OF_SPADES, ACE_OF_SPADES):
                    score += 30
                elif queen_out and not holds_top_spade:
                    score -= 4  # flush the queen out
            if suit == HEARTS:
                score += 3
            return score

        return min(legal, key=cost)

    # -- the moon -----------------------------------------------------------------

    @staticmethod
    def _moon_threat(view: SeatView) -> bool:
        """Another seat has taken every point so far, and a lot of them."""
        taken = view.points_taken
        scorers = [s for s, p in enumerate(taken) if p > 0]
        if len(scorers) != 1 or scorers[0] == view.seat:
            return False
        return taken[scorers[0]] >= view.rules.deal_total // 2

    @staticmethod
    def _shooting(view: SeatView, played: set[Card]) -> bool:
        """We took every point so far and hold the highest hearts still out."""
        taken = view.points_taken
        me = view.seat
        if taken[me] < view.rules.deal_total // 2 or any(p > 0 for s, p in enumerate(taken) if s != me):
            return False
        out_hearts = [c for c in range(26, 39) if c not in played and (view.rules.deck >> c) & 1]
        mine = [c for c in out_hearts if c in view.hand]
        return len(mine) == len(out_hearts) or (bool(mine) and max(out_hearts) in mine and len(mine) * 2 >= len(out_hearts))


def _highest_not_queen(cards: list[Card]) -> Card:
    others = [c for c in cards if c != QUEEN_OF_SPADES]
    return max(others) if others else cards[0]
