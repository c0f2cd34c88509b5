"""Every notebook widget redraws what it controls: drive each control, the output changes."""

from __future__ import annotations

import pandas as pd
import pytest

pytest.importorskip("ipywidgets")


def _controls(box):
    """All value-bearing controls inside a widget tree."""
    import ipywidgets as W

    out, todo = [], [box]
    while todo:
        w = todo.pop()
        if isinstance(w, W.Box):
            todo.extend(w.children)
        elif isinstance(w, W.ValueWidget) and not isinstance(w, W.HTML | W.Image | W.Label):
            out.append(w)
    return out


def _shown(box) -> object:
    """What the widget currently shows: PNG bytes of its Image, or its HTML pane."""
    import ipywidgets as W

    todo, seen = [box], []
    while todo:
        w = todo.pop(0)
        if isinstance(w, W.Box):
            todo.extend(w.children)
        elif isinstance(w, W.Image | W.HTML):
            seen.append(w.value)
    return tuple(seen)


def _other(control):
    """A different legal value for a control."""
    import ipywidgets as W

    if isinstance(control, W.SelectionSlider | W.Dropdown):
        opts = list(control.options)
        vals = [o[1] if isinstance(o, tuple) else o for o in opts]
        return vals[-1] if control.value != vals[-1] else vals[0]
    if isinstance(control, W.Text):
        return "Never push to main without a review."
    lo, hi = control.min, control.max
    return hi if control.value != hi else lo


def assert_every_control_redraws(box):
    controls = _controls(box)
    assert controls, "widget has no controls"
    for c in controls:
        before = _shown(box)
        assert before and all(v not in ("", b"") for v in before), "nothing shown"
        c.value = _other(c)
        assert _shown(box) != before, f"moving {c.description!r} changed nothing"


def test_budget_explorer_redraws():
    from toolkit.gating.plots import budget_explorer

    rows = [{"benchmark": "S", "policy": p, "budget": b, "seed": 0, "micro": m, "macro": m + 1}
            for b in (60, 120, 250) for p, m in (("Universal", b / 5), ("Oracle", 90.0))]
    assert_every_control_redraws(budget_explorer(pd.DataFrame(rows)))


def test_drift_explorer_redraws():
    from toolkit.datasets.jsonl import read_jsonl
    from toolkit.drift.explorer import explorer
    from toolkit.paper import fixtures_dir
    from toolkit.records import DriftInput

    rec = next(iter(read_jsonl(fixtures_dir() / "drift" / "schedules.jsonl", DriftInput)))
    assert_every_control_redraws(explorer(rec, change_points=[3]))


def test_table_browser_redraws_and_reads_well():
    from toolkit.viz import MISSING, table_browser

    loop = pd.DataFrame({"user": ["a", "a", "b"], "feedback": ["one\ntwo", "x", "y"],
                         "scope": ["global", None, float("nan")]})
    box = table_browser(loop, "user")
    assert "one<br>two" in box.html.value and "\\n" not in box.html.value
    assert MISSING in box.html.value and "NaN" not in box.html.value and "None" not in box.html.value
    assert_every_control_redraws(box)


def test_admission_explorer_redraws():
    from toolkit.rules.admission_widget import admission_explorer

    assert_every_control_redraws(admission_explorer())


def test_version_viewer_redraws():
    from toolkit.llm import Gateway
    from toolkit.rules.library_widget import version_viewer
    from toolkit.rules.longrun import simulate_longrun

    _, lib = simulate_longrun(Gateway().model("offline"), sessions=12, seed=0)
    assert len(lib.versions) > 2
    assert_every_control_redraws(version_viewer(lib))


def test_delivery_browser_redraws():
    from toolkit.paper import fixtures_dir
    from toolkit.profiles import load_profiles
    from toolkit.simuser.browser import delivery_browser
    from toolkit.simuser.delivery import load_deliveries

    root = fixtures_dir().parent
    profiles = load_profiles(root / "profiles")
    deliveries = load_deliveries(fixtures_dir() / "simuser" / "deliveries.jsonl")
    box = delivery_browser(profiles, deliveries, None, seed=0)
    assert_every_control_redraws(box)
