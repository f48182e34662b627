"""Index sinks against the real SQLite, PostgreSQL and Redis: idempotent upserts, search, and
no article lost or doubled when the connection path goes down and comes back."""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import psycopg
import pytest
import redis
from psycopg import sql
from scrapy.exceptions import CloseSpider

from crawler.core.keys import RedisKeys
from crawler.core.outage import BACKEND_UNAVAILABLE
from crawler.core.spill import Journal, journal_paths
from crawler.core.sqlite import open_sqlite
from crawler.newsroom import Newsroom
from newsharvest_bench import sinkrun
from newsharvest_bench.items import article_items
from newsharvest_bench.sinkrun import feed, outage
from newsharvest_bench.tcpproxy import TcpProxy
from pipelines.sinks import postgres
from pipelines.sinks.postgres import PostgresSink, search_config
from pipelines.sinks.records import latest_per_key, supersessions
from pipelines.sinks.redis_stream import RedisStreamSink
from pipelines.sinks.sqlite import MIGRATIONS, OlderIndex, SQLiteIndex, SQLiteSink, fts_query
from tests.support.journal import run_scenario

ROOT = Path(__file__).resolve().parent.parent
FAST = {  # retries and reconnects in milliseconds, not seconds
    "SINK_RETRY_TIMES": 2,
    "SINK_RETRY_BACKOFF_SECONDS": 0.01,
    "SINK_RETRY_BACKOFF_MAX_SECONDS": 0.05,
    "SINK_RECONNECT_SECONDS": 0.1,
    "SINK_CONNECT_TIMEOUT_SECONDS": 2.0,
    "SINK_BATCH_SIZE": 20,
}


@pytest.fixture(scope="module")
def items() -> list[dict[str, Any]]:
    return article_items(Newsroom(seed=3, n_domains=6, articles_per_domain=30))


def make_sink(sink_class: type, tmp_path: Path, **overrides: Any) -> tuple[Any, Any]:
    return sinkrun.make_sink(sink_class, tmp_path / "state", **{**FAST, **overrides})


def sqlite_sink(tmp_path: Path, **overrides: Any) -> tuple[Any, Any]:
    overrides.setdefault("SINK_SQLITE_PATH", str(tmp_path / "index.sqlite3"))
    return make_sink(SQLiteSink, tmp_path, SINK_SQLITE_ENABLED=True, **overrides)


def rows(path: Path) -> dict[str, tuple]:
    connection = sqlite3.connect(path)
    try:
        result = connection.execute("SELECT canonical_url, title, versions FROM articles")
        return {url: (title, versions) for url, title, versions in result}
    finally:
        connection.close()


def new_version(item: dict[str, Any], fetched_at: str) -> dict[str, Any]:
    return {**item, "title": item["title"] + " Zqxjkvw", "fetched_at": fetched_at}


# --- SQLite ----------------------------------------------------------------------------------


def test_sqlite_upserts_by_canonical_url_and_counts_versions(tmp_path, items) -> None:
    path = tmp_path / "index.sqlite3"
    asyncio.run(feed(sqlite_sink(tmp_path)[0], items))
    asyncio.run(feed(sqlite_sink(tmp_path)[0], items))  # a re-crawl changes nothing
    stored = rows(path)
    assert len(stored) == len({item["canonical_url"] for item in items}) == len(items)
    assert {versions for _, versions in stored.values()} == {1}

    first, second = items[0], items[1]
    later = new_version(first, "2027-01-01T00:00:00+00:00")
    older = new_version(second, "2020-01-01T00:00:00+00:00")  # a stale fetch replayed late
    asyncio.run(feed(sqlite_sink(tmp_path)[0], [later, later, older]))
    stored = rows(path)
    assert stored[first["canonical_url"]] == (later["title"], 2)
    assert stored[second["canonical_url"]] == (second["title"], 1)
    assert len(stored) == len(items)
    # The full-text index follows the update: the new title matches, one row per article.
    index = SQLiteIndex.open_readonly(path)
    hits, total = index.search("zqxjkvw")
    index.close()
    assert [hit.canonical_url for hit in hits] == [first["canonical_url"]] and total == 1


def test_two_processes_opening_one_new_index_at_once_both_get_it(tmp_path: Path) -> None:
    """The shards of `newsharvest replay --processes N` open the same new index together: the
    one that waited for the write lock finds the schema made (it once failed with `table
    articles already exists`, and its shard exited)."""
    path = tmp_path / "index.sqlite3"
    first = SQLiteIndex(open_sqlite(path, timeout_seconds=10), path)
    first.connection.execute("BEGIN IMMEDIATE")  # it holds the write lock, schema not made yet
    opened: list[object] = []
    second = threading.Thread(target=lambda: opened.append(_open_or_error(path)))
    second.start()
    time.sleep(0.5)  # the second one read version 0 and now waits for the lock
    for statement in MIGRATIONS[0]:
        first.connection.execute(statement)
    first.connection.execute(f"PRAGMA user_version = {len(MIGRATIONS)}")
    first.connection.execute("COMMIT")
    second.join(timeout=30)
    first.close()
    assert opened == [len(MIGRATIONS)]


