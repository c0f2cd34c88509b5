"""Simulator fidelity (TellOnce App. C.3.3, Table 10), headline on data the method never saw.

Rows, each labelled with its data role in ``fixtures/SPLITS.json``:

- **held-out** (the headline): the fc8 batches, written apart and never fit, tuned or read;
- **first-contact**: batches under ``fixtures/fidelity/firstcontact/`` scored once on arrival
  (``--first-contact DIR`` records that score inside the batch before anyone reads it);
- **development**: the shipped annotated set, the independent batches fc3-fc7 and the batches w1, w2, w6, w7
  (first-contact records kept and shown as their own rows), which the reader's catalogue was
  written against and its learned stage was fit on (labelled so).

Each row: macro over annotators with an annotator-clustered bootstrap CI, coverage (share of points
the simulator judged; abstentions count as "no correction sent"), and the share of true negatives
owed to abstention. Prose comparing with the paper is printed from the numbers.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from toolkit.datasets.jsonl import read_jsonl
from toolkit.diagnostics.result import Result
from toolkit.errors import PrefmemError, UsageError
from toolkit.paper import paper_figures
from toolkit.profiles import Profile, load_profiles
from toolkit.records import AnnotatedPoint
from toolkit.runs import RunContext
from toolkit.simuser.fidelity import METRICS, report_from_traces, simulate_points
from toolkit.splits import (
    REPO_ROOT,
    first_contact_of,
    load_splits,
    record_first_contact,
    require_role,
)
from toolkit.viz import new_figure

#: fc8 at first contact with the pre-rebuild reader (recorded 2026-11-30 in
#: fixtures/fidelity/independent/README.md; not recomputable: that code is gone from the reader)
PRE_REBUILD_FC8 = {"f1": 0.626, "specificity": 0.428, "rule_recall": 0.350, "n_points": 147, "n_annotators": 12}


def stage_breakdown(points: list[AnnotatedPoint], traces: list) -> pd.DataFrame:
    """Where each (point, preference of its annotator) pair ended in the reader's cascade: the deciding stage
    (``check``, ``scope``, ``kind``, ``learned``, ``llm``) and verdict, counted separately for the pairs the
    annotator labelled as violated and for the rest, with each count's share of its group.

    It answers which stage a missed violation stopped at (ruled out by a condition, passed, or left
    undecided), so it is built on development points only."""
    counts: dict[tuple[str, str, str], int] = {}
    totals: dict[str, int] = {}
    for p, t in zip(points, traces, strict=True):
        labelled = set(p.preference_ids) if p.corrected else set()
        for j in t.judgements:
            gold = "labelled violation" if j.preference_id in labelled else "not labelled"
            stage = (j.decided_by or "none").split(":")[0]
            key = (gold, stage, j.verdict)
            counts[key] = counts.get(key, 0) + 1
            totals[gold] = totals.get(gold, 0) + 1
    rows = [{"pair": g, "stage": st, "verdict": v, "pairs": n, "share": n / totals[g]}
            for (g, st, v), n in sorted(counts.items())]
    return pd.DataFrame(rows, columns=["pair", "stage", "verdict", "pairs", "share"])


def stage_sentence(table: pd.DataFrame) -> str | None:
    """One sentence on where the labelled violations of the development points were decided."""
    pos = table[table["pair"] == "labelled violation"]
    if pos.empty:
        return None
    n = int(pos["pairs"].sum())
    found = int(pos.loc[pos["verdict"] == "violated", "pairs"].sum())
    scope = int(pos.loc[(pos["stage"] == "scope") & (pos["verdict"] == "not_applicable"), "pairs"].sum())
    passed = int(pos.loc[pos["verdict"] == "satisfied", "pairs"].sum())
    undecided = int(pos.loc[pos["verdict"] == "unknown", "pairs"].sum())
    return (f"Development, labelled violations (point, preference): {found} of {n} found; of the rest {scope} "
            f"ruled out by the scope stage (a condition or exception read as not holding), {passed} passed and "
            f"{undecided} left undecided (abstain).")


def disagreements(points: list[AnnotatedPoint], traces: list) -> pd.DataFrame:
    """Every point where the simulator's decision or named preferences differ from the annotation."""
    rows = []
    for p, t in zip(points, traces, strict=True):
        sim = t.decision == "correct"
        missing = sorted(set(p.preference_ids) - set(t.named)) if p.corrected else []
        if sim == p.corrected and not missing:
            continue
        if t.decision in ("unknown", "abstain") and p.corrected:
            kind = "missed correction (could not judge)"
        elif p.corrected and not sim:
            kind = "missed correction"
        elif sim and not p.corrected:
            kind = "false alarm"
        else:
            kind = "wrong preference"
        verdicts = {j.preference_id: j for j in t.judgements}
        if kind.startswith("missed") or kind == "wrong preference":
            why = "; ".join(f"{pid}: {verdicts[pid].verdict} by {verdicts[pid].decided_by} ({verdicts[pid].evidence})"
                            if pid in verdicts else f"{pid}: not judged" for pid in missing)
        else:
            why = "; ".join(f"{pid}: {verdicts[pid].decided_by}: {verdicts[pid].evidence}" for pid in t.named
                            if pid in verdicts)
        rows.append({"id": p.id, "annotator": p.annotator, "kind": kind, "labelled": ", ".join(p.preference_ids),
                     "simulator": ", ".join(t.named), "why": why[:220]})
    return pd.DataFrame(rows, columns=["id", "annotator", "kind", "labelled", "simulator", "why"])


