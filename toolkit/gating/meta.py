"""TF-IDF + logistic-regression meta-analysis of fact utility: Self vs leave-one-user-out AUC.

Protocol (memory-gating paper §3.2, Table 1), fixed so an independent scikit-learn script
can reproduce every number:

* label ``y = 1`` iff the fact has at least one hit (``len(fact.hits) > 0``); feature text is
  ``fact.text`` unchanged; users are processed in sorted order of their id;
* model = ``make_pipeline(TfidfVectorizer(), LogisticRegression(C=1.0, max_iter=1000))``,
  every other setting at scikit-learn's default (unigrams, lowercase, smooth idf, l2 norm,
  lbfgs, no class weights); the vectorizer is always fit on the training texts only;
  scores are ``decision_function`` values, AUC is ``roc_auc_score``;
* **Self** AUC of user u: ``StratifiedKFold(n_splits=folds, shuffle=True,
  random_state=seed)`` over u's facts in file order, one AUC per test fold, and the
  **mean of the fold AUCs** (what ``cross_val_score(..., scoring="roc_auc").mean()``
  gives). A user needs at least ``folds`` used and ``folds`` unused facts; otherwise
  ``self_auc`` is ``null`` and the user is listed in ``skipped`` with the reason;
* **LOUO** AUC of user u: one model fit on the pooled facts of every other user in the
  file (file order), scored on all of u's facts; ``null`` if u's facts are all one
  class (or the other users' are);
* ``self_auc_mean/std`` and ``louo_auc_mean/std``: mean and sample std (``ddof=1``) over
  the users whose value is not null; ``gap = self_auc_mean - louo_auc_mean``.
  ``gap_paired`` (extra) is the mean of per-user differences over users with both values,
  with a 95% percentile bootstrap CI over users. Each user row also carries
  ``self_auc_oof`` (extra): one AUC over the pooled out-of-fold scores of the same folds.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit.records import Fact

__all__ = ["PROTOCOL", "meta_analysis", "format_meta", "utility_terms"]

#: the protocol's settings, echoed into every report
PROTOCOL: dict[str, Any] = {
    "label": "len(hits) > 0",
    "vectorizer": "TfidfVectorizer() (scikit-learn defaults), fit on training texts only",
    "classifier": "LogisticRegression(C=1.0, max_iter=1000), other settings default",
    "score": "decision_function; roc_auc_score",
    "self": "StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed); mean of fold AUCs",
    "self_min": "at least `folds` used and `folds` unused facts",
    "louo": "one model on all other users' facts, scored on all of the user's facts",
    "aggregate": "mean and sample std (ddof=1) over users with a value; gap = difference of means",
}


def _model():
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    return make_pipeline(TfidfVectorizer(), LogisticRegression(C=1.0, max_iter=1000))


def _self_auc(fit_score: Any, idx: np.ndarray, y_all: np.ndarray, folds: int,
              seed: int) -> tuple[float, float]:
    """Mean of the fold AUCs (the reported Self AUC) and the AUC of pooled out-of-fold scores;
    ``idx``: the user's facts (positions in the file, file order)."""
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import StratifiedKFold

    y = y_all[idx]
    aucs = []
    oof = np.zeros(len(y))
    cv = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    for tr, te in cv.split(np.zeros(len(y)), y):
        oof[te] = fit_score(idx[tr], idx[te])
        aucs.append(roc_auc_score(y[te], oof[te]))
    return float(np.mean(aucs)), float(roc_auc_score(y, oof))


def _fit_score(texts_all: list[str], y_all: np.ndarray, vectors: np.ndarray | None) -> Any:
    """``(train positions, test positions) -> decision scores``: TF-IDF + LR on the texts (the
    paper's protocol), or LR on given embedding vectors (the same LR settings)."""
    if vectors is None:
        def fit_score(tr: np.ndarray, te: np.ndarray) -> np.ndarray:
            m = _model().fit([texts_all[i] for i in tr], y_all[tr])
            return m.decision_function([texts_all[i] for i in te])
    else:
        from sklearn.linear_model import LogisticRegression

        def fit_score(tr: np.ndarray, te: np.ndarray) -> np.ndarray:
            m = LogisticRegression(C=1.0, max_iter=1000).fit(vectors[tr], y_all[tr])
            return m.decision_function(vectors[te])
    return fit_score


def _group(facts: list[Fact]) -> dict[str, list[Fact]]:
    by: dict[str, list[Fact]] = {}
    for f in facts:
        by.setdefault(f.user, []).append(f)
    return {u: by[u] for u in sorted(by)}


