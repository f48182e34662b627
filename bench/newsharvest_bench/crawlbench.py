"""What the crawl benchmarks share: a pre-rendered Newsroom, the `scrapy crawl feeds` subprocess
with throughput settings and a fresh state per run, its final stats, and Redis clean-up.

Each run starts from nothing: its own state dir, index and Redis key prefix (the harvest ledger
would otherwise skip what an earlier run fetched)."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CRAWL_TIMEOUT_SECONDS = 1800
# Throughput settings: the fixture is ours, so no politeness delays; robots.txt stays obeyed.
FAST = (
    "DOWNLOAD_DELAY=0", "AUTOTHROTTLE_ENABLED=False", "CONCURRENT_REQUESTS=32",
    "CONCURRENT_REQUESTS_PER_DOMAIN=8", "LOG_LEVEL=INFO",
)  # fmt: skip
STATS_DUMP = "Dumping Scrapy stats"  # Scrapy's log line before a crawler's final stats
# One numeric entry of Scrapy's final stats dump (global keys; per-domain keys hold dots).
_STAT = re.compile(r"'([\w/]+)': ([0-9.]+(?:e-?[0-9]+)?)")


def add_fixture_arguments(parser: Any, domains: int, articles_per_domain: int) -> None:
    """The options every crawl bench takes: fixture size, Redis and --json."""
    parser.add_argument("--domains", type=int, default=domains)
    parser.add_argument("--articles-per-domain", type=int, default=articles_per_domain)
    parser.add_argument(
        "--redis-url",
        default=os.environ.get("NEWSHARVEST_REDIS_URL", "redis://127.0.0.1:6379/0"),
        help="Redis for the Redis variants ('' to skip them)",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")


def prerender(room: Any) -> None:
    """Render every page, feed and robots.txt once so serving is a cache lookup."""
    from urllib.parse import urlsplit

    for url in [*room.pages, *room.feed_urls]:
        parts = urlsplit(url)
        room.render(parts.netloc, parts.path + (f"?{parts.query}" if parts.query else ""))
    for domain in room.domains:
        room.render(domain, "/robots.txt")


def crawl_env() -> dict[str, str]:
    return {**os.environ, "SCRAPY_SETTINGS_MODULE": "settings.fixture"}


def run_settings(proxy: str, redis_url: str, prefix: str, workdir: Path) -> list[str]:
    """Throughput settings plus a run's own fixture proxy, stores and SQLite index."""
    return [
        *FAST, f"PROXY_URL={proxy}", f"REDIS_URL={redis_url}",
        f"REDIS_KEY_PREFIX={prefix}", f"STATE_DIR={workdir / 'state'}",
        f"OUTPUT_DIR={workdir}", f"SINK_SQLITE_PATH={workdir / 'index.sqlite3'}",
    ]  # fmt: skip


def crawl_command(feed_urls: Sequence[str], settings: Sequence[str]) -> list[str]:
    """`scrapy crawl feeds` over the fixture's feeds (run it in ROOT with crawl_env())."""
    return [sys.executable, "-m", "scrapy", "crawl", "feeds", "-a", "feeds=" + ",".join(feed_urls),
            *(part for setting in settings for part in ("-s", setting))]  # fmt: skip


def final_stats(log_text: str) -> dict[str, float]:
    """The numeric global entries of the stats Scrapy dumps in its log when the spider closes."""
    return {key: float(value) for key, value in _STAT.findall(log_text)}


def combined_stats(log_text: str) -> dict[str, float]:
    """The final stats of a log several crawlers wrote (a replay in several processes), added
    up; `elapsed_time_seconds` is the longest one's."""
    dumps = [final_stats(part) for part in log_text.split(STATS_DUMP)[1:]]
    total: dict[str, float] = {}
    for stats in dumps:
        for key, value in stats.items():
            merge = max if key == "elapsed_time_seconds" else float.__add__
            total[key] = merge(total[key], value) if key in total else value
    return total


def redis_answers(url: str) -> bool:
    import redis

    from crawler.core.connection import sync_redis

    client = sync_redis(url)
    try:
        return bool(client.ping())
    except redis.RedisError:
        return False
    finally:
        client.close()


def delete_prefix(url: str, prefix: str) -> None:
    from crawler.core.connection import sync_redis

    client = sync_redis(url)
    try:
        keys = list(client.scan_iter(match=f"{prefix}:*", count=1000))
        for start in range(0, len(keys), 1000):
            client.delete(*keys[start : start + 1000])
    finally:
        client.close()
