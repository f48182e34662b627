"""The one environment rule: every setting `X` of a profile can be set by `NEWSHARVEST_X`.

The value is read as the type of the setting's default: booleans accept 1/0, true/false, yes/no,
on/off; numbers are parsed as int or float; lists and dicts are JSON; strings are taken as they
are. Each profile module calls `apply_environment(globals())` last, so the environment overrides
the profile's own values; `scrapy crawl -s X=...` (command-line priority) still overrides the
environment.

A renamed variable (settings/renamed.py: NEWSHARVEST_INDEX, a plain REDIS_URL, ...) still sets
its new setting, unless the new variable is set too; settings/check.py warns about it at start.
A value that does not parse is kept as the text it is and noted (`rejected_variables`):
settings/check.py stops `scrapy crawl` and every `newsharvest` command at start with one line
naming the variable, and a component that reads the text anyway fails on it. Raising here
instead would surface as a traceback while Scrapy imports the profile, before any command runs.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping, MutableMapping
from typing import Any

from settings.renamed import OFF_WORDS, RENAMED_SETTINGS, RENAMED_VARIABLES, Renamed

PREFIX = "NEWSHARVEST_"
_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off", ""})
# (variable, text) -> why it does not parse, for every value apply_environment could not read.
_rejected: dict[tuple[str, str], str] = {}
# Setting -> the profile's own value that the environment replaced (the first profile's, i.e.
# settings/base.py's): what a value is typed and checked by.
_replaced: dict[str, Any] = {}


def environment_name(setting: str) -> str:
    """The environment variable that overrides `setting`."""
    return f"{PREFIX}{setting}"


def renamed_variables() -> Iterator[tuple[str, Renamed]]:
    """(old variable, its rename): the renamed variables, then NEWSHARVEST_<old setting name>."""
    for renamed in RENAMED_VARIABLES:
        yield renamed.old, renamed
    for renamed in RENAMED_SETTINGS:
        yield environment_name(renamed.old), renamed


def variable_for(setting: str, environ: Mapping[str, str]) -> str | None:
    """The variable of `environ` that sets `setting`: NEWSHARVEST_<setting>, else an old name."""
    if environment_name(setting) in environ:
        return environment_name(setting)
    return next(
        (old for old, renamed in renamed_variables() if renamed.new == setting and old in environ),
        None,
    )


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
        variable = variable_for(name, environ)
        if variable is None:
            continue
        renamed = _renamed(variable)
        if renamed and renamed.enables and environ[variable].strip().lower() in OFF_WORDS:
            continue  # the old switch-and-value name, off: the new settings keep their defaults
        _replaced.setdefault(name, default)
        overridden[name] = namespace[name] = _read(variable, environ[variable], default)
        if renamed and renamed.enables and environment_name(renamed.enables) not in environ:
            _replaced.setdefault(renamed.enables, namespace.get(renamed.enables))
            overridden[renamed.enables] = namespace[renamed.enables] = True
    return overridden


def _renamed(variable: str) -> Renamed | None:
    return next((renamed for old, renamed in renamed_variables() if old == variable), None)


def _read(variable: str, text: str, default: Any) -> Any:
    try:
        return convert(text, default)
    except ValueError as error:
        _rejected[(variable, text)] = str(error)
        return text


def rejected_variables(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Variable -> why its value does not parse, for the variables of `environ` (default: the
    process environment) that a profile could not read."""
    environ = os.environ if environ is None else environ
    return {
        variable: reason
        for (variable, text), reason in _rejected.items()
        if environ.get(variable) == text
    }


def default_of(name: str, profile: Any) -> Any:
    """The value `profile` (a module) gives `name` before the environment overrides it."""
    return _replaced[name] if name in _replaced else getattr(profile, name, None)


def parse(variable: str, text: str, default: Any) -> Any:
    """`text` as a value of the type of `default`; ValueError naming `variable` otherwise."""
    try:
        return convert(text, default)
    except ValueError as error:
        raise ValueError(f"{variable}={text!r}: {error}") from None


def convert(text: str, default: Any) -> Any:
    """`text` as a value of the type of `default`; ValueError saying what was expected."""
    if isinstance(default, bool):
        return _boolean(text)
    if isinstance(default, int):
        return _number(text, int, "a whole number")
    if isinstance(default, float):
        return _number(text, float, "a number")
    if isinstance(default, list | dict):
        kind = f"a JSON {type(default).__name__}"
        try:
            value = json.loads(text)
        except ValueError:
            raise ValueError(f"expected {kind}") from None
        if not isinstance(value, type(default)):
            raise ValueError(f"expected {kind}")
        return value
    return text


def _number(text: str, kind: type, name: str) -> Any:
    try:
        return kind(text)
    except ValueError:
        raise ValueError(f"expected {name}") from None


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
