"""Time every diagnostic of ``prefmem reproduce`` cold, a base commit beside the working tree, in one run.

    python benchmarks/reproduce.py [--base COMMIT] [NAME ...] [--sequential] [--keep DIR] [--json OUT]
                                   [--set KEY=VALUE ...] [--together J]

For each diagnostic (all of ``prefmem reproduce --list`` by default, longest first), the base commit
(default ``HEAD``: the last commit, so the run shows what the uncommitted change does; checked
out into a temporary git worktree) and the working tree each run
``prefmem reproduce NAME --jobs 1`` in a fresh process with a fresh, empty ``PREFMEM_CACHE_DIR``:
every fit, encoding and sweep happens, as on a fresh clone. Printed per diagnostic: CPU seconds
(user + system of the whole process tree, joblib workers included) and wall seconds for both, their
ratios, and whether every CSV table the two wrote is byte-identical.

CPU seconds are what a diagnostic costs; wall seconds move with the machine's load (the two sides
run side by side unless ``--sequential``, so both see the same load). The README's 10-minute budget
is for the sum of CPU seconds spread over 2 cores (``--jobs`` = cores, longest first).

``--set KEY=VALUE`` passes a diagnostic option to both sides (e.g. ``gating --set seeds=1``: a
smaller configuration for a quicker comparison, printed in the header; not the full-scale run).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_BASE = "HEAD"
#: longest first, from the measured cold times (so a partial run still shows the big ones)
ORDER = ("fidelity", "gating", "protocol", "admission", "resolution", "utility", "drift", "checks",
         "selection", "tour")


def _measure(out_json: str, cmd: list[str]) -> int:
    """Run ``cmd`` as this process's child, adopt any orphaned descendants (a subreaper), wait for
    all of them, and write the tree's CPU and wall seconds to ``out_json``."""
    try:  # PR_SET_CHILD_SUBREAPER: orphaned joblib workers are reparented here and reaped
        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    w0 = time.perf_counter()
    proc = subprocess.Popen(cmd)
    rc = proc.wait()
    while True:  # reap adopted orphans so their CPU time counts
        try:
            pid, _ = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        if pid == 0:
            break
    wall = time.perf_counter() - w0
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    Path(out_json).write_text(json.dumps({"rc": rc, "cpu": ru.ru_utime + ru.ru_stime, "wall": wall,
                                          "user": ru.ru_utime, "sys": ru.ru_stime}))
    return rc


def _csvs(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*.csv"))}


def _compare(a: Path, b: Path) -> str:
    ca, cb = _csvs(a), _csvs(b)
    if not ca and not cb:
        return "no CSV"
    diff = sorted(k for k in set(ca) | set(cb) if ca.get(k) != cb.get(k))
    if not diff:
        return f"identical ({len(ca)} CSV)"
    return "DIFFER: " + ", ".join(diff[:6]) + (" ..." if len(diff) > 6 else "")


def _start(side: str, root: Path, name: str, work: Path, data_dir: str | None,
           sets: list[str] | None = None, jobs: int = 1) -> tuple[subprocess.Popen, Path]:
    """``name`` is one diagnostic, or several joined by ``+`` run as one ``--jobs`` pool."""
    cache = work / f"cache-{side}-{name}"
    out = work / f"out-{side}"
    shutil.rmtree(cache, ignore_errors=True)
    for n in name.split("+"):
        shutil.rmtree(out / n, ignore_errors=True)
    cache.mkdir(parents=True)
    env = {**os.environ, "PYTHONPATH": str(root), "PREFMEM_CACHE_DIR": str(cache), "HF_HUB_OFFLINE": "1",
           "PREFMEM_PROGRESS": os.environ.get("PREFMEM_PROGRESS", "0")}
    cmd = [sys.executable, "-m", "toolkit.cli", "reproduce", *name.split("+"), "--jobs", str(jobs),
           "--out", str(out)]
    env.pop("PREFMEM_DATA_DIR", None)
    if data_dir:
        cmd += ["--data-dir", data_dir]
        # also in the environment: before 2026-12-04 the admitter's fit did not see --data-dir and
        # read $PREFMEM_DATA_DIR or ../shared/data beside the checkout (absent beside a worktree)
        env["PREFMEM_DATA_DIR"] = data_dir
    for kv in sets or []:
        cmd += ["--set", kv]
    res = work / f"time-{side}-{name}.json"
    log = open(work / f"log-{side}-{name}.txt", "w")
    p = subprocess.Popen([sys.executable, __file__, "--_measure", str(res), "--", *cmd], cwd=root, env=env,
                         stdout=log, stderr=subprocess.STDOUT)
    return p, res


def _default_data_dir() -> str | None:
    """The data folder the working tree's toolkit would read (``toolkit.runs.default_data_dir``'s
    rules, applied from ROOT): the base side runs from a temporary worktree, where those rules
    find nothing, so both sides are given this one explicitly."""
    env = os.environ.get("PREFMEM_DATA_DIR")
    if env:
        return env if Path(env).exists() else None
    for cand in (ROOT / ".." / "shared" / "data", ROOT.parent / ".." / "shared" / "data"):
        if cand.is_dir():
            return str(cand.resolve())
    return None


def _ratio(x: float | None) -> str:
    return "-" if x is None else f"{x:5.2f}x"


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:8.1f}"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--_measure"]:
        return _measure(argv[1], argv[3:])
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help="diagnostics (default: all, longest first)")
    ap.add_argument("--base", default=DEFAULT_BASE, help="base commit (default HEAD: the last commit beside the uncommitted working tree)")
    ap.add_argument("--sequential", action="store_true", help="run base and working tree one after the other")
    ap.add_argument("--keep", help="work folder to keep (outputs, logs, timings); default a temporary one")
    ap.add_argument("--data-dir", default=_default_data_dir(),
                    help="third-party data for both sides (default: what the working tree's `prefmem` "
                         "finds, $PREFMEM_DATA_DIR or ../shared/data beside the checkout or its folder; "
                         "passed to both sides as --data-dir and $PREFMEM_DATA_DIR, so a base tree "
                         "elsewhere, its fits included, reads the same data)")
    ap.add_argument("--json", help="write the rows as JSON here")
    ap.add_argument("--together", type=int, default=0, metavar="J",
                    help="run the NAMEs as one `prefmem reproduce NAME ... --jobs J` per side (one row: "
                         "the pool's CPU, e.g. the gating sweep beside another diagnostic)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="sets",
                    help="a diagnostic option for both sides (repeatable; not the full-scale run)")
    args = ap.parse_args(argv)
    listed = subprocess.run([sys.executable, "-m", "toolkit.cli", "reproduce", "--list"], cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
                            check=True).stdout.split()
    unknown = [n for n in args.names if n not in listed]
    if unknown:
        ap.error(f"unknown diagnostic(s) {', '.join(unknown)}; `prefmem reproduce --list` names: {' '.join(listed)}")
    names = args.names or [n for n in ORDER if n in listed] + [n for n in listed if n not in ORDER]
    if args.together:
        names = ["+".join(names)]
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="prefmem-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    base_root = work / "base-tree"
    if not base_root.exists():
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(base_root), args.base],
                       check=True, capture_output=True)
    try:
        _compare_runs(args, names, work, base_root)
    finally:  # an interrupted or failed run leaves no stray worktree registered in the repository
        if not args.keep:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base_root)],
                           capture_output=True)
            shutil.rmtree(work, ignore_errors=True)
    return 0


