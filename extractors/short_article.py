"""Evidence that a short body is an article: a post the page sets out as one.

A body shorter than MIN_BODY_CHARS is NULL (`too_short`) by default: a caption, a teaser, the
line an error page shows. But blogs and news sites publish short posts too (a photo with two
sentences, a one-paragraph brief), and the page says so by its structure: the post's headline
(the h1-h3 that shows the title), a date line by it, and the text right under them. This module
reads that structure:

* the headline is found (`extractors.arbiter.headline_element`), and the body starts right under
  it: at most MAX_LINES_BETWEEN short lines between (a byline, a date, a standfirst; lines of a
  word or two of links, a share bar or the author's profile links, are not counted), none of
  them a headline link of its own (a listing's first teaser sits under the page's heading so);
* the body holds a sentence of running text (CP characters: Algorithm 2.1's paragraph);
* the page dates the post: a line that shows a date (a day, a month and a year, in any order
  and language, or in digits) from just above the headline to just below the body (a footer
  line right below it that opens with the date, however many category links follow, when the
  next line does not: a list of other stories dates each of its lines), or the publisher
  declares an article (schema.org type, a machine-readable publication date; OpenGraph's type
  on an undated page only for a post with a header line, `_headed`). A
  page without an article (a 404, a sign-in page, an author's page) has a headline and a short
  text too, but no date on the text;
* no link to the site's home page follows the text: an error page ("this story is no longer
  available", "page not found") sends the reader home right under its message, a post does not.

The other evidence (listing, paywall, video, page_type) is asked before, as for any body. Pure
functions over the shared parse; they never modify it.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from extractors.article import CAPTION, HEADING, TABLE, Block, reading_length
from extractors.blocks import CELL_SEPARATOR, TextBlock, clean_text, text_blocks
from extractors.evidence import HEADLINE_LINK_DENSITY, is_headline_link
from extractors.paragraphs import CP
from extractors.preprocess import Cleaning
from extractors.tree import PLAIN, Element, first_child, heading_text

# Lines between the headline and the body: a byline, a date, a standfirst, a share line.
MAX_LINES_BETWEEN = 4
# A line by the headline is short; a longer one is text of its own, and the body is not the
# post under the headline.
SHORT_LINE_CHARS = 3 * CP
# A date shown this many lines above the headline belongs to the post (blog engines write a
# date header above each post's title).
DATE_LINES_BEFORE = 3
# A date header shows its date and at most this many words besides ("Friday, October 15, 1999";
# "Posted on 14 Mar 2004"); a line of a menu that shows a date-like run ("Formula 1 Euro 2008")
# says more.
DATE_HEADER_WORDS = 3
# ... or opens with its date after at most this many words (a weekday: "Samstag, 14. August 1999
# Bohnenernte und ein Igel", the post's title run into its date header).
DATE_HEADER_LEAD_WORDS = 1
# ... and this many below the body, when they are not links (a post's footer: "October 17, 2012
# | Permalink"; a list of the author's other stories, dated, is made of links).
DATE_LINES_AFTER = 2
# How far below the headline the body's lines are looked for, in lines of the whole page.
MAX_POST_LINES = 60
# A line of links shows other pages' dates.
MAX_DATE_LINK_DENSITY = 0.5
# Between a post's headline and its body the whole page (chrome included) shows no more text
# than one teaser card (`evidence.MAX_CARD_CHARS`): a byline, a share bar, an ad's label, a
# caption. More is a region of its own that the cleaning set aside as chrome (a list of teasers,
# a menu): what comes after it is not the post under the headline (a consent notice at the end
# of a section front).
MAX_CHARS_BETWEEN = 1000

_YEAR = r"(?:199\d|20\d\d)"
# A date a reader sees: digits (11/06/2012, 2012-10-29), a day, a month's name and a year in
# either order ("6 Nov 2012", "November 4th, 2012", "14. November 2026", "5 de mayo de 2012"),
# or the CJK form (2012年11月6日, 2016년 10월 23일). The month's name is any word: the form is
# what is asked.
# A month's name, its day and a two-digit year set apart by one dot or slash, the same mark
# twice ("Nov• 02•12", a blog theme's date): no sentence sets a word and two numbers so.
_DATE = re.compile(
    # The forms that start at a word's start, which is asked once per character of the line
    # (the pattern is tried at each: six forms, each asking it anew, cost twice as much):
    r"\b(?:"
    # digits: 11/06/2012, 06.11.12; or a day, a month's name and a year (6 Nov 2012)
    rf"\d{{1,2}}(?:[./-]\d{{1,2}}[./-](?:\d\d|{_YEAR})\b"
    rf"|(?:st|nd|rd|th|\.)?\s+(?:de\s+)?[^\W\d_]{{3,}}\.?,?\s+(?:de\s+)?{_YEAR}\b)"
    # 2012-10-29
    rf"|{_YEAR}[./-]\d{{1,2}}[./-]\d{{1,2}}\b"
    # a month's name (its first three letters read once for both forms, none of its letters given
    # back: neither form goes on with a letter), then "• 02•12" or a day and a year
    r"|[^\W\d_]{3}(?:[^\W\d_]{0,6}+([•·/])\s*\d{1,2}\s*\1\s*\d\d(?!\d|\s*\1)"
    rf"|[^\W\d_]*+\.?\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s*{_YEAR}\b)"
    r")"
    # 2012年11月6日, and Korean's 2016년 10월 23일
    rf"|{_YEAR}\s*[年년]\s*\d{{1,2}}\s*[月월]"
)


# Every form of _DATE holds digits: a line without one is told in one pass over it, where each
# of the pattern's forms is tried at each of its characters (most lines asked show no date).
_DIGIT = re.compile(r"\d")


def shows_date(text: str) -> bool:
    """Whether a line shows a calendar date with its year."""
    return _DIGIT.search(text) is not None and _DATE.search(text) is not None


def without_dates(text: str) -> str:
    """`text` without the calendar dates it shows (`shows_date`) and without any other digit (a
    time of day): what a dated line says besides its date, a signature's name."""
    return _DIGIT.sub("", _DATE.sub("", text))


