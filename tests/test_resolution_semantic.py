"""The semantic layer of offline resolution (uses the packaged MiniLM through toolkit.llm)."""

from __future__ import annotations

from toolkit.records import ResolutionInput, Rule
from toolkit.rules.resolution import Proposal, resolve_offline
from toolkit.rules.resolution_semantic import SemanticParams, check, nearest_rules


def _rule(i: str, b: str) -> Rule:
    return Rule(id=i, behavior=b, scope="global", conditions=[], exceptions=[])


LIB = [_rule("r1", "Keep answers brief"), _rule("r2", "Sort imports alphabetically"),
       _rule("r3", "Use double quotes for strings"), _rule("r4", "Pin dependency versions")]


def test_retrieval_finds_a_restatement_with_no_shared_word() -> None:
    rec = ResolutionInput(id="x", correction="that was an essay again", library=LIB)
    assert nearest_rules(rec, 1)[0].id == "r1"


def test_add_near_a_rule_becomes_reuse_and_unrelated_reuse_abstains() -> None:
    rec = ResolutionInput(id="x", correction="that was an essay again", library=LIB)
    p = SemanticParams(reuse=0.2, target=0.9, unrelated=0.0)
    out = check(rec, [Proposal("add", None, "that was an essay again")], p)
    assert [(q.op, q.target) for q in out.proposals] == [("reuse", "r1")] and not out.abstain
    far = SemanticParams(reuse=0.99, target=0.99, unrelated=0.9)
    out = check(rec, [Proposal("reuse", "r4", "that was an essay again")], far)
    assert out.abstain


def test_abstention_is_unknown_with_null_updates() -> None:
    rec = ResolutionInput(id="x", correction="Again, pin the versions.", library=LIB)
    res = resolve_offline(rec, params=SemanticParams(reuse=0.99, target=0.99, unrelated=0.99))
    assert res.status == "unknown" and res.output().updates is None
