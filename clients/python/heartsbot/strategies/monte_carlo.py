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
        """The card with the best average playout. A forced play (one legal card) waits out
        the same budget before it is given: answered at once, it told anyone who times the
        seat's plays (a live spectator: no token needed) that the seat had no choice, so
        was void in the led suit, or held only hearts besides its lead (an attack pass:
        99 of 102 plays classified from the gaps alone)."""
        legal = view.legal
        deadline = time.perf_counter() + max(0.002, self.time_limit_s * BUDGET_SHARE)
        if len(legal) == 1:
            time.sleep(max(0.0, deadline - time.perf_counter()))
            return legal[0]
        me = view.seat
        n = view.rules.players
        rng = self.rng
        sums = [0.0] * len(legal)
        samples = 0
        while True:
            try:
                world = determinize(view, rng)
            except ValueError:  # a view no deal fits (cannot happen in real play): play safe
                return self.heuristic.choose_play(view)
            for i, card in enumerate(legal):
                deal = world.copy()
                deal.push_play(card)
                score = greedy_playout(deal, rng)
                sums[i] += score[me] - (sum(score) - score[me]) / (n - 1)
            samples += 1
            if time.perf_counter() >= deadline:
                break
        self.last_samples = samples
        best = min(range(len(legal)), key=lambda i: sums[i])
        return legal[best]


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
