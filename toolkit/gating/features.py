"""Fact features for linear gates: TF-IDF reduced by truncated SVD, a sentence embedder reduced
by PCA (:func:`featurizer_for`), or any embedding function.

Rows are L2-normalised and a constant 1 is appended (the linear utility model's intercept),
so every feature vector has norm at most sqrt(2) (the paper's bound L). The featuriser is
fitted on fact *texts only* (never labels); the diagnostic fits it once per benchmark on all
users' texts, the way a frozen embedding model would be shared (memory-gating paper B.2 uses
a fixed embedding model).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.decomposition import TruncatedSVD
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.utils.validation import check_is_fitted

__all__ = ["Featurizer", "TfidfSVD", "EmbeddingFeatures", "EmbedderPCA", "FEATURIZERS",
           "register_featurizer", "make_featurizer", "finish_rows", "featurizer_for"]


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


class EmbedderPCA(BaseEstimator, TransformerMixin):
    """A sentence embedder's vectors (B.2: "the embedding as the linear feature") projected by
    PCA to ``dim`` components -> unit rows + intercept.

    The projection keeps the linear bandits' matrices as small as the TF-IDF path's (their cost
    grows with the square of the width) and is fit on fact texts only. ``dim=None`` keeps the
    embedder's full width. Vectors come from the gateway's cache when present; those computed
    in :meth:`fit` are reused by :meth:`transform` in the same process.
    """

    def __init__(self, embedder: Any = None, dim: int | None = 64,
                 random_state: int | None = 0) -> None:
        self.embedder = embedder
        self.dim = dim
        self.random_state = random_state

    def _embed(self, texts: list[str]) -> np.ndarray:
        memo = getattr(self, "_memo", None) or {}
        missing = [t for t in dict.fromkeys(texts) if t not in memo]
        if missing:
            memo = {**memo, **dict(zip(missing, self.embedder.embed(missing), strict=True))}
        return np.stack([memo[t] for t in texts]) if texts else np.zeros((0, 0), np.float32)

    def fit(self, texts: Sequence[str], y: object = None) -> EmbedderPCA:
        from sklearn.decomposition import PCA

        if self.embedder is None:
            raise ValueError("EmbedderPCA needs an embedder (toolkit.llm.get_embedder)")
        texts = list(texts)
        uniq = list(dict.fromkeys(texts))
        self._memo = dict(zip(uniq, self.embedder.embed(uniq), strict=True))
        z = np.stack([self._memo[t] for t in uniq]).astype(np.float64)
        if self.dim is None or self.dim >= z.shape[1]:
            self.pca_ = None
            self.n_features_out_ = z.shape[1] + 1
        else:
            k = int(max(1, min(self.dim, z.shape[0] - 1)))
            self.pca_ = PCA(n_components=k, svd_solver="randomized",
                            random_state=self.random_state).fit(z)
            self.n_features_out_ = k + 1
        return self

    def transform(self, texts: Sequence[str]) -> np.ndarray:
        check_is_fitted(self, "n_features_out_")
        z = self._embed(list(texts)).astype(np.float64)
        return finish_rows(z if self.pca_ is None else self.pca_.transform(z))


def featurizer_for(embedder: str = "tfidf", *, dim: int | None = 64, seed: int = 0,
                   gateway: Any = None) -> Featurizer:
    """Gating features by embedder model string: ``tfidf`` is the lexical baseline (TF-IDF
    unigrams+bigrams -> truncated SVD); any other string (``minilm``, ``openai/<m>``, ...) is a
    sentence embedder through the gateway, projected by PCA to ``dim``."""
    if embedder == "tfidf":
        return TfidfSVD(dim=int(dim or 64), random_state=seed)
    from toolkit.llm import get_embedder

    return EmbedderPCA(get_embedder(embedder, gateway), dim=dim, random_state=seed)


FEATURIZERS: dict[str, Callable[..., Featurizer]] = {"tfidf-svd": TfidfSVD,
                                                     "embedder-pca": EmbedderPCA}


def register_featurizer(name: str, factory: Callable[..., Featurizer]) -> None:
    """Make a featuriser available by name, e.g. one wrapping an embedding model."""
    FEATURIZERS[name] = factory


def make_featurizer(name: str = "tfidf-svd", **params: object) -> Featurizer:
    """Build a registered featuriser."""
    if name not in FEATURIZERS:
        raise ValueError(f"featurizer {name!r}: use one of {', '.join(sorted(FEATURIZERS))}")
    return FEATURIZERS[name](**params)
