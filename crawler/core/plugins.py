"""What other installed distributions add to the product, found by entry point group.

The product knows no tooling by name: the benchmarks, the fuzzers and the simulator's hostile
cases are the `newsharvest-bench` distribution (bench/ in the checkout), which registers them
under these groups when it is installed. Without it, what would use them says in one line how
to install it.
"""

from __future__ import annotations

from collections.abc import Iterator
from importlib.metadata import EntryPoint, PackageNotFoundError, entry_points, metadata
from typing import Any

COMMANDS_GROUP = "newsharvest.commands"  # `newsharvest NAME`: a function register(subparsers)
NEWSROOM_SITES_GROUP = "newsharvest.newsroom_sites"  # a class SiteClass(seed) -> ExtraSite
PRODUCT_DISTRIBUTION = "newsharvest"
TOOLING_DISTRIBUTION = "newsharvest-bench"
CONTRIBUTOR_EXTRA = "dev"  # named only when no user-facing extra installs a package
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


def missing_module_hint(module: str) -> str | None:
    """One line naming the extra that installs `module` (a ModuleNotFoundError's name), or None
    when no extra of ours does (then it is a bug, not a choice the user made)."""
    found = extras_installing(module.partition(".")[0])
    if not found:
        return None
    extra = min(found, key=lambda extra: (extra == CONTRIBUTOR_EXTRA, extra))
    return f"{found[extra]} is not installed: {TOOLING_INSTALL.format(extra=extra)}"


def extras_installing(module: str) -> dict[str, str]:
    """Product extra -> the distribution it installs that provides `module`, by name (warcio ->
    warcio; readability -> readability-lxml: the name before a dash), following the tooling's
    extras it names."""
    from packaging.utils import canonicalize_name

    wanted = canonicalize_name(module)
    found: dict[str, str] = {}
    for extra, name in sorted(_extra_requirements(), key=lambda pair: len(pair[1])):
        if canonicalize_name(name).partition("-")[0] == wanted:
            found.setdefault(extra, name)  # the shortest name first: feedparser, not -rs
    return found


def _extra_requirements() -> Iterator[tuple[str, str]]:
    """(product extra, distribution name) for every requirement an extra adds, the tooling's
    extras followed when the tooling is installed."""
    from packaging.utils import canonicalize_name

    for extra, requirement in _requirements_by_extra(PRODUCT_DISTRIBUTION):
        yield extra, requirement.name
        if canonicalize_name(requirement.name) == TOOLING_DISTRIBUTION:
            for tooling_extra, inner in _requirements_by_extra(TOOLING_DISTRIBUTION):
                if tooling_extra in requirement.extras:
                    yield extra, inner.name


def _requirements_by_extra(distribution: str) -> Iterator[tuple[str, Any]]:
    from packaging.requirements import Requirement

    try:
        info = metadata(distribution)
    except PackageNotFoundError:
        return
    extras = info.get_all("Provides-Extra") or []
    for text in info.get_all("Requires-Dist") or []:
        requirement = Requirement(text)
        if requirement.marker is None:
            continue
        for extra in extras:
            if requirement.marker.evaluate({"extra": extra}):
                yield extra, requirement
