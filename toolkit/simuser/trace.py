"""Traces: why the simulated user corrected or stayed silent (for notebooks and debugging)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Judgement:
    """One preference on one delivery: applicability, verdict and evidence, and which step set it."""

    preference_id: str
    applicable: bool | None
    applicability: str
    verdict: str
    evidence: str = ""
    checks: tuple[str, ...] = ()
    step: int = 2
    decided_by: str = ""  # the compliance reader's deciding stage (check:, scope, kind:, learned, llm:)


@dataclass(frozen=True)
class Trace:
    """Every decision the simulator takes leaves one trace."""

    user: str
    delivery: str
    turn: int
    method: str
    interpretation: str
    judgements: tuple[Judgement, ...]
    decision: str  # "correct" | "silent" | "abstain" (could not judge; nothing sent) | "unknown" (model unusable)
    reason: str
    named: tuple[str, ...] = ()
    feedback: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def table(self):
        """The per-preference judgements as a DataFrame."""
        import pandas as pd

        cols = ["preference_id", "applicable", "applicability", "verdict", "evidence", "step", "decided_by"]
        return pd.DataFrame([{c: getattr(j, c) for c in cols} for j in self.judgements], columns=cols)
