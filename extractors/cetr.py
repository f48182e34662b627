"""CETR, Content Extraction via Tag Ratios (Weninger, Hsu & Han, WWW 2010).

1. Tag ratios (Algorithm 1): with script and style elements and comments removed, each line of
   the HTML gets TR = non-tag characters / tags (tags = 1 when the line has none); empty lines are
   dropped. The page is the parsed tree written out line by line as in its source (text keeps its
   newlines; each start and end tag is one tag). A page written in one line has no histogram to
   cluster: such lines are re-broken every 65 characters, after the tag when the 65th character
   falls inside one (section 5.3). We apply that to any line longer than LONG_LINE_CHARS, so a
   page minified into a handful of lines is treated like one written in a single line.
2. Smoothing (Equations 1-3): a discrete Gaussian kernel of radius ceil(sigma), sigma the standard
   deviation of the histogram, normalised and convolved with it.
3. Clustering, three variants:
   - CETR-TM: lines with smoothed TR >= tau = lambda * sigma are content (lambda configurable,
     default 1.0);
   - CETR-KM: 1-D k-means, k = 3, over the smoothed TR; the cluster whose centroid is closest to
     0 is not content, the others are;
   - CETR (2-D): each line is the point (smoothed TR, |smoothed derivative|), the derivative
     being the mean of the next alpha = 3 smoothed ratios minus the line's own (Equation 4),
     smoothed again; k-means with k = 3 and one centroid fixed at the origin, whose cluster is
     not content.
4. The content lines, stripped of tags, are the article. A page without tags (or whose lines all
   have the same ratio) is all content, as the paper says.

Reads the tree, never modifies it. Deterministic: k-means starts from fixed seeds, not random ones.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np
from lxml import etree

from extractors.article import PARAGRAPH
from extractors.segments import (
    BLOCK_LEVEL_TAGS,
    VOID_TAGS,
    Element,
    RunKey,
    Segment,
    Selection,
    kind_of_tag,
    normalize_space,
    tag_name,
)

# Removed before computing ratios (Algorithm 1: script, remark and style; the parser drops
# comments already).
REMOVED_TAGS = frozenset({"script", "style"})
# The document-frame tags: a page whose only tags are these is "tagless".
FRAME_TAGS = frozenset({"html", "head", "body"})
REBREAK_CHARS = 65  # section 5.3
LONG_LINE_CHARS = 20 * REBREAK_CHARS  # our generalisation of "written in a single line"
DEFAULT_LAMBDA = 1.0  # CETR-TM threshold coefficient
LAMBDAS = (0.5, 1.0, 1.5)
K = 3  # clusters, for CETR-KM and CETR
ALPHA = 3  # the derivative looks this many lines ahead (Equation 4)
MAX_KMEANS_ITERATIONS = 100


class Variant(StrEnum):
    THRESHOLD = "tm"
    KMEANS = "km"
    TWO_D = "2d"


METHODS = {Variant.THRESHOLD: "cetr_tm", Variant.KMEANS: "cetr_km", Variant.TWO_D: "cetr"}


@dataclass(slots=True)
class _Piece:
    """A fragment of one run that lies on one line."""

    text: str
    run: RunKey
    owner: Element  # innermost block-level element, for the article's structure
    kind: str


@dataclass(slots=True)
class LineProfile:
    """The page as lines: non-tag characters and tags per non-empty line, and the text on it."""

    text_chars: np.ndarray
    tags: np.ndarray
    pieces: list[list[_Piece]] = field(default_factory=list)
    structural_tags: int = 0  # tags other than html/head/body

    @property
    def ratios(self) -> np.ndarray:
        """Algorithm 1: non-tag characters per tag, tags counted as 1 when a line has none."""
        return self.text_chars / np.maximum(self.tags, 1)


# An item of a physical line: a tag (its serialised length) or a text fragment.
_Item = int | _Piece


def _start_tag_length(element: Element, tag: str) -> int:
    attributes = element.attrib
    if not attributes:
        return len(tag) + 2
    return len(tag) + 2 + sum(len(name) + len(value) + 4 for name, value in attributes.items())


class _LineWriter:
    """The page written out line by line: items per line and each line's length."""

    def __init__(self, allowed: Collection[RunKey] | None) -> None:
        self.allowed = allowed
        self.lines: list[list[_Item]] = [[]]
        self.lengths = [0]

    def tag(self, length: int) -> None:
        self.lines[-1].append(length)
        self.lengths[-1] += length

    def text(self, text: str | None, run: RunKey, owner: Element, kind: str) -> None:
        if not text or (self.allowed is not None and run not in self.allowed):
            return
        if "\n" not in text:
            self.lines[-1].append(_Piece(text, run, owner, kind))
            self.lengths[-1] += len(text)
            return
        # Each fragment keeps its newline: it is the whitespace between the lines' words.
        fragments = text.split("\n")
        last = len(fragments) - 1
        for i, fragment in enumerate(fragments):
            if i:
                self.lines.append([])
                self.lengths.append(0)
            if i < last:
                fragment += "\n"
            if fragment:
                self.lines[-1].append(_Piece(fragment, run, owner, kind))
                self.lengths[-1] += len(fragment)


