"""The learned admitter's estimator contract, its operating point, and first-contact recording."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from sklearn.base import clone

from toolkit.diagnostics import _firstcontact as fc
from toolkit.rules.admission_model import (
    AdmissionModel,
    Features,
    TrainingSet,
    _threshold,
    cue_features,
)
from toolkit.splits import HeldOutError, require_role


def _toy(n: int = 60, seed: int = 0) -> tuple[Features, TrainingSet]:
    rs = np.random.RandomState(seed)
    dec = (["persist"] * (n // 2)) + (["task_local"] * (n // 4)) + (["defer"] * (n - n // 2 - n // 4))
    vec = rs.normal(size=(n, 8)).astype(np.float32)
    for i, d in enumerate(dec):
        vec[i, ("persist", "task_local", "defer").index(d)] += 3.0
    vec /= np.linalg.norm(vec, axis=1, keepdims=True)
    cues = rs.randint(0, 2, size=(n, 5)).astype(np.float32)
    scope = ["project" if i % 2 else "global" if d == "persist" else None
             for i, d in enumerate(dec)]
    scope = [s if d == "persist" else None for s, d in zip(scope, dec, strict=True)]
    cond = [bool(i % 3 == 0) and d == "persist" for i, d in enumerate(dec)]
    data = TrainingSet([f"t{i}" for i in range(n)], dec, scope, cond, [f"g{i % 6}" for i in range(n)],
                       [1.0] * n, [True] * n)
    return Features(vec, cues), data


def test_estimator_contract_and_determinism() -> None:
    X, data = _toy()
    m = AdmissionModel(C=1.0, cue_weight=1.0, persist_threshold=0.6, random_state=3)
    assert m.fit(X, data) is m
    assert hasattr(m, "decision_") and hasattr(m, "classes_")
    p1 = m.predict_proba(X)
    p2 = clone(m).fit(X, data).predict_proba(X)
    assert np.array_equal(p1, p2)
    assert np.allclose(p1.sum(axis=1), 1.0)
    assert set(map(str, m.classes_)) == {"persist", "task_local", "defer"}
    assert not hasattr(AdmissionModel(), "decision_")  # __init__ only stores arguments


def test_operating_point_defers_below_the_threshold() -> None:
    X, data = _toy()
    strict = AdmissionModel(persist_threshold=1.01).fit(X, data)
    out = strict.decide(X)
    assert not any(d == "persist" for d, _, _ in out)
    assert any(reason == "below_operating_point" and d == "defer" for d, reason, _ in out)


def test_threshold_keeps_false_persistence_within_the_constraint() -> None:
    p = np.array([0.99, 0.95, 0.9, 0.7, 0.6, 0.3, 0.2])
    pos = np.array([True, True, True, False, False, False, False])
    t = _threshold(p, pos, 0.0)
    assert 0.7 < t <= 0.9
    assert int(((p >= t) & ~pos).sum()) == 0


def test_deictic_reference_is_a_feature_not_a_rule() -> None:
    a, b = cue_features(["Before you send this one over, strip the prints.",
                         "Before you send anything over, strip the prints."])
    assert not np.array_equal(a, b)


def test_training_never_reads_held_out() -> None:
    with pytest.raises(HeldOutError):
        require_role("fixtures/admission/heldout.jsonl", "fit")


def test_first_contact_is_scored_once_and_then_read(tmp_path) -> None:
    (tmp_path / "admission.jsonl").write_text(
        json.dumps({"id": "a", "text": "From now on, use tabs."}) + "\n"
        + json.dumps({"id": "b", "text": "Use tabs in this file."}) + "\n")
    (tmp_path / "admission.gold.jsonl").write_text(
        json.dumps({"id": "a", "decision": "persist", "scope": "global", "conditional": False,
                    "extra_field": 1}) + "\n"
        + json.dumps({"id": "b", "decision": "task_local"}) + "\n")
    calls = []

    def admit(recs):
        calls.append(len(recs))
        return [{"id": "a", "decision": "persist", "scope": "global", "conditional": False,
                 "status": "ok"}, {"id": "b", "decision": "persist", "scope": "global",
                                   "conditional": False, "status": "ok"}]

    rec = fc.score_first_contact(tmp_path, "admission (stub)",
                                 lambda b: fc.admission_batch(b, admit, 0))
    assert rec["scores"]["erroneous_persistence"]["k"] == 1
    assert rec["scores"]["structural"]["k"] == 1 and rec["n"] == 2
    again = fc.score_first_contact(tmp_path, "admission (stub)",
                                   lambda b: fc.admission_batch(b, admit, 0))
    assert again == rec and calls == [2]
    with pytest.raises(Exception, match="belongs to"):
        fc.score_first_contact(tmp_path, "resolution (stub)", lambda b: ({}, 0))


def test_item_at_hand_and_recurrence_pairs_are_features() -> None:
    from toolkit.rules.admission_model import ITEM_KINDS, RECURRENCE_KINDS, feature_names

    names = feature_names()
    X = cue_features(["Every time you mention them in this memo, call them Respondent.",
                      "Every time you mention them, call them Respondent."])
    assert X.shape[1] == len(names)
    assert len(names) - len(set(names)) == 0
    assert sum("*" in n for n in names) == len(ITEM_KINDS) * len(RECURRENCE_KINDS)
    col = names.index("demonstrative*recurring_trigger")
    assert X[0, col] == 1.0 and X[1, col] == 0.0


def test_rule_text_comes_from_the_lasting_sentence() -> None:
    from toolkit.records import AdmissionInput
    from toolkit.rules.admission import _lasting_sentences
    from toolkit.rules.admission_model import fitted_admitter

    text = ("Nope, the date column is wrong, redo the table. From now on, always write dates as "
            "ISO 8601 in every report you make for me.")
    recs = [AdmissionInput(id="a", text=text), AdmissionInput(id="b", text="Always use ISO dates.")]
    picked = _lasting_sentences(recs, [("persist", "model", {}), ("persist", "model", {})],
                                fitted_admitter(0).model)
    assert "ISO 8601" in picked["a"] and "redo" not in picked["a"]
    assert "b" not in picked  # one sentence: the whole message is the rule text


def test_out_of_fold_by_batch_adds_up_and_sits_beside_each_first_contact() -> None:
    """The per-batch out-of-fold counts add up to the development row, and the diagnostic's table
    sets each written-apart development batch's recorded first-contact score beside its own."""
    from toolkit.diagnostics.admission import first_contact_vs_oof
    from toolkit.paper import fixtures_dir
    from toolkit.rules.admission_model import DEV_BATCHES, fitted_admitter
    from toolkit.splits import first_contact_of, natural_key

    sel = fitted_admitter(0).selection
    k = sum(right for _b, right, _n in sel.oof_by_batch)
    n = sum(scored for _b, _r, scored in sel.oof_by_batch)
    assert n == sel.oof_false_persist[1] + sel.oof_persist_recall[1]
    assert k == round(sel.oof_structural * n)
    df, text = first_contact_vs_oof(sel.oof_by_batch)
    recorded = [b for b in DEV_BATCHES if first_contact_of(fixtures_dir() / "admission" / b) is not None]
    assert list(df.batch) == sorted((b.rsplit("/", 1)[-1] for b in recorded), key=natural_key)
    oof = {b.rsplit("/", 1)[-1]: right for b, right, _n in sel.oof_by_batch}
    for row in df.itertuples():
        rec = first_contact_of(fixtures_dir() / "admission" / "firstcontact" / row.batch)
        assert row.first_contact == rec["scores"]["structural"]["k"]
        assert row.out_of_fold_now == oof[row.batch] and row.gain == row.out_of_fold_now - row.first_contact
    assert f"{df.first_contact.sum()}/{df.n.sum()}" in text[0]
    assert f"{df.out_of_fold_now.sum()}/{df.n.sum()}" in text[0]


