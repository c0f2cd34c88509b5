"""PAMU tracking: sliding window + EMA per dimension, fusion, change detection, prompt.

Fusion follows the paper exactly (Eqs. 4-9): ``SW_t`` is the mean of the last ``W``
observations, ``EMA_t = beta * EMA_{t-1} + (1 - beta) * p_t`` (``EMA_1 = p_1``), and the
tracked vector is ``w_t = lambda * SW_t + (1 - lambda) * EMA_t``; categorical dimensions are
averaged as probability vectors and labelled by argmax (Eq. 10).

Change score (Eq. 17), ``C_t = |SW_t - EMA| / (eps + sqrt(Var(SW) + Var(EMA)))``. The paper
leaves three things open; our choices:

1. *Which EMA.* The EMA compared with the window is the long-term estimate of the turns
   *before* the window (``reference="lagged"``, a bias-corrected EMA with the same ``beta``).
   With the literal ``EMA_t`` (``reference="current"``) the EMA has already absorbed the
   window's own turns, so a step of size D shows as at most ~0.34 D with W=3, beta=0.7, and
   only two turns after it; ``prefmem reproduce drift`` measures both.
2. *How the variances are estimated.* Both are sampling variances of the two estimators
   under a per-dimension noise variance ``s2``: ``Var(SW) = s2 / n_w`` and
   ``Var(EMA) = s2 / n_eff`` with ``n_eff = (sum w)^2 / sum w^2`` of the EMA weights.
   ``s2`` is estimated from the reference turns only (a change must not inflate its own
   yardstick), shrunk toward a prior ``prior_sd^2`` worth ``prior_weight`` pseudo-turns and
   never below ``sd_floor^2``. Categorical dimensions are scored per category channel and
   the dimension takes the largest channel score.
3. *When a score counts.* A dimension is flagged at turn t when ``C_t >= delta`` after a
   warm-up of ``warmup`` reference turns, the last ``persist`` turns each sit at least
   ``z_persist`` noise units on the same side of the reference (one odd turn is not a
   change), the shift is at least ``min_effect``, and the change is corroborated.
   Dimensions co-move when persistent with score >= ``soft`` * delta and shift >=
   ``min_effect`` / 2; the ``groups`` (affect = tone + emotion, length, register =
   density + formality) read different cues. A change is corroborated when (a) one
   dimension qualifies and ``min_groups`` groups co-move; or (b) one dimension scores
   ``strong`` * delta; or (c) every group co-moves and their pooled score, sqrt of the sum
   of each group's best C^2, reaches ``pooled`` * delta (a broad change just under delta
   everywhere, e.g. plain questions turning formal); or (d) a categorical *label switch*:
   the dimension scores C >= ``label_strong`` * delta, a new category tops the run of
   >= ``label_persist`` shifted turns (its own channel rising persistently) and it topped
   at most ``label_share`` of the reference turns (an
   affect-only switch, e.g. enthusiastic to angry, which a bounded probability channel
   cannot lift to ``strong`` * delta). All co-moving dimensions are flagged with it. A
   flag re-anchors that dimension: its EMA jumps to the new run's mean and its reference
   restarts there (the "memory update" of the paper), so it cannot fire twice for one
   change; a dimension that qualifies within ``refractory`` turns of a flag is re-anchored
   silently as part of that change.

Defaults (ours) are window 3, beta 0.8, lambda 0.6, delta 4.0 (chosen on the simulated panel of
:mod:`toolkit.drift.users`, seeds 0-3). Rules (c), (d) and the refractory were added after an
independent hand-written check (``pooled`` 1.25, ``label_strong`` 1.15, ``label_share`` 0.15,
``refractory`` 2; none adds a stationary flag on panel seeds 0-3); the community
reimplementation uses window 3, EMA decay 0.7, fuse weight 0.6 and threshold 0.9 (its
threshold is on a differently scaled score). ``prefmem reproduce drift`` shows the
sensitivity of latency and false alarms to all four.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache

import numpy as np

from toolkit.drift.describe import preference_prompt
from toolkit.drift.extract import CATEGORIES, DIMS, extract_turns
from toolkit.records import DriftInput, DriftOutput

#: the community reimplementation's settings, for reference and comparison
COMMUNITY_DEFAULTS: dict[str, float] = {"window": 3, "beta": 0.7, "fuse": 0.6, "threshold": 0.9}


def _default_prior_sd() -> dict[str, float]:
    return {"tone": 0.25, "emotion": 0.25, "length": 0.12, "density": 0.10, "formality": 0.14}


@dataclass(frozen=True)
class TrackerConfig:
    """Every knob of the tracker (see the module docstring for what each does)."""

    window: int = 3
    beta: float = 0.8
    fuse: float = 0.6
    #: "fixed": lambda = ``fuse``; "learned": PAMU's Full, a data-dependent lambda per
    #: dimension and turn (:meth:`PreferenceTracker._learned_lambda`)
    fuse_mode: str = "fixed"
    threshold: float = 4.0
    eps: float = 1e-6
    reference: str = "lagged"
    warmup: int = 2
    persist: int = 2
    z_persist: float = 1.25
    min_effect: float = 0.15
    min_groups: int = 2
    groups: tuple[tuple[str, ...], ...] = (("tone", "emotion"), ("length",), ("density", "formality"))
    strong: float = 2.0
    label_persist: int = 3
    label_share: float = 0.15
    label_strong: float = 1.15
    pooled: float = 1.25
    refractory: int = 2
    soft: float = 0.6
    prior_sd: dict[str, float] = field(default_factory=_default_prior_sd)
    prior_weight: float = 4.0
    sd_floor: float = 0.1
    detect: bool = True
    reanchor: bool = True
    dims: tuple[str, ...] = DIMS

    def __post_init__(self) -> None:
        if self.window < 1:
            raise ValueError("window must be >= 1")
        if not 0.0 < self.beta < 1.0:
            raise ValueError("beta must be in (0, 1)")
        if not 0.0 <= self.fuse <= 1.0:
            raise ValueError("fuse (lambda) must be in [0, 1]")
        if self.threshold <= 0:
            raise ValueError("threshold must be > 0")
        if self.reference not in ("lagged", "current"):
            raise ValueError("reference must be 'lagged' or 'current'")
        if self.fuse_mode not in ("fixed", "learned"):
            raise ValueError("fuse_mode must be 'fixed' or 'learned'")


def _as_array(dim: str, value: float | dict[str, float]) -> np.ndarray:
    if dim in CATEGORIES:
        return np.array([float(value[c]) for c in CATEGORIES[dim]])
    return np.array([float(value)])


def _from_array(dim: str, arr: np.ndarray, ndigits: int = 4) -> float | dict[str, float]:
    if dim in CATEGORIES:
        return {c: round(float(x), ndigits) for c, x in zip(CATEGORIES[dim], arr, strict=True)}
    return round(float(arr[0]), ndigits)


@lru_cache(maxsize=4096)
def _ema_weights(m: int, beta: float) -> np.ndarray:
    """beta^(m-1), ..., beta, 1 (read-only: one array per (m, beta), shared by every step)."""
    w = beta ** np.arange(m - 1, -1, -1, dtype=float)
    w.setflags(write=False)
    return w


@dataclass
class _DimState:
    obs: list[np.ndarray] = field(default_factory=list)  # every observation of this dim
    anchor: int = 0  # index into obs where the current regime starts
    ema: np.ndarray | None = None
    last_flag: int = -10**9
    #: the observations as rows of one array (capacity doubles), so a step reads a view of
    #: them instead of stacking the whole history again: the same rows, the same results
    buf: np.ndarray | None = None

    def add(self, x: np.ndarray) -> None:
        n = len(self.obs)
        if self.buf is None or n == len(self.buf):
            grown = np.empty((max(8, 2 * n), len(x)))
            if self.buf is not None:
                grown[:n] = self.buf[:n]
            self.buf = grown
        self.buf[n] = x
        self.obs.append(x)

    def since(self, start: int) -> np.ndarray:
        """Observations ``start:`` as an (m, k) view (what ``np.stack(obs[start:])`` gave)."""
        return self.buf[max(start, 0):len(self.obs)]


@dataclass(frozen=True)
class TurnState:
    """What the tracker reports after one turn."""

    turn: int
    observed: dict | None
    vector: dict[str, float | dict[str, float]]
    score: dict[str, float]
    changed: list[str]
    prompt: str


class PreferenceTracker:
    """Online PAMU tracker over one dialogue: feed observations turn by turn with :meth:`step`."""

    def __init__(self, config: TrackerConfig | None = None):
        self.config = config or TrackerConfig()
        self._dims = {d: _DimState() for d in self.config.dims}
        self._t = 0
        self._last_flag = -(10**9)
        self._last_vector: dict | None = None

    # -- scoring -----------------------------------------------------------------------
    def _window(self, dim: str, seg: np.ndarray, n_w: int) -> tuple[np.ndarray, ...]:
        """(C per channel, SW - EMA, noise variance, reference) for the last ``n_w`` turns."""
        cfg = self.config
        recent, base = seg[-n_w:], seg[:-n_w]
        ref_obs = seg if cfg.reference == "current" else base
        w = _ema_weights(len(ref_obs), cfg.beta)
        ref = (w[:, None] * ref_obs).sum(axis=0) / w.sum()
        n_eff = w.sum() ** 2 / (w**2).sum()
        ss = ((base - base.mean(axis=0)) ** 2).sum(axis=0) if len(base) > 1 else np.zeros(seg.shape[1])
        prior = cfg.prior_sd.get(dim, 0.15) ** 2
        s2 = np.maximum((cfg.prior_weight * prior + ss) / (cfg.prior_weight + max(len(base) - 1, 0)),
                        cfg.sd_floor**2)
        diff = recent.mean(axis=0) - ref
        c = np.abs(diff) / (cfg.eps + np.sqrt(s2 / n_w + s2 / n_eff))
        return c, diff, s2, ref

    def _score(self, dim: str, st: _DimState) -> tuple[float, int, int, bool]:
        """(C_t, level, run start, label switch): level 2 qualifies, 1 co-moves (soft), 0 neither.

        The window is the last W turns; when the trailing turns that sit on the shifted side
        form a shorter run (>= ``persist``), the score is taken over that run instead, so a
        fresh change is not diluted by the turns before it.
        """
        cfg = self.config
        seg = st.since(st.anchor)
        m = len(seg)
        n_w = min(cfg.window, m - cfg.warmup)
        if n_w < max(1, cfg.persist) or m < 2:
            return 0.0, 0, st.anchor, False
        c, diff, s2, ref = self._window(dim, seg, n_w)
        best = (0.0, 0, st.anchor, False)
        trimmed: dict[int, tuple[np.ndarray, ...]] = {}
        any_switch = False
        for j in range(seg.shape[1]):
            sign = 1.0 if diff[j] >= 0 else -1.0
            z = sign * (seg[-n_w:, j] - ref[j]) / math.sqrt(s2[j])
            run = 0
            while run < n_w and z[n_w - 1 - run] >= cfg.z_persist:
                run += 1
            score, effect = float(c[j]), abs(float(diff[j]))
            if cfg.persist <= run < n_w:
                if run not in trimmed:
                    trimmed[run] = self._window(dim, seg, run)
                ct, dt, _, _ = trimmed[run]
                if ct[j] > score and np.sign(dt[j]) == sign:
                    score, effect = float(ct[j]), abs(float(dt[j]))
            persistent = run >= max(1, cfg.persist)
            if persistent and score >= cfg.threshold and effect >= cfg.min_effect:
                lvl = 2
            elif persistent and score >= cfg.soft * cfg.threshold and effect >= cfg.min_effect / 2:
                lvl = 1
            else:
                lvl = 0
            # a categorical label switch: the channel rising to the top of the whole window,
            # every window turn on the new side, the reference's top category left behind
            switch = (dim in CATEGORIES and lvl == 2 and sign > 0 and run >= cfg.label_persist
                      and int(np.argmax(seg[-run:].mean(axis=0))) == j != int(np.argmax(ref))
                      and self._rare_label(seg[:-run], j))
            any_switch = any_switch or switch
            if (lvl, score) > (best[1], best[0]):
                best = (score, lvl, st.anchor + m - run, False)
        # the label switch belongs to the dimension, whichever of its channels scores highest
        return best[0], best[1], best[2], any_switch and best[1] == 2

    def _rare_label(self, base: np.ndarray, j: int) -> bool:
        """Whether category ``j`` topped at most ``label_share`` of >= ``warmup`` + 1 reference turns."""
        cfg = self.config
        if len(base) < cfg.warmup + 1:
            return False
        return float(np.mean(np.argmax(base, axis=1) == j)) <= cfg.label_share

    def step(self, observed: dict | None) -> TurnState:
        """Add one turn's observation (``None`` for a missing one) and report the new state."""
        cfg = self.config
        self._t += 1
        scores = {d: 0.0 for d in cfg.dims}
        level: dict[str, int] = {}
        starts: dict[str, int] = {}
        switched: dict[str, bool] = {}
        if observed is not None:
            for d in cfg.dims:
                st = self._dims[d]
                x = _as_array(d, observed[d])
                st.add(x)
                st.ema = x.copy() if st.ema is None else cfg.beta * st.ema + (1 - cfg.beta) * x
                score, lvl, start, switch = self._score(d, st)
                scores[d] = round(score, 4)
                level[d], starts[d], switched[d] = lvl, start, switch
        changed: list[str] = []
        if cfg.detect:
            full = [d for d in cfg.dims if level.get(d) == 2]
            strong = [d for d in full if scores[d] >= cfg.strong * cfg.threshold]
            co = [d for d in cfg.dims if level.get(d, 0) >= 1]
            group_best = [max(scores[d] for d in g if d in co) for g in cfg.groups
                          if any(d in co for d in g)]
            n_groups = len(group_best)
            # every independent group co-moving just under the threshold: their pooled score
            # (root sum of squares of each group's best) is held to a higher bar instead
            broad = (n_groups == len(cfg.groups) > cfg.min_groups
                     and math.sqrt(sum(g * g for g in group_best)) >= cfg.pooled * cfg.threshold)
            label = [d for d in cfg.dims if switched.get(d)
                     and scores[d] >= cfg.label_strong * cfg.threshold]
            if (full and n_groups >= cfg.min_groups) or strong or broad or label:
                changed = [d for d in cfg.dims if level.get(d, 0) >= 1]
        # a dimension catching up within ``refractory`` turns of a flag belongs to that change:
        # it is re-anchored (memory update) but not reported as a new change
        quiet = bool(changed) and self._t - self._last_flag <= cfg.refractory
        if changed and not quiet:
            self._last_flag = self._t
        for d in changed:
            st = self._dims[d]
            st.anchor = starts[d]
            st.last_flag = self._t
            if cfg.reanchor:
                st.ema = st.since(st.anchor).mean(axis=0)
        if quiet:
            changed = []
        vector = self._fused() if any(s.obs for s in self._dims.values()) else {}
        prompt = preference_prompt(vector, changed) if vector else ""
        return TurnState(self._t, observed, vector, scores, changed, prompt)

    def _learned_lambda(self, dim: str, st: _DimState, sw: np.ndarray) -> float:
        """PAMU's learned fusion weight, from its Bayesian reading of Eq. 13.

        The seed (PAMU, §"Bayesian Estimation View") fuses as "w_t = tau^2/(sigma^2 + tau^2) *
        SW_t + sigma^2/(sigma^2 + tau^2) * EMA_t, where sigma^2 and tau^2 denote the variances
        of the short-term and long-term estimators", which "justifies lambda as a data-dependent
        confidence weight"; its ablation list says "The original model learns a dynamic weight
        lambda to fuse SW and EMA" (Equal Fusion fixes it at 0.5). We estimate both from the
        dialogue so far: sigma^2 = s2 / n_w (the window mean's sampling variance), tau^2 =
        s2 / n_eff + bias^2 (the EMA's error as an estimate of the current preference: its
        sampling variance plus its squared lag behind the window, ``(SW - EMA)^2`` less the
        noise both carry, floored at 0). ``s2`` is the per-dimension noise variance, shrunk
        toward the prior like the change score's. Stationary turns give lambda near
        n_w / (n_w + n_eff); after a change the EMA's lag grows and lambda moves toward 1.
        """
        cfg = self.config
        seg = st.since(st.anchor) if len(st.obs) > st.anchor else st.since(0)
        n_w = min(cfg.window, len(st.obs))
        w = _ema_weights(len(st.obs), cfg.beta)
        n_eff = float(w.sum() ** 2 / (w**2).sum())
        ss = ((seg - seg.mean(axis=0)) ** 2).sum(axis=0) if len(seg) > 1 else np.zeros(seg.shape[1])
        prior = cfg.prior_sd.get(dim, 0.15) ** 2
        s2 = np.maximum((cfg.prior_weight * prior + ss) / (cfg.prior_weight + max(len(seg) - 1, 0)),
                        cfg.sd_floor**2)
        sigma2 = s2 / n_w
        bias2 = np.maximum((sw - st.ema) ** 2 - sigma2 - s2 / n_eff, 0.0)
        tau2 = s2 / n_eff + bias2
        return float(np.mean(tau2 / (sigma2 + tau2)))

    def _fused(self) -> dict[str, float | dict[str, float]]:
        cfg = self.config
        out: dict[str, float | dict[str, float]] = {}
        for d in cfg.dims:
            st = self._dims[d]
            sw = st.since(len(st.obs) - cfg.window).mean(axis=0)
            lam = self._learned_lambda(d, st, sw) if cfg.fuse_mode == "learned" else cfg.fuse
            fused = lam * sw + (1 - lam) * st.ema
            out[d] = _from_array(d, fused)
        return out


