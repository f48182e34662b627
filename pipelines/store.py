"""Shared state plumbing: the one Redis connection factory, the one place for key names, and
where embedded (server-less) stores keep their files.

Every stage that keeps state offers two backends behind one interface: Redis when REDIS_URL is
set (shared by all workers), an embedded store under NEWSHARVEST_STATE_DIR otherwise.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any
from weakref import WeakSet

import redis
import redis.asyncio

# Seconds to wait for Redis to accept a connection before calling it down.
REDIS_CONNECT_TIMEOUT_SECONDS = 5.0
REDIS_SOCKET_TIMEOUT_SECONDS = 10.0
# Connections one client may hold. When all are busy (a committed sink batch releases hundreds
# of items at once, each with a Redis call to make) a caller waits for one instead of failing:
# redis-py's default pool raises "Too many connections" past its cap.
REDIS_MAX_CONNECTIONS = 32
# How long a caller waits for a free connection before that counts as Redis being down.
REDIS_POOL_WAIT_SECONDS = 30.0
_CLIENT_OPTIONS = {
    "max_connections": REDIS_MAX_CONNECTIONS,
    "timeout": REDIS_POOL_WAIT_SECONDS,
    "socket_connect_timeout": REDIS_CONNECT_TIMEOUT_SECONDS,
    "socket_timeout": REDIS_SOCKET_TIMEOUT_SECONDS,
    "health_check_interval": 30,
}


# Every pool made here, by URL: after an outage their idle connections are dead, and redis-py
# would find out only by failing a command on each (see drop_idle_connections).
_pools: dict[str, WeakSet[Any]] = {}


def redis_url(settings: Any) -> str | None:
    """The configured Redis URL, or None for embedded stores."""
    return (settings.get("REDIS_URL") or "").strip() or None


def sync_redis(url: str) -> redis.Redis:
    """A blocking client: for tools, benchmarks and worker processes, never the reactor."""
    pool = redis.BlockingConnectionPool.from_url(url, **_CLIENT_OPTIONS)
    _pools.setdefault(url, WeakSet()).add(pool)
    return redis.Redis.from_pool(pool)


def async_redis(url: str) -> redis.asyncio.Redis:
    """An asyncio client: what pipelines use inside the crawler (never block the reactor)."""
    pool = redis.asyncio.BlockingConnectionPool.from_url(url, **_CLIENT_OPTIONS)
    _pools.setdefault(url, WeakSet()).add(pool)
    return redis.asyncio.Redis.from_pool(pool)


async def drop_idle_connections(url: str) -> None:
    """Close the idle pooled connections of every client of `url` (they reconnect when next
    used): after Redis was unreachable they are dead, and each would fail one command."""
    for pool in list(_pools.get(url, ())):
        with contextlib.suppress(Exception):  # a pool of a loop that is gone: nothing to drop
            if isinstance(pool, redis.asyncio.ConnectionPool):
                await pool.disconnect(inuse_connections=False)
            else:
                pool.disconnect(inuse_connections=False)


def state_dir(settings: Any) -> Path:
    """Directory for embedded stores (created on demand)."""
    path = Path(settings.get("NEWSHARVEST_STATE_DIR") or ".newsharvest")
    path.mkdir(parents=True, exist_ok=True)
    return path


class RedisKeys:
    """Every Redis key newsharvest uses, under one configurable prefix (REDIS_KEY_PREFIX).

    Keys of one domain share a hash tag ({domain}) so a Redis Cluster keeps them in one slot.
    """

    def __init__(self, prefix: str = "nh") -> None:
        self.prefix = prefix.rstrip(":")

    @classmethod
    def from_settings(cls, settings: Any) -> RedisKeys:
        return cls(settings.get("REDIS_KEY_PREFIX") or "nh")

    def key(self, *parts: str) -> str:
        return ":".join((self.prefix, *parts))

    # --- notice suppression -------------------------------------------------------------

    def notice_signatures(self, domain: str) -> str:
        """ZSET: block signatures and article identities -> decayed distinct-article score."""
        return self.key("notices", f"{{{domain}}}", "signatures")

    def notice_meta(self, domain: str) -> str:
        """HASH: the domain's decay time base (t0) and decayed article total (articles)."""
        return self.key("notices", f"{{{domain}}}", "meta")

    # --- near-duplicate detection -------------------------------------------------------
    # One hash tag for the whole index: its script reads the records its buckets point to, so
    # in a Redis Cluster they must share a slot. Names stay short: at ~10 keys per indexed
    # article, every byte of a key name costs ~10 bytes of memory per article.

    def dedup_record(self, docnum: int | str) -> str:
        """An indexed article: its sketch and id (docnum comes from the content hash)."""
        return f"{self.dedup_record_prefix()}{docnum}"

    def dedup_record_prefix(self) -> str:
        return self.key("{nd}", "d", "")

    def dedup_bucket(self, bucket_id: str) -> str:
        """One LSH band value: the docnums of the articles that have it."""
        return self.key("{nd}", "b", bucket_id)

    def dedup_layout(self) -> str:
        """The fingerprint layout the index was built with (checked by every worker)."""
        return self.key("{nd}", "layout")

    # --- continuous harvesting ----------------------------------------------------------
    # One hash tag for the whole ledger: its Lua scripts touch several of these keys at once.

    def harvest_articles(self) -> str:
        """Hash: canonical article URL -> JSON ledger record (version, updated, status)."""
        return self.key("{harvest}", "articles")

    def harvest_expiry(self) -> str:
        """Sorted set: article URL scored by when it is forgotten (seen-URL TTL)."""
        return self.key("{harvest}", "articles", "expiry")

    def harvest_pending(self) -> str:
        """Sorted set: pending article URL scored by when it is handed out again."""
        return self.key("{harvest}", "pending")

    def harvest_feeds(self) -> str:
        """Hash: feed URL -> JSON FeedState (validators, hashes, interval, recent events)."""
        return self.key("{harvest}", "feeds")

    def harvest_due(self) -> str:
        """Sorted set: feed URL scored by its next poll time."""
        return self.key("{harvest}", "feeds", "due")

    def scheduler_queue(self, spider: str) -> str:
        """scrapy-redis request queue shared by the workers of a distributed crawl."""
        return self.key(f"{{{spider}}}", "requests")

    def scheduler_popped(self, spider: str, worker: str) -> str:
        """String: a worker's last pop ("<token>|<request>"), read back after a lost reply."""
        return self.key(f"{{{spider}}}", "popped", worker)

    def scheduler_dupefilter(self, spider: str) -> str:
        """Sorted set: request fingerprint scored by expiry (the TTL-bounded dupefilter)."""
        return self.key(f"{{{spider}}}", "dupefilter")

    # --- index sinks --------------------------------------------------------------------

    def sink_stream(self, name: str = "articles") -> str:
        """The stream the Redis Stream sink XADDs articles to."""
        return self.key(f"{{sink:{name}}}")

    def sink_stream_seen(self, name: str, url_digest: str) -> str:
        """fetched_at|version last added for one article: a re-crawl of it adds nothing.
        Shares the stream's hash tag, so one script may touch both in a Redis Cluster."""
        return self.key(f"{{sink:{name}}}", "seen", url_digest)

    # --- monitoring ---------------------------------------------------------------------
    # Per-domain keys expire when a domain goes quiet (MONITOR_RETENTION_SECONDS for series,
    # MONITOR_COUNTERS_TTL_SECONDS for totals); the shared ones are bounded by trimming.

    def monitor_meta(self) -> str:
        """Hash: how the crawlers bucket time (bucket_seconds, retention_seconds, ...)."""
        return self.key("mon", "meta")

    def monitor_domains(self) -> str:
        """Sorted set: every monitored domain, scored by when it was last active."""
        return self.key("mon", "domains")

    def monitor_counters(self, domain: str) -> str:
        """Hash: a domain's total counters and timings (field = counter name)."""
        return self.key("mon", f"{{{domain}}}", "counters")

    def monitor_series(self, domain: str) -> str:
        """Hash: a domain's counters per time bucket (field = "<bucket>:<counter>")."""
        return self.key("mon", f"{{{domain}}}", "series")

    def monitor_pages(self, domain: str) -> str:
        """List: a domain's recent page outcomes, oldest first ("n" NULL, "a<chars>")."""
        return self.key("mon", f"{{{domain}}}", "pages")

    def monitor_alerts(self) -> str:
        """Hash: active alerts, "<domain>|<kind>" -> alert JSON."""
        return self.key("mon", "alerts")

    def monitor_alert_log(self) -> str:
        """List: the latest alert events (fired and resolved), oldest first."""
        return self.key("mon", "alert-log")

    def monitor_workers(self) -> str:
        """Hash: crawler worker id -> JSON heartbeat (last flush, metrics URL)."""
        return self.key("mon", "workers")

    def monitor_evaluation_lock(self) -> str:
        """String with a TTL: the worker that runs the time-based alert rules this round."""
        return self.key("mon", "evaluation-lock")
