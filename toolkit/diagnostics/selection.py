"""Rule selection as the library grows (TellOnce D.4, Table 14), ours beside the paper's.

Sets (roles in ``fixtures/SPLITS.json``): ``fixtures/selection/dev_library.jsonl``,
``dev_tasks.jsonl`` (+ ``.gold.jsonl``) are development; ``fixtures/selection/firstcontact/``
(``library.jsonl`` 200 rules, ``library_50.json``, ``tasks.jsonl``, ``tasks.gold.jsonl``) was
written apart and is scored once at first contact (``--set first_contact=1``).

Library sizes (Table 14: 47, 97, 197, 497; three shuffled orders each): for each task, the
library holds all of its gold rules, then other rules of the set's own library in a seeded random
order up to the size; when the set's library is smaller than the size, distractors from
``toolkit.rules.distractors`` (our own grammar of coding-assistant preferences) fill the rest.
Distractors are unlabelled: selecting one counts as a false positive, so precision at sizes above
the set's library is a lower bound (global distractors without a condition are left out of the pool:
by the applicability policy they apply to every task) (the table also shows precision over labelled rules only).
Offline selection is order-invariant (embeddings per rule); the orders matter for the LLM's batches.
Recall and precision are micro-averaged over tasks (pooled selections), with task-clustered
bootstrap 95% intervals; a task whose selection is ``unknown`` counts as selecting nothing and is
shown in the ``unknown`` column.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from toolkit._seeding import item_rng
from toolkit.diagnostics.result import Result, compare_rows
from toolkit.metrics import bootstrap_ci
from toolkit.paper import fixtures_dir, paper_figures
from toolkit.records import Rule, SelectInput
from toolkit.runs import RunContext
from toolkit.splits import first_contact_of, record_first_contact, require_role

SIZES = (47, 97, 197, 497)
GOLD_KEYS = ("applicable", "selected", "gold", "rules", "rule_ids", "relevant", "expected")


def _read_jsonl(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def _gold_ids(rec: dict) -> list[str]:
    keys = [k for k in GOLD_KEYS if k in rec] + [k for k in rec if k not in GOLD_KEYS and k != "id"]
    for k in keys:
        if isinstance(rec[k], list) and all(isinstance(x, (str, dict)) for x in rec[k]):
            return [x if isinstance(x, str) else x["id"] for x in rec[k]]
    raise KeyError(f"gold record {rec.get('id')!r}: no list of rule ids")


def load_library(path: Path) -> list[Rule]:
    if path.suffix == ".json":
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, dict):
            data = data.get("library") or data.get("rules") or data.get("ids")
        return [Rule.model_validate(x) for x in data if isinstance(x, dict)]
    return [Rule.model_validate(x) for x in _read_jsonl(path)]


def load_subset(path: Path, library: list[Rule]) -> list[Rule]:
    """A sub-library file: a list of rules or of rule ids (JSON) or JSONL rules."""
    data = json.loads(path.read_text(encoding="utf-8")) if path.suffix == ".json" else _read_jsonl(path)
    if isinstance(data, dict):
        data = data.get("library") or data.get("rules") or data.get("ids") or data.get("rule_ids")
    by_id = {r.id: r for r in library}
    return [by_id[x] if isinstance(x, str) else Rule.model_validate(x) for x in data]


def load_tasks(folder: Path, stem: str) -> tuple[list[dict], dict[str, list[str]]]:
    tasks = _read_jsonl(folder / f"{stem}.jsonl")
    for name in (f"{stem}.gold.jsonl", f"{stem}_gold.jsonl"):
        if (folder / name).exists():
            return tasks, {g["id"]: _gold_ids(g) for g in _read_jsonl(folder / name)}
    raise FileNotFoundError(f"{folder}: no gold for {stem}.jsonl")


def _task_fields(t: dict) -> tuple[str, str | None]:
    task = t.get("task") or t.get("text") or t.get("description") or ""
    return task, t.get("instruction")


def _select_input(t: dict, lib: list[Rule]) -> SelectInput:
    task, instruction = _task_fields(t)
    project = t.get("project") if isinstance(t.get("project"), str) else None
    return SelectInput(id=t["id"], task=task, instruction=instruction, project=project, library=lib)


def batch_folders(base: Path) -> list[Path]:
    """Batches written apart (``firstcontact*`` folders holding ``library.jsonl``), sorted by name."""
    return sorted(f for f in base.glob("firstcontact*") if (f / "library.jsonl").exists())


def load_batch(folder: Path) -> tuple[list[Rule], list[dict], dict[str, list[str]], dict[str, list[Rule]]]:
    """A batch's 200-rule library, tasks, gold and fixed libraries (``library_50``, ``library_200``)."""
    flib = load_library(folder / "library.jsonl")
    ftasks, fgold = load_tasks(folder, "tasks")
    fixed = {"library_50": load_subset(folder / "library_50.json", flib)} if (folder / "library_50.json").exists() else {}
    fixed[f"library_{len(flib)}"] = flib
    return flib, ftasks, fgold, fixed


