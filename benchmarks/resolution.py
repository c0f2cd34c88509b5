"""Time per correction as the rule library grows (2/47/197/497 rules), offline resolver.

Prints, per library size, the median and 90th-percentile milliseconds per correction (index
build + retrieval + decision) over the held-out cases, and the ratio to the 2-rule library.
Quote ratios, not absolute times: machines differ by +-30% between runs.

    python benchmarks/resolution.py [--repeats N] [--sizes 2,47,197,497]
"""

from __future__ import annotations

import argparse
import statistics
import time

from toolkit.rules.distractors import SIZES, distractor_pool, grow_library
from toolkit.rules.resolution import resolve_offline
from toolkit.rules.resolution_cues import segment_cues
from toolkit.rules.resolution_eval import load_cases


def main() -> None:
    """Measure and print the table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3, help="timed passes per size (default 3)")
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)), help="library sizes")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    cases, _ = load_cases("heldout")
    pool = distractor_pool()
    resolve_offline(cases[0])  # warm caches (lexicon, background term counts)
    print(f"{'rules':>6} {'cases':>6} {'median ms':>10} {'p90 ms':>8} {'x vs first':>10}")
    base = None
    for size in sizes:
        grown = [grow_library(c, size, 0, pool=pool) for c in cases]
        times = []
        for _ in range(args.repeats):
            segment_cues.cache_clear()  # each correction is parsed afresh; rule texts stay cached
            for g in grown:
                t0 = time.perf_counter()
                resolve_offline(g)
                times.append((time.perf_counter() - t0) * 1000)
        med = statistics.median(times)
        p90 = statistics.quantiles(times, n=10)[-1]
        base = base or med
        print(f"{size:>6} {len(grown):>6} {med:>10.2f} {p90:>8.2f} {med / base:>10.1f}")


if __name__ == "__main__":
    main()
