"""The one gateway to language models and embedders (model strings, structured calls, vectors,
cache, replay, ledger)."""

from toolkit.llm.cache import ResponseCache, cache_key, default_cache_dir
from toolkit.llm.embeddings import (
    EMBEDDERS,
    CachedEmbedder,
    Embedder,
    EmbedderError,
    MiniLMEmbedder,
    OpenAIEmbedder,
    TfidfEmbedder,
    embedding_cache_key,
    get_embedder,
    register_embedder,
)
from toolkit.llm.gateway import (
    CacheMissError,
    ChatModel,
    DeadlineExceeded,
    Gateway,
    LLMError,
    Outcome,
    StructuredRequest,
    parse_structured,
    run_sync,
)
from toolkit.llm.ledger import UsageLedger
from toolkit.llm.models import ModelSpec, parse_model, register_provider, strip_credentials
from toolkit.llm.prompts import Prompt, load_prompt

__all__ = [
    "CacheMissError", "ChatModel", "DeadlineExceeded", "Gateway", "LLMError", "ModelSpec",
    "Outcome", "Prompt", "ResponseCache", "StructuredRequest", "UsageLedger", "cache_key",
    "default_cache_dir", "load_prompt", "parse_model", "parse_structured", "register_provider",
    "run_sync", "strip_credentials",
    # embedders (issue 13)
    "EMBEDDERS", "CachedEmbedder", "Embedder", "EmbedderError", "MiniLMEmbedder", "OpenAIEmbedder",
    "TfidfEmbedder", "embedding_cache_key", "get_embedder", "register_embedder",
]