def test_processes_opening_one_new_index_at_the_same_moment_all_open_it(tmp_path: Path) -> None:
    """Two processes switching the same new file to WAL together: SQLite answered one of them
    "database is locked" at once, without waiting (one open in three failed, and a shard of
    `newsharvest replay --processes 2` exited before replaying anything); it is tried again."""
    fork = multiprocessing.get_context("fork")  # SQLiteIndex already imported: quick starts
    for attempt in range(CONCURRENT_OPEN_ROUNDS):
        path = tmp_path / f"index-{attempt}.sqlite3"
        together = fork.Barrier(2)
        results = fork.Queue()
        openers = [fork.Process(target=_open_together, args=(path, together, results))
                   for _ in range(2)]  # fmt: skip
        for opener in openers:
            opener.start()
        try:
            outcomes = [results.get(timeout=30) for _ in openers]
        finally:
            for opener in openers:
                opener.join(timeout=30)
                opener.kill()
        assert outcomes == [len(MIGRATIONS)] * 2, (attempt, outcomes)
        index = SQLiteIndex.open_readonly(path)
        assert index.connection.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        index.close()


CONCURRENT_OPEN_ROUNDS = 30  # with the race, all 30 passing had a chance of 0.7**60 (1e-9)


def _open_together(path: Path, together: Any, results: Any) -> None:
    together.wait()
    outcome = _open_or_error(path)
    results.put(outcome if isinstance(outcome, int) else repr(outcome))


def _open_or_error(path: Path) -> object:
    """The schema version the opened index has, or the error opening it raised."""
    try:
        index = SQLiteIndex.open(path)
    except sqlite3.Error as error:
        return error
    try:
        return index.schema_version()
    finally:
        index.close()


