"""Extraction off the reactor (pipelines/extraction/workers.py): the worker pool gives the same
articles as in-reactor extraction, and a page that hangs or crashes its worker is one NULL with a
reason while the pool goes on."""

from __future__ import annotations

import asyncio
import os
import time
from collections import Counter
from pathlib import Path

import pytest
from scrapy.exceptions import DropItem
from scrapy.utils.test import get_crawler

from crawler.core.items import ArticleItem
from extractors import Article
from newsharvest_bench.faulty import CRASH_MARK, EXIT_MARK, HANG_MARK
from pipelines.extraction.pipeline import ExtractionPipeline
from pipelines.extraction.workers import (
    AUTO_WORKERS,
    MAX_AUTO_WORKERS,
    MIN_AUTO_WORKERS,
    NULL_TIMEOUT,
    NULL_WORKER_CRASHED,
    TASKS_PER_WORKER,
    ExtractionPool,
    PageJob,
    run_preparations,
    worker_count,
)
from pipelines.notices.pipeline import WORKER_PREPARATION

PAGES = Path(__file__).parent / "fixtures" / "pages"
FAULTY = "newsharvest_bench.faulty.faulty_extract_page"
TIMEOUT_SECONDS = 1.0
DEDUP_ON = {
    "ITEM_PIPELINES": {"pipelines.dedup.pipeline.DedupPipeline": 300}
}  # as settings/base.py names it


def _item(name: str, url: str | None = None) -> ArticleItem:
    return ArticleItem(
        url=url or f"https://valleytimes.test/{name}",
        domain="valleytimes.test",
        html=(PAGES / name).read_bytes(),
        http_encoding=None,
        feed_entry={},
    )


def _pipeline(workers: int, **settings: object) -> ExtractionPipeline:
    crawler = get_crawler(
        settings_dict={
            "EXTRACT_WORKERS": workers,
            "EXTRACT_TIMEOUT_SECONDS": TIMEOUT_SECONDS,
            "EXTRACT_FUNCTION": FAULTY,
            **settings,
        }
    )
    return ExtractionPipeline.from_crawler(crawler)


async def _run_all(pipeline: ExtractionPipeline, items: list[ArticleItem]) -> list[object]:
    """Every item through the pipeline concurrently (as Scrapy does); a NULL is its DropItem."""
    pipeline.open_spider()
    try:
        return await asyncio.gather(
            *(pipeline.process_item(item) for item in items), return_exceptions=True
        )
    finally:
        await pipeline.close_spider()


def test_auto_workers_is_one_per_core_within_bounds() -> None:
    assert MIN_AUTO_WORKERS <= worker_count(AUTO_WORKERS) <= MAX_AUTO_WORKERS
    assert worker_count(0) == 0 and worker_count(3) == 3
    with pytest.raises(ValueError, match="EXTRACT_WORKERS"):
        worker_count(-2)


def test_pool_gives_the_articles_in_reactor_extraction_gives() -> None:
    names = ["dom-article.html", "jsonld-graph.html", "table-layout.html"]
    in_reactor = asyncio.run(_run_all(_pipeline(0, **DEDUP_ON), [_item(n) for n in names]))
    pooled = asyncio.run(_run_all(_pipeline(2, **DEDUP_ON), [_item(n) for n in names]))
    assert [dict(item) for item in pooled] == [dict(item) for item in in_reactor]
    # The worker also computed the dedup stage's fingerprint of the final text.
    assert all(item["fingerprint"].content_hash == item["content_hash"] for item in pooled)


def test_workers_never_import_datasketch_scipy_or_scrapy() -> None:
    """Each worker is given the MinHash permutations at its start: importing datasketch (and
    scipy) would cost each new worker 1.5 s of its first page's budget."""
    from newsharvest_bench.faulty import heavy_modules_loaded

    pipeline = _pipeline(1, **DEDUP_ON)
    item = _item("dom-article.html")
    job = PageJob(item["html"], item["url"], None, "default", pipeline.lsh)

    async def in_worker() -> object:
        assert pipeline.pool is not None
        pipeline.open_spider()
        try:
            return await pipeline.pool.call(heavy_modules_loaded, job)
        finally:
            await pipeline.close_spider()

    assert asyncio.run(in_worker()) == []


