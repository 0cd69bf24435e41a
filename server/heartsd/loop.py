"""The event loop heartsd runs on: ``event_loop`` = ``asyncio`` (the default), ``uvloop``
or ``auto`` (uvloop where it is installed, else asyncio's own).

grpc.aio runs on any asyncio loop; uvloop (libuv) spends less CPU per wake-up and per
callback, which is most of what a decision costs on the event-loop thread (measured in
the README's Benchmarks, each loop against the same bare ping-pong on the same loop).
It is not the default: under a flood of connections past the process's descriptor limit
its listening socket stopped accepting, so the web front's defence (web/connections.py)
does not hold on it (the README's "The event loop").
"""

from __future__ import annotations

import asyncio
import importlib.util
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")
CHOICES = ("auto", "uvloop", "asyncio")


def uvloop_installed() -> bool:
    return importlib.util.find_spec("uvloop") is not None


def resolve(choice: str) -> str:
    """The loop ``choice`` stands for here: ``uvloop`` or ``asyncio``."""
    if choice == "auto":
        return "uvloop" if uvloop_installed() else "asyncio"
    return choice


def factory(choice: str) -> Callable[[], asyncio.AbstractEventLoop] | None:
    if resolve(choice) == "uvloop":
        import uvloop

        return uvloop.new_event_loop
    return None  # asyncio's default loop


def running_name() -> str:
    """The running loop's kind: ``asyncio`` or ``uvloop`` (for logs and tests)."""
    return type(asyncio.get_running_loop()).__module__.split(".")[0]


def run(main: Coroutine[Any, Any, T], choice: str = "auto") -> T:
    """``asyncio.run(main)`` on the chosen loop."""
    with asyncio.Runner(loop_factory=factory(choice)) as runner:
        return runner.run(main)
