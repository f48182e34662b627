"""The embedded index: SQLite with an FTS5 full-text index, no server needed.

One row per canonical URL in `articles` (the latest fetch wins; `versions` counts the distinct
versions seen), and an external-content FTS5 table over title and text kept in step by triggers.
Schema changes are numbered migrations applied in order and recorded in `PRAGMA user_version`.

`SQLiteIndex` is the plain library (what `newsharvest search` uses); `SQLiteSink` is the Scrapy
pipeline, which owns one writer thread so that SQLite never blocks the reactor.
"""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.statscollectors import StatsCollector

from crawler.core.paths import output_dir
from crawler.core.sqlite import open_sqlite
from pipelines.sinks.base import BatchingSink, SinkOptions
from pipelines.sinks.records import article_date, supersessions

T = TypeVar("T")

INDEX_FILENAME = "index.sqlite3"
BUSY_TIMEOUT_MS = 10_000  # a search holding a read lock never makes the writer fail at once
TITLE_WEIGHT = 10.0  # bm25 weight of a title match relative to a body match
SNIPPET_TOKENS = 16  # words around the best match in a result's snippet
QUERY_CHUNK = 500  # URLs per IN (...) query: well under SQLite's limit on bound variables
SNIPPET_MARKERS = ("[", "]")  # how a snippet marks matched words (plain text: no ANSI, no HTML)

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    # 1: articles, their full-text index and the triggers that keep it in step.
    (
        """CREATE TABLE articles (
            id INTEGER PRIMARY KEY,
            canonical_url TEXT NOT NULL UNIQUE,
            url TEXT NOT NULL,
            domain TEXT NOT NULL,
            title TEXT,
            published TEXT,
            date REAL,
            language TEXT,
            authors TEXT NOT NULL,
            description TEXT,
            image TEXT,
            text TEXT NOT NULL,
            blocks TEXT NOT NULL,
            extraction_method TEXT,
            content_hash TEXT,
            feed_url TEXT,
            guid TEXT,
            version TEXT NOT NULL,
            versions INTEGER NOT NULL DEFAULT 1,
            first_fetched_at TEXT NOT NULL,
            fetched_at TEXT NOT NULL
        )""",
        "CREATE INDEX articles_domain_date ON articles (domain, date)",
        "CREATE INDEX articles_date ON articles (date)",
        """CREATE VIRTUAL TABLE articles_fts USING fts5(
            title, text, content='articles', content_rowid='id',
            tokenize='porter unicode61 remove_diacritics 2'
        )""",
        """CREATE TRIGGER articles_fts_insert AFTER INSERT ON articles BEGIN
            INSERT INTO articles_fts (rowid, title, text) VALUES (new.id, new.title, new.text);
        END""",
        """CREATE TRIGGER articles_fts_delete AFTER DELETE ON articles BEGIN
            INSERT INTO articles_fts (articles_fts, rowid, title, text)
            VALUES ('delete', old.id, old.title, old.text);
        END""",
        """CREATE TRIGGER articles_fts_update AFTER UPDATE OF title, text ON articles
        WHEN old.title IS NOT new.title OR old.text IS NOT new.text BEGIN
            INSERT INTO articles_fts (articles_fts, rowid, title, text)
            VALUES ('delete', old.id, old.title, old.text);
            INSERT INTO articles_fts (rowid, title, text) VALUES (new.id, new.title, new.text);
        END""",
    ),
    # 2: the record fields of 0.2.0: modified date, section, keywords, paywall flag, images, word
    # count and Markdown; section and paywall are what `newsharvest search` filters on.
    (
        "ALTER TABLE articles ADD COLUMN modified TEXT",
        "ALTER TABLE articles ADD COLUMN section TEXT",
        "ALTER TABLE articles ADD COLUMN keywords TEXT NOT NULL DEFAULT '[]'",
        "ALTER TABLE articles ADD COLUMN paywalled INTEGER",
        "ALTER TABLE articles ADD COLUMN images TEXT NOT NULL DEFAULT '[]'",
        "ALTER TABLE articles ADD COLUMN word_count INTEGER",
        "ALTER TABLE articles ADD COLUMN markdown TEXT",
        "CREATE INDEX articles_section ON articles (section COLLATE NOCASE)",
    ),
    # 3: articles found to be copies of an earlier one after they were indexed: kept out.
    (
        """CREATE TABLE superseded (
            canonical_url TEXT PRIMARY KEY,
            duplicate_of TEXT NOT NULL
        )""",
    ),
)

