"""The jusText-style classifier (Pomikálek, PhD thesis 2011; Lejeune and Zhu, Computación y
Sistemas 2018), its stop lists and the page-language guess."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from lxml import etree

from extractors import justext, language
from extractors.document import parse_document
from extractors.justext import BAD, GOOD, NEAR_GOOD, SHORT
from extractors.segments import Segment

PAGES = Path(__file__).parent / "fixtures" / "pages"
ENGLISH_PROSE = (
    "The council said that the work on the bridge would be finished before the end of the year "
    "and that the road would then be opened again to all of the traffic that used it before."
)  # 176 characters, about half of its words stop words


def segment(text: str, *, link_chars: int = 0, kind: str = "paragraph") -> Segment:
    return Segment(0, text, etree.Element("p"), kind, [], link_chars, text.split())


def context_free(text: str, **kwargs) -> str:
    return justext.context_free_class(
        segment(text, **kwargs), language.stoplist("en"), justext.Thresholds()
    )


def test_stop_lists_for_at_least_english_spanish_german_french() -> None:
    assert {"en", "es", "de", "fr"} <= set(language.available_languages())
    samples = {"en": "the of and", "es": "el de que", "de": "der und die", "fr": "le et"}
    for code, words in samples.items():
        stop_words = language.stoplist(code)
        assert len(stop_words) > 100
        assert set(words.split()) <= stop_words
    assert language.stoplist("xx") == frozenset()


def test_context_free_classes() -> None:
    assert context_free(ENGLISH_PROSE + " " + ENGLISH_PROSE) == GOOD  # long, many stop words
    assert context_free(ENGLISH_PROSE) == NEAR_GOOD  # enough stop words, not long enough
    assert context_free("Short line with no link") == SHORT
    assert context_free("Short line with a link", link_chars=4) == BAD
    assert context_free(ENGLISH_PROSE, link_chars=60) == BAD  # link density above 0.2
    assert context_free(ENGLISH_PROSE + " \xa9 2026 Coast Gazette") == BAD  # copyright sign
    listing = "Ferry Timetable Winter Regatta September Maritime Museum Hours Weather Forecast "
    assert context_free(listing * 2) == BAD  # long, but no stop words


def test_language_independent_mode_has_no_stop_word_thresholds() -> None:
    listing = "Ferry Timetable Winter Regatta September Maritime Museum Hours Weather Forecast " * 3
    found = justext.context_free_class(segment(listing), frozenset(), justext.LANGUAGE_INDEPENDENT)
    assert found == GOOD


def classes_after_context(*initial: str, headings: tuple[int, ...] = ()) -> list[str]:
    segments = [
        segment("x" * 100, kind="heading" if i in headings else "paragraph")
        for i in range(len(initial))
    ]
    return justext.context_sensitive(segments, list(initial))


@pytest.mark.parametrize(
    ("initial", "expected"),
    [
        ((GOOD, SHORT, GOOD), [GOOD, GOOD, GOOD]),  # short between good ones
        ((BAD, SHORT, BAD), [BAD, BAD, BAD]),  # short between bad ones
        ((SHORT, GOOD), [BAD, GOOD]),  # the page's edge counts as bad
        ((GOOD, SHORT, BAD), [GOOD, BAD, BAD]),  # good on one side, bad on the other...
        ((BAD, NEAR_GOOD, SHORT, GOOD), [BAD, GOOD, GOOD, GOOD]),  # ...unless near-good between
        ((NEAR_GOOD, BAD, SHORT, GOOD), [BAD, BAD, BAD, GOOD]),  # (next to it, not beyond)
        ((BAD, NEAR_GOOD, BAD), [BAD, BAD, BAD]),  # near-good between bad ones
        ((BAD, NEAR_GOOD, GOOD), [BAD, GOOD, GOOD]),  # near-good next to good
        ((GOOD, SHORT, NEAR_GOOD, BAD), [GOOD, GOOD, GOOD, BAD]),  # short: near-goods ignored
    ],
)
def test_context_sensitive_pass(initial, expected) -> None:
    assert classes_after_context(*initial) == expected


def _walked_neighbour(classes: list[str], i: int, step: int, ignore_near_good: bool) -> str:
    """jusText's own lookup (justext/core.py, get_prev/next_neighbour): walk to the first
    settled paragraph (or near-good one, when not ignored); 'bad' past the edge."""
    i += step
    while 0 <= i < len(classes):
        if classes[i] in (GOOD, BAD) or (classes[i] == NEAR_GOOD and not ignore_near_good):
            return classes[i]
        i += step
    return BAD


def _walked_revision(initial: list[str]) -> list[str]:
    """jusText's revision of short and near-good paragraphs as jusText writes it: each lookup a
    walk, the near-good ones settled in place, in order (no headings)."""
    classes = list(initial)
    settled = {}
    for i in (i for i, found in enumerate(classes) if found == SHORT):
        before = _walked_neighbour(classes, i, -1, ignore_near_good=True)
        after = _walked_neighbour(classes, i, 1, ignore_near_good=True)
        if before == after:
            settled[i] = before
        elif (before == BAD and _walked_neighbour(classes, i, -1, False) == NEAR_GOOD) or (
            after == BAD and _walked_neighbour(classes, i, 1, False) == NEAR_GOOD
        ):
            settled[i] = GOOD
        else:
            settled[i] = BAD
    for i, found in settled.items():
        classes[i] = found
    for i in (i for i, found in enumerate(classes) if found == NEAR_GOOD):
        before = _walked_neighbour(classes, i, -1, ignore_near_good=True)
        after = _walked_neighbour(classes, i, 1, ignore_near_good=True)
        classes[i] = BAD if (before, after) == (BAD, BAD) else GOOD
    return classes


def test_the_one_pass_revision_settles_every_paragraph_as_jusText_s_walks_do() -> None:
    """The revision looks neighbours up in one pass over the page (walking each run cost the
    square of its length: 16,000 short paragraphs took minutes); it must decide as the walks
    do, on every order of classes."""
    rng = random.Random(7)
    for _ in range(3000):
        initial = [rng.choice((GOOD, BAD, NEAR_GOOD, SHORT)) for _ in range(rng.randint(0, 16))]
        assert classes_after_context(*initial) == _walked_revision(initial), initial


def test_short_heading_before_good_text_is_kept() -> None:
    assert classes_after_context(BAD, SHORT, GOOD, headings=(1,)) == [BAD, GOOD, GOOD]
    # Not a heading: the same short paragraph between bad and good is bad.
    assert classes_after_context(BAD, SHORT, GOOD) == [BAD, BAD, GOOD]


def test_justext_keeps_the_story_and_drops_the_page_furniture() -> None:
    tree = parse_document((PAGES / "seed-article.html").read_bytes()).tree
    kept = [text for _, text in justext.select(tree).blocks]
    assert any(text.startswith("The harbour bridge reopened") for text in kept)
    assert any(text.startswith("The council said the new cables") for text in kept)
    for furniture in ("Most read", "News", "About us", "Ferry timetable changes for winter"):
        assert furniture not in kept
    assert not any("newsletter" in text or "Copyright" in text for text in kept)


def test_spanish_page_uses_the_spanish_stop_list() -> None:
    tree = parse_document((PAGES / "seed-articulo-es.html").read_bytes()).tree
    segments = justext.SEGMENTER.segments(tree)
    words = [token for s in segments for token in s.tokens]
    assert language.page_language(tree, words) == "es"
    kept = [text for _, text in justext.select(tree).blocks]
    assert len(kept) == 5 and kept[1].startswith("El puerto de la ciudad")
    assert not any("Aviso legal" in text or "2026" in text for text in kept)
    # The Spanish prose has too few *English* stop words: with the wrong list nothing is good.
    assert justext.classify(segments, "en").count(GOOD) == 0


def test_declared_language_is_read_from_html_and_meta() -> None:
    def declared(markup: str) -> str | None:
        return language.declared_language(parse_document(markup).tree)

    assert declared('<html lang="de-AT"><body>x</body></html>') == "de"
    assert declared('<html xml:lang="fr"><body>x</body></html>') == "fr"
    meta = '<html><head><meta http-equiv="Content-Language" content="es"></head><body>x</body>'
    assert declared(meta) == "es"
    assert declared('<html><head><meta property="og:locale" content="pt_BR"></head></html>') == "pt"
    assert declared("<html><body>x</body></html>") is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Der Bürgermeister sagte, dass die Brücke nach der Reparatur wieder offen ist.", "de"),
        ("Le maire a dit que le pont est de nouveau ouvert après les travaux.", "fr"),
        ("El alcalde dijo que el puente está abierto de nuevo después de las obras.", "es"),
        ("The mayor said that the bridge is open again after the repair.", "en"),
        ("Pzkw trq xylo vmbb qrst.", None),
    ],
)
def test_language_is_guessed_by_stop_word_overlap(text: str, expected: str | None) -> None:
    assert language.guess_language(text.split()) == expected


def test_a_misdeclared_language_is_overridden_by_the_text() -> None:
    german = "Die Brücke ist nach der Reparatur wieder offen, sagte der Bürgermeister am Montag."
    tree = parse_document(f'<html lang="en"><body><p>{german}</p></body></html>').tree
    assert language.page_language(tree, german.split()) == "de"
    assert language.page_language(tree, german.split(), declared="en-US") == "de"


def test_stop_words_match_whatever_the_case_and_punctuation() -> None:
    assert language.normalize_word("“The") == "the"
    assert language.normalize_word("(and),") == "and"
    assert language.normalize_word("You\u2019ve") == "you've"


def test_selection_never_modifies_the_tree() -> None:
    tree = parse_document((PAGES / "seed-article.html").read_bytes()).tree
    before = etree.tostring(tree)
    justext.select(tree)
    justext.select(tree, use_stoplist=False)
    assert etree.tostring(tree) == before


def _walked_heading_before_good(segments: list, classes: list[str], i: int) -> bool:
    """jusText's own lookup (justext/core.py, is_heading_before_good): walk on from the heading
    to the first good paragraph, giving up past MAX_HEADING_DISTANCE characters."""
    distance = 0
    for j in range(i + 1, len(segments)):
        if distance > justext.MAX_HEADING_DISTANCE:
            return False
        if classes[j] == GOOD:
            return True
        distance += len(segments[j].text)
    return False


def _walked_context(segments: list, initial: list[str]) -> list[str]:
    """The context-sensitive pass with every heading lookup a walk, settled in order."""
    classes = list(initial)
    headings = [i for i, found in enumerate(segments) if found.kind == "heading"]
    for i in headings:
        if classes[i] == SHORT and _walked_heading_before_good(segments, classes, i):
            classes[i] = NEAR_GOOD
    classes = _walked_revision(classes)
    for i in headings:
        if (
            classes[i] == BAD
            and initial[i] != BAD
            and _walked_heading_before_good(segments, classes, i)
        ):
            classes[i] = GOOD
    return classes


def test_headings_before_good_text_are_found_in_one_pass_as_jusText_s_walks_find_them() -> None:
    """A walk from every heading cost up to MAX_HEADING_DISTANCE steps each (a page of one-word
    headings: 200 per heading, 12 s for 240,000); one pass must settle what the walks settle."""
    rng = random.Random(11)
    for _ in range(3000):
        size = rng.randint(0, 14)
        segments = [
            segment("x" * rng.choice((1, 5, 60, 150, 201)),
                    kind="heading" if rng.random() < 0.4 else "paragraph")
            for _ in range(size)
        ]  # fmt: skip
        initial = [rng.choice((GOOD, BAD, NEAR_GOOD, SHORT)) for _ in range(size)]
        assert justext.context_sensitive(segments, initial) == _walked_context(segments, initial), (
            initial,
            [(s.kind, len(s.text)) for s in segments],
        )


class _CountingText(str):
    """Text that counts how often its length is taken (the work of the heading lookups)."""

    reads = 0

    def __len__(self) -> int:
        _CountingText.reads += 1
        return str.__len__(self)


def test_heading_lookups_read_each_paragraph_a_bounded_number_of_times() -> None:
    def reads(n: int) -> int:
        segments = [segment("h", kind="heading") for _ in range(n)]
        for each in segments:
            each.text = _CountingText(each.text)
        _CountingText.reads = 0
        justext.context_sensitive(segments, [SHORT] * (n - 1) + [GOOD])
        return _CountingText.reads

    # A few reads per paragraph, however many there are; a walk from each one-character heading
    # read up to MAX_HEADING_DISTANCE of them.
    assert reads(1000) <= 3 * 1000
    assert reads(4000) <= 3 * 4000
