"""Driving an index sink outside a crawl, as Scrapy would: the sink tests and
`newsharvest bench sinks` share this so that both measure the production path."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from scrapy.statscollectors import StatsCollector

from newsharvest_bench.tcpproxy import TcpProxy

# Fault injections: before the item at an index starts, with every earlier item delivered.
Faults = dict[int, Callable[[], Awaitable[None]]]
# Items in the pipeline at once: Scrapy processes many concurrently (each waits for its batch's
# commit).
ITEMS_IN_FLIGHT = 256


def make_sink(sink_class: Any, state_dir: Path, **settings: Any) -> tuple[Any, StatsCollector]:
    """The sink as `from_crawler` builds it from the base settings plus `settings`."""
    from scrapy.utils.test import get_crawler

    import settings.base as base
    from settings.env import values_of

    values = values_of(base)
    values.update(STATE_DIR=str(state_dir), **settings)
    crawler = get_crawler(settings_dict=values)
    return sink_class.from_crawler(crawler), crawler.stats


async def feed(
    sink: Any,
    items: list[dict[str, Any]],
    faults: Faults | None = None,
    in_flight: int = ITEMS_IN_FLIGHT,
) -> None:
    """open_spider, process_item for each item (a copy) with up to `in_flight` items waiting
    at once, close_spider. `faults[i]` runs before item i starts, once every earlier item has
    left the sink, so that a fault lands between known deliveries."""
    await sink.open_spider()
    slots = asyncio.Semaphore(in_flight)

    async def process(item: dict[str, Any]) -> None:
        try:
            await sink.process_item(dict(item))
        finally:
            slots.release()

    tasks: list[asyncio.Task[None]] = []
    for index, item in enumerate(items):
        if faults and index in faults:
            await asyncio.gather(*tasks)
            await faults[index]()
        await slots.acquire()
        tasks.append(asyncio.create_task(process(item)))
    await asyncio.gather(*tasks)
    await sink.close_spider()


def outage(proxy: TcpProxy, count: int, settle_seconds: float) -> Faults:
    """Cut the connection path after a third of `count` items, restore it after two thirds and
    give the sink's reconnect timer `settle_seconds` to notice."""

    async def cut() -> None:
        proxy.stop()

    async def restore() -> None:
        proxy.start()
        await asyncio.sleep(settle_seconds)

    return {count // 3: cut, 2 * count // 3: restore}
