"""Redis Stream sink: XADD every article to a stream that downstream indexers consume with a
consumer group (see `pipelines/sinks/stream_consumer.py` and the README).

Entries carry `canonical_url`, `domain`, `version`, `fetched_at` and `article` (the whole record
as JSON). The stream is capped with approximate trimming (`MAXLEN ~ SINK_REDIS_STREAM_MAXLEN`).

A stream has no upsert, so idempotence comes from a small "seen" key per article holding the
fetched_at and version last added: one Lua script per batch checks and adds atomically, so a
retried or replayed batch, or a re-crawl of an unchanged article, adds nothing; a new version
of an article is added (consumers upsert it), an older fetch replayed late is not.

An article that supersedes copies (pipelines/dedup/: it came first, they were indexed before it)
has `supersedes` in its `article` JSON: consumers delete those URLs from their index. The copies'
seen keys are marked in the same script, so a copy still on its way is not added after that.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import redis.asyncio
import redis.exceptions
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.statscollectors import StatsCollector

from crawler.core.connection import async_redis, redis_url
from crawler.core.keys import RedisKeys
from crawler.core.lua import register_lua
from pipelines.sinks.base import BatchingSink, SinkOptions
from pipelines.sinks.records import supersessions

SECONDS_PER_DAY = 86_400
URL_DIGEST_BYTES = 16

# KEYS: stream, one seen key per record, then one per superseded article. ARGV: maxlen, seen ttl,
# number of superseded articles, then per record: version, canonical_url, domain, fetched_at,
# content_hash, article JSON. Returns entries added.
ADD_SCRIPT = "redis_stream_add"  # redis_stream_add.lua beside this module


def url_digest(canonical_url: str) -> str:
    return hashlib.blake2b(canonical_url.encode("utf-8"), digest_size=URL_DIGEST_BYTES).hexdigest()


class RedisStreamSink(BatchingSink):
    """Index sink that XADDs articles to a Redis Stream (SINK_REDIS_STREAM_ENABLED + REDIS_URL)."""

    name = "redis_stream"
    backend = "redis"
    setting = "REDIS_URL"
    counts_backend_outages = False  # the Redis gate (crawler/core/outage.py) counts them

    def __init__(
        self,
        stats: StatsCollector,
        options: SinkOptions,
        url: str,
        keys: RedisKeys,
        *,
        stream_name: str = "articles",
        maxlen: int = 20_000,
        seen_seconds: int = 30 * SECONDS_PER_DAY,
    ) -> None:
        super().__init__(stats, options)
        self.url = url
        self.keys = keys
        self.stream_name = stream_name
        self.stream = keys.sink_stream(stream_name)
        self.maxlen = maxlen
        self.seen_seconds = seen_seconds
        self._client: redis.asyncio.Redis | None = None
        self._script: Any = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RedisStreamSink:
        settings = crawler.settings
        if not settings.getbool("SINK_REDIS_STREAM_ENABLED"):
            raise NotConfigured("SINK_REDIS_STREAM_ENABLED is off")
        url = redis_url(settings)
        if url is None:
            raise NotConfigured("SINK_REDIS_STREAM_ENABLED needs REDIS_URL")
        return cls(
            crawler.stats,
            SinkOptions.from_settings(settings),
            url,
            RedisKeys.from_settings(settings),
            stream_name=settings.get("SINK_REDIS_STREAM_NAME"),
            maxlen=settings.getint("SINK_REDIS_STREAM_MAXLEN"),
            seen_seconds=round(settings.getfloat("SINK_REDIS_STREAM_SEEN_DAYS") * SECONDS_PER_DAY),
        )

    def describe(self) -> str:
        where = self.url.rpartition("@")[2]  # never log a password
        return f"Redis stream {self.stream} at {where}"

    async def connect(self) -> None:
        self._client = async_redis(self.url)
        await self._client.ping()
        self._script = register_lua(self._client, "pipelines.sinks", ADD_SCRIPT)

    async def write(self, records: list[dict[str, Any]]) -> int:
        assert self._client is not None
        keys = [self.stream]
        copies = sorted(supersessions(records))
        args: list[Any] = [self.maxlen, max(1, self.seen_seconds), len(copies)]
        for record in records:
            url = record["canonical_url"]
            keys.append(self.keys.sink_stream_seen(self.stream_name, url_digest(url)))
            args += [
                record["version"],
                url,
                record.get("domain") or "",
                record["fetched_at"],
                record.get("content_hash") or "",
                json.dumps(record, ensure_ascii=False, separators=(",", ":")),
            ]
        keys += [self.keys.sink_stream_seen(self.stream_name, url_digest(url)) for url in copies]
        return int(await self._script(keys=keys, args=args))

    async def disconnect(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()

    def is_unavailable(self, error: BaseException) -> bool:
        # Refused/lost connections, timeouts, a loading or read-only server: all pass.
        return isinstance(
            error,
            redis.exceptions.ConnectionError
            | redis.exceptions.TimeoutError
            | redis.exceptions.BusyLoadingError
            | redis.exceptions.ReadOnlyError
            | OSError,
        )
