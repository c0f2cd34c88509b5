"""scikit-learn text analyzers whose output is memoised per text (the same n-grams, computed once).

The admitter's and the resolver's heads fit a word n-gram ``CountVectorizer`` (and the admitter a
character n-gram ``TfidfVectorizer``) in every fold of every parameter their cross-validation
tries, and transform the same development texts each time: a cold ``prefmem reproduce protocol``
spent about 19 of its 170 CPU-seconds outside the embedder re-tokenising texts it had already
read. :class:`MemoAnalyzer` is scikit-learn's own analyzer for the given settings, its output kept
per (settings, text), passed as the vectorizer's ``analyzer``: the n-grams, so the vocabulary, the
matrices and every fitted number, are those of the vectorizer built with the settings themselves
(``tests/test_rules_analyzers.py`` checks the matrices equal).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

__all__ = ["MemoAnalyzer"]


@lru_cache(maxsize=8)
def _analyzer(settings: tuple[tuple[str, Any], ...]) -> Any:
    from sklearn.feature_extraction.text import CountVectorizer

    return CountVectorizer(**dict(settings)).build_analyzer()


@lru_cache(maxsize=1 << 17)
def _grams(settings: tuple[tuple[str, Any], ...], doc: str) -> tuple[str, ...]:
    return tuple(_analyzer(settings)(doc))


class MemoAnalyzer:
    """A picklable analyzer: ``CountVectorizer(**settings).build_analyzer()`` with its output
    memoised per text. ``settings`` are the vectorizer's analysis parameters (``analyzer``,
    ``ngram_range``, ``lowercase``, ...); the vectorizer that takes this object as its
    ``analyzer`` keeps its own counting parameters (``binary``, ``min_df``, TF-IDF weighting)."""

    def __init__(self, **settings: Any) -> None:
        self.settings = tuple(sorted(settings.items()))

    def __call__(self, doc: str) -> list[str]:
        return list(_grams(self.settings, doc))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MemoAnalyzer) and other.settings == self.settings

    def __hash__(self) -> int:
        return hash(self.settings)

    def __repr__(self) -> str:
        return f"MemoAnalyzer({', '.join(f'{k}={v!r}' for k, v in self.settings)})"
