"""The learned resolver: estimator contract, abstention, development data only, the disk cache."""

from __future__ import annotations

import numpy as np
from sklearn.base import clone

from toolkit.records import ResolutionInput, Rule
from toolkit.rules import _model_cache
from toolkit.rules.resolution_model import (
    DEV_BATCHES,
    CaseFeatures,
    FittedResolver,
    OperationModel,
    Selection,
    TargetModel,
    development_cases,
    grammar_class,
)
from toolkit.splits import role_of


def _toy(n: int = 42, seed: int = 0) -> tuple[CaseFeatures, list[str], list[str | None]]:
    rs = np.random.RandomState(seed)
    ops = [("reuse", "add", "retract")[i % 3] for i in range(n)]
    vec = rs.normal(size=(n, 6)).astype(np.float32)
    cues = rs.randint(0, 2, size=(n, 4)).astype(np.float32)
    for i, o in enumerate(ops):
        cues[i, ("reuse", "add", "retract").index(o)] = 1.0
    pairs, targets = [], []
    for i, o in enumerate(ops):
        P = rs.uniform(size=(3, 7)).astype(np.float32)
        t = i % 3
        P[t, 0] += 1.0  # the target is the nearest rule
        pairs.append((("a", "b", "c"), P))
        targets.append(None if o == "add" else "abc"[t])
    texts = tuple(f"text {o} {i}" for i, o in enumerate(ops))
    return CaseFeatures(vec, cues, tuple(pairs), texts), ops, targets


def test_estimator_contract_and_determinism() -> None:
    X, y, t = _toy()
    m = OperationModel(C=1.0, vector_weight=1.0, random_state=0, ngram_weight=1.0)
    assert not hasattr(m, "model_")  # __init__ only stores arguments
    assert m.fit(X, y) is m
    p = m.predict_proba(X)
    assert np.array_equal(p, clone(m).fit(X, y).predict_proba(X))
    assert np.allclose(p.sum(axis=1), 1.0)
    assert (m.predict(X) == np.asarray(y)).mean() > 0.9
    tm = TargetModel(random_state=0)
    assert tm.fit(X, t) is tm
    ranked = tm.rank(X)
    hits = [r[0][0] == g for r, g in zip(ranked, t, strict=True) if g is not None]
    assert np.mean(hits) > 0.9


def test_below_the_operating_point_the_resolver_abstains() -> None:
    X, y, t = _toy()
    op = OperationModel(random_state=0).fit(X, y)
    tm = TargetModel(random_state=0).fit(X, t)
    sel = Selection(C=1.0, vector_weight=0.0, threshold=1.01, ngram_weight=0.0,
                    oof_decision=(0, 1), oof_target=(0, 1), oof_unknown=0, grid=[])
    out = FittedResolver(op, tm, sel, "minilm").predict(X)
    assert all(o is None and tgt is None for o, tgt, _ in out)
    sel0 = Selection(C=1.0, vector_weight=0.0, threshold=0.0, ngram_weight=0.0,
                     oof_decision=(0, 1), oof_target=(0, 1), oof_unknown=0, grid=[])
    out = FittedResolver(op, tm, sel0, "minilm").predict(X)
    assert all(o is not None for o, _, _ in out)
    assert all(tgt is None for o, tgt, _ in out if o == "add")


def test_grammar_class() -> None:
    assert grammar_class(None) == "unknown"
    assert grammar_class([]) == "none"
    assert grammar_class(["reuse"]) == "reuse"
    assert grammar_class(["revise", "add"]) == "multi"


def test_development_cases_read_development_files_only() -> None:
    from toolkit.paper import fixtures_dir

    for b in DEV_BATCHES:
        for f in ("resolution.jsonl", "resolution.gold.jsonl"):
            assert role_of(fixtures_dir() / "resolution" / b / f) == "development"
    cases = development_cases(grow=False)
    ids = {c.record.id for c in cases}
    from toolkit.rules.resolution_eval import load_cases

    held, _ = load_cases("heldout")
    assert not ids & {r.id for r in held}
    assert {c.op for c in cases} <= {"reuse", "revise", "replace", "retract", "add", "none", "multi"}


