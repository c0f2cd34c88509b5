"""A sweep on a local dask.distributed cluster gives exactly the in-process numbers."""

from __future__ import annotations

import numpy as np
import pytest

from toolkit.gating.simulate import simulate_benchmark
from toolkit.gating.sweep import prepare_benchmark, sweep_benchmark, text_gate_decisions


def _run(bench, gates, n_jobs):
    res = sweep_benchmark(bench, seed=7, gates=gates, n_jobs=n_jobs, budgets=(15, 40))
    return res.rhr_rows(), res.chosen, res


def test_dask_cluster_matches_in_process():
    distributed = pytest.importorskip("dask.distributed")
    import joblib

    bench = prepare_benchmark("tiny", simulate_benchmark("tiny", seed=2, n_users=5), grid="S",
                              dim=8, seed=2)
    bench.grids = {  # a small grid keeps the test quick; the protocol is the same
        "cold": {"alpha": (0.2, 1.0), "tau": (0.1, 0.3), "lam": (1.0,), "m": (3, 5)},
        "pretrained": {"tau": (0.1, 0.2)},
        "warm": {"tau_mult": (1.0, 2.0), "alpha": (0.2, 1.0), "lam": (5.0,), "m": (3, 5)},
    }
    gates, _ = text_gate_decisions(bench)
    rows1, chosen1, res1 = _run(bench, gates, n_jobs=1)
    with distributed.LocalCluster(host="127.0.0.1", protocol="tcp", n_workers=2, processes=False,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        with joblib.parallel_config(backend="dask"):
            rows2, chosen2, res2 = _run(bench, gates, n_jobs=None)
        assert client.run(lambda: 1)  # the work really had workers to go to
    assert rows1 == rows2 and chosen1 == chosen2
    for pol in res1.kept:
        for u in res1.users:
            assert np.array_equal(res1.kept[pol][u], res2.kept[pol][u])
            np.testing.assert_array_equal(res1.f1[pol][u], res2.f1[pol][u])
    # and the loky process pool agrees too (deterministic whatever the number of workers)
    rows3, chosen3, _ = _run(bench, gates, n_jobs=2)
    assert rows3 == rows1 and chosen3 == chosen1
