"""When two candidate bodies disagree: which one is the article.

Algorithm 2.1 (the NewsFeed cleartext heuristic) sees only text set in `<p>` elements. On a page
whose article is loose text between `<br>`s (blog engines of every era write posts so) and whose
only `<p>` prose is an "about me" box, a biography or a comment, it returns that prose: a body,
long enough, and the wrong one. The readability-style scorer sees loose text too; when the two
return bodies that share little text, one of them is wrong, and the page says which:

1. **the publisher's body**: a schema.org `articleBody` (JSON-LD or microdata) is the publisher's
   word; the candidate that holds more of it is the article;
2. **the title's neighbourhood**: the article starts right after its headline. The candidate
   that holds the headline, or whose text starts nearest after it in document order, is the
   article; a candidate that starts before the headline is not preferred by it;
3. **the longest run of prose**: otherwise the candidate with more prose (paragraphs of
   Algorithm 2.1's CP characters or more) is the article.

The same neighbourhood decides on a body that sits inside chrome the veto kept (`outside_kept_
chrome`): an element named like a sidebar, a footer or a profile box is kept when it holds half
the page's paragraph text, as the layout wrapper of a page would (a comment thread never is:
`extractors.preprocess.never_wraps`). A wrapper of the page holds its
headline; a comment thread or a profile box beside a short post set in line breaks does not. Then
the page is read again without it, and the body found there is the article when it starts nearer
after the headline. A body found there too short to be an article (a photo post with two lines)
is taken only when the page sets it out as its post (`extractors.short_article`) and no
`<article>` element holds both the headline and the chrome set aside: chrome inside the headline's
`<article>` is a layout wrapper of that article ("sidebar-fixed article-body-segment"), and the
short text beside it is the article's own standfirst.

Where no heading shows the title (a weblog whose `<title>` is its own name and whose post titles
are bold text), nothing places the article, and a sidebar's "about" text in `<p>`s may outweigh
the post. The page dates its posts, not its boxes: when the body found has no date line near it
(`short_article.dated_near`) and the readability scorer, asked again without that body's
container, finds prose that tells (paragraphs ending as sentences end, not teasers cut short)
under a date header ("Friday, October 15, 1999": a date and little else, or a date that opens
the post's title line), that prose is the article (`dated_post`). A heading linked to the
site's home is the site's name, never the headline (`names_site`).

Pure functions over the shared parse; they never modify it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import replace
from itertools import islice
from urllib.parse import urlsplit

from extractors.article import (
    CAPTION,
    HEADING,
    MIN_BODY_CHARS,
    Block,
    is_too_short,
    running_text,
)
from extractors.blocks import clean_text, text_blocks
from extractors.cascade import DISAGREEMENT as DISAGREEMENT  # where it was defined before
from extractors.cascade import Candidate, disagree, rescue, share_in
from extractors.dom import extract_dom, is_descendant
from extractors.paragraphs import CP, ends_as_sentence
from extractors.preprocess import CHROME_TAGS, JUNK_TAGS, MAX_ANCESTORS, Cleaning, never_wraps
from extractors.readability import METHOD as METHOD_READABILITY
from extractors.readability import choose_article, write_article
from extractors.short_article import (
    date_header_lines,
    dated_near,
    heads_with_date,
    is_date_header,
)
from extractors.tree import (
    Element,
    document_order,
    document_title,
    first_child,
    heading_text,
    text_of,
)

# Line breaks on a page from which its text set between `<br>`s may outweigh its `<p>` text
# (a few paragraphs' worth of double breaks): only then is the readability scorer asked, so that
# the pages that set their text in `<p>`s pay nothing.
LOOSE_TEXT_BREAKS = 10
# The candidate holding this much more of the publisher's body than the other is the one.
SCHEMA_MARGIN = 0.25
# Heading tags a headline is set in.
HEADLINE_TAGS = ("h1", "h2", "h3")
# A heading is the headline when it is the title, or a part of it this long.
MIN_HEADLINE_MATCH_CHARS = 15
# Paragraphs of prose an element around the headline must hold to be the article's, not chrome:
# a header holds a standfirst (one) and a byline; a post holds several.
ARTICLE_PARAGRAPHS = 2
# Curled and low quotation marks (and primes) to their straight forms ...
_STRAIGHT_QUOTES = str.maketrans(
    dict.fromkeys("\u2018\u2019\u201a\u201b\u2032", "'")
    | dict.fromkeys("\u201c\u201d\u201e\u201f\u2033", '"')
)
# ... and an apostrophe inside a word left out. The quote is written first, the letter before it
# looked behind for: a pattern that opens with a character is searched for it in C, where one
# that opens with a look-behind is tried at every character.
_APOSTROPHE = re.compile(r"'(?<=\w')(?=\w)")


def loose_text_outside(cleaning: Cleaning, container: Element) -> bool:
    """Whether the page may set text between line breaks outside the chosen container (the
    page's `<br>`s are counted by the Cleaning's walk; the container's own, which Algorithm 2.1
    already wrote out, are left out)."""
    outside = cleaning.line_breaks
    if outside < LOOSE_TEXT_BREAKS:
        return False
    for _ in container.iter("br"):
        outside -= 1
        if outside < LOOSE_TEXT_BREAKS:
            return False
    return True


def headline_element(tree: Element, title: str | None, url: str | None = None) -> Element | None:
    """The heading that shows the article's headline, if any.

    The title is matched in the extracted title and in the document's `<title>`, which holds the
    headline with the site name ("Blog name: Post title"). A blog's name is a heading too, at the
    top of every page: of several matching headings the last one is the headline, and one that
    links to the site's home (`names_site`, with the page's `url`) is never it.
    """
    titles = [_comparable(text) for text in (title, document_title(tree)) if text]
    titles = [text for text in titles if text]
    if not titles:
        return None
    found = None
    for heading in tree.iter(*HEADLINE_TAGS):
        shown = _comparable(heading_text(heading))
        if shown and any(_shows(shown, text) for text in titles) and not names_site(heading, url):
            found = heading
    return found


def names_site(heading: Element, url: str | None = None) -> bool:
    """The heading is a link to the site's home page: the site's name (its logo), which the
    `<title>` holds beside the page's own headline, not that headline. The home is the root, or
    a folder above the page's own address (`url`) on its host: a weblog hosted under a path
    ("/~user/", "/blogs/user/") links its name there from every post."""
    link = next(heading.iter("a"), None)
    if link is None or clean_text(text_of(link)) != clean_text(heading_text(heading)):
        return False
    try:
        parts = urlsplit((link.get("href") or "").strip())
        page = urlsplit(url or "")
    except ValueError:  # "http://[oops/": a broken host is no home page
        return False
    if parts.query or parts.fragment or not (parts.netloc or parts.path):
        return False
    if parts.path in ("", "/"):
        return True
    return (
        parts.path.endswith("/")
        and parts.netloc in ("", page.netloc)
        and page.path.startswith(parts.path)
        and len(page.path) > len(parts.path)
    )


def _comparable(text: str) -> str:
    """A title or heading as compared: one line, any case, straight quotes and no apostrophes
    in words (publishing software curls quotes in one and not in the other, or drops an
    apostrophe from the `<title>`: "Chads Choice" over "Chad\u2019s Choice"). Quotes around a
    word stay: a heading that quotes the title ("Comments on \u201cTitle\u201d") is not it."""
    return _APOSTROPHE.sub("", clean_text(text).casefold().translate(_STRAIGHT_QUOTES))


def _shows(shown: str, title: str) -> bool:
    """The heading is the title, or a part of it long enough to be a headline (a heading that
    holds the title and more is another thing: "12 responses to <title>")."""
    return shown == title or (len(shown) >= MIN_HEADLINE_MATCH_CHARS and shown in title)


def prose_length(blocks: Iterable[Block]) -> int:
    """Characters in the body's paragraphs (no headings, captions or short lines)."""
    return sum(
        len(text) for kind, text in blocks if kind not in (HEADING, CAPTION) and len(text) >= CP
    )


