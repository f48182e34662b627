"""The whole article: what the chosen container misses and belongs to the same article (a
sibling container, the lead above it, sub-headed sections), what it must not take (an aside, an
author box), and the wrong-block cases. Each behaviour on a page of its own, as a file in
tests/fixtures/pages/whole-article."""

from __future__ import annotations

from pathlib import Path

import pytest

from extractors import extract

PAGES = Path(__file__).parent / "fixtures" / "pages" / "whole-article"


def _article(name: str):
    article = extract((PAGES / name).read_bytes(), "https://example.test/post.html")
    assert article is not None, name
    return article


def _body_text(name: str, extractor) -> str:
    """The text of one extractor's body (`extract_readability`, `extract_dom`) on a fixture."""
    from extractors.document import parse_document
    from extractors.preprocess import Cleaning

    body = extractor(Cleaning(parse_document((PAGES / name).read_bytes()).tree))
    assert body is not None, name
    return "\n".join(text for _, text in body.blocks)


def test_a_post_labelled_with_its_topics_is_not_chrome() -> None:
    # Blog engines class a post's element by its categories and tags ("tag-cookie-recipes",
    # "category-social-eating"): the words name the topic, not a cookie banner or a share bar.
    article = _article("blog-post-taxonomy-classes.html")
    assert article.text.startswith("The first properly cold week")
    assert article.text.endswith("if anyone lets them.")
    assert "spelt flour" not in article.text  # the comments stay out


def test_a_post_set_between_line_breaks_wins_over_the_about_box() -> None:
    # Algorithm 2.1 counts <p> text only: here that is the blog's description in the masthead.
    # The readability scorer finds the post between <br>s; the two disagree, and the post is
    # the one that starts right after the headline (the part of <title> after the blog's name).
    article = _article("blog-post-in-line-breaks.html")
    assert article.method == "readability"  # the method says whose body it is
    assert "forty-two moorings inside the breakwater" in article.text
    assert article.text.endswith("it has never once worked.")
    assert "Twenty years of running" not in article.text


def test_the_headline_is_the_heading_that_shows_a_part_of_the_title() -> None:
    from extractors.arbiter import headline_element
    from extractors.document import parse_document

    tree = parse_document((PAGES / "blog-post-in-line-breaks.html").read_bytes()).tree
    # The blog's name is a part of <title> too, but it heads every page: the last match wins.
    headline = headline_element(tree, "Notes from the Harbour Office")
    assert headline is not None and headline.text == "The winter moorings are full again"


def test_the_headline_matches_the_title_whatever_its_quotes() -> None:
    from extractors.arbiter import headline_element
    from extractors.document import parse_document

    # Publishing software curls the apostrophe in <title> and leaves it straight in the heading.
    html = '<html><body><h1>Blog</h1><h2>Tonight\'s "Big" Supper</h2></body></html>'
    tree = parse_document(html.encode()).tree
    headline = headline_element(tree, "Tonight\u2019s \u201cBig\u201d Supper")
    assert headline is not None and headline.tag == "h2"
    # Or drops the apostrophe from <title>; a heading that quotes the title is still not it.
    html = (
        "<html><body><h1>Blog</h1><h3>Chad\u2019s Choice</h3><h3>\u201cChads Choice\u201d</h3>"
        "</body></html>"
    )
    tree = parse_document(html.encode()).tree
    headline = headline_element(tree, "Chads Choice")
    assert headline is not None and headline.text == "Chad\u2019s Choice"


@pytest.mark.parametrize(
    ("logo", "found"),
    [
        ('<a href="/">Gazeta de Podeni</a>', None),
        ('<a href="https://www.gazeta.example/">Gazeta de Podeni</a>', None),
        ("Gazeta de Podeni", "h1"),  # a heading that links nowhere may be the headline
        ('<a href="/despre-noi">Gazeta de Podeni</a>', "h1"),  # a link to a page of the site
    ],
)
def test_a_heading_that_links_the_home_page_is_the_site_name_not_the_headline(
    logo: str, found: str | None
) -> None:
    from extractors.arbiter import headline_element
    from extractors.document import parse_document

    # A section's listing under a short heading: the title's longest part is the site's name,
    # which the theme's logo shows as a heading on every page.
    html = f"<html><body><h1>{logo}</h1><h1>Imobiliare</h1><p>Anunturi</p></body></html>"
    tree = parse_document(html.encode()).tree
    headline = headline_element(tree, "Gazeta de Podeni")
    assert (headline.tag if headline is not None else None) == found