def per_annotator_figure(report: dict, title: str = ""):
    """Per-annotator F1, specificity and rule recall with bootstrap 95% CIs, the paper's value as a line."""
    paper = report.get("paper", {})
    fig = new_figure(7.5, 3.4)
    axes = fig.subplots(1, 3, sharey=True)
    names = [r["annotator"] for r in report["annotators"]]
    for ax, metric, label in zip(axes, ("f1", "specificity", "rule_recall"), ("F1", "specificity", "rule recall"),
                                 strict=True):
        ys = np.array([np.nan if r[metric] is None else r[metric] for r in report["annotators"]], float)
        cis = [report["ci"]["annotators"].get(n, {}).get(metric, [None, None]) for n in names]
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
        ax.set_xticks(x, [n.replace("ann-", "") for n in names], rotation=60, ha="right", fontsize=6)
        ax.set_title(label)
        ax.set_ylim(0, 1.05)
    axes[0].set_ylabel("value")
    axes[-1].legend(loc="lower right", fontsize=7)
    if title:
        fig.suptitle(title, fontsize=9)
    return fig


def _batch_files(folder: Path) -> tuple[Path, Path]:
    """A batch's points file and its profiles folder (``profiles/``, or ``annotators/`` in the shipped set)."""
    prof = folder / "profiles"
    if not prof.is_dir() and (folder / "annotators").is_dir():
        prof = folder / "annotators"
    return folder / "points.jsonl", prof


def fidelity_sets() -> dict[str, tuple[str, list[Path]]]:
    """Named evaluation sets -> (role, batch folders), from SPLITS.json (held-out, first-contact, development)."""
    splits = load_splits()
    by_role: dict[str, list[Path]] = {}
    for key, e in sorted(splits.items()):
        if key.startswith("fixtures/fidelity/") and key.endswith("points.jsonl"):
            by_role.setdefault(e.role, []).append((REPO_ROOT / key).parent)
    sets: dict[str, tuple[str, list[Path]]] = {}
    if by_role.get("held-out"):
        sets["held-out (" + ", ".join(f.name for f in by_role["held-out"]) + ")"] = ("held-out", by_role["held-out"])
    for f in by_role.get("first-contact", []):
        rec = first_contact_of(f)
        note = f" (first scored at {rec['commit'][:8]}, {rec['date']})" if rec else " (not yet scored)"
        sets[f"first-contact {f.name}{note}"] = ("first-contact", [f])
    if by_role.get("development"):
        sets[f"development ({_folders_named(by_role['development'])})"] = ("development", by_role["development"])
    return sets


