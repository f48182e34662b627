"""End to end, with the real spider in subprocesses: SIGKILL and restart, continuous polling."""

from __future__ import annotations

import itertools
import signal
from collections import Counter, defaultdict
from datetime import timedelta
from pathlib import Path

import pytest

from crawler.core.journal_files import (
    EXIT_JOURNAL_UNWRITABLE,
    JOURNAL_UNWRITABLE,
    write_checkpoint,
)
from crawler.core.unstored import (
    EXIT_OUTPUT_UNSTORED,
    OUTPUT_MAX_UNSTORED_IN_A_ROW,
    OUTPUT_UNSTORED,
)
from crawler.newsroom import Newsroom, NewsroomServer, ScaledClock
from crawler.newsroom.room import UPDATE_NOTE_PREFIX
from newsharvest_bench.crawlrun import (
    CRAWL_TIMEOUT_SECONDS,
    count_lines,
    crawl_command,
    crawl_env,
    kill_when,
    read_jsonl,
    run_to_end,
    start_crawl,
    stats_from_log,
)
from pipelines.journal import JOURNAL_MAX_FAILURES_IN_A_ROW
from tests.support.journal import file_size_limit

pytestmark = pytest.mark.slow

SLOW_RESPONSE_SECONDS = 0.25  # the fixture answers slowly, so a kill lands mid-run
KILL_AFTER_LINES = (8, 30)  # SIGKILL once the journal holds this many articles
START_TIMEOUT_SECONDS = 60


def test_sigkill_mid_run_then_restart_loses_nothing_and_repeats_nothing(tmp_path: Path) -> None:
    room = Newsroom(seed=3, n_domains=5, articles_per_domain=16)
    truth = {page.url for page in room.articles()}
    journal = tmp_path / "articles.jsonl"
    env = crawl_env(tmp_path / "state")
    settings = [f"HARVEST_JOURNAL_PATH={journal}", "CONCURRENT_REQUESTS_PER_DOMAIN=2"]
    kills = []
    with NewsroomServer(room, port=0, delay=SLOW_RESPONSE_SECONDS) as server:
        command = crawl_command(room.feed_urls, server.proxy_url, settings)
        for n, threshold in enumerate(KILL_AFTER_LINES):
            kill_when(command, env, tmp_path / f"killed-{n}.log",
                      lambda t=threshold: count_lines(journal) >= t, START_TIMEOUT_SECONDS,
                      f"{threshold} articles in the journal")  # fmt: skip
            kills.append(count_lines(journal))
        log = run_to_end(command, env, tmp_path / "final.log")
        requests = server.request_log

    items = read_jsonl(journal)
    assert all(0 < k < len(truth) for k in kills), ("the kills did not land mid-run", kills)
    by_url = Counter(item["url"] for item in items)
    assert [u for u, n in by_url.items() if n > 1] == [], "an article was output twice"
    assert set(by_url) == truth, ("articles lost", truth - set(by_url))
    assert all(item["version"] == 1 and item["entry_url"] for item in items)
    stats = stats_from_log(log)
    # The last run resumed what the kills cut off, and polled the feeds it had already read
    # conditionally.
    assert stats.get("harvest/recovered", 0) > 0
    assert stats.get("feeds/not_modified", 0) > 0
    # Every page fetch after a kill was for something not yet output.
    fetched = Counter(f"http://{r.host}{r.target}" for r in requests if r.status == 200)
    refetched = [url for url in truth if fetched[url] > 1]
    assert len(refetched) <= sum(kills), refetched  # only what was in flight at a kill
    print(f"{len(truth)} articles; journal lines at the kills {kills}; after restart "
          f"{len(items)} lines, {len(by_url)} distinct; recovered {stats['harvest/recovered']}"
          f" pending claims; reconciled {stats.get('journal/reconciled', 0)}; "
          f"pages fetched twice {len(refetched)}")  # fmt: skip