def test_fingerprint_is_left_out_when_no_dedup_stage_will_take_it() -> None:
    (item,) = asyncio.run(_run_all(_pipeline(1), [_item("dom-article.html")]))
    assert "fingerprint" not in item


NOTICES_ON = {"ITEM_PIPELINES": {"pipelines.notices.pipeline.NoticePipeline": 200}}


def test_the_worker_prepares_the_article_for_a_later_stage_that_asks() -> None:
    """The notices stage asks for its preparation: the worker makes it beside the article (its
    module preloaded by the fork server) and it reaches the item; off, nothing is made."""
    (item,) = asyncio.run(_run_all(_pipeline(1, **NOTICES_ON), [_item("dom-article.html")]))
    prepared = item["prepared"][WORKER_PREPARATION]
    assert prepared.blocks == [(b["kind"], b["text"]) for b in item["blocks"]]
    assert len(prepared.facts) == len(item["blocks"]) and prepared.observation.signatures
    off = _pipeline(1, NOTICES_ENABLED=False, **NOTICES_ON)
    (item,) = asyncio.run(_run_all(off, [_item("dom-article.html")]))
    assert "prepared" not in item


def test_a_failing_preparation_is_left_out_for_its_stage_to_do() -> None:
    article = Article(blocks=[("paragraph", "Some words of an article.")], method="dom")
    missing = "pipelines.notices.learner:no_such_function"
    prepared, failed = run_preparations(article, (missing, WORKER_PREPARATION))
    assert list(prepared) == [WORKER_PREPARATION] and list(failed) == [missing]
    assert failed[missing].kind == "ValueError" and "no_such_function" in failed[missing].line
    assert failed[missing].traceback.startswith("Traceback (most recent call last)")