def _compare_runs(args: argparse.Namespace, names: list[str], work: Path, base_root: Path) -> None:
    """Each diagnostic cold on the base tree and the working tree; one row each, then the totals."""
    commit = subprocess.run(["git", "-C", str(base_root), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, check=True).stdout.strip()
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()
    dirty = bool(subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--", "toolkit"],
                                capture_output=True, text=True).stdout.strip())
    jobs = args.together or 1
    print(f"cold `prefmem reproduce NAME --jobs {jobs}`, fresh cache each; base {commit} vs working tree {head}"
          f"{' (+ uncommitted toolkit changes)' if dirty else ''}; data dir {args.data_dir}; work {work}"
          + (f"; options {' '.join(args.sets)} (not full scale)" if args.sets else ""))
    hdr = (f"{'diagnostic':<11} {'base cpu':>9} {'tree cpu':>9} {'ratio':>6} {'base wall':>10} {'tree wall':>10} "
           f"{'ratio':>6}  tables")
    print(hdr, flush=True)
    rows = []
    for name in names:
        t = {}
        if args.sequential:
            for side, root in (("base", base_root), ("tree", ROOT)):
                p, res = _start(side, root, name, work, args.data_dir, args.sets, jobs)
                p.wait()
                t[side] = res
        else:
            procs = [(side, *_start(side, root, name, work, args.data_dir, args.sets, jobs))
                     for side, root in (("base", base_root), ("tree", ROOT))]
            for side, p, res in procs:
                p.wait()
                t[side] = res
        m = {s: json.loads(r.read_text()) if r.exists() else {"rc": -1, "cpu": None, "wall": None}
             for s, r in t.items()}
        ok = all(v["rc"] == 0 for v in m.values())
        tables = "; ".join(_compare(work / "out-base" / n, work / "out-tree" / n)
                           for n in name.split("+")) if ok else \
            "FAILED: " + ", ".join(f"{s} rc {v['rc']}" for s, v in m.items() if v["rc"] != 0)
        b, w = m["base"], m["tree"]
        rc = b["cpu"] / w["cpu"] if ok and w["cpu"] else None
        rw = b["wall"] / w["wall"] if ok and w["wall"] else None
        print(f"{name:<11} {_fmt(b['cpu'])} {_fmt(w['cpu'])} {_ratio(rc):>6} "
              f"{_fmt(b['wall'])}   {_fmt(w['wall'])} {_ratio(rw):>6}  {tables}", flush=True)
        rows.append({"name": name, "base": b, "tree": w, "tables": tables})
    done = [r for r in rows if r["base"]["cpu"] is not None and r["tree"]["cpu"] is not None]
    sb, st = sum(r["base"]["cpu"] for r in done), sum(r["tree"]["cpu"] for r in done)
    print(f"{'total CPU':<11} {_fmt(sb)} {_fmt(st)} {f'{sb / st:5.2f}x' if st else '-':>6}  "
          f"(= {sb / 60:.1f} vs {st / 60:.1f} CPU-minutes; on 2 cores at best {st / 120:.1f} minutes wall)")
    if args.json:
        Path(args.json).write_text(json.dumps({"base": commit, "tree": head, "options": args.sets,
                                               "rows": rows}, indent=1))


if __name__ == "__main__":
    sys.exit(main())
