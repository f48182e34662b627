"""`Newsroom`: the catalog of synthetic publishers and the pure `render(host, path)` router.

Page metadata and true article blocks are built eagerly (they are the ground truth tests and
benchmarks compare against); HTML and feeds are rendered lazily and memoised, so a room with
thousands of pages builds in about a second.
"""

from __future__ import annotations

import bisect
import hashlib
import random
import re
import threading
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from email.utils import format_datetime
from functools import lru_cache
from urllib.parse import parse_qsl, urlencode, urlsplit

from .chrome import PRIVATE_PATH, RenderContext, esc, modified_time
from .clock import FixtureClock, ScaledClock
from .feedgen import newest, render_feed
from .layouts import LAYOUTS
from .model import ARTICLE, BASE_DATE, TABLE_CELL_SEPARATOR, Block, Page, Site
from .redesign import render_redesigned
from .sites import ExtraSite, Response, load_site
from .styles import (
    FEED_CONTENT_TYPES,
    STYLES,
    FeedSpec,
    Style,
    build_sites,
    features_for,
    has_schema_body,
    notices_for,
    page_path,
    slugify,
)
from .textgen import TOPICS, Cast, TextGenerator

DEFAULT_DOMAINS = 5
DEFAULT_ARTICLES_PER_DOMAIN = 8

# --- Timeline
HOURS_BETWEEN_PAGES = (1.5, 14.0)  # a site publishes every few hours, newest at BASE_DATE
FIRST_PAGE_LAG_HOURS = (0.0, 2.0)
SYNDICATION_DELAY_MINUTES = (20, 480)  # how long after the original a copy goes up
PAGE_ID_STRIDE = 100_000  # page ids of site i live in [i * stride, (i + 1) * stride)

# --- Article shape
ARTICLE_PARAGRAPHS = (4, 12)
AUTHORS_PER_ARTICLE = (1, 2)
CAPTION_SHARE = 0.5  # articles with a photo and caption
HEADING_SHARE = 0.4  # of articles long enough for a subheading
HEADING_MIN_PARAGRAPHS = 6
LIST_SHARE = 0.25
LIST_ITEMS = (3, 5)
QUOTE_BLOCK_SHARE = 0.25
TABLE_SHARE = 0.12
TABLE_ROWS = (3, 5)

# --- Syndication (aggregator styles)
MIN_COPIES = 4  # WireWatch republishes 4 stories in the default room
COPY_SHARE = 0.25  # ... and a quarter of its articles at scale
RECENT_POOL_SHARE = 0.2  # aggregators pick from the newest fifth of a source's stories
MIN_RECENT_POOL = 4
TRIM_SHARE = 0.5  # copies that drop one middle paragraph
TRIM_MIN_PARAGRAPHS = 5
WORD_CHANGE_SHARE = 0.6  # copies where an editor changed one word
COPY_SYNONYMS = (
    ("said", "says"),
    ("officials", "authorities"),
    ("percent", "per cent"),
    ("residents", "locals"),
    ("would", "will"),
    ("million", "mln"),
)
HAND_SYNDICATION_SOURCES = ("dailyherald.test", "valleytimes.test")

# --- Live publishing (pages that appear as the room's clock moves on)
LIVE_ID_OFFSET = 50_000  # live page ids of site i start at i * PAGE_ID_STRIDE + this
UPDATE_NOTE_PREFIX = "Update:"  # a revision appends a paragraph starting with this

RENDER_CACHE_SIZE = 1024  # rendered bodies kept; each is 20-60 KB
TRACKING_PREFIXES = ("utm_",)
HTML_404 = (
    "<!DOCTYPE html><html><head><title>404 Not Found</title></head><body>"
    "<h1>Not Found</h1><p>The requested URL was not found on this server.</p></body></html>\n"
)


@dataclass
class LiveSchedule:
    """A site that publishes a new article every `interval`, the next one at `next_at`."""

    interval: timedelta
    next_at: datetime


