"""`newsharvest bench NAME`: the benchmark commands (speed and quality targets live here, not in
timed unit tests). Each benchmark is a module exposing `register(subparsers)`."""

from __future__ import annotations

import argparse
import importlib
from typing import Any

BENCH_MODULES: tuple[str, ...] = (
    "crawler.cli.bench_sinks",
    "crawler.cli.bench_polling",
    "crawler.cli.bench_extraction",
    "crawler.cli.bench_notices",
    "crawler.cli.bench_dedup",
    "crawler.cli.bench_edits",
    "crawler.cli.bench_monitoring",
    "crawler.cli.bench_pipeline",
    "crawler.cli.bench_replay",
    "crawler.cli.bench_hostile",
    "crawler.cli.bench_feeds",
    "crawler.cli.bench_politeness",
    "crawler.cli.bench_distributed",
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