def _physical_lines(tree: Element, allowed: Collection[RunKey] | None) -> tuple[_LineWriter, int]:
    """The page written out as lines of items, and how many non-frame tags it has."""
    writer = _LineWriter(allowed)
    structural = 0
    root = tree.getroottree().getroot()
    # (block-level owner, kind) of the open elements; lxml's iterwalk needs no recursion, so
    # hostile nesting costs no stack.
    context: list[tuple[Element, str]] = [(root, PARAGRAPH)]
    walker = etree.iterwalk(root, events=("start", "end"))
    for event, element in walker:
        tag = tag_name(element)
        removed = not tag or tag in REMOVED_TAGS
        if event == "start":
            if removed:
                walker.skip_subtree()
                continue
            writer.tag(_start_tag_length(element, tag))
            if tag not in FRAME_TAGS:
                structural += 1
            if tag in VOID_TAGS:
                continue
            owner, kind = context[-1]
            owner = element if tag in BLOCK_LEVEL_TAGS else owner
            kind = kind_of_tag(tag, kind)
            context.append((owner, kind))
            writer.text(element.text, (element, False), owner, kind)
            continue
        if not removed and tag not in VOID_TAGS:
            context.pop()
            writer.tag(len(tag) + 3)
        if element is not root:
            writer.text(element.tail, (element, True), *context[-1])
    return writer, structural


def _rebreak(line: list[_Item], width: int = REBREAK_CHARS) -> list[list[_Item]]:
    """Cut a long line every `width` characters; a cut inside a tag moves to just after it."""
    out: list[list[_Item]] = [[]]
    column = 0
    for item in line:
        if isinstance(item, int):
            out[-1].append(item)
            column += item
            if column >= width:
                out.append([])
                column = 0
            continue
        text, start = item.text, 0  # an offset, not re-slicing: long texts stay linear
        while column + len(text) - start >= width:
            cut = start + width - column
            out[-1].append(_Piece(text[start:cut], item.run, item.owner, item.kind))
            out.append([])
            column, start = 0, cut
        if start < len(text):
            out[-1].append(_Piece(text[start:], item.run, item.owner, item.kind))
            column += len(text) - start
    return out


def line_profile(
    tree: Element,
    allowed: Collection[RunKey] | None = None,
    long_line_chars: int | None = LONG_LINE_CHARS,
) -> LineProfile:
    """Tag ratios' raw material for every non-empty line. `long_line_chars` None re-breaks only a
    page written in a single line (the paper's rule)."""
    physical, structural = _physical_lines(tree, allowed)
    non_empty = [
        (line, n) for line, n in zip(physical.lines, physical.lengths, strict=True) if line
    ]
    lines: list[list[_Item]] = []
    single_line = len(non_empty) == 1
    for line, length in non_empty:
        too_long = long_line_chars is not None and length > long_line_chars
        lines.extend(_rebreak(line) if single_line or too_long else [line])
    text_chars, tags, pieces = [], [], []
    for line in lines:
        line_pieces = [item for item in line if not isinstance(item, int)]
        n_tags = len(line) - len(line_pieces)
        n_chars = len("".join(piece.text for piece in line_pieces).strip())
        if n_tags == 0 and n_chars == 0:
            continue  # empty lines are removed
        text_chars.append(n_chars)
        tags.append(n_tags)
        pieces.append(line_pieces)
    return LineProfile(
        np.asarray(text_chars, dtype=float), np.asarray(tags, dtype=float), pieces, structural
    )


def gaussian_smooth(values: np.ndarray) -> np.ndarray:
    """Equations 1-3: convolve with a normalised Gaussian kernel of radius ceil(sigma), sigma the
    standard deviation of `values`. At the edges the kernel is renormalised over the lines that
    exist."""
    sigma = float(np.std(values)) if len(values) else 0.0
    if sigma == 0.0 or len(values) < 2:
        return values.astype(float)
    radius = min(math.ceil(sigma), len(values) - 1)
    offsets = np.arange(-radius, radius + 1, dtype=float)
    kernel = np.exp(-(offsets**2) / (2 * sigma**2))
    kernel /= kernel.sum()
    window = slice(radius, radius + len(values))  # "same" size, whatever the kernel's length
    smoothed = np.convolve(values, kernel, mode="full")[window]
    coverage = np.convolve(np.ones(len(values)), kernel, mode="full")[window]
    return smoothed / coverage


def absolute_derivatives(smoothed: np.ndarray, alpha: int = ALPHA) -> np.ndarray:
    """Equation 4, smoothed and made absolute: |G'|, G_i = mean(T'_{i+1..i+alpha}) - T'_i. The last
    lines look ahead as far as the page goes (the very last has derivative 0)."""
    n = len(smoothed)
    if n == 0:
        return smoothed.astype(float)
    cumulative = np.concatenate(([0.0], np.cumsum(smoothed)))
    index = np.arange(n)
    ahead_end = np.minimum(index + alpha, n - 1)
    ahead_count = ahead_end - index
    ahead_sum = cumulative[ahead_end + 1] - cumulative[index + 1]
    with np.errstate(invalid="ignore", divide="ignore"):
        ahead_mean = np.where(ahead_count > 0, ahead_sum / np.maximum(ahead_count, 1), smoothed)
    return np.abs(gaussian_smooth(ahead_mean - smoothed))


