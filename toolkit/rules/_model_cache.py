"""A disk cache for fitted offline models (admission, resolution), so a CLI call does not refit.

The key is the sha256 of everything the fit reads: the training files' bytes, the parameters,
the source it runs (its modules and everything they import inside ``toolkit``, found statically,
plus every resource table; a fit may name a narrower set): a change to any of them refits. The
value is a pickle written atomically under ``$PREFMEM_CACHE_DIR/models/``. The cache holds only
what the fit computed from development data; a corrupt or unreadable entry is refit.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import hashlib
import json
import os
import pickle
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")
_PKG = Path(__file__).resolve().parent.parent


def _module_file(name: str) -> Path | None:
    """The source file of module ``name`` inside ``toolkit`` (its ``__init__`` for a package)."""
    p = _PKG.parent.joinpath(*name.split("."))
    if (p / "__init__.py").is_file():
        return p / "__init__.py"
    return p.with_suffix(".py") if p.with_suffix(".py").is_file() else None


def _imports(path: Path, module: str) -> set[str]:
    """Every ``toolkit`` module ``path`` imports anywhere (function-level imports included)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_bytes())):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            out.add(name)
            out.update(f"{name}.{a.name}" for a in node.names)  # ``from pkg import module``
    return {n for n in out if n == "toolkit" or n.startswith("toolkit.")}


@functools.cache
def import_closure(module: str) -> tuple[Path, ...]:
    """The source files ``module`` runs: itself, its packages and everything it imports, in ``toolkit``.

    Read statically from the sources, so a fit's cache key covers the code it reaches (the
    embedder in ``toolkit/llm``, the text layer, ...) without a hand-kept list going stale.
    """
    seen: set[str] = set()
    files: set[Path] = set()
    todo = [module]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        path = _module_file(name)
        if path is None:
            continue
        files.add(path)
        parts = name.split(".")
        todo.extend(".".join(parts[:i]) for i in range(2, len(parts)))
        todo.extend(_imports(path, name))
    return tuple(sorted(files))


def _code_files(code: Sequence[str]) -> set[Path]:
    """Files named by ``code``: globs under ``toolkit/``, or ``toolkit.…`` modules with their imports."""
    out: set[Path] = set()
    for entry in code:
        if entry.startswith("toolkit."):
            out.update(import_closure(entry))
        else:
            out.update(_PKG.glob(entry))
    return out


def _code_digest(code: Sequence[str]) -> str:
    h = hashlib.sha256()
    for p in sorted(_code_files(code)):
        h.update(p.relative_to(_PKG).as_posix().encode())
        h.update(p.read_bytes())
    return h.hexdigest()


#: the code a fit depends on: ``toolkit.…`` module names (the module and everything it imports)
#: or globs under ``toolkit/``. Default: the rules package's modules with their imports (the
#: text layer, ``toolkit/llm``'s embedders, ...) and every resource table.
ALL_CODE: tuple[str, ...] = ("toolkit.rules.resolution_model", "toolkit.rules.admission_model",
                             "rules/*.py", "resources/**/*.yaml", "resources/**/*.json")


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
    found = _read(path)
    if found is not None:
        return found[0]
    folder.mkdir(parents=True, exist_ok=True)
    # one fit per key at a time across processes (test workers, `reproduce --jobs` workers):
    # a process that waited reads the fit the other one wrote instead of repeating it
    with _exclusive(path.with_suffix(".lock")):
        found = _read(path)
        if found is not None:
            return found[0]
        value = build()
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            pickle.dump(value, f)
        os.replace(tmp, path)
    return value


def _read(path: Path) -> tuple[Any] | None:
    """``(value,)`` from a cache entry, or None when it is absent or unreadable (then refit)."""
    if not path.exists():
        return None
    try:
        with open(path, "rb") as f:
            return (pickle.load(f),)
    except Exception:  # noqa: BLE001 - a corrupt entry is refit, never trusted
        return None


@contextlib.contextmanager
def _exclusive(lock: Path) -> Iterator[None]:
    """An exclusive advisory lock on ``lock`` (POSIX ``flock``; elsewhere no lock)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: fits may repeat, results are the same
        yield
        return
    with open(lock, "a+b") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
