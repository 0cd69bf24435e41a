"""Presets hold RULES.md's values; inconsistent rulesets are refused with a clear reason."""

from __future__ import annotations

import pytest

from hearts_engine import (
    PRESETS,
    HartenjagenPhases,
    MoonScoring,
    PassDirection,
    Ruleset,
    RulesetError,
    card_name,
    cards_of,
    parse_card,
    preset,
)
from hearts_engine.cards import CLUBS, SUIT_MASKS


def removed(rules: Ruleset) -> set[str]:
    return {card_name(c) for c in rules.removed_cards}


@pytest.mark.parametrize(
    ("players", "gone", "lead"),
    [
        (3, {"2D"}, "2C"),
        (4, set(), "2C"),
        (5, {"2D", "2C"}, "3C"),
        (6, {"2D", "3D", "3C", "4C"}, "2C"),
        (7, {"2D", "3D", "3C"}, "2C"),
    ],
)
def test_classic_decks_by_player_count(players, gone, lead):
    rules = preset("classic", players=players)
    assert removed(rules) == gone
    assert card_name(rules.first_lead) == lead
    assert rules.hand_size * players == rules.deck.bit_count() == 52 - len(gone)
    assert rules.deal_total == 26


def test_hartenjagen_three_players_removes_two_to_five_of_every_suit():
    rules = preset("hartenjagen", players=3)
    assert removed(rules) == {f"{r}{s}" for r in "2345" for s in "CDHS"}
    assert card_name(cards_of(rules.deck & SUIT_MASKS[CLUBS])[0]) == "6C"
    assert preset("hartenjagen").deal_total == 20


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: Ruleset(players=8), "between 3 and 7, got 8"),
        (lambda: preset("classic", players=8), "3 to 7 players, got 8"),
        (lambda: preset("hartenjagen", players=5), "3 to 4 players, got 5"),
        (lambda: preset("standard", players=3), "played by 4 players, got 3"),
        (lambda: preset("classic", players=3).with_options(pass_schedule=(PassDirection.ACROSS,)), "across"),
        (lambda: Ruleset(players=3), "cannot be dealt evenly"),
        (lambda: preset("classic", target=40), "at least 50"),
        (lambda: preset("nope"), "unknown ruleset 'nope'"),
        (lambda: Ruleset(pass_count=13), "pass_count"),
        (lambda: Ruleset(pass_schedule=()), "empty"),
        (lambda: Ruleset(card_points=((parse_card("QH"), 5),)), "heart_points"),
        (lambda: Ruleset(removed_cards=(0, 0, 1, 2)), "twice"),
        (lambda: Ruleset(removed_cards=tuple(range(13)) + (13, 14, 15)), "no club"),
        (lambda: Ruleset(heart_points=0, card_points=()), "no penalty card"),
        (lambda: Ruleset(target=0), "target"),
        (lambda: Ruleset(moon_requires_bonus=True), "no bonus card"),
        (
            lambda: Ruleset(moon=MoonScoring.SHOOTER_CHOICE, phases=HartenjagenPhases(100)),
            "cannot be combined",
        ),
        (lambda: Ruleset.from_dict({"players": 4, "colour": "red"}), "unknown ruleset parameters: colour"),
        (lambda: Ruleset.from_dict({"pass_schedule": ["sideways"]}), "bad ruleset parameter"),
    ],
)
def test_inconsistent_rulesets_are_rejected_naming_the_problem(build, message):
    with pytest.raises(RulesetError, match=message):
        build()


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_preset_and_player_count_round_trips_through_its_dict(name):
    for players in PRESETS[name].players:
        rules = preset(name, players=players)
        assert Ruleset.from_dict(rules.to_dict()) == rules
        assert rules.name == name and rules.players == players


def test_options_are_parameters_not_code():
    rules = preset("standard", queen_breaks_hearts=True, no_trick_bonus=-5)
    assert rules.queen_breaks_hearts and rules.no_trick_bonus == -5
    assert preset("omnibus", moon_requires_bonus=True).moon_requires_bonus
