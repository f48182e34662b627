"""Extraction's cost on hostile pages grows with the page, not with its square.

The pipeline kills a page after EXTRACT_TIMEOUT_SECONDS and the input is capped at 4 MiB, so any
step whose work grows faster than the number of elements loses long real pages (a live blog, a
forum thread, a long list). These tests count work, never time: the queries the library sends to
libxml2, and the operations of the walks, at N and 4N."""

from __future__ import annotations

import importlib
import pkgutil
import random
import sys
from collections.abc import Callable
from typing import Any

import pytest
from lxml import etree

import extractors
from extractors import dom, extract, extract_verbose, page_kinds, repair
from extractors.document import parse_document
from extractors.evidence import SameTemplate, same_template
from extractors.safetext import storable_text
from extractors.tree import MICRODATA_UNION_MAX_BYTES, microdata, text_of


def _compiled_xpaths() -> list[tuple[str, str]]:
    """(module.name, expression) of every XPath the extractors compile at import."""
    found = []
    for info in pkgutil.iter_modules(extractors.__path__):
        module = importlib.import_module(f"extractors.{info.name}")
        for name, value in vars(module).items():
            if isinstance(value, etree.XPath):
                found.append((f"{info.name}.{name}", value.path))
    return found


def test_no_xpath_of_the_extractors_is_a_union_of_node_sets() -> None:
    """libxml2 merges the node sets of a union (`a | b`) by comparing every node of one with every
    node of the other: 40,000 microdata items or footers cost seconds, the square of the page.
    One step with a predicate (`//*[self::a or self::b]`) gives the same nodes in one walk."""
    xpaths = _compiled_xpaths()
    assert len(xpaths) > 10  # the look-up finds the library's queries
    unions = [name for name, path in xpaths if "|" in path]
    # The one union: microdata on pages small enough to bound its merge (below).
    assert unions == ["tree._MICRODATA_VALUES"]