def development_sets(base: Path | None = None, purpose: str = "fit") -> list[tuple]:
    """Every selection set the method may fit on: ``dev_*`` and batches re-labelled development after
    their first contact; each as (folder, library, tasks, gold, fixed libraries). Roles are checked
    (:func:`toolkit.splits.require_role` raises on held-out or first-contact files)."""
    from toolkit.splits import role_of

    base = base or fixtures_dir() / "selection"
    require_role(base / "dev_tasks.jsonl", purpose)  # type: ignore[arg-type]
    lib = load_library(base / "dev_library.jsonl")
    tasks, gold = load_tasks(base, "dev_tasks")
    out = [(base, lib, tasks, gold, {"dev library": lib})]
    for folder in batch_folders(base):
        if role_of(folder / "tasks.jsonl") == "development":
            require_role(folder / "tasks.jsonl", purpose)  # type: ignore[arg-type]
            out.append((folder, *load_batch(folder)))
    return out


def build_library(task_id: str, gold: list[str], library: list[Rule], size: int, order: int, seed: int,
                  pool: list[Rule]) -> list[Rule]:
    """The task's gold rules + other set rules, then distractors, to ``size``; shuffled by ``order``."""
    rng = item_rng(seed, task_id, size, order)
    by_id = {r.id: r for r in library}
    own = [by_id[g] for g in gold if g in by_id]
    rest = [r for r in library if r.id not in set(gold)]
    rest = [rest[i] for i in rng.permutation(len(rest))]
    lib = (own + rest)[:size]
    if len(lib) < size:
        taken = {r.id for r in lib}
        extra = [p for p in pool if p.id not in taken]
        lib += [extra[i] for i in rng.permutation(len(extra))[: size - len(lib)]]
    return [lib[i] for i in rng.permutation(len(lib))]


def score(selected: list[list[str] | None], gold: list[list[str]], labelled: list[set[str]]) -> dict[str, Any]:
    """Micro recall / precision pooled over tasks, with task-bootstrap CIs."""
    tp = np.array([len(set(s or []) & set(g)) for s, g in zip(selected, gold, strict=True)], dtype=float)
    ns = np.array([len(s or []) for s in selected], dtype=float)
    ng = np.array([len(g) for g in gold], dtype=float)
    nl = np.array([len(set(s or []) & lab) for s, lab in zip(selected, labelled, strict=True)], dtype=float)
    idx = np.arange(len(gold))

    def rec(ix):
        return float(tp[ix].sum() / ng[ix].sum()) if ng[ix].sum() else float("nan")

    def prec(ix):
        return float(tp[ix].sum() / ns[ix].sum()) if ns[ix].sum() else float("nan")

    r_lo, r_hi = bootstrap_ci(idx, rec, n_resamples=1000, random_state=0)
    p_lo, p_hi = bootstrap_ci(idx, prec, n_resamples=1000, random_state=0)
    return {"recall": rec(idx), "recall_low": r_lo, "recall_high": r_hi, "precision": prec(idx),
            "precision_low": p_lo, "precision_high": p_hi,
            "precision_labelled": float(tp.sum() / nl.sum()) if nl.sum() else float("nan"),
            "tasks": len(gold), "gold_rules": int(ng.sum()), "selected": int(ns.sum()), "true_pos": int(tp.sum()),
            "unknown": sum(s is None for s in selected)}


def select_for(model: Any, records: list[SelectInput]) -> list[list[str] | None]:
    from toolkit.rules.checks import select_records

    return [o["selected"] for o in select_records(records, model)]


