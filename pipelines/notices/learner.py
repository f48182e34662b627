"""Learn, per publisher domain, the blocks that recur across its articles, and remove them.

Pure logic (no Scrapy): `NoticeLearner.process(domain, blocks, identities=..., language=...)`
turns an article's (kind, text) blocks into a `Verdict` — the blocks to keep, those removed and
why, and NULL (`only_notices`) when nothing that could be an article is left. Evidence lives in
a `NoticeStore` (backends.py): Redis shared by all workers, or an embedded SQLite file. The
language data (dates, priors, editorial notes in seven languages) is in lexicon.py.

How a block becomes a notice:
  1. It is normalised (Unicode NFKC, case, punctuation and whitespace folded; numbers, URLs,
     month and weekday names of seven languages and one-letter tokens replaced or dropped, so
     "(c) 2025 ... Section A" and "(c) 2026 ... Section B" agree). A templated line — a fixed
     part, a separator and a headline- or name-shaped slot ("Related: <headline>", "Photo:
     <name>/<agency>") — is folded to its fixed part and a slot token. Signatures: the *full*
     one; a *prefix* and a *suffix* (first and last 8 tokens) that recognise copies; and for
     short blocks of several segments (sentences, label and slot), their first and last
     segment tagged with the half of the article they sit in.
  2. The store counts, with exponential time decay, in how many distinct articles of the domain
     each signature occurs. Distinct means: not an article already seen (same canonical URL or
     same text) and not a near copy of one (most of its prose seen before, in too few articles
     to be notices), so re-crawls and syndicated copies never turn a story into "notices".
  3. A signature is *hot* when its count reaches `min_articles` AND `min_share` of the domain's
     recent articles. A block is a notice when its full signature is hot, or when hot segments
     (a family's shared sentence or label) cover at least half of it: its varying part is no
     longer than its fixed part.
Lexical priors (copyright, print edition, newsletter, subscription, follow-us, licence, related
and credit lines, in the article's language and English): during the cold start (fewer than
`prior_articles` distinct articles) they remove alone — rights, print, appeal, follow-us and
licence lines only before the story starts or after it ends; after it, with evidence: the block
fits a learned template, the domain has such lines, it stands in a run of known notices at the
edge, or (a rights line) it has two independent cues. `prior_articles` 0: no priors at all.
Variants: a notice-sized block that reads as a prior's kind in any language of the lexicon goes
from its first sighting when the domain has that *type* (the kind, in the same half of its
articles, in enough of them: any wording in any language counts), where the kind may stand.
Never removed: editorial notes (corrections, clarifications, editor's notes, updates, in seven
languages), attribution lines, short bylines and datelines leading the body, tables.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import math
import re
import time
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Protocol

from pipelines.notices import lexicon
from settings import base as defaults

if TYPE_CHECKING:
    from extractors.article import Article

Block = tuple[str, str]  # (kind, text), as in extractors.article

# --- What a store sees of one article, and what it answers --------------------------------------

COUNTED = "counted"  # a new distinct article: its signatures were counted
KNOWN = "known"  # same canonical URL or same text as an article already counted
COPY = "copy"  # a near copy of an earlier article (re-crawl with edits, syndicated copy)
UNAVAILABLE = "unavailable"  # no store answer (store down): priors only


@dataclass(frozen=True, slots=True)
class Observation:
    """One article as the store sees it: hashes only, no text."""

    domain: str
    now: float  # seconds since the epoch (the article's arrival time)
    identities: tuple[bytes, ...]  # digests of its canonical URL and its text
    signatures: tuple[bytes, ...]  # distinct block signatures, in order of first occurrence
    # Near-copy evidence, one entry per prose block: (its words, indices of its signatures in
    # `signatures`). The block was "seen" when any of them was seen but is not yet a notice.
    evidence: tuple[tuple[int, tuple[int, ...]], ...]


@dataclass(frozen=True, slots=True)
class DomainEvidence:
    """The store's answer: decayed counts of distinct articles, this one included if counted."""

    status: str  # COUNTED | KNOWN | COPY
    articles: float  # distinct articles of the domain (decayed)
    counts: tuple[float, ...]  # per signature of the observation, in its order


class NoticeStore(Protocol):
    """One interface, two backends (backends.py): RedisNoticeStore and EmbeddedNoticeStore."""

    async def observe(self, observation: Observation) -> DomainEvidence: ...

    async def aclose(self) -> None: ...


# --- Configuration ---------------------------------------------------------------------------

DAY_SECONDS = 86_400.0


