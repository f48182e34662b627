"""Linearise a body container into ordered (kind, text) blocks, keeping the article's structure.

Headings, list items, quotes, captions and table rows stay distinct from paragraphs (Lejeune & Zhu's
"structuring" step); inline markup is flattened; `<br><br>` separates paragraphs, as on old
table layouts that never use `<p>`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from lxml import etree

from extractors.article import (
    CAPTION,
    HEADING,
    LIST_ITEM,
    PARAGRAPH,
    PREFORMATTED,
    QUOTE,
    TABLE,
    Block,
)
from extractors.tree import CAPTION as CAPTION_KIND
from extractors.tree import (
    CHROME,
    FIGURE,
    PLAIN,
    Element,
    is_permalink_mark,
    links_to_itself,
    text_of,
)

# How a data table's row is written: its cells, in one line.
CELL_SEPARATOR = " | "

HEADING_TAGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
LIST_ITEM_TAGS = frozenset({"li", "dt", "dd"})
QUOTE_TAGS = frozenset({"blockquote"})
CAPTION_TAGS = frozenset({"figcaption", "caption"})
FIGURE_TAGS = frozenset({"figure"})
# Elements that end the current block: their text never runs into a neighbour's.
BLOCK_TAGS = frozenset(
    {
        "address", "article", "aside", "blockquote", "body", "center", "dd", "details", "dialog",
        "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "header",
        "hgroup", "hr", "li", "main", "nav", "ol", "p", "pre", "section", "summary", "table",
        "tbody", "td", "tfoot", "th", "thead", "tr", "ul", "caption",
    }
    | HEADING_TAGS
)  # fmt: skip
# Elements whose content is never article text.
SKIP_TAGS = frozenset(
    {
        "script", "style", "noscript", "template", "svg", "math", "iframe", "object", "embed",
        "canvas", "video", "audio", "map", "select", "option", "button", "input", "textarea",
        "head", "title", "meta", "link", "picture", "source", "label",
    }
)  # fmt: skip

# Text whose line breaks are its content: one block of kind PREFORMATTED, lines kept.
PREFORMATTED_TAG = "pre"
# The tags whose element the walk writes out for what it is even when it is empty, not only its
# tail: a block ends the text around it, a link may part words, a line break joins or splits.
_EMPTY_ASKED_TAGS = BLOCK_TAGS | {"a", "br", "table", PREFORMATTED_TAG}
# The tags the walk writes otherwise than as text (a line break, a table, preformatted text):
# told by one look-up, not three comparisons for every other element walked.
_SET_APART_TAGS = frozenset({"br", "table", PREFORMATTED_TAG})

# Says what preprocessing made of an element: PLAIN, CHROME, CAPTION or FIGURE.
Classifier = Callable[[Element], int]


def tag_kind(element: Element) -> int:
    """The classifier used without preprocessing: only tags say what is a caption or figure."""
    tag = element.tag
    if tag == "figcaption":
        return CAPTION_KIND
    return FIGURE if tag in FIGURE_TAGS else PLAIN


# The whitespace `str.split` breaks ASCII text at, besides the space.
_ASCII_BREAKS = "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f"
# From this length on, an ASCII text is searched for each of _ASCII_BREAKS (a scan in C per
# character, memchr's speed) rather than asked `isprintable` (a table look-up per character):
# the searches cost about as much as `isprintable` on 100 characters, and a tenth on 3,000.
SCAN_MIN_CHARS = 100


def spaced_only(text: str) -> bool:
    """Whether `text` holds no whitespace but the space (U+0020). A True answer is exact; a
    False one may also mean a control character or a separator that is no whitespace (callers
    then take the slow path, which gives the same result)."""
    if len(text) >= SCAN_MIN_CHARS and text.isascii():
        # A loop, not all() over a generator: its frame costs as much as the nine searches.
        for character in _ASCII_BREAKS:  # noqa: SIM110
            if character in text:
                return False
        return True
    # Printable text holds no whitespace but the space: every other whitespace character is a
    # control character or a Unicode separator.
    return text.isprintable()


def clean_text(text: str) -> str:
    """Collapse runs of whitespace (including NBSP and other Unicode spaces) to one space, trim."""
    # Most text of a page is clean already (a single space between words, none around them), and
    # telling so in C costs a fraction of splitting it into words (a string each) and joining them
    # again.
    # A text is often clean but for the whitespace around it (a paragraph's text as the markup
    # indents it): `strip` (the whitespace `split` breaks at) takes that off in C, and the rest is
    # told clean as it is, not split into words and joined. `strip` returns a clean text itself.
    text = text.strip()
    # `spaced_only` written out here: the call cost as much as its tests on a short text, and
    # clean_text is asked of every text a page writes out.
    if len(text) >= SCAN_MIN_CHARS and text.isascii():
        for character in _ASCII_BREAKS:
            if character in text:
                return " ".join(text.split())
    elif not text.isprintable():
        return " ".join(text.split())
    if "  " not in text:
        return text
    return " ".join(text.split())


def clean_text_within(text: str, limit: int) -> str | None:
    """`clean_text(text)` when it is at most `limit` characters long, else None.

    A text holding more than `limit // 2` words is longer than that whatever its words (each a
    character or more, a space between two): it is split only as far as needed to tell, where
    the element text of a whole article would be split into every one of its words."""
    most = (limit + 1) // 2
    words = text.split(None, most)
    if len(words) > most:  # `most` splits made: at least `most + 1` words
        return None
    # Fewer splits than allowed: the text ran out, and the words are all of them.
    cleaned = " ".join(words)
    return cleaned if len(cleaned) <= limit else None


# The block kind text takes from the element it sits in (a dict: asked for every element walked).
_KIND_OF_TAG = {
    **dict.fromkeys(HEADING_TAGS, HEADING),
    **dict.fromkeys(LIST_ITEM_TAGS, LIST_ITEM),
    **dict.fromkeys(QUOTE_TAGS, QUOTE),
    **dict.fromkeys(CAPTION_TAGS, CAPTION),
}


def _kind_of(tag: str, current: str) -> str:
    return _KIND_OF_TAG.get(tag, current)


@dataclass(slots=True)
class TextBlock:
    """A block with what the filters need: how much of it is link text, where it came from."""

    kind: str
    text: str
    link_chars: int  # non-space characters inside <a>
    chars: int  # non-space characters
    element: Element  # the block-level element the block's text belongs to
    # Non-space characters before the block's first link text (counted only for blocks that are
    # mostly link text: 0 for the others).
    lead_chars: int = 0

    @property
    def link_density(self) -> float:
        return self.link_chars / self.chars if self.chars else 0.0

    @property
    def block(self) -> Block:
        return self.kind, self.text


def visible_chars(text: str) -> int:
    """The characters of `text` that are not whitespace (`len("".join(text.split()))`)."""
    if spaced_only(text):  # count the spaces in C
        return len(text) - text.count(" ")
    return sum(map(len, text.split()))


class _BlockWriter:
    """Accumulates inline text and emits a block at every block boundary."""

    def __init__(self) -> None:
        self.blocks: list[TextBlock] = []
        self.parts: list[str] = []
        self.kind = PARAGRAPH
        self.element: Element | None = None
        self._link_chars = 0
        self._first_link: int | None = None  # index in parts of the first link text

    def text(self, text: str | None, kind: str, owner: Element, in_link: bool) -> None:
        if text:
            if not self.parts:
                self.kind, self.element = kind, owner
            if in_link:
                self._link_chars += visible_chars(text)
                if self._first_link is None:
                    self._first_link = len(self.parts)
            self.parts.append(text)

    def word_break(self) -> None:
        """A space where a link meets a word with none between (unspaced scripts: CJK), so that
        the link's words stay words of their own."""
        if self.parts and self.parts[-1] and self.parts[-1][-1].isalnum():
            self.parts.append(" ")

    def space(self) -> None:
        if self.parts:
            self.parts.append(" ")

    def flush(self) -> None:
        if self.parts:
            joined = "".join(self.parts)
            # Most runs ended at a block boundary are the markup's line breaks between blocks:
            # whitespace only, which `clean_text` makes empty (`isspace` and `split` agree on
            # what whitespace is), told without it.
            text = "" if joined.isspace() else clean_text(joined)
            if text and self.element is not None:
                chars = len(text) - text.count(" ")  # clean text: single spaces only
                links = min(self._link_chars, chars)
                lead = 0
                if 2 * links > chars and self._first_link is not None:
                    lead = visible_chars(clean_text("".join(self.parts[: self._first_link])))
                self.blocks.append(TextBlock(self.kind, text, links, chars, self.element, lead))
            self.parts.clear()  # the same list throughout: the walk holds it
            self._link_chars = 0
            self._first_link = None

    def add(self, block: TextBlock) -> None:
        self.blocks.append(block)


