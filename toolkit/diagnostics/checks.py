"""Check compilation and semantic judgment (TellOnce D.3, Table 13), ours beside the paper's.

Sets (roles in ``fixtures/SPLITS.json``):

- ``fixtures/checks/dev_compile.jsonl`` / ``dev_judge.jsonl`` (+ ``.gold.jsonl``): development,
  written by the method's author before tuning;
- ``fixtures/checks/firstcontact/`` (``compile.jsonl``, ``judge.jsonl`` and their gold): written
  apart, scored once at first contact (``--set first_contact=1`` records that score with
  :func:`toolkit.splits.record_first_contact`; later runs show it beside the current score).

Table 13's rows: rules for which the compiler declines an executable check (of those that cannot
be judged from observable evidence), checkable rules that get a specification and that pass all
validation cases, computable rules that get a programmatic check, agreement over validation probes
(compiler's expected label vs the executed check), and the semantic checker's balanced accuracy
(violation vs not; ``unknown`` counts as wrong, with its own column).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from toolkit.diagnostics.result import Result, compare_rows
from toolkit.metrics import bootstrap_ci, wilson_ci
from toolkit.paper import fixtures_dir, paper_figures
from toolkit.records import CompileInput, JudgeInput
from toolkit.runs import RunContext
from toolkit.splits import first_contact_of, record_first_contact, require_role

CATEGORY_KEYS = ("category", "label", "class", "kind", "gold", "expected", "checkability", "type", "outcome")
JUDGE_KEYS = ("label", "judgment", "gold", "expected", "verdict")


def _read_jsonl(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def gold_path(folder: Path, stem: str) -> Path:
    """The gold file beside ``stem.jsonl`` (``stem.gold.jsonl`` or ``stem_gold.jsonl``)."""
    for name in (f"{stem}.gold.jsonl", f"{stem}_gold.jsonl", f"{stem}.gold.json"):
        if (folder / name).exists():
            return folder / name
    raise FileNotFoundError(f"{folder}: no gold file for {stem}.jsonl")


def _field(rec: dict, keys: tuple[str, ...], norm) -> str:
    """The gold label: the first of ``keys`` present, else any other string field that normalises."""
    for k in [k for k in keys if k in rec] + [k for k in rec if k not in keys and k != "id"]:
        if isinstance(rec[k], str):
            try:
                return norm(rec[k])
            except ValueError:
                continue
    raise KeyError(f"gold record {rec.get('id')!r}: no label field")


def norm_category(v: str) -> str:
    """uncheckable | checkable | computable from a gold file's wording."""
    s = v.lower().replace("-", "_").replace(" ", "_")
    if "uncheck" in s or "not_check" in s or s in ("guidance", "inactive", "declined", "decline"):
        return "uncheckable"
    if "comput" in s or "programmatic" in s:
        return "computable"
    if "check" in s or "semantic" in s:
        return "checkable"
    raise ValueError(f"unknown category {v!r}")


def norm_label(v: str) -> str:
    s = v.lower().replace("-", "_").replace(" ", "_")
    if s in ("n/a", "na", "not_applicable", "notapplicable"):
        return "not_applicable"
    if s in ("pass", "compliant", "compliance", "ok", "satisfied"):
        return "pass"
    if s in ("violation", "violated", "fail"):
        return "violation"
    raise ValueError(f"unknown judge label {v!r}")


def load_compile_set(folder: Path, stem: str) -> tuple[list[CompileInput], dict[str, str]]:
    recs = [CompileInput.model_validate(o) for o in _read_jsonl(folder / f"{stem}.jsonl")]
    gold = {g["id"]: _field(g, CATEGORY_KEYS, norm_category) for g in _read_jsonl(gold_path(folder, stem))}
    return recs, gold


def load_judge_set(folder: Path, stem: str) -> tuple[list[JudgeInput], dict[str, str]]:
    recs = [JudgeInput.model_validate(o) for o in _read_jsonl(folder / f"{stem}.jsonl")]
    gold = {g["id"]: _field(g, JUDGE_KEYS, norm_label) for g in _read_jsonl(gold_path(folder, stem))}
    return recs, gold


def stopped_at(c: Any) -> str:
    """Where a rule's compilation stopped: ``validated``, ``declined`` (no proposal), or the stage
    that rejected its last round (``structure``: case coverage or faithfulness; ``reviewer``: the
    blind reviewer's labels; ``checker``: the executed check failing its own cases)."""
    if c.status != "ok":
        return "unknown"
    if c.outcome in ("programmatic", "semantic"):
        return "validated"
    if not c.rounds:
        return "declined"
    why = c.rounds[-1].rejection
    if why.startswith("reviewer"):
        return "reviewer"
    if why.startswith("checker"):
        return "checker"
    return "structure" if why else "declined"


