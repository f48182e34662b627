"""What the near-duplicate index stores and compares: a pure function from text to fingerprint.

text --normalise--> words --word 5-grams--> 32-bit shingle hashes --MinHash (datasketch's
"affine32" permutations, applied to all shingles at once with numpy)--> 256 min-hashes, of which

- the first `bands x rows` (full 32-bit values) are hashed band by band into LSH bucket ids,
- all 256, cut to their lowest 4 bits (b-bit minwise hashing, Li & Koenig 2010), form the
  128-byte sketch stored once per document and used to confirm candidates.

`fingerprint()` depends on nothing but its arguments (no I/O, no clock), so it can run in a worker
process; the indexes (Redis, embedded) only store and compare fingerprints.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import re
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from statistics import NormalDist

import numpy as np

# --- What a document is to the index ----------------------------------------------------------

# Word 5-grams: two different stories (even on one topic, with the same people and places) share
# almost none of them (measured Jaccard <= 0.03 on the fixture's generator), while one edited word
# changes only 5 of a few hundred.
SHINGLE_WORDS = 5
# Words beyond this are ignored by the near-duplicate sketch (the content hash still covers the
# whole text): bounds time and memory on hostile input at ~100x a long article.
MAX_SHINGLE_WORDS = 100_000
# Shingles whose permutations are computed at once: bounds the (shingles x NUM_PERM) work array.
SHINGLE_CHUNK = 4096

# --- MinHash ----------------------------------------------------------------------------------

# Min-hash values per document. The estimate of a Jaccard similarity J has a standard error of
# sqrt(J(1-J)/NUM_PERM): 0.025 at J = 0.8, a narrow band of doubt around the threshold.
NUM_PERM = 256
# datasketch's default seed: every worker must derive the same permutations.
PERMUTATION_SEED = 1
# Bits kept of each min-hash in the stored sketch (b-bit minwise hashing): two different values
# agree by chance with probability 1/16, which the estimator removes; at J = 0.8 the standard error
# grows from 0.0250 to 0.0260, while the sketch shrinks from 1 KB (uint32) to 128 bytes.
SKETCH_BITS = 4
CHANCE_AGREEMENT = 1.0 / (1 << SKETCH_BITS)

# --- LSH banding ------------------------------------------------------------------------------

# Thresholds the index accepts. Above 0.98 only exact copies qualify (the content hash finds
# them) and the optimiser has no two bands left; below 0.3 texts are related, not copies, and
# single-row bands would make every shared phrase a candidate.
THRESHOLD_RANGE = (0.3, 0.98)
# Min-hashes spent on LSH bands (the rest only sharpen the confirmation). Each band costs one
# Redis key per indexed document (~140 bytes), so this sets the memory per document.
LSH_HASH_VALUES = 28
# (false positive, false negative) weights for datasketch's band optimiser. A false candidate costs
# one GET and a 128-byte comparison inside the script; a missed one is a duplicate let through.
LSH_WEIGHTS = (0.02, 0.98)
# Bytes of each band's bucket id (48 bits: a chance collision among 10^8 buckets is ~2e-7 and only
# costs one needless comparison).
BUCKET_ID_BYTES = 6

# --- Confirmation -----------------------------------------------------------------------------

# A pair whose true Jaccard equals the threshold is confirmed with this probability. The estimate
# scatters around the truth, so "estimate >= threshold" would let through half the pairs at the
# threshold; the cut-off sits lower, by the matching number of standard errors (0.767 for
# threshold 0.8: pairs at J >= 0.83 are confirmed with probability > 0.99, at 0.7 with 0.014, at
# 0.65 with 0.0001).
CONFIRM_RECALL_AT_THRESHOLD = 0.9

_NON_WORD = re.compile(r"\W+")

# Odd 64-bit multipliers (fractional parts of sqrt(p) for the first primes): a shingle's hash is
# sum(word_hash[i] * multiplier[i]) mod 2^64, high 32 bits.
_SHINGLE_MULTIPLIERS = np.array(
    [0x6A09E667F3BCC909, 0xBB67AE8584CAA73B, 0x3C6EF372FE94F82B, 0xA54FF53A5F1D36F1,
     0x510E527FADE682D1, 0x9B05688C2B3E6C1F, 0x1F83D9ABFB41BD6B, 0x5BE0CD19137E2179],
    dtype=np.uint64,
)  # fmt: skip
_SHIFT_32 = np.uint64(32)
# MurmurHash3's 32-bit finaliser, as datasketch's "affine32" scheme pre-mixes each input hash.
_FMIX32 = (np.uint32(16), np.uint32(0x85EBCA6B), np.uint32(13), np.uint32(0xC2B2AE35))


def normalize(text: str) -> str:
    """Case, punctuation and spacing normalised away: the words of the text, one space apart."""
    return _NON_WORD.sub(" ", text.casefold()).strip()


def content_hash(text: str) -> str:
    """Hash of the normalised text: exact duplicates (up to case, punctuation, spacing) share it."""
    return _content_digest(normalize(text)).hexdigest()


def _content_digest(normalized: str) -> hashlib.blake2b:
    return hashlib.blake2b(normalized.encode("utf-8"), digest_size=16)


@dataclass(frozen=True)
class LshParams:
    """Everything that decides what a fingerprint is and when two of them are near-duplicates."""

    threshold: float
    bands: int
    rows: int
    min_matches: int  # sketch positions (of NUM_PERM) that must agree to confirm a candidate
    shingle_words: int = SHINGLE_WORDS
    num_perm: int = NUM_PERM
    seed: int = PERMUTATION_SEED

    @classmethod
    def for_threshold(cls, threshold: float) -> LshParams:
        return _params_for_threshold(float(threshold))

    @property
    def layout(self) -> str:
        """The stored format: an index built with one layout cannot be read with another."""
        return (
            f"minhash-affine32/seed={self.seed}/perm={self.num_perm}/shingle={self.shingle_words}"
            f"/sketch={SKETCH_BITS}bit/bands={self.bands}x{self.rows}"
            f"/bucket={BUCKET_ID_BYTES * 8}bit"
        )

    @property
    def sketch_bytes(self) -> int:
        return self.num_perm * SKETCH_BITS // 8

    def similarity(self, matches: int) -> float:
        """Estimated Jaccard similarity from the number of agreeing sketch positions."""
        estimate = (matches / self.num_perm - CHANCE_AGREEMENT) / (1.0 - CHANCE_AGREEMENT)
        return min(1.0, max(0.0, estimate))


@lru_cache(maxsize=16)
def _params_for_threshold(threshold: float) -> LshParams:
    low, high = THRESHOLD_RANGE
    if not low <= threshold <= high:
        raise ValueError(f"near-duplicate threshold must be in [{low}, {high}], got {threshold}")
    from datasketch import MinHashLSH  # its optimiser imports scipy: only when an index is built

    lsh = MinHashLSH(threshold=threshold, num_perm=LSH_HASH_VALUES, weights=LSH_WEIGHTS)
    return LshParams(
        threshold=threshold,
        bands=lsh.b,
        rows=lsh.r,
        min_matches=confirm_min_matches(threshold, NUM_PERM, CHANCE_AGREEMENT),
    )


def confirm_min_matches(
    threshold: float, num_perm: int, chance: float, recall: float = CONFIRM_RECALL_AT_THRESHOLD
) -> int:
    """Agreeing sketch positions needed so that a pair at exactly `threshold` passes with
    probability `recall` (normal approximation of the binomial count)."""
    agree = threshold + (1.0 - threshold) * chance  # P(one position agrees) at J = threshold
    spread = math.sqrt(num_perm * agree * (1.0 - agree))
    z = NormalDist().inv_cdf(recall)
    return max(1, min(num_perm, math.ceil(num_perm * agree - z * spread)))


@dataclass(frozen=True)
class Fingerprint:
    """A document as the index sees it (picklable: computed wherever there is a free core)."""

    content_hash: str  # hex blake2b of the normalised text (the item's `content_hash`)
    docnum: int  # 53 bits of the content hash: names the document's record in the index
    sketch: bytes  # SKETCH_BITS of each of NUM_PERM min-hashes, packed
    buckets: tuple[str, ...]  # one LSH bucket id (hex) per band
    words: int  # words the sketch covers
    # The blocks it was made of (fingerprint_blocks), for `revised`; not part of its identity.
    parts: TextParts | None = field(default=None, compare=False, repr=False)

    def revised(self, texts: Sequence[str]) -> Fingerprint | None:
        """The fingerprint of the text now made of `texts` (the notices stage took blocks out):
        the blocks it was made of are not normalised or hashed again. None without parts, or
        when no word is left."""
        if self.parts is None:
            return None
        return fingerprint_blocks(texts, self.parts.params, self.parts)


@dataclass(frozen=True)
class TextParts:
    """A text's blocks, each normalised and its words hashed: the first half of a fingerprint,
    kept so that the text without some blocks is fingerprinted from it."""

    texts: tuple[str, ...]  # the blocks as given
    normalized: tuple[str, ...]  # normalize() of each
    word_hashes: bytes  # CRC-32 of every word of every block, in order (uint32, native order)
    word_ends: tuple[int, ...]  # where each block's words end in word_hashes, in words
    params: LshParams

    def lookup(self) -> Callable[[str], tuple[str, np.ndarray] | None]:
        """A function giving the normalised block and its word hashes of a text that is one of
        the blocks (None for another text). Found by hashing, not by scanning the blocks: an
        article of many thousands of blocks is revised in linear time, in the reactor."""
        where: dict[str, int] = {}
        for i, text in enumerate(self.texts):
            where.setdefault(text, i)
        every_word = np.frombuffer(self.word_hashes, dtype=np.uint32)

        def block(text: str) -> tuple[str, np.ndarray] | None:
            i = where.get(text)
            if i is None:
                return None
            start = self.word_ends[i - 1] if i else 0
            return self.normalized[i], every_word[start : self.word_ends[i]]

        return block


def fingerprint(text: str, params: LshParams) -> Fingerprint | None:
    """The fingerprint of `text`, or None when it has no words (nothing to compare)."""
    normalized = normalize(text)
    if not normalized:
        return None
    words = normalized.encode("utf-8").split(b" ", MAX_SHINGLE_WORDS)[:MAX_SHINGLE_WORDS]
    return _fingerprint_of(normalized, word_hashes(words), params)


def fingerprint_blocks(
    texts: Sequence[str], params: LshParams, known: TextParts | None = None
) -> Fingerprint | None:
    """`fingerprint("\n".join(texts))`, made block by block and keeping its parts (`revised`).
    The same value: a newline is no word character, so normalising the joined text is joining
    the normalised blocks that have words with single spaces. Blocks `known` holds are taken
    from it."""
    normalized: list[str] = []
    hashes: list[np.ndarray] = []
    known_block = known.lookup() if known is not None else None
    for text in texts:
        found = known_block(text) if known_block is not None else None
        if found is None:
            block = normalize(text)
            words = block.encode("utf-8").split(b" ", MAX_SHINGLE_WORDS)[:MAX_SHINGLE_WORDS]
            found = block, word_hashes(words) if block else np.empty(0, dtype=np.uint32)
        normalized.append(found[0])
        hashes.append(found[1])
    joined = " ".join(block for block in normalized if block)
    if not joined:
        return None
    every_word = np.concatenate(hashes)
    ends = tuple(itertools.accumulate(map(len, hashes)))
    parts = TextParts(tuple(texts), tuple(normalized), every_word.tobytes(), ends, params)
    return _fingerprint_of(joined, every_word[:MAX_SHINGLE_WORDS], params, parts)


def _fingerprint_of(
    normalized: str, hashes: np.ndarray, params: LshParams, parts: TextParts | None = None
) -> Fingerprint:
    digest = _content_digest(normalized)
    values = minhash(shingles_of(hashes, params.shingle_words), params.num_perm, params.seed)
    return Fingerprint(
        content_hash=digest.hexdigest(),
        docnum=int.from_bytes(digest.digest()[:8], "big") >> 11,
        sketch=pack_sketch(values),
        buckets=bucket_ids(values, params.bands, params.rows),
        words=len(hashes),
        parts=parts,
    )


def shingle_set(text: str, shingle_words: int = SHINGLE_WORDS) -> set[tuple[str, ...]]:
    """The word n-grams themselves (what the shingle hashes stand for)."""
    words = normalize(text).split()
    width = min(shingle_words, len(words))
    return {tuple(words[i : i + width]) for i in range(len(words) - width + 1)}


def true_jaccard(a: str, b: str, shingle_words: int = SHINGLE_WORDS) -> float:
    """The exact Jaccard similarity of two texts' shingle sets: what the sketches estimate
    (for tests and benchmarks; the index never computes it)."""
    left, right = shingle_set(a, shingle_words), shingle_set(b, shingle_words)
    return len(left & right) / len(left | right) if left or right else 1.0


def shingle_hashes(words: list[bytes], shingle_words: int = SHINGLE_WORDS) -> np.ndarray:
    """32-bit hashes of the word n-grams (one n-gram of all words if there are fewer)."""
    return shingles_of(word_hashes(words), shingle_words)


def word_hashes(words: list[bytes]) -> np.ndarray:
    """CRC-32 of each word."""
    return np.fromiter(map(zlib.crc32, words), dtype=np.uint32, count=len(words))


def shingles_of(hashes: np.ndarray, shingle_words: int = SHINGLE_WORDS) -> np.ndarray:
    """32-bit hashes of the word n-grams, from the words' hashes."""
    if shingle_words > len(_SHINGLE_MULTIPLIERS):
        raise ValueError(f"shingles of at most {len(_SHINGLE_MULTIPLIERS)} words")
    wide = hashes.astype(np.uint64)
    width = min(shingle_words, len(wide))
    count = len(wide) - width + 1
    combined = wide[:count] * _SHINGLE_MULTIPLIERS[0]
    for offset in range(1, width):
        combined += wide[offset : offset + count] * _SHINGLE_MULTIPLIERS[offset]
    return (combined >> _SHIFT_32).astype(np.uint32)


