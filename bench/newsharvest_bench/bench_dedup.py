"""`newsharvest bench dedup`: recall, false positives, speed and Redis memory of the
near-duplicate index on a corpus with known families (newsharvest_bench/neardup.py).

Recall is reported per band of the copy's true Jaccard similarity to its original (exact sets of
word 5-grams, as the index defines similarity); a copy counts as found when it is called a
duplicate of a member of its own family. False positives: distinct stories (originals and
same-topic siblings) called duplicates, plus copies attributed to another family; and, offline,
distinct pairs (every same-topic pair and random pairs) that would be confirmed if they met.
"""

from __future__ import annotations

import argparse
import os
import random
import secrets
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from crawler.cli.table import render_table

DEFAULT_STORIES = 3000
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"
# (label, lowest J, highest J exclusive, target recall or None)
BANDS = (
    ("J >= 0.9", 0.9, 1.01, 0.95),
    ("0.8 <= J < 0.9", 0.8, 0.9, 0.90),
    ("0.5 <= J < 0.8", 0.5, 0.8, None),
    ("J < 0.5", 0.0, 0.5, None),
)
TARGET_FALSE_POSITIVE_RATE = 0.001
TARGET_DOCS_PER_SECOND = 2000
TARGET_BYTES_PER_ARTICLE = 1536
RANDOM_DISTINCT_PAIRS = 200_000
SIGNATURE_SAMPLE = 500  # articles timed per MinHash method
SIGNATURE_PASSES = 3
TTL_SECONDS = 30 * 24 * 3600


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "dedup",
        help="near-duplicate index: recall per Jaccard band, false positives, speed, memory",
    )
    parser.add_argument("--stories", type=int, default=DEFAULT_STORIES, help="original stories")
    parser.add_argument("--seed", type=int, default=1, help="corpus seed")
    parser.add_argument("--threshold", type=float, default=0.8, help="Jaccard threshold")
    parser.add_argument(
        "--redis-url",
        default=os.environ.get("NEWSHARVEST_REDIS_URL") or DEFAULT_REDIS_URL,
        help="Redis to measure against (default: $REDIS_URL or %(default)s)",
    )
    parser.add_argument(
        "--prefix",
        default=None,
        help="key prefix (default: a fresh 6-character one, the size of the default 'nh' keys' "
        "allocation class; its keys are deleted afterwards)",
    )
    parser.add_argument(
        "--repeat", type=int, default=2, help="passes over the stream per index (best is kept)"
    )
    parser.add_argument("--no-embedded", action="store_true", help="skip the embedded index run")
    parser.add_argument(
        "--cluster",
        action="store_true",
        help="instead: throughput and key spread on one server vs a local 3-master Redis Cluster "
        "(both started from redis-server in this run)",
    )
    parser.add_argument(
        "--processes", type=int, default=2, help="--cluster: client processes (default 2)"
    )
    parser.add_argument(
        "--clients", type=int, default=32, help="--cluster: calls in flight per process"
    )
    parser.set_defaults(handler=run)


@dataclass
class Run:
    backend: str
    results: dict[str, str | None]  # doc_id -> duplicate_of
    seconds: list[float]  # wall time of each pass over the stream
    cpu_seconds: list[float]  # this process's CPU time of each pass
    indexed: int


def run(args: argparse.Namespace) -> int:
    from newsharvest_bench.neardup import near_duplicate_corpus
    from pipelines.dedup import LshParams

    params = LshParams.for_threshold(args.threshold)
    started = time.perf_counter()
    docs = near_duplicate_corpus(args.stories, seed=args.seed)
    built = time.perf_counter() - started
    print(
        f"corpus: {args.stories} stories -> {len(docs)} articles (seed {args.seed}, "
        f"built in {built:.1f} s); threshold {params.threshold}"
    )
    print(
        f"LSH: {params.bands} bands x {params.rows} rows of {params.num_perm} min-hashes "
        f"(datasketch optimiser); confirmed at >= {params.min_matches}/{params.num_perm} "
        f"agreeing 4-bit sketch positions "
        f"(estimated J >= {params.similarity(params.min_matches):.3f})"
    )
    if args.cluster:
        return run_cluster(docs, params, args)
    truth = true_similarities(docs)

    redis_run, memory = run_redis(docs, params, args)
    runs = [redis_run]
    if not args.no_embedded:
        runs.append(run_embedded(docs, params, args.repeat))

    print("\nrecall by the copy's true Jaccard similarity to its original (Redis index)")
    print(recall_table(docs, truth, redis_run.results))
    print()
    print(false_positive_report(docs, redis_run.results))
    print(pair_report(docs, params))
    print(
        f"\nMinHash signatures of {min(len(docs), SIGNATURE_SAMPLE)} articles "
        f"(same shingle hashes, {params.num_perm} permutations)"
    )
    print(signature_table(docs[:SIGNATURE_SAMPLE], params))
    print(
        f"\nthroughput: check_and_add(doc_id, text) over the stream, one process, "
        f"best of {args.repeat} passes into an empty index"
    )
    print(throughput_table(docs, runs))
    if len(runs) == 2:
        differ = sum(runs[0].results[doc.doc_id] != runs[1].results[doc.doc_id] for doc in docs)
        print(f"embedded and Redis verdicts differ on {differ} of {len(docs)} articles")
    print()
    print(memory)
    return 0


