"""Gating policies as scikit-learn-style estimators (memory-gating paper §5.1).

Every policy has ``fit(streams, Xs)`` (data of *other* users; most policies ignore it) and
``gate(stream, X, budgets) -> FastEpisodes`` (decisions and |H'| per budget for one user, FIFO
bank). Hyper-parameters are ``__init__`` arguments; learned attributes end in ``_``.

* :class:`Oracle` adds exactly the facts that will be used (skyline; reads labels).
* :class:`Universal` adds everything (today's memory systems).
* :class:`LLMGreedy`, :class:`LLMContextAware`: per-fact judgement from the text (and, for the
  context-aware gate, notes on the last ``n_summaries`` sessions), with or without the bank's
  remaining capacity; offline cue grammar or a model through the gateway.
* :class:`PretrainedScorer`: ridge ``mu_0`` fitted on other users' labelled facts, frozen;
  adds iff ``mu_0 . x >= tau``.
* :class:`ColdStartUCB`: Algorithm 1 from ``mu_0 = 0`` with ``kappa_m = 1`` (no other users).
* :class:`WarmStartUCB`: Algorithm 1 from the pooled prior ``kappa_m mu_0`` with ``kappa_m``
  the other users' share of used facts whose first hit came within ``m`` sessions.

``feedback="wait"`` (default) puts an added fact into the ridge system once its window of ``m``
sessions closed (censored label: hit within ``m`` while stored); ``"running"`` uses every added
fact at once with its running zero, plus the pending-bias bonus of Vernade et al. (2020). See
:mod:`toolkit.gating.reference`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.linear_model import Ridge
from sklearn.utils import check_random_state

from toolkit.gating.env import UserStream
from toolkit.gating.fast import FastEpisodes, UCBGrid, capacity_levels_run, fast_static, fast_ucb
from toolkit.gating.llm_gates import gate_decisions
from toolkit.llm import ChatModel

__all__ = ["GatingPolicy", "Oracle", "Universal", "LLMGreedy", "LLMContextAware",
           "PretrainedScorer", "ColdStartUCB", "WarmStartUCB", "fit_prior", "delay_kappa"]


def _budgets(budgets: int | Sequence[int]) -> np.ndarray:
    return np.atleast_1d(np.asarray(budgets, dtype=np.int64))


class GatingPolicy(BaseEstimator):
    """Base: ``fit`` on other users' streams and features, ``gate`` one user at many budgets."""

    def fit(self, streams: Sequence[UserStream] = (), Xs: Sequence[np.ndarray] = ()) -> GatingPolicy:
        self.random_state_ = check_random_state(getattr(self, "random_state", None))
        self.fitted_ = True
        return self

    def gate(self, stream: UserStream, X: np.ndarray, budgets: int | Sequence[int]) -> FastEpisodes:
        raise NotImplementedError


class Oracle(GatingPolicy):
    """Adds exactly the facts with a later hit (uses the labels: an upper reference)."""

    def __init__(self, random_state: int | None = None) -> None:
        self.random_state = random_state

    def gate(self, stream, X, budgets):
        b = _budgets(budgets)
        return fast_static(stream, np.tile(stream.labels, (len(b), 1)), b)


class Universal(GatingPolicy):
    """Adds every fact."""

    def __init__(self, random_state: int | None = None) -> None:
        self.random_state = random_state

    def gate(self, stream, X, budgets):
        b = _budgets(budgets)
        return fast_static(stream, np.ones((len(b), stream.n), dtype=bool), b)


class _TextGate(GatingPolicy):
    context = False

    def __init__(self, model: ChatModel | None = None, capacity_aware: bool = False,
                 n_summaries: int = 3, fallback: str = "store",
                 random_state: int | None = None) -> None:
        self.model = model
        self.capacity_aware = capacity_aware
        self.n_summaries = n_summaries
        #: what the bank does with a fact whose gate answer is unknown ("store" or "skip");
        #: an explicit setting, reported with the results, never a decision of the gate
        self.fallback = fallback
        self.random_state = random_state

    def decisions(self, stream: UserStream):
        """Per-level decisions for one user (offline rubric or model calls)."""
        return gate_decisions(stream, context=self.context, capacity_aware=self.capacity_aware,
                              model=self.model, n_summaries=self.n_summaries)

    def gate(self, stream, X, budgets, decisions=None):
        b = _budgets(budgets)
        d = decisions if decisions is not None else self.decisions(stream)
        self.unknown_ = d.unknown
        by_level = d.resolved(self.fallback)
        if by_level.shape[0] == 1:
            return fast_static(stream, np.tile(by_level[0], (len(b), 1)), b)
        return capacity_levels_run(stream, by_level, b)


