"""Finding a strategy from the command line: a built-in name, ``package.module:Class``,
or ``path/to/file.py`` (optionally ``:Class``; without it, the file's one Strategy).

Every way a strategy cannot be loaded is a :class:`ValueError` with one line that the
commands print before exiting 2 (usage), the author's own code included: a syntax
error or a failing import names the file, the line and the error, not the loader's
frames.

>>> import tempfile
>>> with tempfile.TemporaryDirectory() as folder:
...     bad = Path(folder) / "syn.py"
...     _ = bad.write_text("def f(:\\n")
...     try:
...         load_strategy(str(bad))
...     except ValueError as exc:
...         print(str(exc).replace(folder + os.sep, ""))
cannot load syn.py: line 1: SyntaxError: invalid syntax
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.machinery
import importlib.util
import inspect
import os
import sys
import traceback
from pathlib import Path
from types import ModuleType

from .strategies import KNOWN, Strategy, known_strategy, make_strategy


def load_strategy(spec: str, seed: int = 0) -> Strategy:
    if known_strategy(spec):
        return make_strategy(spec, seed)
    target, _, class_name = spec.partition(":") if not spec.endswith(".py") else (spec, "", "")
    if spec.count(":") and spec.split(":", 1)[0].endswith(".py"):
        target, _, class_name = spec.partition(":")
    if target.endswith(".py"):
        path = Path(target)
        if not path.exists():
            raise ValueError(f"no such file: {target}")
        module = _run_file(path)
    else:
        if not class_name:
            raise ValueError(
                f"unknown strategy {spec!r}: use one of {KNOWN}, "
                "package.module:Class or a file.py"
            )
        try:
            module = importlib.import_module(target)
        except ImportError as exc:
            if exc.name is not None and (target + ".").startswith(exc.name + "."):  # the module itself is missing
                raise ValueError(f"cannot import {target!r}: {exc}") from None
            raise ValueError(f"cannot import {target!r}: {_where(exc, None)}") from None
        except Exception as exc:  # the module's own code failed as it was imported
            raise ValueError(f"cannot import {target!r}: {_where(exc, None)}") from None
    if class_name:
        cls = getattr(module, class_name, None)
        if cls is None:
            raise ValueError(f"{target} has no {class_name}")
    else:
        found = [c for _, c in inspect.getmembers(module, inspect.isclass)
                 if issubclass(c, Strategy) and c.__module__ == module.__name__]
        if len(found) != 1:
            raise ValueError(f"{target} defines {len(found)} Strategy classes; name one with {target}:ClassName")
        cls = found[0]
    if not (inspect.isclass(cls) and issubclass(cls, Strategy)):
        raise ValueError(f"{spec} is not a heartsbot Strategy subclass")
    return cls(seed)


def version_of(strategy: Strategy) -> str:
    """The version a bot playing ``strategy`` declares: its class's ``version`` if set, else
    ``src-`` and 12 hex digits of the SHA-256 of the file that defines its class (a strategy
    file's own, as it is registered when loaded; a built-in strategy's is heartsbot's, so it
    changes with heartsbot). Before, every Python bot declared "heartsbot", and a tournament
    could not tell an author's changed code. A strategy made with parameters that name it
    (``graded-36``, whose class is named otherwise) adds its name: ``graded-0`` and
    ``graded-100r`` share one file, and a bot restarted as the other passed for the version
    its tournament froze (an organiser's pass).

    >>> from heartsbot.strategies import make_strategy
    >>> version_of(make_strategy("graded-36")).endswith("-graded-36")
    True
    """
    if strategy.version:
        return strategy.version
    try:
        source = inspect.getsourcefile(type(strategy))
        digest = hashlib.sha256(Path(source).read_bytes()).hexdigest()[:12] if source else ""
    except (OSError, TypeError):  # no file to read (a class defined in an interactive session)
        digest = ""
    made_as = f"-{strategy.name}" if strategy.name != getattr(type(strategy), "name", strategy.name) else ""
    return f"src-{digest}{made_as}" if digest else "heartsbot"


def _run_file(path: Path) -> ModuleType:
    """The module of the strategy file ``path``, run as ``python path`` would run it; its
    failure as one line.

    The file's folder goes on the import path (and stays: a strategy may import a
    neighbour at its first play), so a strategy split over files works from any folder. It
    goes last, not first as for a script: heartsbot and grpc import modules after the
    strategy loads, and a neighbour named like one of them (``json.py``) must not replace it. The module is registered in ``sys.modules`` while it runs and
    after, because dataclasses and ``typing.get_type_hints`` look a class's module up
    there (a ``@dataclass`` under ``from __future__ import annotations`` failed without
    it), under a name that shadows no other module (:func:`_module_name`)."""
    name = _module_name(path)
    folder = str(path.resolve().parent)
    added = folder not in sys.path
    if added:
        sys.path.append(folder)
    module_spec = importlib.util.spec_from_file_location(name, path)
    assert module_spec is not None and module_spec.loader is not None
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    try:
        module_spec.loader.exec_module(module)
    except Exception as exc:  # a syntax error, a failing import, any error at the file's top level
        del sys.modules[name]
        if added:
            sys.path.remove(folder)
        raise ValueError(f"cannot load {path}: {_where(exc, path)}") from None
    return module


def _module_name(path: Path) -> str:
    """The file's own name (``mybot``), unless a module of that name is loaded or could be
    imported from elsewhere (a strategy in ``random.py`` must not replace the standard
    library's ``random``, nor a second load of one file the first): then the name with a
    number (``random_2``)."""
    stem = path.stem if path.stem.isidentifier() else "strategy"
    name, number = stem, 1
    while name in sys.modules or not _only_this_file(name, path):
        number += 1
        name = f"{stem}_{number}"
    return name


def _only_this_file(name: str, path: Path) -> bool:
    """Whether ``import name`` finds no module but the file ``path`` (its own folder left out
    of the search, as it may be on the import path already): no built-in, frozen, installed
    or other module of that name."""
    folder = os.path.abspath(path.parent)
    elsewhere = [p for p in sys.path if os.path.abspath(p or os.curdir) != folder]
    for finder in sys.meta_path:
        find = getattr(finder, "find_spec", None)
        if find is None:
            continue
        try:
            found = find(name, elsewhere) if finder is importlib.machinery.PathFinder else find(name, None)
        except (ImportError, ValueError):
            return False
        if found is not None:
            return False
    return True


def _where(exc: Exception, path: Path | None) -> str:
    """``line N: Kind: message`` for an error raised while a strategy's code loaded.

    The line is the syntax error's own, else the deepest line of ``path`` in the
    traceback (the statement of the author's file that failed), else the deepest frame
    outside the import machinery. Another file than ``path`` is named with its line."""
    kind = type(exc).__name__
    if isinstance(exc, SyntaxError):  # its file and line are in the exception, not the traceback
        place = "" if path is not None and exc.filename and _same(exc.filename, path) else f"{exc.filename}, "
        return f"{place}line {exc.lineno}: {kind}: {exc.msg}"
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if not f.filename.startswith("<frozen")]
    own = [f for f in frames if path is not None and _same(f.filename, path)]
    if own:
        return f"line {own[-1].lineno}: {kind}: {exc}"
    if frames:
        return f"{frames[-1].filename}, line {frames[-1].lineno}: {kind}: {exc}"
    return f"{kind}: {exc}"


def _same(filename: str, path: Path) -> bool:
    return os.path.abspath(filename) == os.path.abspath(path)