def test_disagreeing_bodies_are_decided_by_the_publishers_body_then_by_prose() -> None:
    from extractors.arbiter import choose, disagree
    from extractors.cascade import Candidate

    about = Candidate("dom", [("paragraph", "I write about boats and weather every week. " * 3)])
    post = Candidate(
        "readability",
        [("paragraph", f"The moorings were all taken by October, number {n} of them.") for n in
         range(12)],
    )  # fmt: skip
    assert disagree(about, post)
    # No publisher's body, no headline: the longer prose is the article.
    assert choose(about, post, None, None) is post
    # The publisher's articleBody holds the shorter text: its word wins.
    assert choose(post, about, None, about.blocks) is about


def test_a_long_quotation_is_a_passage_of_the_article_not_the_article() -> None:
    # The quotation holds most of the <p> text; the article's own lines around it belong too.
    article = _article("article-with-long-quotation.html")
    kinds = [kind for kind, _ in article.blocks]
    assert kinds == ["paragraph", "quote", "quote", "quote", "paragraph"]
    assert article.text.endswith("within the six weeks the inspectors allowed.")


def test_the_earlier_section_of_the_article_and_its_sub_heading_are_taken() -> None:
    # The template sets the first part apart ("entry-body", then "entry-more" after a
    # sub-heading); Algorithm 2.1 picks the larger part. The earlier part is written in the same
    # paragraphs and is a body on its own: it is the article's start. The author's box after the
    # article is written in paragraphs too, and is not taken.
    article = _article("article-in-two-sections.html")
    assert article.method == "dom"
    assert article.text.startswith("The appeal court spent most of Wednesday")
    assert ("heading", "What the county says") in article.blocks
    assert article.text.endswith("going to the supreme court.")
    assert "Ruth Calder" not in article.text


def test_a_post_whose_id_is_a_hash_is_not_chrome() -> None:
    # TypePad ids each post with a hexadecimal key; cut into words it spells "ad" by chance
    # ("...ee3ad947..."). A run of hex digits mixing digits and letters is an identifier.
    article = _article("blog-post-hashed-id.html")
    assert article.text.startswith("The autumn count of wading birds")
    assert article.text.endswith("when the county publishes them in the spring.")
    assert "second scope" not in article.text  # the comments stay out


def test_hex_identifiers_are_not_words_but_short_names_still_are() -> None:
    from extractors.preprocess import kind_of_names
    from extractors.tree import CHROME, PLAIN

    assert kind_of_names("entry-6a00d8341c57a853ef017ee3ad947e970d", False) == PLAIN
    assert kind_of_names("post-20121026 entry", True) == PLAIN
    assert kind_of_names("ad-slot", True) == CHROME
    assert kind_of_names("div-gpt-ad-1234567890123-0", False) == CHROME
    assert kind_of_names("ad300x250", True) == CHROME


def test_a_uuid_is_an_identifier_not_words() -> None:
    from extractors.preprocess import kind_of_names
    from extractors.tree import CHROME, PLAIN

    # Notion ids every block with a UUID; its group "ad1a" spells "ad" when cut into words.
    assert kind_of_names("760b1946-1436-ad1a-7d57-d3926b7cf30c", False) == PLAIN
    assert kind_of_names("ad-760b1946-1436-4d1a-7d57-d3926b7cf30c", False) == CHROME


def test_a_styling_framework_s_scope_class_is_no_role() -> None:
    from extractors.preprocess import kind_of_names
    from extractors.tree import CHROME, PLAIN

    # Svelte scopes a component's CSS with one class on each of its elements, a hash of letters
    # and digits after "svelte-": "1k9x3ad" spells "ad", and the whole story was chrome (NULL).
    assert kind_of_names("svelte-1k9x3ad", True) == PLAIN
    assert kind_of_names("prose svelte-1k9x3ad", True) == PLAIN
    assert kind_of_names("astro-J7PV25AD", True) == PLAIN  # Astro's, in capitals
    assert kind_of_names("css-1ad2x3", True) == PLAIN  # Emotion's
    # The framework's name before a word is no hash: a menu is still a menu, an ad an ad.
    assert kind_of_names("css-menu", True) == CHROME
    assert kind_of_names("support svelte-1k9x3ad ad-slot", True) == CHROME