def _folders_named(folders: list[Path]) -> str:
    """Batch folders in a few words: the shipped set, the independent waves as a range, the rest by name."""
    names = sorted({f.name for f in folders})
    waves = sorted({int(m.group(1)) for n in names if (m := re.fullmatch(r"fc(\d+)[a-z]?", n))})
    rest = sorted((n for n in names if n != "fidelity" and not re.fullmatch(r"fc\d+[a-z]?", n)),
                  key=lambda n: (re.sub(r"\d+", "", n), int(re.sub(r"\D", "", n) or 0)))
    parts = (["shipped set"] if "fidelity" in names else []) + \
        ([f"fc{waves[0]}-fc{waves[-1]}" if len(waves) > 1 else f"fc{waves[0]}"] if waves else []) + rest
    return ", ".join(parts)


def recorded_first_contacts() -> list[dict]:
    """Rows for batches now used for development whose first-contact score was recorded before that.

    Their current scores are development figures (they were read and fit on since); the recorded
    first-contact record (commit, date, macro) is what the method scored before it saw them.
    """
    rows = []
    for key, e in sorted(load_splits().items()):
        if not (key.startswith("fixtures/fidelity/") and key.endswith("points.jsonl")) or e.role != "development":
            continue
        folder = (REPO_ROOT / key).parent
        rec = first_contact_of(folder)
        if rec is None or rec.get("diagnostic") != "fidelity":
            continue
        m = rec["scores"]["macro"]
        ann = rec["scores"]["annotators"]
        rows.append({"set": f"first-contact {folder.name} (recorded at {rec['commit'][:8]}, {rec['date']}; "
                            "development since)", "role": "first-contact (recorded)", "annotators": len(ann),
                     "n": rec["n"], "n_pos": sum(a["n_pos"] for a in ann), "n_neg": sum(a["n_neg"] for a in ann),
                     "coverage": m.get("coverage"),
                     **{k: m.get(k) for k in METRICS}, "tn_owed_to_abstention": m.get("tn_abstain_share")})
    return rows


def namespaced(batch: str, points: list[AnnotatedPoint], profiles: dict[str, Profile],
               taken: set[str]) -> tuple[list[AnnotatedPoint], dict[str, Profile]]:
    """One batch's points and profiles with annotator ids made unique among the batches pooled so far.

    Batches are written apart, so two writers may both call an annotator ``tomasz`` (or one writes
    ``tomasz`` where another wrote ``w20-tomasz``). An id already ``taken`` by an earlier batch becomes
    ``<batch>/<id>`` in this batch's profiles and points alike; the files are never edited, and ids
    that do not clash stay as written (so recorded reports keep their names)."""
    clash = set(profiles) & taken
    if not clash:
        return points, profiles
    new = {pid: (f"{batch}/{pid}" if pid in clash else pid) for pid in profiles}
    if set(new.values()) & taken:
        raise ValueError(f"{batch}: annotator ids {sorted(clash)} clash even after namespacing by batch")
    return ([p.model_copy(update={"annotator": new.get(p.annotator, p.annotator)}) for p in points],
            {new[pid]: prof.model_copy(update={"id": new[pid]}) for pid, prof in profiles.items()})


def load_set(folders: list[Path]) -> tuple[list[AnnotatedPoint], dict[str, Profile]]:
    """Points and profiles of several batches pooled; an annotator id that another batch already used is
    namespaced by its batch folder (:func:`namespaced`)."""
    points: list[AnnotatedPoint] = []
    profiles: dict[str, Profile] = {}
    for folder in folders:
        pts_path, prof_path = _batch_files(folder)
        require_role(pts_path, "evaluate")
        pts, profs = namespaced(folder.name, read_jsonl(pts_path, AnnotatedPoint), load_profiles(prof_path),
                                set(profiles))
        points += pts
        profiles.update(profs)
    return points, profiles


def score_set(points, profiles, model, *, seed: int = 0) -> tuple[dict, list]:
    traces = simulate_points(points, profiles, model, seed=seed)
    return report_from_traces(points, traces, model_name=model.name, seed=seed), traces


