"""Embeddings for memory retrieval and rule selection through the toolkit's semantic layer."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

import numpy as np


@cache
def embedder(name: str = "minilm"):
    """The embedder for ``name`` (``minilm``, ``tfidf``, ``openai/<m>``, ...)."""
    from toolkit.llm import get_embedder  # the one semantic layer, with its cache

    return get_embedder(name)


def embed(texts: Sequence[str], name: str = "minilm") -> np.ndarray:
    """L2-normalised float32 rows, one per text."""
    if not texts:
        return np.zeros((0, 384), dtype=np.float32)
    return np.asarray(embedder(name).embed(list(texts)), dtype=np.float32)
