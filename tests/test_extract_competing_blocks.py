"""The article where another block of the page competes with it (issue 31): a sidebar's prose
beside a post set in line breaks or beside a dated post, long comments, a long legal footer, a
promoted second article.

The pages are the blind hold-outs `hard-articles-holdout-16`, -36 and -46, each with its expected
body."""

from __future__ import annotations

import pytest
from lxml import etree

from extractors.arbiter import tells
from extractors.blocks import PARAGRAPH, TextBlock
from extractors.short_article import under_date_header
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


def _line(text: str, link_share: float = 0.0) -> TextBlock:
    chars = len("".join(text.split()))
    return TextBlock(PARAGRAPH, text, int(chars * link_share), chars, etree.Element("p"))


POST = [
    (PARAGRAPH, "The bridge reopened on Friday afternoon after eleven weeks of repairs."),
    (PARAGRAPH, "The old deck has been replaced with planks that should outlast us all."),
]


@pytest.mark.parametrize(
    ("header", "dated"),
    [
        ("Friday, October 15, 1999", True),
        ("Posted on 14 Mar 2004", True),
        ("Cricket Boxing Formula 1 Euro 2008 Other Sports", False),  # a menu, not a date header
    ],
)
def test_a_date_header_is_a_date_and_little_else(header: str, dated: bool) -> None:
    page = [_line(header), _line("The Mill Lane footbridge"), *(_line(t) for _, t in POST)]
    assert under_date_header(POST, page) is dated
    assert under_date_header(POST, [_line(header, link_share=1.0), *page[1:]]) is False


def test_teasers_cut_short_are_no_post() -> None:
    # A list of teasers under a date tells nothing: its lines stop mid-sentence.
    teasers = [
        (PARAGRAPH, "Council sets out plans for a second car park at the station, with spaces"),
        (PARAGRAPH, "The youth choir has been invited to sing at the county's spring festival and"),
    ]
    assert not tells(teasers)
    assert tells(POST)
