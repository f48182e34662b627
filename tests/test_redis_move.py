"""`newsharvest redis-move`: a harvest built on one Redis server by the product's own classes
(a ledger with claims, a near-duplicate index with copies, notices, a request queue) moved to
the session's local 3-master Redis Cluster, its index re-sharded to three shards; the source is
never changed, and the move refuses while a worker is alive."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Iterator
from typing import Any

import pytest

from crawler.cli import main
from crawler.core.connection import async_redis, sync_redis
from crawler.core.keys import (
    DEDUP_BUCKETS,
    DEDUP_RECORDS,
    RedisKeys,
    dedup_bucket_shard,
    dedup_shard_tags,
)
from crawler.core.redis_move import MoveRefused, RedisMove
from crawler.ledger import Entry, LedgerConfig, RedisHarvestState
from newsharvest_bench.neardup import ORIGINAL, near_duplicate_corpus
from pipelines.dedup import open_index
from pipelines.notices import NoticeConfig, RedisNoticeStore
from pipelines.notices.learner import Observation

SHARDS = 3  # one per master of the test cluster
TTL = 3600
NOW = 1_790_000_000.0
SPIDER = "feeds"
TTL_SLACK_MS = 60_000  # the move takes seconds: a copied TTL is at most this much shorter
ARTICLES = [f"http://a.test/{n}" for n in range(12)]
BACK_DB = 11  # the round trip's own database on the test server (the prefix is unique too)


@pytest.fixture
def target_cleanup(redis_cluster_url: str, redis_prefix: str) -> Iterator[None]:
    """The move writes the source's prefix on the cluster: delete it there afterwards."""
    yield
    client = sync_redis(redis_cluster_url)
    try:
        for key in list(client.scan_iter(match=RedisKeys(redis_prefix).pattern(), count=1000)):
            client.delete(key)
    finally:
        client.close()


def build_harvest(url: str, prefix: str) -> dict[str, Any]:
    """A harvest's state on one server; returns what the moved copy must answer alike."""
    docs = near_duplicate_corpus(40, seed=3)
    originals = [d for d in docs if d.variant == ORIGINAL][:25]
    copies = [d for d in docs if d.original_id in {o.doc_id for o in originals}]
    assert copies
    with open_index(url, prefix=prefix, ttl_seconds=TTL) as index:
        for doc in originals:
            index.check(doc.doc_id, doc.text)
        verdicts = [index.check(d.doc_id, d.text, add=False) for d in copies]
    assert {v.kind for v in verdicts} >= {"near", "new"}
    keys = RedisKeys(prefix)

    async def ledger() -> dict[str, int]:
        state = RedisHarvestState(LedgerConfig(), url, keys, owner="w1/a")
        await state.open()
        await state.register_feeds(["http://a.test/rss"])
        claims = await state.claim_entries([Entry(u, None, {}) for u in ARTICLES], NOW)
        for claim in claims[:5]:
            await state.done(claim.key, claim.version, NOW + 1)
        counts = await state.counts()
        notices = RedisNoticeStore(async_redis(url), keys, NoticeConfig())
        signature = hashlib.blake2b(b"a notice block", digest_size=8).digest()
        for n in range(3):
            article = hashlib.blake2b(f"article {n}".encode(), digest_size=8).digest()
            await notices.observe(Observation("a.test", NOW + n, (article,), (signature,), ()))
        await notices.client.aclose()
        await state.close()  # the worker stops: its heartbeat goes
        return counts

    counts = asyncio.run(ledger())
    client = sync_redis(url)
    client.zadd(keys.scheduler_queue(SPIDER), {b"a queued request": 0})
    client.close()
    return {"copies": copies, "verdicts": verdicts, "counts": counts}


def ledger_counts(url: str, keys: RedisKeys) -> dict[str, int]:
    async def counts() -> dict[str, int]:
        state = RedisHarvestState(LedgerConfig(), url, keys)
        await state.open()
        try:
            return await state.counts()
        finally:
            await state.close()

    return asyncio.run(counts())


