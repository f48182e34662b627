"""The `feeds` spider: poll feeds, fetch each listed article once, hand the raw page on.

scrapy crawl feeds -a feeds=feeds.txt            # one feed URL a line (# comments allowed)
scrapy crawl feeds -a feeds=http://a/rss,http://b/atom.xml
scrapy crawl feeds -a feeds=feeds.txt -a continuous=1 -s HARVEST_JOURNAL_PATH=out/articles.jsonl

One pass (the default) polls every feed once, conditionally, and ends when its articles are
done. Continuous mode stays alive and re-polls each feed at its own adaptive interval
(crawler/polling.py). Either way the ledger (crawler/ledger.py) decides what to fetch: an article
URL once, again only as a new version when its entry's `updated` date moves on, and a crash
neither loses nor repeats one (crawler/harvest.py, pipelines/journal.py).
"""

from __future__ import annotations

import logging
import random
import re
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import scrapy
from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.exceptions import DontCloseSpider, IgnoreRequest
from scrapy.http import Request, Response
from scrapy.spidermiddlewares.httperror import HttpError
from scrapy.utils.defer import deferred_from_coro
from twisted.internet import task
from twisted.python.failure import Failure
from w3lib.encoding import http_content_type_encoding

from crawler import polling
from crawler.core.domainstats import (
    FEED_ERRORS,
    FEEDS_NOT_MODIFIED,
    FEEDS_POLLED,
    FEEDS_UNCHANGED,
    FETCHED,
    inc_domain,
)
from crawler.core.failures import FailureLog
from crawler.core.filters import ArticleFilter, UrlRule, count_filtered
from crawler.core.items import ArticleItem
from crawler.core.outage import RedisUnavailable, is_connection_error
from crawler.core.scrapy_adapter import engine_of, wake
from crawler.core.urls import publisher_domain
from crawler.discovery import Discovery, gunzip_feed
from crawler.faults import PERMANENT_REASONS, count_error, describe_failure
from crawler.feedparse import Feed, FeedEntry, FeedError
from crawler.harvest import FeedPoller, Harvest, iso
from crawler.ledger import Claim, ForeignClaims
from crawler.polling import FeedState, PollPolicy

log = logging.getLogger(__name__)

# Feed requests go first: they discover the work.
FEED_PRIORITY = 100
# HTTP statuses after which an article is not tried again (gone, forbidden...).
FINAL_STATUSES = frozenset({400, 401, 403, 404, 405, 410, 451})
TRUE_WORDS = frozenset({"1", "true", "yes", "on"})
FEED_OPTIONS = ("include", "exclude")  # per-feed URL patterns in the feed list
# Feeds joined by ',' split only before the next URL: a pattern's own commas ({1,3}) stay.
_FEED_SEPARATOR = re.compile(r",(?=\s*https?://)")


def load_feed_list(feeds: str | None) -> list[str]:
    """Feed URLs from a file path (one a line, '#' comments) or a comma-separated string."""
    return [source.url for source in load_feed_sources(feeds)]


@dataclass(frozen=True)
class FeedSource:
    """A feed of the feed list, with its URL pattern (`include=REGEX exclude=REGEX`)."""

    url: str
    rule: UrlRule = field(default_factory=UrlRule)


def load_feed_sources(feeds: str | None) -> list[FeedSource]:
    """The feed list: a file path (one feed a line, '#' comments) or feeds joined by ','. A feed
    is its URL, then optionally `include=REGEX` and `exclude=REGEX` (each may repeat): only
    links an include pattern matches (if any is given) and no exclude pattern matches are
    fetched. Raises ValueError (FilterError for a bad pattern) with what is wrong."""
    if not feeds or not feeds.strip():
        raise ValueError("no feeds given: use -a feeds=PATH_OR_URLS (a file, or URLs joined by ,)")
    path = Path(feeds)
    if "://" not in feeds and path.is_file():
        lines = path.read_text(encoding="utf-8").splitlines()
    else:
        lines = _FEED_SEPARATOR.split(feeds)
    sources = [_feed_source(text) for line in lines if (text := line.split("#", 1)[0].strip())]
    bad = [source.url for source in sources if not source.url.startswith(("http://", "https://"))]
    if bad:
        raise ValueError(f"feed URLs must be http(s): {', '.join(bad[:5])}")
    if not sources:
        raise ValueError(f"no feed URLs in {feeds!r}")
    unique: dict[str, FeedSource] = {}
    for source in sources:
        unique.setdefault(source.url, source)  # a feed listed twice: its first line counts
    return list(unique.values())


