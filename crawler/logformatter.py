"""Log lines for dropped and failed items: the URL and the reason, never the item (it holds raw
HTML)."""

from __future__ import annotations

import logging
from typing import Any

from scrapy import logformatter
from scrapy.http import Response
from scrapy.spiders import Spider
from twisted.python.failure import Failure


class NewsLogFormatter(logformatter.LogFormatter):
    def dropped(
        self,
        item: Any,
        exception: BaseException,
        response: Response | Failure | None,
        spider: Spider,
    ) -> logformatter.LogFormatterResult:
        level = getattr(exception, "log_level", None) or logging.INFO
        return {
            "level": getattr(logging, level) if isinstance(level, str) else level,
            "msg": "Dropped: %(exception)s",
            "args": {"exception": exception},
        }

    def item_error(
        self,
        item: Any,
        exception: BaseException,
        response: Response | Failure | None,
        spider: Spider,
    ) -> logformatter.LogFormatterResult:
        """A stage raised: the traceback follows this line (Scrapy adds it), the item does not."""
        url = item.get("url") if hasattr(item, "get") else None
        return {
            "level": logging.ERROR,
            "msg": "Error processing %(url)s",
            "args": {"url": url or type(item).__name__},
        }
