"""The offline simulated-user judge: the four steps of TellOnce App. C.3.2 without a model.

1. interpret the interaction (what was delivered, is there anything to judge);
2. find the applicable preferences (conditions and exceptions honoured);
3. decide: run each applicable preference's compiled checks;
4. look again: preferences ruled out by their conditions are re-read against the whole
   delivery (reply and workspace), which catches violations the task text did not announce.
"""

from __future__ import annotations

import re

from toolkit import text as tx
from toolkit.profiles import Profile
from toolkit.simuser import kinds
from toolkit.simuser.checks import (
    Finding,
    Headings,
    ListFormat,
    MaxItems,
    Require,
    RequireTerms,
    Table,
    View,
)
from toolkit.simuser.conditions import condition_holds
from toolkit.simuser.interpreter import CompiledPreference, compile_preference
from toolkit.simuser.trace import Judgement

#: checks about the shape or parts of a delivered piece; moot while the agent is still asking
_SHAPE_CHECKS = (Require, RequireTerms, ListFormat, Headings, Table, MaxItems, kinds.Sections, kinds.Bookend,
                 kinds.CallToAction, kinds.CodeLanguages, kinds.Servings, kinds.RanCommands, kinds.TimeCap)
_ORDER = {"violated": 0, "unknown": 1, "satisfied": 2, "not_applicable": 3}


def interpret(view: View) -> tuple[str, bool]:
    """Step 1: a one-line reading of the delivery, and whether there is anything to judge."""
    n_words = len(tx.words(view.prose))
    parts = [f"reply of {n_words} words in {len(view.sentences)} sentences"]
    if tx.bullet_lines(view.reply):
        parts.append(f"{len(tx.bullet_lines(view.reply))} list items")
    if tx.code_blocks(view.reply):
        parts.append(f"{len(tx.code_blocks(view.reply))} code blocks")
    if view.artifacts is not None:
        parts.append(f"{len(view.artifacts)} workspace files")
    if view.history:
        parts.append(f"{len(view.history)} earlier turns")
    has_content = bool(view.reply.strip()) or bool(view.artifacts)
    return "; ".join(parts), has_content


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


def judge_preferences(profile: Profile, view: View) -> tuple[list[Judgement], dict[str, Finding]]:
    """Steps 2-4 for every preference of ``profile``; returns judgements and violated findings."""
    judgements: list[Judgement] = []
    violated: dict[str, Finding] = {}
    holding = holding_reply(view)  # once per delivery, not once per preference
    for pref in profile.preferences:
        cp = compile_preference(pref)
        checks = tuple(c.describe() for c in cp.checks)
        ok, why = applicability(cp, view, wide=False)
        step = 2
        if ok is not True and not why.startswith("exception"):
            ok2, why2 = applicability(cp, view, wide=True)
            if ok2:
                ok, why, step = True, f"second look: {why2}", 4
        if ok is None:
            judgements.append(Judgement(pref.id, None, why, "unknown", "", checks, step))
            continue
        if not ok:
            judgements.append(Judgement(pref.id, False, why, "not_applicable", "", checks, step))
            continue
        findings = [c.evaluate(view) for c in cp.checks]
        if holding:  # a reply that only checks in first has not delivered the piece these shape
            findings = [Finding("not_applicable", "the reply checks in before delivering anything", topic=f.topic)
                        if f.verdict == "violated" and isinstance(c, _SHAPE_CHECKS) else f
                        for c, f in zip(cp.checks, findings, strict=True)]
        f = combine(findings)
        if not cp.judgeable:
            f = Finding("unknown", f.evidence or "judgement only: no offline check for this preference")
        judgements.append(Judgement(pref.id, True, why, f.verdict, f.evidence, checks, step))
        if f.verdict == "violated":
            violated[pref.id] = f
    return judgements, violated
