"""The `newsharvest` command as a user runs it."""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

import pytest

import crawler.cli
from tests.support.commands import newsharvest
from tests.support.corrections import copies as output_copies

ROOT = Path(__file__).resolve().parent.parent
PAGES = ROOT / "tests" / "fixtures" / "pages"


def test_demo_prints_the_per_domain_summary_and_writes_json_lines(tmp_path: Path) -> None:
    output = tmp_path / "demo.jsonl"
    state = {"NEWSHARVEST_STATE_DIR": str(tmp_path / "state")}  # embedded stores: fresh
    result = newsharvest("demo", "--quiet", "--output", str(output), env=state)
    assert result.returncode == 0, result.stderr[-2000:]
    lines = result.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("domain "))
    header = ["domain", "feeds", "fetched", "articles", "NULL", "notices", "errors"]
    assert lines[start].split() == header
    table = lines[start + 2 : lines.index("", start)]  # after the header and its rule
    rows = {line.split()[0]: [int(cell) for cell in line.split()[1:]] for line in table}
    assert len(rows) == 6 and all(name.endswith(".test") for name in rows if name != "total")
    articles = [json.loads(line) for line in output.read_text().splitlines()]
    feeds, fetched, total_articles, nulls, notices, errors = rows["total"]
    assert feeds >= len(rows) - 1  # every domain's feed was polled
    assert total_articles == len(articles) > 0
    assert fetched == total_articles + nulls and errors == 0
    assert notices == sum(article["notices_removed"] for article in articles)
    # The video pages (the notice-only one among them) are NULL at extraction already: each
    # declares a video and its text is no longer than a description (extractors.evidence).
    assert "video 3" in result.stdout and "only_notices" not in result.stdout
    assert f"-> {output}" in result.stdout
    # The syndicated copies are output flagged; the embedded index beside the output holds every
    # other article, and the demo says how to search.
    copies = output_copies(articles)  # flagged, or superseded by an original found later
    assert copies and f"duplicates: {len(copies)} copies of earlier articles" in result.stdout
    index = tmp_path / "demo-index.sqlite3"
    indexed = len(articles) - len(copies)
    summary = f"search index: {index} ({indexed} articles, {len(copies)} near-duplicates not"
    assert summary in result.stdout
    # ... as it was started (here `python -m crawler.cli`; `make demo`: .venv/bin/newsharvest).
    again = f"{Path(sys.executable).name} -m crawler.cli search --index {index} "
    assert f"try it:  {again}" in result.stdout
    check_search(index, articles)


def check_search(index: Path, articles: list[dict]) -> None:
    """`newsharvest search` over the demo's index, as a user types it."""
    titles = Counter(article["title"] for article in articles)
    # An indexed article (near-duplicates are not) whose title no syndicated copy shares.
    target = next(a for a in articles if not a["duplicate_of"] and titles[a["title"]] == 1)
    words = [w.strip(",.:'\"") for w in target["title"].split() if len(w.strip(",.:'\"")) > 3]
    result = newsharvest("search", "--index", str(index), " ".join(words))
    assert result.returncode == 0, result.stderr
    first = result.stdout.splitlines()[:3]
    assert first[0] == f" 1. {target['title']}"
    assert first[1].startswith(f"    {target['domain']} \u00b7 {target['published'][:10]}")
    assert result.stdout.rstrip().endswith("ms)") and " matching article" in result.stdout

    word = words[0]
    as_json = newsharvest("search", "--index", str(index), word, "--json", "--limit", "50")
    hits = [json.loads(line) for line in as_json.stdout.splitlines()]
    assert hits and all({"title", "domain", "published", "url", "snippet"} <= set(h) for h in hits)
    domain = target["domain"]
    only = newsharvest("search", "--index", str(index), word, "--json", "--domain", domain)
    assert {json.loads(line)["domain"] for line in only.stdout.splitlines()} == {domain}
    future = newsharvest("search", "--index", str(index), word, "--since", "2100-01-01")
    assert future.returncode == 1 and "0 matching articles" in future.stdout
    bad_date = newsharvest("search", "--index", str(index), word, "--since", "someday")
    assert bad_date.returncode == 2 and "not a date" in bad_date.stderr
    missing = newsharvest("search", "--index", str(index.with_name("none.sqlite3")), word)
    assert missing.returncode == 2 and "no index at" in missing.stderr


