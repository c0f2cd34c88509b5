"""Sentence vectors for the rules package, through the one semantic layer (``toolkit.llm``).

``embed(texts, model)`` returns L2-normalised float32 rows. The embedder comes from
``toolkit.llm.get_embedder`` (model strings ``minilm``, ``tfidf`` (a labelled baseline),
``openai/<m>``, ``openai-api/<svc>/<m>``) with its cache.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

import numpy as np

DEFAULT_EMBEDDER = "minilm"


@cache
def _embedder(model: str):  # noqa: ANN202 - the gateway's embedder object
    from toolkit.llm import get_embedder

    return get_embedder(model)


_MEMO: dict[tuple[str, str], np.ndarray] = {}


def embed(texts: Sequence[str], model: str = DEFAULT_EMBEDDER) -> np.ndarray:
    """(n, d) float32 rows, L2-normalised, one per text (cached by the semantic layer, and
    memoised in-process so repeated rule texts cost one look-up)."""
    texts = list(texts)
    if not texts:
        return np.zeros((0, 1), dtype=np.float32)
    todo = list(dict.fromkeys(t for t in texts if (model, t) not in _MEMO))
    if todo:
        out = np.asarray(_embedder(model).embed(todo), dtype=np.float32)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        for t, v in zip(todo, out / np.where(norms == 0, 1.0, norms), strict=True):
            _MEMO[(model, t)] = v
    return np.stack([_MEMO[(model, t)] for t in texts])