def test_sqlite_search_ranks_filters_and_never_chokes_on_a_query(tmp_path, items) -> None:
    path = tmp_path / "index.sqlite3"
    asyncio.run(feed(sqlite_sink(tmp_path)[0], items))
    index = SQLiteIndex.open_readonly(path)
    target = items[7]
    title_words = [word.strip(",.:'\"") for word in target["title"].split()]
    query = " ".join(word for word in title_words if len(word) > 3)
    hits, total = index.search(query, limit=5)
    assert hits and hits[0].canonical_url == target["canonical_url"]  # title matches rank first
    assert total >= 1 and "[" in hits[0].snippet and "]" in hits[0].snippet

    domain = items[0]["domain"]
    some_word = items[0]["text"].split()[3].strip(",.:'\"")
    hits, total = index.search(some_word, domain=domain.upper(), limit=100)
    assert hits and {hit.domain for hit in hits} == {domain}
    dates = sorted(hit.date for hit in index.search(some_word, limit=100)[0])
    since = dates[len(dates) // 2]
    assert all(hit.date >= since for hit in index.search(some_word, since=since, limit=100)[0])

    for hostile in ['covid-19 "unbalanced', "AND OR NOT", "NEAR(", "*", "title:x", "))"]:
        index.search(hostile)  # quoted into terms: no FTS5 syntax error escapes
    assert fts_query('"old harbor" council* x-ray') == '"old harbor" "council"* "x ray"'
    index.close()


def test_duplicates_are_counted_per_domain_and_not_indexed(tmp_path, items) -> None:
    batch = [dict(item) for item in items[:10]]
    for item in batch[:3]:
        item["duplicate_of"] = "http://original.test/story"
    batch.append({"url": "http://x.test/empty", "domain": "x.test", "text": ""})
    batch.append({"url": "http://x.test/odd", "domain": "x.test", "text": "t", "authors": 5})
    sink, stats = sqlite_sink(tmp_path)
    asyncio.run(feed(sink, batch))
    assert len(rows(tmp_path / "index.sqlite3")) == 7
    assert stats.get_value("sink/sqlite/skipped_duplicate") == 3
    assert stats.get_value("sink/sqlite/skipped_invalid") == 2
    per_domain = Counter(item["domain"] for item in batch[:3])
    for domain, count in per_domain.items():
        assert stats.get_value(f"domain/{domain}/sink/sqlite/skipped_duplicate") == count


def test_batches_flush_on_size_on_the_timer_and_at_close(tmp_path, items) -> None:
    path = tmp_path / "index.sqlite3"
    sink, stats = sqlite_sink(tmp_path, SINK_BATCH_SIZE=10, SINK_BATCH_SECONDS=0.2)

    async def scenario() -> list[tuple[int, int]]:
        observed = []
        await sink.open_spider()
        tasks = [asyncio.create_task(sink.process_item(dict(item))) for item in items[:12]]
        await asyncio.sleep(0.05)
        # A full batch is written and its items released; 2 wait for the timer.
        observed.append((len(rows(path)), sum(task.done() for task in tasks)))
        await asyncio.sleep(0.6)
        observed.append((len(rows(path)), sum(task.done() for task in tasks)))  # timer flushed
        last = asyncio.create_task(sink.process_item(dict(items[12])))
        await sink.close_spider()
        await last
        observed.append((len(rows(path)), sum(task.done() for task in [*tasks, last])))
        return observed

    assert asyncio.run(scenario()) == [(10, 10), (12, 12), (13, 13)]
    assert stats.get_value("sink/sqlite/batches") == 3


def test_an_item_leaves_the_sink_only_once_its_article_is_committed(tmp_path, items) -> None:
    """The harvest marks an article done when its item leaves the pipeline: by then the index
    (or the journal) must hold it, or a crash would lose it."""
    path = tmp_path / "index.sqlite3"
    sink, _ = sqlite_sink(tmp_path, SINK_BATCH_SIZE=1000, SINK_BATCH_SECONDS=0.3)

    async def scenario() -> tuple[bool, int, int]:
        await sink.open_spider()
        task = asyncio.create_task(sink.process_item(dict(items[0])))
        await asyncio.sleep(0.1)
        waiting, rows_while_waiting = not task.done(), len(rows(path))
        await task
        rows_after = len(rows(path))
        await sink.close_spider()
        return waiting, rows_while_waiting, rows_after

    assert asyncio.run(scenario()) == (True, 0, 1)


def test_a_record_the_backend_refuses_is_set_aside_and_the_rest_written(tmp_path, items) -> None:
    bad = {**items[1], "title": {"not": "text"}}  # sqlite3 cannot bind a dict
    sink, stats = sqlite_sink(tmp_path)
    asyncio.run(feed(sink, [items[0], bad, items[2]]))
    assert set(rows(tmp_path / "index.sqlite3")) == {items[0]["url"], items[2]["url"]}
    assert stats.get_value("sink/sqlite/rejected") == 1
    rejected = tmp_path / "state" / "journal" / "sqlite.rejected.jsonl"
    line = json.loads(rejected.read_text())
    assert line["record"]["canonical_url"] == bad["url"] and "Error" in line["error"]


def test_an_unwritable_index_stops_the_crawl_at_start_by_default(tmp_path, items, caplog):
    blocker = tmp_path / "blocked"
    blocker.write_text("a file where the index directory should be")
    sink, stats = sqlite_sink(tmp_path, SINK_SQLITE_PATH=str(blocker / "index.sqlite3"))
    with pytest.raises(CloseSpider) as stopped:
        asyncio.run(feed(sink, items[:30]))
    assert stopped.value.reason == BACKEND_UNAVAILABLE  # Scrapy closes the crawl quietly
    assert stats.get_value("backend/sqlite/unavailable_at_start") == 1
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert len(errors) == 1 and "SINK_SQLITE_PATH" in errors[0] and "blocked" in errors[0]
    assert journal_paths(tmp_path / "state" / "journal", "sqlite") == []


def test_an_unwritable_index_is_journalled_then_replayed_on_the_next_start(tmp_path, items):
    blocker = tmp_path / "blocked"
    blocker.write_text("a file where the index directory should be")
    sink, stats = sqlite_sink(
        tmp_path, SINK_SQLITE_PATH=str(blocker / "index.sqlite3"), SINK_START_POLICY="journal"
    )
    asyncio.run(feed(sink, items[:30]))  # no traceback: logged, journalled
    assert stats.get_value("sink/sqlite/spilled") == 30
    assert stats.get_value("sink/sqlite/journal_pending") == 30
    sink, stats = sqlite_sink(tmp_path)
    asyncio.run(feed(sink, items[30:40]))
    assert len(rows(tmp_path / "index.sqlite3")) == 40
    assert stats.get_value("sink/sqlite/replayed") == 30
    assert journal_paths(tmp_path / "state" / "journal", "sqlite") == []


# --- the journal ---------------------------------------------------------------------------


def test_journal_replays_from_its_offset_and_survives_a_torn_line(tmp_path) -> None:
    path = tmp_path / "sink.journal.jsonl"
    journal = Journal.claim(path, fsync=False)
    assert journal is not None
    journal.append([{"canonical_url": f"u{i}"} for i in range(5)])
    assert Journal.claim(path) is None  # another process (here: another handle) is refused
    records, offset = next(journal.chunks(2))
    journal.commit(offset, len(records))
    journal.close()
    with path.open("ab") as handle:
        handle.write(b'{"canonical_url": "torn')  # a crash mid-append
    journal = Journal.claim(path, fsync=False)
    assert journal is not None and journal.pending == 4
    journal.append([{"canonical_url": "u5"}])
    replayed = [record["canonical_url"] for chunk, _ in journal.chunks(10) for record in chunk]
    assert replayed == ["u2", "u3", "u4", "u5"]
    assert journal.rejected == 1
    assert (tmp_path / "sink.rejected.jsonl").read_bytes().startswith(b'{"canonical_url": "torn')
    journal.close()


# --- PostgreSQL ------------------------------------------------------------------------------


def postgres_sink(tmp_path: Path, url: str, schema: str, **overrides: Any) -> tuple[Any, Any]:
    return make_sink(
        PostgresSink, tmp_path, SINK_POSTGRES_URL=url, SINK_POSTGRES_SCHEMA=schema, **overrides
    )


def postgres_rows(url: str, schema: str) -> list[tuple]:
    with psycopg.connect(url) as connection:
        return connection.execute(
            sql.SQL(
                "SELECT canonical_url, versions, search_config::text, title FROM {}.articles"
            ).format(sql.Identifier(schema))
        ).fetchall()


def test_postgres_migrates_on_first_use_and_upserts(
    tmp_path, items, postgres_url, postgres_schema
) -> None:
    german = {**items[0], "canonical_url": "http://zeitung.test/a", "language": "de"}
    klingon = {**items[1], "canonical_url": "http://qo.test/a", "language": "tlh"}
    batch = [*items[:20], german, klingon]
    asyncio.run(feed(postgres_sink(tmp_path, postgres_url, postgres_schema)[0], batch))
    asyncio.run(feed(postgres_sink(tmp_path, postgres_url, postgres_schema)[0], batch))
    later = new_version(items[3], "2027-01-01T00:00:00+00:00")
    asyncio.run(feed(postgres_sink(tmp_path, postgres_url, postgres_schema)[0], [later]))

    stored = {url: (versions, config, title) for url, versions, config, title in
              postgres_rows(postgres_url, postgres_schema)}  # fmt: skip
    assert len(stored) == 22
    assert stored[items[3]["canonical_url"]] == (2, "english", later["title"])
    assert stored["http://zeitung.test/a"][1] == "german"
    assert stored["http://qo.test/a"][1] == "simple"
    with psycopg.connect(postgres_url) as connection:
        migrations = connection.execute(
            sql.SQL("SELECT version FROM {}.schema_migrations").format(
                sql.Identifier(postgres_schema)
            )
        ).fetchall()
        word = items[5]["title"].split()[-1].strip(",.:'\"")
        found = connection.execute(
            sql.SQL(
                "SELECT canonical_url FROM {}.articles, websearch_to_tsquery('english', %s) q "
                "WHERE search @@ q ORDER BY ts_rank_cd(search, q) DESC"
            ).format(sql.Identifier(postgres_schema)),
            [word],
        ).fetchall()
        indexes = connection.execute(
            "SELECT indexdef FROM pg_indexes WHERE schemaname = %s", [postgres_schema]
        ).fetchall()
    assert migrations == [(number,) for number, _, _ in postgres.MIGRATIONS]
    assert migrations == [(1,), (2,), (3,)]  # the record fields, then the superseded table
    assert items[5]["canonical_url"] in {row[0] for row in found}
    assert any("USING gin (search)" in row[0] for row in indexes)
    assert search_config("pt-BR", frozenset({"portuguese", "simple"})) == "portuguese"


def test_postgres_down_for_a_whole_run_loses_nothing_after_restart(
    tmp_path, items, postgres_url, postgres_schema
) -> None:
    with TcpProxy(5432) as proxy:
        dead_port = proxy.port
    dead_url = postgres_url.replace(":5432/", f":{dead_port}/")
    sink, stats = postgres_sink(tmp_path, dead_url, postgres_schema, SINK_START_POLICY="journal")
    asyncio.run(feed(sink, items))  # no traceback: one clear log line, then the journal
    assert stats.get_value("sink/postgres/spilled") == len(items)
    assert stats.get_value("sink/postgres/journal_pending") == len(items)

    sink, stats = postgres_sink(tmp_path, postgres_url, postgres_schema)
    asyncio.run(feed(sink, []))  # the next start replays the journal
    stored = postgres_rows(postgres_url, postgres_schema)
    assert sorted(url for url, *_ in stored) == sorted(item["url"] for item in items)
    assert {versions for _, versions, *_ in stored} == {1}  # no version written twice
    assert stats.get_value("sink/postgres/replayed") == len(items)
    assert journal_paths(tmp_path / "state" / "journal", "postgres") == []


def test_postgres_connection_cut_mid_run_every_article_arrives_once(
    tmp_path, items, postgres_url, postgres_schema
) -> None:
    with TcpProxy(5432) as proxy:
        url = postgres_url.replace(":5432/", f":{proxy.port}/")
        sink, stats = postgres_sink(tmp_path, url, postgres_schema)
        asyncio.run(feed(sink, items, outage(proxy, len(items), settle_seconds=0.3)))
    stored = postgres_rows(postgres_url, postgres_schema)
    assert sorted(url for url, *_ in stored) == sorted(item["url"] for item in items)
    assert {versions for _, versions, *_ in stored} == {1}
    assert_spilled_then_replayed(stats, "postgres")


def assert_spilled_then_replayed(stats: Any, name: str) -> None:
    spilled = stats.get_value(f"sink/{name}/spilled", 0)
    assert spilled > 0, "the outage was not noticed"
    assert stats.get_value(f"sink/{name}/replayed") == spilled
    assert stats.get_value(f"sink/{name}/journal_pending") == 0
    assert stats.get_value(f"sink/{name}/unavailable") >= 1


# --- Redis Stream ---------------------------------------------------------------------------


def stream_sink(tmp_path: Path, url: str, prefix: str, **overrides: Any) -> tuple[Any, Any]:
    return make_sink(
        RedisStreamSink,
        tmp_path,
        SINK_REDIS_STREAM_ENABLED=True,
        REDIS_URL=url,
        REDIS_KEY_PREFIX=prefix,
        **overrides,
    )


def stream_entries(redis_url: str, prefix: str) -> list[dict[bytes, bytes]]:
    client = redis.Redis.from_url(redis_url)
    try:
        return [fields for _, fields in client.xrange(RedisKeys(prefix).sink_stream())]
    finally:
        client.close()


def stream_urls(redis_url: str, prefix: str) -> list[str]:
    return [fields[b"canonical_url"].decode() for fields in stream_entries(redis_url, prefix)]


def test_redis_stream_adds_each_version_once(tmp_path, items, redis_url, redis_prefix) -> None:
    asyncio.run(feed(stream_sink(tmp_path, redis_url, redis_prefix)[0], items))
    asyncio.run(feed(stream_sink(tmp_path, redis_url, redis_prefix)[0], items))  # re-crawl
    assert sorted(stream_urls(redis_url, redis_prefix)) == sorted(item["url"] for item in items)
    later = new_version(items[0], "2027-01-01T00:00:00+00:00")
    older = new_version(items[1], "2020-01-01T00:00:00+00:00")
    asyncio.run(feed(stream_sink(tmp_path, redis_url, redis_prefix)[0], [later, older]))
    assert Counter(stream_urls(redis_url, redis_prefix))[items[0]["url"]] == 2
    assert Counter(stream_urls(redis_url, redis_prefix))[items[1]["url"]] == 1


def test_redis_stream_is_capped_by_maxlen(tmp_path, items, redis_url, redis_prefix) -> None:
    sink, _ = stream_sink(tmp_path, redis_url, redis_prefix, SINK_REDIS_STREAM_MAXLEN=50)
    asyncio.run(feed(sink, items))
    # Approximate trimming keeps at least MAXLEN and frees whole nodes (100 entries each).
    assert 50 <= len(stream_urls(redis_url, redis_prefix)) < len(items)


def test_redis_stream_connection_cut_mid_run_every_article_arrives_once(
    tmp_path, items, redis_url, redis_prefix
) -> None:
    with TcpProxy(6379) as proxy:
        url = redis_url.replace(":6379/", f":{proxy.port}/")
        sink, stats = stream_sink(tmp_path, url, redis_prefix)
        asyncio.run(feed(sink, items, outage(proxy, len(items), settle_seconds=0.3)))
    assert sorted(stream_urls(redis_url, redis_prefix)) == sorted(item["url"] for item in items)
    assert_spilled_then_replayed(stats, "redis_stream")


def test_the_consumer_example_reads_every_article_once(
    tmp_path, items, redis_url, redis_prefix
) -> None:
    asyncio.run(feed(stream_sink(tmp_path, redis_url, redis_prefix)[0], items[:25]))
    command = [
        sys.executable, "-m", "pipelines.sinks.stream_consumer", "--once",
        "--block-ms", "100", "--redis", redis_url,
        "--stream", RedisKeys(redis_prefix).sink_stream(),
    ]  # fmt: skip
    first = subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=60, check=True
    )
    titles = first.stdout.splitlines()[:-1]
    assert sorted(line.split("\t")[2] for line in titles) == sorted(i["title"] for i in items[:25])
    assert first.stdout.splitlines()[-1] == "indexed 25 articles"
    again = subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=60, check=True
    )
    assert again.stdout.strip() == "indexed 0 articles"  # the group remembers its position