def compile_rows(records: list[CompileInput], gold: dict[str, str], comps: list) -> pd.DataFrame:
    rows = []
    for rec, c in zip(records, comps, strict=True):
        rows.append({"id": rec.id, "category": gold[rec.id], "behavior": rec.rule.behavior,
                     "status": c.status, "proposed": c.proposed, "outcome": c.outcome,
                     "rounds": c.validation["rounds"], "cases": c.validation["cases"],
                     "agreed": c.validation["agreed"], "stopped_at": stopped_at(c), "reason": c.reason})
    return pd.DataFrame(rows)


def balanced_accuracy(truth: list[str], pred: list[str]) -> float:
    """Violation vs not; an unknown prediction is wrong whichever the truth."""
    pos = [p == "violation" for t, p in zip(truth, pred, strict=True) if t == "violation"]
    neg = [p not in ("violation", "unknown") for t, p in zip(truth, pred, strict=True) if t != "violation"]
    parts = [np.mean(x) for x in (pos, neg) if x]
    return float(np.mean(parts)) if parts else float("nan")


def table13(cdf: pd.DataFrame, probes: list[tuple[str, str]], jdf: pd.DataFrame, role: str,
            seed: int) -> list[dict[str, Any]]:
    """Table 13's rows for one set, each with n, a 95% interval and the paper's figure."""
    fig = paper_figures("checks")["figures"]
    rows = []

    def prop(metric: str, k: int, n: int, paper: float | None, paper_txt: str, unknown: int = 0) -> None:
        lo, hi = wilson_ci(k, n) if n else (float("nan"), float("nan"))
        rows.append({"metric": metric, "ours": k / n if n else float("nan"), "paper": paper, "n": n,
                     "ci_low": lo, "ci_high": hi, "ours_count": f"{k}/{n}", "paper_count": paper_txt,
                     "unknown": unknown, "data_role": role})

    unk = cdf[cdf["status"] != "ok"]
    u = cdf[cdf["category"] == "uncheckable"]
    prop("uncheckable rules declined (guidance or inactive)", int(u["outcome"].isin(["guidance", "inactive"]).sum()),
         len(u), fig["declined"] / fig["n_uncheckable"], f"{fig['declined']}/{fig['n_uncheckable']}",
         int((u["status"] != "ok").sum()))
    c = cdf[cdf["category"] == "checkable"]
    prop("checkable rules given a specification", int(c["proposed"].notna().sum()), len(c),
         fig["specified"] / fig["n_checkable"], f"{fig['specified']}/{fig['n_checkable']}",
         int((c["status"] != "ok").sum()))
    prop("checkable rules passing all validation (executable check)",
         int(c["outcome"].isin(["semantic", "programmatic"]).sum()), len(c),
         fig["validated"] / fig["n_checkable"], f"{fig['validated']}/{fig['n_checkable']}",
         int((c["status"] != "ok").sum()))
    p = cdf[cdf["category"] == "computable"]
    prop("computable rules given a programmatic check", int((p["outcome"] == "programmatic").sum()), len(p),
         None, "-", int((p["status"] != "ok").sum()))
    ok = sum(int(e == x) for e, x in probes)
    prop("validation probes: executed check agrees with the expected label", ok, len(probes),
         fig["probe_agreement"], f"{fig['probe_tp'] + fig['probe_tn']}/{fig['n_probes']}",
         sum(int(x == "unknown") for _, x in probes))
    if len(jdf):
        t, pr = jdf["gold"].tolist(), jdf["judgment"].tolist()
        ba = balanced_accuracy(t, pr)
        lo, hi = bootstrap_ci(np.arange(len(t)), lambda ix: balanced_accuracy([t[i] for i in ix], [pr[i] for i in ix]),
                              random_state=seed, n_resamples=1000)
        tp = sum(a == "violation" and b == "violation" for a, b in zip(t, pr, strict=True))
        tn = sum(a != "violation" and b not in ("violation", "unknown") for a, b in zip(t, pr, strict=True))
        rows.append({"metric": "semantic checker balanced accuracy (violation vs not; unknown wrong)", "ours": ba,
                     "paper": fig["judge_balanced_accuracy"], "n": len(t), "ci_low": lo, "ci_high": hi,
                     "ours_count": f"TP {tp} TN {tn} of {len(t)}",
                     "paper_count": f"TP {fig['judge_tp']} TN {fig['judge_tn']} FP {fig['judge_fp']} "
                                    f"FN {fig['judge_fn']}",
                     "unknown": int(sum(x == "unknown" for x in pr)), "data_role": role})
    del unk
    return rows