def run_cluster(docs: Sequence[Any], params: Any, args: argparse.Namespace) -> int:
    from newsharvest_bench.dedupcluster import compare
    from pipelines.fingerprints import fingerprint

    fingerprints = [found for doc in docs if (found := fingerprint(doc.text, params))]
    print(compare(fingerprints, params.threshold, args.processes, args.clients))
    return 0


# --- ground truth -----------------------------------------------------------------------------


def true_similarities(docs: Sequence[Any]) -> dict[str, float]:
    """Exact Jaccard similarity of each copy to its original."""
    from pipelines.fingerprints import true_jaccard

    texts = {doc.doc_id: doc.text for doc in docs}
    return {
        doc.doc_id: true_jaccard(doc.text, texts[doc.original_id])
        for doc in docs
        if doc.original_id
    }


# --- the runs -----------------------------------------------------------------------------------


def stream(index: Any, docs: Sequence[Any]) -> tuple[dict[str, str | None], float, float]:
    """Every article through check_and_add: results, wall seconds, this process's CPU seconds."""
    check_and_add: Callable[[str, str], str | None] = index.check_and_add
    results: dict[str, str | None] = {}
    started, cpu_started = time.perf_counter(), time.process_time()
    for doc in docs:
        results[doc.doc_id] = check_and_add(doc.doc_id, doc.text)
    return results, time.perf_counter() - started, time.process_time() - cpu_started


def run_redis(docs: Sequence[Any], params: Any, args: argparse.Namespace) -> tuple[Run, str]:
    """Passes over the stream, each into an empty index under a fresh prefix; the first one is
    scored and its memory measured."""
    from crawler.core.connection import sync_redis
    from crawler.core.keys import RedisKeys
    from pipelines.dedup.redis_index import RedisNearDuplicateIndex

    client = sync_redis(args.redis_url)
    run = Run("redis", {}, [], [], 0)
    memory = ""
    try:
        for attempt in range(args.repeat):
            prefix = args.prefix or "nb" + secrets.token_hex(2)
            keys = RedisKeys(prefix)
            pattern = keys.key("{nd}", "*")
            try:
                before = client.info("memory")["used_memory"]
                index = RedisNearDuplicateIndex(client, params, keys, TTL_SECONDS)
                results, seconds, cpu = stream(index, docs)
                after = client.info("memory")["used_memory"]
                run.seconds.append(seconds)
                run.cpu_seconds.append(cpu)
                if attempt == 0:
                    run.results = results
                    run.indexed = sum(1 for value in results.values() if value is None)
                    memory = memory_report(
                        client, keys, pattern, after - before, run.indexed, len(docs)
                    )
            finally:
                for batch in _batched(client.scan_iter(match=pattern, count=1000), 1000):
                    client.unlink(*batch)
    finally:
        client.close()
    return run, memory


def run_embedded(docs: Sequence[Any], params: Any, repeat: int) -> Run:
    from pipelines.dedup.embedded import EmbeddedNearDuplicateIndex

    run = Run("embedded", {}, [], [], 0)
    for attempt in range(repeat):
        with tempfile.TemporaryDirectory() as tmp:
            index = EmbeddedNearDuplicateIndex(Path(tmp) / "dedup.sqlite3", params, TTL_SECONDS)
            try:
                results, seconds, cpu = stream(index, docs)
            finally:
                index.close()
        run.seconds.append(seconds)
        run.cpu_seconds.append(cpu)
        if attempt == 0:
            run.results = results
            run.indexed = sum(1 for value in results.values() if value is None)
    return run


def _batched(items: Any, size: int) -> Any:
    batch: list[Any] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


# --- reports ------------------------------------------------------------------------------------


def verdict(ok: bool) -> str:
    return "ok" if ok else "MISS"


