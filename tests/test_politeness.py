"""Politeness across workers (crawler/politeness.py): the shared per-domain slots in the real
Redis, then three real `scrapy crawl` workers measured at the fixture's server."""

from __future__ import annotations

import asyncio
import importlib
import time
from pathlib import Path
from typing import Any

import pytest
from scrapy import Request, Spider, signals
from scrapy.core.downloader import Slot
from scrapy.robotstxt import ProtegoRobotParser
from scrapy.utils.test import get_crawler

from crawler.core.connection import async_redis, sync_redis
from crawler.core.keys import RedisKeys
from crawler.core.lua import register_lua
from crawler.newsroom import RequestTiming
from crawler.politeness import SLOTS_TAKEN, DomainPoliteness, Heartbeats
from newsharvest_bench.bench_politeness import (
    CLOCK_TOLERANCE_SECONDS,
    measure_politeness,
    politeness_figures,
    summary,
)
from newsharvest_bench.tcpproxy import TcpProxy
from tests.support.commands import newsharvest

DOMAIN = "dailyherald.test"
MICROS = 1_000_000
POLL_US = 50_000
STATE_TTL_MS = 60_000
LONG_LEASE_US = 30 * MICROS
WORKERS = 3
SLOW_ANSWER_SECONDS = 0.2


class Slots:
    """The two scripts on one domain's keys, as a worker calls them (times in µs)."""

    def __init__(self, redis_url: str, prefix: str) -> None:
        self.client = sync_redis(redis_url)
        keys = RedisKeys(prefix)
        self.keys = [keys.politeness_slots(DOMAIN), keys.politeness_state(DOMAIN)]
        self._acquire = register_lua(self.client, "crawler", "politeness_acquire")
        self._release = register_lua(self.client, "crawler", "politeness_release")

        self.alive_prefix = keys.harvest_alive_prefix()

    def acquire(
        self,
        token: str,
        concurrency: int = 2,
        delay_us: int = 0,
        lease_us: int = LONG_LEASE_US,
        heartbeats: tuple[str, int, str, str] = ("", 0, "", ""),
    ) -> tuple[int, int, int]:
        """`heartbeats`: (heartbeat key prefix, grace µs, this worker, this owner), as
        DomainPoliteness passes them; empty: no heartbeats, leases only expire. As
        DomainPoliteness does, the heartbeats of the owners the script names are read, and
        the call is made again at once when one of them is dead and every slot is taken."""
        prefix, *rest = heartbeats
        known = Heartbeats(prefix)
        args = [token, concurrency, delay_us, lease_us, POLL_US, STATE_TTL_MS,
                *known.arguments(), *rest]  # fmt: skip
        while True:
            answer, wait, shared, suspects = self._acquire(self.keys, [*args, *known.dead])
            if int(answer) != SLOTS_TAKEN:
                return int(answer), int(wait), int(shared)
            now = time.monotonic()
            owners = known.to_look_up(suspects, now)
            found = [known.record(o, bool(self.client.exists(known.key(o))), now) for o in owners]
            if not any(found):
                return int(answer), int(wait), int(shared)

    def release(self, token: str, delay_us: int | None = None) -> None:
        self._release(self.keys, [token, "" if delay_us is None else delay_us, STATE_TTL_MS])

    def holders(self) -> list[str]:
        return [member.decode() for member in self.client.zrange(self.keys[0], 0, -1)]


@pytest.fixture
def slots(any_redis: tuple[str, str]) -> Any:
    shared = Slots(*any_redis)
    yield shared
    shared.client.close()


def test_no_more_requests_in_flight_than_the_limit_whichever_worker_asks(slots: Slots) -> None:
    assert slots.acquire("w1:1")[0] == 1
    assert slots.acquire("w2:1")[0] == 1
    answer, wait, _ = slots.acquire("w3:1")
    assert (answer, wait) == (-1, POLL_US)  # every slot taken: ask again after the poll time
    slots.release("w1:1")
    assert slots.acquire("w3:1")[0] == 1
    assert sorted(slots.holders()) == ["w2:1", "w3:1"]
    # Both keys expire on their own: nothing is left behind for a domain that goes quiet.
    assert all(slots.client.pttl(key) > 0 for key in slots.keys)


