"""Hostile input end to end: the real spider crawls the five designed publishers together with
`hostile.test`, whose feeds and pages are what the open web sends (crawler/newsroom/
hostile.py). For every case: a log line with the URL and the reason, a per-domain counter, and
the crawl going on (every other article still output)."""

from __future__ import annotations

import json
import re
import sqlite3
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
import redis
from psycopg import sql

from crawler.cli.extract import EXIT_REFUSED, EXIT_UNREADABLE
from crawler.core.keys import RedisKeys
from crawler.core.rejected import PIPELINE_REJECTED_FILE
from crawler.newsroom import Newsroom, NewsroomServer, RequestRecord
from newsharvest_bench.crawlrun import (
    CrawlRun,
    crawl_command,
    crawl_env,
    read_jsonl,
    run_measured,
    run_to_end,
    stats_from_log,
)
from newsharvest_bench.hostile import (
    ADDRESS,
    BIDI_AUTHOR,
    CANARY_PATH,
    HOSTILE_DOMAIN,
    HUGE_FEED_ENTRIES,
    LOCAL_NAME,
    NOT_HTTP,
    OFFSITE_DOMAIN,
    RAISING_STAGE,
    RAISING_STAGE_ORDER,
    REPLACEMENT_CHARACTER,
    SSRF_LINKS,
    XXE_PROBE_PATH,
    HostileSite,
    with_half_emoji,
)
from settings import base
from tests.support.commands import newsharvest
from tests.support.loopback import LoopbackServer, page, redirect

FEED_MAX_ENTRIES = 50  # the crawl reads this many of the 100,000-entry feed
DOWNLOAD_TIMEOUT_S = 4  # the slow pages hang for minutes; the test gives up after this (the
# size-limited bodies must reach their limit before it, also on a loaded CI machine)
EXTRACT_TIMEOUT_S = 2  # the page whose extraction hangs is given up on after this
HOSTILE_SETTINGS = (
    f"DOWNLOAD_TIMEOUT={DOWNLOAD_TIMEOUT_S}",
    f"FEED_MAX_ENTRIES={FEED_MAX_ENTRIES}",
    # Extraction isolation: this worker function hangs or segfaults on the two extraction cases.
    "EXTRACT_FUNCTION=newsharvest_bench.faulty.faulty_extract_page",
    f"EXTRACT_TIMEOUT_SECONDS={EXTRACT_TIMEOUT_S}",
    # A stage that raises on the poison article, every time; one try is all this run has (the
    # bound across runs: tests/test_harvest_e2e.py).
    "ITEM_PIPELINES=" + json.dumps({**base.ITEM_PIPELINES, RAISING_STAGE: RAISING_STAGE_ORDER}),
    "HARVEST_MAX_ATTEMPTS=1",
)

# What the crawler must report for each page case: an error counter or a NULL reason.
PAGE_OUTCOMES = {
    "page_gzip_bomb": "errors/decompression_bomb",
    "page_gzip_nested_bomb": "errors/decompression_bomb",
    "page_brotli_bomb": "errors/decompression_bomb",
    "page_zstd_bomb": "errors/decompression_bomb",
    "page_corrupt_gzip": "errors/bad_content_encoding",
    "page_huge_declared": "errors/too_large",
    "page_huge_chunked": "errors/too_large",
    "page_truncated": "errors/data_loss",
    "page_slow_body": "errors/timeout",
    "page_slow_headers": "errors/timeout",
    "page_binary_png": "null/not_html",
    "page_binary_gzip_file": "null/not_html",
    "page_empty": "null/empty_document",
    "page_redirect_loop": "errors/redirect_loop",
    "page_redirect_self": "errors/redirect_loop",
    "page_redirect_chain": "errors/too_many_redirects",
    "page_redirect_loopback": "errors/refused_address",
    "page_redirect_metadata": "errors/refused_address",
    "page_redirect_file": "errors/refused_scheme",
    "page_http_403": "errors/http_403",
    "page_http_404": "errors/http_404",
    "page_http_410": "errors/http_410",
    "page_http_429": "errors/http_429",
    "page_http_500": "errors/http_500",
    "page_http_503": "errors/http_503",
    "page_extraction_hang": "null/timeout",
    "page_extraction_crash": "null/worker_crashed",
}
# Feeds that are broken but readable: what the parser had to repair.
FEED_REPAIRS = {
    "feed_bare_ampersand": {"entities_repaired"},
    "feed_undeclared_entities": {"entities_repaired"},
    "feed_wrong_encoding": {"encoding_mislabelled"},
    "feed_billion_laughs": {"dtd_removed"},
    "feed_quadratic_blowup": {"dtd_removed"},
    "feed_xxe": {"dtd_removed"},
    "feed_surrogate_references": {"entities_repaired"},
}
# Feeds whose listed articles must all come out (the poison feed's: all but the poison).
RECOVERED_FEEDS = (*FEED_REPAIRS, "feed_sitemap", "feed_html_autodiscovery", "feed_ssrf_links",
                   "feed_json_lone_surrogates", "feed_poison_item")  # fmt: skip
