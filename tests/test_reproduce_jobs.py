"""`prefmem reproduce --jobs N`: the files and the printed tables are the same whatever N.

Diagnostics run side by side in worker processes (and the gating sweep runs its own joblib
workers inside one), so this checks, on a small run, that nothing a diagnostic writes depends on
the number of workers or the order they finish in. Only the run's clock differs: the manifests
(timestamps, elapsed) are left out and durations in report.md are masked.
"""

from __future__ import annotations

import re
from pathlib import Path

from toolkit.cli import main

SMALL = ["--quick", "--set", "n_users=4", "--set", "seeds=1", "--set", "pool_sizes=0",
         "--cache-mode", "off"]
SECONDS = re.compile(rb"\d+(\.\d+)?\s?s\b")


def _files(root: Path) -> dict[str, bytes]:
    out = {}
    for p in sorted(root.rglob("*")):
        if not p.is_file() or p.name in ("manifest.json", ".lock"):
            continue
        data = p.read_bytes()
        out[p.relative_to(root).as_posix()] = SECONDS.sub(b"<t>", data) if p.suffix == ".md" else data
    return out


def _printed(text: str) -> str:
    return "\n".join(ln for ln in text.splitlines() if not ln.startswith("["))


def test_same_files_with_one_or_two_workers(tmp_path, capsys):
    one, two = tmp_path / "one", tmp_path / "two"
    assert main(["reproduce", "tour", "gating", "--out", str(one), "--jobs", "1", *SMALL]) == 0
    printed_one = capsys.readouterr().out
    # two workers; gating is expected to take longer, so it starts first and finishes last
    assert main(["reproduce", "tour", "gating", "--out", str(two), "--jobs", "2", *SMALL]) == 0
    printed_two = capsys.readouterr().out
    a, b = _files(one), _files(two)
    assert sorted(a) == sorted(b)
    assert {"tour/report.md", "gating/table2_S.csv", "gating/rhr.csv"} <= set(a)
    assert [k for k in a if a[k] != b[k]] == []
    assert _printed(printed_one) == _printed(printed_two)
    assert printed_two.index("== tour ==") < printed_two.index("== gating ==")  # order asked for


def test_worker_leaves_no_idle_joblib_workers():
    """A --jobs worker process joins its children on exit: the joblib workers a diagnostic used
    must be stopped when it ends, or the worker waits out loky's idle timeout (300 s)."""
    from joblib import Parallel, delayed
    from joblib.externals.loky import reusable_executor

    from toolkit.cli import _stop_idle_loky_workers

    assert Parallel(n_jobs=2, backend="loky")(delayed(abs)(-i) for i in range(4)) == [0, 1, 2, 3]
    procs = list(reusable_executor._executor._processes.values())
    assert procs and any(p.is_alive() for p in procs)
    _stop_idle_loky_workers()
    assert not any(p.is_alive() for p in procs)


def _square(x: int) -> tuple[int, int]:
    import os

    return x * x, os.getpid()


def _total(shared: list[int], i: int) -> int:
    return shared[i] + len(shared)


def test_core_budget_runs_tasks_here_beside_another_diagnostic_and_on_workers_alone(monkeypatch):
    """Inside a --jobs pool the gating sweep's tasks follow the shared core budget: one at a time
    in this process while another diagnostic runs, on loky workers when it runs alone; a shared
    argument reaches the workers as a file, once; the results are those of a serial run."""
    import multiprocessing as mp
    import os

    from toolkit import _cores
    from toolkit.cli import _stop_idle_loky_workers
    from toolkit.gating import sweep

    assert _cores.free_cores() is None  # no pool: callers keep their own n_jobs
    counter = mp.get_context("spawn").Value("i", 0)
    monkeypatch.setattr(_cores, "_RUNNING", counter)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    with _cores.running(), _cores.running():  # this diagnostic and one other
        assert counter.value == 2 and _cores.free_cores() == 1
        here = sweep.run_tasks(_square, [(i,) for i in range(5)], -1)
    assert [r for r, _ in here] == [i * i for i in range(5)]
    assert {pid for _, pid in here} == {os.getpid()}  # no joblib workers beside the other
    shared = list(range(100))
    with _cores.running():  # alone: both cores
        assert _cores.free_cores() == 2
        alone = sweep.run_tasks(_square, [(i,) for i in range(5)], -1)
        totals = sweep.run_tasks(_total, [(shared, i) for i in range(6)], -1, shared=(shared,))
    assert counter.value == 0
    assert [r for r, _ in alone] == [i * i for i in range(5)]
    assert os.getpid() not in {pid for _, pid in alone}  # on the workers
    assert totals == [i + 100 for i in range(6)]
    _stop_idle_loky_workers()


def test_schedule_starts_the_longest_expected_first(tmp_path):
    """Longest processing time first: a diagnostic's last complete run under the output folder
    wins over the table, the table orders the rest, an unknown name counts 60 s; so on a cold
    clone gating starts at once and the shortest ones are left to fill the ends."""
    import json

    from toolkit._progress import EXPECTED_S
    from toolkit.cli import _schedule

    names = ["tour", "utility", "gating", "resolution", "selection", "fidelity", "custom"]
    cold = _schedule(names, tmp_path)
    assert cold[0] == "gating" and cold[-1] == "resolution"
    assert [n for n in cold if n != "custom"] == sorted(
        (n for n in names if n != "custom"), key=lambda n: -EXPECTED_S[n])
    assert cold.index("fidelity") < cold.index("custom") < cold.index("tour")  # 243 > 60 > 28
    (tmp_path / "tour").mkdir()
    (tmp_path / "tour" / "manifest.json").write_text(json.dumps({"status": "complete", "elapsed_s": 900}))
    (tmp_path / "gating").mkdir()
    (tmp_path / "gating" / "manifest.json").write_text(json.dumps({"status": "failed", "elapsed_s": 1}))
    warm = _schedule(names, tmp_path)
    assert warm[:2] == ["tour", "gating"]  # a measured run counts; a failed one does not