def iter_blocks(container: Element, classify: Classifier = tag_kind) -> Iterator[Block]:
    """Yield the (kind, text) blocks of `container` in document order."""
    for block in text_blocks(container, classify):
        yield block.block


def text_blocks(container: Element, classify: Classifier = tag_kind) -> list[TextBlock]:
    """The blocks of `container` in document order, with their link text and source element.

    `classify` says what preprocessing made of each element: CHROME is skipped, a CAPTION's text
    becomes "caption" blocks, and of a FIGURE only the captions are kept (the rest is image
    furniture: credits, "1 of 5", "Enlarge").
    """
    walker = _Walker(classify)
    walker.walk(container, PARAGRAPH)
    walker.writer.flush()
    return walker.writer.blocks


# One pending step of the traversal: the element, the block kind and block element of its parent
# (which its tail text also belongs to), whether it is inside a link, and whether the element's
# content is done (its tail is next).
_Step = tuple[Element, str, Element, bool, bool]


class _Walker:
    def __init__(self, classify: Classifier) -> None:
        self.writer = _BlockWriter()
        self.classify = classify

    def walk(self, root: Element, root_kind: str) -> None:
        tag = root.tag
        if tag == PREFORMATTED_TAG:
            self.writer.flush()
            self.preformatted(root)
            return
        if not isinstance(tag, str) or tag in SKIP_TAGS or tag == "br" or _has_non_elements(root):
            self.walk_steps([(root, root_kind, root, False, False)], root)
            return
        # lxml's C iterator drives the walk (it is iterative: hostile pages nest thousands of
        # levels deep); `states` holds, for each open element, the block kind, block element and
        # link state its children's text belongs to, and its tag, or None for an element whose
        # content is skipped (only its tail is written, at its end event). Each read of an
        # element's `tag` or `text` builds a new string: every one is read once.
        writer, classify, kind_of = self.writer, self.classify, _KIND_OF_TAG.get
        # The writer's pending text, read here: most elements start or end a block with none
        # pending, or add text outside links, and a call to the writer for each cost more than
        # the walk's own work on the element.
        parts = writer.parts
        own_kind, own_link = _kind_of(tag, root_kind), tag == "a"
        if tag in BLOCK_TAGS:
            writer.flush()
        elif own_link and root.text and root.text[0].isalnum():
            writer.word_break()
        writer.text(root.text, own_kind, root, own_link)
        states: list[tuple[str, Element, bool, str] | None] = [(own_kind, root, own_link, tag)]
        events = etree.iterwalk(root, events=("start", "end"))
        next(events)  # the root's start, done above
        skip = events.skip_subtree
        for event, element in events:
            if event == "start":
                tag = element.tag
                if tag in SKIP_TAGS:
                    skip()
                    states.append(None)
                    continue
                text = element.text
                if not text and tag not in _EMPTY_ASKED_TAGS and not len(element):
                    # An empty inline element (an icon, an image, a spacer) writes nothing and
                    # ends no block, whatever preprocessing makes of it: only its tail is text.
                    # Not asking spares a seventh of the elements walked their classification.
                    states.append(None)
                    continue
                kind = classify(element)
                if kind == CHROME:
                    skip()
                    states.append(None)
                elif tag in _SET_APART_TAGS:
                    if tag == "br":
                        _line_break(element, writer)
                    else:
                        if parts:
                            writer.flush()
                        if tag == "table":
                            self.table(element)
                        else:
                            self.preformatted(element)
                    skip()
                    states.append(None)
                else:
                    parent_kind, owner, in_link, _ = states[-1]  # type: ignore[misc]
                    own_kind = CAPTION if kind == CAPTION_KIND else kind_of(tag, parent_kind)
                    if tag == "a" and own_kind == HEADING and is_permalink_mark(element):
                        skip()  # a heading's "¶": only its tail is the heading's text
                        states.append(None)
                        continue
                    if tag in BLOCK_TAGS:
                        owner = element
                        if parts:
                            writer.flush()
                    elif tag == "a":
                        # A heading's permalink is the heading's own text, not a link away
                        # (asked only in headings, where documentation writes them).
                        in_link = in_link or own_kind != HEADING or not links_to_itself(element)
                        if text and text[0].isalnum():
                            writer.word_break()
                    states.append((own_kind, owner, in_link, tag))
                    if kind == FIGURE:
                        skip()
                        captions = self.figure_captions(element)
                        self.walk_steps(
                            [
                                (child, own_kind, owner, in_link, False)
                                for child in reversed(captions)
                            ],
                            root,
                        )
                    elif text:
                        if in_link:
                            writer.text(text, own_kind, owner, True)
                        else:
                            if not parts:
                                writer.kind, writer.element = own_kind, owner
                            parts.append(text)
                continue
            opened = states.pop()
            if not states:  # the root's end: it has no tail here
                if opened[3] in BLOCK_TAGS:  # type: ignore[index]
                    writer.flush()
                return
            tail = element.tail
            if opened is not None:
                tag = opened[3]
                if tag in BLOCK_TAGS:
                    if parts:
                        writer.flush()
                elif tag == "a" and tail and tail[0].isalnum():
                    writer.word_break()
            if tail:
                parent_kind, owner, in_link, _ = states[-1]  # type: ignore[misc]
                if in_link:
                    writer.text(tail, parent_kind, owner, True)
                else:
                    if not parts:
                        writer.kind, writer.element = parent_kind, owner
                    parts.append(tail)

    def walk_steps(self, stack: list[_Step], root: Element) -> None:
        """The walk driven by a stack of steps: for content whose order is not the tree's (a
        figure's captions) and for trees holding comments or processing instructions, which
        lxml's iterator does not report (their tails are text)."""
        writer, classify = self.writer, self.classify
        while stack:
            element, parent_kind, owner, in_link, closing = stack.pop()
            tag = element.tag if isinstance(element.tag, str) else ""
            tail = element.tail if element is not root else None
            if closing:
                if tag in BLOCK_TAGS:
                    writer.flush()
                elif tag == "a" and tail and tail[0].isalnum():
                    writer.word_break()
                writer.text(tail, parent_kind, owner, in_link)
                continue
            kind = classify(element) if tag and element is not root else PLAIN
            if (
                not tag
                or tag in SKIP_TAGS
                or kind == CHROME
                or (tag == "a" and parent_kind == HEADING and is_permalink_mark(element))
            ):
                writer.text(tail, parent_kind, owner, in_link)
            elif tag == "br":
                _line_break(element, writer)
                writer.text(tail, parent_kind, owner, in_link)
            elif tag in ("table", PREFORMATTED_TAG) and element is not root:
                writer.flush()
                if tag == "table":
                    self.table(element)
                else:
                    self.preformatted(element)
                writer.text(tail, parent_kind, owner, in_link)
            else:
                own_kind = CAPTION if kind == CAPTION_KIND else _kind_of(tag, parent_kind)
                own_owner = element if tag in BLOCK_TAGS else owner
                own_link = in_link or (
                    tag == "a" and (own_kind != HEADING or not links_to_itself(element))
                )
                if tag in BLOCK_TAGS:
                    writer.flush()
                elif tag == "a" and element.text and element.text[0].isalnum():
                    writer.word_break()
                # The closing step carries the parent's state: it emits the element's tail.
                stack.append((element, parent_kind, owner, in_link, True))
                if kind == FIGURE:
                    children = self.figure_captions(element)
                else:
                    writer.text(element.text, own_kind, own_owner, own_link)
                    children = list(element)
                stack.extend(
                    (child, own_kind, own_owner, own_link, False) for child in reversed(children)
                )

    def figure_captions(self, figure: Element) -> list[Element]:
        """The outermost captions inside a figure."""
        found: list[Element] = []
        for element in figure.iterdescendants(etree.Element):
            if self.classify(element) == CAPTION_KIND and not any(
                ancestor in found for ancestor in element.iterancestors()
            ):
                found.append(element)
        return found

    def preformatted(self, pre: Element) -> None:
        """A `<pre>` is one block whose line breaks stay (`preformatted_text`)."""
        text = preformatted_text(pre, self.classify)
        if text:
            chars = visible_chars(text)
            links = sum(visible_chars(text_of(link)) for link in pre.iter("a"))
            self.writer.add(TextBlock(PREFORMATTED, text, min(links, chars), chars, pre))

    def table(self, table: Element) -> None:
        """Data tables become one block per row; layout tables (a cell holding the body) recurse."""
        writer = self.writer
        rows = [row for row in table.iter("tr") if _owner(row, ROW_OWNERS) is table]
        if _is_layout_table(table, rows):
            for cell in table.iter("td", "th"):
                # Broken markup nests cells in cells: walk the outer one only, or text repeats.
                if _owner(cell, CELL_OWNERS) is table and not _line_numbers(cell):
                    self.walk(cell, PARAGRAPH)
                    writer.flush()
            return
        # What is never article text (a script: an ad unit's settings) is left out of its cells,
        # as the walk leaves it out of any element.
        cell_text = _cell_text if next(table.iter(*SKIP_TAGS), None) is not None else text_of
        for row in rows:
            cells = [cell for cell in row if cell.tag in ("td", "th")]
            texts = [clean_text(cell_text(cell)) for cell in cells]
            line = CELL_SEPARATOR.join(text for text in texts if text)
            if line:
                links = sum(visible_chars(text_of(link)) for link in row.iter("a"))
                chars = visible_chars(line)
                writer.add(TextBlock(TABLE, line, min(links, chars), chars, row))


