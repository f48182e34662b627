"""The product as users install it: `pip install .` (not editable) into a fresh virtualenv runs
`newsharvest demo` from an empty directory, then what the demo suggests next (`search`,
`monitor --print`), `extract` on a saved page and `replay` of a small WARC, all with the local
profile's defaults and files relative to that directory. Nothing from tests/ or the checkout is
needed: the news-site simulator, the dashboard page and the Redis scripts are package data. The
tooling (benchmarks, fuzzers, hostile input, fault injectors) is not in it: it is its own
distribution, bench/, which brings `newsharvest bench` and `newsharvest fuzz` when installed
beside it; without it, or without a package one of its commands needs, a command says in one
line which extra to install."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from crawler.warc.records import gzip_member, response_record

ROOT = Path(__file__).resolve().parent.parent
INSTALL_TIMEOUT_SECONDS = 1200  # a cold pip cache downloads Scrapy, numpy, scipy, lxml...
DEMO_TIMEOUT_SECONDS = 300
COMMAND_TIMEOUT_SECONDS = 120
SAVED_PAGE = ROOT / "tests" / "fixtures" / "pages" / "dom-article.html"
ARCHIVED_URL = "http://news.example.com/2026/11/28/a-story.html"
PRODUCT_PACKAGES = ("crawler", "pipelines", "extractors", "settings")
# Module names only tooling has (tests/test_architecture.py keeps the product from naming them).
TOOLING_MODULE = re.compile(r"^(bench_\w+|bench|fuzz\w*|faulty|hostile|crawlbench|crawlrun)$")
# Every module the installed product has, by walking its packages from an empty directory.
WALK_PACKAGES = (
    "import importlib, pkgutil\n"
    f"for top in {PRODUCT_PACKAGES!r}:\n"
    "    print(top)\n"
    "    for info in pkgutil.walk_packages(importlib.import_module(top).__path__, top + '.'):\n"
    "        print(info.name)\n"
)


@dataclass(frozen=True)
class Venv:
    root: Path
    empty: Path  # a working directory with nothing in it

    def run(
        self, program: str, *args: str, timeout: float = COMMAND_TIMEOUT_SECONDS
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.root / "bin" / program), *args], cwd=self.empty, capture_output=True,
            text=True, timeout=timeout, check=False, env=_clean_env(),
        )  # fmt: skip

    def pip_install(self, *targets: str) -> None:
        result = self.run("pip", "install", "--quiet", "--disable-pip-version-check", *targets,
                          timeout=INSTALL_TIMEOUT_SECONDS)  # fmt: skip
        assert result.returncode == 0, result.stderr[-3000:]


@pytest.fixture(scope="module")
def product(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Venv]:
    """`pip install .` of the checkout into a new virtualenv."""
    base = tmp_path_factory.mktemp("packaging")
    subprocess.run([sys.executable, "-m", "venv", str(base / "venv")], check=True, timeout=120)
    (base / "empty").mkdir()
    venv = Venv(base / "venv", base / "empty")
    venv.pip_install(str(ROOT))
    yield venv


@pytest.mark.slow
@pytest.mark.timeout(INSTALL_TIMEOUT_SECONDS + DEMO_TIMEOUT_SECONDS + 60)
def test_a_non_editable_install_runs_the_demo_from_an_empty_directory(product: Venv) -> None:
    where = product.run("python", "-c", "import crawler, settings; print(crawler.__file__)")
    assert "site-packages" in where.stdout and str(ROOT) not in where.stdout, where.stderr
    scripts = [
        (".".join(path.parent.relative_to(ROOT).parts), path.stem)
        for package in ("crawler", "pipelines")
        for path in (ROOT / package).rglob("*.lua")
    ]
    loaded = product.run(
        "python", "-c",
        "import sys; from crawler.core.lua import lua_source\n"
        f"print(sum(bool(lua_source(p, n)) for p, n in {scripts!r}))",
    )  # fmt: skip
    assert loaded.stdout.strip() == str(len(scripts)) and scripts, loaded.stderr[-2000:]
    demo = product.run("newsharvest", "demo", "--quiet", timeout=DEMO_TIMEOUT_SECONDS)
    assert demo.returncode == 0, demo.stdout[-2000:] + demo.stderr[-3000:]
    articles = (product.empty / "output" / "demo-articles.jsonl").read_text().splitlines()
    reported = re.search(r"^(\d+) articles in ", demo.stdout, re.M)
    assert reported and int(reported.group(1)) == len(articles) > 0, demo.stdout[-2000:]
    assert all(json.loads(line)["text"] for line in articles)
    assert (product.empty / "output" / "demo-index.sqlite3").is_file()  # the SQLite index
    assert_the_next_commands_run_from_the_empty_directory(product, demo.stdout)


def assert_the_next_commands_run_from_the_empty_directory(product: Venv, demo_output: str) -> None:
    """What the demo suggests, then extract and replay: exit status 0, no traceback."""
    word = re.search(r"newsharvest search --index \S+ (\w+)", demo_output)
    assert word, demo_output[-2000:]
    search = product.run("newsharvest", "search", word.group(1))  # finds the demo's index
    assert_ran(search)
    assert "matching article" in search.stdout and "demo-index.sqlite3" in search.stdout
    monitor = product.run("newsharvest", "monitor", "--print")
    assert_ran(monitor)
    assert "monitoring data: .newsharvest/monitor.json" in monitor.stdout
    assert "yield/h" in monitor.stdout and ".test" in monitor.stdout
    page = product.empty / "saved-page.html"
    page.write_bytes(SAVED_PAGE.read_bytes())
    extract = product.run("newsharvest", "extract", page.name)
    assert_ran(extract)
    assert extract.stdout.startswith("# ")
    warc = product.empty / "one-page.warc.gz"
    headers = [(b"Content-Type", b"text/html; charset=utf-8")]
    warc.write_bytes(gzip_member(response_record(ARCHIVED_URL, 200, headers,
                                                 page.read_bytes()).serialize()))  # fmt: skip
    replay = product.run("newsharvest", "replay", warc.name, "--journal", "replayed.jsonl",
                         timeout=DEMO_TIMEOUT_SECONDS)  # fmt: skip
    assert_ran(replay)
    replayed = [json.loads(line) for line in (product.empty / "replayed.jsonl").open()]
    assert [item["url"] for item in replayed] == [ARCHIVED_URL] and replayed[0]["text"]
    assert (product.empty / "output" / "index.sqlite3").is_file()  # the local profile's index


def assert_ran(result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    assert "Traceback" not in result.stderr, result.stderr[-3000:]


@pytest.mark.slow
@pytest.mark.timeout(INSTALL_TIMEOUT_SECONDS + 120)
def test_the_installed_product_holds_no_benchmark_fuzzer_fault_or_hostile_module(
    product: Venv,
) -> None:
    walked = product.run("python", "-c", WALK_PACKAGES)
    modules = walked.stdout.split()
    assert walked.returncode == 0 and "crawler.cli.demo" in modules, walked.stderr[-2000:]
    assert [name for name in modules if TOOLING_MODULE.match(name.rsplit(".", 1)[-1])] == []
    files = product.run(
        "python", "-c",
        "import importlib.metadata as m\n"
        "print('\\n'.join(str(f) for f in m.distribution('newsharvest').files))\n"
        "print([d.metadata['Name'] for d in m.distributions() if 'bench' in d.metadata['Name']])",
    )  # fmt: skip
    installed = files.stdout.splitlines()
    assert files.returncode == 0 and installed[-1] == "[]", files.stderr[-2000:]
    python_files = [Path(name) for name in installed[:-1] if name.endswith(".py")]
    assert len(python_files) == len(modules)  # the walk saw every module the wheel installed
    assert [f for f in python_files if TOOLING_MODULE.match(f.stem)] == []
    assert not [f for f in python_files if f.parts[0] not in PRODUCT_PACKAGES]


@pytest.mark.slow
@pytest.mark.timeout(INSTALL_TIMEOUT_SECONDS + 120)
@pytest.mark.parametrize(
    ("command", "extra"),
    [
        (["newsharvest", "bench", "extraction", "--dataset", "x"], "bench"),
        (["newsharvest", "bench", "--help"], "bench"),
        (["newsharvest", "bench", "replay"], "bench"),
        (["newsharvest", "fuzz", "--minutes", "1"], "fuzz"),
        (["python", "-m", "crawler.newsroom", "--hostile", "--port", "0", "--dry-run"], "bench"),
    ],
)
def test_without_the_tooling_its_commands_say_in_one_line_what_to_install(
    product: Venv, command: list[str], extra: str
) -> None:
    result = product.run(*command)
    assert result.returncode == 2 and result.stdout == "", result.stdout + result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr, result.stderr
    assert f"newsharvest-bench is not installed: pip install '.[{extra}]'" in result.stderr


@pytest.mark.slow
@pytest.mark.timeout(INSTALL_TIMEOUT_SECONDS + 300)
def test_the_tooling_installed_beside_it_brings_the_commands_and_the_hostile_site(
    product: Venv,
) -> None:
    """`pip install ./bench` (what the bench and fuzz extras add, without their third-party
    packages): the installed copy, found by entry point; then uninstalled again."""
    product.pip_install(str(ROOT / "bench"))
    try:
        where = product.run("python", "-c", "import newsharvest_bench; print(newsharvest_bench)")
        assert "site-packages" in where.stdout and str(ROOT) not in where.stdout, where.stderr
        bench = product.run("newsharvest", "bench", "--help")
        assert bench.returncode == 0 and "hostile" in bench.stdout, bench.stderr[-2000:]
        fuzz = product.run("newsharvest", "fuzz", "--help")
        assert fuzz.returncode == 0 and "--minutes" in fuzz.stdout, fuzz.stderr[-2000:]
        site = product.run("python", "-m", "crawler.newsroom", "--site", "hostile", "--port", "0",
                           "--dry-run")  # fmt: skip
        assert site.returncode == 0 and "http://hostile.test/feeds/" in site.stdout, site.stderr
        # Installed without its extras: a benchmark that needs one of their packages says so.
        replay = product.run("newsharvest", "bench", "replay")
        assert replay.returncode == 2 and replay.stdout == "", replay.stdout + replay.stderr
        assert replay.stderr == ("newsharvest bench: warcio is not installed: pip install "
                                 "'.[bench]' in a newsharvest checkout\n")  # fmt: skip
    finally:
        product.run("pip", "uninstall", "--yes", "--quiet", "newsharvest-bench")


def test_the_tooling_is_versioned_with_the_product_and_pins_it() -> None:
    product = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    tooling = tomllib.loads((ROOT / "bench" / "pyproject.toml").read_text())["project"]
    assert tooling["version"] == product["version"]
    assert tooling["dependencies"] == [f"newsharvest=={product['version']}"]
    extras = product["optional-dependencies"]
    assert extras["bench"] == ["newsharvest-bench[peers] @ {root:uri}/bench"]
    assert extras["fuzz"] == ["newsharvest-bench[fuzz] @ {root:uri}/bench"]
    assert set(tooling["optional-dependencies"]) == {"peers", "fuzz"}


def _clean_env() -> dict[str, str]:
    """The user's environment without this test run's NEWSHARVEST_* overrides (nor a plain
    REDIS_URL, their old name for Redis) and without the checkout on the path: the installed
    product must stand alone."""
    return {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("NEWSHARVEST_", "PYTHON", "VIRTUAL_ENV", "SCRAPY_"))
        and name != "REDIS_URL"
    }
