"""Backends going away and coming back (crawler/core/outage.py), on real crawls: the real spider in
a subprocess against the news-site fixture, with Redis and PostgreSQL reached through a TcpProxy
whose stop()/start() cut and restore the connection path mid-crawl (the servers stay up: other
tests use them). Every test counts what came out: each article exactly once, nothing lost."""

from __future__ import annotations

import json
import re
import signal
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
import redis
from psycopg import sql

from crawler.core.keys import RedisKeys
from crawler.core.outage import EXIT_BACKEND_UNAVAILABLE
from crawler.newsroom import Newsroom, NewsroomServer, ScaledClock
from newsharvest_bench.crawlrun import (
    CRAWL_TIMEOUT_SECONDS,
    count_lines,
    crawl_command,
    crawl_env,
    read_jsonl,
    run_to_end,
    start_crawl,
    stats_from_log,
    wait_for,
)
from newsharvest_bench.tcpproxy import TcpProxy
from tests.support.corrections import copies as output_copies
from tests.support.corrections import indexed as kept_by_sinks
from tests.support.corrections import superseded

pytestmark = pytest.mark.slow

REDIS_PORT, POSTGRES_PORT = 6379, 5432
SLOW_RESPONSE_SECONDS = 0.1  # the fixture answers slowly...
CONCURRENT_REQUESTS = 5  # ...and the downloader holds at most this many requests at once
PACED = (  # about one page every 0.3 s per publisher: 16 pages a domain take ~5 s
    "DOWNLOAD_DELAY=0.2",  # (with no delay Scrapy 2.19 sends a domain's queue all at once)
    "DOWNLOAD_DELAY_JITTER=0",
    "AUTOTHROTTLE_ENABLED=False",
    "CONCURRENT_REQUESTS_PER_DOMAIN=1",
    f"CONCURRENT_REQUESTS={CONCURRENT_REQUESTS}",
    "DEDUP_THRESHOLD=0.6",  # every syndicated copy of the fixture counts (see test_dedup.py)
)
CUT_AFTER_PAGES = 20  # article pages served before the connection path is cut (of 90)
DOWN_SECONDS = 4.5  # how long it stays cut
SETTLE_SECONDS = 2.0  # by then the requests the downloader held at the cut were answered
START_TIMEOUT_SECONDS = 60
FAST_RECOVERY = (  # probes and reconnects in fractions of a second, not seconds
    "REDIS_RETRY_SECONDS=0.2",
    "REDIS_RETRY_MAX_SECONDS=0.5",
    "SINK_RECONNECT_SECONDS=0.5",
    "SINK_RETRY_TIMES=1",
    "SINK_RETRY_BACKOFF_SECONDS=0.05",
)
DISTRIBUTED_FIXTURE = (  # what settings.fixture changes, on top of settings.distributed
    "DOWNLOAD_DELAY=0",
    "RETRY_TIMES=0",
    "NETWORK_ALLOWLIST=.test",
)


def room() -> Newsroom:
    return Newsroom(seed=3, n_domains=5, articles_per_domain=16)


def via(proxy: TcpProxy, url: str, port: int) -> str:
    return url.replace(f":{port}/", f":{proxy.port}/")


def closed_port() -> int:
    with TcpProxy(REDIS_PORT) as proxy:  # listens, then closes: nothing answers there now
        return proxy.port


@dataclass
class Run:
    returncode: int
    log: str
    stats: dict[str, Any]
    items: list[dict[str, Any]]  # the crash-safe JSON Lines output (HARVEST_JOURNAL_PATH)
    pages: dict[str, int]  # article pages served: at the cut, settled after it, at restore, end

    @property
    def fetched_while_down(self) -> int:
        """Article pages requested after the cut had settled and before the restore."""
        return self.pages["restore"] - self.pages["settled"]


def article_pages(server: NewsroomServer, newsroom: Newsroom) -> int:
    return sum(
        1
        for r in server.request_log
        if r.status == 200 and f"http://{r.host}{r.target}" in newsroom.pages
    )