def run_set(folder: Path, library: list[Rule], tasks: list[dict], gold: dict[str, list[str]], model: Any,
            sizes: tuple[int, ...], orders: int, seed: int, role: str, pool: list[Rule],
            fixed: dict[str, list[Rule]]) -> list[dict[str, Any]]:
    """Scores per (library, size, order) for one set: the fixed libraries first, then Table 14's sizes."""
    rows = []
    labelled = {r.id for r in library}
    for name, lib in fixed.items():
        ids = {r.id for r in lib}
        recs = [_select_input(t, lib) for t in tasks]
        sel = select_for(model, recs)
        g = [[x for x in gold[t["id"]] if x in ids] for t in tasks]
        rows.append({"library": name, "size": len(lib), "order": 0, "data_role": role,
                     **score(sel, g, [labelled & ids] * len(tasks))})
    for size in sizes:
        for order in range(orders):
            recs, g, labs = [], [], []
            for t in tasks:
                lib = build_library(t["id"], gold[t["id"]], library, size, order, seed, pool)
                recs.append(_select_input(t, lib))
                g.append(gold[t["id"]])
                labs.append({r.id for r in lib} & labelled)
            rows.append({"library": f"grown to {size}", "size": size, "order": order, "data_role": role,
                         **score(select_for(model, recs), g, labs)})
    return rows


def recorded_rows(folder: Path, rec: dict[str, Any], model: str) -> list[dict[str, Any]]:
    """A batch's recorded first-contact scores as detail rows (the score of that one run)."""
    out = []
    for key, v in rec["scores"].items():
        name, _, order = key.rpartition("#")
        size = int(name.rsplit(" ", 1)[-1]) if name.startswith("grown") else int(name.rsplit("_", 1)[-1])
        out.append({"library": name, "size": size, "order": int(order), "data_role": "first-contact",
                    "recall": v["recall"], "precision": v["precision"], "recall_low": float("nan"),
                    "recall_high": float("nan"), "precision_low": float("nan"), "precision_high": float("nan"),
                    "precision_labelled": float("nan"), "tasks": rec["n"], "unknown": 0, "model": model,
                    "batch": folder.name, "recorded": f"{rec['commit'][:12]} {rec['date']}"})
    return out


