"""The JSONL record contracts of DESIGN §3 as pydantic models (unknown fields rejected)."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

_SCOPE_RE = re.compile(r"^(global|project(:[A-Za-z0-9_.\-/]+)?)$")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Message(_Strict):
    role: str = Field(min_length=1)
    content: str


# -- admission -------------------------------------------------------------------------
class AdmissionInput(_Strict):
    """A user message to admit: ``{"id", "text", "context"?}``."""

    id: str = Field(min_length=1)
    text: str = Field(min_length=1)
    context: list[Message] | None = None


class AdmissionOutput(_Strict):
    """The learner's decision on one message."""

    id: str
    decision: Literal["persist", "task_local", "defer"]
    scope: Literal["global", "project"] | None = None
    conditional: bool = False
    activation: str | None = None
    behavior: str | None = None
    quotes: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _consistent(self) -> AdmissionOutput:
        if self.decision != "persist" and (self.scope is not None or self.activation is not None):
            raise ValueError("scope and activation must be null unless the decision is persist")
        if self.decision == "persist" and self.scope is None:
            raise ValueError("a persisted rule needs a scope")
        return self


# -- resolution ------------------------------------------------------------------------
class Rule(_Strict):
    """A rule as resolution sees it."""

    id: str = Field(min_length=1)
    behavior: str = Field(min_length=1)
    scope: str = "global"
    conditions: list[str] = Field(default_factory=list)
    exceptions: list[str] = Field(default_factory=list)

    @field_validator("scope")
    @classmethod
    def _scope(cls, v: str) -> str:
        if not _SCOPE_RE.match(v):
            raise ValueError("scope must be 'global', 'project' or 'project:<name>'")
        return v


class ResolutionInput(_Strict):
    id: str = Field(min_length=1)
    correction: str = Field(min_length=1)
    context: list[Message] | None = None
    library: list[Rule] = Field(default_factory=list)

    @model_validator(mode="after")
    def _unique_rules(self) -> ResolutionInput:
        ids = [r.id for r in self.library]
        if len(ids) != len(set(ids)):
            raise ValueError("library rule ids must be unique")
        return self


class Update(_Strict):
    op: Literal["reuse", "revise", "replace", "add", "retract"]
    target: str | None = None


class ResolutionOutput(_Strict):
    id: str
    updates: list[Update] = Field(default_factory=list)


# -- fidelity --------------------------------------------------------------------------
class AnnotatedPoint(_Strict):
    """An annotated interaction point: did this annotator correct, and for which preferences."""

    id: str = Field(min_length=1)
    annotator: str = Field(min_length=1)
    task: str
    response: str
    artifacts: dict[str, str] | None = None
    corrected: bool
    preference_ids: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _labels(self) -> AnnotatedPoint:
        if self.corrected and not self.preference_ids:
            raise ValueError("a corrected point needs at least one preference id")
        if not self.corrected and self.preference_ids:
            raise ValueError("an uncorrected point carries no preference ids")
        return self


# -- gating ----------------------------------------------------------------------------
class Fact(_Strict):
    """A candidate memory fact and the later sessions in which it was retrieved and used."""

    user: str = Field(min_length=1)
    fact_id: str = Field(min_length=1)
    session: int = Field(ge=0)
    text: str
    hits: list[int] = Field(default_factory=list)

    @model_validator(mode="after")
    def _hits_later(self) -> Fact:
        if any(h <= self.session for h in self.hits):
            raise ValueError("hits must be sessions after the fact's own session")
        if self.hits != sorted(set(self.hits)):
            raise ValueError("hits must be sorted and unique")
        return self


# -- drift -----------------------------------------------------------------------------
class Turn(_Strict):
    user: str
    assistant: str = ""


class DriftInput(_Strict):
    id: str = Field(min_length=1)
    turns: list[Turn] = Field(min_length=1, max_length=1000)  # the tracker is O(turns^2)


class DriftOutput(_Strict):
    id: str
    turn: int = Field(ge=1)
    vector: dict[str, float | dict[str, float]]
    score: dict[str, float]
    changed: list[str]
    prompt: str


#: record kinds by the keys that identify them (used by ``prefmem validate``)
RECORD_KINDS: dict[str, type[BaseModel]] = {
    "admission": AdmissionInput,
    "resolution": ResolutionInput,
    "point": AnnotatedPoint,
    "fact": Fact,
    "drift": DriftInput,
    "admission-output": AdmissionOutput,
    "resolution-output": ResolutionOutput,
    "drift-output": DriftOutput,
}


def guess_kind(obj: dict) -> str | None:
    """Which record kind a JSON object looks like, from its keys."""
    keys = set(obj)
    if {"user", "fact_id"} <= keys:
        return "fact"
    if "annotator" in keys:
        return "point"
    if "correction" in keys:
        return "resolution"
    if "updates" in keys:
        return "resolution-output"
    if "turns" in keys:
        return "drift"
    if "vector" in keys:
        return "drift-output"
    if "decision" in keys:
        return "admission-output"
    if "text" in keys:
        return "admission"
    return None
