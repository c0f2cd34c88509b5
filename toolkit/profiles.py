"""Hidden user profiles: schema (DESIGN §3), loading with file:line errors, and adapters.

A profile is what the simulated user knows and the agent never sees. Agents and memory
methods only ever receive feedback text (see ``toolkit.simuser``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from toolkit._io import field_path
from toolkit._regex import check_safe_regex
from toolkit._yaml import line_for, load_yaml_with_lines
from toolkit.compliance._structured import CHECK_TYPES as _CHECK_TYPES
from toolkit.compliance._structured import NEEDS_INT as _NEEDS_INT
from toolkit.compliance._structured import NEEDS_PATTERN as _NEEDS_PATTERN
from toolkit.errors import InputError
from toolkit.records import PROJECT_NAME

_SCOPE_RE = re.compile(rf"^(global|project:{PROJECT_NAME})$")
#: check types the compliance reader can run: generated from its registry (toolkit.compliance._structured)
CHECK_TYPES = _CHECK_TYPES
_NEEDS_VALUE = set(_NEEDS_INT)


class Check(BaseModel):
    """A machine-checkable predicate, e.g. ``{type: max_words, value: 120}``."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    type: str
    value: Any = None
    target: str | None = Field(default=None, description="reply | artifacts | path glob")
    pattern: str | None = None
    fields: list[str] | None = None

    @field_validator("type")
    @classmethod
    def _known_type(cls, v: str) -> str:
        if v not in CHECK_TYPES:
            raise ValueError(f"unknown check type {v!r}; expected one of: {', '.join(CHECK_TYPES)}")
        return v

    @field_validator("target")
    @classmethod
    def _target(cls, v: str | None) -> str | None:
        if v is not None and v not in ("reply", "artifacts", "code"):
            raise ValueError("target must be reply, artifacts or code")
        return v

    @model_validator(mode="after")
    def _value_fits(self) -> Check:
        if self.type in _NEEDS_VALUE and not (isinstance(self.value, int) and not isinstance(self.value, bool)
                                              and self.value > 0):
            raise ValueError(f"check {self.type} needs a positive integer value")
        if self.type in _NEEDS_PATTERN:
            pat = self.pattern or self.value
            if not isinstance(pat, str) or not pat:
                raise ValueError(f"check {self.type} needs a pattern")
            check_safe_regex(pat)  # invalid, or exponential backtracking (ReDoS): refused
        return self


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
            field = field_path(loc) if loc else "<profile>"
            msg = "unknown field (not allowed)" if e["type"] == "extra_forbidden" else " ".join(e["msg"].split())
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


# -- adapters for public data ---------------------------------------------------------------------
def _slug(s: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-") or "p"


def profiles_from_multisessioncollab(data_dir: str | Path) -> dict[str, Profile]:
    """The 100 MultiSessionCollab users (persona + 3 preferences each) as profiles ``msc-000``..."""
    import json

    path = Path(data_dir) / "multisessioncollab" / "user_profiles.json"
    if not path.exists():
        raise InputError(f"{path}: MultiSessionCollab user profiles not found")
    try:
        users = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno} <json>: {exc.msg}") from None
    out: dict[str, Profile] = {}
    for k, u in enumerate(users):
        if not isinstance(u, dict) or "preferences" not in u:
            raise InputError(f"{path}:[{k}] preferences: field missing")
        cats = u.get("categories") or [None] * len(u["preferences"])
        prefs = []
        seen: dict[str, int] = {}
        for text, cat in zip(u["preferences"], cats, strict=False):
            base = _slug(cat or "pref")
            seen[base] = seen.get(base, 0) + 1
            pid = base if seen[base] == 1 else f"{base}-{seen[base]}"
            prefs.append({"id": pid, "text": text, "category": cat})
        uid = f"msc-{int(u.get('i', k)):03d}"
        out[uid] = profile_from_dict({"id": uid, "persona": u.get("persona"), "domain": "assistant",
                                      "preferences": prefs}, source=f"{path}:[{k}]")
    return out


def profiles_from_prefeval(data_dir: str | Path, *, per_topic: bool = False) -> dict[str, Profile]:
    """PrefEval's explicit preferences as profiles: one user per preference (``pe-<topic>-<i>``),
    or with ``per_topic`` one user per topic holding all of that topic's preferences."""
    from toolkit.datasets.prefeval import load_explicit_preferences

    items = load_explicit_preferences(data_dir)
    out: dict[str, Profile] = {}
    if per_topic:
        by: dict[str, list] = {}
        for it in items:
            by.setdefault(it.topic, []).append(it)
        for topic, its in sorted(by.items()):
            uid = f"pe-{_slug(topic)}"
            out[uid] = profile_from_dict({"id": uid, "domain": topic, "preferences": [
                {"id": f"p{it.index}", "text": it.preference, "category": topic} for it in its]}, source=uid)
        return out
    for it in items:
        uid = f"pe-{_slug(it.topic)}-{it.index}"
        out[uid] = profile_from_dict({"id": uid, "domain": it.topic, "preferences": [
            {"id": "stated", "text": it.preference, "category": it.topic}]}, source=uid)
    return out
