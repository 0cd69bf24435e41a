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
from typing import Any

from playwright.sync_api import Browser, Page, sync_playwright

from .harness import OUTPUT

CHROMIUM = os.environ.get("HEARTS_CHROMIUM", "/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
PHONE = {"width": 390, "height": 844}
NARROW = {"width": 375, "height": 667}  # the narrowest phone the pages are drawn for
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


# Each seat label of the table `root` (a selector): its text, its title, whether its text
# overflows its box, and its seat's box (inside the table? apart from the others?). Its text
# is textContent's (a long word's start and end are boxes of their own, which innerText
# puts on lines of their own); where it shows, and what, is name_lines's.
SEAT_LABELS = """(root) => {
  const table = document.querySelector(root).getBoundingClientRect();
  return [...document.querySelectorAll(`${root} .seat`)].map((seat) => {
    const who = seat.querySelector('.who'), box = seat.getBoundingClientRect();
    return { text: who.textContent.replace(/\\s+/g, ' ').trim(), title: who.title,
             overflows: who.scrollWidth > who.clientWidth + 0.5 || who.scrollHeight > who.clientHeight + 0.5,
             inside: box.left >= table.left - 0.5 && box.right <= table.right + 0.5
                     && box.top >= table.top - 0.5 && box.bottom <= table.bottom + 0.5,
             box: { x: box.left, y: box.top, w: box.width, h: box.height } };
  });
}"""


def seat_labels(page: Page, root: str = "#table") -> list[dict[str, Any]]:
    return page.evaluate(SEAT_LABELS, root)  # type: ignore[no-any-return]


# Each name the selector `names` finds (a seat's label, a table's bot), as drawn: its title,
# how many lines its characters are on, and whether its first and its last character show
# inside its box (the end of a name is what tells bots apart: a name cut at its end hides it).
NAME_LINES = """(names) => [...document.querySelectorAll(names)].map((name) => {
  const box = name.getBoundingClientRect(), tops = new Set(), chars = [];
  const walker = document.createTreeWalker(name, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const node = walker.currentNode;
    for (let i = 0; i < node.data.length; i += 1) {
      if (node.data[i] === ' ') continue;
      const range = document.createRange();
      range.setStart(node, i);
      range.setEnd(node, i + 1);
      chars.push(range.getBoundingClientRect());
    }
  }
  const shows = (r) => r.width > 0 && r.left >= box.left - 0.5 && r.right <= box.right + 0.5;
  for (const r of chars) if (shows(r)) tops.add(Math.round(r.top));
  return { title: name.title, lines: tops.size, first: shows(chars[0]), last: shows(chars.at(-1)) };
})"""


def name_lines(page: Page, names: str) -> list[dict[str, Any]]:
    return page.evaluate(NAME_LINES, names)  # type: ignore[no-any-return]


# Ladder bots' names of the kind that broke at their hyphens (the last too wide for a phone's line).
HYPHENATED = ["house-heuristic", "house-heuristic-2", "alpha-beta-pruner-v3",
              "montecarlo-information-set-search-v2-opponent-model"]
# Names each too long for a phone's line, told apart at their ends: in a sentence
# ("<name> wins the trick") such a name broke at one of its hyphens.
LONG_HYPHENATED = [f"montecarlo-information-set-search-opponent-model-v{i}" for i in range(1, 5)]


def assert_one_line_each(page: Page, names: str, want: list[str]) -> None:
    """Each name ``names`` finds is one line at the narrowest phone's width, a phone's and a
    desktop's, its start and its end in view, its title the whole name, and the page no wider
    than the screen."""
    for size in (NARROW, PHONE, DESKTOP):
        page.set_viewport_size(size)
        drawn = name_lines(page, names)
        assert [d["title"] for d in drawn] == want, drawn
        for name, label in zip(want, drawn):
            assert label["lines"] == 1 and label["first"] and label["last"], (size, name, label)
        assert page.evaluate("document.documentElement.scrollWidth") <= size["width"], size
    page.set_viewport_size(PHONE)


# How many lines each occurrence of `name` in the drawn text of the elements `root` finds
# (their .sr-only text aside) has its characters on, whoever drew it: a name in a sentence
# ("<name> wins the trick") that broke at one of its hyphens is on two.
TEXT_LINES = """([root, name]) => {
  const chars = [];
  for (const box of document.querySelectorAll(root)) {
    const walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
    while (walker.nextNode()) {
      const node = walker.currentNode;
      if (node.parentElement.closest('.sr-only')) continue;
      for (let i = 0; i < node.data.length; i += 1) chars.push([node, i]);
    }
    chars.push(null); // one element's text apart from the next's
  }
  const text = chars.map((c) => (c ? c[0].data[c[1]] : '\\n')).join('');
  const lines = [];
  for (let at = text.indexOf(name); at >= 0; at = text.indexOf(name, at + 1)) {
    const tops = new Set();
    for (const [node, i] of chars.slice(at, at + name.length)) {
      if (/\\s/.test(node.data[i])) continue;
      const range = document.createRange();
      range.setStart(node, i);
      range.setEnd(node, i + 1);
      const r = range.getBoundingClientRect();
      if (r.height > 0) tops.add(Math.round(r.top));
    }
    lines.push(tops.size);
  }
  return lines;
}"""


def text_lines(page: Page, root: str, name: str) -> list[int]:
    return page.evaluate(TEXT_LINES, [root, name])  # type: ignore[no-any-return]


def assert_one_line_in_text(page: Page, root: str, want: list[str]) -> None:
    """Each name of ``want`` (in order, with repeats) is drawn in the text of ``root``, each
    time on one line, at the narrowest phone's width and a desktop's; each is drawn as a name
    (``.name``: its start and its end in view, its title the whole name); and the page is no
    wider than the screen."""
    for size in (NARROW, DESKTOP):
        page.set_viewport_size(size)
        for name in set(want):
            assert text_lines(page, root, name) == [1] * want.count(name), (size, name, text_lines(page, root, name))
        drawn = name_lines(page, f"{root} .name")
        assert [d["title"] for d in drawn] == want, drawn
        for name, label in zip(want, drawn):
            assert label["lines"] == 1 and label["first"] and label["last"], (size, name, label)
        assert page.evaluate("document.documentElement.scrollWidth") <= size["width"], size
    page.set_viewport_size(PHONE)


def overlapping(labels: list[dict[str, Any]]) -> list[tuple[int, int]]:
    """The pairs of seats (indexes in ``labels``) whose boxes overlap."""
    boxes = [label["box"] for label in labels]
    return [(i, j) for i, p in enumerate(boxes) for j, q in enumerate(boxes) if i < j
            and min(p["x"] + p["w"], q["x"] + q["w"]) - max(p["x"], q["x"]) > 0.5
            and min(p["y"] + p["h"], q["y"] + q["h"]) - max(p["y"], q["y"]) > 0.5]


class RoutedJSON:
    """A page's JSON endpoint answered by the test (``page.route(pattern, routed)``): ``body``
    while ``status`` is 200, else a refusal of that status with the rate's code; ``asked``
    counts the requests. For the pages that refresh themselves (common.js keepCurrent)."""

    def __init__(self, body: Any) -> None:
        self.body = body
        self.status = 200
        self.asked: list[str] = []

    def __call__(self, route: Any) -> None:
        import json

        self.asked.append(route.request.url)
        if self.status == 200:
            route.fulfill(content_type="application/json", body=json.dumps(self.body))
        else:
            route.fulfill(status=self.status, content_type="application/json", headers={"Retry-After": "1"},
                          body=json.dumps({"error": "too many requests", "code": "too_many"}))

    def asked_within(self, page: Page, ms: int) -> int:
        """How many times the page asks in the next ``ms`` of its clock (``page.clock.install()``
        first), each answer handled before the clock runs on: each second of it, until the page
        has no request in flight (before, a fixed 20 ms, which a loaded machine overran: the
        answer came after the count, and the next request after the window)."""
        page.evaluate(TRACK_FETCHES)
        count = len(self.asked)
        for _ in range(ms // 1_000):
            page.clock.run_for(1_000)
            for _ in range(3_000):  # each turn lets Playwright answer the route (and this count it)
                if not page.evaluate("window.inflight"):
                    break
                page.wait_for_timeout(10)
            else:
                raise AssertionError("the page's request was not answered")
        return len(self.asked) - count


# The page's requests in flight, each until its JSON has been read (common.js getJSON reads
# every answer's, then handles it in the same turn): the page's fetch, wrapped once. Its
# timers call fetch at once, so what the clock set off is counted as soon as it has run.
TRACK_FETCHES = """() => {
  if (window.inflight !== undefined) return;
  window.inflight = 0;
  const fetch = window.fetch;
  window.fetch = (...args) => {
    window.inflight += 1;
    let settled = false;
    const settle = () => { if (!settled) { settled = true; window.inflight -= 1; } };
    return fetch(...args).then((response) => {
      const json = response.json.bind(response);
      response.json = () => json().finally(settle);
      return response;
    }, (error) => { settle(); throw error; });
  };
}"""
