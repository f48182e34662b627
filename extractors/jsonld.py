"""JSON-LD objects of a page, tolerant of the broken JSON publishers ship."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from extractors.safetext import scrub_json
from extractors.tree import Element, TagIndex, elements

# JSON-LD blocks larger than this are skipped: no real metadata block is anywhere near it.
MAX_JSONLD_CHARS = 2 * 1024 * 1024
# Objects nested deeper than this are not searched (bounds work on hostile JSON).
MAX_JSONLD_DEPTH = 12
MAX_JSONLD_OBJECTS = 500

ARTICLE_TYPES = frozenset(
    {
        "article", "newsarticle", "blogposting", "reportagenewsarticle", "analysisnewsarticle",
        "opinionnewsarticle", "reviewnewsarticle", "backgroundnewsarticle", "askpublicnewsarticle",
        "satiricalarticle", "scholarlyarticle", "techarticle", "socialmediaposting",
        "liveblogposting", "report", "webpage", "creativework",
    }
)  # fmt: skip

_TRAILING_COMMA = re.compile(r",\s*([}\]])")
_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")
# What some CMSs wrap JSON in: a CDATA section or an HTML comment, each end perhaps behind "//".
_LEADING_WRAPPER = re.compile(r"(?://\s*)?(?:<!\[CDATA\[|<!--)")
_TRAILING_WRAPPERS = ("]]>", "-->")


def _unwrapped(raw: str) -> str:
    """The JSON inside a CDATA or comment wrapper (both ends are looked at, never the middle:
    JSON-LD blocks run to many kilobytes)."""
    raw = raw.strip()
    leading = _LEADING_WRAPPER.match(raw)
    if leading:
        raw = raw[leading.end() :].lstrip()
    for wrapper in _TRAILING_WRAPPERS:
        if raw.endswith(wrapper):
            raw = raw[: -len(wrapper)].rstrip()
            raw = raw[:-2].rstrip() if raw.endswith("//") else raw
    return raw


def _loads_tolerant(raw: str) -> Any:
    """Parse JSON; on failure retry after removing the usual breakage. None if hopeless."""
    raw = _unwrapped(raw)
    try:
        return json.loads(raw, strict=False)
    except (ValueError, RecursionError):
        pass
    try:
        return json.loads(_TRAILING_COMMA.sub(r"\1", _CONTROL_CHARS.sub(" ", raw)), strict=False)
    except (ValueError, RecursionError):
        return None


def jsonld_objects(tree: Element, index: TagIndex | None = None) -> list[dict[str, Any]]:
    """Every JSON object in the page's ld+json scripts, flattened out of arrays and @graph
    (`index`: the page's elements by tag, when the caller has them)."""
    objects: list[dict[str, Any]] = []
    for script in elements(tree, "script", index):
        if "ld+json" not in (script.get("type") or "").lower():
            continue
        raw = script.text or ""
        if not raw.strip() or len(raw) > MAX_JSONLD_CHARS:
            continue
        # Lone surrogates ("\ud83d") become U+FFFD here, where JSON enters (extractors.safetext).
        for obj in _flatten(scrub_json(_loads_tolerant(raw), raw), 0):
            objects.append(obj)
            if len(objects) >= MAX_JSONLD_OBJECTS:
                return objects
    return objects


def _flatten(value: Any, depth: int) -> Iterator[dict[str, Any]]:
    if depth > MAX_JSONLD_DEPTH:
        return
    if isinstance(value, list):
        for item in value:
            yield from _flatten(item, depth + 1)
    elif isinstance(value, dict):
        yield value
        for key in ("@graph", "mainEntity", "mainEntityOfPage", "itemListElement", "hasPart"):
            nested = value.get(key)
            if isinstance(nested, (list, dict)):
                yield from _flatten(nested, depth + 1)


def types_of(obj: dict[str, Any]) -> set[str]:
    """The lower-cased schema.org type names of an object (without any URL prefix)."""
    raw = obj.get("@type")
    names = raw if isinstance(raw, list) else [raw]
    return {name.rsplit("/", 1)[-1].lower() for name in names if isinstance(name, str)}


def is_article(obj: dict[str, Any]) -> bool:
    return bool(types_of(obj) & ARTICLE_TYPES)


def article_objects(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Article-like objects, the most specific (NewsArticle before WebPage) first."""
    articles = [obj for obj in objects if is_article(obj)]
    return sorted(articles, key=lambda obj: bool(types_of(obj) & {"webpage", "creativework"}))


def names_of(value: Any, depth: int = 0) -> list[str]:
    """Person/organisation names from a schema.org author-like value."""
    if depth > MAX_JSONLD_DEPTH:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        name = value.get("name")
        return names_of(name, depth + 1) if name else []
    if isinstance(value, list):
        return [name for item in value[:MAX_JSONLD_OBJECTS] for name in names_of(item, depth + 1)]
    return []


def first_string(value: Any, depth: int = 0) -> str | None:
    """The first string in a schema.org value (a string, a list, or an object with url/@id)."""
    if depth > MAX_JSONLD_DEPTH:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        for item in value[:MAX_JSONLD_OBJECTS]:
            found = first_string(item, depth + 1)
            if found:
                return found
    if isinstance(value, dict):
        for key in ("url", "contentUrl", "@id", "name"):
            found = first_string(value.get(key), depth + 1)
            if found:
                return found
    return None
