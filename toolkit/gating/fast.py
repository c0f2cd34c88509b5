"""Vectorised gating runs: many hyper-parameter configurations (and budgets) of one user at once.

Same learner as :mod:`toolkit.gating.reference` (Algorithm 1 with censored and pending
feedback), but

* all C configurations advance together, session by session, as stacked (C, d, d) systems;
* the inverse of every ridge matrix is kept and updated with the facts that join it
  (Sherman-Morrison-Woodbury: one GEMM and small k x k systems per session), so deciding a
  session is a few matrix products for all facts and configurations at once;
* configurations that share a ridge system share one run for as long as neither their budget
  nor their decisions can have told them apart (see :func:`fast_ucb`);
* the FIFO bank is not simulated: a FIFO bank holds the last B added facts, so "stored
  during session h" is a comparison of add counts (see :func:`toolkit.gating.env.fifo_kept`).

Only FIFO eviction is vectorised; other rules go through the reference environment.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from toolkit.gating.env import UserStream, fifo_kept

__all__ = ["UCBGrid", "FastEpisodes", "fast_ucb", "solve_ucb", "fast_static", "capacity_levels_run"]


#: configurations per run of :func:`fast_ucb`: ridge systems are packed into one run until their
#: members would exceed it, so the (d, d) inverses (32 KB each at d = 64) stay in a core's cache;
#: a system is never split (its members share columns), so a large one runs alone
COLUMN_CHUNK = 16


@dataclass
class UCBGrid:
    """C configurations: arrays of length C (``mu_prior`` is (C, d) or None for zeros)."""

    budget: np.ndarray
    lam: np.ndarray
    alpha: np.ndarray
    tau: np.ndarray
    m: np.ndarray
    kappa: np.ndarray
    mu_prior: np.ndarray | None = None
    meta: list[dict] = field(default_factory=list)
    feedback: str = "wait"

    def __post_init__(self) -> None:
        self.budget = np.asarray(self.budget, dtype=np.int64).reshape(-1)
        c = len(self.budget)
        for name in ("lam", "alpha", "tau", "kappa"):
            setattr(self, name, np.broadcast_to(np.asarray(getattr(self, name), dtype=np.float64),
                                                (c,)).copy())
        self.m = np.broadcast_to(np.asarray(self.m, dtype=np.int64), (c,)).copy()

    def __len__(self) -> int:
        return len(self.budget)

    @classmethod
    def from_rows(cls, rows: list[dict], mu_prior: np.ndarray | None = None,
                  feedback: str = "wait") -> UCBGrid:
        """From dicts with keys budget, lam, alpha, tau, m, kappa (extra keys kept in ``meta``)."""
        get = lambda k, default=None: [r.get(k, default) for r in rows]  # noqa: E731
        return cls(budget=get("budget"), lam=get("lam"), alpha=get("alpha"), tau=get("tau"),
                   m=get("m"), kappa=get("kappa", 1.0), mu_prior=mu_prior, meta=list(rows),
                   feedback=feedback)


@dataclass
class FastEpisodes:
    """Per configuration: decisions (C, N), |H'| (C,), |H| and the index (C, N) when asked."""

    added: np.ndarray
    kept: np.ndarray
    total: int
    index: np.ndarray | None = None


