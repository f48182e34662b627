"""Exact and near-duplicate detection: MinHash LSH over word shingles, in Redis or embedded.

    from pipelines.dedup import open_index

    index = open_index("redis://127.0.0.1:6379/0", threshold=0.8)  # or a SQLite file path
    index.check_and_add("https://a.test/story", text)  # None: first copy (now indexed)
    index.check_and_add("https://b.test/copy", copy)   # "https://a.test/story"

Importing this package never imports Scrapy: the crawler's stage is pipelines/dedup/pipeline.py.
"""

from __future__ import annotations

from pipelines.dedup.backends import index_from_settings, open_index
from pipelines.dedup.index import (
    IndexLayoutError,
    NearDuplicateIndex,
    Verdict,
)
from pipelines.fingerprints import (
    Fingerprint,
    LshParams,
    content_hash,
    fingerprint,
    normalize,
)

__all__ = [
    "Fingerprint",
    "IndexLayoutError",
    "LshParams",
    "NearDuplicateIndex",
    "Verdict",
    "content_hash",
    "fingerprint",
    "index_from_settings",
    "normalize",
    "open_index",
]
