"""Every table a notebook shows marks a missing value one way: ``toolkit.viz.MISSING``.

pandas prints a missing float as ``NaN``, a missing nullable integer as ``<NA>`` and a missing
object as ``None``, so one table could show two or three markers for "no value" (and integer
counts as floats beside them). Notebooks show tables through :func:`toolkit.viz.readable`; this
test reads the stored outputs of every notebook and fails on a table that shows ``NaN`` or
``<NA>``, and on a table pandas cut short (more rows than ``display.max_rows``: it prints the
head and tail and a ``[N rows x M columns]`` line, so a reader loses the middle rows unawares).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))
#: pandas' own markers for a missing value, as whole words of a table's text
PANDAS_MISSING = re.compile(r"(?<![\w<])(NaN|<NA>)(?![\w>])")
#: the line pandas prints under a table it has cut short
PANDAS_CUT = re.compile(r"^\[(\d+) rows x (\d+) columns\]$", re.MULTILINE)


def table_problems(nb_path: Path) -> list[str]:
    """Cells whose stored table (an output with an HTML table) prints NaN or <NA>, or is cut short."""
    nb = json.loads(nb_path.read_text(encoding="utf-8"))
    problems = []
    for i, cell in enumerate(nb["cells"]):
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if "<table" not in "".join(data.get("text/html", "")):
                continue
            text = "".join(data.get("text/plain", ""))
            found = sorted(set(PANDAS_MISSING.findall(text)))
            if found:
                problems.append(f"cell {i}: a table shows {' and '.join(found)}")
            for rows, _ in PANDAS_CUT.findall(text):
                problems.append(f"cell {i}: a table of {rows} rows is shown cut short")
    return problems


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_tables_show_one_missing_value_marker(nb_path: Path) -> None:
    assert table_problems(nb_path) == []


def _notebook(frame, path: Path) -> Path:
    """A one-cell notebook at ``path`` storing ``frame`` as a cell's table (under the pandas
    display options in force)."""
    nb = {"cells": [{"cell_type": "code", "source": ["df"], "metadata": {}, "outputs": [
        {"output_type": "execute_result", "metadata": {},
         "data": {"text/plain": [repr(frame)], "text/html": [frame.to_html()]}}]}]}
    path.write_text(json.dumps(nb), encoding="utf-8")
    return path


def test_checker_catches_pandas_missing_markers(tmp_path: Path) -> None:
    import pandas as pd

    from toolkit.viz import MISSING, readable

    df = pd.DataFrame({"k": [1, None], "n": pd.array([3, None], dtype="Int64"), "s": ["a", None]})
    assert table_problems(_notebook(df, tmp_path / "t.ipynb")) == ["cell 0: a table shows <NA> and NaN"]
    shown = readable(df)
    assert table_problems(_notebook(shown, tmp_path / "t.ipynb")) == []
    assert list(shown["k"]) == [1, MISSING] and list(shown["s"]) == ["a", MISSING]


def test_checker_catches_a_table_cut_short(tmp_path: Path) -> None:
    import pandas as pd

    df = pd.DataFrame({"n": range(80)})
    for max_rows, expected in ((60, ["cell 0: a table of 80 rows is shown cut short"]), (None, [])):
        with pd.option_context("display.max_rows", max_rows):
            path = _notebook(df, tmp_path / "t.ipynb")
        assert table_problems(path) == expected


def test_show_whole_displays_every_row_and_with_full_text_every_character(capsys) -> None:
    import pandas as pd

    from toolkit.viz import show_whole

    long = "a metric name longer than pandas' fifty-character column width, " * 2
    df = pd.DataFrame({"metric": [long] * 80, "n": range(80)})
    show_whole(df)
    shown = capsys.readouterr().out
    assert not PANDAS_CUT.search(shown) and "\n40 " in shown and "\n79 " in shown and long not in shown
    show_whole(df, full_text=True)
    assert long.strip() in capsys.readouterr().out