@dataclass(frozen=True, slots=True)
class NoticeConfig:
    min_articles: int = (
        defaults.NOTICES_MIN_ARTICLES
    )  # K: distinct articles a block must occur in to be a notice
    min_share: float = (
        defaults.NOTICES_MIN_SHARE
    )  # ... and this share of the domain's recent (decayed) articles
    half_life_seconds: float = (
        defaults.NOTICES_HALF_LIFE_DAYS * DAY_SECONDS
    )  # evidence weight halves over this time
    max_signatures: int = (
        defaults.NOTICES_MAX_SIGNATURES
    )  # per domain; the least-evidenced signatures are evicted first
    idle_ttl_seconds: float = (
        defaults.NOTICES_IDLE_TTL_DAYS * DAY_SECONDS
    )  # a silent domain's state is dropped after this
    prior_articles: int = (
        defaults.NOTICES_PRIOR_ARTICLES
    )  # lexical priors apply while a domain has fewer distinct articles
    min_body_chars: int = (
        defaults.NOTICES_MIN_BODY_CHARS
    )  # fewer paragraph characters left: NULL (only_notices)
    copy_overlap: float = 0.5  # share of prose words already seen that makes a near copy

    def __post_init__(self) -> None:
        if self.min_articles < 1 or not 0.0 <= self.min_share <= 1.0:
            raise ValueError("min_articles must be >= 1 and min_share within [0, 1]")
        if self.half_life_seconds <= 0 or self.max_signatures < 1 or self.idle_ttl_seconds <= 0:
            raise ValueError("half-life, max_signatures and idle TTL must be positive")

    @property
    def notice_count(self) -> float:
        """Decayed count from which a signature is a notice (K, with slack for the decay)."""
        return self.min_articles - COUNT_SLACK

    @property
    def decay_tau(self) -> float:
        """Time constant of the exponential decay (seconds)."""
        return self.half_life_seconds / math.log(2)


# --- Thresholds (named, with why) ------------------------------------------------------------

# Decayed counts fall slightly below whole numbers; K sightings within ~half a half-life count.
COUNT_SLACK = 0.5
# Near copies: an article whose prose blocks (of COPY_MIN_TOKENS or more, by words) were mostly
# seen before, in articles too few to make them notices, repeats an earlier article. A block
# counts as seen when its full text, its first or its last PREFIX_TOKENS tokens were: a
# dateline prepended or a word changed leaves one of them intact.
COPY_MIN_TOKENS = 8
# Hostile input: only the first blocks are judged, and very long blocks are never notices.
MAX_BLOCKS = 200
NOTICE_MAX_CHARS = 4000
# Prefix and suffix signatures (first/last PREFIX_TOKENS tokens) of blocks of PREFIX_MIN_TOKENS
# or more recognise near copies (a prepended dateline, an edited word). They never remove a
# block: eight tokens that happen to open many paragraphs are no template.
PREFIX_TOKENS = 8
PREFIX_MIN_TOKENS = 12
# A segment seen in this many distinct articles (decayed, with slack) recurs: it is a wording,
# not a sentence written for one article.
RECURRING_COUNT = 2 - COUNT_SLACK
# Families of wordings ("Want more? Sign up for X." / "Busy day? Sign up for X."): a block of
# at most SEGMENT_BLOCK_MAX_TOKENS tokens made of several segments (sentences, or a label and
# its slot) also gets signatures of its first and of its last segment, tagged with its zone:
# the top or the tail half of the article. Halves, not block counts: a promo "after the second
# or third paragraph" stays in one zone whatever the article's furniture before it. A shared
# segment that recurs in the same half of the domain's articles is a family's fixed part.
SEGMENT_BLOCK_MAX_TOKENS = 40
SEGMENT_BLOCK_MAX_CHARS = 280  # ~SEGMENT_BLOCK_MAX_TOKENS tokens: longer blocks are not cut
# The lead: at most LEAD_MAX_BLOCKS blocks before the first one of LEAD_STORY_TOKENS tokens.
# Short ones there are bylines and datelines ("By Ana Ruiz", "WASHINGTON (AP) -") and stay.
LEAD_STORY_TOKENS = 15
LEAD_MAX_BLOCKS = 3
BYLINE_MAX_TOKENS = 12
# The tail of the body starts after its last story paragraph: a prose block of more than
# TAIL_FILLER_TOKENS tokens that is neither learned nor a prior match (so a follow-us line
# after the copyright line leaves it a tail; filler such as "Advertisement" does not end it).
TAIL_FILLER_TOKENS = 4
# Tables are data, never notices (a recurring header row "Team | W | L" is not boilerplate); so
# is text set out in <pre>: code, whose license header and install line recur post after post.
NEVER_NOTICE_KINDS = frozenset({"table", "preformatted"})
# What counts as the text of an article once notices are gone: its paragraphs and quotes, and
# its preformatted text (a paragraph before it was a kind of its own).
PROSE_KINDS = frozenset({"paragraph", "quote", "preformatted"})
PRIOR_MAX_TOKENS = 160  # priors only judge notice-sized blocks (legal disclaimers run ~100)
# Variants of an established notice type: a block of at most VARIANT_MAX_TOKENS tokens that
# reads as a notice kind in any language of the lexicon (a French follow-us line on a German
# page, a second newsletter promo) goes from its first sighting when the domain's articles
# already have lines of that kind in the same half (the type's signature is hot) and it stands
# where that kind may stand. Notice-sized only: the new wording of a one-line notice, never a
# story paragraph that happens to quote one.
VARIANT_MAX_TOKENS = 40
KEEP_MAX_TOKENS = 30  # attribution lines are one sentence
# An editorial note ("Correction: ...") says something: a label and a bare date ("Updated:
# 3 May 2025") is a time stamp, not a note.
NOTE_MIN_WORDS = 3

# --- Normalisation ---------------------------------------------------------------------------