def test_missing_shared_data_fits_on_fixtures_and_says_so(tmp_path) -> None:
    from toolkit.rules.admission_model import training_set

    data, used = training_set(str(tmp_path))
    assert all(data.scored) and "prefeval" not in data.groups
    assert any("fixtures only" in u for u in used)


def test_the_fit_reads_the_data_directory_of_the_run_in_progress(tmp_path, monkeypatch) -> None:
    """``prefmem reproduce --data-dir X`` reaches the admitter's fit, which has no run context:
    inside a run it reads the run's data directory (``None``: a run without data), outside it
    the default. (Before, the fit read ../shared/data beside the checkout whatever the run said,
    so a checkout elsewhere fitted without PrefEval's rows and wrote other tables.)"""
    import toolkit.rules.admission_model as am
    from toolkit.runs import RunContext, default_data_dir

    class Reached(Exception):
        pass

    seen = []

    def training_set(data_dir=None):
        seen.append(data_dir)
        raise Reached

    monkeypatch.setattr(am, "training_set", training_set)
    monkeypatch.setattr(am, "_FITTED", {})  # fits made by earlier tests in this process
    outside = default_data_dir()
    for data_dir in (tmp_path / "elsewhere", None):
        with RunContext(out_dir=tmp_path / "run", data_dir=data_dir).running():
            with pytest.raises(Reached):
                am.fitted_admitter(0)
    with pytest.raises(Reached):
        am.fitted_admitter(0)
    assert seen == [tmp_path / "elsewhere", None, outside]
    assert default_data_dir() == outside  # the run's setting ends with the run


