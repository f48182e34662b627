"""The article's own images, in order: the lead image, then those in and right before the body.

Each image carries its caption and credit when the page gives them (a <figure>'s <figcaption>,
an element in it named as a credit, or a "Photo: ..." / "(c) ..." ending of the caption). What is
not the article's is left out by evidence, never by site: images outside the body's container,
inside links to other pages or asides, tiny ones (icons, tracking pixels), logos, avatars and
inline data.
"""

from __future__ import annotations

import re
from itertools import islice
from urllib.parse import urljoin, urlsplit

from extractors.article import ArticleImage
from extractors.blocks import clean_text
from extractors.tree import Element, first_element, text_of
from extractors.wordsearch import AnyWord

MAX_IMAGES = 30
MAX_CAPTION_CHARS = 1000
# Images declared smaller than this (width or height attribute, pixels) are icons or pixels.
MIN_IMAGE_PIXELS = 100
# The body's preceding siblings looked at for a lead figure set just above the text.
ADJACENT_SIBLINGS = 2
# How far up from an <img> its <figure> may be (figure > picture > a > img).
FIGURE_REACH = 4
# Words in an image's class, id, alt or file name (in any case) that make it page furniture.
_CHROME = AnyWord("logo", "icon", "avatar", "sprite", "spacer", "pixel", "badge", "emoji",
                  "gravatar", "placeholder")  # fmt: skip
# Elements whose images are not the article's: teasers of other pages, asides, navigation.
_FOREIGN_ANCESTORS = frozenset({"aside", "nav", "footer", "header", "form", "button"})
_IMAGE_LINK = re.compile(r"\.(?:jpe?g|png|webp|gif|avif)(?:[?#]|$)", re.I)
# An element in a caption that holds the credit, by the name its class gives it.
_CREDIT_CLASS = AnyWord("credit", "copyright", "source", "photographer", "attribution", "byline")
# A credit at the end of a caption: "(Photo: Jane Doe/Agency)", "Foto: dpa", "© Jane Doe".
_TRAILING_CREDIT = re.compile(
    r"\s*[(\[]?\s*(?:(?:photo(?:graph)?|image|picture|foto|bild|credit|crédit|source|quelle)"
    r"(?:\s+by)?\s*:|©|\(c\))\s*([^()\[\]]{2,120}?)\s*[)\]]?\s*$",
    re.IGNORECASE,
)
# What every such credit holds (in any case): most captions hold none, told by substring searches
# where the pattern is tried at each of their characters.
_CREDIT_WORD = AnyWord("photo", "image", "picture", "foto", "bild", "credit", "crédit", "source",
                       "quelle", "©", "(c)")  # fmt: skip


def article_images(
    container: Element | None, base_url: str | None, lead: ArticleImage | None = None
) -> list[ArticleImage]:
    """The lead image (og:image / JSON-LD image) first, then the images of the body's
    container and of the figures just before it, in document order, each URL once."""
    found: list[ArticleImage] = []
    if container is not None:
        for element in _adjacent_figures(container):
            found.extend(_images_in(element, element, base_url))
        found.extend(_images_in(container, container, base_url))
    if lead is not None:
        same = next((image for image in found if image.url == lead.url), None)
        if same is not None:
            found.remove(same)
            lead = ArticleImage(lead.url, same.caption or lead.caption, same.credit or lead.credit)
        found.insert(0, lead)
    seen: set[str] = set()
    unique = []
    for image in found:
        if image.url not in seen:
            seen.add(image.url)
            unique.append(image)
    return unique[:MAX_IMAGES]


def _adjacent_figures(container: Element) -> list[Element]:
    siblings = list(islice(container.itersiblings(preceding=True), ADJACENT_SIBLINGS))
    siblings.reverse()
    return [node for node in siblings if isinstance(node.tag, str) and _holds_figure(node)]


def _holds_figure(node: Element) -> bool:
    return node.tag in ("figure", "img", "picture") or first_element(node, "figure") is not None


def _images_in(root: Element, limit: Element, base_url: str | None) -> list[ArticleImage]:
    images = []
    for img in root.iter("img"):
        url = _source(img, base_url)
        if url is None or _is_chrome(img, url) or _is_foreign(img, limit):
            continue
        caption, credit = _caption_of(img, limit)
        images.append(ArticleImage(url, caption, credit))
        if len(images) >= MAX_IMAGES:
            break
    return images


def _source(img: Element, base_url: str | None) -> str | None:
    """The image's URL: src, else a lazy-loading attribute, else the first srcset entry."""
    for attribute in ("src", "data-src", "data-original", "data-lazy-src", "srcset", "data-srcset"):
        value = (img.get(attribute) or "").strip()
        if attribute.endswith("srcset"):
            value = value.split(",")[0].strip().split(" ")[0] if value else ""
        if value.startswith(("https://", "http://")):
            return value  # already absolute: no join (the common case, and urljoin is slow)
        if value and not value.startswith("data:"):
            try:
                absolute = urljoin(base_url, value) if base_url else value
                if urlsplit(absolute).scheme in ("http", "https"):
                    return absolute
            except ValueError:
                continue
    return None


def _is_chrome(img: Element, url: str) -> bool:
    for attribute in ("width", "height"):
        value = (img.get(attribute) or "").strip().removesuffix("px")
        if value.isdigit() and int(value) < MIN_IMAGE_PIXELS:
            return True
    names = " ".join((img.get("class") or "", img.get("id") or "", img.get("alt") or ""))
    path = url.rsplit("/", 1)[-1]
    return _CHROME.search(names) or _CHROME.search(path) or path.lower().endswith(".svg")


def _is_foreign(img: Element, limit: Element) -> bool:
    """Inside an aside or navigation, or a link to another page (a teaser), below `limit`."""
    for ancestor in img.iterancestors():
        if ancestor is limit:
            return False
        if ancestor.tag in _FOREIGN_ANCESTORS:
            return True
        if ancestor.tag == "a" and not _IMAGE_LINK.search(ancestor.get("href") or ""):
            return True
    return False


def _caption_of(img: Element, limit: Element) -> tuple[str | None, str | None]:
    figure = _figure_of(img, limit)
    if figure is None:
        return None, None
    caption_element = first_element(figure, "figcaption")
    if caption_element is None:
        return None, None
    credit = None
    credit_element = next(
        (node for node in caption_element.iter() if _is_credit_element(node)), None
    )
    text = clean_text(text_of(caption_element))
    if credit_element is not None:
        credit = clean_text(text_of(credit_element)) or None
        if credit and text.endswith(credit):
            text = text[: -len(credit)].rstrip(" -|/")
    if credit is None and _CREDIT_WORD.search(text) and (match := _TRAILING_CREDIT.search(text)):
        credit = match.group(1).strip()
        text = text[: match.start()].rstrip(" -|/")
    if credit:
        credit = _TRAILING_CREDIT.sub(r"\1", credit) if _TRAILING_CREDIT.match(credit) else credit
    return (text[:MAX_CAPTION_CHARS] or None), credit


def _is_credit_element(node: Element) -> bool:
    if not isinstance(node.tag, str) or node.tag == "figcaption":
        return False
    return _CREDIT_CLASS.search(node.get("class") or "") or node.tag in ("small", "cite")


def _figure_of(img: Element, limit: Element) -> Element | None:
    for ancestor in islice(img.iterancestors(), FIGURE_REACH):
        if ancestor.tag == "figure":
            return ancestor
        if ancestor is limit:
            return None
    return None
