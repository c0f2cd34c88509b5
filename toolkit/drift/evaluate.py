"""Scoring drift tracking against simulated users' hidden styles (pure functions of logs).

- Detection: a change point ``k`` is hit when a flag falls in ``[k, k + tol]`` (for a gradual
  drift, ``[start, end + tol]``); latency is the first such flag minus ``k``; flags before the
  first change point are *early*; flags outside every change window are false alarms.
- Tracking error: per turn, the mean over dimensions of ``|w_t - target|`` (scalars) or the
  total-variation distance (categories), where the target is the extractor's expected output
  for the user's hidden style at that turn, estimated on a separate calibration stream of
  turns written in that style (never the evaluated turns).
- Prompt agreement: the share of the five prompt labels that equal the hidden style's labels.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import lru_cache

import numpy as np

from toolkit._seeding import item_rng
from toolkit.drift.describe import labels
from toolkit.drift.extract import CATEGORIES, DIMS, extract_offline
from toolkit.drift.tracker import TrackerConfig, track_observations
from toolkit.drift.users import TOPICS, DriftingUser, Style, write_turn

ABLATIONS: tuple[str, ...] = ("Full", "Fixed λ (ours)", "w/o SW", "w/o EMA", "Equal Fusion",
                              "w/o Detection", "Single Pref", "Static Pref")


def score_detection(flags: Sequence[int], gold: Mapping, tol: int = 2) -> dict:
    """Hits, latencies, early flags and false alarms of one sequence's flagged turns."""
    cps = list(gold["change_points"])
    kind = gold["kind"]
    end_extra = gold.get("params", {}).get("end", None) if kind == "gradual" else None
    windows = []
    for k in cps:
        hi = (end_extra if end_extra is not None else k) + tol
        windows.append((k, hi))
    hits, lat = 0, []
    for lo, hi in windows:
        inside = [f for f in flags if lo <= f <= hi]
        if inside:
            hits += 1
            lat.append(inside[0] - lo)
    first = cps[0] if cps else None
    early = sum(1 for f in flags if first is not None and f < first)
    fa = sum(1 for f in flags if not any(lo <= f <= hi for lo, hi in windows))
    return {"kind": kind, "n_cp": len(cps), "hits": hits, "latencies": lat, "early": early,
            "false_alarms": fa, "n_turns": gold["n_turns"], "flags": list(flags)}


@lru_cache(maxsize=512)
def style_target(style: Style, n: int = 40, seed: int = 10_007) -> tuple[tuple[str, tuple[float, ...]], ...]:
    """The extractor's mean output over ``n`` calibration turns written in ``style``."""
    acc: dict[str, np.ndarray] = {}
    for i in range(n):
        rng = item_rng(seed, "calibration", style, i)
        obs = extract_offline(write_turn(style, TOPICS[i % len(TOPICS)], rng))
        for d in DIMS:
            v = obs[d]
            arr = np.array([v[c] for c in CATEGORIES[d]]) if d in CATEGORIES else np.array([v])
            acc[d] = acc.get(d, 0) + arr / n
    return tuple((d, tuple(float(x) for x in acc[d])) for d in DIMS)


def tracking_error(vector: Mapping, target: tuple, dims: Sequence[str] = DIMS) -> float:
    """Mean absolute (or total-variation) distance between a tracked vector and a target."""
    tgt = dict(target)
    errs = []
    for d in dims:
        t = np.array(tgt[d])
        if d in CATEGORIES:
            v = np.array([vector[d][c] for c in CATEGORIES[d]])
            errs.append(0.5 * float(np.abs(v - t).sum()))
        else:
            errs.append(abs(float(vector[d]) - float(t[0])))
    return float(np.mean(errs))


def prompt_agreement(vector: Mapping, style: Style) -> float:
    """Share of the five dimensions whose prompt label equals the hidden style's label."""
    got, want = labels(vector), style.labels()
    return sum(got[d] == want[d] for d in want) / len(want)


