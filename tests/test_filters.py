"""Harvest filters: ARTICLE_LANGUAGES, ARTICLE_MAX_AGE_DAYS and per-feed URL patterns, judged
before fetching where the feed says enough, after extraction otherwise; a filtered article is
done in the ledger (never fetched again, never output) and counted by reason."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from scrapy.settings import Settings

from crawler.core.filters import (
    AGE,
    LANGUAGE,
    URL,
    ArticleFilter,
    FilterError,
    UrlRule,
    read_list,
    text_language,
)
from crawler.core.keys import RedisKeys
from crawler.ledger import Entry, LedgerConfig, RedisHarvestState, SqliteHarvestState
from crawler.newsroom import BASE_DATE, Newsroom, NewsroomServer
from crawler.newsroom.regional import ARCHIVE, FEED_SITE, FEED_UNDATED, RegionalSites
from crawler.newsroom.textgen import GermanTextGenerator, TextGenerator
from crawler.spiders.feeds import load_feed_sources
from newsharvest_bench.crawlrun import (
    CRAWL_TIMEOUT_SECONDS,
    crawl_command,
    crawl_env,
    stats_from_log,
)
from settings.check import check_settings
from tests.support.commands import ROOT

NOW = datetime(2026, 11, 1, 12, tzinfo=UTC)
DAY = timedelta(days=1)
# The simulated "now" of the crawls below: six hours after the fixture's BASE_DATE.
CLOCK_START = (BASE_DATE + timedelta(hours=6)).isoformat()
MAX_AGE_DAYS = 2


# --- the rules ------------------------------------------------------------------------------


def test_language_rule_keeps_listed_languages_and_never_filters_the_unknown() -> None:
    rule = ArticleFilter(frozenset({"de", "en"}))
    now = NOW.timestamp()
    assert rule.before_fetch("http://a.test/1", "de-DE", None, now) is None
    assert rule.before_fetch("http://a.test/1", "EN", None, now) is None
    assert rule.before_fetch("http://a.test/1", "fr", None, now) == LANGUAGE
    assert rule.before_fetch("http://a.test/1", None, None, now) is None  # no hint: fetch it
    assert ArticleFilter().before_fetch("http://a.test/1", "fr", None, now) is None


def test_age_rule_uses_the_given_clock_and_never_filters_the_undated() -> None:
    rule = ArticleFilter(max_age_days=2)
    now = NOW.timestamp()
    assert rule.after_extraction(None, NOW - 1.9 * DAY, now) is None
    assert rule.after_extraction(None, NOW - 2.1 * DAY, now) == AGE
    assert rule.after_extraction(None, None, now) is None
    # The same article judged a week earlier is recent: "now" is the caller's, not the wall's.
    assert rule.after_extraction(None, NOW - 2.1 * DAY, (NOW - 7 * DAY).timestamp()) is None


def test_url_rule_includes_then_excludes_and_bad_patterns_are_errors() -> None:
    rule = UrlRule.of(include=["/politics/", r"/world/\d+"], exclude=["/video/"])
    assert rule.keeps("https://x.test/politics/a.html")
    assert rule.keeps("https://x.test/world/12")
    assert not rule.keeps("https://x.test/sport/a.html")
    assert not rule.keeps("https://x.test/politics/video/a.html")
    assert UrlRule.of(exclude=["/video/"]).keeps("https://x.test/sport/a.html")
    filtered = ArticleFilter().before_fetch("https://x.test/sport/a", None, None, 0.0, rule)
    assert filtered == URL
    with pytest.raises(FilterError, match="invalid URL pattern"):
        UrlRule.of(include=["(unclosed"])


def test_list_settings_read_json_or_commas_and_codes_are_checked() -> None:
    assert read_list('["en", "de"]') == ["en", "de"]
    assert read_list("en, de") == ["en", "de"]
    assert read_list(["de"]) == ["de"]
    assert read_list("") == []
    settings = Settings({"ARTICLE_LANGUAGES": '["de-AT"]', "ARTICLE_MAX_AGE_DAYS": "1.5"})
    rule = ArticleFilter.from_settings(settings)
    assert rule.languages == {"de"} and rule.max_age_days == 1.5
    with pytest.raises(FilterError):
        ArticleFilter.from_settings(Settings({"ARTICLE_LANGUAGES": '["german"]'}))


def test_text_language_trusts_the_words_over_the_declaration() -> None:
    german = " ".join(GermanTextGenerator(3).paragraph() for _ in range(3))
    english = " ".join(TextGenerator(3).story("local", 3))
    assert text_language(german, "en") == "de"  # a template's lang="en" on a German article
    assert text_language(english, None) == "en"
    assert text_language("東京 大阪", "ja") == "ja"  # no stop list: the declaration stands


@pytest.mark.parametrize(
    ("value", "problem"),
    [('["german"]', "ISO 639-1"), ('["de"', "expected a list"), ("-1", "at least 0")],
)
def test_settings_check_refuses_bad_filter_values(value: str, problem: str) -> None:
    name = "ARTICLE_MAX_AGE_DAYS" if value == "-1" else "ARTICLE_LANGUAGES"
    settings = Settings()
    settings.setmodule("settings.fixture", priority="project")
    settings.set(name, value, priority="cmdline")
    errors = check_settings(settings, environ={}).errors
    assert len(errors) == 1 and name in errors[0] and problem in errors[0], errors


# --- the feed list --------------------------------------------------------------------------


def test_feed_list_carries_include_and_exclude_patterns(tmp_path: Path) -> None:
    listing = tmp_path / "feeds.txt"
    listing.write_text(
        "http://a.test/rss include=/politics/ exclude=/video/ exclude=/live/  # main\n"
        "http://b.test/atom.xml\n"
    )
    first, second = load_feed_sources(str(listing))
    assert first.url == "http://a.test/rss" and len(first.rule.exclude) == 2
    assert first.rule.keeps("http://a.test/politics/1") and not first.rule.keeps("http://a.test/x")
    assert not second.rule
    # Joined by commas, a pattern keeps its own commas.
    joined = load_feed_sources(r"http://a.test/rss include=/\d{1,3}/,http://b.test/rss")
    assert [s.url for s in joined] == ["http://a.test/rss", "http://b.test/rss"]
    assert joined[0].rule.keeps("http://a.test/12/x")
    for bad in ("http://a.test/rss include=(", "http://a.test/rss only=/x/"):
        with pytest.raises(ValueError):
            load_feed_sources(bad)


def test_an_invalid_pattern_stops_scrapy_crawl_with_exit_status_2(tmp_path: Path) -> None:
    command = crawl_command(["http://a.test/rss include=(unclosed"], "http://127.0.0.1:9")
    env = crawl_env(tmp_path / "state")
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=CRAWL_TIMEOUT_SECONDS, check=False)  # fmt: skip
    assert result.returncode == 2, result.stderr[-2000:]
    assert "invalid URL pattern '(unclosed'" in result.stderr
    assert "Traceback" not in result.stderr


# --- the ledger: a filtered entry is done at once, on both backends ------------------------

LEDGER = LedgerConfig(seen_ttl=900.0, min_revision=45.0)
T0 = 1_700_000_000.0


def _ledgers(redis_url: str, prefix: str) -> list[object]:
    return [
        SqliteHarvestState(LEDGER, ":memory:", owner="w1/a"),
        RedisHarvestState(LEDGER, redis_url, RedisKeys(prefix), owner="w1/a"),
    ]


@pytest.mark.parametrize("backend", [0, 1], ids=["sqlite", "redis"])
def test_a_filtered_entry_is_done_never_pending_and_never_claimed_again(
    backend: int, redis_url: str, redis_prefix: str
) -> None:
    async def scenario() -> None:
        state = _ledgers(redis_url, redis_prefix)[backend]
        await state.open()
        try:
            kept, dropped = "http://a.test/kept", "http://a.test/old"
            first = await state.claim_entries(
                [Entry(kept, T0, {"x": 1}), Entry(dropped, T0, {"x": 2}, filtered=AGE)], T0
            )
            assert [(c.key, c.filtered) for c in first] == [(kept, None), (dropped, AGE)]
            assert await state.is_done(dropped, 1)
            assert not await state.is_done(kept, 1)
            # Nothing to recover but the kept claim; the next poll claims neither again.
            assert [c.key for c in await state.recover(T0 + 1, everything=True)] == [kept]
            again = [Entry(kept, T0, {}), Entry(dropped, T0, {}, filtered=AGE)]
            assert await state.claim_entries(again, T0 + 60) == []
            # A filtered article revised later is judged again as a new version.
            revised = await state.claim_entries([Entry(dropped, T0 + 600, {"x": 3})], T0 + 600)
            assert [(c.key, c.version, c.filtered) for c in revised] == [(dropped, 2, None)]
        finally:
            await state.close()

    asyncio.run(scenario())


# --- end to end: the simulator, with -s ARTICLE_LANGUAGES='["de"]' -s ARTICLE_MAX_AGE_DAYS=2 --


def _crawl(
    room: Newsroom, feeds: list[str], tmp_path: Path, *settings: str, run: int = 1
) -> tuple[list[dict], dict, list]:
    """A crawl's output, stats and the requests the simulator served; runs share the state."""
    output = tmp_path / f"articles-{run}.jsonl"
    with NewsroomServer(room, port=0) as server:
        command = crawl_command(feeds, server.proxy_url, [
            f"HARVEST_JOURNAL_PATH={output}", f"HARVEST_CLOCK_START={CLOCK_START}", *settings,
        ])  # fmt: skip
        result = subprocess.run(command, cwd=tmp_path, env=crawl_env(tmp_path / "state"),
                                capture_output=True, text=True, timeout=CRAWL_TIMEOUT_SECONDS,
                                check=False)  # fmt: skip
        requests = server.request_log
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    items = (
        [json.loads(line) for line in output.read_text().splitlines()] if output.exists() else []
    )
    return items, stats_from_log(result.stderr), requests