def run_sets(folder: Path, compile_stem: str, judge_stem: str, model: Any, *, purpose: str = "evaluate"):
    """Compile and judge one folder's sets; returns (compile rows, probes, judge rows)."""
    from toolkit.rules.checks import compile_rules, judge_records

    require_role(folder / f"{compile_stem}.jsonl", purpose)  # type: ignore[arg-type]
    recs, gold = load_compile_set(folder, compile_stem)
    comps = compile_rules([r.rule for r in recs], model)
    cdf = compile_rows(recs, gold, comps)
    probes = [pe for c in comps for pe in c.probes()]
    jrecs, jgold = load_judge_set(folder, judge_stem)
    out = judge_records(jrecs, model)
    jdf = pd.DataFrame([{"id": r.id, "rule": r.rule.id, "stage": r.evidence.stage, "gold": jgold[r.id],
                         "judgment": o["judgment"], "reason": o["reason"]} for r, o in zip(jrecs, out, strict=True)])
    return cdf, probes, jdf


def batch_folders(base: Path) -> list[Path]:
    """Batches written apart (``firstcontact*`` folders holding ``compile.jsonl``), sorted by name."""
    return sorted(f for f in base.glob("firstcontact*") if (f / "compile.jsonl").exists())


def recorded_rows(folder: Path, rec: dict[str, Any], model: str) -> list[dict[str, Any]]:
    """A batch's recorded first-contact scores as table rows (the score of that one run)."""
    fig = paper_figures("checks")["figures"]
    paper = {"uncheckable rules declined (guidance or inactive)": fig["declined"] / fig["n_uncheckable"],
             "checkable rules given a specification": fig["specified"] / fig["n_checkable"],
             "checkable rules passing all validation (executable check)": fig["validated"] / fig["n_checkable"],
             "validation probes: executed check agrees with the expected label": fig["probe_agreement"],
             "semantic checker balanced accuracy (violation vs not; unknown wrong)": fig["judge_balanced_accuracy"]}
    _, gold = load_compile_set(folder, "compile")
    cats = list(gold.values())
    n_judge = len(load_judge_set(folder, "judge")[1])
    per = {"uncheckable rules declined (guidance or inactive)": cats.count("uncheckable"),
           "checkable rules given a specification": cats.count("checkable"),
           "checkable rules passing all validation (executable check)": cats.count("checkable"),
           "computable rules given a programmatic check": cats.count("computable"),
           "semantic checker balanced accuracy (violation vs not; unknown wrong)": n_judge}
    return [{"metric": m, "ours": v, "paper": paper.get(m), "n": per.get(m), "ci_low": float("nan"),
             "ci_high": float("nan"),
             "ours_count": (f"{round(v * per[m])}/{per[m]}, " if m in per and "accuracy" not in m else "")
             + f"recorded at {rec['commit'][:12]} on {rec['date']}",
             "paper_count": "", "unknown": float("nan"), "data_role": "first-contact", "batch": folder.name,
             "model": model} for m, v in rec["scores"].items()]


CV_METRIC = "semantic checker balanced accuracy, rule-grouped 5-fold CV (judge fit without the rule)"


def cv_rows(tag: str, role: str) -> list[dict[str, Any]]:
    """The offline judge's held-out-rule score on one development judge set: every item judged by a
    judge fit on the other folds (rules grouped, so a rule is never judged by a model that saw it)."""
    from toolkit.rules.checks._spec import default_spec_judge, development_judge_sets

    sj = default_spec_judge()
    i = 0
    for name, recs, gold in development_judge_sets():
        pred = sj.cv_labels_[i:i + len(recs)]
        i += len(recs)
        if name != tag:
            continue
        t = [gold[r.id] for r in recs]
        tp = sum(a == "violation" and b == "violation" for a, b in zip(t, pred, strict=True))
        tn = sum(a != "violation" and b not in ("violation", "unknown") for a, b in zip(t, pred, strict=True))
        fig = paper_figures("checks")["figures"]
        return [{"metric": CV_METRIC, "ours": balanced_accuracy(t, pred), "paper": fig["judge_balanced_accuracy"],
                 "n": len(t), "ci_low": float("nan"), "ci_high": float("nan"),
                 "ours_count": f"TP {tp} TN {tn} of {len(t)}", "paper_count": "", "unknown": pred.count("unknown"),
                 "data_role": role, "model": "offline", "batch": tag}]
    return []