def preformatted_text(pre: Element, classify: Classifier = tag_kind) -> str:
    """The text of a `<pre>` as a browser sets it out: its lines as written (a `<br>` or a block
    inside it breaks one too), each without trailing spaces; the margin all its lines share taken
    off (the page's own indentation of the markup), blank lines at either end dropped and runs of
    them made one. What is never text (scripts) and chrome inside it are left out.

    lxml's C iterator drives the walk, as `_Walker.walk`'s (iterative: a hostile `<pre>` nests
    thousands of levels deep)."""
    if _has_non_elements(pre):
        return _set_out(_stacked_text(pre, classify))
    parts: list[str] = [pre.text or ""]
    append = parts.append
    blocks: list[bool] = []  # for each open element, whether it is a block (a line ends with it)
    events = etree.iterwalk(pre, events=("start", "end"))
    next(events)  # the <pre>'s own start: its text is taken
    skip = events.skip_subtree
    for event, element in events:
        if event == "start":
            tag = element.tag
            if tag in SKIP_TAGS or tag == "br" or classify(element) == CHROME:
                skip()  # a script's or chrome's text is none of the code's; a <br> ends a line
                append("\n" if tag == "br" else "")
                blocks.append(False)
                continue
            block = tag in BLOCK_TAGS
            append("\n" if block else "")
            append(element.text or "")
            blocks.append(block)
            continue
        if not blocks:  # the <pre>'s own end: its tail is not its text
            break
        append("\n" if blocks.pop() else "")
        append(element.tail or "")
    return _set_out("".join(parts))


