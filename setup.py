"""Builds the daemon: the pure-Python package, plus its decision-path encoders compiled with mypyc.

The modules that assemble every decision request and update (``COMPILED``) type-check
(with the options below), and mypyc compiles them to C extension modules: about a quarter
fewer instructions per decision (``python bench/profile.py decision``; README, "Where a
decision's time goes"). Everything else, and the ``.py`` source of every module, is
installed as is. As with the engine (engine/mypyc_build.py, whose build this is too), the
compiled build is optional: without a C compiler, or with ``HEARTSD_PURE=1`` at install, the
install is the pure-Python package, which behaves identically (tests/server/test_compiled.py);
``HEARTSD_PURE=1`` at run time runs the sources of a compiled install, and
``HEARTSD_REQUIRE_COMPILED=1`` makes a failed compile fail the install (scripts/test sets it).
"""

from __future__ import annotations

import sys
from pathlib import Path

from setuptools import setup

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "engine"))
from mypyc_build import CompiledBuild  # noqa: E402  (the engine's build helper, shared)

# The match runner, the bot sessions (their outbox) and the loop monitor (asked on every
# answer) are compiled too; not compiled: the arena (its answer routing is a few lines; the
# rest is I/O and bookkeeping) and everything off the decision path.
COMPILED = ("wire", "encoding", "events", "clock", "runner", "sessions", "lag")
BUILD = CompiledBuild(label="hearts-arena", package="heartsd", project=HERE, folder="server/heartsd",
                      modules=COMPILED, pure_env="HEARTSD_PURE", require_env="HEARTSD_REQUIRE_COMPILED",
                      pure_cost="and its decisions cost a few percent more CPU")

# Built in an isolated environment that holds only setuptools and mypy: the engine, the
# client's generated messages and protobuf are not there to be type-checked against, so
# every import is taken as Any (the compiled code calls them as Python objects, as the
# sources do; the same whatever is installed). The daemon is not held to --strict (the
# engine is): only these modules must type-check, and compile.
MYPY_ARGS = ("--ignore-missing-imports", "--follow-imports=skip", "--no-warn-return-any", "--no-warn-unused-ignores")
setup(ext_modules=BUILD.extensions(MYPY_ARGS),
      cmdclass={"build_ext": BUILD.build_ext_command()})
