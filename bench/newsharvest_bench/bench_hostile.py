"""`newsharvest bench hostile`: the crawler's peak memory and behaviour on the hostile suite.

One real crawl (a `scrapy crawl feeds` subprocess, the fixture profile) of the five designed
publishers plus every hostile case of `hostile.test` (compression bombs, endless and huge bodies,
a 100,000-entry feed, entity bombs, slow pages, redirect loops, SSRF links, half emojis and
bidirectional overrides, a UTF-16 page, an article a stage fails on; see
newsharvest_bench/hostile.py). Prints the crawler's peak memory (its own ru_maxrss, or the
PSS of it and its extraction workers together if larger; target < 1 GiB), the time, the hostile
domain's counters by reason, and checks that every designed article still came out, that no
request left the `.test` domains, and that the text cases came out as they must (U+FFFD for half
an emoji, no bidirectional controls in titles, the UTF-16 page decoded, the failing article in
the rejected file). The stage that fails (`RaisingStage`) is put in ITEM_PIPELINES for the run,
with one try per article (HARVEST_MAX_ATTEMPTS=1: the run is one pass).

Then the price of extraction isolation (pipelines/extraction/workers.py), out of the crawl: one
worker extracting the same page over and over, kept (EXTRACT_WORKER_MAX_TASKS=0) or replaced after
every page (=1), and after a crash on every other page: the difference per page is what replacing a
worker costs."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from newsharvest_bench.hostile import HostileSite

PEAK_RSS_TARGET_BYTES = 1024**3  # 1 GiB
RECYCLE_PAGES = 200  # pages per isolation measurement
DEFAULT_DOWNLOAD_TIMEOUT_S = 5  # the slow pages would otherwise hold the crawl for 30 s
MIB = 1024 * 1024


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "hostile", help="peak memory and outcomes of a crawl of the hostile-input suite"
    )
    parser.add_argument(
        "--download-timeout",
        type=float,
        default=DEFAULT_DOWNLOAD_TIMEOUT_S,
        help="DOWNLOAD_TIMEOUT for the crawl (seconds)",
    )
    parser.add_argument(
        "--feed-max-entries", type=int, default=None, help="FEED_MAX_ENTRIES (default: settings)"
    )
    parser.add_argument("--setting", "-s", action="append", default=[], help="NAME=VALUE")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from crawler.cli.table import render_table
    from crawler.core.rejected import PIPELINE_REJECTED_FILE
    from crawler.newsroom import Newsroom, NewsroomServer
    from newsharvest_bench.crawlrun import read_jsonl, run_measured
    from newsharvest_bench.hostile import (
        HOSTILE_DOMAIN,
        RAISING_STAGE,
        RAISING_STAGE_ORDER,
        HostileSite,
    )
    from settings import base

    site = HostileSite(seed=1)
    room = Newsroom(seed=1, extra_sites=[site])
    pipelines = {**base.ITEM_PIPELINES, RAISING_STAGE: RAISING_STAGE_ORDER}
    settings = [f"DOWNLOAD_TIMEOUT={args.download_timeout}", "LOG_LEVEL=INFO",
                "ITEM_PIPELINES=" + json.dumps(pipelines), "HARVEST_MAX_ATTEMPTS=1",
                *args.setting]  # fmt: skip
    if args.feed_max_entries is not None:
        settings.append(f"FEED_MAX_ENTRIES={args.feed_max_entries}")
    feeds = room.feed_urls + site.feed_urls
    cases, publishers = len(site.cases), len(room.domains)
    print(f"hostile suite: {cases} cases on {HOSTILE_DOMAIN} + {publishers} designed publishers")
    with (
        tempfile.TemporaryDirectory(prefix="nh-hostile-") as scratch,
        NewsroomServer(room) as server,
    ):
        started = time.monotonic()
        sampler = TreeMemory()
        crawl = run_measured(feeds, Path(scratch) / "articles.jsonl", settings,
                             proxy_url=server.proxy_url, on_start=sampler.start)  # fmt: skip
        elapsed = time.monotonic() - started
        sampler.stop()
        requests = server.request_log
        rejected = read_jsonl(Path(scratch) / "state" / "journal" / PIPELINE_REJECTED_FILE)

    prefix = f"domain/{HOSTILE_DOMAIN}/"
    rows = sorted(
        (key.removeprefix(prefix), value)
        for key, value in crawl.stats.items()
        if key.startswith(prefix) and "/" in key.removeprefix(prefix)
    )
    print(render_table(["hostile.test counter", "count"], rows))
    output = {item["url"] for item in crawl.items}
    missing = [page.url for page in room.articles() if page.url not in output]
    strays = [r for r in requests if not r.host.endswith(".test")]
    peak = max(crawl.max_rss_bytes, sampler.peak)
    print(
        f"\ncrawl exit code {crawl.returncode}, {elapsed:.1f} s, {len(requests)} requests served, "
        f"{len(crawl.items)} articles output"
    )
    print(f"designed articles missing: {len(missing)}; requests outside .test: {len(strays)}")
    checks = text_case_checks(site, {item["url"]: item for item in crawl.items}, rejected)
    print(render_table(["text case", "expected", "ok"], checks))
    verdict = "ok" if peak < PEAK_RSS_TARGET_BYTES else "OVER TARGET"
    print(f"peak memory: {peak / MIB:.0f} MiB, the larger of the crawl process's ru_maxrss "
          f"({crawl.max_rss_bytes / MIB:.0f} MiB) and the PSS of it and its extraction workers "
          f"together ({sampler.peak / MIB:.0f} MiB) (target < {PEAK_RSS_TARGET_BYTES / MIB:.0f} "
          f"MiB: {verdict})")  # fmt: skip
    print_isolation_cost()
    if crawl.returncode != 0:
        print(crawl.log[-3000:], file=sys.stderr)
    failed = crawl.returncode != 0 or missing or strays or peak >= PEAK_RSS_TARGET_BYTES
    return 1 if failed or not all(ok == "yes" for _, _, ok in checks) else 0


def text_case_checks(
    site: HostileSite, output: dict[str, dict[str, Any]], rejected: list[dict[str, Any]]
) -> list[tuple[str, str, str]]:
    """(case, what must come out, yes/no) for the cases about text and failing stages."""
    from newsharvest_bench.hostile import BIDI_AUTHOR, REPLACEMENT_CHARACTER, with_half_emoji

    cut = with_half_emoji(site.articles[site.half_emoji_article], REPLACEMENT_CHARACTER)
    half = output.get(cut.url, {})
    bidi = output.get(site.bidi_article, {})
    wide_url = site.cases["page_charset_utf16_http_only"].url
    wide = output.get(wide_url, {})
    checks = [
        ("half an emoji (JSON-LD, JSON Feed)", "output, U+FFFD in title and text",
         half.get("title") == cut.title and half.get("text") == cut.text),
        ("half an emoji (RSS &#xD83D;)", "output, U+FFFD in the description",
         all(REPLACEMENT_CHARACTER in (output.get(url, {}).get("description") or "")
             for url in site.feed_articles["feed_surrogate_references"])),
        ("bidirectional overrides", "title and author without them",
         bidi.get("title") == site.articles[site.bidi_article].title
         and bidi.get("authors") == [BIDI_AUTHOR]),
        ("UTF-16, charset only in HTTP", "decoded to the true text",
         wide.get("text") == site.articles[wide_url].text),
        ("a stage fails on an article", "in the rejected file, not output",
         [r["record"].get("url") for r in rejected] == [site.poison_article]
         and site.poison_article not in output),
    ]  # fmt: skip
    return [(case, expected, "yes" if ok else "no") for case, expected, ok in checks]


class TreeMemory:
    """Samples the PSS of a process and its descendants (the extraction workers) until stopped."""

    def __init__(self) -> None:
        self.peak = 0
        self._done = threading.Event()

    def start(self, pid: int) -> None:
        threading.Thread(target=self._sample, args=(pid,), daemon=True).start()

    def stop(self) -> None:
        self._done.set()

    def _sample(self, pid: int) -> None:
        from newsharvest_bench.bench_pipeline import SAMPLE_SECONDS, tree_memory

        while not self._done.wait(SAMPLE_SECONDS):
            self.peak = max(self.peak, tree_memory(pid))


def print_isolation_cost() -> None:
    import asyncio
    import logging

    from crawler.cli.table import render_table

    # One warning per crashed page is what a crawl should log; here it would be 100 lines.
    logging.getLogger("pipelines.extraction.workers").setLevel(logging.ERROR)
    kept = asyncio.run(_pages_per_second(max_tasks=0))
    recycled = asyncio.run(_pages_per_second(max_tasks=1))
    crashing = asyncio.run(_pages_per_second(max_tasks=0, crash_every=2))
    rows = [
        ("worker kept", f"{kept:.0f}", "-"),
        ("new worker every page", f"{recycled:.0f}", f"{1000 / recycled - 1000 / kept:.1f}"),
        (
            "crash on every 2nd page",
            f"{crashing:.0f}",
            f"{2 * (1000 / crashing - 1000 / kept):.1f}",
        ),
    ]
    print("\nextraction isolation, 1 worker, same page extracted "
          f"{RECYCLE_PAGES} times:")  # fmt: skip
    print(render_table(["worker", "pages/s", "ms per replaced worker"], rows))


def _sample_article() -> bytes:
    """The page the isolation measurement extracts again and again: a simulator article."""
    from crawler.newsroom import Newsroom

    room = Newsroom(seed=1)
    page = room.articles()[0]
    host, _, path = page.url.removeprefix("http://").partition("/")
    _, _, body = room.render(host, "/" + path)
    assert isinstance(body, bytes)
    return body


async def _pages_per_second(max_tasks: int, crash_every: int = 0) -> float:
    """One worker through RECYCLE_PAGES pages in a row; with `crash_every`, that share of the
    pages segfault their worker (newsharvest_bench/faulty.py) and come back NULL."""
    from newsharvest_bench.faulty import CRASH_MARK
    from pipelines.extraction.workers import ExtractionPool, PageJob

    pool = ExtractionPool(
        1, 30.0, "newsharvest_bench.faulty.faulty_extract_page", max_tasks=max_tasks
    )
    html = _sample_article()
    pool.start()
    await pool.run(PageJob(html, "https://warm.test/", None, "default"))  # fork server is up
    started = time.perf_counter()
    for n in range(RECYCLE_PAGES):
        crash = crash_every and n % crash_every == 0
        url = f"https://bench.test/{CRASH_MARK if crash else 'ok'}/{n}"
        await pool.run(PageJob(html, url, None, "default"))
    elapsed = time.perf_counter() - started
    await pool.close()
    return RECYCLE_PAGES / elapsed
