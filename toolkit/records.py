"""The JSONL record contracts of DESIGN §3 as pydantic models (unknown fields rejected)."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

#: a project's name in a ``project:<name>`` scope: letters of any script, digits, ``_ . - / & ' +``
#: and inner spaces ("project:Harbour Voices"); no colon, no outer space
PROJECT_NAME = r"[\w.\-/&'+](?:[\w.\-/&'+ ]*[\w.\-/&'+])?"
_SCOPE_RE = re.compile(rf"^(global|project(:{PROJECT_NAME})?)$")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


#: the outcome of a model role on one item: ``unknown`` is a third outcome (DESIGN §3), never a
#: default answer; on ``unknown`` the record's answer fields are null.
Status = Literal["ok", "unknown"]


class _Output(_Strict):
    """Base of every output record; each declares ``status: Status = "ok"`` after its ``id``
    (optional when read, so older files stay valid; always written)."""


class Message(_Strict):
    role: str = Field(min_length=1)
    content: str


# -- admission -------------------------------------------------------------------------
class AdmissionInput(_Strict):
    """A user message to admit: ``{"id", "text", "context"?}``."""

    id: str = Field(min_length=1)
    text: str = Field(min_length=1)
    context: list[Message] | None = None


class AdmissionOutput(_Output):
    """The learner's decision on one message (``decision`` null exactly when status is unknown)."""

    id: str
    status: Status = "ok"
    decision: Literal["persist", "task_local", "defer"] | None
    scope: Literal["global", "project"] | None = None
    conditional: bool = False
    activation: str | None = None
    behavior: str | None = None
    quotes: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _consistent(self) -> AdmissionOutput:
        if self.status == "unknown":
            if self.decision is not None or self.scope is not None or self.activation is not None \
                    or self.behavior is not None or self.conditional or self.quotes:
                raise ValueError("an unknown admission carries no decision, scope, activation, "
                                 "behavior, condition or quotes")
            return self
        if self.decision is None:
            raise ValueError("decision is null only when status is unknown")
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


class ResolutionOutput(_Output):
    """Library updates for one correction (``updates`` null exactly when status is unknown)."""

    id: str
    status: Status = "ok"
    updates: list[Update] | None = Field(default_factory=list)

    @model_validator(mode="after")
    def _consistent(self) -> ResolutionOutput:
        if (self.status == "unknown") != (self.updates is None):
            raise ValueError("updates are null exactly when status is unknown")
        return self


class ResolutionGold(_Strict):
    """The labelled intended update of one resolution case, kept apart from the inputs (a gold
    file's line: ``id``, ``updates`` and an optional ``category``; ``prefmem validate`` reads a
    line with ``updates`` and ``category`` as one)."""

    id: str = Field(min_length=1)
    category: str = "unspecified"
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
    """A candidate memory fact and the later sessions in which it was retrieved and used.

    Optional (added) fields: ``hit_turns``, parallel to ``hits``, counts the user turns of each
    hit session that retrieved and verified the fact (the memory-gating paper's H is a set of
    (fact, user turn) pairs; absent: one turn per hit session); ``status`` is ``unknown`` when
    the labelling pipeline could not judge at least one of the fact's retrieved pairs, so its
    ``hits`` are a lower bound.
    """

    user: str = Field(min_length=1)
    fact_id: str = Field(min_length=1)
    session: int = Field(ge=0)
    text: str
    hits: list[int] = Field(default_factory=list)
    hit_turns: list[int] | None = None
    status: Status = "ok"

    @model_validator(mode="after")
    def _hits_later(self) -> Fact:
        if any(h <= self.session for h in self.hits):
            raise ValueError("hits must be sessions after the fact's own session")
        if self.hits != sorted(set(self.hits)):
            raise ValueError("hits must be sorted and unique")
        if self.hit_turns is not None and (
                len(self.hit_turns) != len(self.hits) or any(c < 1 for c in self.hit_turns)):
            raise ValueError("hit_turns must give a count >= 1 for each hit session")
        return self

    def pair_counts(self) -> list[int]:
        """(fact, user turn) pairs per hit session (1 each when ``hit_turns`` is absent)."""
        return list(self.hit_turns) if self.hit_turns is not None else [1] * len(self.hits)


# -- drift -----------------------------------------------------------------------------
class Turn(_Strict):
    user: str
    assistant: str = ""


class DriftInput(_Strict):
    id: str = Field(min_length=1)
    turns: list[Turn] = Field(min_length=1, max_length=1000)  # the tracker is O(turns^2)


