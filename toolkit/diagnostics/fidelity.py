"""Simulator fidelity (TellOnce App. C.3.3, Table 10) on the shipped annotated points."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from toolkit.datasets.jsonl import read_jsonl
from toolkit.diagnostics.result import Result, compare_rows
from toolkit.paper import fixtures_dir, paper_figures
from toolkit.profiles import load_profiles
from toolkit.records import AnnotatedPoint
from toolkit.runs import RunContext
from toolkit.simuser.fidelity import METRICS, report_from_traces, simulate_points
from toolkit.viz import new_figure


def disagreements(points: list[AnnotatedPoint], traces: list) -> pd.DataFrame:
    """Every point where the simulator's decision or named preferences differ from the annotation."""
    rows = []
    for p, t in zip(points, traces, strict=True):
        sim = t.decision == "correct"
        missing = sorted(set(p.preference_ids) - set(t.named))
        if sim == p.corrected and not missing:
            continue
        if t.decision == "unknown":
            kind = "unknown (model answer unusable)"
        elif p.corrected and not sim:
            kind = "missed correction"
        elif sim and not p.corrected:
            kind = "false alarm"
        else:
            kind = "wrong preference"
        why = t.reason
        verdicts = {j.preference_id: j for j in t.judgements}
        if kind == "missed correction" or kind == "wrong preference":
            why = "; ".join(f"{pid}: {verdicts[pid].verdict} ({verdicts[pid].evidence or verdicts[pid].applicability})"
                            if pid in verdicts else f"{pid}: not judged" for pid in missing)
        elif kind == "false alarm":
            why = "; ".join(f"{pid}: {verdicts[pid].evidence}" for pid in t.named if pid in verdicts)
        rows.append({"id": p.id, "annotator": p.annotator, "kind": kind, "labelled": ", ".join(p.preference_ids),
                     "simulator": ", ".join(t.named), "why": why[:220]})
    return pd.DataFrame(rows, columns=["id", "annotator", "kind", "labelled", "simulator", "why"])


def per_annotator_figure(report: dict):
    """Per-annotator F1, specificity and rule recall with bootstrap 95% CIs, the paper's value as a line."""
    paper = report.get("paper", {})
    fig = new_figure(7.5, 3.4)
    axes = fig.subplots(1, 3, sharey=True)
    names = [r["annotator"] for r in report["annotators"]]
    for ax, metric, label in zip(axes, ("f1", "specificity", "rule_recall"), ("F1", "specificity", "rule recall"),
                                 strict=True):
        ys = np.array([np.nan if r[metric] is None else r[metric] for r in report["annotators"]], float)
        cis = [report["ci"]["annotators"][n][metric] for n in names]
        lo = np.array([np.nan if c[0] is None else c[0] for c in cis])
        hi = np.array([np.nan if c[1] is None else c[1] for c in cis])
        x = np.arange(len(names))
        ax.errorbar(x, ys, yerr=[np.clip(ys - lo, 0, None), np.clip(hi - ys, 0, None)], fmt="o", capsize=3,
                    color="#4C72B0", label="ours (95% CI)")
        if paper.get(metric) is not None:
            ax.axhline(paper[metric], color="#888888", ls="--", lw=1, label="paper (macro)")
        m = report["macro"][metric]
        if m is not None:
            ax.axhline(m, color="#4C72B0", ls=":", lw=1, label="ours (macro)")
        ax.set_xticks(x, [n.replace("ann-", "") for n in names], rotation=45, ha="right")
        ax.set_title(label)
        ax.set_ylim(0, 1.05)
    axes[0].set_ylabel("value")
    axes[-1].legend(loc="lower right", fontsize=7)
    return fig