def _agg(values: list[float | None]) -> tuple[float | None, float | None, int]:
    v = np.asarray([x for x in values if x is not None], dtype=float)
    if v.size == 0:
        return None, None, 0
    return float(v.mean()), (float(v.std(ddof=1)) if v.size > 1 else None), int(v.size)


def meta_analysis(facts: list[Fact], *, folds: int = 5, seed: int = 0,
                  embedder: Any = None) -> dict:
    """Per-user Self (k-fold CV) and LOUO AUC of TF-IDF + logistic regression, with mean ± std.

    ``embedder`` (an object with ``embed(texts)``, e.g. ``toolkit.llm.get_embedder("minilm")``)
    replaces the TF-IDF features by the embedding of each fact text (the same logistic
    regression, folds and users); ``None`` is the paper's TF-IDF protocol.
    """
    import sklearn.linear_model  # noqa: F401  (load the BLAS libraries before limiting them)
    from threadpoolctl import threadpool_limits

    # many small fits: one BLAS thread each is faster and does not change the numbers
    with threadpool_limits(limits=1):
        return _meta_analysis(facts, folds=folds, seed=seed, embedder=embedder)


def _meta_analysis(facts: list[Fact], *, folds: int, seed: int, embedder: Any = None) -> dict:
    from sklearn.metrics import roc_auc_score

    if folds < 2:
        raise ValueError("folds must be at least 2")
    if not facts:
        raise ValueError("no facts")
    groups = _group(facts)
    texts_all = [f.text for f in facts]
    y_all = np.array([1 if f.hits else 0 for f in facts])
    users_all = np.array([f.user for f in facts])
    vectors = None
    if embedder is not None:
        vectors = np.asarray(embedder.embed(texts_all), dtype=np.float64)
    fit_score = _fit_score(texts_all, y_all, vectors)
    positions: dict[str, list[int]] = {}
    for i, f in enumerate(facts):
        positions.setdefault(f.user, []).append(i)
    users: list[dict[str, Any]] = []
    skipped: list[dict[str, str]] = []
    for user, fs in groups.items():
        y = np.array([1 if f.hits else 0 for f in fs])
        n_used = int(y.sum())
        n_unused = len(y) - n_used
        row: dict[str, Any] = {"user": user, "n_facts": len(fs), "n_used": n_used,
                               "self_auc": None, "louo_auc": None, "self_auc_oof": None}
        if n_used >= folds and n_unused >= folds:
            row["self_auc"], row["self_auc_oof"] = _self_auc(
                fit_score, np.asarray(positions[user]), y_all, folds, seed)
        else:
            skipped.append({"user": user, "regime": "self",
                            "reason": f"{n_used} used / {n_unused} unused facts; "
                                      f"needs at least {folds} of each for {folds} folds"})
        rest = users_all != user
        if n_used == 0 or n_unused == 0:
            skipped.append({"user": user, "regime": "louo",
                            "reason": "AUC undefined: the user's facts are all one class"})
        elif len(set(y_all[rest].tolist())) < 2:
            skipped.append({"user": user, "regime": "louo",
                            "reason": "the other users' facts are all one class"})
        else:
            score = fit_score(np.flatnonzero(rest), np.asarray(positions[user]))
            row["louo_auc"] = float(roc_auc_score(y, score))
        users.append(row)
    s_mean, s_std, n_self = _agg([u["self_auc"] for u in users])
    l_mean, l_std, n_louo = _agg([u["louo_auc"] for u in users])
    diffs = [u["self_auc"] - u["louo_auc"] for u in users
             if u["self_auc"] is not None and u["louo_auc"] is not None]
    gap_ci: list[float] | None = None
    if len(diffs) >= 3:
        from toolkit.metrics import bootstrap_ci

        lo, hi = bootstrap_ci(np.asarray(diffs), np.mean, random_state=seed)
        gap_ci = [float(lo), float(hi)]
    return {
        "users": users,
        "self_auc_mean": s_mean, "self_auc_std": s_std,
        "louo_auc_mean": l_mean, "louo_auc_std": l_std,
        "gap": (s_mean - l_mean) if s_mean is not None and l_mean is not None else None,
        "gap_paired": float(np.mean(diffs)) if diffs else None, "gap_paired_ci95": gap_ci,
        "n_users": len(users), "n_self": n_self, "n_louo": n_louo,
        "n_facts": len(facts), "n_used": int(y_all.sum()),
        "skipped": skipped, "folds": folds, "seed": seed,
        "protocol": PROTOCOL if embedder is None else {
            **PROTOCOL, "vectorizer": f"embedder {getattr(embedder, 'name', embedder)!r}: "
                                      "one vector per fact text (no fitting)"},
        "features": "tfidf" if embedder is None else str(getattr(embedder, "name", embedder)),
    }


