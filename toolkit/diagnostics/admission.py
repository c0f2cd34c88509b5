"""Correction admission and rule extraction (TellOnce App. D.1, Tables 11-12), plus PrefEval.

Runs every model in ``ctx.models`` over the 192 held-out instructions (24 behaviours x 8
framings), scores decisions against the framing-fixed gold labels, and puts ours beside the
paper's figures with Wilson intervals (and a behaviour-clustered bootstrap). The PrefEval part
sends all 1,000 explicit preferences through the first model's admission and groups the
outcomes by reason.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd

from toolkit.diagnostics.result import Result, compare_rows
from toolkit.metrics import bootstrap_ci, fixed_rate, wilson_ci
from toolkit.paper import fixtures_dir, paper_figures
from toolkit.records import AdmissionInput
from toolkit.rules.admission import REASONS, admit_detailed
from toolkit.rules.admission_eval import (
    FRAMINGS,
    framing_confusion,
    load_split,
    score_rows,
    summary_counts,
    unknown_counts,
)
from toolkit.runs import RunContext
from toolkit.viz import heatmap, ours_vs_paper

_LABELS = {
    "task_local_rejected": "task-local rejected",
    "underspecified_deferred": "underspecified deferred",
    "erroneous_persistence": "erroneous persistence",
    "persistent_recall": "persistent recall",
    "structural": "complete structural decision",
}
_BOOT_COLUMN = {
    "task_local_rejected": ("task_local", "decision_ok"),
    "underspecified_deferred": ("defer", "decision_ok"),
    "persistent_recall": ("persist", "decision_ok"),
    "structural": (None, "structural_ok"),
}


def _slug(model: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", model).strip("_") or "model"


def _admit(ctx: RunContext, model: str, stage: str, records: list[AdmissionInput]) -> list[dict]:
    """Admission rows for ``records`` through ``ctx.map_items`` (logged, resumable)."""
    chat = ctx.chat_model(model)

    def batch(items: list[AdmissionInput]) -> list[dict[str, Any]]:
        return [a.as_dict() for a in admit_detailed(items, chat, seed=ctx.seed)]

    return ctx.map_items(stage, records, batch, key=lambda r: r.id)


def _boot(scored: pd.DataFrame, name: str, seed: int) -> tuple[float, float]:
    """Behaviour-clustered bootstrap CI for one Table 11 rate."""
    if name == "erroneous_persistence":
        sub = scored[scored.gold_decision != "persist"]
        vals = (sub.decision == "persist").to_numpy(dtype=float)
    else:
        gold, col = _BOOT_COLUMN[name]
        sub = scored
        if gold is not None:
            sub = sub[sub.gold_decision == gold]
        vals = sub[col].to_numpy(dtype=float)
    if len(vals) == 0:
        return float("nan"), float("nan")
    return bootstrap_ci(vals, np.mean, n_resamples=1000, random_state=seed,
                        groups=sub.behavior_id.to_numpy())


def table11(scored: pd.DataFrame, paper: dict[str, Any], seed: int) -> pd.DataFrame:
    """Table 11 rows: ours (rate and k/n over all items) beside the paper, Wilson and bootstrap CIs.

    ``unknown`` is its own column and ``answered_rate`` (k over the answered items) a second
    rate beside ``ours``, never instead of it.
    """
    counts = summary_counts(scored)
    unknown = unknown_counts(scored)
    rows = []
    for name, label in _LABELS.items():
        k, n = counts[name]
        u = unknown[name]
        pk, pn = paper[name]["k"], paper[name]["n"]
        lo, hi = wilson_ci(k, n)
        blo, bhi = _boot(scored, name, seed)
        rows.append({"metric": label, "ours": k / n if n else float("nan"), "paper": pk / pn,
                     "n": n, "ci_low": lo, "ci_high": hi, "ours_k": f"{k}/{n}",
                     "paper_k": f"{pk}/{pn}", "boot_low": blo, "boot_high": bhi,
                     "unknown": u, "answered_rate": fixed_rate(k, u, n)["answered_rate"]})
    return compare_rows(rows)


def table12(per_model: dict[str, pd.DataFrame], paper_rows: list[dict[str, Any]]) -> pd.DataFrame:
    """Table 12: the structural decision (and Table 11's counts) for every model, with the paper's."""
    rows = []
    for model, scored in per_model.items():
        c = summary_counts(scored)
        k, n = c["structural"]
        lo, hi = wilson_ci(k, n)
        rows.append({
            "source": "ours", "model": model, "structural": f"{k}/{n}",
            "structural_rate": k / n if n else float("nan"), "ci_low": lo, "ci_high": hi,
            "underspecified_deferred": "{}/{}".format(*c["underspecified_deferred"]),
            "task_local_rejected": "{}/{}".format(*c["task_local_rejected"]),
            "erroneous_persistence": "{}/{}".format(*c["erroneous_persistence"]),
            "persistent_recall": "{}/{}".format(*c["persistent_recall"]),
            "unknown": int(scored.unknown.sum()),
        })
    for p in paper_rows:
        k, n = p["structural"]["k"], p["structural"]["n"]
        lo, hi = wilson_ci(k, n)
        d = p["underspecified_deferred"]
        rows.append({"source": "paper", "model": p["model"], "structural": f"{k}/{n}",
                     "structural_rate": k / n, "ci_low": lo, "ci_high": hi,
                     "underspecified_deferred": f"{d['k']}/{d['n']}", "task_local_rejected": None,
                     "erroneous_persistence": None, "persistent_recall": None, "unknown": None})
    df = pd.DataFrame(rows)
    df["unknown"] = df["unknown"].astype("Int64")
    return df


def errors_table(per_model: dict[str, pd.DataFrame], texts: dict[str, str]) -> pd.DataFrame:
    """Every structurally wrong (or unknown) held-out decision, per model."""
    frames = []
    for model, scored in per_model.items():
        bad = scored[~scored.structural_ok].copy()
        bad.insert(0, "model", model)
        bad["text"] = bad["id"].map(texts)
        frames.append(bad)
    cols = ["model", "id", "framing", "gold_decision", "gold_scope", "gold_conditional", "decision",
            "scope", "conditional", "activation", "reason", "text"]
    if not frames:
        return pd.DataFrame(columns=cols)
    return pd.concat(frames, ignore_index=True)[cols]


def prefeval_part(ctx: RunContext) -> tuple[pd.DataFrame | None, str]:
    """All PrefEval explicit preferences through admission: share persisted, rest by reason."""
    if ctx.data_dir is None:
        return None, ("PrefEval: skipped - no shared data directory was found (set "
                      "PREFMEM_DATA_DIR or place the data in ../shared/data).")
    from toolkit.datasets.prefeval import explicit_dir, load_explicit_preferences
    from toolkit.rules.admission_model import PREFEVAL_STRIDE

    prefs = load_explicit_preferences(ctx.data_dir)
    ctx.record_input(explicit_dir(ctx.data_dir))
    limit = ctx.options.get("prefeval_n")
    if limit is None and ctx.quick and not ctx.chat_model().is_offline:
        limit = 100
    if limit is not None:
        prefs = prefs[: int(limit)]
    records = [AdmissionInput(id=p.id, text=p.preference) for p in prefs]
    rows = _admit(ctx, ctx.model, f"prefeval-{_slug(ctx.model)}", records)
    df = pd.DataFrame(rows)
    n_known = int((df.status == "ok").sum())
    grouped = (df.groupby(["decision", "reason"], dropna=False).size().rename("count")
               .reset_index().sort_values(["count", "decision", "reason"],
                                          ascending=[False, True, True], kind="mergesort"))
    grouped["description"] = grouped["reason"].map(REASONS)
    grouped["share"] = grouped["count"] / max(len(df), 1)
    k = int(((df.decision == "persist") & (df.status == "ok")).sum())
    n_all = len(df)
    lo, hi = wilson_ci(k, n_all)
    note = (f"PrefEval explicit preferences ({ctx.model}): {k}/{n_all} persisted "
            f"({k / max(n_all, 1):.1%}, Wilson 95% CI {lo:.1%}-{hi:.1%}); "
            f"{int((df.status != 'ok').sum())} unknown (their own count; over the "
            f"{n_known} answered: {k / max(n_known, 1):.1%}). The rest are grouped by reason below. "
            "These are standing first-person preferences, so a high persisted share is expected. "
            f"The offline admitter was fit with every {PREFEVAL_STRIDE}th of them as an auxiliary "
            "lasting row, so "
            "this share is partly in-sample.")
    return grouped.reset_index(drop=True)[["decision", "reason", "description", "count", "share"]], note


def admission_roles(ctx: RunContext, heldout: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """Development (out-of-fold), held-out and first-contact rows, each with its data role.

    A first-contact batch named with ``--first-contact DIR`` is scored once and recorded with
    :func:`toolkit.splits.record_first_contact`; afterwards its row is read from that record."""
    from pathlib import Path

    from toolkit.diagnostics import _firstcontact as fc
    from toolkit.rules.admission_model import fitted_admitter

    first = ctx.models[0]
    rows = []
    text = []
    if ctx.chat_model(first).is_offline:
        fit = fitted_admitter(ctx.seed)
        sel = fit.selection
        n_dev = sel.oof_false_persist[1] + sel.oof_persist_recall[1]
        k = int(round(sel.oof_structural * n_dev))
        from toolkit.rules.admission_model import DEV_BATCHES, DEV_SPLITS, FIT_FOLDS

        rows.append({"role": "development", "data": fc.batches_label(DEV_SPLITS, DEV_BATCHES)
                     + (f", out of fold ({FIT_FOLDS or 'one batch a fold,'} batch-grouped folds)" if sel.fold_by == "batch"
                        else ", out of fold (4 behaviour-grouped folds)"), "n": n_dev, "structural": f"{k}/{n_dev}",
                     "structural_rate": k / n_dev if n_dev else None, "boot_low": None,
                     "boot_high": None,
                     "erroneous_persistence": "{}/{}".format(*sel.oof_false_persist),
                     "persistent_recall": "{}/{}".format(*sel.oof_persist_recall),
                     "task_local_rejected": None, "underspecified_deferred": None, "unknown": 0,
                     "recorded": None})
        text.append(
            f"Learned admitter ({first}): C={sel.C:g}, cue weight {sel.cue_weight:g}, word n-gram "
            f"weight {sel.ngram_weight:g} (scope head: cue weight "
            f"{sel.cue_weight if sel.scope_weights[0] is None else sel.scope_weights[0]:g}, n-gram weight "
            f"{sel.ngram_weight if sel.scope_weights[1] is None else sel.scope_weights[1]:g}; character "
            f"n-gram weights: scope head {sel.char_weights[0]:g}, conditional head "
            f"{sel.char_weights[1]:g}; tree head weight {sel.tree_weight:g}, in the conditional head "
            f"{sel.conditional_tree_weight:g}), persist "
            f"threshold {sel.persist_threshold:.3f}, chosen by {sel.fold_by}-grouped CV on development "
            f"data only ({'; '.join(fit.corpora)}); out of fold: structural {k}/{n_dev}, "
            f"non-lasting persisted {sel.oof_false_persist[0]}/{sel.oof_false_persist[1]}, persist "
            f"recall {sel.oof_persist_recall[0]}/{sel.oof_persist_recall[1]}.")
    rows.append(fc.admission_role_row("held-out", "fixtures/admission/heldout.jsonl (first "
                                      "committed text)", fc.admission_scores(heldout, ctx.seed),
                                      recorded=None))
    chat = ctx.chat_model(first)

    def admit(recs: list[AdmissionInput]) -> list[dict]:
        return [a.as_dict() for a in admit_detailed(recs, chat, seed=ctx.seed)]

    for batch in fc.all_batches(ctx, "admission", "admission.jsonl", fixtures_dir()):
        requested = batch in fc.requested_batches(ctx, "admission", "admission.jsonl")
        rec = fc.first_contact_of(batch)
        if rec is None and not requested:
            continue
        rec = fc.score_first_contact(
            batch, f"admission ({first})", lambda b: fc.admission_batch(b, admit, ctx.seed))
        rows.append(fc.admission_role_row("first-contact", fc.batch_label(Path(batch)),
                                          rec["scores"], recorded=f"{rec['date']} {rec['commit'][:12]}"))
        s = rec["scores"]
        text.append(
            f"First contact {fc.batch_label(Path(batch))} (scored once on {rec['date']}, commit "
            f"{rec['commit'][:12]}): structural {s['structural']['k']}/{s['structural']['n']}, "
            f"non-lasting persisted {s['erroneous_persistence']['k']}/"
            f"{s['erroneous_persistence']['n']}, persist recall {s['persistent_recall']['k']}/"
            f"{s['persistent_recall']['n']}, unknown {s['unknown']}.")
    return pd.DataFrame(rows), text


def first_contact_vs_oof(oof_by_batch: tuple[tuple[str, int, int], ...]) -> tuple[pd.DataFrame, list[str]]:
    """Each written-apart batch now in development: its structural score at first contact (its
    ``FIRST_CONTACT.json``) beside its out-of-fold score now. The gap is what the development row
    overstates for new writing: after a first contact the batch was read and the cue tables and
    label policy revised, and cross-validation of the learned weights does not undo that."""
    from toolkit.diagnostics._firstcontact import READ_AFTER
    from toolkit.splits import first_contact_of, natural_key

    rows = []
    for batch, k, n in sorted(oof_by_batch, key=lambda t: natural_key(t[0])):  # w2 before w10
        rec = first_contact_of(fixtures_dir() / "admission" / batch) if batch.startswith("firstcontact/") else None
        if rec is None or n == 0:
            continue
        s = rec["scores"]["structural"]
        rows.append({"batch": batch.rsplit("/", 1)[-1], "n": n, "first_contact": int(s["k"]),
                     "out_of_fold_now": k, "gain": k - int(s["k"]), "recorded": f"{rec['date']} {rec['commit'][:12]}"})
    df = pd.DataFrame(rows, columns=["batch", "n", "first_contact", "out_of_fold_now", "gain", "recorded"])
    if df.empty:
        return df, []
    fc, oof, n = int(df.first_contact.sum()), int(df.out_of_fold_now.sum()), int(df.n.sum())
    text = [f"Written-apart batches now in development ({len(df)}, {n} instructions): structural "
            f"{fc}/{n} ({fc / n:.3f}) at first contact, {oof}/{n} ({oof / n:.3f}) out of fold now; "
            f"{int((df.gain > 0).sum())} batches score higher out of fold than at first contact, "
            f"{int((df.gain < 0).sum())} lower (table `first_contact_vs_oof`). {READ_AFTER}"]
    return df, text


def run(ctx: RunContext) -> Result:
    """Tables 11-12, per-framing confusion heatmaps, the error list and the PrefEval breakdown."""
    records, gold = load_split("heldout")
    d = fixtures_dir() / "admission"
    ctx.record_input(d / "heldout.jsonl")
    ctx.record_input(d / "heldout.gold.jsonl")
    ctx.record_input(d / "dev.jsonl")
    ctx.record_input(d / "dev.gold.jsonl")
    if any(not ctx.chat_model(m).is_offline for m in ctx.models):
        ctx.record_prompt("admission")
    paper = paper_figures("admission")["figures"]
    from toolkit.rules.admission_model import DEV_BATCHES

    texts = {r.id: r.text for r in records}
    per_model: dict[str, pd.DataFrame] = {}
    figures: dict[str, Any] = {}
    for model in ctx.models:
        rows = _admit(ctx, model, f"heldout-{_slug(model)}", records)
        per_model[model] = score_rows(rows, gold)
    first = ctx.models[0]
    t11 = table11(per_model[first], paper["table11"], ctx.seed)
    t12 = table12(per_model, paper["table12"])
    conf = framing_confusion(per_model[first])
    for model, scored in per_model.items():
        figures[f"confusion_{_slug(model)}"] = heatmap(
            framing_confusion(scored), title=f"Admission by framing ({model}, n={len(scored)})")
    figures["table11"] = ours_vs_paper(t11, title=f"Table 11: ours ({first}) vs paper")
    errs = errors_table(per_model, texts)
    tables = {"table11": t11, "table12": t12, "framing_confusion": conf.reset_index(),
              "errors": errs}
    c = summary_counts(per_model[first])
    text = [
        f"Held-out controlled instruction set: {len(records)} instructions (24 behaviours x 8 "
        f"framings: {sum(1 for g in gold.values() if g.decision == 'persist')} persist, "
        f"{sum(1 for g in gold.values() if g.decision == 'task_local')} task-local, "
        f"{sum(1 for g in gold.values() if g.decision == 'defer')} defer). The offline method is "
        "fit on development data only (dev, dev2, dev3 and the batches "
        f"{', '.join(b.rsplit('/', 1)[-1] for b in DEV_BATCHES)} after their first contact). Seed "
        f"{ctx.seed}; CIs: Wilson 95% (ci_*) and a bootstrap over behaviours (boot_*).",
        f"{first}: structural {c['structural'][0]}/{c['structural'][1]}, erroneous persistence "
        f"{c['erroneous_persistence'][0]}/{c['erroneous_persistence'][1]}, persistent recall "
        f"{c['persistent_recall'][0]}/{c['persistent_recall'][1]} "
        f"(paper: 175/192, 0/72, 113/120).",
        "Framings: " + "; ".join(f"{f} {n}" for f, (n, *_r) in FRAMINGS.items()) + ".",
    ]
    if not ctx.options.get("skip_prefeval"):
        pref_table, note = prefeval_part(ctx)
        text.append(note)
        if pref_table is not None:
            tables["prefeval_reasons"] = pref_table
    roles, role_text = admission_roles(ctx, per_model[first])
    tables["roles"] = roles
    text[0:0] = role_text
    if ctx.chat_model(first).is_offline:
        from toolkit.diagnostics._firstcontact import gap_figure
        from toolkit.rules.admission_model import fitted_admitter

        gap, gap_text = first_contact_vs_oof(fitted_admitter(ctx.seed).selection.oof_by_batch)
        if not gap.empty:
            tables["first_contact_vs_oof"] = gap
            figures["first_contact_vs_oof"] = gap_figure(
                gap, [("first_contact", "out_of_fold_now", "structural")],
                f"Admission: first contact vs out of fold ({len(gap)} batches)")
            text[1:1] = gap_text  # after the learned admitter's paragraph (the development row)
    meta = {"n_heldout": len(records), "models": list(ctx.models), "seed": ctx.seed,
            "counts": {m: summary_counts(s) for m, s in per_model.items()},
            "unknown": {m: int(s.unknown.sum()) for m, s in per_model.items()}}
    return Result(name="admission", tables=tables, figures=figures, text=text, meta=meta)
