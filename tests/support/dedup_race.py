"""Two processes adding the same near-duplicate families at once (tests/test_dedup.py).

A module of its own so the spawned workers import only the index, not the test suite."""

from __future__ import annotations

import multiprocessing
import time
from typing import Any

from newsharvest_bench.neardup import ORIGINAL, SYNDICATED, near_duplicate_corpus
from pipelines.dedup import open_index
from pipelines.fingerprints import true_jaccard

TTL = 3600
MIN_FAMILY_JACCARD = 0.88  # every pair inside a raced family is a clear near-duplicate


def racing_worker(
    location: str, prefix: str, shards: int, name: str, docs: list, start: Any, out: Any
) -> None:
    """Add `docs` (family, doc_id, text) as fast as possible once both workers are ready."""
    with open_index(location, prefix=prefix, ttl_seconds=TTL, shards=shards) as index:
        start.wait(timeout=60)
        began = time.time()
        results = [
            (family, doc_id, index.check_and_add(doc_id, text)) for family, doc_id, text in docs
        ]
        out.put((name, began, time.time(), results))


def race_families(
    location: str, prefix: str, shards: int = 1
) -> tuple[list, list[tuple[float, float]]]:
    """Two processes add the same families at the same moment: worker A each family's
    members in stream order, worker B the same texts (own ids) in reverse order."""
    corpus = near_duplicate_corpus(150, seed=11)
    members: dict[int, list] = {}
    for doc in corpus:
        if doc.variant in (ORIGINAL, SYNDICATED):
            members.setdefault(doc.family, []).append(doc)
    # Families whose every pair is a clear near-duplicate: each must be found exactly once.
    families = {
        family: docs
        for family, docs in members.items()
        if len(docs) >= 2
        and min(true_jaccard(a.text, b.text) for a in docs for b in docs if a is not b)
        >= MIN_FAMILY_JACCARD
    }
    work_a = [(f, f"A|{d.doc_id}", d.text) for f, docs in families.items() for d in docs]
    work_b = [(f, f"B|{d.doc_id}", d.text) for f, docs in families.items() for d in docs[::-1]]
    context = multiprocessing.get_context("spawn")
    start, out = context.Barrier(2), context.Queue()
    workers = [
        context.Process(
            target=racing_worker, args=(location, prefix, shards, name, work, start, out)
        )
        for name, work in (("A", work_a), ("B", work_b))
    ]
    for worker in workers:
        worker.start()
    reports = [out.get(timeout=120) for _ in workers]
    for worker in workers:
        worker.join(timeout=30)
        assert worker.exitcode == 0
    results = [row for _, _, _, rows in reports for row in rows]
    return results, [(began, ended) for _, began, ended, _ in reports]
