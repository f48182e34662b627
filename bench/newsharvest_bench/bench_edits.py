"""`newsharvest bench edits`: what the near-duplicate threshold means for edited copies of real
text. Each article of a ground-truth file (the article-extraction benchmark's, or any JSON object
mapping ids to {"articleBody": text}) is indexed, then a copy with a share of its words replaced
by random words of the corpus is checked; the table gives the copies' true Jaccard similarity
(word 5-grams) and how many the index flags at DEDUP_THRESHOLD (or --threshold)."""

from __future__ import annotations

import argparse
import json
import random
import tempfile
from pathlib import Path
from typing import Any

from crawler.cli.table import render_table

EDITED_SHARES = (0.01, 0.02, 0.03, 0.05)  # words replaced in each copy
MIN_WORDS = 150  # shorter texts (briefs, stubs) are left out: a few words change them wholesale
EDIT_SEED = 7  # the same copies on every run


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("edits", help="near-duplicate verdicts on edited real text")
    parser.add_argument("--ground-truth", type=Path, required=True, help="ground-truth.json")
    parser.add_argument("--threshold", type=float, help="default: DEDUP_THRESHOLD")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from settings import base

    texts = real_texts(args.ground_truth)
    if not texts:
        print(f"no text of {MIN_WORDS}+ words in {args.ground_truth}")
        return 1
    threshold = args.threshold if args.threshold is not None else base.DEDUP_THRESHOLD
    rows = [measure(texts, share, threshold) for share in EDITED_SHARES]
    print(f"{len(texts)} texts of {MIN_WORDS}+ words; threshold {threshold}")
    header = ["words edited", "Jaccard p10", "median", "p90", "flagged"]
    print(render_table(header, rows))
    return 0


def real_texts(path: Path) -> list[str]:
    truth = json.loads(path.read_text())
    bodies = (entry.get("articleBody") or "" for entry in truth.values())
    return [text for text in bodies if len(text.split()) >= MIN_WORDS]


def measure(texts: list[str], share: float, threshold: float) -> list[str]:
    from pipelines.dedup import open_index
    from pipelines.fingerprints import true_jaccard

    rng = random.Random(EDIT_SEED)
    vocabulary = [word for text in texts for word in text.split()]
    similarities, flagged = [], 0
    with (
        tempfile.TemporaryDirectory() as scratch,
        open_index(Path(scratch) / "edits.sqlite3", threshold=threshold) as index,
    ):
        for number, text in enumerate(texts):
            copy = edited(text, share, vocabulary, rng)
            similarities.append(true_jaccard(text, copy))
            index.check_and_add(f"original-{number}", text)
            flagged += index.check_and_add(f"copy-{number}", copy) == f"original-{number}"
    similarities.sort()
    count = len(similarities)
    quantiles = (similarities[count // 10], similarities[count // 2], similarities[9 * count // 10])
    return [
        f"{share:.0%}",
        *(f"{q:.3f}" for q in quantiles),
        f"{flagged}/{count} ({flagged / count:.0%})",
    ]


def edited(text: str, share: float, vocabulary: list[str], rng: random.Random) -> str:
    words = text.split()
    for position in rng.sample(range(len(words)), max(1, round(share * len(words)))):
        words[position] = rng.choice(vocabulary)
    return " ".join(words)
