"""Retrievers over a growing memory bank: TF-IDF offline, dense embeddings pluggable.

A retriever is anything with ``search(bank, query, k) -> list[(index, score)]`` where
``bank`` is the list of fact texts in the memory bank *as it stood* when the query was
asked (the labelling pipeline passes ``M_{t'-1}``). Embedding models plug in through the
small :class:`Embedder` protocol (``embed(texts) -> array``) wrapped by
:class:`EmbeddingRetriever`; :data:`RETRIEVERS` names the built-in ones.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

import numpy as np

__all__ = ["Embedder", "EmbeddingRetriever", "RETRIEVERS", "Retriever", "TfidfRetriever",
           "make_retriever"]


@runtime_checkable
class Retriever(Protocol):
    """Top-k search of a query against the bank's texts; returns (bank index, score), best first."""

    def search(self, bank: Sequence[str], query: str, k: int) -> list[tuple[int, float]]: ...


@runtime_checkable
class Embedder(Protocol):
    """Maps texts to dense vectors (one row per text), e.g. an embeddings API or a local model."""

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def _top_k(scores: np.ndarray, k: int) -> list[tuple[int, float]]:
    """Indices of the k highest scores (> 0), ties broken by lower index for determinism."""
    order = np.lexsort((np.arange(len(scores)), -scores))[:k]
    return [(int(i), float(scores[i])) for i in order if scores[i] > 0]


class TfidfRetriever:
    """Cosine similarity of TF-IDF vectors fit on the bank (refit only when the bank changes)."""

    def __init__(self, sublinear_tf: bool = True) -> None:
        self.sublinear_tf = sublinear_tf
        self._key: tuple[int, int] | None = None
        self._vec = None
        self._mat = None

    def _index(self, bank: Sequence[str]) -> None:
        from sklearn.feature_extraction.text import TfidfVectorizer

        key = (len(bank), hash(tuple(bank)))
        if key != self._key:
            self._vec = TfidfVectorizer(sublinear_tf=self.sublinear_tf).fit(bank)
            self._mat = self._vec.transform(bank)
            self._key = key

    def search(self, bank: Sequence[str], query: str, k: int) -> list[tuple[int, float]]:
        """Top-k bank entries by TF-IDF cosine similarity to ``query``."""
        if not bank or not query.strip():
            return []
        self._index(bank)
        q = self._vec.transform([query])
        scores = np.asarray((self._mat @ q.T).todense()).ravel()
        return _top_k(scores, k)


class EmbeddingRetriever:
    """Cosine similarity of dense embeddings; embeddings are cached per text."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self._cache: dict[str, np.ndarray] = {}

    def _vectors(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 0))
        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing:
            for t, v in zip(missing, np.asarray(self.embedder.embed(missing), dtype=float),
                            strict=True):
                n = float(np.linalg.norm(v))
                self._cache[t] = v / n if n > 0 else v
        return np.stack([self._cache[t] for t in texts])

    def prime(self, texts: Sequence[str]) -> EmbeddingRetriever:
        """Embed ``texts`` in one batch now (e.g. every fact that will enter the bank), so
        searches do not embed the bank a few texts at a time."""
        self._vectors(list(dict.fromkeys(texts)))
        return self

    def search(self, bank: Sequence[str], query: str, k: int) -> list[tuple[int, float]]:
        """Top-k bank entries by cosine similarity of their embeddings to the query's."""
        if not bank or not query.strip():
            return []
        scores = self._vectors(bank) @ self._vectors([query])[0]
        return _top_k(scores, k)


#: built-in retrievers by name
RETRIEVERS: dict[str, Callable[[], Retriever]] = {"tfidf": TfidfRetriever}


def make_retriever(spec: str | Retriever) -> Retriever:
    """A retriever from its registry name (``"tfidf"``, the lexical baseline), an embedder model
    string (``"minilm"``: cosine of sentence embeddings through the gateway's cache), or an
    object already implementing it."""
    if isinstance(spec, str):
        if spec in RETRIEVERS:
            return RETRIEVERS[spec]()
        from toolkit.errors import UsageError
        from toolkit.llm import get_embedder

        try:  # an embedder model string: minilm, openai/<m>, openai-api/<svc>/<m>
            return EmbeddingRetriever(get_embedder(spec))
        except UsageError:
            raise ValueError(f"unknown retriever {spec!r}; known: {sorted(RETRIEVERS)} or an "
                             "embedder model string (minilm, openai/<model>, ...)") from None
    if not isinstance(spec, Retriever):
        raise TypeError("a retriever needs a search(bank, query, k) method")
    return spec
