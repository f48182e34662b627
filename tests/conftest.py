"""Shared test fixtures: real services (no fakes), isolated by unique key prefixes; and no test
touches the user's state or output.

Every NEWSHARVEST_* variable of the user's environment (and a plain REDIS_URL, read as the old
name of NEWSHARVEST_REDIS_URL) is dropped before anything imports the settings (tests start from
settings/base.py's defaults), and STATE_DIR and OUTPUT_DIR point into
a temporary directory: for the whole session (in-process code), and per test (subprocesses
inherit the environment). At the end of the run, an `output/`, `.newsharvest/` or
`test-artifacts/` that appeared in the checkout fails the run.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# What a run must not leave in the checkout (a user's crawl would find fixture articles there).
CHECKOUT_OUTPUTS = ("output", ".newsharvest", "test-artifacts", ".hypothesis", ".grimp_cache")

# Which servers to test against: the test run's own configuration, read before it is dropped.
REDIS_URL = os.environ.get("NEWSHARVEST_REDIS_URL") or "redis://127.0.0.1:6379/0"
POSTGRES_URL = os.environ.get("POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")

for _name in [
    name for name in os.environ if name.startswith("NEWSHARVEST_") or name == "REDIS_URL"
]:
    del os.environ[_name]
_SESSION_DIR = Path(tempfile.mkdtemp(prefix="newsharvest-tests-"))
os.environ["NEWSHARVEST_STATE_DIR"] = str(_SESSION_DIR / "state")
os.environ["NEWSHARVEST_OUTPUT_DIR"] = str(_SESSION_DIR / "output")
_PRESENT_AT_START = {name for name in CHECKOUT_OUTPUTS if (ROOT / name).exists()}


def _our_defaults_under_scrapys() -> None:
    """Components read our settings with no default of their own: a crawl always has them from
    a profile (settings/base.py). Tests build crawlers with Scrapy's `get_crawler(settings)`,
    which starts from Scrapy's defaults only; so our own settings (not Scrapy's: the pipeline
    order and middlewares stay what each test says) join Scrapy's defaults here, once."""
    from scrapy.settings import default_settings

    from settings import base

    for name in dir(base):
        if name.isupper() and not hasattr(default_settings, name):
            setattr(default_settings, name, getattr(base, name))


_our_defaults_under_scrapys()


def _hypothesis_keeps_no_database() -> None:
    """Hypothesis would keep its example database and caches in `.hypothesis/` of the checkout."""
    from hypothesis import settings
    from hypothesis.configuration import set_hypothesis_home_dir

    set_hypothesis_home_dir(_SESSION_DIR / "hypothesis")
    settings.register_profile("newsharvest", database=None)
    settings.load_profile("newsharvest")


_hypothesis_keeps_no_database()


@pytest.fixture(autouse=True)
def isolated_directories(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """This test's own STATE_DIR and OUTPUT_DIR, for every process it starts."""
    directory = tmp_path_factory.mktemp("isolated")
    monkeypatch.setenv("NEWSHARVEST_STATE_DIR", str(directory / "state"))
    monkeypatch.setenv("NEWSHARVEST_OUTPUT_DIR", str(directory / "output"))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run when it left state or output in the checkout."""
    shutil.rmtree(_SESSION_DIR, ignore_errors=True)
    left = [name for name in CHECKOUT_OUTPUTS if (ROOT / name).exists()]
    left = [name for name in left if name not in _PRESENT_AT_START]
    if left:
        print(f"\nthe test run left {', '.join(left)} in {ROOT}: a test wrote outside its tmp dir")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


POSTGRES_START_HINT = (
    "PostgreSQL is needed by this test and none answers at {url} ({error}).\n"
    "Start one (trust auth for local connections, a database named test), or point POSTGRES_URL "
    "at a running server."
)
REDIS_START_HINT = (
    "Redis is needed by this test and none answers at {url}.\n"
    "Start one with:  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save ''\n"
    "or point NEWSHARVEST_REDIS_URL at a running server."
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
    yield from _unique_prefix(redis_url)


def _unique_prefix(url: str) -> Iterator[str]:
    from crawler.core.connection import sync_redis

    prefix = f"nhtest:{uuid.uuid4().hex[:12]}"
    yield prefix
    client = sync_redis(url)  # a cluster client scans every master
    try:
        keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
        pipe = client.pipeline(transaction=False)
        for key in keys:  # one DEL each: on a cluster, the keys of one DEL must share a slot
            pipe.delete(key)
        pipe.execute()
    finally:
        client.close()


CLUSTER_MISSING = (
    "a local Redis Cluster needs {missing} (Debian: apt-get install redis-server); "
    "CI=true makes this a failure"
)


@pytest.fixture(scope="session")
def redis_cluster_url() -> Iterator[str]:
    """A real 3-master Redis Cluster started for this session from the redis-server binary on
    free loopback ports (newsharvest_bench.localcluster), torn down at the end. Without the
    binary: a skip that says so, or a failure under CI=true (CI installs it: .ci/run)."""
    from newsharvest_bench.localcluster import LocalRedisCluster, missing_binaries

    missing = missing_binaries()
    if missing:
        reason = CLUSTER_MISSING.format(missing=" and ".join(missing))
        if os.environ.get("CI", "").strip().lower() in ("1", "true", "yes"):
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    with LocalRedisCluster.started() as cluster:
        yield cluster.url


@pytest.fixture
def redis_cluster_prefix(redis_cluster_url: str) -> Iterator[str]:
    """redis_prefix on the session's Redis Cluster."""
    yield from _unique_prefix(redis_cluster_url)


@pytest.fixture(params=["redis", "redis-cluster"])
def any_redis(request: pytest.FixtureRequest) -> tuple[str, str]:
    """(URL, unique key prefix) on one Redis server, then on a 3-master Redis Cluster."""
    from tests.support.redis_backends import redis_backend

    return redis_backend(request, request.param)


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