def is_set_out_as_post(
    blocks: list[Block],
    cleaning: Cleaning,
    headline: Element | None,
    declared: bool,
    named: bool = False,
) -> bool:
    """Whether a short body is the post the page sets out under its headline (see the module's
    docstring). `declared`: the publisher declares an article or its publication date. `named`:
    only an OpenGraph article type on an undated page, which sites stamp on every page (a search
    page, a weather table, a maintenance notice): it counts for a post with a header of its own
    (`_headed`)."""
    if headline is None or not _has_sentence(blocks):
        return False
    page_body = first_child(cleaning.tree, "body")
    if page_body is None:
        return False
    blocks = _from_headline(blocks, headline)
    if not _starts_under(blocks, page_body, headline, cleaning):
        return False
    # The whole page's lines, chrome included, read once for the checks below.
    page = text_blocks(page_body)
    start = _headline_line(page, headline)
    if start is None:
        return declared  # no line of the headline to read the page around
    if _region_between(blocks, page, start):
        return False
    return (
        declared or (named and _headed(blocks, page, start)) or _dated(blocks, page, start)
    ) and not _sends_home(blocks, page, start)


def _from_headline(blocks: list[Block], headline: Element) -> list[Block]:
    """The body's blocks from the headline on, when the body holds it (a post's container may
    hold the date line above its headline too); else all of them."""
    shown = clean_text(heading_text(headline))
    for index, (kind, text) in enumerate(blocks):
        if kind == HEADING and text == shown:
            return blocks[index:]
    return blocks


def _has_sentence(blocks: list[Block]) -> bool:
    return any(kind not in (HEADING, CAPTION) and len(text) >= CP for kind, text in blocks)


def has_prose(blocks: list[Block]) -> bool:
    """A line of text of at least CP characters (Algorithm 2.1's paragraph; CJK characters
    counted by `reading_length`, as a reader sees them), in one table cell when in a table: a
    body without one is figures, times and names (lottery numbers, a timetable)."""
    for kind, text in blocks:
        if kind == CAPTION:
            continue
        for piece in text.split(CELL_SEPARATOR) if kind == TABLE else (text,):
            if len(piece) >= CP or reading_length(piece) >= CP:
                return True
    return False