class DriftOutput(_Output):
    """One tracked turn; on unknown (the turn could not be read) no vector, score or flag."""

    id: str
    turn: int = Field(ge=1)
    status: Status = "ok"
    vector: dict[str, float | dict[str, float]] | None
    score: dict[str, float] | None
    changed: list[str] | None
    prompt: str | None

    @model_validator(mode="after")
    def _consistent(self) -> DriftOutput:
        answers = (self.vector, self.score, self.changed)
        if self.status == "unknown" and any(a is not None for a in answers):
            raise ValueError("an unknown turn carries no vector, score or changed flags")
        if self.status == "ok" and any(a is None for a in answers):
            raise ValueError("vector, score and changed are null only when status is unknown")
        return self


# -- checks and selection (TellOnce B.2, B.3, D.3, D.4) ---------------------------------
class CompileInput(_Strict):
    """A learned rule to compile: ``{"id", "rule"}``."""

    id: str = Field(min_length=1)
    rule: Rule


class Validation(_Strict):
    """How a compiled check was validated: cases generated, cases agreed, revision rounds used."""

    cases: int = Field(ge=0)
    agreed: int = Field(ge=0)
    rounds: int = Field(ge=0)


class CompileOutput(_Strict):
    """``{"id", "status", "outcome", "check", "validation"}``; on unknown, outcome and check are null."""

    id: str
    status: Literal["ok", "unknown"] = "ok"
    outcome: Literal["programmatic", "semantic", "guidance", "inactive"] | None = None
    check: dict | None = None
    validation: Validation | None = None
    proposed: Literal["programmatic", "semantic"] | None = None  # what the compiler first proposed
    reason: str | None = None


class ArtifactRecord(_Strict):
    path: str = Field(min_length=1)
    content: str = ""
    deleted: bool = False


class EvidenceRecord(_Strict):
    """What a check sees at one stage; ``other_rules`` are the other rules selected for the same reply."""

    stage: Literal["pre_action", "artifact", "delivery"]
    task: str
    reply: str | None = None
    action: dict | None = None
    artifacts: list[ArtifactRecord] | None = None
    other_rules: list[Rule | str | dict] | None = None


class JudgeInput(_Strict):
    id: str = Field(min_length=1)
    rule: Rule
    evidence: EvidenceRecord
    check: dict | None = None


class JudgeOutput(_Strict):
    """``judgment`` is "unknown" when the checker could not tell (status unknown: reason/quotes null)."""

    id: str
    status: Literal["ok", "unknown"] = "ok"
    judgment: Literal["pass", "violation", "not_applicable", "unknown"]
    reason: str | None = None
    quotes: list[str] | None = None


class SelectInput(_Strict):
    id: str = Field(min_length=1)
    task: str
    instruction: str | None = None
    project: str | None = None  # the project the task runs in, when the caller knows it
    library: list[Rule] = Field(default_factory=list)

    @model_validator(mode="after")
    def _unique_rules(self) -> SelectInput:
        ids = [r.id for r in self.library]
        if len(ids) != len(set(ids)):
            raise ValueError("library rule ids must be unique")
        return self


class SelectOutput(_Strict):
    id: str
    status: Literal["ok", "unknown"] = "ok"
    selected: list[str] | None = None


#: record kinds by the keys that identify them (used by ``prefmem validate``)
RECORD_KINDS: dict[str, type[BaseModel]] = {
    "admission": AdmissionInput,
    "resolution": ResolutionInput,
    "point": AnnotatedPoint,
    "fact": Fact,
    "drift": DriftInput,
    "admission-output": AdmissionOutput,
    "resolution-output": ResolutionOutput,
    "resolution-gold": ResolutionGold,
    "drift-output": DriftOutput,
    "compile": CompileInput,
    "judge": JudgeInput,
    "select": SelectInput,
}


def guess_kind(obj: dict) -> str | None:
    """Which record kind a JSON object looks like, from its keys."""
    keys = set(obj)
    if {"rule", "evidence"} <= keys:
        return "judge"
    if "rule" in keys and "id" in keys:
        return "compile"
    if {"task", "library"} <= keys:
        return "select"
    if {"user", "fact_id"} <= keys:
        return "fact"
    if "annotator" in keys:
        return "point"
    if "correction" in keys:
        return "resolution"
    if "updates" in keys:
        # a gold file's line carries its case's category; an output's never does
        return "resolution-gold" if "category" in keys else "resolution-output"
    if "turns" in keys:
        return "drift"
    if "vector" in keys:
        return "drift-output"
    if "decision" in keys:
        return "admission-output"
    if "text" in keys:
        return "admission"
    return None