# How the SSRF feed's links must end: refused by the network policy (counted against the feed's
# domain), or skipped by the feed parser as not http(s).
SSRF_OUTCOMES = {ADDRESS: "errors/refused_address", LOCAL_NAME: "errors/refused_host",
                 NOT_HTTP: "feeds/entries_skipped"}  # fmt: skip
FEED_FAILURES = {"feed_oversized": "errors/too_large"}  # feeds that cannot be read at all
STAGE_FAILURES = {"feed_poison_item": "errors/rejected"}  # an article every try fails on


@dataclass
class HostileCrawl:
    room: Newsroom
    site: HostileSite
    run: CrawlRun
    requests: list[RequestRecord]
    state: Path  # the crawl's STATE_DIR

    @property
    def output(self) -> dict[str, dict]:
        return {item["url"]: item for item in self.run.items}

    def counter(self, name: str, domain: str = HOSTILE_DOMAIN) -> int:
        return self.run.stats.get(f"domain/{domain}/{name}", 0)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> HostileCrawl:
    site = HostileSite(seed=1)
    room = Newsroom(seed=1, extra_sites=[site])
    output = tmp_path_factory.mktemp("hostile") / "articles.jsonl"
    with NewsroomServer(room, port=0) as server:
        run = run_measured(
            room.feed_urls + site.feed_urls,
            output,
            HOSTILE_SETTINGS,
            proxy_url=server.proxy_url,
        )
    assert run.returncode == 0, run.log[-3000:]
    return HostileCrawl(room, site, run, server.request_log, output.parent / "state")


# --- the crawl goes on -------------------------------------------------------------------------


def test_the_crawl_finishes_and_outputs_every_designed_article(hostile: HostileCrawl) -> None:
    assert "'finish_reason': 'finished'" in hostile.run.log
    assert "Spider error processing" not in hostile.run.log, "a callback raised"
    missing = [page.url for page in hostile.room.articles() if page.url not in hostile.output]
    assert not missing, f"hostile.test cost other domains their articles: {missing}"


def test_no_request_ever_left_the_test_domains(hostile: HostileCrawl) -> None:
    """No loopback, private, link-local, metadata or XXE request reached the fixture, whether
    through the proxy or directly (an external entity would connect directly)."""
    strays = [r for r in hostile.requests if not r.host.endswith(".test")]
    assert not strays
    probes = [r for r in hostile.requests if r.target.startswith((CANARY_PATH, XXE_PROBE_PATH))]
    assert not probes


# --- feeds ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", RECOVERED_FEEDS)
def test_articles_of_broken_feeds_are_output(hostile: HostileCrawl, case: str) -> None:
    site = hostile.site
    urls = site.feed_articles[case]
    if case == "feed_html_autodiscovery":  # the page's own links are not entries; its feed's are
        urls = site.discovered_feed_articles
    for url in urls:
        item = next((i for u, i in hostile.output.items() if u.split("?")[0] == url), None)
        assert item is not None, f"{case}: {url} not output"
        assert item["title"] == site.articles[url].title
        assert item["text"] == site.articles[url].text


