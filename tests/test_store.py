"""The shared Redis factory and key naming, against the real server."""

from __future__ import annotations

import asyncio

from scrapy.settings import Settings

from crawler.core.connection import REDIS_MAX_CONNECTIONS, async_redis, redis_url, sync_redis
from crawler.core.keys import RedisKeys
from crawler.core.paths import state_dir


def test_redis_url_empty_means_embedded_stores() -> None:
    assert redis_url(Settings({"REDIS_URL": ""})) is None
    assert redis_url(Settings({"REDIS_URL": " redis://h:6379/2 "})) == "redis://h:6379/2"


def test_keys_share_one_configurable_prefix() -> None:
    keys = RedisKeys.from_settings(Settings({"REDIS_KEY_PREFIX": "prod:"}))
    assert keys.key("a", "b") == "prod:a:b"
    assert RedisKeys("nh").key("x") == "nh:x"


def test_sync_and_async_clients_reach_the_real_server(redis_url: str, redis_prefix: str) -> None:
    key = RedisKeys(redis_prefix).key("probe")
    client = sync_redis(redis_url)
    client.set(key, "1")

    async def read_back() -> bytes | None:
        async_client = async_redis(redis_url)
        try:
            return await async_client.get(key)
        finally:
            await async_client.aclose()

    assert asyncio.run(read_back()) == b"1"
    client.close()


def test_state_dir_is_created(tmp_path) -> None:
    target = tmp_path / "state" / "nested"
    assert state_dir(Settings({"STATE_DIR": str(target)})) == target
    assert target.is_dir()


def test_a_burst_of_concurrent_calls_waits_for_connections_instead_of_failing(
    redis_url: str, redis_prefix: str
) -> None:
    """A committed sink batch releases hundreds of items at once, each with a Redis call to
    make: the client must queue them on its bounded pool, not raise "Too many connections"."""
    key = RedisKeys(redis_prefix).key("burst")
    burst = 20 * REDIS_MAX_CONNECTIONS

    async def run() -> list[int]:
        client = async_redis(redis_url)
        try:
            return await asyncio.gather(*(client.incr(key) for _ in range(burst)))
        finally:
            await client.aclose()

    assert sorted(asyncio.run(run())) == list(range(1, burst + 1))
