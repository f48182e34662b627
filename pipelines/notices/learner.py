"""Learn, per publisher domain, the blocks that recur across its articles, and remove them.

Pure logic (no Scrapy): `NoticeLearner.process(domain, blocks, identities=...)` turns an
article's (kind, text) blocks into a `Verdict` — the blocks to keep, those removed and why, and
NULL (`only_notices`) when nothing that could be an article is left. Evidence lives in a
`NoticeStore` (backends.py): Redis shared by all workers, or an embedded SQLite file.

How a block becomes a notice:
  1. It is normalised (Unicode NFKC, case, punctuation and whitespace folded; digit runs, month
     and weekday names and one-letter tokens replaced or dropped, so "(c) 2025 ... Section A" and
     "(c) 2026 ... Section B" agree) and hashed: one *full* signature, plus a *prefix* signature
     (its first 8 tokens) for longer blocks, which catches templated lines whose end varies
     ("A version of this article appears in print on ... with the headline: ..."), and a
     *suffix* signature that only serves to recognise copies.
  2. The store counts, with exponential time decay, in how many distinct articles of the domain
     each signature occurs. Distinct means: not an article already seen (same canonical URL or
     same text) and not a near copy of one (most of its prose seen before, in too few articles
     to be notices), so re-crawls and syndicated copies never turn a story into "notices".
  3. A block is a notice when its count reaches `min_articles` AND `min_share` of the domain's
     recent articles. Never removed: short bylines/datelines leading the body and attribution
     lines ("This story was originally published by ...", "... contributed to this report").
Cold start: until a domain has `prior_articles` distinct articles, strong lexical priors also
remove blocks: rights, print-edition and reader-appeal lines in the tail of the body (after its
last story paragraph), newsletter sign-ups, subscriptions and tip lines anywhere past the lead.
Once the domain has evidence, only evidence removes.
"""

from __future__ import annotations

import hashlib
import math
import re
import time
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from settings import base as defaults

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
# Prefix signatures (first PREFIX_TOKENS tokens) of blocks of PREFIX_MIN_TOKENS or more catch
# templated notices; a block longer than TEMPLATE_MAX_TOKENS is never removed on its prefix.
PREFIX_TOKENS = 8
PREFIX_MIN_TOKENS = 12
TEMPLATE_MAX_TOKENS = 60
# The lead: at most LEAD_MAX_BLOCKS blocks before the first one of LEAD_STORY_TOKENS tokens.
# Short ones there are bylines and datelines ("By Ana Ruiz", "WASHINGTON (AP) -") and stay.
LEAD_STORY_TOKENS = 15
LEAD_MAX_BLOCKS = 3
BYLINE_MAX_TOKENS = 12
# The tail of the body starts after its last prose block of more than TAIL_FILLER_TOKENS tokens
# that is not a notice candidate: what trails it ("Up next" lists, "Advertisement") is not story.
TAIL_FILLER_TOKENS = 4
# Tables are data, never notices (a recurring header row "Team | W | L" is not boilerplate).
NEVER_NOTICE_KINDS = frozenset({"table"})
# What counts as the text of an article once notices are gone: its paragraphs and quotes.
PROSE_KINDS = frozenset({"paragraph", "quote"})
PRIOR_MAX_TOKENS = 160  # priors only judge notice-sized blocks (legal disclaimers run ~100)
KEEP_MAX_TOKENS = 30  # attribution lines are one sentence

# --- Normalisation ---------------------------------------------------------------------------

_WORD = re.compile(r"\w+")
_DIGITS = re.compile(r"\d+")
_MONTHS = (
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december",
    "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
)  # fmt: skip
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
MONTH_TOKEN = "<month>"
WEEKDAY_TOKEN = "<day>"
DIGIT_TOKEN = "0"  # every run of digits: "(c) 2025" == "(c) 2026", "A25" == "A3"
_TOKEN_CLASSES = {m: MONTH_TOKEN for m in _MONTHS} | {d: WEEKDAY_TOKEN for d in _WEEKDAYS}