_WORD = re.compile(r"\w+")
# Tokens: words of two characters or more, and the number token (one-letter words are codes
# and initials: "Section A" == "Section B").
_TOKEN = re.compile(r"\w\w+|0")
# Digit runs, with an ordinal ending ("3rd", "1er", "2e", "10º") folded with them, so "May 3rd"
# == "May 10th"; "14h30" == "9h05".
_NUMBER = re.compile(r"\d+(?:(?:st|nd|rd|th|er|re|ème|eme|e|o|a|°)\b)?")
# URLs, e-mail addresses and @handles: "Follow Ana Ruiz @anaruiz" == "Follow Li Wei @liwei".
# Bounded parts (an address's local part has at most 64 characters): linear on hostile input.
_URL = re.compile(
    r"https?://\S+|www\.\S+|[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63})+|(?<!\w)@\w{1,64}"
)
DIGIT_TOKEN = "0"
URL_TOKEN = "_url_"
SLOT_TOKEN = "_slot_"  # the changing part of a templated line ("Related: <headline>")


def fold(text: str) -> str:
    """Unicode compatibility form (NFKC) and case folded, typographic apostrophes made "'":
    what every rule here matches on."""
    if text.isascii():
        return text.casefold()
    folded = unicodedata.normalize("NFKC", text).casefold()
    return folded.replace("\u2019", "'") if "\u2019" in folded else folded


def language_code(language: str | None) -> str | None:
    """'de' for 'de-AT', 'DE' or 'de_DE'; None when unknown."""
    code = (language or "").strip()[:2].lower()
    return code if code.isalpha() and len(code) == 2 else None


_CODES = frozenset(lexicon.LANGUAGES)


@functools.cache
def _date_classes(language: str | None) -> dict[str, str]:
    return lexicon.date_words(language)


_DATED_WORDS = lexicon.dated_words()


def normalized_tokens(
    text: str, folded: str | None = None, language: str | None = None
) -> list[str]:
    """Tokens that ignore what changes between copies of one notice: years, dates, codes.

    Punctuation and spacing vanish, numbers (with ordinal endings) become DIGIT_TOKEN, URLs and
    e-mail addresses URL_TOKEN, month and weekday names of seven languages a class token (the
    ambiguous ones only in the article's language or next to a number), and one-letter words
    are dropped ("Section A" == "Section B").
    """
    folded = fold(text) if folded is None else folded
    if "@" in folded or "://" in folded or "www." in folded:
        folded = _URL.sub(f" {URL_TOKEN} ", folded)
    words = _TOKEN.findall(_NUMBER.sub(DIGIT_TOKEN, folded))
    classes = _date_classes(language if language in _CODES else language_code(language))
    tokens = list(map(classes.get, words, words))
    if DIGIT_TOKEN in tokens and not _DATED_WORDS.keys().isdisjoint(tokens):
        _fold_dated_words(tokens)
    return tokens


def _fold_dated_words(tokens: list[str]) -> None:
    """Date words of any language next to a number are dates ("10 mai 2025", "May 3")."""
    last = len(tokens) - 1
    for i, token in enumerate(tokens):
        if token == DIGIT_TOKEN:
            for j in (i - 1, i + 1):
                if 0 <= j <= last and tokens[j] in _DATED_WORDS:
                    tokens[j] = _DATED_WORDS[tokens[j]]


# --- Templated lines: a fixed part, a separator, a changing slot -------------------------------

# The separator of a templated line (its first): "Related: ...", "Photo | ...", "Lire aussi
# » ...", "... with the headline: ...", a spaced dash.
_SEPARATOR = re.compile(r"[:|\u00bb\u203a\u2022\u00b7](?=\s)|(?<=\s)[\u2014\u2013-](?=\s)")
_SEPARATOR_CHAR = re.compile("[:|\u00bb\u203a\u2022\u00b7\u2014\u2013-]")
# A sentence break: end punctuation, closing quotes, space, then a capital or an opening quote.
_SENTENCE_BREAK = re.compile(
    r"[.!?\u2026][\"'\u201d\u2019\u00bb)]*\s+[\"'\u201c\u2018\u00ab(]*(\w)"
)
_STEM_WORD = re.compile(r"[^\W\d_]{2,}")
SLOT_MAX_WORDS = 20  # a headline or a credit; longer is prose
TITLE_CASE_SHARE = 0.75  # a slot ending in "." is a name or Title Case headline, not a sentence
_QUOTES = "\"'\u201c\u201d\u2018\u2019\u00ab\u00bb\u201e"


Cuts = tuple[list[int], "re.Match[str] | None"]


def cuts_of(text: str) -> Cuts:
    """A block's sentence breaks (offsets of the next sentence) and its first separator."""
    breaks = [m.start(1) for m in _SENTENCE_BREAK.finditer(text) if m.group(1).isupper()]
    separator = _SEPARATOR.search(text) if _SEPARATOR_CHAR.search(text) else None
    return breaks, separator


