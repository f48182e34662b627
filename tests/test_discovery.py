"""Sitemap discovery: a homepage without feeds is harvested through the sitemaps its robots.txt
names, or those at the usual locations; indexes are followed within bounds, news sitemaps first,
old sitemaps skipped with ARTICLE_MAX_AGE_DAYS; compressed sitemaps are read within the size
limit."""

from __future__ import annotations

import gzip
import json
import subprocess
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from crawler.discovery import (
    MAX_SITEMAP_DEPTH,
    MAX_SITEMAPS_PER_INDEX,
    Discovery,
    gunzip_feed,
    news_first,
)
from crawler.feedparse import FORMAT_SITEMAP_INDEX, FeedError, parse_feed
from crawler.newsroom import BASE_DATE, Newsroom, NewsroomServer
from crawler.newsroom.regional import ARCHIVE, SITEMAP_SITE, RegionalSites, news_sitemap
from crawler.newsroom.room import not_found, response
from newsharvest_bench.crawlrun import (
    CRAWL_TIMEOUT_SECONDS,
    crawl_command,
    crawl_env,
    stats_from_log,
)

# A gzip bomb must be refused in well under this (a hang guard, not a benchmark).
BOMB_LIMIT_SECONDS = 2.0


# --- bounded reading ----------------------------------------------------------------------


def test_gzip_sitemaps_are_read_and_bombs_stop_at_the_size_limit() -> None:
    body = b'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
    body += b"<url><loc>http://a.test/1</loc></url></urlset>"
    assert gunzip_feed(body, 1024) == body  # not compressed: as it is
    assert gunzip_feed(gzip.compress(body), 1024) == body
    bomb = gzip.compress(b"\0" * (64 * 1024 * 1024))  # 64 MiB of zeros in ~64 KiB
    started = time.perf_counter()
    with pytest.raises(FeedError) as refused:
        gunzip_feed(bomb, 1024 * 1024)
    assert refused.value.reason == "too_large"
    assert time.perf_counter() - started < BOMB_LIMIT_SECONDS
    with pytest.raises(FeedError) as broken:
        gunzip_feed(gzip.compress(body)[:30], 1024)
    assert broken.value.reason == "bad_gzip"


# --- what feeds say ------------------------------------------------------------------------


def test_feeds_and_news_sitemaps_declare_their_language() -> None:
    rss = parse_feed(
        b"<rss version='2.0'><channel><language>de-AT</language><item>"
        b"<link>http://a.test/1</link></item></channel></rss>",
        "http://a.test/rss",
    )
    assert rss.language == "de" and rss.entries[0].language == "de"
    atom = parse_feed(
        b"<feed xmlns='http://www.w3.org/2005/Atom' xml:lang='en'><entry xml:lang='fr'>"
        b"<link href='http://a.test/1'/></entry><entry><link href='http://a.test/2'/></entry>"
        b"</feed>",
        "http://a.test/atom",
    )
    assert [entry.language for entry in atom.entries] == ["fr", "en"]
    json_feed = parse_feed(
        json.dumps({"language": "nl", "items": [{"url": "http://a.test/1"}]}).encode(),
        "http://a.test/feed.json",
    )
    assert json_feed.entries[0].language == "nl"
    regional = RegionalSites()
    sitemap = parse_feed(news_sitemap(regional.on(SITEMAP_SITE)[:2]), "http://x.test/s.xml")
    assert [entry.language for entry in sitemap.entries] == ["de", "de"]
    assert sitemap.entries[0].published == regional.on(SITEMAP_SITE)[0].published


def test_a_sitemap_index_gives_each_sitemaps_lastmod() -> None:
    index = parse_feed(
        b"<sitemapindex xmlns='http://www.sitemaps.org/schemas/sitemap/0.9'>"
        b"<sitemap><loc>/old.xml</loc><lastmod>2006-12-31</lastmod></sitemap>"
        b"<sitemap><loc>/news.xml</loc></sitemap></sitemapindex>",
        "http://a.test/index.xml",
    )
    assert index.format == FORMAT_SITEMAP_INDEX
    assert index.subfeeds == ["http://a.test/old.xml", "http://a.test/news.xml"]
    assert index.subfeed_dates == {"http://a.test/old.xml": datetime(2006, 12, 31, tzinfo=UTC)}


