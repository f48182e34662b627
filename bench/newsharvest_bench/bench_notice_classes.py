"""The per-class part of `newsharvest bench notices`: multilingual publishers, labelled blocks.

Fourteen publishers (two per language: English, German, French, Spanish, Italian, Portuguese,
Dutch; newsharvest_bench/publishers.py) write their notices inside the article container, at the
top, mid-article or at the tail, with several wordings per family, dates in their language,
and a wording change after their first twenty articles. Every page goes through the real
extraction chain once; the articles then reach the notice stage in publication order with the
language the extraction detected. Each extracted block is matched to its label, and the
figures are per class:

- notice classes: leaked in a publisher's first 3 articles, from its 4th on, and after the
  class's third appearance on that publisher (target 0);
- traps (corrections and other editorial notes, column intros that go on with the article's
  own sentence, attribution lines, shared quotes, tables, short paragraphs opening with
  "Read", "Photo" ...): removed (target 0);
- story blocks: wrongly removed (target <= 0.1%).
"""

from __future__ import annotations

import hashlib
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from crawler.cli.table import render_table

COLD_ARTICLES = 3  # "from a domain's 4th article on"
APPEARANCES = 3  # "0 for every class that has appeared 3 times"
MAX_WARM_LEAK_SHARE = 0.005  # target: <= 0.5% of notices leak from a domain's 4th article on
MAX_WRONG_SHARE = 0.001  # target: <= 0.1% of story blocks removed
ORDINALS = (1, 2, 3)  # leaks in a domain's 1st, 2nd and 3rd article, then from its 4th on
DIGEST_CHARS = 16  # of a verdict digest's hex, as printed
NEW_WORDING = "new wording"  # the slice of notices in a wording a publisher started late
OTHER = "other"  # extracted text that is neither story, notice nor trap (kept chrome)


class VerdictDigest:
    """Every article's verdict (status, blocks removed, NULL), hashed in arrival order: two
    runs or two backends that decide alike on every article print the same digest."""

    def __init__(self) -> None:
        self._hash = hashlib.sha256()
        self.articles = 0

    def add(self, url: str, verdict: Any) -> None:
        gone = ",".join(str(removal.index) for removal in verdict.removed)
        self._hash.update(f"{url}\t{verdict.status}\t{verdict.null_reason}\t{gone}\n".encode())
        self.articles += 1

    def hexdigest(self) -> str:
        return self._hash.hexdigest()[:DIGEST_CHARS]


def ordinal_name(n: int) -> str:
    return f"{n}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(n, 'th') }"


@dataclass(slots=True)
class LabelledEvent:
    domain: str
    url: str
    when: float
    language: str | None
    blocks: list[tuple[str, str]]
    labels: list[str]  # per block
    new_wording: list[bool]
    content_hash: str


@dataclass(slots=True)
class ClassScore:
    present_cold: int = 0
    leaked_cold: int = 0
    present_warm: int = 0
    leaked_warm: int = 0
    present_seen: int = 0  # after the class's APPEARANCES-th appearance on the publisher
    leaked_seen: int = 0
    removed: int = 0  # traps and story: removed at all
    present: int = 0


@dataclass(slots=True)
class ClassResult:
    classes: dict[str, ClassScore] = field(default_factory=dict)
    articles: int = 0
    articles_null: int = 0
    costs: list[float] = field(default_factory=list)
    examples: list[str] = field(default_factory=list)
    digest: VerdictDigest = field(default_factory=VerdictDigest)  # to compare runs, backends
    leaked_at: Counter[int] = field(default_factory=Counter)  # by ordinal (4: 4th and later)
    present_at: Counter[int] = field(default_factory=Counter)

    def of(self, name: str) -> ClassScore:
        return self.classes.setdefault(name, ClassScore())


def build_events(seed: int, articles: int) -> tuple[list[LabelledEvent], int, float]:
    """Render and extract every publisher page; label the extracted blocks."""
    from extractors import extract_verbose
    from newsharvest_bench.publishers import build_publishers, render
    from pipelines.dedup import content_hash

    started = time.perf_counter()
    events, nulls = [], 0
    for article in build_publishers(seed, articles):
        result = extract_verbose(render(article).encode(), article.url, encoding="utf-8")
        if result.article is None:
            nulls += 1
            continue
        truth = {_norm(b.text): (b.label, b.new_wording) for b in article.blocks}
        blocks = list(result.article.blocks)
        matched = [_label(_norm(text), truth) for _, text in blocks]
        events.append(
            LabelledEvent(
                domain=article.domain,
                url=article.url,
                when=article.published.timestamp(),
                language=result.article.language,
                blocks=blocks,
                labels=[label for label, _ in matched],
                new_wording=[new for _, new in matched],
                content_hash=content_hash(result.article.text),
            )
        )
    events.sort(key=lambda e: (e.when, e.url))
    return events, nulls, time.perf_counter() - started


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def _label(text: str, truth: dict[str, tuple[str, bool]]) -> tuple[str, bool]:
    """The label of an extracted block: exact text, else the true block it is part of."""
    if text in truth:
        return truth[text]
    for true_text, label in truth.items():
        if text and (text in true_text or true_text in text):
            return label
    return OTHER, False


