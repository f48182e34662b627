"""Prometheus metrics of one crawler process, with a `domain` label.

Each worker exports its own counters (Prometheus sums workers: `sum by (domain) (...)`); the
alert gauge is the shared alert set, the same on every worker (use `max by`). Counters follow
the `inc_domain` names, so a counter a stage adds shows up without code here:

    domain/<d>/fetched              -> newsharvest_domain_fetched_total{domain}
    domain/<d>/feeds/polled         -> newsharvest_domain_feeds_polled_total{domain}
    domain/<d>/null/<reason>        -> newsharvest_domain_null_by_reason_total{domain,reason}
    domain/<d>/errors/<reason>      -> newsharvest_domain_errors_by_reason_total{domain,reason}
    domain/<d>/method/<method>      -> newsharvest_domain_extracted_by_method_total{domain,method}
    domain/<d>/filtered/<reason>    -> newsharvest_domain_filtered_by_reason_total{domain,reason}
    observe_domain(..., "fetch")    -> newsharvest_domain_fetch_duration_seconds{domain} (histogram)

The collector reads a copy of the totals at scrape time: nothing is paid per event.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, Protocol

from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.gc_collector import GCCollector
from prometheus_client.platform_collector import PlatformCollector
from prometheus_client.process_collector import ProcessCollector
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

from crawler.core.domainstats import BREAKDOWN_LABELS
from pipelines.monitoring.alerts import Alert
from pipelines.monitoring.backends import LAST_ARTICLE_AT, STATE_FIELDS, TIMING_PREFIX

NAMESPACE = "newsharvest"
_INVALID = re.compile(r"[^a-zA-Z0-9_]+")
# Help texts of the counters every stage shares; others get a generic one.
HELP = {
    "fetched": "Article pages fetched.",
    "articles": "Articles output by the pipeline.",
    "null": "Fetched pages with no article (NULL).",
    "null_by_reason": "NULL pages by reason.",
    "errors": "Failed requests (HTTP error status or network failure).",
    "errors_by_reason": "Failed requests by reason (http_<status>, exception name).",
    "extracted_by_method": "Articles by extraction method.",
    "feeds_polled": "Feed fetches that returned a feed body.",
    "feeds_errors": "Feed fetches that were not a usable feed.",
    "duplicates": "Articles found to be near-duplicates of an earlier one.",
    "filtered": "Articles the harvest filters ruled out (ARTICLE_LANGUAGES, ...).",
    "filtered_by_reason": "Articles the harvest filters ruled out, by reason.",
}


def metric_name(counter: str) -> tuple[str, str | None, str | None]:
    """(metric name without _total, label name, label value) of an inc_domain counter."""
    parent, _, child = counter.partition("/")
    breakdown = BREAKDOWN_LABELS.get(parent)
    if breakdown and child:
        name, label = breakdown
        return f"{name}_by_{label}", label, child
    return _clean(counter), None, None


def _clean(name: str) -> str:
    return _INVALID.sub("_", name).strip("_").lower() or "unnamed"


class MetricsSource(Protocol):
    """What the collector reads (the monitoring extension): totals per domain and counter,
    alerts fired per (domain, kind), active alerts, and monitoring's own figures."""

    def metrics_view(
        self,
    ) -> tuple[
        dict[str, dict[str, float]], dict[tuple[str, str], int], list[Alert], dict[str, float]
    ]: ...


class DomainCollector(Collector):
    def __init__(self, extension: MetricsSource) -> None:
        self.extension = extension

    def collect(self) -> Iterator[Metric]:
        totals, fired, active, monitor = self.extension.metrics_view()
        counters: dict[str, CounterMetricFamily] = {}
        timings: dict[str, dict[str, dict[str, float]]] = {}  # timing -> domain -> field -> v
        last_article = GaugeMetricFamily(
            f"{NAMESPACE}_domain_last_article_timestamp_seconds",
            "Unix time of the domain's newest article.", labels=["domain"],
        )  # fmt: skip
        for domain, values in sorted(totals.items()):
            for name, value in values.items():
                if name.startswith(TIMING_PREFIX):
                    timing, _, part = name[len(TIMING_PREFIX) :].partition("/")
                    timings.setdefault(timing, {}).setdefault(domain, {})[part] = value
                elif name == LAST_ARTICLE_AT:
                    last_article.add_metric([domain], value)
                elif name not in STATE_FIELDS:
                    base, label, label_value = metric_name(name)
                    family = counters.get(base)
                    if family is None:
                        family = counters[base] = CounterMetricFamily(
                            f"{NAMESPACE}_domain_{base}",
                            HELP.get(base, f"Per-domain count of {name!r} events."),
                            labels=["domain", label] if label else ["domain"],
                        )
                    family.add_metric([domain, label_value] if label else [domain], value)
        yield from counters.values()
        yield last_article
        for timing, per_domain in sorted(timings.items()):
            yield _histogram(timing, per_domain)
        yield from _alert_metrics(fired, active)
        yield from _monitor_metrics(monitor)


def _histogram(timing: str, per_domain: dict[str, dict[str, float]]) -> HistogramMetricFamily:
    family = HistogramMetricFamily(
        f"{NAMESPACE}_domain_{_clean(timing)}_duration_seconds",
        f"Seconds per {timing} (per domain).",
        labels=["domain"],
    )
    for domain, parts in sorted(per_domain.items()):
        bounds = sorted(
            (float(key[3:]), value) for key, value in parts.items() if key.startswith("le/")
        )
        cumulative, buckets = 0.0, []
        for bound, count in bounds:
            cumulative += count
            buckets.append((floatToGoString(bound), cumulative))
        if not buckets or buckets[-1][0] != "+Inf":
            buckets.append(("+Inf", parts.get("count", cumulative)))
        family.add_metric([domain], buckets, sum_value=parts.get("sum", 0.0))
    return family


def _alert_metrics(fired: dict[tuple[str, str], int], active: list[Any]) -> Iterator[Metric]:
    gauge = GaugeMetricFamily(
        f"{NAMESPACE}_domain_alert",
        "1 while the alert of this kind is active for the domain (shared by all workers).",
        labels=["domain", "kind"],
    )
    for alert in sorted(active, key=lambda a: (a.domain, a.kind)):
        gauge.add_metric([alert.domain, alert.kind], 1)
    yield gauge
    counter = CounterMetricFamily(
        f"{NAMESPACE}_domain_alerts_fired",
        "Alerts this worker fired.",
        labels=["domain", "kind"],
    )
    for (domain, kind), count in sorted(fired.items()):
        counter.add_metric([domain, kind], count)
    yield counter


def _monitor_metrics(monitor: dict[str, float]) -> Iterator[Metric]:
    yield CounterMetricFamily(
        f"{NAMESPACE}_monitor_flushes", "Monitoring flushes.", value=monitor["flushes"]
    )
    yield CounterMetricFamily(
        f"{NAMESPACE}_monitor_flush_errors",
        "Monitoring flushes the store refused (kept for retry).",
        value=monitor["flush_errors"],
    )
    yield CounterMetricFamily(
        f"{NAMESPACE}_monitor_flush_seconds",
        "Seconds spent flushing monitoring batches (the monitor's own cost).",
        value=monitor["flush_seconds"],
    )


def serve_metrics(extension: MetricsSource, address: str, port: int) -> tuple[Any, int]:
    """Start the /metrics endpoint in a daemon thread; returns (server, bound port)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(DomainCollector(extension))
    ProcessCollector(registry=registry)
    PlatformCollector(registry=registry)
    GCCollector(registry=registry)
    server, _thread = start_http_server(port, addr=address, registry=registry)
    return server, server.server_port
