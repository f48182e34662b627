"""`scrapy crawl`, exiting with status 69 (EX_UNAVAILABLE) when a backend stopped the crawl, 74
(EX_IOERR) when the journal could not be written (pipelines/journal.py).

Scrapy's own command exits 0 however the crawl ended (1 only if it could not start at all); a
supervisor that restarts crawls needs to tell "Redis or PostgreSQL is unreachable: try again
later" (crawler/core/outage.py) from a finished crawl.

The settings are checked once `-s` is applied, before Scrapy configures logging or builds the
crawler (settings/check.py): an unknown name in our namespaces or a value out of range exits
with status 2 and one line each; a renamed name is carried over with one warning. So does a feed
list the feeds spider cannot read (e.g. an invalid include=/exclude= pattern).
"""

from __future__ import annotations

import argparse

from scrapy.commands.crawl import Command as ScrapyCrawlCommand
from scrapy.exceptions import UsageError

from crawler.core.journal_files import EXIT_JOURNAL_UNWRITABLE, JOURNAL_UNWRITABLE
from crawler.core.outage import BACKEND_UNAVAILABLE, EXIT_BACKEND_UNAVAILABLE
from crawler.core.setting_values import VALUE_CHECKS
from crawler.core.unstored import EXIT_OUTPUT_UNSTORED, OUTPUT_UNSTORED
from crawler.spiders.feeds import FeedsSpider, load_feed_sources
from settings.check import enforce


def check_feed_list(feeds: str | None) -> None:
    """A feed list that cannot be read (no feeds, a bad URL, an invalid include/exclude pattern)
    is a usage error: one line and exit status 2, before anything starts."""
    try:
        load_feed_sources(feeds)
    except ValueError as error:
        raise UsageError(f"-a feeds: {error}", print_help=False) from None


class Command(ScrapyCrawlCommand):
    def process_options(self, args: list[str], opts: argparse.Namespace) -> None:
        super().process_options(args, opts)
        assert self.settings is not None
        enforce(self.settings, "scrapy crawl", value_checks=VALUE_CHECKS)

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        if len(args) != 1:
            raise UsageError("give one spider name: scrapy crawl feeds -a feeds=...")
        if args[0] == FeedsSpider.name:
            check_feed_list(opts.spargs.get("feeds"))
        assert self.crawler_process
        crawler = self.crawler_process.create_crawler(args[0])
        self.crawler_process.crawl(crawler, **opts.spargs)
        self.crawler_process.start()
        if self.crawler_process.bootstrap_failed:
            self.exitcode = 1
        elif crawler.stats.get_value("finish_reason") == BACKEND_UNAVAILABLE:
            self.exitcode = EXIT_BACKEND_UNAVAILABLE
        elif crawler.stats.get_value("finish_reason") == JOURNAL_UNWRITABLE:
            self.exitcode = EXIT_JOURNAL_UNWRITABLE
        elif crawler.stats.get_value("finish_reason") == OUTPUT_UNSTORED:
            self.exitcode = EXIT_OUTPUT_UNSTORED
