"""Redis scripts: `.lua` files beside the code that runs them, loaded by one helper.

A script is read once per process (importlib.resources, so it works from an installed wheel)
and registered with redis-py, whose Script object sends EVALSHA and falls back to loading the
script when Redis answers NOSCRIPT (a restarted or failed-over Redis has no script cache).
File names say what the script does: `<component>_<action>.lua`.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import Any


@cache
def lua_source(package: str, name: str) -> str:
    """The text of `<name>.lua` in the package `package` (e.g. "pipelines.dedup")."""
    return resources.files(package).joinpath(f"{name}.lua").read_text(encoding="utf-8")


def register_lua(
    client: Any, package: str, name: str, constants: Mapping[str, str] | None = None
) -> Any:
    """The script `<name>.lua` of `package`, registered with a (sync or asyncio) Redis client;
    `constants` replaces each upper-case NAME in the text by its value (a script's fixed sizes,
    set by the Python module that owns them)."""
    source = lua_source(package, name)
    for constant, value in (constants or {}).items():
        source = source.replace(constant, value)
    return client.register_script(source)
