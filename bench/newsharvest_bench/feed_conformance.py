"""Feed-parser conformance on feedparser's test corpus, judged on the project's entry shape.

feedparser's corpus (its `wellformed/` and `illformed/` feeds) states each expectation as a
Python expression over feedparser's result: `Expect: not bozo and entries[0]['link'] == '...'`.
This module selects the expectations about what `crawler.feedparse` carries (an entry's link, title,
id, published and updated dates, authors and summary, and the feed's title), translates them
onto `FeedEntry`, and evaluates them without `eval`: the expression is parsed with `ast` and only
the supported forms are evaluated (comparisons, `and`/`or`/`not`, literals); anything else makes
the case unselected, never executed.

Translation rules (feedparser's value -> ours):
- titles and summaries: feedparser keeps HTML (or plain text, with its type beside it), we keep
  text. The expected value is rendered to text as HTML (markup dropped, script and style bodies
  dropped, entities decoded once, whitespace collapsed) by a renderer independent of the
  parser's own. The expression does not say whether feedparser's value was HTML or plain text,
  so a value is also accepted as written when it differs from its HTML reading; such passes are
  counted apart (`ConformanceReport.plain_readings`);
- dates: `*_parsed` tuples are compared with our date in UTC; date strings are compared as
  instants;
- `author` ("Name (email)") is compared by its name; `author_detail`/`authors[k]` by `name`;
- `bozo` (feedparser's well-formedness flag) is not translated: we recover instead, and say so
  in `Feed.repairs`.

Our parser drops entries without an http(s) link by design: a case that reads such an entry is
counted as `no_link`, apart from passes and failures. A feed that is not parsed at all
(`FeedError`) fails every case that reads it.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from dateutil import parser as date_parser

from crawler.feedparse import MAX_FIELD_CHARS, FeedEntry, FeedError, parse_feed_items

# Where feedparser's own harness serves the corpus: relative links resolve against it.
CORPUS_ORIGIN = "http://127.0.0.1:8097/tests/"
CORPUS_FOLDERS = ("wellformed", "illformed")
# Searched, relative to the checkout and to the working directory and their parents.
CORPUS_RELATIVE = Path("shared") / "conformance" / "feedparser"
HEADER_LINES = 12  # the Description/Expect/Header comment is at the top of each file

PASS = "pass"
FAIL = "fail"
NO_LINK = "no_link"  # the expectation reads an entry we drop: it has no http(s) link

# How feedparser spells a field's value, which decides how an expected value is translated.
FORM_RAW = "raw"  # compared as is (links, ids)
FORM_TEXT = "text"  # feedparser's HTML or text, compared as rendered text
FORM_DATE_STRING = "date_string"  # the feed's own date string: compared as an instant
FORM_DATE_TUPLE = "date_tuple"  # time.struct_time in UTC
FORM_AUTHOR = "author"  # "Name (email)" or "email (Name)" or "Name": compared by name
FORM_NAME = "name"
FORM_PRESENCE = "presence"  # has_key('link'): does the entry exist in our shape at all

_ENTRY_FIELDS: dict[tuple[str, ...], tuple[str, str]] = {
    ("link",): ("link", FORM_RAW),
    ("title",): ("title", FORM_TEXT),
    ("title_detail", "value"): ("title", FORM_TEXT),
    ("summary",): ("summary", FORM_TEXT),
    ("description",): ("summary", FORM_TEXT),
    ("summary_detail", "value"): ("summary", FORM_TEXT),
    ("description_detail", "value"): ("summary", FORM_TEXT),
    ("id",): ("guid", FORM_RAW),
    ("guid",): ("guid", FORM_RAW),
    ("published",): ("published", FORM_DATE_STRING),
    ("issued",): ("published", FORM_DATE_STRING),
    ("published_parsed",): ("published", FORM_DATE_TUPLE),
    ("issued_parsed",): ("published", FORM_DATE_TUPLE),
    ("updated",): ("updated", FORM_DATE_STRING),
    ("modified",): ("updated", FORM_DATE_STRING),
    ("date",): ("updated", FORM_DATE_STRING),
    ("updated_parsed",): ("updated", FORM_DATE_TUPLE),
    ("modified_parsed",): ("updated", FORM_DATE_TUPLE),
    ("date_parsed",): ("updated", FORM_DATE_TUPLE),
    ("author",): ("author", FORM_AUTHOR),
    ("author_detail", "name"): ("author", FORM_NAME),
}
_FEED_FIELDS: dict[tuple[str, ...], tuple[str, str]] = {
    ("title",): ("title", FORM_TEXT),
    ("title_detail", "value"): ("title", FORM_TEXT),
}
_FEED_ROOTS = ("feed", "channel")
_ENTRY_ROOTS = ("entries", "items")
_EMAIL = r"[^\s()@]+@[^\s()@]+"
_NAME_THEN_EMAIL = re.compile(rf"(.+?)\s*\({_EMAIL}\)")
_EMAIL_THEN_NAME = re.compile(rf"{_EMAIL}\s*\((.+)\)")


class Unsupported(ValueError):
    """The expectation says something the entry shape does not carry: the case is not selected."""


class EntryDropped(LookupError):
    """The expectation reads an entry that we drop because it has no http(s) link."""


# --- the corpus ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ConformanceCase:
    name: str  # path inside the corpus, e.g. "wellformed/rss/item_link.xml"
    description: str
    expect: str
    headers: dict[str, str]  # HTTP response headers the feed is served with (names lower-case)
    body: bytes

    @property
    def url(self) -> str:
        """The URL feedparser's harness serves the file at."""
        return CORPUS_ORIGIN + self.name

    @property
    def content_location(self) -> str | None:
        return self.headers.get("content-location")


