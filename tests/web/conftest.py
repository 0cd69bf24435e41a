"""Fixtures of the web tests: a headless Chromium per browser-test module.

Per module, not per session: Playwright's sync API keeps an event loop running in the
test thread while it is open, and the other web tests use asyncio.run()."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser

from .browser import chromium


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as b:
        yield b
