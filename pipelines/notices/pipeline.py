"""Notice suppression stage (ITEM_PIPELINES 200): remove what a domain repeats in every article.

Thin Scrapy component around pipelines.notices.learner: one store round trip per article
(Redis when REDIS_URL is set, else the embedded SQLite store on its own thread). Items get
`notices_removed`; an item with nothing but notices becomes NULL (`only_notices`).

Redis unreachable: the article waits for it (the crawl pauses, crawler/core/outage.py) and is
judged with the domain's learned notices once it is back (`notices/waited`; a retry counts
nothing twice, the store knows the article by its identities). A store that fails otherwise, or
a crawl that closes during the outage, judges by the lexical priors alone (`notices/errors`).
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from typing import Any

import redis.exceptions
from scrapy.crawler import Crawler
from scrapy.exceptions import DropItem, NotConfigured
from scrapy.settings import BaseSettings
from scrapy.statscollectors import StatsCollector

from crawler.core.connection import async_redis, redis_url
from crawler.core.domainstats import NULL, inc_domain, stage_seconds
from crawler.core.items import take_prepared
from crawler.core.keys import RedisKeys
from crawler.core.outage import REDIS_CALL_FAILURES, RedisGate, RedisUnavailable
from crawler.core.paths import state_dir
from extractors.article import running_text, running_texts, word_count
from extractors.markdown import to_markdown
from pipelines.fingerprints import content_hash
from pipelines.notices.backends import EmbeddedNoticeStore, NoticeStoreError, RedisNoticeStore
from pipelines.notices.learner import (
    DAY_SECONDS,
    DomainEvidence,
    NoticeConfig,
    NoticeLearner,
    NoticeStore,
    Observation,
    Verdict,
)

log = logging.getLogger(__name__)

EMBEDDED_STORE_FILE = "notices.sqlite3"
# A store slower than this (a hung server, a locked file) costs the article its learning, not
# its place in the pipeline: it is judged by the lexical priors alone.
STORE_TIMEOUT_SECONDS = 5.0
# Store failures are logged at most this often; every one is counted in notices/errors.
ERROR_LOG_INTERVAL_SECONDS = 60.0
# Per-domain counter of notice blocks removed (monitoring reads it).
REMOVED = "notices/removed"
# Seconds of this stage's own work on the reactor thread (store round trips excluded).
STAGE_SECONDS = "notices/seconds"
# What the extraction workers run for this stage (crawler.core.items.take_prepared).
WORKER_PREPARATION = "pipelines.notices.learner:prepare_extracted"
# Articles this stage had to prepare on the reactor thread (no worker preparation to take).
PREPARED_HERE = "notices/prepared_here"
STORE_ERRORS = (
    redis.exceptions.RedisError,
    sqlite3.Error,
    OSError,
    TimeoutError,
    NoticeStoreError,
)


def notice_config(settings: BaseSettings) -> NoticeConfig:
    return NoticeConfig(
        min_articles=settings.getint("NOTICES_MIN_ARTICLES"),
        min_share=settings.getfloat("NOTICES_MIN_SHARE"),
        half_life_seconds=settings.getfloat("NOTICES_HALF_LIFE_DAYS") * DAY_SECONDS,
        max_signatures=settings.getint("NOTICES_MAX_SIGNATURES"),
        idle_ttl_seconds=settings.getfloat("NOTICES_IDLE_TTL_DAYS") * DAY_SECONDS,
        prior_articles=settings.getint("NOTICES_PRIOR_ARTICLES"),
        min_body_chars=settings.getint("NOTICES_MIN_BODY_CHARS"),
    )


def notice_store(settings: BaseSettings, config: NoticeConfig) -> NoticeStore:
    """Redis when REDIS_URL is set (shared by every worker), else the embedded SQLite file."""
    url = redis_url(settings)
    if url:
        return RedisNoticeStore(async_redis(url), RedisKeys.from_settings(settings), config)
    path = settings.get("NOTICES_STORE_PATH") or state_dir(settings) / EMBEDDED_STORE_FILE
    return EmbeddedNoticeStore(path, config)


class NoticePipeline:
    @staticmethod
    def worker_preparation(settings: BaseSettings) -> str | None:
        """The stage's CPU half (`prepare`: 0.4 ms an article, the reactor's largest own cost
        in a replay) runs in the extraction worker beside the extraction; None when it is off."""
        return WORKER_PREPARATION if settings.getbool("NOTICES_ENABLED") else None

    def __init__(self, stats: StatsCollector, learner: NoticeLearner) -> None:
        self.stats = stats
        self.learner = learner
        self._last_error_log = float("-inf")
        self.gate: RedisGate | None = None  # the Redis store's outages: wait for it

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> NoticePipeline:
        settings = crawler.settings
        if not settings.getbool("NOTICES_ENABLED"):
            raise NotConfigured("NOTICES_ENABLED is off")
        config = notice_config(settings)
        pipeline = cls(crawler.stats, NoticeLearner(notice_store(settings, config), config))
        if isinstance(pipeline.learner.store, RedisNoticeStore):
            pipeline.gate = RedisGate.of(crawler)
        return pipeline

    async def close_spider(self) -> None:
        await self.learner.store.aclose()

    async def process_item(self, item: Any) -> Any:
        raw_blocks = item.get("blocks")
        if not raw_blocks:
            return item  # not an extracted article
        domain = item.get("domain") or ""
        blocks = [(block["kind"], block["text"]) for block in raw_blocks]
        identities = (item.get("canonical_url") or item.get("url"), item.get("content_hash"))
        language = item.get("language")  # detected by extraction; None when unknown
        now = time.time()
        article = take_prepared(item, WORKER_PREPARATION)
        if article is not None and article.blocks == blocks and article.language == language:
            article = article.placed(domain, identities, now)
        else:  # no worker did it, or a stage between changed the article since
            self.stats.inc_value(PREPARED_HERE)
            with stage_seconds(self.stats, STAGE_SECONDS):
                article = self.learner.prepare(domain, blocks, identities, now, language)
        try:
            evidence = await self._observe(article.observation)
            with stage_seconds(self.stats, STAGE_SECONDS):
                verdict = self.learner.judge(article, evidence)
        except (*STORE_ERRORS, RedisUnavailable) as error:
            self._store_failed(error)
            verdict = self.learner.judge_offline(article)
        self._count(domain, verdict)
        if verdict.is_null:
            raise DropItem(f"NULL ({verdict.null_reason}): {item.get('url')}", log_level="INFO")
        item["notices_removed"] = len(verdict.removed)
        if verdict.removed:
            self._revise(item, verdict.blocks)
        return item

    def _revise(self, item: Any, blocks: list[tuple[str, str]]) -> None:
        """The item without its notices: blocks, text, what is written from them (word count,
        Markdown when on) and the text's hashes. The dedup stage's fingerprint (there when it
        runs) is made again from the blocks it was made of, here: the content hash comes with it."""
        item["blocks"] = [{"kind": kind, "text": text} for kind, text in blocks]
        item["text"] = running_text(blocks)
        if "word_count" in item:
            item["word_count"] = word_count(item["text"])
        if item.get("markdown") is not None:
            item["markdown"] = to_markdown(blocks, item.get("title"))
        found = item.pop("fingerprint", None)
        with stage_seconds(self.stats, STAGE_SECONDS):
            found = found.revised(running_texts(blocks)) if found is not None else None
            if found is None:  # no dedup stage, or no word left
                item["content_hash"] = content_hash(item["text"])
                return
        item["fingerprint"] = found
        item["content_hash"] = found.content_hash

    async def _observe(self, observation: Observation) -> DomainEvidence:
        """The store's evidence for the article; through Redis outages, waiting for it."""
        observe = self.learner.store.observe
        if self.gate is None:
            return await asyncio.wait_for(observe(observation), STORE_TIMEOUT_SECONDS)
        return await self.gate.call(
            lambda: asyncio.wait_for(observe(observation), STORE_TIMEOUT_SECONDS),
            REDIS_CALL_FAILURES,
            on_wait=lambda: self._waited(observation.domain),
        )

    def _waited(self, domain: str) -> None:
        self.stats.inc_value("notices/waited")
        inc_domain(self.stats, domain or "unknown", "notices/waited")

    async def open_spider(self) -> None:
        if self.gate is not None:  # Redis unreachable at start: the crawl does not start
            await self.gate.check_at_start()

    def _count(self, domain: str, verdict: Verdict) -> None:
        stats = self.stats
        stats.inc_value("notices/articles")
        stats.inc_value(f"notices/status/{verdict.status}")
        if verdict.removed:
            stats.inc_value("notices/articles_with_notices")
            stats.inc_value("notices/removed", len(verdict.removed))
            for removal in verdict.removed:
                stats.inc_value(f"notices/removed/{removal.reason}")
            inc_domain(stats, domain, REMOVED, len(verdict.removed))
        if verdict.null_reason:
            reason = verdict.null_reason
            stats.inc_value(f"notices/null/{reason}")
            # The item ends NULL like an extraction NULL: same counters, so totals and the
            # per-domain NULL column include it.
            stats.inc_value("extract/null")
            stats.inc_value(f"extract/null/{reason}")
            inc_domain(stats, domain, NULL)
            inc_domain(stats, domain, f"{NULL}/{reason}")

    def _store_failed(self, error: BaseException) -> None:
        self.stats.inc_value("notices/errors")
        now = time.monotonic()
        if now - self._last_error_log >= ERROR_LOG_INTERVAL_SECONDS:
            self._last_error_log = now
            log.warning(
                "notice store unavailable (%s: %s); judging with lexical priors only",
                type(error).__name__,
                error,
            )
