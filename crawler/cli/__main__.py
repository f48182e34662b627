"""`python -m crawler.cli` is the `newsharvest` command."""

from __future__ import annotations

import sys

from crawler.cli import main

sys.exit(main())