@pytest.mark.parametrize("case", sorted(FEED_REPAIRS))
def test_broken_feeds_are_logged_and_counted_with_their_repairs(
    hostile: HostileCrawl, case: str
) -> None:
    url = hostile.site.cases[case].url
    line = next((line for line in hostile.run.log.splitlines() if f"feed {url} is broken" in line),
                None)  # fmt: skip
    assert line is not None, f"no log line for {url}"
    for repair in FEED_REPAIRS[case]:
        assert repair in line
        assert hostile.counter(f"feeds/repaired/{repair}") >= 1


def test_an_html_page_given_as_a_feed_is_counted_and_its_advertised_feed_followed(
    hostile: HostileCrawl,
) -> None:
    url = hostile.site.cases["feed_html_autodiscovery"].url
    assert f"not a usable feed: {url} (html_not_feed" in hostile.run.log
    assert hostile.counter("feeds/errors/html_not_feed") == 1
    served = {r.target for r in hostile.requests if r.host == HOSTILE_DOMAIN}
    assert "/feeds/discovered.xml" in served


def test_a_sitemap_where_a_feed_was_expected_is_read_as_one(hostile: HostileCrawl) -> None:
    assert hostile.run.stats.get("feeds/format/sitemap") == 1


def test_xxe_reads_no_file_and_fetches_nothing(hostile: HostileCrawl) -> None:
    assert not [r for r in hostile.requests if XXE_PROBE_PATH in r.target]
    for item in hostile.run.items:
        for field in ("title", "text", "description"):
            assert "root:" not in (item.get(field) or "")


def test_entity_bombs_expand_nothing(hostile: HostileCrawl) -> None:
    for case in ("feed_billion_laughs", "feed_quadratic_blowup", "feed_xxe"):
        for url in hostile.site.feed_articles[case]:
            description = hostile.output[url]["description"] or ""
            assert len(description) < 10_000, f"{case}: an entity was expanded"


def test_a_100k_entry_feed_costs_feed_max_entries_requests(hostile: HostileCrawl) -> None:
    url = hostile.site.cases["feed_100k_entries"].url
    fetched = [r for r in hostile.requests if r.target.startswith("/huge/")]
    assert len(fetched) == FEED_MAX_ENTRIES
    assert (
        f"feed {url} has {HUGE_FEED_ENTRIES} entries; read the first {FEED_MAX_ENTRIES}"
        in hostile.run.log
    )
    assert hostile.counter("feeds/truncated") == 1


def test_a_feed_over_feed_max_bytes_is_cut_and_counted(hostile: HostileCrawl) -> None:
    url = hostile.site.cases["feed_oversized"].url
    assert f"fetch failed: {url} (too_large:" in hostile.run.log
    assert hostile.counter("feeds/errors/too_large") == 1


def test_ssrf_feed_links_are_refused_logged_and_counted(hostile: HostileCrawl) -> None:
    log = hostile.run.log
    refused = [line for line in log.splitlines() if "fetch failed:" in line and "(refused_" in line]
    policy_refused = [kind for kind, _ in SSRF_LINKS if kind != NOT_HTTP]
    redirects_refused = sum(1 for o in PAGE_OUTCOMES.values() if o.startswith("errors/refused_"))
    assert len(refused) == len(policy_refused) + redirects_refused
    assert "fetch failed: http://169.254.169.254/latest/meta-data/ (refused_address:" in log
    assert "fetch failed: http://redis:6379/ (refused_host:" in log
    skipped = sum(1 for kind, _ in SSRF_LINKS if kind == NOT_HTTP)
    assert hostile.counter("feeds/entries_skipped") == skipped


