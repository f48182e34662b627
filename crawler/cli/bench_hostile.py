"""`newsharvest bench hostile`: the crawler's peak memory and behaviour on the hostile suite.

One real crawl (a `scrapy crawl feeds` subprocess, the fixture profile) of the five designed
publishers plus every hostile case of `hostile.test` (compression bombs, endless and huge bodies,
a 100,000-entry feed, entity bombs, slow pages, redirect loops, SSRF links; see
tests/fixtures/newsroom/hostile.py). Prints the crawl process's peak resident memory (ru_maxrss,
target < 1 GiB), the time, the hostile domain's counters by reason, and checks that every
designed article still came out and that no request left the `.test` domains.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

PEAK_RSS_TARGET_BYTES = 1024**3  # 1 GiB
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
    from tests.crawlers import run_measured
    from tests.fixtures.newsroom import Newsroom, NewsroomServer
    from tests.fixtures.newsroom.hostile import HOSTILE_DOMAIN

    room = Newsroom(seed=1, hostile=True)
    assert room.hostile is not None
    settings = [f"DOWNLOAD_TIMEOUT={args.download_timeout}", "LOG_LEVEL=INFO", *args.setting]
    if args.feed_max_entries is not None:
        settings.append(f"FEED_MAX_ENTRIES={args.feed_max_entries}")
    feeds = room.feed_urls + room.hostile.feed_urls
    cases, publishers = len(room.hostile.cases), len(room.domains)
    print(f"hostile suite: {cases} cases on {HOSTILE_DOMAIN} + {publishers} designed publishers")
    with (
        tempfile.TemporaryDirectory(prefix="nh-hostile-") as scratch,
        NewsroomServer(room) as server,
    ):
        started = time.monotonic()
        crawl = run_measured(
            feeds, Path(scratch) / "articles.jsonl", settings, proxy_url=server.proxy_url
        )
        elapsed = time.monotonic() - started
        requests = server.request_log

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
    peak = crawl.max_rss_bytes
    print(
        f"\ncrawl exit code {crawl.returncode}, {elapsed:.1f} s, {len(requests)} requests served, "
        f"{len(crawl.items)} articles output"
    )
    print(f"designed articles missing: {len(missing)}; requests outside .test: {len(strays)}")
    verdict = "ok" if peak < PEAK_RSS_TARGET_BYTES else "OVER TARGET"
    print(f"peak memory (ru_maxrss of the crawl process): {peak / MIB:.0f} MiB "
          f"(target < {PEAK_RSS_TARGET_BYTES / MIB:.0f} MiB: {verdict})")  # fmt: skip
    if crawl.returncode != 0:
        print(crawl.log[-3000:], file=sys.stderr)
    failed = crawl.returncode != 0 or missing or strays or peak >= PEAK_RSS_TARGET_BYTES
    return 1 if failed else 0
