"""Failures the crawl survives (crawler/core/failures.py): each is counted, the first of each kind
is logged with its traceback, the rest of that kind one line per LOG_EVERY; and the components
that survive failures report them that way."""

from __future__ import annotations

import asyncio
import logging
import sys
from types import SimpleNamespace
from typing import Any

import pytest
from scrapy import Request
from scrapy.http import HtmlResponse
from scrapy.utils.test import get_crawler

from crawler.core.failures import LOG_EVERY, FailureLog
from crawler.core.outage import is_connection_error
from crawler.safety import NetworkPolicyMiddleware
from crawler.warc.capture import WarcCaptureMiddleware

log = logging.getLogger("tests.failures")


def raised(error: Exception) -> Exception:
    """`error` with a traceback, as a component catches it."""
    try:
        raise error
    except Exception as caught:
        return caught


def messages(caplog: pytest.LogCaptureFixture, start: str) -> list[logging.LogRecord]:
    return [record for record in caplog.records if record.getMessage().startswith(start)]


def test_the_first_failure_of_each_kind_is_logged_whole_and_every_one_counted(
    caplog: pytest.LogCaptureFixture,
) -> None:
    stats = get_crawler().stats
    failures = FailureLog(log, "probe/errors", "probe failed")
    for _ in range(2 * LOG_EVERY):
        failures.report(stats, raised(ConnectionError("Redis is down")), "a.test")
    failures.report(stats, raised(KeyError("a bug")))  # a new kind in the middle of an outage
    assert stats.get_value("probe/errors") == 2 * LOG_EVERY + 1 == failures.count
    logged = messages(caplog, "probe failed")
    whole = [record for record in logged if record.exc_info]
    assert [record.exc_info[0] for record in whole] == [ConnectionError, KeyError]
    assert whole[0].getMessage() == (
        "probe failed (a.test): ConnectionError: Redis is down (1 so far; counted in probe/errors)"
    )
    lines = [record for record in logged if not record.exc_info]
    assert len(lines) == 2  # the 30th and the 60th ConnectionError: one line each
    assert "(30 so far; the first of its kind was logged with its traceback)" in (
        lines[0].getMessage()
    )


def test_an_expected_error_is_one_line_even_the_first_time(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Redis unreachable: the outage gate says so in its own line; a traceback adds nothing."""
    failures = FailureLog(log, "probe/errors", "flush failed", plain=is_connection_error)
    failures.report(None, raised(ConnectionError("refused")))
    failures.report(None, raised(ValueError("a bug")))
    connection, bug = messages(caplog, "flush failed")
    assert connection.exc_info is None and "ConnectionError: refused (1 so far" in (
        connection.getMessage()
    )
    assert bug.exc_info is not None and bug.exc_info[0] is ValueError


def test_a_failure_in_another_process_is_logged_with_its_own_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    failures = FailureLog(log, "probe/errors", "worker step failed")
    text = 'Traceback (most recent call last):\n  File "w.py", line 3\nValueError: bad\n'
    failures.report_remote(None, "ValueError", "ValueError: bad", text, "job 7")
    failures.report_remote(None, "ValueError", "ValueError: bad", text, "job 8")
    (record,) = messages(caplog, "worker step failed")
    assert record.getMessage().endswith(f"(1 so far; counted in probe/errors)\n{text.rstrip()}")
    assert failures.count == 2


def test_a_warc_capture_that_fails_passes_the_response_on_counted_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class FullDisk:
        async def write(self, records: Any) -> None:
            raise OSError(28, "No space left on device")

    crawler = get_crawler()
    capture = WarcCaptureMiddleware(crawler, FullDisk(), decoded=True)  # type: ignore[arg-type]
    request = Request("http://a.test/1")
    response = HtmlResponse(request.url, body=b"<html>a</html>", request=request)
    for _ in range(2):
        assert asyncio.run(capture.process_response(request, response)) is response
    assert crawler.stats.get_value("warc/errors") == 2
    (record,) = messages(caplog, "WARC capture failed")
    assert record.exc_info is not None and "(http://a.test/1)" in record.getMessage()


def test_a_resolver_bug_before_a_request_is_counted_not_swallowed(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A name that does not resolve is the download's to report; anything else the resolver
    raises is a bug: the request goes on (the connection checks the address again), counted."""
    import twisted.internet
    from twisted.internet.defer import fail
    from twisted.internet.error import DNSLookupError

    crawler = get_crawler(settings_dict={"NETWORK_PUBLIC_ONLY": True})
    middleware = NetworkPolicyMiddleware.from_crawler(crawler)
    answers = iter([DNSLookupError("no such host"), RuntimeError("a resolver bug")])
    # A stand-in for the reactor's resolver (no reactor is installed in this process).
    resolver = SimpleNamespace(resolve=lambda *args: fail(next(answers)))
    monkeypatch.setitem(sys.modules, "twisted.internet.reactor", resolver)
    monkeypatch.setattr(twisted.internet, "reactor", resolver, raising=False)

    async def both() -> None:
        for host in ("unknown.news-site.com", "bug.news-site.com"):
            assert await middleware.process_request(Request(f"http://{host}/")) is None

    asyncio.run(both())
    assert crawler.stats.get_value("safety/resolve_errors") == 1  # the bug, not the DNS miss
    (record,) = messages(caplog, "resolving a host before its request failed")
    assert record.exc_info is not None and "(bug.news-site.com)" in record.getMessage()
