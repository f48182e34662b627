"""Crashes of distributed workers, through real `scrapy crawl feeds` processes on the news-site
simulator: a worker killed with SIGKILL hands its work back at once (heartbeats, owned claims
and feed leases), monitoring counts what the journals hold, and a burst is split between the
workers. The scenarios are those `newsharvest bench distributed` measures
(bench/newsharvest_bench/bench_distributed.py); here their figures are checked."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from newsharvest_bench.bench_distributed import (
    Context,
    delete_prefixes,
    feed_lease_section,
    monitoring_section,
    restart_section,
    split_section,
)

RESTART_COMPLETE_SECONDS = 30.0  # the harvest completes this soon after a restart
FEED_REPOLL_SECONDS = 20.0  # far below HARVEST_FEED_LEASE_SECONDS (300 s)
MIN_SHARE_PERCENT = 15.0
BURST_ARTICLES = 300


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
