"""Fact features for linear gates: TF-IDF reduced by truncated SVD, or any embedding function.

Rows are L2-normalised and a constant 1 is appended (the linear utility model's intercept),
so every feature vector has norm at most sqrt(2) (the paper's bound L). The featuriser is
fitted on fact *texts only* (never labels); the diagnostic fits it once per benchmark on all
users' texts, the way a frozen embedding model would be shared (memory-gating paper B.2 uses
a fixed embedding model).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.decomposition import TruncatedSVD
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.utils.validation import check_is_fitted

__all__ = ["Featurizer", "TfidfSVD", "EmbeddingFeatures", "FEATURIZERS", "register_featurizer",
           "make_featurizer", "finish_rows"]


class Featurizer(Protocol):
    """Texts -> (n, dim + 1) float array; ``fit`` on texts only."""

    def fit(self, texts: Sequence[str], y: object = None) -> Featurizer: ...

    def transform(self, texts: Sequence[str]) -> np.ndarray: ...


def finish_rows(z: np.ndarray) -> np.ndarray:
    """L2-normalise rows (zero rows stay zero) and append the intercept column."""
    z = np.asarray(z, dtype=np.float64)
    norms = np.linalg.norm(z, axis=1, keepdims=True)
    z = z / np.where(norms > 0, norms, 1.0)
    return np.hstack([z, np.ones((z.shape[0], 1))])


class TfidfSVD(BaseEstimator, TransformerMixin):
    """Word and bigram TF-IDF (sublinear tf) -> TruncatedSVD(``dim``) -> unit rows + intercept."""

    def __init__(self, dim: int = 32, min_df: int = 2, ngram_max: int = 2,
                 random_state: int | None = 0) -> None:
        self.dim = dim
        self.min_df = min_df
        self.ngram_max = ngram_max
        self.random_state = random_state

    def fit(self, texts: Sequence[str], y: object = None) -> TfidfSVD:
        texts = list(texts)
        min_df = self.min_df if len(texts) >= 4 * self.min_df else 1
        self.vectorizer_ = TfidfVectorizer(sublinear_tf=True, min_df=min_df,
                                           ngram_range=(1, self.ngram_max), dtype=np.float64)
        tf = self.vectorizer_.fit_transform(texts)
        k = int(max(1, min(self.dim, tf.shape[1] - 1, tf.shape[0] - 1)))
        self.svd_ = TruncatedSVD(n_components=k, algorithm="randomized", n_iter=7,
                                 random_state=self.random_state).fit(tf)
        self.n_features_out_ = k + 1
        return self

    def transform(self, texts: Sequence[str]) -> np.ndarray:
        check_is_fitted(self, "svd_")
        return finish_rows(self.svd_.transform(self.vectorizer_.transform(list(texts))))


class EmbeddingFeatures(BaseEstimator, TransformerMixin):
    """Wrap an embedding function ``texts -> (n, k) array`` (e.g. a sentence-embedding API)."""

    def __init__(self, embed: Callable[[list[str]], np.ndarray] | None = None) -> None:
        self.embed = embed

    def fit(self, texts: Sequence[str], y: object = None) -> EmbeddingFeatures:
        if self.embed is None:
            raise ValueError("EmbeddingFeatures needs an embed function")
        self.fitted_ = True
        return self

    def transform(self, texts: Sequence[str]) -> np.ndarray:
        check_is_fitted(self, "fitted_")
        return finish_rows(np.asarray(self.embed(list(texts)), dtype=np.float64))


FEATURIZERS: dict[str, Callable[..., Featurizer]] = {"tfidf-svd": TfidfSVD}


def register_featurizer(name: str, factory: Callable[..., Featurizer]) -> None:
    """Make a featuriser available by name, e.g. one wrapping an embedding model."""
    FEATURIZERS[name] = factory


def make_featurizer(name: str = "tfidf-svd", **params: object) -> Featurizer:
    """Build a registered featuriser."""
    if name not in FEATURIZERS:
        raise ValueError(f"featurizer {name!r}: use one of {', '.join(sorted(FEATURIZERS))}")
    return FEATURIZERS[name](**params)