def snapshot(url: str, prefix: str) -> dict[str, tuple[Any, int]]:
    """Every key under `prefix`: its value (DUMP's bytes differ between Redis versions) and
    its PTTL."""
    client = sync_redis(url)
    try:
        keys = [k.decode() for k in client.scan_iter(match=RedisKeys(prefix).pattern())]
        return {key: (value(client, key), client.pttl(key)) for key in keys}
    finally:
        client.close()


def value(client: Any, key: str) -> Any:
    kind = client.type(key).decode()
    read = {
        "string": client.get,
        "hash": client.hgetall,
        "set": client.smembers,
        "zset": lambda k: client.zrange(k, 0, -1, withscores=True),
        "list": lambda k: client.lrange(k, 0, -1),
    }
    return kind, read[kind](key)


def payloads(snap: dict[str, tuple[Any, int]]) -> dict[str, Any]:
    return {key: payload for key, (payload, _) in snap.items()}


def test_a_harvest_moved_to_a_cluster_answers_as_it_did_on_one_server(
    redis_url: str, redis_prefix: str, redis_cluster_url: str, target_cleanup: None
) -> None:
    built = build_harvest(redis_url, redis_prefix)
    before = snapshot(redis_url, redis_prefix)
    move = RedisMove(redis_url, redis_cluster_url, redis_prefix, dedup_shards=SHARDS)
    try:
        move.check()
        report = move.run()
    finally:
        move.close()
    assert payloads(snapshot(redis_url, redis_prefix)) == payloads(before)  # source untouched
    moved = snapshot(redis_cluster_url, redis_prefix)
    source, target = RedisKeys(redis_prefix), RedisKeys(redis_prefix, cluster=True)

    # Every near copy and exact copy of a moved article is found on the 3-shard index.
    with open_index(
        redis_cluster_url, prefix=redis_prefix, ttl_seconds=TTL, shards=SHARDS
    ) as index:
        again = [index.check(d.doc_id, d.text, add=False) for d in built["copies"]]
        assert again == built["verdicts"]
    assert ledger_counts(redis_cluster_url, target) == built["counts"]
    assert built["counts"]["pending"] == len(ARTICLES) - 5

    # Each bucket in the shard its id names; records only beside their buckets; TTLs kept.
    tags = dedup_shard_tags(SHARDS)
    record_tags: set[str] = set()
    for key in moved:
        parts = target.dedup_parts(key)
        if parts is not None and parts[0] == DEDUP_BUCKETS:
            assert parts[1] == tags[dedup_bucket_shard(parts[2], SHARDS)]
        if parts is not None and parts[0] == DEDUP_RECORDS:
            record_tags.add(parts[1])
    assert record_tags == set(tags)
    for key, (payload, pttl) in before.items():
        name = source.renamed(key, target)
        if source.dedup_parts(key) is not None or key == source.dedup_layout():
            continue  # re-sharded: checked above
        assert moved[name][0] == payload, key
        if pttl < 0:
            assert moved[name][1] == pttl, key
        else:
            assert pttl - TTL_SLACK_MS < moved[name][1] <= pttl, key
    some_record = next(k for k in before if (source.dedup_parts(k) or ("",))[0] == DEDUP_RECORDS)
    assert 0 < before[some_record][1] - TTL_SLACK_MS < TTL * 1000
    docnum = source.dedup_parts(some_record)[2]  # type: ignore[index]
    copies = [v for k, v in moved.items() if (target.dedup_parts(k) or ("", "", ""))[2] == docnum]
    assert copies and all(
        before[some_record][1] - TTL_SLACK_MS < pttl <= before[some_record][1] for _, pttl in copies
    )
    # The request queue took the cluster's name; counts per family and node add up.
    assert moved[target.scheduler_queue(SPIDER)][0] == before[source.scheduler_queue(SPIDER)][0]
    assert source.scheduler_queue(SPIDER) != target.scheduler_queue(SPIDER)
    assert sum(report.families.values()) == sum(report.nodes.values()) == len(moved)
    assert len(report.nodes) == SHARDS
    assert report.families["scheduler"] == 1 and report.families["notices"] == 2


