"""Validation cases retrieved from development evidence (toolkit.rules.checks._retrieved): only
development judge items, gold labels, the own rule and left-out batches never used, the project put
to the rule's; and a rule compiled on them is validated only when its check tells the cases apart."""

from __future__ import annotations

import pytest

from toolkit.records import EvidenceRecord, Rule
from toolkit.rules.checks import _retrieved
from toolkit.rules.checks._spec import development_judge_sets


@pytest.fixture(scope="module")
def judge_sets() -> list:
    return development_judge_sets()


def test_cases_are_development_items_with_their_gold(judge_sets: list) -> None:
    _, recs, _ = judge_sets[1]
    rule = recs[0].rule
    got = _retrieved.retrieved_cases(rule, ("pre_action", "artifact", "delivery"))
    assert got, "a development judge rule's neighbours give cases"
    # every case is a development judge item of another rule, at its stage, with that item's gold
    others: dict[str, set[str]] = {}
    for _, rs, g in judge_sets:
        for r in rs:
            if _retrieved.rule_text(r.rule) != _retrieved.rule_text(rule):
                others.setdefault(r.evidence.model_dump_json(exclude={"task"}), set()).add(g[r.id])
    for key, cases in got.items():
        stage, label = key.split(":")
        for ev, lab in cases:
            assert lab == label and ev.stage == stage
            assert label in others.get(ev.model_dump_json(exclude={"task"}), set())


def test_left_out_batches_give_nothing(judge_sets: list) -> None:
    rule = judge_sets[1][1][0].rule
    old = _retrieved.EXCLUDE
    try:
        _retrieved.EXCLUDE = frozenset(n for n, _, _ in judge_sets)
        assert _retrieved.retrieved_cases(rule, ("pre_action", "artifact", "delivery")) == {}
    finally:
        _retrieved.EXCLUDE = old


def test_project_put_to_the_rules() -> None:
    ev = EvidenceRecord.model_validate({"stage": "delivery", "task": "shutter: send the shot list", "reply": "ok"})
    got = _retrieved._in_project(ev, Rule(id="r", behavior="x", scope="project:brewhouse"))
    assert got.task == "brewhouse: send the shot list"
    assert _retrieved._in_project(ev, Rule(id="r", behavior="x")).task == ev.task


def test_validated_on_retrieved_cases_only_when_the_check_can_fail(judge_sets: list) -> None:
    from toolkit.rules.checks._api import compile_rules

    _, recs, _ = judge_sets[0]
    rules = list({r.rule.behavior: r.rule for r in recs}.values())[:12]
    for c in compile_rules(rules):
        if c.outcome != "semantic" or not c.rounds:
            continue
        last = c.rounds[-1]
        executed = {x.label for x in last.executed}
        assert {"violation", "pass"} <= executed, c.rule.behavior