_COLUMNS = (
    "canonical_url", "url", "domain", "title", "published", "date", "language", "authors",
    "description", "image", "text", "blocks", "extraction_method", "content_hash", "feed_url",
    "guid", "version", "fetched_at", "modified", "section", "keywords", "paywalled", "images",
    "word_count", "markdown",
)  # fmt: skip
# A new version replaces the row and counts; a re-fetch of the same version changes nothing
# (`fetched_at` stays when this version was first fetched); a late replay of an older fetch
# changes nothing either.
UPSERT = f"""
INSERT INTO articles ({", ".join(_COLUMNS)}, versions, first_fetched_at)
VALUES ({", ".join(":" + name for name in _COLUMNS)}, 1, :fetched_at)
ON CONFLICT (canonical_url) DO UPDATE SET
    {", ".join(f"{name} = excluded.{name}" for name in _COLUMNS if name != "canonical_url")},
    versions = articles.versions + 1
WHERE excluded.fetched_at >= articles.fetched_at AND excluded.version IS NOT articles.version
"""


class NotAnIndex(Exception):
    """The file is missing or is not a newsharvest index."""


class OlderIndex(Exception):
    """The index was written by a version without the columns a filter needs."""


# The schema version that added section, keywords and paywalled (search filters need it).
RECORD_FIELDS_VERSION = 2


@dataclass(frozen=True)
class SearchHit:
    canonical_url: str
    title: str | None
    domain: str
    published: str | None
    date: float | None
    versions: int
    snippet: str
    score: float


def sqlite_index_path(settings: Any) -> Path:
    """SINK_SQLITE_PATH, else `index.sqlite3` in OUTPUT_DIR."""
    configured = (settings.get("SINK_SQLITE_PATH") or "").strip()
    if configured:
        return Path(configured)
    return output_dir(settings) / INDEX_FILENAME


