"""The distributed profile: scrapy-redis scheduler, TTL dupefilter, N workers on one Redis."""

from __future__ import annotations

import asyncio
import importlib
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from scrapy import Request
from scrapy.utils.test import get_crawler

from crawler.newsroom import Newsroom, NewsroomServer
from crawler.scheduler import RedisPriorityQueue, RedisScheduler, TTLDupeFilter
from crawler.spiders.feeds import FeedsSpider
from newsharvest_bench.bench_distributed import (
    FIXTURE_SETTINGS,  # settings.fixture over distributed
)
from newsharvest_bench.crawlrun import crawl_command, crawl_env, read_jsonl, run_to_end, start_crawl
from newsharvest_bench.tcpproxy import TcpProxy

SLOW_RESPONSE_SECONDS = 0.1  # slow enough that both workers get a share of the work
COMPARED_FIELDS = ("url", "version", "title", "text", "published", "domain", "authors")


def distributed_crawler(redis_url: str, prefix: str, **settings: Any) -> Any:
    profile = importlib.import_module("settings.distributed")
    values = {
        **{name: getattr(profile, name) for name in dir(profile) if name.isupper()},
        "REDIS_URL": redis_url,
        "REDIS_KEY_PREFIX": prefix,
        "SCHEDULER_PERSIST": True,
        "DUPEFILTER_TTL_SECONDS": 100.0,
        **settings,
    }
    return get_crawler(FeedsSpider, values)


def test_ttl_dupefilter_forgets_fingerprints_after_the_ttl(redis_url, redis_prefix) -> None:
    from crawler.core.clock import ManualClock

    crawler = distributed_crawler(redis_url, redis_prefix)
    dupefilter = TTLDupeFilter.from_crawler(crawler)
    dupefilter.clock = clock = ManualClock(1000.0)
    one, two = Request("http://a.test/1"), Request("http://a.test/2")
    assert not dupefilter.request_seen(one)
    assert dupefilter.request_seen(Request("http://a.test/1"))  # shared fingerprint
    clock.advance(60)
    assert not dupefilter.request_seen(two)
    clock.advance(41)  # one's TTL (100 s) has run out; two's has not
    assert not dupefilter.request_seen(one)
    assert dupefilter.request_seen(two)
    # Expired fingerprints are trimmed as it goes: the set stays bounded by the TTL.
    clock.advance(1000)
    assert not dupefilter.request_seen(Request("http://a.test/3"))
    assert dupefilter.server.zcard(dupefilter.key) == 1
    assert dupefilter.key.startswith(redis_prefix)


def test_redis_scheduler_shares_one_queue_between_workers(redis_url, redis_prefix) -> None:
    schedulers = []
    for _ in range(2):
        crawler = distributed_crawler(redis_url, redis_prefix)
        crawler.spider = spider = FeedsSpider.from_crawler(crawler, feeds="http://a.test/rss")
        scheduler = RedisScheduler.from_crawler(crawler)
        scheduler.open(spider)
        schedulers.append(scheduler)
    first, second = schedulers
    assert first.enqueue_request(Request("http://a.test/x", callback=first.spider.parse_feed))
    assert not second.enqueue_request(Request("http://a.test/x"))  # the shared dupefilter
    assert second.enqueue_request(Request("http://a.test/x", dont_filter=True, priority=5))
    assert len(first) == 2 and second.has_pending_requests()
    popped = second.next_request()
    assert popped is not None and popped.priority == 5  # priority order
    assert first.next_request().callback == first.spider.parse_feed  # a spider method travels
    assert first.next_request() is None
    for scheduler in schedulers:
        scheduler.close("finished")  # persist: nothing flushed
    assert first.server.exists(first.df.key)


@pytest.mark.slow
def test_two_workers_output_what_one_worker_outputs_without_duplicates(
    tmp_path: Path, redis_url: str, redis_prefix: str
) -> None:
    room = Newsroom(seed=5, n_domains=5, articles_per_domain=12)

    def worker(name: str, prefix: str) -> tuple[list[str], Any]:
        settings = [
            f"REDIS_URL={redis_url}",
            f"REDIS_KEY_PREFIX={prefix}",
            f"HARVEST_JOURNAL_PATH={tmp_path / name}.jsonl",
            *FIXTURE_SETTINGS,
        ]
        command = crawl_command(room.feed_urls, server.proxy_url, settings)
        env = crawl_env(tmp_path / f"state-{name}", profile="settings.distributed")
        return command, env

    with NewsroomServer(room, port=0, delay=SLOW_RESPONSE_SECONDS) as server:
        run_to_end(*worker("single", f"{redis_prefix}:single"), tmp_path / "single.log")
        started = time.monotonic()
        processes = [
            start_crawl(*worker(name, f"{redis_prefix}:pair"), tmp_path / f"{name}.log")
            for name in ("w1", "w2")
        ]
        for process in processes:
            process.wait(timeout=180)
        elapsed = time.monotonic() - started
    for name, process in zip(("w1", "w2"), processes, strict=True):
        assert process.returncode == 0, (tmp_path / f"{name}.log").read_text()[-3000:]

    single = read_jsonl(tmp_path / "single.jsonl")
    w1, w2 = read_jsonl(tmp_path / "w1.jsonl"), read_jsonl(tmp_path / "w2.jsonl")
    combined = w1 + w2
    keys = Counter((item["url"], item["version"]) for item in combined)
    assert [key for key, n in keys.items() if n > 1] == [], "an article was output twice"
    assert w1 and w2, f"one worker did all the work ({len(w1)} + {len(w2)})"

    def view(items: list[dict]) -> dict:
        return {(i["url"], i["version"]): tuple(str(i[f]) for f in COMPARED_FIELDS) for i in items}

    assert view(combined) == view(single)
    assert {item["url"] for item in single} == {page.url for page in room.articles()}
    print(f"single {len(single)} articles; two workers {len(w1)} + {len(w2)} in {elapsed:.1f} s")


