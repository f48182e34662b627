"""Two regional publishers for the harvest filters and sitemap discovery, served on request.

    room = Newsroom(extra_sites=[RegionalSites()])
    python -m crawler.newsroom --site regional     # the same, served

* `tageblatt.test`, "Das Tageblatt": a German RSS feed (`<language>de</language>`) whose articles
  go back DE_FEED_DAYS days, one of them listed without a date (its page has one), and a few
  English-edition articles in the same feed whose pages declare no language (only their words
  say it).
* `hafenkurier.test`, "Hafenkurier": a homepage that advertises no feed, a robots.txt with a
  `Sitemap:` line naming a sitemap index, which lists a Google News sitemap of recent articles
  and yearly archive sitemaps of old ones (each with its `<lastmod>`).

An ExtraSite (crawler/newsroom/sites.py): kept out of the publishers' `domains`, `pages` and
`feed_urls`, so every count of the default fixture stays as it is. Every date is an offset from
BASE_DATE; `articles` is the ground truth (URL, language, publication date, how it is listed).
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from .feedgen import rfc822
from .model import BASE_DATE
from .room import not_found, response
from .sites import Response
from .textgen import GermanTextGenerator, TextGenerator

FEED_SITE = "tageblatt.test"
SITEMAP_SITE = "hafenkurier.test"
DE_FEED_ARTICLES = 12  # German articles in the feed, one every DE_FEED_STEP
DE_FEED_STEP = timedelta(hours=18)  # so the feed spans about DE_FEED_DAYS days
DE_FEED_DAYS = 9
EN_EDITION_ARTICLES = 2  # English articles listed in the German feed (recent)
NEWS_SITEMAP_ARTICLES = 5  # recent articles in the news sitemap, one every NEWS_STEP
NEWS_STEP = timedelta(hours=13)
ARCHIVE_YEARS = (2006, 2007)  # one archive sitemap each
ARCHIVE_ARTICLES_PER_YEAR = 3
PARAGRAPHS = 5

# How an article is listed (SiteArticle.listed).
FEED, FEED_UNDATED, NEWS_SITEMAP, ARCHIVE = "feed", "feed_undated", "news_sitemap", "archive"


@dataclass(frozen=True)
class SiteArticle:
    url: str
    domain: str
    language: str  # what the text is written in
    published: datetime
    title: str
    paragraphs: tuple[str, ...]
    listed: str  # FEED, FEED_UNDATED, NEWS_SITEMAP or ARCHIVE
    declares_language: bool = True  # the page's <html lang>

    @property
    def path(self) -> str:
        return self.url.split(".test", 1)[1]


class RegionalSites:
    """The two publishers above (an ExtraSite)."""

    name = "regional"
    domains = (FEED_SITE, SITEMAP_SITE)

    def __init__(self, seed: int = 1) -> None:
        self.articles: list[SiteArticle] = [*_feed_articles(seed), *_sitemap_articles(seed)]
        self._by_url = {article.url: article for article in self.articles}

    @property
    def feed_urls(self) -> list[str]:
        # The second publisher is given as its homepage: the crawler must find its sitemaps.
        return [f"http://{FEED_SITE}/rss.xml", f"http://{SITEMAP_SITE}/"]

    def render(self, domain: str, target: str, origin: str) -> Response:
        url = f"http://{domain}{target}"
        if url in self._by_url:
            article = self._by_url[url]
            return _html(article_page(article), article.published)
        if domain == FEED_SITE:
            return self._render_feed_site(target)
        return self._render_sitemap_site(target)

    def _render_feed_site(self, target: str) -> Response:
        if target == "/robots.txt":
            return _text("User-agent: *\nDisallow: /intern/\n")
        if target == "/rss.xml":
            entries = self.on(FEED_SITE)
            body = rss(entries)
            return response(200, "application/rss+xml; charset=utf-8", body, _newest(entries))
        if target == "/":
            return _html(homepage("Das Tageblatt", self.on(FEED_SITE), feed=True), BASE_DATE)
        return not_found()

    def _render_sitemap_site(self, target: str) -> Response:
        if target == "/robots.txt":
            return _text(f"User-agent: *\nDisallow: /intern/\n\n"
                         f"Sitemap: http://{SITEMAP_SITE}/sitemap_index.xml\n")  # fmt: skip
        if target == "/":
            return _html(homepage("Hafenkurier", self.on(SITEMAP_SITE), feed=False), BASE_DATE)
        if target == "/sitemap_index.xml":
            return _xml(sitemap_index(self.sitemaps()))
        if target == "/sitemaps/news.xml":
            return _xml(news_sitemap(self.listed(NEWS_SITEMAP)))
        for year in ARCHIVE_YEARS:
            if target == f"/sitemaps/archiv-{year}.xml":
                return _xml(urlset([a for a in self.listed(ARCHIVE) if a.published.year == year]))
        return not_found()

    def on(self, domain: str) -> list[SiteArticle]:
        return [article for article in self.articles if article.domain == domain]

    def listed(self, how: str) -> list[SiteArticle]:
        return [article for article in self.articles if article.listed == how]

    def sitemaps(self) -> list[tuple[str, datetime]]:
        """The sitemap index's sitemaps with their <lastmod>: archives first, as sites do."""
        base = f"http://{SITEMAP_SITE}/sitemaps"
        archives = [(f"{base}/archiv-{year}.xml", datetime(year, 12, 31, tzinfo=UTC))
                    for year in ARCHIVE_YEARS]  # fmt: skip
        return [*archives, (f"{base}/news.xml", _newest(self.listed(NEWS_SITEMAP)))]


