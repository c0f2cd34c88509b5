"""The specification judge: elements read from a rule, located in evidence, the learned judge's
contract, and the compiler's concrete validation cases."""

from __future__ import annotations

import re

import numpy as np
import pytest

from toolkit.records import Rule
from toolkit.rules.checks import OfflineCompiler, ReaderReviewer, compile_rule, judge, make_evidence
from toolkit.rules.checks._spec import (
    CLASSES,
    FEATURES,
    SpecJudge,
    concept_failures,
    concepts,
    file_for,
    locate,
    spec_of,
)


def _rule(behavior: str, scope: str = "global", conditions=(), exceptions=()) -> Rule:
    return Rule(id="r", behavior=behavior, scope=scope, conditions=list(conditions), exceptions=list(exceptions))


def test_concept_resource_examples_hold():
    assert concept_failures() == []
    assert all(c.must_match and c.cue_must_match for c in concepts().concepts.values())


@pytest.mark.parametrize(("behavior", "forbidden", "required"), [
    ("No unwrap() or expect() in library code; propagate errors instead.", ["unwrap()", "expect()"], []),
    ("Never run `make clean-db`; roll back one migration instead.", ["make clean-db"], []),
    ("Use \\autoref instead of typing 'Table 2' by hand.", ["Table 2"], ["\\autoref"]),
    ("Keep the changelog entry under 80 words.", ["more than 80 words"], []),
    ("Be more careful.", [], []),
    ('Keep the words "bespoke" and "seamless" out of the brochure.', ["bespoke", "seamless"], []),
    ('Keep the prose plain: no "delve", "tapestry".', ["delve", "tapestry"], []),
])
def test_elements_from_the_rule_words(behavior, forbidden, required):
    sp = spec_of(behavior)
    assert [e.text for e in sp.forbidden] == forbidden
    assert [e.text for e in sp.required] == required


def test_numbers_in_quoted_literals_generalise():
    el = spec_of("Use \\autoref instead of typing 'Table 2' by hand.").forbidden[0]
    assert el.finditer("as Table 4.1 shows") and not el.finditer("as \\autoref{tab:x} shows")


def test_locate_tells_use_from_mention():
    sp = spec_of("Never run `make clean-db`; roll back one migration instead.")
    said = make_evidence("delivery", "t", reply="I did not run `make clean-db`; I rolled back one migration.")
    ran = make_evidence("pre_action", "t", action={"tool": "shell", "command": "make clean-db && make migrate"})
    commented = make_evidence("artifact", "t", artifacts={"Makefile": "# never call make clean-db here\nall:\n"})
    assert [h.negated for h in locate(sp, said)] == [True]
    assert [h.where for h in locate(sp, ran)] == ["action"]
    assert [h.where for h in locate(sp, commented)] == ["comment"]


def test_file_for_reads_language_words():
    assert file_for("Don't hard-code currency symbols in Liquid templates").endswith(".liquid")
    assert file_for("Edit config/app.toml only") == "config/app.toml"


def test_spec_judge_contract_and_determinism():
    rule = _rule("Never run `make clean-db`; roll back one migration instead.")
    other = _rule("No unwrap() in library code.", "project:lib")
    items, labels, groups = [], [], []
    for k in range(6):
        items.append((rule, None, make_evidence("pre_action", f"task {k}", action={"tool": "shell",
                                                                                  "command": "make clean-db"})))
        labels.append("violation")
        items.append((rule, None, make_evidence("pre_action", f"task {k}", action={"tool": "shell",
                                                                                  "command": "make migrate"})))
        labels.append("pass")
        items.append((other, None, make_evidence("artifact", f"lib: step {k}",
                                                 artifacts={"src/a.rs": "let v = x.unwrap();\n"})))
        labels.append("violation")
        items.append((other, None, make_evidence("artifact", f"lib: step {k}", artifacts={"src/a.rs": "let v = x?;\n"})))
        labels.append("pass")
        groups += [f"a{k % 3}", f"a{k % 3}", f"b{k % 3}", f"b{k % 3}"]
    sj = SpecJudge(folds=3)
    assert sj.fit(items, labels, groups) is sj
    assert sj.model_ is not None and 0 < sj.threshold_ <= 1 and len(sj.cv_labels_) == len(items)
    x = sj.features(items[:4])
    assert x.shape == (4, len(FEATURES)) and np.isfinite(x).all()
    p = sj.predict_proba(items[:4])
    assert p.shape == (4, len(CLASSES)) and np.allclose(p.sum(axis=1), 1)
    assert sj.predict(items[:4]) == SpecJudge(folds=3).fit(items, labels, groups).predict(items[:4])


def test_default_judge_quotes_its_violation():
    rule = _rule("Never put secret values (passwords, tokens) into files you write.")
    ev = make_evidence("artifact", "Rotate the staging password.",
                       artifacts={"config/db.yml": 'db_password: "Xr4!pQ9z#Lm2wT"\n'})
    j = judge(rule, None, ev)
    assert j.label == "violation" and j.quotes and all(q in 'db_password: "Xr4!pQ9z#Lm2wT"' for q in j.quotes)
    ok = make_evidence("artifact", "Rotate the staging password.",
                       artifacts={"config/db.yml": 'db_password: "{{ vault_db_password }}"\n'})
    assert judge(rule, None, ok).label in ("pass", "not_applicable")


