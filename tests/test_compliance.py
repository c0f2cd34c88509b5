"""The compliance reader's published API: types, the cascade's stages, applies(), and its import boundary."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from toolkit.compliance import (
    CHECK_TYPES,
    LABELS,
    Artifact,
    Evidence,
    Rule,
    Verdict,
    applies,
    read,
    read_many,
)
from toolkit.compliance._reader import read_offline
from toolkit.profiles import CHECK_TYPES as PROFILE_CHECK_TYPES

PKG = Path(__file__).resolve().parent.parent / "toolkit" / "compliance"


def test_profile_schema_check_types_come_from_the_registry() -> None:
    assert PROFILE_CHECK_TYPES == CHECK_TYPES
    assert {"max_words", "json_fields", "date_format", "forbid_terms"} <= set(CHECK_TYPES)


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            out.append(node.module or "")
    return out


def test_the_learner_never_imports_the_simulated_user() -> None:
    for path in (PKG.parent / "rules").rglob("*.py"):
        assert not any(n.startswith("toolkit.simuser") for n in _imports(path)), path


def test_compliance_imports_neither_the_simulated_user_nor_the_learner() -> None:
    for path in PKG.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            for n in names:
                assert not n.startswith(("toolkit.simuser", "toolkit.rules")), (path.name, n)


@pytest.mark.parametrize(("reply", "label"), [("word " * 130, "violation"), ("Short and done.", "pass")])
def test_structured_check_decides_and_is_traced(reply: str, label: str) -> None:
    rule = Rule("brief", "Keep it brief.", check={"type": "max_words", "value": 120})
    v = read(rule, Evidence("delivery", "Summarise the meeting.", reply))
    assert v.label == label and v.decided_by == "check:max_words"


def test_forbidden_terms_quote_the_evidence() -> None:
    rule = Rule("jargon", "Avoid jargon.", check={"type": "forbid_terms", "value": ["synergy"]})
    v = read(rule, Evidence("delivery", "Write the update.", "We will leverage synergy across teams."))
    assert v.label == "violation"
    assert v.decided_by == "check:forbid_terms"


def test_json_fields_check_on_an_artifact() -> None:
    rule = Rule("fields", "Every record needs id and name.", check={"type": "json_fields", "fields": ["id", "name"]})
    ok = read(rule, Evidence("delivery", "Give me the record as JSON.", '```json\n{"id": 1, "name": "a"}\n```'))
    bad = read(rule, Evidence("delivery", "Give me the record as JSON.", '```json\n{"id": 1}\n```'))
    assert (ok.label, bad.label) == ("pass", "violation")


def test_date_format_check() -> None:
    rule = Rule("iso", "Write dates as YYYY-MM-DD.", check={"type": "date_format", "value": "iso"})
    assert read(rule, Evidence("delivery", "When is it?", "It is on 2026-03-04.")).label == "pass"
    assert read(rule, Evidence("delivery", "When is it?", "It is on March 4, 2026.")).label == "violation"


def test_deleted_artifacts_are_not_in_the_workspace() -> None:
    rule = Rule("tidy", "No scratch files.", check={"type": "no_files", "value": ["*.bak"]})
    left = Evidence("delivery", "Fix the bug.", "Fixed.", artifacts=[Artifact("app.py.bak", "x")])
    gone = Evidence("delivery", "Fix the bug.", "Fixed.", artifacts=[Artifact("app.py.bak", "x", deleted=True)])
    assert read(rule, left).label == "violation"
    assert read(rule, gone).label != "violation"


def test_nothing_delivered_is_not_applicable() -> None:
    v = read(Rule("r", "Keep replies under 50 words."), Evidence("delivery", "t", ""))
    assert v.label == "not_applicable" and v.decided_by == "scope"


def test_a_rule_no_catalogue_kind_reads_goes_to_the_learned_reader() -> None:
    rule, ev = Rule("r", "Be thoughtful about naming."), Evidence("delivery", "Rename the module.", "Done.")
    v = read(rule, ev)
    assert v.decided_by == "learned" and v.score is not None
    assert v.label in LABELS and isinstance(v, Verdict)
    (alone,) = read_offline([(rule, ev)], learned=None)  # without a fitted reader the cascade abstains
    assert alone.label == "abstain" and alone.decided_by == "kind:Unknown"


def test_applies_reads_scope_conditions_and_exceptions() -> None:
    sql = Rule("sql", "Use uppercase SQL keywords.", conditions=["you write SQL"])
    assert applies(sql, "Write a SQL query for monthly sales.") is True
    proj = Rule("p", "Use tabs.", scope="project:orbit")
    assert applies(proj, "Fix the bug.", "orbit") is True
    assert applies(proj, "Fix the bug.", "other") is False
    assert applies(proj, "Fix the bug.", None) is None
    exc = Rule("m", "Leave the migrations folder alone.", exceptions=["the task asks you to write a migration"])
    assert applies(exc, "Please write a migration that adds the email column.") is False


def test_evidence_rejects_an_unknown_stage() -> None:
    with pytest.raises(ValueError):
        Evidence("review", "t", "r")  # type: ignore[arg-type]


def test_verdict_rejects_unknown_labels() -> None:
    with pytest.raises(ValueError):
        Verdict("unknown", "x")  # type: ignore[arg-type]


def test_read_many_matches_read() -> None:
    ev = Evidence("delivery", "Summarise.", "word " * 20)
    rules = [Rule("a", "Keep it under 10 words."), Rule("b", "Keep it under 100 words.")]
    many = read_many([(r, ev, ()) for r in rules])
    assert [v.label for v in many] == [read(r, ev).label for r in rules]


def test_pre_action_evidence_is_read_from_the_action() -> None:
    rule = Rule("push", "Never force-push.", check={"type": "never_do", "value": "force-push to main"})
    ev = Evidence("pre_action", "Ship the fix.", action={"tool": "bash", "command": "git push --force origin main"})
    v = read(rule, ev)
    assert v.label == "violation" and v.decided_by == "check:never_do"
    assert v.quotes and all(q in ev.text() for q in v.quotes)
