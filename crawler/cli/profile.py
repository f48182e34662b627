"""The settings a `newsharvest` command runs with, checked before it runs.

The rule `scrapy crawl` follows, and one more step so that an installed product works from any
directory: SCRAPY_SETTINGS_MODULE when set, else the scrapy.cfg of the working directory or one
above it (a checkout), else the local profile. STATE_DIR and OUTPUT_DIR are then relative to the
working directory, as in a crawl. A command may name its own profile (`demo`: the fixture's) with
`parser.set_defaults(settings_profile=...)`.
The chosen module is put in the environment, so that processes a command starts use it too.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

DEFAULT_PROFILE = "settings.local"  # the scrapy.cfg default of a checkout
SET_SOURCE = "--set"  # how the messages name a command's NAME=VALUE options


class BadAssignment(ValueError):
    """A --set that is not NAME=VALUE."""


def project_settings(profile: str | None = None) -> Any:
    """The settings of `profile`, else of the project, else of the local profile."""
    from scrapy.utils.conf import closest_scrapy_cfg
    from scrapy.utils.project import ENVVAR, get_project_settings

    if profile:
        os.environ[ENVVAR] = profile
    elif ENVVAR not in os.environ and not closest_scrapy_cfg():
        os.environ[ENVVAR] = DEFAULT_PROFILE
    return get_project_settings()


def command_settings(args: argparse.Namespace, program: str) -> Any:
    """The command's settings (its `profile`, its `--set NAME=VALUE` options at command-line
    priority), checked: one line per problem on stderr and exit status 2 (settings/check.py)."""
    from crawler.core.setting_values import VALUE_CHECKS
    from settings.check import enforce

    settings = project_settings(getattr(args, "settings_profile", None))
    for assignment in getattr(args, "set", None) or ():
        name, equals, value = assignment.partition("=")
        if not equals or not name.strip():
            raise BadAssignment(f"--set wants NAME=VALUE, got {assignment!r}")
        settings.set(name.strip(), value, priority="cmdline")
    enforce(settings, program, cmdline=SET_SOURCE, value_checks=VALUE_CHECKS)
    return settings