def track_observations(observations: Sequence[dict | None],
                       config: TrackerConfig | None = None) -> list[TurnState]:
    """Run a fresh tracker over one dialogue's per-turn observations."""
    tracker = PreferenceTracker(config)
    return [tracker.step(o) for o in observations]


def make_config(window: int | None = None, beta: float | None = None, fuse: float | None = None,
                threshold: float | None = None, base: TrackerConfig | None = None) -> TrackerConfig:
    """A config with the given knobs overriding ``base`` (defaults when None)."""
    cfg = base or TrackerConfig()
    over = {k: v for k, v in (("window", window), ("beta", beta), ("fuse", fuse),
                              ("threshold", threshold)) if v is not None}
    return replace(cfg, **over) if over else cfg


def track_records(records: list[DriftInput], model, *, window: int | None = None,
                  beta: float | None = None, fuse: float | None = None,
                  threshold: float | None = None) -> list[DriftOutput]:
    """Track every dialogue's user turns; one DriftOutput per turn (``turn`` from 1).

    Observations come from the user turns, offline or through ``model``; a turn the LLM
    extractor could not rate is written ``status: "unknown"`` with no vector, score, flag or
    prompt (never a score of 0), and leaves the tracker's state unchanged.
    """
    cfg = make_config(window, beta, fuse, threshold)
    texts = [t.user for r in records for t in r.turns]
    ids = [f"{r.id}#{i + 1}" for r in records for i in range(len(r.turns))]
    observed = extract_turns(texts, model, ids=ids)
    out: list[DriftOutput] = []
    pos = 0
    for r in records:
        obs = observed[pos:pos + len(r.turns)]
        pos += len(r.turns)
        for o, s in zip(obs, track_observations(obs, cfg), strict=True):
            if o is None:
                out.append(DriftOutput(id=r.id, turn=s.turn, status="unknown", vector=None,
                                       score=None, changed=None, prompt=None))
            else:
                out.append(DriftOutput(id=r.id, turn=s.turn, vector=s.vector, score=s.score,
                                       changed=s.changed, prompt=s.prompt))
    return out
