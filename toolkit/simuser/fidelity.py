"""Simulator fidelity against annotated interaction points (TellOnce App. C.3.3, Table 10).

Positive = the annotator corrected. Per annotator: decision precision, recall, F1, specificity and
rule recall, then the unweighted mean over annotators (the seed: "Each metric is computed separately
for each researcher and then averaged across the five researchers").

Rule recall follows the seed's definition per positive example: "Rule recall is stricter: on
positive examples, it measures whether the generated feedback recovers the human-labeled preference
underlying the correction" (C.3.3). Each positive example scores the share of its labelled
preferences the simulator's feedback named (0 when it sent none); an annotator's rule recall is the
mean over its positive examples.

Fixed denominators: every point counts. A simulator that could not judge (``abstain``) or whose model
answer was unusable (``unknown``) sent no correction, exactly as a silent user would; such points are
counted as "no correction sent" in every metric and reported in their own columns: coverage (share of
points the simulator judged) and the share of true negatives owed to abstention.
CIs: per annotator, points resampled within the annotator; for the macro figures, an
annotator-clustered bootstrap (annotators resampled with replacement, their metrics averaged).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from sklearn.utils import check_random_state

from toolkit.llm import ChatModel
from toolkit.metrics import Binary, confusion
from toolkit.paper import paper_figures
from toolkit.profiles import Profile
from toolkit.records import AnnotatedPoint
from toolkit.simuser.delivery import Delivery
from toolkit.simuser.simulator import judge_groups
from toolkit.simuser.trace import Trace

METRICS = ("precision", "recall", "f1", "specificity", "rule_recall")


def point_delivery(p: AnnotatedPoint) -> Delivery:
    """An annotated point as the delivery the simulated user reviews."""
    return Delivery(task=p.task, reply=p.response, artifacts=p.artifacts, unit=p.id, id=p.id)


def simulate_points(points: list[AnnotatedPoint], profiles: dict[str, Profile], model: ChatModel | None,
                    *, seed: int = 0) -> list[Trace]:
    """The simulator's trace for every point, judged by its annotator's profile (input order)."""
    traces: dict[str, Trace] = {}
    by_ann: dict[str, list[AnnotatedPoint]] = {}
    for p in points:
        by_ann.setdefault(p.annotator, []).append(p)
    anns = sorted(by_ann)
    # every annotator's deliveries in one call (offline: one reader call, so texts embed together)
    judged = judge_groups([(profiles[a], [point_delivery(p) for p in by_ann[a]]) for a in anns],
                          model, seed=seed)
    for a, trs in zip(anns, judged, strict=True):
        for p, tr in zip(by_ann[a], trs, strict=True):
            traces[p.id] = tr
    return [traces[p.id] for p in points]


def _nan_none(x: float) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def point_metrics(t: np.ndarray, p: np.ndarray, rr: np.ndarray, judged: np.ndarray) -> dict[str, float]:
    """One annotator's metrics from per-point arrays: gold, corrected, rule-recall score, judged."""
    c: Binary = confusion(t, p)
    tn = (~t & ~p)
    return {"precision": c.precision, "recall": c.recall, "f1": c.f1, "specificity": c.specificity,
            "rule_recall": float(rr[t].mean()) if t.any() else float("nan"),
            "coverage": float(judged.mean()) if len(judged) else float("nan"),
            "tn_abstain_share": float((tn & ~judged).sum() / tn.sum()) if tn.sum() else float("nan")}


def fidelity_report(points: list[AnnotatedPoint], profiles: dict[str, Profile], model: ChatModel, *,
                    seed: int = 0) -> dict:
    """The DESIGN §3 fidelity JSON (annotators, macro, points) plus bootstrap CIs under ``ci``."""
    traces = simulate_points(points, profiles, model, seed=seed)
    return report_from_traces(points, traces, model_name=getattr(model, "name", "offline"), seed=seed)


def point_rows(points: list[AnnotatedPoint], traces: list[Trace]) -> list[dict]:
    """The simulator's own decision per point (the ``points`` of the fidelity JSON)."""
    rows = []
    for p, tr in zip(points, traces, strict=True):
        corrected = tr.decision == "correct"
        rows.append({"id": p.id, "corrected": corrected, "preference_ids": list(tr.named) if corrected else [],
                     "feedback": tr.feedback if corrected else None, "decision": tr.decision,
                     "status": "unknown" if tr.decision == "unknown" else "ok"})
    return rows


