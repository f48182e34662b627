"""The dashboard in a real browser: headless Chromium loads `newsharvest monitor` while a
Redis-backed crawl of the fixture runs (one domain redesigned mid-crawl), and we assert on what
it rendered: one row per domain, a chart per row, the alert; and, at 1366x900, that the domain
table fits the window (measured in the page with getBoundingClientRect) and that a short run
shows counts over their span, not a rate per hour extrapolated from seconds. Screenshots and DOM
are saved in the test's tmp directory (printed). Chromium comes from Debian (`apt-get install
chromium`), installed here when missing."""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lxml import html as lxml_html
from prometheus_client.parser import text_string_to_metric_families

from crawler.cli.monitor import render_text
from crawler.newsroom import Newsroom, NewsroomServer, Redesign
from pipelines.monitoring.alerts import ALERT_KINDS, Alert, DomainView
from pipelines.monitoring.backends import MonitorState, StoreConfig
from pipelines.monitoring.dashboard import (
    RATE_MIN_SECONDS,
    DashboardServer,
    chart_axis,
    chart_step,
    dashboard_state,
)
from tests.support.chromium import Page

CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--virtual-time-budget=4000",  # let the page's fetch + render finish before dumping
]  # fmt: skip
APT_TIMEOUT_SECONDS = 900
BROWSER_TIMEOUT_SECONDS = 60
ALERT_TIMEOUT_SECONDS = 90
BROKEN_DOMAIN = "dailyherald.test"
REDESIGN_AFTER_PAGES = 30
# The narrowest window the dashboard must fit: a 1366x768 laptop screen's, in a browser window.
NARROW_WIDTH, NARROW_HEIGHT = 1366, 900
PAGE_READY = "document.body && document.body.dataset.ready === '1'"
# The table's box and the page's, measured by the browser's own layout.
MEASURE_TABLE = """JSON.stringify({
  table: document.querySelector('table').getBoundingClientRect().right,
  viewport: document.documentElement.clientWidth,
  page: document.documentElement.scrollWidth,
  cells: [...document.querySelectorAll('tbody tr:first-child td')].map(
    td => td.getBoundingClientRect().right)
})"""