def _start_after(candidate: Candidate, headline: Element, order: dict[Element, int]) -> int | None:
    """How many elements after the headline the candidate's text starts: 0 when its container
    holds the headline, None when it starts before it (or its position is unknown)."""
    container = candidate.container
    if container is None:
        return None
    if container in headline.iterancestors():  # in C: an element equals only itself
        return 0
    start = next((part.element for part in candidate.parts or ()), container)
    distance = order.get(start, -1) - order[headline]
    return distance if distance > 0 else None


def by_headline(first: Candidate, second: Candidate, headline: Element) -> Candidate | None:
    """The candidate in the headline's neighbourhood, or None when the headline says nothing."""
    order = document_order(headline.getroottree().getroot())
    distances = [(_start_after(c, headline, order), c) for c in (first, second)]
    placed = [(distance, c) for distance, c in distances if distance is not None]
    if not placed:
        return None
    return min(placed, key=lambda pair: pair[0])[1]


def near_headline(headline: Element | None) -> Callable[[Candidate, Candidate], Candidate | None]:
    """`by_headline` for a headline that may be missing (then it says nothing)."""
    if headline is None:
        return lambda first, second: None
    return lambda first, second: by_headline(first, second, headline)


def choose(
    first: Candidate,
    second: Candidate,
    headline: Element | None,
    schema_blocks: list[Block] | None,
) -> Candidate:
    """The article among two disagreeing bodies; `first` on a tie."""
    if schema_blocks:
        schema = Candidate("schema", schema_blocks)
        held = share_in(schema, first), share_in(schema, second)
        if abs(held[0] - held[1]) >= SCHEMA_MARGIN:
            return first if held[0] > held[1] else second
    if headline is not None and (near := by_headline(first, second, headline)) is not None:
        return near
    return second if prose_length(second.blocks) > prose_length(first.blocks) else first