def score_points(points: list[AnnotatedPoint], rows: list[dict], *, seed: int = 0) -> dict:
    """Per-annotator and macro metrics from logged per-point decisions (a pure function of the two)."""
    arrays: dict[str, dict[str, list]] = {}
    for p, r in zip(points, rows, strict=True):
        if p.id != r["id"]:
            raise ValueError(f"point {p.id!r} and decision {r['id']!r} are not aligned")
        a = arrays.setdefault(p.annotator, {"t": [], "p": [], "rr": [], "judged": []})
        labelled = set(p.preference_ids) if p.corrected else set()
        a["t"].append(p.corrected)
        a["p"].append(bool(r["corrected"]))
        a["rr"].append(len(labelled & set(r["preference_ids"])) / len(labelled) if labelled else 0.0)
        a["judged"].append(r.get("decision", "silent") in ("correct", "silent"))
    ann_rows, np_arrays = [], {}
    for ann in sorted(arrays):
        a = arrays[ann]
        t, pr = np.asarray(a["t"], bool), np.asarray(a["p"], bool)
        rr, judged = np.asarray(a["rr"], float), np.asarray(a["judged"], bool)
        np_arrays[ann] = (t, pr, rr, judged)
        m = point_metrics(t, pr, rr, judged)
        ann_rows.append({"annotator": ann, "n_pos": int(t.sum()), "n_neg": int((~t).sum()),
                         **{k: _nan_none(v) for k, v in m.items()}, "n_abstain": int((~judged).sum())})
    with _quiet():
        macro = {k: _nan_none(float(np.nanmean([r[k] if r[k] is not None else np.nan for r in ann_rows])))
                 if ann_rows else None for k in (*METRICS, "coverage", "tn_abstain_share")}
    return {"annotators": ann_rows, "macro": macro, "ci": bootstrap_cis(np_arrays, seed=seed)}


def report_from_traces(points: list[AnnotatedPoint], traces: list[Trace], *, model_name: str = "offline",
                       seed: int = 0) -> dict:
    """Score logged simulator decisions against the annotations (a pure function of the two)."""
    rows = point_rows(points, traces)
    scored = score_points(points, rows, seed=seed)
    paper = paper_figures("fidelity")
    return {
        **scored, "points": rows, "model": model_name, "seed": seed, "n_points": len(points),
        "n_unknown": sum(r["decision"] == "unknown" for r in rows),
        "n_abstain": sum(r["decision"] == "abstain" for r in rows),
        "paper": {"table": paper["table"], **paper["figures"], "n_points": paper["n_points"],
                  "n_annotators": paper["n_annotators"]},
    }


def _boot_metrics(T: np.ndarray, P: np.ndarray, R: np.ndarray) -> np.ndarray:
    """Metrics for resampled point sets (rows = resamples)."""
    tp = (T & P).sum(1)
    fp = (~T & P).sum(1)
    tn = (~T & ~P).sum(1)
    fn = (T & ~P).sum(1)
    with np.errstate(invalid="ignore", divide="ignore"):
        prec = np.where(tp + fp > 0, tp / np.maximum(tp + fp, 1), np.nan)
        rec = np.where(tp + fn > 0, tp / np.maximum(tp + fn, 1), np.nan)
        f1 = np.where((prec + rec) > 0, 2 * prec * rec / (prec + rec), np.where(tp + fp + fn > 0, 0.0, np.nan))
        spec = np.where(tn + fp > 0, tn / np.maximum(tn + fp, 1), np.nan)
        rr = np.where(T.sum(1) > 0, (R * T).sum(1) / np.maximum(T.sum(1), 1), np.nan)
    return np.column_stack([prec, rec, f1, spec, rr])


