"""`prefmem reproduce gating` on a small fact file: the CSV contract, tables and figures."""

from __future__ import annotations

import subprocess
import sys

import pandas as pd

from toolkit.datasets.jsonl import write_jsonl
from toolkit.gating.simulate import simulate_benchmark


def test_reproduce_gating_on_a_fact_file(tmp_path):
    facts = tmp_path / "facts.jsonl"
    write_jsonl(simulate_benchmark("tiny", seed=1, n_users=5), facts)
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "toolkit.cli", "reproduce", "gating", "--quick", "--out", str(out),
           "--set", f"facts={facts}", "--set", "budgets=20,60", "--set", "seeds=2",
           "--set", "dim=8", "--set", "n_jobs=1", "--set", "pool_sizes=1,3"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    d = out / "gating"
    rhr = pd.read_csv(d / "rhr.csv")
    assert list(rhr.columns) == ["benchmark", "policy", "budget", "seed", "micro", "macro"]
    assert set(rhr.benchmark) == {"facts"} and set(rhr.seed) == {0, 1}
    assert set(rhr.budget) == {20, 60} and rhr.policy.nunique() == 9
    assert rhr[["micro", "macro"]].stack().between(0, 100).all()
    orc = rhr[rhr.policy == "Oracle"].micro.mean()
    assert orc >= rhr.groupby("policy").micro.mean().max() - 1e-9  # nothing beats the skyline
    for name in ("table_facts.csv", "warm_vs_universal.csv", "fig2_pool_size.csv",
                 "fig1_learning_dynamics.png", "fig2_pool_size.png", "report.md", "manifest.json"):
        assert (d / name).exists(), name
    # each (benchmark, seed) sweep is logged as it finishes; --resume reuses the log, same numbers
    log = d / "items" / "sweep.jsonl"
    assert len(log.read_text().splitlines()) == 2
    first = (d / "rhr.csv").read_bytes()
    again = subprocess.run(cmd + ["--resume"], capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr[-2000:]
    assert len(log.read_text().splitlines()) == 2  # nothing was redone
    assert (d / "rhr.csv").read_bytes() == first


def test_bad_fact_file_is_one_clear_line(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"user": "u", "fact_id": "f", "session": 2, "text": "x", "hits": [1]}\n')
    done = subprocess.run([sys.executable, "-m", "toolkit.cli", "reproduce", "gating", "--out",
                           str(tmp_path / "o"), "--set", f"facts={bad}"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert f"{bad}:1" in done.stderr and "hits" in done.stderr


def test_fig2_full_pool_point_is_the_main_sweeps():
    """Fig. 2's point at the whole pre-training pool, read from the main sweep's per-user counts,
    is the RHR a sweep at that pool size computes (the diagnostic no longer runs it again)."""
    from toolkit.diagnostics.gating import _full_pool_result
    from toolkit.gating.simulate import simulate_benchmark
    from toolkit.gating.sweep import prepare_benchmark, sweep_benchmark

    bench = prepare_benchmark("tiny", simulate_benchmark("tiny", seed=4, n_users=7), grid="S", dim=8, seed=4,
                              budgets=(10, 25, 60))
    bench.grids = {  # a small grid keeps the test quick; the protocol is the same
        "cold": {"alpha": (0.2,), "tau": (0.1,), "lam": (1.0,), "m": (3,)},
        "pretrained": {"tau": (0.1, 0.2)},
        "warm": {"tau_mult": (1.0, 2.0), "alpha": (0.2, 1.0), "lam": (5.0,), "m": (3, 5)},
    }
    tests = [0, 1, 2]
    res = sweep_benchmark(bench, seed=4, test_users=tests, n_jobs=1, policies=["Warm-Start UCB"])
    main = {"per_user": [{"policy": pol, "budget": int(b), "seed": 4, "user": u, "kept": int(res.kept[pol][u][j]),
                          "total": int(res.total[u])}
                         for pol in res.kept for u in res.users for j, b in enumerate(res.budgets)]}
    fb = [25, 60]
    got = _full_pool_result(main, bench, 4, tests, fb)
    want = sweep_benchmark(bench, seed=4, test_users=tests, n_jobs=1, pool_size=bench.n_train, budgets=fb,
                           policies=["Warm-Start UCB"])
    assert got is not None and got.rhr_rows() == want.rhr_rows()
    assert _full_pool_result(main, bench, 5, tests, fb) is None  # another seed's counts are not used