def _pm(mean: float | None, std: float | None) -> str:
    if mean is None:
        return "n/a"
    return f"{mean:.3f} ± {std:.3f}" if std is not None else f"{mean:.3f}"


def format_meta(report: dict) -> str:
    """Table 1's layout: our row beside the paper's PerMemBench-S and -L rows, then per-user AUCs."""
    from toolkit.paper import paper_figures

    paper = paper_figures("utility")["figures"]["table1"]
    gap = report.get("gap")
    lines = ["| Dataset | Self AUC | LOUO AUC | Gap | users (Self/LOUO) |",
             "|---|---|---|---|---|",
             f"| ours | {_pm(report['self_auc_mean'], report['self_auc_std'])} | "
             f"{_pm(report['louo_auc_mean'], report['louo_auc_std'])} | "
             f"{'n/a' if gap is None else f'{gap:.3f}'} | "
             f"{report.get('n_self', '?')}/{report.get('n_louo', '?')} of "
             f"{report.get('n_users', len(report['users']))} |"]
    for name, key in (("paper PerMemBench-S", "S"), ("paper PerMemBench-L", "L")):
        p = paper[key]
        lines.append(f"| {name} | {p['self_auc_mean']:.3f} ± {p['self_auc_std']:.3f} | "
                     f"{p['louo_auc_mean']:.3f} ± {p['louo_auc_std']:.3f} | {p['gap']:.3f} | "
                     f"{p['n_users']}/{p['n_users']} |")
    if report.get("gap_paired_ci95"):
        lo, hi = report["gap_paired_ci95"]
        lines.append(f"\npaired gap (mean of per-user Self - LOUO): {report['gap_paired']:.3f} "
                     f"[95% bootstrap CI over users {lo:.3f}, {hi:.3f}]")
    lines.append("")
    lines.append("| user | facts | used | Self AUC | LOUO AUC |")
    lines.append("|---|---|---|---|---|")
    for u in report["users"]:
        s = "n/a" if u["self_auc"] is None else f"{u['self_auc']:.3f}"
        lo_ = "n/a" if u["louo_auc"] is None else f"{u['louo_auc']:.3f}"
        lines.append(f"| {u['user']} | {u['n_facts']} | {u['n_used']} | {s} | {lo_} |")
    for sk in report.get("skipped", []):
        lines.append(f"not scored: {sk['user']} ({sk['regime']}): {sk['reason']}")
    return "\n".join(lines)


def utility_terms(facts: list[Fact], *, top: int = 10, min_df: int = 3) -> dict[str, Any]:
    """TF-IDF terms carrying shared utility (pooled model) and each user's own (own minus others).

    ``shared``: the largest coefficients of one model on everybody's facts, among terms that
    occur for at least half of the users (so one user's pet name cannot pass as shared).
    ``own[user]``: the user's own-model coefficient minus that of a model on all other
    users, among terms in at least ``min_df`` of the user's facts: what is useful to this
    user beyond what the others' data says.
    """
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    def fit(x, y):
        return LogisticRegression(C=1.0, max_iter=1000).fit(x, y).coef_[0]

    texts = [f.text for f in facts]
    y = np.array([1 if f.hits else 0 for f in facts])
    users = np.array([f.user for f in facts])
    vec = TfidfVectorizer(min_df=min_df).fit(texts)
    vocab = np.array(vec.get_feature_names_out())
    X = vec.transform(texts)
    groups = _group(facts)
    present = np.zeros((len(groups), len(vocab)), dtype=bool)
    for i, u in enumerate(groups):
        present[i] = np.asarray((X[users == u] > 0).sum(axis=0)).ravel() > 0
    broad = present.sum(axis=0) >= max(1, len(groups) / 2)
    pooled = fit(X, y)
    order = [i for i in np.argsort(-pooled, kind="stable") if broad[i]]
    shared = [(str(vocab[i]), float(pooled[i])) for i in order[:top]]
    own: dict[str, list[tuple[str, float]]] = {}
    for u in groups:
        m = users == u
        if y[m].min() == y[m].max() or y[~m].min() == y[~m].max():
            continue
        diff = fit(X[m], y[m]) - fit(X[~m], y[~m])
        df_u = np.asarray((X[m] > 0).sum(axis=0)).ravel()
        idx = [i for i in np.argsort(-diff, kind="stable") if df_u[i] >= min_df][:top]
        own[u] = [(str(vocab[i]), float(diff[i])) for i in idx]
    return {"shared": shared, "own": own}