def fold(text: str) -> str:
    """Unicode compatibility form (NFKC) and case folded: what every rule here matches on."""
    return (text if text.isascii() else unicodedata.normalize("NFKC", text)).casefold()


def normalized_tokens(text: str, folded: str | None = None) -> list[str]:
    """Tokens that ignore what changes between copies of one notice: years, dates, codes.

    Punctuation and spacing vanish, digit runs become DIGIT_TOKEN, month and weekday names a
    class token, and one-letter words are dropped ("Section A" == "Section B").
    """
    words = _WORD.findall(_DIGITS.sub(DIGIT_TOKEN, fold(text) if folded is None else folded))
    classes = _TOKEN_CLASSES
    return [classes.get(w, w) for w in words if len(w) > 1 or w == DIGIT_TOKEN]


DIGEST_BYTES = 8  # 64-bit signatures: collisions within one domain's 1,000 are negligible


def digest(kind: str, text: str) -> bytes:
    """A signature; `kind` keeps full, prefix, suffix and identity spaces apart."""
    return hashlib.blake2b(f"{kind}\x1f{text}".encode(), digest_size=DIGEST_BYTES).digest()


# --- Lexical priors --------------------------------------------------------------------------

PRIOR_RIGHTS = "rights"  # copyright and reproduction lines: in the tail of the body only
PRIOR_PRINT = "print"  # print-edition lines: in the tail only
PRIOR_APPEAL = "appeal"  # reader-support and contact appeals: in the tail only
PRIOR_CALL = "call_to_action"  # newsletter sign-ups, subscriptions, tip lines: anywhere


@dataclass(frozen=True, slots=True)
class _Rule:
    """A regex on folded text, tried only when one of its literal keywords occurs (speed)."""

    name: str
    keywords: tuple[str, ...]
    pattern: re.Pattern[str]

    def matches(self, folded: str) -> bool:
        return any(k in folded for k in self.keywords) and self.pattern.search(folded) is not None


# Only phrasings a story itself rarely uses; weaker ones count only in the tail of the body.
_PRIORS = (
    _Rule(
        PRIOR_CALL,
        ("newsletter", "subscribe", "tip"),
        re.compile(
            r"\b(?:sign up|subscribe) (?:for|to) (?:our|the)\b.{0,80}\bnewsletters?\b"
            r"|\bsubscribe (?:today|now)\b|\bhave a (?:news )?tip\b"
            r"|\b(?:send|email) us your (?:news )?tips\b"
        ),
    ),
    _Rule(
        PRIOR_RIGHTS,
        ("\u00a9", "(c)", "copyright", "rights reserved", "may not be"),
        re.compile(
            r"\u00a9|\(c\)\s*\d{4}|\bcopyright\s+(?:\u00a9\s*)?\d{4}|\ball rights reserved"
            r"|\bmay not be (?:re)?(?:published|produced|broadcast|rewritten|redistributed|copied)"
        ),
    ),
    _Rule(
        PRIOR_PRINT,
        ("print",),
        re.compile(
            r"\bappear(?:s|ed)? in print\b|\bin the print edition\b"
            r"|\bversion of this (?:article|story) (?:appears|appeared)\b"
        ),
    ),
    _Rule(
        PRIOR_APPEAL,
        ("inbox", "corrections", "journalism", "tips"),
        re.compile(
            r"\bin your inbox\b|\b(?:send|email) (?:your )?(?:corrections|tips)\b"
            r"|\bsupport (?:our|independent|local) journalism\b|\bjournalism is supported by\b"
        ),
    ),
)
_ANYWHERE_PRIORS = frozenset({PRIOR_CALL})
# Captions carry photo credits ("(c) Jane Doe") and tables data: no prior judges them.
PRIOR_SKIP_KINDS = frozenset({"caption", "table"})
# Attribution and credit lines are part of the story (wire copies, shared reporting).
_ATTRIBUTION = _Rule(
    "attribution",
    ("originally", "first", "contributed", " by"),
    re.compile(
        r"\b(?:originally|first) (?:published|appeared)\b"
        r"|\bcontributed (?:reporting|to this (?:report|story|article))\b"
        r"|\b(?:reporting|writing|editing) by\b"
    ),
)


