"""The benchmark's shingle metric on tiny cases computed by hand."""

from __future__ import annotations

from collections import Counter

import pytest

from extractors.evaluation import (
    METRICS,
    PageScore,
    aggregate,
    alignment_counts,
    score_aligned,
    score_metrics,
    score_page,
    score_words,
    shingles,
    tokenize,
)


def test_tokens_are_word_runs_with_case_kept_and_punctuation_dropped() -> None:
    assert tokenize("Hello, world! It's 3pm.") == ["Hello", "world", "It", "s", "3pm"]
    assert tokenize("Caf\u00e9 \u6771\u4eac-\u99c5") == ["Caf\u00e9", "\u6771\u4eac", "\u99c5"]
    assert tokenize(None) == [] and tokenize("  ... ") == []


def test_shingles_are_a_multiset_of_word_4_grams() -> None:
    assert shingles(list("abcde")) == Counter({tuple("abcd"): 1, tuple("bcde"): 1})
    assert shingles(list("aaaaa")) == Counter({tuple("aaaa"): 2})
    # Fewer than four tokens: one shingle of all of them; none for no token.
    assert shingles(["a", "b"]) == Counter({("a", "b"): 1})
    assert shingles([]) == Counter()


def test_identical_texts_score_one_and_match_exactly() -> None:
    score = score_page("a b c d e", "a, b. c d e!")
    assert (score.tp, score.fp, score.fn) == (1.0, 0.0, 0.0)
    assert score.precision == score.recall == 1.0 and score.exact


def test_one_changed_word_costs_the_shingles_it_is_in() -> None:
    # gold shingles: abcd, bcde; predicted: abcd, bcdx -> tp 1, fp 1, fn 1, normalised to 1/3.
    score = score_page("a b c d e", "a b c d x")
    assert score.tp == score.fp == score.fn == pytest.approx(1 / 3)
    assert score.precision == score.recall == pytest.approx(0.5)
    assert not score.exact


def test_counts_are_multiset_counts() -> None:
    # gold "a a a a a" has (a,a,a,a) twice; predicting it once is all precision, half recall.
    score = score_page("a a a a a", "a a a a")
    assert (score.tp, score.fp, score.fn) == pytest.approx((0.5, 0.0, 0.5))
    assert score.precision == 1.0 and score.recall == 0.5


def test_case_matters() -> None:
    assert score_page("Hello there", "hello there").precision == 0.0


def test_empty_prediction_does_not_count_towards_precision() -> None:
    score = score_page("a b c d", "")
    assert score.precision is None and score.recall == 0.0
    both_empty = score_page("", "")
    assert both_empty.precision is None and both_empty.recall is None and both_empty.exact
    assert score_page("", "a b").precision == 0.0 and score_page("", "a b").recall is None


def test_averages_are_over_the_pages_that_count_and_f1_is_their_harmonic_mean() -> None:
    pages = [
        PageScore(1.0, 0.0, 0.0, True),  # perfect
        PageScore(0.0, 0.0, 1.0, False),  # NULL on a real article: recall 0, no precision
        PageScore(0.5, 0.25, 0.25, False),  # precision 2/3, recall 2/3
    ]
    scores = aggregate(pages)
    assert scores.precision == pytest.approx((1 + 2 / 3) / 2)
    assert scores.recall == pytest.approx((1 + 0 + 2 / 3) / 3)
    harmonic = 2 * scores.precision * scores.recall / (scores.precision + scores.recall)
    assert scores.f1 == pytest.approx(harmonic)
    assert scores.accuracy == pytest.approx(1 / 3) and scores.pages == 3
    assert aggregate([]).f1 == 0.0


# --- the seeds' own metrics ---


def test_cleaneval_alignment_reproduces_seed_001_table_3() -> None:
    # Test sequence s1 = "totititoti" against the gold standard s2 = "tototiti", one character a
    # token: insertion "to" (2 false negatives), "totiti" unchanged (6 true positives), deletion
    # "toti" (4 false positives).
    assert alignment_counts(list("tototiti"), list("totititoti")) == (6, 4, 2)


def test_alignment_is_ratcliff_obershelp_recursive_longest_runs() -> None:
    # The longest common run ("c d e") first, then the stretches on each side recursively.
    gold, predicted = list("abcdefg"), list("xacdeyfg")
    assert alignment_counts(gold, predicted) == (6, 2, 1)
    # Order matters, unlike a bag of words: a swapped text aligns only its longest run.
    assert alignment_counts(list("abcd"), list("cdab")) == (2, 2, 2)


def test_cleaneval_score_counts_aligned_tokens() -> None:
    score = score_aligned("one two three four", "zero one two three").cleaneval
    assert (score.precision, score.recall) == (pytest.approx(0.75), pytest.approx(0.75))


def test_character_score_weighs_tokens_by_their_letters() -> None:
    # "extraordinary" (13 letters) matches; "a" (1 letter) is missing, "xyz" (3) is extra.
    score = score_aligned("a extraordinary", "extraordinary xyz").characters
    assert score.precision == pytest.approx(13 / 16)
    assert score.recall == pytest.approx(13 / 14)
    # Punctuation and spaces are no characters of content.
    assert score_aligned("Yes, indeed.", "Yes indeed").characters.precision == 1.0


def test_word_score_counts_every_occurrence_as_a_distinct_word() -> None:
    # Gold "the cat and the dog", predicted "the the the cat": two of the three "the"s match.
    score = score_words("the cat and the dog", "the the the cat")
    assert score.precision == pytest.approx(3 / 4)
    assert score.recall == pytest.approx(3 / 5)
    # Word order does not matter at word level (it does for CleanEval).
    assert score_words("a b c", "c b a").precision == 1.0
    assert score_aligned("a b c", "c b a").cleaneval.precision == pytest.approx(1 / 3)


def test_every_metric_treats_an_empty_prediction_like_the_shingle_metric() -> None:
    for score in score_metrics("some gold text here", "").values():
        assert score.precision is None and score.recall == 0.0
    for score in score_metrics("same text", "same text").values():
        assert score.precision == score.recall == 1.0 and score.exact
    assert list(score_metrics("a", "a")) == list(METRICS)
