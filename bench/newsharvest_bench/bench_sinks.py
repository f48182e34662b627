"""`newsharvest bench sinks`: index-sink throughput and the outage test.

Throughput: realistic articles (the news-site fixture's ground truth: real sizes, metadata and
blocks) go through each sink's real pipeline path (`process_item` -> batches -> backend, close)
into a fresh SQLite file, a fresh PostgreSQL schema and a fresh Redis stream; a second pass
re-sends the same articles (a re-crawl), which must change nothing.

Outage: the same sinks talk to PostgreSQL/Redis through a TCP forwarder that is cut in the middle
of the run and restored later (the real connection path goes down and comes back), and, in a
second scenario, the backend is unreachable for a whole run and the next run starts with it
back. Every article must be in the backend exactly once: lost = expected - present,
doubled = entries beyond one per article.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SQLITE_TARGET = 2_000  # articles/s
POSTGRES_TARGET = 1_000  # articles/s
DEFAULT_ARTICLES = 5_000
DEFAULT_OUTAGE_ARTICLES = 1_200
ARTICLES_PER_DOMAIN = 100
OUTAGE_BATCH_SIZE = 50
STREAM_MAXLEN = 1_000_000  # no trimming during the benchmark: every entry is counted
FAST_RETRY = {  # the outage test must not spend minutes in backoff
    "SINK_RETRY_TIMES": 2,
    "SINK_RETRY_BACKOFF_SECONDS": 0.02,
    "SINK_RETRY_BACKOFF_MAX_SECONDS": 0.1,
    "SINK_RECONNECT_SECONDS": 0.2,
    "SINK_CONNECT_TIMEOUT_SECONDS": 2.0,
}


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("sinks", help="index sinks: articles/s and the outage test")
    parser.add_argument("--articles", type=int, default=DEFAULT_ARTICLES)
    parser.add_argument("--batch-size", type=int, default=200, help="SINK_BATCH_SIZE")
    parser.add_argument("--outage-articles", type=int, default=DEFAULT_OUTAGE_ARTICLES)
    parser.add_argument(
        "--postgres-url",
        default=os.environ.get("POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test"),
        help="a scratch schema is created there and dropped afterwards",
    )
    parser.add_argument(
        "--redis-url",
        default=os.environ.get("NEWSHARVEST_REDIS_URL", "redis://127.0.0.1:6379/0"),
        help="a scratch key prefix is used and deleted afterwards",
    )
    parser.add_argument("--skip-outage", action="store_true")
    parser.set_defaults(handler=run)


@dataclass
class Throughput:
    backend: str
    articles: int
    seconds: float
    recrawl_seconds: float
    stored: int
    target: int | None

    @property
    def rate(self) -> float:
        return self.articles / self.seconds if self.seconds else 0.0


@dataclass
class Outage:
    backend: str
    scenario: str
    articles: int
    spilled: int
    replayed: int
    present: int
    entries: int

    @property
    def lost(self) -> int:
        return self.articles - self.present

    @property
    def doubled(self) -> int:
        return self.entries - self.present


def run(args: argparse.Namespace) -> int:
    from crawler.cli.table import render_table

    # The outage runs log every outage and journal by design; the tables below say it all.
    logging.getLogger("pipelines.sinks").setLevel(logging.CRITICAL)
    items = bench_items(max(args.articles, args.outage_articles))
    text_kb = sum(len(item["text"]) for item in items) / len(items) / 1024
    print(f"{len(items)} articles from the news-site fixture, mean text {text_kb:.1f} KB")
    with tempfile.TemporaryDirectory(prefix="nh-bench-sinks-") as scratch:
        scratch_dir = Path(scratch)
        results = [
            run_throughput(backend, items[: args.articles], args, scratch_dir / backend)
            for backend in ("sqlite", "postgres", "redis_stream")
        ]
        rows = [
            [
                r.backend, r.articles, round(r.seconds, 2), round(r.rate),
                round(r.articles / r.recrawl_seconds) if r.recrawl_seconds else "-", r.stored,
                f">= {r.target}: {'met' if r.rate >= r.target else 'MISSED'}" if r.target else "",
            ]
            for r in results
        ]  # fmt: skip
        print(f"\nthroughput (batches of {args.batch_size}; write, then re-crawl the same):")
        print(
            render_table(
                ["sink", "articles", "seconds", "articles/s", "re-crawl/s", "rows", "target"],
                rows,
            )
        )
        if args.skip_outage:
            return 0
        outages = [
            scenario(
                backend, items[: args.outage_articles], args, scratch_dir / f"{name}-{backend}"
            )
            for backend in ("postgres", "redis_stream")
            for name, scenario in (("mid", outage_mid_run), ("restart", outage_until_restart))
        ]
    print("\noutage test (connection path cut and restored; lost/doubled must be 0):")
    print(
        render_table(
            ["sink", "scenario", "articles", "spilled", "replayed", "present", "lost", "doubled"],
            [
                [
                    o.backend,
                    o.scenario,
                    o.articles,
                    o.spilled,
                    o.replayed,
                    o.present,
                    o.lost,
                    o.doubled,
                ]
                for o in outages
            ],
        )
    )
    return 1 if any(o.lost or o.doubled for o in outages) else 0


def bench_items(count: int) -> list[dict[str, Any]]:
    from crawler.newsroom import Newsroom
    from newsharvest_bench.items import article_items

    domains = 5
    while True:
        room = Newsroom(seed=1, n_domains=domains, articles_per_domain=ARTICLES_PER_DOMAIN)
        items = article_items(room)
        if len(items) >= count:
            return items[:count]
        domains = max(domains + 1, int(domains * count / max(1, len(items))) + 1)


# --- backends ------------------------------------------------------------------------------


@dataclass
class Backend:
    """One scratch backend: settings that switch its sink on, and how to inspect and drop it."""

    settings: dict[str, Any]
    sink_class: Any
    present: Callable[[list[str]], tuple[int, int]]  # urls -> (distinct present, entries)
    drop: Callable[[], None]


@contextmanager
def scratch_backend(backend: str, args: argparse.Namespace, directory: Path) -> Iterator[Backend]:
    tag = uuid.uuid4().hex[:10]
    if backend == "sqlite":
        from pipelines.sinks.sqlite import SQLiteSink

        path = directory / "index.sqlite3"
        yield Backend(
            {"SINK_SQLITE_ENABLED": True, "SINK_SQLITE_PATH": str(path)},
            SQLiteSink,
            lambda urls: _sqlite_present(path, urls),
            lambda: None,
        )
    elif backend == "postgres":
        import psycopg
        from psycopg import sql

        from pipelines.sinks.postgres import PostgresSink

        schema = f"nhbench_{tag}"

        def drop() -> None:
            with psycopg.connect(args.postgres_url, autocommit=True) as connection:
                connection.execute(
                    sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema))
                )

        try:
            yield Backend(
                {"SINK_POSTGRES_URL": args.postgres_url, "SINK_POSTGRES_SCHEMA": schema},
                PostgresSink,
                lambda urls: _postgres_present(args.postgres_url, schema, urls),
                drop,
            )
        finally:
            drop()
    else:
        from crawler.core.connection import sync_redis
        from pipelines.sinks.redis_stream import RedisStreamSink

        prefix = f"nhbench:{tag}"

        def drop() -> None:
            client = sync_redis(args.redis_url)
            keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
            for start in range(0, len(keys), 1000):
                client.delete(*keys[start : start + 1000])
            client.close()

        try:
            yield Backend(
                {
                    "SINK_REDIS_STREAM_ENABLED": True,
                    "REDIS_URL": args.redis_url,
                    "REDIS_KEY_PREFIX": prefix,
                    "SINK_REDIS_STREAM_MAXLEN": STREAM_MAXLEN,
                },
                RedisStreamSink,
                lambda urls: _stream_present(args.redis_url, prefix, urls),
                drop,
            )
        finally:
            drop()


def _sqlite_present(path: Path, urls: list[str]) -> tuple[int, int]:
    import sqlite3

    connection = sqlite3.connect(path)
    try:
        stored = {row[0] for row in connection.execute("SELECT canonical_url FROM articles")}
        entries = connection.execute("SELECT count(*) FROM articles").fetchone()[0]
    finally:
        connection.close()
    return len(stored & set(urls)), int(entries)


def _postgres_present(url: str, schema: str, urls: list[str]) -> tuple[int, int]:
    import psycopg
    from psycopg import sql

    with psycopg.connect(url) as connection:
        rows = connection.execute(
            sql.SQL("SELECT canonical_url, versions FROM {}.articles").format(
                sql.Identifier(schema)
            )
        ).fetchall()
    # A version written twice would count twice in `versions`: that is a doubled article too.
    return len({row[0] for row in rows} & set(urls)), sum(row[1] for row in rows)


def _stream_present(url: str, prefix: str, urls: list[str]) -> tuple[int, int]:
    from crawler.core.connection import sync_redis
    from crawler.core.keys import RedisKeys

    client = sync_redis(url)
    try:
        entries = client.xrange(RedisKeys(prefix).sink_stream())
    finally:
        client.close()
    seen = [fields[b"canonical_url"].decode() for _, fields in entries]
    return len(set(seen) & set(urls)), len(seen)


# --- runs ----------------------------------------------------------------------------------


def make_sink(backend: Backend, directory: Path, overrides: dict[str, Any]) -> Any:
    from newsharvest_bench.sinkrun import make_sink as build

    return build(backend.sink_class, directory / "state", **backend.settings, **overrides)


def run_throughput(
    backend_name: str, items: list[dict[str, Any]], args: argparse.Namespace, directory: Path
) -> Throughput:
    from newsharvest_bench import sinkrun

    targets = {"sqlite": SQLITE_TARGET, "postgres": POSTGRES_TARGET}
    with scratch_backend(backend_name, args, directory) as backend:
        timings = []
        for _ in range(2):  # first write, then the same articles again (a re-crawl)
            sink, _stats = make_sink(backend, directory, {"SINK_BATCH_SIZE": args.batch_size})
            started = time.perf_counter()
            asyncio.run(sinkrun.feed(sink, items))
            timings.append(time.perf_counter() - started)
        present, _entries = backend.present([item["url"] for item in items])
    return Throughput(
        backend_name, len(items), timings[0], timings[1], present, targets.get(backend_name)
    )


def _proxied(backend: Backend, port: int) -> dict[str, Any]:
    """The backend's settings with its server address replaced by the proxy's port."""
    settings = dict(backend.settings)
    if "SINK_POSTGRES_URL" in settings:
        settings["SINK_POSTGRES_URL"] = _with_port(settings["SINK_POSTGRES_URL"], port)
    if "REDIS_URL" in settings:
        settings["REDIS_URL"] = _with_port(settings["REDIS_URL"], port)
    return settings


def _with_port(url: str, port: int) -> str:
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    netloc = parts.netloc.rpartition("@")
    host = netloc[2].rsplit(":", 1)[0] if ":" in netloc[2] else netloc[2]
    return urlunsplit(parts._replace(netloc=f"{netloc[0]}{netloc[1]}{host}:{port}"))


def _server_port(backend: Backend) -> int:
    from urllib.parse import urlsplit

    url = backend.settings.get("SINK_POSTGRES_URL") or backend.settings["REDIS_URL"]
    return urlsplit(url).port or (5432 if url.startswith("postgres") else 6379)


def outage_mid_run(
    backend_name: str, items: list[dict[str, Any]], args: argparse.Namespace, directory: Path
) -> Outage:
    """The connection path is cut after a third of the articles and restored after two thirds."""
    from newsharvest_bench import sinkrun
    from newsharvest_bench.tcpproxy import TcpProxy

    with scratch_backend(backend_name, args, directory) as backend:
        proxy = TcpProxy(_server_port(backend)).start()
        try:
            proxied = Backend(
                _proxied(backend, proxy.port), backend.sink_class, backend.present, backend.drop
            )
            sink, stats = make_sink(
                proxied, directory, {"SINK_BATCH_SIZE": OUTAGE_BATCH_SIZE, **FAST_RETRY}
            )
            settle = FAST_RETRY["SINK_RECONNECT_SECONDS"]
            asyncio.run(sinkrun.feed(sink, items, sinkrun.outage(proxy, len(items), settle)))
        finally:
            proxy.stop()
        return _outage(backend, backend_name, "cut mid-run", items, stats)


def outage_until_restart(
    backend_name: str, items: list[dict[str, Any]], args: argparse.Namespace, directory: Path
) -> Outage:
    """A whole run with nothing listening at the backend's address; the next run, with the
    backend back, starts by replaying the journal."""
    from newsharvest_bench import sinkrun
    from newsharvest_bench.tcpproxy import TcpProxy

    with scratch_backend(backend_name, args, directory) as backend:
        proxy = TcpProxy(_server_port(backend)).start()
        port = proxy.port
        proxy.stop()  # the port now refuses connections
        down = Backend(_proxied(backend, port), backend.sink_class, backend.present, backend.drop)
        # "journal": start without the backend (the default policy stops the crawl instead).
        options = {"SINK_BATCH_SIZE": OUTAGE_BATCH_SIZE, "SINK_START_POLICY": "journal"}
        sink, stats = make_sink(down, directory, {**options, **FAST_RETRY})
        asyncio.run(sinkrun.feed(sink, items))
        spilled = stats.get_value(f"sink/{sink.name}/spilled", 0)
        restarted, stats = make_sink(backend, directory, FAST_RETRY)
        asyncio.run(sinkrun.feed(restarted, []))
        outage = _outage(backend, backend_name, "down until restart", items, stats)
        outage.spilled = spilled
        return outage


def _outage(
    backend: Backend, name: str, scenario: str, items: list[dict[str, Any]], stats: Any
) -> Outage:
    present, entries = backend.present([item["url"] for item in items])
    return Outage(
        name,
        scenario,
        len(items),
        stats.get_value(f"sink/{name}/spilled", 0),
        stats.get_value(f"sink/{name}/replayed", 0),
        present,
        entries,
    )
