"""Seaborn figures shared by diagnostics and notebooks. No backend is forced at import time."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd


def _plt():
    import matplotlib.pyplot as plt

    return plt


def new_figure(width: float = 6.0, height: float = 4.0):
    """A matplotlib Figure not registered with pyplot (safe to create in loops and CLI runs)."""
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def ours_vs_paper(df: pd.DataFrame, *, metric: str = "metric", title: str = ""):
    """Grouped bars of ``ours`` beside ``paper`` per metric, with CI whiskers when present."""
    import numpy as np
    import seaborn as sns

    fig = new_figure(max(5.0, 1.1 * len(df)), 3.6)
    ax = fig.subplots()
    long = df.melt(id_vars=[metric], value_vars=[c for c in ("ours", "paper") if c in df], var_name="source")
    sns.barplot(data=long, x=metric, y="value", hue="source", ax=ax, palette=["#4C72B0", "#BBBBBB"])
    if {"ci_low", "ci_high"} <= set(df.columns):
        xs = np.arange(len(df)) - 0.2
        lo = (df["ours"] - df["ci_low"]).clip(lower=0).to_numpy(dtype=float)
        hi = (df["ci_high"] - df["ours"]).clip(lower=0).to_numpy(dtype=float)
        ax.errorbar(xs, df["ours"].to_numpy(dtype=float), yerr=[lo, hi], fmt="none", ecolor="black", capsize=3)
    ax.set_xlabel("")
    ax.set_ylabel("value")
    ax.set_title(title)
    ax.tick_params(axis="x", rotation=20)
    return fig


def heatmap(df: pd.DataFrame, *, title: str = "", fmt: str = "d", cmap: str = "Blues"):
    """A labelled heatmap of a matrix-shaped DataFrame."""
    import seaborn as sns

    fig = new_figure(1.0 + 0.7 * df.shape[1], 1.0 + 0.45 * df.shape[0])
    ax = fig.subplots()
    sns.heatmap(df, annot=True, fmt=fmt, cmap=cmap, cbar=False, ax=ax)
    ax.set_title(title)
    return fig


def lines(df: pd.DataFrame, *, x: str, y: str, hue: str | None = None, title: str = "",
          errorbar: tuple | str | None = ("sd", 1), logx: bool = False, order: Sequence | None = None):
    """A seaborn line plot with markers and the spread as a band."""
    import seaborn as sns

    fig = new_figure()
    ax = fig.subplots()
    sns.lineplot(data=df, x=x, y=y, hue=hue, hue_order=order, marker="o", errorbar=errorbar, ax=ax)
    if logx:
        ax.set_xscale("log")
    ax.set_title(title)
    return fig
