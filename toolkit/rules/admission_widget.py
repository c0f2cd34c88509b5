"""An ipywidgets explorer: type a correction, see the admission decision and its grounding."""

from __future__ import annotations

import html
from typing import Any

from toolkit.rules.admission import Admission, admit_text


def render_admission(a: Admission) -> str:
    """An HTML summary of one admission (decision, scope, activation, exceptions, quotes)."""

    def esc(v: Any) -> str:
        return html.escape("-" if v in (None, "", ()) else str(v))

    quotes = "".join(f"<li><code>{html.escape(q)}</code></li>" for q in a.quotes) or "<li>-</li>"
    rows = [
        ("decision", a.decision),
        ("reason", a.reason),
        ("scope", a.scope),
        ("project", a.project),
        ("conditional", a.conditional),
        ("activation", a.activation),
        ("exceptions", "; ".join(a.exceptions)),
        ("behavior", a.behavior),
        ("rejected", a.rejected),
        ("acceptable", a.acceptable),
    ]
    body = "".join(
        f"<tr><th style='text-align:left'>{k}</th><td>{esc(v)}</td></tr>" for k, v in rows
    )
    return f"<table>{body}</table><b>quotes</b><ul>{quotes}</ul>"


def admission_explorer(
    initial: str = "From now on, in this repo, run the linter before you "
    "commit unless the change only touches docs.",
    model: Any = None,
):
    """A Text box and an HTML pane that re-admit the typed correction on every edit."""
    import ipywidgets as widgets

    box = widgets.Text(
        value=initial,
        description="correction",
        continuous_update=False,
        layout=widgets.Layout(width="95%"),
    )
    out = widgets.HTML(value=render_admission(admit_text(initial, model=model)))

    def _update(change: dict[str, Any]) -> None:
        text = str(change["new"]).strip()
        out.value = (
            render_admission(admit_text(text, model=model)) if text else "<i>type a message</i>"
        )

    box.observe(_update, names="value")
    return widgets.VBox([box, out])