# Permutation parameters computed in another process and handed over (adopt_permutations).
_ADOPTED: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}


def adopt_permutations(num_perm: int, seed: int, table: tuple[np.ndarray, np.ndarray]) -> None:
    """Use `permutations(num_perm, seed)` computed elsewhere: the extraction workers get them
    at their start, so they never import datasketch (and scipy with it: 1.5 s per worker)."""
    _ADOPTED[(num_perm, seed)] = table


@lru_cache(maxsize=4)
def permutations(num_perm: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """datasketch's affine32 permutation parameters (a, b): created once, shared by every text."""
    if (adopted := _ADOPTED.get((num_perm, seed))) is not None:
        return adopted
    from datasketch import MinHash

    a, b = MinHash(num_perm=num_perm, seed=seed, scheme="affine32").permutations
    return a.astype(np.uint32), b.astype(np.uint32)


def minhash(
    hashes: np.ndarray, num_perm: int = NUM_PERM, seed: int = PERMUTATION_SEED
) -> np.ndarray:
    """The MinHash values of a set of 32-bit hashes: exactly what datasketch's
    `MinHash(num_perm, seed, hashfunc=<identity>).update_batch(hashes)` holds, computed for all
    permutations at once with numpy (and in chunks, so memory stays bounded)."""
    a, b = permutations(num_perm, seed)
    result = np.full(num_perm, np.iinfo(np.uint32).max, dtype=np.uint32)
    shift1, mult1, shift2, mult2 = _FMIX32
    for start in range(0, len(hashes), SHINGLE_CHUNK):
        h = hashes[start : start + SHINGLE_CHUNK]
        h = h ^ (h >> shift1)
        h *= mult1
        h ^= h >> shift2
        h *= mult2
        h ^= h >> shift1
        permuted = np.multiply.outer(h, a)  # uint32 arithmetic wraps: a*h + b mod 2^32
        permuted += b
        np.minimum(result, permuted.min(axis=0), out=result)
    return result


def pack_sketch(values: np.ndarray) -> bytes:
    """The lowest 4 bits (SKETCH_BITS) of each value, two values a byte, the first one high."""
    low = (values & 0x0F).astype(np.uint8)
    return ((low[0::2] << 4) | low[1::2]).tobytes()


def sketch_matches(left: bytes, right: bytes) -> int:
    """Positions where two 4-bit sketches agree (the count the Redis script computes too)."""
    diff = np.frombuffer(left, dtype=np.uint8) ^ np.frombuffer(right, dtype=np.uint8)
    return int(np.count_nonzero((diff & 0x0F) == 0) + np.count_nonzero((diff & 0xF0) == 0))


def bucket_ids(values: np.ndarray, bands: int, rows: int) -> tuple[str, ...]:
    """One id per band: a hash of the band's index and its `rows` full min-hash values."""
    band_bytes = values[: bands * rows].astype("<u4").tobytes()
    step = rows * 4
    return tuple(
        hashlib.blake2b(
            band_bytes[i * step : (i + 1) * step], digest_size=BUCKET_ID_BYTES, salt=bytes([i])
        ).hexdigest()
        for i in range(bands)
    )