def reconsider(
    body: Candidate,
    cleaning: Cleaning,
    title: str | None,
    schema_blocks: list[Block] | None,
    url: str | None = None,
) -> Candidate:
    """Algorithm 2.1's body, or the readability scorer's when the two disagree and the page's
    evidence (`choose`) says the scorer's is the article."""
    choice = choose_article(cleaning)
    if choice is None or body.container is None:
        return body
    if _related(choice.container, body.container):
        return body  # one region of the page: which of its parts belong is not this question
    if any(_related(joined, body.container) for joined in choice.elements[1:]):
        # Algorithm 2.1's body is in a sibling the scorer joined to its container (a sidebar's
        # "about" prose beside a post set in line breaks): the two hold each other's text, and
        # only the scorer's own container says which region the article is.
        choice = replace(choice, elements=[choice.container])
    scored = write_article(choice, cleaning)
    if scored is None:
        return body
    other = Candidate(METHOD_READABILITY, scored.blocks, scored.parts, scored.container)
    if not disagree(body, other):
        return body
    return choose(body, other, headline_element(cleaning.tree, title, url), schema_blocks)


def dated_post(
    body: Candidate, cleaning: Cleaning, headline: Callable[[], Element | None]
) -> Candidate:
    """On a page without a headline, the post the page dates rather than an undated body beside
    it (see the module's docstring). `headline` is asked only where another post may be."""
    container = body.container
    page_body = first_child(cleaning.tree, "body")
    if container is None or page_body is None:
        return body
    if not _prose_outside(cleaning, container) and not loose_text_outside(cleaning, container):
        return body  # no other post on the page
    if headline() is not None:
        return body  # the headline places the article (`choose`, `outside_kept_chrome`)
    choice = choose_article(cleaning, apart_from=container)
    if choice is None or _related(choice.container, container):
        return body
    scored = write_article(choice, cleaning)
    if scored is None or is_too_short(running_text(scored.blocks)) or not tells(scored.blocks):
        return body
    other = Candidate(METHOD_READABILITY, scored.blocks, scored.parts, scored.container)
    if not disagree(body, other):
        return body
    # The page's lines, chrome included (a date header is often in it), read once.
    page = text_blocks(page_body)
    header = date_header_lines(other.blocks, page)
    if header is None or not any(is_date_header(page[index]) for index in header):
        return body
    return other if dated_near(body.blocks, page, apart_from=header) is False else body