def _stacked_text(pre: Element, classify: Classifier) -> str:
    """`preformatted_text`'s walk for a tree that holds comments or processing instructions,
    which lxml's iterator does not report (their tails are text): a stack of its own."""
    parts: list[str] = [pre.text or ""]
    stack: list[tuple[Element, bool]] = [(child, False) for child in reversed(pre)]
    while stack:
        element, closing = stack.pop()
        tag = element.tag
        if closing:
            parts.append("\n" if tag in BLOCK_TAGS else "")
        elif not isinstance(tag, str) or tag in SKIP_TAGS or classify(element) == CHROME:
            pass  # a comment or a script: only its tail is text
        elif tag == "br":
            parts.append("\n")
        else:
            parts.append("\n" if tag in BLOCK_TAGS else "")
            parts.append(element.text or "")
            stack.append((element, True))
            stack.extend((child, False) for child in reversed(element))
            continue
        parts.append(element.tail or "")
    return "".join(parts)


def _set_out(text: str) -> str:
    """`text`'s lines without trailing whitespace or their shared margin, blank lines at the ends
    dropped and runs of them made one; no-break spaces read as the spaces they show."""
    lines: list[str] = []
    for line in text.replace("\xa0", " ").splitlines():
        line = line.rstrip()
        if line or (lines and lines[-1]):
            lines.append(line)
    while lines and not lines[-1]:
        lines.pop()
    margin = min((len(line) - len(line.lstrip()) for line in lines if line), default=0)
    return "\n".join(line[margin:] for line in lines)