def test_concrete_validation_cases_use_the_rule_elements():
    rule = _rule("No unwrap() or expect() in firmware code; propagate errors instead.", "project:beacon",
                 ["the task involves firmware Rust code"])
    comp = compile_rule(rule, OfflineCompiler(), ReaderReviewer(), lambda r, c, e: judge(r, c, e))
    first = comp.rounds[0].proposal.cases
    bad = [c for c in first if c.expected == "violation"]
    assert bad and any("unwrap" in (a.content for a in c.evidence.artifacts or []).__next__() for c in bad
                       if c.evidence.artifacts)
    assert any(c.expected == "not_applicable" for c in first)


def test_character_limits_count_characters_of_a_named_line_and_read_action_texts():
    from toolkit.rules.checks._spec import limit_over

    sp = spec_of("Commit subjects must be at most 20 characters.")
    short = make_evidence("pre_action", "t", action={"tool": "git_commit", "args": {"message": "Fix typo\n\nlonger body " * 3}})
    long = make_evidence("pre_action", "t", action={"tool": "shell", "command": 'git commit -m "Fix the retry scheduler double booking"'})
    assert limit_over(sp, short) == 0.0
    assert limit_over(sp, long) > 0


def test_a_ban_with_places_is_a_ban_in_those_functions():
    """'No GetComponent calls inside Update or LateUpdate': the functions are where the ban holds,
    not banned words; a call in Awake is no use, and a trailing comment is a mention."""
    from toolkit.rules.checks._spec import enclosing_function

    sp = spec_of("No GetComponent / FindObjectOfType calls inside Update, FixedUpdate or LateUpdate.")
    assert [e.text for e in sp.forbidden] == ["GetComponent", "FindObjectOfType"]
    assert sp.places == ("Update", "FixedUpdate", "LateUpdate")
    code = ("class A : MonoBehaviour\n{\n    Rigidbody rb;  // don't GetComponent in Update\n"
            "    void Awake() { rb = GetComponent<Rigidbody>(); }\n\n    void Update()\n    {\n"
            "        var b = GetComponent<Rigidbody>();\n    }\n}\n")
    where = [h.where for h in locate(sp, make_evidence("artifact", "t", artifacts={"A.cs": code}))]
    assert where == ["comment", "code_elsewhere", "code"]
    assert enclosing_function("def f(x):\n    if x:\n        print(x)\n", 30) == "f"
    assert spec_of("Don't leave print statements in Python code.").places == ()


def test_judge_and_selector_fits_are_cached_on_disk_by_data_and_code(tmp_path, monkeypatch):
    """The judge's and the selector's fits are keyed by their development files (SPLITS.json
    included), parameters and the code they run; a judge read back from the disk cache decides
    as the fitted one (the same fit the session already made: no new fit here)."""
    from toolkit.rules._model_cache import _code_files, cached_fit
    from toolkit.rules.checks._selection import SELECTOR_CODE, development_selection_files
    from toolkit.rules.checks._spec import JUDGE_CODE, default_spec_judge, development_judge_files

    files = development_judge_files()
    assert files[0].name == "SPLITS.json" and any(f.name == "judge.gold.jsonl" for f in files)
    assert {"_spec.py", "_judge.py", "learned_reader.json"} <= {p.name for p in _code_files(JUDGE_CODE)}
    assert any(f.name == "library_50.json" for f in development_selection_files())
    assert {"_selection.py", "selection.py"} <= {p.name for p in _code_files(SELECTOR_CODE)}
    sj = default_spec_judge()
    monkeypatch.setenv("PREFMEM_CACHE_DIR", str(tmp_path))
    cached_fit("checks-judge", files, {"t": 1}, lambda: sj, code=JUDGE_CODE)
    again = cached_fit("checks-judge", files, {"t": 1}, lambda: pytest.fail("refit"), code=JUDGE_CODE)
    items = [(_rule("Never use print() in library code."), None,
              make_evidence("artifact", "t", artifacts={"lib/a.py": "print(1)\n"})),
             (_rule("Never use print() in library code."), None, make_evidence("delivery", "t", reply="Done."))]
    assert np.array_equal(sj.predict_proba(items), again.predict_proba(items)) and again is not sj


def test_code_lists_and_illustrations_in_the_element_reader():
    """Slash lists of code names and colon task names are elements; a requirement's own examples
    ("e.g. ...", a list ending in "...") illustrate it and are not required."""
    from toolkit.rules.checks._spec import _literal_pattern

    sp = spec_of("Parser functions must not allocate. No malloc/calloc/realloc anywhere on the parse path.")
    assert [e.text for e in sp.forbidden] == ["malloc", "calloc", "realloc"]
    assert [e.text for e in spec_of("Never run rails db:drop or db:schema:load.").forbidden] == ["db:drop",
                                                                                               "db:schema:load"]
    assert spec_of("Give the units of every such argument (K, Pa, kg m-2 s-1...).").required == ()
    assert spec_of("Each outcome gets a number and a date, e.g. '40 people by July 2027'.").required == ()
    assert [e.text for e in spec_of("No emoji; use `logger.info` (e.g. `logger.info(x)`).").required] == ["logger.info"]
    assert re.search(_literal_pattern("I am writing to apply for..."), "I am writing to apply for the role")
