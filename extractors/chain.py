"""The production chain of NewsFeed (Trampuš & Novak, "Internals of an Aggregated Web News Feed",
SiKDD 2012): schema.org articleBody -> DOM heuristics (Algorithm 2.1) -> fallback cascade -> NULL.

NULL needs a reason: no method found text (`no_content`), every method found too little
(`too_short`), or the page positively looks like a non-article (`extractors.evidence`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from functools import cache
from itertools import islice
from typing import Any

from extractors.arbiter import (
    below_headline,
    dated_post,
    headline_element,
    headline_in_chrome,
    loose_text_outside,
    names_site,
    near_headline,
    outside_kept_chrome,
    reconsider,
    titled_h1,
)
from extractors.article import (
    HEADING,
    Article,
    ArticleImage,
    Block,
    Extraction,
    is_too_short,
    running_text,
    visible,
    visible_block,
)
from extractors.article import MIN_BODY_CHARS as MIN_BODY_CHARS  # where it was defined before
from extractors.cascade import WITNESS_METHODS, Candidate, recheck, rescue
from extractors.document import Document
from extractors.dom import DomBody, extract_dom
from extractors.evidence import (
    MAX_TEASER_RUN_CHARS,
    NON_ARTICLE_REASONS,
    NULL_LISTING,
    NULL_PAGE_TYPE,
    PageSignals,
    is_page_of_figures,
    is_stub,
    non_article_reason,
    page_signals,
)
from extractors.images import article_images
from extractors.jsonld import jsonld_objects
from extractors.metadata import Metadata, extract_metadata
from extractors.preprocess import Cleaning
from extractors.reconcile import choose_body
from extractors.safetext import single_line
from extractors.schema_org import jsonld_body, microdata_body
from extractors.short_article import has_prose, is_set_out_as_post
from extractors.threads import is_signed_posts
from extractors.tree import Element, TagIndex, microdata

log = logging.getLogger(__name__)

# How far above Algorithm 2.1's container a kept chrome element makes it doubtful.
KEPT_CHROME_REACH = 2

NULL_NO_CONTENT = "no_content"  # no method found any body text
NULL_TOO_SHORT = "too_short"  # every method found less than MIN_BODY_CHARS
NULL_EXTRACTOR_ERROR = "extractor_error"
# Every reason the chain gives for a parsed page with no article (document reasons apart).
NULL_REASONS = (NULL_NO_CONTENT, NULL_TOO_SHORT, *NON_ARTICLE_REASONS)


def guarded(run: Callable[[], Extraction], url: str | None) -> Extraction:
    """`run()`, or NULL (extractor_error) when it raises."""
    try:
        return run()
    except Exception:
        # Any bug on a hostile page must cost one NULL, never the crawl; the traceback is logged
        # so that it gets fixed.
        log.exception("extraction failed on %s", url)
        return Extraction(article=None, reason=NULL_EXTRACTOR_ERROR)


def run_chain(document: Document) -> Extraction:
    """The chain on a parsed page. Reads the tree, never modifies it (other extractors may share
    the parse)."""
    tree, url = document.tree, document.url
    index = TagIndex(tree)  # one walk for the tags every stage looks up
    jsonld = jsonld_objects(tree, index)
    properties, item_types = microdata(tree, document.size)
    metadata = extract_metadata(tree, url, jsonld, properties, index)
    cleaning = Cleaning(tree, index=index)
    # The heading that shows the title, found once when a rule asks for it.
    headline = cache(lambda: headline_element(tree, metadata.title, url))
    # The `<h1>` that shows the title (from the tag index: no walk of the page).
    h1 = titled_h1(index.get("h1"), metadata.title)
    dom = extract_dom(cleaning, headline=h1)
    inside = dom.kind if dom is not None else None
    written = dom.written_parts if dom is not None else None
    schema = microdata_body(tree, cleaning, properties, inside, written) or jsonld_body(jsonld)
    body = _candidate(choose_body(schema, dom), dom)
    rescued = body is None or is_too_short(body.text)
    if rescued:
        body = rescue(cleaning, metadata.language, _placed_by(headline)) or body
    elif dom is not None and body.method == dom.method and inside_kept_chrome(dom, cleaning):
        body = recheck(body, cleaning, metadata.language, near_headline(headline()))
    elif (
        dom is not None
        and body.method == dom.method
        and loose_text_outside(cleaning, dom.container)
    ):
        # Text between line breaks, which Algorithm 2.1 does not count, may be the article.
        schema_blocks = schema.text_blocks if schema else None
        body = reconsider(body, cleaning, metadata.title, schema_blocks, url)
    if not rescued and dom is not None and body.container is dom.container and h1 is not None:
        # A long box above the headline may outweigh the article below it.
        body = below_headline(body, cleaning, h1)
        if body.container is dom.container:
            # The article may be set, with its headline, in an element named like chrome.
            body = headline_in_chrome(body, cleaning, h1)
    # A date read only from a list's first <time> is a teaser's, not the page's.
    page_dated = metadata.published is not None and not metadata.dated_by_list_time
    signals = page_signals(
        jsonld,
        metadata.page_type,
        metadata.robots,
        item_types,
        metadata.canonical_url,
        dated=page_dated,
        tree=tree,
        url=document.url,
    )
    dated = page_dated and not metadata.dated_by_url
    # Whether the page sets a short body out as its post: asked beside kept chrome and by the judge.
    set_out = _PostEvidence(
        cleaning, headline, signals.declares_article or dated, signals.names_article
    )
    if body is not None and body.container is not None and cleaning.kept_chrome:
        body = outside_kept_chrome(body, cleaning, headline(), metadata.language, set_out)
    if not rescued and schema is None and body is not None and (h1 is None or names_site(h1, url)):
        # Without a headline, an undated box (a weblog's "about" text) may outweigh the dated post.
        body = dated_post(body, cleaning, headline)
    if body is None:
        return Extraction(article=None, reason=NULL_NO_CONTENT)
    # A body from schema.org markup has no container: its images are looked for in the DOM's.
    images_root = dom.container if dom is not None else None
    return _judge(
        body, rescued, document, cleaning, metadata, jsonld, signals, set_out, images_root
    )


def _judge(
    body: Candidate,
    rescued: bool,
    document: Document,
    cleaning: Cleaning,
    metadata: Metadata,
    jsonld: list[dict[str, Any]],
    signals: PageSignals,
    set_out: _PostEvidence,
    fallback: Element | None = None,
) -> Extraction:
    """The article, or NULL by the evidence: a body that looks like a listing sends the page
    through the cascade once more; a short body is an article when the page sets it out as its
    post."""
    tree = document.tree
    reason = non_article_reason(
        body.shape, signals, tree, jsonld, cleaning.kind, lambda: set_out(body)
    )
    if reason == NULL_LISTING and not rescued and not is_page_of_figures(body.blocks, signals):
        # Algorithm 2.1's container is a teaser list: the article may be elsewhere on the page.
        # A page of figures is not looked at again: its other texts are the notes beside them.
        other = rescue(cleaning, metadata.language)
        # A lede alone is not that article: on a front page it is the top story's summary; a
        # post the page sets out under its headline is.
        if (
            other is not None
            and (not (is_too_short(other.text) or is_stub(other.blocks)) or set_out(other))
            and non_article_reason(
                other.shape, signals, tree, jsonld, cleaning.kind, lambda: set_out(other)
            )
            is None
        ):
            body, reason = other, None
    if reason is None and body.container is not None and is_signed_posts(body.container):
        reason = NULL_PAGE_TYPE  # readers' signed posts alone: a guest book, condolences
    if reason is not None:
        return Extraction(article=None, reason=reason)
    container = body.container if body.container is not None else fallback
    return finish_article(body.blocks, body.method, metadata, _short_post(body, set_out), container)


def _short_post(body: Candidate, set_out: _PostEvidence) -> Callable[[], bool]:
    """Whether a body too short for an article is a short post the page sets out, asked only
    of such a body (`finish_article`).

    Never a body only a witness found (Boilerpipe's tree filter, jusText: `cascade.rescue`):
    Algorithm 2.1 found no post in the page's paragraphs, nor the readability scorer one that a
    witness confirms, and the witnesses keep the densest stretch of words wherever it is. On a
    page of tables, widgets and forms that is the line of prose beside them (a results table's
    note, a form's hint, a photo's caption), under the headline and inside the article markup of
    the page's template as a post would be: the short-post evidence would read the template, not
    the text. A witness's body is an article when it has an article's length."""
    if body.method in WITNESS_METHODS:
        return lambda: False
    return lambda: set_out(body)


class _PostEvidence:
    """Whether the page sets a body out as its post (`extractors.short_article`), asked once per
    body and only of bodies no longer than a listing's teaser."""

    def __init__(
        self,
        cleaning: Cleaning,
        headline: Callable[[], Element | None],
        declared: bool,
        named: bool,
    ) -> None:
        self.cleaning, self.headline = cleaning, headline
        self.declared, self.named = declared, named
        # Each answer keeps its candidate: the id() of a candidate no one holds is reused.
        self.answers: dict[int, tuple[Candidate, bool]] = {}

    def __call__(self, candidate: Candidate) -> bool:
        if id(candidate) not in self.answers:
            answer = len(candidate.text) <= MAX_TEASER_RUN_CHARS and (
                is_set_out_as_post(
                    candidate.blocks, self.cleaning, self.headline(), self.declared, self.named
                )
            )
            self.answers[id(candidate)] = (candidate, answer)
        return self.answers[id(candidate)][1]


def _placed_by(
    headline: Callable[[], Element | None],
) -> Callable[[Candidate, Candidate], Candidate | None]:
    """`near_headline`, with the headline looked for only when a rule asks (the witnesses and
    the readability scorer disagree: a rare page)."""
    return lambda first, second: near_headline(headline())(first, second)


def inside_kept_chrome(dom: DomBody, cleaning: Cleaning) -> bool:
    """Whether Algorithm 2.1's container is, or sits right inside, an element named like chrome
    that the veto kept (it held most of the `<p>` text): a footer, a comment list or an ad column
    when the article is not in `<p>`s.

    Only the container and KEPT_CHROME_REACH elements above it are asked: the component that
    holds paragraphs is that close to them (a footer, its column, its list). A kept element
    further up wraps a whole region of the page, the layout wrapper the veto was made for.
    """
    chain = (dom.container, *islice(dom.container.iterancestors(), KEPT_CHROME_REACH))
    return any(cleaning.is_vetoed_chrome(node) for node in chain)


def _candidate(chosen: tuple[list[Block], str] | None, dom: DomBody | None) -> Candidate | None:
    if chosen is None:
        return None
    blocks, method = chosen
    if dom is not None and method == dom.method:
        return Candidate(method, blocks, dom.parts, dom.container)
    return Candidate(method, blocks)


def finish_article(
    blocks: list[Block],
    method: str,
    metadata: Metadata,
    short_article: Callable[[], bool] = lambda: False,
    container: Element | None = None,
) -> Extraction:
    """The article from a body, by the same rules for every extractor: a leading heading that
    repeats the title goes, and a body too short to be an article is NULL, unless the page sets
    it out as a short article (`short_article()`, asked of such bodies only; see
    `extractors.short_article`)."""
    blocks = [(kind, shown) for kind, text in blocks if (shown := visible_block(kind, text))]
    metadata = _visible_metadata(metadata)
    blocks = _drop_leading_title(blocks, metadata.title)
    if is_too_short(running_text(blocks)) and not short_article():  # captions alone never do
        return Extraction(article=None, reason=NULL_TOO_SHORT)
    if not has_prose(blocks):  # figures, times and names: no article
        return Extraction(article=None, reason=NULL_TOO_SHORT)
    return Extraction(article=_article(blocks, method, metadata, container))


def _visible_metadata(metadata: Metadata) -> Metadata:
    """The metadata texts without the control characters a browser does not show."""
    title = visible(metadata.title) if metadata.title else metadata.title
    authors = [shown for author in metadata.authors if (shown := visible(author))]
    description = visible(metadata.description) if metadata.description else None
    if (
        title == metadata.title
        and authors == metadata.authors
        and description == metadata.description
    ):
        return metadata  # the common page: nothing to change, and no copy (`replace` is slow)
    return replace(metadata, title=title, authors=authors, description=description)


def _drop_leading_title(blocks: list[Block], title: str | None) -> list[Block]:
    # The title is one line without bidirectional controls (extractors.safetext); so is the
    # heading that repeats it, compared.
    heading = single_line(blocks[0][1]) if blocks and blocks[0][0] == HEADING else None
    if title and heading is not None and heading.casefold() == title.casefold():
        return blocks[1:]
    return blocks


def _article(
    blocks: list[Block], method: str, metadata: Metadata, container: Element | None
) -> Article:
    lead = None
    if metadata.image:
        lead = ArticleImage(metadata.image, metadata.image_caption, metadata.image_credit)
    return Article(
        blocks=blocks,
        method=method,
        title=metadata.title,
        authors=metadata.authors,
        published=metadata.published,
        language=metadata.language,
        canonical_url=metadata.canonical_url,
        description=metadata.description,
        image=metadata.image,
        modified=metadata.modified,
        section=metadata.section,
        keywords=metadata.keywords,
        paywalled=metadata.paywalled,
        images=article_images(container, metadata.canonical_url, lead),
    )
