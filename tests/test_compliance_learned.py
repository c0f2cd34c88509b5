"""The learned reader: fit on development data only, exported trees, operating points, abstention."""

from __future__ import annotations

import numpy as np
import pytest

from toolkit.compliance._catalogue import CatalogueReading
from toolkit.compliance._checks import Finding
from toolkit.compliance._learned import LearnedReader, default_reader, point_scores
from toolkit.compliance.fit import development_batches, load_training
from toolkit.splits import REPO_ROOT, HeldOutError, load_splits


def test_shipped_reader_was_fit_on_development_files_only() -> None:
    r = default_reader()
    assert r is not None
    splits = load_splits()
    assert r.meta_["files"], "the reader records what it was fit on"
    for path, sha in r.meta_["files"].items():
        assert splits[path].role == "development", path
        assert splits[path].sha256 == sha, f"{path} changed since the reader was fit: re-fit it"
    assert r.threshold_pass_ < r.threshold_violation_
    assert r.precision_ in r.precisions


def test_shipped_reader_was_fit_on_every_development_fidelity_batch() -> None:
    """Each development batch (w24 and w25 since their first contact was recorded) is in the fit."""
    r = default_reader()
    assert r is not None
    dev = {p.relative_to(REPO_ROOT).as_posix() for p, _ in development_batches()}
    assert {"fixtures/fidelity/firstcontact/w24/points.jsonl", "fixtures/fidelity/firstcontact/w25/points.jsonl"} <= dev
    assert set(r.meta_["files"]) == dev


def test_fitting_on_a_held_out_batch_is_refused() -> None:
    held = [(REPO_ROOT / k).parent for k, e in load_splits().items()
            if e.role == "held-out" and k.startswith("fixtures/fidelity/") and k.endswith("points.jsonl")]
    assert held
    with pytest.raises(HeldOutError):
        load_training([(held[0] / "points.jsonl", held[0] / "profiles")])
    assert all(load_splits()[p.relative_to(REPO_ROOT).as_posix()].role == "development"
               for p, _ in development_batches())


def test_exported_trees_reproduce_the_estimator_and_fit_is_deterministic() -> None:
    rng = np.random.RandomState(0)
    X = rng.randn(400, 32)
    y = (X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.randn(400) > 0.8).astype(int)
    groups = np.repeat(np.arange(8), 50)
    a = LearnedReader(max_iter=30).fit(X, y, groups)  # fit itself checks the export against sklearn
    b = LearnedReader(max_iter=30).fit(X, y, groups)
    assert np.array_equal(a.predict_proba(X), b.predict_proba(X))
    assert a.threshold_violation_ == b.threshold_violation_


def test_tree_size_is_the_grid_setting_with_the_best_out_of_fold_f1() -> None:
    rng = np.random.RandomState(1)
    X = rng.randn(400, 16)
    y = (X[:, 0] - 0.4 * X[:, 2] + 0.5 * rng.randn(400) > 0.9).astype(int)
    groups = np.repeat(np.arange(8), 50)
    r = LearnedReader(max_iter=20, leaf_grid=((15, 20), (3, 60))).fit(X, y, groups)
    assert set(r.cv_grid_) == {"15/20", "3/60"}
    best = max(r.cv_grid_, key=lambda k: r.cv_grid_[k]["f1"])
    assert f"{r.max_leaf_nodes_}/{r.min_samples_leaf_}" == best
    assert r.cv_points_[str(r.precision_)]["f1"] == r.cv_grid_[best]["f1"]
    shipped = default_reader()
    assert f"{shipped.max_leaf_nodes_}/{shipped.min_samples_leaf_}" in shipped.cv_grid_


def _reading(verdict: str, applicable: bool | None = True) -> CatalogueReading:
    return CatalogueReading(applicable, "always applies", Finding(verdict, "evidence"), (), (), True, 2)


def test_operating_points_give_violation_pass_and_abstain() -> None:
    r = default_reader()
    hi, lo = r.threshold_violation_, r.threshold_pass_
    assert r.verdict(min(1.0, hi + 1e-6), _reading("violated")).label == "violation"
    assert r.verdict(lo, _reading("satisfied")).label == "pass"
    mid = (hi + lo) / 2
    v = r.verdict(mid, _reading("unknown"))
    assert v.label == "abstain" and v.decided_by == "learned"
    # a condition read as not holding by words does not rule the rule out: the applicability model does
    assert r.verdict(mid, _reading("not_applicable", applicable=False)).label == "abstain"
    low = r.threshold_not_applicable_
    assert low > float("-inf"), "the shipped reader has an applicability operating point"
    v = r.verdict(mid, _reading("not_applicable", applicable=False), low)
    assert v.label == "not_applicable" and v.decided_by == "scope"
    assert r.verdict(mid, _reading("unknown"), min(1.0, low + 0.01)).label == "abstain"
    assert r.verdict(min(1.0, hi + 1e-6), _reading("violated"), low).label == "violation"


