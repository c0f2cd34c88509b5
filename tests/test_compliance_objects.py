"""Kind-free readings of the compliance reader: a preference's objects with their polarity, its conditions read
on the delivery's whole context, the cue tables behind them, and parameters captured by kind files."""

from __future__ import annotations

import math

import pytest

from toolkit.compliance._checks import View
from toolkit.compliance._interpreter import compile_text
from toolkit.compliance._objects import OBJECT_NAMES, object_features, objects
from toolkit.compliance._scope_context import CONTEXT_NAMES, context_features
from toolkit.text import load_table

_TABLES = ("compliance/objects", "compliance/conditions")
_CASES = [(t, k, kind, ex) for t in _TABLES for k, e in load_table(t).spec.entries.items()
          for kind, exs in (("match", e.match), ("not_match", e.not_match)) for ex in exs]


@pytest.mark.parametrize(("table", "key", "kind", "example"), _CASES,
                         ids=[f"{t}:{k}:{kind}:{e[:25]}" for t, k, kind, e in _CASES])
def test_table_examples(table: str, key: str, kind: str, example: str) -> None:
    assert load_table(table).entry(key).hits(example) is (kind == "match")


def test_objects_carry_the_polarity_of_their_clause() -> None:
    got = {o.text: o.negated for o in objects("|> not %>% in my allotment scripts.")}
    assert got == {"|>": False, "%>%": True}
    got = {o.text: (o.cls, o.negated) for o in objects("Models use ref(). No schema.table typed in by hand.")}
    assert got["ref()"] == ("code_identifier", False) and got["schema.table"] == ("code_identifier", True)
    # the condition says when, not what: its words are no objects
    assert [o.text for o in objects("Use `Fmt` when the code is OCaml")] == ["Fmt"]


def test_object_features_read_presence_in_code() -> None:
    rule = "No Obj.magic. I don't care how fast it is."
    f = dict(zip(OBJECT_NAMES, object_features(rule, View("speed it up", "Done:\n```ocaml\nlet f t = Obj.magic t\n```",
                                                                None)), strict=True))
    assert f["obj_neg_present"] == f["obj_neg_present_code"] == f["obj_code_neg_present"] == 1.0
    f = dict(zip(OBJECT_NAMES, object_features(rule, View("speed it up", "Done: I copy the array once.", None)),
                 strict=True))
    assert f["obj_neg_present"] == 0.0
    assert object_features("Keep answers short.", View("q", "a", None)) == [0.0] * len(OBJECT_NAMES)


def test_conditions_hold_by_workspace_paths_and_languages() -> None:
    ocaml = View("make the table faster", "Done.", {"ocheck/src/typetbl.ml": "let freeze t = t"})
    f = dict(zip(CONTEXT_NAMES, context_features(["OCaml code in ocheck"], [], ocaml), strict=True))
    assert f["scope_ctx_cond_path"] == 1.0 and f["scope_ctx_cond_lang"] == 1.0 and f["scope_ctx_cond_task"] == 0.0
    py = View("make the table faster", "Done.", {"tools/typetbl.py": "def freeze(t): return t"})
    f = dict(zip(CONTEXT_NAMES, context_features(["OCaml code in ocheck"], [], py), strict=True))
    assert f["scope_ctx_cond_path"] == 0.0 and f["scope_ctx_cond_lang"] == 0.0
    assert all(math.isnan(v) for v in context_features([], [], py))


@pytest.mark.parametrize(("rule", "expected"), [
    ("Never tell me to buy or sell specific stocks.", "Advice(verbs=('buy', 'sell'))"),
    ("Weeknight dinners on the table within 1 hour.", "TimeCap(minutes=60)"),
    ("Commit subject lines must be under 50 characters.", "CommitSubjectLength(n=49)"),
    ("Commit subject lines at most 72 characters.", "CommitSubjectLength(n=72)"),
    ("Keep the gift under $1,200 please.", "PriceCap(cap=1200, about=None)"),
])
def test_parameters_captured_by_kind_files(rule: str, expected: str) -> None:
    assert expected in repr(compile_text(rule)[0])


def test_banned_qualified_identifier_without_parentheses_is_flagged() -> None:
    from toolkit.compliance import Rule
    from toolkit.compliance._catalogue import read_catalogue

    rule = Rule("r", "Never use Obj.magic in the OCaml code.")
    bad = View("convert it", "```ocaml\nlet to_record v = Obj.magic v\n```", None)
    good = View("convert it", "```ocaml\nlet to_record v = { name = v.name }\n```", None)
    assert read_catalogue(rule, bad).finding.verdict == "violated"
    assert read_catalogue(rule, good).finding.verdict == "satisfied"


def test_annotator_ids_reused_by_another_batch_are_namespaced() -> None:
    from toolkit.diagnostics.fidelity import namespaced
    from toolkit.profiles import Profile
    from toolkit.records import AnnotatedPoint

    prof = Profile.model_validate({"id": "tomasz", "preferences": [{"id": "p", "text": "Keep it short."}]})
    pt = AnnotatedPoint(id="p1", annotator="tomasz", task="t", response="r", corrected=False)
    pts, profs = namespaced("w24", [pt], {"tomasz": prof}, {"tomasz", "w20-tomasz"})
    assert list(profs) == ["w24/tomasz"] and profs["w24/tomasz"].id == "w24/tomasz"
    assert pts[0].annotator == "w24/tomasz"
    same = namespaced("w24", [pt], {"tomasz": prof}, {"w20-tomasz"})
    assert same[0][0].annotator == "tomasz"


def _lexicon_cases() -> list[tuple[str, str, str]]:
    from toolkit.compliance._lexicons import ENTRIES

    return [(n, kind, ex) for n, e in ENTRIES.items() for kind in ("match", "not_match") for ex in e[kind]]


@pytest.mark.parametrize(("name", "kind", "example"), _lexicon_cases(),
                         ids=[f"{n}:{k}:{e[:20]}" for n, k, e in _lexicon_cases()])
def test_lexicon_examples(name: str, kind: str, example: str) -> None:
    from toolkit.compliance._lexicons import ENTRIES, entry_hits

    assert entry_hits(ENTRIES[name], example) is (kind == "match")
