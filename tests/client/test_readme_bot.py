"""The README's first bot works as printed: it loads and plays a local match."""

from __future__ import annotations

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
