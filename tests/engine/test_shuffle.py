"""The shuffle is specified in shuffle.py's docstring; this test re-implements that text."""

from __future__ import annotations

import hashlib

from hearts_engine import Deal, cards_of, format_cards, preset
from hearts_engine.shuffle import deal_hands, shuffled_deck


def shuffle_from_the_spec(seed: int, shuffle: int, deck: list[int]) -> list[int]:
    stream = hashlib.shake_256(f"hearts-arena/v1/deal/{seed}/{shuffle}".encode()).digest(8 * len(deck))
    keys = [int.from_bytes(stream[8 * i : 8 * i + 8], "big") for i in range(len(deck))]
    return [card for _, card in sorted(zip(keys, deck))]


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
        "2C 5C 6C JC KC 3D 5D 8H 9H JH 8S 9S QS",
        "8C TC QC 6D 9D JD QD 7H TH 2S 3S 5S TS",
        "3C AC 2D 4D KD 3H 6H AH 4S 7S JS KS AS",
        "4C 7C 9C 7D 8D TD AD 2H 4H 5H QH KH 6S",
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