def test_signal_detector_is_a_feature_not_a_veto() -> None:
    """A message the hand-written detector finds no signal in is still persisted when the model's
    P(persist) clears the operating point (n14a: w17 lost two lasting rules, P 0.96 and 0.81, to
    the old veto; out of fold on development the veto cost 18 structural decisions of 672)."""
    from toolkit.records import AdmissionInput
    from toolkit.rules.admission import _decide, detect_signal
    from toolkit.rules.admission_model import feature_names
    from toolkit.rules.cues import parse_cues

    text = "orbit forbids abbreviations in names"
    assert not detect_signal(text)
    col = feature_names().index("signal")
    X = cue_features([text, "From now on, use tabs."])
    assert X[0, col] == 0.0 and X[1, col] == 1.0
    rec = AdmissionInput(id="s", text=text)
    probs = {"persist": 0.9, "task_local": 0.05, "defer": 0.05}
    kept = _decide(rec, parse_cues(text), ("persist", "model", probs), 0.2, 0.1)
    assert kept.decision == "persist" and not kept.signal and kept.reason == "model"
    local = _decide(rec, parse_cues(text), ("task_local", "model", probs), 0.2, 0.1)
    assert local.decision == "task_local" and local.reason == "no_signal"


def test_batch_folds_keep_each_batch_whole() -> None:
    """Folds grouped by batch (the part of a group before ':') never split a batch, so every scored
    row is predicted by a model that never saw its writer; auxiliary rows are never scored."""
    from toolkit.rules.admission_model import _folds

    groups = ["dev:b1", "dev:b2", "dev2:b1", "firstcontact/w1:a", "firstcontact/w1:b",
              "firstcontact/w2:a", "prefeval", "firstcontact/w3:c"]
    scored = [True] * 6 + [False, True]
    for k in (2, None):
        folds = _folds(groups, scored, k, "batch")
        seen = np.concatenate(folds)
        assert sorted(seen.tolist()) == [0, 1, 2, 3, 4, 5, 7]
        for f in folds:
            batches = {groups[i].split(":")[0] for i in f}
            for other in folds:
                if other is not f:
                    assert not batches & {groups[i].split(":")[0] for i in other}
    assert len(_folds(groups, scored, None, "batch")) == 5