def test_redis_scheduler_through_an_outage_holds_requests_and_recovers_a_lost_pop(
    redis_url: str, redis_prefix: str
) -> None:
    """Redis cut (the real server behind a TcpProxy): nothing raises into the engine, requests
    are held in order, the queue counts as non-empty (a one-pass crawl must not end); when Redis
    answers, the held requests are queued and a pop whose reply was lost is put back."""

    async def scenario(proxy: TcpProxy) -> tuple[list[str], dict[str, Any]]:
        url = redis_url.replace(":6379/", f":{proxy.port}/")
        crawler = distributed_crawler(url, redis_prefix, REDIS_RETRY_SECONDS=0.05)
        crawler.spider = spider = FeedsSpider.from_crawler(crawler, feeds="http://a.test/rss")
        scheduler = RedisScheduler.from_crawler(crawler)
        scheduler.open(spider)
        gate, queue = scheduler.gate, scheduler.queue
        assert isinstance(queue, RedisPriorityQueue)
        for name in ("lost", "queued"):
            scheduler.enqueue_request(Request(f"http://a.test/{name}", dont_filter=True))
        # A pop that Redis ran but whose reply never arrived (the path cut in between).
        queue.unconfirmed = token = b"lost-pop"
        queue._pop(keys=[queue.key, queue.note_key], args=[token, 60])
        proxy.stop()
        assert scheduler.enqueue_request(Request("http://a.test/held-1", dont_filter=True))
        assert not gate.available and scheduler.next_request() is None
        assert scheduler.enqueue_request(Request("http://a.test/held-2"))  # checked later
        assert scheduler.has_pending_requests() and len(scheduler.held) == 2
        proxy.start()
        while not gate.available:  # the gate's probe finds Redis, runs the recovery hooks
            await asyncio.sleep(0.05)
        popped = []
        while (request := scheduler.next_request()) is not None:
            popped.append(request.url.rsplit("/", 1)[1])
        scheduler.close("finished")
        return popped, crawler.stats.get_stats()

    with TcpProxy(6379) as proxy:
        popped, stats = asyncio.run(scenario(proxy))
    assert sorted(popped) == ["held-1", "held-2", "lost", "queued"]  # none lost, none twice
    assert stats["backend/redis/unavailable"] == 1
    assert stats["scheduler/held/redis"] == 2 and stats["scheduler/recovered_pop/redis"] == 1
    assert stats["scheduler/requeued/redis"] == 3  # the held ones and the lost pop


def test_a_pop_takes_the_claim_over_and_drops_a_copy_handed_out_again(
    redis_url: str, redis_prefix: str
) -> None:
    """The claim follows the popped request (so a worker killed after the pop hands it back),
    and a copy of a claim handed out again since (a new generation) is dropped, not fetched."""
    import json as jsonlib

    from crawler.core.keys import RedisKeys
    from crawler.ledger import Entry, LedgerConfig, RedisHarvestState

    keys = RedisKeys(redis_prefix)
    crawler = distributed_crawler(redis_url, redis_prefix)
    crawler.spider = spider = FeedsSpider.from_crawler(crawler, feeds="http://a.test/rss")
    scheduler = RedisScheduler.from_crawler(crawler)
    scheduler.open(spider)
    queue = scheduler.queue
    queue.take_claims(keys, "popper/1")

    async def claim() -> tuple[Any, list[Any]]:
        state = RedisHarvestState(LedgerConfig(), redis_url, keys, "claimer/1")
        await state.open()
        claims = await state.claim_entries([Entry("http://a.test/1", None, {})], 1000.0)
        await state.close()
        return claims

    (first,) = asyncio.run(claim())
    queue.push(spider.article_request(first))
    popped = scheduler.next_request()
    assert popped is not None and popped.meta["harvest"]["g"] == first.generation == 1
    record = jsonlib.loads(queue.server.hget(keys.harvest_articles(), "http://a.test/1"))
    assert record["o"] == "popper/1"
    assert queue.server.smembers(keys.harvest_held("popper/1")) == {b"a|http://a.test/1"}

    async def take_over() -> list[Any]:  # the popper is gone (it never beat)
        state = RedisHarvestState(LedgerConfig(), redis_url, keys, "other/2")
        await state.open()
        orphans = await state.recover_orphans(2000.0)
        await state.close()
        return orphans.claims

    (again,) = asyncio.run(take_over())
    assert again.generation == 2
    queue.push(spider.article_request(first))  # a stale copy, still queued somewhere
    queue.push(spider.article_request(again))
    popped = scheduler.next_request()
    assert popped is not None and popped.meta["harvest"]["g"] == 2
    assert scheduler.next_request() is None
    assert crawler.stats.get_value("scheduler/dropped/stale") == 1
    scheduler.close("finished")