def table_row(name: str, role: str, report: dict) -> dict:
    m, ci = report["macro"], report["ci"]["macro"]
    row = {"set": name, "role": role, "annotators": len(report["annotators"]), "n": report["n_points"],
           "n_pos": sum(r["n_pos"] for r in report["annotators"]),
           "n_neg": sum(r["n_neg"] for r in report["annotators"]), "coverage": m["coverage"]}
    for k in METRICS:
        row[k] = m[k]
        if k in ("f1", "specificity", "rule_recall"):
            row[f"{k}_ci_low"], row[f"{k}_ci_high"] = ci.get(k, [None, None])
    row["tn_owed_to_abstention"] = m["tn_abstain_share"]
    return row


def comparison_sentences(row: dict, paper: dict) -> list[str]:
    """Sentences comparing a row with the paper, each printed only when its computed check holds."""
    out = []
    for k, label in (("f1", "F1"), ("specificity", "specificity"), ("rule_recall", "rule recall")):
        v, lo, hi, p = row[k], row[f"{k}_ci_low"], row[f"{k}_ci_high"], paper["figures"][k]
        if v is None or lo is None:
            continue
        if lo <= p <= hi:
            out.append(f"{label} {v:.3f}: the paper's {p:.3f} lies inside our 95% CI [{lo:.2f}, {hi:.2f}].")
        elif hi < p:
            out.append(f"{label} {v:.3f} is below the paper's {p:.3f} (our 95% CI [{lo:.2f}, {hi:.2f}] excludes it).")
        else:
            out.append(f"{label} {v:.3f} is above the paper's {p:.3f} (our 95% CI [{lo:.2f}, {hi:.2f}] excludes it).")
    return out


def score_first_contact(folder: Path, model, *, seed: int = 0) -> dict:
    """Score a new batch once and write its first-contact record (commit, date, scores) before returning.

    Refuses when the batch already has a record. Nothing about the batch is printed before the record
    exists.
    """
    folder = Path(folder)
    if first_contact_of(folder) is not None:
        raise PrefmemError(f"{folder}: this batch was already scored at first contact (FIRST_CONTACT.json)")
    if not (folder / "points.jsonl").is_file():
        raise PrefmemError(f"{folder}: no points.jsonl (a batch is DIR/points.jsonl with DIR/profiles/)")
    points, profiles = load_set([folder])
    report, _ = score_set(points, profiles, model, seed=seed)
    scores = {"macro": report["macro"], "ci_macro": report["ci"]["macro"], "annotators": report["annotators"],
              "model": model.name, "seed": seed, "n_abstain": report["n_abstain"], "n_unknown": report["n_unknown"]}
    record_first_contact(folder, "fidelity", scores, n=len(points))
    return report


