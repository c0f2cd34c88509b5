"""The end-to-end protocol's cost, side by side per memory method (offline agent, offline users).

    python benchmarks/protocol.py [--quick] [--user coder-maya]

Runs one coding group (learning tasks, frozen test tasks, held-out access tasks) per method in
one process, after a warm-up that loads the embedder and fits the selector, and prints CPU seconds
and wall seconds per group with each method's ratio to ``no_memory``; then the whole full-scale
plan's CPU time estimated from the per-method costs. Quote ratios: absolute times move with machine
load (this machine is shared). Target: the full-scale offline run within ~2 minutes of CPU on 2 cores.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--user", default="coder-maya")
    args = ap.parse_args(argv)
    from toolkit.memory import METHODS
    from toolkit.protocol import ProtocolConfig, plan, runner

    cfg = ProtocolConfig(quick=args.quick)
    run = runner(cfg)
    run({"benchmark": "coding", "user": args.user, "method": "tellonce"})  # warm-up: embedder, selector
    cost: dict[str, tuple[float, float]] = {}
    for m in METHODS:
        c0, w0 = time.process_time(), time.perf_counter()
        run({"benchmark": "coding", "user": args.user, "method": m})
        cost[m] = (time.process_time() - c0, time.perf_counter() - w0)
    base = cost["no_memory"][0] or 1e-9
    print(f"{'method':<18} {'cpu_s':>7} {'wall_s':>7} {'cpu_ratio':>9}")
    for m, (c, w) in cost.items():
        print(f"{m:<18} {c:7.2f} {w:7.2f} {c / base:9.2f}")
    groups = plan(cfg)
    est = sum(cost[g["method"]][0] for g in groups)
    print(f"full plan: {len(groups)} groups, estimated {est:.1f} CPU s after warm-up")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
