"""Text that is safe to store and to show: the two rules every string from a page or feed obeys.

* **No lone surrogates.** JSON can spell half of a UTF-16 pair (`"\\ud83d"`: a CMS that cut an
  emoji in half), and `json.loads` accepts it; the resulting `str` cannot be encoded as UTF-8, so
  every sink, the journal and `print` would fail on it. JSON is the only way such a string gets
  in (byte decoding here replaces what it cannot decode, and lxml never yields one), so the rule
  is applied where JSON is read: `scrub_json` on what `json.loads` returned, by the JSON-LD reader
  (extractors/jsonld.py) and the feed parser (JSON Feed). A lone surrogate becomes U+FFFD, the
  replacement character: the text keeps its length and shows where something was lost.
* **No bidirectional controls in one-line metadata.** U+202A-U+202E (embeddings, overrides) and
  U+2066-U+2069 (isolates) reorder what follows them on screen: a title holding U+202E shows
  backwards, so it can pass for another one in a listing or a terminal. Titles, author names,
  descriptions and site names lose them (`single_line`); body text keeps them, since right-to-left
  writing may need them and a body is not shown as one spoofable line.

* **Only what XML allows in a tree's text.** libxml2's HTML parser, and its XML parser in
  recovery, keep control characters in the trees they build, but lxml refuses to store them
  again (`ValueError`): code that writes text into a tree (extractors/repair.py, the feed
  parser's markup reader) passes it through `storable_text` first. What it drops a browser does
  not show; a form feed, HTML whitespace, becomes a space.

These functions never raise and return their input unchanged (the same object) when there is
nothing to do, which is almost always.
"""

from __future__ import annotations

import re
from typing import Any

REPLACEMENT_CHARACTER = "\ufffd"
LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # a paired surrogate never survives json.loads
BIDI_CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069]")
# What lxml will not store as text (XML 1.0 excludes it); the form feed is handled apart.
NOT_XML_TEXT = re.compile("[\x00-\x08\x0b\x0e-\x1f\ufffe\uffff\ud800-\udfff]")
FORM_FEED = "\x0c"
# How JSON text spells a surrogate: an escape \uD800-\uDFFF, or (in bytes, which json.loads
# decodes with "surrogatepass") its three-byte UTF-8 form. Text without one yields none.
_SURROGATE_SPELLING = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE_SPELLING_BYTES = re.compile(rb"\\u[dD][89a-fA-F]|\xed[\xa0-\xbf]")


def scrub_surrogates(text: str) -> str:
    """`text` with each lone surrogate replaced by U+FFFD."""
    if text.isascii() or not LONE_SURROGATE.search(text):
        return text
    return LONE_SURROGATE.sub(REPLACEMENT_CHARACTER, text)


def scrub_json(value: Any, source: str | bytes | None = None) -> Any:
    """What `json.loads` returned, with every string in it (object keys too) through
    `scrub_surrogates`. `source`, the JSON text it was read from, spares the walk when it spells
    no surrogate (almost every document). Iterative: a hostile depth costs no stack."""
    if source is not None and not _spells_surrogates(source):
        return value
    if isinstance(value, str):
        return scrub_surrogates(value)
    if not isinstance(value, dict | list):
        return value
    pending: list[dict[Any, Any] | list[Any]] = [value]
    while pending:
        container = pending.pop()
        pairs = list(container.items()) if isinstance(container, dict) else enumerate(container)
        for key, item in pairs:
            if isinstance(item, dict | list):
                pending.append(item)
            elif isinstance(item, str) and (clean := scrub_surrogates(item)) is not item:
                container[key] = clean  # type: ignore[index]
            if isinstance(key, str) and (clean_key := scrub_surrogates(key)) is not key:
                container[clean_key] = container.pop(key)  # type: ignore[union-attr,call-arg]
    return value


def _spells_surrogates(source: str | bytes) -> bool:
    if isinstance(source, bytes):
        return _SURROGATE_SPELLING_BYTES.search(source) is not None
    return _SURROGATE_SPELLING.search(source) is not None


def single_line(text: str) -> str:
    """One-line metadata as shown: bidirectional controls removed, runs of whitespace (NBSP and
    the other Unicode spaces too) collapsed to one space, trimmed. `isprintable` says in C that
    a text holds none of the controls (the common case), so only the others are searched."""
    if not text.isprintable():
        text = BIDI_CONTROLS.sub("", text)
    return " ".join(text.split())


def storable_text(text: str | None) -> str | None:
    """`text` as lxml will store it in a tree: without the characters XML excludes."""
    if not text or text.isprintable():  # the common text: one check in C
        return text
    return NOT_XML_TEXT.sub("", text.replace(FORM_FEED, " "))