def test_changed_counts_new_articles_and_versions_only(
    tmp_path, items, postgres_url, postgres_schema
) -> None:
    later = new_version(items[0], "2027-01-01T00:00:00+00:00")
    for make in (
        lambda: sqlite_sink(tmp_path),
        lambda: postgres_sink(tmp_path, postgres_url, postgres_schema),
    ):
        changed = []
        for batch in (items[:30], items[:30], [later]):
            sink, stats = make()
            asyncio.run(feed(sink, batch))
            changed.append(stats.get_value(f"sink/{sink.name}/changed", 0))
        assert changed == [30, 0, 1], sink.name


# --- The record fields of 0.3 -----------------------------------------------------------------

NEW_FIELDS = {
    "modified": "2026-11-02T09:30:00+01:00",
    "section": "Business",
    "keywords": ["Harbor", "Strike"],
    "paywalled": True,
    "images": [{"url": "http://port.test/a.jpg", "caption": "The port", "credit": "Ana Ruiz"}],
    "word_count": 412,
    "markdown": "# Title\n\nText.\n",
}


def with_new_fields(item: dict[str, Any]) -> dict[str, Any]:
    return {**item, **NEW_FIELDS}


def test_new_record_fields_reach_every_sink(
    tmp_path, items, postgres_url, postgres_schema, redis_url, redis_prefix
) -> None:
    marked, plain = with_new_fields(items[0]), {**items[1], "keywords": None, "images": None}
    asyncio.run(feed(sqlite_sink(tmp_path)[0], [marked, plain]))
    connection = sqlite3.connect(tmp_path / "index.sqlite3")
    stored = connection.execute(
        "SELECT modified, section, keywords, paywalled, images, word_count, markdown "
        "FROM articles WHERE canonical_url = ?",
        [marked["canonical_url"]],
    ).fetchone()
    empty = connection.execute(
        "SELECT keywords, paywalled, images FROM articles WHERE canonical_url = ?",
        [plain["canonical_url"]],
    ).fetchone()
    connection.close()
    assert stored[:2] == (NEW_FIELDS["modified"], "Business")
    assert json.loads(stored[2]) == NEW_FIELDS["keywords"] and stored[3] == 1
    assert json.loads(stored[4]) == NEW_FIELDS["images"]
    assert stored[5:] == (412, NEW_FIELDS["markdown"])
    assert empty == ("[]", None, "[]")

    asyncio.run(feed(postgres_sink(tmp_path, postgres_url, postgres_schema)[0], [marked, plain]))
    with psycopg.connect(postgres_url) as connection:
        row = connection.execute(
            sql.SQL(
                "SELECT modified, section, keywords, paywalled, images, word_count, markdown "
                "FROM {}.articles WHERE canonical_url = %s"
            ).format(sql.Identifier(postgres_schema)),
            [marked["canonical_url"]],
        ).fetchone()
    assert row[0].isoformat() == "2026-11-02T08:30:00+00:00"
    assert row[1:] == ("Business", ["Harbor", "Strike"], True, NEW_FIELDS["images"], 412,
                       NEW_FIELDS["markdown"])  # fmt: skip

    asyncio.run(feed(stream_sink(tmp_path, redis_url, redis_prefix)[0], [marked]))
    client = redis.Redis.from_url(redis_url)
    try:
        (_, fields), *_ = client.xrange(RedisKeys(redis_prefix).sink_stream())
    finally:
        client.close()
    article = json.loads(fields[b"article"])
    assert {name: article[name] for name in NEW_FIELDS} == NEW_FIELDS


