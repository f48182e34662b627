"""What a near-duplicate index is: `NearDuplicateIndex` (the blocking interface) and its verdicts.

The implementations (pipelines/dedup/redis_index.py, pipelines/dedup/embedded.py) import this
module; the one function that chooses between them is in pipelines/dedup/backends.py.

Both backends answer the same questions the same way: exact duplicates (same normalised text)
and MinHash LSH candidates confirmed on their stored sketches are the document's matches; it is
a copy of the earliest match that came before it by order key (crawler/core/order.py), and
otherwise the first copy: it is added and the matches, all later than it, are taken out of the
index and named in `Verdict.superseded` (the caller flags them). The index holds first copies
only; every entry lives `ttl_seconds` after
it was added (the time window); check and insert are one atomic step, so two workers adding
near-duplicates at the same moment cannot both miss each other.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass

from pipelines.fingerprints import Fingerprint, LshParams, fingerprint

# Documents remembered per LSH bucket (the newest win): bounds the work of one check when many
# different texts share a band (boilerplate-heavy sites, hostile input).
MAX_BUCKET_DOCS = 8

# Verdict kinds.
NEW = "new"  # no earlier (near-)duplicate: added to the index (unless add=False)
EXACT = "exact"  # same normalised text as an earlier document
NEAR = "near"  # a confirmed near-duplicate of an earlier document
KNOWN = "known"  # this very document (same id, same text) is already in the index
EMPTY = "empty"  # no words: nothing to compare, not added
VERDICT_KINDS = (NEW, EXACT, NEAR, KNOWN, EMPTY)


@dataclass(frozen=True)
class Verdict:
    kind: str  # one of VERDICT_KINDS
    duplicate_of: str | None = None  # id of the earlier document (EXACT and NEAR only)
    similarity: float | None = None  # estimated Jaccard similarity to it
    # NEW only: ids of indexed documents that came after this one and are its copies now
    # (taken out of the index; the caller flags them `duplicate_of` this document).
    superseded: tuple[str, ...] = ()

    @property
    def is_duplicate(self) -> bool:
        return self.duplicate_of is not None


class NearDuplicateIndex(ABC):
    """Exact and near-duplicate detection over a sliding time window."""

    def __init__(self, params: LshParams, ttl_seconds: int) -> None:
        self.params = params
        self.ttl_seconds = checked_ttl(ttl_seconds)

    # -- the questions -----------------------------------------------------------------------

    def check_and_add(self, doc_id: str, text: str, order_key: str = "") -> str | None:
        """The id of an earlier exact or near-duplicate of `text`, or None; in that case the
        document is added, so later copies will name `doc_id`. `order_key` says which copy
        came first (crawler/core/order.py); without one, arrival order decides."""
        return self.check(doc_id, text, order_key=order_key).duplicate_of

    def check(self, doc_id: str, text: str, *, add: bool = True, order_key: str = "") -> Verdict:
        """The full verdict on `text` (add=False only looks, it never changes the index)."""
        found = fingerprint(text, self.params)
        if found is None:
            return Verdict(EMPTY)
        return self.check_fingerprint(doc_id, found, add=add, order_key=order_key)

    @abstractmethod
    def check_fingerprint(
        self, doc_id: str, found: Fingerprint, *, add: bool = True, order_key: str = ""
    ) -> Verdict:
        """`check` for a fingerprint computed elsewhere (e.g. in a worker process)."""

    @abstractmethod
    def close(self) -> None: ...

    def __enter__(self) -> NearDuplicateIndex:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class IndexLayoutError(RuntimeError):
    """The stored index was built with different parameters than the ones configured."""


@dataclass(frozen=True)
class Match:
    """An indexed document whose text matches the one checked."""

    owner: str  # its document id
    order_key: str  # "" when indexed without one (it sorts first)
    matches: int  # agreeing sketch positions
    docnum: int
    kind: str  # EXACT or NEAR


def decide(
    matches: list[Match], doc_id: str, order_key: str, similarity: Callable[[int], float]
) -> Verdict:
    """The rule both backends apply (the Lua script spells it out again): a copy of the earliest
    match that came before `order_key` (no key: everything indexed came before), the most
    similar among equal keys, then the smallest id; else the first copy, and every match is
    superseded. A match with the same key came before when its id is smaller: keys and ids
    together are a total order, so of two documents exactly one came first (what a sharded
    index needs when it checks in every shard at once)."""
    earlier = [m for m in matches if not order_key or came_before(m, doc_id, order_key)]
    if earlier:
        first = min(earlier, key=lambda m: (m.order_key, -m.matches, m.owner))
        return Verdict(first.kind, first.owner, similarity(first.matches))
    return Verdict(NEW, superseded=tuple(sorted({m.owner for m in matches})))


def came_before(match: Match, doc_id: str, order_key: str) -> bool:
    if match.order_key != order_key:
        return match.order_key < order_key
    return match.owner < doc_id


def check_ids(doc_id: str, order_key: str) -> None:
    if not doc_id:
        raise ValueError("doc_id must be a non-empty string")
    if "\0" in doc_id or "\0" in order_key:
        raise ValueError("doc_id and order_key must not contain NUL characters")


def checked_ttl(ttl_seconds: int) -> int:
    if int(ttl_seconds) < 1:
        raise ValueError(f"the time window (DEDUP_TTL_SECONDS) must be >= 1 s, got {ttl_seconds}")
    return int(ttl_seconds)


def layout_mismatch(where: str, stored: str, configured: str) -> IndexLayoutError:
    return IndexLayoutError(
        f"the near-duplicate index at {where} was built as {stored!r} but this configuration "
        f"needs {configured!r} (DEDUP_THRESHOLD decides the LSH bands); use another "
        "REDIS_KEY_PREFIX / STATE_DIR, or delete the old index"
    )
