"""Every extractor by name, and combinations of them: `extract(html, url, extractor=NAME)`.

Names:
- `default`: the production chain (schema.org articleBody -> DOM heuristics -> fallback cascade ->
  NULL, NewsFeed);
- `boilerpipe`: the Boilerpipe-style block classifier (Kohlschütter et al., WSDM 2010);
- `boilerpipe-tree`: Boilerpipe + the HTML-tree filter of Viveros-Jiménez et al., grandparents;
  `boilerpipe-tree:N` groups by the N-th ancestor instead (N = 1..5 measured by Viveros-Jiménez et
  al.);
- `justext`: the jusText-style classifier with the page's stop list; `justext-nostoplist` its
  language-independent mode (Lejeune & Zhu's JTA and JTS);
- `cetr` (2-D model), `cetr-km` (1-D k-means), `cetr-tm` (threshold; `cetr-tm:L` sets lambda):
  Weninger et al., CETR, WWW 2010; `cetr-singleline` is `cetr` re-breaking only pages written in a
  single line, as the paper does (the others also re-break any very long line, see
  `extractors.cetr`).
- `a+b`, `a+b+c`: a combination, "a then b" (Lejeune & Zhu): b runs on the page as a left it, i.e.
  on the text a kept. The production chain cannot be combined: its schema.org stage yields text,
  not parts of the page.

Every extractor, the production chain included, takes the parsed tree and never modifies it, so
all of them can share one parse (`extract_document`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass

from extractors import boilerpipe, cetr, justext, treefilter
from extractors.article import Extraction
from extractors.chain import NULL_NO_CONTENT, finish_article, guarded, run_chain
from extractors.document import Document, DocumentError, parse_document
from extractors.jsonld import jsonld_objects
from extractors.metadata import extract_metadata
from extractors.segments import Element, RunKey, Selection

DEFAULT = "default"
COMBINE = "+"
PARAMETER = ":"
MAX_TREE_DEPTH = 10  # deeper ancestors are the page's frame on any real page
MAX_STAGES = 4  # a combination longer than this is a typo, not an experiment

# run(tree, allowed runs or None, page language or None) -> Selection or None
SelectFn = Callable[[Element, Collection[RunKey] | None, str | None], Selection | None]


class UnknownExtractorError(ValueError):
    """An extractor name that is not in the registry (a configuration error)."""


@dataclass(frozen=True, slots=True)
class Stage:
    method: str  # the Article's `method`
    run: SelectFn


def _boilerpipe(parameter: str | None) -> Stage:
    _no_parameter("boilerpipe", parameter)
    return Stage(boilerpipe.METHOD, lambda tree, allowed, _: boilerpipe.select(tree, allowed))


def _boilerpipe_tree(parameter: str | None) -> Stage:
    depth = treefilter.DEFAULT_DEPTH if parameter is None else _int(parameter, "boilerpipe-tree")
    if not 1 <= depth <= MAX_TREE_DEPTH:
        raise UnknownExtractorError(f"boilerpipe-tree depth must be 1..{MAX_TREE_DEPTH}")
    return Stage(
        treefilter.METHOD, lambda tree, allowed, _: treefilter.select(tree, depth, allowed)
    )


def _justext(parameter: str | None) -> Stage:
    _no_parameter("justext", parameter)
    return Stage(
        justext.METHOD,
        lambda tree, allowed, language: justext.select(tree, allowed, language=language),
    )


def _justext_nostoplist(parameter: str | None) -> Stage:
    _no_parameter("justext-nostoplist", parameter)
    return Stage(
        f"{justext.METHOD}_nostoplist",
        lambda tree, allowed, _: justext.select(tree, allowed, use_stoplist=False),
    )


def _cetr(
    base: str, variant: cetr.Variant, long_line_chars: int | None = cetr.LONG_LINE_CHARS
) -> Callable[[str | None], Stage]:
    def make(parameter: str | None) -> Stage:
        if variant is not cetr.Variant.THRESHOLD:
            _no_parameter(base, parameter)
        coefficient = cetr.DEFAULT_LAMBDA if parameter is None else _float(parameter, base)

        def run(
            tree: Element, allowed: Collection[RunKey] | None, _: str | None
        ) -> Selection | None:
            return cetr.select(
                tree,
                allowed,
                variant=variant,
                coefficient=coefficient,
                long_line_chars=long_line_chars,
            )

        return Stage(cetr.METHODS[variant], run)

    return make


_FACTORIES: dict[str, Callable[[str | None], Stage]] = {
    "boilerpipe": _boilerpipe,
    "boilerpipe-tree": _boilerpipe_tree,
    "justext": _justext,
    "justext-nostoplist": _justext_nostoplist,
    "cetr": _cetr("cetr", cetr.Variant.TWO_D),
    "cetr-km": _cetr("cetr-km", cetr.Variant.KMEANS),
    "cetr-tm": _cetr("cetr-tm", cetr.Variant.THRESHOLD),
    # The paper's own re-break rule: only a page written in a single line is re-broken.
    "cetr-singleline": _cetr("cetr-singleline", cetr.Variant.TWO_D, long_line_chars=None),
}

# The extractors users pick from (any `a+b` combination of the non-default ones works too).
EXTRACTORS: tuple[str, ...] = (
    DEFAULT,
    *_FACTORIES,
    "boilerpipe+justext",
    "boilerpipe+justext-nostoplist",
    "justext+boilerpipe",
    "justext-nostoplist+boilerpipe",
    "boilerpipe-tree+justext",
    "justext+boilerpipe-tree",
    "cetr+boilerpipe-tree",
)
# Every row of the comparison (`newsharvest bench extraction --extractor all`): each extractor,
# the variants the papers measured (tree depth 1-5, CETR lambda 0.5/1.0/1.5) and combinations.
VARIANTS: tuple[str, ...] = (
    DEFAULT,
    "boilerpipe",
    *(f"boilerpipe-tree:{depth}" for depth in treefilter.DEPTHS),
    "justext",
    "justext-nostoplist",
    "cetr",
    "cetr-singleline",
    "cetr-km",
    *(f"cetr-tm:{coefficient:g}" for coefficient in cetr.LAMBDAS),
    *(name for name in EXTRACTORS if COMBINE in name),
)


def _no_parameter(name: str, parameter: str | None) -> None:
    if parameter is not None:
        raise UnknownExtractorError(f"{name} takes no parameter (got {parameter!r})")


def _int(value: str, name: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise UnknownExtractorError(f"{name}: {value!r} is not a whole number") from None


def _float(value: str, name: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise UnknownExtractorError(f"{name}: {value!r} is not a number") from None
    if not 0.0 <= number < float("inf"):
        raise UnknownExtractorError(f"{name}: {value!r} must be a finite number >= 0")
    return number


def resolve(name: str) -> list[Stage]:
    """The stages of a non-default extractor name, in order. Raises UnknownExtractorError."""
    parts = [part.strip() for part in name.split(COMBINE)]
    if not all(parts) or len(parts) > MAX_STAGES:
        raise UnknownExtractorError(f"malformed extractor name {name!r}")
    stages = []
    for part in parts:
        base, _, parameter = part.partition(PARAMETER)
        if base == DEFAULT:
            raise UnknownExtractorError(
                f"{name!r}: the default chain cannot be part of a combination"
            )
        factory = _FACTORIES.get(base)
        if factory is None:
            known = ", ".join(EXTRACTORS)
            raise UnknownExtractorError(f"unknown extractor {part!r}; known: {known}")
        stages.append(factory(parameter if PARAMETER in part else None))
    return stages


def validate(name: str) -> str:
    """`name` itself when it names an extractor; raises UnknownExtractorError otherwise."""
    if name != DEFAULT:
        resolve(name)
    return name


def method_of(stages: list[Stage]) -> str:
    return COMBINE.join(stage.method for stage in stages)


def select_body(
    tree: Element, stages: list[Stage], language: str | None = None
) -> Selection | None:
    """Run the stages in order, each on what the previous one kept."""
    allowed: Collection[RunKey] | None = None
    selection = None
    for stage in stages:
        selection = stage.run(tree, allowed, language)
        if selection is None:
            return None
        allowed = selection.runs
    return selection


def extract_document(document: Document, extractor: str = DEFAULT) -> Extraction:
    """Extract from an already parsed page (every extractor can share one parse: none modifies
    the tree). Never raises on bad input; raises UnknownExtractorError for an unknown name."""
    if extractor == DEFAULT:
        return guarded(lambda: run_chain(document), document.url)
    stages = resolve(extractor)
    return guarded(lambda: _run_stages(document, stages), document.url)


def extract_verbose(
    page: str | bytes,
    url: str | None = None,
    *,
    encoding: str | None = None,
    extractor: str = DEFAULT,
) -> Extraction:
    """Extract the article of `page` with the named extractor, or NULL with the reason."""
    validate(extractor)  # a configuration error is raised even for a page that does not parse
    try:
        document = parse_document(page, url, encoding=encoding)
    except DocumentError as error:
        return Extraction(article=None, reason=error.reason)
    return extract_document(document, extractor)


def _run_stages(document: Document, stages: list[Stage]) -> Extraction:
    tree = document.tree
    metadata = extract_metadata(tree, document.url, jsonld_objects(tree))
    selection = select_body(tree, stages, metadata.language)
    if selection is None:
        return Extraction(article=None, reason=NULL_NO_CONTENT)
    return finish_article(selection.blocks, method_of(stages), metadata)
