"""An optional mypyc build: a package's hot modules compiled, the pure-Python package kept.

Shared by the engine's build (engine/setup.py) and the daemon's (setup.py at the root, which
loads this file by path). Both packages are ``mypy --strict`` clean, so mypyc compiles the
same sources to C extension modules. The compiled build is optional: without mypyc or a C
compiler, or with the package's *pure* variable set, the install is the pure-Python
package, with a message saying why, and behaves identically. The package's *require*
variable turns a failed compile into a failed install instead (the project's scripts set
it, so CI cannot silently test the pure path twice).

Next to the extensions the build writes ``_compiled.json``: the SHA-256 of each compiled
module's source. ``hearts_engine/_select.py`` checks it at import, so in an editable install
a source edited since the last build is what runs (with a warning), never a stale
extension module.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from setuptools.command.build_ext import build_ext


@dataclass(frozen=True)
class CompiledBuild:
    """What one distribution compiles: ``modules`` of ``package``, whose sources are in
    ``project / folder``; ``label`` names the build in its messages."""

    label: str
    package: str
    project: Path  # the distribution's folder (setup.py's): mypyc and setuptools run here
    folder: str  # the package's sources, relative to ``project``
    modules: tuple[str, ...]
    pure_env: str  # set: build the pure-Python package only
    require_env: str  # set: a failed compile fails the install
    pure_cost: str  # what the pure package costs, for the fallback message

    @property
    def directory(self) -> Path:
        return self.project / self.folder

    def say(self, message: str) -> None:
        print(f"{self.label}: {message}", file=sys.stderr, flush=True)

    def fallback(self, reason: str) -> list[Any]:
        if os.environ.get(self.require_env):
            raise SystemExit(f"{self.label}: the compiled build failed ({reason}) and {self.require_env} is set")
        self.say(f"installing the pure-Python package only: {reason}. It is identical, {self.pure_cost}.")
        return []

    def extensions(self, mypy_args: tuple[str, ...] = ()) -> list[Any]:
        """The extension modules to build, or [] for the pure package (with the reason said)."""
        if os.environ.get(self.pure_env):
            self.say(f"{self.pure_env} is set: installing the pure-Python package only")
            return []
        try:
            from mypyc.build import mypycify
        except ImportError:
            return self.fallback("mypyc (part of mypy) is not installed")
        os.chdir(self.project)  # mypycify takes paths relative to the project
        try:
            return list(mypycify([*mypy_args, *(f"{self.folder}/{m}.py" for m in self.modules)],
                                 opt_level="3", group_name=f"{self.package}._native"))
        except (Exception, SystemExit) as exc:  # mypyc reports a compile error as SystemExit
            return self.fallback(f"mypyc could not compile {', '.join(self.modules)}: {exc}")

    def source_hashes(self) -> dict[str, str]:
        return {m: hashlib.sha256((self.directory / f"{m}.py").read_bytes()).hexdigest() for m in self.modules}

    def build_ext_command(self) -> type[build_ext]:
        """A build_ext that builds the extensions if it can; if the C compiler fails (or
        there is none), it removes whatever it built and leaves the pure-Python package."""
        build = self

        class OptionalBuildExt(build_ext):
            def run(self) -> None:
                if self.inplace:  # an editable build: drop extensions of modules no longer compiled
                    for stale in build.directory.glob("*.so"):
                        if stale.name.split(".", 1)[0] not in (*build.modules, "_native__mypyc"):
                            stale.unlink()
                try:
                    super().run()
                except Exception as exc:
                    for built in self.get_outputs():
                        Path(built).unlink(missing_ok=True)
                    build.fallback(f"the C extensions did not build ({type(exc).__name__}: {exc})")
                    return
                target = self._package_dir() / "_compiled.json"
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(json.dumps({"sources": build.source_hashes()}, indent=1) + "\n")
                build.say(f"compiled with mypyc: {', '.join(build.modules)}")

            def _package_dir(self) -> Path:
                return build.directory if self.inplace else Path(self.build_lib) / build.package

            def get_outputs(self) -> list[str]:
                outputs = list(super().get_outputs())
                if self.extensions:
                    outputs.append(str(Path(self.build_lib) / build.package / "_compiled.json"))
                return outputs

        return OptionalBuildExt
