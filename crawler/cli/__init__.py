"""The `newsharvest` command: everything that is not `scrapy crawl`.

Each command is a module here exposing `register(subparsers)`, which adds its parser and sets
`handler` (a function taking the parsed arguments and returning an exit code). Heavy imports
stay inside the handlers so that `newsharvest --help` is instant.

`bench` and `fuzz` are tooling, not product: the `newsharvest-bench` distribution (bench/ in the
checkout) registers them under the entry point group `newsharvest.commands`. Without it they
still parse, and say in one line what to install (exit 2); so does any command that needs a
package an extra installs (`newsharvest bench replay` without warcio).

Before a command runs, `main` loads its settings (crawler/cli/profile.py: from any directory,
the local profile unless told otherwise) and checks them (settings/check.py): an unknown name,
a value out of range or a bad `--set` is one line on stderr and exit status 2. The handler finds
them in `args.settings`.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Any

from crawler.core.plugins import COMMANDS_GROUP, install_hint, missing_module_hint, plugins

COMMAND_MODULES = (
    "crawler.cli.demo",
    "crawler.cli.extract",
    "crawler.cli.search",
    "crawler.cli.replay",
    "crawler.cli.monitor",
    "crawler.cli.redis_move",
)
# Commands the tooling brings: name -> (its help line, the extra that installs it).
TOOLING_COMMANDS = {
    "bench": ("run a benchmark and print its figures", "bench"),
    "fuzz": ("fuzz extraction, feed parsing and URL handling; keep crashing inputs", "fuzz"),
}
EXIT_NOT_INSTALLED = 2
EXIT_USAGE = 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="newsharvest",
        description="Continuous news harvesting: feeds -> articles -> clean text -> index.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module_name in COMMAND_MODULES:
        importlib.import_module(module_name).register(subparsers)
    installed = plugins(COMMANDS_GROUP)
    for entry in installed.values():
        entry.load()(subparsers)
    for name, (help_line, extra) in TOOLING_COMMANDS.items():
        if name not in installed:
            _register_missing(subparsers, name, help_line, extra)
    return parser


def _register_missing(subparsers: Any, name: str, help_line: str, extra: str) -> None:
    """`newsharvest NAME ...` with whatever arguments: one line naming what to install."""
    # No option prefix: every argument (--help too) lands in `rest` instead of failing to parse.
    parser = subparsers.add_parser(
        name, help=f"{help_line} (not installed)", add_help=False, prefix_chars="\0"
    )
    parser.add_argument("rest", nargs=argparse.REMAINDER)
    message = f"newsharvest {name}: {install_hint(extra)}"
    parser.set_defaults(handler=lambda args: _not_installed(message))


def _not_installed(message: str) -> int:
    print(message, file=sys.stderr)
    return EXIT_NOT_INSTALLED


def main(argv: list[str] | None = None) -> int:
    from crawler.cli.profile import BadAssignment, command_settings

    args = build_parser().parse_args(argv)
    program = f"newsharvest {args.command}"
    try:
        args.settings = command_settings(args, program)
        return int(args.handler(args) or 0)
    except BadAssignment as error:
        print(f"{program}: {error}", file=sys.stderr)
        return EXIT_USAGE
    except ModuleNotFoundError as missing:
        hint = missing_module_hint(missing.name or "")
        if hint is None:
            raise
        print(f"{program}: {hint}", file=sys.stderr)
        return EXIT_NOT_INSTALLED
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