def split_slot(text: str, cuts: Cuts | None = None) -> tuple[str, str] | None:
    """(fixed part, slot) of a templated line, or None.

    A templated line is one clause, a separator, then a headline- or name-shaped slot: at most
    SLOT_MAX_WORDS words, one phrase (no sentence break), not a quotation, and ending with no
    full stop unless it is a name or a Title Case headline ("Photo: Ana Ruiz/Reuters."), after
    a fixed part with a word of two letters or more. So "Related: Council approves new budget"
    and "A version of this article appears in print on ... with the headline: Council Approves
    Budget." are templated lines, while "Why it matters: Costs would fall." (a sentence), 'She
    said: "We will win."' (a quotation) and "Q: Why now?" are not.
    """
    breaks, first = cuts_of(text) if cuts is None else cuts
    if first is None or breaks:  # one clause and a slot: no sentence break anywhere
        return None
    # A headline may hold a colon of its own: the first separator ends the fixed part.
    stem, slot = text[: first.start()].strip(), text[first.end() :].strip()
    words = slot.split()
    if not stem or not words or len(words) > SLOT_MAX_WORDS or slot[0] in _QUOTES:
        return None
    if slot.rstrip(_QUOTES + ")] ").endswith(".") and not _title_case(words):
        return None  # a sentence, not a headline: "Why it matters: Costs would fall."
    if not _STEM_WORD.search(stem):
        return None  # "Q: ...", "10.32am: ...": no fixed words to learn
    return stem, slot


def _title_case(words: list[str]) -> bool:
    lettered = [w for w in words if w[:1].isalpha()]
    capitalised = sum(1 for w in lettered if w[:1].isupper())
    return bool(lettered) and capitalised >= TITLE_CASE_SHARE * len(lettered)


DIGEST_BYTES = 8  # 64-bit signatures: collisions within one domain's 1,000 are negligible


def digest(kind: str, text: str) -> bytes:
    """A signature; `kind` keeps full, prefix, suffix, zone and identity spaces apart."""
    return hashlib.blake2b(f"{kind}\x1f{text}".encode(), digest_size=DIGEST_BYTES).digest()


# --- Lexical priors and lines that are never notices ------------------------------------------

PRIOR_RIGHTS = lexicon.PRIOR_RIGHTS
PRIOR_PRINT = lexicon.PRIOR_PRINT
PRIOR_APPEAL = lexicon.PRIOR_APPEAL
PRIOR_FOLLOW = lexicon.PRIOR_FOLLOW
PRIOR_LICENSE = lexicon.PRIOR_LICENSE
PRIOR_CALL = lexicon.PRIOR_CALL
PRIOR_RELATED = lexicon.PRIOR_RELATED
PRIOR_CREDIT = lexicon.PRIOR_CREDIT
_ANYWHERE_PRIORS = lexicon.ANYWHERE_PRIORS
# Priors that are a label: they need the rest of the block to be a slot (a headline, a name).
LABEL_PRIORS = frozenset({PRIOR_RELATED, PRIOR_CREDIT})
# Captions carry photo credits ("(c) Jane Doe") and tables data: no prior judges them.
PRIOR_SKIP_KINDS = frozenset({"caption", "table"})


@functools.cache
def _rules_for(language: str | None) -> lexicon.RuleSet:
    """The article's language and English (boilerplate is often left in English); every
    language when it is unknown or has no rules. One merged rule per kind (speed)."""
    rules = lexicon.PRIOR_RULES
    if language in lexicon.LANGUAGES:
        wanted = {language, lexicon.FALLBACK_LANGUAGE}
        rules = tuple(rule for rule in rules if rule.language in wanted)
    return lexicon.rule_set(rules)


def prior_kind(
    text: str,
    folded: str | None = None,
    language: str | None = None,
    words: set[str] | None = None,
) -> str | None:
    """The lexical prior a block matches, if any (case-insensitive). `words`: the block's
    words when the caller has them (its tokens), to skip rules cheaply."""
    folded = fold(text) if folded is None else folded
    if words is None:
        words = set(_TOKEN.findall(folded))
    code = language if language in _CODES else language_code(language)
    return _rules_for(code).first_match(folded, words)


def is_attribution(text: str, folded: str | None = None) -> bool:
    folded = fold(text) if folded is None else folded
    return any(rule.matches(folded) for rule in lexicon.ATTRIBUTION_RULES)


# Notices recur word for word: their protection check is remembered (bounded memory).
NEVER_REMOVED_CACHE = 4096


@functools.lru_cache(maxsize=NEVER_REMOVED_CACHE)
def never_removed(text: str, tokens: int) -> bool:
    """An editorial note (any length) or an attribution line (one sentence)."""
    folded = fold(text)
    return is_editorial_note(text, folded) or (
        tokens <= KEEP_MAX_TOKENS and is_attribution(text, folded)
    )


def is_editorial_note(text: str, folded: str | None = None) -> bool:
    """A correction, clarification, editor's note or update, in any of the seven languages:
    the most important sentence of its article, never a notice."""
    folded = fold(text) if folded is None else folded
    label = lexicon.EDITORIAL_LABEL.match(folded)
    if label is not None:
        rest = [w for w in _WORD.findall(_NUMBER.sub(" ", label.group(1))) if len(w) > 1]
        if len([w for w in rest if w not in _DATED_WORDS]) >= NOTE_MIN_WORDS:
            return True
    return lexicon.EDITORIAL_SENTENCE.matches(folded)


# --- One article, prepared -------------------------------------------------------------------

NO_SIGNATURE = -1
ZONE_TOP = "top"
ZONE_TAIL = "tail"