def crawl_through_outage(
    tmp_path: Path,
    newsroom: Newsroom,
    proxy: TcpProxy,
    settings: Sequence[str],
    profile: str = "settings.fixture",
    stop_during_outage: bool = False,
    restore_after_pages: int = 0,
) -> Run:
    """Crawl the room to the end (JSON Lines in tmp_path/articles.jsonl); cut the proxy once
    CUT_AFTER_PAGES article pages were served, restore it DOWN_SECONDS later (or once
    `restore_after_pages` were served: for a crawl that does not pause). With
    `stop_during_outage` the crawler gets SIGTERM while the proxy is still cut."""
    output = tmp_path / "articles.jsonl"
    pages: dict[str, int] = {}
    with NewsroomServer(newsroom, port=0, delay=SLOW_RESPONSE_SECONDS) as server:
        command = crawl_command(
            newsroom.feed_urls,
            server.proxy_url,
            [*PACED, *FAST_RECOVERY, *settings, f"HARVEST_JOURNAL_PATH={output}"],
        )
        env = crawl_env(tmp_path / "state", profile)
        process = start_crawl(command, env, tmp_path / "crawl.log")
        try:
            wait_for(lambda: article_pages(server, newsroom) >= CUT_AFTER_PAGES,
                     START_TIMEOUT_SECONDS, f"{CUT_AFTER_PAGES} pages")  # fmt: skip
            proxy.stop()
            pages["cut"] = article_pages(server, newsroom)
            time.sleep(SETTLE_SECONDS)
            pages["settled"] = article_pages(server, newsroom)
            if restore_after_pages:
                wait_for(lambda: article_pages(server, newsroom) >= restore_after_pages,
                         START_TIMEOUT_SECONDS, f"{restore_after_pages} pages")  # fmt: skip
            else:
                time.sleep(DOWN_SECONDS - SETTLE_SECONDS)
            pages["restore"] = article_pages(server, newsroom)
            if stop_during_outage:
                process.send_signal(signal.SIGTERM)
                process.wait(timeout=CRAWL_TIMEOUT_SECONDS)
            proxy.start()
            process.wait(timeout=CRAWL_TIMEOUT_SECONDS)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        pages["end"] = article_pages(server, newsroom)
    log = (tmp_path / "crawl.log").read_text(errors="replace")
    return Run(process.returncode, log, stats_from_log(log), read_jsonl(output), pages)


def assert_each_article_once(items: list[dict[str, Any]], newsroom: Newsroom) -> None:
    by_url = Counter(item["url"] for item in items)
    assert [url for url, n in by_url.items() if n > 1] == [], "an article was output twice"
    truth = {page.url for page in newsroom.articles()}
    assert set(by_url) == truth, ("articles lost", sorted(truth - set(by_url)))


def assert_quality_kept(items: list[dict[str, Any]], newsroom: Newsroom, stats: dict) -> None:
    """Stages that need Redis waited for it instead of degrading: every syndicated copy is
    flagged (as a copy of its family), no ground-truth notice is left in any text."""
    copies = {page.url for page in newsroom.articles() if page.duplicate_of}
    flagged = output_copies(items)  # flagged, or superseded by an original that came later
    assert len(flagged) == len(copies), (sorted(flagged), sorted(copies))
    for item in items:
        assert not [n for n in newsroom.pages[item["url"]].notices if n in item["text"]]
    assert stats.get("dedup/unchecked", 0) == 0 and stats.get("notices/errors", 0) == 0


def assert_redis_ledger_settled(redis_url: str, prefix: str, articles: int) -> None:
    """Every article's done mark reached Redis: nothing pending, nothing left to fetch again."""
    client = redis.Redis.from_url(redis_url)
    keys = RedisKeys(prefix)
    try:
        records = [json.loads(raw) for raw in client.hvals(keys.harvest_articles())]
        pending = client.zcard(keys.harvest_pending())
    finally:
        client.close()
    assert pending == 0
    assert Counter(record["s"] for record in records)["d"] >= articles


def assert_paused(run: Run) -> None:
    """The crawl stopped fetching while Redis was cut (once the downloader had fetched what it
    held), and fetched again afterwards."""
    assert run.fetched_while_down == 0, run.pages
    assert run.pages["end"] > run.pages["restore"], ("nothing fetched after the restore", run.pages)
    assert run.stats["backend/redis/unavailable"] == 1
    assert run.stats["backend/redis/paused_seconds"] >= DOWN_SECONDS - SETTLE_SECONDS
    assert "Redis at 127.0.0.1" in run.log and "crawl paused" in run.log
    assert "crawl resumed" in run.log
    assert "Traceback" not in run.log


