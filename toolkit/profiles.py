"""Hidden user profiles: schema (DESIGN §3), loading with file:line errors, and adapters.

A profile is what the simulated user knows and the agent never sees. Agents and memory
methods only ever receive feedback text (see ``toolkit.simuser``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from toolkit._yaml import line_for, load_yaml_with_lines
from toolkit.errors import InputError

_SCOPE_RE = re.compile(r"^(global|project:[A-Za-z0-9_.\-/]+)$")


class Check(BaseModel):
    """A machine-checkable predicate, e.g. ``{type: max_words, value: 120}``."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    type: str
    value: Any = None
    target: str | None = Field(default=None, description="reply | artifacts | path glob")
    pattern: str | None = None
    fields: list[str] | None = None


class Preference(BaseModel):
    """One hidden preference: natural-language text plus optional scope, conditions and check."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str = Field(min_length=1)
    text: str = Field(min_length=1)
    scope: str = "global"
    applies_when: str | None = None
    except_when: str | None = None
    check: Check | None = None
    category: str | None = Field(default=None, description="cleanup | workflow | style | ...")

    @field_validator("scope")
    @classmethod
    def _scope(cls, v: str) -> str:
        if not _SCOPE_RE.match(v):
            raise ValueError("scope must be 'global' or 'project:<name>'")
        return v


class Profile(BaseModel):
    """A hidden user profile."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str = Field(min_length=1)
    persona: str | None = None
    domain: str | None = None
    preferences: list[Preference] = Field(min_length=1)

    @field_validator("preferences")
    @classmethod
    def _unique(cls, v: list[Preference]) -> list[Preference]:
        seen = set()
        for p in v:
            if p.id in seen:
                raise ValueError(f"duplicate preference id {p.id!r}")
            seen.add(p.id)
        return v

    def preference(self, pid: str) -> Preference:
        for p in self.preferences:
            if p.id == pid:
                return p
        raise KeyError(pid)


def profile_from_dict(data: Any, *, source: str = "<dict>", lines: dict | None = None) -> Profile:
    """Validate ``data`` as a Profile; errors become ``source:line field: message``."""
    try:
        return Profile.model_validate(data)
    except ValidationError as exc:
        problems = []
        for e in exc.errors():
            loc = tuple(e.get("loc", ()))
            line = line_for(lines or {}, loc)
            field = ".".join(str(x) for x in loc) or "<profile>"
            msg = "unknown field (not allowed)" if e["type"] == "extra_forbidden" else e["msg"]
            problems.append(f"{source}:{line} {field}: {msg}")
        raise InputError(problems) from None


def load_profile(path: str | Path) -> Profile:
    """Load and validate one profile YAML file."""
    data, lines = load_yaml_with_lines(path)
    if not isinstance(data, dict):
        raise InputError(f"{path}:1 <profile>: expected a mapping with id and preferences")
    return profile_from_dict(data, source=str(path), lines=lines)


def load_profiles(path: str | Path) -> dict[str, Profile]:
    """Load one YAML file or every ``*.yaml``/``*.yml`` in a directory, keyed by profile id."""
    p = Path(path)
    files = sorted([*p.glob("*.yaml"), *p.glob("*.yml")]) if p.is_dir() else [p]
    if not files:
        raise InputError(f"{p}: no profile files found")
    out: dict[str, Profile] = {}
    problems: list[str] = []
    for f in files:
        try:
            prof = load_profile(f)
        except InputError as exc:
            problems.extend(exc.problems)
            continue
        if prof.id in out:
            problems.append(f"{f}:1 id: duplicate profile id {prof.id!r}")
            continue
        out[prof.id] = prof
    if problems:
        raise InputError(problems)
    return out