@pytest.fixture(scope="module")
def german_recent(tmp_path_factory: pytest.TempPathFactory) -> tuple:
    regional = RegionalSites()
    room = Newsroom(seed=1, extra_sites=[regional])
    feeds = room.feed_urls + regional.feed_urls
    tmp_path = tmp_path_factory.mktemp("filters")
    filters = ['ARTICLE_LANGUAGES=["de"]', f"ARTICLE_MAX_AGE_DAYS={MAX_AGE_DAYS}"]
    first = _crawl(room, feeds, tmp_path, *filters)
    second = _crawl(room, feeds, tmp_path, *filters, run=2)  # the same state
    return room, regional, first, second


def _cutoff() -> datetime:
    return datetime.fromisoformat(CLOCK_START) - MAX_AGE_DAYS * DAY


@pytest.mark.slow
def test_only_recent_german_articles_are_output_and_the_rest_counted_by_reason(
    german_recent: tuple,
) -> None:
    room, regional, (items, stats, requests), _ = german_recent
    expected = {a.url for a in regional.articles if a.language == "de" and a.published >= _cutoff()}
    assert expected and {item["url"] for item in items} == expected
    assert len(items) == len(expected)  # each once
    # Every publisher's feed declares its language: the English ones are never fetched.
    fetched = Counter(f"http://{r.host}{r.target}" for r in requests)
    assert not [page.url for page in room.pages.values() if fetched[page.url]]
    # Neither is a German article the feed dates too old, nor an archive sitemap's.
    too_old = [
        a.url for a in regional.articles
        if a.published < _cutoff() and a.listed != FEED_UNDATED
    ]  # fmt: skip
    assert too_old and not [url for url in too_old if fetched[url]]
    # The archive sitemaps are old by their <lastmod>: not even fetched, so their entries
    # are never seen; the feed's and the news sitemap's old entries are counted.
    assert not [url for url in fetched if "/sitemaps/archiv-" in url]
    listed_old = [a.url for a in regional.articles if a.url in too_old and a.listed != ARCHIVE]
    # What the feed could not rule out was fetched and then filtered: the English edition (its
    # words), the article listed undated (its page's date).
    after = {a.url for a in regional.articles if a.url not in expected and fetched[a.url]}
    english = {a.url for a in regional.articles if a.language == "en"}
    undated = {a.url for a in regional.articles if a.listed == FEED_UNDATED}
    assert after == english | undated
    assert stats["filtered/after_fetch"] == len(after)
    assert stats["filtered/before_fetch"] == len(room.pages) + len(listed_old)
    assert stats["filtered/language"] == len(room.pages) + len(english)
    assert stats["filtered/age"] == len(listed_old) + len(undated)
    assert stats[f"domain/{FEED_SITE}/filtered/age"] > 0
    print(f"output {len(items)}; requests {sum(fetched.values())} (of which article pages "
          f"{sum(fetched[a.url] for a in regional.articles)}); filtered before fetch "
          f"{stats['filtered/before_fetch']}, after {stats['filtered/after_fetch']}; by reason "
          f"language {stats['filtered/language']}, age {stats['filtered/age']}")  # fmt: skip


