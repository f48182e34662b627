"""The one place that chooses a near-duplicate index: Redis when REDIS_URL is set, else SQLite.

Two shapes of one index, for two kinds of caller:

* `open_index` / `index_from_settings`: a blocking `NearDuplicateIndex`, for tools, benchmarks
  and other processes (the library API, `from pipelines.dedup import open_index`);
* `open_stage_index`: an `AsyncIndex`, for the crawler's stage (redis.asyncio: the reactor never
  blocks; the embedded index answers in microseconds, so it is called directly).

Both backends give the same verdicts (pipelines/dedup/index.py); a wrong layout (another
DEDUP_THRESHOLD than the index was built with) raises IndexLayoutError.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from crawler.core.connection import async_redis, is_redis_location, redis_url, sync_redis
from crawler.core.keys import RedisKeys
from crawler.core.paths import state_dir
from pipelines.dedup.embedded import EmbeddedNearDuplicateIndex
from pipelines.dedup.index import NearDuplicateIndex, Verdict
from pipelines.dedup.redis_index import AsyncRedisNearDuplicateIndex, RedisNearDuplicateIndex
from pipelines.fingerprints import Fingerprint, LshParams
from settings import base as defaults

EMBEDDED_FILENAME = "dedup.sqlite3"  # in STATE_DIR unless DEDUP_EMBEDDED_PATH says otherwise


class AsyncIndex(Protocol):
    """The index as the crawler's stage uses it."""

    async def open(self) -> None: ...
    async def check_fingerprint(
        self, doc_id: str, found: Fingerprint, *, add: bool = True, order_key: str = ""
    ) -> Verdict: ...
    async def close(self) -> None: ...


class EmbeddedAsyncIndex:
    """The embedded index behind the async interface (its calls take microseconds: no thread)."""

    def __init__(self, index: EmbeddedNearDuplicateIndex) -> None:
        self.index = index

    async def open(self) -> None:
        return None

    async def check_fingerprint(
        self, doc_id: str, found: Fingerprint, *, add: bool = True, order_key: str = ""
    ) -> Verdict:
        return self.index.check_fingerprint(doc_id, found, add=add, order_key=order_key)

    async def close(self) -> None:
        self.index.close()


def open_index(
    location: str | Path,
    *,
    prefix: str = defaults.REDIS_KEY_PREFIX,
    threshold: float = defaults.DEDUP_THRESHOLD,
    ttl_seconds: int = defaults.DEDUP_TTL_SECONDS,
    shards: int = defaults.DEDUP_REDIS_SHARDS,
) -> NearDuplicateIndex:
    """A Redis index for a redis://, rediss://, unix:// or redis+cluster:// URL (keys under
    `prefix`, in `shards` shards), else an embedded index in the SQLite file at that path
    (created if missing). The defaults are settings/base.py's."""
    params = LshParams.for_threshold(threshold)
    if is_redis_location(str(location)):
        client = sync_redis(str(location))
        return RedisNearDuplicateIndex(client, params, RedisKeys(prefix), ttl_seconds, shards)
    return EmbeddedNearDuplicateIndex(Path(location), params, ttl_seconds)


def index_from_settings(settings: Any) -> NearDuplicateIndex:
    """The blocking index the settings describe (REDIS_URL, DEDUP_*, REDIS_KEY_PREFIX)."""
    return open_index(
        redis_url(settings) or embedded_path(settings),
        prefix=settings.get("REDIS_KEY_PREFIX"),
        threshold=settings.getfloat("DEDUP_THRESHOLD"),
        ttl_seconds=settings.getint("DEDUP_TTL_SECONDS"),
        shards=settings.getint("DEDUP_REDIS_SHARDS"),
    )


def open_stage_index(settings: Any, params: LshParams) -> AsyncIndex:
    """The crawler stage's index: Redis when REDIS_URL is set, else the embedded one."""
    ttl = settings.getint("DEDUP_TTL_SECONDS")
    url = redis_url(settings)
    if url:
        keys = RedisKeys.from_settings(settings)
        shards = settings.getint("DEDUP_REDIS_SHARDS")
        return AsyncRedisNearDuplicateIndex(async_redis(url), params, keys, ttl, shards)
    return EmbeddedAsyncIndex(EmbeddedNearDuplicateIndex(embedded_path(settings), params, ttl))


def embedded_path(settings: Any) -> Path:
    """Where the embedded index lives (DEDUP_EMBEDDED_PATH, else in STATE_DIR)."""
    configured = (settings.get("DEDUP_EMBEDDED_PATH") or "").strip()
    return Path(configured) if configured else state_dir(settings) / EMBEDDED_FILENAME