def bootstrap_cis(arrays: dict[str, tuple[np.ndarray, ...]], *, seed: int = 0, n_resamples: int = 2000,
                  alpha: float = 0.05) -> dict[str, Any]:
    """Percentile CIs: per annotator (its points resampled) and macro (annotators resampled, clustered)."""
    rng = check_random_state(seed)

    def interval(col: np.ndarray) -> list[float | None]:
        col = col[~np.isnan(col)]
        if col.size == 0:
            return [None, None]
        return [float(np.quantile(col, alpha / 2)), float(np.quantile(col, 1 - alpha / 2))]

    out: dict[str, Any] = {"method": f"percentile bootstrap, {n_resamples} resamples; per annotator: points "
                                     "resampled within it; macro: annotators resampled with replacement "
                                     "(annotator-clustered)", "level": 1 - alpha, "annotators": {}, "macro": {}}
    point_level = {}
    for ann, (t, p, rr, _judged) in sorted(arrays.items()):
        n = len(t)
        if not n:
            continue
        idx = rng.randint(0, n, (n_resamples, n))
        stats = _boot_metrics(t[idx], p[idx], rr[idx])
        out["annotators"][ann] = {m: interval(stats[:, i]) for i, m in enumerate(METRICS)}
        point_level[ann] = point_metrics(t, p, rr, _judged)
    names = sorted(point_level)
    if names:
        table = np.array([[point_level[a][m] for m in METRICS] for a in names], float)
        pick = rng.randint(0, len(names), (n_resamples, len(names)))
        with np.errstate(invalid="ignore"), _quiet():
            macro = np.nanmean(table[pick], axis=1)
        out["macro"] = {m: interval(macro[:, i]) for i, m in enumerate(METRICS)}
    return out


class _quiet:
    """Silence numpy's 'mean of empty slice' warning inside a block."""

    def __enter__(self):
        import warnings

        self._cm = warnings.catch_warnings()
        self._cm.__enter__()
        warnings.simplefilter("ignore", RuntimeWarning)
        return self

    def __exit__(self, *exc):
        return self._cm.__exit__(*exc)


def _f(x: float | None) -> str:
    return "  n/a" if x is None else f"{x:.3f}"


def format_fidelity(report: dict) -> str:
    """Table 10's layout: per-annotator rows, the macro row with CIs, the paper's figures beside."""
    head = (f"{'annotator':<16}{'n_pos':>6}{'n_neg':>6}{'precision':>11}{'recall':>8}{'F1':>8}{'specif.':>9}"
            f"{'rule rec.':>11}{'coverage':>10}")
    lines = [f"Simulator fidelity (TellOnce Table 10 layout) - model {report.get('model')}, seed {report.get('seed')}",
             head, "-" * len(head)]
    for r in report["annotators"]:
        lines.append(f"{r['annotator']:<16}{r['n_pos']:>6}{r['n_neg']:>6}{_f(r['precision']):>11}{_f(r['recall']):>8}"
                     f"{_f(r['f1']):>8}{_f(r['specificity']):>9}{_f(r['rule_recall']):>11}{_f(r['coverage']):>10}")
    m = report["macro"]
    npos = sum(r["n_pos"] for r in report["annotators"])
    nneg = sum(r["n_neg"] for r in report["annotators"])
    lines.append("-" * len(head))
    lines.append(f"{'macro (ours)':<16}{npos:>6}{nneg:>6}{_f(m['precision']):>11}{_f(m['recall']):>8}"
                 f"{_f(m['f1']):>8}{_f(m['specificity']):>9}{_f(m['rule_recall']):>11}{_f(m['coverage']):>10}")
    ci = report.get("ci", {}).get("macro", {})
    if ci:
        def c(k: str) -> str:
            lo, hi = ci.get(k, [None, None])
            return "" if lo is None else f"[{lo:.2f},{hi:.2f}]"
        lines.append(f"{'  95% CI':<28}{c('precision'):>11}{c('recall'):>12}{c('f1'):>12}{c('specificity'):>12}"
                     f"{c('rule_recall'):>12}")
    pp = report.get("paper") or {}
    if pp:
        lines.append(f"{'paper (Table 10)':<16}{'':>6}{'':>6}{'  n/r':>11}{'  n/r':>8}{_f(pp.get('f1')):>8}"
                     f"{_f(pp.get('specificity')):>9}{_f(pp.get('rule_recall')):>11}")
    n_ann = len(report["annotators"])
    lines.append("")
    lines.append(f"Ours: {n_ann} annotators, {npos + nneg} points ({npos} corrections, {nneg} matched "
                 f"non-corrections); the simulator abstained on {report.get('n_abstain', 0)} and had no usable model "
                 f"answer on {report.get('n_unknown', 0)}: both count as 'no correction sent' (coverage = share "
                 f"judged); {_f(m.get('tn_abstain_share'))} of true negatives are owed to abstention (macro).")
    if pp:
        lines.append(f"Paper: {pp.get('n_annotators')} researchers, {pp.get('n_points')} points; F1 "
                     f"{pp.get('f1'):.3f}, specificity {pp.get('specificity'):.3f}, rule recall "
                     f"{pp.get('rule_recall'):.3f} (precision and recall not reported, n/r).")
    return "\n".join(lines)