@pytest.mark.slow
def test_a_second_run_fetches_no_filtered_article_again(german_recent: tuple) -> None:
    _, regional, _, (items, stats, requests) = german_recent
    article_urls = {a.url for a in regional.articles}
    assert not [r for r in requests if f"http://{r.host}{r.target}" in article_urls]
    assert items == []
    assert not any(name.startswith("filtered/") for name in stats), stats


@pytest.mark.slow
def test_a_feeds_url_pattern_keeps_only_matching_links(tmp_path: Path) -> None:
    regional = RegionalSites()
    room = Newsroom(seed=1, extra_sites=[regional])
    feed = f"http://{FEED_SITE}/rss.xml include=/lokales/ exclude=artikel-1[0-9]"
    items, stats, requests = _crawl(room, [feed], tmp_path)
    wanted = {
        a.url for a in regional.on(FEED_SITE)
        if "/lokales/" in a.url and not re.search("artikel-1[0-9]", a.url)
    }  # fmt: skip
    assert 0 < len(wanted) < len(regional.on(FEED_SITE)) - 2
    assert {item["url"] for item in items} == wanted
    fetched = {f"http://{r.host}{r.target}" for r in requests}
    assert not [a.url for a in regional.on(FEED_SITE) if a.url not in wanted and a.url in fetched]
    assert stats["filtered/url"] == len(regional.on(FEED_SITE)) - len(wanted)
    assert stats[f"domain/{FEED_SITE}/filtered/url"] == stats["filtered/url"]