# --- pages ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", sorted(PAGE_OUTCOMES))
def test_hostile_page_is_logged_with_its_url_and_reason(hostile: HostileCrawl, case: str) -> None:
    url = hostile.site.cases[case].url
    kind, reason = PAGE_OUTCOMES[case].split("/", 1)
    expected = f"fetch failed: {url} ({reason}:" if kind == "errors" else f"NULL ({reason}): {url}"
    assert expected in hostile.run.log
    assert url not in hostile.output


def test_hostile_cases_are_counted_per_domain_by_reason(hostile: HostileCrawl) -> None:
    expected = Counter(PAGE_OUTCOMES.values())
    expected.update(FEED_FAILURES.values())
    expected.update(STAGE_FAILURES.values())
    expected.update(SSRF_OUTCOMES[kind] for kind, _ in SSRF_LINKS)
    if deep_null := _null_reason(hostile, hostile.site.deep_article):  # see the test below
        expected[f"null/{deep_null}"] += 1
    for counter, count in expected.items():
        assert hostile.counter(counter) == count, counter
    for total in ("errors", "null"):
        assert hostile.counter(total) == sum(
            count for name, count in expected.items() if name.startswith(total + "/")
        )


@pytest.mark.parametrize("case", sorted(HostileSite().charset_articles))
def test_mislabelled_and_missing_charsets_decode_to_the_true_text(
    hostile: HostileCrawl, case: str
) -> None:
    url = hostile.site.charset_articles[case]
    assert url in hostile.output, f"{url} not output"
    assert hostile.output[url]["text"] == hostile.site.articles[url].text
    assert hostile.output[url]["title"] == hostile.site.articles[url].title


def test_ten_thousand_deep_nesting_is_bounded_null_or_article(hostile: HostileCrawl) -> None:
    """libxml2 stops nesting at depth 256; what is below is lost. The page must be NULL with a
    reason (it is, today) or its article; never a crash or a stall."""
    url = hostile.site.deep_article
    article = hostile.site.articles[url]
    if url in hostile.output:
        assert hostile.output[url]["text"] == article.text
    else:
        assert _null_reason(hostile, url), "neither output nor NULL with a reason"


def _null_reason(hostile: HostileCrawl, url: str) -> str | None:
    match = re.search(rf"NULL \((\w+)\): {re.escape(url)}\n", hostile.run.log)
    return match.group(1) if match else None


def test_redirects_to_other_hosts_are_followed_and_credited_to_the_final_host(
    hostile: HostileCrawl,
) -> None:
    start = hostile.site.cases["page_redirect_offsite"].url
    item = hostile.output[hostile.site.offsite_article]
    assert item["domain"] == OFFSITE_DOMAIN
    assert item["text"] == hostile.site.articles[hostile.site.offsite_article].text
    assert hostile.counter("redirects/offsite") == 1
    assert hostile.counter("articles", OFFSITE_DOMAIN) == 1
    assert f"article {start} redirected to another host: {item['url']}" in hostile.run.log


# --- text that cannot be UTF-8 or displays spoofed; an article a stage fails on ------------------


def test_half_an_emoji_in_json_ld_and_in_the_feed_comes_out_as_the_replacement_character(
    hostile: HostileCrawl,
) -> None:
    """A lone surrogate (\\ud83d in the JSON-LD and the JSON Feed, &#xD83D; in HTML and RSS)
    cost the article everywhere; now it is U+FFFD, and the article is output."""
    site = hostile.site
    url = site.half_emoji_article
    expected = with_half_emoji(site.articles[url], REPLACEMENT_CHARACTER)
    item = hostile.output[url]
    assert (item["title"], item["text"]) == (expected.title, expected.text)
    assert item["authors"] == [f"Dana Whit {REPLACEMENT_CHARACTER}"]  # the JSON-LD author
    # The page has no description: the JSON Feed entry's summary is the article's.
    assert item["description"] == f"What happened, in one line {REPLACEMENT_CHARACTER}"
    for case in ("feed_json_lone_surrogates", "feed_surrogate_references"):
        for good in site.feed_articles[case]:
            assert REPLACEMENT_CHARACTER in hostile.output[good]["description"]


