"""`newsharvest replay FILE_OR_GLOB_OR_URL_OR_LISTING ...`: run the item pipeline over WARC files.

The `replay` spider (crawler/spiders/replay.py) in this process, with the profile of
SCRAPY_SETTINGS_MODULE (default settings.local) and the same outputs as a crawl: the sinks,
HARVEST_JOURNAL_PATH (`--journal`), monitoring. Progress goes to stderr; Ctrl-C stops cleanly and
a later run with the same arguments and state continues where it stopped (docs/archives.md).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

DEFAULT_PROFILE = "settings.local"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "replay", help="run the pipeline over WARC files (own captures, CC-NEWS), resumable"
    )
    parser.add_argument(
        "warcs", nargs="+", metavar="WARC",
        help="a .warc/.warc.gz path, a glob, an http(s) URL (streamed), or a listing file "
        "(*.paths[.gz], *.txt: one path or URL a line, e.g. CC-NEWS warc.paths.gz)",
    )  # fmt: skip
    parser.add_argument("--domain", help="only this publisher domain (and its subdomains)")
    parser.add_argument("--since", help="only records fetched at or after (ISO 8601 date)")
    parser.add_argument("--until", help="only records fetched before (ISO 8601 date)")
    parser.add_argument("--limit", type=int, help="stop after this many pages sent on")
    parser.add_argument("--journal", help="crash-safe JSON Lines output (HARVEST_JOURNAL_PATH)")
    parser.add_argument(
        "--set", action="append", default=[], metavar="NAME=VALUE",
        help="a Scrapy setting (repeatable), e.g. STATE_DIR=replay-state",
    )  # fmt: skip
    parser.add_argument("--log-level", default="WARNING")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from scrapy.crawler import CrawlerProcess
    from scrapy.utils.project import get_project_settings

    from crawler.spiders.replay import ReplaySpider, parse_when
    from crawler.warc.records import check_reader
    from crawler.warc.replay import expand_sources

    try:
        sources = expand_sources(args.warcs)
        parse_when(args.since), parse_when(args.until)
    except ValueError as error:
        print(f"newsharvest replay: {error}", file=sys.stderr)
        return 2
    os.environ.setdefault("SCRAPY_SETTINGS_MODULE", DEFAULT_PROFILE)
    settings = get_project_settings()
    settings.set("LOG_LEVEL", args.log_level.upper(), priority="cmdline")
    if args.journal:
        settings.set("HARVEST_JOURNAL_PATH", args.journal, priority="cmdline")
    for assignment in args.set:
        name, equals, value = assignment.partition("=")
        if not equals:
            print(
                f"newsharvest replay: --set wants NAME=VALUE, got {assignment!r}", file=sys.stderr
            )
            return 2
        settings.set(name.strip(), value, priority="cmdline")
    try:
        check_reader(settings.get("REPLAY_READER"))
    except ValueError as error:
        print(f"newsharvest replay: {error}", file=sys.stderr)
        return 2
    process = CrawlerProcess(settings)
    crawler = process.create_crawler(ReplaySpider)
    process.crawl(crawler, warcs=sources, domain=args.domain, since=args.since,
                  until=args.until, limit=str(args.limit) if args.limit else None)  # fmt: skip
    process.start()
    stats = crawler.stats.get_stats() if crawler.stats else {}
    if process.bootstrap_failed or stats.get("finish_reason") not in ("finished", "shutdown"):
        return 1
    return 0
