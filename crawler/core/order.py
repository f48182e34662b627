"""Which of two copies of a story came first: the order key every article carries.

Near-duplicate detection must name the same original on every run, however many extraction
workers or replay processes race to the index. So "first" is not "checked first" but a key
computed from the article itself, compared as a plain string (in Python and in Redis Lua alike):

* replay: archive order, `r|<file index>|<record offset>` (the file's place in the replay's
  list of WARCs, then the record's byte offset in it);
* crawl: the article's date, then the fetch, then the URL: `c|<published>|<fetched>|<url>`
  where <published> is the publication date (UTC), or the fetch time when the page gives none.

A page whose canonical URL names another site's page is a copy by its own statement: its key is
its ordinary key behind DECLARED, which sorts after every other, so it is never the original of
a page that does not say the same. Crawl keys sort before replay keys (what a harvest already
holds came first), and a record indexed without a key (an index written before keys existed)
sorts before all. Every field is fixed-width, so string order is the order the rule states.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from dateutil.parser import isoparse

CRAWL = "c"
REPLAY = "r"
DECLARED = "~"  # after "c" and "r": a declared copy comes after every undeclared page
FILE_DIGITS = 6  # WARC files per replay: up to a million
OFFSET_DIGITS = 15  # record offsets up to 1 PB per file
TIME_FORMAT = "%Y-%m-%dT%H:%M:%S.%f"  # fixed width for years 1000-9999


def replay_order_key(file_index: int, offset: int) -> str:
    """The key of the record at `offset` in the replay's `file_index`-th WARC."""
    if file_index < 0 or offset < 0:
        raise ValueError(f"file index and offset must be >= 0, got {file_index}, {offset}")
    return f"{REPLAY}|{file_index:0{FILE_DIGITS}d}|{offset:0{OFFSET_DIGITS}d}"


def crawl_order_key(published: Any, fetched_at: Any, url: str) -> str:
    """The key of a crawled article: its date (publication, else fetch), then fetch, then URL;
    "" (arrival order decides) when it has neither date."""
    fetched = _utc(fetched_at) or ""
    date = _utc(published) or fetched
    return f"{CRAWL}|{date}|{fetched}|{url}" if date else ""


def declared_copy_key(order_key: str) -> str:
    """The key of a page that names another site's page as its canonical."""
    return order_key if order_key.startswith(DECLARED) else DECLARED + order_key


def item_order_key(item: Any) -> str:
    """The item's own key (set by the replay spider), else its crawl key from its fields."""
    key = item.get("order_key")
    if key:
        return str(key)
    return crawl_order_key(item.get("published"), item.get("fetched_at"), item.get("url") or "")


def _utc(value: Any) -> str | None:
    """A date (ISO 8601 string or datetime) as fixed-width UTC text, None when unusable."""
    if not value:
        return None
    try:
        moment = value if isinstance(value, datetime) else isoparse(str(value))
    except (ValueError, OverflowError, TypeError):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    try:
        moment = moment.astimezone(UTC)
    except (OverflowError, ValueError):
        return None
    if moment.year < 1000:
        return None
    return moment.strftime(TIME_FORMAT)
