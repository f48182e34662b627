"""`newsharvest bench monitoring`: what per-domain monitoring costs end to end.

Crawls a larger news-site fixture (default 30 domains x 100 pages) with the real `feeds` spider
and pipeline (fixture profile; monitoring with the production settings of `settings.base`),
with monitoring off and on, locally (memory store + snapshot file) and with Redis (the shared
store). Runs are interleaved round by round so machine noise hits every variant alike; the
fixture pre-renders every page so the server costs next to nothing. Reported per variant
(medians): pages per second (wall clock, spider open to close), the crawler's CPU milliseconds
per page (the crawler process only, startup included; less noisy than wall time) and the
overhead of "on" against "off" with the same store settings. Then an in-process accounting:
the microseconds monitoring adds per page, measured without any crawl noise."""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from crawler.cli.table import render_table
from newsharvest_bench.crawlbench import (
    CRAWL_TIMEOUT_SECONDS,
    add_fixture_arguments,
    crawl_command,
    crawl_env,
    delete_prefix,
    final_stats,
    prerender,
    redis_answers,
    run_settings,
)

TARGET_OVERHEAD = 0.05


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "monitoring", help="crawl a larger fixture with monitoring off and on; print the cost"
    )
    add_fixture_arguments(parser, domains=30, articles_per_domain=100)
    parser.add_argument("--rounds", type=int, default=3, help="runs per variant (interleaved)")
    parser.set_defaults(handler=run)


@dataclass
class Run:
    variant: str
    elapsed: float  # spider open to close, seconds
    pages: int  # responses received
    cpu: float  # crawler process CPU seconds (user + system)

    @property
    def pages_per_second(self) -> float:
        return self.pages / self.elapsed

    @property
    def cpu_ms_per_page(self) -> float:
        return 1000 * self.cpu / self.pages


def run(args: argparse.Namespace) -> int:
    from crawler.newsroom import Newsroom, NewsroomServer

    room = Newsroom(seed=1, n_domains=args.domains, articles_per_domain=args.articles_per_domain,
                    render_cache_size=None)  # fmt: skip
    prerender(room)
    variants = {"local/off": ("", False), "local/on": ("", True)}
    if args.redis_url and redis_answers(args.redis_url):
        variants |= {"redis/off": (args.redis_url, False), "redis/on": (args.redis_url, True)}
    elif args.redis_url:
        print(f"(no Redis answers at {args.redis_url}: local variants only)", file=sys.stderr)
    print(f"fixture: {len(room.domains)} domains, {len(room.pages)} pages; "
          f"{args.rounds} round(s) of {', '.join(variants)}", file=sys.stderr)  # fmt: skip
    runs: list[Run] = []
    names = list(variants)
    with NewsroomServer(room, port=0) as server, tempfile.TemporaryDirectory() as scratch:
        for round_number in range(args.rounds):
            shift = round_number % len(names)
            for name in names[shift:] + names[:shift]:
                url, enabled = variants[name]
                # Every run starts from nothing: its own state, index and Redis prefix (the
                # harvest ledger would otherwise skip what an earlier run fetched).
                workdir = Path(scratch) / f"run-{len(runs)}"
                prefix = f"nhbench:{uuid.uuid4().hex[:8]}"
                try:
                    runs.append(crawl_once(room, server.proxy_url, name, url, enabled,
                                           workdir, prefix))  # fmt: skip
                finally:
                    if url:
                        delete_prefix(url, prefix)
                print(f"  round {round_number + 1} {name}: "
                      f"{runs[-1].pages_per_second:.0f} pages/s", file=sys.stderr)  # fmt: skip
    if len({run.pages for run in runs}) != 1:  # figures are per page, but say so
        print(f"warning: runs did unequal work: {[(r.variant, r.pages) for r in runs]}",
              file=sys.stderr)  # fmt: skip
    figures = summarize(runs, names)
    figures["hot_path"] = {"us_per_page": hot_path_microseconds(len(room.domains))}
    if "redis/on" in variants:
        figures["hot_path"]["redis_us_per_page"] = hot_path_microseconds(
            len(room.domains), args.redis_url
        )
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        print(report(figures))
    return 0


def production_monitoring() -> list[str]:
    """The base profile's monitoring settings (the fixture profile shortens them for tests)."""
    from settings import base

    return [
        f"{name}={value}"
        for name, value in vars(base).items()
        if name.startswith("MONITOR_") and isinstance(value, (int, float))
        and not isinstance(value, bool)
    ]  # fmt: skip