@dataclass(slots=True)
class BlockFacts:
    """What the decision needs to know about one block."""

    tokens: int
    prose: bool  # a paragraph or quote (not a heading, list item, caption or table)
    full: int = NO_SIGNATURE  # index of its full signature in the observation
    prefix: int = NO_SIGNATURE  # index of its prefix signature (first PREFIX_TOKENS)
    suffix: int = NO_SIGNATURE  # index of its suffix signature (last PREFIX_TOKENS)
    segments: int = 1
    lead_segment: int = NO_SIGNATURE  # its first segment, tagged with its zone
    lead_tokens: int = 0
    trail_segment: int = NO_SIGNATURE  # its last segment, tagged with its zone
    trail_tokens: int = 0
    prior: str | None = None
    strong_prior: bool = False  # two independent cues (a rights mark and a reservation)
    prior_seen: int = NO_SIGNATURE  # "the domain's articles have <prior> lines"
    # The notice kind it reads as in any language of the lexicon (notice-sized blocks only),
    # and its type: "the domain's articles have <kind> lines in this half" (a zone signature).
    lexical_kind: str | None = None
    type_seen: int = NO_SIGNATURE
    templated: bool = False  # a fixed part, a separator and a slot ("Related: <headline>")

    def __reduce__(self) -> tuple[type[BlockFacts], tuple[object, ...]]:
        # Pickled as its field values: an article's facts cross from the extraction worker, and
        # a slotted dataclass's default pickle costs the reactor six times more to load.
        return BlockFacts, tuple(getattr(self, name) for name in self.__slots__)


@dataclass(slots=True)
class PreparedArticle:
    blocks: list[Block]
    facts: list[BlockFacts]
    observation: Observation
    language: str | None = None  # as given to `prepare` (the item's, not yet a lexicon code)

    def placed(self, domain: str, identities: Sequence[str], now: float) -> PreparedArticle:
        """The article as prepared away from the crawl (`prepare_extracted`), given what only
        the crawl knows: its domain, identities and arrival time."""
        observation = replace(
            self.observation, domain=domain, now=now, identities=identity_digests(identities)
        )
        return PreparedArticle(self.blocks, self.facts, observation, self.language)


def block_zone(n: int, position: int) -> str:
    """The zone of a block by its place alone (what can be hashed before any evidence)."""
    return ZONE_TOP if 2 * position < n else ZONE_TAIL


class _Signatures:
    """An article's distinct signatures, in order of first occurrence."""

    def __init__(self) -> None:
        self.index: dict[bytes, int] = {}  # a block repeated within one article counts once

    def add(self, kind: str, text: str) -> int:
        return self.index.setdefault(digest(kind, text), len(self.index))


def prepare(
    domain: str,
    blocks: Sequence[Block],
    identities: Sequence[str],
    now: float,
    language: str | None = None,
) -> PreparedArticle:
    """Normalise and hash an article's blocks (CPU only; bounded on hostile input)."""
    given_language, language = language, language_code(language)
    signatures = _Signatures()
    evidence: list[tuple[int, tuple[int, ...]]] = []
    n = min(len(blocks), MAX_BLOCKS)
    facts = []
    for position, (kind, text) in enumerate(blocks):
        if position >= MAX_BLOCKS or len(text) > NOTICE_MAX_CHARS or kind in NEVER_NOTICE_KINDS:
            facts.append(BlockFacts(tokens=len(text.split()), prose=kind in PROSE_KINDS))
            continue
        fact, parts = _block_facts(kind, text, language)
        facts.append(fact)
        tokens = [token for part in parts for token in part]
        if not tokens:
            continue
        _sign(fact, tokens, signatures)
        zone = block_zone(n, position)
        if len(parts) > 1 and fact.tokens <= SEGMENT_BLOCK_MAX_TOKENS:
            fact.segments = len(parts)
            _sign_segments(fact, parts, zone, signatures)
        if fact.prior:  # where it may stand is the decision's business (edge or anywhere)
            fact.prior_seen = signatures.add("k", fact.prior)
        if fact.lexical_kind:  # any wording, in any language, counts for its type: order-robust
            fact.type_seen = signatures.add(f"v{zone}", fact.lexical_kind)
        if len(tokens) >= COPY_MIN_TOKENS and not fact.prior:
            ends = (fact.full, fact.prefix, fact.suffix)
            evidence.append((len(tokens), tuple(i for i in ends if i != NO_SIGNATURE)))
    observation = Observation(
        domain=domain,
        now=now,
        identities=identity_digests(identities),
        signatures=tuple(signatures.index),
        evidence=tuple(evidence),
    )
    return PreparedArticle(list(blocks), facts, observation, given_language)


def prepare_extracted(article: Article) -> PreparedArticle:
    """`prepare` in an extraction worker, beside the extraction (the notices stage's
    `worker_preparation`): the CPU half of the stage on a free core instead of the reactor.
    What only the crawl knows is filled in there (`PreparedArticle.placed`)."""
    return prepare("", article.blocks, (), 0.0, article.language)


def identity_digests(identities: Sequence[str]) -> tuple[bytes, ...]:
    return tuple(dict.fromkeys(digest("i", i) for i in identities if i))


