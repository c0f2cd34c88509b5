"""The execution layer (TellOnce B.3): stages, shared repair budget, unknown semantics, appeals."""

from __future__ import annotations

from toolkit.records import Rule
from toolkit.rules.checks import (
    CompiledRule,
    ExecutionLayer,
    Judgment,
    MaxWords,
    SemanticSpec,
    make_evidence,
)

SPEC = SemanticSpec(applies_when="always", required="no force push", compliance="", violation="",
                    polarity="forbid", subject="force-push", target="action",
                    evidence={"pre_action": ["action"]})


def _library() -> list[CompiledRule]:
    return [
        CompiledRule(Rule(id="short", behavior="Keep every reply under 5 words."), "programmatic", MaxWords(5)),
        CompiledRule(Rule(id="nopush", behavior="Never force-push."), "semantic", SPEC),
        CompiledRule(Rule(id="style", behavior="Think about naming."), "guidance", None),
        CompiledRule(Rule(id="vague", behavior="Do it the usual way."), "inactive", None),
    ]


class Scripted:
    """Judges semantic rules from a script (label per call), programmatic ones for real."""

    def __init__(self, labels):
        self.labels = list(labels)

    def __call__(self, items):
        out = []
        for _rule, check, ev, _others in items:
            if check is not None and check.programmatic:
                out.append(check.run(ev))
            else:
                out.append(Judgment(self.labels.pop(0), "scripted", (), "script"))
        return out


def _layer(labels=(), appeal=lambda *a: True) -> ExecutionLayer:
    return ExecutionLayer(_library(), judge_fn=Scripted(labels), appeal_fn=appeal)


def test_presented_and_checked_rules():
    turn = _layer().begin_turn("task", selected=["short", "nopush", "style", "vague"])
    assert [c.rule.id for c in turn.presented()] == ["short", "nopush", "style"]
    assert [c.rule.id for c in turn.checked()] == ["short", "nopush"]
    assert "Think about naming" in turn.prompt_block() and "usual way" not in turn.prompt_block()


def test_delivery_violations_are_one_request_and_budget_is_shared():
    turn = _layer(labels=["violation"]).begin_turn("task", selected=["short", "nopush"])
    act = make_evidence("pre_action", "task", action={"command": "git push -f"})
    assert turn.check(act).decision == "block" and turn.repairs_used == 1
    long = make_evidence("delivery", "task", reply="one two three four five six seven")
    r1 = turn.check(long)
    assert r1.decision == "revise" and r1.violations == ("short",) and turn.repairs_used == 2
    r2 = turn.check(long)
    assert r2.decision == "revise" and turn.repairs_used == 3
    r3 = turn.check(long)  # budget spent: recorded, not blocked
    assert r3.decision == "deliver" and r3.violations == ("short",)
    assert turn.unresolved and turn.unresolved[-1][1] == "short"


def test_unknown_never_clears_a_violation_on_an_unchanged_candidate():
    turn = _layer(labels=["violation", "unknown", "unknown", "pass"]).begin_turn("t", selected=["nopush"])
    act = make_evidence("pre_action", "t", action={"command": "git push -f"})
    assert turn.check(act).violations == ("nopush",)
    again = turn.check(act)  # unchanged candidate, the checker now says unknown
    assert again.violations == ("nopush",) and again.decision == "block"
    changed = make_evidence("pre_action", "t", action={"command": "git push"})
    rep = turn.check(changed)  # a new candidate: unknown is a non-blocking reminder
    assert rep.unknown == ("nopush",) and rep.decision == "proceed" and "Reminder" in (rep.message or "")
    assert turn.check(act).violations == ()  # a pass clears it


def test_unknown_at_delivery_is_recorded_not_sent():
    lib = [CompiledRule(Rule(id="tone", behavior="No emojis in replies."), "semantic",
                        SemanticSpec("always", "", "", "", "forbid", "emojis", "reply",
                                     evidence={"delivery": ["reply"]}))]
    turn = ExecutionLayer(lib, judge_fn=Scripted(["unknown"])).begin_turn("t", selected=["tone"])
    rep = turn.check(make_evidence("delivery", "t", reply="hi"))
    assert rep.decision == "deliver" and rep.message is None and rep.unknown == ("tone",)


def test_one_appeal_per_delivery_and_overturn_only_for_that_candidate():
    turn = _layer().begin_turn("t", selected=["short"])
    long = make_evidence("delivery", "t", reply="one two three four five six seven")
    assert turn.check(long).violations == ("short",)
    assert turn.appeal("short", long, "the user asked for detail") is True
    assert turn.appeal("short", long, "again") is False  # one appeal per delivery
    assert turn.check(long).violations == () and turn.log[-1].overturned == ("short",)
    other = make_evidence("delivery", "t", reply="one two three four five six seven eight")
    assert turn.check(other).violations == ("short",)  # a changed candidate is judged afresh


def test_stage_gating_checks_only_rules_with_evidence_at_that_stage():
    turn = _layer().begin_turn("t", selected=["short", "nopush"])
    rep = turn.check(make_evidence("artifact", "t", artifacts={"a.py": "x = 1\n"}))
    assert rep.judgments == {} and rep.decision == "proceed"
