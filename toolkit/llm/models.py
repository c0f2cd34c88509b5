"""Model strings and the provider registry: every model role asks for its model by string.

``offline`` | ``openai/<model>`` | ``openai-api/<service>/<model>``. New providers register a
factory with :func:`register_provider` (the inspect_ai pattern).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit

from toolkit.errors import UsageError

OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1"


@dataclass(frozen=True)
class ModelSpec:
    """A resolved model string. ``api_key`` is never printed (repr hides it)."""

    string: str
    provider: str
    name: str
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    key_env: str | None = None

    @property
    def is_offline(self) -> bool:
        return self.provider == "offline"

    @property
    def public_base_url(self) -> str | None:
        return strip_credentials(self.base_url)


def strip_credentials(url: str | None) -> str | None:
    """``url`` without user:password and without query parameters (which may carry keys)."""
    if not url:
        return url
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", ""))


ProviderFactory = Callable[[str, str, Mapping[str, str]], ModelSpec]
_PROVIDERS: dict[str, ProviderFactory] = {}


def register_provider(prefix: str, factory: ProviderFactory) -> None:
    """Register ``factory(model_string, rest, environ) -> ModelSpec`` for ``prefix/...``."""
    _PROVIDERS[prefix] = factory


def _offline(s: str, rest: str, env: Mapping[str, str]) -> ModelSpec:
    return ModelSpec(string="offline", provider="offline", name="offline")


def _openai(s: str, rest: str, env: Mapping[str, str]) -> ModelSpec:
    if not rest:
        raise UsageError(f"model {s!r}: expected openai/<model>")
    return ModelSpec(
        string=s,
        provider="openai",
        name=rest,
        base_url=env.get("OPENAI_BASE_URL") or OPENAI_DEFAULT_BASE_URL,
        api_key=env.get("OPENAI_API_KEY"),
        key_env="OPENAI_API_KEY",
    )


def _openai_api(s: str, rest: str, env: Mapping[str, str]) -> ModelSpec:
    service, _, name = rest.partition("/")
    if not service or not name:
        raise UsageError(f"model {s!r}: expected openai-api/<service>/<model>")
    prefix = re.sub(r"[^A-Za-z0-9]", "_", service).upper()
    base_url = env.get(f"{prefix}_BASE_URL")
    if not base_url:
        raise UsageError(f"model {s!r}: set {prefix}_BASE_URL to the service's OpenAI-compatible URL")
    return ModelSpec(
        string=s,
        provider="openai-api",
        name=name,
        base_url=base_url,
        api_key=env.get(f"{prefix}_API_KEY") or "EMPTY",
        key_env=f"{prefix}_API_KEY",
    )


register_provider("offline", _offline)
register_provider("openai", _openai)
register_provider("openai-api", _openai_api)


def parse_model(model: str, environ: Mapping[str, str] | None = None) -> ModelSpec:
    """Resolve a model string through the provider registry."""
    env = os.environ if environ is None else environ
    model = (model or "").strip()
    if model == "offline":
        return _PROVIDERS["offline"](model, "", env)
    prefix, sep, rest = model.partition("/")
    if not sep or prefix not in _PROVIDERS:
        known = ", ".join(["offline", "openai/<model>", "openai-api/<service>/<model>"])
        raise UsageError(f"unknown model string {model!r}; use one of: {known}")
    return _PROVIDERS[prefix](model, rest, env)
