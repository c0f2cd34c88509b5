"""The one gateway to language models: structured calls, retries, cache, replay, ledger.

Every model role builds :class:`StructuredRequest` objects and sends them through
:meth:`ChatModel.run`. A reply is parsed against a pydantic model; a malformed reply is
re-asked once with the validation error, then becomes an ``unknown`` :class:`Outcome`
that callers count separately (never a pass or a fail). One retry layer only: the
``openai`` client's own retries are off.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import email.utils
import json
import random
import re
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ValidationError

from toolkit._progress import progress_enabled
from toolkit.errors import PrefmemError
from toolkit.llm.cache import CACHE_MODES, ResponseCache, cache_key
from toolkit.llm.ledger import UsageLedger
from toolkit.llm.models import ModelSpec, parse_model

T = TypeVar("T", bound=BaseModel)
R = TypeVar("R")

RETRY_STATUS = frozenset({408, 409, 429}) | frozenset(range(500, 600))


class LLMError(PrefmemError):
    """A model call failed for good (after retries, or on a non-retryable status)."""


class CacheMissError(LLMError):
    """Replay mode found no cached response for a call."""


class DeadlineExceeded(LLMError):
    """The run deadline passed before the call could finish."""


@dataclass(frozen=True)
class StructuredRequest(Generic[T]):
    """One structured call: chat messages, the pydantic model of the answer, and its role."""

    messages: tuple[dict[str, str], ...]
    schema: type[T]
    role: str = "default"
    prompt_version: str | None = None
    id: str | None = None


@dataclass
class Outcome(Generic[T]):
    """The result of a structured call. ``status`` is ``ok`` or ``unknown`` (malformed twice)."""

    status: Literal["ok", "unknown"]
    value: T | None = None
    error: str | None = None
    cached: bool = False
    attempts: int = 0
    id: str | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def _redact(text: str, secret: str | None) -> str:
    if secret and len(secret) >= 4:
        text = text.replace(secret, "***")
    return re.sub(r"sk-[A-Za-z0-9_\-]{6,}", "sk-***", text)


def _strip_fences(content: str) -> str:
    m = re.search(r"```(?:json)?\s*(.*?)```", content, re.S)
    return m.group(1).strip() if m else content.strip()


def parse_structured(content: str | None, schema: type[T]) -> T:
    """Parse a reply into ``schema``; raise ValueError with a short reason when it does not fit."""
    if content is None or not content.strip():
        raise ValueError("the reply was empty")
    text = _strip_fences(content)
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"the reply is not valid JSON ({exc.msg} at char {exc.pos})") from None
    try:
        return schema.model_validate(obj)
    except ValidationError as exc:
        errs = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '<root>'}: {e['msg']}" for e in exc.errors()[:5]
        )
        raise ValueError(f"the reply does not match the schema ({errs})") from None


def retry_after_seconds(headers: Any) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``retry-after`` (seconds or HTTP date)."""
    if headers is None:
        return None
    try:
        ms = headers.get("retry-after-ms")
        if ms is not None:
            return max(0.0, float(ms) / 1000.0)
        ra = headers.get("retry-after")
    except Exception:
        return None
    if ra is None:
        return None
    try:
        return max(0.0, float(ra))
    except ValueError:
        pass
    try:
        dt = email.utils.parsedate_to_datetime(ra)
        return max(0.0, dt.timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def run_sync(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run ``coro`` to completion, also from inside a running loop (e.g. Jupyter)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(1) as ex:
        return ex.submit(asyncio.run, coro).result()


@dataclass
class Gateway:
    """Shared settings for model calls in one run: cache, ledger, limits.

    ``response_format``: ``json_schema`` (OpenAI), ``json_object`` (llama.cpp server, with the
    schema attached), or ``none`` (schema only in the prompt).
    """

    cache_dir: str | None = None
    cache_mode: str = "use"
    max_concurrency: int = 8
    attempt_timeout: float = 120.0
    run_deadline: float | None = None
    max_attempts: int = 5
    backoff_base: float = 0.5
    backoff_cap: float = 30.0
    retry_after_cap: float = 120.0
    response_format: str = "json_schema"
    temperature: float = 0.0
    max_tokens: int | None = 1024
    seed: int | None = 0
    prices: dict[str, tuple[float, float]] | None = None
    ledger: UsageLedger = field(default_factory=UsageLedger)
    random_state: int = 0

    def __post_init__(self) -> None:
        if self.cache_mode not in CACHE_MODES:
            raise PrefmemError(f"cache mode {self.cache_mode!r}: use one of {', '.join(CACHE_MODES)}")
        if self.prices:
            self.ledger.prices.update(self.prices)
        self._cache: ResponseCache | None = None
        self._start = time.monotonic()
        self._rng = random.Random(self.random_state)

    @property
    def cache(self) -> ResponseCache | None:
        if self.cache_mode == "off":
            return None
        if self._cache is None:
            self._cache = ResponseCache(self.cache_dir)
        return self._cache

    def model(self, model: str | ModelSpec) -> ChatModel:
        """A :class:`ChatModel` for a model string (or resolved spec)."""
        spec = parse_model(model) if isinstance(model, str) else model
        return ChatModel(spec, self)

    def deadline_left(self) -> float | None:
        if self.run_deadline is None:
            return None
        return self.run_deadline - (time.monotonic() - self._start)

    def backoff(self, attempt: int) -> float:
        """Exponential backoff with full jitter for 0-based ``attempt``."""
        return self._rng.uniform(0, min(self.backoff_cap, self.backoff_base * (2**attempt)))

    def manifest(self) -> dict[str, Any]:
        return {
            "cache_mode": self.cache_mode,
            "response_format": self.response_format,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
            "max_concurrency": self.max_concurrency,
            "attempt_timeout": self.attempt_timeout,
            "run_deadline": self.run_deadline,
        }


class ChatModel:
    """A model bound to a gateway. Offline models refuse calls (roles use their offline method)."""

    def __init__(self, spec: ModelSpec, gateway: Gateway):
        self.spec = spec
        self.gateway = gateway

    @property
    def is_offline(self) -> bool:
        return self.spec.is_offline

    @property
    def name(self) -> str:
        return self.spec.string

    def __repr__(self) -> str:
        return f"ChatModel({self.spec.string!r}, base_url={self.spec.public_base_url!r})"

    # -- public API --------------------------------------------------------------------
    def run(self, requests: Sequence[StructuredRequest], *, desc: str = "") -> list[Outcome]:
        """Send ``requests`` with bounded concurrency; outcomes come back in input order."""
        return run_sync(self.arun(requests, desc=desc))

    def call(self, request: StructuredRequest) -> Outcome:
        """One structured call (see :meth:`run`)."""
        return self.run([request])[0]

    async def arun(self, requests: Sequence[StructuredRequest], *, desc: str = "") -> list[Outcome]:
        if self.is_offline:
            raise PrefmemError("the offline model makes no LLM calls; use the role's offline method")
        sem = asyncio.Semaphore(self.gateway.max_concurrency)
        client = None
        if self.gateway.cache_mode != "replay":
            client = self._client()
        bar = None
        if progress_enabled() and len(requests) > 1:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(requests), desc=desc or self.spec.name, leave=False)

        async def one(req: StructuredRequest) -> Outcome:
            async with sem:
                out = await self._structured(client, req)
            if bar is not None:
                bar.update(1)
            return out

        try:
            return list(await asyncio.gather(*(one(r) for r in requests)))
        finally:
            if bar is not None:
                bar.close()
            if client is not None:
                await client.close()

    # -- internals -----------------------------------------------------------------------
    def _client(self):
        import openai

        return openai.AsyncOpenAI(
            api_key=self.spec.api_key or "EMPTY",
            base_url=self.spec.base_url,
            max_retries=0,
            timeout=self.gateway.attempt_timeout,
        )

    def _params(self, schema: type[BaseModel]) -> dict[str, Any]:
        g = self.gateway
        params: dict[str, Any] = {"temperature": g.temperature, "seed": g.seed}
        if g.max_tokens is not None:
            params["max_tokens"] = g.max_tokens
        if g.response_format == "json_schema":
            params["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": schema.__name__, "schema": schema.model_json_schema()},
            }
        elif g.response_format == "json_object":
            params["response_format"] = {"type": "json_object", "schema": schema.model_json_schema()}
        return params

    def _key(self, messages: list[dict[str, str]], params: dict, req: StructuredRequest) -> str:
        return cache_key(
            model=self.spec.string,
            base_url=self.spec.public_base_url,
            messages=messages,
            params=params,
            schema=req.schema.model_json_schema(),
            prompt_version=req.prompt_version,
            response_format=self.gateway.response_format,
        )

    async def _structured(self, client, req: StructuredRequest) -> Outcome:
        g = self.gateway
        messages = [dict(m) for m in req.messages]
        params = self._params(req.schema)
        key = self._key(messages, params, req)
        cache = g.cache
        if cache is not None and g.cache_mode in ("use", "replay"):
            hit = cache.get(key)
            if hit is not None:
                try:
                    value = parse_structured(hit.get("content"), req.schema)
                except ValueError:
                    value = None
                if value is not None:
                    g.ledger.record(self.spec.string, req.role, cached=True)
                    return Outcome("ok", value=value, cached=True, attempts=0, id=req.id)
        if g.cache_mode == "replay":
            first = next((m["content"] for m in messages if m.get("role") == "user"), "")
            raise CacheMissError(
                f"replay: no cached response for role {req.role!r}, model {self.spec.string!r}, "
                f"item {req.id!r}, key {key[:12]}, user message starting {first[:60]!r}"
            )
        tokens_in = tokens_out = 0
        error = None
        convo = list(messages)
        for attempt in range(2):
            content, usage = await self._complete(client, convo, params)
            tokens_in += usage[0]
            tokens_out += usage[1]
            try:
                value = parse_structured(content, req.schema)
            except ValueError as exc:
                error = str(exc)
                convo = convo + [
                    {"role": "assistant", "content": content or ""},
                    {
                        "role": "user",
                        "content": f"That answer could not be used: {error}. "
                        "Answer again with a single JSON object that fits the schema, and nothing else.",
                    },
                ]
                continue
            if cache is not None:
                cache.put(key, {"content": content, "attempts": attempt + 1, "usage": list(usage)})
            g.ledger.record(
                self.spec.string, req.role, cached=False, requests=attempt + 1,
                tokens_in=tokens_in, tokens_out=tokens_out,
            )
            return Outcome("ok", value=value, cached=False, attempts=attempt + 1, id=req.id)
        g.ledger.record(
            self.spec.string, req.role, cached=False, requests=2,
            tokens_in=tokens_in, tokens_out=tokens_out, unknown=True,
        )
        return Outcome("unknown", error=error, cached=False, attempts=2, id=req.id)

    async def _complete(self, client, messages: list[dict], params: dict) -> tuple[str | None, tuple[int, int]]:
        """One logical chat request through the retry layer."""
        resp = await with_retries(
            self.spec, self.gateway,
            lambda timeout: client.chat.completions.create(
                model=self.spec.name, messages=messages, timeout=timeout, **params),
        )
        choices = getattr(resp, "choices", None)
        if not choices:
            return None, _usage(resp)
        return choices[0].message.content, _usage(resp)


