"""Builds the engine: the pure-Python package, plus its hot modules compiled with mypyc.

The engine is ``mypy --strict`` clean, so mypyc compiles the same sources to C extension
modules (about twice as fast; see the README's Benchmarks). What is compiled is listed in
``COMPILED``; everything else, and the ``.py`` source of every module, is installed as is.
The compiled build is optional: without a C compiler (or with ``HEARTS_ENGINE_PURE=1``)
the install is the pure-Python package, with a message saying why, and the engine behaves
identically (tests/engine/test_compiled.py). ``HEARTS_ENGINE_REQUIRE_COMPILED=1`` turns a
failed compile into a failed install instead (the project's test script sets it, so CI
cannot silently test the pure path twice).

Next to the extensions the build writes ``_compiled.json``: the SHA-256 of each compiled
module's source. ``hearts_engine/_select.py`` checks it at import, so in an editable
install a source edited since the last build is what runs (with a warning), never a stale
extension module. The build itself is mypyc_build.py's, shared with the daemon's.
"""

from __future__ import annotations

import sys
from pathlib import Path

from setuptools import setup

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from mypyc_build import CompiledBuild  # noqa: E402  (beside this file; the daemon's build uses it too)

# The modules a deal, a playout and a server decision spend their time in. Not compiled:
# the modules of value types that callers construct (actions, scoring's DealResult and
# Outcome, views' SeatView, ruleset, match): a compiled dataclass or class checks the
# declared type of every constructor argument, where the pure one accepts, converts or
# validates it itself, and both builds must behave alike. Nor errors, presets, record, cli.
COMPILED = ("cards", "deal", "shuffle")
BUILD = CompiledBuild(label="hearts-engine", package="hearts_engine", project=HERE, folder="hearts_engine",
                      modules=COMPILED, pure_env="HEARTS_ENGINE_PURE", require_env="HEARTS_ENGINE_REQUIRE_COMPILED",
                      pure_cost="about half as fast")

setup(ext_modules=BUILD.extensions(), cmdclass={"build_ext": BUILD.build_ext_command()})