def test_the_microdata_union_is_asked_only_of_a_page_small_enough_to_bound_its_merge(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import extractors.tree as tree_module

    item = b"<i itemscope itemtype='http://schema.org/Thing'><b itemprop='name'>x</b></i>"
    page = b"<html><body>" + item * (MICRODATA_UNION_MAX_BYTES // len(item) + 1) + b"</body></html>"
    document = parse_document(page)
    assert document.size > MICRODATA_UNION_MAX_BYTES
    small = etree.fromstring(b"<html><body>" + item * 3 + b"</body></html>", etree.HTMLParser())
    expected_small = microdata(small, 1000)
    expected_large = microdata(document.tree, document.size)

    def refused(_tree: Any) -> Any:
        raise AssertionError("the union was asked of a large page")

    monkeypatch.setattr(tree_module, "_MICRODATA_VALUES", refused)
    assert microdata(document.tree, document.size) == expected_large
    assert len(expected_large[0]) == len(expected_large[1]) > 3000
    assert microdata(small) == expected_small  # size unknown: read as large, the same items


def _union_microdata(tree: etree._Element) -> tuple[list, list]:
    """The page's microdata as the union query read it (quadratic, fine on a small page)."""
    properties, item_types = [], []
    for value in tree.xpath("//*/@itemprop|//*/@itemtype"):
        if value.attrname == "itemprop":
            properties.append((value.lower().split(), value.getparent()))
        else:
            item_types.append((str(value), value.getparent()))
    return properties, item_types


def test_microdata_in_one_walk_reads_what_the_union_read() -> None:
    rng = random.Random(3)
    attributes = ("", " itemprop='Headline articleBody'", " itemprop=''", " itemscope",
                  " itemtype='http://schema.org/NewsArticle'",
                  " itemtype='https://schema.org/Person' itemprop='author'")  # fmt: skip
    for _ in range(300):
        parts = [f"<div{rng.choice(attributes)}>x" for _ in range(rng.randint(0, 12))]
        html = "<html><body>" + "".join(parts) + "</div>" * len(parts) + "</body></html>"
        tree = etree.fromstring(html, etree.HTMLParser())
        assert microdata(tree) == _union_microdata(tree), html
        assert microdata(tree, len(html)) == _union_microdata(tree), html


def test_footers_and_declared_addresses_in_one_walk_are_what_the_unions_found() -> None:
    footers = etree.XPath(
        "//footer[not(ancestor::article)]"
        "|//*[contains(translate(@id, 'FOTER', 'foter'), 'footer')][not(ancestor::article)]"
        "|//*[contains(translate(@class, 'FOTER', 'foter'), 'footer')][not(ancestor::article)]"
    )
    declared = etree.XPath(
        "//link[contains(translate(@rel, 'CANONIL', 'canonil'), 'canonical')]/@href"
        " | //meta[translate(@property, 'OGURL', 'ogurl')='og:url']/@content"
    )
    tags = ("<footer>", "<div class='Footer'>", "<div id='site-FOOTER'>", "<article>", "<div>",
            "<link rel='Canonical' href='/a{}'>", "<link rel='canonical'>", "<link href='/c'>",
            "<meta property='OG:url' content='/b{}'>", "<meta property='og:url'>",
            "<span class='footer' id='footer'>")  # fmt: skip
    rng = random.Random(1)
    for k in range(500):
        parts = [rng.choice(tags).format(k) for _ in range(rng.randint(1, 10))]
        tree = etree.fromstring(
            "<html><body>" + "".join(parts) + "</body></html>", etree.HTMLParser()
        )
        assert page_kinds._FOOTERS(tree) == footers(tree), parts
        assert page_kinds._declared_addresses(tree) == [str(v) for v in declared(tree)], parts


def test_a_footer_s_bar_of_links_is_read_once_not_once_per_link(monkeypatch) -> None:
    """Each short link to the page's address in a footer asks whether it sits in a bar of short
    links; reading the bar again for every link cost the square of the bar."""
    reads = 0

    def counting_text_of(element: etree._Element) -> str:
        nonlocal reads
        reads += 1
        return text_of(element)

    monkeypatch.setattr(page_kinds, "text_of", counting_text_of)

    def work(n: int) -> int:
        nonlocal reads
        html = ("<html><body><article><p>text</p></article><footer><div>"
                + "<a href='/about'>About</a>" * n
                + "<a href='/about'>a link of too many words to be a bar's</a></div></footer>"
                "</body></html>")  # fmt: skip
        tree = etree.fromstring(html, etree.HTMLParser())
        reads = 0
        assert not page_kinds.is_site_page(tree, "https://x.test/about", tree.find(".//article"))
        return reads

    assert work(800) <= 4 * work(200) + 10


def _chunked_article(chunks: int) -> str:
    """A body cut into many same-named chunks, each a subheading and its paragraph."""
    sentence = "A sentence of the article with several words in it. " * 4
    chunk = "<div class='chunk'><h3>Part {0}</h3><p>Paragraph {0}. " + sentence + "</p></div>"
    body = "".join(chunk.format(i) for i in range(chunks))
    return f"<html><body><div class='wrap'><div class='body'>{body}</div></div></body></html>"


def _descendant_checks(monkeypatch: pytest.MonkeyPatch, page: str, last_line: str) -> int:
    """How many times extracting `page` asks `dom.is_descendant` (the article must end with
    `last_line`'s paragraph)."""
    calls = 0
    is_descendant = dom.is_descendant

    def counting(element: etree._Element, ancestor: etree._Element) -> bool:
        nonlocal calls
        calls += 1
        return is_descendant(element, ancestor)

    with monkeypatch.context() as patch:
        patch.setattr(dom, "is_descendant", counting)
        article = extract(page, "https://x.test/news/2024/a-long-story")
    assert article is not None and last_line in article.text
    return calls


def test_a_body_of_many_chunks_is_assembled_in_work_linear_in_its_chunks(monkeypatch) -> None:
    """The twins of the best container nested in another twin are dropped; asking it of every
    pair of twins cost their square (8,000 chunks: 40 s)."""

    def work(chunks: int) -> int:
        page = _chunked_article(chunks)
        return _descendant_checks(monkeypatch, page, f"Paragraph {chunks - 1}.")

    assert work(400) <= 4 * work(100) + 10


def _chunks_around_kept_chrome(chunks: int) -> str:
    """A body of same-named chunks, the last holding a "related" box of twice as many chunks:
    chrome by its name, kept by the veto (it holds most of the page's text)."""
    sentence = "A sentence of the article with several words in it. " * 4
    chunk = "<div class='chunk'><h3>{0} {1}</h3><p>{0} {1}. " + sentence + "</p></div>"
    body = "".join(chunk.format("Part", i) for i in range(chunks))
    related = "".join(chunk.format("Related", i) for i in range(2 * chunks))
    last = f"<div class='chunk'><h3>Last</h3><p>Last. {sentence}</p><div class='related'>"
    return (f"<html><body><div class='wrap'><div class='body'>{body}{last}{related}</div></div>"
            "</div></div></body></html>")  # fmt: skip


def test_kept_chrome_inside_a_body_of_many_parts_is_weighed_in_linear_work(monkeypatch) -> None:
    """`body_kind` asked every paragraph against every part of the body: their square."""

    def work(chunks: int) -> int:
        page = _chunks_around_kept_chrome(chunks)
        return _descendant_checks(monkeypatch, page, f"Part {chunks - 1}.")

    assert work(400) <= 4 * work(100) + 10


def _builtin_calls(run: Callable[[], object], name: str) -> int:
    """How many times `run()` calls built-in functions or methods called `name` (`split`: the
    class names and words read): its work, counted."""
    calls = 0

    def count(frame: object, event: str, arg: object) -> None:
        nonlocal calls
        if event == "c_call" and getattr(arg, "__name__", "") == name:
            calls += 1

    sys.setprofile(count)
    try:
        run()
    finally:
        sys.setprofile(None)
    return calls


def _children_named_apart(children: int) -> str:
    """A short article beside many empty children, each with a class of its own."""
    items = "".join(f"<div class='c{children}-{i}'></div>" for i in range(children))
    sentence = "A sentence of the article with several words in it. " * 15
    return (f"<html><body><div class='region'><div class='post'><p>{sentence}</p></div>{items}"
            "</div></body></html>")  # fmt: skip


def test_children_each_of_a_template_of_its_own_are_grouped_in_linear_work() -> None:
    """The records and teasers of a list ask every child for its siblings of one template; each
    asking read all the siblings again (20,000 children: three minutes)."""

    def work(children: int) -> int:
        page = _children_named_apart(children)
        return _builtin_calls(lambda: extract(page, "https://x.test/a"), "split")

    work(10)  # the first extraction's one-time work (caches) apart
    assert work(800) <= 4.5 * work(200)


def _same_template_alone(element: etree._Element) -> list:
    """`same_template` as it read an element's siblings for each element alone."""
    parent = element.getparent()
    if parent is None:
        return [element]
    siblings = list(parent.iterchildren(element.tag))
    classes = (element.get("class") or "").split()
    if not classes:
        return [sibling for sibling in siblings if not (sibling.get("class") or "").strip()]
    names = [(sibling.get("class") or "").split() for sibling in siblings]
    carrying = [
        [sibling for sibling, words in zip(siblings, names, strict=True) if name in words]
        for name in classes
    ]
    return max(carrying, key=len)


def test_same_template_read_once_per_parent_groups_as_same_template() -> None:
    rng = random.Random(5)
    names = ("", "a", "b", "a b", "b a", "a a", "c", " ", "post-1 post", "post post-2")
    for _ in range(300):
        tags = [rng.choice(("div", "li")) for _ in range(rng.randint(1, 12))]
        items = "".join(f"<{t} class='{rng.choice(names)}'>x</{t}>" for t in tags)
        tree = etree.fromstring(f"<html><body><div>{items}</div></body></html>", etree.HTMLParser())
        templates = SameTemplate()
        for child in tree.find(".//div"):
            assert templates(child) == same_template(child) == _same_template_alone(child), items


_REPAIR_PARSER = etree.HTMLParser(remove_comments=True)


def _old_adopt_trailing_content(root: etree._Element) -> None:
    """The repair as it was: each page's text added to the body's end in turn."""
    following = [sibling for sibling in root.itersiblings() if isinstance(sibling.tag, str)]
    for sibling in following:
        if sibling.tag != "html":
            repair._body_of(root).append(sibling)
            continue
        for part in [child for child in sibling if isinstance(child.tag, str)]:
            if part.tag == "head" and root.find("head") is None:
                root.insert(0, part)
            elif part.tag in ("head", "body"):
                target = repair._body_of(root)
                if part.text:
                    last = target[-1] if len(target) else None
                    if last is None:
                        target.text = storable_text((target.text or "") + part.text)
                    else:
                        last.tail = storable_text((last.tail or "") + part.text)
                for child in list(part):
                    target.append(child)
            else:
                repair._body_of(root).append(part)


def _concatenated(rng: random.Random) -> str:
    pieces = (
        "<html><body>text\x0c</body></html>",
        "<html><head><title>t</title></head>",
        "<html><body><p>a</p>tail</body></html>",
        "<div>after</div>",
        "loose text ",
        "<html><body>b<b>c</b>d</body></html>",
        "<html><p>x</p></html>",
        "<html>y</html>",
    )
    first = rng.choice(("<html><body><p>first</p></body></html>", "<html><head></head></html>",
                        "<html><body></body></html>", "<p>bare</p>"))  # fmt: skip
    return first + "".join(rng.choice(pieces) for _ in range(rng.randint(0, 8)))


def test_the_text_of_concatenated_pages_is_set_once_where_it_was_added_page_by_page() -> None:
    rng = random.Random(9)
    for _ in range(500):
        html = _concatenated(rng)
        old = etree.fromstring(html, _REPAIR_PARSER)
        new = etree.fromstring(html, _REPAIR_PARSER)
        repair._reopen_body(old)
        _old_adopt_trailing_content(old)
        repair.repair_tree(new)
        assert etree.tostring(new) == etree.tostring(old), html


def test_concatenated_pages_do_not_copy_the_body_s_text_once_per_page() -> None:
    """Each page's text added to the body's last tail copied the whole tail again: 25,000 pages
    of one line took 25 s. The text is checked (and copied) once however many pages there are."""

    def work(pages: int) -> int:
        html = "<html><body><p>first</p></body></html>" + "<html><body>line</body></html>" * pages
        tree = etree.fromstring(html, _REPAIR_PARSER)
        return _builtin_calls(lambda: repair.repair_tree(tree), "isprintable")

    assert work(400) <= work(100) + 2


def _inserted_by_index(body: etree._Element, text: str | None, elements: list) -> None:
    """The repair's move of body content out of <head> as it was: each element inserted at its
    index (libxml2 walks the body's children to it: the square of the elements)."""
    if not elements:
        body.text = storable_text((text or "") + (body.text or ""))
        return
    if body.text:
        last = elements[-1]
        last.tail = storable_text((last.tail or "") + body.text)
    body.text = storable_text(text)
    for index, element in enumerate(elements):
        body.insert(index, element)


def test_body_content_out_of_head_moves_as_it_did_by_index(monkeypatch) -> None:
    rng = random.Random(2)
    pieces = ("<mbox>x</mbox>", "tail text", "<mbox>y</mbox> t2 ", "<meta name='a' content='b'>",
              "<div>d</div>", "<link rel='x'>", " ")  # fmt: skip
    bodies = ("<body></body>", "<body>text<p>p</p></body>", "<body><p>p</p>t</body>", "")
    for _ in range(500):
        head = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 8)))
        html = f"<html><head>{rng.choice(('', 'loose', '<title>t</title>'))}{head}</head>"
        html += rng.choice(bodies) + "</html>"
        new = etree.fromstring(html, _REPAIR_PARSER)
        repair.repair_tree(new)
        old = etree.fromstring(html, _REPAIR_PARSER)
        with monkeypatch.context() as patched:
            patched.setattr(repair, "_prepend", _inserted_by_index)
            repair.repair_tree(old)
        assert etree.tostring(new) == etree.tostring(old), html


