"""A disk cache for fitted offline models (admission, resolution), so a CLI call does not refit.

The key is the sha256 of everything the fit reads: the training files' bytes, the parameters,
the source it runs (by default the rules and text packages and every resource table; a fit may
name a narrower set): a change to any of them refits. The
value is a pickle written atomically under ``$PREFMEM_CACHE_DIR/models/``. The cache holds only
what the fit computed from development data; a corrupt or unreadable entry is refit.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")
_PKG = Path(__file__).resolve().parent.parent


def _code_digest(code: Sequence[str]) -> str:
    h = hashlib.sha256()
    for p in sorted({p for g in code for p in _PKG.glob(g)}):
        h.update(p.relative_to(_PKG).as_posix().encode())
        h.update(p.read_bytes())
    return h.hexdigest()


#: the code a fit depends on, as globs under ``toolkit/`` (default: the rules, text and llm
#: packages (the embedders make the features) and every resource table)
ALL_CODE: tuple[str, ...] = ("rules/*.py", "text/*.py", "llm/*.py", "resources/**/*.yaml")


def cache_key(kind: str, files: Sequence[Path], params: dict[str, Any],
              code: Sequence[str] = ALL_CODE) -> str:
    """The sha256 key of one fit: kind, training files' bytes, parameters and code."""
    h = hashlib.sha256(kind.encode())
    for f in files:
        h.update(Path(f).name.encode())
        h.update(Path(f).read_bytes() if Path(f).exists() else b"<absent>")
    h.update(json.dumps(params, sort_keys=True, default=str).encode())
    h.update(_code_digest(code).encode())
    return h.hexdigest()


def cached_fit(kind: str, files: Sequence[Path], params: dict[str, Any], build: Callable[[], T],
               code: Sequence[str] = ALL_CODE) -> T:
    """``build()``'s result, read from the disk cache when the same fit was made before."""
    from toolkit.llm.cache import default_cache_dir

    if os.environ.get("PREFMEM_MODEL_CACHE", "1") == "0":
        return build()
    folder = Path(default_cache_dir()) / "models"
    path = folder / f"{kind}-{cache_key(kind, files, params, code)[:32]}.pkl"
    if path.exists():
        try:
            with open(path, "rb") as f:
                return pickle.load(f)
        except Exception:  # noqa: BLE001 - a corrupt entry is refit, never trusted
            pass
    value = build()
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
    with os.fdopen(fd, "wb") as f:
        pickle.dump(value, f)
    os.replace(tmp, path)
    return value
