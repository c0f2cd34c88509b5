"""Time the per-step reference against the vectorised gating engine, and the L-scale sweep
against the previous engine, side by side in one run.

    python benchmarks/gating.py [--json OUT] [--configs 16] [--no-sweep] [--sweep-users N]

Both engines run Warm-Start UCB (Algorithm 1) on the same simulated PerMemBench-L user for
the same hyper-parameter configurations; their decisions must agree. Then the Table 3 sweep
(held-out users, every policy, B.2 grids and validation, one seed; all 20 users unless
``--sweep-users``) is timed with joblib on all cores, once with the current engine and once
with the previous one (``engine="solve"``: a fresh batched solve of every ridge system per
session); their RHR tables must be identical. Quote ratios: absolute times move with load.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import time

import numpy as np


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="write the timings as JSON here")
    ap.add_argument("--configs", type=int, default=16, help="configurations timed side by side")
    ap.add_argument("--no-sweep", action="store_true", help="skip the full L-scale sweep")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sweep-users", type=int, default=None,
                    help="time the sweep on only this many held-out users (default: all 20)")
    args = ap.parse_args(argv)

    from threadpoolctl import threadpool_limits

    from toolkit.gating.env import build_streams
    from toolkit.gating.fast import UCBGrid, fast_ucb
    from toolkit.gating.features import TfidfSVD
    from toolkit.gating.policies import delay_kappa, fit_prior
    from toolkit.gating.reference import reference_ucb
    from toolkit.gating.simulate import simulate_benchmark

    facts = simulate_benchmark("L", seed=args.seed, n_users=6)
    streams = build_streams(facts)
    feat = TfidfSVD(dim=64, random_state=args.seed).fit([f.text for f in facts])
    Xs = [feat.transform(s.texts) for s in streams]
    mu0 = fit_prior(Xs[1:], [s.labels for s in streams[1:]])
    user, X = streams[0], Xs[0]
    grid_iter = itertools.product((0.1, 0.5), (200.0, 50.0), (0.1, 0.2), (25, 35), (250, 1000))
    rows = [dict(budget=b, alpha=a, lam=lam, tau=tau, m=m, kappa=delay_kappa(streams[1:], m))
            for a, lam, tau, m, b in itertools.islice(grid_iter, args.configs)]
    prior = np.array([r["kappa"] * mu0 for r in rows])
    print(f"workload: one L-scale user ({user.n} facts, {len(np.unique(user.sessions))} sessions), "
          f"{len(rows)} configurations, d={X.shape[1]}")
    # both run single-threaded; CPU time (process_time) is what they cost, and it is not
    # inflated when other jobs share the machine; wall time is printed beside it
    with threadpool_limits(limits=1):
        w0, t0 = time.perf_counter(), time.process_time()
        refs = [reference_ucb(user, X, mu_prior=prior[i], **r) for i, r in enumerate(rows)]
        reference_s, reference_wall = time.process_time() - t0, time.perf_counter() - w0
        w0, t0 = time.perf_counter(), time.process_time()
        fast = fast_ucb(user, X, UCBGrid.from_rows(rows, prior))
        fast_s, fast_wall = time.process_time() - t0, time.perf_counter() - w0
    agree = all(np.array_equal(r.added, fast.added[i]) and r.kept == fast.kept[i]
                for i, r in enumerate(refs))
    ratio = reference_s / fast_s
    print(f"reference (per step)  {reference_s:8.2f} s CPU  ({reference_wall:.2f} s wall)")
    print(f"fast (vectorised)     {fast_s:8.2f} s CPU  ({fast_wall:.2f} s wall)")
    print(f"ratio                 {ratio:8.1f}x   decisions agree: {agree}")
    out = {"reference_s": reference_s, "fast_s": fast_s, "ratio": ratio, "agree": agree,
           "reference_wall_s": reference_wall, "fast_wall_s": fast_wall, "clock": "process CPU time",
           "configs": len(rows), "facts": user.n, "cores": os.cpu_count()}
    if not args.no_sweep:
        from toolkit.gating.sweep import prepare_benchmark, sweep_benchmark, text_gate_decisions

        t0 = time.perf_counter()
        bench = prepare_benchmark("L", simulate_benchmark("L", seed=args.seed), grid="L",
                                  seed=args.seed)
        gates, _ = text_gate_decisions(bench)
        prep_s = time.perf_counter() - t0
        tests = None if args.sweep_users is None else range(args.sweep_users)
        times, tables = {}, {}
        for engine in ("fast", "solve"):
            t0 = time.perf_counter()
            res = sweep_benchmark(bench, seed=args.seed, gates=gates, n_jobs=-1, test_users=tests,
                                  engine=engine)
            times[engine] = time.perf_counter() - t0
            tables[engine] = res.rhr_rows()
        same = tables["fast"] == tables["solve"]
        n_cfg = sum(len(list(itertools.product(*g.values()))) for g in bench.grids.values())
        print(f"L-scale Table 3 sweep: {len(res.users)} held-out users x {len(bench.budgets)} "
              f"budgets, {n_cfg} grid points per budget, on {os.cpu_count()} cores "
              f"(+{prep_s:.1f} s simulation, features and text gates):")
        print(f"  current engine   {times['fast']:8.1f} s")
        print(f"  previous engine  {times['solve']:8.1f} s")
        print(f"  ratio            {times['solve'] / times['fast']:8.1f}x   tables identical: {same}")
        out.update(sweep_L_s=times["fast"], sweep_L_previous_s=times["solve"],
                   sweep_ratio=times["solve"] / times["fast"], sweep_tables_identical=same,
                   sweep_prep_s=prep_s, sweep_users=len(res.users),
                   sweep_full=len(res.users) == len(bench.streams))
        agree = agree and same
    else:
        out["sweep_L_s"] = None
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(out, fh, indent=2)
    return 0 if agree else 1


if __name__ == "__main__":
    raise SystemExit(main())
