"""Leave-one-batch-out: validation cases retrieved from development evidence for element-less rules.

For every development compile set, the compiler's retrieved cases (``toolkit.rules.checks._retrieved``)
come only from the *other* development judge sets (the set's own batch left out), and the outcome is
counted by gold class: uncheckable rules declined, checkable rules validated, computable rules
given a programmatic check; once without retrieved cases and once per (TOP_RULES, MIN_SIMILARITY).
The checker is the development judge (fit on all development judge sets; the retrieved items are
in its training in both arms, the rule being compiled is not a judge rule).

    PYTHONPATH=. python benchmarks/checks_retrieved_cases.py [--no-off] [top:min_sim ...]
"""

from __future__ import annotations

import sys

from toolkit.diagnostics.checks import batch_folders, load_compile_set
from toolkit.paper import fixtures_dir
from toolkit.rules.checks import _retrieved
from toolkit.rules.checks._api import compile_rules
from toolkit.splits import require_role, role_of


def sets() -> list[tuple[str, list, dict[str, str]]]:
    base = fixtures_dir() / "checks"
    out = []
    for folder, stem in [(base, "dev_compile"), *[(f, "compile") for f in batch_folders(base)]]:
        if role_of(folder / f"{stem}.jsonl") != "development":
            continue
        require_role(folder / f"{stem}.jsonl", "fit")
        recs, gold = load_compile_set(folder, stem)
        out.append((folder.name if folder != base else "dev", recs, gold))
    return out


def score(arm: str) -> dict[str, list[int]]:
    tot = {"uncheckable": [0, 0], "checkable": [0, 0], "computable": [0, 0]}
    for name, recs, gold in sets():
        _retrieved.EXCLUDE = frozenset({name})
        comps = compile_rules([r.rule for r in recs])
        per = {"uncheckable": [0, 0], "checkable": [0, 0], "computable": [0, 0]}
        for rec, c in zip(recs, comps, strict=True):
            g = gold[rec.id]
            if g not in per:
                continue
            ok = {"uncheckable": c.outcome in ("guidance", "inactive"),
                  "checkable": c.outcome in ("semantic", "programmatic"),
                  "computable": c.outcome == "programmatic"}[g]
            per[g][0] += int(ok)
            per[g][1] += 1
        for k in tot:
            tot[k][0] += per[k][0]
            tot[k][1] += per[k][1]
        print(arm, name, {k: f"{a}/{b}" for k, (a, b) in per.items()}, flush=True)
    print(arm, "TOTAL", {k: f"{a}/{b}" for k, (a, b) in tot.items()}, flush=True)
    return tot


def main(argv: list[str]) -> None:
    if "--no-off" in argv:
        argv = [a for a in argv if a != "--no-off"]
    else:
        _retrieved.ENABLED = False
        score("off")
    _retrieved.ENABLED = True
    for arg in argv or [f"{_retrieved.TOP_RULES}:{_retrieved.MIN_SIMILARITY}"]:
        top, sim = arg.split(":")
        _retrieved.TOP_RULES, _retrieved.MIN_SIMILARITY = int(top), float(sim)
        _retrieved._pool.cache_clear()
        score(f"top{top}/sim{sim}")


if __name__ == "__main__":
    main(sys.argv[1:])
