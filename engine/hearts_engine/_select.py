"""Which build of a package runs: the compiled modules (mypyc), or their Python sources.

A compiled build puts an extension module next to each compiled module's ``.py`` source
(engine/setup.py lists the engine's, setup.py the daemon's), and Python imports the
extension when both are present. The sources run instead when

- the package's *pure* variable (``HEARTS_ENGINE_PURE`` for the engine, ``HEARTSD_PURE``
  for the daemon) is set in the environment (to compare, or to debug with a Python-level
  debugger or profiler), or
- a source differs from the one that was compiled (an editable install whose ``.py``
  was edited since the build, recorded in ``_compiled.json``): a warning says so, and
  the edited code runs rather than a stale extension.

``use_sources`` puts a finder first on ``sys.meta_path`` that loads the package's
modules from their ``.py`` files; it must run before they are imported (``__init__``).
The daemon's package calls it too (heartsd/__init__.py): the daemon depends on the engine.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import json
import os
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

PURE_ENV = "HEARTS_ENGINE_PURE"


class _SourceFirst:
    """Finds ``<package>.<module>`` in the package's ``.py`` files, ahead of extensions."""

    def __init__(self, package: str, directory: Path) -> None:
        self.prefix = package + "."
        self.directory = directory

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith(self.prefix) or "." in fullname[len(self.prefix):]:
            return None
        source = self.directory / (fullname[len(self.prefix):] + ".py")
        return importlib.util.spec_from_file_location(fullname, source) if source.is_file() else None


def reason_for_sources(directory: Path, pure_env: str = PURE_ENV,
                       rebuild: str = "pip install -e ./engine") -> str | None:
    """Why the sources must run instead of the compiled modules here, or None."""
    if os.environ.get(pure_env):
        return f"{pure_env} is set"
    record = directory / "_compiled.json"
    suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    if not record.is_file():
        if any(p.name.endswith(suffixes) for p in directory.iterdir()):
            return "compiled modules are present without _compiled.json (a partial build)"
        return None  # the pure-Python package: nothing to choose
    sources = json.loads(record.read_text())["sources"]
    for path in directory.iterdir():
        module = path.name.split(".", 1)[0]
        if path.name.endswith(suffixes) and module not in sources and not module.endswith("__mypyc"):
            return f"{path.name} is not part of the last build (remove it, or rebuild)"
    for module, digest in sources.items():
        source = directory / f"{module}.py"
        if source.is_file() and hashlib.sha256(source.read_bytes()).hexdigest() != digest:
            return f"{module}.py changed since it was compiled (rebuild: {rebuild})"
    return None


def use_sources(package: str, directory: Path, pure_env: str = PURE_ENV,
                rebuild: str = "pip install -e ./engine") -> bool:
    """Make ``package``'s modules load from source if they must; True if they will."""
    reason = reason_for_sources(directory, pure_env, rebuild)
    if reason is None:
        return False
    if not os.environ.get(pure_env):
        warnings.warn(f"{package}: running the Python sources, not the compiled modules: {reason}",
                      RuntimeWarning, stacklevel=3)
    if not any(isinstance(f, _SourceFirst) and f.prefix == package + "." for f in sys.meta_path):
        sys.meta_path.insert(0, _SourceFirst(package, directory))
    return True


def compiled_modules(directory: Path, compiled: bool) -> frozenset[str]:
    """The modules of the build in ``directory`` that run compiled here (none unless
    ``compiled``: the package's COMPILED). pytest's doctest collection skips their ``.py``
    files (engine/conftest.py, server/conftest.py): a compiled module keeps no docstrings,
    and the pure-Python pass of scripts/test runs those doctests."""
    record = directory / "_compiled.json"
    if not compiled or not record.is_file():
        return frozenset()
    return frozenset(json.loads(record.read_text())["sources"])
