"""Shared test fixtures: real services (no fakes), isolated by unique key prefixes."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest

REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
REDIS_START_HINT = (
    "Redis is needed by this test and none answers at {url}.\n"
    "Start one with:  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save ''\n"
    "or point REDIS_URL at a running server."
)


@pytest.fixture(scope="session")
def redis_url() -> str:
    """The URL of a real, answering Redis server (fails with how to start one otherwise)."""
    import redis

    client = redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2)
    try:
        client.ping()
    except redis.exceptions.ConnectionError:
        pytest.fail(REDIS_START_HINT.format(url=REDIS_URL), pytrace=False)
    finally:
        client.close()
    return REDIS_URL


@pytest.fixture
def redis_prefix(redis_url: str) -> Iterator[str]:
    """A key prefix unique to this test; every key under it is deleted afterwards."""
    import redis

    prefix = f"nhtest:{uuid.uuid4().hex[:12]}"
    yield prefix
    client = redis.Redis.from_url(redis_url)
    try:
        keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
        if keys:
            client.delete(*keys)
    finally:
        client.close()
