"""Redis Cluster: the one connection factory's cluster clients, the key layout on a cluster, the
single-slot rule every script is held to, and the near-duplicate index spread over every master,
on the session's local 3-master cluster (tests/conftest.py, redis_cluster_url)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import redis
from redis.crc import key_slot
from scrapy.settings import Settings

from crawler.core.connection import (
    async_redis,
    is_cluster_client,
    is_cluster_url,
    redis_url,
    sync_redis,
)
from crawler.core.keys import RedisKeys, dedup_shard_tags
from crawler.core.lua import register_lua
from pipelines.dedup import open_index
from pipelines.dedup.index import IndexLayoutError
from pipelines.fingerprints import LshParams
from settings import base as defaults
from tests.support.dedup_race import race_families

MASTERS = 3
ROOT = Path(__file__).resolve().parent.parent


def test_redis_cluster_turns_a_plain_url_into_a_cluster_url() -> None:
    plain = Settings({"REDIS_URL": "redis://127.0.0.1:7000/0"})
    assert redis_url(plain) == "redis://127.0.0.1:7000/0"
    clustered = Settings({"REDIS_URL": "redis://127.0.0.1:7000/0", "REDIS_CLUSTER": True})
    assert redis_url(clustered) == "redis+cluster://127.0.0.1:7000/0"
    assert is_cluster_url(redis_url(clustered) or "")
    tls = Settings({"REDIS_URL": "rediss+cluster://h:7000/0", "REDIS_CLUSTER": True})
    assert redis_url(tls) == "rediss+cluster://h:7000/0"  # already one: left alone


def test_one_server_keeps_its_key_names_and_a_cluster_puts_the_queue_in_the_ledger_slot() -> None:
    single = RedisKeys.from_settings(Settings({"REDIS_URL": "redis://h:6379/0"}))
    assert single.scheduler_queue("feeds") == "nh:{feeds}:requests"  # as in earlier releases
    assert single.dedup_record(7) == "nh:{nd}:d:7"
    cluster = RedisKeys.from_settings(
        Settings({"REDIS_URL": "redis://h:6379/0", "REDIS_CLUSTER": True})
    )
    ledger_slot = key_slot(cluster.harvest_articles().encode())
    for key in (cluster.scheduler_queue("feeds"), cluster.scheduler_popped("feeds", "w1")):
        assert key_slot(key.encode()) == ledger_slot, key


def test_the_factory_gives_cluster_clients_for_a_cluster_url(redis_cluster_url: str) -> None:
    client = sync_redis(redis_cluster_url)
    try:
        assert is_cluster_client(client)
        assert len(client.get_primaries()) == MASTERS
    finally:
        client.close()
    assert is_cluster_client(async_redis(redis_cluster_url))


def test_a_script_that_reaches_another_slot_is_refused_even_on_the_same_node(
    redis_cluster_url: str, redis_cluster_prefix: str
) -> None:
    """What keeps every script honest on a cluster: registered through register_lua, a script
    may touch one hash slot only (#!lua), even where another slot sits on the same node."""
    client = sync_redis(redis_cluster_url)
    try:
        own = f"{redis_cluster_prefix}:{{a}}:x"
        node = client.get_node_from_key(own)
        others = (f"{redis_cluster_prefix}:{{t{n}}}:y" for n in range(10_000))
        same_node = next(
            key
            for key in others
            if client.get_node_from_key(key) == node
            and key_slot(key.encode()) != key_slot(own.encode())
        )
        script = register_lua(client, "crawler", "ledger_outbox_clear")
        assert script(keys=[own], args=["1"]) == 0  # its own slot: fine
        first_line, body = script.script.split("\n", 1)
        assert first_line == "#!lua"
        reaching = client.register_script(
            f"{first_line}\nredis.call('SET', '{same_node}', 1)\n{body}"
        )
        with pytest.raises(redis.ResponseError, match="same slot"):
            reaching(keys=[own], args=["1"])
    finally:
        client.close()


def test_the_sharded_index_puts_a_shard_on_every_master(
    redis_cluster_url: str, redis_cluster_prefix: str
) -> None:
    client = sync_redis(redis_cluster_url)
    try:
        tags = dedup_shard_tags(MASTERS)
        nodes = {client.get_node_from_key(f"{{{tag}}}").name for tag in tags}
        assert len(nodes) == MASTERS  # the slot ranges of `redis-cli --cluster create`
        results, _ = race_families(redis_cluster_url, redis_cluster_prefix, MASTERS)
        assert results
        keys = RedisKeys(redis_cluster_prefix)
        for tag in tags:
            records = list(client.scan_iter(match=f"{keys.dedup_record_prefix(tag)}*", count=1000))
            assert records, tag  # every shard holds records: every master some of the index
    finally:
        client.close()


def test_an_index_opened_with_another_shard_count_refuses_to_start(
    redis_cluster_url: str, redis_cluster_prefix: str
) -> None:
    open_index(redis_cluster_url, prefix=redis_cluster_prefix, shards=MASTERS).close()
    with pytest.raises(Exception, match="shards=3"):
        open_index(redis_cluster_url, prefix=redis_cluster_prefix, shards=1)


def test_an_index_sharded_by_band_index_is_refused(
    redis_cluster_url: str, redis_cluster_prefix: str
) -> None:
    """Before buckets went to shards by id, band i went to shard i mod S (layout ending
    "/shards=S"): such an index cannot be read by the bucket rule, so a worker refuses it."""
    client = sync_redis(redis_cluster_url)
    try:
        band_rule = f"{LshParams.for_threshold(defaults.DEDUP_THRESHOLD).layout}/shards={MASTERS}"
        client.set(RedisKeys(redis_cluster_prefix).dedup_layout(), band_rule)
    finally:
        client.close()
    with pytest.raises(IndexLayoutError, match="by=bucket-id"):
        open_index(redis_cluster_url, prefix=redis_cluster_prefix, shards=MASTERS)


def test_bench_dedup_cluster_shows_the_index_on_every_master() -> None:
    """`newsharvest bench dedup --cluster` starts one server and a 3-master cluster itself."""
    result = subprocess.run(
        [sys.executable, "-m", "crawler.cli", "bench", "dedup", "--cluster", "--stories", "60",
         "--processes", "1", "--clients", "4"],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    out = result.stdout
    assert "1 server" in out and f"cluster, {MASTERS} masters" in out and "articles/s" in out
    cluster_nodes = out.split(f"keys, memory and CPU per node: cluster, {MASTERS} masters")[1]
    rows = [line.split() for line in cluster_nodes.splitlines() if line.startswith("127.0.0.1:")]
    assert len(rows) == MASTERS
    assert all(int(row[1]) > 0 for row in rows), rows  # every master holds keys of the index
