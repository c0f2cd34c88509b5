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
