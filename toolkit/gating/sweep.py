"""Hyper-parameter sweeps and the B.2 validation protocol, run through joblib.

Every unit of work is a pure function of its arguments (module-level, picklable), seeded
from ``(seed, benchmark, user)``, and results are put back together in task order, so a run
gives identical numbers with ``n_jobs=1``, ``n_jobs=-1`` or on a Dask cluster::

    from dask.distributed import Client
    import joblib
    client = Client("tcp://scheduler:8786")
    with joblib.parallel_config(backend="dask"):
        out = sweep_benchmark(bench, seed=0)          # unchanged code

Protocol (memory-gating paper B.2): for each held-out user, 15 of the other 19 users are
drawn at random for pre-training (mu_0, kappa_m) and 4 more for validation; every linear
method's hyper-parameters are chosen per budget by the micro RHR on the validation users,
then the chosen setting runs on the held-out user. Cold-Start UCB uses no other users' facts,
so its grid runs once per user and only the selection depends on the split.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from joblib import Parallel, delayed

from toolkit._seeding import item_rng
from toolkit.gating.env import UserStream
from toolkit.gating.fast import (
    UCBGrid,
    _passes_ucb,
    capacity_levels_run,
    fast_static,
    fast_ucb,
    solve_ucb,
)
from toolkit.gating.policies import delay_kappa, fit_prior

__all__ = ["BUDGETS", "GRIDS", "POLICY_ORDER", "Benchmark", "SweepResult", "sweep_benchmark",
           "split_users", "decile_f1", "cold_task",
           "split_task", "static_task", "run_tasks", "select_best", "ENGINES"]

#: memory budgets of Tables 2 (S) and 3 (L)
BUDGETS: dict[str, tuple[int, ...]] = {"S": (60, 120, 250, 500), "L": (120, 250, 500, 800, 1000)}

#: B.2 hyper-parameter grids
GRIDS: dict[str, dict[str, dict[str, tuple[float, ...]]]] = {
    "S": {
        "cold": {"alpha": (0.1, 0.2, 0.5, 1.0), "tau": (0.05, 0.1, 0.2, 0.5),
                 "lam": (0.1, 1.0, 10.0), "m": (8, 10, 15)},
        "pretrained": {"tau": (0.05, 0.1, 0.2, 0.5)},
        "warm": {"tau_mult": (0.5, 1.0, 2.0), "alpha": (0.1, 0.2, 0.5, 1.0),
                 "lam": (20.0, 10.0, 5.0, 2.0), "m": (10, 15)},
    },
    "L": {
        "cold": {"alpha": (0.1, 0.2, 0.5, 1.0), "tau": (0.05, 0.1, 0.2, 0.5),
                 "lam": (0.1, 1.0, 10.0), "m": (25, 35, 45)},
        "pretrained": {"tau": (0.05, 0.1, 0.2, 0.5)},
        "warm": {"tau_mult": (0.5, 1.0, 2.0), "alpha": (0.1, 0.2, 0.5, 1.0),
                 "lam": (200.0, 100.0, 50.0, 20.0), "m": (25, 35)},
    },
}


@dataclass
class Benchmark:
    """Users' streams and features with the budgets and grids to evaluate."""

    name: str
    streams: list[UserStream]
    Xs: list[np.ndarray]
    budgets: tuple[int, ...]
    grids: dict[str, dict[str, tuple[float, ...]]]
    n_train: int = 15
    n_val: int = 4
    prior_ridge: float = 1.0
    meta: dict[str, Any] = field(default_factory=dict)


def split_users(n_users: int, test: int, seed: int, name: str, n_train: int = 15,
                n_val: int = 4) -> tuple[list[int], list[int]]:
    """Random (train, validation) users for held-out ``test``, seeded per (seed, benchmark, user)."""
    others = [u for u in range(n_users) if u != test]
    perm = item_rng(seed, "gating-split", name, test).permutation(len(others))
    picked = [others[i] for i in perm]
    n_val = min(n_val, max(1, len(others) - 1))
    n_train = min(n_train, len(others) - n_val)
    return sorted(picked[:n_train]), sorted(picked[n_train:n_train + n_val])


