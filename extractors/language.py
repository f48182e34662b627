"""Stop lists and the page's language, for the stop-word density of jusText (Pomikálek 2011;
Lejeune & Zhu).

Stop lists are data files, `extractors/stoplists/<ISO 639-1 code>.txt`: one lower-case word per
line, '#' comments. The language of a page is the one it declares (`<html lang>`, `xml:lang`,
`<meta http-equiv="content-language">`, `og:locale`) when a stop list exists for it, otherwise
the stop list the page's words overlap most, otherwise unknown (None).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from pathlib import Path

from extractors.segments import Element

STOPLIST_DIR = Path(__file__).resolve().parent / "stoplists"
# A guess needs this share of the page's words in one stop list (prose in a language with a stop
# list scores 0.35-0.55 on its own list, and rarely above 0.1 on the others).
MIN_GUESS_SHARE = 0.15
# Words looked at when guessing: enough to be sure, bounded on huge pages.
GUESS_SAMPLE_WORDS = 5000
_LANGUAGE_TAG = re.compile(r"^\s*([A-Za-z]{2,3})(?:[-_]|$)")
# ASCII punctuation, typographic quotes, guillemets, inverted marks, ellipsis and dashes.
_PUNCTUATION = (
    "\"'()[]{}.,;:!?*/\\|-"
    "\u201c\u201d\u2018\u2019\u00ab\u00bb\u201e\u201a\u00bf\u00a1\u2026\u2014\u2013"
)


@functools.cache
def available_languages() -> tuple[str, ...]:
    return tuple(sorted(path.stem for path in STOPLIST_DIR.glob("*.txt")))


@functools.cache
def stoplist(language: str) -> frozenset[str]:
    """The stop words of `language` (an ISO 639-1 code); empty when there is no list."""
    if language not in available_languages():
        return frozenset()
    lines = (STOPLIST_DIR / f"{language}.txt").read_text(encoding="utf-8").splitlines()
    return frozenset(
        word for line in lines if (word := line.strip().lower()) and not word.startswith("#")
    )


def normalize_word(token: str) -> str:
    """A token as looked up in a stop list: lower-case, surrounding punctuation removed."""
    return token.strip(_PUNCTUATION).replace("\u2019", "'").lower()


def primary_subtag(value: str | None) -> str | None:
    """'en' for 'en-GB', 'en_US' or 'EN'; None when `value` is not a language tag."""
    match = _LANGUAGE_TAG.match(value or "")
    return match.group(1).lower() if match else None


def declared_language(tree: Element) -> str | None:
    """The language the page declares in its markup, as a primary subtag."""
    root = tree.getroottree().getroot()
    candidates = [root.get("lang"), root.get("{http://www.w3.org/XML/1998/namespace}lang")]
    candidates.append(root.get("xml:lang"))
    for meta in root.iter("meta"):
        key = (meta.get("http-equiv") or meta.get("property") or meta.get("name") or "").lower()
        if key in ("content-language", "og:locale", "language"):
            candidates.append(meta.get("content"))
    for candidate in candidates:
        language = primary_subtag(candidate)
        if language:
            return language
    return None


def _sample(words: Iterable[str]) -> list[str]:
    return [normalize_word(word) for _, word in zip(range(GUESS_SAMPLE_WORDS), words, strict=False)]


def stopword_share(sample: list[str], language: str) -> float:
    """Share of the (normalised) words that are stop words of `language`."""
    stop_words = stoplist(language)
    return sum(1 for word in sample if word in stop_words) / len(sample) if sample else 0.0


def guess_language(words: Iterable[str]) -> str | None:
    """The language whose stop list covers most of `words`, if it covers enough of them."""
    sample = _sample(words)
    shares = {language: stopword_share(sample, language) for language in available_languages()}
    best = max(shares, key=shares.__getitem__, default=None)
    return best if best is not None and shares[best] >= MIN_GUESS_SHARE else None


def page_language(tree: Element, words: Iterable[str], declared: str | None = None) -> str | None:
    """The page's language for stop-word purposes: the declared one when we have its stop list
    and the text bears it out, else the one guessed from the words. Pages misdeclare their
    language (a template's lang="en" on a German article), so the declaration is checked.
    `declared` overrides the markup (e.g. metadata already read)."""
    sample = _sample(words)
    language = primary_subtag(declared) or declared_language(tree)
    if language in available_languages() and stopword_share(sample, language) >= MIN_GUESS_SHARE:
        return language
    return guess_language(sample)