def redis_outage(
    name: str,
    tmp_path: Path,
    redis_url: str,
    prefix: str,
    settings: Sequence[str] = (),
    profile: str = "settings.fixture",
) -> Run:
    """A crawl through a Redis cut, checked: each article once, paused while cut, quality
    kept, the ledger settled."""
    newsroom = room()
    with TcpProxy(REDIS_PORT) as proxy:
        url = via(proxy, redis_url, REDIS_PORT)
        backend = [f"REDIS_URL={url}", f"REDIS_KEY_PREFIX={prefix}"]
        run = crawl_through_outage(tmp_path, newsroom, proxy, [*backend, *settings], profile)
    assert run.returncode == 0, run.log[-3000:]
    report(f"{name}, Redis cut", run, len(newsroom.articles()))
    assert_each_article_once(run.items, newsroom)
    assert_paused(run)
    assert_quality_kept(run.items, newsroom, run.stats)
    assert_redis_ledger_settled(redis_url, prefix, len(newsroom.articles()))
    return run


def report(name: str, run: Run, expected: int) -> None:
    stats = run.stats
    print(
        f"{name}: output {len(run.items)}/{expected} articles, "
        f"{len(run.items) - len({i['url'] for i in run.items})} duplicates; pages served at "
        f"cut/settled/restore/end {run.pages}; paused "
        f"{stats.get('backend/redis/paused_seconds', 0):.1f} s; outbox buffered "
        f"{stats.get('harvest/outbox/buffered', 0)} replayed "
        f"{stats.get('harvest/outbox/replayed', 0)}; waited: dedup "
        f"{stats.get('dedup/waited', 0)} notices {stats.get('notices/waited', 0)}"
    )


# --- Redis mid-crawl -------------------------------------------------------------------------


def test_redis_cut_mid_crawl_pauses_and_resumes_every_article_output_once(
    tmp_path: Path, redis_url: str, redis_prefix: str
) -> None:
    run = redis_outage(
        "local profile", tmp_path, redis_url, redis_prefix, ["SINK_REDIS_STREAM_ENABLED=True"]
    )
    # The Redis Stream sink journalled what it could not add and replayed it: each indexed
    # article (copies are not indexed) is in the stream once.
    client = redis.Redis.from_url(redis_url)
    entries = client.xrange(RedisKeys(redis_prefix).sink_stream())
    client.close()
    streamed = Counter(fields[b"canonical_url"].decode() for _, fields in entries)
    assert max(streamed.values()) == 1
    # A copy streamed before its original superseded it stays in the stream (the original's
    # entry carries the correction); one that came after the correction is never added.
    copies = superseded(run.items)
    assert set(streamed) - copies == kept_by_sinks(run.items)
    assert run.stats.get("sink/redis_stream/journal_pending", 0) == 0


def test_redis_cut_mid_distributed_crawl_loses_no_queued_request(
    tmp_path: Path, redis_url: str, redis_prefix: str
) -> None:
    """The distributed profile: the request queue and dupefilter are in Redis too."""
    redis_outage("distributed profile", tmp_path, redis_url, redis_prefix,
                 DISTRIBUTED_FIXTURE, "settings.distributed")  # fmt: skip
    client = redis.Redis.from_url(redis_url)
    queued = client.zcard(RedisKeys(redis_prefix).scheduler_queue("feeds"))
    client.close()
    assert queued == 0


def test_crawl_stopped_during_a_redis_outage_exits_cleanly_and_the_next_run_repeats_nothing(
    tmp_path: Path, redis_url: str, redis_prefix: str
) -> None:
    """SIGTERM while Redis is cut: the crawler exits (nothing waits forever), the done marks it
    could not store wait in its outbox; the next run stores them before anything else, fetches
    what was cut off and outputs nothing twice."""
    newsroom = room()
    settings = [
        f"REDIS_KEY_PREFIX={redis_prefix}",
        # A shared store hands out a stopped worker's claims once their lease runs out; short
        # here, so the next run picks them up at once.
        "HARVEST_CLAIM_LEASE_SECONDS=1",
    ]
    with TcpProxy(REDIS_PORT) as proxy:
        url = via(proxy, redis_url, REDIS_PORT)
        first = crawl_through_outage(
            tmp_path, newsroom, proxy, [f"REDIS_URL={url}", *settings], stop_during_outage=True
        )
    assert first.returncode == 0, first.log[-3000:]
    assert "Traceback" not in first.log
    buffered = first.stats["harvest/outbox/buffered"]
    assert buffered > 0
    assert re.search(r"\d+ done mark\(s\) wait in .* for Redis", first.log)
    assert 0 < len(first.items) < len(newsroom.articles())

    with NewsroomServer(newsroom, port=0) as server:
        command = crawl_command(
            newsroom.feed_urls,
            server.proxy_url,
            [
                f"REDIS_URL={redis_url}",
                *PACED,
                *settings,
                f"HARVEST_JOURNAL_PATH={tmp_path / 'articles.jsonl'}",
            ],
        )
        log = run_to_end(command, crawl_env(tmp_path / "state"), tmp_path / "second.log")
    second = stats_from_log(log)
    assert second["harvest/outbox/replayed"] == buffered
    items = read_jsonl(tmp_path / "articles.jsonl")  # both runs
    assert_each_article_once(items, newsroom)
    assert_redis_ledger_settled(redis_url, redis_prefix, len(newsroom.articles()))
    print(f"stopped during the outage after {len(first.items)} articles, {buffered} done marks "
          f"in the outbox; the next run replayed {second['harvest/outbox/replayed']}, recovered "
          f"{second.get('harvest/recovered', 0)} claims; {len(items)} articles output in all, "
          f"{len(items) - len({i['url'] for i in items})} duplicates")  # fmt: skip