def test_a_preparation_failing_in_a_worker_is_counted_and_its_first_traceback_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The worker cannot log to the crawl or count in its stats: the stage does, for it."""
    pipeline = _pipeline(1, EXTRACT_FUNCTION="pipelines.extraction.workers.extract_page")
    missing = "pipelines.notices.learner:no_such_function"
    pipeline.preparations = (missing,)
    pages = [_item("dom-article.html", f"https://valleytimes.test/{n}") for n in range(3)]
    items = asyncio.run(_run_all(pipeline, pages))
    assert all(isinstance(item, ArticleItem) and "prepared" not in item for item in items)
    assert pipeline.stats.get_value("extract/preparation_errors") == 3
    logged = [r for r in caplog.records if "a worker preparation failed" in r.getMessage()]
    assert len(logged) == 1  # the others: counted
    message = logged[0].getMessage()
    assert f"({missing} on https://valleytimes.test/" in message and "ValueError: " in message
    assert "Traceback (most recent call last)" in message and "in function_at" in message


def test_hang_and_crashes_are_nulls_and_the_pool_goes_on() -> None:
    faults = {
        HANG_MARK: NULL_TIMEOUT,
        CRASH_MARK: NULL_WORKER_CRASHED,
        EXIT_MARK: NULL_WORKER_CRASHED,
    }
    pipeline = _pipeline(2)
    bad = [_item("dom-article.html", f"https://valleytimes.test/{mark}") for mark in faults]
    good = [_item("dom-article.html", f"https://valleytimes.test/ok-{n}") for n in range(6)]
    started = time.monotonic()
    results = asyncio.run(_run_all(pipeline, bad + good))
    elapsed = time.monotonic() - started

    for mark, result in zip(faults, results[: len(faults)], strict=True):
        assert isinstance(result, DropItem) and f"NULL ({faults[mark]})" in str(result)
    assert all(r["extraction_method"] == "dom" for r in results[len(faults) :])
    stats = pipeline.stats.get_stats()
    assert stats["extract/null/timeout"] == 1 and stats["extract/null/worker_crashed"] == 2
    assert stats["domain/valleytimes.test/null/timeout"] == 1
    # The hung page cost its budget, not the test's timeout.
    assert elapsed < TIMEOUT_SECONDS + 5


def test_pool_survives_many_crashes_in_a_row() -> None:
    pool = ExtractionPool(1, TIMEOUT_SECONDS, FAULTY)
    html = (PAGES / "dom-article.html").read_bytes()

    async def crawl() -> list[str | None]:
        pool.start()
        try:
            reasons = []
            for n in range(4):
                url = f"https://valleytimes.test/{CRASH_MARK}-{n}"
                reasons.append(
                    (await pool.run(PageJob(html, url, None, "default"))).extraction.reason
                )
            ok = await pool.run(PageJob(html, "https://valleytimes.test/ok", None, "default"))
            reasons.append(ok.extraction.article.method if ok.extraction.article else None)
            return reasons
        finally:
            await pool.close()

    assert asyncio.run(crawl()) == [NULL_WORKER_CRASHED] * 4 + ["dom"]


def test_unknown_worker_function_fails_at_startup() -> None:
    with pytest.raises((ValueError, ImportError)):
        _pipeline(1, EXTRACT_FUNCTION="newsharvest_bench.faulty.no_such_function")


def test_any_picklable_function_runs_in_a_worker() -> None:
    """`pool.call`: what `run` is built on, for any CPU-bound function and arguments."""
    from pipelines.dedup import content_hash

    pool = ExtractionPool(1, TIMEOUT_SECONDS, FAULTY)
    text = (PAGES / "dom-article.html").read_text()

    async def in_worker() -> object:
        try:
            hashed = await pool.call(content_hash, text)
            with pytest.raises(ZeroDivisionError):  # the function's own exception, as raised
                await pool.call(divmod, 7, 0)
            return hashed
        finally:
            await pool.close()

    assert asyncio.run(in_worker()) == content_hash(text)


def test_workers_run_nicer_than_the_reactor_by_the_niceness_asked() -> None:
    pool = ExtractionPool(2, TIMEOUT_SECONDS, FAULTY, niceness=4)

    async def in_workers() -> list[int]:
        try:
            return list(await asyncio.gather(*(pool.call(os.nice, 0) for _ in range(4))))
        finally:
            await pool.close()

    assert asyncio.run(in_workers()) == [min(os.nice(0) + 4, 19)] * 4  # 19: the lowest priority
    with pytest.raises(ValueError, match="EXTRACT_WORKER_NICENESS"):
        ExtractionPool(1, TIMEOUT_SECONDS, FAULTY, niceness=20)


def test_pages_queued_behind_a_faulty_one_are_not_blamed_for_it() -> None:
    """One worker, pages sent ahead of time (TASKS_PER_WORKER): the page running when the worker
    hangs or dies is the NULL; the page queued behind it goes to the replacement and gets its
    article, with a budget of its own."""
    assert TASKS_PER_WORKER >= 2
    pipeline = _pipeline(1)
    marks = [HANG_MARK, "ok-after-hang", CRASH_MARK, "ok-after-crash", EXIT_MARK, "ok-after-exit"]
    items = [_item("dom-article.html", f"https://valleytimes.test/{mark}") for mark in marks]
    results = asyncio.run(_run_all(pipeline, items))

    assert [type(result).__name__ for result in results[::2]] == ["DropItem"] * 3
    assert "NULL (timeout)" in str(results[0])
    assert all("NULL (worker_crashed)" in str(result) for result in results[2::2])
    assert [result["extraction_method"] for result in results[1::2]] == ["dom"] * 3
    stats = pipeline.stats.get_stats()
    assert stats["extract/null/timeout"] == 1 and stats["extract/null/worker_crashed"] == 2


def _job(name: str) -> PageJob:
    """A good page to extract, under a name of its own."""
    html = (PAGES / "dom-article.html").read_bytes()
    return PageJob(html, f"https://valleytimes.test/{name}", None, "default")


def _waiting_for_replies(pool: ExtractionPool, count: int) -> bool:
    """`count` tasks sent and a reader waiting on their worker's socket, its budget running."""
    workers = [worker for worker in pool._all if worker.queue]
    sent = sum(len(worker.queue) for worker in workers)
    return sent >= count and all(worker.reader and worker.reader._fut_waiter for worker in workers)


