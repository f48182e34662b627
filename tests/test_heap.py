"""The garbage collector of a crawl process (crawler/core/heap.py): the start-up heap frozen when
the spider opens, the young generation's threshold set, collections counted, all undone on close."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.utils.test import get_crawler

from crawler.core.heap import STAT_COLLECTIONS, STAT_FROZEN, STAT_SECONDS, HeapTuning


@pytest.fixture
def collector_state() -> Iterator[None]:
    """Whatever a test does, the process's collector is left as it was."""
    thresholds, callbacks = gc.get_threshold(), list(gc.callbacks)
    yield
    gc.unfreeze()
    gc.set_threshold(*thresholds)
    gc.callbacks[:] = callbacks


def _tuning(**settings: object) -> tuple[HeapTuning, Crawler]:
    crawler = get_crawler(settings_dict=settings)
    crawler.stats.open_spider()
    return HeapTuning.from_crawler(crawler), crawler


@pytest.mark.usefixtures("collector_state")
def test_the_start_up_heap_is_frozen_and_young_collections_spaced_out_while_the_spider_runs() -> (
    None
):
    before = gc.get_threshold()
    tuning, crawler = _tuning(GC_FREEZE_ENABLED=True, GC_GEN0_THRESHOLD=12_345)
    tuning.spider_opened(None)
    assert gc.get_freeze_count() > 1_000  # this test process's modules, at least
    assert crawler.stats.get_value(STAT_FROZEN) == gc.get_freeze_count()
    assert gc.get_threshold() == (12_345, before[1], before[2])

    cycle: list[object] = []
    cycle.append(cycle)  # garbage only the cyclic collector frees
    del cycle
    gc.collect()
    assert crawler.stats.get_value(STAT_COLLECTIONS) >= 1
    assert crawler.stats.get_value(STAT_SECONDS) > 0

    tuning.spider_closed(None)
    assert gc.get_freeze_count() == 0
    assert gc.get_threshold() == before
    assert tuning._observe not in gc.callbacks
    counted = crawler.stats.get_value(STAT_COLLECTIONS)
    gc.collect()
    assert crawler.stats.get_value(STAT_COLLECTIONS) == counted  # no longer counted


@pytest.mark.usefixtures("collector_state")
def test_a_threshold_of_zero_keeps_pythons_and_freezing_can_be_switched_off() -> None:
    before = gc.get_threshold()
    tuning, crawler = _tuning(GC_FREEZE_ENABLED=True, GC_GEN0_THRESHOLD=0)
    tuning.spider_opened(None)
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() > 0
    gc.unfreeze()

    tuning, crawler = _tuning(GC_FREEZE_ENABLED=False, GC_GEN0_THRESHOLD=5_000)
    tuning.spider_opened(None)
    assert gc.get_freeze_count() == 0
    assert crawler.stats.get_value(STAT_FROZEN) is None
    assert gc.get_threshold()[0] == 5_000


def test_both_off_switches_the_extension_off_and_a_negative_threshold_is_refused() -> None:
    with pytest.raises(NotConfigured):
        _tuning(GC_FREEZE_ENABLED=False, GC_GEN0_THRESHOLD=0)
    with pytest.raises(ValueError, match="GC_GEN0_THRESHOLD"):
        _tuning(GC_FREEZE_ENABLED=True, GC_GEN0_THRESHOLD=-1)