def test_model_cache_reuses_a_fit_and_refits_when_the_data_change(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("PREFMEM_CACHE_DIR", str(tmp_path))
    f = tmp_path / "train.jsonl"
    f.write_text("a\n", encoding="utf-8")
    calls = []

    def build() -> int:
        calls.append(1)
        return len(calls)

    assert _model_cache.cached_fit("toy", [f], {"seed": 0}, build) == 1
    assert _model_cache.cached_fit("toy", [f], {"seed": 0}, build) == 1  # read back
    f.write_text("b\n", encoding="utf-8")
    assert _model_cache.cached_fit("toy", [f], {"seed": 0}, build) == 2
    assert _model_cache.cached_fit("toy", [f], {"seed": 1}, build) == 3


def test_model_cache_key_covers_the_code_a_fit_imports() -> None:
    """The embedder and the text layer a fit calls are part of its key (not only toolkit/rules)."""
    from toolkit.rules.admission_model import ADMISSION_CODE

    pkg = _model_cache._PKG
    for code in (_model_cache.ALL_CODE, ADMISSION_CODE):
        names = {p.relative_to(pkg).as_posix() for p in _model_cache._code_files(code)}
        assert {"llm/embeddings.py", "llm/_minilm.py", "text/__init__.py", "splits.py"} <= names
        assert not any(n.startswith(("gating/", "drift/", "notebooks/")) for n in names)
    closure = {p.name for p in _model_cache.import_closure("toolkit.rules.resolution_model")}
    assert {"resolution_model.py", "resolution_pairs.py", "embeddings.py"} <= closure


def test_a_restatement_sharing_no_word_is_found_by_embeddings() -> None:
    from toolkit.rules.resolution_model import case_features

    lib = [Rule(id="r1", behavior="Keep answers short: a few sentences at most.", scope="global",
                conditions=[], exceptions=[]),
           Rule(id="r2", behavior="Tag every code block with its language.", scope="global",
                conditions=[], exceptions=[])]
    rec = ResolutionInput(id="x", correction="that was an essay again", library=lib)
    X = case_features([rec], [([], [])])
    ids, P = X.pairs[0]
    assert ids[int(np.argmax(P[:, 0]))] == "r1"  # cosine to the correction


def test_an_empty_library_gets_the_grammars_reading_not_a_crash() -> None:
    from toolkit.rules.resolution_model import resolve_learned

    rec = ResolutionInput(id="e", correction="From now on, never add emoji to commit messages.",
                          library=[])
    res = resolve_learned([rec])[0]
    assert all(p.target is None for p in res.proposals)


def test_pair_features_see_the_rules_conditions_scope_and_standing() -> None:
    from toolkit.rules.resolution_pairs import PAIR_COLUMNS, pair_matrix

    lib = [Rule(id="t", behavior="Add type hints to every function signature", scope="global",
                conditions=[], exceptions=["private helpers with a leading underscore"]),
           Rule(id="p", behavior="Use pnpm instead of npm", scope="project:nimbus",
                conditions=[], exceptions=[]),
           Rule(id="b", behavior="Never add emoji to commit messages", scope="global",
                conditions=[], exceptions=[])]
    text = "underscore-prefixed internals don't need annotations"
    P = pair_matrix(text, [text], lib, set(), "minilm")
    col = {c: i for i, c in enumerate(PAIR_COLUMNS)}
    assert P.shape == (3, len(PAIR_COLUMNS))
    assert P[0, col["cos_conditions"]] > 0 and P[1, col["cos_conditions"]] == 0  # exception seen
    assert int(np.argmax(P[:, col["margin_over_others"]])) == 0
    assert (P[:, col["margin_over_others"]] > 0).sum() == 1  # only the best rule stands out
    named = pair_matrix("in nimbus, keep using it", ["in nimbus, keep using it"], lib, set(),
                        "minilm")
    assert named[1, col["own_project_named"]] == 1 and named[0, col["other_project_named"]] == 1
    stop = pair_matrix("don't add emoji to commits", ["don't add emoji to commits"], lib, set(),
                       "minilm")
    assert stop[2, col["rule_is_prohibition"]] == 1 and stop[2, col["polarity_flip"]] == 0
    assert stop[0, col["polarity_flip"]] == 1  # a negated correction against a requirement


def test_the_object_a_correction_names_a_rule_by_is_read_against_each_rule() -> None:
    from toolkit.rules.resolution_pairs import PAIR_COLUMNS, named_objects, pair_matrix

    assert named_objects("You no longer need to follow the answer length rule.") == (
        "answer length",)
    assert named_objects("keep answers short") == ()
    lib = [Rule(id="a", behavior="Keep answers concise", scope="global", conditions=[],
                exceptions=[]),
           Rule(id="c", behavior="Keep commit subjects under 72 characters", scope="global",
                conditions=[], exceptions=[])]
    text = "You no longer need to follow the answer length rule."
    P = pair_matrix(text, [text], lib, set(), "minilm")
    col = {c: i for i, c in enumerate(PAIR_COLUMNS)}
    assert P[0, col["object_overlap"]] == 0.5 and P[1, col["object_overlap"]] == 0
    assert P[0, col["object_cos"]] > 0
    plain = pair_matrix("keep answers short", ["keep answers short"], lib, set(), "minilm")
    assert (plain[:, [col["object_overlap"], col["object_cos"]]] == 0).all()  # no object named


def test_terse_dismissal_is_a_cue_feature() -> None:
    from toolkit.rules.resolution_model import CUE_KINDS, _compiled

    i = CUE_KINDS.index(("resolution/cues", "dismiss"))
    pats = _compiled()[i]
    assert any(p.search("the ping-the-lead thing, she left. drop it") for p in pats)
    assert not any(p.search("drop it into the shared folder") for p in pats)


def test_grown_libraries_do_not_depend_on_the_eligible_pool_memo() -> None:
    from toolkit.rules import distractors
    from toolkit.rules.resolution_eval import load_cases

    cs, _ = load_cases("dev")
    first = [distractors.grow_library(c, 47, 1).library for c in cs[:4]]
    again = [distractors.grow_library(c, 47, 1).library for c in cs[:4]]  # memoised
    # a fresh pool object (a copy): nothing memoised for it, every overlap computed
    fresh = [distractors.grow_library(c, 47, 1, pool=list(distractors.distractor_pool())).library
             for c in cs[:4]]
    ids = [[[r.id for r in lib] for lib in libs] for libs in (first, again, fresh)]
    assert ids[0] == ids[1] == ids[2]


def test_an_answer_the_calibrator_does_not_believe_in_is_unknown() -> None:
    from toolkit.rules.resolution_model import AnswerCalibrator, answer_features

    X, y, t = _toy()
    op = OperationModel(random_state=0).fit(X, y)
    tm = TargetModel(random_state=0).fit(X, t)
    # a calibrator that has seen targeted answers wrong and untargeted ones right
    F = [answer_features(np.array([0.8, 0.2]), [("a", 0.9), ("b", 0.2)], k % 2 == 0)
         for k in range(20)]
    cal = AnswerCalibrator(random_state=0).fit(np.array(F), [k % 2 == 1 for k in range(20)])
    sel = Selection(C=1.0, vector_weight=0.0, threshold=0.5, ngram_weight=0.0,
                    oof_decision=(0, 1), oof_target=(0, 1), oof_unknown=0, grid=[],
                    calibrator=cal)
    out = FittedResolver(op, tm, sel, "minilm").predict(X)
    assert all(o is None and tg is None for o, tg, p in out if p < 0.5)
    assert not any(o in ("reuse", "retract") for o, _, _ in out)  # every targeted answer abstains
    assert any(o == "add" for o, _, _ in out)


def test_grown_libraries_do_not_depend_on_the_hash_seed() -> None:
    import os
    import subprocess
    import sys

    code = ("import hashlib;from toolkit.rules.distractors import grow_library;"
            "from toolkit.rules.resolution_eval import load_cases;cs,_=load_cases('heldout');"
            "print(hashlib.sha256(''.join(grow_library(c,47,1).model_dump_json() for c in cs)"
            ".encode()).hexdigest())")
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": s}).stdout for s in ("1", "2")}
    assert len(outs) == 1


def test_restated_rows_word_each_reuse_rule_as_its_correction_and_train_only() -> None:
    from toolkit.rules.resolution_model import restated_rows

    cases = development_cases(grow=False)
    rows = restated_rows(cases)
    reuse = [c for c in cases if c.op == "reuse" and c.target in {r.id for r in c.record.library}]
    assert len(rows) == len(reuse) > 0
    for src, row in zip(reuse, rows, strict=True):
        assert row.derived and row.group == src.group and (row.op, row.target) == ("reuse",
                                                                                src.target)
        rule = next(r for r in row.record.library if r.id == src.target)
        assert rule.behavior == src.record.correction == row.record.correction
        others = [r for r in row.record.library if r.id != src.target]
        assert others == [r for r in src.record.library if r.id != src.target]
    assert not restated_rows(rows)  # derived rows are not derived again


def test_the_fitted_resolver_scores_written_cases_only_and_holds_the_restated_rows() -> None:
    from toolkit.rules.resolution_model import fitted_resolver

    sel = fitted_resolver(0).selection
    assert sel.oof_decision[1] == len(development_cases()) == len(sel.oof_cases)
    assert sel.derived_weight > 0 and sel.oof_restated[0] >= 0.9 * sel.oof_restated[1] > 0


def test_a_near_verbatim_restatement_is_reuse_of_its_rule() -> None:
    """A correction that repeats a stored rule nearly word for word reuses that rule (it was read
    as a retraction or a replacement: notebook 04's long run lost its library)."""
    from toolkit.rules.resolution_model import resolve_learned

    lib = [Rule(id="r1", behavior="Tag every code block with its language.", scope="global",
                conditions=[], exceptions=[]),
           Rule(id="r2", behavior="Never commit directly to the main branch.", scope="global",
                conditions=[], exceptions=[]),
           Rule(id="r3", behavior="Write dates as YYYY-MM-DD in reports.", scope="global",
                conditions=[], exceptions=[])]
    cases = {"I mentioned this before: tag every code block with its language.": "r1",
             "Once more, never commit directly to the main branch.": "r2",
             "Same as always: dates as YYYY-MM-DD in reports.": "r3"}
    recs = [ResolutionInput(id=f"v{i}", correction=c, library=lib) for i, c in enumerate(cases)]
    for rec, res in zip(recs, resolve_learned(recs), strict=True):
        assert [(p.op, p.target) for p in res.proposals] == [("reuse", cases[rec.correction])], (
            rec.correction, res.dropped)


def test_the_pairwise_reranker_follows_the_estimator_contract() -> None:
    X, _, t = _toy()
    tm = TargetModel(C=0.1, random_state=0, pairwise=True)
    assert not hasattr(tm, "model_")
    assert tm.fit(X, t) is tm
    ranked = tm.rank(X)
    # P(target) is a distribution over the case's library (a conditional logit)
    assert all(abs(sum(p for _, p in r) - 1.0) < 1e-6 for r in ranked)
    hits = [r[0][0] == g for r, g in zip(ranked, t, strict=True) if g is not None]
    assert np.mean(hits) > 0.9
    assert ranked == clone(tm).fit(X, t).rank(X)
    assert tm.model_.fit_intercept is False  # differences within a case: no intercept


def test_batch_folds_keep_each_batch_in_one_fold() -> None:
    from toolkit.rules.resolution_model import _folds

    groups = [f"firstcontact/w{b}:w{b}-r{i:02d}" for b in (1, 2, 6, 7, 9) for i in range(4)]
    folds = _folds([g.split(":")[0] for g in groups], 3)
    where = {}
    for f, idx in enumerate(folds):
        for i in idx:
            where.setdefault(groups[i].split(":")[0], set()).add(f)
    assert all(len(v) == 1 for v in where.values())
    assert sorted(i for idx in folds for i in idx) == list(range(len(groups)))


def test_the_new_development_batches_are_development_data() -> None:
    from toolkit.paper import fixtures_dir

    for b in ("w18", "w20", "w21", "w22"):
        assert f"firstcontact/{b}" in DEV_BATCHES
        for f in ("resolution.jsonl", "resolution.gold.jsonl"):
            assert role_of(fixtures_dir() / "resolution" / "firstcontact" / b / f) == "development"


def test_every_development_batch_trains_the_resolver_and_no_other() -> None:
    """A batch written apart joins the fit once SPLITS.json makes it development (w28, w29 in the
    tenth pass), and a first-contact or held-out batch never does."""
    from toolkit.paper import fixtures_dir

    root = fixtures_dir() / "resolution"
    batches = sorted(p.parent for p in (root / "firstcontact").glob("*/resolution.gold.jsonl"))
    assert batches
    for b in batches:
        name = f"firstcontact/{b.name}"
        dev = all(role_of(b / f) == "development"
                  for f in ("resolution.jsonl", "resolution.gold.jsonl"))
        assert (name in DEV_BATCHES) == dev, name
    assert {"firstcontact/w28", "firstcontact/w29", "firstcontact/w34",
            "firstcontact/w35", *(f"firstcontact/w{n}" for n in range(38, 44))} <= set(DEV_BATCHES)


def test_the_calibrator_reads_the_target_margin_and_the_operating_point_weighs_wrong_answers() -> None:
    from toolkit.rules.resolution_model import AnswerCalibrator, answer_features, operating_point

    near_tie = answer_features(np.array([0.9, 0.1]), [("a", 0.97), ("b", 0.96)], True)
    clear = answer_features(np.array([0.9, 0.1]), [("a", 0.97), ("b", 0.10)], True)
    untargeted = answer_features(np.array([0.9, 0.1]), [("a", 0.97), ("b", 0.96)], False)
    assert near_tie[4] < 0.05 and clear[4] > 0.8 and untargeted[3:] == [0.0, 0.0, 0.0]
    rs = np.random.RandomState(0)
    F, right = [], []
    for _ in range(200):  # right when the target stands out, a coin toss on near ties
        m = rs.uniform()
        F.append(answer_features(np.array([0.9, 0.1]), [("a", 0.97), ("b", 0.97 - m)], True))
        right.append(bool(m > 0.3 or rs.uniform() < 0.3))
    cal = AnswerCalibrator(random_state=0).fit(np.array(F), right)
    p_tie, p_clear = cal.predict_proba(np.array([near_tie, clear]))
    assert p_tie < 0.5 < p_clear
    assert np.array_equal(cal.predict_proba(np.array(F)),
                          clone(cal).fit(np.array(F), right).predict_proba(np.array(F)))
    # an abstention scores 0, a wrong answer -cost: the threshold drops the near coin tosses
    p = np.array([0.9, 0.8, 0.4, 0.3])
    ok = np.array([True, True, False, False])
    assert operating_point(p, ok, 1.0) == (0.8, 2.0)
    assert operating_point(p, ok, 0.0)[0] == 0.0  # wrong answers free: never abstain


def test_a_removal_imperative_its_rule_also_asks_for_is_not_a_retraction() -> None:
    """The repeat of tests/test_memory.py: "delete the leftovers" against a rule that asks to
    delete them restates it (the work-removal kind); a retraction in the user's words still
    retracts."""
    from toolkit.rules.resolution_model import case_features

    lib = [Rule(id="C1", behavior="delete the leftovers before you wrap up", scope="global",
                conditions=[], exceptions=[]),
           Rule(id="C2", behavior="Tag every code block with its language.", scope="global",
                conditions=[], exceptions=[])]
    texts = ["Please delete the leftovers before you wrap up; you left debug_output.log in the "
             "workspace.", "Delete the leftovers before you wrap up.",
             "Drop the leftovers rule, I clean up myself.", "You can stop deleting the leftovers."]
    recs = [ResolutionInput(id=f"x{i}", correction=t, library=lib) for i, t in enumerate(texts)]
    X = case_features(recs, [([], [])] * len(recs))
    assert X.no_retract == (True, True, False, False)
    classes = ["reuse", "retract"]
    g = X.guarded(np.array([[0.2, 0.8]] * 4), classes)
    assert (g[:2, 1] == 0).all() and (g[2:, 1] == 0.8).all()
    assert X.take([1, 3]).no_retract == (True, False)


def test_roles_table_shows_an_unscored_malformed_batch_and_sorts_batches_naturally() -> None:
    from toolkit.diagnostics._firstcontact import natural_key
    from toolkit.diagnostics.resolution import unscored_row
    from toolkit.paper import fixtures_dir

    w24 = fixtures_dir() / "resolution" / "firstcontact" / "w24"
    assert role_of(w24 / "resolution.jsonl") == "first-contact"
    row = unscored_row(w24)
    assert row["role"] == "first-contact" and row["n"] == 24 and row["decision"] == "-"
    assert row["recorded"].startswith("malformed, not scored: ")
    assert "resolution.jsonl:13 library." in row["recorded"] and "scope" in row["recorded"]
    assert row["unknown"] == "-"  # the table's one missing-value marker, not None / NaN
    assert sorted(["firstcontact/w10", "firstcontact/w2", "firstcontact/w1"], key=natural_key) == [
        "firstcontact/w1", "firstcontact/w2", "firstcontact/w10"]
    # both roles tables list the shipped batches in that order (w2 before w10)
    from types import SimpleNamespace

    from toolkit.diagnostics._firstcontact import all_batches

    for kind in ("admission", "resolution"):
        names = [b.name for b in all_batches(SimpleNamespace(options={}), kind, f"{kind}.jsonl",
                                             fixtures_dir())]
        assert names == sorted(names, key=natural_key) and names.index("w2") < names.index("w10")


def test_a_target_case_of_weight_zero_is_a_case_left_out() -> None:
    """``TargetModel.fit``'s case weights: weight 0 fits exactly as without the case (pointwise and
    pairwise), and a weight other than 1 changes the fit (the weight is not ignored)."""
    X, _, t = _toy()
    w = np.ones(len(t))
    w[:9] = 0.0
    dropped = [None if i < 9 else g for i, g in enumerate(t)]
    for pw in (False, True):
        a = TargetModel(C=0.3, random_state=0, pairwise=pw).fit(X, t, sample_weight=w)
        b = TargetModel(C=0.3, random_state=0, pairwise=pw).fit(X, dropped)
        assert np.allclose(a.model_.coef_, b.model_.coef_, atol=1e-6)
        c = TargetModel(C=0.3, random_state=0, pairwise=pw).fit(X, t)
        h = TargetModel(C=0.3, random_state=0, pairwise=pw).fit(X, t, sample_weight=w + 2.0)
        assert not np.allclose(h.model_.coef_, c.model_.coef_, atol=1e-6)


def test_grown_copies_are_marked_and_the_written_large_row_leaves_them_out() -> None:
    """Each small-library case grown to 60 rules is ``grown`` and shares its CV group with its
    written original; no case written in a ~60-rule library is; the fitted resolver's out-of-fold
    ``large_written`` row counts exactly the ~60-rule cases as written."""
    from toolkit.rules.resolution_model import fitted_resolver

    cases = development_cases()
    written = {c.group for c in cases if not c.grown}
    assert any(c.grown for c in cases)
    for c in cases:
        if c.grown:
            assert len(c.record.library) > 10 and c.group in written
    small_groups = {c.group for c in cases if len(c.record.library) <= 10}
    assert all(c.group not in small_groups for c in cases
               if not c.grown and len(c.record.library) > 10)
    sel = fitted_resolver(0).selection
    g = sel.oof_groups
    n_written_large = sum(not c.grown and len(c.record.library) > 10 for c in cases)
    assert g["large_written"]["n"] == n_written_large > 0
    assert g["large"]["n"] == n_written_large + sum(c.grown for c in cases)
    assert (g["large_written"]["decision_target"] + g["large_written"]["unknown"]
            + g["large_written"]["wrong"] == n_written_large)
    assert sel.grown_weight in {g2["grown_weight"] for g2 in sel.grid}
