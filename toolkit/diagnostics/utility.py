"""Diagnostic ``utility``: Table 1 (Self vs LOUO AUC) and Tables 5-6 (stream statistics).

Runs the TF-IDF meta-analysis on simulated PerMemBench-S and -L streams and on LoCoMo
facts, reports the simulated streams' statistics beside Tables 5-6, checks the retrieval
labelling pipeline against the simulator's hidden hits, and sweeps the shared fraction.

Options (``--set k=v``; quick sizes in brackets): ``s_users`` (20 [8]), ``l_users`` (20 [4]),
``l_sessions`` (the preset's), ``shared_fraction`` (0.5), ``folds`` (5), ``label_users``
(4 [2]), ``k`` (5, retrieval depth), ``sweep`` (1 [1]: shared-fraction sweep on a small
stream), ``locomo`` (1: run on ``<data_dir>/locomo10.json`` when present).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from toolkit.diagnostics.result import Result, compare_rows
from toolkit.runs import RunContext

#: how each dataset's Table 1 row was made (its data role)
_ROLE = {"simulated S": "generated (toolkit.gating.simulate)",
         "simulated L": "generated (toolkit.gating.simulate)",
         "LoCoMo": "real (LoCoMo facts; labels from the offline retrieval pipeline)"}
#: the label on Tables 5-6 rows: the generator was tuned to these figures
CALIBRATED = "calibrated input, not a result"

_STATS = (("sessions", "Sessions per user"), ("entries", "Total entries per user"),
          ("hit_entries", "Entries with valid hits per user"),
          ("hit_rate", "Hit rate (hit entries / total entries)"),
          ("delay", "Avg delay-to-first-hit (sessions)"))


def _opt(ctx: RunContext, key: str, full: Any, quick: Any) -> Any:
    v = ctx.options.get(key, quick if ctx.quick else full)
    return type(full)(v) if v is not None and full is not None else v


def _ci(values: list[float], seed: int) -> tuple[float | None, float | None]:
    from toolkit.metrics import bootstrap_ci

    v = np.asarray([x for x in values if x is not None], dtype=float)
    if v.size < 3:
        return None, None
    lo, hi = bootstrap_ci(v, np.mean, n_resamples=1000, random_state=seed)
    return float(lo), float(hi)


def table1_rows(name: str, rep: dict, paper: dict | None, seed: int) -> list[dict[str, Any]]:
    """Self, LOUO and gap rows for one dataset (ours beside the paper's, CIs over users)."""
    rows = []
    for metric, key in (("Self AUC", "self_auc"), ("LOUO AUC", "louo_auc")):
        vals = [u[key] for u in rep["users"]]
        lo, hi = _ci(vals, seed)
        rows.append({"dataset": name, "metric": metric, "ours": rep[f"{key}_mean"],
                     "paper": paper[f"{key}_mean"] if paper else None,
                     "n": sum(v is not None for v in vals), "ci_low": lo, "ci_high": hi,
                     "ours_std": rep[f"{key}_std"],
                     "paper_std": paper[f"{key}_std"] if paper else None})
    ci = rep.get("gap_paired_ci95") or [None, None]
    rows.append({"dataset": name, "metric": "Gap", "ours": rep["gap"],
                 "paper": paper["gap"] if paper else None, "n": rep.get("n_self"),
                 "ci_low": ci[0], "ci_high": ci[1], "ours_std": None, "paper_std": None})
    return rows


def stats_rows(name: str, stats: dict, paper: dict) -> list[dict[str, Any]]:
    """Tables 5-6 rows: per-user statistic, ours beside the paper's (mean, median, min, max, std)."""
    rows = []
    for key, label in _STATS:
        o, p = stats[key], paper[key]
        rows.append({"dataset": name, "metric": label, "ours": o["mean"], "paper": p["mean"],
                     "n": o["n"], "ours_median": o["median"], "paper_median": p["median"],
                     "ours_min": o["min"], "paper_min": p["min"], "ours_max": o["max"],
                     "paper_max": p["max"], "ours_std": o["std"], "paper_std": p["std"]})
    return rows


def _dataset_first(df: pd.DataFrame) -> pd.DataFrame:
    return df[["dataset"] + [c for c in df.columns if c != "dataset"]]


def _scatter(per_user: pd.DataFrame):
    import seaborn as sns

    from toolkit.viz import new_figure

    fig = new_figure(5.2, 4.6)
    ax = fig.subplots()
    sns.scatterplot(data=per_user, x="louo_auc", y="self_auc", hue="dataset", ax=ax)
    ax.axline((0.5, 0.5), slope=1, color="grey", lw=0.8, ls="--")
    ax.set_xlabel("LOUO AUC (model of the other users)")
    ax.set_ylabel("Self AUC (user's own k-fold CV)")
    ax.set_title("Per-user Self vs LOUO AUC (above the line: own data helps)")
    return fig


def utility_claims(table1: pd.DataFrame, stats: pd.DataFrame, labels: pd.DataFrame,
                   sweep: pd.DataFrame | None) -> dict[str, list]:
    """Generated readings (each sentence printed only when its computed check holds)."""
    from toolkit.claims import Claim

    def val(ds: str, metric: str, col: str = "ours") -> float:
        r = table1[(table1.dataset == ds) & (table1.metric == metric)]
        return float(r[col].iloc[0]) if len(r) and r[col].iloc[0] is not None else float("nan")

    t1 = []
    for ds, key in (("simulated S", "S"), ("simulated L", "L")):
        s_, l_ = val(ds, "Self AUC"), val(ds, "LOUO AUC")
        ps, pl = val(ds, "Self AUC", "paper"), val(ds, "LOUO AUC", "paper")
        gap_lo = val(ds, "Gap", "ci_low")
        t1.append(Claim(f"On {ds} ({'generated'}), Self ({s_:.3f}) is above LOUO ({l_:.3f}) and "
                        f"both are above 0.5, as in the paper's {key} ({ps:.3f} / {pl:.3f}).",
                        s_ > l_ > 0.5 and ps > pl > 0.5, f"{s_:.3f} {l_:.3f}"))
        t1.append(Claim(f"On {ds} the paired gap's 95% CI excludes 0 (lower end {gap_lo:.3f}).",
                        gap_lo > 0, f"{gap_lo:.3f}"))
        pg, og = val(ds, "Gap", "paper"), val(ds, "Gap")
        t1.append(Claim(f"Our {key} gap ({og:.3f}) is smaller than the paper's ({pg:.3f}).",
                        og < pg, f"{og:.3f} vs {pg:.3f}"))
        t1.append(Claim(f"Our {key} gap ({og:.3f}) is at least the paper's ({pg:.3f}).",
                        og >= pg, f"{og:.3f} vs {pg:.3f}"))
    sS, sL = val("simulated S", "Self AUC"), val("simulated L", "Self AUC")
    pS, pL = val("simulated S", "Self AUC", "paper"), val("simulated L", "Self AUC", "paper")
    t1.append(Claim(f"Self falls from S to L ({sS:.3f} -> {sL:.3f}), as in the paper "
                    f"({pS:.3f} -> {pL:.3f}).", sL < sS and pL < pS, f"{sS:.3f} {sL:.3f}"))
    t1.append(Claim(f"Unlike the paper ({pS:.3f} -> {pL:.3f}), our Self does not fall from S to L "
                    f"({sS:.3f} -> {sL:.3f}).", sL >= sS and pL < pS, f"{sS:.3f} {sL:.3f}"))
    ls_, ll_ = val("LoCoMo", "Self AUC"), val("LoCoMo", "LOUO AUC")
    t1.append(Claim(f"On LoCoMo (real facts) LOUO ({ll_:.3f}) is above Self ({ls_:.3f}): a mostly "
                    "shared utility rule, the opposite of the paper's Table 1.", ll_ > ls_,
                    f"{ls_:.3f} {ll_:.3f}"))
    t1.append(Claim(f"On LoCoMo (real facts) Self ({ls_:.3f}) is above LOUO ({ll_:.3f}), as in the "
                    "paper's Table 1.", ls_ > ll_, f"{ls_:.3f} {ll_:.3f}"))
    st = [Claim("These rows are calibrated input, not a result: the simulator's presets were set "
                "from Tables 5-6, so agreement here shows the calibration.", True)]
    for ds in ("simulated S", "simulated L"):
        r = stats[(stats.dataset == ds) & (stats.metric.str.startswith("Hit rate"))]
        if len(r):
            o, p = float(r.ours.iloc[0]), float(r.paper.iloc[0])
            st.append(Claim(f"{ds}: hit rate {o:.3f} vs the paper's {p:.3f} (within 0.03).",
                            abs(o - p) <= 0.03, f"{o:.3f} {p:.3f}"))
            st.append(Claim(f"{ds}: hit rate {o:.3f} is more than 0.03 from the paper's {p:.3f}.",
                            abs(o - p) > 0.03, f"{o:.3f} {p:.3f}"))
    lab = labels.set_index("metric")["ours"]
    lb = []
    if "fact precision (used)" in lab:
        fp, fr = float(lab["fact precision (used)"]), float(lab["fact recall (used)"])
        from toolkit.gating.labels import offline_trigger
        from toolkit.gating.simulate import PROBE_OPENERS

        fired = sum(offline_trigger(f"{o} garden plans").query_needed for o in PROBE_OPENERS)
        lb.append(Claim(f"The offline labelling pipeline marks used facts with precision {fp:.2f} "
                        f"and recall {fr:.2f} against the simulator's hidden hits (generated "
                        "data).", True))
        lb.append(Claim(f"Its trigger fires on {fired} of the generator's {len(PROBE_OPENERS)} "
                        "probe openers by their wording alone, so the recall is optimistic: the "
                        "trigger and the generator share cue words.", fired > 0, str(fired)))
    sw = []
    if sweep is not None and len(sweep):
        piv = sweep.pivot_table(index="shared_fraction", columns="regime", values="mean")
        if {"Self", "LOUO"} <= set(piv.columns):
            cross = [f for f in piv.index if piv.loc[f, "LOUO"] >= piv.loc[f, "Self"]]
            sw.append(Claim("LOUO is at least Self at shared_fraction "
                            + ", ".join(f"{f:g}" for f in cross) + ".", bool(cross), str(cross)))
            sw.append(Claim("With no shared part LOUO is below 0.5.",
                            bool(0.0 in piv.index and piv.loc[0.0, "LOUO"] < 0.5), ""))
    return {"table1": t1, "tables5_6": st, "labels": lb, "sweep": sw}


def run(ctx: RunContext) -> Result:
    """Table 1 on simulated S, L and LoCoMo; Tables 5-6 statistics; label validity; sweep."""
    from toolkit.datasets.locomo import load_locomo_facts
    from toolkit.gating.labels import compare_labels, label_facts
    from toolkit.gating.meta import meta_analysis
    from toolkit.gating.simulate import simulate_benchmark, simulate_users, stream_stats
    from toolkit.paper import paper_figures
    from toolkit.viz import lines, ours_vs_paper

    paper = paper_figures("utility")["figures"]
    seed, folds = ctx.seed, _opt(ctx, "folds", 5, 5)
    sf = float(ctx.options.get("shared_fraction", 0.5))
    s_users = _opt(ctx, "s_users", 20, 8)
    l_users = _opt(ctx, "l_users", 20, 4)
    l_sessions = ctx.options.get("l_sessions")
    l_sessions = None if l_sessions in (None, "", "none") else int(l_sessions)
    streams = {
        "simulated S": simulate_benchmark("S", seed=seed, n_users=s_users, shared_fraction=sf),
        "simulated L": simulate_benchmark("L", seed=seed, n_users=l_users, n_sessions=l_sessions,
                                          shared_fraction=sf),
    }
    quirks = pd.DataFrame(columns=["quirk", "count"])
    text = [f"Simulated streams: seed {seed}, shared_fraction {sf}, {s_users} S users, "
            f"{l_users} L users" + (f" with {l_sessions} sessions each" if l_sessions else "")
            + ("; quick mode (smaller than the paper's 20 users)" if ctx.quick else "") + "."]
    locomo_path = ctx.data_dir / "locomo10.json" if ctx.data_dir else None
    if int(ctx.options.get("locomo", 1)) and locomo_path is not None and locomo_path.exists():
        ctx.record_input(locomo_path)
        facts, rep = load_locomo_facts(locomo_path)
        streams["LoCoMo"] = facts
        quirks = pd.DataFrame([{"quirk": k, "count": v} for k, v in sorted(rep.counts.items())])
        text.append(rep.text().replace("\n", "; "))
    else:
        text.append("LoCoMo skipped: no locomo10.json in the data folder.")

    t1, per_user, meta = [], [], {}
    for name, facts in streams.items():
        rep = meta_analysis(facts, folds=folds, seed=seed)
        key = {"simulated S": "S", "simulated L": "L"}.get(name)
        t1 += table1_rows(name, rep, paper["table1"].get(key) if key else None, seed)
        per_user += [{"dataset": name, **u} for u in rep["users"]]
        meta[name] = {k: rep[k] for k in ("self_auc_mean", "self_auc_std", "louo_auc_mean",
                                          "louo_auc_std", "gap", "n_users", "n_self", "n_louo")}
        for sk in rep["skipped"]:
            text.append(f"{name}: {sk['user']} not scored ({sk['regime']}): {sk['reason']}")
    table1 = _dataset_first(compare_rows(t1))
    table1["data"] = [_ROLE.get(d, "real") for d in table1["dataset"]]
    per_user_df = pd.DataFrame(per_user)

    st = _dataset_first(compare_rows(stats_rows("simulated S", stream_stats(streams["simulated S"]),
                                 paper["table5_S"])
                      + stats_rows("simulated L", stream_stats(streams["simulated L"]),
                                   paper["table6_L"])))
    st["provenance"] = CALIBRATED
    text.append("Tables 5-6 (utility_stream_stats) are calibrated input, not a result: the "
                "simulator's size presets and utility intercepts were set so its streams land "
                "near the paper's per-user statistics, so agreement there shows the calibration, "
                "not a reproduction.")

    # label validity: the §3.1 pipeline re-derives hits from later turns; compare with hidden
    label_users = _opt(ctx, "label_users", 4, 2)
    users = simulate_users("S", seed=seed, n_users=label_users, shared_fraction=sf)
    truth = [f for u in users for f in u.facts]
    blank = [f.model_copy(update={"hits": []}) for f in truth]
    model = ctx.chat_model()
    if not model.is_offline:
        ctx.record_prompt("labels_trigger")
        ctx.record_prompt("labels_verify")
    lr = label_facts(blank, [t for u in users for t in u.turns], model=model,
                     k=_opt(ctx, "k", 5, 5))
    agree = compare_labels(lr.facts, truth)
    s = lr.summary()
    labels = compare_rows([
        {"metric": m, "ours": agree[k], "paper": None, "n": n}
        for m, k, n in (("fact precision (used)", "fact_precision", s["used_facts"]),
                        ("fact recall (used)", "fact_recall", sum(bool(f.hits) for f in truth)),
                        ("hit-pair precision", "pair_precision", agree["n_pairs_derived"]),
                        ("hit-pair recall", "pair_recall", agree["n_pairs_reference"]))]
        + [{"metric": f"count: {k}", "ours": float(v), "paper": None, "n": None}
           for k, v in s.items()])
    text.append(f"Labelling pipeline ({model.name}, top-{_opt(ctx, 'k', 5, 5)} TF-IDF) on "
                f"{label_users} simulated S users, against the simulator's hidden hits; "
                f"unknown answers: {s['unknown_trigger']} trigger, {s['unknown_verify']} judge "
                "(counted, never scored).")

    tables = {"utility_table1": table1, "utility_stream_stats": st,
              "utility_per_user": per_user_df, "utility_labels": labels,
              "utility_locomo_quirks": quirks}
    figures = {"utility_table1": ours_vs_paper(
        table1.assign(metric=table1["dataset"] + ": " + table1["metric"]).fillna({"paper": 0.0}),
        title="Table 1: Self vs LOUO AUC (paper bars at 0 where it has none)"),
        "utility_scatter": _scatter(per_user_df)}
    if int(_opt(ctx, "sweep", 1, 1)):
        rows = []
        for frac in (0.0, 0.25, 0.5, 0.75, 1.0):
            facts = simulate_benchmark("S", seed=seed, n_users=6, n_sessions=40,
                                       shared_fraction=frac)
            rep = meta_analysis(facts, folds=folds, seed=seed)
            rows += [{"shared_fraction": frac, "regime": r, "auc": u[k], "user": u["user"]}
                     for u in rep["users"] for r, k in (("Self", "self_auc"), ("LOUO", "louo_auc"))
                     if u[k] is not None]
        sweep = pd.DataFrame(rows)
        tables["utility_sweep"] = (sweep.groupby(["shared_fraction", "regime"])["auc"]
                                   .agg(["mean", "std", "count"]).reset_index())
        figures["utility_sweep"] = lines(sweep, x="shared_fraction", y="auc", hue="regime",
                                         title="Self vs LOUO AUC as the shared part grows "
                                               "(6 users x 40 sessions)")
    from toolkit.claims import claims_meta, render

    sections = utility_claims(table1, st, labels, tables.get("utility_sweep"))
    text.extend(render(c) for c in sections.values() if render(c))
    return Result(name="utility", tables=tables, figures=figures, text=text,
                  meta={"seed": seed, "folds": folds, "shared_fraction": sf, "table1": meta,
                        "labels": {**agree, **s}, "claims": claims_meta(sections)})