def _feed_articles(seed: int) -> list[SiteArticle]:
    german = GermanTextGenerator(f"{seed}-tageblatt")
    articles = []
    for n in range(DE_FEED_ARTICLES):
        # The second article is listed without a date; its page is a month old.
        undated = n == 1
        published = BASE_DATE - (timedelta(days=30) if undated else n * DE_FEED_STEP)
        articles.append(SiteArticle(
            f"http://{FEED_SITE}/lokales/artikel-{n + 1}.html", FEED_SITE, "de", published,
            german.headline(), tuple(german.paragraph() for _ in range(PARAGRAPHS)),
            FEED_UNDATED if undated else FEED,
        ))  # fmt: skip
    english = TextGenerator(f"{seed}-tageblatt-en")
    for n in range(EN_EDITION_ARTICLES):
        articles.append(SiteArticle(
            f"http://{FEED_SITE}/english/story-{n + 1}.html", FEED_SITE, "en",
            BASE_DATE - timedelta(hours=3 + 5 * n), english.headline("local"),
            tuple(english.story("local", PARAGRAPHS)), FEED, declares_language=False,
        ))  # fmt: skip
    return articles


def _sitemap_articles(seed: int) -> list[SiteArticle]:
    german = GermanTextGenerator(f"{seed}-hafenkurier")
    articles = [
        SiteArticle(
            f"http://{SITEMAP_SITE}/nachrichten/{n + 1}.html", SITEMAP_SITE, "de",
            BASE_DATE - n * NEWS_STEP, german.headline(),
            tuple(german.paragraph() for _ in range(PARAGRAPHS)), NEWS_SITEMAP,
        )
        for n in range(NEWS_SITEMAP_ARTICLES)
    ]  # fmt: skip
    for year in ARCHIVE_YEARS:
        for n in range(ARCHIVE_ARTICLES_PER_YEAR):
            articles.append(SiteArticle(
                f"http://{SITEMAP_SITE}/archiv/{year}/{n + 1}.html", SITEMAP_SITE, "de",
                datetime(year, 3 + 3 * n, 10, 8, tzinfo=UTC), german.headline(),
                tuple(german.paragraph() for _ in range(PARAGRAPHS)), ARCHIVE,
            ))  # fmt: skip
    return articles