def run(ctx: RunContext) -> Result:
    """Table 10: held-out headline, first-contact rows, the development row labelled; the paper beside."""
    model = ctx.chat_model()
    if not model.is_offline:
        ctx.record_prompt("simuser_respond")
    paper = paper_figures("fidelity")
    dirs = ctx.options.get("first_contact") or []
    dirs = [d for d in ([dirs] if isinstance(dirs, str) else dirs) if (Path(d) / "points.jsonl").exists()]
    if dirs:  # batches for other diagnostics (admission, resolution) hold no points.jsonl
        if len(dirs) != 1:
            raise UsageError("fidelity --first-contact takes one batch folder per run")
        folder = Path(dirs[0])
        report = score_first_contact(folder, model, seed=ctx.seed)
        row = table_row(f"first-contact {folder.name}", "first-contact", report)
        return Result(name="fidelity", tables={"table10": pd.DataFrame([row])},
                      text=[f"First contact with {folder}: recorded in {folder / 'FIRST_CONTACT.json'}.",
                            *comparison_sentences(row, paper)],
                      meta={"first_contact": str(folder), "macro": report["macro"]})
    if "points" in ctx.options:  # a user's own set
        points = read_jsonl(ctx.record_input(Path(ctx.options["points"])), AnnotatedPoint)
        profiles = load_profiles(ctx.record_input(Path(ctx.options["profiles"])))
        sets = {"user set": ("user", points, profiles)}
    else:
        sets = {}
        for name, (role, folders) in fidelity_sets().items():
            if ctx.quick and role == "development":  # notebook-sized: the sets the method never saw
                continue
            for f in folders:
                ctx.record_input(f)
            sets[name] = (role, *load_set(folders))
    rows, reports, figures, tables, text = [], {}, {}, {}, []
    text_stage = None
    for name, (role, points, profiles) in sets.items():
        report, traces = score_set(points, profiles, model, seed=ctx.seed)
        reports[name] = report
        rows.append(table_row(name, role, report))
        if role == "development":  # errors are read only where the method may be tuned
            tables["disagreements_development"] = disagreements(points, traces)
            tables["stages_development"] = stage_breakdown(points, traces)
            text_stage = stage_sentence(tables["stages_development"])
        if role in ("held-out", "user"):
            tables["annotators_headline"] = pd.DataFrame(report["annotators"])
            figures["per_annotator"] = per_annotator_figure(report, name)
    fc8 = next((r for r in rows if r["role"] == "held-out"), None)
    table = pd.DataFrame(rows)
    extra = [{"set": "paper (Table 10, held-out, 5 researchers)", "role": "reference", "annotators": 5,
              "n": paper["n_points"], "n_pos": paper["n_pos"], "n_neg": paper["n_neg"],
              **{k: paper["figures"].get(k) for k in ("f1", "specificity", "rule_recall")}}]
    if fc8 is not None and model.is_offline:
        extra.append({"set": "held-out fc8 at first contact, pre-rebuild reader (recorded 2026-11-30)",
                      "role": "held-out (recorded)", "annotators": PRE_REBUILD_FC8["n_annotators"],
                      "n": PRE_REBUILD_FC8["n_points"],
                      **{k: PRE_REBUILD_FC8[k] for k in ("f1", "specificity", "rule_recall")}})
    if "points" not in ctx.options:
        extra += recorded_first_contacts()
    tables["table10"] = pd.concat([table, pd.DataFrame(extra)], ignore_index=True)
    head = rows[0]
    text.append(f"Simulator fidelity ({model.name}, seed {ctx.seed}). Headline: {head['set']} [{head['role']}], "
                f"{head['annotators']} annotators, {head['n']} points: F1 {head['f1']:.3f}, specificity "
                f"{head['specificity']:.3f}, rule recall {head['rule_recall']:.3f}, coverage {head['coverage']:.3f} "
                f"(macro over annotators; 95% CIs by annotator-clustered bootstrap).")
    text += comparison_sentences(head, paper)
    if head["tn_owed_to_abstention"] is not None:
        text.append(f"Abstentions count as 'no correction sent'; {head['tn_owed_to_abstention']:.3f} of the "
                    "headline's true negatives (macro) are owed to abstention rather than to a judged pass.")
    for r in rows[1:]:
        text.append(f"{r['set']} [{r['role']}]: F1 {r['f1']:.3f}, specificity {r['specificity']:.3f}, rule recall "
                    f"{r['rule_recall']:.3f}, coverage {r['coverage']:.3f} (n = {r['n']}).")
    dev = next((r for r in rows if r["role"] == "development"), None)
    if dev is not None and fc8 is not None and dev["f1"] is not None and fc8["f1"] is not None and \
            dev["f1"] - fc8["f1"] > 0.05:
        text.append(f"The development row (F1 {dev['f1']:.3f}) is above the held-out row ({fc8['f1']:.3f}): it is "
                    "scored on the points the catalogue was written against and the learned stage was fit on.")
    if text_stage:
        text.append(text_stage)
    text.append(f"Paper ({paper['table']}): {paper['n_annotators']} researchers, {paper['n_points']} points; "
                "precision and recall are not reported there.")
    return Result(name="fidelity", tables=tables, figures=figures, text=text,
                  meta={"rows": rows, "seed": ctx.seed, "model": model.name})
