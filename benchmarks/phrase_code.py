"""Count the lines of hand-written phrase code in ``toolkit/rules/*.py`` (issue 14's measure).

A line counts when it holds part of:

- a string literal passed to a ``re`` function (``re.compile``, ``re.search``, ``re.sub``, ...):
  a regular expression written in code instead of a validated resource file;
- a literal set, list or tuple of two or more strings on the right of ``in`` / ``not in`` (a
  phrase list compared with the text, e.g. ``word in {"if", "when"}``).

Patterns loaded from ``toolkit/resources`` do not count: they are data with must-match /
must-not-match examples run as tests. Usage::

    python benchmarks/phrase_code.py [ROOT]      # ROOT defaults to this checkout
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

RE_FUNCS = {"compile", "search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split"}


def _str_lines(node: ast.AST) -> set[int]:
    """Line numbers spanned by the string constants under ``node``."""
    out: set[int] = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Constant) and isinstance(n.value, str):
            out.update(range(n.lineno, (n.end_lineno or n.lineno) + 1))
    return out


def phrase_lines(source: str) -> set[int]:
    """Line numbers of the phrase code in one module's source."""
    lines: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "re"
                and node.func.attr in RE_FUNCS and node.args):
            lines |= _str_lines(node.args[0])
        elif isinstance(node, ast.Compare):
            for op, comp in zip(node.ops, node.comparators, strict=True):
                if (isinstance(op, ast.In | ast.NotIn) and isinstance(comp, ast.Set | ast.List | ast.Tuple)
                        and len(comp.elts) >= 2
                        and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in comp.elts)
                        and any(any(c.isalpha() for c in e.value) for e in comp.elts)):  # type: ignore[attr-defined]
                    lines |= _str_lines(comp)
    return lines


def count(root: Path) -> dict[str, int]:
    """Phrase-code lines per module of ``root/toolkit/rules`` (top level), plus ``total``."""
    out = {}
    for path in sorted((root / "toolkit" / "rules").glob("*.py")):
        out[path.name] = len(phrase_lines(path.read_text(encoding="utf-8")))
    out["total"] = sum(out.values())
    return out


if __name__ == "__main__":
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1]
    for name, n in count(root).items():
        if n:
            print(f"{name:28s} {n:4d}")
