"""Exact and near-duplicate detection: fingerprints, both indexes (real Redis, SQLite), the
Scrapy stage, two racing processes, and crawls of the news-site fixture."""

from __future__ import annotations

import asyncio
import json
import math
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import redis
from datasketch import MinHash, MinHashLSH, bBitMinHash
from hypothesis import given, settings
from hypothesis import strategies as st
from scrapy.exceptions import DropItem
from scrapy.utils.test import get_crawler

from crawler.core.keys import RedisKeys, dedup_bucket_shard
from crawler.core.order import crawl_order_key, declared_copy_key, replay_order_key
from crawler.core.outage import BACKEND_UNAVAILABLE, RedisUnavailable
from crawler.newsroom import Newsroom
from crawler.newsroom.textgen import TextGenerator
from newsharvest_bench.bench_syndication import final_duplicates
from newsharvest_bench.neardup import ORIGINAL, SYNDICATED, near_duplicate_corpus
from newsharvest_bench.tcpproxy import TcpProxy
from pipelines.dedup import (
    Fingerprint,
    LshParams,
    NearDuplicateIndex,
    Verdict,
    content_hash,
    fingerprint,
    open_index,
)
from pipelines.dedup.embedded import EmbeddedNearDuplicateIndex
from pipelines.dedup.index import MAX_BUCKET_DOCS, IndexLayoutError
from pipelines.dedup.pipeline import DedupPipeline
from pipelines.dedup.redis_index import RedisNearDuplicateIndex
from pipelines.fingerprints import (
    LSH_HASH_VALUES,
    LSH_WEIGHTS,
    MAX_SHINGLE_WORDS,
    NUM_PERM,
    fingerprint_blocks,
    minhash,
    normalize,
    shingle_hashes,
    sketch_matches,
    true_jaccard,
)
from tests.support.commands import run_crawl
from tests.support.dedup_race import final_originals, race_families
from tests.support.redis_backends import redis_backend

ROOT = Path(__file__).resolve().parent.parent
PARAMS = LshParams.for_threshold(0.8)
TTL = 3600
CLUSTER_SHARDS = 3  # one per master of the test cluster


def story(seed: int, topic: str = "politics", paragraphs: int = 8) -> list[str]:
    return TextGenerator(seed).story(topic, paragraphs)


ORIGINAL_TEXT = "\n".join(story(1))
SYNDICATED_TEXT = (
    "By Ana Ruiz, Metro Wire\nBOSTON (Wire) \u2014 "
    + ORIGINAL_TEXT
    + "\nThis story was originally published by the Daily Herald."
)
OTHER_STORY = "\n".join(story(2))


# --- fingerprints ----------------------------------------------------------------------------


def test_content_hash_ignores_case_punctuation_and_spacing() -> None:
    assert content_hash("Hello,  World!") == content_hash("hello world")
    assert content_hash("hello world") != content_hash("hello there world")
    assert normalize("  Caf\u00e9 \u2014 \u201cOPEN\u201d\n24/7. ") == "caf\u00e9 open 24 7"
    # The item field keeps its meaning: blake2b-128 of the normalised text.
    import hashlib

    assert content_hash("A b") == hashlib.blake2b(b"a b", digest_size=16).hexdigest()


# Blocks as extraction makes them, and as hostile pages do: punctuation-only, empty, symbols,
# case folding that changes length ("\u00df" -> "ss"), underscores (word characters).
BLOCK_TEXT = st.text(
    alphabet=st.sampled_from(list("ab \u00dfIs_.\u2014\u201c'\n1\u0301\u03a3")), max_size=40
)


@settings(max_examples=300, deadline=None)
@given(blocks=st.lists(BLOCK_TEXT, max_size=8), keep=st.lists(st.booleans(), max_size=8))
def test_a_fingerprint_made_block_by_block_and_revised_is_the_joined_texts(
    blocks: list[str], keep: list[bool]
) -> None:
    """Extraction fingerprints an article block by block; the notices stage revises it for the
    blocks it keeps. Both must be exactly the fingerprint of the running text."""
    made = fingerprint_blocks(blocks, PARAMS)
    assert made == fingerprint("\n".join(blocks), PARAMS)
    if made is None:
        return
    kept = [block for block, wanted in zip(blocks, keep, strict=False) if wanted]
    assert made.revised(kept) == fingerprint("\n".join(kept), PARAMS)
    assert made.revised([*kept, "A new block."]) == fingerprint(
        "\n".join([*kept, "A new block."]), PARAMS
    )


class ComparedText(str):
    """A block text that counts the equality tests made on any such text."""

    comparisons = 0

    def __eq__(self, other: object) -> bool:
        ComparedText.comparisons += 1
        return str.__eq__(self, other)

    __hash__ = str.__hash__


def test_revising_an_article_of_many_blocks_finds_each_block_without_scanning_the_others() -> None:
    """The revision runs in the reactor: an article of tens of thousands of blocks (a hostile
    page) must not cost a scan of the blocks per block. Scanning, this revision would make
    about 12.5 million comparisons; looked up by hash, none is needed."""
    blocks = [ComparedText(f"Paragraph {i} of a very long story.") for i in range(5_000)]
    made = fingerprint_blocks(blocks, PARAMS)
    assert made is not None
    ComparedText.comparisons = 0
    revised = made.revised(blocks[1:])
    assert ComparedText.comparisons <= len(blocks)
    assert revised == fingerprint("\n".join(blocks[1:]), PARAMS)


def test_minhash_is_datasketchs_minhash_computed_for_all_shingles_at_once() -> None:
    hashes = shingle_hashes(normalize(ORIGINAL_TEXT).encode().split(b" "))
    reference = MinHash(num_perm=NUM_PERM, seed=1, hashfunc=int)
    reference.update_batch(hashes.tolist())
    assert reference.scheme == "affine32"
    assert np.array_equal(minhash(hashes), reference.hashvalues)
    bulk = MinHash.bulk([hashes.tolist()], num_perm=NUM_PERM, seed=1, hashfunc=int)[0]
    assert np.array_equal(minhash(hashes), bulk.hashvalues)


