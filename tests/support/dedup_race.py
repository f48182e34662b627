"""Two processes adding the same near-duplicate families at once (tests/test_dedup.py).

A module of its own so the spawned workers import only the index, not the test suite."""

from __future__ import annotations

import multiprocessing
import time
from typing import Any

from crawler.core.order import replay_order_key
from newsharvest_bench.neardup import ORIGINAL, SYNDICATED, near_duplicate_corpus
from pipelines.dedup import open_index
from pipelines.fingerprints import true_jaccard

TTL = 3600
MIN_FAMILY_JACCARD = 0.88  # every pair inside a raced family is a clear near-duplicate


def racing_worker(
    location: str, prefix: str, shards: int, name: str, docs: list, start: Any, out: Any
) -> None:
    """Add `docs` (family, doc_id, text, order key) as fast as possible once both workers are
    ready; each result is (family, doc_id, duplicate_of, superseded, order key)."""
    with open_index(location, prefix=prefix, ttl_seconds=TTL, shards=shards) as index:
        start.wait(timeout=60)
        began = time.time()
        results = []
        for family, doc_id, text, key in docs:
            verdict = index.check(doc_id, text, order_key=key)
            results.append((family, doc_id, verdict.duplicate_of, verdict.superseded, key))
        out.put((name, began, time.time(), results))


def race_families(
    location: str, prefix: str, shards: int = 1, keyed: bool = False
) -> tuple[list, list[tuple[float, float]]]:
    """Two processes add the same families at the same moment: worker A each family's
    members in stream order, worker B the same texts (own ids) in reverse order, families
    too. Results: (family, doc_id, duplicate_of, superseded, order key). Without `keyed`,
    arrival order decides; with it, each text carries the order key of its place in the
    stream, the same in both workers (so A's copy and B's copy of a text tie, and their ids
    decide)."""
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

    def key(family: int, member: int) -> str:
        return replay_order_key(family, member) if keyed else ""

    work_a = [
        (f, f"A|{d.doc_id}", d.text, key(f, i))
        for f, docs in families.items()
        for i, d in enumerate(docs)
    ]
    # B walks the families from the last, so the two workers meet in the middle: the families
    # B reaches first get its later copies before A's earlier ones (which supersede them), those
    # after the meeting A's copies first, whatever the two processes' relative speed.
    work_b = [
        (f, f"B|{d.doc_id}", d.text, key(f, i))
        for f, docs in reversed(list(families.items()))
        for i, d in reversed(list(enumerate(docs)))
    ]
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


def final_originals(results: list) -> dict[str, str]:
    """Each document's original once the corrections are applied: its verdict's duplicate_of,
    overridden by a document naming it in `superseded`, followed to a document with neither
    (every step names a document that came earlier, so the walk ends)."""
    parent: dict[str, str | None] = {doc_id: dup for _, doc_id, dup, *_ in results}
    for _, doc_id, _, superseded, _ in results:
        for copy in superseded:
            parent[copy] = doc_id
    final = {}
    for doc_id in parent:
        root = doc_id
        for _ in range(len(parent)):
            if not parent.get(root):
                break
            root = parent[root] or root
        final[doc_id] = root
    return final