# The journal is made the largest file of the crawl, and the file-size limit its size: it cannot
# grow, while the ledger, the index and the logs (far smaller) can.
FULL_JOURNAL_BYTES = 8 * 1024 * 1024


def test_a_journal_that_cannot_be_written_closes_the_crawl_and_loses_nothing(
    tmp_path: Path,
) -> None:
    """The disk stays full: each write fails, the crawl closes with a clear reason after
    JOURNAL_MAX_FAILURES_IN_A_ROW of them (exit status 74), the journal is left as it was, and
    the next run, the disk free again, outputs every article."""
    import json
    import subprocess

    room = Newsroom(seed=3, n_domains=5, articles_per_domain=16)
    truth = {page.url for page in room.articles()}
    journal = tmp_path / "articles.jsonl"
    padding = json.dumps({"padding": "x" * 1000}).encode() + b"\n"
    journal.write_bytes(padding * (FULL_JOURNAL_BYTES // len(padding)))
    full = journal.read_bytes()
    write_checkpoint(journal, len(full))  # an earlier run's lines, all done
    env = crawl_env(tmp_path / "state")
    with NewsroomServer(room, port=0) as server:
        command = crawl_command(
            room.feed_urls, server.proxy_url, [f"HARVEST_JOURNAL_PATH={journal}"]
        )
        # The log goes to a pipe: a file would be held to the limit too.
        stopped = subprocess.run(
            command, cwd=tmp_path, env=env, capture_output=True, text=True,
            timeout=CRAWL_TIMEOUT_SECONDS, check=False, preexec_fn=file_size_limit(len(full)),
        )  # fmt: skip
        unchanged = journal.read_bytes() == full
        log = run_to_end(command, env, tmp_path / "after.log")

    assert stopped.returncode == EXIT_JOURNAL_UNWRITABLE, stopped.stderr[-3000:]
    stats = stats_from_log(stopped.stderr)
    assert stats["finish_reason"] == JOURNAL_UNWRITABLE
    assert stats["journal/write_errors"] >= JOURNAL_MAX_FAILURES_IN_A_ROW
    assert stats.get("journal/written", 0) == 0 and stats.get("harvest/done/output", 0) == 0
    assert "writes failed in a row" in stopped.stderr
    assert unchanged, "the failed writes left bytes in the journal"
    # Nothing given up, nothing lost: the next run outputs every article, once.
    items = read_jsonl(journal)[len(full) // len(padding) :]
    assert Counter(item["url"] for item in items) == Counter(truth)
    assert stats_from_log(log).get("harvest/given_up", 0) == 0


def test_a_sink_that_can_neither_write_nor_journal_closes_the_crawl_and_loses_nothing(
    tmp_path: Path,
) -> None:
    """The index cannot be opened and the sink's journal cannot be written either (a file where
    both directories should be): every article fails undelivered. The crawl once went on, each
    failure spending one of the article's tries, until it gave them all up; now it closes after
    OUTPUT_MAX_UNSTORED_IN_A_ROW with a clear reason (exit status 74), and the next run, the
    disk fixed, indexes every article."""
    import sqlite3
    import subprocess

    room = Newsroom(seed=3, n_domains=5, articles_per_domain=16)
    truth = {page.url for page in room.articles()}
    blocker = tmp_path / "blocked"
    blocker.write_text("a file where the index and journal directories should be")
    index = tmp_path / "index.sqlite3"
    env = crawl_env(tmp_path / "state")
    blocked = [f"SINK_SQLITE_PATH={blocker / 'index.sqlite3'}", "SINK_START_POLICY=journal",
               f"SINK_JOURNAL_DIR={blocker / 'journal'}"]  # fmt: skip
    with NewsroomServer(room, port=0) as server:
        command = crawl_command(room.feed_urls, server.proxy_url, blocked)
        stopped = subprocess.run(
            command, cwd=tmp_path, env=env, capture_output=True, text=True,
            timeout=CRAWL_TIMEOUT_SECONDS, check=False,
        )  # fmt: skip
        fixed = crawl_command(room.feed_urls, server.proxy_url, [f"SINK_SQLITE_PATH={index}"])
        log = run_to_end(fixed, env, tmp_path / "after.log")

    assert stopped.returncode == EXIT_OUTPUT_UNSTORED, stopped.stderr[-3000:]
    stats = stats_from_log(stopped.stderr)
    assert stats["finish_reason"] == OUTPUT_UNSTORED
    assert stats["sink/sqlite/undelivered"] >= OUTPUT_MAX_UNSTORED_IN_A_ROW
    assert stats.get("harvest/given_up", 0) == 0  # no article spent its last try
    assert "stored nowhere" in stopped.stderr
    with sqlite3.connect(index) as connection:
        urls = [row[0] for row in connection.execute("SELECT url FROM articles")]
    after = stats_from_log(log)
    # Every article indexed, once, but the near-duplicates the sink counts and skips.
    duplicates = sum(run.get("sink/sqlite/skipped_duplicate", 0) for run in (stats, after))
    assert len(urls) == len(set(urls)) and set(urls) <= truth
    assert len(urls) + duplicates == len(truth)
    assert after.get("harvest/given_up", 0) == 0


SCALE = 60.0  # simulated seconds per wall-clock second: one simulated minute a second
MIN_INTERVAL = 120.0  # simulated seconds (2 s of wall clock)
MAX_INTERVAL = 600.0
RUN_SECONDS = 24.0  # wall clock: 24 simulated minutes
PUBLISH_EVERY = timedelta(minutes=5)
REVISE_AFTER_SECONDS = 9.0
# Polls of each feed the assertions below judge. On a loaded machine the crawler's start eats
# into RUN_SECONDS (the simulated clock runs from the test's start), so the run goes on, up to
# the grace, until every feed has been polled this often.
MIN_POLLS_PER_FEED = 3
SLOW_MACHINE_GRACE_SECONDS = 30.0


def _polls_by_feed(requests: list, feed_urls: list[str]) -> dict[str, list]:
    """The requests for each feed, keyed "host/path"."""
    feeds = {url.split("/", 3)[2] + "/" + url.split("/", 3)[3] for url in feed_urls}
    by_feed: dict[str, list] = defaultdict(list)
    for r in requests:
        if f"{r.host}{r.target}" in feeds:
            by_feed[r.host + r.target].append(r)
    return by_feed


def _run_until_polled(server: NewsroomServer, feed_urls: list[str], seconds: float) -> None:
    """Sleep `seconds`, then on until every feed has MIN_POLLS_PER_FEED polls (within the grace)."""
    import time

    done_at = time.time() + seconds
    give_up_at = done_at + SLOW_MACHINE_GRACE_SECONDS
    while time.time() < give_up_at:
        polls = _polls_by_feed(server.request_log, feed_urls)
        enough = len(polls) == len(feed_urls) and all(
            len(records) >= MIN_POLLS_PER_FEED for records in polls.values()
        )
        if time.time() >= done_at and enough:
            return
        time.sleep(0.2)


def test_continuous_mode_picks_up_new_articles_within_one_interval_and_304s_the_rest(
    tmp_path: Path,
) -> None:
    import time

    anchor = time.time()  # simulated time starts now, at the newest built page
    room = Newsroom(seed=1)
    start = room.clock.now()
    room.clock = ScaledClock(start, SCALE, anchor)
    room.publish_every("dailyherald.test", PUBLISH_EVERY, first=start + PUBLISH_EVERY)
    room.ignore_conditional_requests("valleytimes.test")
    revised_url = room.pages_on("dailyherald.test")[1].url
    journal = tmp_path / "articles.jsonl"
    settings = [
        f"HARVEST_JOURNAL_PATH={journal}",
        f"HARVEST_CLOCK_SCALE={SCALE}",
        f"HARVEST_CLOCK_START={start.isoformat()}",
        f"HARVEST_CLOCK_ANCHOR={anchor}",
        f"HARVEST_MIN_INTERVAL_SECONDS={MIN_INTERVAL}",
        f"HARVEST_MAX_INTERVAL_SECONDS={MAX_INTERVAL}",
        "HARVEST_TICK_SECONDS=0.05",
    ]
    with NewsroomServer(room, port=0) as server:
        command = crawl_command(room.feed_urls, server.proxy_url, settings, ["continuous=1"])
        process = start_crawl(command, crawl_env(tmp_path / "state"), tmp_path / "crawl.log")
        try:
            time.sleep(max(0.0, anchor - time.time()) + REVISE_AFTER_SECONDS)
            room.revise(revised_url)
            _run_until_polled(server, room.feed_urls, RUN_SECONDS - REVISE_AFTER_SECONDS)
        finally:
            process.send_signal(signal.SIGTERM)  # a graceful stop
            process.wait(timeout=60)
        requests = server.request_log
    log = (tmp_path / "crawl.log").read_text()
    assert process.returncode == 0, log[-3000:]
    items = read_jsonl(journal)
    versions = Counter((item["entry_url"], item["version"]) for item in items)
    assert [key for key, n in versions.items() if n > 1] == []

    # Every article published while the crawler ran was fetched by the first poll of its feed
    # after it went up, and that poll came within one (maximal) interval.
    live = [p for p in room.pages_on("dailyherald.test") if p.published > start]
    assert len(live) >= 3
    feed_polls = sorted(r.at for r in requests if r.target == "/rss.xml" and r.at)
    fetch_at = {f"http://{r.host}{r.target}": r.at for r in requests if r.status == 200}
    polled_after_end = feed_polls[-1]
    for page in live:
        after = [t for t in feed_polls if t >= page.published]
        if not after or page.published > polled_after_end - timedelta(seconds=MAX_INTERVAL):
            continue  # published too close to the end to judge
        assert (after[0] - page.published).total_seconds() <= MAX_INTERVAL
        assert page.url in fetch_at, f"{page.url} never fetched"
        assert len(after) < 2 or fetch_at[page.url] <= after[1], "not fetched by the first poll"
    settled = polled_after_end - timedelta(seconds=MAX_INTERVAL)
    assert {p.url for p in live if p.published <= settled} <= {item["url"] for item in items}

    # The revised article came out twice: version 1, then version 2 with the update.
    revised = sorted(
        (i for i in items if i["entry_url"] == revised_url), key=lambda i: i["version"]
    )
    assert [i["version"] for i in revised] == [1, 2]
    assert UPDATE_NOTE_PREFIX in revised[1]["text"] and UPDATE_NOTE_PREFIX not in revised[0]["text"]

    # Feeds that never changed cost only 304s after their first poll; the one whose server
    # ignores conditional requests cost full bodies but no parsing and no article fetch.
    by_feed = _polls_by_feed(requests, room.feed_urls)
    for name in ("metroledger.test/feed.rdf", "wirewatch.test/feed/", "coastalpost.test/feed.json"):
        statuses = [r.status for r in by_feed[name]]
        assert len(statuses) >= MIN_POLLS_PER_FEED, (name, statuses)
        assert statuses[0] == 200 and set(statuses[1:]) == {304}, (name, statuses)
    ignored = by_feed["valleytimes.test/atom.xml"]
    assert len(ignored) >= MIN_POLLS_PER_FEED and {r.status for r in ignored} == {200}
    assert all(r.conditional for r in ignored[1:])
    stats = stats_from_log(log)
    assert stats.get("feeds/unchanged", 0) >= len(ignored) - 1
    assert stats.get("domain/metroledger.test/feeds/304", 0) >= 2
    # Polls of one feed were never closer than the minimum interval (allowing the tick).
    for name, records in by_feed.items():
        times = [r.at for r in records if r.at]
        gaps = [(b - a).total_seconds() for a, b in itertools.pairwise(times)]
        assert all(gap >= MIN_INTERVAL * 0.95 for gap in gaps), (name, gaps)
