"""Shared test fixtures: real services (no fakes), isolated by unique key prefixes."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest

REDIS_URL = os.environ.get("NEWSHARVEST_REDIS_URL", "redis://127.0.0.1:6379/0")
POSTGRES_URL = os.environ.get("POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")
POSTGRES_START_HINT = (
    "PostgreSQL is needed by this test and none answers at {url} ({error}).\n"
    "Start one (trust auth for local connections, a database named test), or point POSTGRES_URL "
    "at a running server."
)
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


@pytest.fixture(scope="session")
def postgres_url() -> str:
    """The URL of a real, answering PostgreSQL (fails with how to start one otherwise)."""
    import psycopg

    try:
        psycopg.connect(POSTGRES_URL, connect_timeout=3).close()
    except psycopg.OperationalError as error:
        message = POSTGRES_START_HINT.format(url=POSTGRES_URL, error=" ".join(str(error).split()))
        pytest.fail(message, pytrace=False)
    return POSTGRES_URL


@pytest.fixture
def postgres_schema(postgres_url: str) -> Iterator[str]:
    """A schema name unique to this test; the schema is dropped (CASCADE) afterwards."""
    import psycopg
    from psycopg import sql

    schema = f"nhtest_{uuid.uuid4().hex[:12]}"
    yield schema
    with psycopg.connect(postgres_url, autocommit=True) as connection:
        connection.execute(
            sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema))
        )
