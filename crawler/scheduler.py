"""scrapy-redis adapted to Scrapy 2.19 and to a crawler that runs for months.

scrapy-redis 0.9.1 works with Scrapy 2.19 except for three things this module changes, minimally:

* its scheduler passes `spider=` to the stats collector on every request and logs through
  `Spider.log()`, both deprecated by Scrapy 2.19 (a warning per request); `RedisScheduler`
  counts and logs without them;
* it opens its own Redis connection from REDIS_* settings and names its own keys; ours come from
  the one connection factory and key registry (`pipelines.store`);
* its dupefilter is a plain set that grows forever, and it fingerprints requests its own way;
  `TTLDupeFilter` keeps each fingerprint for DUPEFILTER_TTL seconds (a sorted set scored by
  expiry, checked and inserted in one atomic script that also trims what has expired) and uses
  the crawler's request fingerprinter, like Scrapy's own dupefilter.

The queue itself (a Redis sorted set by priority, `scrapy_redis.queue.PriorityQueue`) is used as
it is. Articles do not rely on the dupefilter: the harvest ledger claims them (with versions and
crash recovery) and their requests bypass it; it filters every other request.
"""

from __future__ import annotations

import importlib
import logging
from typing import Any

from scrapy.crawler import Crawler
from scrapy.http import Request
from scrapy.spiders import Spider
from scrapy.utils.misc import load_object
from scrapy_redis import defaults
from scrapy_redis.dupefilter import RFPDupeFilter
from scrapy_redis.scheduler import Scheduler

from crawler.clock import Clock, clock_from_settings
from pipelines.store import RedisKeys, redis_url, sync_redis

log = logging.getLogger(__name__)

# KEYS: the fingerprint set. ARGV: fingerprint, now, ttl. 1 = seen (and not expired), 0 = new.
_SEEN_LUA = """
local now = tonumber(ARGV[2])
local expires = redis.call('ZSCORE', KEYS[1], ARGV[1])
if expires and tonumber(expires) > now then return 1 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
return 0
"""


def _redis_for(crawler: Crawler) -> Any:
    url = redis_url(crawler.settings)
    if not url:
        raise ValueError("the distributed profile needs REDIS_URL (e.g. redis://127.0.0.1:6379/0)")
    return sync_redis(url)


class TTLDupeFilter(RFPDupeFilter):
    """Request fingerprints shared by all workers, each forgotten DUPEFILTER_TTL s after use."""

    def __init__(
        self, server: Any, key: str, ttl: float, crawler: Crawler, clock: Clock, debug: bool
    ) -> None:
        super().__init__(server, key, debug)
        self.ttl = ttl
        self.clock = clock
        self.fingerprinter = crawler.request_fingerprinter
        self._seen = server.register_script(_SEEN_LUA)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> TTLDupeFilter:
        settings = crawler.settings
        spider_name = crawler.spidercls.name if crawler.spidercls else "spider"
        return cls(
            _redis_for(crawler),
            RedisKeys.from_settings(settings).scheduler_dupefilter(spider_name),
            settings.getfloat("DUPEFILTER_TTL"),
            crawler,
            clock_from_settings(settings),
            settings.getbool("DUPEFILTER_DEBUG"),
        )

    @classmethod
    def from_spider(cls, spider: Spider) -> TTLDupeFilter:
        return cls.from_crawler(spider.crawler)

    def request_fingerprint(self, request: Request) -> str:
        return self.fingerprinter.fingerprint(request).hex()

    def request_seen(self, request: Request) -> bool:
        fingerprint = self.request_fingerprint(request)
        return self._seen(keys=[self.key], args=[fingerprint, self.clock.now(), self.ttl]) == 1

    def close(self, reason: str = "") -> None:
        """Keep the fingerprints: other workers share them, and the TTL bounds them."""


def _serializer(name: str | None) -> Any:
    """A module with loads/dumps, or None for scrapy-redis's default (pickle)."""
    return importlib.import_module(name) if name else None


class RedisScheduler(Scheduler):
    """scrapy-redis's scheduler on our Redis factory, key names and TTL dupefilter."""

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RedisScheduler:
        settings = crawler.settings
        server = _redis_for(crawler)
        server.ping()
        keys = RedisKeys.from_settings(settings)
        scheduler = cls(
            server=server,
            persist=settings.getbool("SCHEDULER_PERSIST"),
            flush_on_start=settings.getbool("SCHEDULER_FLUSH_ON_START"),
            queue_key=keys.scheduler_queue("%(spider)s"),
            queue_cls=settings.get("SCHEDULER_QUEUE_CLASS") or defaults.SCHEDULER_QUEUE_CLASS,
            dupefilter=TTLDupeFilter.from_crawler(crawler),
            idle_before_close=settings.getint("SCHEDULER_IDLE_BEFORE_CLOSE"),
            serializer=_serializer(settings.get("SCHEDULER_SERIALIZER")),
        )
        scheduler.stats = crawler.stats
        return scheduler

    def open(self, spider: Spider) -> None:
        # Upstream's open() also logs through Spider.log(), deprecated in Scrapy 2.19.
        self.spider = spider
        self.queue = load_object(self.queue_cls)(
            server=self.server,
            spider=spider,
            key=self.queue_key % {"spider": spider.name},
            serializer=self.serializer,
        )
        if self.flush_on_start:
            self.flush()
        if len(self.queue):
            log.info("joining a crawl in progress: %d request(s) queued", len(self.queue))

    def enqueue_request(self, request: Request) -> bool:
        if not request.dont_filter and self.df.request_seen(request):
            self.df.log(request, self.spider)
            return False
        self.queue.push(request)
        if self.stats:
            self.stats.inc_value("scheduler/enqueued/redis")
        return True

    def next_request(self) -> Request | None:
        request = self.queue.pop(self.idle_before_close)
        if request is not None and self.stats:
            self.stats.inc_value("scheduler/dequeued/redis")
        return request
