"""The shape of the code: the import contracts, no import cycles, no dev-only imports, one
pipeline order (docs/architecture.md)."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import subprocess
import sys
import tomllib
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parent.parent
PRODUCT = ("crawler", "pipelines", "extractors", "settings")
# Packages only the development, fuzz or bench extras install: the product must import none of
# them when its modules load. crawler.cli.fuzzing is the fuzz command's own module: `newsharvest
# fuzz` imports it only after checking that the fuzz extra is installed.
DEV_ONLY = ("hypothesis", "atheris", "pytest", "yaml", "trafilatura", "readability", "importlinter")
IMPORTED_ONLY_BY_ITS_COMMAND = {"crawler.cli.fuzzing"}
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
    graph = grimp.build_graph(*PRODUCT, "tests", cache_dir=None)
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
        if name not in IMPORTED_ONLY_BY_ITS_COMMAND and not name.endswith("__main__")
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
