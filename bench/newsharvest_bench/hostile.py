"""Hostile cases: what the open web sends a crawler, served on `hostile.test`, one path a case.

Feeds that are malformed, bombs or far too large; pages that are compression bombs, endless,
slow, binary, mislabelled, 10,000 levels deep; redirect loops and redirects to other hosts, to
loopback and to `file:`; HTTP error statuses; links to loopback, private and link-local
addresses; text that cannot be UTF-8 (half an emoji: a lone UTF-16 surrogate) or that displays
spoofed (bidirectional overrides); an article a pipeline stage fails on every time
(`RaisingStage`). `HostileSite.cases` names each one; `HostileSite.articles` holds the true text
of the good articles the hostile feeds list (a crawler must still output them).

Some responses need the fixture's own address (an external entity or a link that would reach the
fixture directly, so that any such request shows up in the request log): `render` takes the
server's origin. Bodies that are large, slow or endless are `Stream`s, written lazily.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from email.utils import format_datetime
from functools import cache
from html import escape
from itertools import islice
from typing import Any
from urllib.parse import urlsplit
from xml.sax.saxutils import escape as xml_escape

from crawler.newsroom.model import BASE_DATE
from crawler.newsroom.sites import Response, Stream
from crawler.newsroom.textgen import TextGenerator

HOSTILE_DOMAIN = "hostile.test"
OFFSITE_DOMAIN = "elsewhere.test"  # where the cross-host redirect lands
HOSTILE_DOMAINS = (HOSTILE_DOMAIN, OFFSITE_DOMAIN)
HOSTILE_BASE = f"http://{HOSTILE_DOMAIN}"
PAGES_FEED_PATH = "/feeds/pages.xml"  # lists every page case (and the good charset articles)
CANARY_PATH = "/ssrf-canary"  # links and redirects to the fixture's own address end here
XXE_PROBE_PATH = "/xxe-probe"  # external entities point here: a request means XXE

FEED = "feed"  # a case polled as a feed
PAGE = "page"  # a case listed as an article link in the pages feed

# --- Sizes (a crawler's limits are well below the bombs and well above the good pages)
BOMB_DECOMPRESSED_BYTES = 64 * 1024 * 1024  # what each compression bomb inflates to
HUGE_BODY_BYTES = 32 * 1024 * 1024  # a page body far over any sane download limit
ENDLESS_CAP_BYTES = 256 * 1024 * 1024  # an "endless" stream stops here, should nobody cut it
STREAM_CHUNK_BYTES = 64 * 1024
HUGE_FEED_ENTRIES = 100_000
DEEP_NESTING_LEVELS = 10_000
QUADRATIC_ENTITY_CHARS = 50_000  # one entity this long...
QUADRATIC_REFERENCES = 50_000  # ... referenced this often: 2.5 GB if expanded
TRUNCATED_DECLARED_BYTES = 100_000  # the data-loss page promises this much ...
TRUNCATED_SENT_BYTES = 10_000  # ... and sends this much before closing the connection
# --- Time
SLOW_INTERVAL_S = 0.5  # the slow page sends one byte this often
SLOW_CAP_S = 120.0  # ... for at most this long (a crawler must give up long before)
REDIRECT_CHAIN_HOPS = 8  # more hops than a crawler should follow
ARTICLE_PARAGRAPHS = 5
# Text only a correctly decoded page yields (every character exists in windows-1252).
ACCENTED_SENTENCE = (
    "The caf\u00e9\u2019s owner \u2014 Zo\u00eb Br\u00fbl\u00e9 \u2014 called it na\u00efve."
)
# Half of U+1F600 (a CMS cut the emoji in half): a lone UTF-16 surrogate, as JSON writes it
# ("\ud83d" with ensure_ascii) and as an HTML or XML character reference.
HALF_EMOJI = "\ud83d"
HALF_EMOJI_REFERENCE = "&#xD83D;"
REPLACEMENT_CHARACTER = "\ufffd"  # what a lone surrogate must come out as
# Bidirectional controls around a title make it display reversed (U+202E ... U+202C) or
# right-to-left (U+2067 ... U+2069): text that reads as another title on screen.
BIDI_OVERRIDE = ("\u202e", "\u202c")
BIDI_ISOLATE = ("\u2067", "\u2069")
POISON_PATH = "/articles/poison.html"  # the article RaisingStage fails on
RAISING_STAGE = "newsharvest_bench.hostile.RaisingStage"  # for ITEM_PIPELINES ...
RAISING_STAGE_ORDER = 150  # ... after the extraction (100), before any stage that keeps state


@dataclass(frozen=True)
class HostileCase:
    name: str
    kind: str  # FEED or PAGE
    path: str
    what: str  # what is served, in one line

    @property
    def url(self) -> str:
        return HOSTILE_BASE + self.path


@dataclass(frozen=True)
class HostileArticle:
    """A good article that a hostile feed lists: the crawler must output it, exactly so."""

    url: str
    title: str
    paragraphs: tuple[str, ...]

    @property
    def text(self) -> str:
        return "\n".join(self.paragraphs)


# name, kind, path, what
_CASES: tuple[tuple[str, str, str, str], ...] = (
    # -- feeds
    ("feed_bare_ampersand", FEED, "/feeds/bare-ampersand.xml", "RSS with bare & in text and links"),
    ("feed_undeclared_entities", FEED, "/feeds/undeclared-entities.xml",
     "RSS using HTML entities (&nbsp; &eacute; &mdash; &bogus;) no DTD declares"),
    ("feed_wrong_encoding", FEED, "/feeds/wrong-encoding.xml",
     "RSS declaring UTF-8, written in windows-1252"),
    ("feed_html_autodiscovery", FEED, "/feeds/html-page.html",
     "an HTML page where a feed was expected, advertising its feed with <link rel=alternate>"),
    ("feed_sitemap", FEED, "/feeds/sitemap.xml", "a news sitemap where a feed was expected"),
    ("feed_billion_laughs", FEED, "/feeds/billion-laughs.xml",
     "RSS with a billion-laughs entity bomb (10^9 expansions)"),
    ("feed_quadratic_blowup", FEED, "/feeds/quadratic-blowup.xml",
     "RSS with a 50 KB entity referenced 50,000 times (2.5 GB if expanded)"),
    ("feed_xxe", FEED, "/feeds/xxe.xml",
     "RSS with external entities: file:///etc/passwd, the fixture's own URL, an external DTD"),
    ("feed_100k_entries", FEED, "/feeds/huge.xml", "RSS with 100,000 entries (about 6 MB)"),
    ("feed_oversized", FEED, "/feeds/oversized.xml",
     "RSS that never ends (chunked, no Content-Length; cut at 256 MiB)"),
    ("feed_ssrf_links", FEED, "/feeds/ssrf.xml",
     "RSS linking loopback, private, link-local and non-http URLs (and one good article)"),
    ("feed_json_lone_surrogates", FEED, "/feeds/lone-surrogates.json",
     "JSON Feed whose titles, summaries and authors end in half an emoji (\\ud83d), listing a "
     "page whose JSON-LD does too"),
    ("feed_surrogate_references", FEED, "/feeds/surrogate-references.xml",
     "RSS with character references to half an emoji (&#xD83D;) in titles and descriptions"),
    ("feed_poison_item", FEED, "/feeds/poison.xml",
     "RSS listing an article a pipeline stage raises on, every try (RaisingStage, injected by "
     "ITEM_PIPELINES in the test)"),
    # -- pages
    ("page_gzip_bomb", PAGE, "/bombs/gzip.html", "gzip body inflating to 64 MiB"),
    ("page_gzip_nested_bomb", PAGE, "/bombs/gzip-gzip.html",
     "Content-Encoding: gzip, gzip; the inner layer inflates to 64 MiB"),
    ("page_brotli_bomb", PAGE, "/bombs/brotli.html", "brotli body inflating to 64 MiB"),
    ("page_zstd_bomb", PAGE, "/bombs/zstd.html", "zstd body inflating to 64 MiB"),
    ("page_corrupt_gzip", PAGE, "/bombs/corrupt-gzip.html", "Content-Encoding: gzip, not gzip"),
    ("page_huge_declared", PAGE, "/big/declared.html", "32 MiB body with its Content-Length"),
    ("page_huge_chunked", PAGE, "/big/chunked.html",
     "endless chunked body (no Content-Length; cut at 256 MiB)"),
    ("page_truncated", PAGE, "/big/truncated.html",
     "declares 100,000 bytes, sends 10,000 and closes the connection"),
    ("page_slow_body", PAGE, "/slow/body.html", "sends one byte every 0.5 s, for 2 minutes"),
    ("page_slow_headers", PAGE, "/slow/headers.html", "accepts the request, never answers"),
    ("page_binary_png", PAGE, "/binary/image.html", "a PNG served as text/html"),
    ("page_binary_gzip_file", PAGE, "/binary/archive.html",
     "a .tar.gz served as text/html (no Content-Encoding)"),
    ("page_empty", PAGE, "/empty.html", "200 with an empty body"),
    ("page_deep_nesting", PAGE, "/nesting/deep.html",
     "an article under 10,000 nested <div>s"),
    ("page_charset_utf8_label_cp1252_body", PAGE, "/charset/utf8-label-cp1252-body.html",
     "Content-Type says UTF-8, the bytes are windows-1252"),
    ("page_charset_latin1_label_utf8_body", PAGE, "/charset/latin1-label-utf8-body.html",
     "Content-Type says ISO-8859-1, the bytes are UTF-8"),
    ("page_charset_meta_lies", PAGE, "/charset/meta-utf8-cp1252-body.html",
     "no HTTP charset; <meta charset=utf-8> on windows-1252 bytes"),
    ("page_charset_missing_cp1252", PAGE, "/charset/missing-cp1252.html",
     "no charset anywhere, windows-1252 bytes"),
    ("page_charset_missing_utf8", PAGE, "/charset/missing-utf8.html",
     "no charset anywhere, UTF-8 bytes"),
    ("page_charset_utf16_http_only", PAGE, "/charset/utf16-http-only.html",
     "UTF-16 without a byte order mark, the charset only in the HTTP Content-Type"),
    ("page_bidi_controls", PAGE, "/bidi/overrides.html",
     "title, headline and author wrapped in bidirectional overrides and isolates (U+202E, "
     "U+2067)"),
    ("page_redirect_loop", PAGE, "/redirect/loop-a.html", "loop-a -> loop-b -> loop-a ..."),
    ("page_redirect_self", PAGE, "/redirect/self.html", "redirects to itself"),
    ("page_redirect_chain", PAGE, "/redirect/chain/1.html",
     "8 redirects in a row before an article"),
    ("page_redirect_offsite", PAGE, "/redirect/offsite.html",
     "redirects to an article on another host (elsewhere.test)"),
    ("page_redirect_loopback", PAGE, "/redirect/loopback.html",
     "redirects to the fixture's own loopback address"),
    ("page_redirect_metadata", PAGE, "/redirect/metadata.html",
     "redirects to the cloud metadata address 169.254.169.254"),
    ("page_redirect_file", PAGE, "/redirect/file.html", "redirects to file:///etc/passwd"),
    ("page_http_403", PAGE, "/status/403.html", "403 Forbidden"),
    ("page_http_404", PAGE, "/status/404.html", "404 Not Found"),
    ("page_http_410", PAGE, "/status/410.html", "410 Gone"),
    ("page_http_429", PAGE, "/status/429.html", "429 Too Many Requests (Retry-After: 3600)"),
    ("page_http_500", PAGE, "/status/500.html", "500 Internal Server Error"),
    ("page_http_503", PAGE, "/status/503.html", "503 Service Unavailable"),
    # An ordinary article each; the isolation test's worker function
    # (newsharvest_bench/faulty.py) hangs or segfaults on these URLs, as a native-code bug would
    # on some page.
    ("page_extraction_hang", PAGE, "/extraction/hang-in-native-code.html",
     "an article whose extraction never returns (injected by EXTRACT_FUNCTION in the test)"),
    ("page_extraction_crash", PAGE, "/extraction/segfault-in-native-code.html",
     "an article whose extraction segfaults (injected by EXTRACT_FUNCTION in the test)"),
)  # fmt: skip

# What the SSRF feed links to ({origin} is the fixture itself), by kind: a non-public address
# however spelled, a name that is local by definition, a scheme that is not http(s). None may be
# requested.
ADDRESS, LOCAL_NAME, NOT_HTTP = "address", "local_name", "not_http"
SSRF_LINKS: tuple[tuple[str, str], ...] = (
    (ADDRESS, "{origin}" + CANARY_PATH + "/literal"),
    (ADDRESS, "http://[::1]:{port}" + CANARY_PATH + "/ipv6"),
    (ADDRESS, "http://[::ffff:127.0.0.1]:{port}" + CANARY_PATH + "/ipv4-mapped"),
    (ADDRESS, "http://2130706433:{port}" + CANARY_PATH + "/decimal"),
    (ADDRESS, "http://0x7f.0.0.1:{port}" + CANARY_PATH + "/hex"),
    (ADDRESS, "http://0177.0.0.1:{port}" + CANARY_PATH + "/octal"),
    (ADDRESS, "http://127.1:{port}" + CANARY_PATH + "/short"),
    (ADDRESS, "http://0.0.0.0:{port}" + CANARY_PATH + "/unspecified"),
    (ADDRESS, "http://169.254.169.254/latest/meta-data/"),
    (ADDRESS, "http://10.0.0.1/internal"),
    (ADDRESS, "http://192.168.1.1/router"),
    (ADDRESS, "http://172.16.0.1/internal"),
    (ADDRESS, "http://100.64.0.1/carrier-nat"),
    (ADDRESS, "http://[fe80::1]/link-local"),
    (ADDRESS, "http://[fd00::1]/unique-local"),
    (ADDRESS, "http://224.0.0.1/multicast"),
    (LOCAL_NAME, "http://localhost:{port}" + CANARY_PATH + "/localhost"),
    (LOCAL_NAME, "http://LocalHost.:{port}" + CANARY_PATH + "/localhost-dot"),
    (LOCAL_NAME, "http://app.localhost:{port}" + CANARY_PATH + "/sub-localhost"),
    (LOCAL_NAME, "http://metadata.internal/computeMetadata/v1/"),
    (LOCAL_NAME, "http://redis:6379/"),
    (NOT_HTTP, "ftp://{host}/pub/file.txt"),
    (NOT_HTTP, "file:///etc/passwd"),
    (NOT_HTTP, "gopher://{host}:70/_GET"),
)  # fmt: skip


def _headers(content_type: str, body: bytes | None = None) -> dict[str, str]:
    headers = {"Content-Type": content_type, "Last-Modified": format_datetime(BASE_DATE, True)}
    if body is not None:
        headers["ETag"] = '"' + hashlib.sha1(body).hexdigest()[:20] + '"'
    return headers


class HostileSite:
    """The hostile cases, their good articles, and the router that serves them: a site the
    simulator serves beside its publishers (crawler/newsroom/sites.py, `ExtraSite`)."""

    name = "hostile"
    domains = HOSTILE_DOMAINS

    def __init__(self, seed: int = 1, huge_feed_entries: int = HUGE_FEED_ENTRIES) -> None:
        self.seed = seed
        self.huge_feed_entries = huge_feed_entries
        self.cases: dict[str, HostileCase] = {
            name: HostileCase(name, kind, path, what) for name, kind, path, what in _CASES
        }
        self.articles: dict[str, HostileArticle] = {}
        # Good articles each recovering feed lists (the crawl must still output them).
        self.feed_articles: dict[str, list[str]] = {}
        for case in self.cases.values():
            if case.kind == FEED:
                self.feed_articles[case.name] = [
                    self._add_article(f"/articles/{case.name}-{i}.html") for i in (1, 2)
                ]
        self.discovered_feed_articles = [self._add_article("/articles/discovered-1.html")]
        self.charset_articles = {
            case.name: self._add_article(case.path, accented=True)
            for case in self.cases.values()
            if case.name.startswith("page_charset_")
        }
        self.deep_article = self._add_article(self.cases["page_deep_nesting"].path)
        self.extraction_fault_articles = [
            self._add_article(self.cases[name].path)
            for name in ("page_extraction_hang", "page_extraction_crash")
        ]
        self.half_emoji_article = self._add_article("/articles/half-emoji.html")
        self.bidi_article = self._add_article(self.cases["page_bidi_controls"].path)
        self.poison_article = self._add_article(POISON_PATH)
        self.chain_target = self._add_article("/articles/chain-end.html")
        self.offsite_article = self._add_article(
            "/articles/offsite.html", base=f"http://{OFFSITE_DOMAIN}"
        )

    # -- catalog -----------------------------------------------------------------------------

    @property
    def feed_urls(self) -> list[str]:
        """Every feed case, then the pages feed that lists the page cases."""
        feeds = [case.url for case in self.cases.values() if case.kind == FEED]
        return [*feeds, HOSTILE_BASE + PAGES_FEED_PATH]

    def page_cases(self) -> list[HostileCase]:
        return [case for case in self.cases.values() if case.kind == PAGE]

    def huge_feed_url(self, n: int) -> str:
        return f"{HOSTILE_BASE}/huge/{n}.html"

    def _add_article(self, path: str, accented: bool = False, base: str = HOSTILE_BASE) -> str:
        url = base + path
        tg = TextGenerator(f"{self.seed}|hostile|{url}")
        cast = tg.new_cast("local")
        paragraphs = tg.story("local", ARTICLE_PARAGRAPHS, cast)
        if accented:
            paragraphs[1] = f"{paragraphs[1]} {ACCENTED_SENTENCE}"
        title = tg.headline("local", cast)
        self.articles[url] = HostileArticle(url, title, tuple(paragraphs))
        return url

    # -- rendering ---------------------------------------------------------------------------

    def render(self, domain: str, target: str, origin: str) -> Response:
        """Status, headers and body for GET http://{domain}{target}; `origin` is the fixture's
        own http://127.0.0.1:PORT."""
        path = target.split("?", 1)[0]
        if path == "/robots.txt":
            body = b"User-agent: *\nDisallow:\n"
            return 200, _headers("text/plain; charset=utf-8", body), body
        url = f"http://{domain}{path}"
        if domain == OFFSITE_DOMAIN:
            return self._article(url) if url in self.articles else _not_found()
        handler = self._routes(origin).get(path)
        if handler is not None:
            return handler()
        if path.startswith("/redirect/chain/"):
            return self._chain(path)
        if path.startswith("/huge/") and path.endswith(".html"):
            return self._huge_entry_page(path)
        if url in self.articles:
            return self._article(url)
        return _not_found()

    def _routes(self, origin: str) -> dict[str, Callable[[], Response]]:
        c = self.cases
        routes: dict[str, Callable[[], Response]] = {
            c["feed_bare_ampersand"].path: lambda: _rss(self._bare_ampersand_feed()),
            c["feed_undeclared_entities"].path: lambda: _rss(self._entities_feed()),
            c["feed_wrong_encoding"].path: lambda: _rss(self._wrong_encoding_feed()),
            c["feed_html_autodiscovery"].path: self._autodiscovery_page,
            "/feeds/discovered.xml": lambda: _rss(
                _rss_feed("Discovered", self._items(self.discovered_feed_articles))
            ),
            c["feed_sitemap"].path: lambda: _xml(self._sitemap()),
            c["feed_billion_laughs"].path: lambda: _rss(self._billion_laughs_feed()),
            c["feed_quadratic_blowup"].path: lambda: _rss(self._quadratic_feed()),
            c["feed_xxe"].path: lambda: _rss(self._xxe_feed(origin)),
            c["feed_100k_entries"].path: lambda: _rss(_huge_feed(self.huge_feed_entries)),
            c["feed_oversized"].path: self._oversized_feed,
            c["feed_ssrf_links"].path: lambda: _rss(self._ssrf_feed(origin)),
            c["feed_json_lone_surrogates"].path: self._json_feed_with_half_emojis,
            c["feed_surrogate_references"].path: lambda: _rss(self._surrogate_references_feed()),
            c["feed_poison_item"].path: lambda: _rss(self._poison_feed()),
            self.half_emoji_article.removeprefix(HOSTILE_BASE): self._half_emoji_page,
            c["page_bidi_controls"].path: self._bidi_page,
            PAGES_FEED_PATH: lambda: _rss(self._pages_feed()),
            c["page_gzip_bomb"].path: lambda: _bomb("gzip"),
            c["page_gzip_nested_bomb"].path: lambda: _bomb("gzip, gzip"),
            c["page_brotli_bomb"].path: lambda: _bomb("br"),
            c["page_zstd_bomb"].path: lambda: _bomb("zstd"),
            c["page_corrupt_gzip"].path: _corrupt_gzip,
            c["page_huge_declared"].path: lambda: _endless_html(HUGE_BODY_BYTES, declared=True),
            c["page_huge_chunked"].path: lambda: _endless_html(ENDLESS_CAP_BYTES, declared=False),
            c["page_truncated"].path: _truncated,
            c["page_slow_body"].path: _slow_body,
            c["page_slow_headers"].path: _slow_headers,
            c["page_binary_png"].path: lambda: _html_typed(_png()),
            c["page_binary_gzip_file"].path: lambda: _html_typed(_tar_gz()),
            c["page_empty"].path: lambda: _html_typed(b""),
            c["page_deep_nesting"].path: self._deep_nesting,
            c["page_redirect_loop"].path: lambda: _redirect("/redirect/loop-b.html"),
            "/redirect/loop-b.html": lambda: _redirect(c["page_redirect_loop"].path),
            c["page_redirect_self"].path: lambda: _redirect(c["page_redirect_self"].path),
            c["page_redirect_offsite"].path: lambda: _redirect(self.offsite_article),
            c["page_redirect_loopback"].path: lambda: _redirect(origin + CANARY_PATH + "/hop"),
            c["page_redirect_metadata"].path: lambda: _redirect(
                "http://169.254.169.254/latest/user-data/"
            ),
            c["page_redirect_file"].path: lambda: _redirect("file:///etc/passwd"),
        }
        for name, (path, charset_case) in _CHARSET_CASES.items():
            routes[path] = lambda name=name, case=charset_case: self._charset_page(name, *case)
        for status in (403, 404, 410, 429, 500, 503):
            routes[f"/status/{status}.html"] = lambda status=status: _status(status)
        return routes

    def _article(self, url: str, charset: str = "utf-8") -> Response:
        body = _article_html(self.articles[url], charset).encode(charset)
        return 200, _headers(f"text/html; charset={charset}", body), body

    def _charset_page(
        self, name: str, encoding: str, header_charset: str | None, meta_charset: str | None
    ) -> Response:
        article = self.articles[self.charset_articles[name]]
        body = _article_html(article, meta_charset).encode(encoding)
        content_type = f"text/html; charset={header_charset}" if header_charset else "text/html"
        return 200, _headers(content_type, body), body

    def _deep_nesting(self) -> Response:
        article = _article_html(self.articles[self.deep_article], "utf-8")
        head, _, rest = article.partition("<body>")
        inner, _, tail = rest.partition("</body>")
        body = (
            head
            + "<body>"
            + "<div>" * DEEP_NESTING_LEVELS
            + inner
            + "</div>" * DEEP_NESTING_LEVELS
            + "</body>"
            + tail
        ).encode()
        return 200, _headers("text/html; charset=utf-8", body), body

    def _chain(self, path: str) -> Response:
        try:
            hop = int(path.removeprefix("/redirect/chain/").removesuffix(".html"))
        except ValueError:
            return _not_found()
        if hop >= REDIRECT_CHAIN_HOPS:
            return _redirect(self.chain_target)
        return _redirect(f"/redirect/chain/{hop + 1}.html")

    def _huge_entry_page(self, path: str) -> Response:
        """Entries of the 100,000-entry feed: small real articles, generated on request."""
        url = HOSTILE_BASE + path
        tg = TextGenerator(f"{self.seed}|hostile|{url}")
        cast = tg.new_cast("economy")
        article = HostileArticle(
            url, tg.headline("economy", cast), tuple(tg.story("economy", 4, cast))
        )
        body = _article_html(article, "utf-8").encode()
        return 200, _headers("text/html; charset=utf-8", body), body

    # -- feeds -------------------------------------------------------------------------------

    def _items(self, urls: list[str], title_suffix: str = "", raw: bool = False) -> str:
        items = []
        for url in urls:
            title = self.articles[url].title + title_suffix
            items.append(
                f"<item><title>{title if raw else xml_escape(title)}</title>"
                f"<link>{xml_escape(url)}</link><guid>{xml_escape(url)}</guid></item>"
            )
        return "".join(items)

    def _bare_ampersand_feed(self) -> bytes:
        first, second = self.feed_articles["feed_bare_ampersand"]
        items = (
            f"<item><title>Fish & Chips & AT&T</title><link>{first}?id=1&ref=feed</link>"
            f"<description>Salt & vinegar & more</description></item>"
            f"<item><title>Q&A</title><link>{second}</link></item>"
        )
        return _rss_feed("Bare & Ampersands", items, escape_title=False)

    def _entities_feed(self) -> bytes:
        urls = self.feed_articles["feed_undeclared_entities"]
        items = self._items(urls, " &mdash; caf&eacute;&nbsp;news &hellip; &bogus; &copy;", True)
        return _rss_feed("Entities&nbsp;Daily", items, escape_title=False)

    def _wrong_encoding_feed(self) -> bytes:
        urls = self.feed_articles["feed_wrong_encoding"]
        text = _rss_feed_text(
            "Caf\u00e9 Times \u2014 \u00e9dition", self._items(urls, " \u00e9t\u00e9")
        )
        return text.encode("cp1252")  # while the declaration says UTF-8

    def _autodiscovery_page(self) -> Response:
        urls = self.feed_articles["feed_html_autodiscovery"]
        links = "".join(
            f'<li><a href="{u}">{escape(self.articles[u].title)}</a></li>' for u in urls
        )
        body = (
            "<!DOCTYPE html><html><head><title>Hostile Times</title>"
            '<link rel="alternate" type="application/rss+xml" title="RSS" '
            'href="/feeds/discovered.xml"></head>'
            f"<body><h1>Latest</h1><ul>{links}</ul></body></html>"
        ).encode()
        return 200, _headers("text/html; charset=utf-8", body), body

    def _sitemap(self) -> bytes:
        urls = self.feed_articles["feed_sitemap"]
        entries = "".join(
            f"<url><loc>{xml_escape(u)}</loc><news:news><news:title>"
            f"{xml_escape(self.articles[u].title)}</news:title><news:publication_date>"
            f"{BASE_DATE.isoformat()}</news:publication_date></news:news></url>"
            for u in urls
        )
        return (
            '<?xml version="1.0" encoding="UTF-8"?>'
            '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
            'xmlns:news="http://www.google.com/schemas/sitemap-news/0.9">'
            f"{entries}</urlset>"
        ).encode()

    def _billion_laughs_feed(self) -> bytes:
        entities = ['<!ENTITY lol "lol">']
        for level in range(1, 10):
            previous = "lol" if level == 1 else f"lol{level - 1}"
            entities.append(f'<!ENTITY lol{level} "{("&" + previous + ";") * 10}">')
        dtd = "<!DOCTYPE rss [" + "".join(entities) + "]>"
        items = self._items(self.feed_articles["feed_billion_laughs"], " &lol9;", raw=True)
        return _rss_feed("Laughs &lol9;", items, dtd=dtd, escape_title=False)

    def _quadratic_feed(self) -> bytes:
        dtd = f'<!DOCTYPE rss [<!ENTITY a "{"x" * QUADRATIC_ENTITY_CHARS}">]>'
        first, second = self.feed_articles["feed_quadratic_blowup"]
        items = (
            f"<item><title>{xml_escape(self.articles[first].title)}</title><link>{first}</link>"
            f"<description>{'&a;' * QUADRATIC_REFERENCES}</description></item>"
            + self._items([second])
        )
        return _rss_feed("Quadratic", items, dtd=dtd)

    def _xxe_feed(self, origin: str) -> bytes:
        probe = origin + XXE_PROBE_PATH
        dtd = (
            f'<!DOCTYPE rss SYSTEM "{probe}/external-dtd" ['
            '<!ENTITY file SYSTEM "file:///etc/passwd">'
            f'<!ENTITY net SYSTEM "{probe}/entity">'
            f'<!ENTITY % param SYSTEM "{probe}/parameter-entity">'
            "%param;]>"
        )
        items = self._items(self.feed_articles["feed_xxe"], " &file; &net;", raw=True)
        return _rss_feed("XXE &file;", items, dtd=dtd, escape_title=False)

    def _oversized_feed(self) -> Response:
        head = _rss_feed_text("Oversized", "").encode().split(b"</channel>")[0]
        item = b"<item><title>Padding</title><link>" + HOSTILE_BASE.encode() + b"/x</link></item>"

        def chunks() -> Iterator[bytes]:
            yield head
            block = item * (STREAM_CHUNK_BYTES // len(item))
            yield from _repeat(block, ENDLESS_CAP_BYTES)

        return 200, _headers("application/rss+xml; charset=utf-8"), Stream(chunks)

    def _ssrf_feed(self, origin: str) -> bytes:
        port = origin.rsplit(":", 1)[-1]
        links = [t.format(origin=origin, port=port, host=HOSTILE_DOMAIN) for _, t in SSRF_LINKS]
        items = [
            f"<item><title>Link {n}</title><link>{xml_escape(link)}</link></item>"
            for n, link in enumerate(links)
        ]
        items.append(self._items(self.feed_articles["feed_ssrf_links"]))
        return _rss_feed("SSRF", "".join(items))

    def _poison_feed(self) -> bytes:
        urls = [*self.feed_articles["feed_poison_item"], self.poison_article]
        return _rss_feed("Poison", self._items(urls))

    def _json_feed_with_half_emojis(self) -> Response:
        urls = [*self.feed_articles["feed_json_lone_surrogates"], self.half_emoji_article]
        items = [
            {
                "id": url,
                "url": url,
                "title": f"{self.articles[url].title} {HALF_EMOJI}",
                "summary": f"What happened, in one line {HALF_EMOJI}",
                "authors": [{"name": f"Night Desk {HALF_EMOJI}"}],
                "date_published": BASE_DATE.isoformat(),
            }
            for url in urls
        ]
        feed = {"version": "https://jsonfeed.org/version/1.1", "title": f"Emoji {HALF_EMOJI}",
                "home_page_url": HOSTILE_BASE + "/", "items": items}  # fmt: skip
        body = json.dumps(feed).encode()  # ASCII: every lone surrogate spelled \ud83d
        return 200, _headers("application/feed+json", body), body

    def _surrogate_references_feed(self) -> bytes:
        items = "".join(
            f"<item><title>{xml_escape(self.articles[url].title)} {HALF_EMOJI_REFERENCE}</title>"
            f"<link>{url}</link><description>Half an emoji: {HALF_EMOJI_REFERENCE}</description>"
            "</item>"
            for url in self.feed_articles["feed_surrogate_references"]
        )
        return _rss_feed(f"Emoji {HALF_EMOJI_REFERENCE}", items, escape_title=False)

    def _half_emoji_page(self) -> Response:
        """An article whose headline and first paragraph end in half an emoji, in the HTML as a
        character reference and in its JSON-LD as a lone \\ud83d (the author's name too)."""
        article = self.articles[self.half_emoji_article]
        cut = with_half_emoji(article)
        jsonld = {"@context": "https://schema.org", "@type": "NewsArticle",
                  "headline": cut.title, "articleBody": cut.text,
                  "author": {"@type": "Person", "name": f"Dana Whit {HALF_EMOJI}"}}  # fmt: skip
        page = _article_html(cut, "utf-8", head=_jsonld_script(jsonld))
        body = page.replace(HALF_EMOJI, HALF_EMOJI_REFERENCE).encode()
        return 200, _headers("text/html; charset=utf-8", body), body

    def _bidi_page(self) -> Response:
        """The title, the <h1>, og:title and the JSON-LD author wrapped in bidirectional
        controls: shown as they are, they read reversed or right-to-left."""
        article = self.articles[self.bidi_article]
        override, isolate = "{}".join(BIDI_OVERRIDE), "{}".join(BIDI_ISOLATE)
        shown = HostileArticle(article.url, override.format(article.title), article.paragraphs)
        jsonld = {"@context": "https://schema.org", "@type": "NewsArticle",
                  "headline": isolate.format(article.title),
                  "author": {"@type": "Person", "name": override.format(BIDI_AUTHOR)}}  # fmt: skip
        og_title = escape(isolate.format(article.title))
        head = f'<meta property="og:title" content="{og_title}">' + _jsonld_script(jsonld)
        body = _article_html(shown, "utf-8", head=head).encode()
        return 200, _headers("text/html; charset=utf-8", body), body

    def _pages_feed(self) -> bytes:
        items = "".join(
            f"<item><title>{xml_escape(case.what)}</title><link>{case.url}</link></item>"
            for case in self.page_cases()
        )
        return _rss_feed("Hostile pages", items)


# name -> (path, (body encoding, Content-Type charset, <meta charset>))
_CHARSET_CASES = {
    "page_charset_utf8_label_cp1252_body": (
        "/charset/utf8-label-cp1252-body.html", ("cp1252", "utf-8", None)),
    "page_charset_latin1_label_utf8_body": (
        "/charset/latin1-label-utf8-body.html", ("utf-8", "iso-8859-1", None)),
    "page_charset_meta_lies": ("/charset/meta-utf8-cp1252-body.html", ("cp1252", None, "utf-8")),
    "page_charset_missing_cp1252": ("/charset/missing-cp1252.html", ("cp1252", None, None)),
    "page_charset_missing_utf8": ("/charset/missing-utf8.html", ("utf-8", None, None)),
    "page_charset_utf16_http_only": (
        "/charset/utf16-http-only.html", ("utf-16-le", "utf-16", None)),
}  # fmt: skip
BIDI_AUTHOR = "Evil Author"  # the bidi page's author, as it must come out


# --- Documents ---------------------------------------------------------------------------------


def _article_html(article: HostileArticle, meta_charset: str | None, head: str = "") -> str:
    meta = f'<meta charset="{meta_charset}">' if meta_charset else ""
    paragraphs = "".join(f"<p>{escape(p)}</p>" for p in article.paragraphs)
    return (
        f'<!DOCTYPE html><html lang="en"><head>{meta}<title>{escape(article.title)} | '
        f"Hostile Times</title>{head}</head><body><nav><a href='/'>Home</a> "
        f"<a href='/world/'>World</a></nav><article><h1>{escape(article.title)}</h1>{paragraphs}"
        "</article><footer><p>\u00a9 2026 Hostile Times</p></footer></body></html>"
    )


def _jsonld_script(data: dict[str, Any]) -> str:
    return f'<script type="application/ld+json">{json.dumps(data)}</script>'


def with_half_emoji(article: HostileArticle, half: str = HALF_EMOJI) -> HostileArticle:
    """The article as the half-emoji page serves it (`half` after its headline and its first
    paragraph); with `half=REPLACEMENT_CHARACTER`, as a crawler must output it."""
    first, *rest = article.paragraphs
    return HostileArticle(article.url, f"{article.title} {half}", (f"{first} {half}", *rest))


class PoisonedItemError(RuntimeError):
    """What RaisingStage raises: a bug some article triggers in a pipeline stage."""


class RaisingStage:
    """An item pipeline stage that fails on one article, every time it sees it (the article at
    POISON_PATH on hostile.test), and passes every other item on. Put it in ITEM_PIPELINES to
    see such an article end, after HARVEST_MAX_ATTEMPTS tries, in the rejected file, and cost
    no other article anything."""

    def process_item(self, item: Any) -> Any:
        parts = urlsplit(item.get("url") or "")
        if parts.hostname == HOSTILE_DOMAIN and parts.path == POISON_PATH:
            raise PoisonedItemError(f"a stage fails on {item['url']}, every time")
        return item


def _rss_feed_text(title: str, items: str, dtd: str = "", escape_title: bool = True) -> str:
    title = xml_escape(title) if escape_title else title
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>{dtd}<rss version="2.0"><channel>'
        f"<title>{title}</title><link>{HOSTILE_BASE}/</link>{items}</channel></rss>"
    )