def test_the_next_start_waits_for_the_delay_measured_on_redis_clock(slots: Slots) -> None:
    delay_us = 200_000
    assert slots.acquire("w1:1", concurrency=5, delay_us=delay_us)[0] == 1
    answer, wait, _ = slots.acquire("w2:1", concurrency=5, delay_us=delay_us)
    assert answer == 0 and delay_us - 50_000 < wait <= delay_us  # too soon
    time.sleep(wait / MICROS)
    assert slots.acquire("w2:1", concurrency=5, delay_us=delay_us)[0] == 1


def test_a_dead_workers_slot_frees_itself_when_its_lease_runs_out(slots: Slots) -> None:
    lease_us = 150_000
    assert slots.acquire("dead:1", concurrency=1, lease_us=lease_us)[0] == 1  # never released
    assert slots.acquire("live:1", concurrency=1, lease_us=lease_us)[0] == -1
    time.sleep(lease_us / MICROS + 0.05)
    assert slots.acquire("live:1", concurrency=1, lease_us=lease_us)[0] == 1
    assert slots.holders() == ["live:1"]


def test_a_slot_whose_worker_lost_its_heartbeat_is_taken_back_after_the_grace(
    slots: Slots,
) -> None:
    grace_us = 150_000
    alive = slots.client.set
    alive(slots.alive_prefix + "live/a", "live", px=60_000)
    alive(slots.alive_prefix + "busy/a", "busy", px=60_000)
    as_live = (slots.alive_prefix, grace_us, "live", "live/a")
    assert slots.acquire("dead/a#1", concurrency=2, heartbeats=as_live)[0] == 1  # no heartbeat
    assert slots.acquire("busy/a#1", concurrency=2, heartbeats=as_live)[0] == 1  # heartbeat
    # Within the grace a lease stays (its worker may not have written its first heartbeat yet).
    assert slots.acquire("live/a#1", concurrency=2, heartbeats=as_live)[0] == -1
    time.sleep(grace_us / MICROS + 0.05)
    assert slots.acquire("live/a#1", concurrency=2, heartbeats=as_live)[0] == 1
    assert sorted(slots.holders()) == ["busy/a#1", "live/a#1"]  # the live worker's lease stays


def test_a_restarted_worker_takes_back_its_last_lifes_slots_at_once(slots: Slots) -> None:
    slots.client.set(slots.alive_prefix + "w1/old", "w1", px=60_000)  # not yet expired
    assert slots.acquire("w1/old#7", concurrency=1)[0] == 1
    assert slots.acquire("w2/x#1", concurrency=1)[0] == -1  # another worker: waits
    restarted = (slots.alive_prefix, LONG_LEASE_US, "w1", "w1/new")
    assert slots.acquire("w1/new#1", concurrency=1, heartbeats=restarted)[0] == 1
    assert slots.holders() == ["w1/new#1"]


def test_autothrottle_delay_published_by_one_worker_slows_every_worker(slots: Slots) -> None:
    floor_us, throttled_us = 10_000, 300_000
    assert slots.acquire("w1:1", concurrency=5, delay_us=floor_us) == (1, 0, 0)
    slots.release("w1:1", delay_us=throttled_us)  # w1's AutoThrottle backed off
    time.sleep(floor_us / MICROS)
    # Past w1's floor delay; the next start is still ruled by it (set at acquire)...
    assert slots.acquire("w2:1", concurrency=5, delay_us=floor_us) == (1, 0, throttled_us)
    # ...but that grant moved the next start by the shared, larger delay.
    answer, wait, shared = slots.acquire("w3:1", concurrency=5, delay_us=floor_us)
    assert answer == 0 and shared == throttled_us and wait > floor_us
    slots.release("w2:1")  # a worker without AutoThrottle leaves the shared delay alone
    assert slots.acquire("w3:1", concurrency=5, delay_us=floor_us)[2] == throttled_us


# --- the component a worker runs ---------------------------------------------------------------


