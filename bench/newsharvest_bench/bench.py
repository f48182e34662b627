"""`newsharvest bench NAME`: the benchmark commands (speed and quality targets live here, not in
timed unit tests). Each benchmark is a module exposing `register(subparsers)`."""

from __future__ import annotations

import argparse
import importlib
from typing import Any

BENCH_MODULES: tuple[str, ...] = (
    "newsharvest_bench.bench_sinks",
    "newsharvest_bench.bench_polling",
    "newsharvest_bench.bench_extraction",
    "newsharvest_bench.bench_notices",
    "newsharvest_bench.bench_dedup",
    "newsharvest_bench.bench_syndication",
    "newsharvest_bench.bench_edits",
    "newsharvest_bench.bench_monitoring",
    "newsharvest_bench.bench_pipeline",
    "newsharvest_bench.bench_replay",
    "newsharvest_bench.bench_hostile",
    "newsharvest_bench.bench_hostile_pages",
    "newsharvest_bench.bench_feeds",
    "newsharvest_bench.bench_politeness",
    "newsharvest_bench.bench_distributed",
    "newsharvest_bench.bench_metadata",
)


def register(subparsers: Any) -> None:
    if not BENCH_MODULES:
        return  # no benchmark yet: no empty command
    parser = subparsers.add_parser("bench", help="run a benchmark and print its figures")
    bench_subparsers = parser.add_subparsers(dest="benchmark", metavar="BENCHMARK", required=True)
    for module_name in BENCH_MODULES:
        importlib.import_module(module_name).register(bench_subparsers)
    parser.set_defaults(handler=lambda args: _missing(parser, args))


def _missing(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    parser.print_help()
    return 2
