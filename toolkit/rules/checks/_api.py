"""Record-level entry points behind ``prefmem compile`` / ``judge`` / ``select`` (DESIGN §3).

Each returns one output record per input, in order, with ``status``; an unknown answer is written
as ``status: "unknown"`` with null answer fields (judge: ``judgment: "unknown"``), never a default.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from toolkit.llm import ChatModel
from toolkit.records import CompileInput, JudgeInput, SelectInput
from toolkit.rules.checks._compiler import Compilation, OfflineCompiler, compile_rule, read_rule
from toolkit.rules.checks._judge import judge, judge_many
from toolkit.rules.checks._review import LLMCompiler, LLMReviewer, ReaderReviewer
from toolkit.rules.checks._selection import EmbeddingSelector, select_llm
from toolkit.rules.checks._types import Check, _programmatic_or_none, check_from_dict


def roles_for(model: ChatModel | None) -> tuple[Any, Any]:
    """(compiler, reviewer) for a model: offline pair, or the LLM pair through the gateway."""
    if model is None or model.is_offline:
        return OfflineCompiler(), ReaderReviewer()
    return LLMCompiler(model), LLMReviewer(model)


def compile_rules(rules: Sequence, model: ChatModel | None = None) -> list[Compilation]:
    """Compile rules (B.2 loop); the checker is :func:`judge` with the same model."""
    compiler, reviewer = roles_for(model)

    def checker(rule, check, ev):
        return judge(rule, check, ev, model=model)

    return [compile_rule(r, compiler, reviewer, checker) for r in rules]


def compile_records(records: Sequence[CompileInput], model: ChatModel | None = None) -> list[dict[str, Any]]:
    return [c.to_record(rec.id) for rec, c in zip(records, compile_rules([r.rule for r in records], model),
                                                   strict=True)]


def auto_check(rule) -> Check | None:
    """A check for judging a rule given without one: programmatic when directly computable, else None
    (the semantic judgment reads the rule itself)."""
    return _programmatic_or_none(read_rule(rule), rule)


def judge_records(records: Sequence[JudgeInput], model: ChatModel | None = None) -> list[dict[str, Any]]:
    items = []
    for rec in records:
        chk = check_from_dict(rec.check) if rec.check else auto_check(rec.rule)
        items.append((rec.rule, chk, rec.evidence, ()))
    out = []
    for rec, j in zip(records, judge_many(items, model), strict=True):
        if j.label == "unknown":
            out.append({"id": rec.id, "status": "unknown", "judgment": "unknown", "reason": j.reason, "quotes": None})
        else:
            out.append({"id": rec.id, "status": "ok", "judgment": j.label, "reason": j.reason,
                        "quotes": list(j.quotes)})
    return out


def select_records(records: Sequence[SelectInput], model: ChatModel | None = None,
                   selector: EmbeddingSelector | None = None) -> list[dict[str, Any]]:
    if model is not None and not model.is_offline:
        items = [(r.task if not r.project else f"{r.task}\n(project: {r.project})", r.instruction, r.library)
                 for r in records]
        got = select_llm(items, model, ids=[r.id for r in records])
    else:
        got = (selector or EmbeddingSelector()).select_many(
            [(r.task, r.instruction, r.library, r.project) for r in records])
    return [{"id": r.id, "status": "ok" if g is not None else "unknown", "selected": g}
            for r, g in zip(records, got, strict=True)]
