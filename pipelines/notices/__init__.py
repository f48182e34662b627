"""Per-domain notice suppression (the open problem of the NewsFeed cleartext heuristic, which keeps
copyright notices): learn which blocks recur across a domain's articles — copyright lines,
print-edition lines, newsletter blurbs — and remove them.

The learning logic (learner.py) and its two stores (backends.py: Redis, embedded SQLite) import no
Scrapy; pipeline.py is the thin Scrapy component (`NoticePipeline`).
"""

from __future__ import annotations

from pipelines.notices.backends import EmbeddedNoticeStore, RedisNoticeStore
from pipelines.notices.learner import (
    NULL_ONLY_NOTICES,
    DomainEvidence,
    NoticeConfig,
    NoticeLearner,
    NoticeStore,
    Observation,
    Removal,
    Verdict,
    normalized_tokens,
)

__all__ = [
    "NULL_ONLY_NOTICES",
    "DomainEvidence",
    "EmbeddedNoticeStore",
    "NoticeConfig",
    "NoticeLearner",
    "NoticeStore",
    "Observation",
    "RedisNoticeStore",
    "Removal",
    "Verdict",
    "normalized_tokens",
]