def recall_table(docs: Sequence[Any], truth: dict[str, float], results: dict[str, Any]) -> str:
    family = {doc.doc_id: doc.family for doc in docs}
    rows = []
    for label, low, high, target in BANDS:
        copies = [doc for doc in docs if doc.original_id and low <= truth[doc.doc_id] < high]
        found = sum(
            1
            for doc in copies
            if results[doc.doc_id] is not None and family[results[doc.doc_id]] == doc.family
        )
        recall = found / len(copies) if copies else float("nan")
        check = "" if target is None else f">= {target:.2f} {verdict(recall >= target)}"
        rows.append([label, len(copies), found, f"{recall:.3f}", check])
    return render_table(["true Jaccard", "copies", "found", "recall", "target"], rows)


def false_positive_report(docs: Sequence[Any], results: dict[str, Any]) -> str:
    from newsharvest_bench.neardup import ORIGINAL, SAME_TOPIC

    family = {doc.doc_id: doc.family for doc in docs}
    distinct = [doc for doc in docs if doc.variant in (ORIGINAL, SAME_TOPIC)]
    flagged = sum(1 for doc in distinct if results[doc.doc_id] is not None)
    wrong = sum(
        1
        for doc in docs
        if doc.original_id
        and results[doc.doc_id] is not None
        and family[results[doc.doc_id]] != doc.family
    )
    rate = (flagged + wrong) / len(distinct)
    ok = verdict(rate <= TARGET_FALSE_POSITIVE_RATE)
    return (
        f"false positives: {flagged} of {len(distinct)} distinct stories called duplicates, "
        f"{wrong} copies attributed to another story: {rate:.3%} "
        f"(target <= {TARGET_FALSE_POSITIVE_RATE:.1%}) {ok}"
    )


def pair_report(docs: Sequence[Any], params: Any) -> str:
    """Distinct pairs that the index would confirm if they met: every same-topic pair and
    random pairs of different stories, compared on their fingerprints."""
    from pipelines.dedup import fingerprint
    from pipelines.fingerprints import sketch_matches, true_jaccard

    by_id = {doc.doc_id: doc for doc in docs}
    prints = {doc.doc_id: fingerprint(doc.text, params) for doc in docs}
    hard = [(doc.doc_id, doc.sibling_of) for doc in docs if doc.sibling_of]
    rng = random.Random(7)
    ids = list(by_id)
    randoms = []
    while len(randoms) < RANDOM_DISTINCT_PAIRS:
        a, b = rng.choice(ids), rng.choice(ids)
        if by_id[a].family != by_id[b].family:
            randoms.append((a, b))

    def called(a: str, b: str) -> bool:
        left, right = prints[a], prints[b]
        shared_band = any(x == y for x, y in zip(left.buckets, right.buckets, strict=True))
        return shared_band and sketch_matches(left.sketch, right.sketch) >= params.min_matches

    hard_truth = [true_jaccard(by_id[a].text, by_id[b].text) for a, b in hard]
    hard_estimates = [
        params.similarity(sketch_matches(prints[a].sketch, prints[b].sketch)) for a, b in hard
    ]
    flagged = sum(called(a, b) for a, b in hard) + sum(called(a, b) for a, b in randoms)
    total = len(hard) + len(randoms)
    return (
        f"distinct pairs confirmed as near-duplicates: {flagged} of {total:,} "
        f"({len(hard)} same-topic pairs, {len(randoms):,} random pairs): {flagged / total:.4%}\n"
        f"same-topic pairs: true Jaccard max {max(hard_truth, default=0):.3f} "
        f"mean {statistics.fmean(hard_truth or [0]):.4f}; "
        f"estimated max {max(hard_estimates, default=0):.3f}"
    )


