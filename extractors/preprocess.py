"""Seed 002's preprocessing: remove what is clearly not the article body, in place.

Scripts, styles and comments; `aside`; hidden elements (inline CSS, `hidden`, `aria-hidden`);
elements whose id or class names say they are chrome (navigation, sidebar, social, comments,
related, promo, newsletter, cookie banners, ads). An element whose names also say it holds the
content ("article-body sidebar-layout") is kept: losing the story is worse than keeping a box.
"""

from __future__ import annotations

import re

from lxml import html

# Removed wholesale: never article text.
DROP_TAGS = (
    "script", "style", "noscript", "template", "svg", "math", "iframe", "object", "embed",
    "canvas", "form", "button", "select", "textarea", "input", "nav", "aside", "dialog",
)  # fmt: skip
# Class/id tokens (split on space, "-" and "_") that mark page chrome.
SUSPICIOUS_TOKENS = frozenset(
    {
        "nav", "navbar", "navigation", "menu", "sidebar", "social", "share", "sharing", "comment",
        "comments", "related", "promo", "promotion", "newsletter", "cookie", "cookies", "consent",
        "banner", "advert", "advertisement", "ad", "ads", "adslot", "sponsor", "sponsored",
        "breadcrumb", "breadcrumbs", "footer", "masthead", "subscribe", "subscription", "popup",
        "modal", "widget", "outbrain", "taboola", "recommended", "trending", "mostread", "teaser",
        "teasers", "signup", "paywall", "gdpr", "skip", "toolbar", "pagination", "pager", "tags",
    }
)  # fmt: skip
# Tokens that mark the content itself; they veto a suspicious token on the same element.
CONTENT_TOKENS = frozenset(
    {"article", "story", "content", "body", "post", "entry", "main", "text", "articlebody"}
)
# Elements that are never removed by name: the document frame and the semantic article.
PROTECTED_TAGS = frozenset({"html", "body", "main", "article"})

_TOKEN_SPLIT = re.compile(r"[\s_\-]+")
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)


def name_tokens(element: html.HtmlElement) -> set[str]:
    """Lower-cased tokens of an element's id and class attributes."""
    names = f"{element.get('id') or ''} {element.get('class') or ''}".lower()
    return {token for token in _TOKEN_SPLIT.split(names) if token}


def is_hidden(element: html.HtmlElement) -> bool:
    if element.get("hidden") is not None:
        return True
    if (element.get("aria-hidden") or "").strip().lower() == "true":
        return True
    style = element.get("style")
    return bool(style and _HIDDEN_STYLE.search(style))


def is_suspicious(element: html.HtmlElement) -> bool:
    if element.tag in PROTECTED_TAGS or _is_article_body(element):
        return False
    tokens = name_tokens(element)
    return bool(tokens & SUSPICIOUS_TOKENS) and not tokens & CONTENT_TOKENS


def _is_article_body(element: html.HtmlElement) -> bool:
    return "articlebody" in (element.get("itemprop") or "").lower()


def clean_tree(tree: html.HtmlElement) -> None:
    """Remove non-body elements from `tree` in place (the tree's tails are preserved)."""
    doomed = [element for element in tree.iter(*DROP_TAGS)]
    for element in tree.iter():
        if not isinstance(element.tag, str) or element.tag in PROTECTED_TAGS:
            continue
        if is_hidden(element) or is_suspicious(element):
            doomed.append(element)
    for element in doomed:
        if element.getparent() is not None:
            element.drop_tree()
