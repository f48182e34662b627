"""The one Redis connection factory: every component that talks to Redis gets its client here.

Every stage that keeps state offers two backends behind one interface: Redis when REDIS_URL is
set (shared by all workers), an embedded store under STATE_DIR otherwise (crawler/core/paths.py).
Clients wait for a free pooled connection rather than failing; a Redis that does not answer
raises redis-py's ConnectionError/TimeoutError, which the outage gate (crawler/core/outage.py)
turns into a paused crawl.

A Redis Cluster is named by the scheme `redis+cluster://` (or `rediss+cluster://`) with the
address of any one of its nodes, or by REDIS_CLUSTER = True beside a plain REDIS_URL: the same
two functions then give redis-py's cluster clients, which route each command (and each Lua
script, by its keys) to the node that holds the slot. Every script touches keys of one hash slot
(crawler/core/keys.py), so the components need nothing else to run on a cluster.
"""

from __future__ import annotations

import contextlib
from typing import Any
from weakref import WeakSet

import redis
import redis.asyncio
import redis.asyncio.cluster
import redis.cluster

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

# The asyncio cluster client keeps a pool per node and fails a command outright when that pool is
# full (it has no blocking pool): a cap high enough that a burst waits on Redis, not on an error.
REDIS_CLUSTER_MAX_CONNECTIONS_PER_NODE = 512
CLUSTER_SCHEME_SUFFIX = "+cluster"
REDIS_URL_SCHEMES = ("redis://", "rediss://", "unix://", "redis+cluster://", "rediss+cluster://")


# Every pool made here, by URL: after an outage their idle connections are dead, and redis-py
# would find out only by failing a command on each (see drop_idle_connections).
_pools: dict[str, WeakSet[Any]] = {}


def redis_url(settings: Any) -> str | None:
    """The configured Redis URL, or None for embedded stores; with REDIS_CLUSTER, written as a
    cluster URL (so every caller of the factory below gets a cluster client)."""
    url = (settings.get("REDIS_URL") or "").strip() or None
    if url and settings.getbool("REDIS_CLUSTER") and not is_cluster_url(url):
        scheme, rest = url.split("://", 1)
        url = f"{scheme}{CLUSTER_SCHEME_SUFFIX}://{rest}"
    return url


def is_redis_location(location: str) -> bool:
    """Whether `location` is a Redis URL (else a tool takes it for a file path)."""
    return location.startswith(REDIS_URL_SCHEMES)


def is_cluster_url(url: str) -> bool:
    return url.split("://", 1)[0].endswith(CLUSTER_SCHEME_SUFFIX)


def is_cluster_client(client: Any) -> bool:
    """Whether `client` (from this factory) talks to a Redis Cluster."""
    return isinstance(client, (redis.cluster.RedisCluster, redis.asyncio.cluster.RedisCluster))


def node_url(url: str) -> str:
    """The URL without its cluster mark: what redis-py's clients parse."""
    scheme, rest = url.split("://", 1)
    return f"{scheme.removesuffix(CLUSTER_SCHEME_SUFFIX)}://{rest}"


def sync_redis(url: str) -> Any:
    """A blocking client: for tools, benchmarks and worker processes, never the reactor.
    A redis.Redis, or a redis.cluster.RedisCluster for a cluster URL (the same commands)."""
    if is_cluster_url(url):
        return redis.cluster.RedisCluster.from_url(
            node_url(url),
            max_connections=REDIS_MAX_CONNECTIONS,
            socket_connect_timeout=REDIS_CONNECT_TIMEOUT_SECONDS,
            socket_timeout=REDIS_SOCKET_TIMEOUT_SECONDS,
        )
    pool = redis.BlockingConnectionPool.from_url(url, **_CLIENT_OPTIONS)
    _pools.setdefault(url, WeakSet()).add(pool)
    return redis.Redis.from_pool(pool)


def async_redis(url: str) -> Any:
    """An asyncio client: what pipelines use inside the crawler (never block the reactor).
    A redis.asyncio.Redis, or a redis.asyncio.cluster.RedisCluster for a cluster URL."""
    if is_cluster_url(url):
        return redis.asyncio.cluster.RedisCluster.from_url(
            node_url(url),
            max_connections=REDIS_CLUSTER_MAX_CONNECTIONS_PER_NODE,
            socket_connect_timeout=REDIS_CONNECT_TIMEOUT_SECONDS,
            socket_timeout=REDIS_SOCKET_TIMEOUT_SECONDS,
        )
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