class _IndexedBody:
    """A body that sums the indices elements are inserted at (the children walked to them)."""

    def __init__(self, body: etree._Element) -> None:
        self.body, self.walked = body, 0

    def __getattr__(self, name: str) -> object:
        return getattr(self.body, name)

    def __setattr__(self, name: str, value: object) -> None:
        if name in ("body", "walked"):
            object.__setattr__(self, name, value)
        else:
            setattr(self.body, name, value)

    def insert(self, index: int, element: etree._Element) -> None:
        self.walked += index
        self.body.insert(index, element)


def test_body_content_out_of_head_is_put_in_without_walking_to_each_index() -> None:
    tree = etree.fromstring(
        "<html><head><title>t</title>" + "<mbox>x</mbox>" * 500 + "</head><body></body></html>",
        _REPAIR_PARSER,
    )
    head, body = tree.find("head"), _IndexedBody(tree.find("body"))
    repair._prepend(body, None, list(head)[1:])  # type: ignore[arg-type]
    assert len(tree.find("body")) == 500
    assert body.walked == 0


def test_a_page_of_more_elements_than_the_cap_is_null_without_being_extracted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """4 MiB of the smallest elements (a million `<p>a`) took 20 s and 1.3 GB to extract; past
    MAX_DOCUMENT_ELEMENTS the page is NULL with its reason, before any extractor walks it."""
    from extractors import document as document_module
    from extractors.document import MAX_DOCUMENT_ELEMENTS, DocumentError

    def too_many(count: int) -> bytes:
        return b"<html><body>" + b"<p>a" * count + b"</body></html>"

    monkeypatch.setattr(document_module, "repair_tree", _refused)  # nothing runs after the cap
    with pytest.raises(DocumentError) as refused:
        parse_document(too_many(MAX_DOCUMENT_ELEMENTS))  # with html and body: over it
    assert refused.value.reason == "too_many_elements"
    monkeypatch.undo()
    assert parse_document(too_many(MAX_DOCUMENT_ELEMENTS - 3)).tree is not None  # at the cap
    result = extract_verbose(too_many(MAX_DOCUMENT_ELEMENTS + 10))
    assert result.article is None and result.reason == "too_many_elements"


