"""`newsharvest search "query"`: ranked full-text search over the embedded SQLite index."""

from __future__ import annotations

import argparse
import json
import re
import sys
import textwrap
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

DEFAULT_LIMIT = 10
# `newsharvest demo` writes its index here, beside its output: apart from real crawls' index.
DEMO_INDEX_NAME = "demo-index.sqlite3"
SNIPPET_WIDTH = 96
# --since 36h, 7d, 2w: relative to now.
_RELATIVE = re.compile(r"^(\d+)\s*([hdw])$", re.IGNORECASE)
_UNIT = {"h": timedelta(hours=1), "d": timedelta(days=1), "w": timedelta(weeks=1)}


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "search",
        help="full-text search of the harvested articles (the embedded SQLite index)",
        description="Words must all match (any form: 'elect' finds 'elections' too); "
        '"quoted phrases" match as phrases; word* matches a prefix.',
    )
    parser.add_argument("query", help='words and "quoted phrases"')
    parser.add_argument("--domain", help="only this publisher domain (e.g. dailyherald.test)")
    parser.add_argument(
        "--since", help="only articles published since DATE (2026-11-01, ISO 8601) or 36h/7d/2w"
    )
    parser.add_argument("--section", help="only articles of this section (e.g. Business)")
    parser.add_argument("--keyword", help="only articles tagged with this keyword")
    paywall = parser.add_mutually_exclusive_group()
    paywall.add_argument(
        "--paywalled", action="store_true", help="only articles their page marks as paywalled"
    )
    paywall.add_argument(
        "--free", action="store_true", help="only articles their page marks as free to read"
    )
    parser.add_argument("--limit", type=int, default=DEFAULT_LIMIT, help="results to print")
    parser.add_argument(
        "--index",
        type=Path,
        help="index file (default: SINK_SQLITE_PATH, else <OUTPUT_DIR>/index.sqlite3)",
    )
    parser.add_argument("--fts", action="store_true", help="QUERY is raw SQLite FTS5 syntax")
    parser.add_argument("--json", action="store_true", help="one JSON object per result")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import sqlite3

    from pipelines.sinks.sqlite import NotAnIndex, OlderIndex, SQLiteIndex

    path = args.index or default_index_path(args.settings)
    try:
        since = parse_since(args.since) if args.since else None
    except ValueError as error:
        print(f"newsharvest search: {error}", file=sys.stderr)
        return 2
    if args.limit < 1:
        print("newsharvest search: --limit must be at least 1", file=sys.stderr)
        return 2
    try:
        index = SQLiteIndex.open_readonly(path)
    except NotAnIndex as error:
        print(f"newsharvest search: {error}. {_where_indexes_come_from()}", file=sys.stderr)
        return 2
    started = time.perf_counter()
    try:
        hits, total = index.search(
            args.query,
            domain=args.domain,
            since=since,
            limit=args.limit,
            raw=args.fts,
            section=args.section,
            keyword=args.keyword,
            paywalled=True if args.paywalled else False if args.free else None,
        )
    except OlderIndex as error:
        print(f"newsharvest search: {error}", file=sys.stderr)
        return 2
    except sqlite3.OperationalError as error:  # only raw --fts queries can be malformed
        print(f"newsharvest search: bad query: {error}", file=sys.stderr)
        return 2
    finally:
        index.close()
    elapsed_ms = (time.perf_counter() - started) * 1000
    if args.json:
        for hit in hits:
            print(json.dumps(_as_dict(hit), ensure_ascii=False))
        return 0
    for rank, hit in enumerate(hits, start=1):
        print(format_hit(rank, hit))
    shown = f"{len(hits)} of {total}" if total > len(hits) else f"{total}"
    noun = "article" if total == 1 else "articles"
    print(f"{shown} matching {noun} in {path} ({elapsed_ms:.1f} ms)")
    return 0 if hits else 1


def default_index_path(settings: Any) -> Path:
    """SINK_SQLITE_PATH, else <OUTPUT_DIR>/index.sqlite3; while no crawl has written that, the
    demo's index beside it (`newsharvest demo` then `newsharvest search WORD` finds its
    articles), said on stderr."""
    from crawler.core.paths import output_dir
    from pipelines.sinks.sqlite import sqlite_index_path

    path = sqlite_index_path(settings)
    demo = output_dir(settings) / DEMO_INDEX_NAME
    if path.exists() or (settings.get("SINK_SQLITE_PATH") or "").strip() or not demo.exists():
        return path
    print(f"(no crawl has written {path} yet: searching the demo's index, {demo})",
          file=sys.stderr)  # fmt: skip
    return demo


def parse_since(text: str) -> float:
    """Seconds since the epoch for an absolute date (UTC if naive) or a relative 36h/7d/2w."""
    from dateutil.parser import isoparse

    relative = _RELATIVE.match(text.strip())
    if relative:
        amount, unit = int(relative.group(1)), relative.group(2).lower()
        return (datetime.now(UTC) - amount * _UNIT[unit]).timestamp()
    try:
        moment = isoparse(text.strip())
    except ValueError as error:
        raise ValueError(f"--since {text!r}: not a date (2026-11-01) or 36h/7d/2w") from error
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def format_hit(rank: int, hit: Any) -> str:
    from extractors.safetext import single_line

    # Titles are one line without bidirectional controls since extraction makes them so; an
    # index written before, or by another tool, must not print one that displays as another.
    title = single_line(hit.title) if hit.title else None
    date = _date(hit)
    snippet = textwrap.fill(
        " ".join(hit.snippet.split()),
        width=SNIPPET_WIDTH,
        initial_indent="    ",
        subsequent_indent="    ",
    )
    versions = f" \u00b7 {hit.versions} versions" if hit.versions > 1 else ""
    return (
        f"{rank:>2}. {title or '(untitled)'}\n"
        f"    {hit.domain} \u00b7 {date}{versions} \u00b7 {hit.canonical_url}\n"
        f"{snippet}\n"
    )


def _date(hit: Any) -> str:
    if hit.published:
        return hit.published[:10]
    if hit.date is not None:
        return datetime.fromtimestamp(hit.date, UTC).date().isoformat()
    return "undated"


def _as_dict(hit: Any) -> dict[str, Any]:
    return {
        "title": hit.title,
        "domain": hit.domain,
        "published": hit.published,
        "url": hit.canonical_url,
        "versions": hit.versions,
        "snippet": hit.snippet,
        "score": round(-hit.score, 4),
    }


def _where_indexes_come_from() -> str:
    return (
        "A crawl with the local profile writes the index (SINK_SQLITE_ENABLED); "
        "`make demo` writes output/demo-index.sqlite3 (pass it with --index)."
    )
