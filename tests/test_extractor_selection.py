"""Selectable extractors: names, combinations ("a then b", Lejeune and Zhu 2018), the pipeline
setting, one shared parse, and the hostile-input rules every extractor obeys."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from lxml import etree
from scrapy.exceptions import DropItem
from scrapy.utils.test import get_crawler

from extractors import EXTRACTORS, UnknownExtractorError, extract, extract_verbose
from extractors.document import parse_document
from extractors.registry import VARIANTS, extract_document, resolve, select_body, validate
from pipelines.extraction.pipeline import ExtractionPipeline

PAGES = Path(__file__).parent / "fixtures" / "pages"
URL = "https://coastgazette.test/news/harbour-bridge.html"
# A hang guard for hostile pages, far above the milliseconds a page normally costs.
HOSTILE_LIMIT_SECONDS = 5.0
NON_DEFAULT = [name for name in EXTRACTORS if name != "default"]


def article_page() -> bytes:
    return (PAGES / "seed-article.html").read_bytes()


def test_every_listed_name_and_variant_is_valid() -> None:
    assert EXTRACTORS[0] == "default"
    assert {"boilerpipe", "boilerpipe-tree", "justext", "cetr", "cetr-km", "cetr-tm"} <= set(
        EXTRACTORS
    )
    assert "boilerpipe+justext" in EXTRACTORS
    for name in (*EXTRACTORS, *VARIANTS):
        assert validate(name) == name
    depths = [name for name in VARIANTS if name.startswith("boilerpipe-tree:")]
    assert len(depths) == 5 and {"cetr-tm:0.5", "cetr-tm:1", "cetr-tm:1.5"} <= set(VARIANTS)


@pytest.mark.parametrize(
    "name",
    [
        "nope",
        "default+justext",
        "justext+default",
        "boilerpipe+",
        "+cetr",
        "cetr-tm:abc",
        "cetr-tm:-1",
        "cetr-tm:nan",
        "boilerpipe-tree:0",
        "boilerpipe-tree:2.5",
        "boilerpipe:3",
        "cetr+cetr+cetr+cetr+cetr",
    ],
)
def test_unknown_names_are_a_clear_error(name: str) -> None:
    with pytest.raises(UnknownExtractorError):
        extract(article_page(), URL, extractor=name)


@pytest.mark.parametrize("name", NON_DEFAULT)
def test_every_extractor_returns_an_article_with_metadata(name: str) -> None:
    article = extract(article_page(), URL, extractor=name)
    assert article is not None
    assert article.method == resolve(name)[-1].method or "+" in article.method
    assert article.title == "Harbour bridge reopens after two-year repair"
    assert article.language == "en"
    assert "Hundreds of people walked across the span" in article.text


def test_default_is_the_production_chain() -> None:
    assert extract(article_page(), URL, extractor="default") == extract(article_page(), URL)


def test_a_combination_runs_the_second_extractor_on_what_the_first_kept() -> None:
    tree = parse_document(article_page()).tree
    first = select_body(tree, resolve("boilerpipe"))
    combined = select_body(tree, resolve("boilerpipe+justext"))
    assert first is not None and combined is not None
    assert combined.runs <= first.runs  # b never brings back what a removed
    # b sees the page as a left it: the same as running b restricted to a's runs.
    again = resolve("justext")[0].run(tree, first.runs, None)
    assert again is not None and again.blocks == combined.blocks
    # Boilerpipe kept the "Most read" heading and the copyright line; jusText drops both.
    assert "Most read" in [text for _, text in first.blocks]
    assert "Most read" not in [text for _, text in combined.blocks]


def test_combination_method_names_both_stages() -> None:
    article = extract(article_page(), URL, extractor="boilerpipe+justext")
    assert article is not None and article.method == "boilerpipe+justext"


def test_all_extractors_share_one_parse() -> None:
    # No extractor modifies the tree: running them all on one parse gives what each gives alone.
    document = parse_document(article_page(), URL)
    before = etree.tostring(document.tree)
    shared = {name: extract_document(document, name) for name in VARIANTS}
    assert etree.tostring(document.tree) == before
    for name in VARIANTS:
        assert shared[name] == extract_verbose(article_page(), URL, extractor=name), name


def _hostile_pages() -> dict[str, bytes]:
    prose = b"A sentence of real text that goes on for a while and says something. " * 2
    deep = b"<div>" * 10_000 + b"deep text " * 50 + b"</div>" * 10_000
    # Sizes keep the suite fast; time is linear in the page, which parse_document caps at 4 MB.
    one_line = b"<html><body>" + b'<div class="x"><a href="/y">link</a> some words</div>' * 8_000
    many_lines = b"<html><body>\n" + b"<p>\n</p>\n" * 20_000 + b"</body></html>"
    wide = b"<html><body><p>" + b"x" * 3_000_000 + b"</p></body></html>"
    return {
        "empty": b"",
        "whitespace": b"   \n\t ",
        "binary": bytes(range(256)) * 64,
        "no_markup": b"just some text without any tag",
        "broken_utf8": b"<html><body><p>" + b"\xff\xfe\xfa caf\xe9 " * 200 + b"</p></body></html>",
        "deep": deep,
        "one_line": one_line,
        "many_lines": many_lines,
        "wide": wide,
        "only_tags": b"<div></div>" * 10_000,
        "tagless_body": b"<html><body>" + b"plain text line\n" * 500 + b"</body></html>",
        "deep_paragraphs": b"<html><body>" + (b"<div><p>" + prose + b"</p>") * 10_000,
        "many_classes": b"<body>"
        + b"".join(b'<span class="c%d">w</span>' % i for i in range(20_000)),
        "huge_attribute": b'<body><div class="' + b"x" * 3_000_000 + b'"><p>' + prose * 4 + b"</p>",
    }


HOSTILE = _hostile_pages()


# Every algorithm and a combination (combinations chain the same stages).
HOSTILE_EXTRACTORS = [name for name in NON_DEFAULT if "+" not in name] + ["boilerpipe+justext"]


@pytest.mark.parametrize("page_name", sorted(HOSTILE))
@pytest.mark.parametrize("name", HOSTILE_EXTRACTORS)
def test_hostile_input_never_raises_and_stays_bounded(page_name: str, name: str) -> None:
    started = time.perf_counter()
    result = extract_verbose(HOSTILE[page_name], "https://x.test/", extractor=name)
    elapsed = time.perf_counter() - started
    assert result.article is not None or result.reason
    assert elapsed < HOSTILE_LIMIT_SECONDS


def test_string_input_works_too() -> None:
    article = extract(article_page().decode("utf-8"), URL, extractor="cetr")
    assert article is not None and article.method == "cetr"


def _pipeline(extractor: str | None) -> ExtractionPipeline:
    settings = {} if extractor is None else {"EXTRACT_EXTRACTOR": extractor}
    crawler = get_crawler(settings_dict=settings)
    return ExtractionPipeline.from_crawler(crawler)


def test_pipeline_uses_the_configured_extractor() -> None:
    pipeline = _pipeline("boilerpipe-tree")
    item = {"html": article_page(), "url": URL, "domain": "coastgazette.test"}
    out = asyncio.run(pipeline.process_item(item))
    assert out["extraction_method"] == "boilerpipe_tree"
    assert pipeline.stats.get_value("extract/method/boilerpipe_tree") == 1
    assert "Most read" not in out["text"]


def test_pipeline_defaults_to_the_production_chain() -> None:
    assert _pipeline(None).extractor == "default"


def test_pipeline_null_is_dropped_with_reason_for_any_extractor() -> None:
    pipeline = _pipeline("justext")
    with pytest.raises(DropItem):
        asyncio.run(pipeline.process_item({"html": b"", "url": URL, "domain": "coastgazette.test"}))


def test_pipeline_refuses_an_unknown_extractor_at_startup() -> None:
    with pytest.raises(UnknownExtractorError):
        _pipeline("boilerpipe-treee")
