"""SW/EMA fusion, change score and detection of the PAMU tracker."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from toolkit.drift.describe import labels, level, preference_prompt
from toolkit.drift.extract import CATEGORIES, DIMS
from toolkit.drift.tracker import TrackerConfig, track_observations, track_records
from toolkit.llm import Gateway
from toolkit.records import DriftInput, Turn


def obs(length: float, formality: float, density: float, tone: str = "neutral", emotion: str = "neutral",
        p: float = 0.7) -> dict:
    def cat(dim, top):
        cs = CATEGORIES[dim]
        rest = (1 - p) / (len(cs) - 1)
        return {c: (p if c == top else rest) for c in cs}
    return {"tone": cat("tone", tone), "length": length, "emotion": cat("emotion", emotion),
            "density": density, "formality": formality}


def noisy_series(rng, n, style, sd=0.06):
    out = []
    for _ in range(n):
        lo, fo, de, tone, emo = style
        out.append(obs(float(np.clip(lo + rng.normal(0, sd), 0, 1)), float(np.clip(fo + rng.normal(0, sd), 0, 1)),
                       float(np.clip(de + rng.normal(0, sd), 0, 1)), tone, emo, p=float(np.clip(0.7 + rng.normal(0, 0.1), 0.3, 1))))
    return out


CASUAL = (0.2, 0.15, 0.3, "humorous", "joy")
FORMAL = (0.75, 0.9, 0.8, "serious", "focused")


def test_fusion_matches_equations_4_to_9_when_detection_is_off():
    cfg = TrackerConfig(window=3, beta=0.7, fuse=0.6, detect=False)
    xs = [0.1, 0.5, 0.3, 0.9, 0.2]
    states = track_observations([obs(x, 0.5, 0.5) for x in xs], cfg)
    ema = None
    for t, s in enumerate(states, start=1):
        ema = xs[0] if ema is None else 0.7 * ema + 0.3 * xs[t - 1]
        sw = np.mean(xs[max(0, t - 3):t])
        assert s.vector["length"] == pytest.approx(0.6 * sw + 0.4 * ema, abs=1e-4)
        assert abs(sum(s.vector["tone"].values()) - 1) < 1e-3
        assert s.changed == []


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("k", [3, 6, 12])
def test_abrupt_switch_flagged_within_two_turns_never_before(seed, k):
    rng = np.random.default_rng(seed)
    series = noisy_series(rng, k - 1, CASUAL) + noisy_series(rng, 10, FORMAL)
    flags = [s.turn for s in track_observations(series) if s.changed]
    assert flags and all(f >= k for f in flags) and flags[0] <= k + 2


@pytest.mark.parametrize("seed", range(8))
def test_stationary_noise_over_30_turns_raises_no_flag(seed):
    rng = np.random.default_rng(100 + seed)
    series = noisy_series(rng, 30, CASUAL, sd=0.1)
    assert not [s.turn for s in track_observations(series) if s.changed]


def test_one_odd_turn_is_not_a_change():
    rng = np.random.default_rng(1)
    series = noisy_series(rng, 20, CASUAL)
    series[9] = obs(*FORMAL[:3], tone="serious", emotion="focused", p=0.95)
    assert not [s.turn for s in track_observations(series) if s.changed]


def test_flag_reanchors_ema_and_does_not_repeat():
    rng = np.random.default_rng(2)
    series = noisy_series(rng, 8, CASUAL) + noisy_series(rng, 12, FORMAL)
    states = track_observations(series)
    flags = [s.turn for s in states if s.changed]
    assert len(flags) == 1
    no_re = track_observations(series, TrackerConfig(reanchor=False))
    t = flags[0]
    # after the re-anchor the fused formality is already near the new style
    assert states[t - 1].vector["formality"] > no_re[t - 1].vector["formality"]


@pytest.mark.parametrize("seed", range(6))
def test_affect_only_switch_is_flagged_by_its_label_switch(seed):
    rng = np.random.default_rng(200 + seed)
    cheerful, angry = (0.35, 0.4, 0.45, "neutral", "joy"), (0.35, 0.4, 0.45, "neutral", "frustrated")
    series = noisy_series(rng, 10, cheerful, sd=0.04) + noisy_series(rng, 6, angry, sd=0.04)
    states = track_observations(series)
    flags = [s.turn for s in states if s.changed]
    assert flags and min(flags) >= 11 and flags[0] <= 13
    assert "emotion" in states[flags[0] - 1].changed
    # without the label-switch rule one group alone needs 2 delta, which a bounded probability cannot reach
    assert not [s.turn for s in track_observations(series, TrackerConfig(label_strong=99.0)) if s.changed]


def test_three_groups_moving_together_just_under_delta_are_pooled():
    series = [obs(0.22 + 0.04 * (i % 3 - 1), 0.5 + 0.05 * (i % 2), 0.45 + 0.04 * (i % 3 - 1)) for i in range(5)]
    series += [obs(0.47, 0.75, 0.68, tone="serious", p=0.6) for _ in range(3)]
    pooled = [s.turn for s in track_observations(series) if s.changed]
    single = [s.turn for s in track_observations(series, TrackerConfig(pooled=99.0)) if s.changed]
    assert pooled and pooled[0] <= 8 and (not single or single[0] > pooled[0])


def test_a_dimension_catching_up_right_after_a_flag_is_not_a_new_change():
    rng = np.random.default_rng(4)
    series = noisy_series(rng, 8, CASUAL) + noisy_series(rng, 12, FORMAL)
    for s in track_observations(series, TrackerConfig(refractory=2)):
        if s.changed:
            first = s.turn
            break
    later = [s.turn for s in track_observations(series, TrackerConfig(refractory=2)) if s.changed and s.turn > first]
    assert all(t > first + 2 for t in later)


def test_lagged_reference_scores_a_fresh_switch_higher_than_literal_ema_t():
    rng = np.random.default_rng(3)
    series = noisy_series(rng, 8, CASUAL) + noisy_series(rng, 4, FORMAL)
    lag = track_observations(series, TrackerConfig(detect=False))
    cur = track_observations(series, TrackerConfig(detect=False, reference="current"))
    assert lag[9].score["formality"] > 1.4 * cur[9].score["formality"]


def test_config_validation():
    for bad in ({"window": 0}, {"beta": 1.0}, {"fuse": 1.5}, {"threshold": 0}, {"reference": "x"}):
        with pytest.raises(ValueError):
            TrackerConfig(**bad)


def test_labels_and_prompt():
    assert [level("density", x) for x in (0.1, 0.33, 0.65, 0.66, 1.0)] == ["sparse", "moderate", "moderate", "dense", "dense"]
    v = obs(0.8, 0.9, 0.7, "serious", "focused")
    lab = labels(v)
    assert lab == {"tone": "serious", "length": "detailed", "emotion": "focused", "density": "dense", "formality": "formal"}
    text = preference_prompt(v, ["tone"])
    assert "serious" in text and "dense" in text and "formal" in text and "shifted (tone)" in text


HAND_WRITTEN = [
    ("switch-at-4", 4, [
        "hehe my sourdough starter smells like feet, is it dead or just vibing",
        "lol what's the fastest way to peel garlic, i'm lazy",
        "ok so my houseplant fell over again 😂 tips?",
        "Could you explain the biochemical basis of lactic acid fermentation in sourdough, including the "
        "respective roles of heterofermentative bacteria and wild yeasts in acidity and leavening?",
        "Please compare the thermal conductivity of cast iron, carbon steel and aluminium cookware and "
        "its consequences for heat distribution during searing.",
        "I would like a structured summary of the principal mechanisms of root rot in potted plants, "
        "with reference to oxygen diffusion and fungal pathogens.",
        "What determines the rate of gluten network formation during autolysis, and how does hydration "
        "level modify the resulting dough rheology?",
    ]),
    ("stationary-plain", None, [
        "What time of year is best for planting tulip bulbs?", "How do I descale a kettle?",
        "Which is healthier, brown rice or white rice?", "Can you suggest a good beginner running plan?",
        "How long does homemade soup keep in the fridge?", "What's a polite way to ask a neighbour to turn music down?",
        "Should I wash new clothes before wearing them?", "How do I get my cat used to a carrier?",
        "Is it fine to charge my phone overnight?", "What are some easy houseplants for a dark flat?",
        "How do you fold a fitted sheet?", "How many hours of sleep do teenagers need?",
    ]),
]


def test_track_records_on_hand_written_dialogues_and_determinism():
    recs = [DriftInput(id=i, turns=[Turn(user=t) for t in turns]) for i, _, turns in HAND_WRITTEN]
    model = Gateway().model("offline")
    out = track_records(recs, model)
    again = track_records(list(reversed(recs)), model)
    dump = lambda xs: sorted(json.dumps(o.model_dump(), sort_keys=True) for o in xs)  # noqa: E731
    assert dump(out) == dump(again)
    assert [o.turn for o in out if o.id == "switch-at-4"] == list(range(1, 8))
    for rid, k, _ in HAND_WRITTEN:
        flags = [o.turn for o in out if o.id == rid and o.changed]
        if k is None:
            assert flags == []
        else:
            assert flags and min(flags) >= k and flags[0] <= k + 2
    for o in out:
        assert set(o.vector) == set(DIMS) and set(o.score) == set(DIMS) and set(o.changed) <= set(DIMS)
        assert o.prompt.startswith("Answer in the user's current style")


def test_keyword_overrides_reach_the_config():
    recs = [DriftInput(id="x", turns=[Turn(user="hello there"), Turn(user="hi again")])]
    model = Gateway().model("offline")
    a = track_records(recs, model, fuse=1.0, window=1)
    assert a[1].vector["length"] == pytest.approx(track_records(recs, model, fuse=1.0, window=1)[1].vector["length"])
    # with lambda=1 and W=1 the tracked value is the last observation itself
    from toolkit.drift.extract import extract_offline
    assert a[1].vector["length"] == pytest.approx(extract_offline("hi again")["length"], abs=1e-4)
    cfg = replace(TrackerConfig(), threshold=0.5)
    assert cfg.threshold == 0.5
