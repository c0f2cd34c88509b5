"""Seaborn figures shared by diagnostics and notebooks. No backend is forced at import time.

Figures are built outside pyplot (so CLI runs and loops leak nothing) as a Figure subclass that
displays itself: ``_repr_png_`` makes a figure returned by a notebook cell (or passed to
``display``) show as a PNG whatever ran before, even when pyplot was never imported; its plain
text names its titles instead of ``<Figure size ...>``, so a stored notebook never reads as an
empty figure.
Widgets show figures as PNG bytes in an ``Image`` widget (:func:`image_widget`), which redraws
the same way in JupyterLab, in a headless run and under test.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd

__all__ = ["new_figure", "figure_text", "png_bytes", "image_widget",
           "figure_explorer", "readable", "show_whole", "table_browser", "MISSING", "ours_vs_paper",
           "heatmap", "lines"]


def _plt():
    import matplotlib.pyplot as plt

    return plt


def figure_text(fig: Any) -> str:
    """A figure's plain-text stand-in: its titles, e.g. ``[figure: S, budget 120 | S, budget 500]``."""
    titles = [fig.get_suptitle()] if getattr(fig, "get_suptitle", None) and fig.get_suptitle() else []
    titles += [ax.get_title() for ax in fig.axes if ax.get_title()]
    return f"[figure: {' | '.join(titles)}]" if titles else f"[figure: {len(fig.axes)} panel(s)]"


def _figure_class():
    """:class:`matplotlib.figure.Figure` that displays itself (built on first use, so importing
    this module does not import matplotlib)."""
    global _FIGURE
    if _FIGURE is None:
        from matplotlib.figure import Figure

        class ToolkitFigure(Figure):
            """A Figure that shows as a PNG in any IPython display and names its titles as text."""

            def _repr_png_(self) -> bytes:
                return png_bytes(self, dpi=int(self.dpi))

            def _repr_pretty_(self, p: Any, cycle: bool) -> None:
                p.text(figure_text(self))

        _FIGURE = ToolkitFigure
    return _FIGURE


_FIGURE: Any = None


def new_figure(width: float = 6.0, height: float = 4.0):
    """A matplotlib Figure not registered with pyplot (safe to create in loops and CLI runs).

    It carries its own ``_repr_png_``, so a notebook cell that returns it shows a picture
    whatever ran before (no pyplot or inline backend needed)."""
    return _figure_class()(figsize=(width, height), layout="constrained")


def png_bytes(fig: Any, dpi: int = 90) -> bytes:
    """The figure as PNG bytes (tight bounding box), for ``Image`` widgets and files."""
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    return buf.getvalue()


def image_widget():
    """An ``Image`` widget that keeps a figure's aspect ratio (never stretched by its box)."""
    import ipywidgets as W

    return W.Image(format="png", layout=W.Layout(width="auto", height="auto", max_width="100%",
                                                 align_self="flex-start",
                                                 object_fit="contain"))


def figure_explorer(controls: dict[str, Any], draw: Callable[..., Any], *,
                    rows: Sequence[Sequence[str]] | None = None):
    """Controls that redraw a figure: ``draw(**values)`` returns a Figure, shown as a PNG.

    Every control's ``value`` change redraws (the widget's ``redraw`` attribute does it by
    hand, for tests). ``rows`` groups control names into lines (default: one line).
    """
    import ipywidgets as W

    image = image_widget()

    def redraw(_change: object = None) -> None:
        image.value = png_bytes(draw(**{k: c.value for k, c in controls.items()}))

    for c in controls.values():
        c.observe(redraw, names="value")
    redraw()
    lines_ = [W.HBox([controls[k] for k in r]) for r in (rows or [list(controls)])]
    box = W.VBox([*lines_, image])
    box.redraw = redraw  # type: ignore[attr-defined]
    box.image = image  # type: ignore[attr-defined]
    return box


