"""Validation cases retrieved from development evidence (TellOnce B.2, offline).

A checkable rule that names no concrete element (no quoted term, code, command, file or limit)
gets no validation case the offline compiler can write: the only one it could write restates the
rule, which the blind reviewer rightly refuses (:func:`toolkit.rules.checks._review.restates_rule`).
This module gives such a rule cases from *development* evidence instead: the judge items of the
development rules nearest to it (rule texts embedded), each with its gold label as the case's
expected label, unchanged but for the task's project name (put to the rule's project, so the scope
stage reads the case as in scope). The reviewer still labels every case blind on the rule's own
words and the checker still executes it; a case whose label does not carry over to the new rule is
refused there, and the rule stays guidance. It reads development judge sets only (roles checked by
:func:`toolkit.rules.checks._spec.development_judge_sets`); :data:`EXCLUDE` leaves batches out (the
leave-one-batch-out measurement in ``benchmarks/checks_retrieved_cases.py``).
"""

from __future__ import annotations

import re
from functools import cache

import numpy as np

from toolkit.records import EvidenceRecord, Rule

#: development judge sets left out of the pool (by folder name, ``dev`` for the first set); set by
#: the leave-one-batch-out measurement, empty in use
EXCLUDE: frozenset[str] = frozenset()
#: off switch (the measurement compares the compiler with and without these cases)
ENABLED: bool = True
#: the nearest development rules whose items are candidates; and the least cosine similarity
#: between the rules' texts for an item to be used (below it the rules are too unlike to share
#: evidence). Chosen by leave-one-batch-out on the 12 development compile sets (each set's cases
#: retrieved from the other sets' judge items; ``benchmarks/checks_retrieved_cases.py``), counted
#: as uncheckable declined / checkable validated / computable programmatic: without retrieved cases
#: 223/223, 35/143, 55/60; top 3 at 0.4: 222/223, 36/143, 55/60 (an uncheckable rule, "be smarter
#: about which tests you run", validated on a neighbour's cases); top 3 at 0.5 and at 0.6: 223/223,
#: 36/143, 55/60 (the gain is a Go error-wrapping rule validated on a neighbour's Go files; the
#: reviewer, the compliance reader on the rule's own words, cannot tell most retrieved cases for
#: an element-less rule, which is where the rest stop). 0.6, the stricter of the two that held.
TOP_RULES: int = 3
MIN_SIMILARITY: float = 0.6


def rule_text(rule: Rule) -> str:
    """What a rule's embedding reads: its behaviour and conditions (not its scope's project name)."""
    return " ".join([rule.behavior, *rule.conditions])


@cache
def _pool(exclude: frozenset[str]) -> tuple[list[tuple[Rule, EvidenceRecord, str]], list[str]]:
    from toolkit.rules.checks._spec import development_judge_sets

    items: list[tuple[Rule, EvidenceRecord, str]] = []
    for name, recs, gold in development_judge_sets():
        if name in exclude:
            continue
        items += [(r.rule, r.evidence, gold[r.id]) for r in recs if gold.get(r.id) in ("violation", "pass")]
    texts = list(dict.fromkeys(rule_text(r) for r, _, _ in items))
    return items, texts


@cache
def _vectors(texts: tuple[str, ...]) -> np.ndarray:
    from toolkit.rules.checks._selection import _shared_embedder

    v = np.asarray(_shared_embedder("minilm").embed(list(texts)), dtype=float)
    return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)


def _in_project(ev: EvidenceRecord, rule: Rule) -> EvidenceRecord:
    """The evidence with its task's leading project name (``"brewhouse: ..."``) put to the rule's
    project; a global rule's case is left as it is."""
    if not rule.scope.startswith("project:"):
        return ev
    project = rule.scope.split(":", 1)[1]
    task = re.sub(r"^[\w.-]+:\s*", "", ev.task or "")
    return ev.model_copy(update={"task": f"{project}: {task}"})


def retrieved_cases(rule: Rule, stages: tuple[str, ...]) -> dict[str, list[tuple[EvidenceRecord, str]]]:
    """For each stage, candidate (evidence, gold label) pairs from the nearest development rules'
    judge items at that stage, nearest rule first; keyed ``"<stage>:<label>"``. Items of a rule with
    the same text as ``rule`` are never used (that would be the rule's own gold)."""
    if not ENABLED:
        return {}
    items, texts = _pool(EXCLUDE)
    if not items:
        return {}
    own = rule_text(rule)
    vec = _vectors(tuple([own, *texts]))
    sims = vec[1:] @ vec[0]
    order = [i for i in np.argsort(-sims, kind="stable") if texts[i] != own and sims[i] >= MIN_SIMILARITY]
    near = [texts[i] for i in order[:TOP_RULES]]
    out: dict[str, list[tuple[EvidenceRecord, str]]] = {}
    for t in near:
        for r, ev, label in items:
            if rule_text(r) == t and ev.stage in stages:
                out.setdefault(f"{ev.stage}:{label}", []).append((_in_project(ev, rule), label))
    return out
