"""What every sink stores: one flat, JSON-serialisable record per article.

The record is what the journal spills and replays, so it must carry everything a backend writes.
Its identity is the canonical URL; its `version` changes only when the indexed content changes,
so re-crawling an unchanged article is a no-op and a changed one counts as a new version.

A record may also carry `supersedes`: the canonical URLs of articles indexed earlier that the
near-duplicate stage found to be copies of this one (it came first by the order rule,
pipelines/dedup/). Each backend takes them out of its index and keeps them out
(`supersessions`).
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from typing import Any

from dateutil.parser import isoparse

# Item fields a sink keeps (the exported contract minus nothing but transient fields).
RECORD_FIELDS = (
    "canonical_url",
    "url",
    "domain",
    "feed_url",
    "guid",
    "fetched_at",
    "title",
    "published",
    "authors",
    "language",
    "description",
    "image",
    "text",
    "blocks",
    "extraction_method",
    "content_hash",
    # Added in 0.2.0: absent from records journaled by older versions (read as empty).
    "modified",
    "section",
    "keywords",
    "paywalled",
    "images",
    "word_count",
    "markdown",
)
# The fields whose change makes a new version of an article (what a search shows or matches).
# The fields added later are not among them: an unchanged article re-crawled after an upgrade
# must stay the same version.
VERSIONED_FIELDS = ("title", "text", "published", "authors", "description", "language", "image")
VERSION_DIGEST_BYTES = 8


class InvalidRecord(ValueError):
    """An item a sink cannot index (no canonical URL or no text)."""


def article_record(item: Any) -> dict[str, Any]:
    """The record of an extracted article item; raises InvalidRecord when it cannot be indexed."""
    record = {name: item.get(name) for name in RECORD_FIELDS}
    record["canonical_url"] = record["canonical_url"] or record["url"]
    url, text = record["canonical_url"], record["text"]
    if not (url and isinstance(url, str) and text and isinstance(text, str)):
        raise InvalidRecord(f"no canonical URL or no text: {record['url']!r}")
    try:
        record["authors"] = list(record["authors"] or [])
        record["blocks"] = list(record["blocks"] or [])
        record["keywords"] = [str(word) for word in record["keywords"] or []]
        record["images"] = [dict(image) for image in record["images"] or []]
        record["paywalled"] = None if record["paywalled"] is None else bool(record["paywalled"])
        if record["word_count"] is not None:
            record["word_count"] = int(record["word_count"])
        record["fetched_at"] = utc_iso(record["fetched_at"])
        record["version"] = record_version(record)
    except (TypeError, ValueError) as error:  # a field of a shape no stage produces
        raise InvalidRecord(f"malformed item {record['canonical_url']!r}: {error}") from error
    superseded = sorted({str(u) for u in item.get("supersedes") or () if u and u != url})
    if superseded:
        record["supersedes"] = superseded
    return record


def supersessions(records: list[dict[str, Any]]) -> dict[str, str]:
    """Copy -> original for every URL the records supersede."""
    found: dict[str, str] = {}
    for record in records:
        for copy in record.get("supersedes") or ():
            found[copy] = record["canonical_url"]
    return found


def record_version(record: dict[str, Any]) -> str:
    """Digest of the versioned fields: equal for a re-crawl of unchanged content."""
    payload = json.dumps([record.get(name) for name in VERSIONED_FIELDS], ensure_ascii=False)
    return hashlib.blake2b(payload.encode("utf-8"), digest_size=VERSION_DIGEST_BYTES).hexdigest()


def utc_iso(value: str | None) -> str:
    """An ISO 8601 UTC time to the second (comparable as a string), now when missing or bad:
    the backends order versions of one article by it."""
    seconds = timestamp(value)
    moment = datetime.now(UTC) if seconds is None else datetime.fromtimestamp(seconds, UTC)
    return moment.isoformat(timespec="seconds")


def timestamp(value: str | None) -> float | None:
    """Seconds since the epoch of an ISO 8601 date (naive dates are UTC), None if unparsable."""
    if not value:
        return None
    try:
        moment = isoparse(value)
    except (ValueError, OverflowError, TypeError):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def article_date(record: dict[str, Any]) -> float | None:
    """When the article is from: its publication date, else when it was fetched."""
    return timestamp(record.get("published")) or timestamp(record.get("fetched_at"))


def latest_per_key(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One record per canonical URL, the most recently fetched (later in the list wins ties):
    a batch must not upsert the same row twice."""
    latest: dict[str, dict[str, Any]] = {}
    for record in records:
        kept = latest.get(record["canonical_url"])
        if kept is None or record["fetched_at"] >= kept["fetched_at"]:
            if kept is not None and kept.get("supersedes"):  # a correction is never dropped
                merged = {*kept["supersedes"], *(record.get("supersedes") or ())}
                record = {**record, "supersedes": sorted(merged)}
            latest[record["canonical_url"]] = record
        elif record.get("supersedes"):
            merged = {*(kept.get("supersedes") or ()), *record["supersedes"]}
            latest[record["canonical_url"]] = {**kept, "supersedes": sorted(merged)}
    return list(latest.values())