def move(source: str, target: str, prefix: str, shards: int | None = None) -> None:
    mover = RedisMove(source, target, prefix, dedup_shards=shards)
    try:
        mover.check()
        mover.run()
    finally:
        mover.close()


def test_a_harvest_moved_to_a_cluster_and_back_to_one_shard_answers_alike(
    redis_url: str, redis_prefix: str, redis_cluster_url: str, target_cleanup: None
) -> None:
    """One server -> cluster (3 shards) -> another server's database (1 shard): the index is
    merged back, the request queue takes the one-server name again."""
    built = build_harvest(redis_url, redis_prefix)
    back = redis_url.rsplit("/", 1)[0] + f"/{BACK_DB}"
    move(redis_url, redis_cluster_url, redis_prefix, SHARDS)
    try:
        move(redis_cluster_url, back, redis_prefix, 1)
        assert payloads(snapshot(back, redis_prefix)) == payloads(snapshot(redis_url, redis_prefix))
        with open_index(back, prefix=redis_prefix, ttl_seconds=TTL) as index:
            again = [index.check(d.doc_id, d.text, add=False) for d in built["copies"]]
        assert again == built["verdicts"]
        assert ledger_counts(back, RedisKeys(redis_prefix)) == built["counts"]
    finally:
        client = sync_redis(back)
        for key in list(client.scan_iter(match=RedisKeys(redis_prefix).pattern())):
            client.delete(key)
        client.close()


def test_the_move_refuses_while_a_worker_is_alive_and_a_dry_run_writes_nothing(
    redis_url: str,
    redis_prefix: str,
    redis_cluster_url: str,
    target_cleanup: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    keys = RedisKeys(redis_prefix)

    async def beat() -> None:
        state = RedisHarvestState(LedgerConfig(), redis_url, keys, owner="w1/a")
        await state.open()
        await state.heartbeat()
        await state.client.aclose()  # not close(): the worker dies, its heartbeat lives on

    asyncio.run(beat())  # alive for HEARTBEAT_TTL_SECONDS
    argv = ["redis-move", "--from", redis_url, "--to", redis_cluster_url, "--prefix", redis_prefix]
    assert main(argv) == 1
    assert "a worker is alive on the source" in capsys.readouterr().err
    assert snapshot(redis_cluster_url, redis_prefix) == {}
    assert main([*argv, "--dry-run", "--force", "--dedup-shards", str(SHARDS)]) == 0
    printed = capsys.readouterr().out
    assert "would copy" in printed and "harvest" in printed
    assert snapshot(redis_cluster_url, redis_prefix) == {}
    assert main([*argv, "--force"]) == 0
    assert set(snapshot(redis_cluster_url, redis_prefix)) == set(snapshot(redis_url, redis_prefix))
    with pytest.raises(MoveRefused, match="already holds"):  # a second move: the target is taken
        move = RedisMove(redis_url, redis_cluster_url, redis_prefix)
        try:
            move.check(force=True)
        finally:
            move.close()


def test_the_report_lists_keys_per_family_and_node_and_the_resharding() -> None:
    from collections import Counter

    from crawler.cli.redis_move import report_text
    from crawler.core.redis_move import MoveReport

    report = MoveReport(Counter({"ledger": 3, "dedup": 12}), Counter({"10.0.0.5:6379": 15}))
    report.source_shards, report.target_shards, report.skipped = 1, 3, 2
    lines = report_text(report).splitlines()
    assert lines[:4] == ["family  keys", "------  ----", "dedup     12", "ledger     3"]
    assert "10.0.0.5:6379    15" in lines
    assert lines[-3:] == [
        "near-duplicate index: 1 -> 3 shards",
        "",
        "2 keys expired during the move (not copied)",
    ]
