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
extension module.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
PACKAGE = "hearts_engine"
# The modules a deal, a playout and a server decision spend their time in. Not compiled:
# the modules of value types that callers construct (actions, scoring's DealResult and
# Outcome, views' SeatView, ruleset, match): a compiled dataclass or class checks the
# declared type of every constructor argument, where the pure one accepts, converts or
# validates it itself, and both builds must behave alike. Nor errors, presets, record, cli.
COMPILED = ("cards", "deal", "shuffle")


def _say(message: str) -> None:
    print(f"hearts-engine: {message}", file=sys.stderr, flush=True)


def _fallback(reason: str) -> list[object]:
    if os.environ.get("HEARTS_ENGINE_REQUIRE_COMPILED"):
        raise SystemExit(f"hearts-engine: the compiled build failed ({reason}) and "
                         "HEARTS_ENGINE_REQUIRE_COMPILED is set")
    _say(f"installing the pure-Python engine only: {reason}. It is identical, about half as fast.")
    return []


def _extensions() -> list[object]:
    if os.environ.get("HEARTS_ENGINE_PURE"):
        _say("HEARTS_ENGINE_PURE is set: installing the pure-Python engine only")
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        return _fallback("mypyc (part of mypy) is not installed")
    os.chdir(HERE)  # mypycify takes paths relative to the project
    try:
        return list(mypycify([f"{PACKAGE}/{m}.py" for m in COMPILED], opt_level="3",
                             group_name=f"{PACKAGE}._native"))
    except (Exception, SystemExit) as exc:  # mypyc reports a compile error as SystemExit
        return _fallback(f"mypyc could not compile the engine: {exc}")


def source_hashes() -> dict[str, str]:
    return {m: hashlib.sha256((HERE / PACKAGE / f"{m}.py").read_bytes()).hexdigest() for m in COMPILED}


class OptionalBuildExt(build_ext):
    """Builds the extensions if it can; if the C compiler fails (or there is none), removes
    whatever it built and leaves the pure-Python package."""

    def run(self) -> None:
        if self.inplace:  # an editable build: drop extensions of modules no longer compiled
            for stale in (HERE / PACKAGE).glob("*.so"):
                if stale.name.split(".", 1)[0] not in (*COMPILED, "_native__mypyc"):
                    stale.unlink()
        try:
            super().run()
        except Exception as exc:
            for built in self.get_outputs():
                Path(built).unlink(missing_ok=True)
            _fallback(f"the C extensions did not build ({type(exc).__name__}: {exc})")
            return
        target = (HERE if self.inplace else Path(self.build_lib)) / PACKAGE / "_compiled.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps({"sources": source_hashes()}, indent=1) + "\n")
        _say(f"compiled with mypyc: {', '.join(COMPILED)}")

    def get_outputs(self) -> list[str]:
        outputs = list(super().get_outputs())
        if self.extensions:
            outputs.append(str(Path(self.build_lib) / PACKAGE / "_compiled.json"))
        return outputs


setup(ext_modules=_extensions(), cmdclass={"build_ext": OptionalBuildExt})