def test_sqlite_index_of_the_first_schema_is_migrated_keeping_its_articles(tmp_path, items) -> None:
    """An index written before the new fields gets their columns and keeps every row; until
    then, a search by section says why it cannot filter instead of failing on SQL."""
    path = tmp_path / "index.sqlite3"
    old = SQLiteIndex(open_sqlite(path, timeout_seconds=10), path)
    for statement in MIGRATIONS[0]:
        old.connection.execute(statement)
    old.connection.execute("PRAGMA user_version = 1")
    old.connection.execute(
        "INSERT INTO articles (canonical_url, url, domain, title, authors, text, blocks, "
        "version, first_fetched_at, fetched_at) VALUES ('http://old.test/a', "
        "'http://old.test/a', 'old.test', 'Harbor news', '[]', 'harbor text', '[]', 'v1', "
        "'2026-01-01T00:00:00+00:00', '2026-01-01T00:00:00+00:00')"
    )
    old.close()
    readonly = SQLiteIndex.open_readonly(path)
    with pytest.raises(OlderIndex):
        readonly.search("harbor", section="Business")
    readonly.close()

    asyncio.run(feed(sqlite_sink(tmp_path)[0], [with_new_fields(items[0]), items[1]]))
    index = SQLiteIndex.open_readonly(path)
    try:
        assert index.schema_version() == len(MIGRATIONS) == 3
        assert index.count() == 3
        word = items[0]["title"].split()[0]
        by_section = index.search(word, section="business")[0]
        assert [hit.canonical_url for hit in by_section] == [items[0]["canonical_url"]]
        by_keyword = index.search(word, keyword="strike")[0]
        assert [hit.canonical_url for hit in by_keyword] == [items[0]["canonical_url"]]
        assert [hit.canonical_url for hit in index.search(word, paywalled=True)[0]] == [
            items[0]["canonical_url"]
        ]
        assert index.search("harbor", paywalled=False)[1] == 0  # the old row says nothing
        assert index.search("harbor")[1] == 1
    finally:
        index.close()


