"""pytest: the doctests of the daemon's compiled modules (setup.py) run on the pure-Python
pass only, as the engine's do (engine/conftest.py): ``scripts/test`` runs them again with
``HEARTSD_PURE=1``."""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent / "heartsd"


def pytest_ignore_collect(collection_path: Path) -> bool | None:
    if collection_path.parent != PACKAGE or collection_path.suffix != ".py":
        return None
    import heartsd
    from hearts_engine._select import compiled_modules

    return True if collection_path.stem in compiled_modules(PACKAGE, heartsd.COMPILED) else None