def _refused(*_args: Any) -> None:
    raise AssertionError("the page was worked on past the element cap")


_SENTENCE = b"The ferry returned to its timetable on Sunday after the storm passed. "


def test_the_witnesses_are_not_asked_on_a_page_of_more_elements_than_they_are_bounded_to(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The witnesses walk and classify every text block twice: three quarters of the time on a
    page of 195,000 tiny paragraphs (5.3 s). Past MAX_WITNESSED_ELEMENTS the cascade goes on
    without them; below it they are asked as before."""
    from extractors import boilerpipe, cascade
    from extractors.preprocess import Cleaning

    def page_of(paragraphs: int) -> etree._Element:
        words = b"".join(b"<p>w%d</p>" % i for i in range(paragraphs))
        return parse_document(b"<html><body>" + words + b"</body></html>").tree

    asked = []
    monkeypatch.setattr(boilerpipe, "select", lambda tree: asked.append(tree))
    large = page_of(cascade.MAX_WITNESSED_ELEMENTS)  # with html and body: over it
    assert cascade.witnesses(Cleaning(large), None) == [] and not asked
    cascade.witnesses(Cleaning(page_of(cascade.MAX_WITNESSED_ELEMENTS - 2)), None)
    assert len(asked) == 1


def test_nested_candidates_are_weighed_reading_each_link_once(monkeypatch) -> None:
    """Readability's candidates are often nested; each asked afresh for its text and its links'
    read a page of 240 nested containers of links 240 times (16 s). The first candidate is read
    whole, the ones around it only for what it does not hold; the densities are the same."""
    from extractors import readability

    levels, links = 60, 5
    level = b"<div>" + b"<a href='/x'>a link</a> and words " * links
    page = b"<html><body>" + level * levels + b"</div>" * levels + b"</body></html>"
    tree = parse_document(page).tree
    nested = list(tree.iter("div"))
    reads = []
    monkeypatch.setattr(readability, "text_of", lambda element: reads.append(1) or text_of(element))
    best = readability.best_candidate(dict.fromkeys(nested, 1.0))  # each is weighed
    assert len(reads) == 1 + links * levels  # the outermost and its links, once each
    assert best is not None and best[0] is nested[0]
    monkeypatch.undo()
    densities = readability.LinkDensities()
    weighed = [densities(element) for element in reversed(nested)]
    assert weighed == [readability.link_density(element) for element in reversed(nested)]


def test_an_article_body_inside_another_is_not_written_again(monkeypatch) -> None:
    """A body marked itemprop=articleBody inside another is part of its text: writing each of
    240 nested bodies read the page 240 times (4.9 s). The outermost is written, once; marked
    bodies side by side are each written, and the longest is the body."""
    from extractors import schema_org
    from extractors.preprocess import Cleaning

    sentence = b"<p>" + _SENTENCE + b"</p>"
    marked = b"<div itemprop='articleBody'>"
    nested = marked * 30 + sentence + b"</div>" * 30
    side_by_side = marked + sentence + b"</div>" + marked + sentence * 2 + b"</div>"
    written = []
    real = schema_org.text_blocks
    monkeypatch.setattr(
        schema_org, "text_blocks", lambda *args: written.append(args[0]) or real(*args)
    )
    for body, writes, paragraphs in ((nested, 1, 1), (side_by_side, 2, 2)):
        tree = parse_document(b"<html><body>" + body + b"</body></html>").tree
        written.clear()
        found = schema_org.microdata_body(tree, Cleaning(tree))
        assert found is not None and len(written) == writes
        assert found.element is written[-1] and len(found.blocks) == paragraphs


@pytest.mark.parametrize(
    "text",
    ["Jane Doe (Reuters)", "Jane Doe - Reuters (Paris)", "Jane (Doe) Roe", "(Jane) Doe )",
     "Jane Doe | Agency", "Doe (a) b)  ", "a\u00a0(b)\u00a0", "((Jane))"],
)  # fmt: skip
def test_what_follows_a_name_is_cut_where_the_old_pattern_cut_it(text: str) -> None:
    """`\\s*\\(.*\\)\\s*$` tried at every "(" of an author value of many read the rest of the value
    from each (160 KB of "(a)b": 80 s), and `\\S+@\\S+` at every character of a long word (a
    160 KB name: 45 s). The cut found without them, and the e-mail pattern anchored at a word's
    start, give what the patterns gave."""
    import re

    from extractors import bylines

    after_name = re.compile(r"\s+(?:\||\u2013|\u2014|-)\s+.*$|\s*\(.*\)\s*$")
    assert bylines._without_after_name(text) == after_name.sub("", text)
    mail = f"{text} jane@doe.test x@ @y a@b@c"
    assert bylines._EMAIL.sub(" ", mail) == re.sub(r"\S+@\S+", " ", mail)


@pytest.mark.parametrize(
    "body",
    ["<p>One.</p><script>x</script><h2 class=a>Two</h2>\nThree<svg><p>no</svg>",
     "<p " * 50 + "tail\nline", "<script>" * 20 + "a</SCRIPT >b<style>c", "<li>a<br/>b</li>"],
)  # fmt: skip
def test_a_json_ld_body_is_cut_where_the_old_patterns_cut_it(body: str) -> None:
    """Tried at every tag start that no ">" or no end tag follows, the patterns that cut a
    JSON-LD body read the rest of the body from each (100,000 "<p ": 67 s; 20,000 unclosed
    "<script>": 24 s). One pass finds the same cuts."""
    import re

    from extractors import schema_org

    dead = re.compile(
        r"<\s*(script|style|iframe|figcaption|noscript|svg|button)\b[^>]*>.*?<\s*/\s*\1\s*>",
        re.IGNORECASE | re.DOTALL,
    )
    breaks = re.compile(
        r"<\s*/?\s*(?:p|br|div|h[1-6]|li|ul|ol|blockquote|figure|table|tr|section)\b[^>]*>|\n",
        re.IGNORECASE,
    )
    assert schema_org._without_dead_elements(body) == dead.sub(" ", body)
    assert list(schema_org._block_breaks(body)) == [found.span() for found in breaks.finditer(body)]