def find_corpus(start: Path | None = None) -> Path | None:
    """The corpus directory beside the checkout or the working directory, or None."""
    checkout = start or Path(__file__).resolve().parents[1]
    for base in (checkout, Path.cwd()):
        for directory in (base, *base.parents):
            candidate = directory / CORPUS_RELATIVE
            if all((candidate / folder).is_dir() for folder in CORPUS_FOLDERS):
                return candidate
    return None


def load_cases(root: Path) -> list[ConformanceCase]:
    """Every corpus file that states an expectation, in name order."""
    cases = []
    for folder in CORPUS_FOLDERS:
        for path in sorted((root / folder).rglob("*.xml")):
            body = path.read_bytes()
            header = _header_fields(body)
            if "expect" in header:
                name = path.relative_to(root).as_posix()
                description = header.get("description", "")
                case = ConformanceCase(name, description, header["expect"], header["headers"], body)
                cases.append(case)
    return cases


def _header_fields(body: bytes) -> dict[str, Any]:
    """Description, Expect and Header lines of the comment at the top of a corpus file."""
    fields: dict[str, Any] = {"headers": {}}
    for raw in body.split(b"\n", HEADER_LINES)[:HEADER_LINES]:
        line = raw.decode("utf-8", "replace").strip()
        key, _, value = line.partition(":")
        key = key.strip().lower()
        if key == "header":
            name, _, header_value = value.partition(":")
            fields["headers"][name.strip().lower()] = header_value.strip()
        elif key in ("description", "expect") and key not in fields:
            fields[key] = value.strip()
    return fields


# --- translation -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FieldRef:
    """A field of our result that an expectation reads."""

    entry: int | None  # the entry's position in the document; None: the feed itself
    name: str  # a FeedEntry attribute, "author" (the first author) or "title" of the feed
    form: str  # FORM_*: how feedparser spells it
    author: int = 0  # which author, for authors[k]


@dataclass(frozen=True, slots=True)
class Translated:
    """An expected value, already in our shape."""

    value: Any


