"""The learned reader (stage 4 of the cascade): boosted trees and a linear model over (rule, evidence) pair features.

Its violation probability is the mean of two members fit on the same pairs: regularised boosted trees
(``l2_regularization``, a random half of the features at each split: ``max_features``) and an L2
logistic regression over the standardised features (``linear_C``). Both are exported to plain lists.
Why a blend: with whole batches held out (``benchmarks/reader_batch_cv.py``), the unregularised trees
alone fit each batch's writer (pooled best F1 at point specificity >= 0.85: 0.537, 39 development
batches), the linear model alone reached 0.550 and the regularised trees 0.546; their mean 0.561 with
rule recall 0.364 -> 0.393 (measured 2026-12-03 before first contact with w34 and w35).

Fit on development data only (annotated fidelity points whose role in ``fixtures/SPLITS.json`` is
``development``; :func:`toolkit.splits.require_role` refuses the rest). Its operating points are
chosen on out-of-fold probabilities from annotator-grouped cross-validation (no annotator's rules
are in both the fitting and the scoring fold), as scikit-learn's ``TunedThresholdClassifierCV``
does for one threshold:

- ``threshold_violation_``: the lowest threshold whose out-of-fold pair precision reaches
  ``precision_`` (a false correction teaches the learner a preference that does not exist, so the
  constraint is on precision); ``precision_`` is the loosest value in ``precisions`` whose
  out-of-fold point-level macro specificity reaches ``target_specificity`` (0.86, chosen with whole
  batches held out: ``benchmarks/reader_batch_cv.py --targets``, 37 development batches in 5 folds,
  each fold's reader fit with trees 7/40. Batch-held-out specificity follows the inner target closely
  (0.88 -> 0.881, 0.86 -> 0.868, 0.85 -> 0.853; F1 0.519, 0.541, 0.556). 0.86 is the loosest
  target whose pooled batch-held-out specificity stays above the bar's 0.85 by more than 0.01 with
  every fold at 0.84 or more; measured 2026-12-02 before first contact with w28 and w29);
- ``threshold_pass_``: the highest threshold below which the out-of-fold share of missed violations
  stays under ``1 - npv``;
- in between, the reader abstains.

Whether a conditional rule applies at all is learned too (``app_trees_``, the applicability model):
boosted trees over the scope features alone (each condition's and exception's similarity to the task
and to its closest evidence clause, the conditions read by words on the task and on the whole delivery
as cues, the checks' verdict with the conditions set aside), fit on the pairs whose rule has a
condition or an exception, with the annotator's correction as the one observed sign that the rule
applied. It says ``not_applicable`` only at or below ``threshold_not_applicable_``: the highest
threshold whose out-of-fold share of labelled violations stays under ``1 - npv`` (the same
constraint as a pass). Above it the learned reader passes or abstains: no word reading of a condition
rules a rule out on its own.

The trees' size (leaves per tree, least pairs per leaf) is chosen on the same folds from ``leaf_grid``:
the setting whose out-of-fold point-level macro F1 at its own operating point is highest.

A catalogue kind whose ``satisfied`` verdicts meet the pass constraint on development data, with
enough support, is trusted to pass a delivery alone (``trusted_kinds_``); a violation always goes
through the learned gate, whose point-level specificity was measured out of fold. The fitted parameters are shipped as JSON package data
(``toolkit/resources/compliance/learned_reader.json``) and re-fit by ``python -m toolkit.compliance.fit``.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.model_selection import GroupKFold

from toolkit.compliance._catalogue import CatalogueReading
from toolkit.compliance._checks import View
from toolkit.compliance._features import FEATURE_NAMES, PairInput, pair_matrix
from toolkit.compliance._types import Evidence, Rule, Verdict

RESOURCE = "learned_reader.json"


def _threshold_for_precision(p: np.ndarray, y: np.ndarray, precision: float) -> float:
    """Lowest threshold t with precision(p >= t) >= ``precision`` over the out-of-fold scores (inf if none)."""
    order = np.argsort(-p, kind="stable")
    ps, ys = p[order], y[order]
    tp = np.cumsum(ys)
    prec = tp / np.arange(1, len(ys) + 1)
    ok = np.nonzero(prec >= precision)[0]
    if not len(ok):
        return float("inf")
    k = ok[-1]
    while k + 1 < len(ps) and ps[k + 1] == ps[k]:  # ties: the threshold admits all of them or none
        k -= 1
        if k < 0:
            return float("inf")
    return float(ps[k])


def _threshold_for_npv(p: np.ndarray, y: np.ndarray, npv: float) -> float:
    """Highest threshold t with (1 - violation share among p <= t) >= ``npv`` (-inf if none)."""
    order = np.argsort(p, kind="stable")
    ps, ys = p[order], y[order]
    fn = np.cumsum(ys)
    npvs = 1 - fn / np.arange(1, len(ys) + 1)
    ok = np.nonzero(npvs >= npv)[0]
    if not len(ok):
        return float("-inf")
    k = ok[-1]
    while k + 1 < len(ps) and ps[k + 1] == ps[k]:
        k -= 1
        if k < 0:
            return float("-inf")
    return float(ps[k])


#: the applicability model's inputs: the scope cues and the condition/rule-to-task similarities
APPLICABILITY_FEATURES = tuple(n for n in FEATURE_NAMES if n.startswith("scope_")) + (
    "sim_cond_task", "sim_rule_task", "rule_has_condition", "rule_has_exception")
_APP_COLS = [FEATURE_NAMES.index(n) for n in APPLICABILITY_FEATURES]
_COND_COLS = [FEATURE_NAMES.index(n) for n in ("rule_has_condition", "rule_has_exception", "scope_has_condition",
                                               "scope_has_exception")]


def conditional_rows(X: np.ndarray) -> np.ndarray:
    """Rows of the design matrix whose rule has a condition or an exception (the applicability model's domain)."""
    X = np.asarray(X, float)
    if X.shape[1] != len(FEATURE_NAMES):
        return np.zeros(len(X), bool)
    return (np.nan_to_num(X[:, _COND_COLS]) > 0).any(axis=1)


def point_scores(flag: np.ndarray, y: np.ndarray, groups: np.ndarray, points: np.ndarray) -> tuple[float, ...]:
    """Macro F1, specificity and per-example rule recall over annotators when a point is corrected if any
    of its pairs is flagged (the simulator's decision rule), from pair-level flags and labels."""
    per: dict[str, list[tuple[bool, bool, float]]] = {}
    order: dict[tuple[str, str], list[int]] = {}
    for i, (g, p) in enumerate(zip(groups, points, strict=True)):
        order.setdefault((str(g), str(p)), []).append(i)
    for (g, _), idx in order.items():
        gold, pred = bool(y[idx].any()), bool(flag[idx].any())
        rr = float((flag[idx] & (y[idx] == 1)).sum() / y[idx].sum()) if gold else 0.0
        per.setdefault(g, []).append((gold, pred, rr))
    f1s, specs, rrs = [], [], []
    for rows in per.values():
        tp = sum(a and b for a, b, _ in rows)
        fp = sum(b and not a for a, b, _ in rows)
        fn = sum(a and not b for a, b, _ in rows)
        tn = sum(not a and not b for a, b, _ in rows)
        f1s.append(2 * tp / (2 * tp + fp + fn) if tp + fp + fn else float("nan"))
        specs.append(tn / (tn + fp) if tn + fp else float("nan"))
        pos = [r for a, _, r in rows if a]
        rrs.append(sum(pos) / len(pos) if pos else float("nan"))
    return tuple(float(np.nanmean(v)) for v in (f1s, specs, rrs))


class LearnedReader(ClassifierMixin, BaseEstimator):
    """Violation probability of a (rule, evidence) pair, with a violation / pass / abstain operating point.

    A gradient-boosted tree ensemble (scikit-learn's ``HistGradientBoostingClassifier``) over the dense
    pair features (catalogue cues, text cues, embedding similarities), averaged with an L2 logistic
    regression on the standardised features (``linear_C``; None leaves the trees alone). ``fit(X, y,
    groups=annotators, kinds=...)``; ``kinds`` is the catalogue's (kind, verdict) per row. The fitted
    trees are exported to plain arrays (``trees_``) and the linear member to its scaler and coefficients
    (``linear_``), so the shipped reader needs no pickle; :meth:`predict_proba` walks and adds them.
    """

    def __init__(self, max_iter: int = 200, learning_rate: float = 0.05,
                 leaf_grid: tuple[tuple[int, int], ...] = ((15, 20), (15, 40), (7, 20), (7, 40)),
                 precisions: tuple[float, ...] = tuple(round(0.7 + 0.01 * i, 2) for i in range(21)),
                 target_specificity: float = 0.86,
                 npv: float = 0.97, min_kind_support: int = 15, n_splits: int = 5, random_state: int = 0,
                 l2_regularization: float = 10.0, max_features: float = 0.5, linear_C: float | None = 0.1):
        self.max_iter = max_iter
        self.learning_rate = learning_rate
        self.leaf_grid = leaf_grid
        self.precisions = precisions
        self.target_specificity = target_specificity
        self.npv = npv
        self.min_kind_support = min_kind_support
        self.n_splits = n_splits
        self.random_state = random_state
        self.l2_regularization = l2_regularization
        self.max_features = max_features
        self.linear_C = linear_C

    def _estimator(self, max_leaf_nodes: int, min_samples_leaf: int) -> HistGradientBoostingClassifier:
        return HistGradientBoostingClassifier(max_iter=self.max_iter, learning_rate=self.learning_rate,
                                              max_leaf_nodes=max_leaf_nodes, min_samples_leaf=min_samples_leaf,
                                              l2_regularization=self.l2_regularization,
                                              max_features=self.max_features,
                                              early_stopping=False, random_state=self.random_state)

    def _linear(self, X: np.ndarray, y: np.ndarray) -> dict[str, list[float] | float] | None:
        """The linear member: an L2 logistic regression over the standardised features (missing -> 0),
        exported as plain lists; None when ``linear_C`` is None."""
        if self.linear_C is None:
            return None
        from sklearn.linear_model import LogisticRegression

        Z = np.nan_to_num(X, nan=0.0)
        mu, sd = Z.mean(0), Z.std(0)
        sd = np.where(sd > 0, sd, 1.0)
        lr = LogisticRegression(C=self.linear_C, max_iter=5000).fit((Z - mu) / sd, y)
        return {"mean": [float(v) for v in mu], "scale": [float(v) for v in sd],
                "coef": [float(v) for v in lr.coef_[0]], "intercept": float(lr.intercept_[0])}

    @staticmethod
    def _linear_proba(lin: dict[str, Any] | None, X: np.ndarray) -> np.ndarray | None:
        if lin is None:
            return None
        Z = (np.nan_to_num(np.asarray(X, float), nan=0.0) - np.asarray(lin["mean"])) / np.asarray(lin["scale"])
        return 1.0 / (1.0 + np.exp(-(Z @ np.asarray(lin["coef"]) + lin["intercept"])))

    def _operating_point(self, oof: np.ndarray, y: np.ndarray, groups: np.ndarray,
                         points: np.ndarray) -> tuple[float, dict[str, dict[str, float]]]:
        """The loosest precision constraint whose out-of-fold point-level specificity meets the target,
        with the out-of-fold point scores at every constraint tried."""
        cv: dict[str, dict[str, float]] = {}
        chosen = self.precisions[-1]
        for prec in self.precisions:
            t = _threshold_for_precision(oof, y, prec)
            f1, spec, rr = point_scores(oof >= t, y, groups, points)
            cv[str(prec)] = {"threshold": t, "f1": f1, "specificity": spec, "rule_recall": rr}
            if spec >= self.target_specificity:
                chosen = prec
                break
        return chosen, cv

    def fit(self, X: np.ndarray, y: np.ndarray, groups: np.ndarray, kinds: list[tuple[str, str]] | None = None,
            points: np.ndarray | None = None):
        """Fit; ``points`` (the point id of each pair) lets the precision constraint be chosen at point level.

        The trees' size (``leaf_grid``: leaves per tree, least pairs per leaf) is chosen by the same
        annotator-grouped folds: the setting whose out-of-fold point-level macro F1 at its operating
        point is highest (``cv_grid_``); ties go to the earlier setting."""
        from threadpoolctl import threadpool_limits

        X, y, groups = np.asarray(X, float), np.asarray(y, int), np.asarray(groups)
        pts = points if points is not None else np.arange(len(y))
        folds = list(GroupKFold(n_splits=self.n_splits).split(X, y, groups))
        best = None
        self.cv_grid_ = {}
        lin_oof = None
        if self.linear_C is not None:  # the linear member does not depend on the trees' size: once per fold
            lin_oof = np.zeros(len(y))
            with threadpool_limits(limits=1):
                for tr, te in folds:
                    lin_oof[te] = self._linear_proba(self._linear(X[tr], y[tr]), X[te])
        for leaves, min_leaf in self.leaf_grid:
            oof = np.zeros(len(y))
            with threadpool_limits(limits=1):  # one thread: deterministic and kind to a shared machine
                for tr, te in folds:
                    oof[te] = self._estimator(leaves, min_leaf).fit(X[tr], y[tr]).predict_proba(X[te])[:, 1]
            if lin_oof is not None:
                oof = (oof + lin_oof) / 2
            prec, cv = self._operating_point(oof, y, groups, pts)
            f1 = cv[str(prec)]["f1"]
            self.cv_grid_[f"{leaves}/{min_leaf}"] = {"precision": prec, **cv[str(prec)]}
            if best is None or f1 > best[0]:
                best = (f1, leaves, min_leaf, oof, prec, cv)
        _, self.max_leaf_nodes_, self.min_samples_leaf_, oof, self.precision_, self.cv_points_ = best
        self.oof_proba_ = oof
        self.threshold_violation_ = _threshold_for_precision(oof, y, self.precision_)
        self.threshold_pass_ = min(_threshold_for_npv(oof, y, self.npv), self.threshold_violation_)
        self.trusted_kinds_: dict[str, list[str]] = {}
        if kinds is not None:
            by: dict[tuple[str, str], list[int]] = {}
            for i, (k, v) in enumerate(kinds):
                by.setdefault((k, v), []).append(i)
            for (k, v), idx in sorted(by.items()):
                if len(idx) < self.min_kind_support or k == "Unknown":
                    continue
                share = float(y[idx].mean())
                if v == "satisfied" and 1 - share >= self.npv:  # violations always go through the gate
                    self.trusted_kinds_.setdefault(k, []).append(v)
        self._fit_applicability(X, y, folds)
        with threadpool_limits(limits=1):
            est = self._estimator(self.max_leaf_nodes_, self.min_samples_leaf_).fit(X, y)
        self.baseline_ = float(np.ravel(est._baseline_prediction)[0])
        self.trees_ = [_export(pred[0].nodes) for pred in est._predictors]
        self.classes_ = np.array([0, 1])
        self.linear_ = None
        mine = self.predict_proba(X)[:, 1]
        theirs = est.predict_proba(X)[:, 1]
        with threadpool_limits(limits=1):
            self.linear_ = self._linear(X, y)
        if not np.allclose(mine, theirs, atol=1e-9):
            raise RuntimeError("exported trees disagree with the fitted estimator")
        return self

    def _fit_applicability(self, X: np.ndarray, y: np.ndarray, folds: list) -> None:
        """The applicability model on the conditional rows (see the module docstring); its operating point
        from out-of-fold scores on the same annotator-grouped folds. Without enough conditional rows (or
        a design matrix of another shape) there is none and no rule is ruled out."""
        from threadpoolctl import threadpool_limits

        cond = conditional_rows(X)
        self.app_trees_: list[dict[str, list]] = []
        self.app_baseline_ = 0.0
        self.threshold_not_applicable_ = float("-inf")
        self.app_cv_: dict[str, float] = {"n_pairs": int(cond.sum()), "n_violations": int(y[cond].sum())}
        if cond.sum() < 50 or not y[cond].any():
            return
        Z = X[:, _APP_COLS]
        oof = np.full(len(y), np.nan)
        with threadpool_limits(limits=1):
            for tr, te in folds:
                tr, te = tr[cond[tr]], te[cond[te]]
                if len(te) and y[tr].any() and not y[tr].all():
                    oof[te] = self._estimator(7, 40).fit(Z[tr], y[tr]).predict_proba(Z[te])[:, 1]
            ok = cond & ~np.isnan(oof)
            self.threshold_not_applicable_ = _threshold_for_npv(oof[ok], y[ok], self.npv)
            est = self._estimator(7, 40).fit(Z[cond], y[cond])
        low = ok & (oof <= self.threshold_not_applicable_)
        self.app_cv_.update({"ruled_out": int(low.sum()), "ruled_out_violations": int(y[low].sum())})
        self.app_baseline_ = float(np.ravel(est._baseline_prediction)[0])
        self.app_trees_ = [_export(pred[0].nodes) for pred in est._predictors]
        if not np.allclose(self.applicability_proba(X)[cond], est.predict_proba(Z[cond])[:, 1], atol=1e-9):
            raise RuntimeError("exported applicability trees disagree with the fitted estimator")

    def applicability_proba(self, X: np.ndarray) -> np.ndarray:
        """Per row, the applicability model's score (NaN for a rule without condition or exception)."""
        X = np.asarray(X, float)
        out = np.full(len(X), np.nan)
        cond = conditional_rows(X)
        if not getattr(self, "app_trees_", None) or not cond.any():
            return out
        Z = X[cond][:, _APP_COLS]
        raw = np.full(len(Z), self.app_baseline_)
        for t in self.app_trees_:
            raw += _walk(t, Z)
        out[cond] = 1.0 / (1.0 + np.exp(-raw))
        return out

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        """The trees' violation probability, averaged with the linear member's when the reader has one."""
        X = np.asarray(X, float)
        raw = np.full(len(X), self.baseline_)
        for t in self.trees_:
            raw += _walk(t, X)
        p = 1.0 / (1.0 + np.exp(-raw))
        q = self._linear_proba(getattr(self, "linear_", None), X)
        if q is not None:
            p = (p + q) / 2
        return np.column_stack([1 - p, p])

    def predict(self, X: np.ndarray) -> np.ndarray:
        return (self.predict_proba(X)[:, 1] >= self.threshold_violation_).astype(int)

    # -- the cascade's use -----------------------------------------------------------------------
    def trusts(self, kind: str, verdict: str) -> bool:
        """Whether a catalogue kind's verdict was reliable enough on development folds to decide alone."""
        return verdict in getattr(self, "trusted_kinds_", {}).get(kind, [])

    def decide(self, rule: Rule, ev: Evidence, reading: CatalogueReading, view: View, *, holding: bool) -> Verdict:
        """Stage 4 for one pair: violation above the precision-constrained threshold, else pass / abstain."""
        return self.decide_many([PairInput(rule, ev, reading, view, holding)])[0]

    def decide_many(self, pairs: list[PairInput]) -> list[Verdict]:
        """Stage 4 for many pairs (each text embedded once)."""
        from toolkit.compliance._embed import embedder

        emb = embedder(self.embedder_)
        X = pair_matrix(pairs, emb)
        ps, apps = self.predict_proba(X)[:, 1], self.applicability_proba(X)
        return [self.verdict(float(p), pair.reading, None if np.isnan(a) else float(a))
                for p, a, pair in zip(ps, apps, pairs, strict=True)]

    def verdict(self, p: float, reading: CatalogueReading, p_applies: float | None = None) -> Verdict:
        """The label for violation probability ``p`` and applicability score ``p_applies`` (None for a rule
        without condition or exception): violation, else not_applicable by the applicability model's
        operating point, else pass or abstain. The catalogue's word reading of a condition is a feature
        and an explanation, never a ruling."""
        f = reading.finding
        if p >= self.threshold_violation_:
            why = f.evidence if f.verdict == "violated" and f.evidence else \
                f"read as a violation (p={p:.2f} >= {self.threshold_violation_:.2f})"
            return Verdict("violation", why, [], "learned", p, ask=f.ask if f.verdict == "violated" else "",
                           topic=f.topic)
        if p_applies is not None and p_applies <= self.threshold_not_applicable_:
            why = f"the rule does not apply here (applicability {p_applies:.2f} <= {self.threshold_not_applicable_:.2f})"
            if reading.applicable is False:
                why += f"; {reading.applicability}"
            return Verdict("not_applicable", why, [], "scope", p)
        if p <= self.threshold_pass_:
            return Verdict("pass", f"no violation found (p={p:.2f} <= {self.threshold_pass_:.2f})", [], "learned", p)
        return Verdict("abstain", f"cannot tell (p={p:.2f} between {self.threshold_pass_:.2f} and "
                                  f"{self.threshold_violation_:.2f})", [], "learned", p)

    # -- persistence -------------------------------------------------------------------------------
    def to_json(self, meta: dict[str, Any]) -> str:
        return json.dumps({
            "params": self.get_params(), "embedder": self.embedder_, "features": list(FEATURE_NAMES),
            "threshold_violation": self.threshold_violation_, "threshold_pass": self.threshold_pass_,
            "trusted_kinds": self.trusted_kinds_, "baseline": self.baseline_, "trees": self.trees_,
            "precision": self.precision_, "cv_points": self.cv_points_, "cv_grid": self.cv_grid_,
            "tree_size": [self.max_leaf_nodes_, self.min_samples_leaf_], "meta": meta, "linear": self.linear_,
            "applicability": {"trees": self.app_trees_, "baseline": self.app_baseline_,
                              "threshold": self.threshold_not_applicable_, "cv": self.app_cv_},
        }, sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> LearnedReader:
        d = json.loads(text)
        self = cls(**d["params"])
        if d["features"] != list(FEATURE_NAMES):
            raise ValueError("learned_reader.json: feature list differs from the code; re-fit the reader")
        self.threshold_violation_ = d["threshold_violation"]
        self.threshold_pass_ = d["threshold_pass"]
        self.trusted_kinds_ = d["trusted_kinds"]
        self.baseline_ = d["baseline"]
        self.precision_ = d["precision"]
        self.cv_points_ = d["cv_points"]
        self.cv_grid_ = d["cv_grid"]
        self.max_leaf_nodes_, self.min_samples_leaf_ = d["tree_size"]
        self.trees_ = d["trees"]
        self.linear_ = d.get("linear")
        self.embedder_ = d["embedder"]
        self.meta_ = d["meta"]
        app = d["applicability"]
        self.app_trees_, self.app_baseline_ = app["trees"], app["baseline"]
        self.threshold_not_applicable_, self.app_cv_ = app["threshold"], app["cv"]
        self.classes_ = np.array([0, 1])
        return self


def _export(nodes: np.ndarray) -> dict[str, list]:
    """A fitted tree's nodes as plain lists (feature, threshold, missing-left, left, right, leaf, value)."""
    return {"f": [int(x) for x in nodes["feature_idx"]], "t": [float(x) for x in nodes["num_threshold"]],
            "m": [int(x) for x in nodes["missing_go_to_left"]], "l": [int(x) for x in nodes["left"]],
            "r": [int(x) for x in nodes["right"]], "leaf": [int(x) for x in nodes["is_leaf"]],
            "v": [float(x) for x in nodes["value"]]}


def _walk(tree: dict[str, list], X: np.ndarray) -> np.ndarray:
    """Leaf values of one exported tree for every row (x <= threshold goes left; NaN follows ``m``)."""
    f, t, m = np.asarray(tree["f"]), np.asarray(tree["t"]), np.asarray(tree["m"], bool)
    left, right, leaf, v = np.asarray(tree["l"]), np.asarray(tree["r"]), np.asarray(tree["leaf"], bool), \
        np.asarray(tree["v"])
    node = np.zeros(len(X), int)
    rows = np.arange(len(X))
    for _ in range(64):
        live = ~leaf[node]
        if not live.any():
            break
        n = node[live]
        x = X[rows[live], f[n]]
        go_left = np.where(np.isnan(x), m[n], x <= t[n])
        node[live] = np.where(go_left, left[n], right[n])
    return v[node]


@lru_cache(maxsize=1)
def default_reader() -> LearnedReader | None:
    """The fitted reader shipped as package data (None when the package ships none)."""
    f = resources.files("toolkit.resources.compliance").joinpath(RESOURCE)
    if not f.is_file():
        return None
    return LearnedReader.from_json(f.read_text("utf-8"))
