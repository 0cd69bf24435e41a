"""The shuffle is specified in shuffle.py's docstring; this test re-implements that text."""

from __future__ import annotations

import hashlib

from hearts_engine import Deal, cards_of, format_cards, preset
from hearts_engine.shuffle import deal_hands, shuffled_deck


def shuffle_from_the_spec(seed: int, shuffle: int, deck: list[int]) -> list[int]:
    stream = hashlib.shake_256(f"hearts-arena/v1/deal/{seed}/{shuffle}".encode()).digest(8 * 200)
    words = iter(int.from_bytes(stream[i : i + 8], "big") for i in range(0, len(stream), 8))
    cards = list(deck)
    for i in range(len(cards) - 1, 0, -1):
        x = next(words)
        while x >= 2**64 - (2**64 % (i + 1)):
            x = next(words)
        j = x % (i + 1)
        cards[i], cards[j] = cards[j], cards[i]
    return cards


def test_the_implementation_matches_the_documented_algorithm():
    for seed in (0, 1, 42, 2**64 - 1):
        for shuffle in (0, 1, 17):
            assert shuffled_deck(seed, shuffle, range(52)) == shuffle_from_the_spec(seed, shuffle, list(range(52)))
    small = [c for c in range(52) if c % 13 >= 4]
    assert shuffled_deck(9, 3, small) == shuffle_from_the_spec(9, 3, small)


def test_golden_deal_is_pinned():
    # If this changes, every stored match stops replaying: never change the algorithm in place.
    hands = deal_hands(42, 0, (1 << 52) - 1, 4)
    assert [format_cards(cards_of(h)) for h in hands] == [
        "6C 9C KC AC 3D TD 4H TH KH 2S 4S 6S 9S",
        "4C TC QC 8D JD AD 3H 5H 9H JH QH QS AS",
        "2C 7C 8C 7D 9D QD 6H 7H 8H AH 5S 7S KS",
        "3C 5C JC 2D 4D 5D 6D KD 2H 3S 8S TS JS",
    ]


def test_cards_are_dealt_one_at_a_time_round_the_table():
    order = shuffled_deck(5, 2, range(52))
    hands = deal_hands(5, 2, (1 << 52) - 1, 4)
    for position, card in enumerate(order):
        assert hands[position % 4] >> card & 1


def test_different_deal_numbers_and_seeds_give_different_deals():
    rules = preset("standard")
    seen = {tuple(Deal.shuffled(rules, seed, n).dealt) for seed in range(5) for n in range(5)}
    assert len(seen) == 25