def _neutral_vector() -> dict:
    return {"tone": {c: float(c == "neutral") for c in CATEGORIES["tone"]},
            "emotion": {c: float(c == "neutral") for c in CATEGORIES["emotion"]},
            "length": 0.5, "density": 0.5, "formality": 0.5}


def _mean_vector(obs: Sequence[dict]) -> dict:
    out: dict = {}
    for d in DIMS:
        if d in CATEGORIES:
            out[d] = {c: float(np.mean([o[d][c] for o in obs])) for c in CATEGORIES[d]}
        else:
            out[d] = float(np.mean([o[d] for o in obs]))
    return out


def ablation_vectors(obs: Sequence[dict], variant: str, cfg: TrackerConfig) -> list[dict]:
    """The per-turn preference vector a Table 4 variant would put in the prompt."""
    if variant == "Full":  # PAMU's Full learns lambda (see PreferenceTracker._learned_lambda)
        return [s.vector for s in track_observations(obs, replace(cfg, fuse_mode="learned"))]
    if variant == "Fixed λ (ours)":  # our default tracker: lambda fixed at cfg.fuse
        return [s.vector for s in track_observations(obs, replace(cfg, fuse_mode="fixed"))]
    if variant == "w/o SW":
        return [s.vector for s in track_observations(obs, replace(cfg, fuse=0.0, detect=False))]
    if variant == "w/o EMA":
        return [s.vector for s in track_observations(obs, replace(cfg, fuse=1.0, detect=False))]
    if variant == "Equal Fusion":
        return [s.vector for s in track_observations(obs, replace(cfg, fuse=0.5))]
    if variant == "w/o Detection":
        return [s.vector for s in track_observations(obs, replace(cfg, detect=False))]
    if variant == "Single Pref":
        out = []
        for s in track_observations(obs, cfg):
            v = _neutral_vector()
            v["length"] = s.vector["length"]
            out.append(v)
        return out
    if variant == "Static Pref":
        return [_mean_vector(obs[: min(5, max(t, 1))]) for t in range(1, len(obs) + 1)]
    raise ValueError(f"unknown ablation {variant!r}")


def score_ablation(users: Sequence[DriftingUser], observations: Sequence[Sequence[dict]],
                   variant: str, cfg: TrackerConfig) -> dict[str, list[float]]:
    """Per-sequence mean tracking error and prompt agreement of one variant."""
    err, agree = [], []
    for u, obs in zip(users, observations, strict=True):
        vecs = ablation_vectors(obs, variant, cfg)
        styles = [u.schedule.style_at(t) for t in range(1, len(obs) + 1)]
        err.append(float(np.mean([tracking_error(v, style_target(s)) for v, s in zip(vecs, styles, strict=True)])))
        agree.append(float(np.mean([prompt_agreement(v, s) for v, s in zip(vecs, styles, strict=True)])))
    return {"tracking_error": err, "prompt_agreement": agree}


def detection_summary(results: Sequence[dict]) -> dict[str, float]:
    """Pooled detection figures over sequences of one kind."""
    n_cp = sum(r["n_cp"] for r in results)
    hits = sum(r["hits"] for r in results)
    lat = [x for r in results for x in r["latencies"]]
    turns = sum(r["n_turns"] for r in results)
    return {
        "sequences": len(results), "change_points": n_cp, "hits": hits,
        "hit_rate": hits / n_cp if n_cp else float("nan"),
        "mean_latency": float(np.mean(lat)) if lat else float("nan"),
        "sd_latency": float(np.std(lat, ddof=1)) if len(lat) > 1 else float("nan"),
        "seqs_with_early_flag": sum(1 for r in results if r["early"]),
        "false_alarms": sum(r["false_alarms"] for r in results),
        "false_alarms_per_30_turns": 30 * sum(r["false_alarms"] for r in results) / turns if turns else 0.0,
    }


def flags_of(obs: Sequence[dict | None], cfg: TrackerConfig) -> list[int]:
    """Turns at which the tracker flags any dimension."""
    return [s.turn for s in track_observations(obs, cfg) if s.changed]


