"""Per-domain monitoring: alert rules, stores (memory and real Redis), the extension, Prometheus
metrics, and the redesign alert end to end against the news-site fixture."""

from __future__ import annotations

import asyncio
import json
import random
import re
import time
from collections import Counter
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families
from scrapy.exceptions import DropItem
from scrapy.utils.test import get_crawler

from crawler.core.connection import async_redis, sync_redis
from crawler.core.domainstats import NULL, inc_domain, observe_domain, take_page_ticket
from crawler.core.keys import RedisKeys
from crawler.newsroom import Newsroom, Redesign
from pipelines.monitoring.alerts import (
    ERRORS,
    FEED_STALE,
    NULL_RATE,
    THIN_ARTICLES,
    YIELD_DROP,
    Alert,
    DomainView,
    Outcome,
    Thresholds,
    first_rate_jump,
    fisher_greater,
    poisson_cdf,
    scan_pages,
    scan_time,
)
from pipelines.monitoring.backends import (
    TRIM_EVERY_BUCKETS,
    DomainBatch,
    MemoryStore,
    RedisStore,
    StoreConfig,
    read_redis,
    read_snapshot,
    write_snapshot,
)
from pipelines.monitoring.extension import MonitoringExtension
from pipelines.monitoring.order import PageOrder
from pipelines.monitoring.pipeline import MonitoringPipeline
from pipelines.monitoring.prometheus import DomainCollector, metric_name
from settings import local as local_profile
from tests.support.commands import newsharvest, run_crawl

TH = Thresholds()
HOUR = 3600.0


