"""A hold-out folder of article pages: each NAME.html with its expected body NAME.txt and its
address in urls.json, read as the extractor reads a crawled page."""

from __future__ import annotations

import json
from pathlib import Path

from extractors import extract_verbose
from extractors.article import Article
from extractors.evaluation import aggregate, score_page

PAGES = Path(__file__).resolve().parent.parent / "fixtures" / "pages"


class ArticleHoldOut:
    def __init__(self, folder: str) -> None:
        self.folder = PAGES / folder
        self.urls: dict[str, str] = json.loads(
            (self.folder / "urls.json").read_text(encoding="utf-8")
        )

    def pages(self) -> list[Path]:
        return sorted(self.folder.glob("*.html"))

    def article(self, name: str) -> Article:
        result = extract_verbose((self.folder / name).read_bytes(), self.urls[name])
        assert result.article is not None, (name, result.reason)
        return result.article

    def text(self, name: str) -> str:
        return self.article(name).text

    def expected(self, name: str) -> str:
        return (self.folder / name).with_suffix(".txt").read_text(encoding="utf-8")

    def measure(self) -> tuple[set[str], float]:
        """The pages that come out NULL, and the aggregate F1 of every page against its expected
        body (a NULL page scored empty)."""
        results = {
            page.name: extract_verbose(page.read_bytes(), self.urls[page.name])
            for page in self.pages()
        }
        lost = {name for name, result in results.items() if result.article is None}
        scores = [
            score_page(self.expected(name), result.article.text if result.article else "")
            for name, result in results.items()
        ]
        return lost, aggregate(scores).f1
