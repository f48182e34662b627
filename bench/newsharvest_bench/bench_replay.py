"""`newsharvest bench replay`: the pipeline over a WARC file against the same pipeline crawling.

In one run, on the bench fixture of `newsharvest bench pipeline` (default 50 domains x 100
articles; the feeds list every page):

1. `bench pipeline`'s crawl: the real `feeds` spider, articles/s from spider open to close;
2. a WARC made from the same fixture (every page the feeds list, as the fixture serves it: one
   `response` record each, gzip per record), read by FastWARC and by warcio (records/s, MB/s:
   the evidence for REPLAY_READER);
3. `scrapy crawl replay` over that WARC, through the same pipeline with the same settings and
   the same watcher (articles journalled, PSS of the process tree, CPU per core).

`--repeat N` runs the crawl and the replay N times, alternately, and reports each kind's median
run (the machine's speed drifts between runs). `--processes N` adds a replay in N processes
(`newsharvest replay --processes N`, Redis stores).
`--memory-series` adds a replay of a 20,000-article WARC (50 x 400) and prints its memory at
1,000 and 20,000 articles: flat means the replay holds a bounded window of pages, whatever the
file's size. Target (issue #20): replay >= 2x the crawl's articles/s and >= 350 articles/s on two
cores. Linux only (/proc), like `bench pipeline`.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from crawler.cli.table import render_table
from newsharvest_bench.bench_pipeline import (
    DEFAULT_ARTICLES_PER_DOMAIN,
    DEFAULT_DOMAINS,
    JOURNAL_FILE,
    MEMORY_SERIES_ARTICLES_PER_DOMAIN,
    Run,
    crawl_once,
    figures_of,
    measure,
)
from newsharvest_bench.crawlbench import (
    add_fixture_arguments,
    delete_prefix,
    prerender,
    redis_answers,
    run_settings,
)

TARGET_RATIO = 2.0  # replay vs crawl, articles/s, same run
TARGET_ARTICLES_PER_SECOND = 350.0  # on two cores
READ_REPEATS = 3  # best of, for the reader comparison
MB = 1024 * 1024
MAX_RECORD_BYTES = 16 * 1024 * 1024


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "replay", help="replay a WARC of the bench fixture through the pipeline vs crawling it"
    )
    add_fixture_arguments(parser, DEFAULT_DOMAINS, DEFAULT_ARTICLES_PER_DOMAIN)
    parser.add_argument("--variant", choices=("redis", "embedded"), default="redis",
                        help="stores: Redis (as bench pipeline's target) or embedded")  # fmt: skip
    parser.add_argument("--workers", type=int, default=-1, help="EXTRACT_WORKERS for both runs")
    parser.add_argument(
        "--memory-series", action="store_true",
        help=f"also replay {MEMORY_SERIES_ARTICLES_PER_DOMAIN} articles per domain and print "
        "the memory at 1,000 and 20,000 articles",
    )  # fmt: skip
    parser.add_argument("--skip-crawl", action="store_true", help="replay only (no comparison)")
    parser.add_argument(
        "--repeat", type=int, default=1, metavar="N",
        help="crawl and replay N times, alternately; the figures are each kind's median run",
    )  # fmt: skip
    parser.add_argument(
        "--processes", type=int, default=1, metavar="N",
        help="also replay with `newsharvest replay --processes N` (Redis stores)",
    )  # fmt: skip
    parser.add_argument(
        "--set", action="append", default=[], metavar="NAME=VALUE",
        help="an extra Scrapy setting for every run (repeatable)",
    )  # fmt: skip
    parser.set_defaults(handler=run)


def write_room_warc(room: Any, path: Path) -> int:
    """Every page the fixture's feeds list, as the fixture serves it, one gzip-per-record
    `response` record each (no metadata record: replay keys them by record, like CC-NEWS).
    Returns the number of records."""
    from crawler.warc.records import gzip_member, response_record

    count = 0
    with path.open("wb") as handle:
        for url in room.pages:
            parts = urlsplit(url)
            target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
            status, headers, body = room.render(parts.netloc, target)
            if not isinstance(body, bytes):
                continue
            fields = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]
            handle.write(gzip_member(response_record(url, status, fields, body).serialize()))
            count += 1
    return count


def read_speed(path: Path, reader: str) -> dict[str, float]:
    """Read every record and turn it into a page (HTTP parsed, body decoded): best of
    READ_REPEATS, in this process."""
    from crawler.warc.records import iter_records
    from crawler.warc.replay import Page, pages

    best = float("inf")
    count = 0
    for _ in range(READ_REPEATS):
        start = time.perf_counter()
        with path.open("rb") as handle:
            records = iter_records(handle, reader, MAX_RECORD_BYTES)
            found = pages(records, str(path), MAX_RECORD_BYTES)
            count = sum(1 for page in found if isinstance(page, Page))
        best = min(best, time.perf_counter() - start)
    size = path.stat().st_size
    return {"records": count, "seconds": best, "records_per_second": count / best,
            "mb_per_second": size / MB / best}  # fmt: skip


def replay_once(warc: Path, variant: str, workers: int, redis_url: str, workdir: Path,
                extra: list[str], processes: int = 1) -> Run:  # fmt: skip
    """`scrapy crawl replay` over the WARC; with `processes` > 1, `newsharvest replay
    --processes N` (its crawlers' stats added up, their journals counted together)."""
    from crawler.cli.replay import shard_journal

    prefix = f"nhbench:{uuid.uuid4().hex[:8]}"
    journal = workdir / JOURNAL_FILE
    settings = [*run_settings("", redis_url, prefix, workdir), f"EXTRACT_WORKERS={workers}",
                f"HARVEST_JOURNAL_PATH={journal}", "REPLAY_PROGRESS_SECONDS=3600",
                *extra]  # fmt: skip
    journals = [journal]
    if processes > 1:
        command = [sys.executable, "-m", "crawler.cli", "replay", str(warc),
                   "--processes", str(processes), "--log-level", "INFO",
                   *(part for setting in settings for part in ("--set", setting))]  # fmt: skip
        journals = [Path(shard_journal(str(journal), (i, processes))) for i in range(processes)]
    else:
        command = [sys.executable, "-m", "scrapy", "crawl", "replay", "-a", f"warcs={warc}",
                   *(part for setting in settings for part in ("-s", setting))]  # fmt: skip
    try:
        return measure(command, f"replay {variant}", workers, workdir, journals=journals)
    finally:
        if redis_url:
            delete_prefix(redis_url, prefix)


def run(args: argparse.Namespace) -> int:
    from crawler.newsroom import Newsroom

    # Both readers are measured: without warcio (the peers extra), fail now, in one line
    # naming the extra (crawler/cli), not after building and crawling the fixture.
    importlib.import_module("warcio")
    if args.repeat < 1:
        raise SystemExit(f"--repeat must be at least 1, not {args.repeat}")
    variant = args.variant
    if variant == "redis" and not (args.redis_url and redis_answers(args.redis_url)):
        print(f"(no Redis answers at {args.redis_url!r}: embedded stores)", file=sys.stderr)
        variant = "embedded"
    redis_url = args.redis_url if variant == "redis" else ""
    room = Newsroom(seed=1, n_domains=args.domains, articles_per_domain=args.articles_per_domain,
                    render_cache_size=None)  # fmt: skip
    prerender(room)
    figures: dict[str, Any] = {"cores": os.cpu_count(), "variant": variant,
                               "workers": args.workers,
                               "expected_articles": len(room.articles())}  # fmt: skip
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        warc = root / "fixture.warc.gz"
        records = write_room_warc(room, warc)
        figures["warc"] = {"records": records, "mb": warc.stat().st_size / MB}
        print(f"fixture: {len(room.articles())} articles; WARC {records} records, "
              f"{warc.stat().st_size / MB:.1f} MB", file=sys.stderr)  # fmt: skip
        figures["readers"] = {reader: read_speed(warc, reader) for reader in ("fastwarc", "warcio")}
        rounds: list[dict[str, Any]] = []
        for number in range(1, args.repeat + 1):
            found = {}
            if not args.skip_crawl:
                crawl = crawl_fixture(room, variant, args, redis_url, root / f"crawl-{number}")
                found["crawl"] = figures_of(crawl)
            replay = replay_once(warc, variant, args.workers, redis_url, root / f"replay-{number}",
                                 args.set)  # fmt: skip
            found["replay"] = figures_of(replay)
            print("  " + ", ".join(f"{name}: {run['articles']} articles, "
                                   f"{run['articles_per_second']:.0f}/s"
                                   for name, run in found.items()), file=sys.stderr)  # fmt: skip
            rounds.append(found)
        figures.update(median_round(rounds))
        if len(rounds) > 1:
            figures["rounds"] = rounds
        if args.processes > 1 and not redis_url:
            print("  (--processes needs Redis stores: not run)", file=sys.stderr)
        elif args.processes > 1:
            name = f"replay x{args.processes}"
            sharded = replay_once(warc, variant, args.workers, redis_url, root / "sharded",
                                  args.set, args.processes)  # fmt: skip
            figures[name] = figures_of(sharded)
            print(f"  {name}: {sharded.articles} articles, "
                  f"{sharded.articles_per_second:.0f}/s", file=sys.stderr)  # fmt: skip
        if args.memory_series:
            big_room = Newsroom(seed=1, n_domains=args.domains,
                                articles_per_domain=MEMORY_SERIES_ARTICLES_PER_DOMAIN)  # fmt: skip
            big = root / "series.warc.gz"
            figures["series_warc_records"] = write_room_warc(big_room, big)
            del big_room
            series = replay_once(big, variant, args.workers, redis_url, root / "series", args.set)
            figures["series"] = figures_of(series)
    print(json.dumps(figures, indent=2) if args.json else report(figures))
    return 0


def crawl_fixture(room: Any, variant: str, args: argparse.Namespace, redis_url: str,
                  workdir: Path) -> Run:  # fmt: skip
    """`bench pipeline`'s crawl of the fixture, its stores deleted after."""
    from crawler.newsroom import NewsroomServer

    with NewsroomServer(room, port=0) as server:
        prefix = f"nhbench:{uuid.uuid4().hex[:8]}"
        try:
            return crawl_once(room.feed_urls, server.proxy_url, variant, args.workers,
                              redis_url, prefix, workdir, args.set)  # fmt: skip
        finally:
            if redis_url:
                delete_prefix(redis_url, prefix)


def median_round(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    """Each run kind's median run by articles/s (the one run when there was one). Runs of one
    round share the machine's moment; the median keeps one slow or fast moment out."""
    return {
        name: sorted((r[name] for r in rounds), key=lambda run: run["articles_per_second"])[
            (len(rounds) - 1) // 2
        ]
        for name in rounds[0]
    }


def report(figures: dict[str, Any]) -> str:
    readers = figures["readers"]
    lines = [
        f"WARC of the fixture: {figures['warc']['records']} records, "
        f"{figures['warc']['mb']:.1f} MB (gzip per record)",
        "\nreading (records -> pages: WARC parsed, HTTP parsed, body decoded; best of "
        f"{READ_REPEATS}, one thread)",
        render_table(
            ["reader", "pages", "seconds", "pages/s", "MB/s (compressed)"],
            [
                [
                    name,
                    r["records"],
                    round(r["seconds"], 3),
                    round(r["records_per_second"]),
                    round(r["mb_per_second"], 1),
                ]
                for name, r in readers.items()
            ],
        ),
    ]
    names = ("crawl", "replay", *(k for k in figures if k.startswith("replay x")), "series")
    runs = [(name, figures[name]) for name in names if name in figures]
    header = ["run", "articles", "NULLs", "articles/s", "wall s", "CPU s", "CPU ms/article",
              "busy per core", "peak MB (PSS)", "MB at articles"]  # fmt: skip
    rows = [
        [name, r["articles"], r["nulls"], round(r["articles_per_second"], 1),
         round(r["elapsed"], 1), round(r["cpu_seconds"], 1), round(r["cpu_per_article_ms"], 2),
         " ".join(f"{100 * b:.0f}%" for b in r["core_busy"]), round(r["peak_rss_mb"]),
         " ".join(f"{a}:{mb:.0f}" for a, mb in r["rss_series"])]
        for name, r in runs
    ]  # fmt: skip
    lines += [f"\n{figures['variant']} stores, EXTRACT_WORKERS={figures['workers']}, "
              f"{figures['cores']} cores", render_table(header, rows)]  # fmt: skip
    replay = figures["replay"]["articles_per_second"]
    if "crawl" in figures:
        crawl = figures["crawl"]["articles_per_second"]
        ratio = replay / crawl if crawl else 0.0
        verdict = "met" if ratio >= TARGET_RATIO and replay >= TARGET_ARTICLES_PER_SECOND else (
            "NOT met")  # fmt: skip
        lines.append(f"replay {replay:.0f} articles/s = {ratio:.2f}x the crawl's {crawl:.0f}; "
                     f"target >= {TARGET_RATIO:.0f}x and >= {TARGET_ARTICLES_PER_SECOND:.0f}/s: "
                     f"{verdict}")  # fmt: skip
        cpu_ratio = figures["crawl"]["cpu_per_article_ms"] / max(
            figures["replay"]["cpu_per_article_ms"], 1e-9
        )
        lines.append(f"CPU per article: the crawl's is {cpu_ratio:.2f}x the replay's (the "
                     "articles/s ratio when other work takes the cores)")  # fmt: skip
    extract = figures["replay"]["stages"].get("extract/seconds")
    if extract and figures["replay"]["articles"]:
        # The machine's pace, to compare runs across machines: the 350/s target assumes
        # extraction at about 2 ms a page (the workers also fingerprint and prepare notices).
        per_article = 1000 * extract / figures["replay"]["articles"]
        lines.append(f"extraction workers' CPU per article in the replay: {per_article:.2f} ms")
    if "rounds" in figures:
        lines.append(f"{len(figures['rounds'])} rounds (articles/s; the table shows the median "
                     "run of each kind):")  # fmt: skip
        for number, found in enumerate(figures["rounds"], 1):
            runs_of = ", ".join(f"{name} {run['articles_per_second']:.0f}"
                                for name, run in found.items())  # fmt: skip
            if "crawl" in found:
                ratio = found["replay"]["articles_per_second"] / max(
                    found["crawl"]["articles_per_second"], 1e-9
                )
                runs_of += f" ({ratio:.2f}x)"
            lines.append(f"  round {number}: {runs_of}")
    if "series" in figures:
        series = dict(figures["series"]["rss_series"])
        marks = ", ".join(f"{a} articles: {mb:.0f} MB" for a, mb in sorted(series.items()))
        lines.append(f"memory of the 20k replay (PSS of the tree): {marks}")
    return "\n".join(lines)
