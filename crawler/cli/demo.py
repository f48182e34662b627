"""`newsharvest demo`: harvest the local news-site fixture end to end and print a per-domain
summary. Needs no server: the fixture runs in-process on a loopback port, and the crawl uses the
fixture profile (local profile + the fixture's proxy)."""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path
from typing import Any

from crawler.cli.search import DEMO_INDEX_NAME as INDEX_NAME
from crawler.cli.table import render_table

DEMO_FILE = "demo-articles.jsonl"  # in OUTPUT_DIR unless --output says otherwise
TITLE_WIDTH = 72
SAMPLE_HITS = 3
SAMPLE_WORD_MIN_LENGTH = 6  # the sample query: the commonest title word at least this long


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "demo", help="crawl the local news-site fixture and print a per-domain summary"
    )
    parser.add_argument(
        "--output", type=Path, help=f"JSON Lines file (default: <OUTPUT_DIR>/{DEMO_FILE})"
    )
    parser.add_argument("--seed", type=int, default=1, help="fixture seed (same seed, same site)")
    parser.add_argument("--quiet", action="store_true", help="do not list articles as they land")
    parser.add_argument("--log-level", default="WARNING", help="Scrapy log level")
    parser.add_argument(
        "--index", type=Path, help=f"SQLite full-text index (default: {INDEX_NAME} beside --output)"
    )
    parser.set_defaults(handler=run, settings_profile="settings.fixture")  # no scrapy.cfg needed


def run(args: argparse.Namespace) -> int:
    from scrapy import signals
    from scrapy.crawler import CrawlerProcess

    from crawler.core.paths import output_dir
    from crawler.newsroom import Newsroom, NewsroomServer

    room = Newsroom(seed=args.seed)
    settings = args.settings
    args.output = args.output or output_dir(settings) / DEMO_FILE
    args.output.parent.mkdir(parents=True, exist_ok=True)
    settings.set("LOG_LEVEL", args.log_level.upper())
    settings.set("HARVEST_STATE", "memory")  # every demo harvests the fixture afresh
    settings.set("DEDUP_EMBEDDED_PATH", ":memory:")  # ... and meets its stories for the first time
    settings.set("FEEDS", {str(args.output): {"format": "jsonlines", "overwrite": True}})
    index_path = args.index or args.output.parent / INDEX_NAME
    settings.set("SINK_SQLITE_ENABLED", True)
    settings.set("SINK_SQLITE_PATH", str(index_path))

    with NewsroomServer(room, port=0) as server:
        settings.set("PROXY_URL", server.proxy_url)
        print(f"news-site fixture: {len(room.domains)} publisher domains behind {server.proxy_url}")
        print(f"feeds: {len(room.feed_urls)}; harvesting ...\n")
        process = CrawlerProcess(settings)
        crawler = process.create_crawler("feeds")
        if not args.quiet:
            crawler.signals.connect(_print_article, signal=signals.item_scraped)
        started = time.monotonic()
        process.crawl(crawler, feeds=",".join(room.feed_urls))
        process.start()
        elapsed = time.monotonic() - started

    stats = crawler.stats.get_stats() if crawler.stats else {}
    print()
    print(summary_table(stats, room.domains))
    print(f"\n{stats.get('item_scraped_count', 0)} articles in {elapsed:.1f} s -> {args.output}")
    methods = {k.removeprefix("extract/method/"): v for k, v in stats.items()
               if k.startswith("extract/method/")}  # fmt: skip
    if methods:
        print("articles by extraction method: "
              + ", ".join(f"{k} {v}" for k, v in sorted(methods.items())))  # fmt: skip
    nulls = {k.removeprefix("extract/null/"): v for k, v in stats.items()
             if k.startswith("extract/null/")}  # fmt: skip
    if nulls:
        print(
            "NULL (no article) by reason: "
            + ", ".join(f"{k} {v}" for k, v in sorted(nulls.items()))
        )
    superseded = stats.get("dedup/superseded", 0)
    copies = stats.get("dedup/exact", 0) + stats.get("dedup/near", 0) + superseded
    if copies:
        late = f"; {superseded} output before their original, named in its supersedes"
        print(
            f"duplicates: {copies} copies of earlier articles (exact "
            f"{stats.get('dedup/exact', 0)}, near {stats.get('dedup/near', 0)}), "
            "output with duplicate_of set" + (late if superseded else "")
        )
    print(index_summary(index_path, stats))
    alerts = {k.removeprefix("monitor/alerts/"): v for k, v in stats.items()
              if k.startswith("monitor/alerts/")}  # fmt: skip
    print(f"\nper-domain health ({sum(alerts.values())} alert(s)): newsharvest monitor --print, "
          "or the dashboard: newsharvest monitor")  # fmt: skip
    return 0 if stats.get("finish_reason") == "finished" else 1


