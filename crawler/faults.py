"""Why a fetch failed, as one short stable word, and the log line and counters that say so.

Every failed request ends in one `errors/<reason>` counter of its publisher domain (see
crawler/core/domainstats.py) and one log line with the URL and the reason:

    http_<status>  timeout  too_large  decompression_bomb  bad_content_encoding  data_loss
    dns  connection_refused  connection_failed  redirect_loop  too_many_redirects
    refused_scheme  refused_host  refused_address  robots_txt  ignored  <ExceptionName>
"""

from __future__ import annotations

import gzip
import zlib
from urllib.parse import urlsplit

from scrapy import Request
from scrapy.exceptions import (
    CannotResolveHostError,
    DownloadCancelledError,
    DownloadConnectionRefusedError,
    DownloadFailedError,
    DownloadTimeoutError,
    IgnoreRequest,
    ResponseDataLossError,
    UnsupportedURLSchemeError,
)
from scrapy.spidermiddlewares.httperror import HttpError
from scrapy.statscollectors import StatsCollector
from twisted.internet import error as twisted_errors
from twisted.python.failure import Failure

from crawler.core.domainstats import ERRORS, inc_domain
from crawler.core.urls import canonical_article_url
from crawler.safety import (
    REFUSED_ADDRESS,
    REFUSED_HOST,
    REFUSED_SCHEME,
    AddressRefused,
    RequestRefused,
)

TIMEOUT = "timeout"
TOO_LARGE = "too_large"
DECOMPRESSION_BOMB = "decompression_bomb"
BAD_CONTENT_ENCODING = "bad_content_encoding"
DATA_LOSS = "data_loss"
DNS = "dns"
CONNECTION_REFUSED = "connection_refused"
CONNECTION_FAILED = "connection_failed"
REDIRECT_LOOP = "redirect_loop"
TOO_MANY_REDIRECTS = "too_many_redirects"
ROBOTS_TXT = "robots_txt"
IGNORED = "ignored"
# Failures that the same request would meet again: not worth a retry.
PERMANENT_REASONS = frozenset({
    TOO_LARGE, DECOMPRESSION_BOMB, REDIRECT_LOOP, TOO_MANY_REDIRECTS, REFUSED_SCHEME,
    REFUSED_HOST, REFUSED_ADDRESS,
})  # fmt: skip
MAX_DETAIL_CHARS = 200

# Scrapy's messages for the causes it reports only as IgnoreRequest / DownloadCancelledError.
_MAX_REDIRECTS_MESSAGE = "max redirections reached"
_ROBOTS_MESSAGE = "Forbidden by robots.txt"
_DECOMPRESSION_MESSAGE = "during decompression"
_COMPRESSION_MODULES = ("brotli", "_brotli", "backports", "compression", "zstd")
_SIMPLE_TYPES: tuple[tuple[tuple[type[BaseException], ...], str], ...] = (
    ((DownloadTimeoutError, twisted_errors.TimeoutError), TIMEOUT),
    ((ResponseDataLossError,), DATA_LOSS),
    ((CannotResolveHostError, twisted_errors.DNSLookupError), DNS),
    ((DownloadConnectionRefusedError, twisted_errors.ConnectionRefusedError), CONNECTION_REFUSED),
    (
        (DownloadFailedError, twisted_errors.ConnectError, twisted_errors.ConnectionLost),
        CONNECTION_FAILED,
    ),
    ((zlib.error, gzip.BadGzipFile, EOFError), BAD_CONTENT_ENCODING),
    ((UnsupportedURLSchemeError,), REFUSED_SCHEME),
)


def describe_failure(failure: Failure) -> tuple[str, str]:
    """(reason, detail) for a failed request: the reason is a counter name, the detail a short
    human explanation for the log line."""
    value = failure.value
    detail = " ".join(str(value).split())[:MAX_DETAIL_CHARS]
    if isinstance(value, HttpError):
        return _http_error(value)
    if isinstance(value, RequestRefused | AddressRefused):
        return value.reason, value.detail
    if isinstance(value, IgnoreRequest):
        return _ignored(value, getattr(failure, "request", None)), detail
    if isinstance(value, DownloadCancelledError):
        # Scrapy cancels a body that outgrows the size limit mid-stream without a message (and
        # one whose Content-Length announces it with one); nothing else cancels downloads.
        if not detail:
            detail = "body outgrew DOWNLOAD_MAXSIZE (or the request's download_maxsize)"
        return TOO_LARGE, detail
    for types, reason in _SIMPLE_TYPES:
        if isinstance(value, types):
            return reason, detail or type(value).__name__
    if type(value).__module__.split(".")[0] in _COMPRESSION_MODULES:
        return BAD_CONTENT_ENCODING, detail
    return type(value).__name__, detail


def _http_error(error: HttpError) -> tuple[str, str]:
    response = error.response
    location = response.headers.get("Location")
    if 300 <= response.status < 400 and location:
        target = location.decode("latin-1")
        scheme = urlsplit(target).scheme.lower()
        if scheme and scheme not in ("http", "https"):
            return REFUSED_SCHEME, f"redirect to {target[:MAX_DETAIL_CHARS]}, only http(s)"
    return f"http_{response.status}", f"HTTP {response.status}"


def _ignored(error: IgnoreRequest, request: Request | None) -> str:
    message = str(error)
    if _MAX_REDIRECTS_MESSAGE in message:
        looped = request is not None and in_redirect_loop(request)
        return REDIRECT_LOOP if looped else TOO_MANY_REDIRECTS
    if _DECOMPRESSION_MESSAGE in message:
        return DECOMPRESSION_BOMB
    if _ROBOTS_MESSAGE in message:
        return ROBOTS_TXT
    return IGNORED


def redirect_chain(request: Request) -> list[str]:
    """The URLs a request was redirected through, then its own."""
    return [*request.meta.get("redirect_urls", []), request.url]


def in_redirect_loop(request: Request) -> bool:
    """True when a redirect chain comes back to a URL it already visited."""
    seen = [_canonical(url) for url in redirect_chain(request)]
    return len(set(seen)) < len(seen)


def _canonical(url: str) -> str:
    try:
        return canonical_article_url(url)
    except ValueError:
        return url


def count_error(stats: StatsCollector, domain: str, reason: str) -> None:
    """The counters of one failed request: global and per publisher domain."""
    stats.inc_value(f"fetch/error/{reason}")
    inc_domain(stats, domain, ERRORS)
    inc_domain(stats, domain, f"{ERRORS}/{reason}")
