"""The compiler's offline knowledge: validated resource files in ``toolkit/resources/checks/``.

Each file is read once, validated by pydantic models with ``extra="forbid"`` and its regexes
compiled. Every kind carries examples that must / must not match; :func:`example_failures`
runs them (tests call it), so a pattern that drifts from its examples fails the build.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

import yaml
from pydantic import BaseModel, ConfigDict, Field

from toolkit.errors import InputError


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PatternKind(_Strict):
    """A named kind: regexes plus the examples they must and must not match."""

    description: str = ""
    stage: str | None = None
    stages: list[str] = Field(default_factory=list)
    patterns: list[str] = Field(min_length=1)
    must_match: list[str] = Field(default_factory=list)
    must_not_match: list[str] = Field(default_factory=list)

    def compiled(self) -> list[re.Pattern[str]]:
        return _compile(tuple(self.patterns))

    def search(self, text: str) -> re.Match[str] | None:
        """The first match of any of the kind's patterns in ``text``."""
        for rx in self.compiled():
            m = rx.search(text)
            if m:
                return m
        return None


class ProgrammaticFile(_Strict):
    about: str
    kinds: dict[str, PatternKind]
    targets_for_fields: dict[str, list[str]]
    #: file types a rule names (the word it uses) and the file endings they cover
    file_types: dict[str, list[str]] = Field(default_factory=dict)

    def endings(self, name: str) -> tuple[str, ...]:
        """The file endings of the file type ``name`` ("Markdown", "`.md`", "YAML"); () when unknown."""
        key = name.strip("`'\" ").lower()
        if key.startswith(".") and len(key) > 1:
            return (key,)
        return tuple(self.file_types.get(key, ()))


class SemanticFile(_Strict):
    about: str
    targets: dict[str, PatternKind]
    unobservable: dict[str, PatternKind]
    ambiguous: dict[str, PatternKind]
    preamble: PatternKind
    replacement: PatternKind
    whole_reply: PatternKind
    reply_place: PatternKind
    leading_condition: PatternKind
    project_mention: PatternKind
    ban_cues: PatternKind
    command_head: PatternKind
    count_floor: PatternKind
    ban_opening: PatternKind
    tool_name: PatternKind
    argument_of: PatternKind
    json_place: PatternKind
    json_key_list: PatternKind
    negation_word: PatternKind


class Instance(_Strict):
    """What a concept looks like in evidence, for the compiler's validation cases."""

    concept: str
    where: str
    example: str
    plain: str = ""


class InstancesFile(_Strict):
    about: str
    instances: list[Instance]


@cache
def _compile(patterns: tuple[str, ...]) -> list[re.Pattern[str]]:
    return [re.compile(p, re.IGNORECASE) for p in patterns]


def _load(name: str) -> dict:
    text = resources.files("toolkit").joinpath("resources", "checks", name).read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    if not isinstance(data, dict):
        raise InputError(f"toolkit/resources/checks/{name}: expected a mapping")
    return data


@cache
def programmatic() -> ProgrammaticFile:
    """``programmatic.yaml``: the three directly computable check types and their phrasings."""
    return ProgrammaticFile.model_validate(_load("programmatic.yaml"))


@cache
def semantic() -> SemanticFile:
    """``semantic.yaml``: evidence targets, unobservable requirements, ambiguity cues."""
    return SemanticFile.model_validate(_load("semantic.yaml"))


@cache
def instances() -> InstancesFile:
    """``instances.yaml``: concrete renderings of common concepts for validation cases."""
    return InstancesFile.model_validate(_load("instances.yaml"))


def all_kinds() -> dict[str, PatternKind]:
    """Every pattern kind of every resource file, by ``file.section.kind``."""
    p, s = programmatic(), semantic()
    out = {f"programmatic.kinds.{k}": v for k, v in p.kinds.items()}
    for section in ("targets", "unobservable", "ambiguous"):
        out.update({f"semantic.{section}.{k}": v for k, v in getattr(s, section).items()})
    out["semantic.ban_cues"] = s.ban_cues
    out["semantic.preamble"] = s.preamble
    out["semantic.replacement"] = s.replacement
    out["semantic.whole_reply"] = s.whole_reply
    out["semantic.reply_place"] = s.reply_place
    out["semantic.leading_condition"] = s.leading_condition
    out["semantic.project_mention"] = s.project_mention
    out["semantic.command_head"] = s.command_head
    out["semantic.count_floor"] = s.count_floor
    out["semantic.ban_opening"] = s.ban_opening
    out.update({f"semantic.{k}": getattr(s, k) for k in ("tool_name", "argument_of", "json_place", "json_key_list",
                                                       "negation_word")})
    return out


def example_failures() -> list[str]:
    """Examples their kind gets wrong (empty when every resource entry behaves as documented)."""
    bad = []
    for name, kind in all_kinds().items():
        bad += [f"{name}: must match {ex!r}" for ex in kind.must_match if not kind.search(ex)]
        bad += [f"{name}: must not match {ex!r}" for ex in kind.must_not_match if kind.search(ex)]
    return bad