def _starts_under(
    blocks: list[Block], page_body: Element, headline: Element, cleaning: Cleaning
) -> bool:
    """The body's first line comes right under the headline, with only short lines between.

    The page's lines are read without its chrome, except the elements around the headline
    (a post header is often named or tagged `header`)."""
    # The elements themselves, not their id()s: lxml frees the Python proxy of an element no
    # one holds, and its id() is then reused by another element's proxy.
    around = frozenset((headline, *headline.iterancestors()))

    def kind(element: Element) -> int:
        return PLAIN if element in around else cleaning.kind(element)

    page = text_blocks(page_body, kind)
    start = _headline_line(page, headline)
    if start is None:
        return False
    first = next(text for kind, text in blocks if kind != CAPTION)
    if begins_body(page[start].text, first):
        return True
    between = 0
    for line in page[start + 1 : start + MAX_POST_LINES]:
        if begins_body(line.text, first):
            return True
        if len(line.text) > SHORT_LINE_CHARS or is_headline_link(line):
            return False
        # A line of short links (a share bar, the author's profile links) is not counted.
        between += line.link_density < HEADLINE_LINK_DENSITY
        if between > MAX_LINES_BETWEEN:
            return False
    return False


def _region_between(blocks: list[Block], page: list[TextBlock], start: int) -> bool:
    """More than MAX_CHARS_BETWEEN characters of the whole page's text (chrome included) lie
    between the headline's line (`start`) and the body's first."""
    first = next(text for kind, text in blocks if kind != CAPTION)
    if begins_body(page[start].text, first):
        return False  # the body holds its headline
    between = 0
    for line in page[start + 1 :]:
        if begins_body(line.text, first):
            return False
        between += line.chars
        if between > MAX_CHARS_BETWEEN:
            return True
    return False


def _headed(blocks: list[Block], page: list[TextBlock], start: int) -> bool:
    """A short line holding a link lies between the headline's line (`start`) and the body's
    last line: the post's header (its category, author, tags) that a blog or news template
    writes under each post's title, whether the body holds it or not. A data page, a search page
    or a notice sets its text right under its heading."""
    end = _body_end(blocks, page, start)
    if end is None:
        return False
    return any(
        len(line.text) <= SHORT_LINE_CHARS and line.link_density > 0
        for line in page[start + 1 : end]
    )


def _dated(blocks: list[Block], page: list[TextBlock], start: int) -> bool:
    """A line from just above the headline's (`start`) to just below the body shows a date. The
    whole page is read, chrome included: a post's date is often in its header or footer."""
    first = blocks[0][1]
    reach = range(start, min(len(page), start + MAX_POST_LINES))
    begin = next((index for index in reach if _same_line(page[index].text, first)), None)
    end = _body_end(blocks, page, start)
    if begin is None or end is None or end < begin:
        return False
    post = page[max(0, start - DATE_LINES_BEFORE) : end + 1]
    below = page[end + 1 : end + 1 + DATE_LINES_AFTER]
    lines = post + [line for line in below if line.link_density < MAX_DATE_LINK_DENSITY]
    if any(len(line.text) <= SHORT_LINE_CHARS and shows_date(line.text) for line in lines):
        return True
    # A post's footer opens with its date, then links its categories ("11/09/2012 in Crafts,
    # Autumn"): one such line right below the body. A list of other stories, dated, has the
    # date and a link on each of its lines.
    opens_dated = [_DATE.match(line.text) is not None for line in below]
    return opens_dated[:1] == [True] and opens_dated[1:2] != [True]