def test_a_profile_box_kept_for_its_text_loses_to_the_post_under_the_headline() -> None:
    # The post is set in line breaks; the only <p> prose is the sidebar's profile, which the
    # veto keeps as if it wrapped the page. The readability scorer's body, the post, starts right
    # under the headline: it wins the recheck against the profile, and says so in `method`.
    article = _article("short-post-profile-sidebar.html")
    assert "The winter timetable starts on Monday" in article.text
    assert article.text.endswith("with the answers when they come.")
    assert "Location:" not in article.text
    assert article.method == "readability"


def test_a_layout_wrapper_that_does_not_hold_the_headline_still_holds_the_article() -> None:
    # The wrapper is named like chrome ("content-with-sidebar") and the headline sits above it.
    # Read without it, the page offers the headline, a hot-topics bar and the footer's lines: a
    # region around the wrapper, not a body of its own. The article stays.
    article = _article("article-in-wrapper-named-sidebar.html")
    assert article.text.startswith("The harbour board approved the plan")
    assert article.text.endswith("for the second year running.")
    assert "TRENDING" not in article.text


def test_a_slideshow_kept_for_its_text_inside_the_body_is_not_the_body() -> None:
    # Forty captions under "Also in pictures" outweigh the story, so the veto keeps their
    # "promo" holder as if it wrapped the page; inside the body it wraps none of the story's
    # paragraphs (each caption is a container of its own): it is chrome again.
    article = _article("article-with-slideshow-promo.html")
    assert article.text.startswith("More than four thousand runners")
    assert "before the church services." in article.text
    assert "lifeboat station at the halfway mark" not in article.text


def test_a_kept_element_that_holds_the_body_s_own_text_stays() -> None:
    # An unclosed byline <div> wraps the story (set in line breaks): it holds the text the body
    # was chosen for, so it is part of the body, not chrome inside it.
    # (Without it, Algorithm 2.1's body would be the standfirst alone, and the cascade's scorer
    # would have to find the story.)
    article = _article("article-inside-unclosed-byline.html")
    assert article.method == "dom"
    # (The headline and the standfirst heading above the story are the headline block.)
    assert article.text.startswith("The keeper's cottage at the foot of the north lighthouse")
    assert article.text.endswith("every day in the summer holidays.")


def test_the_post_continued_after_the_cut_is_taken_and_the_author_box_is_not() -> None:
    # The blog engine sets the part after the cut ("entry-more") beside the first part, written in
    # the same paragraphs; Algorithm 2.1 chose the first part. The later section follows it with
    # only an empty anchor between and opens with a paragraph; the author's box after it opens
    # with the portrait, and is not the article's.
    article = _article("post-continued-after-the-cut.html")
    assert article.text.startswith("Three months ago I wrote")
    assert article.text.endswith("the first it has taken on in nine years.")
    assert "Mara Quinn" not in article.text


def test_a_short_post_under_its_headline_is_not_one_teaser_of_its_related_links() -> None:
    # The post is no longer than a teaser, and beside it the "You might also like" block reads
    # as a list of teasers: the post looked like one more of them. The page sets it out as its
    # post (right under the headline, dated): a listing's teaser is never that.
    article = _article("short-post-with-related-teasers.html")
    assert "Nokia has released firmware v30.101" in article.text
    assert article.text.endswith("whether your contacts survived it.")
    assert "N95" not in article.text


def test_the_lead_in_a_chunk_of_its_own_above_an_inline_photo_is_taken() -> None:
    # The template cuts the body into chunks of one class ("story-body") around a photo; the
    # first chunk holds the lead paragraph alone, so Algorithm 2.1 looks through it to the
    # article's wrapper and keeps the later chunk. The earlier chunk of the body's class is the
    # article's start; a one-paragraph chunk of that class after the body (the copyright line)
    # is not taken.
    article = _article("lead-chunk-above-inline-photo.html")
    assert article.method == "dom"
    assert article.text.startswith("HARBOUR TOWN — The ferry operator")
    assert article.text.endswith("one evening crossing through the school term.")
    assert "The morning ferry leaving the harbour" not in article.text  # a caption
    assert "Copyright" not in article.text


def test_a_lead_paragraph_in_a_wrapper_of_its_own_is_taken_but_a_video_caption_is_not() -> None:
    # The standfirst is the article's first paragraph, set in <div>s of its own right above the
    # body: container_of looks through them (they hold nothing else). A paragraph wrapped with
    # a player or a picture in the same place is its caption, and is left out.
    article = _article("standfirst-wrapped-above-body.html")
    assert article.text.startswith("The central library will stay open until midnight")
    assert article.text.endswith("before deciding whether to keep it.")
    video = Path(__file__).parent / "fixtures/pages/hard-articles/fr-article-with-video.html"
    with_video = extract(video.read_bytes(), "https://example.test/post.html")
    assert with_video is not None
    assert with_video.text.startswith("Les images ont fait le tour des réseaux sociaux")


