"""The article where another block of the page competes with it (issue 31): a sidebar's prose
beside a post set in line breaks or beside a dated post, long comments, a long legal footer, a
promoted second article.

The pages are the blind hold-outs `hard-articles-holdout-16`, -36, -46 and -49, each with its
expected body."""

from __future__ import annotations

import pytest
from lxml import etree

from extractors.arbiter import names_site, tells
from extractors.blocks import PARAGRAPH, TextBlock
from extractors.short_article import is_date_header
from tests.support.holdouts import ArticleHoldOut

HOLD_OUT = ArticleHoldOut("hard-articles-holdout-16")
# The hold-out's aggregate F1 after the fifteenth pass (0.8275 when it was written, measured
# blind; 0.8958 after).
MIN_HOLD_OUT_16_F1 = 0.89
# A live page of four short entries: no container and no method holds an article's length.
KNOWN_MISSES = {"it-wagtail-2026-diretta-breve-copertura-correlata.html"}


def test_every_article_of_hold_out_16_is_kept_with_its_body_but_the_known_miss() -> None:
    assert len(HOLD_OUT.pages()) == 14
    lost, f1 = HOLD_OUT.measure()
    assert lost == KNOWN_MISSES
    assert f1 >= MIN_HOLD_OUT_16_F1


def test_a_post_in_line_breaks_wins_over_the_sidebar_prose_the_scorer_joined_to_it() -> None:
    # Algorithm 2.1 sees only the sidebar's "About" paragraphs; the readability scorer's own
    # container holds the headline and the post, and joins the sidebar as a sibling.
    text = HOLD_OUT.text("en-movabletype-2005-br-entry-about-sidebar.html")
    assert "The scaffolding finally came down from the lock keeper's cottage" in text
    assert "Tea will be served, though not from the side door." in text
    assert "Lockside Notes is written by Ruth Penhallow" not in text
    assert "In the winter of 1881 the canal froze so hard" not in text


def test_a_dated_post_wins_over_the_undated_about_box_of_a_page_without_a_headline() -> None:
    # The page's title is the weblog's name and the post's title is no heading: no headline
    # says where the article is. Algorithm 2.1 takes the sidebar's "About this weblog"
    # paragraphs (the post is loose text between line breaks, or shorter); the post is the body
    # under a date header, the box has no date near it.
    pitas = ArticleHoldOut("hard-articles-holdout-46").text(
        "en-pitas-1999-last-picture-at-the-regent.html"
    )
    assert "The Regent showed its last picture on Saturday night." in pitas
    assert "for the scrapbook." in pitas
    assert "My name is Nora Tillett" not in pitas
    blosxom = ArticleHoldOut("hard-articles-holdout-36").text(
        "en-blosxom-2004-village-mill-lane-footbridge.html"
    )
    assert "the Mill Lane footbridge over the Brede reopened on Friday afternoon" in blosxom
    assert "the next thing to go." in blosxom
    assert "taught geography at Kessingham" not in blosxom


def test_the_dated_post_wins_on_pages_whose_headline_is_the_weblog_s_name() -> None:
    # Hold-out 49 (designed on after its measurement): the Tripod diary's date header runs into
    # the post's title, the Blot post is dated in Korean, and the diary.ru page's `<h1>` is the
    # diary's name, linked to its home under the host's path ("/~sad-za-rekoj/").
    hold_out = ArticleHoldOut("hard-articles-holdout-49")
    for page in (
        "de-tripod-1999-tagebuch-19990814-bohnenernte-und-ein-igel.html",
        "ko-blot-2016-cheongsol-jeongmiso-geurigi.html",
        "ru-diaryru-2006-p48213345-rassada-na-podokonnike.html",
    ):
        text, expected = hold_out.text(page), hold_out.expected(page)
        assert all(line in text for line in expected.splitlines()), page  # the whole post
        # ... and not the sidebar's prose, as long as the post: at most its date and title lines
        assert len(text) < 1.15 * len(expected), page


def _line(text: str, link_share: float = 0.0) -> TextBlock:
    chars = len("".join(text.split()))
    return TextBlock(PARAGRAPH, text, int(chars * link_share), chars, etree.Element("p"))


@pytest.mark.parametrize(
    ("line", "header"),
    [
        ("Friday, October 15, 1999", True),
        ("Posted on 14 Mar 2004", True),
        ("Samstag, 14. August 1999 Bohnenernte und ein Igel", True),  # the title run into it
        ("2016년 10월 23일", True),
        ("Cricket Boxing Formula 1 Euro 2008 Other Sports", False),  # a menu, not a date header
        ("The council met on 3 March 2004 to vote on the budget", False),  # a sentence
    ],
)
def test_a_date_header_is_a_date_and_little_else_or_opens_with_it(line: str, header: bool) -> None:
    assert is_date_header(_line(line)) is header
    assert is_date_header(_line(line, link_share=1.0)) is False  # a link to a dated page


POST = [
    (PARAGRAPH, "The bridge reopened on Friday afternoon after eleven weeks of repairs."),
    (PARAGRAPH, "The old deck has been replaced with planks that should outlast us all."),
]


def test_one_post_tells_a_list_of_teasers_or_of_dated_entries_does_not() -> None:
    teasers = [  # a list of teasers under a date: its lines stop mid-sentence
        (PARAGRAPH, "Council sets out plans for a second car park at the station, with spaces"),
        (PARAGRAPH, "The youth choir has been invited to sing at the county's spring festival and"),
    ]
    updates = [  # a site's "what's new" log: every entry opens with its date
        (PARAGRAPH, "March 4, 2001 New essay: Why I Still Mend Things. Thank you for writing."),
        (PARAGRAPH, "February 11, 2001 Added twenty new photos to the winter garden page."),
    ]
    assert tells(POST)
    assert tells([(PARAGRAPH, "Sun, 14 Mar 2004"), *POST])  # its own date header
    assert not tells(teasers)
    assert not tells(updates)


@pytest.mark.parametrize(
    ("href", "url", "site"),
    [
        ("/", "http://blog.example/2004/03/bridge.html", True),
        ("http://www.diary.example/~sad/", "http://www.diary.example/~sad/p4821.htm", True),
        ("/~sad/", "http://www.diary.example/~sad/p4821.htm", True),
        ("/~sad/", "http://www.diary.example/~other/p4821.htm", False),  # another weblog
        ("http://elsewhere.example/~sad/", "http://www.diary.example/~sad/p4821.htm", False),
        ("/news/bridge-reopens/", "http://www.diary.example/news/bridge-reopens/", False),  # itself
    ],
)
def test_a_heading_that_links_to_the_weblog_s_home_names_the_site(
    href: str, url: str, site: bool
) -> None:
    heading = etree.fromstring(f'<h1><a href="{href}">Sad za rekoj</a></h1>')
    assert names_site(heading, url) is site
