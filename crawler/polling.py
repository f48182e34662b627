"""Adaptive feed polling with conditional GET: pure logic, no Scrapy, no I/O.

Each feed keeps a `FeedState`: its HTTP validators (ETag, Last-Modified), hashes of its last body
and entry list, and the times of its recent publications. From those the `PollPolicy` picks the
feed's next interval: about `polls_per_article` polls per expected gap between publications,
never below `min_interval` nor above `max_interval`, stretched while the feed is quiet, backed off
exponentially on errors, and jittered so feeds of one host do not fall into lockstep.

The spider and `newsharvest bench polling` (which simulates a day against the fixture) both drive
this module, so the figures the benchmark reports are those of the code that runs.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from settings import base as defaults

# Publication times remembered per feed (small in Redis).
EVENT_HISTORY = 20
# The expected gap is the mean of this many most recent gaps: recent enough to follow a feed
# whose rate changes within a few articles, long enough not to chase one odd gap.
RATE_WINDOW_GAPS = 5
# Consecutive errors beyond this no longer lengthen the back-off.
MAX_ERROR_DOUBLINGS = 6
# Digest size of body/entry hashes (bytes): collisions are irrelevant at 128 bits.
HASH_BYTES = 16

# Poll outcomes (stats `feeds/outcome/<name>`).
NOT_MODIFIED = "not_modified"  # 304: no body, no parsing
UNCHANGED_BODY = "unchanged_body"  # 200 with the same bytes as last time: no parsing
UNCHANGED_ENTRIES = "unchanged_entries"  # parsed, but the same entries (e.g. a new build date)
CHANGED = "changed"
ERROR = "error"


@dataclass
class FeedState:
    """What is remembered about one feed between polls (JSON-serialisable)."""

    url: str
    etag: str | None = None
    last_modified: str | None = None
    body_hash: str | None = None
    entries_hash: str | None = None
    interval: float | None = None  # seconds: the interval chosen at the last poll
    next_poll: float = 0.0  # epoch seconds
    last_poll: float | None = None
    events: list[float] = field(default_factory=list)  # recent publication times, oldest first
    errors: int = 0  # consecutive failed polls
    polls: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FeedState:
        known = {name: data[name] for name in cls.__dataclass_fields__ if name in data}
        return cls(**known)

    def count(self, outcome: str) -> None:
        self.polls += 1
        self.outcomes[outcome] = self.outcomes.get(outcome, 0) + 1


@dataclass(frozen=True)
class PollPolicy:
    min_interval: float = defaults.HARVEST_MIN_INTERVAL_SECONDS
    max_interval: float = defaults.HARVEST_MAX_INTERVAL_SECONDS
    polls_per_article: float = defaults.HARVEST_POLLS_PER_ARTICLE
    jitter: float = defaults.HARVEST_JITTER

    def __post_init__(self) -> None:
        if not 0 < self.min_interval <= self.max_interval:
            raise ValueError(
                "need 0 < HARVEST_MIN_INTERVAL_SECONDS <= HARVEST_MAX_INTERVAL_SECONDS"
            )
        if self.polls_per_article <= 0 or not 0 <= self.jitter < 1:
            raise ValueError("need HARVEST_POLLS_PER_ARTICLE > 0 and 0 <= HARVEST_JITTER < 1")

    @classmethod
    def from_settings(cls, settings: Any) -> PollPolicy:
        return cls(
            min_interval=settings.getfloat("HARVEST_MIN_INTERVAL_SECONDS"),
            max_interval=settings.getfloat("HARVEST_MAX_INTERVAL_SECONDS"),
            polls_per_article=settings.getfloat("HARVEST_POLLS_PER_ARTICLE"),
            jitter=settings.getfloat("HARVEST_JITTER"),
        )

    def clamp(self, seconds: float) -> float:
        return min(self.max_interval, max(self.min_interval, seconds))

    def interval(self, state: FeedState, now: float) -> float:
        """The feed's interval before jitter: its expected gap between publications divided by
        polls_per_article, the gap being the mean of its last RATE_WINDOW_GAPS gaps, or the
        time since its last publication when that is longer (a feed gone quiet is polled less
        and less)."""
        events = state.events[-(RATE_WINDOW_GAPS + 1) :]
        if not events:
            gap = self.max_interval * self.polls_per_article  # never published: poll rarely
        else:
            quiet = max(0.0, now - events[-1])
            mean_gap = (events[-1] - events[0]) / (len(events) - 1) if len(events) > 1 else quiet
            gap = max(mean_gap, quiet)
        base = self.clamp(gap / self.polls_per_article)
        if state.errors:
            base = self.clamp(base * 2 ** min(state.errors, MAX_ERROR_DOUBLINGS))
        return base

    def schedule(self, state: FeedState, now: float, rng: random.Random) -> None:
        """Set the feed's next poll time (jittered, and still within the bounds)."""
        base = self.interval(state, now)
        spread = 1.0 + self.jitter * (2.0 * rng.random() - 1.0)
        state.interval = self.clamp(base * spread)
        state.last_poll = now
        state.next_poll = now + state.interval


def conditional_headers(state: FeedState) -> dict[str, str]:
    """If-None-Match / If-Modified-Since from the validators the server gave last time."""
    headers = {}
    if state.etag:
        headers["If-None-Match"] = state.etag
    if state.last_modified:
        headers["If-Modified-Since"] = state.last_modified
    return headers


def remember_validators(state: FeedState, etag: str | None, last_modified: str | None) -> None:
    state.etag = etag or None
    state.last_modified = last_modified or None


def body_digest(body: bytes) -> str:
    return hashlib.blake2b(body, digest_size=HASH_BYTES).hexdigest()


def entries_digest(entries: Iterable[tuple[str, str | None]]) -> str:
    """Hash of a feed's (link, updated) pairs: the same entries hash the same even when the
    feed's own build date or whitespace changed."""
    digest = hashlib.blake2b(digest_size=HASH_BYTES)
    for link, updated in sorted(entries, key=lambda pair: (pair[0], pair[1] or "")):
        digest.update(f"{link}\t{updated or ''}\n".encode())
    return digest.hexdigest()


def record_publications(
    state: FeedState, dates: Iterable[datetime | None], new_undated: int, now: float
) -> int:
    """Add the feed's publications since the last poll to its history; returns how many.

    Dated entries newer than the newest remembered event count at their own date (clamped to
    now); entries without dates that were new to us count at `now`. On a first poll the
    newest dated entries seed the history, so the rate is known from the start.
    """
    newest_known = state.events[-1] if state.events else None
    times = []
    for when in dates:
        if when is None:
            continue
        stamp = min(when.timestamp(), now)  # a date in the future is clock skew
        if newest_known is None or stamp > newest_known:
            times.append(stamp)
    times.sort()
    times += [now] * new_undated
    state.events = (state.events + times)[-EVENT_HISTORY:]
    return len(times)