def ours_vs_paper(df: pd.DataFrame, *, metric: str = "metric", title: str = ""):
    """Grouped bars of ``ours`` beside ``paper`` per metric, with the table's own CI whiskers when
    present and each metric has one row. A metric with several rows (batches, data roles) shows
    their mean and no whisker: seaborn's default whisker there would be a random bootstrap over
    the rows, a figure that changed from run to run and was not the table's interval."""
    import numpy as np
    import seaborn as sns

    fig = new_figure(max(5.0, 1.1 * df[metric].nunique()), 3.6)
    ax = fig.subplots()
    long = df.melt(id_vars=[metric], value_vars=[c for c in ("ours", "paper") if c in df], var_name="source")
    sns.barplot(data=long, x=metric, y="value", hue="source", ax=ax, palette=["#4C72B0", "#BBBBBB"],
                errorbar=None)
    if {"ci_low", "ci_high"} <= set(df.columns) and df[metric].is_unique:
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
    """A seaborn line plot with markers and the spread as a band.

    With more than :data:`LEGEND_INSIDE` series the legend goes to the right of the axes and the
    figure grows with it (inside, a long legend squeezed the axes to nothing)."""
    import seaborn as sns

    n = df[hue].nunique() if hue is not None else 0
    fig = new_figure(9.5, max(4.0, 0.28 * n)) if n > LEGEND_INSIDE else new_figure()
    ax = fig.subplots()
    sns.lineplot(data=df, x=x, y=y, hue=hue, hue_order=order, marker="o", errorbar=errorbar, ax=ax)
    if logx:
        ax.set_xscale("log")
    if n > LEGEND_INSIDE:
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize="small", frameon=False)
    ax.set_title(title)
    return fig


#: most series a line plot keeps its legend inside the axes for
LEGEND_INSIDE = 6


#: the one marker for a missing value in every table a notebook shows
MISSING = "—"


def readable(df: pd.DataFrame, digits: int | None = 3) -> pd.DataFrame:
    """A table as a reader should see it: whole-number columns as integers, floats rounded to
    ``digits``, and every missing value (None, NaN, <NA>) shown as :data:`MISSING`."""
    import numpy as np

    out = df.copy()
    for col in out.columns:
        s = out[col]
        if pd.api.types.is_bool_dtype(s) or not pd.api.types.is_numeric_dtype(s):
            out[col] = s.astype(object).where(s.notna(), MISSING)
            continue
        vals = s.dropna().to_numpy(dtype=float)
        if len(vals) and np.all(np.isfinite(vals)) and np.all(vals == np.round(vals)):
            s = s.astype("Int64")
        elif digits is not None and pd.api.types.is_float_dtype(s):
            s = s.round(digits)
        out[col] = s.astype(object).where(s.notna(), MISSING)
    return out


def show_whole(df: pd.DataFrame, *, full_text: bool = False, digits: int | None = 3) -> None:
    """Display :func:`readable` ``df`` with every row (and, with ``full_text``, every character of
    every cell). pandas shows the head and tail of a table longer than ``display.max_rows`` and
    hides the middle rows without a word; the roles and per-batch tables grow with each batch
    scored, so they are shown whole."""
    from IPython.display import display

    options: list[Any] = ["display.max_rows", None]
    if full_text:
        options += ["display.max_colwidth", None]
    with pd.option_context(*options):
        display(readable(df, digits))


def table_browser(df: pd.DataFrame, by: str, *, columns: Sequence[str] | None = None):
    """A dropdown over the values of ``by`` showing the matching rows as an HTML table
    (:func:`readable`, line breaks kept). The widget's ``html`` is the pane it redraws."""
    import html as _html

    import ipywidgets as W

    cols = list(columns) if columns is not None else [c for c in df.columns if c != by]
    pick = W.Dropdown(options=sorted(df[by].dropna().unique()), description=by)
    pane = W.HTML()

    def show(_change: object = None) -> None:
        sub = readable(df[df[by] == pick.value][cols])
        body = sub.map(lambda v: _html.escape(str(v)).replace("\n", "<br>"))
        pane.value = body.to_html(index=False, escape=False)

    pick.observe(show, names="value")
    show()
    box = W.VBox([pick, pane])
    box.html = pane  # type: ignore[attr-defined]
    return box