@dataclass(frozen=True, slots=True)
class TextReadings:
    """An expected text: its HTML reading, and the value as written (plain text)."""

    html: str | None
    plain: str | None


@dataclass(frozen=True, slots=True)
class ParsedView:
    """A parser's result in the project's shape, by document position: each feed item's entry
    (its link "" where it has no http(s) link), or None where the item was not read at all."""

    title: str | None
    items: list[FeedEntry | None]
    error: str | None = None  # the feed was not parsed at all
    # Read link-less entries like the others (a diagnostic of their other fields); by default
    # they are dropped, as the parser drops them.
    linkless_kept: bool = False


@dataclass(frozen=True, slots=True)
class Expectation:
    source: str
    tree: ast.expr

    def evaluate(self, view: ParsedView, html_only: bool = False) -> bool:
        """True when our result meets it; raises EntryDropped when it reads a dropped entry.
        `html_only`: expected texts are read as HTML only, never as written."""
        return bool(_evaluate(self.tree, view, html_only))


def translate(expect: str) -> Expectation | None:
    """The expectation, if everything it says (besides `bozo`) is about the entry shape."""
    try:
        tree = ast.parse(expect, mode="eval").body
        stripped = _without_bozo(tree)
        if stripped is None:
            return None
        return Expectation(expect, _check_supported(stripped))
    except (SyntaxError, ValueError, RecursionError):  # Unsupported is a ValueError
        return None


def _is_bozo(node: ast.expr) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        node = node.operand
    return isinstance(node, ast.Name) and node.id == "bozo"


def _without_bozo(node: ast.expr) -> ast.expr | None:
    """The expression without its `bozo` / `not bozo` conjuncts (None when nothing is left)."""
    if _is_bozo(node):
        return None
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
        kept = [part for part in map(_without_bozo, node.values) if part is not None]
        if not kept:
            return None
        return kept[0] if len(kept) == 1 else ast.BoolOp(op=ast.And(), values=kept)
    if isinstance(node, ast.BoolOp):
        parts = [_without_bozo(part) for part in node.values]
        if any(part is None for part in parts):
            raise Unsupported("bozo inside 'or'")
        return ast.BoolOp(op=node.op, values=parts)
    return node


def _check_supported(node: ast.expr) -> ast.expr:
    """The tree with field paths as FieldRef constants and expected values translated."""
    if isinstance(node, ast.BoolOp):
        return ast.BoolOp(op=node.op, values=[_check_supported(v) for v in node.values])
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return ast.UnaryOp(op=node.op, operand=_check_supported(node.operand))
    if isinstance(node, ast.Compare):
        return _translate_compare(node)
    if isinstance(node, ast.Call):
        return ast.Constant(_presence_ref(node))
    raise Unsupported(type(node).__name__)


def _translate_compare(node: ast.Compare) -> ast.Compare:
    if not all(isinstance(op, ast.Eq | ast.NotEq) for op in node.ops):
        raise Unsupported("only == and != are translated")
    operands = [_operand(part) for part in (node.left, *node.comparators)]
    refs = [part for part in operands if isinstance(part, FieldRef)]
    if not refs:
        raise Unsupported("compares no field")
    forms = {ref.form for ref in refs}
    if len(forms) > 1:
        raise Unsupported("compares fields of different kinds")
    form = forms.pop()
    translated = [
        part if isinstance(part, FieldRef) else Translated(translate_value(form, part))
        for part in operands
    ]
    constants = [ast.Constant(part) for part in translated]
    return ast.Compare(left=constants[0], ops=node.ops, comparators=constants[1:])