# --- following indexes, within bounds ------------------------------------------------------


class _Stats:
    def __init__(self) -> None:
        self.values: Counter[str] = Counter()

    def inc_value(self, key: str, count: int = 1) -> None:
        self.values[key] += count


class _Spider:
    """What Discovery reads of the spider: its stats."""

    def __init__(self) -> None:
        self.crawler = type("Crawler", (), {"stats": _Stats()})()
        self.feed_urls: list[str] = []


def _index(urls: list[str], dates: dict[str, datetime] | None = None) -> Any:
    entries = "".join(
        f"<sitemap><loc>{url}</loc>"
        + (f"<lastmod>{dates[url].isoformat()}</lastmod>" if dates and url in dates else "")
        + "</sitemap>"
        for url in urls
    )
    body = f"<sitemapindex xmlns='http://www.sitemaps.org/schemas/sitemap/0.9'>{entries}"
    return parse_feed((body + "</sitemapindex>").encode(), "http://a.test/index.xml")


def test_indexes_are_followed_news_first_old_skipped_and_bounded() -> None:
    spider = _Spider()
    discovery = Discovery(spider, 1024)  # type: ignore[arg-type]
    now = datetime(2026, 11, 1, tzinfo=UTC)
    urls = [f"http://a.test/archive-{n}.xml" for n in range(MAX_SITEMAPS_PER_INDEX + 5)]
    urls += ["http://a.test/old-news.xml", "http://a.test/news.xml"]
    dates = {url: now - timedelta(days=400) for url in urls[:3]}
    dates["http://a.test/old-news.xml"] = now - timedelta(days=30)
    cutoff = (now - timedelta(days=2)).timestamp()
    chosen = discovery.wanted_subfeeds("http://a.test/index.xml", _index(urls, dates), cutoff)
    assert chosen[0] == "http://a.test/news.xml"  # news first; the old news sitemap skipped
    assert "http://a.test/old-news.xml" not in chosen
    assert not set(chosen) & set(urls[:3])
    assert len(chosen) == MAX_SITEMAPS_PER_INDEX
    stats = spider.crawler.stats.values
    assert stats["discovery/sitemaps/too_old"] == 4
    assert stats["discovery/sitemaps/over_limit"] == len(urls) - 4 - MAX_SITEMAPS_PER_INDEX
    # An index found at the deepest level lists nothing more to follow.
    deepest = "http://a.test/deep.xml"
    discovery.depth[deepest] = MAX_SITEMAP_DEPTH
    assert discovery.wanted_subfeeds(deepest, _index(["http://a.test/x.xml"]), None) == []
    assert stats["discovery/sitemaps/too_deep"] == 1
    # Without an age limit every dated sitemap counts.
    assert len(discovery.wanted_subfeeds("http://a.test/i2", _index(urls[:3], dates), None)) == 3


def test_news_first_keeps_the_order_within_each_group() -> None:
    urls = ["http://a.test/s1.xml", "http://a.test/news-2.xml", "http://a.test/s2.xml",
            "http://a.test/google-news.xml"]  # fmt: skip
    assert news_first(urls) == [urls[1], urls[3], urls[0], urls[2]]


# --- end to end ------------------------------------------------------------------------------


def _crawl(room: Newsroom, feeds: list[str], tmp_path: Path, *settings: str) -> tuple:
    output = tmp_path / "articles.jsonl"
    with NewsroomServer(room, port=0) as server:
        command = crawl_command(feeds, server.proxy_url, [f"HARVEST_JOURNAL_PATH={output}",
                                                          *settings])  # fmt: skip
        result = subprocess.run(command, cwd=tmp_path, env=crawl_env(tmp_path / "state"),
                                capture_output=True, text=True, timeout=CRAWL_TIMEOUT_SECONDS,
                                check=False)  # fmt: skip
        requests = server.request_log
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    lines = output.read_text().splitlines() if output.exists() else []
    fetched = Counter(f"http://{r.host}{r.target}" for r in requests)
    return [json.loads(line) for line in lines], stats_from_log(result.stderr), fetched