def prior_kind(text: str, folded: str | None = None) -> str | None:
    """The lexical prior a block matches, if any (case-insensitive)."""
    folded = fold(text) if folded is None else folded
    for rule in _PRIORS:
        if rule.matches(folded):
            return rule.name
    return None


def is_attribution(text: str, folded: str | None = None) -> bool:
    return _ATTRIBUTION.matches(fold(text) if folded is None else folded)


# --- One article, prepared -------------------------------------------------------------------

NO_SIGNATURE = -1


@dataclass(slots=True)
class BlockFacts:
    """What the decision needs to know about one block."""

    tokens: int
    prose: bool  # a paragraph or quote (not a heading, list item, caption or table)
    full: int = NO_SIGNATURE  # index of its full signature in the observation
    prefix: int = NO_SIGNATURE  # index of its prefix signature
    prior: str | None = None
    attribution: bool = False


@dataclass(slots=True)
class PreparedArticle:
    blocks: list[Block]
    facts: list[BlockFacts]
    observation: Observation


def prepare(
    domain: str, blocks: Sequence[Block], identities: Sequence[str], now: float
) -> PreparedArticle:
    """Normalise and hash an article's blocks (CPU only; bounded on hostile input)."""
    signatures: dict[bytes, int] = {}  # a block repeated within one article counts once
    evidence: list[tuple[int, tuple[int, ...]]] = []

    def index_of(signature: bytes) -> int:
        return signatures.setdefault(signature, len(signatures))

    facts = []
    for position, (kind, text) in enumerate(blocks):
        if position >= MAX_BLOCKS or len(text) > NOTICE_MAX_CHARS or kind in NEVER_NOTICE_KINDS:
            facts.append(BlockFacts(tokens=len(text.split()), prose=kind in PROSE_KINDS))
            continue
        folded = fold(text)
        tokens = normalized_tokens(text, folded)
        fact = BlockFacts(tokens=len(tokens), prose=kind in PROSE_KINDS)
        if fact.tokens <= PRIOR_MAX_TOKENS and kind not in PRIOR_SKIP_KINDS:
            fact.prior = prior_kind(text, folded)
        fact.attribution = fact.tokens <= KEEP_MAX_TOKENS and is_attribution(text, folded)
        facts.append(fact)
        if not tokens:
            continue
        fact.full = index_of(digest("f", " ".join(tokens)))
        if len(tokens) >= PREFIX_MIN_TOKENS:
            fact.prefix = index_of(digest("p", " ".join(tokens[:PREFIX_TOKENS])))
        if len(tokens) >= COPY_MIN_TOKENS and not fact.prior:
            ends = [fact.full]
            if len(tokens) >= PREFIX_MIN_TOKENS:
                ends += [fact.prefix, index_of(digest("s", " ".join(tokens[-PREFIX_TOKENS:])))]
            evidence.append((len(tokens), tuple(ends)))
    observation = Observation(
        domain=domain,
        now=now,
        identities=tuple(dict.fromkeys(digest("i", i) for i in identities if i)),
        signatures=tuple(signatures),
        evidence=tuple(evidence),
    )
    return PreparedArticle(list(blocks), facts, observation)


# --- The decision ----------------------------------------------------------------------------

REASON_LEARNED = "learned"
REASON_PRIOR = "prior"
NULL_ONLY_NOTICES = "only_notices"


@dataclass(frozen=True, slots=True)
class Removal:
    index: int  # position in the input blocks
    block: Block
    reason: str  # REASON_LEARNED | REASON_PRIOR


