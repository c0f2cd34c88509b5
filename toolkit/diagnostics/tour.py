"""A small end-to-end diagnostic for the tour: the gateway's offline mode and the result plumbing."""

from __future__ import annotations

import numpy as np
import pandas as pd

from toolkit.diagnostics.result import Result, compare_rows
from toolkit.metrics import bootstrap_ci, confusion
from toolkit.runs import RunContext
from toolkit.viz import ours_vs_paper


def run(ctx: RunContext) -> Result:
    """Score a seeded toy detector against seeded labels, to show tables, CIs and figures."""
    rng = np.random.default_rng(ctx.seed)
    n = 200 if ctx.quick else 2000
    truth = rng.random(n) < 0.45
    pred = np.where(rng.random(n) < 0.9, truth, ~truth)
    c = confusion(truth, pred)
    pairs = np.column_stack([truth, pred])
    lo, hi = bootstrap_ci(pairs, lambda a: confusion(a[:, 0].astype(bool), a[:, 1].astype(bool)).f1,
                          n_resamples=500, random_state=ctx.seed)
    table = compare_rows([
        {"metric": "F1", "ours": c.f1, "paper": None, "n": n, "ci_low": lo, "ci_high": hi},
        {"metric": "specificity", "ours": c.specificity, "paper": None, "n": c.n_neg},
    ])
    fig = ours_vs_paper(table.fillna({"paper": 0.0}), title="tour: a seeded detector")
    return Result(name="tour", tables={"tour": table}, figures={"tour": fig},
                  text=["A seeded noisy detector, to show how results are laid out."],
                  meta={"n": n, "seed": ctx.seed, "counts": pd.Series(c.__dict__).to_dict()})
