"""The cascade: structured check -> catalogue kind -> learned reader -> LLM, with the deciding stage traced.

1. **structured check** (``check:<type>``): a rule that carries a registered machine-checkable
   predicate is decided by it.
2. **scope** (``scope``): conditions and exceptions are read by words (on the task, then a wider look
   at the whole delivery) as cues; a rule is ruled out (``not_applicable``) only by the learned
   applicability model at its precision-constrained operating point (stage 5), or when nothing was
   delivered. Without a fitted reader the word reading decides alone.
3. **part** (no verdict of its own): a rule that names one part of the delivery (a summary, a subject
   line, a commit message, a post, a docstring, YAML files, ...; ``resources/compliance/parts.yaml``)
   is checked on that part: each located instance is read alone by the next stage
   (:mod:`toolkit.compliance._parts`). A named part that is not found leaves the whole delivery, marked.
4. **catalogue kind** (``kind:<Name>``): the rule's text compiled to kinds of check. A kind decides
   on its own only where the learned reader's fit found it reliable on development data
   (``trusted_kinds`` in the fitted reader); otherwise its finding is a cue for stage 5.
5. **learned reader** (``learned``): a scikit-learn model over embedding and cue features of the
   (rule, evidence) pair; ``violation`` above its precision-constrained threshold, ``pass`` below its
   pass threshold, ``abstain`` in between.
6. **LLM** (``llm:<model>``, only with a model other than ``offline``): asked when the offline stages
   abstain.

Nothing here imports the simulated user or the rule learner.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from toolkit.compliance._catalogue import CatalogueReading, holding_reply
from toolkit.compliance._checks import View
from toolkit.compliance._conditions import condition_holds
from toolkit.compliance._interpreter import compile_preference
from toolkit.compliance._parts import Scope, read_in_scope
from toolkit.compliance._types import Evidence, Rule, Verdict

_MAP = {"violated": "violation", "satisfied": "pass", "not_applicable": "not_applicable", "unknown": "abstain"}


def view_of(ev: Evidence) -> View:
    """The evidence as the catalogue's checks see it (a pre-action is read as text of the action)."""
    return View(ev.task, ev.text(), ev.workspace(), ev.history)


def _quotes(evidence_text: str, source: str) -> list[str]:
    """Verbatim quotes: the quoted spans of a finding that occur in the evidence."""
    out = []
    for q in re.findall(r"[\u201c\"]([^\u201d\"]{2,160})[\u201d\"]", evidence_text):
        if q in source and q not in out:
            out.append(q)
    return out[:3]


def applies(rule: Rule, task: str, project: str | None = None) -> bool | None:
    """Whether a rule applies to a task: scope, then conditions and exceptions read on the task alone.

    None means it cannot be told from the task (a project-scoped rule without a project, or a
    condition the task does not settle).
    """
    if rule.scope.startswith("project:"):
        if project is None:
            return None
        if rule.scope.split(":", 1)[1] != project:
            return False
    cp = compile_preference(rule)
    view = View(task, "", None)
    for exc in cp.except_when:
        ok, _ = condition_holds(exc, view, wide=False, topic=cp.topic)
        if ok:
            return False
    unknown = False
    for cond in cp.applies_when:
        ok, _ = condition_holds(cond, view, wide=False)
        if ok is None:
            unknown = True
        elif not ok:
            return False
    return None if unknown else True


def describe(rule: Rule) -> dict[str, Any]:
    """How the offline stages read a rule: its source (check or text), conditions, exceptions, checks."""
    cp = compile_preference(rule)
    return {"source": cp.source if cp.judgeable else "judgement only", "conditions": list(cp.applies_when),
            "exceptions": list(cp.except_when), "checks": [c.describe() for c in cp.checks],
            "kinds": [type(c).__name__ for c in cp.checks]}


def _verdict_from_reading(rule: Rule, ev: Evidence, reading: CatalogueReading, stage: str) -> Verdict:
    f = reading.finding
    label = _MAP[f.verdict]
    source = ev.text() + "\n" + "\n".join(a.content for a in (ev.artifacts or ()))
    return Verdict(label, f.evidence or reading.applicability, _quotes(f.evidence, source), stage, ask=f.ask,
                   topic=f.topic)