def fast_ucb(stream: UserStream, X: np.ndarray, grid: UCBGrid, *,
             return_index: bool = False) -> FastEpisodes:
    """Algorithm 1 for every configuration in ``grid`` on one user's stream (FIFO bank).

    Configurations share one column of the run while nothing can have told them apart. All
    those with the same ridge system (``lam``, ``kappa``, prior, window ``m``) start in one
    column, and a configuration leaves it, into a column of its own that starts as a copy of
    the column's state (ridge inverse, reward vector, decisions so far), in the first session
    where

    * its budget can have mattered: a budget changes the learner only through which hits it
      sees (a fact evicted before its hit stays silent), so a configuration with budget ``B``
      leaves when the column sees the hit of a fact added ``B`` or more adds before;
    * its ``alpha`` and ``tau`` decide some fact of the session otherwise than the column's
      first member (the score and width they are applied to are the column's).

    Each configuration thus costs only the sessions after it diverged, with the same
    arithmetic, and so the same decisions, as a run of its own (:func:`_passes_ucb`, the
    previous engine, reran every diverged configuration from the first session). Measured on
    B.2's Warm-Start grids, sharing across ``alpha`` and ``tau`` as well as budgets took the
    UCB runs to 0.62 (S) and 0.82 (L) of the CPU time of budget sharing alone, decisions
    identical. With ``return_index`` (an index is per ``alpha``), only budgets share.
    """
    if grid.feedback not in ("wait", "running"):
        raise ValueError(f"feedback {grid.feedback!r}: use 'wait' or 'running'")
    X = np.asarray(X, dtype=np.float64)
    n, d = X.shape
    C = len(grid)
    prior = np.zeros((C, d)) if grid.mu_prior is None else np.asarray(grid.mu_prior, np.float64)
    prior = np.broadcast_to(prior, (C, d))
    # one column per ridge system (lam, kappa, prior, window m); its members share it while
    # their decisions agree (see _fork_run). An index is per alpha, so with one asked for,
    # alpha and tau join the key and members differ only in budget.
    groups: dict[tuple, list[int]] = {}
    for c in range(C):
        key = (grid.lam[c], grid.m[c], grid.kappa[c], prior[c].tobytes())
        if return_index:
            key += (grid.alpha[c], grid.tau[c])
        groups.setdefault(key, []).append(c)
    members = [[(c, int(grid.budget[c]), float(grid.alpha[c]), float(grid.kappa[c] * grid.tau[c]))
                for c in g] for g in groups.values()]
    reps = np.array([g[0] for g in groups.values()], dtype=np.int64)
    order = np.argsort(grid.m[reps], kind="stable")
    reps, members = reps[order], [members[i] for i in order]
    added = np.zeros((C, n), dtype=bool)
    index = np.full((C, n), np.nan) if return_index else None
    # windows never interact: one run per window, in chunks of at most COLUMN_CHUNK members
    # (whole ridge systems), whose inverses stay in a core's cache
    chunk: list[int] = []
    chunks: list[list[int]] = []
    for i in range(len(reps)):
        if chunk and (grid.m[reps[i]] != grid.m[reps[chunk[0]]]
                      or sum(len(members[j]) for j in chunk) + len(members[i]) > COLUMN_CHUNK):
            chunks.append(chunk)
            chunk = []
        chunk.append(i)
    chunks += [chunk] if chunk else []
    for sel in chunks:
        r = reps[sel]
        part = UCBGrid(grid.budget[r], grid.lam[r], grid.alpha[r], grid.tau[r], grid.m[r],
                       grid.kappa[r], prior[r], feedback=grid.feedback)
        col_added, col_index, cfg, col = _fork_run(stream, X, part, return_index, [members[i] for i in sel])
        added[cfg] = col_added[col]
        if index is not None:
            index[cfg] = col_index[col]
    kept = fifo_kept(stream, added, grid.budget)
    return FastEpisodes(added, kept, stream.n_hits, index)


def _passes_ucb(stream: UserStream, X: np.ndarray, grid: UCBGrid, *,
                return_index: bool = False) -> FastEpisodes:
    """The previous engine: a run per group at its largest budget, then the configurations whose
    budget mattered run again from the first session (grouped the same way) until all are
    done. Same decisions as :func:`fast_ucb`; kept to check and time it against."""
    X = np.asarray(X, dtype=np.float64)
    n, d = X.shape
    C = len(grid)
    prior = np.zeros((C, d)) if grid.mu_prior is None else np.asarray(grid.mu_prior, np.float64)
    prior = np.broadcast_to(prior, (C, d))
    added = np.zeros((C, n), dtype=bool)
    index = np.full((C, n), np.nan) if return_index else None
    todo = np.arange(C)
    while len(todo):
        groups: dict[tuple, list[int]] = {}
        for c in todo:
            key = (grid.lam[c], grid.alpha[c], grid.tau[c], grid.m[c], grid.kappa[c],
                   prior[c].tobytes())
            groups.setdefault(key, []).append(int(c))
        reps = np.array([max(g, key=lambda c: grid.budget[c]) for g in groups.values()])
        reps = reps[np.argsort(grid.m[reps], kind="stable")]
        sub = UCBGrid(grid.budget[reps], grid.lam[reps], grid.alpha[reps], grid.tau[reps],
                      grid.m[reps], grid.kappa[reps], prior[reps], feedback=grid.feedback)
        r_added, r_index, r_age = _ucb_run(stream, X, sub, return_index)
        pos = {int(r): j for j, r in enumerate(reps)}
        left = []
        for g in groups.values():
            r = max(g, key=lambda c: grid.budget[c])
            j = pos[r]
            for c in g:
                if c == r or r_age[j] < grid.budget[c]:
                    added[c] = r_added[j]
                    if index is not None:
                        index[c] = r_index[j]
                else:
                    left.append(c)
        todo = np.array(sorted(left), dtype=np.int64)
    kept = fifo_kept(stream, added, grid.budget)
    return FastEpisodes(added, kept, stream.n_hits, index)


