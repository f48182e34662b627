"""`scrapy crawl`, exiting with status 69 (EX_UNAVAILABLE) when a backend stopped the crawl.

Scrapy's own command exits 0 however the crawl ended (1 only if it could not start at all); a
supervisor that restarts crawls needs to tell "Redis or PostgreSQL is unreachable: try again
later" (crawler/core/outage.py) from a finished crawl.

The settings are checked once `-s` is applied, before Scrapy configures logging or builds the
crawler (settings/check.py): an unknown name in our namespaces or a value out of range exits
with status 2 and one line each; a renamed name is carried over with one warning.
"""

from __future__ import annotations

import argparse

from scrapy.commands.crawl import Command as ScrapyCrawlCommand
from scrapy.exceptions import UsageError

from crawler.core.outage import BACKEND_UNAVAILABLE, EXIT_BACKEND_UNAVAILABLE
from settings.check import enforce


class Command(ScrapyCrawlCommand):
    def process_options(self, args: list[str], opts: argparse.Namespace) -> None:
        super().process_options(args, opts)
        assert self.settings is not None
        enforce(self.settings, "scrapy crawl")

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if len(args) != 1:
            raise UsageError("give one spider name: scrapy crawl feeds -a feeds=...")
        assert self.crawler_process
        crawler = self.crawler_process.create_crawler(args[0])
        self.crawler_process.crawl(crawler, **opts.spargs)
        self.crawler_process.start()
        if self.crawler_process.bootstrap_failed:
            self.exitcode = 1
        elif crawler.stats.get_value("finish_reason") == BACKEND_UNAVAILABLE:
            self.exitcode = EXIT_BACKEND_UNAVAILABLE
