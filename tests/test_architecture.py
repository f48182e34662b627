"""The shape of the code: the import contracts, no import cycles, no dev-only imports, nothing of
the checkout read by the product, one pipeline order (docs/architecture.md)."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parent.parent
PRODUCT = ("crawler", "pipelines", "extractors", "settings")
TOOLING = "newsharvest_bench"  # bench/: its own distribution
# Packages only the development, fuzz or bench extras install: the product must import none of
# them when its modules load, the tooling (found by entry point, crawler/core/plugins.py) neither.
DEV_ONLY = ("hypothesis", "atheris", "pytest", "yaml", "trafilatura", "readability", "importlinter",
            TOOLING, "tests")  # fmt: skip
# What the product must not name in code: a path into the checkout's tests (an installed product
# has none), or a module of the tooling or the tests to import by name (import-linter sees only
# import statements, not importlib or a setting's dotted path).
CHECKOUT_PATH = re.compile(r"(?:^|[/\\])(?:tests|fixtures)(?:[/\\]|$)")
UNINSTALLED_MODULE = re.compile(rf"^(?:{TOOLING}|tests)(?:\.|:|$)")
PROFILES = ("settings/local.py", "settings/distributed.py", "settings/fixture.py")


def test_the_import_contracts_hold() -> None:
    command = [str(Path(sys.executable).parent / "lint-imports"), "--no-cache"]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "0 broken" in result.stdout


def test_the_contracts_name_every_crawl_module() -> None:
    """CRAWL_CODE in the contracts is a list: a new module of crawler/ must join it."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    contract = next(c for c in config["contracts"] if c["name"].startswith("crawl code never"))
    listed = set(contract["source_modules"])
    present = {
        f"crawler.{module.name}"
        for module in pkgutil.iter_modules([str(ROOT / "crawler")])
        if module.name not in ("core", "cli")
    }
    assert listed == present


def test_no_module_of_ours_takes_part_in_an_import_cycle() -> None:
    graph = grimp.build_graph(*PRODUCT, TOOLING, "tests", cache_dir=None)
    cycles = []
    for module in sorted(graph.modules):
        for imported in graph.find_modules_directly_imported_by(module):
            chain = graph.find_shortest_chain(importer=imported, imported=module)
            if chain is not None:
                cycles.append((module, *chain))
    assert cycles == []


def test_importing_the_product_loads_no_dev_only_package() -> None:
    modules = [
        name
        for package in PRODUCT
        for name in _module_names(package)
        if not name.endswith("__main__")
    ]
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}: importlib.import_module(name)\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {DEV_ONLY!r}))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "[]"


def test_the_product_names_no_path_of_the_tests_and_no_module_of_the_tooling() -> None:
    """Every string of product code but docstrings: none is a path into tests/ or fixtures/, none
    the dotted name of a module only the checkout or the tooling has; and no path is built from
    `__file__` that climbs out of its package (into the checkout, absent once installed)."""
    found = [
        f"{path.relative_to(ROOT)}:{line}: {what}"
        for package in PRODUCT
        for path in sorted((ROOT / package).rglob("*.py"))
        for line, what in _checkout_references(ast.parse(path.read_text()))
    ]
    assert found == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('SEEDS = ROOT / "tests" / "fixtures"', 2),
        ('PAGE = Path("tests/fixtures/pages/a.html")', 1),
        ('EXTRACT = "newsharvest_bench.faulty.faulty_extract_page"', 1),
        ('HERE = Path(__file__).resolve().parents[2] / "data"', 1),
        ('UP = Path(__file__).parent.parent / "x"', 1),
        ('"""Tests read tests/fixtures."""\nSTOPLISTS = Path(__file__).parent / "stoplists"', 0),
    ],
)
def test_the_checkout_reference_check_finds_what_it_looks_for(source: str, expected: int) -> None:
    assert len(_checkout_references(ast.parse(source))) == expected


def _checkout_references(tree: ast.Module) -> list[tuple[int, str]]:
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) in docstrings:
                continue
            if CHECKOUT_PATH.search(node.value) or node.value in ("tests", "fixtures"):
                found.append((node.lineno, f"path {node.value!r}"))
            elif UNINSTALLED_MODULE.match(node.value):
                found.append((node.lineno, f"module {node.value!r}"))
        elif _climbs_from_file(node):
            found.append((node.lineno, ast.unparse(node)))
    return found


def _climbs_from_file(node: ast.AST) -> bool:
    """`<...__file__...>.parents[N]` or `<...__file__...>.parent.parent`."""
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute):
        attribute = node.value
        climbs = attribute.attr == "parents"
    elif isinstance(node, ast.Attribute) and node.attr == "parent":
        attribute = node
        climbs = isinstance(node.value, ast.Attribute) and node.value.attr == "parent"
    else:
        return False
    return climbs and any(
        isinstance(inner, ast.Name) and inner.id == "__file__" for inner in ast.walk(attribute)
    )


def test_item_pipelines_is_one_literal_of_pipeline_stages_in_the_base_settings() -> None:
    base = importlib.import_module("settings.base")
    assert all(path.startswith("pipelines.") for path in base.ITEM_PIPELINES)
    assert list(base.ITEM_PIPELINES.values()) == sorted(base.ITEM_PIPELINES.values())
    tree = ast.parse((ROOT / "settings" / "base.py").read_text())
    assigned = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign | ast.AnnAssign)
        and "ITEM_PIPELINES"
        in ast.unparse(node.targets[0] if isinstance(node, ast.Assign) else node.target)
    ]
    assert len(assigned) == 1 and isinstance(assigned[0].value, ast.Dict)
    for profile in PROFILES:
        assert "ITEM_PIPELINES" not in (ROOT / profile).read_text(), profile


def _module_names(package: str) -> list[str]:
    root = importlib.import_module(package)
    names = [package]
    for info in pkgutil.walk_packages(root.__path__, prefix=f"{package}."):
        names.append(info.name)
    return names


def _cannot_fail(test: ast.expr) -> bool:
    """`assert True`, `assert "text"`, or a comparison `x >= 0`: what holds for any count or
    duration (docs/development.md: a check bounds a measure on both sides instead)."""
    if isinstance(test, ast.Constant):
        return bool(test.value)
    if isinstance(test, ast.BoolOp):
        return any(_cannot_fail(value) for value in test.values) and isinstance(test.op, ast.Or)
    return (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.GtE)
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value == 0
    )


def test_no_test_asserts_what_cannot_fail() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)}"
        for path in sorted((ROOT / "tests").rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Assert) and _cannot_fail(node.test)
    ]
    assert not found, "\n".join(found)
