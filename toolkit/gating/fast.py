"""Vectorised gating runs: many hyper-parameter configurations (and budgets) of one user at once.

Same learner as :mod:`toolkit.gating.reference` (Algorithm 1 with censored and pending
feedback), but

* all C configurations advance together, session by session, as stacked (C, d, d) systems;
* the inverse of every ridge matrix is kept and updated with the facts that join it
  (Sherman-Morrison-Woodbury: one GEMM and small k x k systems per session), so deciding a
  session is a few matrix products for all facts and configurations at once;
* configurations that differ only in their budget share one run for as long as the budget
  cannot have changed what the learner saw (see :func:`fast_ucb`);
* the FIFO bank is not simulated: a FIFO bank holds the last B added facts, so "stored
  during session h" is a comparison of add counts (see :func:`toolkit.gating.env.fifo_kept`).

Only FIFO eviction is vectorised; other rules go through the reference environment.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from toolkit.gating.env import UserStream, fifo_kept

__all__ = ["UCBGrid", "FastEpisodes", "fast_ucb", "solve_ucb", "fast_static", "capacity_levels_run"]


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

    Configurations that differ only in their budget share one run while the budget cannot have
    mattered: a budget changes the learner only through which hits it sees (a fact evicted
    before its hit stays silent), so the run at the largest budget of such a group also gives
    every smaller budget ``B`` for which no fact it checked for a hit was between ``B`` and the
    largest budget adds old. The others run again (grouped the same way) until all are done.
    """
    if grid.feedback not in ("wait", "running"):
        raise ValueError(f"feedback {grid.feedback!r}: use 'wait' or 'running'")
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
        # representative: the largest budget of each group; run sorted by window m
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


def _woodbury(P: np.ndarray, rows: slice | np.ndarray, F: np.ndarray, mask: np.ndarray) -> None:
    """In place: ``P[c] <- (P[c]^-1 + sum_f mask[c, f] x_f x_f^T)^-1`` (Sherman-Morrison-Woodbury).

    ``P`` holds the inverses of the ridge systems; ``F`` (k, d) the facts that join, ``mask``
    (c, k) which of them each configuration in ``rows`` had added. Costs O(k d^2) per
    configuration instead of a fresh O(d^3) solve, as one GEMM plus small k x k systems.
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
    Pg = P[rows]
    g, d, k = Pg.shape[0], P.shape[1], F.shape[0]
    w = mask.astype(np.float64)
    PF = (Pg.reshape(g * d, d) @ F.T).reshape(g, d, k) * w[:, None, :]  # P U^T, U = diag(w) F
    S = np.matmul(F, PF) * w[:, :, None]  # U P U^T (unmasked facts give identity rows)
    S[:, np.arange(k), np.arange(k)] += 1.0
    Z = np.linalg.solve(S, PF.transpose(0, 2, 1))  # (I + U P U^T)^-1 U P
    P[rows] = Pg - PF @ Z


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
        ns = z - a
        theta = np.matmul(P, b[:, :, None])[:, :, 0]
        W = (P.reshape(C * d, d) @ Xs.T).reshape(C, d, ns)  # V^-1 x per fact and config
        score = theta @ Xs.T  # (C, ns)
        width = np.sqrt(np.maximum(np.einsum("cdn,nd->cn", W, Xs), 0.0))
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
