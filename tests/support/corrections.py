"""What the output says once the dedup stage's corrections are applied: a copy output before
its original (the original came later but first by order key) is named in the original's
`supersedes`, and the index and sinks take it out (docs/near-duplicates.md)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def superseded(items: Iterable[dict[str, Any]]) -> set[str]:
    """The canonical URLs some original's `supersedes` named: copies, though output unflagged."""
    return {url for item in items for url in item.get("supersedes") or ()}


def indexed(items: list[dict[str, Any]]) -> set[str]:
    """The URLs of the articles a sink keeps: neither flagged nor superseded."""
    gone = superseded(items)
    return {
        item["url"]
        for item in items
        if not item.get("duplicate_of") and item.get("canonical_url", item["url"]) not in gone
    }


def copies(items: list[dict[str, Any]]) -> set[str]:
    """The URLs of the articles the output marks as copies, flagged or superseded."""
    gone = superseded(items)
    return {
        item["url"]
        for item in items
        if item.get("duplicate_of") or item.get("canonical_url", item["url"]) in gone
    }