def test_postgres_schema_of_the_first_migration_is_upgraded_in_place(
    tmp_path, items, postgres_url, postgres_schema, monkeypatch
) -> None:
    monkeypatch.setattr(postgres, "MIGRATIONS", postgres.MIGRATIONS[:1])
    monkeypatch.setattr(
        postgres, "_COLUMNS", postgres._COLUMNS[: postgres._COLUMNS.index("modified")]
    )

    async def no_tombstones(*_: Any) -> set[str]:  # the first schema had no superseded table
        return set()

    monkeypatch.setattr(PostgresSink, "_superseded", no_tombstones)
    asyncio.run(feed(postgres_sink(tmp_path, postgres_url, postgres_schema)[0], items[:3]))
    monkeypatch.undo()
    asyncio.run(
        feed(postgres_sink(tmp_path, postgres_url, postgres_schema)[0], [with_new_fields(items[3])])
    )
    with psycopg.connect(postgres_url) as connection:
        rows = connection.execute(
            sql.SQL("SELECT canonical_url, section, keywords FROM {}.articles").format(
                sql.Identifier(postgres_schema)
            )
        ).fetchall()
        versions = connection.execute(
            sql.SQL("SELECT version FROM {}.schema_migrations ORDER BY version").format(
                sql.Identifier(postgres_schema)
            )
        ).fetchall()
    assert versions == [(1,), (2,), (3,)]
    assert sorted(rows) == sorted(
        [(item["canonical_url"], None, []) for item in items[:3]]
        + [(items[3]["canonical_url"], "Business", ["Harbor", "Strike"])]
    )
    # Migration 3 came with it: a correction takes a copy out and keeps it out.
    copy, original = items[0], with_new_fields(items[4])
    for batch in ([superseding(original, copy)], [copy]):
        asyncio.run(feed(postgres_sink(tmp_path, postgres_url, postgres_schema)[0], batch))
    stored = {row[0] for row in postgres_rows(postgres_url, postgres_schema)}
    assert copy["canonical_url"] not in stored and original["canonical_url"] in stored


