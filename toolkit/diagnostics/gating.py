"""`prefmem reproduce gating`: memory gating under budgets (memory-gating paper Tables 2-3, Figs 1-2).

Runs every policy on the simulated PerMemBench-like S and L streams (or on a fact file given
with ``--set facts=PATH``), chooses the linear methods' hyper-parameters on validation users
(B.2: 15 pre-training users, 4 validation users, the held-out user), repeats over seeds
(each seed re-simulates the users and redraws the splits) and writes

* ``rhr.csv``: ``benchmark, policy, budget, seed, micro, macro`` (RHR in percent);
* ``table2_S.csv`` / ``table3_L.csv``: mean and sample sd over seeds beside the paper;
* ``warm_vs_universal.csv``: Warm-Start UCB minus Universal per budget, with the sd and the
  number of seeds in which Warm-Start UCB is at least as good;
* ``fig1_learning_dynamics``: F1 gain over Universal per session decile;
* ``fig2_pool_size``: Warm-Start UCB RHR against the pre-training pool size.

Options (``--set k=v``): ``facts`` (JSONL of fact records), ``benchmarks`` (``S,L``), ``seeds``,
``budgets``, ``dim`` (SVD dimension; 64, or 32 with ``--quick``), ``n_jobs`` (joblib; default all cores), ``pool_sizes`` (0 skips Fig. 2),
``grid`` (S or L for a fact file), ``test_users`` (how many held-out users per seed),
``n_users`` (simulated users per benchmark), ``embedder`` (also ``--embedder``): the fact
features of the linear methods (B.2 uses a sentence embedding as the linear feature).
``tfidf`` (the default, a lexical baseline: TF-IDF unigrams+bigrams -> SVD to ``dim``) or a
sentence embedder through the gateway (``minilm``; ``openai/text-embedding-3-small`` is the
paper's), projected by PCA to ``dim``; vectors are cached, so a rerun embeds nothing. TF-IDF is
the full-scale default because embedding every simulated fact with MiniLM (about 170k distinct
texts over S and L and three seeds) does not fit the 10-minute budget of ``prefmem reproduce``
on 2 cores; the report gives the embedding time of the run.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from toolkit.diagnostics.result import Result
from toolkit.runs import RunContext

QUICK = {"benchmarks": ("S",), "n_users": 10, "seeds": 1, "test_users": 10,
         "pool_sizes": (1, 3, 7), "fig2_users": 3, "dim": 32}
FULL = {"benchmarks": ("S", "L"), "n_users": None, "seeds": 3, "test_users": None,
        "pool_sizes": (1, 2, 5, 10, 15), "fig2_users": 5, "dim": 64}


def _as_list(v: Any) -> list:
    if v is None:
        return []
    if isinstance(v, list | tuple):
        return list(v)
    return [x for x in str(v).split(",") if x != ""]


def _sources(ctx: RunContext, cfg: dict) -> list[tuple[str, str | None, Any]]:
    """(benchmark name, grid, facts-for-seed function) for each benchmark to run."""
    from toolkit.gating.simulate import simulate_benchmark

    if "facts" in ctx.options:
        from toolkit.datasets.jsonl import read_jsonl
        from toolkit.records import Fact

        path = ctx.record_input(Path(str(ctx.options["facts"])))
        facts = read_jsonl(path, Fact)
        grid = ctx.options.get("grid")
        return [(path.stem, str(grid) if grid else None, lambda seed: facts)]
    names = [str(b) for b in _as_list(ctx.options.get("benchmarks"))] or list(cfg["benchmarks"])
    return [(b, b if b in ("S", "L") else None,
             lambda seed, b=b: simulate_benchmark(b, seed=seed, n_users=cfg["n_users"]))
            for b in names]


def _summary_table(rhr: pd.DataFrame, bench: str, paper: dict) -> pd.DataFrame:
    sub = rhr[rhr.benchmark == bench]
    g = sub.groupby(["policy", "budget"], sort=False)
    t = g.agg(micro=("micro", "mean"), micro_sd=("micro", "std"), macro=("macro", "mean"),
              macro_sd=("macro", "std"), n_seeds=("seed", "nunique")).reset_index()
    names = {v: k for k, v in paper.get("policy_names", {}).items()}
    fig = paper.get("figures", {}).get(bench, {})
    t["paper_micro"] = [fig.get(names.get(p, p), {}).get("micro", {}).get(str(b))
                        for p, b in zip(t.policy, t.budget, strict=True)]
    t["paper_macro"] = [fig.get(names.get(p, p), {}).get("macro", {}).get(str(b))
                        for p, b in zip(t.policy, t.budget, strict=True)]
    return t


def _warm_vs_universal(rhr: pd.DataFrame) -> pd.DataFrame:
    key = ["benchmark", "budget", "seed"]
    w = rhr[rhr.policy == "Warm-Start UCB"].set_index(key)[["micro", "macro"]]
    u = rhr[rhr.policy == "Universal"].set_index(key)[["micro", "macro"]]
    d = (w - u).dropna().reset_index()
    if d.empty:
        return d
    return d.groupby(["benchmark", "budget"], sort=False).agg(
        gain_micro=("micro", "mean"), gain_micro_sd=("micro", "std"),
        gain_macro=("macro", "mean"), gain_macro_sd=("macro", "std"),
        seeds_micro_ge=("micro", lambda x: int((x >= 0).sum())),
        seeds_macro_ge=("macro", lambda x: int((x >= 0).sum())),
        n_seeds=("seed", "nunique")).reset_index()


def _fig1(f1: pd.DataFrame, bench: str):
    import seaborn as sns

    from toolkit.viz import new_figure

    sub = f1[f1.benchmark == bench]
    budgets = sorted(sub.budget.unique())
    show = [budgets[min(1, len(budgets) - 1)], budgets[-1]] if len(budgets) > 1 else budgets
    fig = new_figure(5.0 * len(show), 3.6)
    axes = fig.subplots(1, len(show), squeeze=False)[0]
    for ax, b in zip(axes, show, strict=True):
        sns.lineplot(data=sub[sub.budget == b], x="decile", y="f1_gain", hue="policy", marker="o",
                     errorbar=("se", 1), ax=ax,
                     hue_order=["Cold-Start UCB", "Pre-trained Scorer", "Warm-Start UCB"])
        ax.axhline(0, color="grey", lw=0.8)
        ax.set_title(f"{bench}, budget {b}")
        ax.set_xlabel("session decile")
        ax.set_ylabel("F1 gain over Universal")
    return fig


def _fig2(pool: pd.DataFrame, bench: str):
    import seaborn as sns

    from toolkit.viz import new_figure

    fig = new_figure(10.0, 3.6)
    axes = fig.subplots(1, 2)
    for ax, metric in zip(axes, ("micro", "macro"), strict=True):
        sns.lineplot(data=pool, x="pool_size", y=metric, hue="budget", marker="o", errorbar=None,
                     palette="viridis", ax=ax)
        ax.set_title(f"{bench}: Warm-Start UCB {metric} RHR")
        ax.set_xlabel("pre-training users")
        ax.set_ylabel(f"{metric} RHR (%)")
    return fig


def _json_default(o: Any) -> Any:
    """numpy scalars and arrays as plain JSON values (for the resumable item log)."""
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


def _features_sentence(embedder: str, emb: Any, dim: int, seconds: float) -> str:
    """What the linear methods' features were, and what they cost in this run."""
    if emb is None:
        return (f"Features of the linear methods: embedder tfidf (lexical baseline: TF-IDF "
                f"unigrams+bigrams -> truncated SVD to {dim} dims, fit on each benchmark's fact "
                f"texts), {seconds:.1f}s. The paper uses a sentence embedding "
                "(--embedder openai/text-embedding-3-small; offline: --embedder minilm).")
    st = emb.stats
    return (f"Features of the linear methods: embedder {embedder} (sentence embedding -> PCA to "
            f"{dim} dims, fit on each benchmark's fact texts); {int(st['live'])} texts embedded "
            f"live in {st['seconds']:.1f}s (incl. model load), {int(st['cached'])} read from "
            f"the cache; features took {seconds:.1f}s in all.")