def dated_near(
    blocks: list[Block], page: list[TextBlock], apart_from: range = range(0)
) -> bool | None:
    """Whether the page dates a body without a headline: a short line from DATE_LINES_BEFORE
    above the body's first line to DATE_LINES_BEFORE into it (a blog's date header, the post's
    title between), or in the DATE_LINES_AFTER lines below its last that are not links (the
    post's footer), shows a date. Lines in `apart_from` are another body's (its date header,
    right below a sidebar box). None when the body's first line is not on the page."""
    begin = _first_line(blocks, page)
    if begin is None:
        return None
    last = blocks[-1][1]
    reach = range(begin, min(len(page), begin + MAX_POST_LINES))
    end = next((index for index in reach if _same_line(page[index].text, last)), begin)
    around = range(max(0, begin - DATE_LINES_BEFORE), min(len(page), begin + DATE_LINES_BEFORE))
    below = range(end + 1, min(len(page), end + 1 + DATE_LINES_AFTER))
    return any(
        len(page[index].text) <= SHORT_LINE_CHARS
        and shows_date(page[index].text)
        and (index in around or page[index].link_density < MAX_DATE_LINK_DENSITY)
        for index in (*around, *below)
        if index not in apart_from
    )


def date_header_lines(blocks: list[Block], page: list[TextBlock]) -> range | None:
    """The page's lines where a post's date header would be: from DATE_LINES_BEFORE above the
    body's first line to its second (the body's container may hold its date header and its
    title, as blog engines write them above each post). None when the body is not on the page."""
    begin = _first_line(blocks, page)
    if begin is None:
        return None
    return range(max(0, begin - DATE_LINES_BEFORE), min(len(page), begin + 2))


def _first_line(blocks: list[Block], page: list[TextBlock]) -> int | None:
    """The index of the page's line where the body begins (`begins_body`), if it is there."""
    first = blocks[0][1]
    return next((index for index, line in enumerate(page) if begins_body(line.text, first)), None)


def is_date_header(line: TextBlock) -> bool:
    """A line that heads a post with its date (`heads_with_date`), not a link."""
    return line.link_density < MAX_DATE_LINK_DENSITY and heads_with_date(line.text)


def heads_with_date(text: str) -> bool:
    """The text is a date and little else (DATE_HEADER_WORDS words besides: a weekday, "posted
    on"), or opens with its date (after a weekday) and goes on with the post's title."""
    if not shows_date(text):
        return False
    if len(without_dates(text).split()) <= DATE_HEADER_WORDS:
        return True
    date = _DATE.search(text)
    return date is not None and len(text[: date.start()].split()) <= DATE_HEADER_LEAD_WORDS


def _sends_home(blocks: list[Block], page: list[TextBlock], start: int) -> bool:
    """One of the DATE_LINES_AFTER lines below the body is a link to the site's home page."""
    end = _body_end(blocks, page, start)
    if end is None:
        return False
    below = page[end + 1 : end + 1 + DATE_LINES_AFTER]
    return any(
        line.link_density >= HEADLINE_LINK_DENSITY and any(map(_is_home, line.element.iter("a")))
        for line in below
    )


def _body_end(blocks: list[Block], page: list[TextBlock], start: int) -> int | None:
    """The index of the page's line that holds the body's last block, looked for in the
    MAX_POST_LINES lines from the headline's (`start`) on."""
    last = blocks[-1][1]
    reach = range(start, min(len(page), start + MAX_POST_LINES))
    return next((index for index in reach if _same_line(page[index].text, last)), None)


def _is_home(link: Element) -> bool:
    """A link to this site's root: "/" (an absolute root is another site's as often: the
    author's website in a post's author box)."""
    try:
        parts = urlsplit((link.get("href") or "").strip())
    except ValueError:  # "http://[oops/": a broken host is no home page
        return False
    return parts.path == "/" and not (parts.netloc or parts.query or parts.fragment)


def begins_body(shown: str, written: str) -> bool:
    """The page's line is where the body begins: `_same_line`, but a fragment shorter than a
    sentence (a time, a figure, a table cell) must begin the line: it is part of many lines of
    a page, and would find the body anywhere under the headline."""
    if len(written) < CP:
        return " ".join(shown.split()).startswith(" ".join(written.split()))
    return _same_line(shown, written)


def _headline_line(page: list[TextBlock], headline: Element) -> int | None:
    for index, line in enumerate(page):
        # `in` walks the ancestors in C (an element equals only itself).
        if line.element is headline or headline in line.element.iterancestors():
            return index
    return None


def _same_line(shown: str, written: str) -> bool:
    """A line of the page and a block of the body are the same text (the body's methods cut
    lines differently: one holds the other)."""
    return written in shown or shown in written