def _cell_text(cell: Element) -> str:
    """The cell's text as a reader sees it: without the code of a script inside it (an ad's
    settings, in a cell of the table that floats the ad beside the text) or a control's
    options. A walk with its own stack: a hostile cell may nest deeper than recursion goes."""
    if next(cell.iter(*SKIP_TAGS), None) is None:
        return text_of(cell)
    parts: list[str] = []
    stack: list[tuple[Element, bool]] = [(cell, False)]
    while stack:
        node, closing = stack.pop()
        if closing:
            parts.append(node.tail or "")
            continue
        if node is not cell:
            stack.append((node, True))  # its tail, after what it holds
        if not isinstance(node.tag, str) or node.tag in SKIP_TAGS:
            continue
        parts.append(node.text or "")
        stack.extend((child, False) for child in reversed(node))
    return "".join(parts)


def _has_non_elements(root: Element) -> bool:
    """Whether comments or processing instructions sit inside `root` (the page parser drops
    them; trees built by other parsers keep them)."""
    return (
        next(root.iter(etree.Comment, etree.ProcessingInstruction, etree.Entity), None) is not None
    )


def _line_break(element: Element, writer: _BlockWriter) -> None:
    # Two consecutive <br> (only whitespace between) separate paragraphs; one is a line break.
    following = element.getnext()
    if following is not None and following.tag == "br" and not (element.tail or "").strip():
        writer.flush()
    else:
        writer.space()


