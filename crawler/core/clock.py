"""The harvester's clock, injectable so that polling can be simulated and tested.

Everything in continuous harvesting that reasons about time (poll schedules, publishing rates,
claim leases, seen-URL expiry) asks a `Clock` for "now" in epoch seconds, never `time.time()`
directly. The default is the system clock. `ScaledClock` runs sped-up simulated time:
now = start + (time.time() - anchor) * scale, so another process given the same three numbers
(the news-site fixture in a test) agrees on "now". `ManualClock` moves only when told to
(benchmarks and unit tests).
"""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any, Protocol


class Clock(Protocol):
    def now(self) -> float: ...


class SystemClock:
    def now(self) -> float:
        return time.time()


class ScaledClock:
    """Simulated time that runs `scale` times faster than the wall clock from `anchor` on."""

    def __init__(self, start: float, scale: float, anchor: float | None = None) -> None:
        if scale <= 0:
            raise ValueError("HARVEST_CLOCK_SCALE must be positive")
        self.start = start
        self.scale = scale
        self.anchor = time.time() if anchor is None else anchor

    def now(self) -> float:
        return self.start + (time.time() - self.anchor) * self.scale


class ManualClock:
    """A clock that stands still until advanced."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = start

    def now(self) -> float:
        return self._now

    def advance(self, seconds: float) -> float:
        if seconds < 0:
            raise ValueError("time never goes backwards")
        self._now += seconds
        return self._now


def clock_from_settings(settings: Any) -> Clock:
    """The system clock, unless HARVEST_CLOCK_SCALE asks for simulated time."""
    scale = settings.getfloat("HARVEST_CLOCK_SCALE")
    start_text = (settings.get("HARVEST_CLOCK_START") or "").strip()
    anchor_text = str(settings.get("HARVEST_CLOCK_ANCHOR") or "").strip()
    if scale == 1.0 and not start_text:
        return SystemClock()
    anchor = float(anchor_text) if anchor_text else time.time()
    start = parse_instant(start_text) if start_text else anchor
    return ScaledClock(start, scale, anchor)


def parse_instant(text: str) -> float:
    """Epoch seconds from an ISO 8601 instant with offset (or a number of epoch seconds)."""
    try:
        return float(text)
    except ValueError:
        pass
    when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if when.tzinfo is None:
        raise ValueError(f"HARVEST_CLOCK_START needs a UTC offset: {text!r}")
    return when.timestamp()