# -- rendering --------------------------------------------------------------------------------


def article_page(article: SiteArticle) -> str:
    lang = f' lang="{article.language}"' if article.declares_language else ""
    when = article.published.isoformat()
    paragraphs = "\n".join(f"<p>{html.escape(text)}</p>" for text in article.paragraphs)
    site = "Das Tageblatt" if article.domain == FEED_SITE else "Hafenkurier"
    return f"""<!DOCTYPE html>
<html{lang}><head><meta charset="utf-8"><title>{html.escape(article.title)} | {site}</title>
<meta property="article:published_time" content="{when}"></head>
<body><header><a href="/">{site}</a></header>
<main><article><h1>{html.escape(article.title)}</h1>
<time datetime="{when}">{article.published:%d.%m.%Y}</time>
{paragraphs}
</article></main>
<footer><p>&copy; {site}</p></footer></body></html>
"""


def homepage(name: str, articles: list[SiteArticle], feed: bool) -> str:
    """The front page: links to the articles; a feed link only where the site has a feed."""
    link = '<link rel="alternate" type="application/rss+xml" href="/rss.xml">' if feed else ""
    items = "\n".join(f'<li><a href="{a.path}">{html.escape(a.title)}</a></li>' for a in articles)
    return f"""<!DOCTYPE html>
<html lang="de"><head><meta charset="utf-8"><title>{name}</title>{link}</head>
<body><h1>{name}</h1><ul>
{items}
</ul></body></html>
"""


def rss(articles: list[SiteArticle]) -> bytes:
    items = []
    for article in articles:
        dated = article.listed != FEED_UNDATED
        date = f"<pubDate>{rfc822(article.published)}</pubDate>" if dated else ""
        title = html.escape(article.title)
        items.append(f"<item><title>{title}</title><link>{article.url}</link>"
                     f"<guid>{article.url}</guid>{date}</item>")  # fmt: skip
    channel = "\n".join(items)
    return f"""<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0"><channel><title>Das Tageblatt</title><link>http://{FEED_SITE}/</link>
<language>de-de</language>
{channel}
</channel></rss>
""".encode()


def sitemap_index(sitemaps: list[tuple[str, datetime]]) -> bytes:
    entries = "\n".join(f"<sitemap><loc>{url}</loc><lastmod>{when.isoformat()}</lastmod></sitemap>"
                        for url, when in sitemaps)  # fmt: skip
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
{entries}
</sitemapindex>
""".encode()


def news_sitemap(articles: list[SiteArticle]) -> bytes:
    entries = "\n".join(
        f"<url><loc>{a.url}</loc><news:news><news:publication><news:name>Hafenkurier"
        f"</news:name><news:language>{a.language}</news:language></news:publication>"
        f"<news:publication_date>{a.published.isoformat()}</news:publication_date>"
        f"<news:title>{html.escape(a.title)}</news:title></news:news></url>"
        for a in articles
    )
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
        xmlns:news="http://www.google.com/schemas/sitemap-news/0.9">
{entries}
</urlset>
""".encode()


def urlset(articles: list[SiteArticle]) -> bytes:
    entries = "\n".join(f"<url><loc>{a.url}</loc><lastmod>{a.published.isoformat()}</lastmod></url>"
                        for a in articles)  # fmt: skip
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
{entries}
</urlset>
""".encode()


def _newest(articles: list[SiteArticle]) -> datetime:
    return max(article.published for article in articles)


def _html(text: str, changed: datetime) -> Response:
    return response(200, "text/html; charset=utf-8", text.encode(), changed)


def _xml(body: bytes) -> Response:
    return response(200, "application/xml; charset=utf-8", body, BASE_DATE)


def _text(text: str) -> Response:
    return response(200, "text/plain; charset=utf-8", text.encode(), BASE_DATE)
