"""The one environment rule: every setting `X` of a profile can be set by `NEWSHARVEST_X`.

The value is read as the type of the setting's default: booleans accept 1/0, true/false, yes/no,
on/off; numbers are parsed as int or float; lists and dicts are JSON; strings are taken as they
are. A value that does not parse raises ValueError naming the variable, so a typo stops the crawl
at start instead of running with a silent default. Each profile module calls
`apply_environment(globals())` last, so the environment overrides the profile's own values;
`scrapy crawl -s X=...` (command-line priority) still overrides the environment.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, MutableMapping
from typing import Any

PREFIX = "NEWSHARVEST_"
_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off", ""})


def environment_name(setting: str) -> str:
    """The environment variable that overrides `setting`."""
    return f"{PREFIX}{setting}"


def apply_environment(
    namespace: MutableMapping[str, Any], environ: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """Override the upper-case settings of `namespace` from the environment; returns what was
    overridden (setting -> value)."""
    environ = os.environ if environ is None else environ
    overridden: dict[str, Any] = {}
    for name, default in list(namespace.items()):
        if not name.isupper() or name.startswith("_"):
            continue
        text = environ.get(environment_name(name))
        if text is not None:
            overridden[name] = namespace[name] = parse(environment_name(name), text, default)
    return overridden


def parse(variable: str, text: str, default: Any) -> Any:
    """`text` as a value of the type of `default`."""
    try:
        if isinstance(default, bool):
            return _boolean(text)
        if isinstance(default, int):
            return int(text)
        if isinstance(default, float):
            return float(text)
        if isinstance(default, list | dict):
            value = json.loads(text)
            if not isinstance(value, type(default)):
                raise ValueError(f"expected a JSON {type(default).__name__}")
            return value
    except ValueError as error:
        raise ValueError(f"{variable}={text!r}: {error}") from None
    return text


def _boolean(text: str) -> bool:
    word = text.strip().lower()
    if word in _TRUE:
        return True
    if word in _FALSE:
        return False
    raise ValueError("expected 1/0, true/false, yes/no or on/off")


def values_of(profile: Any) -> dict[str, Any]:
    """Every setting of a profile module (its upper-case names), e.g. to build a crawler outside
    `scrapy crawl` from exactly what a crawl would see."""
    return {name: getattr(profile, name) for name in dir(profile) if name.isupper()}
