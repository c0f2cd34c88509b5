"""The one compliance reader: (rule or preference, evidence) -> violation | pass | not_applicable | abstain.

Used by the simulated user (hidden preferences), the violation scorer (TellOnce C.5) and the
runtime checker for learned rules (D.3, ``prefmem judge``). A cascade decides each pair: a
structured check registered by name, then the scope stage (conditions, exceptions), then a
catalogue kind, then a learned reader that abstains below its operating point, then (with a model)
the LLM through ``toolkit.llm``; ``Verdict.decided_by`` names the stage that answered.

This package imports nothing from ``toolkit.simuser`` or ``toolkit.rules``.
"""

from toolkit.compliance._reader import applies, describe, read, read_many, view_of
from toolkit.compliance._structured import CHECK_TYPES, REGISTRY, compile_check, register
from toolkit.compliance._types import LABELS, Artifact, CheckSpec, Evidence, Rule, Verdict

__all__ = [
    "CHECK_TYPES", "LABELS", "REGISTRY", "Artifact", "CheckSpec", "Evidence", "Rule", "Verdict", "applies",
    "compile_check", "describe", "read", "read_many", "register", "view_of",
]
