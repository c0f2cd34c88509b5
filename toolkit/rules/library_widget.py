"""A notebook widget: one library version side by side with the next, changes highlighted."""

from __future__ import annotations

import html

from toolkit.rules.library import LibraryVersion, RuleLibrary

_COLOURS = {"added": "#e3f4e1", "changed": "#fff4d6", "removed": "#fbe3e3"}


def _rule_rows(version: LibraryVersion, marks: dict[str, str]) -> str:
    rows = []
    for r in version.rules:
        if r.state != "current" and r.id not in marks:
            continue
        bg = _COLOURS.get(marks.get(r.id, ""), "transparent")
        extra = "; ".join(
            [*(f"when {c}" for c in r.conditions), *(f"except {e}" for e in r.exceptions)]
        )
        state = "" if r.is_current else f" ({r.state})"
        rows.append(
            f"<tr style='background:{bg}'><td>{html.escape(r.id)}{state}</td>"
            f"<td>{html.escape(r.behavior)}</td><td>{html.escape(r.scope)}</td>"
            f"<td>{html.escape(extra)}</td><td>{r.status}</td><td>{r.revision}</td></tr>"
        )
    head = (
        "<tr><th>id</th><th>requirement</th><th>scope</th><th>conditions / exceptions</th>"
        "<th>status</th><th>rev</th></tr>"
    )
    return f"<table>{head}{''.join(rows) or '<tr><td colspan=6>(empty)</td></tr>'}</table>"


def version_pair_html(library: RuleLibrary, number: int) -> str:
    """HTML for version ``number`` beside version ``number + 1`` (or itself when it is last)."""
    a = library.version(number)
    b = library.version(min(number + 1, len(library.versions) - 1))
    d = a.diff(b)
    marks = {i: k for k, ids in d.items() for i in ids}
    note = html.escape(b.note or "")
    return (
        "<div style='display:flex;gap:2em'>"
        f"<div><h4>version {a.number}</h4>{_rule_rows(a, {})}</div>"
        f"<div><h4>version {b.number} <small>{note}</small></h4>{_rule_rows(b, marks)}</div>"
        "</div>"
    )


def version_viewer(library: RuleLibrary, start: int = 0):
    """An ipywidgets slider over versions showing each one beside the next."""
    import ipywidgets as w

    last = max(0, len(library.versions) - 2)
    slider = w.IntSlider(value=min(start, last), min=0, max=last, description="version")
    out = w.HTML(version_pair_html(library, slider.value))

    def show(change) -> None:
        out.value = version_pair_html(library, change["new"])

    slider.observe(show, names="value")
    return w.VBox([slider, out])