def politeness_of(redis_url: str, prefix: str, **settings: Any) -> DomainPoliteness | None:
    profile = importlib.import_module("settings.distributed")
    values = {
        **{name: getattr(profile, name) for name in dir(profile) if name.isupper()},
        "REDIS_URL": redis_url,
        "REDIS_KEY_PREFIX": prefix,
        **settings,
    }
    return DomainPoliteness.from_crawler(get_crawler(Spider, values))


def test_without_redis_each_worker_keeps_scrapys_own_slots(redis_url: str) -> None:
    assert politeness_of("", "nh") is None
    assert politeness_of(redis_url, "nh", POLITENESS_SHARED_ENABLED=False) is None


def test_robots_txt_crawl_delay_raises_the_delay_between_requests(
    redis_url: str, redis_prefix: str
) -> None:
    politeness = politeness_of(redis_url, redis_prefix)
    assert politeness is not None
    # What Scrapy's RobotsTxtMiddleware sends once it has read a host's robots.txt.
    for host, body in [("slow.test", b"User-agent: *\nCrawl-delay: 2\n"),
                       ("plain.test", b"User-agent: *\nDisallow: /private\n")]:  # fmt: skip
        politeness.crawler.signals.send_catch_log(
            signals.robots_parsed,
            robotparser=ProtegoRobotParser(body, None),
            request=Request(f"http://{host}/first"),
        )
    assert politeness.floor_delay("slow.test", Request("http://slow.test/a")) == 2.0
    assert politeness.floor_delay("plain.test", Request("http://plain.test/a")) == 0.5
    assert politeness.floor_delay("new.test", Request("http://new.test/a")) == 0.5  # not read yet


class BrokenRobotParser(ProtegoRobotParser):
    def crawl_delay(self, user_agent: str | bytes) -> float | None:
        raise ValueError("a parser bug")


def test_a_robots_parser_that_raises_costs_the_crawl_delay_and_is_logged_whole(
    redis_url: str, redis_prefix: str, caplog: pytest.LogCaptureFixture
) -> None:
    politeness = politeness_of(redis_url, redis_prefix)
    assert politeness is not None
    for host in ("a.test", "b.test"):
        politeness.crawler.signals.send_catch_log(
            signals.robots_parsed,
            robotparser=BrokenRobotParser(b"User-agent: *\nCrawl-delay: 9\n", None),
            request=Request(f"http://{host}/first"),
        )
    assert politeness.floor_delay("a.test", Request("http://a.test/x")) == 0.5
    assert politeness.crawler.stats.get_value("politeness/crawl_delay_errors") == 2
    logged = [r for r in caplog.records if "crawl-delay unreadable" in r.getMessage()]
    assert len(logged) == 1 and logged[0].exc_info is not None  # the first, with its traceback
    assert "ValueError: a parser bug" in logged[0].getMessage()


def test_a_release_redis_missed_is_sent_when_it_answers_again(
    redis_url: str, redis_prefix: str
) -> None:
    """Redis cut between a request's start and its answer (the real server behind a
    TcpProxy): the release never raises into the download; the gate pauses the crawl, and
    when Redis answers the slot is freed at once, not when its lease runs out. A request of a
    crawl closing meanwhile is sent under Scrapy's per-process limits."""

    async def scenario(proxy: TcpProxy) -> tuple[int, int, dict[str, Any]]:
        url = redis_url.replace(":6379/", f":{proxy.port}/")
        politeness = politeness_of(url, redis_prefix, REDIS_RETRY_SECONDS=0.05)
        assert politeness is not None and politeness.gate is not None
        slot = Slot(1, 0.0, 0)  # no random delay: jitter 0 (Scrapy 2.19), randomize_delay 0 (2.18)
        token = await politeness.acquire(DOMAIN, slot, Request(f"http://{DOMAIN}/a"))
        proxy.stop()
        # No engine here, so the gate sees a closing crawl: a request it holds goes without a
        # shared slot (Scrapy's own limits only) instead of failing.
        assert await politeness.acquire(DOMAIN, slot, Request(f"http://{DOMAIN}/b")) is None
        await politeness.release(DOMAIN, token, slot)
        assert not politeness.gate.available
        held = await count_slots()
        proxy.start()
        while not politeness.gate.available:  # the gate's probe runs the recovery hooks
            await asyncio.sleep(0.05)
        return held, await count_slots(), politeness.crawler.stats.get_stats()

    async def count_slots() -> int:
        client = async_redis(redis_url)
        try:
            return await client.zcard(RedisKeys(redis_prefix).politeness_slots(DOMAIN))
        finally:
            await client.aclose()

    with TcpProxy(6379) as proxy:
        held, after, stats = asyncio.run(scenario(proxy))
    assert (held, after) == (1, 0)
    assert stats["politeness/acquired"] == 1 and stats["politeness/release_deferred"] == 1
    assert stats["politeness/unshared"] == 1
    assert stats["backend/redis/unavailable"] == 1