def _owning_table(element: Element) -> Element | None:
    for ancestor in element.iterancestors("table"):
        return ancestor
    return None


ROW_OWNERS = ("tr", "table")  # a row belongs to the table unless it sits inside another row
CELL_OWNERS = ("td", "th", "table")


def _owner(element: Element, tags: tuple[str, ...]) -> Element | None:
    """The nearest ancestor among `tags`."""
    for ancestor in element.iterancestors(*tags):
        return ancestor
    return None


# A table is layout, not data, when one of its cells carries paragraphs or long prose.
LAYOUT_CELL_MIN_CHARS = 400


def _line_numbers(cell: Element) -> bool:
    """A cell of code set out as digits alone: the line numbers a code highlighter sets beside
    the code (Pygments' and Hexo's `td.linenos`/`td.gutter`), no text of the page."""
    if next(cell.iter("pre"), None) is None:
        return False
    text = text_of(cell)
    return bool(text) and text.translate(_NO_SPACE).isdigit()


_NO_SPACE = str.maketrans("", "", " \t\n\r\f\v\xa0")


def _lays_out_blocks(cell: Element) -> bool:
    """The cell holds a table, a `<div>`, line breaks, code (a highlighter's table of line
    numbers beside the code) or paragraphs: a page's layout. One `<p>` alone is a data cell's
    text as generators write it (Asciidoctor's `p.tableblock`, word processors' HTML); its
    length tells a layout cell apart (`LAYOUT_CELL_MIN_CHARS`)."""
    # The children asked for by tag, in C: a layout cell holds hundreds of inline children,
    # each a Python object when the cell is walked in Python.
    if next(cell.iterchildren("div", "table", "br", "pre"), None) is not None:
        return True
    paragraphs = cell.iterchildren("p")
    return next(paragraphs, None) is not None and next(paragraphs, None) is not None


def _is_layout_table(table: Element, rows: list[Element]) -> bool:
    for cell in table.iter("td", "th"):
        if _owning_table(cell) is not table:
            continue
        if _lays_out_blocks(cell):
            return True
        if len(text_of(cell)) > LAYOUT_CELL_MIN_CHARS:
            return True
    return not rows