def test_char_block_feeds_the_scope_and_conditional_heads() -> None:
    X, data = _toy()
    names = ["atlas-api", "Kestrel", "orbit_fw", "every file", "over 200 lines", "bar charts"]
    X = Features(X.vectors, X.cues, tuple(f"in {names[i % 6]} keep it {i}" for i in range(len(X.cues))))
    m = AdmissionModel(scope_char_weight=4.0, conditional_char_weight=8.0).fit(X, data)
    assert hasattr(m.scope_, "chars_") and hasattr(m.conditional_, "chars_")
    assert not hasattr(m.decision_, "chars_")
    plain = AdmissionModel().fit(X, data)
    assert not np.array_equal(m.scope_proba(X), plain.scope_proba(X))


def test_batches_fit_on_are_development_after_their_first_contact() -> None:
    """Every batch written apart that the admitter fits on is development data in SPLITS.json,
    and the batches scored at first contact keep their record (w21/w22 joined on 2026-12-02)."""
    from toolkit.paper import fixtures_dir
    from toolkit.rules.admission_model import DEV_BATCHES
    from toolkit.splits import role_of

    assert {"firstcontact/w21", "firstcontact/w22", "firstcontact/w24",
            "firstcontact/w25", "firstcontact/w28", "firstcontact/w29",
            "firstcontact/w34", "firstcontact/w35", "firstcontact/w38",
            "firstcontact/w39", "firstcontact/w40", "firstcontact/w41"} <= set(DEV_BATCHES)
    for batch in DEV_BATCHES:
        b = fixtures_dir() / "admission" / batch
        for name in ("admission.jsonl", "admission.gold.jsonl"):
            assert role_of(b / name) == "development", (batch, name)
    for batch in ("firstcontact/w18", "firstcontact/w20", "firstcontact/w21", "firstcontact/w22",
                  "firstcontact/w24", "firstcontact/w25", "firstcontact/w28", "firstcontact/w29",
                  "firstcontact/w34", "firstcontact/w35", "firstcontact/w38", "firstcontact/w39",
                  "firstcontact/w40", "firstcontact/w41"):
        rec = fc.first_contact_of(fixtures_dir() / "admission" / batch)
        # w34/w35 were scored with the copied batch not yet committed: their records say "+dirty"
        assert rec is not None and re.fullmatch(r"[0-9a-f]{40}(\+dirty)?", rec["commit"])
        assert rec["scores"]["n"] == 48


def test_every_development_batch_trains_the_admitter_and_no_other() -> None:
    """A batch written apart joins the fit exactly when SPLITS.json makes it development (w42-w53 in
    the fourteenth pass's two data rounds, w54-w57 in the fifteenth pass's, w58-w61 in the sixteenth
    pass's, w62-w65 in the seventeenth pass's, w66-w73 in the eighteenth pass's two, w74-w81 in the
    twentieth pass's, w82-w89 in the twenty-first pass's); a first-contact batch (w90-w97) never does."""
    from toolkit.paper import fixtures_dir
    from toolkit.rules.admission_model import DEV_BATCHES
    from toolkit.splits import role_of

    root = fixtures_dir() / "admission"
    batches = sorted(p.parent for p in (root / "firstcontact").glob("*/admission.gold.jsonl"))
    assert batches
    for b in batches:
        dev = all(role_of(b / f) == "development" for f in ("admission.jsonl", "admission.gold.jsonl"))
        assert (f"firstcontact/{b.name}" in DEV_BATCHES) == dev, b.name
    assert {f"firstcontact/w{n}" for n in range(42, 90)} <= set(DEV_BATCHES)
    assert not {f"firstcontact/w{n}" for n in range(90, 98)} & set(DEV_BATCHES)


