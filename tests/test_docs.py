"""The documentation says what the code does: the settings page is generated from the settings,
links lead somewhere, papers are cited by what they are, and the README stays short."""

from __future__ import annotations

import re
from pathlib import Path

from settings import reference

ROOT = Path(__file__).resolve().parent.parent
README_MAX_LINES = 200
# Pages and files the extraction work (merged separately) brings or still has to update; remove
# them from here once it is merged.
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
WORKSPACE_CITATION = re.compile(r"seeds? 00\d|\.\./shared|shared/seeds")


def docs() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def test_the_configuration_page_is_generated_from_the_base_settings() -> None:
    page = (ROOT / "docs" / "configuration.md").read_text()
    assert page == reference.render(), "run: python -m settings.reference > docs/configuration.md"


def test_the_configuration_page_names_every_setting() -> None:
    from settings import base
    from settings.env import values_of

    page = (ROOT / "docs" / "configuration.md").read_text()
    missing = [name for name in values_of(base) if f"| `{name}` |" not in page]
    assert missing == []


def test_the_readme_is_short() -> None:
    assert len((ROOT / "README.md").read_text().splitlines()) <= README_MAX_LINES


def test_relative_links_lead_to_files() -> None:
    broken = []
    for page in docs():
        for target in LINK.findall(page.read_text()):
            if "://" in target:
                continue
            path = (page.parent / target).resolve()
            if not path.exists():
                broken.append(f"{page.name}: {target}")
    assert broken == []


def test_papers_are_cited_by_what_they_are() -> None:
    """Users have neither our workspace's seed numbers nor its ../shared folder."""
    places = [*docs(), *ROOT.glob("settings/*.py")]
    for package in ("crawler", "pipelines", "extractors"):
        places += (ROOT / package).rglob("*.py")
    found = [
        str(path.relative_to(ROOT))
        for path in places
        if WORKSPACE_CITATION.search(path.read_text())
    ]
    assert found == []
