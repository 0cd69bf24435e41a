"""Shared values (heartsd.memo): computed once per marker for every caller, and, spaced,
at most a share of the time however often the marker moves."""

from __future__ import annotations

import asyncio

import pytest

from heartsd import memo
from heartsd.memo import SharedValues


class Clock:
    """memo's clock, moved by hand: what a computation costs is what it adds."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


@pytest.mark.parametrize("spacing, given", [(10.0, [1, 1, 1, 1, 1, 6, 6, 6, 6, 6]), (0.0, list(range(1, 11)))])
def test_a_spaced_value_is_computed_again_only_after_its_cost_times_the_spacing(monkeypatch, spacing, given):
    """An audit: the ladder's standings read every result (~0.5 s at 160,000), and were
    rebuilt at each new result that any caller asked after, one a second on a busy ladder:
    half a core holding the interpreter lock. Spaced 10, a computation that took 0.05 s is
    done again for a newer marker only 0.45 s after it ended, the kept value given
    meanwhile; unspaced, every new marker computes at once, as before."""
    clock = Clock()
    monkeypatch.setattr(memo, "time", clock)
    values = SharedValues(spacing=spacing)

    async def main() -> list[int]:
        got = []
        for marker in range(1, 11):  # a new marker every 0.1 s
            def compute(m: int = marker) -> int:
                clock.now += 0.05  # what it costs
                return m
            got.append(await values.get("standings", marker, compute))
            clock.now += 0.1
        return got

    assert asyncio.run(main()) == given


def test_kept_values_are_bounded_by_keep_the_last_computed_staying():
    """Keys may come from callers (a tournament's id, each value a whole tournament): with
    ``keep`` only that many values stay, those computed last, and a failed computation
    (an unknown id) keeps nothing."""
    values = SharedValues(keep=2)

    async def main() -> list[object]:
        for key in ("a", "b", "c"):
            await values.get(key, 1, lambda k=key: k.upper())
        with pytest.raises(KeyError):
            await values.get("unknown", 1, lambda: {}["x"])
        return [values.kept(k) for k in ("a", "b", "c", "unknown")]

    assert asyncio.run(main()) == [None, "B", "C", None]
