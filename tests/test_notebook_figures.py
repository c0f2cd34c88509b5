"""Every figure a notebook shows is stored as a picture, never as ``<Figure size ...>`` text.

A figure built outside pyplot only displays when something registered a PNG formatter for
it; without one a cell stores the text ``<Figure size 800x380 with 1 Axes>``. These tests
read the stored outputs of every notebook, and check that a ``toolkit.viz`` figure displays
itself (so the result does not depend on what ran before in the kernel).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))
#: a cell that draws or shows a figure
FIGURE_SOURCE = re.compile(r"\.figures\[|\bsns\.|\bplot_tracking\(|\bnew_figure\(|\.plot\(|"
                           r"\bax\.|\bfig\b")
WIDGET = "application/vnd.jupyter.widget-view+json"

#: notebooks owned by other branches whose stored outputs predate the toolkit.viz fix: they
#: need one re-execution (python -m toolkit._nbexec); strict xfail fails once that is done,
#: so the entry is then removed
PENDING_REEXECUTION: set[str] = set()


def figure_problems(nb_path: Path) -> list[str]:
    """Figure cells whose stored output is text only, and outputs that read ``<Figure size``."""
    nb = json.loads(nb_path.read_text(encoding="utf-8"))
    problems = []
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code":
            continue
        bundles = [o.get("data", {}) for o in cell.get("outputs", [])
                   if o["output_type"] in ("display_data", "execute_result")]
        for b in bundles:
            if "<Figure size" in "".join(b.get("text/plain", "")):
                problems.append(f"cell {i}: an output reads '<Figure size ...>'")
        src = "".join(cell["source"])
        shows_something = any("image/png" in b or WIDGET in b for b in bundles)
        if FIGURE_SOURCE.search(src) and bundles and not shows_something and not any(
                "text/html" in b for b in bundles):
            problems.append(f"cell {i}: draws a figure but stores no image")
    return problems


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_figures_are_stored_as_pictures(nb_path, request):
    if nb_path.name in PENDING_REEXECUTION:
        request.applymarker(pytest.mark.xfail(
            strict=True, reason="stored outputs predate the toolkit.viz display fix; re-execute"))
    assert figure_problems(nb_path) == []


def test_checker_catches_text_only_figures(tmp_path):
    nb = {"cells": [{"cell_type": "code", "source": ['res.figures["x"]'], "metadata": {},
                     "outputs": [{"output_type": "execute_result", "metadata": {},
                                  "data": {"text/plain": ["<Figure size 800x380 with 1 Axes>"]}}]}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    p = tmp_path / "bad.ipynb"
    p.write_text(json.dumps(nb), encoding="utf-8")
    assert len(figure_problems(p)) == 2


def test_viz_figures_display_without_pyplot():
    """In a fresh IPython shell where pyplot never ran, a toolkit figure formats as PNG."""
    pytest.importorskip("IPython")
    from IPython.core.interactiveshell import InteractiveShell

    from toolkit.viz import new_figure

    shell = InteractiveShell.instance()
    try:
        fig = new_figure(3, 2)
        fig.subplots().set_title("demo")
        data, _ = shell.display_formatter.format(fig)
        assert data["image/png"][:4] in (b"\x89PNG", "iVBO")  # bytes or base64
        assert data["text/plain"] == "[figure: demo]"
    finally:
        InteractiveShell.clear_instance()


def test_ours_vs_paper_is_the_same_picture_each_time_with_repeated_metrics():
    """Several rows per metric (batches, data roles): bars show their mean with no whisker, so the
    picture does not depend on a random bootstrap, and the width follows the metrics, not the rows."""
    import pandas as pd

    from toolkit.viz import ours_vs_paper, png_bytes

    df = pd.DataFrame({"metric": ["a", "b"] * 20, "ours": [0.5 + 0.01 * i for i in range(40)],
                       "paper": [0.7, 0.8] * 20, "ci_low": 0.4, "ci_high": 0.9})
    first, second = ours_vs_paper(df), ours_vs_paper(df)
    assert png_bytes(first) == png_bytes(second)
    assert first.get_size_inches()[0] == 5.0
