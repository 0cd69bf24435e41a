"""The hearts-engine command plays a match and verifies records, failing clearly on bad input."""

from __future__ import annotations

import json

import pytest

from hearts_engine.cli import main


def test_play_prints_a_score_sheet_and_writes_a_record_that_verifies(tmp_path, capsys):
    path = tmp_path / "m.json"
    assert main(["play", "--ruleset", "classic", "--players", "5", "--seed", "3", "--record", str(path)]) == 0
    out = capsys.readouterr().out
    assert "winner" in out and "total" in out
    assert main(["verify", str(path)]) == 0
    assert "OK" in capsys.readouterr().out


def test_verify_names_the_first_tampered_action(tmp_path, capsys):
    path = tmp_path / "m.json"
    main(["play", "--deals", "1", "--record", str(path)])
    data = json.loads(path.read_text())
    data["actions"][20]["seat"] = (data["actions"][20]["seat"] + 1) % 4
    path.write_text(json.dumps(data))
    assert main(["verify", str(path)]) == 1
    assert "action 20" in capsys.readouterr().err


def test_bad_arguments_are_usage_errors(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["play", "--ruleset", "standard", "--players", "5"])
    assert exc.value.code == 2 and "players" in capsys.readouterr().err
