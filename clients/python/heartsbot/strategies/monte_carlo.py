"""Monte Carlo (determinized) play: sample the unseen cards consistently with what the
seat knows, play each candidate card out to the end of the deal with a fast greedy
policy for every seat, keep the card with the best average, stop within the time budget.

The score is relative (own points minus the others' average), so a moon it can shoot
counts as the win it is. Passing uses the heuristic: its effects reach beyond one deal.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence

from hearts_engine import Deal, MoonOption, Phase, SeatView, determinize
from hearts_engine.cards import HEARTS, QUEEN_OF_SPADES, SUIT_MASKS, Card, cards_of, lowest

from .base import Strategy
from .heuristic import HeuristicStrategy

HEARTS_MASK = SUIT_MASKS[HEARTS]
QUEEN_BIT = 1 << QUEEN_OF_SPADES
BUDGET_SHARE = 0.85  # of time_limit_s; the rest is margin for the answer to travel


class MonteCarloStrategy(Strategy):
    name = "mc"
    time_limit_s = 0.1
    searches = True

    def __init__(self, seed: int = 0) -> None:
        super().__init__(seed)
        self.heuristic = HeuristicStrategy(seed)
        self.last_samples = 0

    def choose_pass(self, view: SeatView) -> Sequence[Card]:
        return self.heuristic.choose_pass(view)

    def choose_moon(self, view: SeatView) -> MoonOption:
        return self.heuristic.choose_moon(view)

    def choose_play(self, view: SeatView) -> Card:
        """The card with the best average playout, given when the budget is up: a search
        stops before a sample that would run past it, and then, like a forced play (one
        legal card), waits until it is up. Anyone may time a seat's plays (a live spectator
        needs no token): answered at once, a forced play told that the seat had no choice
        (void in the led suit, or only hearts besides its lead: 99 of 102 plays classified
        from the gaps, an attack pass), and a search ending with its last sample's overshoot
        (~0.5-3 ms, one playout per legal card) told how many legal cards it had."""
        legal = view.legal
        now = time.perf_counter()
        deadline = now + max(0.002, self.time_limit_s * BUDGET_SHARE)
        best = legal[0]
        if len(legal) > 1:
            best, now = self._search(view, legal, deadline)
        self.answer_at = deadline
        if self.waits:
            time.sleep(max(0.0, deadline - now))
        return best

    def _search(self, view: SeatView, legal: Sequence[Card], deadline: float) -> tuple[Card, float]:
        """(the best card, the clock when the search stopped): samples until the next one,
        taking as long as the last, would end past ``deadline`` (at least one)."""
        me = view.seat
        n = view.rules.players
        rng = self.rng
        sums = [0.0] * len(legal)
        samples = 0
        now = time.perf_counter()
        while True:
            started = now
            try:
                world = determinize(view, rng)
            except ValueError:  # a view no deal fits (cannot happen in real play): play safe
                return self.heuristic.choose_play(view), time.perf_counter()
            for i, card in enumerate(legal):
                deal = world.copy()
                deal.push_play(card)
                score = greedy_playout(deal, rng)
                sums[i] += score[me] - (sum(score) - score[me]) / (n - 1)
            samples += 1
            now = time.perf_counter()
            if now + (now - started) > deadline:
                break
        self.last_samples = samples
        return legal[min(range(len(legal)), key=lambda i: sums[i])], now


def greedy_playout(deal: Deal, rng: random.Random, explore: float = 0.1) -> tuple[int, ...]:
    """Play to the end of the deal with simple sound rules (duck, dump the queen and high
    hearts when void, lead low), with a little randomness; return the deal score."""
    players = deal.players
    while deal.phase is Phase.PLAYING:
        legal = deal.legal_mask()
        if legal & (legal - 1) == 0 or rng.random() < explore:
            deal.push_play(rng.choice(cards_of(legal)) if legal & (legal - 1) else lowest(legal))
            continue
        trick = deal.trick
        if trick:
            led_mask = SUIT_MASKS[deal.led_suit]
            if legal & led_mask:  # following suit
                winning = (deal.trick_mask & led_mask).bit_length() - 1
                below = legal & ((1 << winning) - 1)
                if below:
                    card = below.bit_length() - 1  # the highest card that still loses
                elif len(trick) == players - 1:
                    top = legal & ~QUEEN_BIT
                    card = (top or legal).bit_length() - 1  # we win anyway: shed the top card
                else:
                    card = lowest(legal)
            elif legal & QUEEN_BIT:
                card = QUEEN_OF_SPADES
            elif legal & HEARTS_MASK:
                card = (legal & HEARTS_MASK).bit_length() - 1
            else:
                card = legal.bit_length() - 1
        else:
            card = min(cards_of(legal), key=lambda c: c % 13)  # lead the lowest rank
        deal.push_play(card)
    if deal.phase is Phase.MOON_CHOICE:
        deal.push_moon(MoonOption.ADD_TO_OTHERS)
    assert deal.score is not None
    return deal.score
