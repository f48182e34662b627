"""Article metadata beyond title and body: dates with their time zones, authors from every kind
of byline, section, keywords, paywall, images with captions, word count, and Markdown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from extractors import extract
from extractors.bylines import author_names, byline_names
from extractors.document import parse_document
from extractors.jsonld import jsonld_objects
from extractors.markdown import to_markdown
from extractors.metadata import Metadata, extract_metadata, url_date

FIXTURES = Path(__file__).parent / "fixtures" / "metadata"
PAGES = Path(__file__).parent / "fixtures" / "pages"
LABELLED = sorted(path.stem for path in FIXTURES.glob("*.json"))


def metadata_of(html: str, url: str = "https://paper.test/a") -> Metadata:
    tree = parse_document(html, url).tree
    return extract_metadata(tree, url, jsonld_objects(tree))


def page(head: str = "", body: str = "") -> str:
    return (
        f"<html><head><title>A headline long enough</title>{head}</head><body>{body}</body></html>"
    )


def ld(obj: dict) -> str:
    return f'<script type="application/ld+json">{json.dumps(obj)}</script>'


@pytest.mark.parametrize("name", LABELLED)
def test_labelled_page_metadata(name: str) -> None:
    truth = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    found = metadata_of((FIXTURES / f"{name}.html").read_text(encoding="utf-8"), truth["url"])
    assert found.title == truth["title"]
    assert found.authors == truth["authors"]
    assert found.published is not None and found.published.date().isoformat() == truth["published"]
    modified = found.modified.date().isoformat() if found.modified else None
    assert modified == truth["modified"]
    assert found.section == truth["section"]
    assert found.keywords == truth.get("keywords", found.keywords)
    assert found.paywalled is truth["paywalled"]


def test_labelled_pages_are_enough_and_varied() -> None:
    assert len(LABELLED) >= 30
    sites = {json.loads((FIXTURES / f"{name}.json").read_text())["url"].split("/")[2]
             for name in LABELLED}  # fmt: skip
    assert len(sites) == len(LABELLED)  # one invented publisher per page


@pytest.mark.parametrize(
    ("raw", "names"),
    [
        ("By Jane Doe and John Roe, Staff Writers", ["Jane Doe", "John Roe"]),
        ("Jane Doe, Senior Correspondent", ["Jane Doe"]),
        ("Ana Lee, Bob Ray & Cy Young", ["Ana Lee", "Bob Ray", "Cy Young"]),
        ("Von Anna Schmidt und Paul Weber", ["Anna Schmidt", "Paul Weber"]),
        ("Reporting by Aiko Tanaka; Editing by Mark Ellis", ["Aiko Tanaka"]),
        ("Pierre Lambert | Wire Digest", ["Pierre Lambert"]),
        ("Jo Park jo.park@paper.test", ["Jo Park"]),
        ("Maria Silva in Lisbon", ["Maria Silva"]),
        ("Doe, Jane", ["Jane Doe"]),
        ("Senior Correspondent Ana Ruiz", ["Ana Ruiz"]),  # a title before the name
        ("Staff Reporter", []),  # a title alone
        ("Updated 5 min ago", []),
        ("https://paper.test/staff/jane", []),
    ],
)
def test_author_names_read_bylines(raw: str, names: list[str]) -> None:
    assert author_names(raw) == names


def test_a_visible_byline_needs_a_by_word_unless_the_page_names_it_a_byline() -> None:
    assert byline_names("Sept. 14, 2023 \u00b7 by Hannah Cole", marked=False) == ["Hannah Cole"]
    assert byline_names("Hannah Cole", marked=False) == []
    assert byline_names("Hannah Cole", marked=True) == ["Hannah Cole"]


def test_dates_keep_their_time_zone_and_the_url_is_the_last_resort() -> None:
    late = metadata_of(
        page(ld({"@type": "NewsArticle", "datePublished": "2024-03-05T22:40:00-05:00"}))
    )
    assert late.published.isoformat() == "2024-03-05T22:40:00-05:00"  # not March 6th in UTC
    est = metadata_of(page('<meta name="pubdate" content="Tue, 05 Dec 2023 22:15:00 EST">'))
    assert est.published.isoformat() == "2023-12-05T22:15:00-05:00"
    dated = metadata_of(page(), "https://paper.test/2023/11/07/story")
    assert dated.published.date().isoformat() == "2023-11-07" and dated.dated_by_url
    assert url_date("https://paper.test/news/20230230-story") is None  # no February 30th
    assert url_date("https://paper.test/news/story-12345678") is None


def test_the_hatom_published_date_of_a_blog_post_is_read() -> None:
    # Blog engines marked a post's date with the hAtom microformat before <time> existed: the
    # machine-readable date is the title of an <abbr class="published">; another abbr is not it.
    footer = (
        '<abbr class="initialism" title="2001-01-01">HTML</abbr> posted at '
        '<abbr class="published" title="2012-10-29T06:35:00-04:00">6:35 AM</abbr>'
    )
    found = metadata_of(page(body=footer))
    assert found.published.isoformat() == "2012-10-29T06:35:00-04:00"
    assert not found.dated_by_url
    marked = '<time class="published" datetime="2012-10-30T08:00:00-04:00">Oct 30</time>'
    assert metadata_of(page(body=marked + footer)).published.day == 30  # <time> first


def test_a_microdata_date_published_set_on_a_span_is_read() -> None:
    # schema.org's own examples set the machine-readable date in a `content` attribute on the
    # element that shows it; a <time> marked as published is read first.
    item = (
        '<div itemscope itemtype="http://schema.org/Article"><p>'
        '<span itemprop="datePublished" content="2011-11-14">14 novembre 2011</span></p></div>'
    )
    found = metadata_of(page(body=item))
    assert found.published.date().isoformat() == "2011-11-14"
    assert not found.dated_by_url
    marked = '<time itemprop="datePublished" datetime="2011-11-15T08:00:00+01:00">15</time>'
    assert metadata_of(page(body=marked + item)).published.day == 15
    shown = '<span itemprop="datePublished">14 novembre 2011</span>'  # no machine-readable value
    assert metadata_of(page(body=shown)).published is None


def test_a_utc_date_is_given_in_the_local_zone_another_date_of_the_page_shows() -> None:
    utc = ld({"@type": "NewsArticle", "datePublished": "2019-11-20T02:59:46Z"})
    naive_local = metadata_of(page(utc, '<time datetime="2019-11-19 20:59:46">Nov 19</time>'))
    assert naive_local.published.isoformat() == "2019-11-19T20:59:46-06:00"
    with_offset = metadata_of(page(utc, '<time datetime="2019-11-19T21:59:00-05:00">x</time>'))
    assert with_offset.published.isoformat() == "2019-11-19T21:59:46-05:00"
    unrelated = metadata_of(page(utc, '<time datetime="2019-11-18 09:07:02">x</time>'))
    assert unrelated.published.isoformat() == "2019-11-20T02:59:46+00:00"


def test_section_keywords_and_paywall_from_markup() -> None:
    found = metadata_of(page(
        '<meta property="article:tag" content="Ports"><meta property="article:tag" content="Labor">'
        '<meta property="article:content_tier" content="locked">'
        '<meta property="article:section" content="Business">'
    ))  # fmt: skip
    assert (found.section, found.keywords, found.paywalled) == (
        "Business",
        ["Ports", "Labor"],
        True,
    )
    free = metadata_of(
        page(ld({"@type": "NewsArticle", "isAccessibleForFree": "https://schema.org/True"}))
    )
    assert free.paywalled is False
    assert metadata_of(page()).paywalled is None  # saying nothing is not "free"


def test_images_are_the_articles_own_with_captions_and_credits() -> None:
    paragraph = (
        "<p>"
        + "The harbor strike ended after nine days of talks between the union and the port. " * 4
        + "</p>"
    )
    html = page(
        '<meta property="og:image" content="https://paper.test/lead.jpg">',
        '<header><img src="/logo.png" class="site-logo"></header>'
        "<article><h1>A headline long enough</h1>"
        '<figure><img src="/lead.jpg"><figcaption>Dock workers. '
        '<span class="credit">Photo: Ana Ruiz</span></figcaption></figure>'
        f"{paragraph}"
        '<figure><img data-src="/second.jpg" width="800">'
        "<figcaption>The port (Foto: Lee Kim)</figcaption></figure>"
        f'{paragraph}<img src="/pixel.gif" width="1" height="1">'
        '<a href="/other"><img src="/teaser.jpg"></a></article>',
    )
    article = extract(html, "https://paper.test/a")
    assert article is not None
    assert [image.as_dict() for image in article.images] == [
        {"url": "https://paper.test/lead.jpg", "caption": "Dock workers.", "credit": "Ana Ruiz"},
        {"url": "https://paper.test/second.jpg", "caption": "The port", "credit": "Lee Kim"},
    ]
    assert article.word_count == len(article.text.split())


def test_markdown_renders_every_block_kind_and_escapes_text() -> None:
    blocks = [
        ("heading", "Why it *matters*"),
        ("paragraph", "1. This is not a list"),
        ("list_item", "one"),
        ("list_item", "two"),
        ("quote", "We won."),
        ("table", "Team | Pts"),
        ("table", "A | 3"),
        ("caption", "The port at night"),
    ]
    assert to_markdown(blocks, "Title") == (
        "# Title\n\n## Why it \\*matters\\*\n\n1\\. This is not a list\n\n- one\n- two\n\n"
        "> We won.\n\n| Team | Pts |\n| --- | --- |\n| A | 3 |\n\n*The port at night*\n"
    )
    assert to_markdown([]) == ""


def test_markdown_fences_preformatted_text_longer_than_its_backticks() -> None:
    # Inside a fence nothing is escaped; a run of three backticks in the code would close a fence
    # of three, so the fence is one longer.
    blocks = [("preformatted", "x = `a`\n```\n  *y*"), ("preformatted", "plain")]
    assert to_markdown(blocks) == "````\nx = `a`\n```\n  *y*\n````\n\n```\nplain\n```\n"


@pytest.mark.parametrize(
    "path",
    [*sorted(FIXTURES.glob("*.html")), Path(__file__).parent / "fixtures/pages/metadata.html"],
    ids=lambda path: path.name,
)
def test_the_elements_collected_in_one_walk_give_the_same_metadata(path: Path) -> None:
    # The chain collects the tags every stage looks up in one walk (extractors.tree.TagIndex);
    # read from it, the metadata is what each stage's own walk found, head and body meta alike.
    from extractors.tree import TagIndex

    tree = parse_document(path.read_bytes(), "https://example.test/a.html").tree
    index = TagIndex(tree)
    alone = extract_metadata(tree, "https://example.test/a.html", jsonld_objects(tree))
    shared = extract_metadata(
        tree, "https://example.test/a.html", jsonld_objects(tree, index), index=index
    )
    assert shared == alone
    assert index.get("meta") == list(tree.iter("meta"))


@pytest.mark.parametrize(
    ("names", "chrome"),
    [
        ("Site-LOGO", True),  # ASCII, any case: lower-cased and searched word by word
        ("hero-photo main", False),
        ("İCON", True),  # non-ASCII: the case-blind pattern, which folds İ to i
        ("\u017fprite", True),  # the long s is an s to it
        ("Café photo", False),
        ("café-emoji", True),
    ],
)
def test_image_names_say_chrome_in_any_case(names: str, chrome: bool) -> None:
    from extractors.images import _CHROME

    assert _CHROME.search(names) is chrome
    assert (_CHROME.pattern.search(names) is not None) is chrome  # the pattern agrees


_MARKED = (
    b'<html itemscope itemtype="https://schema.org/WebPage" class="page"><head>'
    b'<meta itemprop="name" content="Port"></head><body><div class="story">'
    b'<p itemprop="articleBody" class="text">The strike <span itemprop="Author" class="by">'
    b"Ana</span> ended.</p></div></body></html>"
)


@pytest.mark.parametrize(
    "html",
    [_MARKED, *(path.read_bytes() for path in sorted(PAGES.glob("*.html")))],
    ids=lambda html: "marked" if html is _MARKED else "",
)
def test_microdata_and_class_queries_read_every_element_as_the_plain_paths_do(html: bytes) -> None:
    # The queries walk the elements alone (`//*/@a`), not every node (`//@a`): the same values,
    # the root's own included, in the same order.
    from lxml import etree

    from extractors.metadata import _CLASS_VALUES
    from extractors.tree import itemprops, microdata

    tree = parse_document(html, "https://paper.test/a").tree
    plain = etree.XPath("//@itemprop|//@itemtype")(tree)
    properties = [(v.lower().split(), v.getparent()) for v in plain if v.attrname == "itemprop"]
    item_types = [(str(v), v.getparent()) for v in plain if v.attrname == "itemtype"]
    assert microdata(tree) == (properties, item_types)
    assert itemprops(tree) == properties
    for scope in (tree, *tree.iter("div")):
        assert _CLASS_VALUES(scope) == scope.xpath(".//@class")