def run(ctx: RunContext) -> Result:
    """Tables 2-3 and Figs 1-2 of the memory-gating paper on simulated or given fact streams."""
    from toolkit.gating.sweep import prepare_benchmark, sweep_benchmark, text_gate_decisions
    from toolkit.paper import paper_figures

    cfg = dict(QUICK if ctx.quick else FULL)
    opts = ctx.options
    seeds = int(opts.get("seeds", cfg["seeds"]))
    dim = int(opts.get("dim", cfg["dim"]))
    n_jobs = int(opts.get("n_jobs", -1))
    budgets = [int(b) for b in _as_list(opts.get("budgets"))] or None
    pool_sizes = [int(p) for p in _as_list(opts.get("pool_sizes"))] or list(cfg["pool_sizes"])
    pool_sizes = [p for p in pool_sizes if p > 0]  # pool_sizes=0 skips Fig. 2
    n_tests = opts.get("test_users", cfg["test_users"])
    if opts.get("n_users") is not None:
        cfg["n_users"] = int(opts["n_users"])
    embedder = str(opts.get("embedder") or "tfidf")
    from toolkit.gating.features import EmbedderPCA, TfidfSVD

    emb = None
    if embedder != "tfidf":
        from toolkit.llm import get_embedder

        emb = get_embedder(embedder, ctx.gateway)

    def features(seed: int):
        """One featuriser per benchmark and seed, fit on that benchmark's fact texts only."""
        return (TfidfSVD(dim=dim, random_state=seed) if emb is None
                else EmbedderPCA(emb, dim=dim, random_state=seed))
    model = None if ctx.chat_model().is_offline else ctx.chat_model()
    for name in ("gating_greedy", "gating_greedy_capacity", "gating_context",
                 "gating_context_capacity", "gating_summary", "gating_capacity_levels"):
        ctx.record_prompt(name)
    paper = paper_figures("gating")
    rows: list[dict] = []
    f1_rows: list[dict] = []
    chosen: list[dict] = []
    unknowns: dict[str, int] = {}
    meta: dict[str, Any] = {"benchmarks": {}, "seeds": [], "quick": ctx.quick, "dim": dim,
                            "embedder": embedder}
    t_features = 0.0
    sources = {bname: (grid, facts_for) for bname, grid, facts_for in _sources(ctx, cfg)}

    def sweep_one(item: tuple[str, int]) -> dict[str, Any]:
        """One benchmark at one seed; JSON-safe, so it is logged and skipped on --resume."""
        bname, seed = item
        grid, facts_for = sources[bname]
        nonlocal t_features
        t0 = time.perf_counter()
        bench = prepare_benchmark(bname, facts_for(seed), grid=grid, dim=dim, seed=seed,
                                  budgets=budgets, featurizer=features(seed))
        t_features += time.perf_counter() - t0
        tests = list(range(len(bench.streams)))[: int(n_tests) if n_tests else None]
        gates, unk = text_gate_decisions(bench, model, users=tests)
        res = sweep_benchmark(bench, seed=seed, gates=gates, test_users=tests, n_jobs=n_jobs)
        gains = []
        for pol in ("Cold-Start UCB", "Pre-trained Scorer", "Warm-Start UCB"):
            for user in res.users:
                gain = res.f1[pol][user] - res.f1["Universal"][user]
                for j, b in enumerate(res.budgets):
                    for dcl in range(10):
                        if not np.isnan(gain[j, dcl]):
                            gains.append({"benchmark": bname, "seed": seed, "policy": pol,
                                          "user": user, "budget": int(b), "decile": dcl + 1,
                                          "f1_gain": float(gain[j, dcl])})
        out = {"rows": res.rhr_rows(), "chosen": [{"benchmark": bname, "seed": seed, **c}
                                                  for c in res.chosen],
               "f1": gains, "unknowns": unk,
               "meta": {**bench.meta, "n_train": bench.n_train, "n_val": bench.n_val,
                        "held_out_users": len(tests)}}
        return json.loads(json.dumps(out, default=_json_default))

    items = [(bname, ctx.seed + k) for bname in sources for k in range(seeds)]
    done = ctx.map_items("sweep", items, lambda batch: [sweep_one(it) for it in batch],
                         key=lambda it: f"{it[0]}-seed{it[1]}", batch_size=1)
    for (bname, seed), out in zip(items, done, strict=True):
        rows.extend(out["rows"])
        chosen.extend(out["chosen"])
        f1_rows.extend(out["f1"])
        for g, v in out["unknowns"].items():
            unknowns[g] = unknowns.get(g, 0) + v
        meta["benchmarks"][bname] = out["meta"]
        meta["seeds"] = sorted(set(meta["seeds"]) | {seed})
    rhr = pd.DataFrame(rows, columns=["benchmark", "policy", "budget", "seed", "micro", "macro"])
    f1 = pd.DataFrame(f1_rows)
    tables: dict[str, pd.DataFrame] = {"rhr": rhr}
    names = list(dict.fromkeys(rhr.benchmark))
    for bname in names:
        label = {"S": "table2_S", "L": "table3_L"}.get(bname, f"table_{bname}")
        tables[label] = _summary_table(rhr, bname, paper)
    tables["warm_vs_universal"] = _warm_vs_universal(rhr)
    ch = pd.DataFrame(chosen)
    if not ch.empty:  # the most frequent choice per cell, and how often it was made
        keys = ["benchmark", "policy", "budget"]
        params = [c for c in ("tau", "alpha", "lam", "m") if c in ch.columns]
        ch["setting"] = [" ".join("-" if pd.isna(v) else f"{v:g}" for v in r)
                         for r in ch[params].itertuples(index=False)]
        top = ch.groupby(keys, sort=False).setting.agg(lambda x: x.value_counts().index[0])
        cnt = ch.groupby(keys, sort=False).setting.agg(lambda x: int(x.value_counts().iloc[0]))
        ch = pd.DataFrame({"tau alpha lam m (most chosen)": top, "times": cnt,
                           "splits": ch.groupby(keys, sort=False).size()}).reset_index()
    tables["chosen_hyperparameters"] = ch
    # Fig. 2: pre-training pool size on the largest benchmark, first seed
    fig_bench = "L" if "L" in names else names[-1]
    pool_rows = []
    if fig_bench in sources and pool_sizes:
        g, facts_for = sources[fig_bench]
        t0 = time.perf_counter()
        bench = prepare_benchmark(fig_bench, facts_for(ctx.seed), grid=g, dim=dim,
                                  seed=ctx.seed, budgets=budgets, featurizer=features(ctx.seed))
        t_features += time.perf_counter() - t0
        fb = list(bench.budgets)
        fb = sorted({fb[min(1, len(fb) - 1)], fb[len(fb) // 2], fb[-1]})
        tests = list(range(len(bench.streams)))[: int(cfg["fig2_users"])]
        for p in sorted({min(p, bench.n_train) for p in pool_sizes}):
            res = sweep_benchmark(bench, seed=ctx.seed, test_users=tests, n_jobs=n_jobs,
                                  pool_size=p, budgets=fb, policies=["Warm-Start UCB"])
            for r in res.rhr_rows():
                pool_rows.append({"pool_size": p, "budget": r["budget"], "micro": r["micro"],
                                  "macro": r["macro"], "held_out_users": len(tests)})
    pool = pd.DataFrame(pool_rows)
    tables["fig2_pool_size"] = pool
    figures = {}
    if not f1.empty:
        figures["fig1_learning_dynamics"] = _fig1(f1, fig_bench)
        fig1_tab = (f1[f1.benchmark == fig_bench].groupby(["policy", "budget", "decile"])
                    .f1_gain.mean().unstack("decile").reset_index())
        fig1_tab.columns = [c if isinstance(c, str) else f"d{c}" for c in fig1_tab.columns]
        tables["fig1_learning_dynamics"] = fig1_tab
    if not pool.empty:
        figures["fig2_pool_size"] = _fig2(pool, fig_bench)
    text = [
        "Memory gating with delayed one-sided feedback (memory-gating paper Tables 2-3, Figs 1-2). "
        "RHR = share of (fact, later hit) pairs whose fact was in the budgeted FIFO memory bank at "
        "the hit, in percent; micro pools hits over held-out users, macro averages per-user RHR. "
        f"Linear methods' hyper-parameters were chosen per budget on validation users (B.2 grids); "
        f"seeds {meta['seeds']} (each seed re-simulates the users and redraws the splits); mean "
        "and sample sd over seeds beside the paper's figures.",
        _features_sentence(embedder, emb, dim, t_features),
        "Our data are simulated users (toolkit.gating.simulate), not PerMemBench: compare trends "
        "(ordering of policies, gains over Universal), not absolute values. Text gates run "
        + ("offline (KEEP/DROP cue grammar)." if model is None else
           f"through {ctx.model}; unknown answers (stored by default): {unknowns}."),
    ]
    wv = tables["warm_vs_universal"]
    if not wv.empty:
        ok = wv[(wv.gain_micro >= 0) & (wv.gain_macro >= 0)]
        text.append(
            f"Warm-Start UCB >= Universal (mean over seeds) at {len(ok)} of {len(wv)} "
            "(benchmark, budget) cells, micro and macro; per-seed counts in warm_vs_universal.")
    meta["unknown"] = unknowns
    meta["features_seconds"] = round(t_features, 2)
    if emb is not None:
        meta["embedding"] = {**emb.describe(), "live_texts": int(emb.stats["live"]),
                             "cached_texts": int(emb.stats["cached"]),
                             "embedding_seconds": round(float(emb.stats["seconds"]), 2)}
    meta["rows"] = len(rhr)
    return Result(name="gating", tables=tables, figures=figures, text=text, meta=meta)