async def with_retries(spec: ModelSpec, g: Gateway, send: Callable[[float], Awaitable[R]]) -> R:
    """The one retry layer for any request (chat or embeddings): backoff with jitter,
    Retry-After, per-attempt timeout and the run deadline. ``send(timeout)`` makes one attempt."""
    import openai

    last: str = ""
    for attempt in range(g.max_attempts):
        left = g.deadline_left()
        if left is not None and left <= 0:
            raise DeadlineExceeded(f"run deadline passed before a call to {spec.string}")
        timeout = g.attempt_timeout if left is None else min(g.attempt_timeout, left)
        wait: float | None = None
        try:
            return await asyncio.wait_for(send(timeout), timeout=timeout + 1.0)
        except openai.APIStatusError as exc:
            status = exc.status_code
            msg = _redact(str(exc), spec.api_key)
            if status not in RETRY_STATUS:
                hint = ""
                if status in (401, 403):
                    hint = f" (check {spec.key_env or 'the API key'})"
                raise LLMError(
                    f"{spec.string} at {spec.public_base_url}: HTTP {status}{hint}: {msg[:300]}"
                ) from None
            last = f"HTTP {status}"
            wait = retry_after_seconds(getattr(exc.response, "headers", None))
            if wait is not None:
                wait = min(wait, g.retry_after_cap)
        except (openai.APITimeoutError, TimeoutError):
            last = f"timed out after {timeout:.1f}s"
        except openai.APIConnectionError as exc:
            last = f"connection error: {_redact(str(exc), spec.api_key)[:200]}"
        if attempt + 1 < g.max_attempts:
            delay = wait if wait is not None else g.backoff(attempt)
            left = g.deadline_left()
            if left is not None and delay >= left:
                raise DeadlineExceeded(
                    f"run deadline would pass while waiting to retry {spec.string} ({last})"
                )
            await asyncio.sleep(delay)
    raise LLMError(
        f"{spec.string} at {spec.public_base_url}: gave up after {g.max_attempts} attempts ({last})"
    )


def _usage(resp: Any) -> tuple[int, int]:
    u = getattr(resp, "usage", None)
    if u is None:
        return 0, 0
    return int(getattr(u, "prompt_tokens", 0) or 0), int(getattr(u, "completion_tokens", 0) or 0)
