"""Reference figures from the papers, kept in ``fixtures/paper/*.json`` with their table."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from toolkit.errors import InputError


def fixtures_dir() -> Path:
    """The project's ``fixtures/`` folder (next to the package in a checkout)."""
    return Path(__file__).resolve().parent.parent / "fixtures"


@cache
def paper_figures(name: str) -> dict[str, Any]:
    """Load ``fixtures/paper/<name>.json`` (keys: ``source``, ``table``, ``figures``...)."""
    p = fixtures_dir() / "paper" / f"{name}.json"
    if not p.exists():
        raise InputError(f"{p}: no paper figures named {name!r}")
    return json.loads(p.read_text(encoding="utf-8"))