def decile_f1(stream: UserStream, added: np.ndarray) -> np.ndarray:
    """F1 of add-vs-used within each tenth of the user's sessions: (C, 10) (nan when undefined)."""
    added = np.atleast_2d(added)
    uniq = np.unique(stream.sessions)
    pos = np.searchsorted(uniq, stream.sessions)
    dec = np.minimum((10 * pos) // max(len(uniq), 1), 9)
    y = stream.labels
    out = np.full((added.shape[0], 10), np.nan)
    for k in range(10):
        sel = dec == k
        if not sel.any():
            continue
        a, yy = added[:, sel], y[sel]
        tp = (a & yy).sum(axis=1)
        denom = a.sum(axis=1) + yy.sum()
        with np.errstate(invalid="ignore", divide="ignore"):
            out[:, k] = np.where(denom > 0, 2 * tp / np.where(denom > 0, denom, 1), np.nan)
    return out


def _product(spec: dict[str, Sequence[float]]) -> list[dict[str, float]]:
    keys = list(spec)
    return [dict(zip(keys, vals, strict=True)) for vals in itertools.product(*spec.values())]


#: UCB engines by name: the current one, the previous rerun-from-the-start of diverged budgets,
#: and the per-session solve before it (benchmarks and tests time and check them against each other)
ENGINES = {"fast": fast_ucb, "passes": _passes_ucb, "solve": solve_ucb}


def cold_task(stream: UserStream, X: np.ndarray, budgets: Sequence[int],
              grid: dict[str, Sequence[float]], engine: str = "fast") -> dict[str, Any]:
    """Cold-Start UCB over its whole grid and every budget for one user."""
    rows = [dict(budget=b, kappa=1.0, **p) for b in budgets for p in _product(grid)]
    fe = ENGINES[engine](stream, X, UCBGrid.from_rows(rows))
    return {"rows": rows, "kept": fe.kept, "total": fe.total, "f1": decile_f1(stream, fe.added)}


def static_task(stream: UserStream, budgets: Sequence[int],
                gates: dict[str, np.ndarray]) -> dict[str, Any]:
    """Oracle, Universal and the text gates (decisions given per capacity level) for one user."""
    b = np.asarray(budgets)
    out: dict[str, Any] = {"total": stream.n_hits}
    eps = {
        "Oracle": fast_static(stream, np.tile(stream.labels, (len(b), 1)), b),
        "Universal": fast_static(stream, np.ones((len(b), stream.n), dtype=bool), b),
    }
    for name, by_level in gates.items():
        eps[name] = (fast_static(stream, np.tile(by_level[0], (len(b), 1)), b)
                     if by_level.shape[0] == 1 else capacity_levels_run(stream, by_level, b))
    for name, fe in eps.items():
        out[name] = {"kept": fe.kept, "f1": decile_f1(stream, fe.added)}
    return out


def select_best(kept: np.ndarray, total: np.ndarray) -> int:
    """Index of the configuration with the highest pooled (micro) RHR; first one on ties."""
    tot = float(np.sum(total))
    score = np.asarray(kept, dtype=np.float64).sum(axis=0) / (tot if tot else 1.0)
    return int(np.argmax(score))


def split_task(train: list[tuple[UserStream, np.ndarray]], val: list[tuple[UserStream, np.ndarray]],
               test: tuple[UserStream, np.ndarray], budgets: Sequence[int],
               grids: dict[str, dict[str, Sequence[float]]], prior_ridge: float = 1.0,
               engine: str = "fast") -> dict[str, Any]:
    """Pre-train on ``train``, choose Pre-trained Scorer and Warm-Start UCB settings on ``val``
    per budget, and run the chosen settings on the held-out ``test`` user."""
    tr_s = [s for s, _ in train]
    mu0 = fit_prior([x for _, x in train], [s.labels for s in tr_s], prior_ridge)
    taus = list(grids["pretrained"]["tau"])
    out: dict[str, Any] = {"budgets": list(budgets), "pretrained": {}, "warm": {}}
    # Pre-trained Scorer: a frozen threshold per budget
    pt_kept = np.zeros((len(val), len(budgets), len(taus)), dtype=np.int64)
    pt_tot = np.array([s.n_hits for s, _ in val])
    for v, (s, X) in enumerate(val):
        adds = (X @ mu0)[None, :] >= np.array(taus)[:, None]
        for j, b in enumerate(budgets):
            pt_kept[v, j] = fast_static(s, adds, np.full(len(taus), b)).kept
    tau_pt = {}
    s_t, X_t = test
    score_t = X_t @ mu0
    for j, b in enumerate(budgets):
        k = select_best(pt_kept[:, j, :], pt_tot)
        tau_pt[b] = taus[k]
        fe = fast_static(s_t, (score_t >= taus[k])[None], np.array([b]))
        out["pretrained"][b] = {"tau": taus[k], "kept": int(fe.kept[0]),
                                "f1": decile_f1(s_t, fe.added)[0]}
    # Warm-Start UCB: tau around tau_pt, the rest of the B.2 grid, kappa_m from the train users
    wg = grids["warm"]
    kappas = {int(m): delay_kappa(tr_s, int(m)) for m in wg["m"]}
    rows = []
    for b in budgets:
        for mult, al, lam, m in itertools.product(wg["tau_mult"], wg["alpha"], wg["lam"], wg["m"]):
            rows.append(dict(budget=b, tau=mult * tau_pt[b], alpha=al, lam=lam, m=int(m),
                             kappa=kappas[int(m)], tau_mult=mult))
    prior = np.array([r["kappa"] * mu0 for r in rows])
    grid = UCBGrid.from_rows(rows, prior)
    ucb = ENGINES[engine]
    w_kept = np.stack([ucb(s, X, grid).kept for s, X in val])  # (V, C)
    chosen = []
    for b in budgets:
        idx = [i for i, r in enumerate(rows) if r["budget"] == b]
        chosen.append(idx[select_best(w_kept[:, idx], pt_tot)])
    sub = UCBGrid.from_rows([rows[i] for i in chosen], prior[chosen])
    fe = ucb(s_t, X_t, sub)
    f1 = decile_f1(s_t, fe.added)
    for j, (b, i) in enumerate(zip(budgets, chosen, strict=True)):
        out["warm"][b] = {**{k: rows[i][k] for k in ("tau", "alpha", "lam", "m", "kappa")},
                          "kept": int(fe.kept[j]), "f1": f1[j]}
    out["total"] = s_t.n_hits
    return out


def _single_threaded(fn, *args):
    """Run ``fn`` with one BLAS thread: the work is many small matrices, where BLAS threads
    only spin (3x more CPU time measured), and parallelism comes from the tasks instead."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        return fn(*args)


def run_tasks(fn, arg_list: list[tuple], n_jobs: int | None = None,
              shared: Sequence[Any] = ()) -> list[Any]:
    """``[fn(*args) for args in arg_list]`` through joblib (any backend), in input order.

    Inside a ``prefmem reproduce --jobs N`` pool, ``n_jobs=-1`` follows the pool's core budget
    instead (:mod:`toolkit._cores`): tasks run one at a time in this process while another
    diagnostic runs, and on the free cores through loky when it is alone; an argument that *is*
    one of ``shared`` is then sent to each worker once (a file) rather than with every task.
    The results are the same either way. Each finished task moves the current progress bar by
    one (see :mod:`toolkit._progress`).
    """
    from toolkit._progress import advance

    if n_jobs == 1 or len(arg_list) <= 1:
        out = []
        for args in arg_list:
            out.append(_single_threaded(fn, *args))
            advance()
        return out
    if n_jobs == -1 and _budgeted():
        return _run_budgeted(fn, arg_list, shared)
    out = []
    for res in Parallel(n_jobs=n_jobs, return_as="generator")(
            delayed(_single_threaded)(fn, *args) for args in arg_list):
        out.append(res)
        advance()
    return out


def _budgeted() -> bool:
    """True in a ``--jobs`` pool (a shared core budget) with no other joblib backend chosen
    (``joblib.parallel_config`` with Dask or threads keeps its own scheduling)."""
    from joblib.parallel import LokyBackend, get_active_backend

    from toolkit._cores import free_cores

    return free_cores() is not None and isinstance(get_active_backend()[0], LokyBackend)


class _SharedFile:
    """A stand-in for a large argument, pickled once to ``path``; workers load it once."""

    def __init__(self, path: str) -> None:
        self.path = path


#: per worker process: the shared arguments it has loaded (the latest two, by file)
_LOADED: dict[str, Any] = {}


def _run_shared(fn, *args):
    """A task in a worker: shared stand-ins replaced by their (once-loaded) objects."""
    import pickle

    real = []
    for a in args:
        if isinstance(a, _SharedFile):
            if a.path not in _LOADED:
                while len(_LOADED) >= 2:
                    _LOADED.pop(next(iter(_LOADED)))
                with open(a.path, "rb") as f:
                    _LOADED[a.path] = pickle.load(f)
            a = _LOADED[a.path]
        real.append(a)
    return _single_threaded(fn, *real)


def _run_budgeted(fn, arg_list: list[tuple], shared: Sequence[Any]) -> list[Any]:
    """:func:`run_tasks` under the pool's core budget, asked again before each task starts."""
    import os
    import pickle
    import tempfile
    from concurrent.futures import FIRST_COMPLETED, wait

    from joblib.externals.loky import get_reusable_executor

    from toolkit._cores import free_cores
    from toolkit._progress import advance

    out: list[Any] = [None] * len(arg_list)
    pending: dict[Any, int] = {}
    executor = None
    tmp: tempfile.TemporaryDirectory | None = None
    stand_in: dict[int, _SharedFile] = {}

    def remote_args(args: tuple) -> tuple:
        nonlocal tmp
        swapped = []
        for a in args:
            if any(a is s for s in shared):
                if id(a) not in stand_in:
                    tmp = tmp or tempfile.TemporaryDirectory(prefix="prefmem-shared-")
                    path = os.path.join(tmp.name, f"{len(stand_in)}.pkl")
                    with open(path, "wb") as f:
                        pickle.dump(a, f, protocol=pickle.HIGHEST_PROTOCOL)
                    stand_in[id(a)] = _SharedFile(path)
                a = stand_in[id(a)]
            swapped.append(a)
        return tuple(swapped)

    nxt = 0
    try:
        while nxt < len(arg_list) or pending:
            cores = free_cores() or 1
            if cores == 1 and not pending:  # another diagnostic runs: one task here, no pickling
                out[nxt] = _single_threaded(fn, *arg_list[nxt])
                nxt += 1
                advance()
                continue
            while nxt < len(arg_list) and len(pending) < cores:
                executor = executor or get_reusable_executor(max_workers=os.cpu_count() or 1)
                pending[executor.submit(_run_shared, fn, *remote_args(arg_list[nxt]))] = nxt
                nxt += 1
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for f in done:
                out[pending.pop(f)] = f.result()
                advance()
    finally:
        if tmp is not None:
            wait(pending)  # no worker still reading a shared file when it goes
            tmp.cleanup()
    return out


def _call(kind: str, *args: Any) -> Any:
    """One task of a sweep, by kind (lets cold, split and static tasks share one pool).

    A ``split_ix`` task names its users by index into the benchmark's ``(stream, features)``
    pairs, which every such task shares (sent once per worker under the pool's core budget).
    """
    if kind == "split_ix":
        pairs, train, val, test, *rest = args
        return split_task([pairs[i] for i in train], [pairs[i] for i in val], pairs[test], *rest)
    return {"static": static_task, "cold": cold_task, "split": split_task}[kind](*args)


POLICY_ORDER: tuple[str, ...] = (
    "Oracle", "Universal", "Greedy", "Greedy (capacity)", "Context", "Context (capacity)",
    "Cold-Start UCB", "Pre-trained Scorer", "Warm-Start UCB",
)


@dataclass
class SweepResult:
    """Per held-out user and policy: |H'| per budget; |H| per user; decile F1 per budget."""

    benchmark: str
    seed: int
    budgets: tuple[int, ...]
    users: list[str]
    total: dict[str, int]
    kept: dict[str, dict[str, np.ndarray]]  # policy -> user -> (B,)
    f1: dict[str, dict[str, np.ndarray]]  # policy -> user -> (B, 10)
    chosen: list[dict[str, Any]] = field(default_factory=list)

    def rhr_rows(self) -> list[dict[str, Any]]:
        """Micro and macro RHR (percent) per policy and budget over the held-out users."""
        out = []
        tot = np.array([self.total[u] for u in self.users], dtype=np.float64)
        for pol in [p for p in POLICY_ORDER if p in self.kept] + sorted(set(self.kept) - set(POLICY_ORDER)):
            k = np.stack([self.kept[pol][u] for u in self.users])  # (U, B)
            for j, b in enumerate(self.budgets):
                micro = 100.0 * k[:, j].sum() / tot.sum() if tot.sum() else float("nan")
                ok = tot > 0
                macro = 100.0 * float(np.mean(k[ok, j] / tot[ok])) if ok.any() else float("nan")
                out.append({"benchmark": self.benchmark, "policy": pol, "budget": int(b),
                            "seed": self.seed, "micro": float(micro), "macro": macro})
        return out


def sweep_benchmark(bench: Benchmark, *, seed: int, gates: dict[str, list[np.ndarray]] | None = None,
                    test_users: Sequence[int] | None = None, n_jobs: int | None = None,
                    pool_size: int | None = None, budgets: Sequence[int] | None = None,
                    policies: Sequence[str] | None = None,
                    progress_weight: float = 1.0, engine: str = "fast") -> SweepResult:
    """Every policy on every held-out user of ``bench`` (all users by default).

    ``gates`` maps a text-gate name to per-user decisions by capacity level. ``pool_size``
    keeps only that many of each split's pre-training users (Fig. 2). The sweep counts as
    ``progress_weight`` units of the enclosing progress stage. ``engine="solve"`` runs the
    previous UCB engine (same numbers, slower; for ``benchmarks/gating.py``).
    """
    n = len(bench.streams)
    tests = list(range(n)) if test_users is None else list(test_users)
    budgets = tuple(bench.budgets if budgets is None else budgets)
    want = set(POLICY_ORDER if policies is None else policies)
    splits = {u: split_users(n, u, seed, bench.name, bench.n_train, bench.n_val) for u in tests}
    if pool_size is not None:
        splits = {u: (tr[:pool_size], va) for u, (tr, va) in splits.items()}
    pairs = [(bench.streams[i], bench.Xs[i]) for i in range(n)]
    kept: dict[str, dict[str, np.ndarray]] = {}
    f1: dict[str, dict[str, np.ndarray]] = {}
    users = [bench.streams[u].user for u in tests]
    total = {bench.streams[u].user: bench.streams[u].n_hits for u in tests}
    # every task in one pool, the costliest first so the cores finish together: Warm-Start
    # validation runs (split), Cold-Start grids (once per user, whatever the split), statics
    static_names = {"Oracle", "Universal", "Greedy", "Greedy (capacity)", "Context",
                    "Context (capacity)"}
    need = (sorted(set(tests) | {v for u in tests for v in splits[u][1]})
            if "Cold-Start UCB" in want else [])
    tasks: list[tuple] = []
    budgeted = n_jobs == -1 and _budgeted()
    if want & {"Pre-trained Scorer", "Warm-Start UCB"}:
        if budgeted:  # the pairs go to each worker once; a task carries its users' indices
            tasks += [("split_ix", pairs, list(splits[u][0]), list(splits[u][1]), u, budgets,
                       bench.grids, bench.prior_ridge, engine) for u in tests]
        else:
            tasks += [("split", [pairs[i] for i in splits[u][0]], [pairs[i] for i in splits[u][1]],
                       pairs[u], budgets, bench.grids, bench.prior_ridge, engine) for u in tests]
    tasks += [("cold", bench.streams[v], bench.Xs[v], budgets, bench.grids["cold"], engine)
              for v in need]
    if want & static_names:
        tasks += [("static", bench.streams[u], budgets,
                   {g: gates[g][u] for g in (gates or {}) if g in want}) for u in tests]
    from toolkit._progress import stage

    with stage(progress_weight, len(tasks)):
        done = run_tasks(_call, tasks, n_jobs, shared=(pairs,))
    outs = [r for t, r in zip(tasks, done, strict=True) if t[0] in ("split", "split_ix")]
    colds = dict(zip(need, [r for t, r in zip(tasks, done, strict=True) if t[0] == "cold"],
                     strict=True))
    statics = [r for t, r in zip(tasks, done, strict=True) if t[0] == "static"]
    for u, res in zip(tests if statics else [], statics, strict=True):
        for pol, v in res.items():
            if pol == "total" or pol not in want:
                continue
            kept.setdefault(pol, {})[bench.streams[u].user] = np.asarray(v["kept"])
            f1.setdefault(pol, {})[bench.streams[u].user] = v["f1"]
    chosen: list[dict[str, Any]] = []
    # Cold-Start UCB: whole grid once per needed user, selection per split
    if "Cold-Start UCB" in want:
        rows = colds[need[0]]["rows"]
        for u in tests:
            val = splits[u][1]
            vk = np.stack([colds[v]["kept"] for v in val])
            vt = np.array([colds[v]["total"] for v in val])
            ks, fs = [], []
            for b in budgets:
                idx = [i for i, r in enumerate(rows) if r["budget"] == b]
                best = idx[select_best(vk[:, idx], vt)]
                ks.append(colds[u]["kept"][best])
                fs.append(colds[u]["f1"][best])
                chosen.append({"policy": "Cold-Start UCB", "user": bench.streams[u].user,
                               "budget": int(b), **{k: rows[best][k] for k in ("alpha", "tau", "lam", "m")}})
            kept.setdefault("Cold-Start UCB", {})[bench.streams[u].user] = np.array(ks)
            f1.setdefault("Cold-Start UCB", {})[bench.streams[u].user] = np.stack(fs)
    if outs:
        for u, res in zip(tests, outs, strict=True):
            user = bench.streams[u].user
            for pol, key in (("Pre-trained Scorer", "pretrained"), ("Warm-Start UCB", "warm")):
                if pol not in want:
                    continue
                kept.setdefault(pol, {})[user] = np.array([res[key][b]["kept"] for b in budgets])
                f1.setdefault(pol, {})[user] = np.stack([res[key][b]["f1"] for b in budgets])
                for b in budgets:
                    chosen.append({"policy": pol, "user": user, "budget": int(b),
                                   **{k: v for k, v in res[key][b].items() if k not in ("kept", "f1")}})
    return SweepResult(bench.name, seed, budgets, users, total, kept, f1, chosen)


def prepare_benchmark(name: str, facts: Sequence, *, grid: str | None = None, dim: int = 64,
                      seed: int = 0, budgets: Sequence[int] | None = None,
                      featurizer: Any = None) -> Benchmark:
    """Streams, features (fitted on texts only) and the B.2 split sizes for a fact list.

    ``grid`` picks the S or L budgets and grids; by default L when users average more than
    100 sessions. With fewer than 20 users the 15/4 split shrinks in proportion.
    """
    from toolkit.gating.env import build_streams
    from toolkit.gating.features import TfidfSVD

    streams = build_streams(facts)
    if len(streams) < 3:
        raise ValueError(f"{name}: the validation protocol needs at least 3 users, got {len(streams)}")
    if grid is None:
        mean_sessions = float(np.mean([len(np.unique(s.sessions)) for s in streams]))
        grid = "L" if mean_sessions > 100 else "S"
    feat = featurizer if featurizer is not None else TfidfSVD(dim=dim, random_state=seed)
    feat.fit([t for s in streams for t in s.texts])
    Xs = [feat.transform(s.texts) for s in streams]
    n_other = len(streams) - 1
    n_val = 4 if n_other >= 19 else max(1, round(n_other * 4 / 19))
    n_train = min(15, n_other - n_val)
    return Benchmark(name=name, streams=streams, Xs=Xs,
                     budgets=tuple(int(b) for b in (budgets or BUDGETS[grid])),
                     grids=GRIDS[grid], n_train=n_train, n_val=n_val,
                     meta={"grid": grid, "dim": dim, "users": len(streams),
                           "facts": int(sum(s.n for s in streams))})


def _gate_task(stream: UserStream, model: Any, fallback: str = "store"
               ) -> list[tuple[np.ndarray, int]]:
    """The four text gates' decisions (by capacity level) and unknowns for one user.

    An unknown gate answer becomes the policy's explicit ``fallback`` ("store" or "skip");
    how many there were is returned per gate so it is reported.
    """
    from toolkit.gating.llm_gates import gates_decisions

    found = gates_decisions(stream, [(context, cap) for _, context, cap in TEXT_GATES], model)
    return [(d.resolved(fallback), d.unknown) for d in found]


#: the four text gates: name, sees the session context, sees the bank's remaining capacity
TEXT_GATES: tuple[tuple[str, bool, bool], ...] = (
    ("Greedy", False, False), ("Greedy (capacity)", False, True),
    ("Context", True, False), ("Context (capacity)", True, True))


def text_gate_decisions(bench: Benchmark, model: Any = None,
                        users: Sequence[int] | None = None, n_jobs: int | None = None,
                        progress_weight: float = 1.0, *, fallback: str = "store"
                        ) -> tuple[dict[str, list], dict[str, int]]:
    """Decisions of the four text gates per user (offline rubric, or ``model``), and unknowns.

    Offline, users are judged in parallel through joblib (the rubric is pure); a model's calls
    go through the gateway in this process (its cache, concurrency and ledger).
    """
    from toolkit._progress import stage

    idx = list(range(len(bench.streams)) if users is None else users)
    with stage(progress_weight, len(idx)):
        per = (run_tasks(_gate_task, [(bench.streams[u], None, fallback) for u in idx], n_jobs)
               if model is None else
               run_tasks(_gate_task, [(bench.streams[u], model, fallback) for u in idx], 1))
    gates: dict[str, list] = {}
    unknown: dict[str, int] = {}
    for g, (name, _, _) in enumerate(TEXT_GATES):
        per_user: list = [None] * len(bench.streams)
        for u, res in zip(idx, per, strict=True):
            per_user[u] = res[g][0]
            unknown[name] = unknown.get(name, 0) + res[g][1]
        gates[name] = per_user
    return gates, unknown