class SQLiteIndex:
    """One connection to an index file. Use from one thread."""

    def __init__(self, connection: sqlite3.Connection, path: Path) -> None:
        self.connection = connection
        self.path = path

    @classmethod
    def open(cls, path: Path) -> SQLiteIndex:
        """Open for writing, creating the file and migrating its schema as needed."""
        connection = open_sqlite(path, timeout_seconds=BUSY_TIMEOUT_MS / 1000)
        index = cls(connection, path)
        index.migrate()
        return index

    @classmethod
    def open_readonly(cls, path: Path) -> SQLiteIndex:
        if not path.is_file():
            raise NotAnIndex(f"no index at {path}")
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
        index = cls(connection, path)
        if index.schema_version() < 1:
            connection.close()
            raise NotAnIndex(f"{path} is not a newsharvest index")
        return index

    def schema_version(self) -> int:
        try:
            return int(self.connection.execute("PRAGMA user_version").fetchone()[0])
        except sqlite3.DatabaseError as error:
            raise NotAnIndex(f"{self.path} is not a SQLite database ({error})") from error

    def migrate(self) -> None:
        """Apply the migrations this file has not had yet, each in its own transaction."""
        for number, statements in enumerate(MIGRATIONS, start=1):
            if self.schema_version() >= number:
                continue
            with self._transaction():
                # Read again under the write lock: another process opening the same new file
                # (the shards of `newsharvest replay --processes N`) may have applied it while
                # this one waited for the lock.
                if self.schema_version() >= number:
                    continue
                for statement in statements:
                    self.connection.execute(statement)
                self.connection.execute(f"PRAGMA user_version = {number}")

    def upsert(self, records: Sequence[dict[str, Any]]) -> int:
        """Insert or update; returns the rows that changed (new articles and new versions).
        Articles superseded as copies (now or before: one may arrive after its correction)
        are taken out and kept out."""
        copies = supersessions(list(records))
        with self._transaction():
            urls = [record["canonical_url"] for record in records]
            out = self._superseded(urls)
            rows = [_row(r) for r in records if r["canonical_url"] not in out]
            changed = self.connection.executemany(UPSERT, rows).rowcount if rows else 0
            for copy, original in copies.items():
                self.connection.execute(
                    "INSERT OR REPLACE INTO superseded (canonical_url, duplicate_of) VALUES (?, ?)",
                    (copy, original),
                )
                self.connection.execute("DELETE FROM articles WHERE canonical_url = ?", (copy,))
            return changed

    def _superseded(self, urls: list[str]) -> set[str]:
        """Which of these URLs were superseded as copies."""
        found: set[str] = set()
        for start in range(0, len(urls), QUERY_CHUNK):
            chunk = urls[start : start + QUERY_CHUNK]
            marks = ",".join("?" * len(chunk))
            query = f"SELECT canonical_url FROM superseded WHERE canonical_url IN ({marks})"
            found.update(row[0] for row in self.connection.execute(query, chunk))
        return found

    def count(self) -> int:
        return int(self.connection.execute("SELECT count(*) FROM articles").fetchone()[0])

    def search(
        self,
        query: str,
        *,
        domain: str | None = None,
        since: float | None = None,
        limit: int = 10,
        raw: bool = False,
        section: str | None = None,
        keyword: str | None = None,
        paywalled: bool | None = None,
    ) -> tuple[list[SearchHit], int]:
        """Best matches first, and how many articles match in all. `query` is words and
        "quoted phrases" (all must match; `word*` matches a prefix), or FTS5 syntax if raw.
        `section` and `keyword` match case-insensitively; `paywalled` keeps the articles marked
        so (an article whose page says nothing matches neither True nor False)."""
        match = query if raw else fts_query(query)
        if not match:
            return [], 0
        filtered = section or keyword or paywalled is not None
        if filtered and self.schema_version() < RECORD_FIELDS_VERSION:
            raise OlderIndex(
                f"{self.path} was written before articles had sections, keywords and paywall "
                "flags: a crawl writing to it (SINK_SQLITE_ENABLED) upgrades it"
            )
        where = ["articles_fts MATCH ?"]
        params: list[Any] = [match]
        if domain:
            where.append("a.domain = ?")
            params.append(domain.lower().removeprefix("www."))
        if since is not None:
            where.append("a.date >= ?")
            params.append(since)
        if section:
            where.append("a.section = ? COLLATE NOCASE")
            params.append(section.strip())
        if keyword:
            where.append(
                "EXISTS (SELECT 1 FROM json_each(a.keywords) WHERE value = ? COLLATE NOCASE)"
            )
            params.append(keyword.strip())
        if paywalled is not None:
            where.append("a.paywalled = ?")
            params.append(int(paywalled))
        condition = " AND ".join(where)
        joined = "articles_fts JOIN articles a ON a.id = articles_fts.rowid"
        total = self.connection.execute(
            f"SELECT count(*) FROM {joined} WHERE {condition}", params
        ).fetchone()[0]
        rows = self.connection.execute(
            f"""SELECT a.canonical_url, a.title, a.domain, a.published, a.date, a.versions,
                       snippet(articles_fts, 1, ?, ?, '\u2026', {SNIPPET_TOKENS}),
                       bm25(articles_fts, {TITLE_WEIGHT}, 1.0) AS score
                FROM {joined} WHERE {condition} ORDER BY score LIMIT ?""",
            [*SNIPPET_MARKERS, *params, limit],
        ).fetchall()
        return [SearchHit(*row) for row in rows], int(total)

    def close(self) -> None:
        self.connection.close()

    def _transaction(self) -> _Transaction:
        return _Transaction(self.connection)


