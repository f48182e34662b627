"""Adaptive polling policy, conditional-GET bookkeeping and article URL canonicalisation."""

from __future__ import annotations

import random
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from crawler.core.clock import ManualClock, ScaledClock, clock_from_settings, parse_instant
from crawler.core.urls import canonical_article_url
from crawler.polling import (
    FeedState,
    PollPolicy,
    conditional_headers,
    entries_digest,
    record_publications,
    remember_validators,
)

POLICY = PollPolicy(min_interval=120, max_interval=3600, polls_per_article=2, jitter=0.1)
NOW = 1_800_000_000.0
MINUTE = 60.0


def history(every: float, n: int = 10, last: float = NOW) -> list[float]:
    return [last - every * k for k in reversed(range(n))]


def test_interval_follows_the_publishing_rate_within_the_bounds() -> None:
    every_10_min = FeedState(url="f", events=history(10 * MINUTE))
    assert POLICY.interval(every_10_min, NOW) == 5 * MINUTE  # two polls per article
    every_minute = FeedState(url="f", events=history(MINUTE))
    assert POLICY.interval(every_minute, NOW) == 120  # the minimum
    every_day = FeedState(url="f", events=history(86400))
    assert POLICY.interval(every_day, NOW) == 3600  # the maximum
    assert POLICY.interval(FeedState(url="f"), NOW) == 3600  # never published anything


def test_a_feed_gone_quiet_is_polled_less_and_less() -> None:
    state = FeedState(url="f", events=history(10 * MINUTE))
    assert POLICY.interval(state, NOW + 30 * MINUTE) == 15 * MINUTE
    assert POLICY.interval(state, NOW + 5 * 3600) == 3600


def test_errors_back_off_exponentially_up_to_the_maximum() -> None:
    state = FeedState(url="f", events=history(10 * MINUTE), errors=1)
    assert POLICY.interval(state, NOW) == 10 * MINUTE
    state.errors = 30
    assert POLICY.interval(state, NOW) == 3600


@given(
    events=st.lists(st.floats(min_value=0, max_value=NOW), max_size=20).map(sorted),
    errors=st.integers(min_value=0, max_value=50),
    seed=st.integers(min_value=0, max_value=2**32),
)
def test_the_jittered_schedule_never_leaves_the_bounds(
    events: list[float], errors: int, seed: int
) -> None:
    state = FeedState(url="f", events=events, errors=errors)
    POLICY.schedule(state, NOW, random.Random(seed))
    assert state.interval is not None
    assert 120 <= state.interval <= 3600
    assert state.next_poll == NOW + state.interval and state.last_poll == NOW


def test_jitter_spreads_feeds_with_the_same_rate() -> None:
    rng = random.Random(7)
    intervals = set()
    for _ in range(20):
        state = FeedState(url="f", events=history(10 * MINUTE))
        POLICY.schedule(state, NOW, rng)
        intervals.add(round(state.interval or 0))
    assert len(intervals) > 10 and min(intervals) >= 270 and max(intervals) <= 330


def test_policy_rejects_inconsistent_bounds() -> None:
    with pytest.raises(ValueError):
        PollPolicy(min_interval=600, max_interval=60)


def test_publications_come_from_entry_dates_else_from_detection_time() -> None:
    state = FeedState(url="f")
    dates = [datetime.fromtimestamp(t, UTC) for t in history(600, n=30)]
    assert record_publications(state, dates, new_undated=0, now=NOW) == 30
    assert len(state.events) == 20 and state.events[-1] == NOW  # newest 20 kept
    later = NOW + 900
    future = datetime.fromtimestamp(later + 3600, UTC)  # a publisher's clock running ahead
    assert record_publications(state, [*dates, future, None], new_undated=1, now=later) == 2
    assert state.events[-2:] == [later, later]
    # Nothing newer than what is known: no event.
    assert record_publications(state, dates, new_undated=0, now=later + 60) == 0


def test_validators_round_trip_into_conditional_headers() -> None:
    state = FeedState(url="f")
    assert conditional_headers(state) == {}
    remember_validators(state, '"v1"', "Sun, 01 Nov 2026 06:00:00 GMT")
    assert conditional_headers(state) == {
        "If-None-Match": '"v1"',
        "If-Modified-Since": "Sun, 01 Nov 2026 06:00:00 GMT",
    }
    remember_validators(state, None, None)  # the server stopped sending them
    assert conditional_headers(state) == {}
    assert FeedState.from_json(state.to_json()) == state


def test_entries_digest_ignores_order_but_not_links_or_dates() -> None:
    a = [("http://x/1", "2026-11-01T00:00:00+00:00"), ("http://x/2", None)]
    assert entries_digest(a) == entries_digest(reversed(a))
    assert entries_digest(a) != entries_digest([a[0], ("http://x/3", None)])
    assert entries_digest(a) != entries_digest([("http://x/1", "2026-11-02T00:00:00+00:00"), a[1]])


@pytest.mark.parametrize(
    ("link", "canonical"),
    [
        ("http://News.Example.com:80/a/b.html?utm_source=rss&utm_medium=feed#top",
         "http://news.example.com/a/b.html"),
        ("https://example.com/story?id=42&fbclid=abc&gclid=x", "https://example.com/story?id=42"),
        ("https://example.com/story?b=2&a=1", "https://example.com/story?a=1&b=2"),
        ("https://example.com/caf%c3%a9", "https://example.com/caf%C3%A9"),
        ("https://example.com:443/x?ITO=1&mc_cid=2&page=3", "https://example.com/x?page=3"),
        ("https://example.com", "https://example.com/"),
    ],
)  # fmt: skip
def test_article_urls_lose_tracking_but_keep_identity(link: str, canonical: str) -> None:
    assert canonical_article_url(link) == canonical
    assert canonical_article_url(canonical) == canonical  # idempotent


def test_clocks_manual_scaled_and_from_settings() -> None:
    from scrapy.settings import Settings

    manual = ManualClock(100.0)
    assert manual.advance(20) == 120.0 == manual.now()
    with pytest.raises(ValueError):
        manual.advance(-1)
    start = parse_instant("2026-11-01T06:00:00Z")
    assert start == datetime(2026, 11, 1, 6, tzinfo=UTC).timestamp()
    scaled = ScaledClock(start, scale=60.0, anchor=0.0)
    assert scaled.now() > start + 60 * 1e9  # wall time since 1970, sixty times over
    settings = Settings(
        {"HARVEST_CLOCK_SCALE": 120, "HARVEST_CLOCK_START": "2026-11-01T06:00:00+00:00"}
    )
    clock = clock_from_settings(settings)
    assert isinstance(clock, ScaledClock) and abs(clock.now() - start) < 120 * 5
    assert not isinstance(clock_from_settings(Settings({"HARVEST_CLOCK_SCALE": 1.0})), ScaledClock)
