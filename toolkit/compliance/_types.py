"""The compliance reader's published types: a rule, the evidence it is read against, the verdict.

These are plain frozen dataclasses so that the simulated user (hidden profile preferences), the
violation scorer (TellOnce C.5) and the runtime checker for learned rules (D.3) can all build them
without importing each other. Nothing here knows where a rule came from.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

Stage = Literal["pre_action", "artifact", "delivery"]
Label = Literal["violation", "pass", "not_applicable", "abstain"]
LABELS: tuple[str, ...] = ("violation", "pass", "not_applicable", "abstain")


@dataclass(frozen=True)
class CheckSpec:
    """A structured, machine-checkable predicate (``{type: max_words, value: 120}``).

    ``type`` must be a name in the structured-check registry (:data:`toolkit.compliance.CHECK_TYPES`).
    """

    type: str
    value: Any = None
    target: str | None = None
    pattern: str | None = None
    fields: tuple[str, ...] | None = None

    @classmethod
    def coerce(cls, spec: Any) -> CheckSpec | None:
        """A spec from a mapping, an object with the same attributes (a profile's ``Check``) or None."""
        if spec is None or isinstance(spec, CheckSpec):
            return spec
        get = spec.get if isinstance(spec, Mapping) else (lambda k, d=None: getattr(spec, k, d))
        fields_ = get("fields")
        value = get("value")
        return cls(type=str(get("type")), value=tuple(value) if isinstance(value, list) else value,
                   target=get("target"), pattern=get("pattern"),
                   fields=tuple(fields_) if fields_ is not None else None)

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "value": list(self.value) if isinstance(self.value, tuple) else self.value,
                "target": self.target, "pattern": self.pattern,
                "fields": list(self.fields) if self.fields is not None else None}


@dataclass(frozen=True, init=False)
class Rule:
    """A rule or preference to read evidence against: text plus scope, conditions, exceptions, check."""

    id: str
    text: str
    scope: str
    conditions: tuple[str, ...]
    exceptions: tuple[str, ...]
    check: CheckSpec | None

    def __init__(self, id: str, text: str, scope: str = "global", conditions: Sequence[str] = (),
                 exceptions: Sequence[str] = (), check: Any = None) -> None:
        object.__setattr__(self, "id", id)
        object.__setattr__(self, "text", text)
        object.__setattr__(self, "scope", scope or "global")
        object.__setattr__(self, "conditions", tuple(c for c in conditions if c))
        object.__setattr__(self, "exceptions", tuple(e for e in exceptions if e))
        object.__setattr__(self, "check", CheckSpec.coerce(check))

    @classmethod
    def from_preference(cls, pref: Any) -> Rule:
        """A rule from a profile preference (``applies_when`` / ``except_when`` become lists)."""
        return cls(pref.id, pref.text, getattr(pref, "scope", "global"),
                   [pref.applies_when] if getattr(pref, "applies_when", None) else [],
                   [pref.except_when] if getattr(pref, "except_when", None) else [],
                   getattr(pref, "check", None))

    def cache_key(self) -> str:
        return json.dumps([self.id, self.text, self.scope, list(self.conditions), list(self.exceptions),
                           self.check.to_dict() if self.check else None], ensure_ascii=False)

    @classmethod
    def from_cache_key(cls, key: str) -> Rule:
        id_, text, scope, conds, excs, check = json.loads(key)
        return cls(id_, text, scope, conds, excs, check)


@dataclass(frozen=True)
class Artifact:
    """A file in the workspace at the time of the evidence; ``deleted`` marks a removed file."""

    path: str
    content: str
    deleted: bool = False


@dataclass(frozen=True, init=False)
class Evidence:
    """What a rule is read against: the stage, the task, the reply, a proposed action, workspace files.

    ``artifacts=None`` means the workspace was not observed (unknown), ``[]`` that it is empty.
    """

    stage: Stage
    task: str
    reply: str | None
    action: Mapping[str, Any] | None
    artifacts: tuple[Artifact, ...] | None
    history: tuple[Mapping[str, str], ...]

    def __init__(self, stage: Stage, task: str, reply: str | None = None, action: Mapping[str, Any] | None = None,
                 artifacts: Sequence[Artifact] | Mapping[str, str] | None = (), history: Sequence = ()) -> None:
        if stage not in ("pre_action", "artifact", "delivery"):
            raise ValueError(f"stage must be pre_action, artifact or delivery, not {stage!r}")
        if isinstance(artifacts, Mapping):
            artifacts = [Artifact(p, c) for p, c in artifacts.items()]
        object.__setattr__(self, "stage", stage)
        object.__setattr__(self, "task", task or "")
        object.__setattr__(self, "reply", reply)
        object.__setattr__(self, "action", action)
        object.__setattr__(self, "artifacts", None if artifacts is None else tuple(artifacts))
        object.__setattr__(self, "history", tuple(history))

    def workspace(self) -> dict[str, str] | None:
        """Files present in the workspace (deleted files left out), or None when not observed."""
        if self.artifacts is None:
            return None
        return {a.path: a.content for a in self.artifacts if not a.deleted}

    def text(self) -> str:
        """The reply, or for a pre-action the action rendered as text (what a reader quotes from)."""
        if self.reply is not None:
            return self.reply
        if self.action:
            return "\n".join(f"{k}: {v}" for k, v in sorted(self.action.items()))
        return ""


@dataclass(frozen=True)
class Verdict:
    """The reader's answer: label, a reason in words, verbatim quotes from the evidence, the deciding stage.

    ``label`` is one of ``violation | pass | not_applicable | abstain``; ``abstain`` means the reader
    cannot tell and is never to be scored as a pass or a violation. ``decided_by`` names the cascade
    stage that answered (``check:<type>``, ``kind:<name>``, ``scope``, ``learned``, ``llm:<model>``).
    ``score`` is the learned reader's probability when it ran (None otherwise).
    """

    label: Label
    reason: str
    quotes: list[str] = field(default_factory=list)
    decided_by: str = ""
    score: float | None = None
    ask: str = ""  # what the user wants instead, in words (used to phrase a correction)
    topic: str = ""

    def __post_init__(self) -> None:
        if self.label not in LABELS:
            raise ValueError(f"label must be one of {LABELS}, not {self.label!r}")