@pytest.mark.slow
def test_a_homepage_without_feeds_is_harvested_through_its_robots_txt_sitemaps(
    tmp_path: Path,
) -> None:
    regional = RegionalSites()
    room = Newsroom(seed=1, extra_sites=[regional])
    items, stats, fetched = _crawl(room, [f"http://{SITEMAP_SITE}/"], tmp_path)
    expected = {article.url for article in regional.on(SITEMAP_SITE)}  # news and archive
    assert {item["url"] for item in items} == expected and len(items) == len(expected)
    by_url = {item["url"]: item for item in items}
    assert all(by_url[a.url]["title"] == a.title for a in regional.on(SITEMAP_SITE))
    assert stats["discovery/sitemaps/robots"] == 1
    assert fetched[f"http://{SITEMAP_SITE}/sitemap_index.xml"] == 1
    assert all(fetched[url] == 1 for url, _ in regional.sitemaps())
    assert not [url for url in fetched if url.endswith(("/sitemap.xml", "/news-sitemap.xml"))]


@pytest.mark.slow
def test_with_a_max_age_an_archive_sitemap_is_never_fetched(tmp_path: Path) -> None:
    regional = RegionalSites()
    room = Newsroom(seed=1, extra_sites=[regional])
    start = (BASE_DATE + timedelta(hours=6)).isoformat()
    settings = ("ARTICLE_MAX_AGE_DAYS=2", f"HARVEST_CLOCK_START={start}")
    items, stats, fetched = _crawl(room, [f"http://{SITEMAP_SITE}/"], tmp_path, *settings)
    cutoff = BASE_DATE + timedelta(hours=6) - timedelta(days=2)
    recent = {a.url for a in regional.on(SITEMAP_SITE) if a.published >= cutoff}
    assert recent and {item["url"] for item in items} == recent
    assert stats["discovery/sitemaps/too_old"] == len(regional.sitemaps()) - 1
    archive = [a.url for a in regional.listed(ARCHIVE)]
    assert not [url for url in fetched if "archiv" in url], "the archive was fetched"
    assert not [url for url in archive if fetched[url]]


class _ProbedSite:
    """A site with neither feed links nor a Sitemap: line; a gzip-compressed /sitemap.xml."""

    name = "probed"
    domains = ("probed.test",)

    def __init__(self) -> None:
        self.articles = {
            f"http://probed.test/a/{n}.html": f"Harbour story number {n} goes on" for n in range(3)
        }

    @property
    def feed_urls(self) -> list[str]:
        return ["http://probed.test/"]

    def render(self, domain: str, target: str, origin: str) -> Any:
        url = f"http://{domain}{target}"
        if target == "/robots.txt":
            return response(200, "text/plain", b"User-agent: *\nDisallow:\n", BASE_DATE)
        if target == "/sitemap.xml":
            entries = "".join(f"<url><loc>{u}</loc></url>" for u in self.articles)
            xml = f"<urlset xmlns='http://www.sitemaps.org/schemas/sitemap/0.9'>{entries}</urlset>"
            return response(200, "application/x-gzip", gzip.compress(xml.encode()), BASE_DATE)
        if target == "/":
            return response(200, "text/html", b"<html><body><p>Home</p></body></html>", BASE_DATE)
        if url in self.articles:
            title = self.articles[url]
            text = " ".join([f"The harbour board met again on the matter of {title}."] * 12)
            body = f"<html lang='en'><head><title>{title}</title></head><body><article>"
            body += f"<h1>{title}</h1>" + f"<p>{text}</p>" * 4 + "</article></body></html>"
            return response(200, "text/html; charset=utf-8", body.encode(), BASE_DATE)
        return not_found()


@pytest.mark.slow
def test_without_a_robots_sitemap_the_usual_locations_are_probed(tmp_path: Path) -> None:
    site = _ProbedSite()
    room = Newsroom(seed=1, extra_sites=[site])
    items, stats, fetched = _crawl(room, site.feed_urls, tmp_path)
    assert {item["url"] for item in items} == set(site.articles)
    assert fetched["http://probed.test/sitemap.xml"] == 1  # probed, and read as the feed
    assert stats["discovery/sitemaps/probed"] == 1
    assert stats["discovery/probe_misses"] >= 1