def test_bidirectional_controls_leave_titles_and_authors(hostile: HostileCrawl) -> None:
    url = hostile.site.bidi_article
    item = hostile.output[url]
    assert item["title"] == hostile.site.articles[url].title
    assert item["text"] == hostile.site.articles[url].text
    assert item["authors"] == [BIDI_AUTHOR]


def test_an_article_a_stage_fails_on_is_rejected_with_its_error_and_counted(
    hostile: HostileCrawl,
) -> None:
    site = hostile.site
    assert site.poison_article not in hostile.output
    (rejected,) = read_jsonl(hostile.state / "journal" / PIPELINE_REJECTED_FILE)
    assert rejected["record"]["url"] == site.poison_article
    assert rejected["record"]["title"] == site.articles[site.poison_article].title  # extracted
    assert rejected["error"].startswith("PoisonedItemError: a stage fails on")
    assert rejected["where"].startswith("newsharvest_bench/hostile.py:")
    assert rejected["attempts"] == 1
    assert f"rejected: {site.poison_article} (PoisonedItemError" in hostile.run.log
    assert hostile.counter("errors/rejected") == 1 and hostile.run.stats["harvest/rejected"] == 1


# --- the same, end to end with every sink, and across runs ---------------------------------------


def crawl_hostile_feeds(
    cases: list[str], state: Path, settings: list[str], **env: str
) -> tuple[str, list[RequestRecord]]:
    """One `scrapy crawl feeds` run of some of hostile.test's feeds (the fixture profile: the
    SQLite index on), to its end; its log and the requests served."""
    site = HostileSite(seed=1)
    room = Newsroom(seed=1, extra_sites=[site])
    with NewsroomServer(room, port=0) as server:
        command = crawl_command([site.cases[case].url for case in cases], server.proxy_url,
                                settings)  # fmt: skip
        log = run_to_end(command, crawl_env(state, **env), state.with_suffix(".log"))
    return log, server.request_log


def test_lone_surrogates_reach_every_sink_and_the_journal_as_the_replacement_character(
    tmp_path: Path, postgres_url: str, postgres_schema: str, redis_url: str, redis_prefix: str
) -> None:
    """The articles of the two half-emoji feeds, with the SQLite, PostgreSQL and Redis Stream
    sinks and the journal all on: each holds every article, U+FFFD where the emoji was cut."""
    journal = tmp_path / "journal.jsonl"
    settings = [f"HARVEST_JOURNAL_PATH={journal}", f"SINK_POSTGRES_URL={postgres_url}",
                f"SINK_POSTGRES_SCHEMA={postgres_schema}", "SINK_REDIS_STREAM_ENABLED=1",
                f"REDIS_KEY_PREFIX={redis_prefix}"]  # fmt: skip
    cases = ["feed_json_lone_surrogates", "feed_surrogate_references"]
    log, _ = crawl_hostile_feeds(cases, tmp_path / "state", settings,
                                 NEWSHARVEST_REDIS_URL=redis_url)  # fmt: skip
    site = HostileSite()
    urls = {*site.feed_articles[cases[0]], *site.feed_articles[cases[1]], site.half_emoji_article}
    cut = with_half_emoji(site.articles[site.half_emoji_article], REPLACEMENT_CHARACTER)
    assert "skipped_invalid" not in log and "Error processing" not in log, log[-3000:]

    journalled = {item["url"]: item for item in read_jsonl(journal)}
    assert set(journalled) == urls
    assert journalled[cut.url]["title"] == cut.title and journalled[cut.url]["text"] == cut.text
    index = tmp_path / "state-index.sqlite3"  # crawl_env puts the SQLite index here
    with sqlite3.connect(index) as connection:
        rows = dict(connection.execute("SELECT canonical_url, title FROM articles").fetchall())
    with psycopg.connect(postgres_url) as connection:
        query = sql.SQL("SELECT canonical_url, title FROM {}.articles")
        stored = dict(connection.execute(query.format(sql.Identifier(postgres_schema))).fetchall())
    client = redis.Redis.from_url(redis_url)
    try:
        entries = client.xrange(RedisKeys(redis_prefix).sink_stream())
    finally:
        client.close()
    articles = [json.loads(fields[b"article"]) for _, fields in entries]
    streamed = {article["url"]: article["title"] for article in articles}
    for name, titles in (("sqlite", rows), ("postgres", stored), ("redis stream", streamed)):
        assert set(titles) == urls, name
        assert titles[cut.url] == cut.title, name
    assert next(a["text"] for a in articles if a["url"] == cut.url) == cut.text


