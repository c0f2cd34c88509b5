"""Plain, per-step Warm-Start UCB (memory-gating paper Algorithm 1): the test oracle.

Kept deliberately simple and slow: one learner, one fact at a time, the bank simulated by
:class:`toolkit.gating.env.GatingEnv`, the ridge system solved afresh for every fact and the
pending-feedback correction summed in a Python loop. :mod:`toolkit.gating.fast` must agree
with it to 1e-9.

The learner (one user, one configuration; the seed's text of Algorithm 1 is lost, this is our
reading of §4.3, E.1 and B.2):

* ``V = lam * I + sum_s x_s x_s^T`` and ``b = lam * mu_prior + sum_s x_s z_s`` with ``Sigma_0 = I``
  (B.2); ``mu_prior = kappa_m * mu_0`` for Warm-Start (the pooled prior targets ``kappa_m theta``
  because the censored label is ``y 1{D <= m}``), 0 for Cold-Start.
* ``z_s`` is the censored running-zero-flipping-one feedback z̄ = y 1{D <= min(t - s, m)}: 1 once a
  hit on the *stored* fact was revealed with delay <= ``m`` sessions, else 0. A hit while the fact
  was skipped or already evicted is never seen (apple tasting).
* ``feedback="wait"`` (default; B.2: "for each fact, we wait for m sessions"): the sum runs over
  *censored* facts only (added, window of ``m`` sessions closed), so no open zero biases the
  estimate. ``feedback="running"`` (Vernade et al. 2020, OTD-LinUCB): the sum runs over every added
  fact and the index gets ``+ sum_{s pending} |x^T V^-1 x_s|`` for facts still *pending* (window open,
  no hit yet). On our streams that bonus exceeds every threshold of the B.2 grid, so the gate
  stores everything; hence the default.
* Index: ``x theta_hat + alpha ||x||_{V^-1}`` (+ the pending bonus). Add iff index >= kappa_m * tau.
* All facts of a session are decided with the state reached after the previous session
  (feedback arrives between sessions; the facts of a session are extracted together).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from toolkit.gating.env import GatingEnv, UserStream

__all__ = ["ReferenceEpisode", "reference_ucb"]


@dataclass
class ReferenceEpisode:
    """Decisions, (|H'|, |H|) and the index each fact received."""

    added: np.ndarray
    kept: int
    total: int
    index: np.ndarray


def reference_ucb(stream: UserStream, X: np.ndarray, *, budget: int, lam: float, alpha: float,
                  tau: float, m: int, kappa: float = 1.0, mu_prior: np.ndarray | None = None,
                  eviction: str = "fifo", feedback: str = "wait") -> ReferenceEpisode:
    """Run Algorithm 1 step by step for one user and one hyper-parameter setting."""
    X = np.asarray(X, dtype=np.float64)
    d = X.shape[1]
    prior = np.zeros(d) if mu_prior is None else np.asarray(mu_prior, dtype=np.float64)
    env = GatingEnv(stream, budget, eviction)
    obs = env.reset()
    added_facts: list[int] = []
    flipped: set[int] = set()
    index = np.full(stream.n, np.nan)
    sess = stream.sessions
    while obs is not None:
        t = obs.session
        if feedback == "running":  # every added fact, open zeros bounded by the bias term
            used = list(added_facts)
            pending = [s for s in added_facts if t - sess[s] < m and s not in flipped]
        else:  # "wait": only facts whose window of m sessions has closed
            used = [s for s in added_facts if t - sess[s] >= m]
            pending = []
        V = lam * np.eye(d)
        for s in used:
            V += np.outer(X[s], X[s])
        b = lam * prior
        for s in used:
            if s in flipped:
                b = b + X[s]
        decisions = []
        for i in obs.index:
            x = X[i]
            theta = np.linalg.solve(V, b)
            v = np.linalg.solve(V, x)
            width = float(np.sqrt(max(x @ v, 0.0)))
            bias = 0.0
            for s in pending:
                bias += abs(float(v @ X[s]))
            index[i] = float(x @ theta) + alpha * width + bias
            decisions.append(index[i] >= kappa * tau)
        add = np.array(decisions, dtype=bool)
        added_facts.extend(int(i) for i in obs.index[add])
        revealed, obs = env.step(add)
        for s, h in revealed:
            if s not in flipped and h - sess[s] <= m:
                flipped.add(s)
    kept, total = env.result()
    return ReferenceEpisode(env.added.copy(), kept, total, index)