def _block_facts(kind: str, text: str, language: str | None) -> tuple[BlockFacts, list[list[str]]]:
    """The block's facts and its tokens, by segment: a templated line is its fixed part and
    SLOT_TOKEN; a short block is cut at its sentence breaks; a long one is one segment."""
    reading = _read_block(text, language, kind not in PRIOR_SKIP_KINDS)
    count = sum(map(len, reading.parts))
    fact = BlockFacts(tokens=count, prose=kind in PROSE_KINDS, templated=reading.templated)
    fact.prior, fact.strong_prior = reading.prior, reading.strong
    fact.lexical_kind = reading.lexical_kind
    return fact, reading.parts


@dataclass(slots=True)
class BlockReading:
    """What `_read_block` finds in a block's text."""

    templated: bool
    parts: list[list[str]]  # tokens by segment
    prior: str | None = None  # the lexical prior in the article's language (and English)
    strong: bool = False  # a rights line with both its cues
    lexical_kind: str | None = None  # the notice kind in any language of the lexicon


def _read_block(text: str, language: str | None, judged: bool) -> BlockReading:
    """Tokens by segment, and the lexical prior (`judged`: the kind is one priors judge)."""
    folded = fold(text)
    short = len(text) <= SEGMENT_BLOCK_MAX_CHARS
    cuts = cuts_of(text) if short else ([], None)
    template = split_slot(text, cuts) if short else None
    bounds = segment_bounds(text, cuts) if short and template is None else []
    if template is not None:
        parts = [normalized_tokens(template[0], None, language), [SLOT_TOKEN]]
    elif len(bounds) > 2:
        # Case folding rarely changes a text's length; when it does, fold each part anew.
        same = len(folded) == len(text)
        parts = [
            normalized_tokens(text[a:b], folded[a:b] if same else None, language)
            for a, b in itertools.pairwise(bounds)
        ]
    else:
        parts = [normalized_tokens(text, folded, language)]
    reading = BlockReading(template is not None, parts)
    count = sum(map(len, parts))
    if judged and count <= PRIOR_MAX_TOKENS:
        words = None if template else {token for part in parts for token in part}
        reading.prior, reading.lexical_kind = _kinds(text, folded, language, words, count, template)
        reading.strong = reading.prior == PRIOR_RIGHTS and lexicon.is_strong_rights(folded)
    return reading


def _kinds(
    text: str,
    folded: str,
    language: str | None,
    words: set[str] | None,
    count: int,
    template: tuple[str, str] | None,
) -> tuple[str | None, str | None]:
    """(the prior of the article's language, the kind in any language of the lexicon: only
    for notice-sized blocks). Every language's rules first: most blocks match none, and then
    neither do the article's own (a subset of them), so most blocks are read once."""

    def kind(rules_of: str | None) -> str | None:
        found = prior_kind(text, folded, rules_of, words)
        # A label prior needs a slot after its label: "Su questo punto: il sindaco ha detto
        # ..." is a sentence.
        return None if found in LABEL_PRIORS and template is None else found

    if count > VARIANT_MAX_TOKENS:
        return kind(language), None
    anywhere = kind(None)
    if anywhere is None or language not in _CODES:
        return anywhere, anywhere
    return kind(language), anywhere


def _sign(fact: BlockFacts, tokens: list[str], signatures: _Signatures) -> None:
    """The block's full signature, and its prefix and suffix when it is long enough."""
    fact.full = signatures.add("f", " ".join(tokens))
    if len(tokens) >= PREFIX_MIN_TOKENS:
        fact.prefix = signatures.add("p", " ".join(tokens[:PREFIX_TOKENS]))
        fact.suffix = signatures.add("s", " ".join(tokens[-PREFIX_TOKENS:]))


def _sign_segments(
    fact: BlockFacts, parts: list[list[str]], zone: str, signatures: _Signatures
) -> None:
    """Signatures of the first and last segment of a short block of several segments (a
    templated line's slot changes by definition: only its fixed part is signed)."""
    lead = parts[0]
    if lead:
        fact.lead_segment = signatures.add(f"l{zone}", " ".join(lead))
        fact.lead_tokens = len(lead)
    trail = parts[-1]
    if trail and not fact.templated:
        fact.trail_segment = signatures.add(f"t{zone}", " ".join(trail))
        fact.trail_tokens = len(trail)


def segment_bounds(text: str, cuts: Cuts | None = None) -> list[int]:
    """Where a block is cut: its sentence breaks and its first separator ("Label: ..."), as
    offsets [0, cut, ..., len(text)]; [0, len(text)] when it is one segment."""
    breaks, separator = cuts_of(text) if cuts is None else cuts
    offsets = set(breaks)
    if separator is not None:
        offsets.add(separator.end())
    inside = {cut for cut in offsets if text[:cut].strip() and text[cut:].strip()}
    return [0, *sorted(inside), len(text)]


def segments(text: str) -> list[str]:
    """A block cut at its sentence breaks and at its first separator."""
    return [text[a:b] for a, b in itertools.pairwise(segment_bounds(text))]


# --- The decision ----------------------------------------------------------------------------

REASON_LEARNED = "learned"
REASON_PRIOR = "prior"
REASON_VARIANT = "variant"  # a new wording of a notice type the domain has (VARIANT_MAX_TOKENS)
NULL_ONLY_NOTICES = "only_notices"


@dataclass(frozen=True, slots=True)
class Removal:
    index: int  # position in the input blocks
    block: Block
    reason: str  # REASON_LEARNED | REASON_PRIOR | REASON_VARIANT