@pytest.mark.parametrize("ledger", ["sqlite", "redis"])
def test_an_article_a_stage_fails_on_is_tried_max_attempts_times_across_runs_then_rejected(
    tmp_path: Path, ledger: str, redis_url: str, redis_prefix: str
) -> None:
    """Every run outputs the poison feed's other articles; the poison article fails its first
    try, is tried again by the next run (another worker, with the shared ledger) and, on its
    HARVEST_MAX_ATTEMPTS-th failure, lands in the rejected file, counted. A third run never
    fetches it again."""
    attempts = 2
    pipelines = {**base.ITEM_PIPELINES, RAISING_STAGE: RAISING_STAGE_ORDER}
    settings = ["ITEM_PIPELINES=" + json.dumps(pipelines), f"HARVEST_MAX_ATTEMPTS={attempts}",
                "HARVEST_RETRY_DELAY_SECONDS=0", f"REDIS_KEY_PREFIX={redis_prefix}"]  # fmt: skip
    env = {"NEWSHARVEST_REDIS_URL": redis_url} if ledger == "redis" else {}
    site = HostileSite()
    poison, good = site.poison_article, site.feed_articles["feed_poison_item"]
    state = tmp_path / "state"
    rejected_file = state / "journal" / PIPELINE_REJECTED_FILE
    runs = []
    for run in range(attempts + 1):
        journal = tmp_path / f"run-{run}.jsonl"
        log, requests = crawl_hostile_feeds(
            ["feed_poison_item"], state, [*settings, f"HARVEST_JOURNAL_PATH={journal}"], **env
        )
        fetched = [f"http://{r.host}{r.target}" for r in requests if r.status == 200]
        runs.append((stats_from_log(log), fetched, read_jsonl(rejected_file), journal))
    first, second, third = runs
    assert {item["url"] for item in read_jsonl(first[3])} == set(good)  # the others, at once
    assert first[0]["harvest/retry"] == 1 and first[2] == []  # one failed try: not rejected yet
    assert poison in second[1]  # tried again by the next run
    (record,) = second[2]
    assert record["record"]["url"] == poison and record["attempts"] == attempts
    assert record["error"].startswith("PoisonedItemError")
    assert second[0][f"domain/{HOSTILE_DOMAIN}/errors/rejected"] == 1
    assert poison not in third[1] and len(third[2]) == 1  # final: never fetched again
    for _, _, _, journal in runs:
        assert poison not in {item["url"] for item in read_jsonl(journal)}


# --- the one-page command: the crawler's fetch policy --------------------------------------------

DRIP_SECONDS = 1.0  # the drip-feeding server sends one byte this often ...
DRIP_BYTES = 100_000  # ... of a body this long: a day, if nobody gives up
EXTRACT_LIMIT_SECONDS = 3.0
COMMAND_START_SLACK_SECONDS = 20.0  # Python, Scrapy and the reactor starting, on a loaded machine
ALLOW_LOOPBACK = {"NEWSHARVEST_NETWORK_ALLOWLIST": '["127.0.0.1"]'}


def good_article_page() -> tuple[str, bytes]:
    """(title, page) of an ordinary article of the hostile site."""
    site = HostileSite(seed=1)
    url = site.chain_target
    _, _, body = site.render(HOSTILE_DOMAIN, url.removeprefix(f"http://{HOSTILE_DOMAIN}"), "")
    assert isinstance(body, bytes)
    return site.articles[url].title, body


