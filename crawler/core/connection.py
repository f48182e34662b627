"""The one Redis connection factory: every component that talks to Redis gets its client here.

Every stage that keeps state offers two backends behind one interface: Redis when REDIS_URL is
set (shared by all workers), an embedded store under STATE_DIR otherwise (crawler/core/paths.py).
Clients wait for a free pooled connection rather than failing; a Redis that does not answer
raises redis-py's ConnectionError/TimeoutError, which the outage gate (crawler/core/outage.py)
turns into a paused crawl.
"""

from __future__ import annotations

import contextlib
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
