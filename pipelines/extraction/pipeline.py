"""Extraction stage: raw HTML -> clean article (schema.org -> DOM heuristics), or NULL.

Counts, globally and per publisher domain (monitoring reads both):
`extract/method/<method>` for each article, `extract/null/<reason>` for each NULL, and
`extract/seconds` (total CPU time spent extracting, in whichever process did it), and
`extract/preparation_errors` (a later stage's preparation that raised in a worker: logged, the
first of each kind with its traceback; that stage then does the work itself).

The work runs in EXTRACT_WORKERS worker processes (pipelines/extraction/workers.py): the reactor
only sends the raw HTML and awaits the article, so downloads never wait on lxml and the other cores
work. A page over EXTRACT_TIMEOUT_SECONDS is NULL (`timeout`), a page that kills its worker is NULL
(`worker_crashed`); the crawl goes on. EXTRACT_WORKERS=0 extracts in the reactor thread (no
processes, no time budget: for debugging and profiling).

EXTRACT_EXTRACTOR picks the extractor (`extractors.EXTRACTORS`, or a combination "a+b"); the
default is the production chain. An unknown name stops the crawl at startup.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from scrapy.crawler import Crawler
from scrapy.exceptions import DropItem
from scrapy.settings import BaseSettings
from scrapy.statscollectors import StatsCollector
from scrapy.utils.misc import load_object

from crawler.core.domainstats import (
    EXTRACT_METHOD,
    EXTRACTION_TIME,
    NULL,
    inc_domain,
    observe_domain,
    take_page_ticket,
)
from crawler.core.failures import FailureLog
from crawler.core.items import TRANSIENT_FIELDS
from extractors import Article
from extractors.markdown import to_markdown
from extractors.registry import validate
from pipelines.extraction.workers import (
    ExtractionPool,
    Initializer,
    PageJob,
    describe,
    resolve_function,
)
from pipelines.fingerprints import (
    Fingerprint,
    LshParams,
    adopt_permutations,
    content_hash,
    permutations,
)
from settings import base as defaults

log = logging.getLogger(__name__)


class ExtractionPipeline:
    def __init__(
        self,
        stats: StatsCollector,
        keep_html: bool,
        extractor: str = "default",
        pool: ExtractionPool | None = None,
        function: str = defaults.EXTRACT_FUNCTION,
        lsh: LshParams | None = None,
        preparations: tuple[str, ...] = (),
        markdown: bool = defaults.OUTPUT_MARKDOWN,
    ) -> None:
        self.stats = stats
        self.markdown = markdown
        self.keep_html = keep_html
        self.extractor = validate(extractor)  # raises UnknownExtractorError on a typo
        self.pool = pool
        self.function = resolve_function(function)
        self.lsh = lsh
        self.preparations = preparations
        # A later stage's preparation that raised in the worker: that stage does the work itself
        # (and meets the error there); counted and logged here, the first of a kind whole.
        self.preparation_failures = FailureLog(log, "extract/preparation_errors",
                                               "a worker preparation failed",
                                               level=logging.WARNING)  # fmt: skip

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ExtractionPipeline:
        settings = crawler.settings
        preparations = worker_preparations(settings)
        pool = ExtractionPool.from_settings(settings, preload=modules_of(preparations))
        if pool is not None:
            pool.warm_up()  # its fork server loads the extractors while the crawler starts
        # The dedup stage's fingerprint is computed with the article (same process, text
        # already in hand), and made again from its parts when the notices stage changes it.
        lsh = (
            LshParams.for_threshold(settings.getfloat("DEDUP_THRESHOLD"))
            if dedup_runs(settings)
            else None
        )
        if pool is not None:
            pool.initializer = fingerprint_setup(lsh)
        return cls(
            crawler.stats,
            settings.getbool("EXTRACT_KEEP_HTML"),
            settings.get("EXTRACT_EXTRACTOR"),
            pool,
            settings.get("EXTRACT_FUNCTION"),
            lsh,
            preparations,
            settings.getbool("OUTPUT_MARKDOWN"),
        )

    def open_spider(self) -> None:
        if self.pool is not None:
            self.pool.start()
        log.info(describe(self.pool))

    async def close_spider(self) -> None:
        if self.pool is not None:
            await self.pool.close()

    async def process_item(self, item: Any) -> Any:
        if "html" not in item:
            return item  # not a page to extract (e.g. an item another spider made)
        take_page_ticket(self.stats, item)
        job = PageJob(
            item["html"],
            item["url"],
            item.get("http_encoding"),
            self.extractor,
            self.lsh,
            self.preparations,
        )
        if self.pool is None:
            outcome = self.function(job)
        else:
            outcome = await self.pool.run(job)
        result, elapsed = outcome.extraction, outcome.cpu_seconds
        for path, failure in (outcome.failed or {}).items():
            detail = f"{path} on {item['url']}"
            self.preparation_failures.report_remote(self.stats, *failure, detail=detail)
        self.stats.inc_value("extract/seconds", elapsed)
        observe_domain(self.stats, item.get("domain") or "unknown", EXTRACTION_TIME, elapsed)
        entry = item.get("feed_entry") or {}
        if not self.keep_html:
            for name in TRANSIENT_FIELDS:
                item.pop(name, None)
        domain = item.get("domain") or "unknown"
        if result.article is None:
            self._count_null(domain, result.reason or "unknown")
            raise DropItem(f"NULL ({result.reason}): {item['url']}", log_level="INFO")
        self.stats.inc_value(f"extract/method/{result.article.method}")
        inc_domain(self.stats, domain, f"{EXTRACT_METHOD}/{result.article.method}")
        fill_item(item, result.article, entry, outcome.fingerprint, markdown=self.markdown)
        if outcome.prepared:
            item["prepared"] = outcome.prepared
        return item

    def _count_null(self, domain: str, reason: str) -> None:
        self.stats.inc_value("extract/null")
        self.stats.inc_value(f"extract/null/{reason}")
        inc_domain(self.stats, domain, NULL)
        inc_domain(self.stats, domain, f"{NULL}/{reason}")


def item_stages(settings: BaseSettings) -> list[Any]:
    """The classes of the enabled item pipelines."""
    pipelines = settings.getwithbase("ITEM_PIPELINES")
    return [load_object(path) for path, order in pipelines.items() if order is not None]


def dedup_runs(settings: BaseSettings) -> bool:
    """Whether the dedup stage will take the fingerprint out of the item (else none is made:
    it must never reach an exporter)."""
    if not settings.getbool("DEDUP_ENABLED"):
        return False
    return any(getattr(stage, "TAKES_FINGERPRINT", False) for stage in item_stages(settings))


def worker_preparations(settings: BaseSettings) -> tuple[str, ...]:
    """The CPU work later stages want done on each article in the extraction worker: a stage's
    `worker_preparation(settings)` names a `module:function(article)` (None when the stage is
    off: nothing may be left in the item for no one to take). The stage takes the result out of
    the item with `take_prepared`, and does the work itself when it is not there."""
    paths = []
    for stage in item_stages(settings):
        wanted = getattr(stage, "worker_preparation", None)
        if wanted is not None and (path := wanted(settings)):
            paths.append(path)
    return tuple(paths)


def modules_of(paths: tuple[str, ...]) -> tuple[str, ...]:
    """The modules `module:function` paths live in (for the fork server to preload)."""
    return tuple(path.replace(":", ".").rpartition(".")[0] for path in paths)


def fingerprint_setup(lsh: LshParams | None) -> Initializer | None:
    """What each worker is given at its start to fingerprint texts: the MinHash permutations,
    made here once. Making them itself, a worker would import datasketch and scipy (1.5 s)."""
    if lsh is None:
        return None
    return adopt_permutations, (lsh.num_perm, lsh.seed, permutations(lsh.num_perm, lsh.seed))


def fill_item(
    item: Any,
    article: Article,
    entry: dict[str, Any],
    found: Fingerprint | None = None,
    *,
    markdown: bool = False,
) -> None:
    """Copy the article into the item; the feed entry fills what the page did not say. `found`
    is the text's near-duplicate fingerprint when the worker computed it (dedup takes it);
    `markdown` renders the article as Markdown too (OUTPUT_MARKDOWN)."""
    text = article.text
    item["title"] = article.title or entry.get("title")
    item["published"] = (
        article.published.isoformat() if article.published else entry.get("published")
    )
    item["authors"] = article.authors or entry.get("authors") or []
    item["language"] = article.language
    item["description"] = article.description or entry.get("summary")
    item["image"] = article.image
    item["canonical_url"] = article.canonical_url or item["url"]
    item["text"] = text
    item["blocks"] = [{"kind": kind, "text": block} for kind, block in article.blocks]
    item["extraction_method"] = article.method
    item["modified"] = _iso(article.modified) or _feed_modified(entry)
    item["section"] = article.section
    item["keywords"] = list(article.keywords) or list(entry.get("categories") or [])
    item["paywalled"] = article.paywalled
    item["images"] = [image.as_dict() for image in article.images]
    item["word_count"] = article.word_count
    item["markdown"] = to_markdown(article.blocks, item["title"]) if markdown else None
    item["content_hash"] = found.content_hash if found is not None else content_hash(text)
    if found is not None:
        item["fingerprint"] = found
    item.setdefault("duplicate_of", None)


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment is not None else None


def _feed_modified(entry: dict[str, Any]) -> str | None:
    """The feed entry's `updated` date when it says the entry changed after it was published
    (feeds fill `updated` with the publication date when they have no other)."""
    updated = entry.get("updated")
    return updated if updated and updated != entry.get("published") else None
