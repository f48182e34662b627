"""Where newsharvest keeps files: embedded state (STATE_DIR) and output (OUTPUT_DIR).

Both come from the settings (env NEWSHARVEST_STATE_DIR / NEWSHARVEST_OUTPUT_DIR), relative to
the working directory unless absolute. `state_dir` creates its directory on demand (every
embedded store needs it); `output_dir` does not (only what writes output creates it).
`journal_dir` holds the sinks' spill journals and every `.rejected.jsonl` file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def state_dir(settings: Any) -> Path:
    """Directory for embedded stores (created on demand)."""
    path = Path(settings.get("STATE_DIR"))
    path.mkdir(parents=True, exist_ok=True)
    return path


def output_dir(settings: Any) -> Path:
    """Directory for output files (the SQLite index, JSON Lines)."""
    return Path(settings.get("OUTPUT_DIR"))


def journal_dir(settings: Any) -> Path:
    """SINK_JOURNAL_DIR, else <STATE_DIR>/journal (created on demand by what writes there)."""
    configured = settings.get("SINK_JOURNAL_DIR")
    return Path(configured) if configured else state_dir(settings) / "journal"