# --- corrections: an original found after its copy was indexed --------------------------------


def superseding(original: dict[str, Any], copy: dict[str, Any]) -> dict[str, Any]:
    """The original as the dedup stage passes it when it came first by the order rule but was
    checked after its copy: it names the copy in `supersedes`."""
    return {**original, "supersedes": [copy["canonical_url"]]}


def stream_index(redis_url: str, prefix: str) -> set[str]:
    """What a consumer that upserts entries and deletes `supersedes` ends up indexing."""
    indexed: set[str] = set()
    for fields in stream_entries(redis_url, prefix):
        article = json.loads(fields[b"article"])
        indexed.add(article["canonical_url"])
        indexed.difference_update(article.get("supersedes") or ())
    return indexed


def sqlite_index(tmp_path: Path) -> set[str]:
    return set(rows(tmp_path / "index.sqlite3"))


@pytest.mark.parametrize("backend", ["sqlite", "postgres", "stream"])
@pytest.mark.parametrize("copy_first", [True, False])
def test_a_superseded_copy_leaves_the_index_and_stays_out(
    tmp_path, items, backend, copy_first, request
) -> None:
    """Copy indexed first and corrected later, or the correction first and the copy (still on
    its way from another worker) later: either way the index holds the original, not the copy,
    and a later batch with the copy does not bring it back."""
    copy, original, other = items[0], items[1], items[2]
    if backend == "sqlite":
        make, indexed = (lambda: sqlite_sink(tmp_path)[0]), (lambda: sqlite_index(tmp_path))
    elif backend == "postgres":
        url, schema = (
            request.getfixturevalue("postgres_url"),
            request.getfixturevalue("postgres_schema"),
        )
        make = lambda: postgres_sink(tmp_path, url, schema)[0]  # noqa: E731
        indexed = lambda: {row[0] for row in postgres_rows(url, schema)}  # noqa: E731
    else:
        url, prefix = request.getfixturevalue("redis_url"), request.getfixturevalue("redis_prefix")
        make = lambda: stream_sink(tmp_path, url, prefix)[0]  # noqa: E731
        indexed = lambda: stream_index(url, prefix)  # noqa: E731
    batches = [[copy], [superseding(original, copy), other]]
    for batch in batches if copy_first else batches[::-1]:
        asyncio.run(feed(make(), batch))
    assert indexed() == {original["canonical_url"], other["canonical_url"]}
    asyncio.run(feed(make(), [copy]))  # fetched again (a re-crawl, a late retry)
    assert indexed() == {original["canonical_url"], other["canonical_url"]}


def test_one_batch_with_the_copy_and_its_correction_keeps_the_original(tmp_path, items) -> None:
    copy, original = items[0], items[1]
    asyncio.run(feed(sqlite_sink(tmp_path)[0], [copy, superseding(original, copy)]))
    assert sqlite_index(tmp_path) == {original["canonical_url"]}


def test_records_keep_every_correction_when_one_url_comes_twice() -> None:
    base = {"canonical_url": "http://a.test/1", "fetched_at": "2026-01-01T00:00:00+00:00"}
    later = {**base, "fetched_at": "2026-01-02T00:00:00+00:00"}
    merged = latest_per_key([{**base, "supersedes": ["http://b.test/1"]}, later])
    assert merged == [{**later, "supersedes": ["http://b.test/1"]}]
    assert supersessions(merged) == {"http://b.test/1": "http://a.test/1"}


