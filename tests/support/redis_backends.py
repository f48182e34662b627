"""The Redis backends a store's tests run on: one server, and a local 3-master Redis Cluster
(the session fixture `redis_cluster_url`, tests/conftest.py)."""

from __future__ import annotations

import pytest

REDIS_BACKENDS = ("redis", "redis-cluster")


def redis_backend(request: pytest.FixtureRequest, backend: str) -> tuple[str, str]:
    """(URL, unique key prefix, cleaned up after the test) of `backend` (REDIS_BACKENDS)."""
    if backend == "redis-cluster":
        names = ("redis_cluster_url", "redis_cluster_prefix")
    elif backend == "redis":
        names = ("redis_url", "redis_prefix")
    else:
        raise ValueError(f"unknown Redis backend {backend!r}")
    return request.getfixturevalue(names[0]), request.getfixturevalue(names[1])
