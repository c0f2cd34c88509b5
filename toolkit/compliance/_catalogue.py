"""The catalogue stage of the compliance reader: a rule's text compiled to kinds of check, run on a view.

For one rule on one delivery: find whether it applies (conditions and exceptions honoured; a rule
ruled out by the task is looked at again against the whole delivery, which catches violations the
task did not announce: TellOnce App. C.3.2 steps 2 and 4), then run its compiled checks (step 3).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from toolkit import text as tx
from toolkit.compliance import _kinds as kinds
from toolkit.compliance._checks import (
    Finding,
    Headings,
    ListFormat,
    MaxItems,
    Require,
    RequireTerms,
    Table,
    View,
)
from toolkit.compliance._conditions import condition_holds
from toolkit.compliance._interpreter import CompiledPreference, compile_preference
from toolkit.compliance._types import Rule

#: checks about the shape or parts of a delivered piece; moot while the agent is still asking
_SHAPE_CHECKS = (Require, RequireTerms, ListFormat, Headings, Table, MaxItems, kinds.Sections, kinds.Bookend,
                 kinds.CallToAction, kinds.CodeLanguages, kinds.Servings, kinds.RanCommands, kinds.TimeCap)
_ORDER = {"violated": 0, "unknown": 1, "satisfied": 2, "not_applicable": 3}


def combine(findings: list[Finding]) -> Finding:
    """A preference's verdict from its checks: any violation wins, then unknown, then satisfied."""
    if not findings:
        return Finding("unknown", "no checks")
    best = min(findings, key=lambda f: _ORDER[f.verdict])
    if best.verdict == "not_applicable" and any(f.verdict == "satisfied" for f in findings):
        return next(f for f in findings if f.verdict == "satisfied")
    if best.verdict == "unknown" and any(f.verdict == "satisfied" for f in findings):
        return next(f for f in findings if f.verdict == "satisfied")
    return best


def applicability(cp: CompiledPreference, view: View, *, wide: bool) -> tuple[bool | None, str]:
    """Step 2: do the preference's conditions hold and its exceptions not hold?"""
    reasons = []
    for exc in cp.except_when:
        ok, why = condition_holds(exc, view, wide=False, topic=cp.topic)
        if not ok:  # the reply may say why the exception applies ("this one needs a rental car: no bus goes there")
            ok2, why2 = condition_holds(exc, view, wide=True, topic=cp.topic, majority=True)
            if ok2:
                ok, why = ok2, f"the reply says so: {why2}"
        if ok:
            return False, f"exception holds ({exc!r}: {why})"
        reasons.append(f"exception {exc!r} does not hold")
    for cond in cp.applies_when:
        ok, why = condition_holds(cond, view, wide=wide)
        if ok is None:
            return None, f"cannot tell whether {cond!r} holds ({why})"
        if not ok:
            return False, f"condition {cond!r} does not hold ({why})"
        reasons.append(f"condition {cond!r} holds ({why})")
    return True, "; ".join(reasons) or "always applies"


def holding_reply(view: View) -> bool:
    """A short reply that asks the user something before doing the work ("Before I book, which dates?")."""
    sents = [x for x in tx.sentences(view.reply) if x.strip()]
    while sents and re.match(r"\s*(?:let me know|want me to|happy to|shall I|should I|would you like)\b", sents[-1], re.I) \
            and len(sents) > 1:
        sents = sents[:-1]  # a polite closing offer does not make a delivery a question
    body = " ".join(sents)
    if len(tx.words(body)) > 120 or tx.code_blocks(view.reply) or len(sents) > 6:
        return False
    asks = re.search(r"\?\s*$|\b(?:before I|shall I|should I|do you want|would you like|can you confirm|could you confirm|"
                     r"waiting for your|once you (?:confirm|decide|say)|your go-ahead|need (?:a few|some) (?:details|answers)|"
                     r"which (?:one|option) do you)\b", body.strip(), re.I)
    return bool(asks) and not re.search(r"\b(?:here(?:'s| is| are)|below is|i've (?:written|drafted|made|put together))\b",
                                        body, re.I)


@dataclass(frozen=True)
class CatalogueReading:
    """One rule on one delivery as the catalogue reads it (what the cascade and the learned reader use)."""

    applicable: bool | None
    applicability: str
    finding: Finding
    checks: tuple[str, ...]
    kinds: tuple[str, ...]
    judgeable: bool
    step: int


def read_catalogue(rule: Rule, view: View, *, holding: bool | None = None) -> CatalogueReading:
    """Steps 2-4 for one rule: applicability (with a second, wider look), then its compiled checks."""
    cp = compile_preference(rule)
    checks = tuple(c.describe() for c in cp.checks)
    kinds_ = tuple(type(c).__name__ for c in cp.checks)
    ok, why = applicability(cp, view, wide=False)
    step = 2
    if ok is not True and not why.startswith("exception"):
        ok2, why2 = applicability(cp, view, wide=True)
        if ok2:
            ok, why, step = True, f"second look: {why2}", 4
    if ok is None:
        return CatalogueReading(None, why, Finding("unknown", why), checks, kinds_, cp.judgeable, step)
    if not ok:
        return CatalogueReading(False, why, Finding("not_applicable", why), checks, kinds_, cp.judgeable, step)
    findings = [c.evaluate(view) for c in cp.checks]
    if holding is None:
        holding = holding_reply(view)
    if holding:  # a reply that only checks in first has not delivered the piece these shape
        findings = [Finding("not_applicable", "the reply checks in before delivering anything", topic=f.topic)
                    if f.verdict == "violated" and isinstance(c, _SHAPE_CHECKS) else f
                    for c, f in zip(cp.checks, findings, strict=True)]
    f = combine(findings)
    if not cp.judgeable:
        f = Finding("unknown", f.evidence or "no catalogue kind recognised in this rule")
    return CatalogueReading(True, why, f, checks, kinds_, cp.judgeable, step)
