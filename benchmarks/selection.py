"""Time per task for offline rule selection as the library grows (47 / 497 / 5,000 rules).

For each size, the library (the development library plus distractors, made unique by a context
phrase) is selected against every development task by a fresh selector: the first task embeds the
library (cold), later tasks reuse the rule vectors (warm: a library version is embedded once and
used for a whole turn or more). Prints milliseconds per task and the ratio to the smallest size.
Quote ratios, not absolute times: machines differ by +-30% between runs.

    python benchmarks/selection.py [--sizes 47,497,5000]
"""

from __future__ import annotations

import argparse
import statistics
import time

from toolkit.diagnostics.selection import load_library, load_tasks
from toolkit.paper import fixtures_dir
from toolkit.records import Rule
from toolkit.rules.checks import EmbeddingSelector
from toolkit.rules.checks._selection import default_selector
from toolkit.rules.distractors import distractor_pool

CONTEXTS = ("", " in Python services", " in the web frontend", " in data pipelines", " in CLI tools",
            " in infrastructure code", " in notebooks", " in the mobile app", " in shared libraries",
            " in database code")


def library(size: int) -> list[Rule]:
    base = load_library(fixtures_dir() / "selection" / "dev_library.jsonl")
    out = list(base)
    pool = distractor_pool()
    k = 0
    while len(out) < size:
        p = pool[k % len(pool)]
        ctx = CONTEXTS[(k // len(pool)) % len(CONTEXTS)]
        out.append(p.model_copy(update={"id": f"b{k:05d}", "behavior": p.behavior + ctx}))
        k += 1
    return out[:size]


def main() -> None:
    """Measure and print the table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="47,497,5000", help="library sizes")
    args = ap.parse_args()
    tasks, _ = load_tasks(fixtures_dir() / "selection", "dev_tasks")
    fitted = default_selector()  # fit once, or read the fit from the disk cache
    emb = fitted._embedder()  # load the embedder before timing (a cached fit does not carry it)
    print(f"{'rules':>6} {'tasks':>6} {'cold ms':>9} {'warm median ms':>15} {'warm p90 ms':>12} {'x vs first':>10}")
    first = None
    for size in (int(s) for s in args.sizes.split(",")):
        lib = library(size)
        sel = EmbeddingSelector()
        sel._emb = emb
        sel.model_, sel.threshold_ = fitted.model_, fitted.threshold_
        times = []
        for t in tasks:
            t0 = time.perf_counter()
            sel.select_many([(t["task"], t.get("instruction"), lib)])
            times.append((time.perf_counter() - t0) * 1000)
        cold, warm = times[0], times[1:]
        med = statistics.median(warm)
        p90 = statistics.quantiles(warm, n=10)[-1]
        first = first or med
        print(f"{size:>6} {len(tasks):>6} {cold:>9.0f} {med:>15.1f} {p90:>12.1f} {med / first:>10.1f}")


if __name__ == "__main__":
    main()