# --- at the publisher's server, three real workers ---------------------------------------------


def measured(tmp_path: Path, redis_url: str, **options: Any) -> dict[str, Any]:
    figures = measure_politeness(WORKERS, redis_url=redis_url, scratch=tmp_path, **options)
    logs = "\n".join((tmp_path / f"w{i + 1}.log").read_text()[-2000:] for i in range(WORKERS))
    assert figures["failed_workers"] == [], logs
    assert figures["articles"] == figures["articles_published"], logs  # none lost, none twice
    print(summary(figures))
    return figures


@pytest.mark.slow
def test_three_workers_with_the_defaults_stay_polite_at_the_server(
    tmp_path: Path, redis_url: str
) -> None:
    """CONCURRENT_REQUESTS_PER_DOMAIN = 2, DOWNLOAD_DELAY = 0.5 s, AutoThrottle on, a publisher
    that takes 0.3 s per answer: each worker alone would keep that, three together did not
    (issue 21: 3 in flight, starts 21 ms apart)."""
    figures = measured(tmp_path, redis_url)
    assert figures["limit"] == 2 and figures["delay"] == 0.5  # settings/base.py's defaults
    assert figures["max_in_flight"] <= figures["limit"]
    # The server stamps each start when its thread has read the request: a few ms of clock
    # tolerance (CLOCK_TOLERANCE_SECONDS), no more.
    assert figures["min_gap"] >= figures["delay"] - CLOCK_TOLERANCE_SECONDS
    assert figures["polite"]


@pytest.mark.slow
def test_three_workers_without_delays_never_exceed_the_domain_limit_together(
    tmp_path: Path, redis_url: str
) -> None:
    """Delays off, a slow publisher: only the concurrency limit holds the workers back; per
    worker it would let 3 x 2 requests reach one publisher at once."""
    settings = ("DOWNLOAD_DELAY=0", "AUTOTHROTTLE_ENABLED=False")
    figures = measured(tmp_path, redis_url, settings=settings, server_delay=SLOW_ANSWER_SECONDS)
    assert figures["limit"] == 2 and figures["delay"] == 0
    assert figures["max_in_flight"] == figures["limit"]  # the limit is used, and never passed


def test_the_figures_count_overlaps_and_gaps_per_publisher() -> None:
    spans = [
        RequestTiming("a.test", 0.0, 1.0),
        RequestTiming("a.test", 0.5, 1.5),  # overlaps the first: 2 in flight
        RequestTiming("a.test", 1.5, 2.0),  # starts as the second ends: still 2 at most
        RequestTiming("b.test", 0.0, 0.1),
        RequestTiming("b.test", 0.3, 0.4),
    ]
    figures = politeness_figures(spans, limit=2, delay=0.3)
    assert figures["max_in_flight_per_domain"] == {"a.test": 2, "b.test": 1}
    assert figures["min_gap_per_domain"] == {"a.test": 0.5, "b.test": 0.3}
    assert figures["requests"] == 5 and figures["polite"]
    assert not politeness_figures(spans, limit=1, delay=0.3)["polite"]
    assert not politeness_figures(spans, limit=2, delay=0.4)["polite"]
    assert politeness_figures([], limit=2, delay=0.5)["min_gap"] is None


@pytest.mark.slow
def test_bench_politeness_prints_the_figures_per_publisher() -> None:
    result = newsharvest("bench", "politeness", "--workers", "1", "--domains", "1",
                         "--articles", "2", "--server-delay", "0")  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    assert "max in flight" in result.stdout and "1 workers, politeness shared (Redis)" in (
        result.stdout
    )
    assert ": held" in result.stdout
