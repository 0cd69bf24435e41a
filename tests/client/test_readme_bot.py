"""The README's first bot works as printed: it loads and plays a local match."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_readme_bot_plays_a_local_match(tmp_path):
    readme = (ROOT / "README.md").read_text()
    code = re.search(r"```python\n(# mybot\.py\n.*?)```", readme, re.S).group(1)
    (tmp_path / "mybot.py").write_text(code)
    result = subprocess.run(
        [sys.executable, "-m", "heartsbot.cli", "local", "--strategies", "mybot.py", "heuristic", "heuristic", "random",
         "--seed", "42", "--deals", "2"],
        capture_output=True, text=True, cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert "0-MyBot" in result.stdout
    assert "played by the server's default" not in result.stdout


def test_the_readme_says_once_how_its_bare_commands_are_found():
    """The README wrote bare `heartsd ...` and `heartsbot ...` commands in some places
    and `.venv/bin/heartsbot` in others, and never said to activate the venv: a newcomer
    got `heartsd: command not found`. Now it says so once, right after its two commands
    (which stay exactly as they were), writes every command one way, and the activation
    it names really puts both programs on PATH."""
    readme = (ROOT / "README.md").read_text()
    assert readme.startswith(
        "# Hearts Arena\n\n```sh\n"
        "bash scripts/run     # set up .venv, then run heartsd: SQLite store, house bots on the ladder, web front on :8080\n"
        "bash scripts/test    # set up .venv, Node tools, PostgreSQL and Chromium, then run the whole test suite\n"
        "```\n"), "the README's two commands come first, unchanged"
    blocks = re.findall(r"```sh\n(.*?)```", readme, re.S)
    commands = [line.strip() for block in blocks[1:] for line in block.splitlines()]
    bare = [c for c in commands if re.match(r"(heartsd|heartsbot|hearts-engine) ", c)]
    assert bare and not [c for c in commands if re.match(r"\.venv/bin/(heartsd|heartsbot|hearts-engine) ", c)]
    said = readme.index("`source\n.venv/bin/activate` puts `heartsd`, `heartsbot` and `hearts-engine` on your `PATH`")
    assert said < readme.index("```sh", readme.index("```sh") + 1), "said before the first command that needs it"
    activate = Path(sys.prefix) / "bin" / "activate"  # this suite's venv: .venv, as scripts/test makes it
    found = subprocess.run(["bash", "-c", f"source {activate} && command -v heartsd heartsbot hearts-engine"],
                           capture_output=True, text=True, env={"PATH": "/usr/bin:/bin", "HOME": os.environ["HOME"]})
    assert found.returncode == 0, found.stderr
    assert [Path(p).parent for p in found.stdout.split()] == [activate.parent] * 3, found.stdout
