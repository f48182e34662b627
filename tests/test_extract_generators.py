"""The whole article on pages of every generator of the general web (issue 31): Word and
pdftohtml exports, FrontPage and XHTML layouts, mailing-list archives, wikis' and repositories'
pages, footnoted blog posts.

The pages are the blind hold-out `hard-articles-holdout-15`, each with its expected body."""

from __future__ import annotations

from extractors.evaluation import aggregate, score_page
from tests.support.holdouts import ArticleHoldOut

HOLD_OUT = ArticleHoldOut("hard-articles-holdout-15")
# The hold-out's aggregate F1 after the fifteenth pass (0.8352 when it was written, measured
# blind; 0.9316 after).
MIN_HOLD_OUT_15_F1 = 0.93


def test_every_article_of_hold_out_15_is_kept_with_its_body() -> None:
    pages = HOLD_OUT.pages()
    assert len(pages) == 14
    scores = [score_page(HOLD_OUT.expected(page.name), HOLD_OUT.text(page.name)) for page in pages]
    assert aggregate(scores).f1 >= MIN_HOLD_OUT_15_F1


def test_sections_named_with_a_modifier_are_the_body_s_twins() -> None:
    # An intro `div.section.intro`, then three `div.section`s, each with its heading.
    text = HOLD_OUT.text("pl-xhtml-strict-2007-przewodnik-sekcje-div.html")
    assert text.startswith("Skansen Wsi Nadrzecznej w Mirowie leży na wysokim brzegu Warty")
    assert "Co warto zobaczyć" in text
    assert text.endswith("ale w dni powszednie poza sezonem bywa zamknięta.")
    assert "Dojazd" not in text  # the practical box of the right column


def test_the_text_that_goes_on_under_a_layout_table_is_the_article_s() -> None:
    # The minutes sit in the left cell beside a photo and a box, then go on at full width under
    # the inner table: a sub-heading, a list and the last paragraph.
    text = HOLD_OUT.text("fr-frontpage-2001-compte-rendu-tables-font.html")
    assert "Projets pour 2001" in text
    assert "édition d'un petit livret sur l'histoire du canal" in text
    assert text.endswith("offert par la municipalité.")
    assert "Le bureau 2001" not in text  # the box of the right cell
    assert "Nos sorties" not in text  # the link bar under the text


def test_a_footnote_list_is_not_the_article() -> None:
    text = HOLD_OUT.text("tr-newspaper-2021-hukuk-dipnotlu-karar-incelemesi.html")
    assert "Bununla birlikte, kararın manevi tazminat talebi" in text  # noqa: RUF001
    assert "Dipnotlar" not in text
    assert "Benzer uyuşmazlıklar için bkz." not in text  # noqa: RUF001


def test_a_repository_s_own_tabs_do_not_make_its_readme_a_page_of_the_site() -> None:
    # The "Code" tab is marked as the current page, at the repository's own short address; the
    # other tabs are views under it, not the site's pages beside it.
    name = "es-github-2024-readme-markdown-body.html"
    text = HOLD_OUT.text(name)
    assert text.startswith("tarifa-hora es una pequeña herramienta de línea de comandos")
    assert score_page(HOLD_OUT.expected(name), text).f1 >= 0.95