SCALE = 60.0  # continuous mode: simulated seconds per wall-clock second
PUBLISH_EVERY = timedelta(minutes=2)  # dailyherald.test publishes every 2 s of wall clock
CONTINUOUS = (
    f"HARVEST_CLOCK_SCALE={SCALE}",
    "HARVEST_MIN_INTERVAL_SECONDS=60",  # simulated seconds: 1 s of wall clock...
    "HARVEST_MAX_INTERVAL_SECONDS=180",  # ...to 3 s
    "HARVEST_TICK_SECONDS=0.05",
)


def test_redis_cut_in_continuous_mode_resumes_and_harvests_what_was_published_meanwhile(
    tmp_path: Path, redis_url: str, redis_prefix: str
) -> None:
    anchor = time.time()
    newsroom = Newsroom(seed=1)
    start = newsroom.clock.now()
    newsroom.clock = ScaledClock(start, SCALE, anchor)
    newsroom.publish_every("dailyherald.test", PUBLISH_EVERY, first=start + PUBLISH_EVERY)
    output = tmp_path / "articles.jsonl"
    feeds = set(newsroom.feed_urls)
    with TcpProxy(REDIS_PORT) as proxy, NewsroomServer(newsroom, port=0) as server:
        url = via(proxy, redis_url, REDIS_PORT)
        settings = [
            f"REDIS_URL={url}", f"REDIS_KEY_PREFIX={redis_prefix}",
            f"HARVEST_JOURNAL_PATH={output}",
            f"HARVEST_CLOCK_START={start.isoformat()}", f"HARVEST_CLOCK_ANCHOR={anchor}",
            *CONTINUOUS, *FAST_RECOVERY,
        ]  # fmt: skip
        command = crawl_command(newsroom.feed_urls, server.proxy_url, settings, ["continuous=1"])
        process = start_crawl(command, crawl_env(tmp_path / "state"), tmp_path / "crawl.log")

        def feed_polls() -> int:
            return sum(1 for r in server.request_log if f"http://{r.host}{r.target}" in feeds)

        try:
            wait_for(lambda: count_lines(output) >= len(Newsroom(seed=1).articles()),
                     START_TIMEOUT_SECONDS, "the first round of articles")  # fmt: skip
            proxy.stop()
            time.sleep(SETTLE_SECONDS)
            polls_settled = feed_polls()
            time.sleep(DOWN_SECONDS - SETTLE_SECONDS)
            polls_down = feed_polls() - polls_settled
            published_while_down = [
                page.url for page in newsroom.pages_on("dailyherald.test")
                if page.published > start and page.url not in {i["url"] for i in read_jsonl(output)}
            ]  # fmt: skip
            proxy.start()
            restored = newsroom.clock.now()
            wait_for(lambda: set(published_while_down) <= {i["url"] for i in read_jsonl(output)},
                     START_TIMEOUT_SECONDS, "the articles published during the outage")  # fmt: skip
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=CRAWL_TIMEOUT_SECONDS)
    log = (tmp_path / "crawl.log").read_text(errors="replace")
    assert process.returncode == 0, log[-3000:]
    items = read_jsonl(output)
    versions = Counter((item["entry_url"], item["version"]) for item in items)
    assert [key for key, n in versions.items() if n > 1] == [], "an article was output twice"
    assert published_while_down, "nothing was published during the outage"
    assert polls_down == 0  # paused: no feed polled while Redis was cut
    live = [p for p in newsroom.pages_on("dailyherald.test") if start < p.published <= restored]
    assert {p.url for p in live} <= {item["url"] for item in items}
    stats = stats_from_log(log)
    assert stats["backend/redis/unavailable"] == 1 and "crawl resumed" in log
    assert "Traceback" not in log
    print(f"continuous mode: {len(items)} articles output, none twice; {len(live)} published "
          f"live, {len(published_while_down)} of them while Redis was cut, all harvested after "
          f"it came back; paused {stats['backend/redis/paused_seconds']:.1f} s")  # fmt: skip