def test_a_reactor_stall_longer_than_the_budget_does_not_null_pages_answered_during_it() -> None:
    """The budget runs on the event loop's clock, which also runs while the loop is stalled (a
    long synchronous stage): replies that came in during the stall are read, not timed out."""
    pool = ExtractionPool(1, TIMEOUT_SECONDS, FAULTY)

    async def crawl() -> list[str | None]:
        try:
            await pool.run(_job("warm-up"))
            pages = [asyncio.ensure_future(pool.run(_job(f"page-{n}"))) for n in range(2)]
            while not _waiting_for_replies(pool, len(pages)):
                await asyncio.sleep(0)
            time.sleep(TIMEOUT_SECONDS * 2)  # the loop stalled: the worker answers meanwhile
            outcomes = await asyncio.gather(*pages)
            return [o.extraction.article.method if o.extraction.article else o.extraction.reason
                    for o in outcomes]  # fmt: skip
        finally:
            await pool.close()

    assert asyncio.run(asyncio.wait_for(crawl(), 30)) == ["dom", "dom"]


def test_worn_out_workers_are_replaced_between_pages_sent_ahead() -> None:
    """EXTRACT_WORKER_MAX_TASKS with pages sent ahead: no worker serves more than its share."""
    pool = ExtractionPool(1, TIMEOUT_SECONDS, FAULTY, max_tasks=2)

    async def serving_pids() -> list[int]:
        try:
            return await asyncio.gather(*(pool.call(os.getpid) for _ in range(7)))
        finally:
            await pool.close()

    served = Counter(asyncio.run(serving_pids()))
    assert sum(served.values()) == 7 and max(served.values()) <= 2 and len(served) >= 4
    assert os.getpid() not in served


def test_a_cancelled_caller_leaves_the_pool_working() -> None:
    """A call cancelled while its page waits in a worker (the crawl closing, a stage's timeout):
    the reply is read and dropped, and the next calls are answered in order."""
    pool = ExtractionPool(1, TIMEOUT_SECONDS, FAULTY)

    async def crawl() -> list[str | None]:
        try:
            first = asyncio.ensure_future(pool.run(_job("first")))
            cancelled = asyncio.ensure_future(pool.run(_job("cancelled")))
            await asyncio.sleep(0)
            cancelled.cancel()
            rest = await asyncio.gather(first, *(pool.run(_job(f"next-{n}")) for n in range(3)))
            with pytest.raises(asyncio.CancelledError):
                await cancelled
            return [o.extraction.article.method if o.extraction.article else None for o in rest]
        finally:
            await pool.close()

    assert asyncio.run(crawl()) == ["dom"] * 4


def test_a_page_being_sent_when_the_worker_is_killed_goes_to_the_next_one() -> None:
    """A page larger than the socket's buffer waits, half sent, behind a page that hangs: the
    hung worker is killed mid-send, and the page goes whole to its replacement."""
    html = (PAGES / "dom-article.html").read_bytes()
    padding = b"<!-- " + b"x" * (8 * 1024 * 1024) + b" -->"
    big = _item("dom-article.html", "https://valleytimes.test/big-page")
    big["html"] = html.replace(b"</body>", padding + b"</body>")
    hang = _item("dom-article.html", f"https://valleytimes.test/{HANG_MARK}")
    after = _item("dom-article.html", "https://valleytimes.test/after")
    # Bounded: the bug this guards against left the page's send waiting forever.
    results = asyncio.run(asyncio.wait_for(_run_all(_pipeline(1), [hang, big, after]), 60))

    assert isinstance(results[0], DropItem) and "NULL (timeout)" in str(results[0])
    assert [result["extraction_method"] for result in results[1:]] == ["dom", "dom"]