def _rss_feed(title: str, items: str, dtd: str = "", escape_title: bool = True) -> bytes:
    return _rss_feed_text(title, items, dtd, escape_title).encode()


@cache
def _huge_feed(entries: int) -> bytes:
    items = "".join(
        f"<item><link>{HOSTILE_BASE}/huge/{n}.html</link></item>" for n in range(entries)
    )
    return _rss_feed("One hundred thousand entries", items)


def _rss(body: bytes) -> Response:
    return 200, _headers("application/rss+xml; charset=utf-8", body), body


def _xml(body: bytes) -> Response:
    return 200, _headers("application/xml; charset=utf-8", body), body


def _html_typed(body: bytes) -> Response:
    return 200, _headers("text/html; charset=utf-8", body), body


def _not_found() -> Response:
    body = b"<!DOCTYPE html><html><body><h1>Not Found</h1></body></html>"
    return 404, _headers("text/html; charset=utf-8", body), body


def _status(status: int) -> Response:
    body = f"<!DOCTYPE html><html><body><h1>Error {status}</h1></body></html>".encode()
    headers = _headers("text/html; charset=utf-8", body)
    if status in (429, 503):
        headers["Retry-After"] = "3600"
    return status, headers, body


def _redirect(location: str) -> Response:
    headers = _headers("text/html; charset=utf-8", b"")
    headers["Location"] = location
    return 302, headers, b""