class LLMGreedy(_TextGate):
    """Judges each fact from its text alone (B.1 greedy; ``capacity_aware`` adds the room check)."""

    context = False


class LLMContextAware(_TextGate):
    """Judges each fact with the current session and notes on the last ``n_summaries`` sessions."""

    context = True


def fit_prior(Xs: Sequence[np.ndarray], ys: Sequence[np.ndarray], ridge: float = 1.0) -> np.ndarray:
    """mu_0: ridge regression of the 0/1 utility label on features, pooled over users."""
    X = np.vstack(Xs)
    y = np.concatenate([np.asarray(v, dtype=np.float64) for v in ys])
    return Ridge(alpha=ridge, fit_intercept=False).fit(X, y).coef_.astype(np.float64)


def delay_kappa(streams: Sequence[UserStream], m: int) -> float:
    """kappa_m = P(first hit within m sessions | used), pooled over ``streams``."""
    d = np.concatenate([s.delays[s.labels] for s in streams] or [np.zeros(0)])
    return float((d <= m).mean()) if len(d) else 1.0


class PretrainedScorer(GatingPolicy):
    """Frozen linear scorer fitted on other users: add iff ``mu_0 . x >= tau``."""

    def __init__(self, tau: float = 0.1, ridge: float = 1.0, random_state: int | None = None) -> None:
        self.tau = tau
        self.ridge = ridge
        self.random_state = random_state

    def fit(self, streams, Xs):
        super().fit(streams, Xs)
        self.mu0_ = fit_prior(Xs, [s.labels for s in streams], self.ridge)
        return self

    def gate(self, stream, X, budgets):
        b = _budgets(budgets)
        add = (np.asarray(X) @ self.mu0_) >= self.tau
        return fast_static(stream, np.tile(add, (len(b), 1)), b)


class ColdStartUCB(GatingPolicy):
    """Algorithm 1 with no prior (mu_0 = 0, kappa_m = 1): learns from this user's hits only."""

    def __init__(self, alpha: float = 0.5, tau: float = 0.1, lam: float = 1.0, m: int = 10,
                 feedback: str = "wait", random_state: int | None = None) -> None:
        self.alpha = alpha
        self.tau = tau
        self.lam = lam
        self.m = m
        self.feedback = feedback
        self.random_state = random_state

    def grid(self, budgets: np.ndarray, d: int) -> UCBGrid:
        """The one-configuration-per-budget grid for :func:`toolkit.gating.fast.fast_ucb`."""
        return UCBGrid(budget=budgets, lam=self.lam, alpha=self.alpha, tau=self.tau, m=self.m,
                       kappa=1.0, mu_prior=None, feedback=self.feedback)

    def gate(self, stream, X, budgets):
        b = _budgets(budgets)
        return fast_ucb(stream, X, self.grid(b, np.asarray(X).shape[1]))


class WarmStartUCB(ColdStartUCB):
    """Algorithm 1 from the pooled prior: ridge towards ``kappa_m mu_0``, threshold ``kappa_m tau``."""

    def __init__(self, alpha: float = 0.5, tau: float = 0.1, lam: float = 10.0, m: int = 10,
                 ridge: float = 1.0, feedback: str = "wait", random_state: int | None = None) -> None:
        super().__init__(alpha=alpha, tau=tau, lam=lam, m=m, feedback=feedback,
                         random_state=random_state)
        self.ridge = ridge

    def fit(self, streams, Xs):
        super().fit(streams, Xs)
        self.mu0_ = fit_prior(Xs, [s.labels for s in streams], self.ridge)
        self.kappa_ = delay_kappa(streams, self.m)
        return self

    def grid(self, budgets, d):
        k = self.kappa_
        return UCBGrid(budget=budgets, lam=self.lam, alpha=self.alpha, tau=self.tau, m=self.m,
                       kappa=k, mu_prior=np.tile(k * self.mu0_, (len(budgets), 1)),
                       feedback=self.feedback)