def independent_batches(model, *, seed: int = 0) -> pd.DataFrame:
    """Scores on the independently written batches in ``fixtures/fidelity/independent`` (one row per batch).

    These batches were written by other sessions with natural-language-only profiles; see that folder's
    README for their first-contact scores, which are the honest estimate for unseen annotators.
    """
    rows = []
    for folder in sorted(p for p in (fixtures_dir() / "fidelity" / "independent").iterdir() if p.is_dir()):
        points = read_jsonl(folder / "points.jsonl", AnnotatedPoint)
        report = report_from_traces(points, simulate_points(points, load_profiles(folder / "profiles"), model,
                                                            seed=seed), model_name=model.name, seed=seed)
        m = report["macro"]
        rows.append({"batch": folder.name, "annotators": len(report["annotators"]), "n": len(points),
                     "n_pos": sum(r["n_pos"] for r in report["annotators"]),
                     "f1": m["f1"], "specificity": m["specificity"], "rule_recall": m["rule_recall"]})
    return pd.DataFrame(rows, columns=["batch", "annotators", "n", "n_pos", "f1", "specificity", "rule_recall"])


def run(ctx: RunContext) -> Result:
    """Table 10 on the shipped annotated set (or ``--set points=... profiles=...``)."""
    base = fixtures_dir() / "fidelity"
    points_path = Path(ctx.options.get("points", base / "points.jsonl"))
    profiles_path = Path(ctx.options.get("profiles", base / "annotators"))
    points = read_jsonl(ctx.record_input(points_path), AnnotatedPoint)
    profiles = load_profiles(ctx.record_input(profiles_path))
    model = ctx.chat_model()
    if not model.is_offline:
        ctx.record_prompt("simuser_respond")
    traces = simulate_points(points, profiles, model, seed=ctx.seed)
    report = report_from_traces(points, traces, model_name=model.name, seed=ctx.seed)
    paper = paper_figures("fidelity")
    m, ci = report["macro"], report["ci"]["macro"]
    npos = sum(r["n_pos"] for r in report["annotators"])
    nneg = sum(r["n_neg"] for r in report["annotators"])
    ns = {"precision": npos + nneg, "recall": npos, "f1": npos + nneg, "specificity": nneg,
          "rule_recall": npos}
    table = compare_rows([{"metric": k, "ours": m[k], "paper": paper["figures"].get(k), "n": ns[k],
                           "ci_low": ci.get(k, [None, None])[0], "ci_high": ci.get(k, [None, None])[1]}
                          for k in METRICS])
    ann = pd.DataFrame(report["annotators"])
    dis = disagreements(points, traces)
    text = [
        f"Simulator fidelity ({model.name}, seed {ctx.seed}): {len(report['annotators'])} annotators, "
        f"{npos + nneg} points ({npos} corrections, {nneg} matched non-corrections); metrics per annotator, "
        "then their unweighted mean; 95% CIs by bootstrap over points within annotators.",
        f"Paper ({paper['table']}): {paper['n_annotators']} researchers, {paper['n_points']} points; F1 "
        f"{paper['figures']['f1']:.3f}, specificity {paper['figures']['specificity']:.3f}, rule recall "
        f"{paper['figures']['rule_recall']:.3f}. Precision and recall are not reported there.",
        f"{len(dis)} points disagree with the annotation; {report['n_unknown']} model answers were unusable "
        "and are left out of every metric.",
    ]
    tables = {"table10": table, "annotators": ann, "disagreements": dis}
    if model.is_offline and "points" not in ctx.options:
        ind = independent_batches(model, seed=ctx.seed)
        tables["independent"] = ind
        text.append(f"Independently written batches ({len(ind)} batches, {int(ind['n'].sum())} points, natural-language "
                    f"profiles; development data by now): mean macro F1 {ind['f1'].mean():.3f}, specificity "
                    f"{ind['specificity'].mean():.3f}, rule recall {ind['rule_recall'].mean():.3f}. Their first-contact "
                    "scores are recorded in fixtures/fidelity/independent/README.md.")
    return Result(name="fidelity", tables=tables,
                  figures={"per_annotator": per_annotator_figure(report)}, text=text,
                  meta={"n_points": len(points), "n_pos": npos, "n_neg": nneg, "macro": m,
                        "n_unknown": report["n_unknown"], "seed": ctx.seed, "model": model.name})
