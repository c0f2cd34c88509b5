"""Figures and an ipywidgets explorer of one dialogue's tracked vector and change triggers."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pandas as pd

from toolkit.drift.extract import DIMS, SCALARS, extract_turns
from toolkit.drift.tracker import TrackerConfig, track_observations
from toolkit.records import DriftInput


def tracking_frame(observations: Sequence[dict | None], config: TrackerConfig | None = None) -> pd.DataFrame:
    """Long table: turn, dimension, tracked value (scalars; top-category probability otherwise),
    change score and whether that dimension was flagged."""
    rows = []
    for s in track_observations(observations, config):
        for d in DIMS:
            v = s.vector.get(d)
            if v is None:
                continue
            value = v if d in SCALARS else max(v.values())
            rows.append({"turn": s.turn, "dimension": d, "value": float(value),
                         "score": s.score[d], "flagged": d in s.changed})
    return pd.DataFrame(rows)


def plot_tracking(observations: Sequence[dict | None], config: TrackerConfig | None = None, *,
                  change_points: Sequence[int] = (), title: str = ""):
    """Two panels: the tracked vector and the change scores against delta, with the triggers."""
    import seaborn as sns

    from toolkit.viz import new_figure

    cfg = config or TrackerConfig()
    df = tracking_frame(observations, cfg)
    fig = new_figure(8.0, 5.2)
    top, bottom = fig.subplots(2, 1, sharex=True)
    sns.lineplot(data=df, x="turn", y="value", hue="dimension", marker="o", ax=top, hue_order=list(DIMS))
    sns.lineplot(data=df, x="turn", y="score", hue="dimension", marker="o", ax=bottom,
                 hue_order=list(DIMS), legend=False)
    bottom.axhline(cfg.threshold, color="black", lw=1, ls="--")
    for ax in (top, bottom):
        for t in sorted(set(df.loc[df.flagged, "turn"])):
            ax.axvline(t, color="crimson", lw=1.5, alpha=0.7)
        for k in change_points:
            ax.axvline(k, color="grey", lw=1, ls=":")
    top.set_ylabel("tracked value")
    top.set_ylim(-0.02, 1.02)
    bottom.set_ylabel("change score C_t")
    top.legend(loc="upper left", fontsize=7, ncol=5)
    top.set_title(title or f"lambda={cfg.fuse}, beta={cfg.beta}, W={cfg.window}, delta={cfg.threshold} "
                  "(red: triggers, grey: true changes)")
    return fig


def explorer(record: DriftInput, *, change_points: Sequence[int] = (), model=None,
             config: TrackerConfig | None = None):
    """Sliders for lambda, beta, W and delta that redraw :func:`plot_tracking` for ``record``.

    The figure is shown as a PNG in an ``Image`` widget (no ``Output`` capture), so the
    explorer also works when a notebook is executed headless.
    """
    import ipywidgets as W

    observations = extract_turns([t.user for t in record.turns], model)
    base = config or TrackerConfig()
    sliders = {
        "fuse": W.FloatSlider(value=base.fuse, min=0.0, max=1.0, step=0.05, description="lambda"),
        "beta": W.FloatSlider(value=base.beta, min=0.05, max=0.95, step=0.05, description="beta"),
        "window": W.IntSlider(value=base.window, min=1, max=8, description="W"),
        "threshold": W.FloatSlider(value=base.threshold, min=0.5, max=8.0, step=0.25, description="delta"),
    }
    from toolkit.viz import figure_explorer

    def draw(fuse: float, beta: float, window: int, threshold: float):
        title = (f"{record.id}: lambda={fuse:.2f} beta={beta:.2f} W={window} "
                 f"delta={threshold:.2f}")
        cfg = replace(base, fuse=fuse, beta=beta, window=window, threshold=threshold)
        return plot_tracking(observations, cfg, change_points=change_points, title=title)

    return figure_explorer(sliders, draw, rows=[["fuse", "beta"], ["window", "threshold"]])