def _kind_name(reading: CatalogueReading) -> str:
    names = [k for k in reading.kinds if k != "Unknown"]
    return names[0] if names else "Unknown"


def _early(rule: Rule, ev: Evidence, view: View, holding: bool,
           learned: Any) -> Verdict | tuple[CatalogueReading, Scope]:
    """Stages 1-3: a final verdict, or the catalogue's reading (on the part the rule names) to hand to
    the learned reader."""
    if not ev.text().strip() and not ev.workspace():
        return Verdict("not_applicable", "nothing was delivered", [], "scope")
    reading, sc = read_in_scope(rule, view, holding=holding)
    if rule.check is not None:
        return _verdict_from_reading(rule, ev, reading, f"check:{rule.check.type}")
    kind = _kind_name(reading)
    if learned is None:  # no fitted reader shipped: the catalogue answers alone
        if reading.applicable is False:
            return Verdict("not_applicable", reading.applicability, [], "scope")
        return _verdict_from_reading(rule, ev, reading, f"kind:{kind}")
    if reading.finding.verdict in ("violated", "satisfied") and learned.trusts(kind, reading.finding.verdict):
        return _verdict_from_reading(rule, ev, reading, f"kind:{kind}")
    return reading, sc


def read_offline(items: Sequence[tuple[Rule, Evidence]], *, learned: Any = "default") -> list[Verdict]:
    """Stages 1-4 without a model, the learned reader's features built in one batch."""
    from toolkit.compliance._features import PairInput
    from toolkit.compliance._learned import default_reader

    if learned == "default":
        learned = default_reader()
    views: dict[int, tuple[View, bool]] = {}
    out: list[Verdict | None] = []
    pending: list[tuple[int, PairInput]] = []
    for i, (rule, ev) in enumerate(items):
        if id(ev) not in views:
            v = view_of(ev)
            views[id(ev)] = (v, holding_reply(v))
        view, hold = views[id(ev)]
        r = _early(rule, ev, view, hold, learned)
        if isinstance(r, Verdict):
            out.append(r)
        else:
            out.append(None)
            pending.append((i, PairInput(rule, ev, r[0], view, hold, r[1])))
    if pending:
        for (i, pair), v in zip(pending, learned.decide_many([p for _, p in pending]), strict=True):
            out[i] = _with_quotes(v, pair)
    return [v for v in out if v is not None]


def _with_quotes(v: Verdict, pair: Any) -> Verdict:
    if v.label != "violation" or v.quotes:
        return v
    source = pair.evidence.text() + "\n" + "\n".join(a.content for a in (pair.evidence.artifacts or ()))
    return replace(v, quotes=_quotes(pair.reading.finding.evidence, source))


def read(rule: Rule, evidence: Evidence, *, others: Sequence[Rule] = (), model: Any = "offline") -> Verdict:
    """Read one rule against one piece of evidence: ``violation | pass | not_applicable | abstain``.

    ``model`` is ``"offline"`` (the default), a model string for the gateway, or a ``ChatModel``.
    With a model, the LLM is asked when the offline stages abstain.
    """
    return read_many([(rule, evidence, others)], model=model)[0]


def read_many(items: Sequence[tuple[Rule, Evidence, Sequence[Rule]]], *, model: Any = "offline") -> list[Verdict]:
    """:func:`read` for many pairs at once (the LLM stage batches its calls)."""
    out = read_offline([(rule, ev) for rule, ev, _ in items])
    chat = _chat_model(model)
    if chat is None:
        return out
    todo = [i for i, v in enumerate(out) if v.label == "abstain"]
    if todo:
        from toolkit.compliance._llm import read_llm

        for i, v in zip(todo, read_llm(chat, [items[i] for i in todo]), strict=True):
            out[i] = v
    return out


def _chat_model(model: Any):
    if model is None or model == "offline":
        return None
    if isinstance(model, str):
        from toolkit.llm import Gateway

        model = Gateway().model(model)
    return None if getattr(model, "is_offline", False) else model
