"""End to end: the real `feeds` spider crawls the local news-site fixture through the pipeline."""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from crawler.newsroom import Newsroom, NewsroomServer
from newsharvest_bench.crawlrun import CRAWL_TIMEOUT_SECONDS, crawl_command, crawl_env
from tests.support.commands import run_crawl

SLOW_PUBLISHER_S = 0.05  # per response in the politeness test


@pytest.fixture(scope="module")
def crawl(tmp_path_factory: pytest.TempPathFactory) -> tuple[Newsroom, list[dict], str, list]:
    room = Newsroom(seed=1)
    output = tmp_path_factory.mktemp("crawl") / "articles.jsonl"
    result, requests = run_crawl(room, output)
    assert result.returncode == 0, result.stderr[-3000:]
    items = [json.loads(line) for line in output.read_text().splitlines() if line.strip()]
    return room, items, result.stderr, requests


def test_each_page_is_requested_once_and_robots_txt_is_obeyed(crawl) -> None:
    room, _, _, requests = crawl
    fetched = Counter(f"http://{record.host}{record.target}" for record in requests)
    for page in room.pages.values():
        assert fetched[page.url] == 1, (page.url, fetched[page.url])
    assert all(fetched[f"http://{domain}/robots.txt"] == 1 for domain in room.domains)
    assert not [record for record in requests if record.target.startswith("/private/")]
    # Feed links carrying tracking parameters were fetched under their canonical URL.
    assert not [record for record in requests if "utm_" in record.target]


def test_every_true_article_is_output_once_with_its_true_title(crawl) -> None:
    room, items, _, _ = crawl
    by_url = Counter(item["url"] for item in items)
    assert not [url for url, count in by_url.items() if count > 1], "an article was output twice"
    output = {item["url"]: item for item in items}
    missing = [page.url for page in room.articles() if page.url not in output]
    assert not missing, f"true articles not output: {missing}"
    wrong_titles = {
        page.url: (output[page.url]["title"], page.title)
        for page in room.articles()
        if output[page.url]["title"] != page.title
    }
    assert not wrong_titles


def test_no_non_article_page_is_output(crawl) -> None:
    room, items, log, _ = crawl
    output_urls = {item["url"] for item in items}
    leaked = [page.url for page in room.non_articles() if page.url in output_urls]
    assert not leaked, f"non-article pages output as articles: {leaked}"
    # Each one was counted as NULL and logged with its reason.
    for page in room.non_articles():
        assert "NULL (" in log and page.url in log


def test_items_carry_the_contract_fields_and_the_publisher_domain(crawl) -> None:
    room, items, _, _ = crawl
    fields = {
        "url", "canonical_url", "domain", "feed_url", "title", "published", "authors",
        "language", "text", "blocks", "extraction_method", "content_hash", "duplicate_of",
        "fetched_at", "notices_removed",
    }  # fmt: skip
    pages = room.pages
    for item in items:
        assert fields <= set(item), fields - set(item)
        assert "html" not in item and "feed_entry" not in item
        page = pages[item["url"]]
        assert item["domain"] == page.domain
        running = [block["text"] for block in item["blocks"] if block["kind"] != "caption"]
        assert item["text"] == "\n".join(running)  # image captions stay in blocks only
        assert item["feed_url"] in room.feed_urls
    # duplicate_of names another article of the crawl (tests/test_dedup.py checks which).
    canonical = {item["canonical_url"] for item in items}
    flagged = [item for item in items if item["duplicate_of"] is not None]
    assert all(item["duplicate_of"] in canonical - {item["canonical_url"]} for item in flagged)


def test_extracted_text_recalls_the_true_body(crawl) -> None:
    """A skeleton-level quality floor: most of each true paragraph is in the output."""
    room, items, _, _ = crawl
    output = {item["url"]: item["text"] for item in items}
    recalls = []
    for page in room.articles():
        true_blocks = [block.text for block in page.blocks]
        found = sum(1 for text in true_blocks if text in output[page.url])
        recalls.append(found / len(true_blocks))
    assert sum(recalls) / len(recalls) >= 0.9


def test_the_crawl_fills_the_search_index_once_per_article_even_when_repeated(
    crawl, tmp_path_factory: pytest.TempPathFactory
) -> None:
    import sqlite3

    room, items, _, _ = crawl
    directory = tmp_path_factory.mktemp("recrawl")
    for _ in range(2):  # the same site crawled twice into one index: updates, never duplicates
        # HARVEST_STATE=memory: no harvest ledger across runs, so the second run fetches and
        # indexes every article again.
        result, _ = run_crawl(room, directory / "articles.jsonl", "HARVEST_STATE=memory")
        assert result.returncode == 0, result.stderr[-3000:]
    connection = sqlite3.connect(directory / "index.sqlite3")
    indexed = connection.execute("SELECT canonical_url, title, versions FROM articles").fetchall()
    connection.close()
    # Every article of the crawl, except the syndicated copies the near-duplicate stage flagged
    # (sinks skip them; which one of a pair is the copy depends on fetch order, so the last
    # run's own output says).
    recrawled = [
        json.loads(line) for line in (directory / "articles.jsonl").read_text().splitlines()
    ]
    assert {item["canonical_url"] for item in recrawled} == {
        item["canonical_url"] for item in items
    }
    expected = {
        item["canonical_url"]: item["title"] for item in recrawled if not item["duplicate_of"]
    }
    assert len(expected) < len(recrawled)
    assert {url: title for url, title, _ in indexed} == expected
    assert {versions for _, _, versions in indexed} == {1}
    assert "sink/sqlite/written" in result.stderr  # the sink's counters are in the crawl stats


