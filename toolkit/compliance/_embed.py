"""Sentence embeddings for the learned reader, through the semantic layer (``toolkit.llm.get_embedder``).

The reader was fit with ``minilm`` (all-MiniLM-L6-v2 from the packaged weights, rows L2-normalised);
the gateway caches vectors like LLM replies, so a second run embeds nothing.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

DEFAULT_MODEL = "minilm"


@lru_cache(maxsize=4)
def embedder(name: str = DEFAULT_MODEL) -> Any:
    """The gateway's embedder for ``name`` (``minilm``, ``tfidf``, ``openai/...``)."""
    from toolkit.llm import get_embedder

    return get_embedder(name)
