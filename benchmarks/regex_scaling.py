"""Find regular expressions in toolkit/ whose time grows faster than the text (ReDoS hunting).

    python benchmarks/regex_scaling.py [--small 4000] [--big 16000] [--ratio 8] [--path toolkit]

Every pattern literal the AST shows (``re.compile("...")``, ``re.search("...", ...)`` and the
other ``re`` functions, with their literal flags) is run with ``finditer`` over adversarial
texts (long runs of one letter, spaces, digits, backticks, punctuation, newlines, ...) at two
sizes. Linear work grows by ``big/small`` (4x by default); quadratic by its square (16x). A
pattern whose ratio passes ``--ratio`` and takes over 20 ms on the big text is printed with
its file and line. Patterns built at run time (f-strings, tables) are not seen: the 1 MB
test in tests/test_input_scaling.py covers those end to end.
"""

from __future__ import annotations

import argparse
import ast
import re
import time
from pathlib import Path

SHAPES = ["a", " ", "1", "`", "!?.,;:", "x\n", '"x ', "a.", "a-", "a ", "keep it short and never ",
          "don't  use \"tabs\" in *.py files, never! ", "\n\n", "a/", "*", "#", "|", "(", "<", "_"]
FUNCS = {"compile", "search", "match", "fullmatch", "findall", "finditer", "sub", "subn", "split"}


def _flags(node: ast.AST | None) -> int:
    if node is None:
        return 0
    try:
        return int(eval(compile(ast.Expression(node), "<flags>", "eval"), {"re": re}))  # noqa: S307
    except Exception:  # noqa: BLE001 - flags we cannot evaluate statically
        return 0


def literals(root: Path) -> list[tuple[str, int, str, int]]:
    out = []
    for f in sorted(root.rglob("*.py")):
        try:
            tree = ast.parse(f.read_text(encoding="utf-8"))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in FUNCS and isinstance(node.func.value, ast.Name)
                    and node.func.value.id == "re" and node.args):
                continue
            pat = node.args[0]
            if not (isinstance(pat, ast.Constant) and isinstance(pat.value, str)):
                continue
            fl = next((k.value for k in node.keywords if k.arg == "flags"), None)
            if fl is None:
                pos = {"compile": 1, "search": 2, "match": 2, "fullmatch": 2, "findall": 2, "finditer": 2,
                       "split": 3, "sub": 4, "subn": 4}[node.func.attr]
                fl = node.args[pos] if len(node.args) > pos else None
            out.append((str(f), node.lineno, pat.value, _flags(fl)))
    return out


def _time(rx: re.Pattern, text: str, budget: float) -> float:
    t0 = time.perf_counter()
    for _ in rx.finditer(text):
        if time.perf_counter() - t0 > budget:
            break
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", type=int, default=4000)
    ap.add_argument("--big", type=int, default=16000)
    ap.add_argument("--ratio", type=float, default=8.0)
    ap.add_argument("--path", default=str(Path(__file__).resolve().parent.parent / "toolkit"))
    args = ap.parse_args(argv)
    found = 0
    for f, line, pat, fl in literals(Path(args.path)):
        try:
            rx = re.compile(pat, fl)
        except re.error:
            continue
        worst = None
        for shape in SHAPES:
            big = (shape * (args.big // len(shape) + 1))[: args.big]
            small = big[: args.small]
            tb = _time(rx, big, 5.0)
            if tb < 0.02:
                continue
            ts = max(_time(rx, small, 5.0), 1e-5)
            if tb / ts > args.ratio and (worst is None or tb > worst[1]):
                worst = (shape, tb, tb / ts)
        if worst:
            found += 1
            print(f"{f}:{line} ratio {worst[2]:.0f} ({worst[1]:.2f}s on {args.big} x {worst[0]!r}): {pat[:120]}")
    print(f"{found} super-linear pattern(s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
