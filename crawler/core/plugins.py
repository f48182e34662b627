"""What other installed distributions add to the product, found by entry point group.

The product knows no tooling by name: the benchmarks, the fuzzers and the simulator's hostile
cases are the `newsharvest-bench` distribution (bench/ in the checkout), which registers them
under these groups when it is installed. Without it, what would use them says in one line how
to install it.
"""

from __future__ import annotations

from importlib.metadata import EntryPoint, entry_points

COMMANDS_GROUP = "newsharvest.commands"  # `newsharvest NAME`: a function register(subparsers)
NEWSROOM_SITES_GROUP = "newsharvest.newsroom_sites"  # a class SiteClass(seed) -> ExtraSite
TOOLING_DISTRIBUTION = "newsharvest-bench"
# From a checkout: the tooling lives in bench/ and is not on any package index (an index's
# `newsharvest-bench`, or its `newsharvest`, would be someone else's).
TOOLING_INSTALL = "pip install '.[{extra}]' in a newsharvest checkout"


def plugins(group: str) -> dict[str, EntryPoint]:
    """The entry points of `group`, by name (a name registered twice: the first found)."""
    found: dict[str, EntryPoint] = {}
    for entry in entry_points(group=group):
        found.setdefault(entry.name, entry)
    return found


def install_hint(extra: str) -> str:
    """How to install the tooling that brings the `extra` ('bench' or 'fuzz') commands."""
    return f"{TOOLING_DISTRIBUTION} is not installed: {TOOLING_INSTALL.format(extra=extra)}"