def _feed_source(line: str) -> FeedSource:
    url, *options = line.split()
    patterns: dict[str, list[str]] = {name: [] for name in FEED_OPTIONS}
    for option in options:
        name, _, value = option.partition("=")
        if name not in FEED_OPTIONS or not value:
            raise ValueError(f"feed {url}: {option!r} is not include=REGEX or exclude=REGEX")
        patterns[name].append(value)
    return FeedSource(url, UrlRule.of(patterns["include"], patterns["exclude"]))


class FeedsSpider(scrapy.Spider):
    name = "feeds"

    def __init__(
        self, feeds: str | None = None, continuous: str | None = None, *args: Any, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        sources = load_feed_sources(feeds)
        self.feed_urls = [source.url for source in sources]
        # URL patterns by feed; feeds found from a feed (sitemaps of an index, feeds of a
        # homepage) inherit their parent's.
        self.url_rules: dict[str, UrlRule] = {s.url: s.rule for s in sources if s.rule}
        self.article_filter = ArticleFilter()
        self.continuous_argument = continuous
        self.continuous = False
        self.max_entries = 1_000
        self.max_feed_bytes = 8 * 1024 * 1024
        self.inflight: set[str] = set()  # article URLs requested by this process, not yet done
        self.polling: set[str] = set()  # feeds requested by this process, not yet answered
        self.rng = random.Random()
        self._loop: task.LoopingCall | None = None
        self._liveness: task.LoopingCall | None = None
        self._trust_heartbeats_at = 0.0  # monotonic: take nothing over before (see _beat)
        # A tick or a heartbeat that fails is retried at the next one: counted, and logged with
        # its traceback the first time (of each kind), not every second.
        self._tick_failures = FailureLog(log, "harvest/tick_errors",
                                         "continuous harvesting: tick failed (retrying)",
                                         plain=is_connection_error)  # fmt: skip
        self._beat_failures = FailureLog(log, "harvest/heartbeat_errors",
                                         "worker heartbeat failed (retrying)",
                                         plain=is_connection_error)  # fmt: skip
        self._next_maintenance = 0.0
        # One pass, shared ledger: before closing, what other workers still hold (see _idle).
        self._others: tuple[float, ForeignClaims] | None = None  # (monotonic, last look)
        self._looking = False  # a look under way
        self._look_call: Any = None  # its Deferred (kept referenced while it runs)
        self._wait_until: float | None = None  # monotonic end of the current wait, or None
        self._wait_logged = 0.0  # monotonic: when the wait was last logged
        self.wait_bound = 0.0  # seconds: see from_crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> FeedsSpider:
        spider = super().from_crawler(crawler, *args, **kwargs)
        settings = crawler.settings
        spider.max_entries = settings.getint("FEED_MAX_ENTRIES")
        spider.max_feed_bytes = settings.getint("FEED_MAX_BYTES")
        if spider.continuous_argument is None:
            spider.continuous = settings.getbool("HARVEST_CONTINUOUS")
        else:
            spider.continuous = str(spider.continuous_argument).strip().lower() in TRUE_WORDS
        spider.policy = PollPolicy.from_settings(settings)
        spider.tick = settings.getfloat("HARVEST_TICK_SECONDS")
        spider.maintenance_every = settings.getfloat("HARVEST_MAINTENANCE_SECONDS")
        spider.heartbeat_every = settings.getfloat("HEARTBEAT_SECONDS")
        spider.heartbeat_ttl = settings.getfloat("HEARTBEAT_TTL_SECONDS")
        # The longest a one-pass worker waits, idle, for what other workers hold: by then a dead
        # owner's heartbeat has lapsed (its claims taken over) and a live owner's claims have
        # run out their lease; one more heartbeat to look again.
        spider.wait_bound = (spider.heartbeat_ttl + settings.getfloat("HARVEST_CLAIM_LEASE_SECONDS")
                             + spider.heartbeat_every)  # fmt: skip
        spider.harvest = Harvest.of(crawler)
        spider.article_filter = ArticleFilter.from_settings(settings)
        screen = spider._screen if spider.article_filter or spider.url_rules else None
        spider.poller = FeedPoller(
            spider.harvest.state, spider.policy, spider.harvest.clock, spider.rng,
            spider.max_entries, screen,
        )  # fmt: skip
        spider.discovery = Discovery(spider, spider.max_feed_bytes)
        spider.harvest.on_done(spider._article_finished)
        crawler.signals.connect(spider._idle, signal=signals.spider_idle)
        crawler.signals.connect(spider._closed, signal=signals.spider_closed)
        if spider.continuous and settings.get("FEEDS"):
            log.warning("continuous mode with FEEDS (-o/-O): those files are buffered and written "
                        "on close; use HARVEST_JOURNAL_PATH for crash-safe output")  # fmt: skip
        return spider

    # --- start and the continuous loop ------------------------------------------------------

    async def start(self) -> AsyncIterator[Request]:
        state = await self.harvest.open()
        await state.register_feeds(self.feed_urls)
        now = self.harvest.clock.now()
        # A local store belongs to this process alone: whatever is pending, and every feed poll
        # under way, was cut off by a crash. A shared store hands back only claims whose lease
        # ran out (a worker died); what dead workers held comes back below.
        if self.harvest.single_process:
            await state.release_feed_polls(now)
        recovered = await state.recover(now, everything=self.harvest.single_process)
        self.crawler.stats.inc_value("harvest/recovered", len(recovered))
        if recovered:
            log.info("resuming %d pending article(s) from the last run", len(recovered))
        for claim in recovered:
            yield self.article_request(claim)
        if not self.harvest.single_process:
            # Alive first, then take over what gone workers (and this worker's last life) held.
            await state.heartbeat()
            for claim in await self._take_orphans(now):
                yield self.article_request(claim)
            self._liveness = task.LoopingCall(lambda: deferred_from_coro(self._beat()))
            self._liveness.start(self.heartbeat_every, now=False)
        if self.continuous:
            self._loop = task.LoopingCall(lambda: deferred_from_coro(self._tick()))
            self._loop.start(self.tick, now=True)
            return
        for url in list(self.feed_urls):
            yield self.feed_request(await state.load_feed(url))

    async def _tick(self) -> None:
        """Request the feeds that are due; now and then, retries and lost claims too."""
        if not self.harvest.available:
            return  # Redis is down and the crawl paused: nothing is due until it is back
        try:
            state = self.harvest.state
            now = self.harvest.clock.now()
            for url in await state.claim_due_feeds(now):
                if url not in self.polling:
                    self._crawl(self.feed_request(await state.load_feed(url)))
            if now >= self._next_maintenance:
                self._next_maintenance = now + self.maintenance_every * self._time_scale()
                for claim in await state.recover(now):
                    # Shared state: what this process requested may run in another worker
                    # (which then took its claim over); a copy handed out again is dropped.
                    if not self.harvest.single_process or claim.key not in self.inflight:
                        self.crawler.stats.inc_value("harvest/recovered")
                        self._crawl(self.article_request(claim))
                purged = await state.purge(now)
                self.crawler.stats.inc_value("harvest/forgotten", purged)
        except RedisUnavailable:
            return  # the crawl is closing during an outage
        except Exception as error:
            self._tick_failures.report(self.crawler.stats, error)

    async def _take_orphans(self, now: float) -> list[Claim]:
        orphans = await self.harvest.state.recover_orphans(now)
        stats = self.crawler.stats
        # A gone worker's claims its journal holds (done now), and those it had marked as being
        # output in a journal this host cannot read (handed out again: maybe in two journals).
        stats.inc_value("harvest/recovered/output", orphans.output)
        if orphans.unverified:
            stats.inc_value("harvest/recovered/unverified", orphans.unverified)
            log.warning("%d article(s) a gone worker was writing out are requested again: its "
                        "journal is not readable from this host", orphans.unverified)  # fmt: skip
        if orphans.claims or orphans.feeds:
            stats.inc_value("harvest/recovered/orphans", len(orphans.claims))
            stats.inc_value("harvest/recovered/feeds", orphans.feeds)
            gone = ", ".join(orphans.gone) or "-"
            log.info("took over %d article(s) and %d feed poll(s) of gone worker(s) %s",
                     len(orphans.claims), orphans.feeds, gone)  # fmt: skip
        # Not filtered by self.inflight: that names what this process requested, and another
        # worker may have popped it since; what was taken over was held by another owner.
        return orphans.claims

    async def _beat(self) -> None:
        """Heartbeat, then take over what workers without one held (feed polls become due, the
        continuous loop requests them)."""
        if not self.harvest.available:
            return  # Redis is down: nobody can take anything over now
        try:
            if not await self.harvest.state.heartbeat():
                # This worker's own heartbeat had lapsed (a Redis outage, a stalled reactor):
                # the others' may have too, and they are not dead. Give them a TTL to beat.
                self._trust_heartbeats_at = time.monotonic() + self.heartbeat_ttl
                log.warning("this worker's heartbeat had lapsed; taking nothing over for %.0f s",
                            self.heartbeat_ttl)  # fmt: skip
            if time.monotonic() < self._trust_heartbeats_at:
                return
            for claim in await self._take_orphans(self.harvest.clock.now()):
                self._crawl(self.article_request(claim))
            if self._wait_until is not None:  # idle, waiting for other workers: look again
                self._look_at_others()
        except RedisUnavailable:
            return
        except Exception as error:
            self._beat_failures.report(self.crawler.stats, error)

    def _time_scale(self) -> float:
        return float(getattr(self.harvest.clock, "scale", 1.0))

    def _crawl(self, request: Request) -> None:
        engine = engine_of(self.crawler)  # None before the crawl starts
        if engine is not None:
            self._wait_until, self._others = None, None  # work again: a later idle looks anew
            engine.crawl(request)

    def _idle(self) -> None:
        if self.continuous or self._waits_for_others():
            raise DontCloseSpider

    def _waits_for_others(self) -> bool:
        """One pass on a shared ledger, nothing left of this worker's own: close only once no
        other worker holds work not done yet. A live one's is waited for (it may still be
        killed: its claims would then be this worker's to take over), a gone one's is taken
        over by the heartbeat (_beat) as soon as its owner's heartbeat lapses; at most
        `wait_bound` seconds. The idle signal cannot wait for Redis: the first idle starts a
        look and keeps the spider open; the look's answer wakes the engine, whose next idle
        decides. Looks come at most once a heartbeat (and at Scrapy's own idle heartbeat)."""
        if self.harvest.single_process or not self.harvest.available:
            return False
        now = time.monotonic()
        if self._wait_until is not None and now >= self._wait_until:
            log.warning("closing although other workers still hold work: waited %.0f s for it "
                        "(HEARTBEAT_TTL_SECONDS + HARVEST_CLAIM_LEASE_SECONDS + HEARTBEAT_SECONDS)",
                        self.wait_bound)  # fmt: skip
            self.crawler.stats.inc_value("harvest/wait_others/gave_up")
            return False
        looked, self._others = self._others, None
        if looked is None or now - looked[0] > self.heartbeat_every:  # none, or a stale one
            self._look_at_others()
            return True
        others = looked[1]
        if not others:
            if self._wait_until is not None:
                log.info("other workers' work is done or taken over: closing")
            return False
        if self._wait_until is None:
            self._wait_until = now + self.wait_bound
            self.crawler.stats.inc_value("harvest/wait_others")
        if now - self._wait_logged >= self.heartbeat_every:
            self._wait_logged = now
            log.info("one pass done here, not closing yet: %d claim(s) of %d live worker(s), "
                     "%d of %d worker(s) without a heartbeat (taken over once it lapses)%s; "
                     "waiting at most %.0f s more", others.live, others.live_owners,
                     others.gone, others.gone_owners,
                     " (lower bounds: not all looked at)" if others.partial else "",
                     self._wait_until - now)  # fmt: skip
        return True

    def _look_at_others(self) -> None:
        """Look at what other workers hold (one Redis call), then wake the engine to decide."""
        if not self._looking:
            self._looking = True
            self._look_call = deferred_from_coro(self._look())

    async def _look(self) -> None:
        others = ForeignClaims()  # a failed look closes as before: nothing known to wait for
        try:
            others = await self.harvest.state.foreign_claims()
        except RedisUnavailable:
            pass
        except Exception as error:
            self._beat_failures.report(self.crawler.stats, error)
        finally:
            self._others, self._looking = (time.monotonic(), others), False
        wake(engine_of(self.crawler))

    def _closed(self) -> None:
        for loop in (self._loop, self._liveness):
            if loop is not None and loop.running:
                loop.stop()

    # --- feeds ------------------------------------------------------------------------------

    def feed_request(self, state: FeedState) -> Request:
        self.polling.add(state.url)
        return Request(
            state.url,
            callback=self.parse_feed,
            errback=self.on_feed_error,
            priority=FEED_PRIORITY,
            dont_filter=True,  # a feed is polled again and again; the ledger dedupes articles
            headers=polling.conditional_headers(state),
            meta={
                "feed_url": state.url,
                "feed_state": state.to_json(),
                "download_maxsize": self.max_feed_bytes,
                "handle_httpstatus_list": [304],  # a 304 is an answer, not an error
            },
        )

    async def parse_feed(self, response: Response) -> AsyncIterator[Request]:
        feed_url = response.meta["feed_url"]
        self.polling.discard(feed_url)
        state = FeedState.from_json(response.meta["feed_state"])
        names = ("ETag", "Last-Modified", "Content-Location")
        headers = {name: _header(response, name.encode()) for name in names}
        try:
            body = gunzip_feed(response.body, self.max_feed_bytes)
        except FeedError as error:
            result = await self.poller.failed(state, error)
        else:
            result = await self.poller.handle(state, response.status, headers, body, response.url)
        domain = publisher_domain(feed_url)
        stats = self.crawler.stats
        inc_domain(stats, domain, FEEDS_POLLED)
        stats.inc_value(f"feeds/outcome/{result.outcome}")
        if result.outcome == polling.NOT_MODIFIED:
            stats.inc_value("feeds/not_modified")
            inc_domain(stats, domain, FEEDS_NOT_MODIFIED)
        elif result.outcome in (polling.UNCHANGED_BODY, polling.UNCHANGED_ENTRIES):
            stats.inc_value("feeds/unchanged")
            inc_domain(stats, domain, FEEDS_UNCHANGED)
        if result.error is not None:
            for request in self._feed_failed(feed_url, domain, result.error):
                yield request
        feed = result.feed
        if feed is not None and result.outcome == polling.CHANGED:
            stats.inc_value(f"feeds/format/{feed.format}")
            self._report_damage(feed_url, domain, feed)
            subfeeds = self.discovery.wanted_subfeeds(feed_url, feed, self._cutoff())
            for subfeed in await self._add_feeds(subfeeds, parent=feed_url):
                yield subfeed
        for claim in result.filtered:
            count_filtered(stats, publisher_domain(claim.key), claim.filtered, before_fetch=True)
        stats.inc_value("harvest/claimed", len(result.claims))
        revisions = sum(1 for claim in result.claims if claim.version > 1)
        if revisions:
            stats.inc_value("harvest/claimed/revision", revisions)
        for claim in result.claims:
            yield self.article_request(claim)

    def _report_damage(self, feed_url: str, domain: str, feed: Feed) -> None:
        """Log and count what was wrong with a feed that was still read."""
        stats = self.crawler.stats
        if feed.repairs:
            log.info("feed %s is broken, recovered %d entries (%s)", feed_url,
                     len(feed.entries), ", ".join(feed.repairs))  # fmt: skip
            for repair in feed.repairs:
                stats.inc_value(f"feeds/repaired/{repair}")
                inc_domain(stats, domain, f"feeds/repaired/{repair}")
        if feed.truncated:
            log.warning("feed %s has %d entries; read the first %d (FEED_MAX_ENTRIES)", feed_url,
                        feed.total_entries, self.max_entries)  # fmt: skip
            stats.inc_value("feeds/truncated")
            inc_domain(stats, domain, "feeds/truncated")
        if feed.skipped:
            inc_domain(stats, domain, "feeds/entries_skipped", feed.skipped)

    def _feed_failed(self, feed_url: str, domain: str, error: FeedError) -> list[Request]:
        log.warning("not a usable feed: %s (%s)", feed_url, error)
        self.crawler.stats.inc_value(f"feeds/error/{error.reason}")
        inc_domain(self.crawler.stats, domain, FEED_ERRORS)
        inc_domain(self.crawler.stats, domain, f"{FEED_ERRORS}/{error.reason}")
        # An HTML page that advertises its feeds: follow them (autodiscovery); one that
        # advertises none: look for its sitemaps (crawler/discovery.py).
        if error.reason == "html_not_feed" and not error.alternates:
            return self.discovery.start(feed_url)
        requests = []
        for alternate in error.alternates:
            if alternate not in self.feed_urls:
                self.feed_urls.append(alternate)
                self._inherit_rule(alternate, feed_url)
                requests.append(self.feed_request(FeedState(url=alternate)))
        return requests

    async def _add_feeds(self, urls: list[str], parent: str) -> list[Request]:
        """Feeds found while polling (sitemap indexes) or discovered (a site's sitemaps): known
        from now on, polled at once in one-pass mode, when due in continuous mode."""
        new = await self._adopt_feeds(urls, parent)
        if self.continuous:
            return []
        return [self.feed_request(FeedState(url=url)) for url in new]

    async def _adopt_feeds(self, urls: list[str], parent: str) -> list[str]:
        """Make feeds known (with their parent's URL pattern); returns those that were not."""
        new = [url for url in dict.fromkeys(urls) if url not in self.feed_urls]
        self.feed_urls += new
        for url in new:
            self._inherit_rule(url, parent)
        await self.harvest.state.register_feeds(new)
        return new

    def _inherit_rule(self, url: str, parent: str) -> None:
        if parent in self.url_rules:
            self.url_rules.setdefault(url, self.url_rules[parent])

    # --- filters ----------------------------------------------------------------------------

    def _screen(self, feed_url: str, entry: FeedEntry) -> str | None:
        """Why an entry of this feed is not worth fetching (crawler/core/filters.py), or None."""
        return self.article_filter.before_fetch(
            entry.link, entry.language, entry.published, self.harvest.clock.now(),
            self.url_rules.get(feed_url),
        )  # fmt: skip

    def _cutoff(self) -> float | None:
        return self.article_filter.cutoff(self.harvest.clock.now())

    async def on_feed_error(self, failure: Failure) -> None:
        request = failure.request  # type: ignore[attr-defined]
        self.polling.discard(request.meta["feed_url"])
        reason = self._count_error(failure)
        domain = publisher_domain(request.meta["feed_url"])
        inc_domain(self.crawler.stats, domain, FEED_ERRORS)
        inc_domain(self.crawler.stats, domain, f"{FEED_ERRORS}/{reason}")
        await self.poller.failed(FeedState.from_json(request.meta["feed_state"]))
        self.crawler.stats.inc_value(f"feeds/outcome/{polling.ERROR}")

    # --- discovery: a site's sitemaps (crawler/discovery.py) ------------------------------

    async def parse_robots(self, response: Response) -> AsyncIterator[Request]:
        for request in await self.discovery.robots(response):
            yield request

    def on_robots_error(self, failure: Failure) -> list[Request]:
        # No robots.txt (or none readable): the usual locations then.
        return self.discovery.probes(failure.request.meta["discover_for"])  # type: ignore[attr-defined]

    async def parse_probe(self, response: Response) -> AsyncIterator[Request | ArticleItem]:
        # A usual location that is a sitemap: adopted as a feed, this answer its first poll.
        if await self.discovery.probe(response):
            async for request in self.parse_feed(response):
                yield request

    def on_probe_error(self, failure: Failure) -> None:
        self.discovery.probe_failed(failure)

    # --- articles ---------------------------------------------------------------------------

    def article_request(self, claim: Claim) -> Request:
        self.inflight.add(claim.key)
        return Request(
            claim.key,
            callback=self.parse_article,
            errback=self.on_article_error,
            dont_filter=True,  # claimed in the ledger: exactly what to fetch, and once
            cb_kwargs={
                "feed_url": claim.payload.get("feed_url"),
                "entry": claim.payload.get("entry") or {},
            },
            meta={"harvest": {"key": claim.key, "version": claim.version,
                              "updated": claim.updated, "g": claim.generation}},
        )  # fmt: skip

    async def parse_article(
        self, response: Response, feed_url: str, entry: dict[str, Any]
    ) -> AsyncIterator[ArticleItem]:
        claim = response.meta["harvest"]
        if await self.harvest.state.is_done(claim["key"], claim["version"]):
            # Handed out twice (its lease ran out while it waited in a long queue) and the
            # other copy finished first: output it once.
            self.inflight.discard(claim["key"])
            self.crawler.stats.inc_value("harvest/already_done")
            return
        domain = publisher_domain(response.url)
        inc_domain(self.crawler.stats, domain, FETCHED)
        self._note_offsite_redirect(response, domain)
        yield article_item(
            url=response.url,
            body=response.body,
            content_type=response.headers.get("Content-Type", b"").decode("latin-1"),
            feed_url=feed_url,
            entry=entry,
            claim=claim,
            fetched_at=datetime.now(UTC),
        )

    async def on_article_error(self, failure: Failure) -> None:
        request = failure.request  # type: ignore[attr-defined]
        reason = self._count_error(failure)
        claim = request.meta["harvest"]
        self.inflight.discard(claim["key"])
        now = self.harvest.clock.now()
        if failure.check(HttpError):
            final = failure.value.response.status in FINAL_STATUSES
        else:
            final = bool(failure.check(IgnoreRequest))  # e.g. robots.txt forbids it
        final = final or reason in PERMANENT_REASONS  # e.g. over DOWNLOAD_MAXSIZE
        if final:
            await self.harvest.state.done(claim["key"], claim["version"], now)  # never mind
            self.crawler.stats.inc_value("harvest/given_up")
            log.info("not fetching %s again (%s)", request.url, reason)
            return
        # A failed fetch has no article to keep: its give-up is counted (harvest/given_up),
        # now or when an outage's outbox stores the mark (DEFERRED).
        outcome = await self.harvest.state.fail(claim["key"], claim["version"], now)
        await self.harvest.failed_mark_stored(outcome, None)

    def _article_finished(self, item: Any, stored: bool) -> None:
        key = item.get("entry_url") if hasattr(item, "get") else None
        if key:
            self.inflight.discard(key)

    def _note_offsite_redirect(self, response: Response, domain: str) -> None:
        """Redirects to another host are followed; the article belongs to the final host, and
        the host that redirected counts it (feeds that point through link shorteners)."""
        chain = response.meta.get("redirect_urls")
        if not chain or (origin := publisher_domain(chain[0])) == domain:
            return
        self.crawler.stats.inc_value("fetch/redirect/offsite")
        inc_domain(self.crawler.stats, origin, "redirects/offsite")
        log.info("article %s redirected to another host: %s", chain[0], response.url)

    def _count_error(self, failure: Failure) -> str:
        """Count and log a failed request under its reason (crawler/faults.py)."""
        request = failure.request  # type: ignore[attr-defined]
        reason, detail = describe_failure(failure)
        # A failure belongs to the publisher whose URL was requested (before any redirect); a
        # link refused outright belongs to the feed that listed it.
        chain = request.meta.get("redirect_urls") or [request.url]
        domain = publisher_domain(chain[0])
        feed_url = request.cb_kwargs.get("feed_url")
        if reason.startswith("refused_") and len(chain) == 1 and feed_url:
            domain = publisher_domain(feed_url)
        count_error(self.crawler.stats, domain, reason)
        if len(chain) > 1:
            detail += f"; redirected to {request.url}"
        log.warning("fetch failed: %s (%s: %s)", chain[0], reason, detail)
        return reason


def article_item(
    *,
    url: str,
    body: bytes,
    content_type: str,
    feed_url: str | None,
    entry: dict[str, Any],
    claim: dict[str, Any],
    fetched_at: datetime,
) -> ArticleItem:
    """The item of a fetched article page, as every stage expects it: the one place it is
    built, for a fetch (`parse_article`) and for a replayed archive record alike
    (crawler/spiders/replay.py). `claim` holds the ledger identity: key, version, updated."""
    return ArticleItem(
        url=url,
        domain=publisher_domain(url),
        feed_url=feed_url,
        guid=entry.get("guid"),
        fetched_at=fetched_at.astimezone(UTC).isoformat(timespec="seconds"),
        entry_url=claim["key"],
        version=claim["version"],
        updated=iso(claim.get("updated")),
        html=body,
        http_encoding=http_content_type_encoding(content_type),
        feed_entry=entry,
        duplicate_of=None,
    )


def _header(response: Response, name: bytes) -> str | None:
    value = response.headers.get(name)
    return value.decode("latin-1") if value else None
