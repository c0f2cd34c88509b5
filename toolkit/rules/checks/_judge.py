"""Judgment (TellOnce B.3, D.3): (rule, check, evidence at a stage) -> pass | violation |
not_applicable | unknown, with a reason and verbatim quotes.

Programmatic checks run locally. Semantic specifications (and rules judged without a compiled
check) go to the one compliance reader, ``toolkit.compliance.read``, offline, or to an LLM through
the gateway. The checker receives only the evidence the specification needs at the current stage,
and the other rules selected for the same reply (so content one rule requires is not judged a
violation of another). The reader's ``abstain`` is ``unknown`` here: never a pass, never a fail.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from toolkit.llm import ChatModel, StructuredRequest, load_prompt
from toolkit.records import EvidenceRecord, Rule
from toolkit.rules.checks._types import Check, Judgment, SemanticSpec, verbatim

_MAP = {"violation": "violation", "pass": "pass", "not_applicable": "not_applicable", "abstain": "unknown"}


def to_reader_rule(rule: Rule | str, i: int = 0) -> Any:
    """A rule as the compliance reader takes it (``toolkit.compliance.Rule``)."""
    from toolkit.compliance import Rule as CRule

    if isinstance(rule, str):
        return CRule(f"other-{i}", rule)
    return CRule(rule.id, rule.behavior, rule.scope, list(rule.conditions), list(rule.exceptions))


def to_reader_evidence(ev: EvidenceRecord) -> Any:
    """Evidence as the compliance reader takes it (``toolkit.compliance.Evidence``)."""
    from toolkit.compliance import Artifact, Evidence

    arts = None if ev.artifacts is None else [Artifact(a.path, a.content, a.deleted) for a in ev.artifacts]
    return Evidence(ev.stage, ev.task, reply=ev.reply, action=ev.action, artifacts=arts)


def named_project(text: str) -> str | None:
    """The project a task names ("in the orbit repo"), if any."""
    from toolkit.rules.checks._resources import semantic

    m = semantic().project_mention.search(text)
    return m.group("name") if m else None


def scope_stage(rule: Rule, task: str) -> bool | None:
    """Project scope on the task: False when the task names another project, None when it names none."""
    if not rule.scope.startswith("project:"):
        return True
    want = rule.scope.split(":", 1)[1]
    if re.search(rf"(?<![\w-]){re.escape(want)}(?![\w-])", task, re.IGNORECASE):
        return True
    return False if named_project(task) else None


def stage_evidence(check: Check | None, ev: EvidenceRecord) -> EvidenceRecord | None:
    """Only the evidence the check needs at this stage (None: the check does not run here)."""
    if check is None:
        return ev
    need = check.needs().get(ev.stage)
    if need is None:
        return None
    return ev.model_copy(update={
        "reply": ev.reply if "reply" in need else None,
        "action": ev.action if "action" in need else None,
        "artifacts": ev.artifacts if "artifacts" in need else None,
    })


def others_of(ev: EvidenceRecord, others: Sequence[Rule | str]) -> list[Rule | str]:
    """Other rules selected for the same reply: passed explicitly or carried in the evidence
    (as rules, texts, or objects with a ``behavior`` / ``text`` field)."""
    out: list[Rule | str] = list(others)
    for o in ev.other_rules or []:
        if isinstance(o, dict):
            t = o.get("behavior") or o.get("text") or o.get("rule")
            if isinstance(t, str) and t.strip():
                out.append(t)
        else:
            out.append(o)
    return out


def judge_offline(rule: Rule, check: Check | None, ev: EvidenceRecord,
                  others: Sequence[Rule | str] = ()) -> Judgment:
    """Offline judgment: programmatic checks locally, everything else through the compliance reader."""
    if check is not None and check.programmatic:
        return check.run(ev)
    sub = stage_evidence(check, ev)
    if sub is None:
        return Judgment("not_applicable", f"the specification checks nothing at the {ev.stage} stage", (),
                        "specification")
    if scope_stage(rule, ev.task) is False:
        return Judgment("not_applicable", f"the task is outside {rule.scope}", (), "scope")
    from toolkit.rules.checks._spec import default_spec_judge, surely_applies

    sj = default_spec_judge()
    p = sj.predict_proba([(rule, check, sub)])[0]
    label = sj._decide(p, surely_applies(rule, check, sub))
    if label == "violation":  # content another selected rule requires is not a violation of this one
        label = _required_by_others(rule, sub, others_of(ev, others)) or label
    why, quotes = sj.explain(rule, sub, label, p)
    if label == "violation" and not verbatim(quotes, ev):  # the reader's quotes, else the evidence judged
        from toolkit.compliance import read

        v = read(to_reader_rule(rule), to_reader_evidence(sub))
        quotes = tuple(v.quotes) or _evidence_head(sub)
    return Judgment(label, why, verbatim(quotes, ev) if label != "unknown" else (),  # type: ignore[arg-type]
                    "specification-judge")


def _evidence_head(ev: EvidenceRecord) -> tuple[str, ...]:
    """The start of the evidence a stage judged (its command, first file line, or reply)."""
    if ev.stage == "pre_action" and ev.action is not None:
        return (str(ev.action.get("command") or ""),)
    if ev.artifacts:
        return tuple(a.content.strip().splitlines()[0] for a in ev.artifacts if a.content.strip())[:1]
    return ((ev.reply or "").strip()[:80],)


def _required_by_others(rule: Rule, ev: EvidenceRecord, others: Sequence[Rule | str]) -> str | None:
    """``pass`` when every forbidden element this rule finds used is one another selected rule requires."""
    from toolkit.rules.checks._spec import locate, spec_of

    if not others:
        return None
    used = {h.element.text.lower() for h in locate(spec_of(rule), ev)
            if h.element.polarity == "forbid" and (h.where != "reply_prose" or not h.negated) and h.where != "comment"}
    wanted = {e.text.lower() for o in others for e in spec_of(o if isinstance(o, str) else o.behavior).required}
    return "pass" if used and used <= wanted else None


class LLMJudgment(BaseModel):
    model_config = ConfigDict(extra="forbid")

    judgment: Literal["pass", "violation", "not_applicable", "unknown"]
    reason: str
    quotes: list[str]


def _rule_block(rule: Rule | str) -> str:
    if isinstance(rule, str):
        return rule
    return json.dumps({"behavior": rule.behavior, "scope": rule.scope, "conditions": rule.conditions,
                       "exceptions": rule.exceptions}, ensure_ascii=False)


def _evidence_block(ev: EvidenceRecord) -> str:
    d: dict[str, Any] = {"stage": ev.stage, "task": ev.task}
    if ev.action is not None:
        d["action"] = ev.action
    if ev.artifacts is not None:
        d["artifacts"] = [{"path": a.path, "deleted": a.deleted, "content": a.content[:4000]} for a in ev.artifacts]
    if ev.reply is not None:
        d["reply"] = ev.reply[:6000]
    return json.dumps(d, ensure_ascii=False, indent=1)


def judge_request(rid: str, rule: Rule, check: Check | None, ev: EvidenceRecord,
                  others: Sequence[Rule | str]) -> StructuredRequest:
    """The structured request for one semantic judgment."""
    prompt = load_prompt("checks_judge")
    spec = json.dumps(check.to_dict(), ensure_ascii=False) if isinstance(check, SemanticSpec) else "(none)"
    user = prompt.render_user(rule=_rule_block(rule), spec=spec, evidence=_evidence_block(ev),
                              others="\n".join(f"- {_rule_block(o)}" for o in others) or "(none)")
    return StructuredRequest(messages=({"role": "system", "content": prompt.system}, {"role": "user", "content": user}),
                             schema=LLMJudgment, role="checks_judge", prompt_version=prompt.version, id=rid)


def judge_many(items: Sequence[tuple[Rule, Check | None, EvidenceRecord, Sequence[Rule | str]]],
               model: ChatModel | None = None) -> list[Judgment]:
    """Judge many (rule, check, evidence, others) items; LLM calls go out together."""
    out: list[Judgment | None] = [None] * len(items)
    llm: list[tuple[int, StructuredRequest]] = []
    for i, (rule, check, ev, others) in enumerate(items):
        if model is None or model.is_offline or (check is not None and check.programmatic):
            out[i] = judge_offline(rule, check, ev, others)
            continue
        sub = stage_evidence(check, ev)
        if sub is None:
            out[i] = Judgment("not_applicable", f"the specification checks nothing at the {ev.stage} stage", (),
                              "specification")
            continue
        llm.append((i, judge_request(f"{rule.id}#{i}", rule, check, sub, others_of(ev, others))))
    if llm and model is not None:
        for (i, _), oc in zip(llm, model.run([r for _, r in llm], desc="judge"), strict=True):
            if oc.ok and oc.value is not None:
                ev = items[i][2]
                quotes = verbatim(oc.value.quotes, ev)
                label = oc.value.judgment
                if label == "violation" and not quotes:  # a violation must quote its evidence
                    label, why = "unknown", "violation without a verbatim quote"
                else:
                    why = oc.value.reason
                out[i] = Judgment(label, why, quotes if label != "unknown" else (), f"llm:{model.name}")
            else:
                out[i] = Judgment("unknown", f"no valid answer from the model ({oc.error or 'malformed'})", (),
                                  f"llm:{model.name}")
    return [j for j in out if j is not None]


def judge(rule: Rule, check: Check | None, evidence: EvidenceRecord, *, others: Sequence[Rule | str] = (),
          model: ChatModel | None = None) -> Judgment:
    """Judge one rule on one piece of evidence (see the module docstring)."""
    return judge_many([(rule, check, evidence, others)], model)[0]
