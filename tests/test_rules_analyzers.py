"""The memoised analyzers give the vectorizers' own n-grams, so every matrix a fit sees is the same."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer

from toolkit.rules._analyzers import MemoAnalyzer

TEXTS = [
    "Please always update the CHANGELOG from here on.",
    "For Python files, use 4-space indents; never tabs.",
    "Use tabs for Makefiles.",
    "stm32-bootloader: keep the HAL calls out of main.c",
    "Ça va: émojis 🙂 and naïve café, 3.5 km, v2.0.1",
    "",
    "use TABS for makefiles",
]


@pytest.mark.parametrize(("plain", "memo"), [
    (dict(ngram_range=(1, 2), binary=True, min_df=1, lowercase=True),
     dict(analyzer=MemoAnalyzer(ngram_range=(1, 2), lowercase=True), binary=True, min_df=1)),
    (dict(ngram_range=(1, 2), binary=True, min_df=2, lowercase=True),
     dict(analyzer=MemoAnalyzer(ngram_range=(1, 2), lowercase=True), binary=True, min_df=2)),
])
def test_word_ngrams_match_the_plain_vectorizer(plain: dict, memo: dict) -> None:
    a = CountVectorizer(**plain).fit(TEXTS[:5])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "parameter will not be used" warning either
        b = CountVectorizer(**memo).fit(TEXTS[:5])
    assert a.vocabulary_ == b.vocabulary_
    assert (a.transform(TEXTS) != b.transform(TEXTS)).nnz == 0


def test_char_ngrams_match_the_plain_tfidf() -> None:
    a = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5), min_df=1, lowercase=False,
                        sublinear_tf=True).fit(TEXTS)
    b = TfidfVectorizer(analyzer=MemoAnalyzer(analyzer="char_wb", ngram_range=(2, 5), lowercase=False),
                        min_df=1, sublinear_tf=True).fit(TEXTS)
    assert a.vocabulary_ == b.vocabulary_
    assert np.array_equal(a.transform(TEXTS).toarray(), b.transform(TEXTS).toarray())


def test_settings_keep_apart_and_pickle() -> None:
    low, kept = MemoAnalyzer(ngram_range=(1, 1), lowercase=True), MemoAnalyzer(ngram_range=(1, 1), lowercase=False)
    assert low("Use TABS") == ["use", "tabs"] and kept("Use TABS") == ["Use", "TABS"]
    fitted = CountVectorizer(analyzer=low).fit(TEXTS)
    again = pickle.loads(pickle.dumps(fitted))
    assert again.analyzer == low and again.vocabulary_ == fitted.vocabulary_
