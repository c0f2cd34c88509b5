"""The one gateway to language models (model strings, structured calls, cache, ledger)."""

from toolkit.llm.cache import ResponseCache, cache_key, default_cache_dir
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
]