def test_extract_refuses_loopback_link_local_and_local_names_before_connecting() -> None:
    _, body = good_article_page()
    server = LoopbackServer({"/story.html": page(body)})
    with server.running():
        port = server.origin.rsplit(":", 1)[1]
        targets = {
            f"{server.origin}/story.html": "refused_address: 127.0.0.1 is loopback",
            f"http://[::ffff:127.0.0.1]:{port}/story.html": "refused_address",
            f"http://2130706433:{port}/story.html": "refused_address",
            "http://169.254.169.254/latest/meta-data/": "refused_address: 169.254.169.254 is",
            f"http://localhost:{port}/story.html": "refused_host: localhost is a special-use",
        }
        for url, reason in targets.items():
            result = newsharvest("extract", url)
            assert result.returncode == EXIT_REFUSED, (url, result.stderr)
            assert result.stderr.startswith(f"refused: {url} ({reason}")
            assert result.stderr.count("\n") == 1 and not result.stdout  # one line, no article
    assert server.requests == []  # nothing was sent


def test_extract_refuses_redirects_to_loopback_and_the_metadata_address() -> None:
    """The first hop is allowed (NETWORK_ALLOWLIST lifts the loopback rule for 127.0.0.1); the
    redirects it answers with are checked before they are followed, as in a crawl."""
    redirects = {
        "/to-metadata.html": ("http://169.254.169.254/latest/user-data/",
                              "refused_address: 169.254.169.254 is link-local"),
        "/to-localhost.html": ("http://localhost:{port}/canary", "refused_host: localhost is"),
        "/to-ipv6-loopback.html": ("http://[::1]:{port}/canary", "refused_address: ::1 is"),
    }  # fmt: skip
    server = LoopbackServer({path: redirect(target) for path, (target, _) in redirects.items()})
    with server.running():
        for path, (_, reason) in redirects.items():
            result = newsharvest("extract", server.origin + path, env=ALLOW_LOOPBACK)
            assert result.returncode == EXIT_REFUSED, result.stderr
            assert result.stderr.startswith(f"refused: {server.origin}{path} ({reason}")
            assert "; redirected to http" in result.stderr and result.stderr.count("\n") == 1
    assert not [request for request in server.requests if "canary" in request]


def test_extract_gives_up_on_a_drip_feeding_server_within_its_time_limit() -> None:
    server = LoopbackServer({"/drip.html": page(b"<" * DRIP_BYTES, drip_seconds=DRIP_SECONDS)})
    with server.running():
        started = time.monotonic()
        result = newsharvest("extract", "--timeout", str(EXTRACT_LIMIT_SECONDS),
                             server.origin + "/drip.html", env=ALLOW_LOOPBACK)  # fmt: skip
        took = time.monotonic() - started
    assert result.returncode == EXIT_UNREADABLE, result.stderr
    assert result.stderr == (
        f"fetch failed: {server.origin}/drip.html (timeout: no complete answer within "
        f"{EXTRACT_LIMIT_SECONDS:g} s, the limit of the whole fetch)\n"
    )
    # A per-read timeout never fires here (a byte comes every second): the limit held.
    assert took < EXTRACT_LIMIT_SECONDS + COMMAND_START_SLACK_SECONDS
    assert server.requests == ["GET /robots.txt", "GET /drip.html"]


def test_extract_fetches_an_allowed_page_directly_whatever_proxy_the_environment_names() -> None:
    title, body = good_article_page()
    target = LoopbackServer({"/story.html": page(body)})
    proxy = LoopbackServer({})  # a proxy the environment names: it must see nothing
    with target.running(), proxy.running():
        env = {**ALLOW_LOOPBACK, "http_proxy": proxy.origin, "HTTP_PROXY": proxy.origin}
        result = newsharvest("extract", target.origin + "/story.html", env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"# {title}\n")
    assert proxy.requests == [] and "GET /story.html" in target.requests