@dataclass(frozen=True, slots=True)
class Verdict:
    blocks: list[Block]  # what is left, in order
    removed: list[Removal] = field(default_factory=list)
    null_reason: str | None = None  # NULL_ONLY_NOTICES when what is left is not an article
    status: str = UNAVAILABLE  # the store's view of the article (COUNTED, KNOWN, COPY, ...)

    @property
    def is_null(self) -> bool:
        return self.null_reason is not None


class _Evidence:
    """The store's counts, read as the decision needs them."""

    def __init__(self, evidence: DomainEvidence | None, config: NoticeConfig) -> None:
        self.counts = evidence.counts if evidence else ()
        self.articles = evidence.articles if evidence else 0.0
        self.config = config

    def count(self, index: int) -> float:
        return self.counts[index] if index != NO_SIGNATURE and self.counts else 0.0

    def hot(self, index: int) -> bool:
        count = self.count(index)
        return count >= self.config.notice_count and count >= self.config.min_share * self.articles

    def fixed_tokens(self, fact: BlockFacts) -> int:
        """How many of the block's tokens the domain's learned templates account for: its first
        and last segments when they recur in the same half of the domain's articles. Whole
        segments only: eight tokens that happen to open many paragraphs are no template."""
        lead = fact.lead_tokens if self.hot(fact.lead_segment) else 0
        trail = fact.trail_tokens if self.hot(fact.trail_segment) else 0
        return min(fact.tokens, lead + trail)

    def learned(self, fact: BlockFacts) -> bool:
        """A notice by evidence: its full text, or a learned template of which it is a wording.

        A template (a hot first or last segment: the fixed part of a family of wordings)
        removes the block only when its varying part is no longer than its fixed part, and
        when the block reads as a notice (a lexical prior) or its varying segment recurs too
        (one more wording of the family): a sentence that continues a templated opening with
        text written for this article ("In this week's column, ...") stays, and so does a
        question added to a recurring label.
        """
        if self.hot(fact.full):
            return True
        if fact.lead_segment == NO_SIGNATURE and fact.trail_segment == NO_SIGNATURE:
            return False  # one segment: only its full text is evidence
        fixed = self.fixed_tokens(fact)
        if fixed == 0 or fact.tokens - fixed > fixed:
            return False
        return fact.prior is not None or fixed == fact.tokens or self.varying_recurs(fact)

    def varying_recurs(self, fact: BlockFacts) -> bool:
        """The varying segment of a two-segment block was seen in another article too: one
        more wording of a family, not a sentence written for this article ("Our column this
        week: <the article's question>")."""
        if fact.segments != 2:
            return False
        lead, trail = self.hot(fact.lead_segment), self.hot(fact.trail_segment)
        other = fact.trail_segment if lead and not trail else fact.lead_segment
        return self.count(other) >= RECURRING_COUNT

    def prior_confirmed(self, fact: BlockFacts, cold: bool) -> bool:
        """A prior applies alone during the cold start and when it has two independent cues
        (a rights line: a copyright mark and a reservation); after the cold start otherwise
        with the domain's evidence: the block fits a learned template, or the domain has such
        lines in its articles (where they may stand is for the decision)."""
        if fact.prior is None:
            return False
        if cold or fact.strong_prior:
            return True
        return self.fixed_tokens(fact) > 0 or self.hot(fact.prior_seen)

    def variant(self, fact: BlockFacts) -> bool:
        """A new wording of a notice type the domain has: it reads as that kind in a language
        of the lexicon, and the domain's articles have lines of the kind in the same half (where
        it may stand within that half is for the decision, as for a prior). Any wording and
        language counted for the type, so it does not matter which came first."""
        return self.hot(fact.type_seen)


def judge(
    article: PreparedArticle, evidence: DomainEvidence | None, config: NoticeConfig
) -> Verdict:
    """Decide which blocks are notices. `evidence` None (store unavailable) = priors only."""
    facts = article.facts
    known = _Evidence(evidence, config)
    learned = [known.learned(f) for f in facts]
    lexical, edges = _lexical_reasons(facts, known, learned, config)
    candidate = [a or b is not None for a, b in zip(learned, lexical, strict=True)]
    protected = _protected(article.blocks, facts, candidate)
    removed: list[Removal] = []
    kept: list[Block] = []
    for i, block in enumerate(article.blocks):
        reason = None
        if not protected[i]:
            if learned[i]:
                reason = REASON_LEARNED
            elif lexical[i] and (edges[i] or _kind(facts[i]) in _ANYWHERE_PRIORS):
                reason = lexical[i]
        if reason:
            removed.append(Removal(i, block, reason))
        else:
            kept.append(block)
    status = evidence.status if evidence else UNAVAILABLE
    null = None
    if removed and _prose_chars(article.blocks, facts, removed) < config.min_body_chars:
        null = NULL_ONLY_NOTICES
    return Verdict(blocks=kept, removed=removed, null_reason=null, status=status)


def _kind(fact: BlockFacts) -> str | None:
    """The notice kind a block reads as: in the article's language, else in another one."""
    return fact.prior or fact.lexical_kind