def test_the_lead_section_above_a_side_rail_is_taken_without_the_rail() -> None:
    # The template sets the lead apart ("story-text story-lead"), then a rail, then the rest of
    # the article in a "story-text" wrapper that holds the container and nothing else. The lead
    # section carries the wrapper's tag and class names and is written in the same paragraphs:
    # it is the article's start. The rail between them is written in paragraphs too, and stays
    # out.
    article = _article("lead-section-above-side-rail.html")
    assert article.text.startswith("MILLBROOK — The towpath along the old canal")
    assert "signed diversion through the industrial estate" in article.text
    assert article.text.endswith("question the engineers in charge of the repairs.")
    assert "Readers' picks" not in article.text
    assert "morning briefing" not in article.text


def test_the_post_continued_after_a_photo_in_a_paragraph_is_taken_and_the_author_box_is_not() -> (
    None
):
    # The part after the cut opens with the post's photos, set inside a paragraph as the post's
    # text is: the picture is part of the text's flow, and the section is the article's. The
    # author's box after it opens with the portrait set on its own, and is not the article's.
    article = _article("post-continued-after-a-photo.html")
    assert article.text.startswith("A month ago the society put up the polytunnel")
    assert "three weeks ahead of the open plots" in article.text
    assert article.text.endswith("a second standpipe by the gate in April.")
    assert "Dev Anand" not in article.text


def test_a_short_photo_post_wins_over_the_profile_box_the_veto_kept() -> None:
    # The post is two lines under a photo, dated above its headline; the sidebar's profile is one
    # long paragraph of lists, which both Algorithm 2.1 and the readability scorer prefer. Read
    # without the sidebar, the page offers the post: too short for an article, but set out as one.
    article = _article("short-photo-post-profile-sidebar.html")
    assert "uncovered the old slipway this morning" in article.text
    assert "Things I photograph" not in article.text


def test_a_short_photo_post_dated_only_in_hatom_markup_wins_over_the_profile_box() -> None:
    # As above, but the page shows no year: the date header names the weekday and the footer the
    # time. The post's date is in the hAtom markup (<abbr class="published" title=...>), which
    # declares the post dated: without it the short post is not set out, and the profile wins.
    article = _article("short-photo-post-hatom-date.html")
    assert "uncovered the old slipway this morning" in article.text
    assert "Things I photograph" not in article.text


def test_a_long_issue_panel_above_the_headline_does_not_beat_the_article_below_it() -> None:
    # Algorithm 2.1 takes the first container that outweighs all before it by half: the
    # magazine's current-issue panel, in a section of its own above the post, is twice the
    # article. The article is under its <h1> headline: set aside the region above it, Algorithm
    # 2.1 finds it there, and it starts after the headline.
    article = _article("issue-panel-above-headline.html")
    assert article.text.startswith("Forty-one gas lamps still burn in the lanes")
    assert "winter issue" not in article.text


def test_a_standfirst_does_not_beat_the_body_inside_the_article_s_layout_wrapper() -> None:
    # The body column sits in a wrapper named like chrome ("sidebar-fixed"), inside the same
    # <article> as the headline. Read without the wrapper, the page offers the headline and its
    # standfirst, set out like a short post: it is the article's header, and the body stays.
    article = _article("standfirst-above-wrapper-named-sidebar.html")
    assert article.text.startswith("The levy was added to every ticket in 2019")
    assert article.text.endswith("the accounts of the last five years before it does.")


def test_a_short_post_wins_over_the_publisher_note_both_witnesses_agree_on() -> None:
    # No <p> holds enough for Algorithm 2.1. Boilerpipe and jusText agree on the publisher's note
    # at the foot of the page (one long paragraph of prose); the readability scorer alone finds
    # the post. The two bodies share nothing and sit in unrelated regions: the post starts right
    # under the headline, the note far below it.
    article = _article("short-post-publisher-footer.html")
    assert article.method == "readability"
    assert article.text.startswith("Spend ten minutes in the last working rope walk")
    assert "independent publisher" not in article.text


