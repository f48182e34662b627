"""The article where another block of the page competes with it (issue 31): a sidebar's prose
beside a post set in line breaks, long comments, a long legal footer, a promoted second article.

The pages are the blind hold-out `hard-articles-holdout-16`, each with its expected body."""

from __future__ import annotations

from extractors import extract_verbose
from extractors.evaluation import aggregate, score_page
from tests.support.holdouts import ArticleHoldOut

HOLD_OUT = ArticleHoldOut("hard-articles-holdout-16")
# The hold-out's aggregate F1 after the fifteenth pass (0.8275 when it was written, measured
# blind; 0.8958 after).
MIN_HOLD_OUT_16_F1 = 0.89
# A live page of four short entries: no container and no method holds an article's length.
KNOWN_MISSES = {"it-wagtail-2026-diretta-breve-copertura-correlata.html"}


def test_every_article_of_hold_out_16_is_kept_with_its_body_but_the_known_miss() -> None:
    pages = HOLD_OUT.pages()
    assert len(pages) == 14
    results = {
        page.name: extract_verbose(page.read_bytes(), HOLD_OUT.urls[page.name]) for page in pages
    }
    assert {name for name, result in results.items() if result.article is None} == KNOWN_MISSES
    scores = [
        score_page(HOLD_OUT.expected(name), result.article.text if result.article else "")
        for name, result in results.items()
    ]
    assert aggregate(scores).f1 >= MIN_HOLD_OUT_16_F1


def test_a_post_in_line_breaks_wins_over_the_sidebar_prose_the_scorer_joined_to_it() -> None:
    # Algorithm 2.1 sees only the sidebar's "About" paragraphs; the readability scorer's own
    # container holds the headline and the post, and joins the sidebar as a sibling.
    text = HOLD_OUT.text("en-movabletype-2005-br-entry-about-sidebar.html")
    assert "The scaffolding finally came down from the lock keeper's cottage" in text
    assert "Tea will be served, though not from the side door." in text
    assert "Lockside Notes is written by Ruth Penhallow" not in text
    assert "In the winter of 1881 the canal froze so hard" not in text
