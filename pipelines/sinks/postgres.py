"""PostgreSQL full-text sink (psycopg 3, asyncio): one row per canonical URL with a stored
`tsvector` (title weighted above body) under a GIN index, in the article's language where
PostgreSQL has a text-search configuration for it, 'simple' otherwise.

The schema (SINK_POSTGRES_SCHEMA, default `newsharvest`) is created on first use by numbered
migrations recorded in `<schema>.schema_migrations`; concurrent workers serialise on an advisory
lock, so exactly one applies each migration. Query it like this:

    SELECT title, ts_headline(search_config, text, q) FROM newsharvest.articles,
           websearch_to_tsquery('english', 'harbor strike') q
    WHERE search @@ q ORDER BY ts_rank_cd(search, q) DESC LIMIT 10;
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import Any

import psycopg
from psycopg import sql
from psycopg.types.json import Jsonb
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.statscollectors import StatsCollector

from pipelines.sinks.base import BatchingSink, SinkOptions
from pipelines.sinks.records import supersessions, timestamp
from settings import base as defaults

SIMPLE_CONFIG = "simple"  # no stemming, no stop words: right for any language
# Text beyond this many characters is stored but not indexed (a tsvector is capped at 1 MB).
MAX_INDEXED_CHARS = 500_000

# ISO 639-1 code -> PostgreSQL text-search configuration (used only if the server has it).
LANGUAGE_CONFIGS = {
    "ar": "arabic", "hy": "armenian", "eu": "basque", "ca": "catalan", "da": "danish",
    "nl": "dutch", "en": "english", "fi": "finnish", "fr": "french", "de": "german",
    "el": "greek", "hi": "hindi", "hu": "hungarian", "id": "indonesian", "ga": "irish",
    "it": "italian", "lt": "lithuanian", "ne": "nepali", "no": "norwegian", "nb": "norwegian",
    "nn": "norwegian", "pt": "portuguese", "ro": "romanian", "ru": "russian", "sr": "serbian",
    "es": "spanish", "sv": "swedish", "ta": "tamil", "tr": "turkish", "yi": "yiddish",
}  # fmt: skip

# (version, what it does, statements with {schema}). Append; never edit an applied one.
MIGRATIONS: tuple[tuple[int, str, tuple[str, ...]], ...] = (
    (
        1,
        "articles with a weighted tsvector, GIN-indexed",
        (
            f"""CREATE TABLE {{schema}}.articles (
                canonical_url text NOT NULL,
                url text NOT NULL,
                domain text NOT NULL,
                title text,
                published timestamptz,
                language text,
                search_config regconfig NOT NULL,
                authors text[] NOT NULL DEFAULT '{{{{}}}}',
                description text,
                image text,
                text text NOT NULL,
                blocks jsonb NOT NULL DEFAULT '[]',
                extraction_method text,
                content_hash text,
                feed_url text,
                guid text,
                version text NOT NULL,
                versions integer NOT NULL DEFAULT 1,
                first_fetched_at timestamptz NOT NULL,
                fetched_at timestamptz NOT NULL,
                search tsvector GENERATED ALWAYS AS (
                    setweight(to_tsvector(search_config, coalesce(title, '')), 'A')
                    || setweight(to_tsvector(search_config, left(text, {MAX_INDEXED_CHARS})), 'B')
                ) STORED
            )""",
            # By hash: a btree entry cannot hold an arbitrarily long URL.
            "CREATE UNIQUE INDEX articles_canonical_url ON {schema}.articles (md5(canonical_url))",
            "CREATE INDEX articles_search ON {schema}.articles USING gin (search)",
            "CREATE INDEX articles_domain_published ON {schema}.articles (domain, published)",
        ),
    ),
    (
        2,
        "modified, section, keywords, paywalled, images, word_count, markdown",
        (
            """ALTER TABLE {schema}.articles
                ADD COLUMN modified timestamptz,
                ADD COLUMN section text,
                ADD COLUMN keywords text[] NOT NULL DEFAULT '{{}}',
                ADD COLUMN paywalled boolean,
                ADD COLUMN images jsonb NOT NULL DEFAULT '[]',
                ADD COLUMN word_count integer,
                ADD COLUMN markdown text""",
            "CREATE INDEX articles_keywords ON {schema}.articles USING gin (keywords)",
            "CREATE INDEX articles_section ON {schema}.articles (lower(section))",
        ),
    ),
    (
        3,
        "superseded: articles found to be copies of an earlier one after they were indexed",
        (
            """CREATE TABLE {schema}.superseded (
                canonical_url text NOT NULL,
                duplicate_of text NOT NULL
            )""",
            "CREATE UNIQUE INDEX superseded_canonical_url ON {schema}.superseded"
            " (md5(canonical_url))",
        ),
    ),
)
# Batches take this advisory lock shared, batches that supersede articles exclusive: a copy
# written by another worker is either committed before its correction runs (and deleted by it)
# or written after it (and sees the tombstone).
SUPERSEDE_LOCK = "newsharvest-supersede:{schema}"

_COLUMNS = (
    "canonical_url", "url", "domain", "title", "published", "language", "search_config",
    "authors", "description", "image", "text", "blocks", "extraction_method", "content_hash",
    "feed_url", "guid", "version", "fetched_at", "modified", "section", "keywords", "paywalled",
    "images", "word_count", "markdown",
)  # fmt: skip


def upsert_statement(schema: str) -> sql.Composed:
    """A newer fetch of a different version replaces the row and counts; anything else (a
    re-fetch of the same version, a late replay of an older fetch) changes nothing."""
    values = [
        sql.SQL("%({})s::regconfig" if name == "search_config" else "%({})s").format(sql.SQL(name))
        for name in _COLUMNS
    ]
    updates = [
        sql.SQL("{0} = EXCLUDED.{0}").format(sql.Identifier(name))
        for name in _COLUMNS
        if name != "canonical_url"
    ]
    return sql.SQL(
        """INSERT INTO {schema}.articles ({columns}, versions, first_fetched_at)
        VALUES ({values}, 1, %(fetched_at)s)
        ON CONFLICT (md5(canonical_url)) DO UPDATE SET {updates},
            versions = articles.versions + 1
        WHERE EXCLUDED.fetched_at >= articles.fetched_at
            AND EXCLUDED.version IS DISTINCT FROM articles.version"""
    ).format(
        schema=sql.Identifier(schema),
        columns=sql.SQL(", ").join(map(sql.Identifier, _COLUMNS)),
        values=sql.SQL(", ").join(values),
        updates=sql.SQL(", ").join(updates),
    )


async def migrate(connection: psycopg.AsyncConnection[Any], schema: str) -> list[int]:
    """Create the schema and apply missing migrations; returns the versions applied now."""
    name = sql.Identifier(schema)
    applied_now = []
    async with connection.transaction():
        await connection.execute(
            "SELECT pg_advisory_xact_lock(hashtext(%s))", [f"newsharvest-migrate:{schema}"]
        )
        await connection.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(name))
        await connection.execute(
            sql.SQL(
                """CREATE TABLE IF NOT EXISTS {}.schema_migrations (
                    version integer PRIMARY KEY,
                    description text NOT NULL,
                    applied_at timestamptz NOT NULL DEFAULT now())"""
            ).format(name)
        )
        cursor = await connection.execute(
            sql.SQL("SELECT version FROM {}.schema_migrations").format(name)
        )
        done = {row[0] for row in await cursor.fetchall()}
        for version, description, statements in MIGRATIONS:
            if version in done:
                continue
            for statement in statements:
                await connection.execute(sql.SQL(statement).format(schema=name))
            await connection.execute(
                sql.SQL(
                    "INSERT INTO {}.schema_migrations (version, description) VALUES (%s, %s)"
                ).format(name),
                [version, description],
            )
            applied_now.append(version)
    return applied_now


async def text_search_configs(connection: psycopg.AsyncConnection[Any]) -> frozenset[str]:
    cursor = await connection.execute("SELECT cfgname FROM pg_ts_config")
    return frozenset(row[0] for row in await cursor.fetchall())


def search_config(language: str | None, available: frozenset[str]) -> str:
    """The text-search configuration for an ISO 639 language tag ('en', 'pt-BR', ...)."""
    code = (language or "").split("-")[0].split("_")[0].lower()
    config = LANGUAGE_CONFIGS.get(code, SIMPLE_CONFIG)
    return config if config in available else SIMPLE_CONFIG


def _row(record: dict[str, Any], configs: frozenset[str]) -> dict[str, Any]:
    row = {name: _no_nul(record.get(name)) for name in _COLUMNS}
    row["search_config"] = search_config(record.get("language"), configs)
    row["published"] = _datetime(record.get("published"))
    row["fetched_at"] = _datetime(record.get("fetched_at"))
    row["authors"] = [_no_nul(author) for author in record.get("authors") or []]
    row["blocks"] = Jsonb(_no_nul(record.get("blocks") or []))
    row["modified"] = _datetime(record.get("modified"))
    row["keywords"] = [_no_nul(word) for word in record.get("keywords") or []]
    row["images"] = Jsonb(_no_nul(record.get("images") or []))
    return row


def _datetime(value: str | None) -> datetime | None:
    seconds = timestamp(value)
    return None if seconds is None else datetime.fromtimestamp(seconds, UTC)


def _no_nul(value: Any) -> Any:
    """PostgreSQL text cannot hold NUL characters; a page that has them loses only them."""
    if isinstance(value, str):
        return value.replace("\x00", "")
    if isinstance(value, list):
        return [_no_nul(element) for element in value]
    if isinstance(value, dict):
        return {key: _no_nul(element) for key, element in value.items()}
    return value


class PostgresSink(BatchingSink):
    """Index sink into PostgreSQL full-text search (on when SINK_POSTGRES_URL is set)."""

    name = "postgres"
    backend = "postgres"
    setting = "SINK_POSTGRES_URL"

    def __init__(
        self,
        stats: StatsCollector,
        options: SinkOptions,
        url: str,
        schema: str = defaults.SINK_POSTGRES_SCHEMA,
    ) -> None:
        super().__init__(stats, options)
        self.url = url
        self.schema = schema
        self._connection: psycopg.AsyncConnection[Any] | None = None
        self._configs: frozenset[str] = frozenset({SIMPLE_CONFIG})
        self._upsert = upsert_statement(schema)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> PostgresSink:
        settings = crawler.settings
        url = (settings.get("SINK_POSTGRES_URL") or "").strip()
        if not url:
            raise NotConfigured("SINK_POSTGRES_URL is empty")
        schema = settings.get("SINK_POSTGRES_SCHEMA")
        return cls(crawler.stats, SinkOptions.from_settings(settings), url, schema)

    def describe(self) -> str:
        info = psycopg.conninfo.conninfo_to_dict(self.url)
        where = f"{info.get('host', 'localhost')}:{info.get('port', 5432)}/{info.get('dbname', '')}"
        return f"PostgreSQL {where} schema {self.schema}"

    async def connect(self) -> None:
        self._connection = await psycopg.AsyncConnection.connect(
            self.url,
            autocommit=True,
            connect_timeout=max(1, round(self.options.connect_timeout_seconds)),
            application_name="newsharvest-sink",
        )
        await migrate(self._connection, self.schema)
        self._configs = await text_search_configs(self._connection)

    async def write(self, records: list[dict[str, Any]]) -> int:
        assert self._connection is not None
        # Sorted keys: two workers upserting overlapping batches lock rows in the same order
        # and cannot deadlock.
        copies = supersessions(records)
        async with self._connection.transaction(), self._connection.cursor() as cursor:
            lock = "pg_advisory_xact_lock" if copies else "pg_advisory_xact_lock_shared"
            await cursor.execute(
                f"SELECT {lock}(hashtext(%s))", [SUPERSEDE_LOCK.format(schema=self.schema)]
            )
            out = await self._superseded(cursor, [r["canonical_url"] for r in records])
            rows = [_row(r, self._configs) for r in records if r["canonical_url"] not in out]
            rows.sort(key=lambda row: row["canonical_url"])
            changed = 0
            if rows:
                await cursor.executemany(self._upsert, rows)
                changed = max(0, cursor.rowcount)  # the summed rows inserted or updated
            if copies:
                await self._supersede(cursor, copies)
            return changed

    async def _superseded(self, cursor: psycopg.AsyncCursor[Any], urls: list[str]) -> set[str]:
        """Which of these URLs were superseded as copies."""
        query = sql.SQL(
            "SELECT canonical_url FROM {}.superseded WHERE md5(canonical_url) = ANY(%s)"
        ).format(sql.Identifier(self.schema))
        await cursor.execute(query, [[_md5(url) for url in urls]])
        return {row[0] for row in await cursor.fetchall()}

    async def _supersede(self, cursor: psycopg.AsyncCursor[Any], copies: dict[str, str]) -> None:
        """Tombstone the copies and take them out of the index."""
        schema = sql.Identifier(self.schema)
        await cursor.executemany(
            sql.SQL(
                """INSERT INTO {}.superseded (canonical_url, duplicate_of) VALUES (%s, %s)
                ON CONFLICT (md5(canonical_url))
                DO UPDATE SET duplicate_of = EXCLUDED.duplicate_of"""
            ).format(schema),
            sorted(copies.items()),
        )
        await cursor.execute(
            sql.SQL("DELETE FROM {}.articles WHERE md5(canonical_url) = ANY(%s)").format(schema),
            [[_md5(url) for url in sorted(copies)]],
        )

    async def disconnect(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            await connection.close()

    def is_unavailable(self, error: BaseException) -> bool:
        # OperationalError covers refused/lost connections, admin shutdown, deadlocks and
        # serialisation failures: all worth a retry. DataError & co. are the record's fault.
        return isinstance(error, psycopg.OperationalError | psycopg.InterfaceError | OSError)


def _md5(url: str) -> str:
    """The key the unique indexes use (md5 of the URL's UTF-8, as PostgreSQL computes it)."""
    return hashlib.md5(url.encode("utf-8"), usedforsecurity=False).hexdigest()