def run(ctx: RunContext) -> Result:
    """Table 14 (and the fixed-library checks) on the development set and the first-contact batch."""
    from toolkit.rules.distractors import distractor_pool

    opts = ctx.options
    first = str(opts.get("first_contact", "0")).lower() in ("1", "true", "yes")
    # first_contact_only=1: score only the first-contact batch (the selector still fits on development)
    fc_only = first and str(opts.get("first_contact_only", "0")).lower() in ("1", "true", "yes")
    orders = int(opts.get("orders", 1 if ctx.quick else 3))
    sizes = tuple(int(x) for x in str(opts.get("sizes", ",".join(map(str, SIZES)))).split(","))
    base = fixtures_dir() / "selection"
    # growth distractors: never global-unconditional ones (by the applicability policy those apply
    # to every task, so counting them as false positives would be wrong); the rest are unlabelled
    pool = [r for r in distractor_pool() if r.conditions or r.scope != "global"]
    fig = paper_figures("selection")["figures"]
    rows: list[dict[str, Any]] = []
    text: list[str] = []
    from toolkit.splits import role_of

    for model in ctx.models:
        chat = ctx.chat_model(model)
        sets = [("development", folder, lib, tasks, gold, fixed)
                for folder, lib, tasks, gold, fixed in development_sets(base, purpose="evaluate")
                if not fc_only]
        for fc in batch_folders(base):
            role = role_of(fc / "tasks.jsonl") or "first-contact"
            rec = first_contact_of(fc)
            if rec is not None and model == "offline":
                rows += recorded_rows(fc, rec, model)
                text.append(f"First contact with `{fc.relative_to(fixtures_dir().parent)}` was scored on "
                            f"{rec['date']} at commit {rec['commit'][:12]} (`FIRST_CONTACT.json`); "
                            + ("development data since." if role == "development" else "still first-contact."))
            elif role == "first-contact" and first and model == "offline":
                sets.append(("first-contact", fc, *load_batch(fc)))
            elif role == "first-contact":
                text.append(f"`{fc.name}` is first-contact and not yet scored (run with first_contact=1 once).")
        for role, folder, lib, tasks, gold, fixed in sets:
            for f in sorted(folder.glob("*.json*")):
                if f.name != "FIRST_CONTACT.json":
                    ctx.record_input(f)
            got = run_set(folder, lib, tasks, gold, chat, sizes, orders, ctx.seed, role, pool, fixed)
            for r in got:
                r["model"], r["batch"] = model, folder.name if folder != base else "dev"
            if role == "first-contact":
                scores = {f"{r['library']}#{r['order']}": {"recall": r["recall"], "precision": r["precision"]}
                          for r in got}
                record_first_contact(folder, "selection", scores, n=len(tasks))
                rec = first_contact_of(folder)
                text.append(f"First contact with `{folder.relative_to(fixtures_dir().parent)}`: scored now, "
                            f"recorded at commit {rec['commit'][:12]} (`FIRST_CONTACT.json`).")
            rows += got
    detail = pd.DataFrame(rows)
    grown = detail[detail["library"].str.startswith("grown")]
    summary = (grown.groupby(["model", "data_role", "batch", "size"], sort=True)
               .agg(orders=("order", "size"), recall=("recall", "mean"), recall_low=("recall_low", "min"),
                    recall_high=("recall_high", "max"), precision=("precision", "mean"),
                    precision_low=("precision_low", "min"), precision_high=("precision_high", "max"),
                    precision_labelled=("precision_labelled", "mean"), tasks=("tasks", "first"),
                    unknown=("unknown", "sum")).reset_index())
    paper_r = {int(k): v for k, v in fig["recall"].items()}
    paper_p = {int(k): v for k, v in fig["precision"].items()}
    summary["paper_recall"] = summary["size"].map(paper_r)
    summary["paper_precision"] = summary["size"].map(paper_p)
    head = []
    for _, r in summary.iterrows():
        for m in ("recall", "precision"):
            head.append({"metric": f"{m} at {r['size']} rules", "ours": r[m],
                         "paper": (paper_r if m == "recall" else paper_p).get(int(r["size"])),
                         "n": int(r["tasks"]), "ci_low": r[f"{m}_low"], "ci_high": r[f"{m}_high"],
                         "data_role": r["data_role"], "batch": r["batch"], "model": r["model"],
                         "unknown": int(r["unknown"])})
    for _, r in detail[~detail["library"].str.startswith("grown")].iterrows():
        for m in ("recall", "precision"):
            head.append({"metric": f"{m} with the fixed {r['library']}", "ours": r[m], "paper": None,
                         "n": int(r["tasks"]), "ci_low": r[f"{m}_low"], "ci_high": r[f"{m}_high"],
                         "data_role": r["data_role"], "batch": r["batch"], "model": r["model"],
                         "unknown": int(r["unknown"])})
    table = compare_rows(head)
    fixed_rows = detail[~detail["library"].str.startswith("grown")]
    text.insert(0, f"Paper: {paper_figures('selection')['source']}, {paper_figures('selection')['table']} "
                   f"({fig['n_tasks']} held-out tasks, three shuffled orders per size). Ours: offline = MiniLM "
                   "retrieval + scope + the compliance reader's condition/exception stage; intervals are "
                   "task-bootstrap 95% (lowest/highest over orders). Development rows are in-sample (the "
                   "selector is fit on that set); only first-contact rows measure generalisation.")
    for _, r in summary.iterrows():
        if r["data_role"] == "development":
            continue
        for m in ("recall", "precision"):
            pv = r[f"paper_{m}"]
            if pv == pv and pv is not None:
                rel = "at or above" if r[m] >= pv else "below"
                text.append(f"{r['model']}, {r['data_role']} `{r['batch']}`, {int(r['size'])} rules: {m} {r[m]:.3f} is {rel} "
                            f"the paper's {pv:.3f}.")
    from toolkit.viz import lines

    plot = summary.melt(id_vars=["size", "data_role", "batch", "model"], value_vars=["recall", "precision"], var_name="metric")
    plot["series"] = plot["data_role"] + " " + plot["batch"] + ": " + plot["metric"]
    figures = {"selection": lines(plot, x="size", y="value", hue="series", logx=True,
                                  title="Rule selection as the library grows (D.4)")}
    return Result(name="selection", tables={"selection": table, "selection_growth": summary,
                                            "selection_fixed": fixed_rows.reset_index(drop=True),
                                            "selection_detail": detail},
                  figures=figures, text=text, meta={"sizes": list(sizes), "orders": orders, "models": list(ctx.models)})