# --- Bombs, endless and slow bodies -----------------------------------------------------------


def _repeat(block: bytes, total: int) -> Iterator[bytes]:
    sent = 0
    while sent < total:
        piece = block[: total - sent]
        sent += len(piece)
        yield piece


@cache
def _compressed_zeros(encoding: str) -> bytes:
    """BOMB_DECOMPRESSED_BYTES of zero bytes, compressed (computed once, on first request)."""
    zeros = bytes(BOMB_DECOMPRESSED_BYTES)
    if encoding == "gzip":
        return gzip.compress(zeros, compresslevel=9)
    if encoding == "gzip, gzip":
        return gzip.compress(_compressed_zeros("gzip"), compresslevel=9)
    if encoding == "br":
        import brotli  # Scrapy's own dependency for br; the only non-stdlib import here

        return brotli.compress(zeros, quality=5)
    if encoding == "zstd":
        try:
            from compression import zstd  # type: ignore[import-not-found]  # Python 3.14+
        except ImportError:
            from backports import zstd  # Scrapy's own dependency before 3.14
        return zstd.compress(zeros)
    raise ValueError(encoding)


def _bomb(encoding: str) -> Response:
    body = _compressed_zeros(encoding)
    headers = _headers("text/html; charset=utf-8", body)
    headers["Content-Encoding"] = encoding
    return 200, headers, body