def test_extract_prints_the_article_and_json() -> None:
    result = newsharvest("extract", str(PAGES / "dom-article.html"))
    assert result.returncode == 0
    assert result.stdout.startswith("# Night trains return to the valley line\n")
    assert "## Why now" in result.stdout
    as_json = json.loads(newsharvest("extract", "--json", str(PAGES / "jsonld-graph.html")).stdout)
    assert as_json["method"] == "schema_org" and len(as_json["blocks"]) == 3


def test_extract_formats_markdown_json_and_text() -> None:
    # A teaser behind a paywall that is still an article: it says it is paywalled.
    page = str(ROOT / "tests" / "fixtures" / "metadata" / "haspart-paywall.html")
    markdown = newsharvest("extract", "--format", "markdown", page)
    assert markdown.returncode == 0
    assert markdown.stdout.startswith("# Wage growth cools, opening the door to cuts\n\n")
    as_json = json.loads(newsharvest("extract", "--format", "json", page).stdout)
    assert as_json["paywalled"] is True and as_json["word_count"] > 50
    assert as_json["authors"] == ["Sofia Lindgren"]
    text = newsharvest("extract", "--format", "text", page).stdout
    assert "paywalled: yes\n" in text and "published: 2024-02-22T05:00:00+00:00\n" in text
    wrong = newsharvest("extract", "--format", "html", page)
    assert wrong.returncode == 2 and "invalid choice" in wrong.stderr


def test_search_filters_by_section_keyword_and_paywall(tmp_path) -> None:
    from pipelines.sinks.records import article_record
    from pipelines.sinks.sqlite import SQLiteIndex

    index_path = tmp_path / "index.sqlite3"
    index = SQLiteIndex.open(index_path)
    base = {"domain": "paper.test", "fetched_at": "2026-11-01T00:00:00+00:00", "blocks": []}
    index.upsert([
        article_record({**base, "url": "http://paper.test/a", "title": "Harbor strike ends",
                        "text": "harbor news", "section": "Business", "keywords": ["Labor"],
                        "paywalled": True}),
        article_record({**base, "url": "http://paper.test/b", "title": "Harbor festival",
                        "text": "harbor news", "section": "Culture", "paywalled": False}),
    ])  # fmt: skip
    index.close()

    def urls(*options: str) -> list[str]:
        result = newsharvest("search", "--index", str(index_path), "--json", *options, "harbor")
        return sorted(json.loads(line)["url"] for line in result.stdout.splitlines())

    assert urls() == ["http://paper.test/a", "http://paper.test/b"]
    assert urls("--section", "business") == ["http://paper.test/a"]
    assert urls("--keyword", "labor") == ["http://paper.test/a"]
    assert urls("--paywalled") == ["http://paper.test/a"]
    assert urls("--free") == ["http://paper.test/b"]


def test_extract_of_a_non_article_is_null_with_exit_code_1() -> None:
    result = newsharvest("extract", str(PAGES / "video-page.html"))
    assert result.returncode == 1
    assert "NULL: no article on this page (too_short)" in result.stderr  # a caption, no more


def test_extract_with_another_extractor() -> None:
    page = str(PAGES / "seed-article.html")
    result = newsharvest("extract", "--json", "--extractor", "boilerpipe-tree", page)
    article = json.loads(result.stdout)
    assert article["method"] == "boilerpipe_tree"
    assert article["text"].startswith("The harbour bridge reopened to traffic")
    unknown = newsharvest("extract", "--extractor", "nope", page)
    assert unknown.returncode == 2 and "unknown extractor 'nope'" in unknown.stderr


def test_extract_of_a_missing_file_is_a_clear_error() -> None:
    result = newsharvest("extract", "/nonexistent/page.html")
    assert result.returncode == 2
    assert "cannot read /nonexistent/page.html" in result.stderr


