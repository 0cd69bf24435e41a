"""heartsd's event loop setting: asyncio (the default), uvloop, or auto (uvloop where installed)."""

from __future__ import annotations

import pytest

from heartsd import loop
from heartsd.config import ConfigError, Settings


async def _running_loop_module() -> str:
    return loop.running_name()


def test_asyncio_runs_asyncios_own_loop() -> None:
    assert loop.run(_running_loop_module(), "asyncio") == "asyncio"


def test_auto_takes_uvloop_where_it_is_installed() -> None:
    expected = "uvloop" if loop.uvloop_installed() else "asyncio"
    assert loop.resolve("auto") == expected
    assert loop.run(_running_loop_module(), "auto") == expected


def test_uvloop_runs_uvloop() -> None:
    pytest.importorskip("uvloop")
    assert loop.run(_running_loop_module(), "uvloop") == "uvloop"


def test_the_setting_is_checked() -> None:
    assert Settings.load(env={}).event_loop == "asyncio"  # uvloop fails the descriptor-flood defence
    assert Settings.load(env={"HEARTSD_EVENT_LOOP": "auto"}).event_loop == "auto"
    with pytest.raises(ConfigError, match="event_loop"):
        Settings.load(env={"HEARTSD_EVENT_LOOP": "tokio"})
