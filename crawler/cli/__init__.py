"""The `newsharvest` command: everything that is not `scrapy crawl`.

Each command is a module here exposing `register(subparsers)`, which adds its parser and sets
`handler` (a function taking the parsed arguments and returning an exit code). Heavy imports
stay inside the handlers so that `newsharvest --help` is instant.
"""

from __future__ import annotations

import argparse
import importlib
import sys

COMMAND_MODULES = (
    "crawler.cli.demo",
    "crawler.cli.extract",
    "crawler.cli.search",
    "crawler.cli.replay",
    "crawler.cli.monitor",
    "crawler.cli.bench",
    "crawler.cli.fuzz",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="newsharvest",
        description="Continuous news harvesting: feeds -> articles -> clean text -> index.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module_name in COMMAND_MODULES:
        importlib.import_module(module_name).register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