def _lexical_reasons(
    facts: list[BlockFacts], known: _Evidence, learned: list[bool], config: NoticeConfig
) -> tuple[list[str | None], list[bool]]:
    """Which blocks the lexicon, confirmed by the domain's evidence, calls notices (where they
    may stand is the caller's business), and which blocks stand at an edge (lead or tail).

    REASON_PRIOR: a prior of the article's language, confirmed (`prior_confirmed`), or a
    wording of a type the domain has (`_Evidence.variant`: whichever language its earlier
    wordings were in). REASON_VARIANT: a block that reads as a notice kind in another
    language of the lexicon, a new wording of a type the domain has. Either also when it
    stands in an edge zone that holds a known notice (learned, or a rights line with both its
    cues): the domain's boilerplate run, where it is one more notice (a follow-us line after
    the copyright line, in whichever language)."""
    reasons: list[str | None] = [None] * len(facts)
    if config.prior_articles <= 0:  # no lexicon at all: learning alone
        return reasons, [False] * len(facts)
    cold = known.articles < config.prior_articles
    reads = [_kind(f) is not None for f in facts]
    lead, tail = _edge_zones(facts, [a or b for a, b in zip(learned, reads, strict=True)])
    known_notice = [a or f.strong_prior for a, f in zip(learned, facts, strict=True)]
    lead_learned = any(a and b for a, b in zip(known_notice, lead, strict=True))
    tail_learned = any(a and b for a, b in zip(known_notice, tail, strict=True))
    for i, fact in enumerate(facts):
        if not reads[i]:
            continue
        confirmed = (lead[i] and lead_learned) or (tail[i] and tail_learned) or known.variant(fact)
        if fact.prior is not None and (confirmed or known.prior_confirmed(fact, cold)):
            reasons[i] = REASON_PRIOR
        elif fact.prior is None and confirmed:
            reasons[i] = REASON_VARIANT
    return reasons, [a or b for a, b in zip(lead, tail, strict=True)]


def _prose_chars(blocks: list[Block], facts: list[BlockFacts], removed: list[Removal]) -> int:
    """Characters of paragraphs and quotes left: teasers and headings alone are no article."""
    gone = {removal.index for removal in removed}
    return sum(len(text) for i, (_, text) in enumerate(blocks) if facts[i].prose and i not in gone)


def _protected(blocks: list[Block], facts: list[BlockFacts], candidate: list[bool]) -> list[bool]:
    """Never removed: editorial notes, attribution lines, and short blocks leading the body
    (bylines, datelines) unless they are templated lines or prior matches ("Photo: ...").
    Only candidates are looked at: what would not be removed needs no protection."""
    protected = [
        c and never_removed(text, f.tokens)
        for c, f, (_, text) in zip(candidate, facts, blocks, strict=True)
    ]
    for i, fact in enumerate(facts[:LEAD_MAX_BLOCKS]):
        if fact.tokens >= LEAD_STORY_TOKENS and not candidate[i]:
            break
        if fact.tokens > BYLINE_MAX_TOKENS:
            continue
        # "Photo: ...", "Related: ..." (in any language) are not bylines
        shaped = fact.templated or fact.prior or fact.lexical_kind
        if not shaped or lexicon.BYLINE.match(fold(blocks[i][1])):
            protected[i] = True
    return protected


def _edge_zones(facts: list[BlockFacts], candidate: list[bool]) -> tuple[list[bool], list[bool]]:
    """The lead (before the story's first paragraph) and the tail (after its last one): where
    rights, print, follow-us and licence lines stand. A story paragraph is a prose block of
    more than TAIL_FILLER_TOKENS tokens that is no notice candidate."""
    n = len(facts)
    lead, tail = [False] * n, [False] * n

    def story(i: int) -> bool:
        return facts[i].prose and facts[i].tokens > TAIL_FILLER_TOKENS and not candidate[i]

    for i in range(n - 1, -1, -1):
        if story(i):
            break
        tail[i] = True
    for i in range(n):
        if story(i):
            break
        lead[i] = True
    return lead, tail


# --- The learner -----------------------------------------------------------------------------


class NoticeLearner:
    """prepare -> store (one round trip) -> judge, for one article at a time."""

    def __init__(self, store: NoticeStore, config: NoticeConfig | None = None) -> None:
        self.store = store
        self.config = config or NoticeConfig()

    def prepare(
        self,
        domain: str,
        blocks: Sequence[Block],
        identities: Sequence[str] = (),
        now: float | None = None,
        language: str | None = None,
    ) -> PreparedArticle:
        now = time.time() if now is None else now
        return prepare(domain, blocks, identities, now, language)

    async def process(
        self,
        domain: str,
        blocks: Sequence[Block],
        *,
        identities: Sequence[str] = (),
        now: float | None = None,
        language: str | None = None,
    ) -> Verdict:
        """Learn from the article and judge it. Store errors propagate (see `judge_offline`).
        `language` is the article's detected language (ISO 639-1), None when unknown."""
        article = self.prepare(domain, blocks, identities, now, language)
        return self.judge(article, await self.store.observe(article.observation))

    def judge(self, article: PreparedArticle, evidence: DomainEvidence) -> Verdict:
        return judge(article, evidence, self.config)

    def judge_offline(self, article: PreparedArticle) -> Verdict:
        """The verdict without a store (it is down): lexical priors only, nothing learned."""
        return judge(article, None, self.config)
