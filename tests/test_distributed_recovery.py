"""Crashes of distributed workers, through real `scrapy crawl feeds` processes on the news-site
simulator: a worker killed with SIGKILL hands its work back at once (heartbeats, owned claims
and feed leases), monitoring counts what the journals hold, and a burst is split between the
workers. The scenarios are those `newsharvest bench distributed` measures
(bench/newsharvest_bench/bench_distributed.py); here their figures are checked."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from crawler.core.clock import SystemClock
from crawler.core.connection import sync_redis
from crawler.core.keys import RedisKeys
from crawler.harvest import FeedPoller
from crawler.ledger import LedgerConfig, RedisHarvestState
from crawler.newsroom import Newsroom, NewsroomServer
from crawler.polling import FeedState, PollPolicy
from newsharvest_bench.bench_distributed import (
    HARVEST_TIMEOUT_SECONDS,
    Context,
    Worker,
    delete_prefixes,
    feed_lease_section,
    lost_and_doubled,
    monitoring_section,
    pending_claims,
    redis_worker,
    restart_section,
    split_section,
)

RESTART_COMPLETE_SECONDS = 30.0  # the harvest completes this soon after a restart
FEED_REPOLL_SECONDS = 20.0  # far below HARVEST_FEED_LEASE_SECONDS (300 s)
MIN_SHARE_PERCENT = 15.0
BURST_ARTICLES = 300
# The other worker of the one-pass test: alive (its heartbeat kept by the test) while the new
# worker starts, polls and finds nothing of its own, then silent (killed before it queued its
# claims' requests). Its heartbeat's TTL is the workers' (LIVENESS_SETTINGS: 3 s).
OTHER_WORKER = "other/00000000"
OTHER_TTL_MS = 3_000
BEAT_EVERY_SECONDS = 0.2
WAIT_LOGGED = "not closing yet"  # the one-pass worker's line when it waits for other workers
GIVE_UP_MARGIN_SECONDS = 30.0  # process start, feed polls and close, under a loaded machine


@pytest.fixture
def context(tmp_path: Path, redis_url: str, redis_prefix: str) -> Iterator[Context]:
    context = Context(redis_url, tmp_path, domains=6, articles_per_domain=50,
                      base_prefix=redis_prefix)  # fmt: skip
    yield context
    delete_prefixes(redis_url, context.prefixes)


@pytest.fixture
def cluster_context(
    tmp_path: Path, redis_cluster_url: str, redis_cluster_prefix: str
) -> Iterator[Context]:
    """The same scenarios on the session's 3-master Redis Cluster."""
    context = Context(redis_cluster_url, tmp_path, domains=6, articles_per_domain=50,
                      base_prefix=redis_cluster_prefix)  # fmt: skip
    yield context
    delete_prefixes(redis_cluster_url, context.prefixes)


@pytest.fixture(params=["redis", "redis-cluster"])
def any_context(request: pytest.FixtureRequest) -> Context:
    return request.getfixturevalue("context" if request.param == "redis" else "cluster_context")


@pytest.mark.slow
def test_a_worker_killed_and_restarted_completes_the_harvest_at_once(any_context: Context) -> None:
    figures = restart_section(any_context)
    assert figures["pending at the kill"] > 0, figures  # the kill did cut work off
    assert figures["exit status"] == 0, figures
    assert figures["restart to complete s"] < RESTART_COMPLETE_SECONDS, figures
    assert (figures["lost"], figures["doubled"], figures["pending after"]) == (0, 0, 0), figures


@pytest.mark.slow
def test_embedded_state_repolls_a_feed_cut_off_by_a_kill_at_once(context: Context) -> None:
    figures = feed_lease_section(context)
    assert figures["leased at the kill"] == figures["feeds"], figures
    assert figures["restart to every feed polled s"] < FEED_REPOLL_SECONDS, figures


@pytest.mark.slow
def test_monitoring_counts_what_the_journals_hold_after_a_worker_is_killed(
    any_context: Context,
) -> None:
    """Three workers, one killed with SIGKILL (on one server and on a Redis Cluster)."""
    figures = monitoring_section(any_context)
    assert figures["killed worker's output"] > 0, figures  # it did count articles
    assert figures["lost"] == 0, figures
    assert figures["monitoring total"] == figures["journals (distinct)"], figures


@pytest.mark.slow
def test_three_workers_share_a_burst(context: Context) -> None:
    figures = split_section(context)
    assert figures["articles"] >= BURST_ARTICLES, figures
    assert figures["smallest share %"] >= MIN_SHARE_PERCENT, figures
    assert (figures["lost"], figures["doubled"]) == (0, 0), figures