def _corrupt_gzip() -> Response:
    body = b"\x1f\x8b\x08\x00" + b"this is not a deflate stream" * 20
    headers = _headers("text/html; charset=utf-8", body)
    headers["Content-Encoding"] = "gzip"
    return 200, headers, body


def _endless_html(total: int, declared: bool) -> Response:
    head = b"<!DOCTYPE html><html><head><title>Huge</title></head><body>"
    block = b"<p>" + b"All work and no play makes a dull page. " * 40 + b"</p>\n"
    block = block * (STREAM_CHUNK_BYTES // len(block))

    def chunks() -> Iterator[bytes]:
        yield head
        yield from _repeat(block, total - len(head))

    stream = Stream(chunks, length=total if declared else None)
    return 200, _headers("text/html; charset=utf-8"), stream


def _truncated() -> Response:
    def chunks() -> Iterator[bytes]:
        yield b"<!DOCTYPE html><html><body><p>" + b"x" * (TRUNCATED_SENT_BYTES - 30)

    return (
        200,
        _headers("text/html; charset=utf-8"),
        Stream(chunks, length=TRUNCATED_DECLARED_BYTES),
    )


def _slow_body() -> Response:
    def chunks() -> Iterator[bytes]:
        yield from islice(iter(lambda: b"<", None), int(SLOW_CAP_S / SLOW_INTERVAL_S))

    stream = Stream(chunks, length=int(SLOW_CAP_S / SLOW_INTERVAL_S), interval_s=SLOW_INTERVAL_S)
    return 200, _headers("text/html; charset=utf-8"), stream


def _slow_headers() -> Response:
    return (
        200,
        _headers("text/html; charset=utf-8"),
        Stream(lambda: iter((b"<html></html>",)), length=13, headers_delay_s=SLOW_CAP_S),
    )


def _png() -> bytes:
    """A real (tiny) PNG followed by noise: binary bytes a server calls text/html."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data)
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", 64, 64, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"".join(b"\x00" + bytes(range(192)) for _ in range(64)))
    noise = hashlib.sha512(b"png").digest() * 64
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels)
            + chunk(b"IEND", b"") + noise)  # fmt: skip


def _tar_gz() -> bytes:
    payload = json.dumps({"story": "<p>" + "not a web page " * 500 + "</p>"}).encode()
    return gzip.compress(payload * 20, mtime=0)
