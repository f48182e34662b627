"""The fallback cascade, the readability-style scorer and the evidence behind NULL, on small
pages made for each failure class (tests/fixtures/pages); the non-article and hard-article sets
are in test_non_article_evidence.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from lxml import etree

from extractors import extract_verbose
from extractors.article import CAPTION, PARAGRAPH
from extractors.blocks import TextBlock
from extractors.cascade import Candidate, _nested_choice, share_in, support
from extractors.document import parse_document
from extractors.evidence import is_stub, is_teaser_list, page_signals
from extractors.preprocess import Cleaning
from extractors.readability import extract_readability, loose_runs

PAGES = Path(__file__).parent / "fixtures" / "pages"
FIRST_SENTENCE = "The regional council voted on Tuesday to reopen the old harbour railway"
LAST_SENTENCE = "asked for noise barriers and a limit on night-time freight services."


def _extract(name: str):
    return extract_verbose((PAGES / name).read_bytes(), "https://gazette.test/rail.html")


@pytest.mark.parametrize(
    "name",
    [
        # The article is loose text between <br><br>; the only <p>s are the footer's notices,
        # which Algorithm 2.1 took (the veto kept the footer: it held all the <p> text).
        "br-article-footer-p.html",
        # Paragraphs cut by empty <p/> elements: the text is their tails, no <p> holds any.
        "empty-p-separators.html",
        # An ASP.NET page: one <form> around everything, the article loose text in a div.
        "form-wrapped-page.html",
        # Algorithm 2.1 finds a teaser list set in <p>s; the article is loose text elsewhere.
        "teasers-in-p-article-in-br.html",
    ],
)
def test_an_article_outside_p_elements_is_found_by_the_cascade(name: str) -> None:
    result = _extract(name)
    assert result.article is not None, result.reason
    assert result.article.method == "readability"
    text = result.article.text
    assert text.startswith(FIRST_SENTENCE) and text.endswith(LAST_SENTENCE)
    assert len(result.article.blocks) == 5  # one block per <br><br> or <p/> paragraph
    assert "Harbour Gazette is a trading name" not in text and "Related story" not in text


POLISH = [
    "Od poniedziałku na zakopiance obowiązuje nowa organizacja ruchu. Drogowcy zamknęli prawy pas "
    "w kierunku Zakopanego na odcinku od Poronina do ronda w Zakopanem.",
    "Powodem są prace przy przebudowie przepustu pod drogą, który podczas ostatniej ulewy nie był "
    "w stanie odprowadzić wody. Woda zalała wtedy jezdnię i kilka posesji.",
    "Utrudnienia potrwają co najmniej do końca stycznia. Kierowcy powinni liczyć się z wydłużonym "
    "czasem przejazdu, szczególnie w weekendy.",
]


def test_the_cascade_works_in_a_language_without_a_stop_list() -> None:
    # The same failure class in Polish (no jusText stop list: its language-independent mode
    # witnesses): loose <br> text, the footer's notices the only <p>s.
    page = (PAGES / "br-article-footer-p.html").read_text(encoding="utf-8")
    english = page[page.index("The regional council") : page.index("</div></td>")]
    polish = page.replace(english, "<br><br>".join(POLISH)).replace("<html>", '<html lang="pl">')
    result = extract_verbose(polish)
    assert result.article is not None, result.reason
    assert result.article.method == "readability"
    assert result.article.text == "\n".join(POLISH)


def test_a_title_without_its_end_tag_no_longer_swallows_the_page() -> None:
    result = _extract("runaway-title.html")
    assert result.article is not None, result.reason
    assert result.article.text.startswith(FIRST_SENTENCE)
    assert result.article.title == "Harbour railway to reopen"
    tree = parse_document((PAGES / "runaway-title.html").read_bytes()).tree
    assert len(tree.find(".//title").text) < 100


def test_loose_runs_are_cut_at_double_breaks_empty_paragraphs_and_blocks() -> None:
    div = etree.fromstring(
        "<div>First run of loose text, long enough to count.<br>still the first run"
        "<br><br>Second run of loose text with <b>bold</b> words in it.<p/>"
        "Third run after an empty paragraph element.<div>a block</div>tiny</div>",
        etree.HTMLParser(),
    ).find(".//div")
    assert loose_runs(div) == [
        "First run of loose text, long enough to count. still the first run",
        "Second run of loose text with bold words in it.",
        "Third run after an empty paragraph element.",
    ]  # "tiny" is shorter than a paragraph


def test_the_readability_scorer_never_modifies_the_tree() -> None:
    tree = parse_document((PAGES / "br-article-footer-p.html").read_bytes()).tree
    before = etree.tostring(tree)
    body = extract_readability(Cleaning(tree))
    assert body is not None and body.blocks[0][1].startswith(FIRST_SENTENCE)
    assert etree.tostring(tree) == before


# --- reconciliation ------------------------------------------------------------------------

ARTICLE = [(PARAGRAPH, sentence) for sentence in (FIRST_SENTENCE + " today.", LAST_SENTENCE)]
OTHER = [(PARAGRAPH, "Completely different words about a football match and its final score.")]


def test_support_is_the_best_share_another_method_confirms() -> None:
    article, longer = Candidate("a", ARTICLE), Candidate("b", ARTICLE + OTHER)
    other = Candidate("c", OTHER)
    assert share_in(article, longer) == 1.0 and share_in(longer, article) < 1.0
    assert support(article, [article, longer, other]) == 1.0
    assert support(other, [article]) == 0.0


def test_nested_bodies_give_the_smaller_unless_it_is_a_sliver() -> None:
    article, padded = Candidate("dom", ARTICLE), Candidate("readability", ARTICLE + OTHER)
    assert _nested_choice(padded, article) is article  # the common part is what both confirm
    assert _nested_choice(article, Candidate("same", list(ARTICLE))) is article
    assert _nested_choice(article, Candidate("other", OTHER)) is None
    sliver = Candidate("sliver", ARTICLE[:1])
    assert _nested_choice(sliver, Candidate("long", ARTICLE * 3 + OTHER * 3)).method == "long"


def test_the_scorer_s_body_around_the_confirmed_witness_is_taken_when_it_adds_prose() -> None:
    # A short post set between line breaks: the tree filter keeps the dense lines (name, author,
    # description, the byline) and the scorer's body holds them and the post's paragraph of prose
    # besides, so the scorer's body is unconfirmed as a whole and the witness used to win.
    result = extract_verbose(
        (PAGES / "whole-article" / "gadget-post-in-line-breaks.html").read_bytes(),
        "https://example.test/post.html",
    )
    assert result.article is not None and result.article.method == "readability"
    assert "Each week this blog picks a plugin from the gallery" in result.article.text
    assert "Shows the next high and low water" in result.article.text


@pytest.mark.parametrize(
    "name",
    [
        "en-jobs-board.html",  # what the scorer adds to the witness is a table of openings
        "en-league-table.html",  # a table of standings and its key
        "fr-podcast-episode.html",  # a credits line beside the summary: too short, not prose
    ],
)
def test_the_scorer_s_body_around_a_witness_is_not_taken_when_it_adds_no_prose(name: str) -> None:
    result = extract_verbose((PAGES / "non-articles" / name).read_bytes())
    assert result.article is None, result.article and result.article.text


# --- evidence ------------------------------------------------------------------------------


def _block(text: str, link_share: float = 0.0) -> TextBlock:
    chars = len(text.replace(" ", ""))
    return TextBlock(PARAGRAPH, text, int(chars * link_share), chars, etree.Element("p"))


def test_a_list_of_teasers_is_a_listing_and_a_listicle_is_not() -> None:
    summary = "A one-sentence summary of the story that the headline above links to, no more."
    teasers = [
        block
        for i in range(6)
        for block in (_block(f"Headline number {i} of the section page", 1.0), _block(summary))
    ]
    assert is_teaser_list(teasers)
    prose = " ".join([FIRST_SENTENCE] * 6)  # several hundred characters between links
    listicle = [
        block
        for i in range(6)
        for block in (_block(f"Get deal number {i} at the shop", 1.0), _block(prose))
    ]
    assert not is_teaser_list(listicle)
    assert not is_teaser_list([_block(prose), *[_block("Read more about it here", 1.0)] * 6])


def test_a_paywall_stub_is_one_paragraph() -> None:
    assert is_stub([(PARAGRAPH, FIRST_SENTENCE), (CAPTION, "A photo caption")])
    assert not is_stub([(PARAGRAPH, FIRST_SENTENCE), (PARAGRAPH, LAST_SENTENCE)])


def test_page_signals_read_schema_org_and_opengraph() -> None:
    video = page_signals([{"@type": "VideoObject"}], "video.other")
    assert video.declares_video and not video.declares_article
    objects = [{"@type": ["NewsArticle"], "datePublished": "2026-11-28"}, {"@type": "VideoObject"}]
    article = page_signals(objects, "article", dated=True)
    assert article.declares_article and not article.declares_video
    # og:type=article on a page nothing dates names an article, but the non-article rules no
    # longer defer to it: sites stamp it on every page. Beside a schema.org media item and no
    # schema.org article type, the page is the item's (a video's, a podcast episode's).
    stamped = page_signals([{"@type": "VideoObject"}], "article")
    assert stamped.names_article and stamped.declares_video
    assert not stamped.declares_article
    episode = page_signals([{"@type": "PodcastEpisode"}], "article", dated=True)
    assert episode.declares_article and episode.declares_video
    assert page_signals([{"@type": "CollectionPage"}], None).declares_non_article
    assert not page_signals([{"@type": "WebPage"}], "website").declares_non_article


def test_a_short_paywalled_page_is_an_article_unless_a_wall_element_cut_it() -> None:
    # Marked not free, two paragraphs shown: what the publisher chose to show (the
    # article-extraction benchmark scores such pages as articles).
    flagged = (
        '<html><head><script type="application/ld+json">{"@type": "NewsArticle", '
        '"isAccessibleForFree": "False"}</script></head><body><article>'
        f"<p>{FIRST_SENTENCE}, the council said in a statement issued after the vote, which "
        "followed a debate of more than four hours in the town hall.</p>"
        f"<p>Residents near the old station welcomed the decision, and {LAST_SENTENCE}</p>"
        "</article></body></html>"
    )
    result = extract_verbose(flagged)
    assert result.article is not None, result.reason
    # One paragraph on a page marked not free: the lede before the wall.
    one_paragraph = flagged.replace("</p><p>Residents near", " Residents near")
    assert one_paragraph != flagged
    assert extract_verbose(one_paragraph).reason == "paywall"
    # A paywall element right after the paragraphs: the wall cut the text there.
    walled = flagged.replace(
        "</article>", '<div class="paywall">Subscribe to read on</div></article>'
    )
    assert extract_verbose(walled).reason == "paywall"


@pytest.mark.parametrize(
    ("attributes", "weight"),
    [
        ('class="entry-content"', 25),
        ('class="sidebar"', -25),
        ('class="post-comments"', 0),  # says body and chrome: both count
        ('class="story" id="main-nav"', 25),  # the id says both
        ('class="story" id="main-text"', 50),
        ('class="' + "entry " * 60 + '"', 25),  # past the remembered length: weighed all the same
        ("", 0),
    ],
)
def test_a_containers_names_weigh_for_and_against_it(attributes: str, weight: int) -> None:
    from extractors.readability import name_weight

    element = etree.fromstring(f"<div {attributes}/>")
    assert name_weight(element) == weight
    assert name_weight(element) == weight  # remembered, the same