def run(ctx: RunContext) -> Result:
    """Table 13 on the development sets (``dev_*`` and batches re-labelled development after their
    first contact) and every batch's first-contact score: recorded in its ``FIRST_CONTACT.json``, or
    scored now and recorded when the batch is still first-contact and ``first_contact=1`` is set."""
    from toolkit.splits import role_of

    opts = ctx.options
    first = str(opts.get("first_contact", "0")).lower() in ("1", "true", "yes")
    # first_contact_only=1: score only the first-contact batch (the judge still fits on development)
    fc_only = first and str(opts.get("first_contact_only", "0")).lower() in ("1", "true", "yes")
    base = fixtures_dir() / "checks"
    tables: dict[str, pd.DataFrame] = {}
    head: list[dict[str, Any]] = []
    text = []
    meta: dict[str, Any] = {"models": list(ctx.models)}
    stopped: list[pd.DataFrame] = []  # where each set's rules stopped in compilation, by gold category
    for model in ctx.models:
        chat = ctx.chat_model(model)
        sets = [] if fc_only else [("development", base, "dev_compile", "dev_judge")]
        for fc in batch_folders(base):
            role = role_of(fc / "compile.jsonl") or "first-contact"
            rec = first_contact_of(fc)
            if rec is not None and model == "offline":
                head += recorded_rows(fc, rec, model)
                text.append(f"First contact with `{fc.relative_to(fixtures_dir().parent)}` was scored on "
                            f"{rec['date']} at commit {rec['commit'][:12]} (`FIRST_CONTACT.json`); "
                            + ("development data since." if role == "development" else "still first-contact."))
            if (role == "development" and not fc_only) or (role == "first-contact" and rec is None and first):
                sets.append((role, fc, "compile", "judge"))
            elif rec is None:
                text.append(f"`{fc.name}` is first-contact and not yet scored (run with first_contact=1 once).")
        for role, folder, cs, js in sets:
            for f in (f"{cs}.jsonl", f"{js}.jsonl"):
                ctx.record_input(folder / f)
            cdf, probes, jdf = run_sets(folder, cs, js, chat)
            rows = table13(cdf, probes, jdf, role, ctx.seed)
            for r in rows:
                r["model"], r["batch"] = model, folder.name if folder != base else "dev"
            tag = folder.name if folder != base else "dev"
            tables[f"checks_compile_{tag}"] = cdf.assign(model=model)
            stopped.append(cdf.groupby(["category", "stopped_at"]).size().rename("rules").reset_index()
                           .assign(batch=tag, data_role=role, model=model))
            tables[f"checks_judge_{tag}"] = jdf.assign(model=model)
            if role == "development" and model == "offline":
                rows += cv_rows(tag, role)
            if role == "first-contact" and model == "offline":
                scores = {r["metric"]: r["ours"] for r in rows}
                record_first_contact(folder, "checks", scores, n=len(cdf) + len(jdf))
                rec = first_contact_of(folder)
                text.append(f"First contact with `{folder.relative_to(fixtures_dir().parent)}`: scored now, "
                            f"recorded at commit {rec['commit'][:12]} (`FIRST_CONTACT.json`).")
                head += recorded_rows(folder, rec, model)
                continue
            head += rows
    table = compare_rows(head)
    tables = {"checks": table, **tables}
    if stopped:
        tables["checks_compile_stopped"] = pd.concat(stopped, ignore_index=True)
    fig = paper_figures("checks")
    text.insert(0, f"Paper: {fig['source']}, {fig['table']}. Ours: offline compiler reads "
                   "toolkit/resources/checks/*.yaml and writes concrete validation cases from the rule's own "
                   "elements (terms, commands, files, limits); reviewer = the compliance reader on the rule's "
                   "words plus its own token and word-count reading (blind to expected labels); checker = "
                   "programmatic checks run locally, semantic specifications through the learned specification "
                   "judge (rule elements located in the evidence, scope/condition stage, the reader's verdict; "
                   "fit on the development judge sets; its rule-grouped CV row is the honest development "
                   "figure, the other development judge rows are in-sample). Intervals: Wilson 95% (proportions), "
                   "bootstrap 95% (balanced accuracy). Development rows are in-sample: the resource tables "
                   "were written and tuned on those sets (dev_* and batches re-labelled development after "
                   "their first contact); only first-contact rows (each batch's one recorded score) "
                   "measure generalisation.")
    for r in head:
        if r["paper"] is not None and r["ours"] == r["ours"] and r["data_role"] != "development":
            rel = "at or above" if r["ours"] >= r["paper"] else "below"
            text.append(f"{r['model']}, {r['data_role']} `{r['batch']}`: '{r['metric']}' is {r['ours']:.3f} "
                        f"({r['ours_count']}), {rel} the paper's {r['paper']:.3f}.")
    from toolkit.viz import ours_vs_paper

    figures = {"checks": ours_vs_paper(table.dropna(subset=["paper"]), title="Check compilation and judgment (D.3)")}
    return Result(name="checks", tables=tables, figures=figures, text=text, meta=meta)