def _prose_outside(cleaning: Cleaning, container: Element) -> bool:
    """ARTICLE_PARAGRAPHS content-bearing `<p>`s outside `container` and the cleaning's chrome,
    MIN_BODY_CHARS long together: an article's worth of paragraphs elsewhere on the page."""
    count = length = 0
    for paragraph, stat in cleaning.paragraphs.items():
        if stat.bearing and container not in paragraph.iterancestors():
            count, length = count + 1, length + stat.length
    return count >= ARTICLE_PARAGRAPHS and length >= MIN_BODY_CHARS


def tells(blocks: list[Block]) -> bool:
    """ARTICLE_PARAGRAPHS paragraphs of prose that end as sentences end, and at most one line
    that heads a post with its date: one post, not a list of teasers cut short, of links, of
    dated entries (a site's "what's new" log) or of dated posts (an archive)."""
    told = (text for kind, text in blocks if kind not in (HEADING, CAPTION) and len(text) >= CP)
    if sum(map(ends_as_sentence, told)) < ARTICLE_PARAGRAPHS:
        return False
    return sum(heads_with_date(text) for kind, text in blocks if kind != CAPTION) <= 1


def _related(first: Element, second: Element) -> bool:
    """One element is the other or holds it."""
    return first is second or is_descendant(first, second) or is_descendant(second, first)


def outside_kept_chrome(
    body: Candidate,
    cleaning: Cleaning,
    headline: Element | None,
    language: str | None,
    set_out: Callable[[Candidate], bool] = lambda candidate: False,
) -> Candidate:
    """The body, or the one the page holds outside the chrome the veto kept around it, when that
    one starts nearer after the headline (see the module's docstring).

    Only chrome that does not hold the headline is set aside: a layout wrapper of the page ("main
    with-sidebar") holds it. The other body must be long enough to be an article, and must not be
    a region around the chrome set aside (a wrapper of the page again, whose text then starts with
    a trending bar above the body it holds). A shorter one must be a post the page sets out
    (`set_out`), beside chrome outside the headline's `<article>`.
    """
    container = body.container
    if container is None or headline is None:
        return body
    chain = (container, *islice(container.iterancestors(), MAX_ANCESTORS))
    refused = frozenset(
        node
        for node in chain
        if cleaning.is_vetoed_chrome(node) and not is_descendant(headline, node)
    )
    if not refused:
        return body
    other = _outside(refused, cleaning, language, headline, set_out)
    if other is None or other.container is None:
        return body
    if any(is_descendant(node, other.container) for node in refused):
        return body
    return other if by_headline(body, other, headline) is other else body


def _outside(
    refused: frozenset[Element],
    cleaning: Cleaning,
    language: str | None,
    headline: Element,
    set_out: Callable[[Candidate], bool],
) -> Candidate | None:
    """The body the chain finds when `refused` is chrome: Algorithm 2.1's, or the cascade's; a
    short one only when the page sets it out as its post, away from the headline's `<article>`."""
    strict = cleaning.refusing(refused)
    dom = extract_dom(strict)
    if dom is not None and not is_too_short(running_text(dom.blocks)):
        return Candidate(dom.method, dom.blocks, dom.parts, dom.container)
    other = rescue(strict, language)
    if other is None or other.container is None:
        return None
    if not is_too_short(other.text):
        return other
    if _in_article_with(headline, refused):
        return None
    return other if set_out(other) else None


def _in_article_with(headline: Element, refused: frozenset[Element]) -> bool:
    """Whether an `<article>` element holds both the headline and chrome set aside."""
    return any(
        ancestor.tag == "article" and any(is_descendant(node, ancestor) for node in refused)
        for ancestor in headline.iterancestors()
    )