async def _claim_as(owner: str, redis_url: str, prefix: str, room: Newsroom) -> int:
    """Poll every feed of the room as `owner` would (the real FeedPoller on the shared ledger):
    its articles are pending claims held by `owner`, the feeds' validators saved."""
    state = RedisHarvestState(LedgerConfig(), redis_url, RedisKeys(prefix), owner=owner)
    await state.open()
    try:
        poller = FeedPoller(state, PollPolicy(), SystemClock())
        claimed = 0
        for url in room.feed_urls:
            parts = urlsplit(url)
            path = parts.path + (f"?{parts.query}" if parts.query else "")
            status, headers, body = room.render(parts.netloc, path)
            names = ("ETag", "Last-Modified", "Content-Location")
            answer = {name: headers.get(name) for name in names}
            result = await poller.handle(FeedState(url=url), status, answer, body, url)
            claimed += len(result.claims)
        return claimed
    finally:
        await state.close()


def _one_pass_beside_another(
    tmp_path: Path,
    redis_url: str,
    redis_prefix: str,
    beat_to_the_end: bool,
    extra: tuple[str, ...] = (),
) -> tuple[int, float, Newsroom, Worker]:
    """Another worker holds every article's claim and beats; a one-pass worker is started. The
    other beats until the new one logs that it waits (then falls silent, killed before it
    queued its claims' requests) or, `beat_to_the_end`, as long as the new one runs. Returns
    the new worker's exit status and seconds from its start."""
    room = Newsroom(seed=23, n_domains=2, articles_per_domain=4)
    claimed = asyncio.run(_claim_as(OTHER_WORKER, redis_url, redis_prefix, room))
    assert claimed >= len(room.articles()) > 0  # feeds list a few pages besides articles
    context = Context(redis_url, tmp_path)
    alive = RedisKeys(redis_prefix).harvest_alive(OTHER_WORKER)
    client = sync_redis(redis_url)
    with NewsroomServer(room, port=0) as server:
        worker = redis_worker("late", room.feed_urls, server.proxy_url, context, redis_prefix,
                              continuous=False, extra=extra)  # fmt: skip
        client.set(alive, "other", px=OTHER_TTL_MS)
        started = time.monotonic()
        worker.start()
        assert worker.process is not None
        try:
            deadline = started + HARVEST_TIMEOUT_SECONDS
            while worker.process.poll() is None and (
                beat_to_the_end or WAIT_LOGGED not in worker.log.read_text()
            ):
                assert time.monotonic() < deadline, "the worker neither waited nor exited"
                client.set(alive, "other", px=OTHER_TTL_MS)
                time.sleep(BEAT_EVERY_SECONDS)
            status = worker.process.wait(timeout=HARVEST_TIMEOUT_SECONDS)
            seconds = time.monotonic() - started
        finally:
            worker.stop()
            client.close()
    return status, seconds, room, worker


def test_a_one_pass_worker_waits_for_claims_of_a_worker_it_cannot_take_over_yet(
    tmp_path: Path, redis_url: str, redis_prefix: str
) -> None:
    """Another worker holds every article's claim, its heartbeat still alive, and was killed
    before it queued their requests. A one-pass worker started then finds nothing of its own:
    it must not exit 0 leaving the articles pending with no worker; it waits, takes them over
    once the other's heartbeat lapses, and completes the harvest."""
    status, _, room, worker = _one_pass_beside_another(tmp_path, redis_url, redis_prefix, False)
    lost, doubled = lost_and_doubled(room, worker.items())
    figures = {"exit status": status, "lost": lost, "doubled": doubled,
               "pending after": pending_claims(redis_url, redis_prefix)}  # fmt: skip
    assert figures == {"exit status": 0, "lost": 0, "doubled": 0, "pending after": 0}, (
        figures, worker.log.read_text()[-3000:])  # fmt: skip


def test_a_one_pass_worker_waits_for_a_live_worker_no_longer_than_its_bound(
    tmp_path: Path, redis_url: str, redis_prefix: str
) -> None:
    """The other worker beats throughout (alive, maybe stuck): the one-pass worker waits at
    most HEARTBEAT_TTL_SECONDS + HARVEST_CLAIM_LEASE_SECONDS + HEARTBEAT_SECONDS, then closes
    with a warning, leaving the live worker's claims to it."""
    lease = 2.0
    bound = 3.0 + lease + 1.0  # LIVENESS_SETTINGS: TTL 3 s, heartbeat 1 s
    status, seconds, room, worker = _one_pass_beside_another(
        tmp_path, redis_url, redis_prefix, True, (f"HARVEST_CLAIM_LEASE_SECONDS={lease}",)
    )
    log = worker.log.read_text()
    assert status == 0 and "closing although other workers still hold work" in log, log[-3000:]
    assert bound < seconds < bound + GIVE_UP_MARGIN_SECONDS, seconds
    assert worker.items() == []  # the live worker's claims stay with it
    assert pending_claims(redis_url, redis_prefix) >= len(room.articles())
