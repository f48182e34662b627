"""Browser-like repairs of libxml2's tree (extractors.repair): broken pages whose article a
browser shows but libxml2 hides in <head> or beside the document element."""

from __future__ import annotations

from pathlib import Path

import pytest
from lxml import etree

from extractors import extract_verbose
from extractors.document import parse_document
from extractors.repair import repair_tree

PAGES = Path(__file__).parent / "fixtures" / "pages"
FIRST_SENTENCE = "The regional council voted on Tuesday to reopen the old harbour railway"
LAST_SENTENCE = "asked for noise barriers and a limit on night-time freight services."
_PARSER = etree.HTMLParser(remove_comments=True)


@pytest.mark.parametrize(
    "name",
    [
        # An unknown element (<mbox>) in <head>: libxml2 keeps it there with the whole page.
        "head-swallowed-page.html",
        # A second page appended after </html>: libxml2 leaves it beside the root.
        "second-document-appended.html",
        # A mangled <html ...> start tag: the page ends up in a second <html> beside the root.
        "mangled-html-tag.html",
    ],
)
def test_a_page_a_browser_shows_is_no_longer_hidden_from_the_extractors(name: str) -> None:
    result = extract_verbose((PAGES / name).read_bytes(), "https://gazette.test/rail.html")
    assert result.article is not None, result.reason
    text = result.article.text
    assert FIRST_SENTENCE in text and text.endswith(LAST_SENTENCE)
    assert "About us" not in text and "Mobile edition" not in text


def test_an_article_inside_a_script_that_never_closes_is_not_recovered() -> None:
    # A browser shows nothing of it either (the script runs to the next </script>): there is
    # no article on the page to find.
    result = extract_verbose((PAGES / "script-never-closed.html").read_bytes())
    assert result.article is None and result.reason == "no_content"


def _repaired(html: str) -> etree._Element:
    tree = etree.fromstring(html, _PARSER)
    repair_tree(tree)
    return tree


def test_body_content_in_head_moves_to_the_start_of_the_body_in_order() -> None:
    tree = etree.fromstring(
        "<html><head><title>T</title><meta name='a' content='b'></head>"
        "<body><p>existing</p></body></html>",
        _PARSER,
    )
    head = tree.find("head")
    for tag in ("mbox", "div"):
        head.append(etree.Element(tag))
    head[-2].text, head[-1].text = "first", "second"
    repair_tree(tree)
    assert [child.tag for child in tree.find("head")] == ["title", "meta"]
    assert [child.tag for child in tree.find("body")] == ["mbox", "div", "p"]
    assert etree.tostring(tree.find("body"), method="text", encoding=str) == "firstsecondexisting"


def test_text_after_a_head_element_starts_the_body() -> None:
    tree = etree.fromstring("<html><head><title>T</title></head></html>", _PARSER)
    tree.find("head/title").tail = "Loose words a browser shows"
    repair_tree(tree)
    assert tree.find("head/title").tail is None
    assert tree.find("body").text == "Loose words a browser shows"


@pytest.mark.parametrize(
    ("html", "head_title"),
    [
        # A second page after </html>: its head goes into the first page's body.
        ("<html><head><title>One</title></head><body><p>one</p></body></html>"
         "<html><head><title>Two</title></head><body><p>two</p></body></html>", "One"),
        # Tags after </html>.
        ("<html><head><title>One</title></head><body><p>one</p></body></html><p>two</p>", "One"),
        # An empty root (a mangled start tag) takes the second page's head and body.
        ("<html><head><title>One</title></head></html><html><body><p>one</p><p>two</p>"
         "</body></html>", "One"),
        ('<html x"y=1 /></a></td><html><head><title>Two</title></head><body><p>one</p>'
         "<p>two</p></body></html>", "Two"),
    ],
)  # fmt: skip
def test_content_after_the_root_joins_the_body(html: str, head_title: str) -> None:
    tree = _repaired(html)
    # lxml cannot remove an element beside the root: it stays, emptied of its content.
    beside = [sibling for sibling in tree.itersiblings() if isinstance(sibling.tag, str)]
    assert all(not list(sibling.iter("p", "title")) for sibling in beside)
    assert [p.text for p in tree.find("body").iter("p")] == ["one", "two"]
    assert tree.find("head/title").text == head_title


def test_a_well_formed_page_is_left_exactly_as_parsed() -> None:
    data = (PAGES / "dom-article.html").read_bytes()
    parsed = etree.fromstring(data, _PARSER)
    assert etree.tostring(parse_document(data).tree) == etree.tostring(parsed)


def test_control_characters_never_reach_the_article() -> None:
    # The parser keeps them in the tree; the text that leaves the library has none.
    sentence = "The regional council voted\x01 on Tuesday to reopen\x00 the old harbour railway."
    page = (
        "<html><head><title>Harbour\x07 railway</title></head><body><div>"
        + "".join(f"<p>{sentence} Paragraph\x1b {n}.</p>" for n in range(6))
        + "</div></body></html>"
    ).encode("utf-8")
    article = extract_verbose(page).article
    assert article is not None
    texts = [article.title or "", *(text for _, text in article.blocks)]
    assert all(text.isprintable() and "\ufffd" not in text for text in texts), texts
    assert article.blocks[0][1].startswith("The regional council voted on Tuesday to reopen")


PROSE = "The island ferry returned to its normal timetable on Sunday after the storm passed. " * 5


@pytest.mark.parametrize(
    ("html", "moved"),
    [
        # Body text after body content libxml2 kept in <head>.
        (f"<html><head><title>T</title><mbox>x</mbox></head><body>lead\x05 words<p>{PROSE}</p>"
         "</body></html>", "xlead words"),
        # Loose text in <head> after an element a head cannot hold.
        (f"<html><head><title>T</title><mbox>x</mbox>Loose\x1b words</head><body><p>{PROSE}</p>"
         "</body></html>", "xLoose words"),
        # A second page after an empty root: its body text becomes the body's text.
        (f"<html><head><title>T</title></head></html><html><body>two\x01 lead<p>{PROSE}</p>"
         "</body></html>", "two lead"),
        # A second page after a full one: its body text joins the last paragraph's tail; a form
        # feed (HTML whitespace) becomes a space.
        (f"<html><head><title>T</title></head><body><p>{PROSE}</p></body></html>"
         f"<html><body>two\x0clead\x02 on<p>{PROSE}</p></body></html>", "two lead on"),
    ],
)  # fmt: skip
def test_text_a_repair_moves_keeps_its_words_and_loses_its_control_characters(
    html: str, moved: str
) -> None:
    """libxml2 keeps control characters in the tree, but lxml refuses to store them: moving such
    text raised, and the page came out NULL (extractor_error) in the pipeline (found by the
    extract fuzzer)."""
    tree = parse_document(html.encode()).tree
    body_text = etree.tostring(tree.find("body"), method="text", encoding=str)
    assert moved in body_text
    assert all(char.isprintable() or char in "\n\t " for char in body_text)
    assert extract_verbose(html.encode()).article is not None


@pytest.mark.parametrize("path", sorted(PAGES.glob("*.html")), ids=lambda path: path.name)
def test_first_child_is_what_find_returns(path: Path) -> None:
    # The head and body are looked up without lxml's path parser: the same element, or none.
    from extractors.tree import first_child

    root = parse_document(path.read_bytes()).tree
    for element in (root, *root):
        for tag in ("head", "body", "title", "meta", "div", "nav"):
            assert first_child(element, tag) is element.find(tag)