def titled_h1(h1s: list[Element], title: str | None) -> Element | None:
    """The last of the page's `<h1>`s (from the chain's tag index: no walk of the page) that
    shows the title, as `headline_element` finds it among all headings."""
    if not h1s or not title or not (wanted := _comparable(title)):
        return None
    shown = [h1 for h1 in h1s if (text := _comparable(heading_text(h1))) and _shows(text, wanted)]
    return shown[-1] if shown else None


def below_headline(body: Candidate, cleaning: Cleaning, headline: Element) -> Candidate:
    """Algorithm 2.1's body, or the one it finds below the headline when its container sits in a
    region of the page above the headline (see `_region_above`) and that region is set aside.

    Algorithm 2.1 takes the first container whose paragraphs outweigh all before it by half: a
    trailer widget or a latest-issue panel set out above the post, in a region of its own, wins
    it when it is long. The article starts under its headline; the body found there is taken
    when it is long enough to be an article and starts after the headline or holds it.
    """
    region = _region_above(body.container, headline)
    if region is None:
        return body
    other = extract_dom(cleaning, outside=region)
    if other is None or is_too_short(running_text(other.blocks)):
        return body
    below = Candidate(other.method, other.blocks, other.parts, other.container)
    return below if by_headline(body, below, headline) is below else body


def headline_in_chrome(body: Candidate, cleaning: Cleaning, headline: Element) -> Candidate:
    """Algorithm 2.1's body, or the one found under the headline when an element named like
    chrome holds the headline and the article set under it (see `_chrome_around`), and the body
    chosen lies outside that element.

    An element named like chrome (`nav-single`, a theme's name for the single post) is removed
    with what it holds unless the veto keeps it for its share of the page's text; a long widget
    elsewhere (hidden trailer boxes) outweighs the article, and Algorithm 2.1 takes the widget.
    The headline says which text is the article's: the element is read again as kept, and the
    body found there is taken when it is long enough and nearer the headline.
    """
    wrapper = _chrome_around(headline, cleaning)
    if wrapper is None or body.container is None or is_descendant(body.container, wrapper):
        return body
    other = extract_dom(cleaning.keeping(frozenset([wrapper])))
    if (
        other is None
        or not (other.container is wrapper or is_descendant(other.container, wrapper))
        or is_too_short(running_text(other.blocks))
    ):
        return body
    below = Candidate(other.method, other.blocks, other.parts, other.container)
    return below if by_headline(body, below, headline) is below else body


def _chrome_around(headline: Element, cleaning: Cleaning) -> Element | None:
    """The nearest element above the headline that preprocessing removes as chrome for its name,
    when it holds ARTICLE_PARAGRAPHS content-bearing paragraphs that end as sentences end (a
    header's standfirst or a byline is one line; a post is several); else None."""
    for ancestor in islice(headline.iterancestors(), MAX_ANCESTORS):
        if cleaning.is_removed(ancestor):
            if (
                ancestor.tag in JUNK_TAGS
                or ancestor.tag in CHROME_TAGS
                or never_wraps(ancestor, cleaning.cmp_namespace)
            ):
                # A script or a template; a <header>, <nav>, <aside> or <footer> is chrome by its
                # tag, not only by a name (a header's standfirst is no post); a comment thread,
                # a consent dialog.
                return None
            written = 0
            for paragraph in ancestor.iter("p"):
                if cleaning.stats(paragraph).bearing and ends_as_sentence(text_of(paragraph)):
                    written += 1
                    if written >= ARTICLE_PARAGRAPHS:
                        return ancestor
            return None
    return None


def _region_above(container: Element | None, headline: Element) -> Element | None:
    """The largest element holding the container and not the headline, when it comes before the
    headline in document order; else None."""
    if container is None or is_descendant(headline, container):
        return None
    path = {}  # each ancestor of the headline -> its child on the way down to the headline
    child = headline
    for ancestor in headline.iterancestors():
        path[ancestor] = child
        child = ancestor
    region = container
    for ancestor in container.iterancestors():
        if ancestor in path:
            return region if ancestor.index(region) < ancestor.index(path[ancestor]) else None
        region = ancestor
    return None