def outcomes(pattern: str, chars: int = 3000) -> list[Outcome]:
    """'a' article, 'n' NULL, 't' thin article; URLs name positions."""
    sizes = {"a": chars, "t": chars // 10}
    return [
        Outcome(kind == "n", sizes.get(kind, 0), f"http://x.test/{i}")
        for i, kind in enumerate(pattern)
    ]


# --- alert rules -------------------------------------------------------------------------------


def test_fisher_exact_test_matches_known_values() -> None:
    assert fisher_greater(0, 20, 5, 30) == pytest.approx(1.0)
    # 10 of 10 vs 0 of 10: 1 / C(20, 10)
    assert fisher_greater(10, 10, 0, 10) == pytest.approx(1 / 184756)
    assert poisson_cdf(0, 2.0) == pytest.approx(0.1353352832)
    assert poisson_cdf(3, 1000.0) < 1e-300 or poisson_cdf(3, 1000.0) == 0.0


@pytest.mark.parametrize("baseline_rate", [0.0, 0.03, 0.1, 0.2])
def test_null_rate_jump_fires_within_20_pages_of_a_break(baseline_rate: float) -> None:
    for seed in range(50):
        rng = random.Random(seed)
        before = [rng.random() < baseline_rate for _ in range(180)]
        after = [rng.random() < 0.95 for _ in range(40)]
        jump = first_rate_jump(before + after, len(before), TH)
        assert jump is not None
        assert jump.index - len(before) + 1 <= 20  # pages after the change, inclusive


def test_null_rate_rule_keeps_quiet_on_stable_domains() -> None:
    fired = 0
    for seed in range(400):
        rng = random.Random(seed)
        rate = rng.choice([0.02, 0.1, 0.3, 0.5])
        flags = [rng.random() < rate for _ in range(600)]
        for end in range(200, 600, 10):  # the store keeps the last 200 outcomes
            if first_rate_jump(flags[end - 200 : end], 190, TH):
                fired += 1
                break
    assert fired <= 2  # ~240,000 page checks on domains whose NULL rate never changed


def test_scan_pages_names_the_first_page_and_resolves_with_hysteresis() -> None:
    history = outcomes("a" * 20 + "n" + "a" * 29 + "n" * 20)
    fired, resolved = scan_pages("x.test", history, 20, {}, TH, now=1.0)
    assert [a.kind for a in fired] == [NULL_RATE] and not resolved
    alert = fired[0]
    first_bad = int(alert.url.rsplit("/", 1)[1]) - 50 + 1
    baseline_pages = 50 + first_bad - TH.window_pages  # everything before the window
    assert 1 <= first_bad <= 20 and alert.baseline == pytest.approx(1 / baseline_pages)
    assert (
        alert.message.startswith("NULL rate") and f"in the {baseline_pages} before" in alert.message
    )
    # Still broken: stays active (not re-fired, not resolved).
    more = history + outcomes("n" * 10)
    assert scan_pages("x.test", more, 10, {NULL_RATE: alert}, TH, now=2.0) == ([], [])
    # Recovered: a full window of good pages resolves it.
    healed = more + outcomes("a" * 20)
    fired, resolved = scan_pages("x.test", healed, 20, {NULL_RATE: alert}, TH, now=3.0)
    assert not fired and resolved == [alert]


def test_thin_articles_rule_catches_boilerplate_that_is_not_null() -> None:
    history = outcomes("a" * 60 + "t" * 20)
    fired, _ = scan_pages("x.test", history, 20, {}, TH, now=1.0)
    assert [a.kind for a in fired] == [THIN_ARTICLES]
    assert int(fired[0].url.rsplit("/", 1)[1]) - 60 + 1 <= 20
    # Short articles that are normal for the domain are not "thin".
    steady = outcomes("".join(random.Random(1).choice("at") for _ in range(80)))
    assert scan_pages("x.test", steady, 20, {}, TH, now=1.0) == ([], [])


def series_of(per_bucket: dict[int, dict[str, int]]) -> DomainView:
    return DomainView({}, per_bucket)


def test_errors_rule_needs_a_share_and_a_count() -> None:
    now, bucket = 10_000.0, 60.0
    b = int(now // bucket)
    broken = series_of({b: {"fetched": 10, "errors": 8}, b - 1: {"fetched": 10}})
    fired, _ = scan_time("x.test", broken, {}, TH, now, bucket)
    assert [a.kind for a in fired] == [ERRORS] and "8 of 28 requests failed" in fired[0].message
    few = series_of({b: {"fetched": 2, "errors": 2}})
    assert scan_time("x.test", few, {}, TH, now, bucket) == ([], [])
    old = series_of({b - 100: {"fetched": 10, "errors": 8}, b: {"fetched": 5}})
    assert scan_time("x.test", old, {}, TH, now, bucket) == ([], [])
    alert = fired[0]
    healed = series_of({b: {"fetched": 100, "errors": 1}})
    assert scan_time("x.test", healed, {ERRORS: alert}, TH, now, bucket) == ([], [alert])


def test_yield_drop_compares_articles_per_poll_with_the_domain_baseline() -> None:
    bucket, now = 300.0, 100 * HOUR
    b = int(now // bucket)
    recent_buckets = int(TH.yield_window_seconds // bucket)
    base = {b - recent_buckets - i: {"feeds/polled": 1, "articles": 2} for i in range(100)}
    normal = {b - i: {"feeds/polled": 1, "articles": 2} for i in range(recent_buckets)}
    dried = {b - i: {"feeds/polled": 1} for i in range(recent_buckets)}
    assert scan_time("x.test", series_of({**base, **normal}), {}, TH, now, bucket) == ([], [])
    fired, _ = scan_time("x.test", series_of({**base, **dried}), {}, TH, now, bucket)
    assert [a.kind for a in fired] == [YIELD_DROP]
    assert fired[0].baseline == pytest.approx(2.0) and fired[0].value == 0
    # A domain that always published little is not judged on too small a baseline.
    sparse = {b - recent_buckets - i: {"feeds/polled": 1} for i in range(100)}
    sparse[b - recent_buckets - 5] = {"feeds/polled": 1, "articles": 3}
    assert scan_time("x.test", series_of({**sparse, **dried}), {}, TH, now, bucket) == ([], [])


def test_feed_stale_uses_the_domain_cadence_and_needs_polls() -> None:
    now = 1000 * HOUR
    cadence = 0.5 * HOUR
    counters = {
        "articles": 49,
        "first_article_at": now - 12 * HOUR - 48 * cadence,
        "last_article_at": now - 12 * HOUR,
        "polls_since_article": 20,
    }
    fired, _ = scan_time("x.test", DomainView(counters, {}), {}, TH, now, 300.0)
    assert [a.kind for a in fired] == [FEED_STALE] and "12.0 h" in fired[0].message
    unpolled = {**counters, "polls_since_article": 1}
    assert scan_time("x.test", DomainView(unpolled, {}), {}, TH, now, 300.0) == ([], [])
    weekly = {**counters, "first_article_at": counters["last_article_at"] - 48 * 7 * 24 * HOUR}
    assert scan_time("x.test", DomainView(weekly, {}), {}, TH, now, 300.0) == ([], [])
    fresh = {**counters, "last_article_at": now - 60, "polls_since_article": 0}
    alert = fired[0]
    assert scan_time("x.test", DomainView(fresh, {}), {FEED_STALE: alert}, TH, now, 300.0) == (
        [],
        [alert],
    )


# --- stores ------------------------------------------------------------------------------------


def make_batches(now: float, config: StoreConfig) -> list[dict[str, DomainBatch]]:
    bucket = config.bucket(now)
    first = DomainBatch()
    first.counters.update({"fetched": 3, "articles": 2, "null": 1, "null/no_content": 1})
    first.counters["seconds/fetch/sum"] += 0.75
    first.series[bucket].update({"fetched": 3, "articles": 2, "null": 1})
    first.series[bucket - config.retention_buckets - 5]["fetched"] += 9  # too old: trimmed
    first.outcomes = outcomes("aan")
    first.first_article_at = first.last_article_at = now - 5
    second = DomainBatch()
    second.counters.update({"feeds/polled": 2, "errors": 1})
    second.series[bucket].update({"feeds/polled": 2, "errors": 1})
    second.polls_since_article = 2
    return [{"a.test": first, "b.test": DomainBatch(outcomes=outcomes("a"))}, {"a.test": second}]


@pytest.fixture
def redis_store(any_redis: tuple[str, str]):
    redis_url, redis_prefix = any_redis

    def build(config: StoreConfig) -> RedisStore:
        return RedisStore(async_redis(redis_url), RedisKeys(redis_prefix), config)

    return build


def test_memory_and_redis_stores_agree(redis_store, any_redis: tuple[str, str]) -> None:
    redis_url, redis_prefix = any_redis
    config = StoreConfig(bucket_seconds=60, retention_seconds=600, history_pages=3)
    now = time.time()

    async def run(store) -> tuple[list, dict]:
        batches = make_batches(now, config)
        histories = [await store.apply(batch, now, want={"a.test"}) for batch in batches]
        views = await store.domain_views(await store.domains())
        await store.close()
        return histories, views

    memory_histories, memory_views = asyncio.run(run(MemoryStore(config)))
    redis_histories, redis_views = asyncio.run(run(redis_store(config)))
    assert memory_histories == redis_histories
    assert memory_histories[0]["a.test"][-1].url == "http://x.test/2"  # new pages keep URLs
    assert "b.test" not in memory_histories[0]  # only the domains the page rules want
    assert memory_views.keys() == redis_views.keys() == {"a.test", "b.test"}
    for domain in memory_views:
        assert memory_views[domain].series == redis_views[domain].series
        mem, red = memory_views[domain].counters, redis_views[domain].counters
        assert mem.keys() == red.keys()
        for name in mem:
            assert red[name] == pytest.approx(mem[name]), name
    a = redis_views["a.test"]
    assert a.counters["polls_since_article"] == 2 and a.counters["fetched"] == 3
    assert list(a.series) == [config.bucket(now)]  # the out-of-retention bucket was trimmed
    client = sync_redis(redis_url)
    keys = RedisKeys(redis_prefix)
    # Bounded in time: the retention, and the refresh period it must outlive...
    refresh = (TRIM_EVERY_BUCKETS + 1) * config.bucket_seconds
    assert 600 < client.ttl(keys.monitor_series("a.test")) <= 600 + refresh
    assert client.llen(keys.monitor_pages("a.test")) == 3  # ...and in length
    state = read_redis(client, keys, "redis")
    assert set(state.domains) == {"a.test", "b.test"}
    assert state.config.bucket_seconds == 60
    client.close()


def test_alerts_fire_once_across_workers_and_are_logged(redis_store) -> None:
    config = StoreConfig()
    alert = Alert("a.test", NULL_RATE, "NULL rate 90%", 1.0, 0.9, 0.05, "http://a.test/1")

    async def run() -> tuple[bool, bool, dict, bool, bool]:
        first, second = redis_store(config), redis_store(config)
        fired = await first.fire(alert), await second.fire(alert)
        active = await second.active_alerts()
        resolved = await first.resolve(alert, 2.0), await second.resolve(alert, 2.0)
        await first.close()
        await second.close()
        return (*fired, active, *resolved)

    fired_first, fired_second, active, resolved_first, resolved_second = asyncio.run(run())
    assert (fired_first, fired_second) == (True, False)
    assert active == {alert.key: alert}
    assert (resolved_first, resolved_second) == (True, False)
    memory = MemoryStore(config)
    assert asyncio.run(memory.fire(alert)) and not asyncio.run(memory.fire(alert))
    assert [e["event"] for e in memory.alert_log] == ["fired"]


def filled_store(config: StoreConfig, now: float) -> MemoryStore:
    store = MemoryStore(config)
    for batch in make_batches(now, config):
        asyncio.run(store.apply(batch, now))
    return store


def test_snapshot_round_trips(tmp_path: Path) -> None:
    config = StoreConfig(bucket_seconds=60, retention_seconds=600)
    now = time.time()
    store = filled_store(config, now)
    path = tmp_path / "monitor.json"
    write_snapshot(path, store.snapshot(now, running=True))
    state = read_snapshot(path)
    assert state.running and state.config == config
    assert state.domains["a.test"].counters["articles"] == 2
    assert state.domains["a.test"].series == {config.bucket(now): {
        "fetched": 3, "articles": 2, "null": 1, "feeds/polled": 2, "errors": 1,
    }}  # fmt: skip
    assert not list(tmp_path.glob(".*.tmp"))


# --- the extension and Prometheus --------------------------------------------------------------


class Item(dict):
    pass


def project_crawler(**overrides: object):
    """A crawler with the project's settings (settings.local) plus overrides."""
    ours = {
        name: getattr(local_profile, name)
        for name in dir(local_profile)
        if name.startswith(("MONITOR_", "REDIS_", "NEWSHARVEST_"))
    }
    crawler = get_crawler(settings_dict={**ours, **overrides})
    crawler.stats.open_spider()
    return crawler


def test_extension_mirrors_domain_counters_and_exports_prometheus_metrics() -> None:
    crawler = project_crawler()
    extension = MonitoringExtension.from_crawler(crawler)
    extension.store = MemoryStore(extension.config)
    stats = crawler.stats
    inc_domain(stats, "a.test", "fetched", 2)
    inc_domain(stats, "a.test", "null")
    inc_domain(stats, "a.test", "null/no_content")
    inc_domain(stats, "a.test", "errors/http_503")
    inc_domain(stats, "a.test", "method/schema_org")
    inc_domain(stats, "a.test", "notices_removed", 3)  # a counter monitoring never heard of
    observe_domain(stats, "a.test", "fetch", 0.2)
    observe_domain(stats, "a.test", "fetch", 3.0)
    extension.item_dropped(Item(domain="a.test", url="http://a.test/1"), Exception("NULL"))
    extension.article_done(Item(domain="a.test", url="http://a.test/2", text="x" * 500))
    asyncio.run(extension.flush())
    assert stats.get_value("domain/a.test/notices_removed") == 3  # Scrapy stats too
    assert stats.get_value("domain/a.test/seconds/fetch/count") == 2
    assert [o.encode() for o in extension.store.pages["a.test"]] == ["n", "a500"]

    registry = CollectorRegistry(auto_describe=False)
    registry.register(DomainCollector(extension))
    text = generate_latest(registry).decode()
    samples = {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }
    domain = (("domain", "a.test"),)
    assert samples[("newsharvest_domain_fetched_total", domain)] == 2
    assert samples[("newsharvest_domain_notices_removed_total", domain)] == 3
    assert samples[("newsharvest_domain_null_by_reason_total",
                    (("domain", "a.test"), ("reason", "no_content")))] == 1  # fmt: skip
    assert samples[("newsharvest_domain_errors_by_reason_total",
                    (("domain", "a.test"), ("reason", "http_503")))] == 1  # fmt: skip
    assert samples[("newsharvest_domain_extracted_by_method_total",
                    (("domain", "a.test"), ("method", "schema_org")))] == 1  # fmt: skip
    fetch = "newsharvest_domain_fetch_duration_seconds"
    assert samples[(f"{fetch}_bucket", (("domain", "a.test"), ("le", "0.25")))] == 1
    assert samples[(f"{fetch}_bucket", (("domain", "a.test"), ("le", "+Inf")))] == 2
    assert samples[(f"{fetch}_sum", domain)] == pytest.approx(3.2)
    assert samples[("newsharvest_domain_last_article_timestamp_seconds", domain)] > 0
    assert samples[("newsharvest_monitor_flushes_total", ())] == 1
    for family in text_string_to_metric_families(text):
        assert family.name.startswith("newsharvest_") and family.name == family.name.lower()


def test_outcomes_are_released_in_the_order_pages_entered_the_pipeline() -> None:
    order = PageOrder(max_wait_seconds=60)
    first, second, third = (order.ticket("a.test") for _ in range(3))
    other = order.ticket("b.test")
    # The NULL of the third page is settled first (it left at extraction): it waits.
    assert order.settle("a.test", third, Outcome(True), now=0) == []
    assert order.settle("b.test", other, Outcome(True), now=0) == [Outcome(True)]  # own order
    assert order.settle("a.test", second, None, now=1) == []  # a duplicate: no outcome
    released = order.settle("a.test", first, Outcome(False, 900), now=2)
    assert released == [Outcome(False, 900), Outcome(True)]
    assert order.drain() == {}


def test_a_page_that_never_settles_holds_its_domain_back_only_so_long() -> None:
    order = PageOrder(max_wait_seconds=60)
    lost, later = order.ticket("a.test"), order.ticket("a.test")
    assert order.settle("a.test", later, Outcome(True), now=0) == []
    assert order.overdue(now=30) == {}
    assert order.overdue(now=61) == {"a.test": [Outcome(True)]}
    # If the lost page turns up after all, it is judged as it comes, and nothing is stuck.
    assert order.settle("a.test", lost, Outcome(False, 500), now=70) == [Outcome(False, 500)]
    assert order.drain() == {}


def test_monitoring_judges_a_dropped_page_in_its_fetch_order() -> None:
    """Through the extension: tickets come from the item pipeline's entry (take_page_ticket),
    the monitoring stage takes them out of articles, drops and errors settle theirs."""
    crawler = project_crawler()
    extension = MonitoringExtension.from_crawler(crawler)
    MonitoringPipeline(extension).open_spider()
    items = [{"domain": "a.test", "url": f"http://a.test/{n}", "text": "x" * 800} for n in range(3)]
    for item in items:
        take_page_ticket(crawler.stats, item)
    inc_domain(crawler.stats, "a.test", NULL)  # as extraction counts a NULL before dropping it
    extension.item_dropped(items[2], DropItem("NULL"))  # first out, last fetched
    extension.item_error(items[1])
    article = MonitoringPipeline(extension).process_item(items[0])
    assert "monitor_ticket" not in article  # never reaches a sink or an exporter
    judged = [(o.url, o.null) for o in extension.batch["a.test"].outcomes]
    assert judged == [("http://a.test/0", False), ("http://a.test/2", True)]


def test_metric_names_follow_the_counter_names() -> None:
    assert metric_name("feeds/304") == ("feeds_304", None, None)
    assert metric_name("null/no_content") == ("null_by_reason", "reason", "no_content")
    assert metric_name("null") == ("null", None, None)
    assert metric_name("weird name!") == ("weird_name", None, None)


class BrokenRules(MemoryStore):
    """A store that works, behind alert rules that hit a bug."""

    async def active_alerts(self) -> dict[str, Alert]:
        raise KeyError("a bug in an alert rule")


def test_a_store_that_fails_never_stops_the_crawl_and_loses_nothing(
    redis_prefix: str, caplog: pytest.LogCaptureFixture
) -> None:
    crawler = project_crawler()
    extension = MonitoringExtension.from_crawler(crawler)
    config = extension.config
    extension.store = RedisStore(
        async_redis("redis://127.0.0.1:1/0"), RedisKeys(redis_prefix), config
    )  # nothing listens on port 1
    inc_domain(crawler.stats, "a.test", "fetched", 2)
    asyncio.run(extension.flush())
    inc_domain(crawler.stats, "a.test", "fetched", 3)
    asyncio.run(extension.flush())
    assert crawler.stats.get_value("monitor/flush_errors") == 2
    assert extension.retry["a.test"].counters["fetched"] == 5  # kept for the next flush
    assert extension.totals["a.test"]["fetched"] == 5  # and /metrics counted it once
    # A bug while Redis is down is not one more "Redis is down": its first is logged whole too.
    extension.store = BrokenRules(config)
    asyncio.run(extension.flush())
    asyncio.run(extension.flush())
    assert crawler.stats.get_value("monitor/flush_errors") == 4
    logged = [r for r in caplog.records if r.getMessage().startswith("monitoring flush failed")]
    assert len(logged) == 2  # the second of each kind: counted, not logged
    assert "ConnectionError: " in logged[0].getMessage() and logged[0].exc_info is None  # a line
    assert logged[1].exc_info is not None and logged[1].exc_info[0] is KeyError  # whole
    assert "KeyError: 'a bug in an alert rule' (3 so far" in logged[1].getMessage()


# --- end to end: a redesign mid-crawl ----------------------------------------------------------

REDESIGN_AFTER_PAGES = 40
BROKEN = {
    "dailyherald.test": ("client_side", {NULL_RATE}),
    "metroledger.test": ("boilerplate", {NULL_RATE, THIN_ARTICLES}),
    "coastalpost.test": ("server_error", {ERRORS}),
}
MAX_PAGES_TO_ALERT = 20
# A page the monitoring page rules took in, in the DEBUG log (MonitoringExtension._record).
JUDGED_PAGE = re.compile(r"page outcome (?:article|NULL): (\S+)")


@pytest.fixture(scope="module")
def redesign_crawl(tmp_path_factory: pytest.TempPathFactory):
    room = Newsroom(seed=1, n_domains=8, articles_per_domain=80)
    redesigns = [Redesign(d, REDESIGN_AFTER_PAGES, kind) for d, (kind, _) in BROKEN.items()]
    state_dir = tmp_path_factory.mktemp("monitor-state")
    output = state_dir / "articles.jsonl"
    # DEBUG: the log then names every page in the order monitoring judged it; the server's
    # order runs ahead of that by the pages in flight in the pipeline.
    result, requests = run_crawl(
        room, output, f"STATE_DIR={state_dir}", "LOG_LEVEL=DEBUG", redesigns=redesigns
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return room, read_snapshot(state_dir / "monitor.json"), requests, result.stderr


@pytest.mark.slow
def test_redesign_alert_fires_for_the_broken_domain_within_20_pages(redesign_crawl) -> None:
    _, state, requests, log = redesign_crawl
    fired = [event for event in state.alert_log if event["event"] == "fired"]
    by_domain: dict[str, set[str]] = {}
    for event in fired:
        by_domain.setdefault(event["domain"], set()).add(event["kind"])
    for domain, (_, expected) in BROKEN.items():
        assert by_domain.get(domain, set()) & expected, (domain, by_domain)
        assert "ALERT " in log and domain in log
    # Not for the others: no alert of any kind on a domain that did not change.
    assert set(by_domain) == set(BROKEN), by_domain
    judged = JUDGED_PAGE.findall(log)
    for event in fired:
        if event["kind"] in (NULL_RATE, THIN_ARTICLES):
            redesigned = {f"http://{r.host}{r.target}" for r in requests
                          if r.host == event["domain"] and r.redesign}  # fmt: skip
            seen = [url for url in judged if url in redesigned]
            position = seen.index(event["url"]) + 1  # 1 = the first redesigned page judged
            print(f"{event['domain']} {event['kind']}: alert at redesigned page {position} "
                  f"as monitoring saw them: {event['message']}")  # fmt: skip
            assert position <= MAX_PAGES_TO_ALERT, (event, position)


@pytest.mark.slow
def test_redesign_crawl_counts_every_domain(redesign_crawl) -> None:
    room, state, requests, _ = redesign_crawl
    assert set(state.domains) == set(room.domains)
    served = Counter(
        r.host for r in requests if r.host in room.sites and room.page_at(r.host, r.target)
    )
    for domain, view in state.domains.items():
        counters = view.counters
        fetched, errors = counters.get("fetched", 0), counters.get("errors", 0)
        assert fetched + errors == served[domain]
        assert counters["seconds/fetch/count"] > 0 and counters["seconds/extraction/count"] > 0
        assert sum(counts.get("fetched", 0) for counts in view.series.values()) == fetched
    assert not state.running


# --- the commands ------------------------------------------------------------------------------


def test_monitor_print_shows_the_table_and_alerts_of_a_local_crawl(tmp_path: Path) -> None:
    now = time.time()
    store = filled_store(StoreConfig(bucket_seconds=1, retention_seconds=60), now)
    alert = Alert("a.test", NULL_RATE, "NULL rate 90% over the last 20 pages", now, 0.9, 0.05)
    asyncio.run(store.fire(alert))
    write_snapshot(tmp_path / "monitor.json", store.snapshot(now, running=False))
    result = newsharvest("monitor", "--print", "--state-dir", str(tmp_path))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("domain"))
    assert lines[header].split()[:4] == ["domain", "yield/h", "articles", "NULL"]
    row = lines[header + 2].split()
    assert row[0] == "a.test" and row[2] == "2" and row[3] == "33.3%" and row[-1] == "null_rate"
    assert "null_rate      a.test: NULL rate 90%" in result.stdout
    as_json = json.loads(newsharvest("monitor", "--json", "--state-dir", str(tmp_path)).stdout)
    assert [d["domain"] for d in as_json["domains"]] == ["a.test", "b.test"]
    assert as_json["domains"][0]["chart"]["articles"][-1] == 2
    empty = newsharvest("monitor", "--print", "--state-dir", str(tmp_path / "none"))
    assert empty.returncode == 0 and "no active alerts" in empty.stdout


@pytest.mark.slow
def test_bench_monitoring_runs_and_reports_the_overhead() -> None:
    result = newsharvest("bench", "monitoring", "--domains", "2", "--articles-per-domain", "10",
                         "--rounds", "1", "--redis-url", "", "--json")  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    figures = json.loads(result.stdout)
    assert set(figures) == {"local/off", "local/on", "hot_path"}
    assert 0 < figures["hot_path"]["us_per_page"] < 1000
    assert figures["local/on"]["pages"] == figures["local/off"]["pages"] > 20
    assert "throughput_overhead" in figures["local/on"]