def test_a_lead_section_beside_its_thumbnail_above_the_body_is_taken() -> None:
    # The excerpt sits in a section of its own above the body, beside the post's thumbnail: a
    # paragraph with a picture is no lead paragraph (it could be a caption), and the section is
    # too short to be one of the body's sections. It holds one paragraph written like the
    # body's, opens with it and holds no heading: it is the lead. The photo credit is links.
    article = _article("excerpt-beside-thumbnail-above-body.html")
    assert article.text.startswith("The city sold the old tram depot on Canal Street")
    assert article.text.endswith("when it grants the licence.")
    assert "Riverside Photo Archive" not in article.text


def test_an_author_box_above_the_body_is_not_its_lead_section() -> None:
    # Written in the body's paragraphs, right above it, but it opens with the author's name in a
    # heading (and the portrait): an author's box, not the article's first lines.
    article = _article("author-box-above-body.html")
    assert article.text.startswith("The night buses on the ring road will run again")
    assert "Ines Marlow" not in article.text


def test_the_lead_is_found_past_a_byline_set_in_a_span() -> None:
    # Lead paragraph, then the byline and date in a <span>, then the body: the span is a line of
    # inline markup, not a block of the text's flow, and the lead above it is the article's.
    article = _article("lead-above-byline-span.html")
    assert article.text.startswith("The council scrapped the tolls on the estuary bridge")
    assert article.text.endswith("any plan to bring them back.")
    assert "Tom Aldous" not in article.text


def test_a_sentence_that_links_its_sources_is_kept_and_link_lists_are_not() -> None:
    # Mostly link text, yet it opens with a run of its own words and sits between two of the
    # body's paragraphs: a sentence of the article. A row of headlines between the same two
    # paragraphs opens with a link; the list of links after the last paragraph opens with a
    # sentence too, but no paragraph of the body follows it: both go.
    article = _article("paragraph-that-links-its-sources.html")
    assert "As we reported when the verdict came in last year, the jury awarded" in article.text
    assert "Chip makers sign a licence" not in article.text
    assert "Everything we have written" not in article.text
    assert article.text.endswith("a bond of the full amount with the court.")


def test_the_words_before_a_block_s_first_link_are_counted_for_link_dense_blocks() -> None:
    from lxml import etree

    from extractors.blocks import text_blocks

    html = (
        "<div><p>Twelve words of prose come before <a href='/a'>the first of several long "
        "links in this paragraph</a> <a href='/b'>and another long link after it</a></p>"
        "<p>A paragraph with <a href='/c'>one link</a> in it and many words of its own.</p></div>"
    )
    dense, plain = text_blocks(etree.fromstring(html))
    assert dense.link_density > 0.5
    assert dense.lead_chars == len("Twelvewordsofprosecomebefore")
    assert plain.lead_chars == 0  # not mostly links: not counted


def test_a_short_last_sentence_of_the_body_is_kept_and_the_credit_after_it_is_not() -> None:
    # Short lines after the last content-bearing paragraph are the container's furniture
    # (credits, "Advert"), unless the line is the article's last sentence: a <p> written like the
    # body's paragraphs, without a link, ending as a sentence ends. The reporting credit ends
    # with a name.
    article = _article("last-sentence-after-the-body.html")
    assert article.text.endswith("rather than hoses.\nWill it be enough this time?")
    assert "Ana Pell" not in article.text


@pytest.mark.parametrize(
    "last_line",
    [
        "¿Será suficiente esta vez?",  # the Spanish question (told before too)
        "Reicht es diesmal? Wohl kaum …",  # an ellipsis
        "„Reicht das diesmal?“",  # German quotation marks close with U+201C
        "«Er det nok denne gang?«",  # Danish guillemets point inwards
        "「今度こそ足りるのか。」",  # a Japanese quote closes with a corner bracket
        "هل سيكفي ذلك؟",  # the Arabic question mark
        "کیا یہ کافی ہوگا\u06d4",  # the Urdu full stop
        "Բավական կլինի\u0589",  # the Armenian full stop
        "በቂ ይሆናል።",  # the Ethiopic full stop
        "လုံလောက်မလား။",  # the Myanmar section mark
    ],
)
def test_a_short_last_sentence_is_told_by_how_its_script_ends_a_sentence(last_line: str) -> None:
    # The last-sentence rule reads punctuation: every script's full stop and question mark, and
    # the quotation marks each language closes a quote with, end a sentence; the credit still
    # ends with a name.
    page = (PAGES / "last-sentence-after-the-body.html").read_text(encoding="utf-8")
    page = page.replace("Will it be enough this time?", last_line)
    article = extract(page.encode("utf-8"), "https://example.test/post.html")
    assert article is not None
    assert article.text.endswith("rather than hoses.\n" + last_line)
    assert "Ana Pell" not in article.text