@pytest.mark.parametrize(
    "argv",
    [
        ["bench"],
        ["bench", "--help"],
        ["bench", "extraction", "--dataset", "x", "-s", "A=1"],
        ["fuzz", "--minutes", "1", "--target", "extract"],
    ],
)
def test_bench_and_fuzz_without_the_tooling_say_what_to_install_in_one_line(
    argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """As a plain `pip install .` leaves it: no distribution registers the commands."""
    monkeypatch.setattr(crawler.cli, "plugins", lambda group: {})
    assert crawler.cli.main(argv) == 2
    out, err = capsys.readouterr()
    extra = argv[0]
    assert out == "" and err.count("\n") == 1
    assert err.startswith(f"newsharvest {extra}: newsharvest-bench is not installed")
    assert f"pip install '.[{extra}]'" in err


def test_the_tooling_commands_come_from_the_installed_tooling() -> None:
    result = newsharvest("bench", "--help")
    assert result.returncode == 0 and "extraction" in result.stdout and "hostile" in result.stdout
    assert "not installed" not in newsharvest("--help").stdout


def test_bench_polling_simulates_a_day_within_the_bounds_and_misses_nothing() -> None:
    result = newsharvest("bench", "polling", "--hours", "12")
    assert result.returncode == 0, result.stderr[-2000:]
    out = result.stdout
    published, fetched = map(int, re.search(r"published during the run: (\d+); fetched: (\d+)",
                                            out).groups())  # fmt: skip
    assert published > 50 and fetched == published
    first, judged = map(int, re.search(r"first poll after publication: (\d+)/(\d+)", out).groups())
    assert first == judged == fetched
    low, high = map(
        float, re.search(r"all feeds: min ([\d.]+) min, max ([\d.]+) min", out).groups()
    )
    assert low >= 2.0 and high <= 60.0
    # The feed that never changes costs one full fetch, then only 304s.
    row = next(line.split() for line in out.splitlines() if line.startswith("metroledger"))
    polls, new, not_modified, same = map(int, row[1:5])
    assert (new, same) == (1, 0) and not_modified == polls - 1 >= 10
    # The server that ignores conditional requests: full bodies, no parsing of unchanged ones.
    row = next(line.split() for line in out.splitlines() if line.startswith("valleytimes"))
    assert int(row[3]) == 0 and int(row[4]) > 0


def test_search_prints_no_title_that_displays_as_another(tmp_path: Path) -> None:
    """A title wrapped in a right-to-left override shows reversed on a terminal; an index
    written before extraction removed such controls (or by another tool) may still hold one."""
    from pipelines.sinks.records import article_record
    from pipelines.sinks.sqlite import SQLiteIndex

    index_path = tmp_path / "index.sqlite3"
    index = SQLiteIndex.open(index_path)
    title = "Harbour plan approved"
    index.upsert([article_record({
        "url": "https://news.example.com/a", "domain": "news.example.com",
        "title": f"\u202e{title}\u202c", "text": "The harbour plan was approved on Monday.",
        "fetched_at": "2026-11-01T06:00:00+00:00",
    })])  # fmt: skip
    index.close()
    result = newsharvest("search", "--index", str(index_path), "harbour")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == f" 1. {title}"


def test_extract_json_of_a_page_whose_json_ld_cuts_an_emoji_in_half(tmp_path: Path) -> None:
    """A lone surrogate in JSON-LD (\\ud83d) made `extract --json` die on a traceback."""
    body = "The ferry returned to its timetable on Sunday after the storm had passed. " * 8
    jsonld = json.dumps({"@type": "NewsArticle", "headline": "Emoji cut \ud83d",
                         "articleBody": body + "\ud83d"})  # fmt: skip
    page = tmp_path / "page.html"
    page.write_text(f'<html><head><script type="application/ld+json">{jsonld}</script></head>'
                    f"<body><article><p>{body}</p></article></body></html>")  # fmt: skip
    result = newsharvest("extract", "--json", str(page))
    assert result.returncode == 0, result.stderr
    article = json.loads(result.stdout)
    assert article["title"] == "Emoji cut \ufffd"