def _operand(node: ast.expr) -> FieldRef | Any:
    """A field reference, or a literal (string concatenations folded)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _operand(node.left), _operand(node.right)
        if isinstance(left, str) and isinstance(right, str):
            return left + right
        raise Unsupported("arithmetic on fields")
    if isinstance(node, ast.Subscript | ast.Attribute):
        return field_ref(_path(node))
    try:
        return ast.literal_eval(node)
    except ValueError as error:
        raise Unsupported(ast.dump(node)[:80]) from error


def _path(node: ast.expr) -> list[str | int]:
    """`entries[0]['title_detail']['value']` -> ['entries', 0, 'title_detail', 'value']."""
    keys: list[str | int] = []
    while True:
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            keys.append(node.slice.value)
            node = node.value
        elif isinstance(node, ast.Attribute):
            keys.append(node.attr)
            node = node.value
        elif isinstance(node, ast.Name):
            keys.append(node.id)
            return keys[::-1]
        else:
            raise Unsupported(ast.dump(node)[:80])


def field_ref(path: list[str | int]) -> FieldRef:
    """The field of our shape a feedparser path names; Unsupported when it names none."""
    root, rest = path[0], tuple(path[1:])
    if root in _FEED_ROOTS and rest in _FEED_FIELDS:
        return FieldRef(None, *_FEED_FIELDS[rest])
    if root not in _ENTRY_ROOTS or not rest or not isinstance(rest[0], int):
        raise Unsupported(f"path {path}")
    index, keys = rest[0], rest[1:]
    if keys in _ENTRY_FIELDS:
        return FieldRef(index, *_ENTRY_FIELDS[keys])
    if len(keys) == 3 and keys[0] == "authors" and isinstance(keys[1], int) and keys[2] == "name":
        return FieldRef(index, "author", FORM_NAME, author=keys[1])
    raise Unsupported(f"path {path}")


def _presence_ref(node: ast.Call) -> FieldRef:
    """`entries[i].has_key('link')`: whether entry i exists with a link in our shape."""
    function = node.func
    arguments = [ast.literal_eval(argument) for argument in node.args]
    if (
        isinstance(function, ast.Attribute)
        and function.attr == "has_key"
        and arguments == ["link"]
        and not node.keywords
    ):
        ref = field_ref([*_path(function.value), "link"])
        return FieldRef(ref.entry, "link", FORM_PRESENCE)
    raise Unsupported("call")


def translate_value(form: str, expected: Any) -> Any:
    """feedparser's expected value, as our parser would give it."""
    if expected is None or form == FORM_RAW:
        return expected
    if form == FORM_TEXT:
        if not isinstance(expected, str):
            return _unsupported(expected)
        return TextReadings(render_text(expected), " ".join(expected.split())[:MAX_FIELD_CHARS])
    if form == FORM_DATE_TUPLE:
        if isinstance(expected, tuple) and len(expected) == 9:
            return expected
        return _unsupported(expected)
    if form == FORM_DATE_STRING:
        return _expected_instant(expected)
    if form == FORM_AUTHOR:
        return author_name(expected) if isinstance(expected, str) else _unsupported(expected)
    if form == FORM_NAME:
        return " ".join(expected.split()) if isinstance(expected, str) else _unsupported(expected)
    return _unsupported(expected)


def _unsupported(value: Any) -> Any:
    raise Unsupported(f"value {value!r:.80}")


def author_name(author: str) -> str:
    """The name in feedparser's author string: "Name (email)", "email (Name)" or "Name"."""
    text = " ".join(author.split())
    for pattern in (_NAME_THEN_EMAIL, _EMAIL_THEN_NAME):
        if match := pattern.fullmatch(text):
            return match.group(1)
    return text


def _expected_instant(value: Any) -> datetime:
    if not isinstance(value, str):
        return _unsupported(value)
    for parse in (
        lambda text: datetime.fromisoformat(text.replace("Z", "+00:00")),
        parsedate_to_datetime,
        date_parser.parse,
    ):
        try:
            parsed = parse(value)
        except (ValueError, TypeError, OverflowError):
            continue
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    return _unsupported(value)


