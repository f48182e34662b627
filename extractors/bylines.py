"""Author names out of bylines: "By Jane Doe and John Roe, Staff Writers" -> two names.

Bylines, meta tags and JSON-LD `author` names alike carry more than names: a "By" prefix, roles
("Senior Correspondent"), places ("in Lagos"), agencies after a bar, several names joined by
commas, "and" or "&". The rules here hold on any site: they read the words, never the publisher.
"""

from __future__ import annotations

import re

from extractors.blocks import clean_text

MAX_AUTHORS = 20
MAX_AUTHOR_CHARS = 120
# A name has at most this many words; a longer piece is a sentence, not a name.
MAX_NAME_WORDS = 6

# "By", "Written by", "Reporting by", "Von", "Par", "Por", "Di", "Door", "Av" before the names.
_LEADING = re.compile(
    r"^\s*(?:(?:written|reported|reporting|text|words|story|posted|published)\s+by|by|von|par|"
    r"por|di|door|av|af|autor(?:in)?|author|text)\s*:?\s+",
    re.IGNORECASE,
)
# "Editing by ..." and the like: the people after it edited, they did not write.
_NOT_WRITERS = re.compile(
    r"[;.]?\s*\b(?:additional reporting|editing|edited|compiled|photos?|photography|graphics|"
    r"illustrations?|video)\s+by\b.*$",
    re.IGNORECASE,
)
# Separators between names: commas, semicolons, " and ", "&", " und ", " et ", " y ", " e ".
_SEPARATORS = re.compile(r"\s*(?:[,;/]|\s(?:and|und|et|y|e|og|en)\s|&|\+)\s*", re.IGNORECASE)
# After a name: " | Agency", " - Agency" (and " (Agency)", `_without_after_name`).
_AFTER_BAR = re.compile(r"\s+(?:\||\u2013|\u2014|-)\s+")
# " in Lagos", " at The Paper", " for The Paper": where the writer is, not who.
_PLACE = re.compile(r"\s+(?:in|at|for|aus|in der|en)\s+[A-Z].*$")
# Job nouns: a piece holding one is a role ("Transport Correspondent"), never a person's name.
ROLE_NOUNS = frozenset(
    {
        "writer", "writers", "reporter", "reporters", "correspondent", "correspondents",
        "editor", "editors", "columnist", "columnists", "journalist", "journalists",
        "photographer", "contributor", "contributors", "redakteur", "redakteurin",
        "korrespondent", "korrespondentin", "rédacteur", "rédactrice", "journaliste",
        "correspondant", "correspondante", "periodista", "redactor", "redactora", "giornalista",
    }
)  # fmt: skip
# Words that make a piece a role when it has nothing else ("Staff", "Senior Correspondent").
ROLE_WORDS = frozenset(
    {
        "writer", "writers", "reporter", "reporters", "correspondent", "correspondents",
        "editor", "editors", "staff", "contributor", "contributors", "columnist", "columnists",
        "journalist", "journalists", "photographer", "producer", "analyst", "bureau", "chief",
        "senior", "associate", "deputy", "managing", "political", "business", "sports",
        "science", "health", "technology", "economics", "foreign", "national", "international",
        "special", "guest", "freelance", "desk", "team", "news", "newsroom", "opinion",
        "redakteur", "redakteurin", "korrespondent", "korrespondentin", "rédacteur",
        "journaliste", "correspondant", "redacción", "periodista", "redazione", "updated",
        "published", "posted", "min", "read", "minutes", "ago",
    }
)  # fmt: skip
_DIGIT = re.compile(r"\d")
# From the start of a word only: `\S+@` tried at every character of a long word without an "@"
# read the rest of the word from each (a 3 MB author value: minutes). A match found from inside
# a word is found from its start as well, so the matches are the same.
_EMAIL = re.compile(r"(?<!\S)\S+@\S+")
# "Doe, Jane": a library-style name (citation_author, DC.creator), surname first.
_SURNAME_FIRST = re.compile(r"^([^\W\d_][\w'-]*),\s*([^\W\d_][\w.'-]*)$")
_LINK = re.compile(r"^(?:https?://|www\.)", re.IGNORECASE)


