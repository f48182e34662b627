"""Property-based tests of the parsers of untrusted input (bench/newsharvest_bench/fuzzing.py holds
the strategies and invariants `newsharvest fuzz` runs for longer). Few examples and a generous
deadline: quick in every test run, and a hang still fails."""

from __future__ import annotations

from datetime import timedelta

from hypothesis import HealthCheck, given, settings

from newsharvest_bench.fuzzing import (
    FeedInput,
    PageInput,
    WarcInput,
    check_extract,
    check_feed,
    check_url,
    check_warc,
    feed_inputs,
    fixture_seeds,
    page_inputs,
    urls,
    warc_inputs,
)

DEADLINE = timedelta(seconds=5)  # per example: real inputs take milliseconds; a hang fails
QUICK = {"deadline": DEADLINE, "suppress_health_check": [HealthCheck.too_slow,
         HealthCheck.data_too_large], "database": None}  # fmt: skip


@settings(max_examples=60, **QUICK)
@given(page_inputs(fixture_seeds("extract")))
def test_extraction_never_raises_and_its_output_is_consistent(page: PageInput) -> None:
    check_extract(page)


@settings(max_examples=150, **QUICK)
@given(feed_inputs(fixture_seeds("feeds")))
def test_feed_parser_never_raises_and_entries_are_fetchable(feed: FeedInput) -> None:
    check_feed(feed)


@settings(max_examples=300, **QUICK)
@given(urls())
def test_url_canonicaliser_and_network_policy_hold_on_any_string(url: str) -> None:
    check_url(url)


@settings(max_examples=200, **QUICK)
@given(warc_inputs(fixture_seeds("warc")))
def test_warc_reading_yields_pages_and_skips_or_a_broken_file_and_nothing_else(
    warc: WarcInput,
) -> None:
    check_warc(warc)