class _TextRenderer(HTMLParser):
    """Text of an HTML fragment as a reader sees it: no markup, no script or style bodies,
    block elements apart ("<p>a</p><p>b</p>" is "a b"), inline ones not ("<b>a</b>b" is "ab")."""

    HIDDEN = frozenset({"script", "style"})
    BLOCKS = frozenset(("address", "article", "aside", "blockquote", "br", "dd", "div", "dl",
        "dt", "figcaption", "figure", "footer", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr",
        "img", "li", "main", "nav", "ol", "p", "pre", "section", "table", "td", "th", "title",
        "tr", "ul"))  # fmt: skip

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.hidden = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.hidden += tag in self.HIDDEN
        if tag in self.BLOCKS:
            self.parts.append(" ")

    def handle_endtag(self, tag: str) -> None:
        self.hidden -= tag in self.HIDDEN and self.hidden > 0
        if tag in self.BLOCKS:
            self.parts.append(" ")

    def handle_data(self, data: str) -> None:
        if not self.hidden:
            self.parts.append(data)


def render_text(fragment: str) -> str | None:
    """feedparser's HTML (or plain) value as our shape's text: None when it has no text."""
    renderer = _TextRenderer()
    renderer.feed(fragment)
    renderer.close()
    text = " ".join("".join(renderer.parts).split())
    return text[:MAX_FIELD_CHARS] or None


# --- evaluation ------------------------------------------------------------------------------


def _evaluate(node: ast.expr, view: ParsedView, html_only: bool) -> Any:
    if isinstance(node, ast.BoolOp):
        if isinstance(node.op, ast.And):
            return all(_evaluate(value, view, html_only) for value in node.values)
        return any(_evaluate(value, view, html_only) for value in node.values)
    if isinstance(node, ast.UnaryOp):
        return not _evaluate(node.operand, view, html_only)
    if isinstance(node, ast.Compare):
        parts = (node.left, *node.comparators)
        values = [_value(part.value, view) for part in parts]  # type: ignore[attr-defined]
        return all(
            _equal(left, right, html_only) == isinstance(op, ast.Eq)
            for left, op, right in zip(values, node.ops, values[1:], strict=False)
        )
    assert isinstance(node, ast.Constant)
    return _value(node.value, view)


def _equal(left: Any, right: Any, html_only: bool) -> bool:
    if isinstance(right, TextReadings):
        left, right = right, left
    if isinstance(left, TextReadings):
        return right == left.html or (not html_only and right == left.plain)
    return bool(left == right)


def _value(operand: FieldRef | Translated, view: ParsedView) -> Any:
    if isinstance(operand, Translated):
        return operand.value
    if operand.entry is None:
        return view.title
    if operand.entry >= len(view.items):
        raise IndexError(f"no entry {operand.entry}: the feed has {len(view.items)}")
    entry = view.items[operand.entry]
    if operand.form == FORM_PRESENCE:
        return entry is not None and bool(entry.link)
    if entry is None or not (entry.link or view.linkless_kept):
        raise EntryDropped(operand.entry)
    if operand.name == "author":
        return entry.authors[operand.author] if operand.author < len(entry.authors) else None
    value = getattr(entry, operand.name)
    if operand.form == FORM_DATE_TUPLE and value is not None:
        return tuple(value.astimezone(UTC).utctimetuple())
    return value


def our_view(case: ConformanceCase) -> ParsedView:
    """Our parser's result for a case, link-less entries kept (judged apart)."""
    try:
        location = case.content_location
        feed, items = parse_feed_items(
            case.body, case.url, content_location=location, keep_linkless=True
        )
    except FeedError as error:
        return ParsedView(None, [], str(error))
    return ParsedView(feed.title, items)


# --- running ---------------------------------------------------------------------------------


@dataclass(slots=True)
class CaseResult:
    case: ConformanceCase
    outcome: str  # PASS, FAIL or NO_LINK
    reason: str = ""
    # For a NO_LINK case: PASS or FAIL when the link-less entry is read anyway.
    linkless_outcome: str | None = None
    plain_reading: bool = False  # passed only with an expected text read as written