def signature_table(docs: Sequence[Any], params: Any) -> str:
    import numpy as np
    from datasketch import LeanMinHash, MinHash

    from pipelines.dedup import fingerprint, normalize
    from pipelines.fingerprints import minhash, shingle_hashes

    hashes = [
        shingle_hashes(normalize(doc.text).encode().split(b" "), params.shingle_words)
        for doc in docs
    ]
    as_lists = [h.tolist() for h in hashes]
    n = len(docs)

    def timed(work: Callable[[], Any]) -> tuple[float, Any]:
        """CPU microseconds per article, best of SIGNATURE_PASSES (robust on a busy machine)."""
        best = float("inf")
        for _ in range(SIGNATURE_PASSES):
            started = time.process_time()
            out = work()
            best = min(best, time.process_time() - started)
        return best / n * 1e6, out

    ours_us, ours = timed(lambda: [minhash(h, params.num_perm, params.seed) for h in hashes])
    bulk_us, bulk = timed(
        lambda: MinHash.bulk(as_lists, num_perm=params.num_perm, seed=params.seed, hashfunc=int)
    )
    lean_us, _ = timed(
        lambda: [
            LeanMinHash(m)
            for m in MinHash.bulk(
                as_lists, num_perm=params.num_perm, seed=params.seed, hashfunc=int
            )
        ]
    )
    fresh_us, _ = timed(
        lambda: [_fresh_minhash(values, params.num_perm, params.seed) for values in as_lists]
    )
    full_us, _ = timed(lambda: [fingerprint(doc.text, params) for doc in docs])
    same = all(np.array_equal(a, b.hashvalues) for a, b in zip(ours, bulk, strict=True))
    rows = [
        [
            "numpy, one shared set of permutations (ours)",
            f"{ours_us:.0f}",
            "identical" if same else "DIFFER",
        ],
        ["datasketch MinHash.bulk", f"{bulk_us:.0f}", "reference"],
        ["datasketch MinHash.bulk, then LeanMinHash", f"{lean_us:.0f}", ""],
        ["datasketch MinHash() per article", f"{fresh_us:.0f}", ""],
        [
            "whole fingerprint (normalise, hash, shingle, MinHash, sketch, bands)",
            f"{full_us:.0f}",
            "",
        ],
    ]
    return render_table(["method", "CPU us/article", "values"], rows)


def _fresh_minhash(values: list[int], num_perm: int, seed: int) -> Any:
    from datasketch import MinHash

    sketch = MinHash(num_perm=num_perm, seed=seed, hashfunc=int)
    sketch.update_batch(values)
    return sketch


def throughput_table(docs: Sequence[Any], runs: Sequence[Run]) -> str:
    """Best pass of each index (the machine may be shared: the best pass is the least
    disturbed one); CPU is this process's own time per article (fingerprint + client)."""
    rows = []
    for item in runs:
        best = min(item.seconds)
        rate = len(docs) / best
        check = f">= {TARGET_DOCS_PER_SECOND} {verdict(rate >= TARGET_DOCS_PER_SECOND)}"
        rows.append(
            [
                item.backend,
                f"{rate:,.0f}",
                f"{best / len(docs) * 1e6:.0f}",
                f"{min(item.cpu_seconds) / len(docs) * 1e6:.0f}",
                ", ".join(f"{len(docs) / seconds:,.0f}" for seconds in item.seconds),
                check if item.backend == "redis" else "",
            ]
        )
    return render_table(
        ["index", "articles/s", "us/article", "CPU us/article", "all passes/s", "target"], rows
    )


def memory_report(
    client: Any, keys: Any, pattern: str, grown: int, indexed: int, total: int
) -> str:
    """Redis memory per indexed article: used_memory growth over the run (includes the expiry
    table and hash-table slots; other clients of a shared server add noise), and MEMORY USAGE
    of the keys themselves."""
    record_prefix = keys.dedup_record_prefix().encode()
    bucket_prefix = keys.dedup_bucket("").encode()
    counts = {"record": 0, "bucket": 0, "other": 0}
    sampled: dict[str, list[int]] = {"record": [], "bucket": []}
    for key in client.scan_iter(match=pattern, count=1000):
        kind = (
            "record"
            if key.startswith(record_prefix)
            else "bucket"
            if key.startswith(bucket_prefix)
            else "other"
        )
        counts[kind] += 1
        if kind in sampled and len(sampled[kind]) < 2000:
            sampled[kind].append(client.memory_usage(key, samples=0))
    per_article = grown / max(1, indexed)
    usage = {kind: statistics.fmean(values or [0]) for kind, values in sampled.items()}
    ok = verdict(per_article <= TARGET_BYTES_PER_ARTICLE)
    keys_per_article = (counts["record"] + counts["bucket"]) / max(1, indexed)
    return (
        f"Redis memory: {indexed} of {total} articles indexed (duplicates are not stored); "
        f"used_memory grew {grown:,} bytes = {per_article:,.0f} bytes per indexed article "
        f"(target <= {TARGET_BYTES_PER_ARTICLE}) {ok}\n"
        f"keys: {counts['record']} records, {counts['bucket']} buckets "
        f"({keys_per_article:.2f} keys per indexed article); "
        f"MEMORY USAGE mean: record {usage['record']:.0f} B, bucket {usage['bucket']:.0f} B "
        f"(+ ~40 B per key for its expiry entry and hash-table slots, which MEMORY USAGE omits)"
    )
