"""The `newsharvest` command as a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGES = ROOT / "tests" / "fixtures" / "pages"
DEMO_TIMEOUT_SECONDS = 120


def newsharvest(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "crawler.cli", *args],
        cwd=cwd, capture_output=True, text=True, timeout=DEMO_TIMEOUT_SECONDS, check=False,
    )  # fmt: skip


def test_demo_prints_the_per_domain_summary_and_writes_json_lines(tmp_path: Path) -> None:
    output = tmp_path / "demo.jsonl"
    result = newsharvest("demo", "--quiet", "--output", str(output))
    assert result.returncode == 0, result.stderr[-2000:]
    lines = result.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("domain "))
    assert lines[start].split() == ["domain", "feeds", "fetched", "articles", "NULL", "errors"]
    table = lines[start + 2 : lines.index("", start)]  # after the header and its rule
    rows = {line.split()[0]: [int(cell) for cell in line.split()[1:]] for line in table}
    assert len(rows) == 6 and all(name.endswith(".test") for name in rows if name != "total")
    articles = [json.loads(line) for line in output.read_text().splitlines()]
    feeds, fetched, total_articles, nulls, errors = rows["total"]
    assert feeds >= len(rows) - 1  # every domain's feed was polled
    assert total_articles == len(articles) > 0
    assert fetched == total_articles + nulls and errors == 0
    assert f"-> {output}" in result.stdout


def test_extract_prints_the_article_and_json() -> None:
    result = newsharvest("extract", str(PAGES / "dom-article.html"))
    assert result.returncode == 0
    assert result.stdout.startswith("# Night trains return to the valley line\n")
    assert "## Why now" in result.stdout
    as_json = json.loads(newsharvest("extract", "--json", str(PAGES / "jsonld-graph.html")).stdout)
    assert as_json["method"] == "schema_org" and len(as_json["blocks"]) == 3


def test_extract_of_a_non_article_is_null_with_exit_code_1() -> None:
    result = newsharvest("extract", str(PAGES / "video-page.html"))
    assert result.returncode == 1
    assert "NULL: no article on this page (no_content)" in result.stderr


def test_extract_of_a_missing_file_is_a_clear_error() -> None:
    result = newsharvest("extract", "/nonexistent/page.html")
    assert result.returncode == 2
    assert "cannot read /nonexistent/page.html" in result.stderr
