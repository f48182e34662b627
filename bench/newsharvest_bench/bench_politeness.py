"""`newsharvest bench politeness`: per-publisher politeness measured at the publisher's server.

N real `scrapy crawl feeds` workers (the distributed profile, one Redis, the politeness defaults
of settings/base.py unless `-s` says otherwise) harvest the news-site simulator together; the
simulator logs every request's start and end (crawler/newsroom/server.py `request_timings`).
Figures per publisher: the most requests in flight at once, and the shortest gap between two
request starts, against CONCURRENT_REQUESTS_PER_DOMAIN and DOWNLOAD_DELAY. `--per-worker`
measures what the same workers did before politeness was shared (POLITENESS_SHARED_ENABLED=0).

`measure_politeness()` is the function the other benchmarks (and tests/test_politeness.py) call.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from crawler.newsroom import RequestTiming

DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"
DEFAULT_DOMAINS = 3
DEFAULT_ARTICLES_PER_DOMAIN = 8
# A slow publisher (seconds per answer), slower than DOWNLOAD_DELAY: without a shared limit the
# workers' requests overlap at the server, so the concurrency limit is really exercised.
DEFAULT_SERVER_DELAY_SECONDS = 0.3
# Starts and ends are stamped by the server's threads, a few ms after bytes arrive; two workers'
# requests sent exactly DOWNLOAD_DELAY apart can look that much closer at the server.
CLOCK_TOLERANCE_SECONDS = 0.005
FIXTURE_SETTINGS = ("NETWORK_ALLOWLIST=.test", "RETRY_TIMES=0")  # the simulator's .test domains
WORKER_TIMEOUT_SECONDS = 300


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "politeness", help="requests in flight and gaps per publisher, at the server, N workers"
    )
    parser.add_argument("--workers", type=int, default=3, help="crawler processes (default 3)")
    parser.add_argument("--domains", type=int, default=DEFAULT_DOMAINS, help="publishers")
    parser.add_argument("--articles", type=int, default=DEFAULT_ARTICLES_PER_DOMAIN,
                        help="articles per publisher")  # fmt: skip
    parser.add_argument("--server-delay", type=float, default=DEFAULT_SERVER_DELAY_SECONDS,
                        help="seconds the simulator takes per answer (%(default)s)")  # fmt: skip
    parser.add_argument(
        "--per-worker",
        action="store_true",
        help="each worker polite on its own (POLITENESS_SHARED_ENABLED=0)",
    )
    parser.add_argument(
        "--redis-url",
        default=os.environ.get("NEWSHARVEST_REDIS_URL") or DEFAULT_REDIS_URL,
        help="Redis the workers share (default: $NEWSHARVEST_REDIS_URL or %(default)s)",
    )
    parser.add_argument("--setting", "-s", action="append", default=[], help="NAME=VALUE")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from crawler.cli.table import render_table

    settings = list(args.setting)
    if args.per_worker:
        settings.append("POLITENESS_SHARED_ENABLED=False")
    figures = measure_politeness(
        args.workers, redis_url=args.redis_url, domains=args.domains,
        articles_per_domain=args.articles, server_delay=args.server_delay, settings=settings,
    )  # fmt: skip
    rows = [
        (host, figures["requests_per_domain"][host], figures["max_in_flight_per_domain"][host],
         _ms(figures["min_gap_per_domain"][host]))
        for host in sorted(figures["requests_per_domain"])
    ]  # fmt: skip
    print(render_table(["publisher", "requests", "max in flight", "min gap (ms)"], rows))
    print(summary(figures))
    if figures["failed_workers"]:
        print(f"workers that failed: {figures['failed_workers']}", file=sys.stderr)
        return 1
    return 0 if figures["polite"] else 1


def summary(figures: dict[str, Any]) -> str:
    mode = "shared (Redis)" if figures["shared"] else "per worker"
    verdict = "held" if figures["polite"] else "BROKEN"
    return (
        f"{figures['workers']} workers, politeness {mode}: {figures['requests']} requests, "
        f"{figures['articles']} of {figures['articles_published']} articles in "
        f"{figures['seconds']:.1f} s; "
        f"max in flight per publisher {figures['max_in_flight']} "
        f"(limit {figures['limit']}), min gap between starts {_ms(figures['min_gap'])} ms "
        f"(delay {figures['delay'] * 1000:.0f} ms, tolerance "
        f"{CLOCK_TOLERANCE_SECONDS * 1000:.0f} ms): {verdict}"
    )


def measure_politeness(
    workers: int = 3,
    *,
    redis_url: str = DEFAULT_REDIS_URL,
    domains: int = DEFAULT_DOMAINS,
    articles_per_domain: int = DEFAULT_ARTICLES_PER_DOMAIN,
    server_delay: float = DEFAULT_SERVER_DELAY_SECONDS,
    settings: Sequence[str] = (),
    scratch: Path | None = None,
    seed: int = 21,
) -> dict[str, Any]:
    """Run `workers` crawlers of the distributed profile on one simulator and one Redis (under
    a fresh key prefix, deleted afterwards); return the figures measured at the server."""
    from crawler.newsroom import Newsroom, NewsroomServer
    from newsharvest_bench.crawlbench import delete_prefix

    room = Newsroom(seed=seed, n_domains=domains, articles_per_domain=articles_per_domain)
    prefix = f"nhbench:politeness:{uuid.uuid4().hex[:12]}"
    with tempfile.TemporaryDirectory(prefix="nh-politeness-") as temporary:
        workdir = scratch or Path(temporary)
        with NewsroomServer(room, port=0, delay=server_delay) as server:
            started = time.monotonic()
            codes, articles = _run_workers(
                workers, room.feed_urls, server.proxy_url, redis_url, prefix, settings, workdir
            )
            seconds = time.monotonic() - started
        timings = server.request_timings
    delete_prefix(redis_url, prefix)
    limit, delay, shared = _effective(settings)
    figures = politeness_figures(timings, limit, delay)
    return {
        "workers": workers,
        "shared": shared,
        "seconds": seconds,
        "articles": articles,
        "articles_published": len(room.articles()),
        "failed_workers": [i for i, code in enumerate(codes) if code != 0],
        **figures,
    }


def politeness_figures(
    timings: Iterable[RequestTiming], limit: int, delay: float
) -> dict[str, Any]:
    """Per publisher and overall: requests, the most in flight at once, the shortest gap
    between two starts; `polite` when no publisher saw more than `limit` in flight or two
    starts closer than `delay` (less CLOCK_TOLERANCE_SECONDS)."""
    by_host: dict[str, list[RequestTiming]] = defaultdict(list)
    for timing in timings:
        by_host[timing.host].append(timing)
    in_flight = {host: max_in_flight(spans) for host, spans in by_host.items()}
    gaps = {host: min_start_gap(spans) for host, spans in by_host.items()}
    worst_in_flight = max(in_flight.values(), default=0)
    worst_gap = min((gap for gap in gaps.values() if gap is not None), default=None)
    return {
        "requests": sum(len(spans) for spans in by_host.values()),
        "requests_per_domain": {host: len(spans) for host, spans in by_host.items()},
        "max_in_flight_per_domain": in_flight,
        "min_gap_per_domain": gaps,
        "max_in_flight": worst_in_flight,
        "min_gap": worst_gap,
        "limit": limit,
        "delay": delay,
        "polite": worst_in_flight <= limit
        and (worst_gap is None or worst_gap >= delay - CLOCK_TOLERANCE_SECONDS),
    }


def max_in_flight(spans: Iterable[RequestTiming]) -> int:
    """The most spans open at one instant (an end at the same instant as a start closes first)."""
    events = sorted([(s.started, 1) for s in spans] + [(s.ended, -1) for s in spans])
    open_now = peak = 0
    for _, change in events:  # (t, -1) sorts before (t, 1)
        open_now += change
        peak = max(peak, open_now)
    return peak


def min_start_gap(spans: Iterable[RequestTiming]) -> float | None:
    """The shortest time between two consecutive starts; None for fewer than two requests."""
    starts = sorted(span.started for span in spans)
    return min((b - a for a, b in itertools.pairwise(starts)), default=None)


def _run_workers(
    workers: int,
    feeds: list[str],
    proxy_url: str,
    redis_url: str,
    prefix: str,
    settings: Sequence[str],
    workdir: Path,
) -> tuple[list[int], int]:
    from newsharvest_bench.crawlrun import count_lines, crawl_command, crawl_env, start_crawl

    processes = []
    for index in range(workers):
        name = f"w{index + 1}"
        worker_settings = [f"REDIS_URL={redis_url}", f"REDIS_KEY_PREFIX={prefix}",
                           f"HARVEST_JOURNAL_PATH={workdir / name}.jsonl", f"WORKER_ID={name}",
                           *FIXTURE_SETTINGS, *settings]  # fmt: skip
        command = crawl_command(feeds, proxy_url, worker_settings)
        env = crawl_env(workdir / f"state-{name}", profile="settings.distributed")
        processes.append(start_crawl(command, env, workdir / f"{name}.log"))
    codes = []
    for process in processes:
        try:
            codes.append(process.wait(timeout=WORKER_TIMEOUT_SECONDS))
        except Exception:
            process.kill()
            process.wait()
            codes.append(-1)
    articles = sum(count_lines(workdir / f"w{index + 1}.jsonl") for index in range(workers))
    return codes, articles


def _effective(settings: Sequence[str]) -> tuple[int, float, bool]:
    """CONCURRENT_REQUESTS_PER_DOMAIN, DOWNLOAD_DELAY and POLITENESS_SHARED_ENABLED as the
    workers ran (the distributed profile, then `-s` overrides)."""
    from scrapy.settings import Settings

    from settings import distributed

    values = Settings({name: getattr(distributed, name) for name in dir(distributed)
                       if name.isupper()})  # fmt: skip
    for setting in settings:
        name, _, value = setting.partition("=")
        values.set(name, value)
    return (
        values.getint("CONCURRENT_REQUESTS_PER_DOMAIN"),
        values.getfloat("DOWNLOAD_DELAY"),
        values.getbool("POLITENESS_SHARED_ENABLED"),
    )


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:.1f}"