@dataclass(frozen=True, slots=True)
class Verdict:
    blocks: list[Block]  # what is left, in order
    removed: list[Removal] = field(default_factory=list)
    null_reason: str | None = None  # NULL_ONLY_NOTICES when what is left is not an article
    status: str = UNAVAILABLE  # the store's view of the article (COUNTED, KNOWN, COPY, ...)

    @property
    def is_null(self) -> bool:
        return self.null_reason is not None


def judge(
    article: PreparedArticle, evidence: DomainEvidence | None, config: NoticeConfig
) -> Verdict:
    """Decide which blocks are notices. `evidence` None (store unavailable) = priors only."""
    facts = article.facts
    counts = evidence.counts if evidence else ()
    articles = evidence.articles if evidence else 0.0

    def hot(index: int) -> bool:
        if index == NO_SIGNATURE or not counts:
            return False
        count = counts[index]
        return count >= config.notice_count and count >= config.min_share * articles

    learned = [hot(f.full) or (f.tokens <= TEMPLATE_MAX_TOKENS and hot(f.prefix)) for f in facts]
    use_priors = articles < config.prior_articles
    prior = [use_priors and f.prior is not None for f in facts]
    protected = _protected(facts)
    tail = _tail_zone(facts, [a or b for a, b in zip(learned, prior, strict=True)])
    removed: list[Removal] = []
    kept: list[Block] = []
    for i, block in enumerate(article.blocks):
        reason = None
        if not protected[i]:
            if learned[i]:
                reason = REASON_LEARNED
            elif prior[i] and (tail[i] or facts[i].prior in _ANYWHERE_PRIORS):
                reason = REASON_PRIOR
        if reason:
            removed.append(Removal(i, block, reason))
        else:
            kept.append(block)
    status = evidence.status if evidence else UNAVAILABLE
    null = None
    if removed and _prose_chars(article.blocks, facts, removed) < config.min_body_chars:
        null = NULL_ONLY_NOTICES
    return Verdict(blocks=kept, removed=removed, null_reason=null, status=status)


def _prose_chars(blocks: list[Block], facts: list[BlockFacts], removed: list[Removal]) -> int:
    """Characters of paragraphs and quotes left: teasers and headings alone are no article."""
    gone = {removal.index for removal in removed}
    return sum(len(text) for i, (_, text) in enumerate(blocks) if facts[i].prose and i not in gone)


def _protected(facts: list[BlockFacts]) -> list[bool]:
    """Short blocks leading the body (bylines, datelines) and attribution lines stay."""
    protected = [f.attribution for f in facts]
    for i, fact in enumerate(facts[:LEAD_MAX_BLOCKS]):
        if fact.tokens >= LEAD_STORY_TOKENS:
            break
        if fact.tokens <= BYLINE_MAX_TOKENS:
            protected[i] = True
    return protected


def _tail_zone(facts: list[BlockFacts], candidate: list[bool]) -> list[bool]:
    """Blocks after the story's last prose block (from the end: anything else is tail)."""
    tail = [False] * len(facts)
    for i in range(len(facts) - 1, -1, -1):
        fact = facts[i]
        if fact.prose and fact.tokens > TAIL_FILLER_TOKENS and not candidate[i]:
            break
        tail[i] = True
    return tail


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
    ) -> PreparedArticle:
        return prepare(domain, blocks, identities, time.time() if now is None else now)

    async def process(
        self,
        domain: str,
        blocks: Sequence[Block],
        *,
        identities: Sequence[str] = (),
        now: float | None = None,
    ) -> Verdict:
        """Learn from the article and judge it. Store errors propagate (see `judge_offline`)."""
        article = self.prepare(domain, blocks, identities, now)
        return self.judge(article, await self.store.observe(article.observation))

    def judge(self, article: PreparedArticle, evidence: DomainEvidence) -> Verdict:
        return judge(article, evidence, self.config)

    def judge_offline(self, article: PreparedArticle) -> Verdict:
        """The verdict without a store (it is down): lexical priors only, nothing learned."""
        return judge(article, None, self.config)
