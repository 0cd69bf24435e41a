"""pytest: the doctests of the compiled modules run on the pure-Python pass only.

A compiled module (engine/setup.py) keeps no docstrings, and pytest would refuse to import
its ``.py`` file as a doctest module anyway, since ``hearts_engine.deal`` is then the
extension module. ``scripts/test`` runs the engine's tests (these doctests among them) again
with ``HEARTS_ENGINE_PURE=1``, so every doctest still runs once.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent / "hearts_engine"


def pytest_ignore_collect(collection_path: Path) -> bool | None:
    if collection_path.parent != PACKAGE or collection_path.suffix != ".py":
        return None
    import hearts_engine
    from hearts_engine._select import compiled_modules

    return True if collection_path.stem in compiled_modules(PACKAGE, hearts_engine.COMPILED) else None
