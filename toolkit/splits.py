"""Evaluation-data roles and first-contact records (the honest-numbers rules).

`fixtures/SPLITS.json` lists every evaluation file with its role, who wrote it and its sha256:

- ``development``: the method may be fit, tuned and read against it;
- ``held-out``: scored, never fit or tuned on, never edited after a score on it was seen;
- ``first-contact``: a batch written apart, scored once on arrival (the record of that run is
  written into the batch as ``FIRST_CONTACT.json``); afterwards it may be re-labelled development;
- ``calibration-input``: parameters of a generator, chosen to match a paper's statistics: an input,
  never a result;
- ``reference``: a paper's published figures.

Loaders call :func:`require_role` with the purpose of the read: fitting or tuning on a held-out or
first-contact file raises :class:`HeldOutError`. :func:`record_first_contact` writes a batch's one
first-contact score with the commit and date, and refuses to write it twice.
"""

from __future__ import annotations

import datetime as _dt
import functools
import hashlib
import json
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

ROLES = ("development", "held-out", "first-contact", "calibration-input", "reference")
Role = Literal["development", "held-out", "first-contact", "calibration-input", "reference"]
Purpose = Literal["fit", "tune", "evaluate"]
FROZEN_ROLES = frozenset({"held-out", "first-contact"})

REPO_ROOT = Path(__file__).resolve().parent.parent
SPLITS_PATH = REPO_ROOT / "fixtures" / "SPLITS.json"
FIRST_CONTACT_FILE = "FIRST_CONTACT.json"


class HeldOutError(RuntimeError):
    """Raised when a method is about to be fit or tuned on a held-out or first-contact file."""


@dataclass(frozen=True)
class SplitEntry:
    """One evaluation file: its path (relative to the repository), role, author and sha256."""

    path: str
    role: Role
    author: str
    sha256: str
    note: str = ""


def sha256_file(path: Path) -> str:
    """The sha256 of a file's bytes, hex."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def load_splits(path: Path = SPLITS_PATH) -> dict[str, SplitEntry]:
    """Read `fixtures/SPLITS.json` into entries keyed by repository-relative path.

    Parsed once per version of the file (its path, size and modification time): a fit checks the
    role of every training file (:func:`require_role`), and the file lists hundreds of entries."""
    return dict(_current_splits(path))


def _current_splits(path: Path = SPLITS_PATH) -> dict[str, SplitEntry]:
    """The cached parse of the file as it is now (shared: callers must not change it)."""
    p = Path(path)
    st = p.stat()
    return _parsed_splits(str(p.resolve()), st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=4)
def _parsed_splits(path: str, size: int, mtime_ns: int) -> dict[str, SplitEntry]:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    out: dict[str, SplitEntry] = {}
    for key, value in data["files"].items():
        if value["role"] not in ROLES:
            raise ValueError(f"{path}: files.{key}.role: unknown role {value['role']!r}")
        out[key] = SplitEntry(path=key, role=value["role"], author=value["author"],
                              sha256=value["sha256"], note=value.get("note", ""))
    return out


def _relative(path: Path | str) -> str | None:
    p = Path(path).resolve()
    try:
        return p.relative_to(REPO_ROOT).as_posix()
    except ValueError:
        return None


def role_of(path: Path | str) -> Role | None:
    """The role `SPLITS.json` gives a file (None for a file it does not list, e.g. a user's own)."""
    rel = _relative(path)
    if rel is None or not SPLITS_PATH.exists():
        return None
    entry = _current_splits().get(rel)  # no copy of the whole mapping per file asked about
    return entry.role if entry else None


def natural_key(name: object) -> tuple:
    """Sort key reading the digits in a batch's name (or path) as numbers: w2 before w10."""
    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", str(name)))


def development_batches(kind: str) -> tuple[str, ...]:
    """``firstcontact/<batch>`` for each batch under ``fixtures/<kind>/firstcontact`` whose
    ``<kind>.jsonl`` and ``<kind>.gold.jsonl`` both have the role development, in batch-number
    order (w1, w2, w6, ..., w10, ...).

    The batches written apart that a fit may train on: each was scored once at first contact, and
    `SPLITS.json` gives it the role development only after that, so this list follows SPLITS.json
    instead of being kept by hand beside it."""
    root = REPO_ROOT / "fixtures" / kind / "firstcontact"
    files = (f"{kind}.jsonl", f"{kind}.gold.jsonl")
    names = [b.name for b in root.iterdir() if b.is_dir()
             and all(role_of(b / f) == "development" for f in files)] if root.is_dir() else []
    return tuple(f"firstcontact/{n}" for n in sorted(names, key=natural_key))


def batches_attribute(kind: str, name: str = "DEV_BATCHES"):  # noqa: ANN201 - a module __getattr__
    """A module ``__getattr__`` that answers ``name`` with :func:`development_batches` (``kind``) when
    asked, so a module can offer its training batches as a constant without reading SPLITS.json at
    import."""
    def __getattr__(attr: str) -> tuple[str, ...]:
        if attr == name:
            return development_batches(kind)
        raise AttributeError(f"module has no attribute {attr!r}")

    return __getattr__


def require_role(path: Path | str, purpose: Purpose) -> Role | None:
    """Refuse to fit or tune on a held-out or first-contact file; return the file's role."""
    role = role_of(path)
    if purpose in ("fit", "tune") and role in FROZEN_ROLES:
        raise HeldOutError(f"{path}: role {role!r} in fixtures/SPLITS.json: never {purpose} on it")
    return role


def _git_commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO_ROOT, capture_output=True,
                             text=True, timeout=10, check=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=REPO_ROOT, capture_output=True, text=True, timeout=10)
        return out.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def record_first_contact(batch_dir: Path | str, diagnostic: str, scores: dict[str, Any],
                         *, n: int, today: str | None = None) -> Path:
    """Write the one first-contact record of a batch: commit, date, diagnostic, n and scores.

    Refuses (FileExistsError) when the batch already has a record: a batch is first contact once.
    """
    target = Path(batch_dir) / FIRST_CONTACT_FILE
    record = {"diagnostic": diagnostic, "commit": _git_commit(),
              "date": today or _dt.date.today().isoformat(), "n": n, "scores": scores}
    try:
        with open(target, "x", encoding="utf-8") as f:
            json.dump(record, f, indent=2, sort_keys=True)
            f.write("\n")
    except FileExistsError:
        raise FileExistsError(f"{target}: this batch was already scored at first contact") from None
    return target


def first_contact_of(batch_dir: Path | str) -> dict[str, Any] | None:
    """The batch's first-contact record, or None if it has not been scored yet."""
    target = Path(batch_dir) / FIRST_CONTACT_FILE
    return json.loads(target.read_text(encoding="utf-8")) if target.exists() else None