class Newsroom:
    """Synthetic publisher domains with their feeds, pages and true article text."""

    def __init__(
        self,
        seed: int = 1,
        n_domains: int = DEFAULT_DOMAINS,
        articles_per_domain: int = DEFAULT_ARTICLES_PER_DOMAIN,
        feed_limit: int | None = None,
        clock: FixtureClock | ScaledClock | None = None,
        render_cache_size: int | None = RENDER_CACHE_SIZE,
        extra_sites: Sequence[ExtraSite] = (),
        hostile: bool = False,
    ) -> None:
        if n_domains < 1 or articles_per_domain < 1:
            raise ValueError("n_domains and articles_per_domain must be positive")
        self.seed = seed
        self._lock = threading.RLock()  # the server's threads render while a test publishes
        self._generation = 0  # bumped by every publication/revision: keys the render cache
        self._live: dict[str, LiveSchedule] = {}
        self._live_count: dict[str, int] = {}
        self._ignores_conditional: set[str] = set()
        self.articles_per_domain = articles_per_domain
        self.feed_limit = feed_limit
        site_list = build_sites(n_domains)
        self.sites: dict[str, Site] = {site.domain: site for site in site_list}
        self.domains: list[str] = [site.domain for site in site_list]
        self._site_pages: dict[str, list[Page]] = {}
        # Originals first: aggregators copy stories that must already exist.
        ordered = sorted(site_list, key=lambda s: STYLES[s.style].aggregator)
        for site in ordered:
            index = self.domains.index(site.domain)
            self._site_pages[site.domain] = self._build_site(site, index)
        self.pages: dict[str, Page] = {
            page.url: page for domain in self.domains for page in self._site_pages[domain]
        }
        self._feeds: dict[str, tuple[Site, FeedSpec]] = {
            site.base_url + spec.path: (site, spec)
            for site in site_list
            for spec in STYLES[site.style].feeds
        }
        # "Now" for the publishers: feeds list, and the server serves, only pages published by
        # then. The default clock stands still when every built page is out (syndicated copies
        # may go up a few hours after BASE_DATE).
        newest_built = max(page.published for page in self.pages.values())
        self.clock = clock or FixtureClock(max(BASE_DATE, newest_built))
        self._network_articles: list[Page] | None = None
        self._publish_times = sorted(page.published for page in self.pages.values())
        # None keeps every rendered body (benchmarks pre-render so serving costs ~nothing).
        self._render_cached = lru_cache(maxsize=render_cache_size)(self._render_generation)
        if hostile:
            warnings.warn(
                "Newsroom(hostile=True) is deprecated: pass "
                "extra_sites=[load_site('hostile', seed)] (crawler.newsroom.sites)",
                DeprecationWarning,
                stacklevel=2,
            )
            extra_sites = [*extra_sites, load_site("hostile", seed)]
        # Plugin sites (e.g. the hostile cases): served only when given, and kept out of
        # `domains`, `pages` and `feed_urls` (their ground truth is their own).
        self.extra_sites: dict[str, ExtraSite] = {}
        self._extra_by_domain: dict[str, ExtraSite] = {}
        for extra in extra_sites:
            self._add_extra_site(extra)

    def _add_extra_site(self, extra: ExtraSite) -> None:
        taken = [d for d in extra.domains if d in self.sites or d in self._extra_by_domain]
        if extra.name in self.extra_sites or taken:
            raise ValueError(f"site {extra.name!r} clashes with one already served: {taken}")
        self.extra_sites[extra.name] = extra
        self._extra_by_domain.update(dict.fromkeys(extra.domains, extra))

    @property
    def hostile(self) -> ExtraSite | None:
        """Deprecated: `extra_sites.get("hostile")`."""
        warnings.warn(
            'Newsroom.hostile is deprecated: use Newsroom.extra_sites.get("hostile")',
            DeprecationWarning,
            stacklevel=2,
        )
        return self.extra_sites.get("hostile")

    # -- catalog -----------------------------------------------------------------------------

    @property
    def feed_urls(self) -> list[str]:
        return list(self._feeds)

    def articles(self) -> list[Page]:
        return [page for page in self.pages.values() if page.kind == ARTICLE]

    def non_articles(self) -> list[Page]:
        return [page for page in self.pages.values() if page.kind != ARTICLE]

    def pages_on(self, domain: str) -> list[Page]:
        """A site's pages (live ones published by now included), newest first."""
        with self._lock:
            self._sync()
            return list(self._site_pages[domain])

    def style_of(self, domain: str) -> Style:
        return STYLES[self.sites[domain].style]

    def feed_entries(self, domain: str) -> list[Page]:
        """What the site's feeds list now: published pages, newest first, up to feed_limit."""
        with self._lock:
            self._sync()
        now = self.clock.now()
        pages = [p for p in self._site_pages[domain] if p.published <= now]
        return pages if self.feed_limit is None else pages[: self.feed_limit]

    # -- live publishing ---------------------------------------------------------------------

    def publish_every(
        self, domain: str, interval: timedelta | None, first: datetime | None = None
    ) -> None:
        """From now on `domain` publishes a new article every `interval` (None stops it), the
        first at `first` (default: one interval from now). Calling it again changes the rate."""
        if domain not in self.sites:
            raise KeyError(domain)
        with self._lock:
            self._sync()
            if interval is None:
                self._live.pop(domain, None)
                return
            if interval <= timedelta(0):
                raise ValueError("interval must be positive")
            start = first or self.clock.now() + interval
            self._live[domain] = LiveSchedule(interval, start)

    def publish(self, domain: str, when: datetime | None = None) -> Page:
        """Publish one new article on `domain` at `when` (default: now); returns its page.
        A page published in the future stays unlisted and unservable until the clock gets there.
        """
        with self._lock:
            self._sync()
            return self._publish(domain, when or self.clock.now())

    def revise(self, url: str, when: datetime | None = None) -> Page:
        """The editors update an article: a paragraph is appended and its `updated` date (in
        the feeds and the page) becomes `when` (default: now)."""
        with self._lock:
            page = self.pages[url]
            when = when or self.clock.now()
            tg = TextGenerator(f"{self.seed}|revise|{url}|{when.isoformat()}")
            topic = page.topic or TOPICS[0]
            note = f"{UPDATE_NOTE_PREFIX} {tg.summary(topic, tg.new_cast(topic))}"
            page.blocks = [*page.blocks, Block("paragraph", note)]
            page.updated = when
            self._changed()
            return page

    def ignore_conditional_requests(self, domain: str, ignore: bool = True) -> None:
        """Make `domain` answer If-None-Match/If-Modified-Since with a full 200 (as many
        servers do), or honour them again (the default)."""
        with self._lock:
            if ignore:
                self._ignores_conditional.add(domain)
            else:
                self._ignores_conditional.discard(domain)

    def honours_conditional(self, host: str) -> bool:
        return normalize_host(host) not in self._ignores_conditional

    def _sync(self) -> None:
        """Materialise every scheduled publication due by now (caller holds the lock)."""
        now = self.clock.now()
        for domain, schedule in self._live.items():
            while schedule.next_at <= now:
                self._publish(domain, schedule.next_at)
                schedule.next_at += schedule.interval

    def _publish(self, domain: str, when: datetime) -> Page:
        site = self.sites[domain]
        style = STYLES[site.style]
        k = self._live_count.get(domain, 0)
        self._live_count[domain] = k + 1
        index = self.domains.index(domain)
        page_id = (index + 1) * PAGE_ID_STRIDE + LIVE_ID_OFFSET + k
        key = f"{self.seed}|{domain}|live|{k}"
        rng, tg = random.Random(key), TextGenerator(key)
        ordinal = len(self._site_pages[domain])
        when = when.replace(microsecond=0)
        page = self._new_page(site, style, ARTICLE, when, ordinal, page_id, rng, tg)
        used = {p.url.removeprefix(site.base_url) for p in self._site_pages[domain]}
        page = self._place(page, site, style, used)
        pages = self._site_pages[domain]
        pages.append(page)
        pages.sort(key=lambda p: (p.published, p.page_id), reverse=True)
        self.pages[page.url] = page
        self._changed()
        return page

    def _changed(self) -> None:
        self._generation += 1
        self._network_articles = None
        self._publish_times = sorted(page.published for page in self.pages.values())

    # -- building ----------------------------------------------------------------------------

    def _build_site(self, site: Site, index: int) -> list[Page]:
        style = STYLES[site.style]
        rng = random.Random(f"{self.seed}|{site.domain}|catalog")
        tg = TextGenerator(f"{self.seed}|{site.domain}|text")
        originals = self._syndication_pool(site, rng) if style.aggregator else []
        n_copies = min(len(originals), copies_for(self.articles_per_domain))
        kinds = interleave(["article"] * (self.articles_per_domain - n_copies), style.non_articles)
        times = timeline(rng, len(kinds))
        id_base = (index + 1) * PAGE_ID_STRIDE
        used_paths: set[str] = set()
        pages = []
        for ordinal, (kind, when) in enumerate(zip(kinds, times, strict=True)):
            page_id = id_base + len(kinds) - ordinal  # newer pages have higher ids
            pages.append(self._new_page(site, style, kind, when, ordinal, page_id, rng, tg))
            pages[-1] = self._place(pages[-1], site, style, used_paths)
        chosen = round_robin_sample(originals, n_copies, rng)
        for k, original in enumerate(chosen):
            page_id = id_base + len(kinds) + k + 1
            ordinal = len(kinds) + k
            copy = self._syndicate(site, style, original, ordinal, page_id, rng)
            pages.append(self._place(copy, site, style, used_paths))
        pages.sort(key=lambda p: (p.published, p.page_id), reverse=True)
        return pages

    def _new_page(
        self,
        site: Site,
        style: Style,
        kind: str,
        when: datetime,
        ordinal: int,
        page_id: int,
        rng: random.Random,
        tg: TextGenerator,
    ) -> Page:
        topic = TOPICS[int(rng.random() * len(TOPICS))]
        cast = tg.new_cast(topic)
        section, label = style.sections[topic]
        headline = tg.headline(topic, cast)
        summary = tg.summary(topic, cast)
        authors = [tg.person_name() for _ in range(rng.randint(*AUTHORS_PER_ARTICLE))]
        blocks: list[Block] = []
        if kind == ARTICLE:
            blocks = article_blocks(tg, rng, topic, cast, site.bare_name)
        elif kind == "video":
            headline = f"Video: {headline}"
            authors = authors[:1]
        elif kind == "gallery":
            headline = f"Photos: {headline}"
            authors = authors[:1]
        elif kind == "index":
            headline = label if "News" in label else f"{label} news"
            summary = f"The latest {label.lower()} stories and analysis from {site.name}."
            authors = []
        features = features_for(site.style, ordinal)
        page = Page(
            url="",
            domain=site.domain,
            kind=kind,
            title=headline,
            blocks=blocks,
            published=when,
            authors=authors,
            has_schema_org=has_schema_body(site.style, kind, features),
            summary=summary,
            section=section,
            topic=topic,
            page_id=page_id,
            features=features,
        )
        page.notices = notices_for(site, page, rng)
        return page

    def _syndication_pool(self, site: Site, rng: random.Random) -> list[Page]:
        """Recent original articles this aggregator may republish."""
        if site.generated:
            sources = [d for d, s in self.sites.items() if not STYLES[s.style].aggregator]
        else:
            sources = [d for d in HAND_SYNDICATION_SOURCES if d in self.sites]
        pool: list[Page] = []
        for domain in sources:
            originals = [
                p for p in self._site_pages.get(domain, []) if p.kind == ARTICLE and p.blocks
            ]
            keep = max(MIN_RECENT_POOL, int(len(originals) * RECENT_POOL_SHARE))
            pool += originals[:keep]
        return pool

    def _syndicate(
        self,
        site: Site,
        style: Style,
        original: Page,
        ordinal: int,
        page_id: int,
        rng: random.Random,
    ) -> Page:
        source = self.sites[original.domain]
        delay = timedelta(minutes=rng.randint(*SYNDICATION_DELAY_MINUTES))
        features = features_for(site.style, ordinal)
        page = Page(
            url="",
            domain=site.domain,
            kind=ARTICLE,
            title=original.title,
            blocks=copy_blocks(original, source, rng),
            published=original.published + delay,
            authors=list(original.authors),
            duplicate_of=original.url,
            has_schema_org=has_schema_body(site.style, ARTICLE, features),
            summary=original.summary,
            section=style.sections[original.topic][0],
            topic=original.topic,
            page_id=page_id,
            features=features,
        )
        page.notices = notices_for(site, page, rng)
        return page

    def _place(self, page: Page, site: Site, style: Style, used: set[str]) -> Page:
        """Give the page a URL that is unique on its site."""
        base = slugify(page.title)
        slug, n = base, 1
        while True:
            path = page_path(style.key, page.kind, slug, page.section, page.page_id, page.published)
            if path not in used:
                break
            n += 1
            slug = f"{base}-{n}"
        used.add(path)
        page.url = site.base_url + path
        return page

    # -- rendering ---------------------------------------------------------------------------

    def render(self, host: str, path: str, origin: str = "http://127.0.0.1") -> Response:
        """Status, headers and body for GET http://{host}{path}; pure and deterministic.
        `origin` is the serving fixture's own address (some plugin sites link to it)."""
        domain = normalize_host(host)
        extra = self._extra_by_domain.get(domain)
        if extra is not None:
            return extra.render(domain, canonical_target(path), origin)
        if domain not in self.sites:
            return not_found()
        with self._lock:
            self._sync()
            # What a page looks like depends on the catalogue (generation) and on which pages
            # are out by now (how many publication times have passed).
            visible = bisect.bisect_right(self._publish_times, self.clock.now())
            return self._render_cached(domain, canonical_target(path), self._generation, visible)

    def _render_generation(
        self, domain: str, target: str, generation: int, visible: int
    ) -> Response:
        return self._render_target(domain, target)

    def page_at(self, host: str, path: str) -> Page | None:
        """The page served at http://{host}{path}, if that is a page (not a feed, robots...)."""
        site = self.sites.get(normalize_host(host))
        return self.pages.get(site.base_url + canonical_target(path)) if site else None

    def render_redesigned(self, host: str, path: str, kind: str) -> Response:
        """A page as a redesign (redesign.py) serves it; anything else as `render` does."""
        page = self.page_at(host, path)
        if page is None:
            return self.render(host, path)
        status, content_type, body = render_redesigned(self.sites[page.domain], page, kind)
        return response(status, content_type, body.encode(), modified_time(page))

    def _render_target(self, domain: str, target: str) -> Response:
        site = self.sites[domain]
        url = site.base_url + target
        if target == "/robots.txt":
            body = f"# robots.txt for {domain}\nUser-agent: *\nDisallow: {PRIVATE_PATH}\n"
            return response(200, "text/plain; charset=utf-8", body.encode(), BASE_DATE)
        if url in self._feeds:
            _, spec = self._feeds[url]
            entries = self.feed_entries(domain)
            body = render_feed(site, spec, entries)
            return response(200, FEED_CONTENT_TYPES[spec.format], body, newest(entries))
        if target.startswith(PRIVATE_PATH):
            return self._private(site)
        page = self.pages.get(url)
        if page is not None and page.published > self.clock.now():
            page = None  # not out yet
        if page is None and target != "/":
            return not_found()
        style = STYLES[site.style]
        html_text = LAYOUTS[style.key].render(self._context(site, page))
        body = html_text.encode(style.charset, errors="xmlcharrefreplace")
        changed = modified_time(page) if page else self._site_pages[domain][0].published
        return response(200, f"text/html; charset={style.charset}", body, changed)

    def _context(self, site: Site, page: Page | None) -> RenderContext:
        key = page.url if page else site.base_url + "/"
        now = self.clock.now()
        return RenderContext(
            site=site,
            style=STYLES[site.style],
            page=page,
            site_pages=[p for p in self._site_pages[site.domain] if p.published <= now],
            network=lambda n: self._network(site.domain, n),
            rng=random.Random(f"{self.seed}|render|{key}"),
            tg=TextGenerator(f"{self.seed}|chrome|{key}"),
        )

    def _network(self, exclude_domain: str, n: int) -> list[Page]:
        """The n newest original articles on other sites ("Around the network" teasers)."""
        if self._network_articles is None:
            now = self.clock.now()
            originals = [
                p for p in self.articles() if p.duplicate_of is None and p.published <= now
            ]
            self._network_articles = sorted(originals, key=lambda p: p.published, reverse=True)
        out = []
        for page in self._network_articles:
            if len(out) >= n:
                break
            if page.domain != exclude_domain:
                out.append(page)
        return out

    def _private(self, site: Site) -> Response:
        body = (
            f"<!DOCTYPE html><html><head><title>Staff sign-in | {esc(site.name)}</title></head>"
            "<body><h1>Staff sign-in</h1><form method='post'><input name='user'>"
            "<input name='password' type='password'><button>Sign in</button></form></body></html>\n"
        )
        return response(200, "text/html; charset=utf-8", body.encode(), BASE_DATE)


