"""What we need of Scrapy that it has no public API for, in one module, checked against Scrapy.

Everything else of ours uses Scrapy's public API (signals, `from_crawler`, `crawler.engine`'s
public methods, `crawler.get_downloader_middleware`, the downloader's `slots`). Three needs have
no public equivalent in the Scrapy versions pyproject.toml allows:

* **Is the crawl closing?** `ExecutionEngine.close_spider_async` marks its private slot
  (`engine._slot.closing`) long before `spider_closed` is sent; a stage waiting for Redis must
  give up then (crawler/core/outage.py), or the close waits for Redis forever.
* **Wake the engine now.** After `engine.unpause()`, or when a spider knows it has nothing left,
  Scrapy looks at its scheduler only after a download or at its 5-second heartbeat
  (`engine._slot.nextcall`); we ask it to look now.
* **The downloader's per-domain race, and the shared slot right before the handler.** Scrapy
  counts a request against its slot's concurrency only once its download coroutine runs, but
  starts every request that fits in one synchronous pass (`Downloader._process_queue`), so with
  no download delay a whole queue goes at once; and no public hook runs between a slot's delay
  and the download handler. `AdaptedDownloader` overrides `Downloader._wait_for_download` and
  `Downloader._download` for both; subclasses use `around_download`.

How a Scrapy change is caught: the downloader's two methods are checked when this module is
imported (name, coroutine, parameters), the engine's slot at every use; a mismatch raises
`ScrapyIncompatible` naming what changed, never a silent fallback (a missing slot must not read
as "closing": every Redis call of the crawl would then fail). tests/test_scrapy_adapter.py runs
each need on a real crawl of the installed Scrapy; docs/development.md says how to try the next
Scrapy release before widening the pin.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any

from scrapy.core.downloader import Downloader, Slot

if TYPE_CHECKING:
    from scrapy.core.engine import ExecutionEngine
    from scrapy.crawler import Crawler
    from scrapy.http import Request, Response
    from twisted.internet.defer import Deferred


class ScrapyIncompatible(RuntimeError):
    """The installed Scrapy changed something this module relies on."""

    def __init__(self, what: str) -> None:
        import scrapy

        super().__init__(
            f"Scrapy {scrapy.__version__} changed {what}; newsharvest supports the Scrapy versions "
            "pyproject.toml pins (crawler/core/scrapy_adapter.py, docs/development.md)"
        )


# --- the engine ------------------------------------------------------------------------------


def engine_of(crawler: Crawler) -> ExecutionEngine | None:
    """The crawler's engine, None before the crawl starts (public API: `crawler.engine` raises
    RuntimeError until then)."""
    try:
        return crawler.engine
    except RuntimeError:
        return None


def _slot(engine: ExecutionEngine) -> Any:
    """The engine's private slot (None when no spider is open), or ScrapyIncompatible."""
    if "_slot" not in vars(engine):
        raise ScrapyIncompatible("ExecutionEngine._slot (the engine's per-spider state)")
    slot = vars(engine)["_slot"]
    if slot is not None and not hasattr(slot, "closing"):
        raise ScrapyIncompatible("ExecutionEngine._slot.closing (set when a close starts)")
    return slot


def is_closing(engine: ExecutionEngine | None) -> bool:
    """True once the crawl stops taking work: no engine, an engine not running, or a spider
    close under way (`close_spider_async` started: set before `spider_closed` is sent)."""
    if engine is None or not engine.running:
        return True
    slot = _slot(engine)
    return slot is None or slot.closing is not None


def wake(engine: ExecutionEngine | None) -> None:
    """Have the engine look at its scheduler (and whether it is idle) now, not at its next
    heartbeat. Nothing to do without an open spider."""
    if engine is None:
        return
    slot = _slot(engine)
    if slot is None:
        return
    nextcall = getattr(slot, "nextcall", None)
    schedule = getattr(nextcall, "schedule", None)
    if not callable(schedule):
        raise ScrapyIncompatible("ExecutionEngine._slot.nextcall.schedule (the engine's wake-up)")
    schedule()


# --- the downloader --------------------------------------------------------------------------

# The private methods AdaptedDownloader overrides, with the parameters it passes on.
_DOWNLOADER_METHODS = {
    "_download": ("self", "slot", "request"),
    "_wait_for_download": ("self", "slot", "request", "queue_dfd"),
}


def _check_downloader() -> None:
    for name, parameters in _DOWNLOADER_METHODS.items():
        method = getattr(Downloader, name, None)
        if not inspect.iscoroutinefunction(method):
            raise ScrapyIncompatible(f"Downloader.{name} (no longer a coroutine method)")
        found = tuple(inspect.signature(method).parameters)
        if found != parameters:
            raise ScrapyIncompatible(f"Downloader.{name}{found} (expected {parameters})")


_check_downloader()

Download = Callable[[], Awaitable["Response"]]


class AdaptedDownloader(Downloader):
    """Scrapy's downloader with CONCURRENT_REQUESTS_PER_DOMAIN held whatever DOWNLOAD_DELAY is,
    and `around_download`, a hook between the slot's delay and the download handler."""

    def _wait_for_download(
        self, slot: Slot, request: Request, queue_dfd: Deferred[Any]
    ) -> Coroutine[Any, Any, None]:
        # Counted now, while the scheduling pass is still deciding how many more fit; the
        # download itself adds it again (a set) and removes it when done.
        slot.transferring.add(request)
        return super()._wait_for_download(slot, request, queue_dfd)

    async def _download(self, slot: Slot, request: Request) -> Response:
        download = functools.partial(Downloader._download, self, slot, request)
        return await self.around_download(slot, request, download)

    async def around_download(self, slot: Slot, request: Request, download: Download) -> Response:
        """Run `download()` (the handler, then Scrapy's bookkeeping: `response_downloaded`
        listeners such as AutoThrottle have seen the response when it returns)."""
        return await download()