# --- a spill or a rejected record the disk cannot take ----------------------------------------

# Line sizes: batches shorter than a buffered file's buffer (io.DEFAULT_BUFFER_SIZE, 8 KiB) and
# longer. A buffered journal kept the short batch's unwritten rest in its buffer and wrote it
# with the next batch (articles whose items had failed); it left the long batch's first part in
# the file, and the next batch's first line was glued to it (unparseable: moved aside, lost).
SPILL_SIZES = pytest.mark.parametrize("text_bytes", [100, 3 * 8192], ids=["short", "long"])


def run_past_the_file_size_limit(
    scenario: str, tmp_path: Path, text_bytes: int
) -> tuple[dict, str]:
    """A scenario of tests/support/spill.py in a process of its own."""
    return run_scenario("tests.support.spill", scenario, str(tmp_path), str(text_bytes))


@SPILL_SIZES
def test_articles_the_journal_cannot_take_fail_their_items_and_leave_it_as_it_was(
    tmp_path: Path, text_bytes: int
) -> None:
    """Backend down, journal disk full: the batch was logged as lost and its items passed as
    done (never fetched again). Now they fail (the harvest retries them), and the journal holds
    the batches before and after, each line whole."""
    seen, log = run_past_the_file_size_limit("spill", tmp_path, text_bytes)
    assert seen["A"] == seen["C"] == ["passed"] * 3
    assert seen["B"] == ["NotDelivered"] * 3  # pending, tried again later
    assert seen["unchanged_by_the_failure"], "the failed append left part of the batch"
    assert (seen["spilled"], seen["spill_errors"], seen["undelivered"]) == (6, 1, 3)
    assert seen["journal_pending"] == 6
    assert "sink/sqlite/spill_errors" in log and "neither written nor journalled" in log
    journal = tmp_path / "state" / "journal" / "sqlite.journal.jsonl"
    urls = [json.loads(line)["canonical_url"] for line in journal.read_bytes().splitlines()]
    assert urls == [f"http://a.test/{i}" for i in (0, 1, 2, 6, 7, 8)]
    # The next start replays A and C whole; nothing set aside as unreadable.
    sink, stats = sqlite_sink(tmp_path)
    asyncio.run(feed(sink, []))
    assert set(rows(tmp_path / "index.sqlite3")) == {
        f"http://a.test/{i}" for i in (0, 1, 2, 6, 7, 8)
    }
    assert stats.get_value("sink/sqlite/replayed") == 6
    assert stats.get_value("sink/sqlite/journal_rejected") is None
    assert not (tmp_path / "state" / "journal" / "sqlite.rejected.jsonl").exists()


@SPILL_SIZES
def test_a_rejected_record_the_disk_cannot_take_goes_whole_to_the_log(
    tmp_path: Path, text_bytes: int
) -> None:
    """The ledger gave the article up before its record is written: a record that cannot be
    written (disk full) went nowhere, or left a partial line the next record was glued to."""
    seen, log = run_past_the_file_size_limit("rejected", tmp_path, text_bytes)
    assert seen["unchanged_by_the_failure"], "the failed write left a partial line"
    assert (seen["rejected"], seen["rejected_unwritten"]) == (3, 1)
    rejected = tmp_path / "state" / "journal" / "pipeline.rejected.jsonl"
    kept = [json.loads(line)["record"]["url"] for line in rejected.read_bytes().splitlines()]
    assert kept == ["http://a.test/0", "http://a.test/2"]
    (critical,) = [line for line in log.splitlines() if line.startswith("CRITICAL")]
    record = json.loads(critical[critical.index("to keep by hand: ") + len("to keep by hand: ") :])
    assert record["record"]["url"] == "http://a.test/1" and record["attempts"] == 3
    assert "harvest/rejected_unwritten" in critical


def test_a_refused_article_that_cannot_be_set_aside_fails_its_item_alone(tmp_path, items) -> None:
    """The rejected file cannot be written (here a directory stands where it goes): the refused
    article's item fails (pending, tried again), the rest of its batch is indexed and passes."""
    aside = tmp_path / "state" / "journal" / "sqlite.rejected.jsonl"
    aside.mkdir(parents=True)
    bad = {**items[1], "title": {"not": "text"}}  # sqlite3 cannot bind a dict
    sink, stats = sqlite_sink(tmp_path)

    async def scenario() -> list[str]:
        await sink.open_spider()
        batch = [items[0], bad, items[2]]
        done = await asyncio.gather(
            *(sink.process_item(dict(item)) for item in batch), return_exceptions=True
        )
        await sink.close_spider()
        return [
            type(result).__name__ if isinstance(result, Exception) else "passed" for result in done
        ]

    assert asyncio.run(scenario()) == ["passed", "NotDelivered", "passed"]
    assert set(rows(tmp_path / "index.sqlite3")) == {items[0]["url"], items[2]["url"]}
    assert stats.get_value("sink/sqlite/rejected_write_errors") == 1
    assert stats.get_value("sink/sqlite/undelivered") == 1