async def run_classes(learner: Any, events: list[LabelledEvent]) -> ClassResult:
    from newsharvest_bench.publishers import NOTICE_CLASSES

    result = ClassResult()
    position: Counter[str] = Counter()
    appeared: Counter[tuple[str, str]] = Counter()
    for event in events:
        position[event.domain] += 1
        started = time.perf_counter()
        verdict = await learner.process(
            event.domain,
            event.blocks,
            identities=(event.url, event.content_hash),
            now=event.when,
            language=event.language,
        )
        result.costs.append(time.perf_counter() - started)
        result.articles += 1
        result.articles_null += verdict.is_null
        gone = {removal.index for removal in verdict.removed}
        result.digest.add(event.url, verdict)
        ordinal = min(position[event.domain], COLD_ARTICLES + 1)
        if verdict.is_null:
            gone = set(range(len(event.blocks)))
        cold = position[event.domain] <= COLD_ARTICLES
        for i, label in enumerate(event.labels):
            removed = i in gone
            if label in NOTICE_CLASSES:
                seen = appeared[(event.domain, label)] >= APPEARANCES
                _score_notice(result.of(label), removed, cold, seen)
                result.present_at[ordinal] += 1
                result.leaked_at[ordinal] += not removed
                if event.new_wording[i]:
                    _score_notice(result.of(NEW_WORDING), removed, cold, seen)
            else:
                score = result.of(label)
                score.present += 1
                score.removed += removed
                if removed and label != OTHER and len(result.examples) < 8:
                    result.examples.append(f"{label}: {event.blocks[i][1][:110]}")
        for label in set(event.labels) & set(NOTICE_CLASSES):
            appeared[(event.domain, label)] += 1
    return result


def _score_notice(score: ClassScore, removed: bool, cold: bool, seen: bool) -> None:
    score.present += 1
    if cold:
        score.present_cold += 1
        score.leaked_cold += not removed
    else:
        score.present_warm += 1
        score.leaked_warm += not removed
    if seen:
        score.present_seen += 1
        score.leaked_seen += not removed


CLASS_HEADERS = (
    "class",
    "what",
    "in",
    f"leaked 1-{COLD_ARTICLES}",
    f"leaked {COLD_ARTICLES + 1}+",
    f"leaked after {APPEARANCES} seen",
    "removed",
)


def class_table(result: ClassResult) -> str:
    from newsharvest_bench.publishers import NOTICE_CLASSES, STORY, TRAP_CLASSES

    rows: list[list[object]] = []
    for name in (*NOTICE_CLASSES, NEW_WORDING):
        s = result.of(name)
        what = "notice" if name != NEW_WORDING else "notice slice"
        rows.append(
            [
                name,
                what,
                s.present,
                f"{s.leaked_cold}/{s.present_cold}",
                f"{s.leaked_warm}/{s.present_warm}",
                f"{s.leaked_seen}/{s.present_seen}",
                "",
            ]
        )
    for name in (*TRAP_CLASSES, STORY, OTHER):
        s = result.of(name)
        what = "trap" if name in TRAP_CLASSES else "story" if name == STORY else "chrome"
        rows.append([name, what, s.present, "", "", "", f"{s.removed}/{s.present}"])
    return render_table(CLASS_HEADERS, rows)


def ordinal_line(result: ClassResult) -> str:
    """Notices leaked by the article's ordinal on its publisher: 1st, 2nd, 3rd, 4th on."""
    parts = [f"{ordinal_name(n)} {result.leaked_at[n]}/{result.present_at[n]}" for n in ORDINALS]
    warm = COLD_ARTICLES + 1
    share = result.leaked_at[warm] / max(1, result.present_at[warm])
    parts.append(f"{warm}+ {result.leaked_at[warm]}/{result.present_at[warm]} ({100 * share:.2f}%)")
    return "notices leaked, by the article's ordinal on its publisher: " + ", ".join(parts)


def class_checks(backend: str, result: ClassResult) -> list[tuple[str, bool]]:
    from newsharvest_bench.publishers import NOTICE_CLASSES, STORY, TRAP_CLASSES

    notices = [result.of(name) for name in NOTICE_CLASSES]
    warm_in = sum(s.present_warm for s in notices)
    warm_leaked = sum(s.leaked_warm for s in notices)
    leaky = [name for name in NOTICE_CLASSES if result.of(name).leaked_seen]
    traps = sum(result.of(name).removed for name in TRAP_CLASSES)
    story = result.of(STORY)
    wrong = story.removed / max(1, story.present)
    warm = warm_leaked / max(1, warm_in)
    return [
        (
            f"publishers: notices leaked from article {COLD_ARTICLES + 1} on <= "
            f"{100 * MAX_WARM_LEAK_SHARE:.1f}% ({warm_leaked}/{warm_in} = {100 * warm:.2f}%)",
            warm <= MAX_WARM_LEAK_SHARE,
        ),
        (
            f"publishers: 0 leaks once a class appeared {APPEARANCES} times"
            + (f" (leaking: {', '.join(leaky)})" if leaky else ""),
            not leaky,
        ),
        (f"publishers: traps removed 0 ({traps})", traps == 0),
        (
            f"publishers: story blocks wrongly removed <= {100 * MAX_WRONG_SHARE:.1f}% "
            f"({story.removed}/{story.present})",
            wrong <= MAX_WRONG_SHARE,
        ),
        (f"publishers: articles made NULL 0 ({result.articles_null})", result.articles_null == 0),
    ]
