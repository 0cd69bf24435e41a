"""Every relative link in the project's Markdown points at a file of the repository.

A newcomer's pass: the README and docs/protocol.md sent bot authors to a rules
specification the repository did not hold. It ships in docs/rules/ now, linked."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _documents() -> list[Path]:
    skip = {".venv", "node_modules", ".git", "build"}
    return [p for p in ROOT.rglob("*.md") if not skip & set(p.relative_to(ROOT).parts)]


def test_every_relative_link_in_the_docs_resolves() -> None:
    broken = []
    for doc in _documents():
        for target in LINK.findall(doc.read_text(encoding="utf-8")):
            if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                continue  # a web address, a mail address, an anchor in the same page
            path = (doc.parent / target.split("#", 1)[0]).resolve()
            if not path.exists():
                broken.append(f"{doc.relative_to(ROOT)}: {target}")
    assert not broken, broken


def test_the_rules_specification_ships_with_the_code() -> None:
    rules = (ROOT / "docs" / "rules" / "RULES.md").read_text(encoding="utf-8")
    assert rules.startswith("# Rules of play") and "## Presets" in rules
    seeds = sorted(p.name for p in (ROOT / "docs" / "rules" / "seeds").iterdir())
    assert len(seeds) == 4 and all(name.endswith(".txt") for name in seeds)
    assert "(docs/rules/RULES.md)" in (ROOT / "README.md").read_text(encoding="utf-8")