def threshold_content(smoothed: np.ndarray, coefficient: float = DEFAULT_LAMBDA) -> np.ndarray:
    """CETR-TM: smoothed ratio at least lambda * sigma."""
    return smoothed >= coefficient * float(np.std(smoothed))


def _kmeans(points: np.ndarray, centroids: np.ndarray, fixed_origin: bool) -> np.ndarray:
    """Lloyd's k-means from the given centroids; returns each point's cluster. With
    `fixed_origin`, centroid 0 stays at the origin."""
    labels = np.full(len(points), -1)
    for _ in range(MAX_KMEANS_ITERATIONS):
        distances = ((points[:, None, :] - centroids[None, :, :]) ** 2).sum(axis=2)
        new_labels = distances.argmin(axis=1)
        if np.array_equal(new_labels, labels):
            break
        labels = new_labels
        for cluster in range(len(centroids)):
            if fixed_origin and cluster == 0:
                continue
            members = points[labels == cluster]
            if len(members):
                centroids[cluster] = members.mean(axis=0)
    return labels


def kmeans_content(smoothed: np.ndarray) -> np.ndarray:
    """CETR-KM: k = 3 on the smoothed ratios; the cluster closest to 0 is not content. Seeds:
    the minimum, the median and the maximum."""
    points = smoothed.reshape(-1, 1).astype(float)
    seeds = np.array([[smoothed.min()], [np.median(smoothed)], [smoothed.max()]], dtype=float)
    labels = _kmeans(points, seeds, fixed_origin=False)
    centroids = np.array(
        [points[labels == c].mean() if (labels == c).any() else np.inf for c in range(K)]
    )
    non_content = int(np.abs(centroids).argmin())
    return labels != non_content


def two_d_content(smoothed: np.ndarray, derivatives: np.ndarray) -> np.ndarray:
    """CETR: k = 3 on (smoothed ratio, |smoothed derivative|) with one centroid fixed at the
    origin; its cluster is not content. Free seeds: the point farthest from the origin, then the
    point farthest from both it and the origin."""
    points = np.column_stack((smoothed, derivatives)).astype(float)
    far = int((points**2).sum(axis=1).argmax())
    from_origin = (points**2).sum(axis=1)
    from_far = ((points - points[far]) ** 2).sum(axis=1)
    second = int(np.minimum(from_origin, from_far).argmax())
    seeds = np.array([[0.0, 0.0], points[far], points[second]], dtype=float)
    labels = _kmeans(points, seeds, fixed_origin=True)
    return labels != 0


def content_lines(
    profile: LineProfile, variant: Variant = Variant.TWO_D, coefficient: float = DEFAULT_LAMBDA
) -> np.ndarray:
    """Which lines are content, by the chosen variant. All lines when the page is tagless."""
    ratios = profile.ratios
    if len(ratios) == 0:
        return np.zeros(0, dtype=bool)
    if profile.structural_tags == 0 or float(np.std(ratios)) == 0.0:
        return np.ones(len(ratios), dtype=bool)
    smoothed = gaussian_smooth(ratios)
    if variant is Variant.THRESHOLD:
        return threshold_content(smoothed, coefficient)
    if variant is Variant.KMEANS:
        return kmeans_content(smoothed)
    return two_d_content(smoothed, absolute_derivatives(smoothed))


def _segments(profile: LineProfile, selected: np.ndarray) -> list[Segment]:
    """The selected lines' text, grouped into blocks by the block-level element it sits in."""
    segments: list[Segment] = []
    parts: list[str] = []
    runs: list[RunKey] = []
    owner: Element | None = None
    kind = PARAGRAPH
    previous_line = -1

    def flush() -> None:
        text = normalize_space("".join(parts))
        if text and owner is not None:
            kept_runs = list(dict.fromkeys(runs))
            segments.append(Segment(len(segments), text, owner, kind, kept_runs, 0, text.split()))

    for line_number in np.flatnonzero(selected):
        for piece in profile.pieces[line_number]:
            if piece.owner is not owner:
                flush()
                parts, runs, owner, kind = [], [], piece.owner, piece.kind
            elif line_number > previous_line + 1:
                parts.append(" ")  # lines were dropped between the two pieces
            parts.append(piece.text)
            runs.append(piece.run)
            previous_line = line_number
    flush()
    return segments


def select(
    tree: Element,
    allowed: Collection[RunKey] | None = None,
    *,
    variant: Variant = Variant.TWO_D,
    coefficient: float = DEFAULT_LAMBDA,
    long_line_chars: int | None = LONG_LINE_CHARS,
) -> Selection | None:
    """CETR's content of the page, or None when it keeps no text."""
    profile = line_profile(tree, allowed, long_line_chars)
    segments = _segments(profile, content_lines(profile, variant, coefficient))
    return Selection(segments) if segments else None