@dataclass(slots=True)
class ConformanceReport:
    results: list[CaseResult] = field(default_factory=list)
    unselected: int = 0  # cases whose expectation says nothing the entry shape carries

    def count(self, outcome: str) -> int:
        return sum(1 for result in self.results if result.outcome == outcome)

    @property
    def selected(self) -> int:
        return len(self.results)

    @property
    def with_link(self) -> int:
        return self.selected - self.count(NO_LINK)

    @property
    def pass_rate(self) -> float:
        return self.count(PASS) / self.with_link if self.with_link else 0.0

    @property
    def plain_readings(self) -> int:
        """Passes that needed an expected text read as written (not as HTML)."""
        return sum(1 for result in self.results if result.plain_reading)

    def linkless(self, outcome: str) -> int:
        """No-link cases with that outcome when their link-less entries are read anyway."""
        return sum(1 for result in self.results if result.linkless_outcome == outcome)

    def failures(self) -> list[CaseResult]:
        return [result for result in self.results if result.outcome == FAIL]


def select_cases(
    cases: Iterable[ConformanceCase],
) -> tuple[list[tuple[ConformanceCase, Expectation]], int]:
    """The cases whose expectation translates, and how many do not."""
    selected, unselected = [], 0
    for case in cases:
        expectation = translate(case.expect)
        if expectation is None:
            unselected += 1
        else:
            selected.append((case, expectation))
    return selected, unselected


def run_conformance(
    selected: list[tuple[ConformanceCase, Expectation]],
    parse: Callable[[ConformanceCase], ParsedView],
    unselected: int = 0,
) -> ConformanceReport:
    """Evaluate each selected case on `parse`'s view of its feed."""
    report = ConformanceReport(unselected=unselected)
    for case, expectation in selected:
        view = parse(case)
        result = judge(case, expectation, view)
        if result.outcome == NO_LINK:
            kept = replace(view, linkless_kept=True)
            result.linkless_outcome = judge(case, expectation, kept).outcome
        report.results.append(result)
    return report


def judge(case: ConformanceCase, expectation: Expectation, view: ParsedView) -> CaseResult:
    try:
        if expectation.evaluate(view):
            return CaseResult(case, PASS, plain_reading=not expectation.evaluate(view, True))
    except EntryDropped as dropped:
        return CaseResult(case, NO_LINK, f"entry {dropped.args[0]} has no http(s) link")
    except IndexError as error:
        return CaseResult(case, FAIL, view.error or str(error))
    return CaseResult(case, FAIL, view.error or describe(expectation, view))


def describe(expectation: Expectation, view: ParsedView) -> str:
    """What each field the expectation reads holds in our view, against what was expected."""
    parts = []
    for node in ast.walk(expectation.tree):
        if isinstance(node, ast.Compare):
            operands = [part.value for part in (node.left, *node.comparators)]  # type: ignore[attr-defined]
            for operand in operands:
                if isinstance(operand, FieldRef):
                    expected = [_shown(o.value) for o in operands if isinstance(o, Translated)]
                    try:
                        got = _value(operand, view)
                    except (LookupError, IndexError) as error:
                        got = f"<{type(error).__name__}>"
                    parts.append(f"{_ref_name(operand)}: got {got!r:.120}, "
                                 f"expected {expected[0] if expected else '?'!r:.120}")  # fmt: skip
    return "; ".join(parts) or "expression false"


def _shown(value: Any) -> Any:
    return value.html if isinstance(value, TextReadings) else value


def _ref_name(ref: FieldRef) -> str:
    where = "feed" if ref.entry is None else f"entries[{ref.entry}]"
    return f"{where}.{ref.name}" + (f"[{ref.author}]" if ref.form == FORM_NAME else "")
