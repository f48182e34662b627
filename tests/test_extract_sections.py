"""The whole article on structured pages of the general web (issue 31): documentation whose
sections nest in wrappers of their own, headings with permalinks, data tables whose cells hold a
paragraph, code and tables set in figures, pull quotes, a wiki's edit links and references.

The pages are the blind hold-outs `hard-articles-holdout-22` (ten general-web pages, six blogs
and news), `-23` (documentation, papers and sectioned longreads) and `-24` (the round's last
check, measured once), each with its expected body, and small pages written here."""

from __future__ import annotations

from extractors import extract_verbose
from tests.support.holdouts import PAGES, ArticleHoldOut

HOLD_OUT = ArticleHoldOut("hard-articles-holdout-22")
# The hold-out's aggregate F1 after the sixteenth pass (0.8837 when it was written, measured
# blind; 0.9222 after).
MIN_HOLD_OUT_22_F1 = 0.92
# A forum topic's first post: the page declares a DiscussionForumPosting, a non-article type by
# design (the known misses of every hold-out: tests/test_non_article_evidence.py).
FORUM_TOPIC = "ja-discourse-2022-forum-oshirase-crawler-replies.html"
RELEASE_NOTES = "en-antora-2022-release-notes-admonition-table.html"


def test_every_article_of_hold_out_22_but_the_forum_topic_is_kept_with_its_body() -> None:
    assert len(HOLD_OUT.pages()) == 16
    lost, f1 = HOLD_OUT.measure()
    assert lost == {FORUM_TOPIC}
    assert f1 >= MIN_HOLD_OUT_22_F1


def test_sections_headed_by_permalinks_are_no_list_of_teaser_cards() -> None:
    # Asciidoctor writes each heading `<h2 id="_x"><a class="anchor" href="#_x"></a>...`: a
    # link in every section's heading, which read as a teaser card's headline made the page a
    # listing (NULL).
    article = HOLD_OUT.article(RELEASE_NOTES)
    assert article.method == "dom"


def _sections_page(heading_link: str) -> bytes:
    sections = "".join(
        f'<div class="sect"><h2 id="s{n}">{heading_link.format(n=n)}Step {n}</h2>'
        f"<p>Step {n} of the guide: the tool reads the configuration file, checks every option "
        "against the schema and stops with the line number of the first error it finds.</p></div>"
        for n in range(1, 5)
    )
    page = (
        "<html><head><title>Guide</title></head><body><main><h1>Guide</h1>"
        f"{sections}</main></body></html>"
    )
    return page.encode()


def test_a_heading_s_link_to_itself_is_its_permalink_and_a_link_away_a_teaser_s_headline() -> None:
    permalinks = extract_verbose(_sections_page('<a class="anchor" href="#s{n}"></a>'))
    assert permalinks.article is not None
    assert "Step 4 of the guide" in permalinks.article.text
    teasers = extract_verbose(_sections_page('<a href="/guides/step-{n}.html">Read: </a>'))
    assert teasers.reason == "listing"


def test_headings_whose_text_is_their_permalink_stay_in_the_body() -> None:
    # MDN writes `<h2 id="syntax"><a href="#syntax">Syntax</a></h2>`: the heading is all link
    # text, and was left out of the body as a link line.
    name = "en-yari-2023-mdn-reference-notecard-dl.html"
    lines = HOLD_OUT.text(name).splitlines()
    for heading in ("Syntax", "Parameters", "Return value", "Examples"):
        assert heading in lines


def test_sections_nested_in_wrappers_of_their_own_under_the_headline_are_one_text() -> None:
    # Asciidoctor: `article > h1, div#preamble, div.sect1 > (h2, div.sectionbody > div.sect2...)`.
    # Algorithm 2.1 kept the longest `sect2` and its twin; the intro, the removed options and
    # the fixed issues are the other sections under the headline, each after its `<h2>`.
    text = HOLD_OUT.text(RELEASE_NOTES)
    expected = HOLD_OUT.expected(RELEASE_NOTES).splitlines()
    assert text.startswith(expected[0])
    assert "Removed options" in text
    assert text.endswith(
        "Time zones were dropped from timestamptz values when the target was a CSV file."
    )
    assert "Upgrading from 3.1" not in text.splitlines()  # the page's next/previous links


def test_an_author_box_or_a_box_after_the_body_is_no_section_of_it() -> None:
    # One heading ("About Helen Marsh") sets the author's box apart from the column: sections
    # are set apart by headings of one template, at least two.
    column = ArticleHoldOut("hard-articles-holdout-7").text(
        "en-opinion-column-long-author-box.html"
    )
    assert "About Helen Marsh" not in column
    # A standfirst and a page's date line under the headline carry less than half the body.
    guidance = ArticleHoldOut("hard-articles-holdout-20").text(
        "sv-episerver-2021-myndighet-vagledning.html"
    )
    assert "Har du frågor?" not in guidance
    assert "Sidansvarig" not in guidance


def test_a_data_table_whose_cells_each_hold_a_paragraph_is_written_row_by_row() -> None:
    # Asciidoctor and word processors wrap each cell's text in a `<p>`: one short paragraph in
    # a cell is data, not a page's layout.
    assert "snapshot.mode.legacy | snapshot.mode" in HOLD_OUT.text(RELEASE_NOTES).splitlines()
    report = PAGES / "hard-articles-holdout-15" / "en-word2003-msonormal-trust-annual-report.html"
    text = extract_verbose(report.read_bytes()).article.text  # type: ignore[union-attr]
    assert "Books issued | 18,412 | 19,967" in text.splitlines()


