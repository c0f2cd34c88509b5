"""Figures for the protocol report (presentation only)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from toolkit.viz import new_figure


def violation_bars(summary: pd.DataFrame, *, title: str = "Test-phase violation rate (mean ± sample std over users)"):
    """Bars per method, one panel per benchmark."""
    test = summary[summary["phase"] == "test"]
    benches = list(dict.fromkeys(test["benchmark"]))
    fig = new_figure(4.2 * max(1, len(benches)), 3.4)
    axes = np.atleast_1d(fig.subplots(1, max(1, len(benches))))
    for ax, b in zip(axes, benches, strict=False):
        df = test[test["benchmark"] == b]
        ax.bar(df["method"], 100 * df["rate_mean"], yerr=100 * df["rate_std"].fillna(0), capsize=3, color="#4C72B0")
        ax.set_title(b)
        ax.set_ylabel("units violated (%)")
        ax.set_ylim(0, 100)
        ax.tick_params(axis="x", rotation=30)
    fig.suptitle(title)
    return fig


def access_bars(cmp: pd.DataFrame):
    """Compliance per condition, ours beside the paper's Figure 2."""
    fig = new_figure(6.4, 3.4)
    ax = fig.subplots()
    x = np.arange(len(cmp))
    ax.bar(x - 0.2, cmp["ours"], 0.4, label="ours", color="#4C72B0")
    ax.bar(x + 0.2, cmp["paper"], 0.4, label="paper (Fig. 2)", color="#BBBBBB")
    ax.set_xticks(x, cmp["condition"], rotation=20)
    ax.set_ylabel("checks satisfied (%)")
    ax.set_ylim(0, 100)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.set_title("Access-compliance gap on held-out tasks")
    return fig


def learning_lines(curve: pd.DataFrame):
    """Corrections received and items stored over the learning tasks (mean over users)."""
    fig = new_figure(8.0, 3.2)
    ax1, ax2 = fig.subplots(1, 2)
    for (b, m), df in curve.groupby(["benchmark", "method"], sort=False):
        mean = df.groupby("task")[["corrections", "stored"]].mean()
        ax1.plot(mean.index, mean["corrections"], marker="o", label=f"{b}/{m}")
        ax2.plot(mean.index, mean["stored"], marker="o", label=f"{b}/{m}")
    ax1.set_xlabel("learning task")
    ax1.set_ylabel("corrections so far")
    ax2.set_xlabel("learning task")
    ax2.set_ylabel("rules or memories stored")
    ax2.legend(fontsize=6, ncol=2)
    fig.suptitle("Learning phase")
    return fig


def as_image(fig):
    """The figure as a PNG image for notebooks (a Figure made outside pyplot has no inline display)."""
    import io

    from IPython.display import Image

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight", metadata={"Software": None})
    return Image(data=buf.getvalue(), format="png")
