"""TellOnce's checks: compilation (B.2, D.3), judgment (B.3, D.3), selection (B.3, D.4) and the
execution layer (B.3). The learner side: nothing here imports ``toolkit.simuser`` or profiles.

Public surface (everything else is in private ``_`` modules):

- compile: :func:`compile_rules`, :func:`compile_rule`, :class:`Compilation`, :class:`OfflineCompiler`,
  :class:`ReaderReviewer`, :class:`LLMCompiler`, :class:`LLMReviewer`;
- checks: :class:`Check` and the registered types (:data:`CHECK_TYPES`, :func:`check_from_dict`,
  :func:`register_check_type`), :class:`Judgment`;
- judge: :func:`judge`, :func:`judge_many`;
- select: :func:`select_rules`, :class:`EmbeddingSelector`, :func:`select_llm`;
- execution layer: :class:`ExecutionLayer`, :class:`Turn`, :class:`CompiledRule`, :class:`StageReport`;
- notebook: :func:`compilation_stepper` (a widget stepping a rule through its rounds);
- records (CLI): :func:`compile_records`, :func:`judge_records`, :func:`select_records`.
"""

from toolkit.rules.checks._api import (
    auto_check,
    compile_records,
    compile_rules,
    judge_records,
    select_records,
)
from toolkit.rules.checks._compiler import (
    Case,
    Compilation,
    OfflineCompiler,
    Proposal,
    Review,
    Round,
    compile_rule,
    read_rule,
)
from toolkit.rules.checks._execution import (
    MAX_REPAIRS,
    CompiledRule,
    ExecutionLayer,
    StageReport,
    Turn,
    candidate_key,
    review_appeal,
)
from toolkit.rules.checks._judge import judge, judge_many
from toolkit.rules.checks._review import LLMCompiler, LLMReviewer, ReaderReviewer
from toolkit.rules.checks._selection import (
    EmbeddingSelector,
    SelectionUnknown,
    select_llm,
    select_rules,
)
from toolkit.rules.checks._types import (
    AVAILABLE,
    CHECK_TYPES,
    STAGES,
    Check,
    FieldEquals,
    JsonFields,
    Judgment,
    MaxWords,
    SemanticSpec,
    check_from_dict,
    make_evidence,
    register_check_type,
)
from toolkit.rules.checks._widget import compilation_stepper, step_html

__all__ = [
    "AVAILABLE", "CHECK_TYPES", "MAX_REPAIRS", "STAGES", "Case", "Check", "Compilation", "CompiledRule",
    "EmbeddingSelector", "ExecutionLayer", "FieldEquals", "JsonFields", "Judgment", "LLMCompiler", "LLMReviewer",
    "MaxWords", "OfflineCompiler", "Proposal", "ReaderReviewer", "Review", "Round", "SelectionUnknown",
    "SemanticSpec", "StageReport", "Turn", "auto_check", "candidate_key", "check_from_dict", "compile_records",
    "compile_rule", "compile_rules", "judge", "judge_many", "judge_records", "make_evidence", "read_rule",
    "register_check_type", "review_appeal", "select_llm", "select_records", "select_rules",
    "compilation_stepper", "step_html",
]