def test_an_article_set_in_blocks_of_one_named_template_is_read_whole() -> None:
    # A page builder sets a long article in blocks (text, a figure, text, a video, text), each
    # wrapping its paragraphs in the same four named levels; the blocks share an ancestor five
    # levels above the paragraphs' container, further than the twins' three. Every level named
    # alike is the evidence that they are one template repeated, so all three are the body.
    article = _article("article-in-page-builder-blocks.html")
    assert article.text.startswith("Every spring for thirty-one years")
    assert "the trees seemed to keep count" in article.text
    assert article.text.endswith("the russets waited.")
    assert "Apple blossom" not in article.text  # the figure between the blocks stays out


def test_a_standfirst_set_in_a_span_above_the_body_is_its_lead() -> None:
    # Older templates set the whole head of a story in inline markup: the time, the headline,
    # the standfirst and the byline are <span>s between line breaks. The standfirst reads as a
    # content-bearing paragraph and ends as a sentence ends; the byline ends with a name and is
    # looked past.
    article = _article("standfirst-in-a-span-above-body.html")
    assert article.text.startswith("The council has found the money to keep the harbour ferry")
    assert article.text.endswith("asking for the service to be restored.")
    assert "Nell Ardagh" not in article.text


def test_a_caption_set_in_inline_markup_under_its_picture_is_not_the_lead() -> None:
    # The same markup after a picture is the picture's caption, even when it is a sentence.
    article = _article("caption-in-a-font-above-body.html")
    assert article.text.startswith("Only eleven overs were possible")
    assert "The covers stay on" not in article.text


def test_the_readability_body_takes_the_lead_set_in_a_div_above_it() -> None:
    from extractors.readability import extract_readability

    # The readability scorer (the cascade's first answer when Algorithm 2.1 finds no body) picks
    # the body set between line breaks. The lead sits above it in a <div> of its own that holds
    # no block, a paragraph to the reader (Readability.js rewrites such a div into a <p>): it
    # joins the body as a prose <p> would. After the body the same markup is the house's
    # promotion, and stays out; so does the date line, which is no sentence.
    text = _body_text("lead-div-above-body-in-line-breaks.html", extract_readability)
    assert text.startswith("Volunteers from the town's lifeboat station")
    assert text.endswith("will be held in the spring as usual.")
    assert "newsletter" not in text


def test_a_source_written_out_as_its_address_is_kept_and_a_host_name_is_not() -> None:
    # A line that is all link text, between two of the body's paragraphs, is kept when every
    # link's text is the address it points to, written out in full: the text cites its source.
    # A host name alone ("quaywright.example" on a company's line) is a name, as a share bar's
    # "del.icio.us" is, and stays out with the other link lines.
    article = _article("sources-written-as-addresses.html")
    assert "\nhttps://www.example.org/reports/2026/harbour-survey.pdf\n" in article.text
    assert "quaywright" not in article.text
    assert article.text.endswith("discuss the report on the twentieth.")


def test_a_post_nested_by_an_unclosed_embed_keeps_its_first_part() -> None:
    # An embed's <div> that is never closed nests every paragraph after it one level deeper, in
    # a bare <div> that outweighs the post's first part twice over: Algorithm 2.1 picks it. The
    # element that holds it through bare <div>s and sets its own paragraphs before it is the
    # post. The sidebar after the post stays out.
    article = _article("post-nested-by-an-unclosed-embed.html")
    assert article.text.startswith("The island ferry moves to its winter timetable")
    assert article.text.endswith("from eight until six on weekdays.")
    assert "Recent posts" not in article.text and "dredged" not in article.text


def test_a_note_after_a_bare_body_does_not_make_its_element_the_body() -> None:
    # The named element around a bare <div> of paragraphs holds one more paragraph only after
    # it: a note under the body (a newsletter line), not the post's beginning.
    article = _article("note-after-a-bare-body.html")
    assert article.text.startswith("The committee put off its vote")
    assert article.text.endswith("had planned to spend elsewhere.")
    assert "weekly policy letter" not in article.text


def test_a_post_told_in_photo_captions_is_its_text_and_a_credit_line_is_not() -> None:
    # Each photo's "caption" holds two paragraphs that end as sentences end: the post is told
    # photo by photo, and its captions are its text (they were left out as captions, and the
    # div/td fallback kept one of them). The figure's caption and its credit line stay out.
    article = _article("post-told-in-photo-captions.html")
    assert article.method == "dom"
    assert article.text.startswith("The fair filled both halls")
    assert article.text.endswith("could not find room this time.")
    assert "souvenir" not in article.text and "Photo:" not in article.text


