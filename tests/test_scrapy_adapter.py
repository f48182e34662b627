"""Scrapy's internals we rely on (crawler/core/scrapy_adapter.py), checked on the installed Scrapy.

A Scrapy release that changes one of them fails here: on a real crawl (tests/support/
scrapy_probe.py), and by the adapter raising ScrapyIncompatible instead of guessing. The rest of
the product uses Scrapy's public API only; the last test keeps it that way.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from scrapy import Spider
from scrapy.core.downloader import Downloader
from scrapy.utils.test import get_crawler

from crawler.core import scrapy_adapter
from crawler.core.scrapy_adapter import ScrapyIncompatible, engine_of, is_closing, wake

ROOT = Path(__file__).resolve().parent.parent
PROBE_TIMEOUT_SECONDS = 60
ENGINE_HEARTBEAT_SECONDS = 5.0  # how late Scrapy would look at its scheduler without `wake`
PRIVATE_SCRAPY = re.compile(r"\._(engine|slot|parsers|download|wait_for_download|create_crawler)\b")


@pytest.fixture(scope="module")
def probe() -> dict[str, Any]:
    run = subprocess.run(
        [sys.executable, "-m", "tests.support.scrapy_probe"],
        cwd=ROOT, capture_output=True, text=True, timeout=PROBE_TIMEOUT_SECONDS, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_the_crawl_sees_no_engine_before_it_starts(probe: dict[str, Any]) -> None:
    assert probe["engine_before_crawl"] is False
    assert engine_of(get_crawler(Spider)) is None


def test_closing_is_false_while_running_and_true_from_the_close_on(probe: dict[str, Any]) -> None:
    assert probe["closing_while_running"] is False
    assert probe["closing_in_spider_closed"] is True  # the close started before the signal
    assert probe["closing_after_close"] is True


def test_a_woken_engine_sends_the_next_request_at_once(probe: dict[str, Any]) -> None:
    assert 0 <= probe["resumed_after"] < ENGINE_HEARTBEAT_SECONDS / 2, probe


def test_the_downloader_holds_the_per_domain_limit_without_a_delay(probe: dict[str, Any]) -> None:
    """Five slow pages of one host queued at once, CONCURRENT_REQUESTS_PER_DOMAIN = 1, no
    DOWNLOAD_DELAY: one download at a time (Scrapy alone starts the whole queue), and every
    download (robots.txt included) went through `around_download`."""
    assert probe["max_in_flight"] == 1, probe
    assert probe["around_download"] == 8  # robots.txt, 5 slow pages, first, second


def test_robots_parsed_hands_over_each_hosts_parser(probe: dict[str, Any]) -> None:
    assert probe["crawl_delay"] == 3.0  # what crawler/politeness.py reads crawl-delay from


def test_an_engine_without_its_slot_is_an_error_not_a_closing_crawl() -> None:
    changed = SimpleNamespace(running=True)  # a Scrapy that renamed or removed `_slot`
    with pytest.raises(ScrapyIncompatible, match=r"ExecutionEngine\._slot"):
        is_closing(changed)  # type: ignore[arg-type]
    with pytest.raises(ScrapyIncompatible, match=r"ExecutionEngine\._slot"):
        wake(changed)  # type: ignore[arg-type]
    no_closing = SimpleNamespace(running=True, _slot=SimpleNamespace(nextcall=None))
    with pytest.raises(ScrapyIncompatible, match="closing"):
        is_closing(no_closing)  # type: ignore[arg-type]
    no_wake = SimpleNamespace(running=True, _slot=SimpleNamespace(closing=None, nextcall=None))
    with pytest.raises(ScrapyIncompatible, match="nextcall"):
        wake(no_wake)  # type: ignore[arg-type]
    assert is_closing(None) and is_closing(SimpleNamespace(running=False))  # type: ignore[arg-type]


def test_a_changed_downloader_method_is_caught_at_import(monkeypatch: pytest.MonkeyPatch) -> None:
    scrapy_adapter._check_downloader()  # the installed Scrapy passes

    async def renamed_parameter(self: Any, slot: Any, req: Any) -> None: ...

    with monkeypatch.context() as patch:
        patch.setattr(Downloader, "_download", renamed_parameter)
        with pytest.raises(ScrapyIncompatible, match=r"Downloader\._download"):
            scrapy_adapter._check_downloader()
    with monkeypatch.context() as patch:
        patch.delattr(Downloader, "_wait_for_download")
        with pytest.raises(ScrapyIncompatible, match="_wait_for_download"):
            scrapy_adapter._check_downloader()


def test_only_the_adapter_touches_scrapys_internals() -> None:
    adapter = Path(scrapy_adapter.__file__).resolve()
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for package in ("crawler", "pipelines", "extractors", "settings")
        for path in sorted((ROOT / package).rglob("*.py"))
        if path.resolve() != adapter
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if PRIVATE_SCRAPY.search(line)
    ]
    assert not found, "\n".join(found)