def test_tree_head_blends_into_the_decision_and_conditional_heads_deterministically() -> None:
    """The tree head (trees over cue features and principal components of the vectors) is an
    estimator of its own, fit only when its weight is positive, blended into P(decision) and
    P(conditional), and gives the same probabilities on a refit and on a clone."""
    X, data = _toy(80)
    plain = AdmissionModel(random_state=3).fit(X, data)
    assert not hasattr(plain, "tree_") and not hasattr(plain, "conditional_tree_")
    m = AdmissionModel(random_state=3, tree_weight=0.2, conditional_tree_weight=0.2).fit(X, data)
    assert m.tree_.pca_.n_components_ == 8  # 16 asked, capped by the 8-dimensional toy vectors
    p = m.predict_proba(X)
    assert np.allclose(p.sum(axis=1), 1.0)
    assert not np.array_equal(p, plain.predict_proba(X))
    assert not np.array_equal(m.conditional_proba(X), plain.conditional_proba(X))
    again = clone(m).fit(X, data)
    assert np.array_equal(p, again.predict_proba(X))
    assert np.array_equal(m.conditional_proba(X), again.conditional_proba(X))
    # the blend is the stated mixture of the two heads' probabilities
    t = m.tree_.predict_proba(X)[:, [list(m.tree_.classes_).index(c) for c in m.classes_]]
    assert np.allclose(p, 0.8 * m.decision_.predict_proba(X) + 0.2 * t)


def test_select_params_chooses_the_tree_weights_by_the_same_cv() -> None:
    from dataclasses import replace

    from toolkit.rules.admission_model import select_params

    X, data = _toy(80)
    data = replace(data, groups=[f"g{i % 5}" for i in range(80)])  # both classes in every fold
    sel = select_params(X, data, Cs=(1.0,), cue_weights=(1.0,), folds=2, head_vectors=((True, False),),
                        tree_weights=(0.0, 0.2), conditional_tree_weights=(0.0, 0.2))
    assert len(sel.grid) == 4
    assert {(g["tree_weight"], g["conditional_tree_weight"]) for g in sel.grid} == {
        (0.0, 0.0), (0.0, 0.2), (0.2, 0.0), (0.2, 0.2)}
    best = max(sel.grid, key=lambda g: (g["structural"], g["persist_recall"], -g["tree_weight"],
                                        -g["conditional_tree_weight"]))
    assert (sel.tree_weight, sel.conditional_tree_weight) == (best["tree_weight"],
                                                              best["conditional_tree_weight"])


def test_stated_stack_fact_permits_persist_in_the_allowed_decision_features() -> None:
    """A fact stated about the user's own stack (the ``stack_fact`` item kind, no temporary cue)
    is read by the allowed-decision features as the grammar reads a lasting cue (persist or defer,
    not task_local), while the cue grammar itself still permits only task_local for it; a temporary
    cue, or a text the kind does not match, keeps the grammar's own answer."""
    from toolkit.rules.admission import allowed_decisions, detect_signal
    from toolkit.rules.admission_model import STATED_FACT_IS_LASTING, cue_features, feature_names
    from toolkit.rules.cues import parse_cues

    assert STATED_FACT_IS_LASTING
    names = feature_names()
    a = [names.index(f"a_{d}") for d in ("persist", "task_local", "defer")]
    fact = "webshop uses ISO 8601 dates throughout"
    grammar, _ = allowed_decisions(parse_cues(fact), detect_signal(fact), fact)
    assert "persist" not in grammar
    texts = [fact, "webshop uses ISO 8601 dates for this one file today", "the build is broken again"]
    rows = cue_features(texts)
    assert rows[0, names.index("stack_fact")] == 1.0
    assert rows[0, a].tolist() == [1.0, 0.0, 1.0]
    assert rows[1, names.index("stack_fact")] == 1.0 and rows[1, names.index("temporary")] == 1.0
    for t, row in zip(texts[1:], rows[1:], strict=True):
        own, _ = allowed_decisions(parse_cues(t), detect_signal(t), t)
        assert row[a].tolist() == [float(d in own) for d in ("persist", "task_local", "defer")], t