def test_a_post_set_with_its_headline_in_a_nav_named_wrapper_is_the_article() -> None:
    # A theme names the single post's wrapper "nav-single": preprocessing removes it as chrome
    # with the headline and the post in it, and the trailer boxes further down hold more <p>
    # text. The wrapper holds the headline and several paragraphs of prose under it: it is read
    # again as kept, and the post there, right under the headline, is the article.
    article = _article("post-in-a-nav-named-wrapper.html")
    assert article.text.startswith("The night ferry to the northern islands sails again")
    assert article.text.endswith("on the operator's website.")
    assert "Harbour Lights" not in article.text and "Salt and Iron" not in article.text


def test_every_item_of_a_roundup_list_stays_when_most_are_prose() -> None:
    # A morning roundup: each item is a linked headline and a sentence of its own. Three items
    # are prose; two have long headlines and short sentences, so their text is mostly link text.
    # Most of the list is the article's prose, so an item that adds a sentence to its link is
    # too. The "More from" list of bare headlines after the body stays out.
    article = _article("roundup-with-linked-headlines.html")
    assert "The fish market will move into the old customs house" in article.text
    assert "Open days at the lighthouse return" in article.text
    assert article.text.endswith("something you would like us to look into.")
    assert "cycle lane" not in article.text


def test_a_header_s_standfirst_is_not_read_as_the_post() -> None:
    # The headline sits in a <header> with a two-paragraph standfirst, and the story under it is
    # short. A <header> is chrome by its tag: it is never read again as the article's element
    # (the standfirst would outweigh the story and start nearer the headline).
    article = _article("standfirst-in-header-above-short-body.html")
    assert article.text.startswith("The mechanism was installed in 1921")
    assert article.text.endswith("wanted the clock kept as it was.")


def test_a_list_the_body_announces_stays_however_linked() -> None:
    # "These are the towns we will visit ...:" and then a list of linked town names: every item
    # is all link text, yet the sentence before it says the list belongs to it. A lone linked
    # line after a colon ("Read more:") is a link, not a list; the "More from" list after the
    # body stays out.
    article = _article("list-announced-by-its-sentence.html")
    towns = "Eastbridge\nMillford (two evenings)\nHarrowgate\nLower Cotton\nSaltmarsh"
    assert towns in article.text
    assert "Our new conductor" not in article.text
    assert "piano" not in article.text
    assert article.text.endswith("please tell your friends.")


def test_a_page_builder_that_names_its_blocks_by_id_gives_the_whole_article() -> None:
    # WebSite X5 names the levels of each text block by id only, numbered per block
    # ("imTextObject_2" in "imCellStyle_2", then "imTextObject_5"): the two text blocks of the
    # story, a gallery's row between them, are one template and both the article's.
    article = _article("page-builder-blocks-named-by-id.html")
    assert article.text.startswith("The last stones of the repaired harbour wall")
    assert "Engineers have also fitted a new drainage channel" in article.text
    assert article.text.endswith("helped clear the debris.")
    assert "School roof to be replaced" not in article.text  # the rail's links stay out


def test_the_lead_above_the_wrapper_of_the_sections_opens_the_body() -> None:
    # The standfirst sits above `div.tekst`, whose sections are the body's containers: it is the
    # lead of the text they open, one level up.
    article = _article("lead-above-the-sections-wrapper.html")
    assert article.text.startswith("De nieuwe veerpont tussen Lekkerwaard en Hoeve gaat")
    assert "Tarieven blijven gelijk" in article.text
    # In the same place, a dek of one sentence is a summary under the headline, not the text.
    article = _article("dek-above-the-sections-wrapper.html")
    assert article.text.startswith("Dat heeft de gemeente maandagavond")
    assert "klaar, maar de werf" not in article.text


def test_a_section_of_one_paragraph_in_its_wrapper_stays_between_the_others() -> None:
    # A document exported section by section wraps each section's text in one element of the
    # body's class; the section of one paragraph is no less the article's than those around it.
    article = _article("sections-one-wrapper-each.html")
    assert "3. Snow" in article.text
    assert "Snow is the gauge's weak point." in article.text
    assert article.text.endswith("at the shed on Saturday mornings.")
    # After the body's last section, a paragraph alone in an element of the body's class is the
    # house's promotion: the newsletter's stays out.
    assert "newsletter" not in article.text
    # A notebook's text cells, code cells between them: the cell of one paragraph is taken.
    article = _article("notebook-text-cells.html")
    assert "Rain stops the birds flying low" in article.text
    assert article.text.endswith("worth a column of its own.")