def _mean_and_width(P: np.ndarray, b: np.ndarray, Xs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per config (rows of ``P`` = V^-1 and ``b``) and fact (rows of ``Xs``): the ridge estimate's
    score theta.x, V^-1 x (kept for the pending-feedback bias) and the confidence width sqrt(x' V^-1 x)."""
    C, d = P.shape[0], P.shape[1]
    theta = np.matmul(P, b[:, :, None])[:, :, 0]
    W = (P.reshape(C * d, d) @ Xs.T).reshape(C, d, Xs.shape[0])  # V^-1 x per fact and config
    score = theta @ Xs.T  # (C, ns)
    width = np.sqrt(np.maximum(np.einsum("cdn,nd->cn", W, Xs), 0.0))
    return score, W, width


def _woodbury(P: np.ndarray, rows: slice | np.ndarray, F: np.ndarray, mask: np.ndarray,
              dst: np.ndarray | None = None) -> None:
    """In place: ``P[c] <- (P[c]^-1 + sum_f mask[c, f] x_f x_f^T)^-1`` (Sherman-Morrison-Woodbury).

    ``P`` holds the inverses of the ridge systems; ``F`` (k, d) the facts that join, ``mask``
    (c, k) which of them each configuration in ``rows`` had added. Costs O(k d^2) per
    configuration instead of a fresh O(d^3) solve, as GEMMs plus small k x k inverses. When no
    configuration added all k facts, each works on its own added facts only (padded with zero
    rows to the largest count), so the GEMMs shrink with the add rate; and one batched k x k
    inverse replaces a solve against d right-hand sides (measured: the same decisions on
    every configuration, about a quarter less CPU for a sweep).

    With ``dst`` (an index array, one entry per row of ``rows``, which must then be an index
    array too), row ``rows[i]``'s update is written to ``P[dst[i]]`` and ``P[rows[i]]`` is left
    as it was: the same arithmetic, for inverses shared by several configurations
    (:func:`_woodbury_shared`).
    """
    keep = mask.any(axis=0)
    if not keep.all():
        F, mask = F[keep], mask[:, keep]
    some = mask.any(axis=1)
    if not some.any():
        return
    if isinstance(rows, slice) and not some.all():
        rows = np.arange(rows.start, rows.stop)[some]
        mask = mask[some]
    elif not isinstance(rows, slice):
        rows, mask = rows[some], mask[some]
        if dst is not None:
            dst = dst[some]
    span = _span(rows)
    if dst is not None and span is not None and np.array_equal(rows, dst):
        rows, dst = span, None  # in place on a slice: the same arithmetic, no gather or scatter
    Pg = P[rows] if span is None else P[span]  # a view when the rows are one run of slots
    g, d = Pg.shape[0], P.shape[1]
    counts = mask.sum(axis=1)
    k = int(counts.max())
    if k < F.shape[0]:  # each configuration's own added facts, zero rows as padding
        pick = np.argsort(~mask, axis=1, kind="stable")[:, :k]
        Fc = F[pick] * (np.arange(k)[None, :] < counts[:, None])[:, :, None]  # (g, k, d)
        PF = np.matmul(Pg, Fc.transpose(0, 2, 1))  # P U^T
        S = np.matmul(Fc, PF)  # U P U^T (padding gives identity rows)
    else:
        w = mask.astype(np.float64)
        PF = (Pg.reshape(g * d, d) @ F.T).reshape(g, d, k) * w[:, None, :]  # P U^T, U = diag(w) F
        S = np.matmul(F, PF) * w[:, :, None]  # U P U^T (unmasked facts give identity rows)
    S[:, np.arange(k), np.arange(k)] += 1.0
    upd = np.matmul(np.matmul(PF, np.linalg.inv(S)), PF.transpose(0, 2, 1))
    if dst is None:  # in place: a fresh (g, d, d) result per session cost more in page faults than the GEMM
        if span is None:
            P[rows] -= upd
        else:
            np.subtract(Pg, upd, out=Pg)
    elif span is None:
        np.subtract(Pg, upd, out=Pg)
        P[dst] = Pg
    else:  # Pg is a view of rows that must stay as they were
        P[dst] = Pg - upd


def _span(rows: slice | np.ndarray) -> slice | None:
    """``rows`` as a step-1 slice when it is one (or an index array of consecutive slots), else None.

    Slots are then read and updated through a view of ``P`` instead of a gathered copy and a
    scatter back (about a quarter of :func:`_woodbury`'s time went to those copies); the values
    and the BLAS calls on them are the same, so the results are identical."""
    if isinstance(rows, slice):
        return rows if rows.step in (None, 1) else None
    n = len(rows)
    if n and int(rows[-1]) - int(rows[0]) == n - 1 and (n == 1 or bool(np.all(np.diff(rows) == 1))):
        return slice(int(rows[0]), int(rows[0]) + n)
    return None


def _woodbury_shared(P: np.ndarray, pid: np.ndarray, C: int, F: np.ndarray, mask: np.ndarray) -> None:
    """:func:`_woodbury` for columns ``0..C-1`` whose inverses live in shared slots ``P[pid[c]]``.

    Columns that share a slot and add the same facts get one update between them; a slot whose
    columns add different facts is split: the columns that add nothing (else the group with the
    smallest mask code) keep it, each other group gets a free slot holding its updated copy.
    Each column's inverse is computed with the same arithmetic as its own :func:`_woodbury` row
    (the batch's fact filter and padding are the same: the union and maximum over the same masks).
    """
    cp = pid[:C]
    k = mask.shape[1]
    if k > 62:  # mask codes as int64 bit sets; beyond that, one code per distinct row
        _, code = np.unique(mask, axis=0, return_inverse=True)
        code = code.reshape(-1).astype(np.int64) + (~mask.any(axis=1)) * -(1 << 40)
    else:
        code = mask.astype(np.int64) @ (np.int64(1) << np.arange(k, dtype=np.int64))
    order = np.lexsort((code, cp))
    sp, sc = cp[order], code[order]
    starts = np.ones(C, dtype=bool)
    starts[1:] = (sp[1:] != sp[:-1]) | (sc[1:] != sc[:-1])
    gid = np.cumsum(starts) - 1
    rep = order[starts]  # a column of each group
    g_slot = sp[starts]
    stays = np.ones(len(rep), dtype=bool)  # the first group of each slot (the zero mask if any)
    stays[1:] = g_slot[1:] != g_slot[:-1]
    target = g_slot.copy()
    if not stays.all():
        used = np.zeros(P.shape[0], dtype=bool)
        used[cp] = True
        target[~stays] = np.flatnonzero(~used)[: int((~stays).sum())]
        col_gid = np.empty(C, dtype=np.int64)
        col_gid[order] = gid
        pid[:C] = target[col_gid]
    upd = mask[rep].any(axis=1)
    if upd.any():
        _woodbury(P, g_slot[upd], F, mask[rep[upd]], dst=target[upd])


def _mean_and_width_shared(P: np.ndarray, pid: np.ndarray, b: np.ndarray, Xs: np.ndarray
                           ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_mean_and_width` for columns whose inverses live in shared slots ``P[pid]``:
    ``V^-1 x`` and the width once per slot, the score per column (its own reward vector).
    Returns the score (C, ns), ``V^-1 x`` per slot (U, d, ns), each column's slot row (C,)
    and the width (C, ns)."""
    used = np.zeros(P.shape[0], dtype=bool)
    used[pid] = True
    slots = np.flatnonzero(used)
    row = np.empty(P.shape[0], dtype=np.int64)
    row[slots] = np.arange(len(slots))
    inv = row[pid]
    U, d = len(slots), P.shape[1]
    span = _span(slots)
    Pu = P[slots] if span is None else P[span]  # a view when the slots are one run
    # each column's V^-1 b: a stack gathered per column only when columns share a slot
    own = U == len(inv) and bool(np.all(inv == np.arange(U)))
    theta = np.matmul(Pu if own else Pu[inv], b[:, :, None])[:, :, 0]
    Wu = (Pu.reshape(U * d, d) @ Xs.T).reshape(U, d, Xs.shape[0])
    score = theta @ Xs.T
    width = np.sqrt(np.maximum(np.einsum("cdn,nd->cn", Wu, Xs), 0.0))
    return score, Wu, inv, width[inv]


def _fork_run(stream: UserStream, X: np.ndarray, grid: UCBGrid, return_index: bool,
              members: list[list[tuple[int, int, float, float]]]
              ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray, np.ndarray]:
    """Algorithm 1 for columns that share one window ``m``, forking members as they diverge.

    ``members`` lists per column of ``grid`` the configurations that share it, each as
    (configuration, budget, alpha, threshold): they share the ridge system (same ``lam``,
    ``kappa``, prior) and, so far, every decision, so one state serves them all. A member
    leaves its column, into a column of its own that starts as a copy of the shared state, when

    * its budget diverges: in some session the column sees the hit of a fact at least ``B``
      adds old, which a member with budget ``B`` or less would not have seen (the copy is the
      state before that session's feedback);
    * its decisions diverge: its own ``alpha`` and threshold decide some fact of a session
      otherwise than the column's first member (the copy is the state before that session's
      decisions). Members that decide alike leave together.

    A column runs at the largest budget among its members. Arrays are sized for one column
    per member, so a fork moves nothing. Returns the decisions (columns, N), the index (or
    None; then every column's members must share ``alpha`` and threshold), and per member its
    configuration and final column.
    """
    running = grid.feedback == "running"
    n, d = X.shape
    C = len(grid)
    mv = int(grid.m[0])
    flat = [(col, *mem) for col, mm in enumerate(members) for mem in mm]
    cap = len(flat)
    mem_col = np.array([f[0] for f in flat], dtype=np.int64)
    mem_cfg = np.array([f[1] for f in flat], dtype=np.int64)
    mem_budget = np.array([f[2] for f in flat], dtype=np.int64)
    mem_alpha = np.array([f[3] for f in flat], dtype=np.float64)
    mem_thresh = np.array([f[4] for f in flat], dtype=np.float64)
    sess = stream.sessions
    first = stream.first_hit
    delay = stream.delays

    def grow(a: np.ndarray) -> np.ndarray:
        out = np.zeros((cap, *a.shape[1:]), dtype=a.dtype)
        out[:C] = a
        return out

    budget = np.zeros(cap, dtype=np.int64)
    minb = np.zeros(cap, dtype=np.int64)
    np.maximum.at(budget, mem_col, mem_budget)
    minb[:C] = np.iinfo(np.int64).max
    np.minimum.at(minb, mem_col, mem_budget)
    prior = np.asarray(grid.mu_prior, np.float64)
    # V^-1 (V = lam I at the start) in slots shared by columns: a forked column reads its
    # parent's slot until the facts joining their ridge systems differ (_woodbury_shared)
    P = grow((1.0 / grid.lam)[:, None, None] * np.eye(d)[None])
    pid = np.arange(cap, dtype=np.int64)  # column -> its slot in P
    b = grow(grid.lam[:, None] * prior)
    cum = np.zeros(cap, dtype=np.int64)
    rank = np.zeros((cap, n), dtype=np.int64)
    added = np.zeros((cap, n), dtype=bool)
    flipped = np.zeros((cap, n), dtype=bool)
    index = np.full((cap, n), np.nan) if return_index else None
    state = [pid, b, cum, rank, added, flipped] + ([index] if index is not None else [])

    def fork(src: np.ndarray, leaving: list[np.ndarray]) -> None:
        """New columns, copies of columns ``src``, for the members ``leaving`` each of them."""
        nonlocal C
        c0 = C
        for mem in leaving:
            mem_col[mem] = C
            C += 1
        for arr in state:
            arr[c0:C] = arr[src]
        for c in np.concatenate([np.unique(src), np.arange(c0, C)]):
            bud = mem_budget[mem_col == c]
            budget[c], minb[c] = bud.max(), bud.min()

    ptr = 0
    order = np.argsort(np.where(first >= 0, first, np.iinfo(np.int64).max), kind="stable")
    fh_sorted = first[order]
    n_used = int((first >= 0).sum())
    ok_delay = delay <= mv
    prev = -np.inf
    for t, a, z in stream.session_slices():
        lo = np.searchsorted(fh_sorted[:n_used], prev, side="right")
        hi = np.searchsorted(fh_sorted[:n_used], t, side="right")
        J = order[lo:hi]
        if len(J):
            cand = added[:C, J] & ok_delay[J][None, :] & ~flipped[:C, J]
            age = cum[:C, None] - rank[:C, J]
            ok = cand & (age < budget[:C, None])
            amax = np.where(ok, age, -1).max(axis=1)
            split = np.flatnonzero(minb[:C] <= amax)
            while len(split):
                c0 = C
                fork(split, [np.flatnonzero((mem_col == c) & (mem_budget <= amax[c])) for c in split])
                cand = np.concatenate([cand, cand[split]])
                age = np.concatenate([age, age[split]])
                ok_new = cand[c0:] & (age[c0:] < budget[c0:C, None])
                ok = np.concatenate([ok, ok_new])
                amax = np.concatenate([amax, np.where(ok_new, age[c0:], -1).max(axis=1)])
                split = c0 + np.flatnonzero(minb[c0:C] <= amax[c0:])
            if running:
                b[:C] += ok.astype(np.float64) @ X[J]
            flipped[:C, J] |= ok
        prev = t
        if not running:  # windows that closed: the censored label joins the ridge system
            end = int(np.searchsorted(sess, t - mv, side="right"))
            if end > ptr:
                Nw = added[:C, ptr:end]
                _woodbury_shared(P, pid, C, X[ptr:end], Nw)
                b[:C] += (Nw & flipped[:C, ptr:end]).astype(np.float64) @ X[ptr:end]
                ptr = end
        Xs = X[a:z]
        score, Wu, slot_row, width = _mean_and_width_shared(P, pid[:C], b[:C], Xs)
        bias: np.ndarray | float = 0.0
        r0 = int(np.searchsorted(sess, t - mv, side="right"))
        if running and r0 < a:
            R = slice(r0, a)
            pend = added[:C, R] & ~flipped[:C, R] & ((t - sess[R])[None, :] < mv)
            if pend.any():
                G = np.abs(Wu[slot_row].transpose(0, 2, 1) @ X[R].T)  # (C, ns, r)
                bias = np.einsum("cnr,cr->cn", G, pend.astype(np.float64))
        # every member's index and decisions from its column's score and width
        idx = score[mem_col] + mem_alpha[:, None] * width[mem_col] + (
            bias[mem_col] if isinstance(bias, np.ndarray) else bias)
        dec = idx >= mem_thresh[:, None]
        head = np.full(C, cap, dtype=np.int64)
        np.minimum.at(head, mem_col, np.arange(cap))
        off = np.flatnonzero((dec != dec[head[mem_col]]).any(axis=1))
        if len(off):  # members that decide otherwise than their column's first one leave it
            out: dict[tuple[int, bytes], list[int]] = {}
            for i in off:
                out.setdefault((int(mem_col[i]), dec[i].tobytes()), []).append(int(i))
            fork(np.array([c for c, _ in out], dtype=np.int64), [np.array(v) for v in out.values()])
            head = np.full(C, cap, dtype=np.int64)
            np.minimum.at(head, mem_col, np.arange(cap))
        col_dec = dec[head]
        if index is not None:
            index[:C, a:z] = idx[head]
        rank[:C, a:z] = cum[:C, None] + np.cumsum(col_dec, axis=1)
        cum[:C] += col_dec.sum(axis=1)
        added[:C, a:z] = col_dec
        if running:
            _woodbury_shared(P, pid, C, Xs, col_dec)
    return added[:C], None if index is None else index[:C], mem_cfg, mem_col


def _ucb_run(stream: UserStream, X: np.ndarray, grid: UCBGrid,
             return_index: bool) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
    """One pass of Algorithm 1 over configurations sorted by ``m``.

    Keeps the inverse of every ridge system and updates it with the facts that join it
    (:func:`_woodbury`), so a session costs a few GEMMs for all configurations. Returns the
    decisions (C, N), the index (or None), and per configuration the largest add-age of a fact
    whose hit it saw (``-1`` if none), which tells which smaller budgets would have seen the same.
    """
    running = grid.feedback == "running"
    n, d = X.shape
    C = len(grid)
    m_sorted = grid.m
    uniq, starts = np.unique(m_sorted, return_index=True)
    groups = [(int(mv), int(i0), int(i1))
              for mv, i0, i1 in zip(uniq, starts, list(starts[1:]) + [C], strict=True)]
    sess = stream.sessions
    first = stream.first_hit
    delay = stream.delays
    budget = grid.budget
    lam, alpha, m = grid.lam, grid.alpha, grid.m
    thresh = grid.kappa * grid.tau
    prior = np.asarray(grid.mu_prior, np.float64)
    P = (1.0 / lam)[:, None, None] * np.eye(d)[None]  # V^-1 with V = lam I
    b = lam[:, None] * prior
    cum = np.zeros(C, dtype=np.int64)
    rank = np.zeros((C, n), dtype=np.int64)
    added = np.zeros((C, n), dtype=bool)
    flipped = np.zeros((C, n), dtype=bool)
    age_max = np.full(C, -1, dtype=np.int64)
    ptr = np.zeros(C, dtype=np.int64)
    index = np.full((C, n), np.nan) if return_index else None
    m_max = int(m.max()) if C else 0
    order = np.argsort(np.where(first >= 0, first, np.iinfo(np.int64).max), kind="stable")
    fh_sorted = first[order]
    n_used = int((first >= 0).sum())
    prev = -np.inf
    for t, a, z in stream.session_slices():
        lo = np.searchsorted(fh_sorted[:n_used], prev, side="right")
        hi = np.searchsorted(fh_sorted[:n_used], t, side="right")
        J = order[lo:hi]
        if len(J):
            cand = added[:, J] & (delay[J][None, :] <= m[:, None]) & ~flipped[:, J]
            age = cum[:, None] - rank[:, J]
            ok = cand & (age < budget[:, None])
            age_max = np.maximum(age_max, np.where(ok, age, -1).max(axis=1))
            if running:
                b += ok.astype(np.float64) @ X[J]
            flipped[:, J] |= ok
        prev = t
        if not running:  # windows that closed: the censored label joins the ridge system
            for mv, i0, i1 in groups:
                end = int(np.searchsorted(sess, t - mv, side="right"))
                lo = int(ptr[i0])
                if end > lo:
                    Nw = added[i0:i1, lo:end]
                    _woodbury(P, slice(i0, i1), X[lo:end], Nw)
                    b[i0:i1] += (Nw & flipped[i0:i1, lo:end]).astype(np.float64) @ X[lo:end]
                    ptr[i0:i1] = end
        Xs = X[a:z]
        score, W, width = _mean_and_width(P, b, Xs)
        bias: np.ndarray | float = 0.0
        r0 = int(np.searchsorted(sess, t - m_max, side="right"))
        if running and r0 < a:
            R = slice(r0, a)
            pend = added[:, R] & ~flipped[:, R] & ((t - sess[R])[None, :] < m[:, None])
            if pend.any():
                G = np.abs(W.transpose(0, 2, 1) @ X[R].T)  # (C, ns, r)
                bias = np.einsum("cnr,cr->cn", G, pend.astype(np.float64))
        idx = score + alpha[:, None] * width + bias
        dec = idx >= thresh[:, None]
        if index is not None:
            index[:, a:z] = idx
        rank[:, a:z] = cum[:, None] + np.cumsum(dec, axis=1)
        cum += dec.sum(axis=1)
        added[:, a:z] = dec
        if running:
            _woodbury(P, slice(0, C), Xs, dec)
    return added, index, age_max

def solve_ucb(stream: UserStream, X: np.ndarray, grid: UCBGrid, *,
              return_index: bool = False) -> FastEpisodes:
    """The previous engine: one batched ``np.linalg.solve`` of every (C, d, d) ridge system per
    session. Kept as the baseline ``benchmarks/gating.py`` times the engine against."""
    if grid.feedback not in ("wait", "running"):
        raise ValueError(f"feedback {grid.feedback!r}: use 'wait' or 'running'")
    running = grid.feedback == "running"
    if np.any(np.diff(grid.m) < 0):  # group configurations by window: run sorted, then unsort
        perm = np.argsort(grid.m, kind="stable")
        inv = np.argsort(perm)
        sub = UCBGrid(grid.budget[perm], grid.lam[perm], grid.alpha[perm], grid.tau[perm],
                      grid.m[perm], grid.kappa[perm],
                      None if grid.mu_prior is None else np.asarray(grid.mu_prior)[perm],
                      feedback=grid.feedback)
        ep = solve_ucb(stream, X, sub, return_index=return_index)
        return FastEpisodes(ep.added[inv], ep.kept[inv], ep.total,
                            None if ep.index is None else ep.index[inv])
    X = np.asarray(X, dtype=np.float64)
    n, d = X.shape
    C = len(grid)
    groups = [(int(mv), int(i0), int(i1)) for mv, i0, i1 in zip(
        *np.unique(grid.m, return_index=True),
        list(np.unique(grid.m, return_index=True)[1][1:]) + [C], strict=True)]
    sess = stream.sessions
    first = stream.first_hit
    delay = stream.delays
    budget = grid.budget
    lam, alpha, m = grid.lam, grid.alpha, grid.m
    thresh = grid.kappa * grid.tau
    prior = np.zeros((C, d)) if grid.mu_prior is None else np.asarray(grid.mu_prior, np.float64)
    XX = (X[:, :, None] * X[:, None, :]).reshape(n, d * d)  # x x^T per fact, flattened
    V = lam[:, None, None] * np.eye(d)[None]
    b = lam[:, None] * prior
    cum = np.zeros(C, dtype=np.int64)  # adds so far
    rank = np.zeros((C, n), dtype=np.int64)
    added = np.zeros((C, n), dtype=bool)
    flipped = np.zeros((C, n), dtype=bool)
    ptr = np.zeros(C, dtype=np.int64)  # "wait": facts before ptr[c] were considered for V, b
    index = np.full((C, n), np.nan) if return_index else None
    slices = stream.session_slices()
    m_max = int(m.max()) if C else 0
    # facts whose first hit falls in (previous decision session, this one]
    order = np.argsort(np.where(first >= 0, first, np.iinfo(np.int64).max), kind="stable")
    fh_sorted = first[order]
    n_used = int((first >= 0).sum())
    prev = -np.inf
    for t, a, z in slices:
        lo = np.searchsorted(fh_sorted[:n_used], prev, side="right")
        hi = np.searchsorted(fh_sorted[:n_used], t, side="right")
        J = order[lo:hi]
        if len(J):
            ok = (added[:, J] & (cum[:, None] - rank[:, J] < budget[:, None])
                  & (delay[J][None, :] <= m[:, None]) & ~flipped[:, J])
            if running:
                b += ok.astype(np.float64) @ X[J]
            flipped[:, J] |= ok
        prev = t
        if not running:  # windows that closed: the censored label joins the ridge system
            for mv, i0, i1 in groups:  # configurations sharing m close the same facts
                end = int(np.searchsorted(sess, t - mv, side="right"))
                lo = int(ptr[i0])
                if end > lo:
                    Nw = added[i0:i1, lo:end].astype(np.float64)
                    V[i0:i1] += (Nw @ XX[lo:end]).reshape(i1 - i0, d, d)
                    b[i0:i1] += (Nw * flipped[i0:i1, lo:end]) @ X[lo:end]
                    ptr[i0:i1] = end
        Xs = X[a:z]
        # one batched solve gives theta = V^-1 b and V^-1 x for the session's facts
        rhs = np.concatenate([b[:, :, None], np.broadcast_to(Xs.T, (C, d, z - a))], axis=2)
        sol = np.linalg.solve(V, rhs)
        theta = sol[:, :, 0]
        W = sol[:, :, 1:].transpose(0, 2, 1)  # (C, n, d): x^T V^-1 per fact and config
        score = theta @ Xs.T  # (C, n)
        width = np.sqrt(np.maximum((W * Xs[None]).sum(axis=2), 0.0))
        r0 = int(np.searchsorted(sess, t - m_max, side="right"))
        if running and r0 < a:
            R = slice(r0, a)
            P = added[:, R] & ~flipped[:, R] & ((t - sess[R])[None, :] < m[:, None])
            if P.any():
                G = np.abs(W @ X[R].T)  # (C, n, r)
                bias = np.einsum("cnr,cr->cn", G, P.astype(np.float64))
            else:
                bias = 0.0
        else:
            bias = 0.0
        idx = score + alpha[:, None] * width + bias
        dec = idx >= thresh[:, None]
        if index is not None:
            index[:, a:z] = idx
        rank[:, a:z] = cum[:, None] + np.cumsum(dec, axis=1)
        cum += dec.sum(axis=1)
        added[:, a:z] = dec
        if running:
            D = dec.astype(np.float64)
            V += (D @ XX[a:z]).reshape(C, d, d)
    kept = fifo_kept(stream, added, budget)
    return FastEpisodes(added, kept, stream.n_hits, index)


def fast_static(stream: UserStream, add: np.ndarray, budgets: np.ndarray) -> FastEpisodes:
    """Fixed decision vectors (C, N) under FIFO budgets (C,)."""
    add = np.atleast_2d(np.asarray(add, dtype=bool))
    return FastEpisodes(add, fifo_kept(stream, add, budgets), stream.n_hits)


def capacity_levels_run(stream: UserStream, by_level: np.ndarray, budgets: np.ndarray,
                        cuts: tuple[float, float] = (1 / 3, 2 / 3)) -> FastEpisodes:
    """Capacity-aware gates: each session uses the decision for the bank's fill at its start.

    ``by_level`` is (3, N): decisions under the *vacant*, *filling* and *nearly full* prompts.
    Under FIFO the fill is ``min(adds so far, B) / B``.
    """
    budgets = np.asarray(budgets, dtype=np.int64).reshape(-1)
    C = len(budgets)
    added = np.zeros((C, stream.n), dtype=bool)
    cum = np.zeros(C, dtype=np.int64)
    for _, a, z in stream.session_slices():
        fill = np.minimum(cum, budgets) / np.maximum(budgets, 1)
        level = np.where(fill < cuts[0], 0, np.where(fill < cuts[1], 1, 2))
        dec = by_level[level, a:z]
        added[:, a:z] = dec
        cum += dec.sum(axis=1)
    return FastEpisodes(added, fifo_kept(stream, added, budgets), stream.n_hits)
