"""Figures and widgets for memory-gating results (used by the notebook)."""

from __future__ import annotations

import pandas as pd

__all__ = ["rhr_bars", "budget_explorer"]


def rhr_bars(rhr: pd.DataFrame, budget: int, benchmark: str | None = None):
    """Micro and macro RHR per policy at one budget (mean over seeds, sd as whiskers)."""
    import seaborn as sns

    from toolkit.viz import new_figure

    bench = benchmark or rhr.benchmark.iloc[0]
    sub = rhr[(rhr.benchmark == bench) & (rhr.budget == budget)]
    long = sub.melt(id_vars=["policy", "seed"], value_vars=["micro", "macro"], var_name="average",
                    value_name="RHR (%)")
    fig = new_figure(8.0, 3.8)
    ax = fig.subplots()
    sns.barplot(data=long, y="policy", x="RHR (%)", hue="average", errorbar=("sd", 1), ax=ax,
                order=list(dict.fromkeys(sub.policy)))
    ax.set_xlim(0, 100)
    ax.set_title(f"{bench}: RHR at memory budget {budget}")
    ax.set_ylabel("")
    return fig


def budget_explorer(rhr: pd.DataFrame, benchmark: str | None = None):
    """A slider over the evaluated budgets that redraws :func:`rhr_bars` (a PNG ``Image``
    widget, so the redraw shows in JupyterLab, headless runs and tests alike)."""
    import ipywidgets as widgets

    from toolkit.viz import figure_explorer

    bench = benchmark or rhr.benchmark.iloc[0]
    budgets = sorted(int(b) for b in rhr[rhr.benchmark == bench].budget.unique())
    slider = widgets.SelectionSlider(options=budgets, value=budgets[0], description="budget")
    return figure_explorer({"budget": slider}, lambda budget: rhr_bars(rhr, budget, bench))
