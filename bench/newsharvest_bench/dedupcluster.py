"""`newsharvest bench dedup --cluster`: the near-duplicate index on one Redis server and on a
3-master Redis Cluster, started side by side in the same run from the `redis-server` binary
(newsharvest_bench/localcluster.py): check_and_add throughput with many concurrent clients, and
how the keys and memory spread over the cluster's masters.

The fingerprints are computed once, before the clock starts: the figures are the index's (Redis
and the client's calls), not MinHash's. Every client process runs its share of the stream with
`--clients` concurrent calls in flight (asyncio, the crawler's own index class); one server gets
the one-slot layout (DEDUP_REDIS_SHARDS = 1, what a single server runs), the cluster one shard
per master.
"""

from __future__ import annotations

import asyncio
import collections
import multiprocessing
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from crawler.cli.table import render_table

TTL_SECONDS = 30 * 24 * 3600
CLUSTER_MASTERS = 3
TARGET_SPEEDUP = 1.5  # the cluster's throughput over one server's, same run
START_TIMEOUT_SECONDS = 120
RUN_TIMEOUT_SECONDS = 600
MIB = 1024 * 1024
# The articles carry a crawl's order keys: fetched one after the other in the stream's order.
FIRST_FETCH = datetime(2026, 3, 1, tzinfo=UTC)
FETCH_INTERVAL_SECONDS = 0.01


@dataclass(frozen=True)
class Target:
    label: str
    url: str
    shards: int
    node_urls: tuple[str, ...]


@dataclass(frozen=True)
class Measured:
    target: Target
    docs_per_second: float
    seconds: float
    new: int
    duplicates: int
    spread: list[tuple[str, int, int, float]]  # (node, keys, memory gained, CPU seconds spent)
    client_cpu: float  # CPU seconds the client processes spent (user + system), all together

    @property
    def busiest_cpu(self) -> float:
        """CPU seconds of the busiest node: what bounds the index once the clients do not."""
        return max(cpu for *_, cpu in self.spread)


def compare(fingerprints: Sequence[Any], threshold: float, processes: int, clients: int) -> str:
    """The report: one server vs a 3-master cluster, measured one after the other."""
    from newsharvest_bench.localcluster import LocalRedisCluster

    with LocalRedisCluster.single() as single, LocalRedisCluster.started() as cluster:
        targets = [
            Target("1 server", single.url, 1, tuple(single.node_urls)),
            Target(
                f"cluster, {CLUSTER_MASTERS} masters",
                cluster.url,
                CLUSTER_MASTERS,
                tuple(cluster.node_urls),
            ),
        ]
        measured = [measure(t, fingerprints, threshold, processes, clients) for t in targets]
    return report(measured, len(fingerprints), processes, clients)


def measure(
    target: Target, fingerprints: Sequence[Any], threshold: float, processes: int, clients: int
) -> Measured:
    from crawler.core.connection import sync_redis

    nodes = [sync_redis(url) for url in target.node_urls]
    before = [(node.info("memory")["used_memory"], _cpu(node)) for node in nodes]
    context = multiprocessing.get_context("spawn")
    start, out = context.Barrier(processes + 1), context.Queue()
    numbered = list(enumerate(fingerprints))  # the stream's order: each article's fetch order
    shares = [numbered[i::processes] for i in range(processes)]
    workers = [
        context.Process(
            target=_client_process,
            args=(target.url, target.shards, threshold, share, clients, start, out),
        )
        for share in shares
    ]
    for worker in workers:
        worker.start()
    start.wait(timeout=START_TIMEOUT_SECONDS)  # every process connected and ready
    began = time.perf_counter()
    reports = [out.get(timeout=RUN_TIMEOUT_SECONDS) for _ in workers]
    seconds = time.perf_counter() - began
    for worker in workers:
        worker.join(timeout=30)
    failed = [r for r in reports if isinstance(r, str)]
    if failed:
        raise RuntimeError(f"a client process failed: {failed[0]}")
    spread = [
        (_address(url), node.dbsize(), node.info("memory")["used_memory"] - memory,
         _cpu(node) - cpu)
        for url, node, (memory, cpu) in zip(target.node_urls, nodes, before, strict=True)
    ]  # fmt: skip
    for node in nodes:
        node.flushall()
        node.close()
    new = sum(r[0] for r in reports)
    total = sum(r[0] + r[1] for r in reports)
    client_cpu = sum(r[2] for r in reports)
    return Measured(target, total / seconds, seconds, new, total - new, spread, client_cpu)


def _cpu(node: Any) -> float:
    """CPU seconds the Redis server has used (user + system)."""
    info = node.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


def _address(url: str) -> str:
    return url.split("//", 1)[1].rsplit("/", 1)[0]


def _client_process(
    url: str,
    shards: int,
    threshold: float,
    fingerprints: list[tuple[int, Any]],
    clients: int,
    start: Any,
    out: Any,
) -> None:
    """One client process: `clients` calls in flight until its share is done; puts (new,
    duplicates, CPU seconds it spent on them), or the error's text."""
    try:
        out.put(asyncio.run(_stream(url, shards, threshold, fingerprints, clients, start)))
    except Exception as error:  # reported to the parent, which raises it
        out.put(f"{type(error).__name__}: {error}")