def test_sketch_similarity_is_datasketchs_b_bit_estimate() -> None:
    texts = [ORIGINAL_TEXT, SYNDICATED_TEXT, ORIGINAL_TEXT[: len(ORIGINAL_TEXT) // 2]]
    full = []
    for text in texts:
        sketch = MinHash(num_perm=NUM_PERM, seed=1, hashfunc=int)
        sketch.update_batch(shingle_hashes(normalize(text).encode().split(b" ")).tolist())
        full.append(sketch)
    prints = [fingerprint(text, PARAMS) for text in texts]
    for i, j in [(0, 1), (0, 2), (1, 2)]:
        ours = PARAMS.similarity(sketch_matches(prints[i].sketch, prints[j].sketch))
        theirs = bBitMinHash(full[i], b=4).jaccard(bBitMinHash(full[j], b=4))
        assert ours == pytest.approx(theirs, abs=1e-9)
        assert abs(ours - true_jaccard(texts[i], texts[j])) < 0.1  # ~4 standard errors


def test_bands_come_from_datasketchs_optimiser_and_confirmation_is_calibrated() -> None:
    lsh = MinHashLSH(threshold=0.8, num_perm=LSH_HASH_VALUES, weights=LSH_WEIGHTS)
    assert (PARAMS.bands, PARAMS.rows) == (lsh.b, lsh.r)
    assert PARAMS.bands * PARAMS.rows <= PARAMS.num_perm
    chance = 1 / 16

    def confirmed(j: float) -> float:  # P(agreeing positions >= min_matches) at similarity j
        p = j + (1 - j) * chance
        n = PARAMS.num_perm
        return sum(
            math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(PARAMS.min_matches, n + 1)
        )

    def candidate(j: float) -> float:
        return 1 - (1 - j**PARAMS.rows) ** PARAMS.bands

    assert 0.87 <= confirmed(0.8) <= 0.93  # CONFIRM_RECALL_AT_THRESHOLD
    assert candidate(0.8) * confirmed(0.8) > 0.85
    assert candidate(0.9) * confirmed(0.9) > 0.999
    assert confirmed(0.65) < 1e-3 and confirmed(0.05) < 1e-30
    assert LshParams.for_threshold(0.5).min_matches < PARAMS.min_matches
    for wrong in (0.0, 0.2, 0.99, 1.5):
        with pytest.raises(ValueError, match="threshold must be in"):
            LshParams.for_threshold(wrong)


def test_fingerprint_bounds_hostile_input() -> None:
    assert fingerprint("", PARAMS) is None
    assert fingerprint(" \u2014 ... !!! \n", PARAMS) is None
    huge = " ".join(f"w{i}" for i in range(MAX_SHINGLE_WORDS + 5000))
    assert fingerprint(huge, PARAMS).words == MAX_SHINGLE_WORDS
    one_word = fingerprint("Breaking", PARAMS)
    assert one_word is not None and len(one_word.sketch) == PARAMS.sketch_bytes
    mixed = "\u65b0\u95fb\u62a5\u9053 \u0623\u062e\u0628\u0627\u0631 emoji \U0001f4f0 \x00 nul"
    assert fingerprint(mixed, PARAMS) is not None


# --- both indexes, same behaviour ------------------------------------------------------------


@pytest.fixture(params=["redis", "redis-sharded", "redis-cluster", "embedded"])
def index(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[NearDuplicateIndex]:
    """One index of each kind: one Redis slot; 3 shards on one server; 3 shards on a 3-master
    Redis Cluster (one per master); SQLite."""
    if request.param != "embedded":
        backend = "redis" if request.param == "redis-sharded" else request.param
        url, prefix = redis_backend(request, backend)
        shards = 1 if request.param == "redis" else CLUSTER_SHARDS
        opened = open_index(url, prefix=prefix, ttl_seconds=TTL, shards=shards)
    else:
        opened = open_index(tmp_path / "dedup.sqlite3", ttl_seconds=TTL)
    with opened:
        yield opened


def test_first_copies_are_new_and_later_copies_name_them(index: NearDuplicateIndex) -> None:
    assert true_jaccard(ORIGINAL_TEXT, SYNDICATED_TEXT) > 0.9
    assert index.check_and_add("http://a.test/1", ORIGINAL_TEXT) is None
    assert index.check_and_add("http://b.test/1", SYNDICATED_TEXT) == "http://a.test/1"
    assert index.check_and_add("http://c.test/1", OTHER_STORY) is None
    exact = index.check("http://d.test/1", ORIGINAL_TEXT.upper().replace("\n", "  "))
    assert exact == Verdict("exact", "http://a.test/1", 1.0)
    near = index.check("http://e.test/1", SYNDICATED_TEXT)
    assert near.kind == "near" and near.duplicate_of == "http://a.test/1"
    assert near.similarity == pytest.approx(true_jaccard(ORIGINAL_TEXT, SYNDICATED_TEXT), abs=0.1)


def test_an_article_seen_again_is_not_its_own_duplicate(index: NearDuplicateIndex) -> None:
    assert index.check_and_add("http://a.test/1", ORIGINAL_TEXT) is None
    assert index.check("http://a.test/1", ORIGINAL_TEXT) == Verdict("known")
    # An updated version under the same URL is not a copy of itself ...
    updated = ORIGINAL_TEXT + "\nUpdate: officials said on Friday the vote was postponed."
    assert index.check_and_add("http://a.test/1", updated) is None
    # ... while the same update elsewhere is a copy of the first version.
    assert index.check_and_add("http://z.test/9", updated) == "http://a.test/1"


def test_duplicates_and_looks_are_not_added(index: NearDuplicateIndex) -> None:
    assert index.check("http://a.test/1", ORIGINAL_TEXT, add=False) == Verdict("new")
    assert index.check_and_add("http://b.test/1", SYNDICATED_TEXT) is None  # a.test never added
    assert index.check_and_add("http://a.test/1", ORIGINAL_TEXT) == "http://b.test/1"
    # a.test/1 was a duplicate, so it was not added: copies keep naming the first copy.
    assert index.check_and_add("http://c.test/1", ORIGINAL_TEXT) == "http://b.test/1"
    assert index.check("http://x.test/1", "", add=True) == Verdict("empty")


def test_same_topic_stories_with_the_same_people_are_not_duplicates(
    index: NearDuplicateIndex,
) -> None:
    docs = near_duplicate_corpus(120, seed=5)
    siblings = {doc.doc_id for doc in docs if doc.sibling_of}
    originals = {doc.doc_id for doc in docs if doc.variant == ORIGINAL}
    results = {doc.doc_id: index.check_and_add(doc.doc_id, doc.text) for doc in docs}
    assert siblings and not [doc_id for doc_id in siblings | originals if results[doc_id]]
    family = {doc.doc_id: doc.family for doc in docs}
    syndicated = [doc for doc in docs if doc.variant == SYNDICATED]
    assert all(family[results[doc.doc_id]] == doc.family for doc in syndicated)


# --- Redis ------------------------------------------------------------------------------------


class CountingRedis(redis.Redis):
    """The real client, counting the commands it sends."""

    sent: list[str]

    def execute_command(self, *args: Any, **options: Any) -> Any:
        self.sent.append(str(args[0]))
        return super().execute_command(*args, **options)


def test_redis_check_and_add_is_one_round_trip_and_every_key_expires(
    redis_url: str, redis_prefix: str
) -> None:
    client = CountingRedis.from_url(redis_url)
    client.sent = []
    keys = RedisKeys(redis_prefix)
    index = RedisNearDuplicateIndex(client, PARAMS, keys, TTL)
    client.sent.clear()
    assert index.check_and_add("http://a.test/1", ORIGINAL_TEXT) is None
    assert index.check_and_add("http://b.test/1", SYNDICATED_TEXT) == "http://a.test/1"
    assert index.check_and_add("http://c.test/1", OTHER_STORY) is None
    assert client.sent == ["EVALSHA"] * 3
    stored = sorted(client.scan_iter(match=f"{redis_prefix}:*"))
    records = [k for k in stored if k.startswith(keys.dedup_record_prefix().encode())]
    buckets = [k for k in stored if k.startswith(keys.dedup_bucket("").encode())]
    assert len(records) == 2 and len(buckets) == 2 * PARAMS.bands
    assert len(stored) == len(records) + len(buckets) + 1  # + the layout key
    for key in records + buckets:
        assert TTL - 5 < client.ttl(key) <= TTL
    assert client.ttl(keys.dedup_layout()) == -1
    found = fingerprint(ORIGINAL_TEXT, PARAMS)
    record = client.get(keys.dedup_record(found.docnum))
    assert record == found.sketch + b"http://a.test/1"  # 128 bytes of sketch + the id
    assert client.object("encoding", keys.dedup_bucket(found.buckets[0])) == b"int"
    client.close()


def test_redis_entries_expire_after_the_time_window(redis_url: str, redis_prefix: str) -> None:
    with open_index(redis_url, prefix=redis_prefix, ttl_seconds=1) as index:
        assert index.check_and_add("http://a.test/1", ORIGINAL_TEXT) is None
        assert index.check("http://b.test/1", SYNDICATED_TEXT, add=False).is_duplicate
        time.sleep(1.3)
        assert index.check_and_add("http://b.test/1", SYNDICATED_TEXT) is None


def test_a_shared_bucket_keeps_its_newest_documents(index: NearDuplicateIndex) -> None:
    """Documents that share a band but are not near-duplicates all stay findable through it,
    up to MAX_BUCKET_DOCS of them (the newest)."""
    rng = np.random.default_rng(0)
    sketches = [
        rng.integers(0, 256, PARAMS.sketch_bytes, dtype=np.uint8).tobytes() for _ in range(10)
    ]
    shared = "00000000beef"

    def fake(docnum: int, sketch: bytes) -> Fingerprint:
        own = tuple(f"{docnum:06x}{band:06x}" for band in range(PARAMS.bands - 1))
        return Fingerprint(f"{docnum:032x}", docnum, sketch, (shared, *own), 100)

    for k, sketch in enumerate(sketches):
        assert index.check_fingerprint(f"doc{k}", fake(k + 1, sketch)) == Verdict("new")
    # A copy of each (same sketch, only the shared bucket in common) finds the newest ones.
    found = [
        index.check_fingerprint(f"copy{k}", fake(1000 + k, sketch), add=False).duplicate_of
        for k, sketch in enumerate(sketches)
    ]
    oldest = len(sketches) - MAX_BUCKET_DOCS
    assert found == [None] * oldest + [f"doc{k}" for k in range(oldest, len(sketches))]
    # The older members are gone from storage too (a bucket's size is bounded).
    if isinstance(index, EmbeddedNearDuplicateIndex):
        query = "SELECT count(*) FROM buckets WHERE bucket = ?"
        (stored,) = index.db.execute(query, (int(shared, 16),)).fetchone()
    else:
        assert isinstance(index, RedisNearDuplicateIndex)
        band_0 = index.keys.dedup_bucket(shared, index.shard_tags[0])  # the shard of band 0
        stored = len(index.client.get(band_0).split(b","))
    assert stored == MAX_BUCKET_DOCS


def test_redis_refuses_an_index_built_with_other_parameters(
    redis_url: str, redis_prefix: str
) -> None:
    open_index(redis_url, prefix=redis_prefix).close()
    assert LshParams.for_threshold(0.5).layout != PARAMS.layout
    with pytest.raises(IndexLayoutError, match="REDIS_KEY_PREFIX"):
        open_index(redis_url, prefix=redis_prefix, threshold=0.5)


# --- embedded ---------------------------------------------------------------------------------


def test_embedded_index_persists_between_runs(tmp_path: Path) -> None:
    path = tmp_path / "state" / "dedup.sqlite3"
    with open_index(path) as index:
        assert index.check_and_add("http://a.test/1", ORIGINAL_TEXT) is None
    with open_index(path) as index:
        assert index.check_and_add("http://b.test/1", SYNDICATED_TEXT) == "http://a.test/1"
    with pytest.raises(IndexLayoutError, match="STATE_DIR"):
        open_index(path, threshold=0.5)


def test_embedded_entries_expire_after_the_time_window(tmp_path: Path) -> None:
    now = [1_000_000.0]
    index = EmbeddedNearDuplicateIndex(tmp_path / "d.sqlite3", PARAMS, 60, clock=lambda: now[0])
    assert index.check_and_add("http://a.test/1", ORIGINAL_TEXT) is None
    now[0] += 59
    assert index.check("http://b.test/1", SYNDICATED_TEXT, add=False).is_duplicate
    now[0] += 2
    assert index.check("http://b.test/1", SYNDICATED_TEXT, add=False) == Verdict("new")
    index.sweep()
    assert index.db.execute("SELECT count(*) FROM records").fetchone() == (0,)
    assert index.db.execute("SELECT count(*) FROM buckets").fetchone() == (0,)
    index.close()


# --- two workers at once ------------------------------------------------------------------------


def assert_each_family_found_once(results: list, spans: list[tuple[float, float]]) -> None:
    assert max(began for began, _ in spans) < min(ended for _, ended in spans), "no overlap"
    firsts = Counter(family for family, _, duplicate_of, *_ in results if duplicate_of is None)
    families = {family for family, *_ in results}
    assert len(families) >= 40
    assert {family: firsts[family] for family in families} == dict.fromkeys(families, 1)
    first_of = {family: doc for family, doc, duplicate_of, *_ in results if duplicate_of is None}
    assert all(dup == first_of[family] for family, _, dup, *_ in results if dup is not None)


def test_two_processes_racing_keyed_copies_in_every_shard_at_once_leave_the_earliest_original(
    redis_cluster_url: str, redis_cluster_prefix: str
) -> None:
    """With order keys each check goes to all shards at once. Worker A checks a family's
    members in key order, worker B the same texts (own ids, same keys) in reverse: once the
    corrections are applied (`superseded`), every family has exactly one original, its
    earliest member by key then id (A's copy of the first text), and every other member leads
    to it."""
    results, spans = race_families(
        redis_cluster_url, redis_cluster_prefix, CLUSTER_SHARDS, keyed=True
    )
    assert max(began for began, _ in spans) < min(ended for _, ended in spans), "no overlap"
    final = final_originals(results)
    members: dict[int, list[tuple[str, str]]] = {}
    for family, doc_id, _, _, key in results:
        members.setdefault(family, []).append((key, doc_id))
    assert len(members) >= 40
    for family, docs in members.items():
        earliest = min(docs)[1]  # by key, then id: A's copy of the family's first text
        assert earliest.startswith("A|")
        assert {doc: final[doc] for _, doc in docs} == {doc: earliest for _, doc in docs}, family
    superseded = sum(len(row[3]) for row in results)
    assert superseded > 0  # B met copies before their originals: the corrections were needed


def test_two_processes_adding_the_same_families_find_each_once_in_redis(
    redis_url: str, redis_prefix: str
) -> None:
    results, spans = race_families(redis_url, redis_prefix)
    assert_each_family_found_once(results, spans)


def test_two_processes_adding_the_same_families_find_each_once_in_a_sharded_cluster_index(
    redis_cluster_url: str, redis_cluster_prefix: str
) -> None:
    """The shards are asked one after the other when adding: still one original per family."""
    results, spans = race_families(redis_cluster_url, redis_cluster_prefix, CLUSTER_SHARDS)
    assert_each_family_found_once(results, spans)


def test_two_processes_adding_the_same_families_find_each_once_embedded(tmp_path: Path) -> None:
    results, spans = race_families(str(tmp_path / "dedup.sqlite3"), "unused")
    assert_each_family_found_once(results, spans)


# --- the Scrapy stage ---------------------------------------------------------------------------


def article(url: str, text: str, domain: str = "b.test") -> dict[str, Any]:
    return {"url": url, "canonical_url": url, "domain": domain, "text": text}


def make_pipeline(**settings: Any) -> tuple[DedupPipeline, Any]:
    crawler = get_crawler(settings_dict={"DEDUP_ENABLED": True, **settings})
    return DedupPipeline.from_crawler(crawler), crawler.stats


@pytest.mark.parametrize("backend", ["redis", "embedded"])
def test_pipeline_flags_copies_and_counts_them_per_domain(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    settings: dict[str, Any] = {"STATE_DIR": str(tmp_path), "REDIS_URL": ""}
    if backend == "redis":
        settings["REDIS_URL"] = request.getfixturevalue("redis_url")
        settings["REDIS_KEY_PREFIX"] = request.getfixturevalue("redis_prefix")

    async def scenario() -> list[dict[str, Any]]:
        pipeline, stats = make_pipeline(**settings)
        await pipeline.open_spider()
        items = [
            await pipeline.process_item(article("http://a.test/1", ORIGINAL_TEXT, "a.test"))
            for _ in range(2)  # the same article twice: not a copy of itself
        ]
        items.append(await pipeline.process_item(article("http://b.test/1", SYNDICATED_TEXT)))
        items.append(await pipeline.process_item(article("http://b.test/2", OTHER_STORY)))
        items.append(await pipeline.process_item({"url": "http://b.test/3", "text": ""}))
        await pipeline.close_spider()
        return [*items, stats.get_stats()]

    *items, stats = asyncio.run(scenario())
    assert [item.get("duplicate_of") for item in items[:4]] == [None, None, "http://a.test/1", None]
    assert items[2]["content_hash"] == content_hash(SYNDICATED_TEXT)
    assert stats["dedup/new"] == 2 and stats["dedup/known"] == 1 and stats["dedup/near"] == 1
    assert stats["domain/b.test/duplicates"] == 1 and "domain/a.test/duplicates" not in stats
    assert stats["dedup/skipped/no_text"] == 1


def test_pipeline_drops_copies_when_told(tmp_path: Path) -> None:
    async def scenario() -> None:
        pipeline, stats = make_pipeline(
            STATE_DIR=str(tmp_path),
            DEDUP_EMBEDDED_PATH=":memory:",  # nothing written to the state directory
            REDIS_URL="",
            DEDUP_DROP_DUPLICATES=True,
        )
        await pipeline.open_spider()
        await pipeline.process_item(article("http://a.test/1", ORIGINAL_TEXT))
        with pytest.raises(DropItem, match=r"duplicate \(near\) of http://a.test/1"):
            await pipeline.process_item(article("http://b.test/1", SYNDICATED_TEXT))
        await pipeline.close_spider()
        assert stats.get_value("dedup/dropped") == 1

    asyncio.run(scenario())
    assert not list(tmp_path.iterdir())


def test_pipeline_stops_the_crawl_when_redis_is_down_at_start(caplog) -> None:
    # Nothing listens on port 1 of the loopback interface: connections are refused.
    pipeline, stats = make_pipeline(REDIS_URL="redis://127.0.0.1:1/0")
    with pytest.raises(RedisUnavailable) as stopped:
        asyncio.run(pipeline.open_spider())
    assert stopped.value.reason == BACKEND_UNAVAILABLE  # Scrapy closes the crawl quietly
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert len(errors) == 1 and "127.0.0.1:1/0" in errors[0] and "REDIS_URL" in errors[0]
    assert stats.get_value("backend/redis/unavailable_at_start") == 1


def test_pipeline_passes_articles_unflagged_when_the_crawl_closes_during_an_outage(
    redis_url: str, redis_prefix: str
) -> None:
    """Mid-crawl an article waits for Redis (the end-to-end outage tests in test_backends.py);
    a crawl that is not running (here: none at all) cannot wait, and the article goes on."""

    async def scenario(proxy: TcpProxy) -> tuple[list[Any], Any]:
        url = redis_url.replace(":6379/", f":{proxy.port}/")
        pipeline, stats = make_pipeline(REDIS_URL=url, REDIS_KEY_PREFIX=redis_prefix)
        await pipeline.open_spider()
        proxy.stop()
        first = await pipeline.process_item(article("http://b.test/1", SYNDICATED_TEXT))
        second = await pipeline.process_item(article("http://b.test/2", SYNDICATED_TEXT))
        await pipeline.close_spider()
        return [first["duplicate_of"], second["duplicate_of"]], stats

    with TcpProxy(6379) as proxy:
        flags, stats = asyncio.run(scenario(proxy))
    assert flags == [None, None]
    assert stats.get_value("dedup/unchecked") == 2
    assert stats.get_value("backend/redis/unavailable") == 1  # one outage, however many errors
    assert stats.get_value("backend/redis/errors") >= 1


def test_the_index_needs_no_scrapy() -> None:
    code = (
        "import sys; sys.modules['scrapy'] = None\n"  # any `import scrapy` now fails
        "import tempfile, pathlib\n"
        "from pipelines.dedup import open_index\n"
        "path = pathlib.Path(tempfile.mkdtemp()) / 'd.sqlite3'\n"
        "with open_index(path) as index:\n"
        "    assert index.check_and_add('a', 'one two three four five six') is None\n"
        "    assert index.check_and_add('b', 'One, two; three four five six!') == 'a'\n"
        "try:\n"
        "    import pipelines.dedup.pipeline\n"
        "except ImportError:\n"
        "    print('pipeline needs scrapy, index does not')\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "pipeline needs scrapy, index does not"


# --- crawls of the fixture -------------------------------------------------------------------


def read_items(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.mark.slow
def test_syndicated_copies_harvested_later_name_their_original(
    tmp_path: Path, redis_url: str, redis_prefix: str
) -> None:
    """Originals are harvested first, copies on a later run (as continuous harvesting sees
    them): with the shared Redis index every copy names its original and no original is
    flagged. Threshold 0.6 so that the fixture's hardest copy (a paragraph of five dropped,
    Jaccard 0.68) counts too."""
    room = Newsroom(seed=1)
    copies = {page.url: page.duplicate_of for page in room.articles() if page.duplicate_of}
    copy_domains = {room.pages[url].domain for url in copies}
    later = [url for url in room.feed_urls if url.split("/")[2] in copy_domains]
    first = [url for url in room.feed_urls if url not in later]
    settings = (f"REDIS_URL={redis_url}", f"REDIS_KEY_PREFIX={redis_prefix}", "DEDUP_THRESHOLD=0.6")
    items = []
    for run, feeds in (("first", first), ("later", later)):
        output = tmp_path / run / "articles.jsonl"
        output.parent.mkdir()
        result, _ = run_crawl(room, output, *settings, feeds=feeds)
        assert result.returncode == 0, result.stderr[-3000:]
        items += read_items(output)
    flagged = {item["url"]: item["duplicate_of"] for item in items if item["duplicate_of"]}
    assert len(copies) == 4 and flagged == copies
    assert (
        min(true_jaccard(room.pages[c].text, room.pages[o].text) for c, o in copies.items()) < 0.7
    )


def test_bench_dedup_reports_its_figures(redis_url: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "crawler.cli", "bench", "dedup", "--stories", "60",
         "--redis-url", redis_url],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    out = result.stdout
    for line in ("J >= 0.9", "0.8 <= J < 0.9", "false positives:", "articles/s", "Redis memory:"):
        assert line in out
    assert "identical" in out  # our MinHash values equal datasketch's
    assert "verdicts differ on 0 of" in out  # embedded and Redis agree


# --- which copy is the original: order keys, not arrival ---------------------------------------


def dated(url: str, text: str, published: str | None, **fields: Any) -> dict[str, Any]:
    item = article(url, text, url.split("/")[2])
    item.update(published=published, fetched_at="2026-03-01T10:00:00+00:00", **fields)
    return item


def stage_settings(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> dict:
    settings: dict[str, Any] = {"STATE_DIR": str(tmp_path), "REDIS_URL": ""}
    if backend == "redis":
        settings["REDIS_URL"] = request.getfixturevalue("redis_url")
        settings["REDIS_KEY_PREFIX"] = request.getfixturevalue("redis_prefix")
    elif backend == "redis-cluster-sharded":  # the async index, shard by shard
        settings["REDIS_URL"] = request.getfixturevalue("redis_cluster_url")
        settings["REDIS_KEY_PREFIX"] = request.getfixturevalue("redis_cluster_prefix")
        settings["DEDUP_REDIS_SHARDS"] = CLUSTER_SHARDS
    return settings


def through_stage(settings: dict[str, Any], items: list[dict[str, Any]]) -> list[dict]:
    async def scenario() -> list[dict[str, Any]]:
        pipeline, _ = make_pipeline(**settings)
        await pipeline.open_spider()
        done = [await pipeline.process_item(dict(item)) for item in items]
        await pipeline.close_spider()
        return done

    return asyncio.run(scenario())


@pytest.mark.parametrize("backend", ["redis", "redis-cluster-sharded", "embedded"])
def test_a_copy_fetched_first_gives_way_to_the_earlier_published_original(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    original = dated("http://a.test/1", ORIGINAL_TEXT, "2026-03-01T08:00:00+00:00")
    copy = dated("http://b.test/1", SYNDICATED_TEXT, "2026-03-01T09:30:00+00:00")
    another = dated("http://c.test/1", SYNDICATED_TEXT + "\nShared.", "2026-03-01T11:00:00Z")
    settings = stage_settings(backend, request, tmp_path)
    first, second, third = through_stage(settings, [copy, original, another])
    assert first["duplicate_of"] is None  # nothing earlier was known then
    assert second["duplicate_of"] is None and second["supersedes"] == ["http://b.test/1"]
    assert third["duplicate_of"] == "http://a.test/1"  # the index now holds the original
    assert second["order_key"] < first["order_key"]
    assert final_duplicates([first, second, third]) == {
        "http://b.test/1": "http://a.test/1",
        "http://a.test/1": None,
        "http://c.test/1": "http://a.test/1",
    }


@pytest.mark.parametrize("backend", ["redis", "embedded"])
@pytest.mark.parametrize("copy_first", [True, False])
def test_a_page_naming_the_other_as_canonical_is_always_the_copy(
    backend: str, copy_first: bool, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """Even published earlier than the page it names (a wire copy dated before the publisher's
    own page went up)."""
    original = dated("http://a.test/1", ORIGINAL_TEXT, "2026-03-01T08:00:00+00:00")
    copy = dated("http://b.test/1", SYNDICATED_TEXT, "2026-03-01T07:00:00+00:00",
                 canonical_url="http://a.test/1")  # fmt: skip
    settings = stage_settings(backend, request, tmp_path)
    done = through_stage(settings, [copy, original] if copy_first else [original, copy])
    assert final_duplicates(done) == {"http://b.test/1": "http://a.test/1", "http://a.test/1": None}
    if not copy_first:
        assert done[1]["duplicate_of"] == "http://a.test/1"


COPIES = [
    dated("http://a.test/1", ORIGINAL_TEXT, "2026-03-01T08:00:00+00:00"),
    dated("http://b.test/1", SYNDICATED_TEXT, "2026-03-01T09:00:00+00:00"),
    dated("http://c.test/1", SYNDICATED_TEXT + "\nShared.", None),  # fetched 10:00: last
    dated("http://d.test/1", ORIGINAL_TEXT, "2026-03-01T09:00:00+00:00"),  # exact, ties b
    dated("http://e.test/1", OTHER_STORY, "2026-03-01T07:00:00+00:00"),
]


@settings(max_examples=25, deadline=None)
@given(order=st.permutations(range(len(COPIES))))
def test_every_arrival_order_ends_with_the_same_duplicate_of(
    order: list[int], tmp_path_factory: pytest.TempPathFactory
) -> None:
    path = tmp_path_factory.mktemp("order")
    settings = {"STATE_DIR": str(path), "REDIS_URL": "", "DEDUP_EMBEDDED_PATH": ":memory:"}
    done = through_stage(settings, [COPIES[i] for i in order])
    assert final_duplicates(done) == {
        "http://a.test/1": None,
        "http://b.test/1": "http://a.test/1",
        "http://c.test/1": "http://a.test/1",
        "http://d.test/1": "http://a.test/1",
        "http://e.test/1": None,
    }


def test_order_keys_sort_as_the_rule_states() -> None:
    published = crawl_order_key(
        "2026-03-01T08:00:00+02:00", "2026-03-02T00:00:00Z", "http://b.test"
    )
    later_fetch = crawl_order_key(None, "2026-03-01T07:00:00Z", "http://a.test")
    assert published < later_fetch  # 06:00 UTC published before 07:00 UTC fetched
    same = crawl_order_key(None, "2026-03-01T07:00:00Z", "http://b.test")
    assert later_fetch < same  # the same second: the URL decides, never arrival
    assert crawl_order_key("not a date", None, "http://a.test") == ""  # no date: arrival order
    assert crawl_order_key("0001-01-01", "2026-03-01T07:00:00Z", "u") == crawl_order_key(
        None, "2026-03-01T07:00:00Z", "u"
    )
    assert replay_order_key(0, 10**9) < replay_order_key(1, 0) < replay_order_key(1, 5)
    assert later_fetch < replay_order_key(0, 0) < declared_copy_key(published)
    with pytest.raises(ValueError):
        replay_order_key(-1, 0)


# --- the order-key rule on a sharded index (DEDUP_REDIS_SHARDS > 1) ---------------------------

# Arrival order with copies first: b, then c (a copy of b), then d (earlier than b: supersedes
# it), then a (earliest, an exact copy of d's text: supersedes d), then another story, then a late
# copy of b's text (an exact copy of nothing left: b's record is gone).
SHARDED_ARRIVALS = [
    ("http://b.test/1", SYNDICATED_TEXT, "2026-03-01T09:00:00Z"),
    ("http://c.test/1", SYNDICATED_TEXT + "\nShared.", "2026-03-01T10:00:00Z"),
    ("http://d.test/1", ORIGINAL_TEXT, "2026-03-01T08:30:00Z"),
    ("http://a.test/1", ORIGINAL_TEXT, "2026-03-01T08:00:00Z"),
    ("http://e.test/1", OTHER_STORY, "2026-03-01T07:00:00Z"),
    ("http://f.test/1", SYNDICATED_TEXT, "2026-03-01T12:00:00Z"),
]


def test_the_order_key_rule_gives_the_same_verdicts_on_one_shard_and_three(
    redis_cluster_url: str, redis_cluster_prefix: str
) -> None:
    verdicts = {}
    for shards in (1, CLUSTER_SHARDS):
        prefix = f"{redis_cluster_prefix}:s{shards}"
        with open_index(redis_cluster_url, prefix=prefix, ttl_seconds=TTL, shards=shards) as index:
            verdicts[shards] = [
                index.check(doc_id, text, order_key=key) for doc_id, text, key in SHARDED_ARRIVALS
            ]
            assert isinstance(index, RedisNearDuplicateIndex)
            records = {
                tag: index.client.get(index.keys.dedup_record(found.docnum, tag))
                for found in [fingerprint(SYNDICATED_TEXT, PARAMS)]
                for tag in index.shard_tags
            }
            # b was superseded: its record left every shard, not only those d matched it in.
            assert records == dict.fromkeys(index.shard_tags), shards
            original = fingerprint(ORIGINAL_TEXT, PARAMS)
            for tag in index.shard_tags:  # every shard's copy carries a's order key
                stored = index.client.get(index.keys.dedup_record(original.docnum, tag))
                assert stored == original.sketch + b"http://a.test/1\x002026-03-01T08:00:00Z"
    kinds = [(v.kind, v.duplicate_of, v.superseded) for v in verdicts[CLUSTER_SHARDS]]
    assert kinds == [
        ("new", None, ()),
        ("near", "http://b.test/1", ()),
        ("new", None, ("http://b.test/1",)),
        ("new", None, ("http://d.test/1",)),
        ("new", None, ()),
        ("near", "http://a.test/1", ()),  # b's record (same text) was taken out
    ]
    assert verdicts[CLUSTER_SHARDS] == verdicts[1]


def bucket_in(shard: int, n: int) -> str:
    """A bucket id (12 hex digits, as bucket_ids makes) that falls in `shard` of three."""
    bucket = f"{n * CLUSTER_SHARDS + shard:012x}"
    assert dedup_bucket_shard(bucket, CLUSTER_SHARDS) == shard
    return bucket


SHARED_BUCKETS = 10**6  # the shared buckets' numbers, above any fingerprint's own


def fake_fingerprint(docnum: int, sketch: bytes, shared: dict[int, str]) -> Fingerprint:
    """A fingerprint whose bands are its own but for `shared` (band -> bucket id); its own
    bucket of band i is in shard i mod 3, so it has bands in every shard."""
    own = [
        shared.get(band, bucket_in(band % CLUSTER_SHARDS, docnum * 100 + band))
        for band in range(PARAMS.bands)
    ]
    return Fingerprint(f"{docnum:032x}", docnum, sketch, tuple(own), 100)


def interleaved(index: RedisNearDuplicateIndex, plan: Any) -> None:
    """Runs the index's script calls as `plan(calls, ask_all)` says (the shards' calls of one
    check, and the real sender), instead of all at once."""
    ask_all = index._ask_all
    index._ask_all = lambda calls: plan(calls, ask_all)  # type: ignore[method-assign]


def test_a_racer_met_at_one_shard_is_withdrawn_from_the_shards_that_added_it(
    redis_cluster_url: str, redis_cluster_prefix: str
) -> None:
    """Y is added at shard 0; before its check reaches shards 1 and 2, X (earlier by order key,
    sharing a band with Y only in shard 1) is added everywhere. Y is a copy of X, and its record
    leaves shard 0 and shard 2 again: a later text that shares a band with Y only in shard 0 is
    new, as on one server (where Y, a copy, was never indexed)."""
    sketch = bytes(range(PARAMS.sketch_bytes))
    shared = bucket_in(1, SHARED_BUCKETS)
    x = fake_fingerprint(1, sketch, {0: bucket_in(0, SHARED_BUCKETS + 1), 1: shared})
    y_only = bucket_in(0, SHARED_BUCKETS + 2)
    y = fake_fingerprint(2, sketch, {0: y_only, 1: shared})
    z = fake_fingerprint(3, sketch, {0: y_only})  # meets Y's bucket in shard 0 only
    with open_index(
        redis_cluster_url, prefix=redis_cluster_prefix, ttl_seconds=TTL, shards=CLUSTER_SHARDS
    ) as index:
        assert isinstance(index, RedisNearDuplicateIndex)
        raced: list[Verdict] = []

        def plan(calls: list, ask_all: Any) -> list:
            if raced or len(calls) != CLUSTER_SHARDS:
                return ask_all(calls)
            raced.append(Verdict("empty"))
            at_shard_0 = ask_all(calls[:1])
            raced[0] = index.check_fingerprint("X", x, order_key="k1")
            return at_shard_0 + ask_all(calls[1:])

        interleaved(index, plan)
        verdict = index.check_fingerprint("Y", y, order_key="k2")
        assert raced == [Verdict("new")]  # X never saw Y (no band in common in shard 0)
        assert (verdict.kind, verdict.duplicate_of, verdict.superseded) == ("near", "X", ())
        for tag in index.shard_tags:
            assert index.client.get(index.keys.dedup_record(y.docnum, tag)) is None
        later = index.check_fingerprint("Z", z, order_key="k3", add=False)
        assert later == Verdict("new")
        assert index.check_fingerprint("W", y, order_key="k0", add=False) == Verdict(
            "new", superseded=("X",)
        )


@pytest.mark.parametrize("keys", [("k1", "k2"), ("k", "k")])
def test_two_racers_checking_every_shard_at_once_find_one_original(
    keys: tuple[str, str], redis_cluster_url: str, redis_cluster_prefix: str
) -> None:
    """The worst interleaving of two copies checked in every shard at once: Y is added at shard
    0, X at shard 1, then X meets Y at shard 0 and Y meets X at shard 1, before either has
    its answers. X comes first by order key, or by id when the keys are equal: X supersedes Y
    wherever it meets it, Y is a copy of X. (Were equal keys "before" for both, each would be
    a copy of the other and the story would have no original.)"""
    x = fingerprint(ORIGINAL_TEXT, PARAMS)
    assert x is not None
    with open_index(
        redis_cluster_url, prefix=redis_cluster_prefix, ttl_seconds=TTL, shards=CLUSTER_SHARDS
    ) as index:
        assert isinstance(index, RedisNearDuplicateIndex)
        y_calls: list = []
        y_rest: list = []
        verdicts: dict[str, Verdict] = {}

        def plan(calls: list, ask_all: Any) -> list:
            if len(calls) != CLUSTER_SHARDS or y_rest or "X" in verdicts:
                return ask_all(calls)  # the drops, and anything after the race
            if not y_calls:  # Y's check: shard 0 now, X's check in between
                y_calls.extend(calls)
                at_shard_0 = ask_all(calls[:1])
                verdicts["X"] = index.check_fingerprint("X", x, order_key=keys[0])
                return at_shard_0 + y_rest
            at_1, at_0 = ask_all(calls[1:2]), ask_all(calls[:1])  # X's check: shards 1, 0,
            y_rest.extend(ask_all(y_calls[1:]))  # then Y's at shards 1 and 2, then X's last
            return at_0 + at_1 + ask_all(calls[2:])

        interleaved(index, plan)
        y = index.check_fingerprint("Y", x, order_key=keys[1])
        assert verdicts["X"] == Verdict("new", superseded=("Y",))
        assert (y.kind, y.duplicate_of) == ("exact", "X")
        for tag in index.shard_tags:  # X's record everywhere, Y's nowhere
            assert index.client.get(index.keys.dedup_record(x.docnum, tag)) == x.sketch + (
                b"X\x00" + keys[0].encode()
            )


def test_shards_answers_combine_by_order_key_and_a_superseded_copy_leaves_every_shard(
    redis_cluster_url: str, redis_cluster_prefix: str
) -> None:
    """Matches that each lie in one shard only (one shared band): the earliest by order key is
    named, not the most similar one; and a copy met in one shard is taken out of all three."""
    sketch = bytes(range(PARAMS.sketch_bytes))
    close = bytes([b ^ 0xFF if i < 5 else b for i, b in enumerate(sketch)])  # 10 positions off
    in_0, in_1 = bucket_in(0, SHARED_BUCKETS), bucket_in(1, SHARED_BUCKETS)
    early = fake_fingerprint(1, close, {0: in_0})  # less similar, in shard 0
    late = fake_fingerprint(2, sketch, {1: in_1})  # identical sketch, in shard 1
    checked = fake_fingerprint(3, sketch, {0: in_0, 1: in_1})
    with open_index(
        redis_cluster_url, prefix=redis_cluster_prefix, ttl_seconds=TTL, shards=CLUSTER_SHARDS
    ) as index:
        assert isinstance(index, RedisNearDuplicateIndex)
        assert index.check_fingerprint("early", early, order_key="k1") == Verdict("new")
        assert index.check_fingerprint("late", late, order_key="k2") == Verdict("new")
        verdict = index.check_fingerprint("checked", checked, order_key="k3", add=False)
        assert (verdict.kind, verdict.duplicate_of) == ("near", "early")
        assert verdict.similarity is not None and verdict.similarity < 1.0
        # Earlier than both: the first copy; each was met in one shard, both leave all three.
        first = index.check_fingerprint("first", checked, order_key="k0")
        assert first == Verdict("new", superseded=("early", "late"))
        for found in (early, late):
            for tag in index.shard_tags:
                assert index.client.get(index.keys.dedup_record(found.docnum, tag)) is None