def test_redis_gone_for_longer_than_the_outage_limit_closes_the_crawl_with_exit_69(
    tmp_path: Path, redis_url: str, redis_prefix: str
) -> None:
    """REDIS_OUTAGE_MAX_SECONDS: a crawl that must not wait forever (a cron job) gives up, as
    at start-up: finish reason backend_unavailable, exit status 69, done marks kept."""
    newsroom = room()
    output = tmp_path / "articles.jsonl"
    with TcpProxy(REDIS_PORT) as proxy, NewsroomServer(newsroom, port=0) as server:
        url = via(proxy, redis_url, REDIS_PORT)
        settings = [
            f"REDIS_URL={url}", f"REDIS_KEY_PREFIX={redis_prefix}", *PACED, *FAST_RECOVERY,
            "REDIS_OUTAGE_MAX_SECONDS=2", f"HARVEST_JOURNAL_PATH={output}",
        ]  # fmt: skip
        command = crawl_command(newsroom.feed_urls, server.proxy_url, settings)
        process = start_crawl(command, crawl_env(tmp_path / "state"), tmp_path / "crawl.log")
        try:
            wait_for(lambda: article_pages(server, newsroom) >= CUT_AFTER_PAGES,
                     START_TIMEOUT_SECONDS, f"{CUT_AFTER_PAGES} pages")  # fmt: skip
            proxy.stop()
            cut = time.monotonic()
            process.wait(timeout=CRAWL_TIMEOUT_SECONDS)  # the proxy stays cut
            elapsed = time.monotonic() - cut
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    log = (tmp_path / "crawl.log").read_text(errors="replace")
    assert process.returncode == EXIT_BACKEND_UNAVAILABLE, log[-3000:]
    stats = stats_from_log(log)
    assert stats["finish_reason"] == "backend_unavailable"
    assert "REDIS_OUTAGE_MAX_SECONDS" in log and "Traceback" not in log
    items = read_jsonl(output)
    assert len({i["url"] for i in items}) == len(items)  # nothing twice
    print(f"Redis gone for good: the crawl gave up {elapsed:.1f} s after the cut (limit 2 s), "
          f"exit {process.returncode}, {len(items)} articles output, "
          f"{stats.get('harvest/outbox/buffered', 0)} done marks kept in the outbox")  # fmt: skip


# --- PostgreSQL mid-crawl --------------------------------------------------------------------


def test_postgres_cut_mid_crawl_the_crawl_goes_on_and_every_article_is_indexed_once(
    tmp_path: Path, postgres_url: str, postgres_schema: str
) -> None:
    """Only the sink needs PostgreSQL: it journals while the path is cut and replays after;
    the crawl does not pause."""
    newsroom = room()
    with TcpProxy(POSTGRES_PORT) as proxy:
        url = via(proxy, postgres_url, POSTGRES_PORT)
        settings = [f"SINK_POSTGRES_URL={url}", f"SINK_POSTGRES_SCHEMA={postgres_schema}"]
        # Restored with a third of the pages still to fetch: the sink replays during the crawl.
        run = crawl_through_outage(tmp_path, newsroom, proxy, settings, restore_after_pages=60)
    assert run.returncode == 0, run.log[-3000:]
    assert_each_article_once(run.items, newsroom)
    assert run.pages["restore"] - run.pages["cut"] >= 60 - CUT_AFTER_PAGES  # not paused
    with psycopg.connect(postgres_url) as connection:
        rows = connection.execute(
            sql.SQL("SELECT canonical_url, versions FROM {}.articles").format(
                sql.Identifier(postgres_schema)
            )
        ).fetchall()
    indexed = Counter(url for url, _ in rows)
    assert set(indexed) == kept_by_sinks(run.items)
    assert {versions for _, versions in rows} == {1}  # no article written as a second version
    stats = run.stats
    assert stats["sink/postgres/spilled"] > 0
    assert stats["sink/postgres/replayed"] == stats["sink/postgres/spilled"]
    assert stats["sink/postgres/journal_pending"] == 0
    assert stats["backend/postgres/unavailable"] == 1
    # From the first failed write to the first good one: the cut, give or take a batch interval
    # and a reconnect interval (0.5 s each).
    assert stats["backend/postgres/unavailable_seconds"] >= SETTLE_SECONDS - 1.0
    spilled_by_domain = sum(
        value
        for key, value in stats.items()
        if re.fullmatch(r"domain/.*/sink/postgres/spilled", key)
    )
    assert spilled_by_domain == stats["sink/postgres/spilled"]
    print(f"PostgreSQL cut: output {len(run.items)}/{len(newsroom.articles())}, indexed "
          f"{len(indexed)} (each once); {run.pages['restore'] - run.pages['cut']} pages "
          f"fetched while it was "
          f"down; {stats['sink/postgres/spilled']} journalled and replayed; down "
          f"{stats['backend/postgres/unavailable_seconds']:.1f} s")  # fmt: skip