def index_summary(path: Path, stats: dict[str, Any]) -> str:
    """Where the index is, what is in it, and a sample search to copy."""
    from collections import Counter

    from crawler.cli.search import format_hit
    from pipelines.sinks.sqlite import NotAnIndex, SQLiteIndex

    try:
        index = SQLiteIndex.open_readonly(path)
    except NotAnIndex as error:
        return f"\nno search index: {error}"
    try:
        titles = [row[0] or "" for row in index.connection.execute("SELECT title FROM articles")]
        words = Counter(
            word.strip(".,:;'\"?!").lower()
            for title in titles
            for word in title.split()
            if len(word.strip(".,:;'\"?!")) >= SAMPLE_WORD_MIN_LENGTH
        )
        # A copy superseded by its original (found later, first by order key) left the index.
        not_indexed = stats.get("sink/sqlite/skipped_duplicate", 0) + stats.get(
            "dedup/superseded", 0
        )
        lines = [
            f"\nsearch index: {path} ({index.count()} articles, "
            f"{not_indexed} near-duplicates not indexed)"
        ]
        if words:
            word = min(words, key=lambda w: (-words[w], w))  # commonest; ties alphabetical
            hits, total = index.search(word, limit=SAMPLE_HITS)
            command = (f"{invoked_as()} search --index {shlex.quote(str(path))} "
                       f"{shlex.quote(word)}")  # fmt: skip
            lines.append(f"try it:  {command}   ({total} matches; top {len(hits)}:)\n")
            lines += [format_hit(rank, hit) for rank, hit in enumerate(hits, start=1)]
        return "\n".join(lines).rstrip()
    finally:
        index.close()


def invoked_as() -> str:
    """How to type this command again here: `newsharvest` when that is the one on the PATH,
    else the path it was started by (`.venv/bin/newsharvest` in a checkout)."""
    import shutil

    script = Path(sys.argv[0])
    on_path = shutil.which("newsharvest")
    if script.name != "newsharvest":
        return f"{Path(sys.executable).name} -m crawler.cli"
    if on_path and Path(on_path).resolve() == script.resolve():
        return "newsharvest"
    return shlex.quote(sys.argv[0])


def _print_article(item: Any) -> None:
    title = (item.get("title") or "").replace("\n", " ")
    if len(title) > TITLE_WIDTH:
        title = title[: TITLE_WIDTH - 1] + "\u2026"
    print(f"  {item.get('domain', '?'):<22} {item.get('extraction_method', '?'):<12} {title}")
    sys.stdout.flush()


def summary_table(stats: dict[str, Any], domains: list[str] | None = None) -> str:
    """Per-domain table: feeds polled, pages fetched, articles output, NULL pages, notice
    blocks removed, errors."""
    from crawler.core.domainstats import ARTICLES, ERRORS, FEEDS_POLLED, FETCHED, NULL, domain_table
    from pipelines.notices.pipeline import REMOVED as NOTICES_REMOVED

    table = domain_table(stats)
    names = sorted(set(domains or []) | set(table))
    columns = (FEEDS_POLLED, FETCHED, ARTICLES, NULL, NOTICES_REMOVED, ERRORS)
    rows = [[name, *(table.get(name, {}).get(column, 0) for column in columns)] for name in names]
    totals = ["total", *(sum(row[i + 1] for row in rows) for i in range(len(columns)))]
    return render_table(
        ["domain", "feeds", "fetched", "articles", "NULL", "notices", "errors"], [*rows, totals]
    )