async def _stream(
    url: str,
    shards: int,
    threshold: float,
    fingerprints: list[tuple[int, Any]],
    clients: int,
    start: Any,
) -> tuple[int, int, float]:
    """(new, duplicates, CPU seconds) of one process's share: (stream number, fingerprint)
    pairs, each article checked under its own URL and crawl order key."""
    from crawler.core.connection import async_redis
    from crawler.core.keys import RedisKeys
    from crawler.core.order import crawl_order_key
    from pipelines.dedup.redis_index import AsyncRedisNearDuplicateIndex
    from pipelines.fingerprints import LshParams

    params = LshParams.for_threshold(threshold)
    index = AsyncRedisNearDuplicateIndex(
        async_redis(url), params, RedisKeys("nb"), TTL_SECONDS, shards
    )
    await index.open()
    await index.check_fingerprint("warm-up", fingerprints[0][1], add=False)  # connections, scripts
    await asyncio.get_running_loop().run_in_executor(None, start.wait, START_TIMEOUT_SECONDS)
    queue = collections.deque(fingerprints)
    counts = [0, 0]
    cpu = time.process_time()

    async def client() -> None:
        while queue:
            number, found = queue.popleft()
            url = f"https://bench.test/{number}"
            fetched = FIRST_FETCH + timedelta(seconds=number * FETCH_INTERVAL_SECONDS)
            key = crawl_order_key(None, fetched, url)  # a crawl's key: the fetch time, the URL
            verdict = await index.check_fingerprint(url, found, order_key=key)
            counts[0 if verdict.duplicate_of is None else 1] += 1

    await asyncio.gather(*(client() for _ in range(clients)))
    cpu = time.process_time() - cpu
    await index.close()
    return counts[0], counts[1], cpu


def report(measured: list[Measured], docs: int, processes: int, clients: int) -> str:
    base = measured[0].docs_per_second
    rows = [
        [
            m.target.label,
            m.target.shards,
            f"{m.docs_per_second:,.0f}",
            f"{m.docs_per_second / base:.2f}x",
            f"{m.seconds:.2f}",
            m.new,
            m.duplicates,
        ]
        for m in measured
    ]
    lines = [
        f"check_and_add throughput: {docs} fingerprinted articles (computed before the clock), "
        f"{processes} client processes x {clients} calls in flight",
        render_table(
            ["index on", "shards", "articles/s", "vs 1 server", "seconds", "new", "duplicates"],
            rows,
        ),
    ]
    speedup = measured[-1].docs_per_second / base
    verdict = "ok" if speedup >= TARGET_SPEEDUP else "MISS"
    lines.append(
        f"cluster / one server, measured: {speedup:.2f}x (target >= {TARGET_SPEEDUP}x: {verdict})"
    )
    # Where the servers are the limit (clients on other machines), the busiest node is: its CPU
    # time per article bounds the throughput.
    per_article = [m.busiest_cpu / max(1, m.new + m.duplicates) for m in measured]
    capacity = per_article[0] / per_article[-1] if per_article[-1] > 0 else float("nan")
    lines.append(
        f"server CPU per article on the busiest node: one server {per_article[0] * 1e6:.0f} µs, "
        f"cluster {per_article[-1] * 1e6:.0f} µs: server-bound capacity {capacity:.2f}x"
    )
    lines.extend(machine_bound(measured))
    for m in measured:
        total_keys = sum(keys for _, keys, *_ in m.spread) or 1
        spread_rows = [
            [node, keys, f"{keys / total_keys:.0%}", f"{memory / MIB:.1f}", f"{cpu:.2f}"]
            for node, keys, memory, cpu in m.spread
        ]
        lines.append(f"\nkeys, memory and CPU per node: {m.target.label}")
        headers = ["node", "keys", "share", "memory gained MiB", "CPU s"]
        lines.append(render_table(headers, spread_rows))
    return "\n".join(lines)


def machine_bound(measured: list[Measured]) -> list[str]:
    """Client CPU per article, and what all the CPU one article costs on this machine (clients
    and every node together) allows on its cores: when the clients share the servers' cores,
    a cluster can only be faster than one server if its article costs less CPU in total."""
    cores = os.cpu_count() or 1
    client = [m.client_cpu / max(1, m.new + m.duplicates) for m in measured]
    total = [
        (m.client_cpu + sum(cpu for *_, cpu in m.spread)) / max(1, m.new + m.duplicates)
        for m in measured
    ]
    bound = [cores / t if t > 0 else float("nan") for t in total]
    return [
        f"client CPU per article: one server {client[0] * 1e6:.0f} µs, "
        f"cluster {client[-1] * 1e6:.0f} µs",
        f"all CPU per article (clients + every node): one server {total[0] * 1e6:.0f} µs, "
        f"cluster {total[-1] * 1e6:.0f} µs: on this machine's {cores} cores at most "
        f"{bound[0]:,.0f} and {bound[-1]:,.0f} articles/s ({bound[-1] / bound[0]:.2f}x)",
    ]
