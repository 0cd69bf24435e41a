"""Headless Chromium for the browser tests: Debian's build, driven by Playwright.

scripts/test installs Debian's ``chromium`` when it is missing (Playwright's own browser
downloads cannot be fetched here). The flags are the ones this closed network needs
(see the project notes): no sandbox as root, and no background connections.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from playwright.sync_api import Browser, Page, sync_playwright

from .harness import OUTPUT

CHROMIUM = os.environ.get("HEARTS_CHROMIUM", "/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}


@contextlib.contextmanager
def chromium() -> Iterator[Browser]:
    if not Path(CHROMIUM).exists():
        raise RuntimeError(f"{CHROMIUM} is missing: run `bash scripts/test` (it installs Debian's chromium)")
    with sync_playwright() as p:
        # launch() gives the browser a fresh temporary profile (--user-data-dir) of its own.
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


def watch_errors(page: Page) -> list[str]:
    """Collect the page's script errors and refused loads (a test asserts there are none)."""
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(f"pageerror: {e}"))
    page.on("console", lambda m: errors.append(f"console: {m.text}") if m.type == "error" else None)
    return errors


def screenshot(page: Page, name: str) -> Path:
    OUTPUT.mkdir(parents=True, exist_ok=True)
    path = OUTPUT / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
