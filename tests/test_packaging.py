"""The product as users install it: `pip install .` (not editable) into a fresh virtualenv runs
`newsharvest demo` from an empty directory. Nothing from tests/ or the checkout is needed: the
news-site simulator, the dashboard page and the Redis scripts are package data."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
INSTALL_TIMEOUT_SECONDS = 1200  # a cold pip cache downloads Scrapy, numpy, scipy, lxml...
DEMO_TIMEOUT_SECONDS = 300


@pytest.mark.slow
@pytest.mark.timeout(INSTALL_TIMEOUT_SECONDS + DEMO_TIMEOUT_SECONDS + 60)
def test_a_non_editable_install_runs_the_demo_from_an_empty_directory(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    install = [str(venv / "bin" / "pip"), "install", "--quiet", "--disable-pip-version-check"]
    result = subprocess.run(
        [*install, str(ROOT)], capture_output=True, text=True, timeout=INSTALL_TIMEOUT_SECONDS,
        check=False, env=_clean_env(),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    empty = tmp_path / "empty"
    empty.mkdir()
    where = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import crawler, settings; print(crawler.__file__)"],
        cwd=empty, capture_output=True, text=True, check=True, env=_clean_env(),
    )  # fmt: skip
    assert "site-packages" in where.stdout and str(ROOT) not in where.stdout
    scripts = [
        (".".join(path.parent.relative_to(ROOT).parts), path.stem)
        for package in ("crawler", "pipelines")
        for path in (ROOT / package).rglob("*.lua")
    ]
    loaded = subprocess.run(
        [str(venv / "bin" / "python"), "-c",
         "import sys; from crawler.core.lua import lua_source\n"
         f"print(sum(bool(lua_source(p, n)) for p, n in {scripts!r}))"],
        cwd=empty, capture_output=True, text=True, check=False, env=_clean_env(),
    )  # fmt: skip
    assert loaded.stdout.strip() == str(len(scripts)) and scripts, loaded.stderr[-2000:]
    demo = subprocess.run(
        [str(venv / "bin" / "newsharvest"), "demo", "--quiet"], cwd=empty, capture_output=True,
        text=True, timeout=DEMO_TIMEOUT_SECONDS, check=False, env=_clean_env(),
    )  # fmt: skip
    assert demo.returncode == 0, demo.stdout[-2000:] + demo.stderr[-3000:]
    articles = (empty / "output" / "demo-articles.jsonl").read_text().splitlines()
    reported = re.search(r"^(\d+) articles in ", demo.stdout, re.M)
    assert reported and int(reported.group(1)) == len(articles) > 0, demo.stdout[-2000:]
    assert all(json.loads(line)["text"] for line in articles)
    assert (empty / "output" / "demo-index.sqlite3").is_file()  # the SQLite full-text index


def _clean_env() -> dict[str, str]:
    """The user's environment without this test run's NEWSHARVEST_* overrides and without the
    checkout on the path: the installed product must stand alone."""
    return {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("NEWSHARVEST_", "PYTHON", "VIRTUAL_ENV", "SCRAPY_"))
    }
