"""Metrics as pure functions of logged decisions: rates, P/R/F1, CIs, paired tests."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from sklearn.utils import check_random_state


@dataclass(frozen=True)
class Binary:
    """Confusion counts for a binary decision with derived metrics (NaN when undefined)."""

    tp: int
    fp: int
    tn: int
    fn: int

    @property
    def n_pos(self) -> int:
        return self.tp + self.fn

    @property
    def n_neg(self) -> int:
        return self.tn + self.fp

    @property
    def precision(self) -> float:
        return _div(self.tp, self.tp + self.fp)

    @property
    def recall(self) -> float:
        return _div(self.tp, self.tp + self.fn)

    @property
    def specificity(self) -> float:
        return _div(self.tn, self.tn + self.fp)

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        if math.isnan(p) or math.isnan(r) or p + r == 0:
            return 0.0 if (self.tp == 0 and (self.fp + self.fn) > 0) else float("nan")
        return 2 * p * r / (p + r)

    @property
    def accuracy(self) -> float:
        return _div(self.tp + self.tn, self.tp + self.tn + self.fp + self.fn)

    @property
    def balanced_accuracy(self) -> float:
        return float(np.nanmean([self.recall, self.specificity]))


def _div(a: float, b: float) -> float:
    return a / b if b else float("nan")


def confusion(y_true: Sequence[bool], y_pred: Sequence[bool]) -> Binary:
    t = np.asarray(y_true, dtype=bool)
    p = np.asarray(y_pred, dtype=bool)
    return Binary(
        tp=int(np.sum(t & p)), fp=int(np.sum(~t & p)), tn=int(np.sum(~t & ~p)), fn=int(np.sum(t & ~p))
    )


def mean_std(values: Sequence[float]) -> tuple[float, float]:
    """Mean and sample standard deviation (ddof=1; NaN for fewer than two values)."""
    v = np.asarray([x for x in values if not _isnan(x)], dtype=float)
    if v.size == 0:
        return float("nan"), float("nan")
    return float(v.mean()), float(v.std(ddof=1)) if v.size > 1 else float("nan")


def _isnan(x: float | None) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def fmt_mean_std(values: Sequence[float], digits: int = 3) -> str:
    m, s = mean_std(values)
    return f"{m:.{digits}f} ± {s:.{digits}f}"


def wilson_ci(k: int, n: int, alpha: float = 0.05) -> tuple[float, float]:
    """Wilson score interval for k successes out of n (good at small n and at 0 or n)."""
    if n == 0:
        return float("nan"), float("nan")
    from scipy.stats import norm

    z = float(norm.ppf(1 - alpha / 2))
    p = k / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return max(0.0, centre - half), min(1.0, centre + half)


def bootstrap_ci(
    data: Sequence | np.ndarray,
    statistic: Callable[[np.ndarray], float],
    *,
    n_resamples: int = 2000,
    alpha: float = 0.05,
    random_state: int | np.random.RandomState | None = 0,
    groups: Sequence | None = None,
) -> tuple[float, float]:
    """Percentile bootstrap CI of ``statistic`` over rows of ``data``.

    With ``groups``, whole groups are resampled (cluster bootstrap), e.g. annotators or users.
    """
    rng = check_random_state(random_state)
    arr = np.asarray(data, dtype=object) if not isinstance(data, np.ndarray) else data
    n = len(arr)
    if n == 0:
        return float("nan"), float("nan")
    stats = np.empty(n_resamples)
    if groups is None:
        for b in range(n_resamples):
            stats[b] = statistic(arr[rng.randint(0, n, n)])
    else:
        g = np.asarray(groups)
        uniq = np.unique(g)
        idx = {u: np.flatnonzero(g == u) for u in uniq}
        for b in range(n_resamples):
            pick = rng.randint(0, len(uniq), len(uniq))
            stats[b] = statistic(arr[np.concatenate([idx[uniq[i]] for i in pick])])
    stats = stats[~np.isnan(stats)]
    if stats.size == 0:
        return float("nan"), float("nan")
    return float(np.quantile(stats, alpha / 2)), float(np.quantile(stats, 1 - alpha / 2))


def paired_bootstrap_test(
    a: Sequence[float], b: Sequence[float], *, n_resamples: int = 5000, random_state: int = 0
) -> dict[str, float]:
    """Paired bootstrap of mean(a - b): the difference, its 95% CI and a two-sided p-value."""
    rng = check_random_state(random_state)
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    n = d.size
    if n == 0:
        return {"diff": float("nan"), "ci_low": float("nan"), "ci_high": float("nan"), "p": float("nan")}
    boots = d[rng.randint(0, n, (n_resamples, n))].mean(axis=1)
    centred = boots - d.mean()
    p = float(np.mean(np.abs(centred) >= abs(d.mean())))
    return {
        "diff": float(d.mean()),
        "ci_low": float(np.quantile(boots, 0.025)),
        "ci_high": float(np.quantile(boots, 0.975)),
        "p": p,
    }


def micro_macro(hits: Sequence[int], totals: Sequence[int]) -> tuple[float, float]:
    """Micro (pooled) and macro (mean of per-group ratios) rates."""
    h = np.asarray(hits, dtype=float)
    t = np.asarray(totals, dtype=float)
    micro = float(h.sum() / t.sum()) if t.sum() else float("nan")
    with np.errstate(invalid="ignore", divide="ignore"):
        ratios = np.where(t > 0, h / np.where(t > 0, t, 1), np.nan)
    macro = float(np.nanmean(ratios)) if np.any(t > 0) else float("nan")
    return micro, macro


def violation_rate(unit_verdicts: Sequence[Sequence[str]]) -> float:
    """Share of evaluation units with at least one ``violated`` verdict (others stay in the denominator)."""
    if not unit_verdicts:
        return float("nan")
    return float(np.mean([any(v == "violated" for v in unit) for unit in unit_verdicts]))


def fixed_rate(k: int, unknown: int, n: int) -> dict[str, float | int]:
    """A rate over ALL ``n`` items (an unknown is never a hit), ``unknown`` as its own count,
    and the rate over the answered items as a second figure, never instead of the first."""
    answered = n - unknown
    if not 0 <= unknown <= n or not 0 <= k <= answered:
        raise ValueError(f"need 0 <= k <= n - unknown and 0 <= unknown <= n (k={k}, unknown={unknown}, n={n})")
    return {"rate": k / n if n else float("nan"), "k": k, "n": n, "unknown": unknown,
            "answered_rate": k / answered if answered else float("nan")}
