"""Finding a strategy from the command line: a built-in name, ``package.module:Class``,
or ``path/to/file.py`` (optionally ``:Class``; without it, the file's one Strategy)."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
from pathlib import Path

from .strategies import STRATEGIES, Strategy


def load_strategy(spec: str, seed: int = 0) -> Strategy:
    if spec in STRATEGIES:
        return STRATEGIES[spec](seed)
    target, _, class_name = spec.partition(":") if not spec.endswith(".py") else (spec, "", "")
    if spec.count(":") and spec.split(":", 1)[0].endswith(".py"):
        target, _, class_name = spec.partition(":")
    if target.endswith(".py"):
        path = Path(target)
        if not path.exists():
            raise ValueError(f"no such file: {target}")
        module_spec = importlib.util.spec_from_file_location(path.stem, path)
        assert module_spec is not None and module_spec.loader is not None
        module = importlib.util.module_from_spec(module_spec)
        module_spec.loader.exec_module(module)
    else:
        if not class_name:
            raise ValueError(
                f"unknown strategy {spec!r}: use one of {', '.join(sorted(STRATEGIES))}, "
                "package.module:Class or a file.py"
            )
        try:
            module = importlib.import_module(target)
        except ImportError as exc:
            raise ValueError(f"cannot import {target!r}: {exc}") from None
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