def test_applicability_model_rules_out_under_its_precision_constraint() -> None:
    """Out of fold on development pairs, the conditional pairs the applicability model rules out hold
    labelled violations at most at the pass constraint's rate; a rule without condition gets no score."""
    r = default_reader()
    cv = r.app_cv_
    assert cv["ruled_out"] > 0 and cv["ruled_out_violations"] <= (1 - r.npv) * cv["ruled_out"] + 1e-9
    rng = np.random.RandomState(2)
    X = rng.randn(300, 12)
    y = (X[:, 0] > 1).astype(int)
    fitted = LearnedReader(max_iter=10).fit(X, y, np.repeat(np.arange(6), 50))
    assert fitted.app_trees_ == [] and np.isnan(fitted.applicability_proba(X)).all()


def test_point_scores_by_hand() -> None:
    flag = np.array([1, 0, 0, 0, 1, 0], bool)
    y = np.array([1, 1, 0, 0, 0, 0])
    groups = np.array(["a"] * 6)
    points = np.array(["p1", "p1", "p2", "p2", "p3", "p3"])
    f1, spec, rr = point_scores(flag, y, groups, points)
    assert spec == pytest.approx(0.5) and rr == pytest.approx(0.5) and f1 == pytest.approx(2 / 3)


def test_scope_cues_weigh_a_condition_the_task_never_words() -> None:
    """The scope cues: conditions by words, the checks' verdict with conditions set aside, and the
    condition's similarity to the task (NaN where a rule has no condition)."""
    from toolkit.compliance._catalogue import holding_reply, read_catalogue
    from toolkit.compliance._embed import embedder
    from toolkit.compliance._features import (
        FEATURE_NAMES,
        SCOPE_NAMES,
        PairInput,
        pair_matrix,
        scope_features,
    )
    from toolkit.compliance._reader import view_of
    from toolkit.compliance._types import Evidence, Rule

    ev = Evidence("delivery", "Split my expression matrix into train and test sets for the classifier.",
                  "Done: `train_test_split(X, y, test_size=0.2)` gives you the two sets.")
    view = view_of(ev)
    seeded = Rule("r1", "Anything random gets a fixed seed.", conditions=["the code involves any randomness"])
    plain = Rule("r2", "Keep replies under 200 words.")
    pairs = [PairInput(r, ev, read_catalogue(r, view), view, holding_reply(view)) for r in (seeded, plain)]
    emb = embedder("minilm")
    S = scope_features(pairs, emb)
    col = {n: i for i, n in enumerate(SCOPE_NAMES)}
    assert S.shape == (2, len(SCOPE_NAMES))
    assert S[0, col["scope_has_condition"]] == 1 and S[0, col["scope_cond_words_task"]] == 0
    assert -1 <= S[0, col["scope_cond_sim_task"]] <= 1 and S[0, col["scope_cond_sim_best"]] >= S[0, col["scope_cond_sim_task"]]
    assert np.isnan(S[1, col["scope_cond_sim_task"]]) and S[1, col["scope_has_condition"]] == 0
    assert sum(S[1, col[f"scope_uncond_{v}"]] for v in ("violated", "satisfied", "unknown", "not_applicable")) == 1
    X = pair_matrix(pairs, emb)
    assert X.shape == (2, len(FEATURE_NAMES)) and default_reader().predict_proba(X).shape == (2, 2)


def test_probability_is_the_mean_of_the_trees_and_the_linear_member() -> None:
    """The shipped probability blends the exported trees with the exported logistic regression; without
    a linear member (``linear_C=None``) it is the trees' alone."""
    from sklearn.linear_model import LogisticRegression

    rng = np.random.RandomState(3)
    X = rng.randn(400, 10)
    X[rng.rand(400, 10) < 0.05] = np.nan
    y = (np.nan_to_num(X[:, 0]) + 0.5 * rng.randn(400) > 0.8).astype(int)
    groups = np.repeat(np.arange(8), 50)
    both = LearnedReader(max_iter=20, leaf_grid=((7, 20),)).fit(X, y, groups)
    trees = LearnedReader(max_iter=20, leaf_grid=((7, 20),), linear_C=None).fit(X, y, groups)
    assert trees.linear_ is None and both.linear_ is not None
    Z = np.nan_to_num(X)
    mu, sd = Z.mean(0), Z.std(0)
    lr = LogisticRegression(C=0.1, max_iter=5000).fit((Z - mu) / sd, y)
    expected = (trees.predict_proba(X)[:, 1] + lr.predict_proba((Z - mu) / sd)[:, 1]) / 2
    assert np.allclose(both.predict_proba(X)[:, 1], expected, atol=1e-9)


def test_shipped_reader_has_its_linear_member() -> None:
    r = default_reader()
    assert r.linear_ is not None and len(r.linear_["coef"]) == len(r.linear_["mean"]) == len(r.linear_["scale"])
