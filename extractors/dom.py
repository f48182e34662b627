"""Algorithm 2.1 of NewsFeed (Trampuš & Novak), its cleartext heuristic: content-bearing
paragraphs, best container, div/td fallback, otherwise NULL.

Works on a `Cleaning` (extractors.preprocess): chrome is skipped, never removed from the tree.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from itertools import islice, pairwise

from extractors.article import CAPTION, HEADING, PARAGRAPH, QUOTE, Block, reading_length
from extractors.blocks import (
    BLOCK_TAGS,
    HEADING_TAGS,
    QUOTE_TAGS,
    Classifier,
    TextBlock,
    clean_text,
    text_blocks,
)
from extractors.boilerplate import keep_body_blocks
from extractors.paragraphs import (
    C_SIGMA,
    CP,
    CT,
    ParagraphStats,
    ends_as_sentence,
    holds_sentences,
    paragraph_stats,
    text_length,
)
from extractors.preprocess import (
    JUNK_TAGS,
    LEAF_PARAGRAPH_TAGS,
    Cleaning,
    chrome_only_as_summary,
    is_hidden,
    is_leaf,
)
from extractors.threads import cut_thread
from extractors.tree import (
    CHROME,
    PLAIN,
    Element,
    common_ancestor,
    document_order,
    elements,
    links_away,
    siblings_tagged,
    text_of,
)

# Containers the div/td fallback considers.
FALLBACK_TAGS = ("div", "td")
# Our addition to the fallback: its text must be prose. Only lines of at least this many
# characters count towards C_SIGMA, so galleries and video pages (many short captions) fail.
FALLBACK_MIN_LINE_CHARS = 2 * CP
# Fallback candidates tried, most own text first (bounds the work on huge pages).
FALLBACK_CANDIDATES = 5
# Twins of the best container (a body split in chunks) share an ancestor this close to it.
TWIN_SCOPE_LEVELS = 3
# ... or further up, when every element on the way down to the twin is named like the one on the
# way down to the best (the same template of several levels, repeated: one section of the body
# per block of the page's layout). Five levels is where the previous pass found unrelated
# look-alikes with the name alone; the whole path's names are much stronger evidence.
TEMPLATE_SCOPE_LEVELS = 8
# How far up a container of paragraphs may hold the best container through bare <div>s (the
# paragraphs after an embed whose wrapper was never closed nest one level deeper per embed).
NESTING_LEVELS = 3
# How far below a sibling of the container its paragraphs are looked for.
SECTION_DEPTH = 12
# The elements whose first one says how a section opens: a paragraph, a heading, a list, a
# picture...
OPENING_TAGS = ("p", "h1", "h2", "h3", "h4", "h5", "h6", "li", "blockquote", "table", "dl", "pre",
                "img")  # fmt: skip
TABLE_CELL_TAGS = ("td", "th")
# A run of at least this many sibling sections of one template, each opening with its
# sub-heading, is the article's sections (one headed element is a thread's or a box's).
MIN_HEADED_SECTIONS = 2
# The sections under the headline beside the body chosen carry at least this share of its text
# when it is one section of several (a standfirst and a date line beside a body are not).
OTHER_SECTIONS_SHARE = 0.5
# How far above the headline's parent the element holding it and the text may be: a header
# block around the headline, an `<article>` around both.
HEADLINE_REGION_LEVELS = 3
# The sub-headings of an article's sections (its headline is the `<h1>`).
SECTION_HEADING_TAGS = ("h2", "h3", "h4", "h5", "h6")
# HTML's sectioning elements a story of its own is set in (`one_story`).
COMPOSITION_TAGS = frozenset({"article", "section"})
# Algorithm 2.1 keeps the first container that carries more than twice what any before it does;
# the run of sections after it takes over as the article's continuation by the same margin.
SECTIONS_OUTWEIGH = 2
# How far above the container the element holding it and the run of sections after it may be
# (the introduction's wrappers, then the guide that holds the introduction and its steps).
SECTION_RUN_LEVELS = 5
# Pictures and players: a paragraph wrapped with one of them is its caption, not a lead.
MEDIA_TAGS = ("img", "picture", "figure", "video", "audio", "iframe", "object", "embed")
# The elements Cleaning weighs as paragraphs (leaf <div>s on pages without <p> prose).
PARAGRAPH_TAGS = ("p", *LEAF_PARAGRAPH_TAGS)
# Short non-bearing lines after the body's last content-bearing paragraph are dropped: at most
# this many, each shorter than this.
MAX_TRAILING_LINES = 3
TRAILING_LINE_MAX_CHARS = 2 * CP
# A key-points box above the body lists at least this many sentences.
MIN_KEY_POINTS = 2
LIST_TAGS = ("ul", "ol")
# The headline block above the body's first content-bearing paragraph: the headline, a
# standfirst, byline, date and category lines, a caption; at most this many lines.
MAX_HEADLINE_LINES = 8
METHOD_DOM = "dom"
METHOD_DOM_FALLBACK = "dom_fallback"


@dataclass(slots=True)
class DomBody:
    blocks: list[Block]
    method: str
    container: Element
    # The blocks as written, link-dense ones included (the non-article evidence reads them).
    parts: list[TextBlock] | None = None
    # The body is the container's text alone (no lead paragraph or twin beside it).
    container_only: bool = False
    # What preprocessing made of each element of the body (`body_kind`).
    kind: Classifier | None = None
    # The blocks of each part of the body, written with `kind` (a stage that writes one of them
    # with the same classifier reads them here: `extractors.schema_org.microdata_body`).
    written_parts: dict[Element, list[TextBlock]] = field(default_factory=dict)


def content_bearing_paragraphs(cleaning: Cleaning, reading: bool = False) -> dict[Element, int]:
    """Lines 1-2 of Algorithm 2.1: CBP plus paragraphs sandwiched between two of them.
    `reading`: a content-bearing paragraph carries its length in alphabetic-script characters
    (`reading_length`) instead of its raw length."""
    paragraphs = cleaning.paragraphs
    bearing = {
        p: _reading(p) if reading else stat.length for p, stat in paragraphs.items() if stat.bearing
    }
    sandwiched = {
        paragraph: stat.length
        for paragraph, stat in paragraphs.items()
        if paragraph not in bearing
        and stat.length > 0
        and _neighbour(paragraph, cleaning, preceding=True) in bearing
        and _neighbour(paragraph, cleaning, preceding=False) in bearing
    }
    bearing.update(sandwiched)
    # Document order, which the "first element wins" rule of line 6 relies on.
    return {p: bearing[p] for p in paragraphs if p in bearing}


def _reading(paragraph: Element) -> int:
    return reading_length(clean_text(text_of(paragraph)))


def _neighbour(element: Element, cleaning: Cleaning, preceding: bool) -> Element | None:
    """The nearest sibling that preprocessing kept."""
    for sibling in element.itersiblings(preceding=preceding):
        if isinstance(sibling.tag, str) and not cleaning.is_removed(sibling):
            return sibling
    return None


def container_of(paragraph: Element, cleaning: Cleaning) -> Element | None:
    """The paragraph's parent, looking through wrappers that hold nothing else that was kept.

    Component frameworks wrap each paragraph in its own <div>; such a wrapper is transparent,
    so the paragraphs still count as children of the element that holds all of them.
    """
    node, parent = paragraph, paragraph.getparent()
    while parent is not None and parent.tag not in ("body", "html"):
        if parent.tag in QUOTE_TAGS:
            # A quotation is a passage of the text around it, never the article on its own.
            node, parent = parent, parent.getparent()
            continue
        if _holds_other_kept(parent, node, cleaning):
            break
        node, parent = parent, parent.getparent()
    return parent


def _holds_other_kept(parent: Element, node: Element, cleaning: Cleaning) -> bool:
    """Whether `parent` has an element child besides `node` that preprocessing kept (a loop:
    asked per level for every content-bearing paragraph, where two nested generators cost more
    than the first sibling's answer)."""
    for sibling in parent:
        if sibling is node or not isinstance(sibling.tag, str):
            continue
        if not cleaning.is_removed(sibling):
            return True
    return False


# Parents `container_of` looks past or stops below whatever they hold: the page and quotations.
_NOT_SHARED = frozenset({"body", "html", *QUOTE_TAGS})


def container_lengths(bearing: dict[Element, int], cleaning: Cleaning) -> dict[Element, int]:
    """Text of the content-bearing paragraphs per container, in document order."""
    per_container: dict[Element, int] = {}
    # Whether each parent asked holds two kept element children or more: then it is the
    # container of every paragraph in it (`container_of` stops at it), told once per parent
    # instead of once per paragraph (most paragraphs are siblings in one container).
    shared: dict[Element, bool] = {}
    for paragraph, length in bearing.items():  # insertion order is document order
        parent = paragraph.getparent()
        if parent is None or parent.tag in _NOT_SHARED:
            parent = container_of(paragraph, cleaning)
        else:
            holds = shared.get(parent)
            if holds is None:
                holds = shared[parent] = _holds_two_kept(parent, cleaning)
            if not holds:
                parent = container_of(paragraph, cleaning)
        if parent is not None:
            per_container[parent] = per_container.get(parent, 0) + length
    return per_container


def _holds_two_kept(parent: Element, cleaning: Cleaning) -> bool:
    """Whether `parent` has two element children or more that preprocessing kept."""
    kept = 0
    for child in parent:
        if isinstance(child.tag, str) and not cleaning.is_removed(child):
            kept += 1
            if kept > 1:
                return True
    return False


def best_container(per_container: dict[Element, int]) -> Element | None:
    """Lines 3-9: the first element whose CBP children carry > C_SIGMA and > 2x the best so far.

    A body cut into chunks of one template, none of them above C_SIGMA alone, counts as one:
    the first chunk of the largest such group stands for it (see `body_containers`).
    """
    best, best_length = None, 0
    for container, length in per_container.items():
        if length > C_SIGMA and length > 2 * best_length:
            best, best_length = container, length
    if best is not None:
        return best
    groups: dict[tuple[tuple[str, str], Element | None], list[Element]] = {}
    for container in per_container:
        signature = _signature(container)
        if signature[1]:
            groups.setdefault((signature, container.getparent()), []).append(container)
    totals = [(sum(per_container[c] for c in group), group[0]) for group in groups.values()]
    if not totals:
        return None
    total, first = max(totals, key=lambda pair: pair[0])
    return first if total > C_SIGMA else None


def enclosing_container(
    best: Element,
    per_container: dict[Element, int],
    bearing: dict[Element, int],
    cleaning: Cleaning,
) -> Element:
    """The container of paragraphs that holds the best one through bare `<div>`s and sets its
    own paragraphs before it, or the best: the outermost within NESTING_LEVELS.

    A post written partly in `<p>`s and partly in `<div>`s without a class or an id (an editor's
    line breaks, an embed whose wrapper was never closed and so nests what follows one level
    deeper) has its later part outweigh its first, which stays one or more levels up, in the
    element that holds both. Paragraphs of a named element only after the bare `<div>` are a
    byline or a note under a body, not its beginning; a bare element holding bare `<div>`s of
    paragraphs is the post's own markup either way.
    """
    node, enclosing = best, best
    for _ in range(NESTING_LEVELS):
        if not _is_bare_div(node) or cleaning.is_removed(node):
            break
        parent = node.getparent()
        if parent is None or parent.tag in ("body", "html"):
            break
        if parent in per_container and (
            _is_bare_div(parent)
            or any(
                sibling in bearing or not bearing.keys().isdisjoint(sibling.iterdescendants())
                for sibling in node.itersiblings(preceding=True)
                if not cleaning.is_removed(sibling)
            )
        ):
            enclosing = parent
        node = parent
    return enclosing


def _is_bare_div(element: Element) -> bool:
    return element.tag == "div" and not element.get("class") and not element.get("id")


def _variant_of(element: Element, tag: str, classes: str) -> bool:
    """`element` has `tag` and the class names of `classes`, or `classes` has all of its: the
    same template, one of them with a modifier ("section intro" beside "section"). Names are
    compared without the identifier a template gives each instance ("mf-section-2"), once one
    name is shared as written."""
    if element.tag != tag:
        return False
    written, names = set((element.get("class") or "").split()), set(classes.split())
    if written.isdisjoint(names):
        return False  # not one name in common: identifiers alone would match any two elements
    if written <= names or names <= written:
        return True
    written = {_CLASS_IDENTIFIER.sub("", name) for name in written}
    names = {_CLASS_IDENTIFIER.sub("", name) for name in names}
    return written <= names or names <= written


def _signature(element: Element) -> tuple[str, str]:
    return element.tag, " ".join((element.get("class") or "").split())


def body_containers(
    best: Element,
    per_container: dict[Element, int],
    bearing: dict[Element, int],
    cleaning: Cleaning,
) -> list[Element]:
    """The best container plus its twins: a body split into several same-named chunks.

    Publishers cut long bodies into consecutive blocks of one template (`div.article-body` between
    ads and videos); Algorithm 2.1 picks one of them. Containers with the best's tag and class,
    holding content-bearing text, and sharing an ancestor at most TWIN_SCOPE_LEVELS above it, are
    the rest of the body. So are the earlier siblings of the best with its tag and class that hold
    a content-bearing paragraph, though `container_of` did not stop at them: the lead set apart
    in a chunk of its own above an inline box (a photo, "Follow us"), its paragraph wrapped in
    markup of its own; and, in a block editor's list of blocks, the later ones (`_chunks`).
    """
    tag, classes = _signature(best)
    if not classes:
        # A bare element is no template by its name; a hand-made page's is its layout table's.
        twins = _layout_table_twins(best, per_container)
        blocks = _blocks_holding(twins, bearing) if len(twins) > 1 else None
        return blocks if blocks is not None else [best]
    scope = best
    for _ in range(TWIN_SCOPE_LEVELS):
        parent = scope.getparent()
        if parent is None or parent.tag in ("body", "html"):
            break
        scope = parent
    containers = _with_section_wrappers(per_container, bearing, tag, classes, scope)
    chunks = _chunks(best, per_container, bearing)
    if chunks:
        wanted = {*containers, *chunks}
        containers = [element for element in scope.iter() if element in wanted]
    twins = [
        container
        for container in containers
        if container is best
        or (
            _variant_of(container, tag, classes)
            and is_descendant(container, scope)
            and not _in_other_chrome(container, best, scope, cleaning)
        )
    ]
    if len(twins) > 1:
        twins += _listing_twins(twins, scope, lambda e: _signature(e) == (tag, classes), cleaning)
    if len(twins) == 1:
        twins = _template_twins(best, scope, containers, cleaning)
        blocks = _blocks_holding(twins, bearing) if len(twins) > 1 else None
        if blocks is not None:
            return blocks
    # A twin nested in another is already inside it: writing both would repeat its text. Each
    # twin's ancestors are looked up among the twins (asking every pair cost their square: 8,000
    # chunks took 40 s).
    found = set(twins)
    twins = [t for t in twins if found.isdisjoint(t.iterancestors())]
    parent = twins[0].getparent()
    if len(twins) > 1 and parent is not None and all(t.getparent() is parent for t in twins):
        # Siblings: the body runs from the first twin to the last, variants included
        # ("chunk chunk--quote" between two "chunk"s).
        children = list(parent)
        first, last = children.index(twins[0]), children.index(twins[-1])
        if parent in per_container:  # it holds content-bearing paragraphs of its own
            first = _opening_paragraphs(children, first, bearing, cleaning)
        return [child for child in children[first : last + 1] if isinstance(child.tag, str)]
    return twins


def _opening_paragraphs(
    children: list[Element], first: int, bearing: dict[Element, int], cleaning: Cleaning
) -> int:
    """Where the body starts among `children`, the twins' parent's: at its earliest
    content-bearing paragraph in the run of plain `<p>`s right before the first twin, or at the
    first twin. An explainer's template sets its opening paragraphs ("Firefighters are still ...",
    "Here is what we know so far.") in the element that wraps its sections, before the first of
    them: the lead paragraph rule stops at the short line next to the section."""
    start = first
    for index in range(first - 1, -1, -1):
        child = children[index]
        if not isinstance(child.tag, str) or cleaning.is_removed(child) or not _has_text(child):
            continue
        if child.tag != "p" or cleaning.kind(child) != PLAIN:
            break
        if child in bearing:
            start = index
    return start


def _with_section_wrappers(
    per_container: dict[Element, int],
    bearing: dict[Element, int],
    tag: str,
    classes: str,
    scope: Element,
) -> list[Element]:
    """The containers in document order, a section's wrapper of the best's tag and class
    standing for the section around it when it holds the section's one paragraph and sits
    between two containers of that tag and class.

    A document exported section by section (Org mode's `div.outline-2 > h2 +
    div.outline-text-2`, a notebook's `div.cell > div.inner_cell > div.text_cell_render`) wraps
    each section's text in one named element. `container_of` looks through a wrapper that holds
    one paragraph alone and stops at the section around it, whose name is not the best's: a
    section of one paragraph was no twin, and the body lost it between two of its sections.
    After the body's last container such a wrapper is the house's promotion in the body's class
    ("Join our forums"), and stays its section's.
    """
    # Each unit in document order, with the section it stands for when it is such a wrapper.
    units: dict[Element, Element | None] = {}
    for paragraph, length in bearing.items():
        node, wrapper = paragraph.getparent(), None
        while node is not None and node not in per_container:
            if wrapper is None and _variant_of(node, tag, classes):
                wrapper = node
            node = node.getparent()
        if node is None:
            continue
        if (
            wrapper is not None
            and per_container[node] == length  # the section's text is this paragraph
            and is_descendant(wrapper, scope)
        ):
            units[wrapper] = node
        else:
            units[node] = None
    named = [
        index
        for index, (unit, section) in enumerate(units.items())
        if section is None and _variant_of(unit, tag, classes)
    ]
    first, last = (named[0], named[-1]) if named else (0, 0)
    return [
        unit if section is None or first < index < last else section
        for index, (unit, section) in enumerate(units.items())
    ]


def _layout_table_twins(best: Element, per_container: dict[Element, int]) -> list[Element]:
    """Containers set in the same layout as `best`, on a page without class names: each in a
    table beside `best`'s (the same parent), reached from its table through the same tags with
    the same attributes ("TABLE WIDTH=600 CELLPADDING=10 > TR > TD > FONT FACE=Verdana SIZE=2").
    A hand-made page sets each part of a long text in a table of its own, a picture's table
    between them; the parts are one template written out again, not look-alikes. Each carries
    more than C_SIGMA, as a body container must: a table of a headline and a date line in the
    same layout is no part of the text."""
    template = _layout_path(best)
    if template is None or template[-1].getparent() is None:
        return [best]
    return [
        container
        for container in per_container
        if container is best
        or (
            per_container[container] > C_SIGMA
            and not container.get("class")
            and _same_layout_path(_layout_path(container), template)
        )
    ]


def _same_layout_path(path: list[Element] | None, template: list[Element]) -> bool:
    """`path` climbs from a container to a table beside the template's through the same tags
    with the same attributes."""
    if path is None or len(path) != len(template) or path[-1] is template[-1]:
        return False
    if path[-1].getparent() is not template[-1].getparent():
        return False
    return all(_same_layout(a, b) for a, b in zip(path, template, strict=True))


def _layout_path(element: Element) -> list[Element] | None:
    """`element` and its ancestors up to its nearest `<table>`, at most TWIN_SCOPE_LEVELS + 1
    levels up; None when no table is that near, or a level has a class (a named template)."""
    path = [element]
    for above in element.iterancestors():
        if len(path) > TWIN_SCOPE_LEVELS + 1 or above.get("class"):
            return None
        path.append(above)
        if above.tag == "table":
            return path
    return None


def _same_layout(first: Element, second: Element) -> bool:
    """The same tag with the same attributes, but for an id."""
    if first.tag != second.tag:
        return False
    own = {name: value for name, value in first.items() if name != "id"}
    return own == {name: value for name, value in second.items() if name != "id"}


def _template_twins(
    best: Element, scope: Element, containers: list[Element], cleaning: Cleaning
) -> list[Element]:
    """Twins of `best` further up than TWIN_SCOPE_LEVELS: containers with its tag and class
    that sit in the same named template as `best` (`_same_template`), under an ancestor at most
    TEMPLATE_SCOPE_LEVELS above it. A long article set in several blocks of a page builder
    (text, a figure, a video, text again), each block wrapping the text in the same four or five
    named levels."""
    template = [best, *best.iterancestors()][: TWIN_SCOPE_LEVELS + 1]
    if len(template) <= TWIN_SCOPE_LEVELS or not all(_block_name(n)[1] for n in template):
        return [best]  # a bare level is no template
    node = scope
    for _ in range(TEMPLATE_SCOPE_LEVELS - TWIN_SCOPE_LEVELS):
        parent = node.getparent()
        if parent is None or parent.tag in ("body", "html"):
            break
        node = parent
        twins = [
            container
            for container in containers
            if container is best
            or (
                is_descendant(container, node)
                and _same_template(container, template)
                and not _in_other_chrome(container, best, node, cleaning)
            )
        ]
        if len(twins) > 1:
            alike = partial(_same_template, template=template)
            return [*twins, *_listing_twins(twins, node, alike, cleaning)]
    return [best]


def _listing_twins(
    twins: list[Element], scope: Element, alike: Callable[[Element], bool], cleaning: Cleaning
) -> list[Element]:
    """Blocks of the twins' template after the last of them that set their text out as a list
    (`_holds_introduced_list`): a page builder's text block whose passage is a sub-heading, a line
    and a list of recommendations holds no content-bearing paragraph, so it was never a
    container, yet it is the article's next passage as the text blocks before it are. Asked
    only where template twins were found."""
    last = twins[-1]
    found: list[Element] = []
    after = False
    # Compared, not asked of lxml by name: a tag a page writes with a control character in it
    # is no name lxml can look up.
    for element in scope.iterdescendants():
        if element.tag != last.tag:
            continue
        if element is last:
            after = True
        elif (
            after
            and not is_descendant(element, last)
            and alike(element)
            and not cleaning.is_removed(element)
            and not _in_other_chrome(element, twins[0], scope, cleaning)
            and _holds_introduced_list(element)
        ):
            found.append(element)
    return found


def _holds_introduced_list(element: Element) -> bool:
    """`element` sets a list out in its own text: a paragraph, then a list with an item that
    bears content as a paragraph does (Algorithm 2.1, line 1). A prose passage introduces its
    list with a line ("We ask the authorities:"); a list of sources or references stands
    under its heading alone."""
    introduced = False
    for node in element.iterdescendants("p", "ul", "ol"):
        if node.tag == "p":
            introduced = introduced or bool(text_of(node).strip())
        elif introduced and any(paragraph_stats(item).bearing for item in node.iter("li")):
            return True
    return False


def _blocks_holding(twins: list[Element], bearing: dict[Element, int]) -> list[Element] | None:
    """The blocks of the layout that hold template twins, from the first to the last, that hold
    content-bearing text: the children of the twins' nearest common ancestor, when each twin
    sits in a block of its own. A page builder sets an article's sub-heading, quotation or
    one-paragraph passage in widgets of their own beside the text widget, in the same block: the
    twins alone left them out. A block between them without such text is a photo or a call to
    action ("Become a member"), not a passage of the article."""
    common = twins[0].getparent()
    while common is not None and not all(is_descendant(twin, common) for twin in twins[1:]):
        common = common.getparent()
    if common is None:
        return None
    blocks = [_child_holding(common, twin) for twin in twins]
    if len(set(blocks)) < len(blocks):
        return None  # two twins in one block: the block holds more than the article's text
    children = [child for child in common if isinstance(child.tag, str)]
    first, last = children.index(blocks[0]), children.index(blocks[-1])
    return [
        child
        for child in children[first : last + 1]
        if child in blocks or not bearing.keys().isdisjoint(child.iter())
    ]


def _child_holding(ancestor: Element, element: Element) -> Element:
    """The child of `ancestor` that holds `element`."""
    node = element
    while (parent := node.getparent()) is not ancestor:
        node = parent
    return node


def _same_template(container: Element, template: list[Element]) -> bool:
    """`container` and its ancestors are named level by level like `template` (the best and its
    ancestors up to TWIN_SCOPE_LEVELS above it), and none of them is one of `template`'s."""
    node: Element | None = container
    for above in template:
        if node is None or node is above or _block_name(node) != _block_name(above):
            return False
        node = node.getparent()
    return True


# The identifier a page builder appends to a class name it gives one element ("elementor-element-
# 5d3f2a1", "wp-container-27", "post-1877"): a last part, after a hyphen or an underscore, of
# letters and digits with at least one digit; or a number run into the name ("sectionedit3").
_CLASS_IDENTIFIER = re.compile(r"(?<=[-_])[0-9A-Za-z]*[0-9][0-9A-Za-z]*$|(?<=[A-Za-z])[0-9]+$")


def _template_name(element: Element) -> tuple[str, tuple[str, ...]]:
    """An element's tag and class names without the identifiers that name it alone: a page
    builder names every block of one template alike but for such an identifier per block, so
    the blocks of one article differed at every level and none was the other's template twin."""
    classes = (element.get("class") or "").split()
    return element.tag, tuple(sorted(_CLASS_IDENTIFIER.sub("", name) for name in classes))


def _block_name(element: Element) -> tuple[str, tuple[str, ...]]:
    """A level of a page builder's block template: its `_template_name`, or, for an element
    without a class, its id less the identifier that names this block alone. Some builders name
    the levels of each block by id only, numbered per block ("imTextObject_2" in "imCellStyle_2",
    then "imTextObject_5" in "imCellStyle_5"): the name before the number is the template's. An
    id without such an identifier ("content", "main") names one element, no template."""
    name = _template_name(element)
    if name[1]:
        return name
    identifier = element.get("id") or ""
    template = _CLASS_IDENTIFIER.sub("", identifier)
    return (element.tag, ("#" + template,)) if template and template != identifier else name


def _in_other_chrome(twin: Element, best: Element, scope: Element, cleaning: Cleaning) -> bool:
    """The look-alike sits in an element named like chrome (kept by the veto, or it would not
    count) that does not hold the best container: a comment thread whose items share the article's
    template is another region of the page, not the rest of the body."""
    for node in twin.iterancestors():
        if node is scope:
            return False
        if cleaning.raw_kind(node) == CHROME and not is_descendant(best, node):
            return True
    return False


def _chunks(
    best: Element, per_container: dict[Element, int], bearing: dict[Element, int]
) -> list[Element]:
    """The siblings of `best` with its tag and class, not counted as containers, that hold a
    content-bearing paragraph (`container_of` looks through a chunk of one paragraph, which then
    counts for the parent): the earlier ones, the lead set apart; the later ones too when `best`
    is a block of a CMS's block list (`_in_block_list`), a text block of one paragraph between
    quote and table blocks. Elsewhere a chunk of one paragraph after the body is its notice
    ("Copyright 2012 ... All rights reserved") set in the body's template."""
    signature = _signature(best)
    directions = (True, False) if _in_block_list(best) else (True,)
    return [
        sibling
        for preceding in directions
        for sibling in siblings_tagged(best, preceding=preceding)
        if sibling not in per_container
        and _signature(sibling) == signature
        and not bearing.keys().isdisjoint(sibling.iterdescendants(*PARAGRAPH_TAGS))
    ]


def _in_block_list(best: Element) -> bool:
    """A sibling of `best` with its tag shares a class name with it under another modifier
    ("block block--quote" beside "block block--text"): block editors (Craft's Matrix, Kirby,
    Gutenberg, portable text) write each block of an article as one element of a common class,
    named for its kind."""
    signature = _signature(best)
    names = set(signature[1].split())
    return bool(names) and any(
        _signature(sibling) != signature
        and not names.isdisjoint((sibling.get("class") or "").split())
        for preceding in (True, False)
        for sibling in siblings_tagged(best, preceding=preceding)
    )


def is_descendant(element: Element, ancestor: Element) -> bool:
    # `in` walks the ancestors in C (an element equals only itself), without a generator's frame.
    return ancestor in element.iterancestors()


def lead_paragraph(container: Element, cleaning: Cleaning) -> Element | None:
    """The lead paragraph set apart just before the body container (NewsFeed: "usually the first
    one, which is often styled and positioned on the page separately"): the nearest preceding
    kept sibling with text, when it is a content-bearing paragraph, or wraps one and nothing
    else that was kept (a "standfirst" `<div>` around it: `container_of` looks through it).
    A line set in inline markup alone (the byline and date in a `<span>` under the lead) is not
    a block of the page's flow: it is looked past, as an empty element is."""
    for sibling in container.itersiblings(preceding=True):
        if not isinstance(sibling.tag, str) or cleaning.is_removed(sibling):
            continue
        if _is_inline_line(sibling, cleaning):
            if _inline_lead(sibling, cleaning):
                return sibling
            continue  # a byline or a date set in a <span> between the lead and the body
        stat = cleaning.paragraphs.get(sibling) or _paragraph_like_stats(sibling)
        if stat is not None:
            return sibling if stat.bearing and cleaning.kind(sibling) == PLAIN else None
        if text_of(sibling).strip():
            return _wrapped_paragraph(sibling, cleaning)
    return None


def lead_above_wrapper(first: Element, cleaning: Cleaning) -> Element | None:
    """The lead paragraph set apart just before the element that wraps the body, when the body
    opens it (nothing kept with text comes before the body's first part inside it): a template
    sets its standfirst (`p.intro`) above a `div.tekst` whose sections are the body's parts, and
    the lead is the wrapper's `lead_paragraph`, one level up from where it was asked. So far
    from the body, only an opening paragraph is the article's (`_opens_article`)."""
    wrapper = first.getparent()
    if wrapper is None or wrapper.tag in ("body", "html"):
        return None
    for sibling in first.itersiblings(preceding=True):
        if isinstance(sibling.tag, str) and not cleaning.is_removed(sibling) and _has_text(sibling):
            return None
    lead = lead_paragraph(wrapper, cleaning)
    return lead if lead is not None and _opens_article(lead) else None


def _opens_article(lead: Element) -> bool:
    """An opening paragraph: it ends as a sentence ends and holds more than one sentence. A
    byline ("by ... at 5:26pm") ends with a time; a dek under the headline is a single sentence,
    a summary rather than the text."""
    text = clean_text(text_of(lead))
    return ends_as_sentence(text) and holds_sentences(text)


def lead_run(lead: Element, cleaning: Cleaning) -> list[Element]:
    """The lead and the paragraphs of its name right before it: a template that names its lead
    paragraph (`p.article__lead-paragraph`) names each of a two-paragraph lead so. Only kept,
    content-bearing, plain paragraphs of the lead's tag and class, one after another."""
    tag, classes = _signature(lead)
    if not classes or tag != "p":
        return [lead]
    run = [lead]
    for sibling in lead.itersiblings(preceding=True):
        if not isinstance(sibling.tag, str) or cleaning.is_removed(sibling):
            continue
        stat = cleaning.paragraphs.get(sibling)
        if _signature(sibling) != (tag, classes) or stat is None or not stat.bearing:
            break
        if cleaning.kind(sibling) != PLAIN:
            break
        run.append(sibling)
    return run[::-1]


def lead_under_headline(
    first: Element, bearing: dict[Element, int], cleaning: Cleaning
) -> Element | None:
    """The lead set under the headline, in the headline's block just above the body: when the
    nearest kept element before the body holds an `<h1>` and, after it, exactly one
    content-bearing paragraph that is plain text (no caption, no picture in its wrapper) and
    ends as a sentence ends. A page sets its headline, lead, byline and photo in one block above
    the body's own element; the lead is the article's first paragraph, the rest is furniture."""
    block = _neighbour(first, cleaning, preceding=True)
    if block is None or cleaning.kind(block) != PLAIN:
        return None
    headline = next(block.iterdescendants("h1"), None)
    if headline is None:
        return None
    found = [
        paragraph
        for sibling in headline.itersiblings()
        for paragraph in sibling.iter()
        if paragraph in bearing
    ]
    if len(found) != 1:
        return None
    lead = found[0]
    chain = [lead, *lead.iterancestors()]
    chain = chain[: chain.index(block)]
    if any(cleaning.kind(node) != PLAIN for node in chain):
        return None  # a caption, or inside a figure or chrome
    if next(chain[-1].iter(*MEDIA_TAGS), None) is not None:
        return None  # set with a picture: its caption
    return lead if ends_as_sentence(clean_text(text_of(lead))) else None


def _inline_lead(element: Element, cleaning: Cleaning) -> bool:
    """The lead set in inline markup of its own (a `<span>` or `<font>` standfirst between the
    headline and the body): read as a paragraph it bears content, is not chrome, holds no
    picture and follows none (a line right after a picture is its caption), and ends as a
    sentence ends. A byline or a date line ends with a name or a time."""
    stat = paragraph_stats(element)
    if not stat.bearing or cleaning.kind(element) != PLAIN:
        return False
    if next(element.iter(*MEDIA_TAGS), None) is not None:
        return False
    for before in element.itersiblings(preceding=True):
        if not isinstance(before.tag, str) or cleaning.is_removed(before):
            continue
        if next(before.iter(*MEDIA_TAGS), None) is not None:
            return False  # the caption of the picture above it
        if _has_text(before):
            break
    return ends_as_sentence(clean_text(text_of(element)))


def _is_inline_line(element: Element, cleaning: Cleaning) -> bool:
    """An element of inline markup (a `<span>`, a `<time>`, a `<small>`) that holds no
    content-bearing paragraph: a line of the page's furniture (its share buttons may be
    `<div>`s), not a part of the text's flow."""
    if element.tag in BLOCK_TAGS:
        return False
    paragraphs = cleaning.paragraphs
    return not any(
        (stat := paragraphs.get(node)) is not None and stat.bearing
        for node in element.iterdescendants(*PARAGRAPH_TAGS)
    )


def lead_section(
    container: Element, bearing: dict[Element, int], cleaning: Cleaning
) -> Element | None:
    """The lead section just before the body: the nearest preceding kept sibling with text, when
    it holds content-bearing paragraphs all written like the container's (the same tag and class
    names), opens with one (`_opens_with_paragraph`) and holds no heading and is no quotation.

    Templates set the article's first lines apart in a section of the body's own paragraphs,
    too short to be a section of `article_sections` (CΣ) and holding more than the paragraph,
    so not a lead paragraph: the excerpt beside its thumbnail above the body, the post's first
    part before the cut ("entry-body", then "entry-more" around the rest). An author's box above
    the body opens with the author's name or portrait, a headline block with its heading, an
    embedded post is a quotation: none of them is taken.
    """
    for sibling in container.itersiblings(preceding=True):
        if not isinstance(sibling.tag, str) or cleaning.is_removed(sibling):
            continue
        if not _has_text(sibling):
            continue
        if sibling.tag in QUOTE_TAGS or _holds_heading(sibling):
            return None
        paragraphs = [p for p in sibling.iterdescendants(*PARAGRAPH_TAGS) if p in bearing]
        if not paragraphs or not _opens_with_paragraph(sibling, bearing):
            return None
        signatures = {_signature(p) for p in bearing if is_descendant(p, container)}
        return sibling if all(_signature(p) in signatures for p in paragraphs) else None
    return None


def _wrapped_paragraph(wrapper: Element, cleaning: Cleaning) -> Element | None:
    """The content-bearing paragraph `wrapper` holds and nothing else kept, or None: walked down
    through elements holding one kept element each, as `container_of` looks up through them."""
    paragraphs, node = cleaning.paragraphs, wrapper
    while node not in paragraphs:
        kept = [
            child for child in node if isinstance(child.tag, str) and not cleaning.is_removed(child)
        ]
        if len(kept) != 1 or node.tag in QUOTE_TAGS:
            return None  # more than the paragraph, or a quotation (an embedded post)
        node = kept[0]
    stat = paragraphs[node]
    if not stat.bearing or cleaning.kind(node) != PLAIN:
        return None
    if next(wrapper.iter(*MEDIA_TAGS), None) is not None:
        return None  # a paragraph beside a picture or a player is its caption
    return node


def _paragraph_like_stats(element: Element) -> ParagraphStats | None:
    if element.tag == "p" or (element.tag in LEAF_PARAGRAPH_TAGS and is_leaf(element)):
        return paragraph_stats(element)
    return None


# Children whose text is not their parent's own (Algorithm 2.1 counts a container's own text).
NESTED_BLOCK_TAGS = frozenset({"div", "td", "table", "section", "article"})


def _own_text(element: Element, cleaning: Cleaning) -> tuple[int, list[Element]] | None:
    """Text length of `element`, excluding nested block containers and junk or chrome, and the
    children whose text it counts (their links and images weigh against it: `_media`); None when
    it cannot exceed C_SIGMA.

    Asked of every div and td of the page: the raw text bounds the cleaned one, so most elements
    (layout wrappers, a line or two) are told without classifying a child or cleaning a text."""
    text = element.text or ""
    bound = len(text)
    children: list[tuple[Element, str, str | None]] = []  # each child, its tail, its own text
    for child in element:
        tag = child.tag
        if not isinstance(tag, str):
            continue
        tail = child.tail or ""
        inner = None if tag in NESTED_BLOCK_TAGS or tag in JUNK_TAGS else text_of(child)
        bound += len(tail) + (len(inner) if inner is not None else 0)
        children.append((child, tail, inner))
    if bound <= C_SIGMA:
        return None
    text_length = len(clean_text(text))
    inline = []
    for child, tail, inner in children:
        text_length += len(clean_text(tail))
        if inner is not None and not cleaning.is_removed(child):
            text_length += len(clean_text(inner))
            inline.append(child)
    return text_length, inline


def _media(inline: list[Element]) -> int:
    """The <a> and <img> elements in `inline` (themselves included)."""
    return sum(1 for child in inline for _ in child.iter("a", "img"))


def fallback_body(cleaning: Cleaning) -> DomBody | None:
    """Lines 10-17: the div/td with the most own text, > C_SIGMA and > CT per link or image,
    whose long lines alone also carry more than C_SIGMA characters."""
    candidates = []
    for element in cleaning.tree.iter(*FALLBACK_TAGS):
        own = _own_text(element, cleaning)
        if own is not None and own[0] > C_SIGMA and own[0] > CT * _media(own[1]):
            candidates.append((own[0], element))
    candidates.sort(key=lambda candidate: candidate[0], reverse=True)
    tried = 0
    for _, element in candidates:
        if cleaning.is_inside_removed(element):
            continue
        parts = text_blocks(element, cleaning.kind)
        blocks = keep_body_blocks(parts)
        prose = sum(
            len(text)
            for kind, text in blocks
            if kind != CAPTION and len(text) >= FALLBACK_MIN_LINE_CHARS
        )
        if prose > C_SIGMA:
            return DomBody(blocks, METHOD_DOM_FALLBACK, element, parts=parts)
        tried += 1
        if tried >= FALLBACK_CANDIDATES:
            break
    return None


def article_sections(
    container: Element, bearing: dict[Element, int], cleaning: Cleaning
) -> list[Element]:
    """The container with the other sections of the same article beside it: siblings whose
    content-bearing paragraphs are written like the container's (the same tag and class names,
    nested no deeper) and carry more than C_SIGMA, as a body container must. The body runs from
    the first such section to the last, the headings and lists between included.

    Templates set an article's parts apart ("entry-body", then "entry-more" after the cut; the
    lead section above the main `div`); Algorithm 2.1 keeps the larger part, or the first. After
    an article come its comments and the author's box, written in paragraphs too, so a later
    section must follow the body with nothing but empty elements between and open with a
    paragraph (a comment thread opens with its heading, an author's box with the portrait); and
    the cell after a layout table's cell is the next column, not the article's continuation.
    """
    parent = container.getparent()
    if parent is None or parent.tag in ("body", "html"):
        return [container]
    written = _paragraphs_by_child(parent, bearing)
    if written.keys() <= {container}:
        # No other child holds a content-bearing paragraph: none carries anything, so none is a
        # section, and the body is the container (most bodies; the children are not read).
        return [container] if not cleaning.is_removed(container) else []
    own = written.get(container, [])
    signatures = {_signature(paragraph) for paragraph, _ in own}
    deepest = min((depth for _, depth in own), default=0)

    def carried(child: Element) -> int:
        """What the child's content-bearing paragraphs carry when they are written like the
        container's (the same tag and class names, nested no deeper); 0 otherwise."""
        paragraphs = written.get(child)
        if not paragraphs or cleaning.is_removed(child):
            return 0
        alike = sum(_signature(paragraph) in signatures for paragraph, _ in paragraphs)
        if alike * 2 <= len(paragraphs) or min(depth for _, depth in paragraphs) > deepest:
            return 0
        return sum(bearing[paragraph] for paragraph, _ in paragraphs)

    def is_section(child: Element) -> bool:
        return carried(child) > C_SIGMA

    children = [child for child in parent if isinstance(child.tag, str)]
    position = children.index(container)
    earlier = [index for index in range(position) if is_section(children[index])]
    first = earlier[0] if earlier else position
    last = position
    if container.tag not in TABLE_CELL_TAGS:
        headed: set[Element] | None = None  # asked only of a child that may head a section
        for index in range(position + 1, len(children)):
            child = children[index]
            if is_section(child) and _opens_with_paragraph(child, bearing):
                last = index
                continue
            if carried(child) and _signature(child)[1]:
                if headed is None:
                    headed = _headed_sections(children[position + 1 :], carried)
                if child in headed:
                    last = index
                    continue
            if cleaning.is_removed(child) or not _has_text(child):
                continue  # a script, an anchor ("more"), a clearing <div>
            break
    return [child for child in children[first : last + 1] if not cleaning.is_removed(child)]


def sections_after_intro(
    best: Element, per_container: dict[Element, int], cleaning: Cleaning
) -> list[Element] | None:
    """The container and the run of sections after it, when the article goes on in them: an
    introduction, then its steps or chapters (a repair guide's `li.step`s), each opening with a
    heading of its own and holding its text in containers of one template (`ul.step-lines`).

    Algorithm 2.1 keeps the first container that carries more than C_SIGMA and twice what came
    before: the introduction, when every step alone carries less. The steps together, carrying
    more than SECTIONS_OUTWEIGH times what it does, are the rest of the article; a list of teasers
    is not, its headings linking to other pages. None when no such run follows the container.
    """
    runs: dict[tuple[str, str], list[Element]] = {}
    after = False
    for container in per_container:  # document order
        if container is best:
            after = True
        elif (
            after
            and _signature(container)[1]
            and not cleaning.is_removed(container)
            and not is_descendant(container, best)
            and not is_descendant(best, container)
        ):
            runs.setdefault(_signature(container), []).append(container)
    # The outermost element the run may sit in: SECTION_RUN_LEVELS above the container, below
    # the page's `<body>`.
    region = None
    for node in islice(best.iterancestors(), SECTION_RUN_LEVELS):
        if node.tag in ("body", "html"):
            break
        region = node
    if region is None:
        return None
    for members in runs.values():
        carried = sum(per_container[member] for member in members)
        if len(members) < MIN_HEADED_SECTIONS or carried <= SECTIONS_OUTWEIGH * per_container[best]:
            continue
        # The nearest element above them all is the nearest that holds all their parents.
        parents = [member.getparent() for member in members]
        holder = None if any(parent is None for parent in parents) else common_ancestor(parents)
        if holder is None or not (holder is region or is_descendant(holder, region)):
            continue
        sections = [_child_holding(holder, member) for member in members]
        if len(set(sections)) == len(sections) and all(map(_opens_with_own_heading, sections)):
            return [best, *sections]
    return None


def _opens_with_own_heading(section: Element) -> bool:
    """The section opens with a heading that links to no other page (a step's number links to
    the step itself; a teaser's title to its story). Any fragment link counts as the page's own:
    `links_away` reads a permalink only within PERMALINK_LEVELS of its target, and a step's
    number links to the step around the heading's wrapper."""
    heading = _opening_heading(section)
    return heading is not None and not any(
        not (link.get("href") or "").startswith("#") for link in heading.iter("a")
    )


def text_after_table(
    last: Element, bearing: dict[Element, int], cleaning: Cleaning
) -> list[Element]:
    """The text that goes on under the layout table whose cell is the body's last part: the
    elements after the table, in the element that holds it, up to the last content-bearing
    paragraph written like the cell's (the same tag and class names), the headings and lists
    between included. A hand-made page sets its text in a cell beside a photo and a box of its
    own, then goes on at full width under the table: Algorithm 2.1 counts the cell alone, and
    `article_sections` rightly never reads the next cell (the next column) as a continuation.
    Another layout table after it is another region of the page and ends the run."""
    if last.tag not in TABLE_CELL_TAGS:
        return []
    table = next(last.iterancestors("table"), None)
    if table is None:
        return []
    written = {_signature(p) for p in bearing if is_descendant(p, last)}
    run: list[Element] = []
    end = 0
    for element in table.itersiblings():
        if not isinstance(element.tag, str) or cleaning.is_removed(element):
            continue
        if element.tag == "table":
            break
        run.append(element)
        if any(p in bearing and _signature(p) in written for p in element.iter(*PARAGRAPH_TAGS)):
            end = len(run)
    return run[:end]


def _headed_sections(siblings: list[Element], carried: Callable[[Element], int]) -> set[Element]:
    """The sections among `siblings` that open with a sub-heading and carry content-bearing
    paragraphs written like the body's (`carried`), when at least MIN_HEADED_SECTIONS of them
    share one tag and class and together carry more than C_SIGMA, as a body container must: an
    article's run of sub-headed sections after its intro, each shorter than a body alone. A
    comment thread or an author's box opens with its heading too, but is one element, not a run
    of one template."""
    by_template: dict[tuple[str, str], list[Element]] = {}
    for sibling in siblings:
        if _signature(sibling)[1] and carried(sibling) and _opening_heading(sibling) is not None:
            by_template.setdefault(_signature(sibling), []).append(sibling)
    return {
        section
        for group in by_template.values()
        if len(group) >= MIN_HEADED_SECTIONS and sum(map(carried, group)) > C_SIGMA
        for section in group
    }


def sections_under_headline(
    twins: list[Element],
    per_container: dict[Element, int],
    bearing: dict[Element, int],
    cleaning: Cleaning,
) -> list[Element] | None:
    """The sections of a text set out under the page's one `<h1>`, when the body chosen is one
    of them: the containers of content-bearing paragraphs under the element that holds the
    headline (the headline's own paragraphs through the wrappers that hold them, an intro), in
    document order with the sub-headings between them, from the first to the last; or None.

    Documentation and papers (Asciidoctor's `sect1 > sectionbody > sect2`, LaTeXML's nested
    `ltx_section`s, Sphinx's `section`s) nest each section in wrappers of its own, so that
    Algorithm 2.1 keeps the longest one and the twins and sibling rules, which look at one level,
    see no others. Only a text whose parts are all set apart by sub-headings is taken so, and
    only when MIN_HEADED_SECTIONS of those headings share one template: an article followed by
    its author's box ("About Helen Marsh", a heading, then paragraphs) is one heading apart, and a
    sidebar's boxes are headed each in their own markup."""
    headlines = [
        h1 for h1 in elements(cleaning.tree, "h1", cleaning.index) if not cleaning.is_removed(h1)
    ]
    if len(headlines) != 1:
        return None
    region = _around_headline(headlines[0], twins)
    if region is None:
        return None
    # The headline's own block when the text lies further out: its standfirst and credits.
    header = headlines[0].getparent() if region is not headlines[0].getparent() else None
    wanted = {
        c
        for c in per_container
        if c is not region
        and is_descendant(c, region)
        and (header is None or (c is not header and not is_descendant(c, header)))
    }
    chosen = sum(per_container.get(twin, 0) for twin in twins)
    around = sum(per_container[c] for c in wanted if c not in twins)
    if around + per_container.get(region, 0) < OTHER_SECTIONS_SHARE * chosen:
        return None
    if region in per_container:
        wanted |= _children_holding_own_paragraphs(region, bearing, cleaning)
    if len(wanted) < MIN_HEADED_SECTIONS:
        return None
    parts: list[Element] = []
    for element in region.iterdescendants():
        if element not in wanted and element.tag not in SECTION_HEADING_TAGS:
            continue
        if header is not None and is_descendant(element, header):
            continue
        if (parts and is_descendant(element, parts[-1])) or cleaning.is_inside_removed(element):
            continue
        parts.append(element)
    bodies = [index for index, part in enumerate(parts) if part.tag not in SECTION_HEADING_TAGS]
    headings = _separating_headings(parts, bodies)
    if headings is None or len(bodies) < 2:
        return None
    if any(links_away(heading) for heading in headings):
        return None  # a teaser's headline: a list of stories beside the text, not its sections
    if max(Counter(map(_template_name, headings)).values(), default=0) < MIN_HEADED_SECTIONS:
        return None
    first = bodies[0]
    while first > 0 and parts[first - 1].tag in SECTION_HEADING_TAGS:
        first -= 1  # the sub-heading that opens the first section
    return parts[first : bodies[-1] + 1]


def _around_headline(headline: Element, twins: list[Element]) -> Element | None:
    """The element that holds the headline and the body chosen: the headline's parent, or an
    `<article>` at most HEADLINE_REGION_LEVELS above it (a header block around the headline, the
    text beside it); never the page's `<body>`."""
    region = headline.getparent()
    for level in range(HEADLINE_REGION_LEVELS):
        if region is None or region.tag in ("body", "html"):
            return None
        if all(is_descendant(twin, region) for twin in twins):
            # Further out than the headline's parent, only the page's own mark of one article
            # holds both: a layout wrapper holds a site's header and sidebars too.
            return region if level == 0 or region.tag == "article" else None
        region = region.getparent()
    return None


def _children_holding_own_paragraphs(
    region: Element, bearing: dict[Element, int], cleaning: Cleaning
) -> set[Element]:
    """The children of `region` that hold the content-bearing paragraphs counted for `region`
    itself (`container_of` looked through the wrappers around them: an intro's `div#preamble >
    div.sectionbody > div.paragraph > p`)."""
    children = set()
    for paragraph in bearing:
        if not is_descendant(paragraph, region) or container_of(paragraph, cleaning) is not region:
            continue
        node = paragraph
        while (parent := node.getparent()) is not None and parent is not region:
            node = parent
        if parent is region:
            children.add(node)
    return children


def _separating_headings(parts: list[Element], bodies: list[int]) -> list[Element] | None:
    """The sub-headings between each two parts of a text, each part after the first set apart by
    one (between them, or opening it); None when two parts follow each other without one."""
    headings: list[Element] = []
    for before, after in pairwise(bodies):
        between = parts[before + 1 : after]
        if not between:
            opening = _opening_heading(parts[after])
            if opening is None:
                return None
            between = [opening]
        headings += between
    return headings


def _opening_heading(section: Element) -> Element | None:
    """The section's first block with text, when it is a heading."""
    for element in section.iterdescendants(*OPENING_TAGS):
        if element.tag == "img" or text_of(element).strip():
            return element if element.tag in HEADING_TAGS else None
    return None


def lead_section_above(
    first: Element, bearing: dict[Element, int], cleaning: Cleaning
) -> Element | None:
    """The lead section one level up: an earlier sibling of the body's template wrapper, of its
    tag and holding its class names, whose content-bearing paragraphs are written like the body's.

    Templates set the lead apart above a side rail ("story-text story-lead", the rail, then
    "story-text" around the rest); the container is all its wrapper holds, so the lead is
    neither its sibling nor a twin. The section alone is taken, never the elements between it
    and the wrapper: they are the rail.
    """
    wrapper = first.getparent()
    if wrapper is None or wrapper.tag in ("body", "html"):
        return None
    # Its class names asked first: a bare wrapper is settled without reading its children.
    classes = set((wrapper.get("class") or "").split())
    if not classes:
        return None  # a bare element is no template
    if any(
        child is not first
        and isinstance(child.tag, str)
        and not cleaning.is_removed(child)
        and _has_text(child)
        for child in wrapper
    ):
        return None  # the container is not all its wrapper holds: the wrapper is no template
    for sibling in siblings_tagged(wrapper, preceding=True):
        if not classes <= set((sibling.get("class") or "").split()):
            continue
        if cleaning.is_removed(sibling):
            return None
        paragraphs = [p for p in bearing if is_descendant(p, sibling)]
        if not paragraphs:
            return None
        # The body's paragraphs' templates, read only here: most wrappers have no such sibling.
        signatures = {_signature(p) for p in bearing if is_descendant(p, first)}
        return sibling if all(_signature(p) in signatures for p in paragraphs) else None
    return None


def _has_text(element: Element) -> bool:
    """Any text inside, found without writing out the whole element (a comment thread)."""
    return any(not text.isspace() for text in element.itertext() if text)


def _opens_with_paragraph(section: Element, bearing: dict[Element, int]) -> bool:
    """The section's first block with text (or first image) is a paragraph. A picture set
    inside a paragraph is part of the text's flow (a post's photo after the cut) and is looked
    past; a picture of its own opens the section (an author's box opens with the portrait)."""
    for element in section.iterdescendants(*OPENING_TAGS):
        if element.tag == "img" and _inside_paragraph(element, section):
            continue
        if element.tag == "img" or text_of(element).strip():
            return element.tag == "p" or element in bearing
    return False


def _inside_paragraph(element: Element, section: Element) -> bool:
    for above in element.iterancestors():
        if above is section:
            return False
        if above.tag == "p":
            return True
    return False


def _paragraphs_by_child(
    parent: Element, bearing: dict[Element, int]
) -> dict[Element, list[tuple[Element, int]]]:
    """The content-bearing paragraphs under each child of `parent`, with their depth below it."""
    found: dict[Element, list[tuple[Element, int]]] = {}
    for paragraph in bearing:
        node = paragraph
        for depth in range(1, SECTION_DEPTH + 1):
            above = node.getparent()
            if above is None:
                break
            if above is parent:
                found.setdefault(node, []).append((paragraph, depth))
                break
            node = above
    return found


def _drop_repeated_quotes(written: list[TextBlock]) -> None:
    """A quotation whose words the text around it says too is a pull quote: the editor's
    display of a sentence of the article, set apart to catch the eye, which a reader of the text
    reads twice. A quotation the text does not repeat (a source quoted at length) stays."""
    quotes = [block for block in written if block.kind == QUOTE][:MAX_PULL_QUOTES]
    if not quotes:
        return
    text = "\n".join(block.text for block in written if block.kind != QUOTE)
    pulled = {
        id(block)
        for block in quotes
        if len(quoted := block.text.strip(_QUOTATION_MARKS)) >= MIN_PULL_QUOTE_CHARS
        and quoted in text
    }
    if pulled:
        written[:] = [block for block in written if id(block) not in pulled]


# Quotation marks around a pull quote, which the sentence in the text may not carry.
_QUOTATION_MARKS = (
    " \t\n\"'\u201c\u201d\u2018\u2019\u00ab\u00bb\u201e\u201a\u2039\u203a\u300c\u300d"
)
# A repeated quotation shorter than this is a word or a phrase the text may well say twice.
MIN_PULL_QUOTE_CHARS = 30
# The quotations searched for in the text (each search reads all of it: a hostile page may hold
# thousands of quotations beside megabytes of text); a body sets out a few pull quotes.
MAX_PULL_QUOTES = 20


def _drop_trailing_lines(written: list[TextBlock], bearing: dict[Element, int]) -> None:
    """The article ends with its last content-bearing paragraph: a few short lines after it
    ("Share this story", a reporter's e-mail, "Advert") are the container's furniture, unless the
    line is the article's last sentence (`_last_sentence`)."""
    for _ in range(MAX_TRAILING_LINES):
        last = written[-1] if written else None
        if last is None or last.kind != PARAGRAPH or last.element in bearing:
            return
        if len(last.text) >= TRAILING_LINE_MAX_CHARS:
            return
        if _last_sentence(last, written, bearing):
            return
        written.pop()


def _drop_headline_lines(written: list[TextBlock], bearing: dict[Element, int]) -> None:
    """The article begins with its first content-bearing paragraph when the body's container
    also holds the page's headline (`<h1>`) above it: the lines before that paragraph are the
    headline block (the headline, a standfirst heading, the byline and date lines), which
    the body leaves out where the container holds the text alone."""
    first = next(
        (index for index, block in enumerate(written) if not _headline_line(block, bearing)),
        None,
    )
    if first is None or first > MAX_HEADLINE_LINES:
        return
    headline = next(
        (index for index, block in enumerate(written[:first]) if block.element.tag == "h1"), None
    )
    if headline is None:
        return
    end = headline + 1
    while end < first and written[end].kind in (HEADING, CAPTION):
        end += 1
    del written[:end]


def key_points(first: Element, cleaning: Cleaning) -> Element | None:
    """The list of the article's key points, set just above its body in a box the page names
    or tags as chrome (an `<aside>` "Key points", "Highlights"): the nearest earlier sibling of
    the body with text, removed as chrome, whose text is one list (and a label) of at least
    MIN_KEY_POINTS items, each a content-bearing sentence of its own words. A box of related
    stories lists links, a newsletter box asks for an address, a table of contents lists
    headings: none is a list of sentences."""
    box = next(
        (n for n in first.itersiblings(preceding=True) if isinstance(n.tag, str) and _has_text(n)),
        None,
    )
    if box is None or not cleaning.is_removed(box) or box.tag in MEDIA_TAGS:
        return None
    lists = [node for node in box.iter() if node.tag in LIST_TAGS]
    if len(lists) != 1:
        return None
    items = [item for item in lists[0] if item.tag == "li"]
    if len(items) < MIN_KEY_POINTS or not all(_is_point(item) for item in items):
        return None
    label = text_length(box) - text_length(lists[0])
    return lists[0] if label < CP else None


def _is_point(item: Element) -> bool:
    """A list item that is a content-bearing sentence (Algorithm 2.1, line 1) of its own words."""
    return paragraph_stats(item).bearing and ends_as_sentence(clean_text(text_of(item)))


def _headline_line(block: TextBlock, bearing: dict[Element, int]) -> bool:
    """A line of a headline block: a heading, a caption, or a paragraph shorter than a
    content-bearing one (a byline, a date and category line) that is not one of the body's."""
    if block.kind in (HEADING, CAPTION):
        return True
    return block.kind == PARAGRAPH and block.element not in bearing and len(block.text) < CP


def _last_sentence(block: TextBlock, written: list[TextBlock], bearing: dict[Element, int]) -> bool:
    """The short line is the article's last sentence, not the container's furniture: a `<p>`
    written like the body's content-bearing paragraphs (the same class names), without a link,
    whose text ends as a sentence ends ("Will it be enough this time?"). A credit, a time stamp,
    a copyright or an agency line ends without one ("Reporting by Ana Pell", "Wire services",
    "(c) 2026 The Gazette"), an e-mail or "Read more" line holds a link, and an "Advert" label or
    a reporter's address sits in an element of its own kind."""
    if block.link_chars or block.element.tag != "p":
        return False
    if not ends_as_sentence(block.text):
        return False
    signature = _signature(block.element)
    return any(
        part.element in bearing and _signature(part.element) == signature for part in written
    )


def extract_dom(
    cleaning: Cleaning, outside: Element | None = None, headline: Element | None = None
) -> DomBody | None:
    """The article body by Algorithm 2.1, or None (NULL) when nothing convincing is found.
    `outside`: a region of the page whose containers may not be chosen; `headline`: the `<h1>`
    that shows the page's title, when the caller found one (`one_story`)."""
    bearing = content_bearing_paragraphs(cleaning)
    per_container = _container_lengths(bearing, cleaning, outside)
    container = best_container(per_container)
    if container is None:
        # A Chinese or Japanese paragraph says in 100 characters what an English one says in
        # 300: counted raw, a whole page of documentation in Japanese carried less than C_SIGMA.
        # Asked only here (the text read again) where the raw count finds no body: no cost on
        # the pages it finds one.
        reading = content_bearing_paragraphs(cleaning, reading=True)
        if reading != bearing:
            bearing = reading
            per_container = _container_lengths(bearing, cleaning, outside)
            container = best_container(per_container)
    if container is None:
        return fallback_body(cleaning) if outside is None else None
    container = enclosing_container(container, per_container, bearing, cleaning)
    twins = body_containers(container, per_container, bearing, cleaning)
    if len(twins) == 1:
        twins = sections_after_intro(container, per_container, cleaning) or article_sections(
            container, bearing, cleaning
        )
    twins = with_section_headings(twins, cleaning)
    twins = with_opening_heading(twins, cleaning)
    twins += text_after_table(twins[-1], bearing, cleaning)
    twins = sections_under_headline(twins, per_container, bearing, cleaning) or twins
    if headline is not None and len(twins) > 1:
        twins = one_story(twins, headline)
        if container not in twins:  # the longest twin was the next story's
            container = max(twins, key=lambda twin: per_container.get(twin, 0))
    lead = lead_paragraph(twins[0], cleaning)
    above = lead_section_above(twins[0], bearing, cleaning) if lead is None else None
    if lead is None and above is None:
        lead = lead_section(twins[0], bearing, cleaning)
    if lead is None and above is None:
        lead = lead_under_headline(twins[0], bearing, cleaning)
    if lead is None and above is None:
        lead = lead_above_wrapper(twins[0], cleaning)
    points = key_points(twins[0], cleaning)
    leads = lead_run(lead, cleaning) if lead is not None else []
    parts = (
        [part for part in (points, above) if part is not None]
        + leads
        + [twin for twin in twins if twin is container or not cleaning.is_removed(twin)]
    )
    kind = body_kind(parts, bearing, cleaning)
    opening = named_lead(twins[0], bearing, cleaning)
    if opening is not None:
        kind = _plain_for(opening, kind)
    by_part = {part: text_blocks(part, kind) for part in parts}
    written = [block for part in parts for block in by_part[part]]
    cut_thread(written, container, cleaning)
    _drop_repeated_quotes(written)
    _drop_headline_lines(written, bearing)
    _drop_trailing_lines(written, bearing)
    blocks = keep_body_blocks(written)
    alone = lead is None and above is None and len(twins) == 1
    if not blocks:
        return None
    return DomBody(blocks, METHOD_DOM, container, written, alone, kind, by_part)


def one_story(twins: list[Element], headline: Element) -> list[Element]:
    """The twins that belong to the headline's story, when the page sets other stories beside it.

    A page that renders the next story below the first (infinite scroll), or a story of a
    newsletter's edition with the edition's other stories under it, sets each story in the same
    template: their containers are twins of the article's, and the body took them in. Two marks
    of another story hold on any site, and the twins they mark are left out:
    - another composition: a twin outside the headline's `<article>`, inside an `<article>` or a
      `<section>` of its own that holds a heading (HTML's `<article>` is one self-contained
      composition; a heading names what the other one is);
    - another headline: a heading in the headline's own markup, its tag and class, that shows
      another title (`_story_span`).
    """
    story = next(headline.iterancestors("article"), None)
    if story is not None:
        inside = [twin for twin in twins if is_descendant(twin, story)]
        if inside and len(inside) < len(twins):
            twins = [
                twin for twin in twins if twin in inside or not _composition_of_its_own(twin, story)
            ]
    return _story_span(twins, headline) if len(twins) > 1 else twins


def _composition_of_its_own(element: Element, story: Element) -> bool:
    """Whether an `<article>` or `<section>` that holds a heading holds `element`, below the
    nearest element that holds both it and the headline's `story`."""
    for ancestor in element.iterancestors():
        if is_descendant(story, ancestor):
            return False
        if ancestor.tag in COMPOSITION_TAGS and _holds_heading(ancestor):
            return True
    return False


def _holds_heading(element: Element) -> bool:
    return next(element.iter(*HEADING_TAGS), None) is not None


def _story_span(twins: list[Element], headline: Element) -> list[Element]:
    """The twins between the headings in the headline's markup (its tag and class) that show
    other titles: the stories before and after the headline's. A page builder gives every heading
    one class (an `<h2>` under the `<h1>` alike), so the tag is part of the markup; a headline
    without a class has no markup of its own to tell another story's by."""
    name = headline.get("class")
    if not name or not name.strip():
        return twins
    root = headline.getroottree().getroot()
    others = [
        heading
        for heading in root.iter(headline.tag)
        if heading is not headline and heading.get("class") == name
    ]
    if not others:
        return twins
    order = document_order(root)
    at = order[headline]
    start = max((order[other] for other in others if order[other] < at), default=-1)
    end = min((order[other] for other in others if order[other] > at), default=len(order))
    kept = [twin for twin in twins if start < order[twin] < end]
    return kept or twins


def named_lead(first: Element, bearing: dict[Element, int], cleaning: Cleaning) -> Element | None:
    """The lead that opens the body's container under a chrome word: the container's first
    child with text, when it is a `<p>` that only a summary word of its name makes chrome
    (`chrome_only_as_summary`: "teaser", not hidden), that bears content, holds no link, ends
    as a sentence ends and is followed right away by one of the content-bearing paragraphs the
    body was chosen for.

    Newsroom systems name the bold first paragraph of the story after newsroom jargon ("teaser"
    in German-language newsrooms: Polopoly's `p_teaser`), a word that elsewhere names a teaser
    card; the card is a block with its headline link, never a linkless sentence at the head of
    the running text. Asked once per body, of one element."""
    opening = next(
        (child for child in first if isinstance(child.tag, str) and _has_text(child)), None
    )
    if opening is None or opening.tag != "p" or cleaning.kind(opening) != CHROME:
        return None
    if is_hidden(opening) or not chrome_only_as_summary(opening):
        return None  # hidden, or named as other furniture (an "ad" note, a paywall line)
    stat = paragraph_stats(opening)
    if not stat.bearing or stat.link_length or next(opening.iter("a"), None) is not None:
        return None
    if not ends_as_sentence(clean_text(text_of(opening))):
        return None
    after = _neighbour(opening, cleaning, preceding=False)
    return opening if after is not None and after in bearing else None


def _plain_for(element: Element, kind: Classifier) -> Classifier:
    """`kind`, with `element` plain text."""

    def with_element(node: Element) -> int:
        return PLAIN if node is element else kind(node)

    return with_element


def _container_lengths(
    bearing: dict[Element, int], cleaning: Cleaning, outside: Element | None
) -> dict[Element, int]:
    """`container_lengths`, without the containers in `outside` or around it."""
    per_container = container_lengths(bearing, cleaning)
    if outside is None:
        return per_container
    return {
        node: length
        for node, length in per_container.items()
        if node is not outside and not is_descendant(node, outside)
    }


def with_section_headings(twins: list[Element], cleaning: Cleaning) -> list[Element]:
    """The twins, each after the sub-heading right before it, when they are sections in
    wrappers of their own (`div.sect1 > h2 + div.sectionbody`: twins with different parents) and
    each after the first (which may be the intro) is so headed, MIN_HEADED_SECTIONS headings or
    more of one template: the sub-headings are the article's, between its sections; Algorithm
    2.1 counts the sections' paragraphs alone. (One headed twin after a post may be its
    trackbacks, under their own heading.)"""
    if len(twins) <= MIN_HEADED_SECTIONS or len({twin.getparent() for twin in twins}) < len(twins):
        return twins
    later: list[Element] = []  # the first twin may be the intro, before any sub-heading
    for twin in twins[1:]:
        heading = _neighbour(twin, cleaning, preceding=True)
        if heading is None or heading.tag not in SECTION_HEADING_TAGS:
            return twins
        later.append(heading)
    templates = {_template_name(heading) for heading in later}
    if len(later) < MIN_HEADED_SECTIONS or len(templates) != 1:
        return twins
    first = _neighbour(twins[0], cleaning, preceding=True)
    parts = [first] if first is not None and _template_name(first) in templates else []
    parts.append(twins[0])
    for heading, twin in zip(later, twins[1:], strict=True):
        parts += [heading, twin]
    return parts


def with_opening_heading(parts: list[Element], cleaning: Cleaning) -> list[Element]:
    """The body's parts and the sub-heading that opens the first of them: when the body is a
    run of sibling sections with sub-headings between them, the nearest kept element before the
    first section that is a heading named like those between (the same tag and class names, but
    for identifiers: `_template_name`) heads the first section as they head the others. A wiki
    or a documentation page sets each section in an element of its own after its heading; the
    body ran from the first section's paragraphs and left its heading out."""
    between = {_template_name(part) for part in parts[1:] if part.tag in HEADING_TAGS}
    if not between:
        return parts
    before = _neighbour(parts[0], cleaning, preceding=True)
    if before is not None and before.tag in HEADING_TAGS and _template_name(before) in between:
        return [before, *parts]
    return parts


def body_kind(parts: list[Element], bearing: dict[Element, int], cleaning: Cleaning) -> Classifier:
    """What preprocessing made of each element of the body: `cleaning.kind`, except that chrome
    the veto kept inside the body is chrome again when it holds none of the paragraphs the body
    was chosen for.

    The veto keeps a chrome-named element that holds half the page's paragraph text, as the
    wrapper of a page would. Inside the chosen body such an element wraps nothing of it: a
    slideshow of forty captioned photos under "Also on ..." outweighs the story above it, and its
    paragraphs are containers of their own, not the body's.

    Each element's ancestors are looked up among the parts and the kept chrome (asking every
    paragraph of every part cost their square: a body of 1,000 chunks around a kept "related"
    box of 2,000 took 1.9 s, 4,000 half a minute).
    """
    in_parts = set(parts)
    inside = [node for node in cleaning.kept_chrome if _under(node, in_parts)]
    if not inside:
        return cleaning.kind
    in_chrome = set(inside)
    holding: set[Element] = set()  # the kept chrome holding a paragraph the body was chosen for
    for paragraph in bearing:
        owner = container_of(paragraph, cleaning)
        if owner is None or not (owner in in_parts or _under(owner, in_parts)):
            continue
        if _under(owner, in_chrome):
            continue
        holding.update(node for node in paragraph.iterancestors() if node in in_chrome)
    chrome_again = {node for node in inside if node not in holding}
    if not chrome_again:
        return cleaning.kind

    def kind(element: Element) -> int:
        return CHROME if element in chrome_again else cleaning.kind(element)

    return kind


def _under(element: Element, among: set[Element]) -> bool:
    """One of `element`'s ancestors (not itself) is in `among` (`isdisjoint` walks them in C)."""
    return not among.isdisjoint(element.iterancestors())