# --- unreachable at start --------------------------------------------------------------------


def crawl_once(tmp_path: Path, settings: Sequence[str], profile: str = "settings.fixture") -> tuple:
    newsroom = Newsroom(seed=1)
    output = tmp_path / "articles.jsonl"
    with NewsroomServer(newsroom, port=0) as server:
        command = crawl_command(
            newsroom.feed_urls, server.proxy_url, [*settings, f"HARVEST_JOURNAL_PATH={output}"]
        )
        started = time.monotonic()
        process = start_crawl(command, crawl_env(tmp_path / "state", profile), tmp_path / "log")
        process.wait(timeout=CRAWL_TIMEOUT_SECONDS)
        elapsed = time.monotonic() - started
        served = len(server.request_log)
    log = (tmp_path / "log").read_text(errors="replace")
    return process.returncode, log, elapsed, served, read_jsonl(output)


@pytest.mark.parametrize(
    ("backend", "profile", "setting"),
    [
        ("redis", "settings.fixture", "REDIS_URL"),
        ("redis", "settings.distributed", "REDIS_URL"),
        ("postgres", "settings.fixture", "SINK_POSTGRES_URL"),
    ],
)
def test_unreachable_backend_at_start_fails_fast_with_one_clear_line(
    tmp_path: Path, backend: str, profile: str, setting: str
) -> None:
    port = closed_port()
    url = {
        "redis": f"redis://127.0.0.1:{port}/0",
        "postgres": f"postgresql://postgres@127.0.0.1:{port}/test",
    }[backend]
    extra = DISTRIBUTED_FIXTURE if profile == "settings.distributed" else ()
    returncode, log, elapsed, served, items = crawl_once(
        tmp_path, [f"{setting}={url}", *extra], profile
    )
    assert returncode == EXIT_BACKEND_UNAVAILABLE, log[-3000:]
    errors = [line for line in log.splitlines() if " ERROR: " in line]
    assert len(errors) == 1, errors
    assert "cannot start the crawl" in errors[0] and f"127.0.0.1:{port}" in errors[0]
    assert setting in errors[0]
    assert "Traceback" not in log
    assert served == 0 and items == []  # nothing fetched
    assert stats_from_log(log)["finish_reason"] == "backend_unavailable"
    print(f"{backend} ({profile}) unreachable at start: exit {returncode} after {elapsed:.1f} s; "
          f"{errors[0].split(' ERROR: ', 1)[1]}")  # fmt: skip


def test_unreachable_postgres_at_start_with_the_journal_policy_crawls_into_the_journal(
    tmp_path: Path,
) -> None:
    url = f"postgresql://postgres@127.0.0.1:{closed_port()}/test"
    returncode, log, _, _, items = crawl_once(
        tmp_path, [f"SINK_POSTGRES_URL={url}", "SINK_START_POLICY=journal", *FAST_RECOVERY]
    )
    assert returncode == 0, log[-3000:]
    stats = stats_from_log(log)
    indexable = [item for item in items if not item.get("duplicate_of")]
    assert items and stats["sink/postgres/spilled"] == len(indexable)
    assert stats["sink/postgres/journal_pending"] == len(indexable)  # replayed at next start
    assert "Traceback" not in log