def test_the_steps_after_a_guide_s_introduction_are_the_rest_of_the_article() -> None:
    # Algorithm 2.1 keeps the introduction, the first container over C_SIGMA; every step alone
    # carries less, all of them together more than twice as much, each under a heading of its
    # own (its number linking to the step itself).
    article = _article("intro-then-headed-steps.html")
    assert article.text.startswith("A puncture is the repair every rider meets first")
    assert "Step 3 Check the tyre" in article.text
    assert article.text.endswith(
        "inflate to the pressure printed on the sidewall and refit the wheel."
    )


def test_teasers_after_a_story_are_no_run_of_its_sections() -> None:
    from extractors.dom import extract_dom

    # The latest news after a short story are cards of one template under headings too, and
    # outweigh it; their headings link to other pages: Algorithm 2.1's body stays the story.
    text = _body_text("story-then-linked-teasers.html", extract_dom)
    assert text.startswith("Fares on the island ferry will rise")
    assert "the central library will open" not in text
    assert "residents to be kept at its present level." in text


def test_the_opening_paragraphs_in_the_wrapper_of_the_sections_start_the_body() -> None:
    # An explainer's template sets its opening paragraphs in the element that wraps its
    # sections, before the first one; the short line next to the section ("Here is what we
    # know so far.") is no lead paragraph, and the lead paragraph rule stopped at it.
    article = _article("explainer-opening-in-the-sections-wrapper.html")
    assert article.text.startswith("The swing bridge over Kelmouth harbour will stay shut")
    assert "Here is what we know so far." in article.text
    assert "transport reporter" not in article.text  # the byline above the wrapper stays out
    assert article.text.endswith("their owners had been told.")


def test_the_next_story_rendered_below_is_not_the_article_s() -> None:
    # An infinite-scroll page renders the next story below the first, in the same template: its
    # body is a twin of the article's, and longer. Its headline, in the headline's own markup
    # (an `<h1>` of the same class) showing another title, starts another story.
    article = _article("next-story-rendered-below.html")
    assert article.text.startswith("The first ferry from the north quay")
    assert article.text.endswith("the same number of crossings each day.")
    assert "Scaffolding around the central library" not in article.text


def test_the_edition_s_other_stories_are_not_the_article_s() -> None:
    # A newsletter's story page lists yesterday's stories under it, each in the story's own
    # template: they are set outside the headline's `<article>`, in a `<section>` of their own
    # that holds headings.
    article = _article("edition-stories-after-the-story.html")
    assert article.text.startswith("The market square reopened")
    assert article.text.endswith("before the Easter fair.")
    assert "school board" not in article.text.lower()
    assert "station garage" not in article.text


def _twins_kept(page: str) -> list[str]:
    """The ids of the `div.text` twins `one_story` keeps on a small page with one `<h1>`."""
    from extractors.document import parse_document
    from extractors.dom import one_story

    tree = parse_document(page.encode()).tree
    twins = list(tree.iter("div"))
    headline = next(tree.iter("h1"))
    return [twin.get("id") for twin in one_story(twins, headline)]


def test_sub_headings_in_the_headline_s_class_are_no_other_story() -> None:
    # A page builder gives every heading one class: the sections under `<h2>`s of the `<h1>`'s
    # class are the article's parts, not other stories (the tag is part of the markup).
    page = (
        '<html><body><h1 class="w-heading">Title</h1><div id="a">one</div>'
        '<h2 class="w-heading">Part two</h2><div id="b">two</div>'
        '<h2 class="w-heading">Part three</h2><div id="c">three</div></body></html>'
    )
    assert _twins_kept(page) == ["a", "b", "c"]


def test_a_part_outside_the_headline_s_article_without_a_heading_stays() -> None:
    # The text after an ad, outside the `<article>` that holds the headline, names no story of
    # its own: it goes on with the article. A `<section>` under a heading of its own does not.
    page = (
        '<html><body><article><h1>Title</h1><div id="a">one</div></article>'
        '<section class="ad"><div id="b">two</div></section>'
        '<section><h2>Other news</h2><div id="c">three</div></section></body></html>'
    )
    assert _twins_kept(page) == ["a", "b"]
