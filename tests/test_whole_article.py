"""The whole article: what the chosen container misses and belongs to the same article (a
sibling container, the lead above it, sub-headed sections), what it must not take (an aside, an
author box), and the wrong-block cases. Each behaviour on a page of its own, as a file in
tests/fixtures/pages/whole-article."""

from __future__ import annotations

from pathlib import Path

from extractors import extract

PAGES = Path(__file__).parent / "fixtures" / "pages" / "whole-article"


def _article(name: str):
    article = extract((PAGES / name).read_bytes(), "https://example.test/post.html")
    assert article is not None, name
    return article


def test_a_post_labelled_with_its_topics_is_not_chrome() -> None:
    # Blog engines class a post's element by its categories and tags ("tag-cookie-recipes",
    # "category-social-eating"): the words name the topic, not a cookie banner or a share bar.
    article = _article("blog-post-taxonomy-classes.html")
    assert article.text.startswith("The first properly cold week")
    assert article.text.endswith("if anyone lets them.")
    assert "spelt flour" not in article.text  # the comments stay out