def test_code_set_out_in_a_figure_beside_its_line_numbers_is_the_article_s() -> None:
    # Hexo writes highlighted code as `figure.highlight > table > td.gutter + td.code`, each
    # cell a `<pre>`: of a figure only the caption was kept, and the code was lost.
    name = "zh-hexo-next-2019-boke-daima-hanghao-banquan.html"
    text = HOLD_OUT.text(name)
    assert "from collections import defaultdict" in text
    assert "12345678" not in text  # the gutter's line numbers


def _post_with_figure(figure: str) -> bytes:
    paragraphs = "".join(
        f"<p>Paragraph {n} of the report: the council compared what each district paid for "
        "heating its schools over the last three winters, and what it plans to pay.</p>"
        for n in range(1, 4)
    )
    page = (
        "<html><head><title>Heating costs</title></head><body><article><h1>Heating costs</h1>"
        f"<div class='entry-content'>{paragraphs}{figure}<p>The council votes on the plan "
        "next month, after a consultation with every school's governors.</p></div></article>"
        "</body></html>"
    )
    return page.encode()


def test_a_table_block_in_a_figure_is_text_and_a_picture_s_figure_its_caption_only() -> None:
    table = (
        "<table><tr><td>District</td><td>2024</td></tr><tr><td>North</td><td>41,200</td></tr>"
        "<tr><td>South</td><td>38,900</td></tr></table><figcaption>Source: the council</figcaption>"
    )
    # WordPress's table block: `figure.wp-block-table`.
    text = extract_verbose(_post_with_figure(f'<figure class="wp-block-table">{table}</figure>'))
    lines = text.article.text.splitlines()  # type: ignore[union-attr]
    assert "North | 41,200" in lines
    assert "Source: the council" not in lines  # the caption stays out of the running text
    # A picture with a table of its own (a chart and its figures) is an image's figure.
    chart = f'<figure><img src="/chart.png" alt="">{table}</figure>'
    text = extract_verbose(_post_with_figure(chart))
    assert "North | 41,200" not in text.article.text  # type: ignore[union-attr]


def _post_with_quote(quote: str) -> bytes:
    page = (
        "<html><head><title>Projectionist</title></head><body><article><h1>Projectionist</h1>"
        "<div class='story'><p>He has run the booth of the Odeon for thirty-one years and has "
        "never once been thanked by name, which is how he likes it.</p>"
        f"<blockquote class='pullquote'><p>{quote}</p></blockquote>"
        "<p>“The whole job is that nobody knows you are there,” he says. “If they notice me, "
        "I\u2019ve done it wrong.” He speaks about focus the way a carpenter speaks of joints.</p>"
        "<p>The cinema closes for a refit in March and he will retire with it, after a last "
        "screening of the film he first ran there in the spring of 1993.</p></div></article>"
        "</body></html>"
    )
    return page.encode()


def test_a_quotation_the_text_repeats_is_a_pull_quote_and_one_it_does_not_is_text() -> None:
    pulled = extract_verbose(_post_with_quote("“If they notice me, I\u2019ve done it wrong.”"))
    assert pulled.article.text.count("If they notice me") == 1  # type: ignore[union-attr]
    quoted = "“Nobody in this town has ever asked me what the job is like,” he wrote in 1999."
    cited = extract_verbose(_post_with_quote(quoted))
    assert quoted in cited.article.text.splitlines()  # type: ignore[union-attr]


def test_a_wiki_s_edit_links_and_reference_list_are_no_text() -> None:
    # MediaWiki writes `[edit]` in every heading (`span.mw-editsection`) and the references in
    # `ol.references` inside the article's own container.
    wiki = ArticleHoldOut("hard-articles-holdout-12")
    text = wiki.text("en-mediawiki-tide-mill-infobox.html")
    assert "History" in text.splitlines()
    assert "[edit]" not in text
    assert "Suffolk Water Mills" not in text  # a reference


DOCS = ArticleHoldOut("hard-articles-holdout-23")
# Hold-out 23 (documentation, papers and sectioned longreads, written blind): 0.9356 as measured,
# 0.9517 after the sixteenth pass.
MIN_HOLD_OUT_23_F1 = 0.95


def test_every_sectioned_page_of_hold_out_23_is_kept_with_its_body() -> None:
    assert len(DOCS.pages()) == 16
    lost, f1 = DOCS.measure()
    assert not lost
    assert f1 >= MIN_HOLD_OUT_23_F1


def test_sections_in_an_article_under_a_header_block_are_one_text() -> None:
    # Bolt's longread: `article > header > div > h1` above four `section`s, each an `<h2>` and a
    # `div.longread__text`; two of them hold one paragraph, which Algorithm 2.1 counts for their
    # section, so only the two others were twins. The standfirst in the header stays out.
    name = "nl-bolt3-2016-longread-secties-pont.html"
    lines = DOCS.text(name).splitlines()
    assert lines == DOCS.expected(name).splitlines()
    assert not any(line.startswith("Al zestig jaar vaart") for line in lines)


def test_sub_headings_before_sections_in_wrappers_of_their_own_are_the_article_s() -> None:
    # Asciidoctor's numbered sections: `div.sect1 > h2 + div.sectionbody`, each body a twin.
    lines = DOCS.text("ja-asciidoctor-2016-dounyuu-sectnums.html").splitlines()
    assert "2. インストール" in lines
    assert "3. 動作確認" in lines


def test_every_article_of_the_last_blind_check_is_kept_with_its_body() -> None:
    # Hold-out 24: news, blogs and general-web pages written blind and measured once at the end
    # of the round, nothing tuned on it (0.9797; 0.9747 with the round's starting code).
    last = ArticleHoldOut("hard-articles-holdout-24")
    assert len(last.pages()) == 16
    lost, f1 = last.measure()
    assert not lost
    assert f1 >= 0.97
