"""What an output stage needs of the harvest commit protocol, without depending on the crawl.

The commit protocol itself (crawler/harvest.py) decides when an article counts as done: after the
last pipeline stage returned it (item_scraped) or dropped it on purpose (item_dropped). A stage
that writes articles somewhere append-only (pipelines/journal.py) must reconcile a crash between
its write and the done mark; it needs only this much of the ledger, so the pipelines depend on
this interface and never on the crawl code that implements it.

The feeds spider installs its ledger on the crawler before Scrapy builds the item pipelines, so
`ledger_of(crawler)` finds it; None means the crawl has no ledger (another spider).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from crawler.core.clock import Clock

_ATTRIBUTE = "_newsharvest_harvest"

DoneListener = Callable[[Any, bool], None]
# What an output item adds 1 to in the same atomic step as its done mark: [(hash key, field)]
# (monitoring's article counts, so a crash between the mark and a later flush loses none).
DoneCounter = Callable[[Any], Sequence[tuple[str, str]]]


class ArticleLedger(Protocol):
    """The ledger of harvested article versions, as an output stage sees it."""

    clock: Clock

    @property
    def single_process(self) -> bool:
        """True when no other process works on this one's claims (the embedded store)."""

    async def open(self) -> Any:
        """Open the ledger's store (idempotent)."""

    def on_done(self, listener: DoneListener) -> None:
        """Call listener(item, outcome_stored) after an item's done or failed mark is stored."""

    async def mark_done(self, key: str, version: int, item: Any = None) -> bool:
        """Mark an article version done (idempotent); True if it was not done before. `item`:
        the output article (its done counts are made with the mark)."""

    async def output_started(self, item: Any) -> None:
        """The stage is about to write `item`: a worker killed before its done mark then has
        the article counted as output (its journal holds it), not handed to another worker."""

    async def journal_opened(self, location: str) -> None:
        """The stage writes its journal at `location` (crawler/core/journal_files.py): a worker
        taking this one's claims over reads it to tell what was written."""

    def count_on_done(self, counter: DoneCounter) -> bool:
        """Have counter(item)'s fields counted atomically with each output item's done mark;
        False when the ledger's store cannot (the embedded one)."""


def install_ledger(crawler: Any, ledger: ArticleLedger) -> None:
    setattr(crawler, _ATTRIBUTE, ledger)


def ledger_of(crawler: Any) -> ArticleLedger | None:
    """The crawler's ledger, None if no harvest runs in this crawl."""
    return getattr(crawler, _ATTRIBUTE, None)


def item_version(item: Any) -> tuple[str, int] | None:
    """(entry_url, version) of a harvested article item, None for other items. A replayed
    article is claimed once per archive record, under its replay key (version 1 of it)."""
    get = getattr(item, "get", None)
    if get is None:
        return None
    if replay_key := get("replay_key"):
        return (replay_key, 1)
    key, version = get("entry_url"), get("version")
    return (key, int(version)) if key and version else None
