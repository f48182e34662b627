"""docs/configuration.md, generated from settings/base.py: every setting, its default, its
environment variable and the comment beside it.

    python -m settings.reference > docs/configuration.md

rewrites the page; tests/test_docs.py fails when the page and the settings disagree."""

from __future__ import annotations

import ast
import re
from pathlib import Path

BASE = Path(__file__).with_name("base.py")
SECTION = re.compile(r"^# --- (.+?) -+$")
TABLE_HEADER = "| setting | default | environment | why |\n| --- | --- | --- | --- |"
MAX_DEFAULT_CHARS = 60  # longer defaults (dicts, lists) are shown cut, the file has them whole

HEADER = """# Configuration

Every setting of `settings/base.py`, the one source of defaults, with its default and the reason
beside it (this page is generated from that file: `python -m settings.reference >
docs/configuration.md`; `make test` fails when they disagree). Set one with
`scrapy crawl ... -s NAME=VALUE`, in a profile (`settings/local.py`, `settings/distributed.py`,
`settings/fixture.py`), or with the environment variable `NEWSHARVEST_<NAME>` (typed like the
default: 1/0 or true/false for switches, JSON for lists and dicts). `-s` wins over the
environment, which wins over the profile. No setting reads another environment variable: Redis is
`NEWSHARVEST_REDIS_URL` (a plain `REDIS_URL`, its old name, is read with a deprecation warning
until {removed}), the SQLite index `NEWSHARVEST_SINK_SQLITE_PATH`, PostgreSQL
`NEWSHARVEST_SINK_POSTGRES_URL`.

Naming: durations end in `_SECONDS` (or `_DAYS`), sizes in `_BYTES` (or `_MB`); a component's
switch is `<COMPONENT>_ENABLED`, except a sink whose one required value is an address
(`SINK_POSTGRES_URL`, `HARVEST_JOURNAL_PATH`), which is on when that is set.
Scrapy's own settings (`ROBOTSTXT_OBEY`, `DOWNLOAD_DELAY`, `DOWNLOAD_TIMEOUT`, ...) keep Scrapy's
names.

## Checked at start

`scrapy crawl` and every `newsharvest` command check the settings before anything starts
(`settings/check.py`): each finding is one line on stderr, and any error exits with status 2.

- A name under one of our prefixes (below) that nothing reads, from `-s` (`--set` for
  `newsharvest replay`), the profile module or a `NEWSHARVEST_*` variable: the line names it,
  says where it came from and gives the closest known names.
- A value of ours of the wrong type (`-s DEDUP_ENABLED=maybe`), or outside the range the code
  assumes: shares, rates and p-values within 0..1 (`DEDUP_THRESHOLD` 0.3..0.98, the range its
  LSH bands are built for), ports 0..65535, durations, sizes and counts never negative (at least
  1 where the code needs one), a minimum no larger than its maximum, and the words some settings
  take (`HARVEST_STATE`: "" or "memory"; `SINK_START_POLICY`: "fail" or "journal";
  `REPLAY_READER`: "fastwarc" or "warcio"). A `NEWSHARVEST_*` value that does not parse as its
  setting's type is one such line too.
- Settings that are not a newsharvest profile at all (a `scrapy.cfg` of another project).

Our prefixes: {namespaces}.

Examples of these lines, and of the warnings, are in `docs/upgrading.md`.
Scrapy's own settings, those of a scrapy-redis component the settings configure, and every name
outside our prefixes pass untouched. A renamed setting or variable keeps working for its
deprecation period, with one warning naming the new name: `docs/upgrading.md` lists them.
"""


def header() -> str:
    from settings.check import NAMESPACES
    from settings.renamed import REFUSED_FROM

    prefixes = ", ".join(f"`{prefix}`" for prefix in NAMESPACES)
    return HEADER.format(namespaces=prefixes, removed=REFUSED_FROM)


def render() -> str:
    source = BASE.read_text()
    lines = source.split("\n")
    sections = _sections(lines)
    out = [header()]
    current = None
    for node in ast.parse(source).body:
        target = _target(node)
        if target is None:
            continue
        section = _section_of(sections, node.lineno)
        if section != current:
            current = section
            out += [
                f"\n## {section}\n",
                "| setting | default | environment | why |",
                "| --- | --- | --- | --- |",
            ]
        default = _default(source, node)
        why = _comment(lines, node)
        env = f"`NEWSHARVEST_{target}`" if "[" not in target else ""
        out.append(f"| `{target}` | `{default}` | {env} | {why} |")
    return "\n".join(out) + "\n"


def _sections(lines: list[str]) -> list[tuple[int, str]]:
    return [(number, match.group(1)) for number, line in enumerate(lines, 1)
            if (match := SECTION.match(line))]  # fmt: skip


def _section_of(sections: list[tuple[int, str]], lineno: int) -> str:
    return next((name for number, name in reversed(sections) if number < lineno), "General")


def _target(node: ast.stmt) -> str | None:
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        name = ast.unparse(node.targets[0])
    elif isinstance(node, ast.AnnAssign):
        name = ast.unparse(node.target)
    else:
        return None
    return name if name.split("[")[0].isupper() else None


def _default(source: str, node: ast.stmt) -> str:
    value = ast.get_source_segment(source, node.value) or ""  # type: ignore[attr-defined]
    text = " ".join(value.split()).replace("|", "\\|").replace("`", "'")
    return text if len(text) <= MAX_DEFAULT_CHARS else text[: MAX_DEFAULT_CHARS - 3] + "..."


def _comment(lines: list[str], node: ast.stmt) -> str:
    """The comment on the setting's last line, else the comment lines right above it."""
    last = lines[node.end_lineno - 1]  # type: ignore[operator]
    inline = _inline_comment(last)
    parts = [inline] if inline else []
    number = node.lineno - 2
    above: list[str] = []
    while number >= 0 and lines[number].startswith("# ") and not SECTION.match(lines[number]):
        above.insert(0, lines[number][2:].strip())
        number -= 1
    text = " ".join([*above, *parts])
    return text.replace("|", "\\|")


def _inline_comment(line: str) -> str:
    """The `# ...` part of a code line (outside string literals)."""
    quote = None
    for index, char in enumerate(line):
        if quote:
            quote = None if char == quote else quote
        elif char in "\"'":
            quote = char
        elif char == "#":
            return line[index + 1 :].strip()
    return ""


if __name__ == "__main__":
    print(render(), end="")
