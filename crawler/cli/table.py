"""Plain-text tables for command output."""

from __future__ import annotations

from collections.abc import Sequence


def render_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """Columns padded to their widest cell; numbers right-aligned, text left-aligned."""
    cells = [[str(cell) for cell in row] for row in rows]
    widths = [
        max([len(header), *(len(row[i]) for row in cells)]) for i, header in enumerate(headers)
    ]
    numeric = [
        all(_is_number(row[i]) for row in rows) if rows else False for i in range(len(headers))
    ]

    def line(values: Sequence[str]) -> str:
        return "  ".join(
            value.rjust(width) if is_num else value.ljust(width)
            for value, width, is_num in zip(values, widths, numeric, strict=True)
        ).rstrip()

    separator = "  ".join("-" * width for width in widths)
    return "\n".join([line(list(headers)), separator, *(line(row) for row in cells)])


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