class _Transaction:
    """BEGIN IMMEDIATE ... COMMIT, or ROLLBACK on error (autocommit connection)."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection

    def __enter__(self) -> None:
        self.connection.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        self.connection.execute("COMMIT" if kind is None else "ROLLBACK")


_QUERY_TOKEN = re.compile(r'"([^"]*)"|(\S+)')
_WORD_CHARS = re.compile(r"[^\w*]+")


def fts_query(text: str) -> str:
    """A user's words and "quoted phrases" as an FTS5 query that cannot be a syntax error:
    every term quoted (all must match); a trailing `*` keeps its prefix meaning."""
    terms = []
    for phrase, word in _QUERY_TOKEN.findall(text):
        if phrase.strip():
            terms.append('"' + phrase.replace('"', "") + '"')
            continue
        prefix = word.endswith("*")
        cleaned = _WORD_CHARS.sub(" ", word).replace("*", " ").strip()
        if cleaned:
            terms.append(f'"{cleaned}"' + ("*" if prefix else ""))
    return " ".join(terms)


def _row(record: dict[str, Any]) -> dict[str, Any]:
    row = {name: record.get(name) for name in _COLUMNS}
    row["date"] = article_date(record)
    row["authors"] = json.dumps(record.get("authors") or [], ensure_ascii=False)
    row["blocks"] = json.dumps(record.get("blocks") or [], ensure_ascii=False)
    row["keywords"] = json.dumps(record.get("keywords") or [], ensure_ascii=False)
    row["images"] = json.dumps(record.get("images") or [], ensure_ascii=False)
    paywalled = record.get("paywalled")
    row["paywalled"] = None if paywalled is None else int(bool(paywalled))
    return row


class SQLiteSink(BatchingSink):
    """Index sink into the embedded SQLite full-text index (SINK_SQLITE_ENABLED)."""

    name = "sqlite"
    backend = "sqlite"
    setting = "SINK_SQLITE_PATH"

    def __init__(self, stats: StatsCollector, options: SinkOptions, path: Path) -> None:
        super().__init__(stats, options)
        self.path = path
        self._executor: ThreadPoolExecutor | None = None
        self._index: SQLiteIndex | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SQLiteSink:
        settings = crawler.settings
        if not settings.getbool("SINK_SQLITE_ENABLED"):
            raise NotConfigured("SINK_SQLITE_ENABLED is off")
        return cls(crawler.stats, SinkOptions.from_settings(settings), sqlite_index_path(settings))

    def describe(self) -> str:
        return f"SQLite index {self.path}"

    async def connect(self) -> None:
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sink-sqlite")
        self._index = await run_in(self._executor, SQLiteIndex.open, self.path)

    async def write(self, records: list[dict[str, Any]]) -> int:
        assert self._index is not None and self._executor is not None
        return await run_in(self._executor, self._index.upsert, records)

    async def disconnect(self) -> None:
        index, executor = self._index, self._executor
        self._index = self._executor = None
        if executor is None:
            return
        if index is not None:  # bounded: a thread stuck in a timed-out write must not hang us
            await asyncio.wait_for(
                run_in(executor, index.close), self.options.write_timeout_seconds
            )
        executor.shutdown(wait=False)

    def is_unavailable(self, error: BaseException) -> bool:
        # Locked, read-only, full or vanished files are conditions that pass; a value SQLite
        # refuses (IntegrityError, InterfaceError, ...) is the record's fault.
        return isinstance(error, sqlite3.OperationalError | OSError | TimeoutError)


async def run_in(executor: ThreadPoolExecutor, function: Callable[..., T], *args: Any) -> T:
    """Run a blocking call on the sink's own thread without blocking the event loop."""
    return await asyncio.get_running_loop().run_in_executor(executor, function, *args)
