"""A case-blind search for any of a few ASCII words, asked of many short texts (class names,
file names).

A pattern compiled with IGNORECASE tries each of its words at every character of the text; an
ASCII text is lower-cased once and searched for each word in C instead, a fraction of the cost.
Text that is not ASCII still goes to the pattern: its case folding also knows the non-ASCII
letters that match ASCII ones (the Kelvin sign is a "k", the dotted capital I an "i").
"""

from __future__ import annotations

import re


class AnyWord:
    """Whether a text holds one of `words` (lower-case ASCII), in any case."""

    __slots__ = ("pattern", "words")

    def __init__(self, *words: str) -> None:
        self.words = words
        self.pattern = re.compile("|".join(map(re.escape, words)), re.IGNORECASE)

    def search(self, text: str) -> bool:
        if text.isascii():
            lowered = text.lower()
            # A loop, not any() over a generator, whose frame costs more than the searches.
            for word in self.words:  # noqa: SIM110
                if word in lowered:
                    return True
            return False
        return self.pattern.search(text) is not None