def author_names(raw: str) -> list[str]:
    """The names in one byline, author value or meta tag, in order."""
    text = clean_text(raw)
    if _LINK.match(text):  # an author given as the URL of their page
        return []
    text = _EMAIL.sub(" ", text)
    text = _NOT_WRITERS.sub("", text)
    text = _LEADING.sub("", text)
    if surname_first := _SURNAME_FIRST.match(text):  # "Doe, Jane": one name, not two
        return [f"{surname_first.group(2)} {surname_first.group(1)}"]
    names = []
    for piece in _SEPARATORS.split(text):
        name = _PLACE.sub("", _without_after_name(_LEADING.sub("", piece))).strip(" .:-|")
        name = _without_leading_title(name)
        if is_name(name):
            names.append(name)
    return names


def _without_after_name(text: str) -> str:
    """One line of text without what follows the name: from a bar or a dash between spaces
    (" | Agency", " - Agency"), or from the first "(" when the text ends with ")" (" (Agency)"),
    whichever comes first, with the spaces before it.

    What the pattern `\\s*\\(.*\\)\\s*$` removed, found without it: tried at every "(" of a text
    of many, it read the rest of the text from each (a 3 MB author value: minutes)."""
    bar = _AFTER_BAR.search(text)
    cut = bar.start() if bar is not None else len(text)
    last = len(text.rstrip()) - 1
    opening = text.find("(", 0, cut)
    if 0 <= opening < last and text[last] == ")":
        cut = len(text[:opening].rstrip())
    return text[:cut]


MIN_NAME_WORDS_AFTER_TITLE = 2  # "Reporter Jane Doe" is Jane Doe; "Reporter X" stays unread


def _without_leading_title(text: str) -> str:
    """The name after a job title written before it ("Senior Correspondent Ana Ruiz"): a run of
    role words holding a role noun, followed by at least two words that are not role words."""
    words = text.split()
    cut = 0
    while cut < len(words) and words[cut].casefold().strip(".,:") in ROLE_WORDS:
        cut += 1
    titled = any(word.casefold().strip(".,:") in ROLE_NOUNS for word in words[:cut])
    return (
        " ".join(words[cut:]) if titled and len(words) - cut >= MIN_NAME_WORDS_AFTER_TITLE else text
    )


def is_name(text: str) -> bool:
    """Whether a piece reads as a person's or a desk's name: a few words, no digits, no URL,
    not a role alone."""
    if not text or len(text) > MAX_AUTHOR_CHARS or text.startswith(("http", "www.")):
        return False
    words = text.split()
    if len(words) > MAX_NAME_WORDS or _DIGIT.search(text):
        return False
    folded = [word.casefold().strip(".,") for word in words]
    if any(word in ROLE_NOUNS for word in folded):
        return False
    return not all(word in ROLE_WORDS for word in folded)


# A byline inside a line of other page furniture: "Sept. 14, 2023 · by Hannah Cole", "by Theo
# Marsh · 19 Sep 2022". The names run to the next separator.
_BYLINE_IN_LINE = re.compile(
    r"(?:^|[\u00b7\u2022|\u2013\u2014]\s*|\s)(?:(?:written|reported|words|text)\s+)?"
    r"(?:by|von|par|por|di|door)\s+([^\u00b7\u2022|]+)",
    re.IGNORECASE,
)
MAX_BYLINE_CHARS = 200


def byline_names(text: str, *, marked: bool) -> list[str]:
    """The names in a visible byline's text. `marked`: the page names the element a byline
    (its class), so a text of names alone is one; otherwise only a "By ..." text is."""
    text = clean_text(text)
    if not text or len(text) > MAX_BYLINE_CHARS:
        return []
    match = _BYLINE_IN_LINE.search(text)
    if match is not None:
        return author_names(match.group(1))
    return author_names(text) if marked else []


def unique_names(names: list[str]) -> list[str]:
    """Names in order, each once (case-insensitively), at most MAX_AUTHORS."""
    seen: set[str] = set()
    kept: list[str] = []
    for name in names:
        key = name.casefold()
        if key not in seen:
            seen.add(key)
            kept.append(name)
    return kept[:MAX_AUTHORS]
