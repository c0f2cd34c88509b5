"""A diagnostic's result: tables (ours beside the paper's), figures, prose; written to a folder."""

from __future__ import annotations

import io
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from toolkit.datasets.jsonl import atomic_write_text


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return "" if math.isnan(v) else f"{v:.3f}"
    return "" if v is None else str(v)


def _shown(df: pd.DataFrame) -> pd.DataFrame:
    """Cells as text: whole-number columns as integers (a count stored as float because of a
    missing cell prints ``82``, not ``82.000``), other floats to 3 decimals, and every missing
    value (None, NaN, <NA>) as one marker (:func:`toolkit.viz.readable`)."""
    from toolkit.viz import readable

    return readable(df, digits=None).map(_fmt)


def markdown_table(df: pd.DataFrame) -> str:
    """A GitHub markdown table (no extra dependency), shown as :func:`_shown` says."""
    cols = [str(c) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for row in _shown(df).itertuples(index=False):
        lines.append("| " + " | ".join(v.replace("|", "\\|") for v in row) + " |")
    return "\n".join(lines)


def text_table(df: pd.DataFrame) -> str:
    """A fixed-width text table for the terminal, shown as :func:`_shown` says."""
    with pd.option_context("display.max_rows", 200, "display.max_columns", 50, "display.width", 200):
        return _shown(df).to_string(index=False)


@dataclass
class Result:
    """What a diagnostic returns. Tables compare ours with the paper's figures where there are any."""

    name: str
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    figures: dict[str, Any] = field(default_factory=dict)
    text: list[str] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)

    def write(self, out_dir: str | Path) -> list[Path]:
        """Write CSV tables, PNG figures and report.md into ``out_dir`` (atomically, file by file)."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        written = []
        for tname, df in self.tables.items():
            buf = io.StringIO()
            df.to_csv(buf, index=False, float_format="%.6g", lineterminator="\n")
            atomic_write_text(out / f"{tname}.csv", buf.getvalue())
            written.append(out / f"{tname}.csv")
        for fname, fig in self.figures.items():
            path = out / f"{fname}.png"
            tmp = out / f".{fname}.png.tmp"
            fig.savefig(tmp, format="png", dpi=110, bbox_inches="tight", metadata={"Software": None})
            tmp.replace(path)
            written.append(path)
        atomic_write_text(out / "report.md", self.report())
        written.append(out / "report.md")
        return written

    def report(self) -> str:
        parts = [f"# {self.name}\n"]
        parts.extend(t + "\n" for t in self.text if t)
        for tname, df in self.tables.items():
            parts.append(f"## {tname}\n\n{markdown_table(df)}\n")
        for fname in self.figures:
            parts.append(f"![{fname}]({fname}.png)\n")
        return "\n".join(parts)

    def summary(self) -> str:
        """Every table as text, for the terminal."""
        out = [f"== {self.name} =="]
        for tname, df in self.tables.items():
            out.append(f"-- {tname} --")
            out.append(text_table(df))
        return "\n".join(out)

    def _repr_markdown_(self) -> str:
        return self.report()


def compare_rows(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """Table with columns metric, ours, paper (and n, ci_low, ci_high when given)."""
    cols = ["metric", "ours", "paper", "n", "ci_low", "ci_high"]
    df = pd.DataFrame(rows)
    return df[[c for c in cols if c in df.columns] + [c for c in df.columns if c not in cols]]
