"""Value checks of settings that only the product's code can make: settings/check.py imports
nothing of ours (settings are data), so the commands that check settings at start pass these in.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any


def extractor_problem(name: Any) -> str | None:
    """The registry's own reason, at start rather than when the extraction stage is built
    (after the spider opened, the feeds were polled and the first pages were fetched)."""
    from extractors.registry import UnknownExtractorError, validate  # at call: --help loads no lxml

    try:
        validate(str(name))
    except UnknownExtractorError as error:
        return str(error)
    return None


VALUE_CHECKS: Mapping[str, Callable[[Any], str | None]] = {"EXTRACT_EXTRACTOR": extractor_problem}