def crawl_once(room: Any, proxy: str, name: str, redis_url: str, enabled: bool, workdir: Path,
               prefix: str) -> Run:  # fmt: skip
    settings = [*run_settings(proxy, redis_url, prefix, workdir), *production_monitoring(),
                f"MONITOR_ENABLED={enabled}"]  # fmt: skip
    command = crawl_command(room.feed_urls, settings)
    workdir.mkdir(parents=True, exist_ok=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = subprocess.run(command, cwd=workdir, env=crawl_env(), capture_output=True, text=True,
                            timeout=CRAWL_TIMEOUT_SECONDS, check=False)  # fmt: skip
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    stats = final_stats(result.stderr)
    if result.returncode != 0 or "elapsed_time_seconds" not in stats:
        raise SystemExit(f"{name}: the crawl failed:\n{result.stderr[-3000:]}")
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return Run(name, stats["elapsed_time_seconds"], int(stats["response_received_count"]), cpu)


def hot_path_microseconds(
    n_domains: int, redis_url: str = "", pages: int = 20_000, per_flush: int = 200
) -> float:
    """In-process and differential: the CPU microseconds monitoring adds per page. Once with
    everything one fetched article makes for monitoring (the timings and per-method counter it
    added, the listener, the item signal, a flush every `per_flush` pages to the memory store or
    Redis, the rules), once with only the counters the pipeline kept before monitoring existed;
    the difference of the process CPU times, divided by the pages, is monitoring's cost."""
    import asyncio
    import time
    import uuid

    from scrapy.utils.test import get_crawler

    from crawler.core.connection import async_redis
    from crawler.core.domainstats import (
        ARTICLES,
        FETCHED,
        inc_domain,
        observe_domain,
        watch_domains,
    )
    from crawler.core.keys import RedisKeys
    from pipelines.monitoring.backends import MemoryStore, RedisStore
    from pipelines.monitoring.extension import MonitoringExtension
    from settings import base
    from settings.env import values_of

    crawler = get_crawler(settings_dict=values_of(base))
    crawler.stats.open_spider()
    stats = crawler.stats
    extension = MonitoringExtension.from_crawler(crawler)
    prefix = f"nhbench:{uuid.uuid4().hex[:8]}"
    domains = [f"site-{i:03d}.test" for i in range(n_domains)]
    items = [{"domain": d, "url": f"http://{d}/a", "text": "x" * 3000} for d in domains]

    async def crawl(monitored: bool) -> float:
        if monitored:
            extension.store = (
                RedisStore(async_redis(redis_url), RedisKeys(prefix), extension.config)
                if redis_url else MemoryStore(extension.config)
            )  # fmt: skip
        watch_domains(stats, extension if monitored else None)
        started = time.process_time()
        for page in range(pages):
            item = items[page % n_domains]
            domain = item["domain"]
            inc_domain(stats, domain, FETCHED)
            inc_domain(stats, domain, ARTICLES)
            if monitored:
                observe_domain(stats, domain, "fetch", 0.05)
                observe_domain(stats, domain, "extraction", 0.004)
                inc_domain(stats, domain, "extracted/schema_org")
                extension.article_done(item)
                if page % per_flush == per_flush - 1:
                    await extension.flush()
        spent = time.process_time() - started
        if monitored and extension.store is not None:
            await extension.store.close()
        return spent

    try:
        with_monitoring = asyncio.run(crawl(True))
        without = asyncio.run(crawl(False))
    finally:
        if redis_url:
            delete_prefix(redis_url, prefix)
    return 1e6 * max(0.0, with_monitoring - without) / pages


def summarize(runs: list[Run], names: list[str]) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    for name in names:
        mine = [r for r in runs if r.variant == name]
        figures[name] = {
            "runs": len(mine),
            "pages": min(r.pages for r in mine),
            "pages_per_second": statistics.median(r.pages_per_second for r in mine),
            "cpu_ms_per_page": statistics.median(r.cpu_ms_per_page for r in mine),
            # The least disturbed run: on a busy machine, the fairest single figure.
            "best_pages_per_second": max(r.pages_per_second for r in mine),
            "best_cpu_ms_per_page": min(r.cpu_ms_per_page for r in mine),
        }
    for name in names:
        if name.endswith("/on") and name.replace("/on", "/off") in figures:
            on, off = figures[name], figures[name.replace("/on", "/off")]
            on["throughput_overhead"] = 1 - on["pages_per_second"] / off["pages_per_second"]
            on["cpu_overhead"] = on["cpu_ms_per_page"] / off["cpu_ms_per_page"] - 1
            on["best_throughput_overhead"] = (
                1 - on["best_pages_per_second"] / off["best_pages_per_second"]
            )
            on["best_cpu_overhead"] = on["best_cpu_ms_per_page"] / off["best_cpu_ms_per_page"] - 1
    return figures


def report(figures: dict[str, Any]) -> str:
    def pct(value: float | None) -> str:
        return "-" if value is None else f"{100 * value:+.1f}%"

    rows = [
        [name, f["runs"], f["pages"], round(f["pages_per_second"], 1),
         round(f["cpu_ms_per_page"], 2), pct(f.get("throughput_overhead")),
         pct(f.get("cpu_overhead")), round(f["best_pages_per_second"], 1),
         pct(f.get("best_throughput_overhead")), pct(f.get("best_cpu_overhead"))]
        for name, f in figures.items()
        if name != "hot_path"
    ]  # fmt: skip
    header = ["variant", "runs", "pages", "pages/s", "CPU ms/page", "throughput cost", "CPU cost",
              "best pages/s", "best: throughput cost", "CPU cost"]  # fmt: skip
    costs = [
        f["best_throughput_overhead"] for f in figures.values() if "best_throughput_overhead" in f
    ]
    worst = max(costs, default=0.0)
    verdict = "met" if worst <= TARGET_OVERHEAD else "NOT met"
    accounting = [
        f"\nin-process accounting ({store} store): monitoring adds {us:.1f} us CPU per page "
        f"(events, flushes, page rules) = {100 * us / 1000 / cpu:.2f}% of the crawler's "
        f"{cpu:.2f} ms CPU per page ({variant})"
        for store, key, variant in (("memory", "us_per_page", "local/off"),
                                    ("Redis", "redis_us_per_page", "redis/off"))
        if key in figures["hot_path"] and variant in figures
        for us, cpu in [(figures["hot_path"][key], figures[variant]["cpu_ms_per_page"])]
    ]  # fmt: skip
    return (
        render_table(header, rows)
        + "\n"
        + "".join(accounting)
        + f"\n\nmonitoring cost target <= {TARGET_OVERHEAD:.0%} of throughput: {verdict} "
        f"(worst {100 * worst:+.1f}% between best runs; negative = within noise)"
    )