def test_a_second_run_with_the_same_state_costs_only_304s(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    room = Newsroom(seed=1)
    directory = tmp_path_factory.mktemp("rerun")
    first, _ = run_crawl(room, directory / "first.jsonl")
    second, requests = run_crawl(room, directory / "second.jsonl")
    assert first.returncode == 0 and second.returncode == 0, second.stderr[-3000:]
    assert (directory / "first.jsonl").read_text().strip()
    assert (directory / "second.jsonl").read_text().strip() == ""  # nothing new to output
    feeds = {url.removeprefix("http://") for url in room.feed_urls}
    polls = [r for r in requests if f"{r.host}{r.target}" in feeds]
    assert len(polls) == len(feeds) and all(r.conditional and r.status == 304 for r in polls)
    assert not [r for r in requests if f"http://{r.host}{r.target}" in room.pages]


def test_in_container_notices_never_reach_the_output(crawl) -> None:
    """The notice stage (embedded store here) removes what the extractor cannot avoid."""
    room, items, log, _ = crawl
    for item in items:
        page = room.pages[item["url"]]
        assert not [n for n in page.notices if n in item["text"]], item["url"]
        # Every block it removed was one of the page's notices (the extractor may have left
        # some out already): a story paragraph taken for a notice would count more.
        assert item["notices_removed"] <= len(page.notices), item["url"]
    removed = {item["domain"] for item in items if item["notices_removed"]}
    assert {"metroledger.test", "coastalpost.test", "wirewatch.test"} <= removed
    notice_only = [page.url for page in room.non_articles() if page.notices]
    # A notice-only page that declares a video is NULL at extraction already (extractors.evidence);
    # any other is the notice stage's to catch.
    assert notice_only and all(
        f"NULL (only_notices): {url}" in log or f"NULL (video): {url}" in log for url in notice_only
    )


def test_each_syndicated_story_is_output_unflagged_once(crawl) -> None:
    """The default crawl (embedded index, threshold 0.8) meets copies and originals in whatever
    order the fetches finish: of a syndicated pair, exactly one names the other (or, when the copy
    was output first, the original supersedes it); clear copies
    (Jaccard >= 0.85 on the extracted text) always do, far ones (< 0.7) never."""
    from pipelines.fingerprints import true_jaccard

    room, items, _, _ = crawl
    by_url = {item["url"]: item for item in items}
    pairs = [(page.url, page.duplicate_of) for page in room.articles() if page.duplicate_of]
    related = {frozenset(pair) for pair in pairs}
    for item in items:
        if item["duplicate_of"]:
            assert frozenset((item["url"], item["duplicate_of"])) in related, item["url"]
    for pair in pairs:
        a, b = (by_url[url] for url in pair)
        similarity = true_jaccard(a["text"], b["text"])
        flags = {a["duplicate_of"], b["duplicate_of"]} - {None}
        # A copy output before its original (first by order key) is named in its supersedes.
        flags |= {x["canonical_url"] for x, y in ((a, b), (b, a))
                  if y["canonical_url"] in (x.get("supersedes") or ())}  # fmt: skip
        if similarity >= 0.85:
            assert flags in ({a["canonical_url"]}, {b["canonical_url"]}), pair
        elif similarity < 0.7:
            assert not flags, pair
        else:
            assert len(flags) <= 1, pair


def test_the_per_domain_limit_holds_with_no_download_delay(tmp_path: Path) -> None:
    """Scrapy alone starts every queued request of a domain at once when DOWNLOAD_DELAY is 0;
    our downloader (crawler/downloader.py) keeps CONCURRENT_REQUESTS_PER_DOMAIN."""
    room = Newsroom(seed=1)
    # Slow answers keep requests in flight long enough to overlap if the limit leaks.
    with NewsroomServer(room, port=0, delay=SLOW_PUBLISHER_S) as server:
        index = tmp_path / "index.sqlite3"
        settings = ("DOWNLOAD_DELAY=0", "CONCURRENT_REQUESTS_PER_DOMAIN=1",
                    "AUTOTHROTTLE_ENABLED=False", f"SINK_SQLITE_PATH={index}")  # fmt: skip
        command = crawl_command(room.feed_urls, server.proxy_url, settings)
        result = subprocess.run(
            command, cwd=tmp_path, env=crawl_env(tmp_path / "state"), capture_output=True,
            text=True, timeout=CRAWL_TIMEOUT_SECONDS, check=False,
        )  # fmt: skip
        peaks = server.peak_in_flight
    assert result.returncode == 0, result.stderr[-3000:]
    assert set(peaks) >= set(room.domains)
    assert max(peaks.values()) == 1, peaks