def ensure_chromium() -> str:
    """Debian's chromium, installed quietly (and idempotently) when missing."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        pytest.fail("the dashboard test needs Chromium: run `apt-get install -y chromium` as root",
                    pytrace=False)  # fmt: skip
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "-qq", "--no-install-recommends", "chromium"]
    result = subprocess.run(install, env=env, capture_output=True, text=True,
                            timeout=APT_TIMEOUT_SECONDS, check=False)  # fmt: skip
    if result.returncode != 0:  # a fresh machine may have no package lists yet
        subprocess.run(["apt-get", "update", "-qq"], env=env, capture_output=True,
                       timeout=APT_TIMEOUT_SECONDS, check=False)  # fmt: skip
        result = subprocess.run(install, env=env, capture_output=True, text=True,
                                timeout=APT_TIMEOUT_SECONDS, check=False)  # fmt: skip
    found = shutil.which("chromium")
    if result.returncode != 0 or not found:
        pytest.fail(f"could not install Chromium with `{' '.join(install)}`:\n"
                    f"{result.stderr[-2000:]}", pytrace=False)  # fmt: skip
    return found


def browser(chromium: str, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args]
    return subprocess.run(command, capture_output=True, text=True,
                          timeout=BROWSER_TIMEOUT_SECONDS, check=False)  # fmt: skip


def get_json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read())


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGINT)  # Scrapy and the monitor both stop cleanly on it
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="module")
def chromium() -> str:
    return ensure_chromium()


@pytest.fixture
def live_dashboard(redis_url: str, redis_prefix: str, tmp_path: Path) -> Iterator[tuple]:
    """A crawl running against the fixture and `newsharvest monitor` reading its Redis."""
    tmp_path = tmp_path / "crawl"
    tmp_path.mkdir()
    room = Newsroom(seed=1, n_domains=6, articles_per_domain=150)
    redesign = Redesign(BROKEN_DOMAIN, REDESIGN_AFTER_PAGES, "client_side")
    env = {
        "SCRAPY_SETTINGS_MODULE": "settings.fixture", "PATH": "/usr/bin:/bin",
        "NEWSHARVEST_STATE_DIR": str(tmp_path / "state"),
        "NEWSHARVEST_OUTPUT_DIR": str(tmp_path / "output"),
    }  # fmt: skip
    with NewsroomServer(room, port=0, redesigns=[redesign]) as server:
        crawl_log = (tmp_path / "crawl.log").open("w")
        crawl = subprocess.Popen(
            [sys.executable, "-m", "scrapy", "crawl", "feeds",
             "-a", "feeds=" + ",".join(room.feed_urls),
             "-O", f"{tmp_path / 'articles.jsonl'}:jsonlines",
             "-s", f"PROXY_URL={server.proxy_url}",
             "-s", f"REDIS_URL={redis_url}", "-s", f"REDIS_KEY_PREFIX={redis_prefix}",
             "-s", "MONITOR_PROMETHEUS_ENABLED=1", "-s", "MONITOR_PROMETHEUS_PORT=0",
             "-s", "DOWNLOAD_DELAY=0.1",  # slow enough to still be running when we look
             "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=2", "-s", "LOG_LEVEL=INFO"],
            cwd=tmp_path, env=env, stdout=crawl_log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        monitor = subprocess.Popen(
            [sys.executable, "-m", "crawler.cli", "monitor", "--port", "0",
             "--redis-url", redis_url, "--redis-prefix", redis_prefix],
            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            line = monitor.stdout.readline() if monitor.stdout else ""
            assert line.startswith("dashboard: http://127.0.0.1:"), line + monitor.stderr.read()
            yield room, crawl, line.split()[1], tmp_path / "crawl.log"
        finally:
            stop(monitor)
            stop(crawl)
            crawl_log.close()


@pytest.mark.slow
def test_dashboard_renders_rows_charts_and_the_alert_in_chromium(
    chromium: str, live_dashboard: tuple, tmp_path: Path
) -> None:
    room, crawl, url, crawl_log = live_dashboard
    deadline = time.monotonic() + ALERT_TIMEOUT_SECONDS
    state: dict = {}
    while time.monotonic() < deadline:
        state = get_json(url + "api/state")
        if any(a["domain"] == BROKEN_DOMAIN for a in state["alerts"]):
            break
        assert crawl.poll() is None, crawl_log.read_text()[-3000:]
        time.sleep(0.5)
    else:
        pytest.fail(f"no alert for {BROKEN_DOMAIN} within {ALERT_TIMEOUT_SECONDS} s: {state}")
    assert crawl.poll() is None, "the crawl should still be running while we look"

    # The crawler's own Prometheus endpoint says the same, with a domain label.
    metrics_url = next(w["metrics_url"] for w in state["workers"] if w["metrics_url"])
    with urllib.request.urlopen(metrics_url, timeout=10) as response:
        samples = {
            (sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in text_string_to_metric_families(response.read().decode())
            for sample in family.samples
        }
    assert samples[("newsharvest_domain_alert",
                    (("domain", BROKEN_DOMAIN), ("kind", "null_rate")))] == 1  # fmt: skip
    assert samples[("newsharvest_domain_fetched_total", (("domain", "wirewatch.test"),))] > 0

    artifacts = tmp_path / "artifacts"  # the page and its screenshot, for a person to look at
    artifacts.mkdir()
    dumped = browser(chromium, tmp_path / "profile-dom", "--dump-dom", url)
    assert dumped.returncode == 0, dumped.stderr[-2000:]
    (artifacts / "dashboard.html").write_text(dumped.stdout)
    page = lxml_html.fromstring(dumped.stdout)
    assert page.xpath("//body/@data-ready") == ["1"]
    rows = page.xpath("//tbody[@id='rows']/tr")
    assert sorted(row.get("data-domain") for row in rows) == sorted(room.domains)
    assert rows[0].get("data-domain") == BROKEN_DOMAIN  # alerting domains sort first
    for row in rows:
        chart = row.xpath(".//svg[contains(@class, 'chart')]")
        assert len(chart) == 1 and chart[0].xpath(".//*[local-name()='rect']"), row.get(
            "data-domain"
        )
        assert chart[0].xpath(".//*[local-name()='path' and @class='null']")
    alerts = page.xpath("//ul[@id='alerts']/li[contains(@class, 'alert')]")
    assert [(a.get("data-domain"), a.get("data-kind")) for a in alerts] == [
        (BROKEN_DOMAIN, "null_rate")
    ]
    assert "NULL rate" in alerts[0].text_content()
    assert "crawling" in page.get_element_by_id("status").text_content()

    # The header names the worker (host:pid without WORKER_ID), linked to its metrics.
    workers = page.get_element_by_id("workers")
    named = workers.xpath(".//*[@data-worker]")
    assert [w.text_content() for w in named] == [f"{socket.gethostname()}:{crawl.pid}"]
    assert named[0].get("href") == metrics_url and "metrics metrics" not in workers.text_content()
    # Every windowed column and tile says its window (all the data: no page choice of span);
    # the chart says its step.
    titles = {th.get("data-key"): th.text_content() for th in page.xpath("//thead/tr/th")}
    for key in ("yield_per_hour", "articles", "null_rate", "duplicate_rate", "errors"):
        assert "(all " in titles[key] and "(last " not in titles[key], titles[key]
    assert "(all " not in titles["staleness_seconds"]
    tiles = page.get_element_by_id("tiles").text_content()
    assert tiles.count("(all ") == 2, tiles  # articles and NULL rate (the crawl moves on)
    assert "in steps of" in page.get_element_by_id("legend").text_content()

    # A shorter span: the step adapts (5 s over 5 minutes at 1 s buckets), and so do the labels.
    short = get_json(url + "api/state?span=300")
    assert short["chart"]["step_seconds"] == 5 and short["window_seconds"] == 300
    assert short["chart"]["points"] in (60, 61)
    dumped = browser(chromium, tmp_path / "profile-span", "--dump-dom", url + "?span=300")
    assert dumped.returncode == 0, dumped.stderr[-2000:]
    page = lxml_html.fromstring(dumped.stdout)
    assert page.xpath("//body/@data-ready") == ["1"]
    assert "(last 5 min)" in page.xpath("//thead/tr/th[@data-key='null_rate']")[0].text_content()
    assert "last 5 min in steps of 5 s" in page.get_element_by_id("legend").text_content()
    assert page.xpath("//*[@id='spans']/a[@class='current']/@data-span") == ["300"]

    assert_the_table_fits(chromium, url, artifacts / "dashboard.png", tmp_path / "profile-shot")


def assert_the_table_fits(chromium: str, url: str, shot: Path, profile: Path) -> dict:
    """Load `url` at 1366x900, save a screenshot, and assert that the whole domain table is
    inside the window: its right edge (and every cell's) within the viewport, and no
    horizontal scrolling."""
    with Page(chromium, profile, NARROW_WIDTH, NARROW_HEIGHT) as page:
        page.open(url, PAGE_READY)
        box = json.loads(page.evaluate(MEASURE_TABLE))
        page.screenshot(shot)
    print(f"dashboard screenshot at {NARROW_WIDTH}x{NARROW_HEIGHT}: {shot} (table {box})")
    assert box["viewport"] == NARROW_WIDTH
    assert box["cells"] and max(box["cells"]) <= box["table"] <= box["viewport"], box
    assert box["page"] <= box["viewport"], box  # nothing scrolls sideways
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000
    return box


# --- a short run, long names: honest numbers in a table that fits -------------------------

LONG_DOMAINS = (
    "news.a-very-long-regional-publisher-name.example.co.uk",
    "www.another-publisher-with-a-long-name.example.com",
    "short.test",
)


def short_run_state(now: float) -> MonitorState:
    """A local crawl that lasted 2 seconds (the demo's): 8 articles per domain, every alert
    kind on the first domain, finished."""
    config = StoreConfig(bucket_seconds=1.0, retention_seconds=3600.0)
    bucket = config.bucket(now)
    counters = {"first_seen_at": now - 2, "articles": 8, "fetched": 10, "null": 2,
                "last_article_at": now - 1, "seconds/fetch/sum": 0.5,
                "seconds/fetch/count": 10}  # fmt: skip
    series = {bucket - 1: {"articles": 3, "fetched": 4, "null": 1},
              bucket: {"articles": 5, "fetched": 6, "null": 1}}  # fmt: skip
    domains = {domain: DomainView(counters, series) for domain in LONG_DOMAINS}
    alerts = [Alert(LONG_DOMAINS[0], kind, f"{kind} fired", now, 0.9, 0.1) for kind in ALERT_KINDS]
    return MonitorState("test", config, domains, alerts, [], {}, now, False)


@pytest.fixture
def short_run_dashboard() -> Iterator[str]:
    """The dashboard of `short_run_state`, served in this process."""
    now = time.time()
    state = short_run_state(now)
    server = DashboardServer(("127.0.0.1", 0), lambda span: dashboard_state(state, now, span))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def test_a_short_run_shows_counts_over_their_span_not_a_rate_per_hour() -> None:
    now = time.time()
    state = dashboard_state(short_run_state(now), now)  # span "all"
    assert state["span_seconds"] is None and state["window_seconds"] == 2
    for row in state["domains"]:
        assert row["yield_per_hour"] is None and row["articles"] == 8  # not 8 / 2 s = 14,400 /h
        assert row["yield_seconds"] == 2
    text = render_text(state)
    assert "over all the data kept (2 s)" in text and "last 2 s" not in text
    assert "14400" not in text and "too short for a rate per hour" in text
    # The same domain after RATE_MIN_SECONDS of crawling (its first page fetched then): a rate,
    # over that crawling.
    long_run = short_run_state(now)
    view, started = long_run.domains["short.test"], now - RATE_MIN_SECONDS
    series = {**view.series, long_run.config.bucket(started): {"fetched": 1}}
    long_run.domains["short.test"] = DomainView({**view.counters, "first_seen_at": started},
                                                series)  # fmt: skip
    rows = {row["domain"]: row for row in dashboard_state(long_run, now)["domains"]}
    assert rows["short.test"]["yield_per_hour"] == pytest.approx(8 * 3600 / RATE_MIN_SECONDS)


@pytest.mark.slow
def test_the_table_of_a_short_run_fits_1366_pixels_and_says_all_not_last(
    chromium: str, short_run_dashboard: str, tmp_path: Path
) -> None:
    box = assert_the_table_fits(chromium, short_run_dashboard, tmp_path / "short-run.png",
                                tmp_path / "profile")  # fmt: skip
    assert box["table"] < NARROW_WIDTH
    dumped = browser(chromium, tmp_path / "profile-dom", "--dump-dom", short_run_dashboard)
    page = lxml_html.fromstring(dumped.stdout)
    assert page.xpath("//body/@data-ready") == ["1"]
    titles = {th.get("data-key"): th.text_content() for th in page.xpath("//thead/tr/th")}
    assert "(all 2 s of data)" in titles["articles"] and "(last " not in titles["articles"]
    cells = page.xpath("//tbody/tr/td[@data-key='yield_per_hour']")
    assert [cell.text_content() for cell in cells] == ["8 in 2 s"] * len(LONG_DOMAINS)
    first = page.xpath("//tbody/tr[1]/td[@data-key='domain']")[0]
    assert first.get("title") == LONG_DOMAINS[0]  # cut in the cell, whole in the tooltip


# --- the chart's step and window, without a browser ---------------------------------------


def axis_of(series_buckets: list[int], config: StoreConfig, now: float, span: float | None) -> Any:
    from pipelines.monitoring.alerts import DomainView

    view = DomainView(counters={}, series={b: {"articles": 1} for b in series_buckets})
    state = MonitorState("test", config, {"a.test": view}, [], [], {}, now, True)
    return chart_axis(state, now, span)


def test_the_chart_step_is_a_round_duration_that_fits_the_span_shown() -> None:
    assert chart_step(45, 1.0) == 1  # 45 s at 1 s buckets: every bucket
    assert chart_step(300, 1.0) == 5  # 5 minutes: 5 s steps
    assert chart_step(3600, 1.0) == 60  # an hour: 1 min steps
    assert chart_step(12, 300.0) == 1  # an hour of 5-minute buckets: one bucket per point
    assert chart_step(576, 300.0) == 12  # 48 h of 5-minute buckets: 1 h steps
    assert chart_step(2 * 10**7, 1.0) == 7 * 86400  # the ladder's top
    assert chart_step(10**8, 1.0) == math.ceil(10**8 / 60)  # past it: whatever fits


def test_the_chart_covers_the_span_asked_for_from_a_round_time() -> None:
    config = StoreConfig(bucket_seconds=1.0, retention_seconds=3600.0)
    now = 100_000.5
    # All retained: from the first bucket with data; an hour-old crawl and a fresh one.
    first, points, step = axis_of([int(now) - 3000, int(now) - 10], config, now, None)
    assert step == 60 and first % 60 == 0 and first <= int(now) - 3000
    assert first + points * step > int(now) and points <= 61
    # The last 5 minutes: 5 s steps, the hour-old crawl outside the window.
    first, points, step = axis_of([int(now) - 3000, int(now) - 10], config, now, 300)
    assert step == 5 and first % 5 == 0 and int(now) - 305 < first <= int(now) - 299
    # A span beyond the retention is cut to it.
    first, points, step = axis_of([int(now) - 10], config, now, 7 * 86400)
    assert first >= int(now) - 3600 and step == 60