# --- Building helpers ------------------------------------------------------------------------


def copies_for(articles_per_domain: int) -> int:
    wanted = max(MIN_COPIES, round(articles_per_domain * COPY_SHARE))
    return min(articles_per_domain // 2, wanted)


def round_robin_sample(pool: list[Page], n: int, rng: random.Random) -> list[Page]:
    """n pages drawn evenly across the pool's source domains (each source shuffled)."""
    by_domain: dict[str, list[Page]] = {}
    for page in pool:
        by_domain.setdefault(page.domain, []).append(page)
    queues = [rng.sample(pages, len(pages)) for pages in by_domain.values()]
    chosen: list[Page] = []
    while len(chosen) < n and any(queues):
        for queue in queues:
            if queue and len(chosen) < n:
                chosen.append(queue.pop())
    return chosen


def interleave(articles: list[str], extras: Sequence[str]) -> list[str]:
    """Spread the non-article kinds evenly through a site's (newest-first) page list."""
    kinds = list(articles)
    for k, kind in enumerate(extras):
        position = (k + 1) * (len(kinds) + 1) // (len(extras) + 1)
        kinds.insert(position, kind)
    return kinds


def timeline(rng: random.Random, n: int) -> list[datetime]:
    """n publication times, newest first, walking back from BASE_DATE."""
    when = BASE_DATE - timedelta(hours=rng.uniform(*FIRST_PAGE_LAG_HOURS))
    times = []
    for _ in range(n):
        times.append(when.replace(microsecond=0, second=0))
        when -= timedelta(hours=rng.uniform(*HOURS_BETWEEN_PAGES))
    return times


def article_blocks(
    tg: TextGenerator, rng: random.Random, topic: str, cast: Cast, credit: str
) -> list[Block]:
    """The true body of one article: paragraphs plus optional furniture, in reading order."""
    n_paragraphs = rng.randint(*ARTICLE_PARAGRAPHS)
    blocks = [Block("paragraph", text) for text in tg.story(topic, n_paragraphs, cast)]
    # Inserts go after the lede and never after the last paragraph, so every article opens
    # and closes with prose. Positions are drawn first and applied from the back.
    inserts: list[tuple[int, list[Block]]] = []
    last = len(blocks) - 1
    if rng.random() < CAPTION_SHARE:
        inserts.append((rng.randint(1, 2), [Block("caption", tg.caption(topic, credit, cast))]))
    if n_paragraphs >= HEADING_MIN_PARAGRAPHS and rng.random() < HEADING_SHARE:
        inserts.append((n_paragraphs // 2, [Block("heading", tg.subheading(topic))]))
    if rng.random() < LIST_SHARE:
        items = tg.list_items(topic, rng.randint(*LIST_ITEMS), cast)
        inserts.append((rng.randint(2, last), [Block("list_item", t) for t in items]))
    if rng.random() < QUOTE_BLOCK_SHARE:
        inserts.append((rng.randint(2, last), [Block("quote", tg.pull_quote(topic, cast))]))
    if rng.random() < TABLE_SHARE:
        rows = tg.table(topic, rng.randint(*TABLE_ROWS))
        text = "\n".join(TABLE_CELL_SEPARATOR.join(row) for row in rows)
        inserts.append((rng.randint(2, last), [Block("table", text)]))
    for position, new in sorted(inserts, key=lambda item: item[0], reverse=True):
        blocks[position:position] = new
    return blocks


def copy_blocks(original: Page, source: Site, rng: random.Random) -> list[Block]:
    """A wire copy of an original body: dateline, maybe a trim or a changed word, credit line."""
    kept = [b for b in original.blocks if b.kind not in ("caption", "table")]
    paragraphs = [i for i, b in enumerate(kept) if b.kind == "paragraph"]
    if len(paragraphs) >= TRIM_MIN_PARAGRAPHS and rng.random() < TRIM_SHARE:
        kept.pop(rng.choice(paragraphs[1:-1]))
    if rng.random() < WORD_CHANGE_SHARE:
        kept = change_one_word(kept, rng)
    city = rng.choice(DATELINE_CITIES)
    first = kept[0]
    kept[0] = Block(first.kind, f"{city} (Wire) \u2014 {first.text}")
    credit = f"This story was originally published by {source.text_name}."
    return [*kept, Block("paragraph", credit)]


DATELINE_CITIES = ("NEW YORK", "WASHINGTON", "CHICAGO", "LOS ANGELES", "ATLANTA", "BOSTON")


def change_one_word(blocks: list[Block], rng: random.Random) -> list[Block]:
    candidates = [i for i, b in enumerate(blocks) if b.kind == "paragraph" and i > 0]
    rng.shuffle(candidates)
    for i in candidates:
        for old, new in COPY_SYNONYMS:
            pattern = re.compile(rf"\b{old}\b")
            if pattern.search(blocks[i].text):
                changed = list(blocks)
                changed[i] = Block(blocks[i].kind, pattern.sub(new, blocks[i].text, count=1))
                return changed
    return blocks


# --- Routing helpers -------------------------------------------------------------------------


def normalize_host(host: str) -> str:
    """Lower-case host name without port ("DailyHerald.test:80" -> "dailyherald.test")."""
    host = host.strip().lower()
    if not host:
        return ""
    return urlsplit("//" + host).hostname or ""


def canonical_target(path: str) -> str:
    """Path plus query without fragment or tracking parameters; absolute URIs are reduced."""
    parts = urlsplit(path)
    target = parts.path or "/"
    query = [
        (k, v)
        for k, v in parse_qsl(parts.query, keep_blank_values=True)
        if not k.startswith(TRACKING_PREFIXES)
    ]
    if query:
        target += "?" + urlencode(query)
    return target


def response(status: int, content_type: str, body: bytes, changed: datetime) -> Response:
    headers = {
        "Content-Type": content_type,
        "Last-Modified": format_datetime(changed, usegmt=True),
        "ETag": '"' + hashlib.sha1(body).hexdigest()[:20] + '"',
        "Cache-Control": "max-age=300",
    }
    return status, headers, body


def not_found() -> Response:
    return response(404, "text/html; charset=utf-8", HTML_404.encode(), BASE_DATE)
