"""Discretised labels and the natural-language preference prompt built from a fused vector."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

#: PAMU Eq. 11 cut points, applied to every scalar dimension
CUTS: tuple[float, float] = (0.33, 0.66)

#: the three bins of each scalar dimension, low to high
LEVELS: dict[str, tuple[str, str, str]] = {
    "length": ("brief", "moderate", "detailed"),
    "density": ("sparse", "moderate", "dense"),
    "formality": ("casual", "neutral", "formal"),
}

#: how the user's emotion is carried into the reply
MOODS: dict[str, str] = {
    "joy": "cheerful", "neutral": "calm", "focused": "focused",
    "frustrated": "patient and reassuring", "anxious": "calm and reassuring",
}


def level(dim: str, value: float) -> str:
    """The Sparse/Moderate/Dense-style bin of a scalar in [0, 1] (Eq. 11)."""
    lo, hi = CUTS
    names = LEVELS[dim]
    return names[0] if value < lo else names[1] if value < hi else names[2]


def argmax_label(probs: Mapping[str, float]) -> str:
    """The most probable category (Eq. 10); ties go to the first in order."""
    return max(probs, key=lambda k: probs[k])


def labels(vector: Mapping[str, float | Mapping[str, float]]) -> dict[str, str]:
    """Every dimension's discrete label: argmax for categories, bins for scalars."""
    out: dict[str, str] = {}
    for dim, v in vector.items():
        out[dim] = argmax_label(v) if isinstance(v, Mapping) else level(dim, float(v))
    return out


def preference_prompt(vector: Mapping[str, float | Mapping[str, float]],
                      changed: Sequence[str] = ()) -> str:
    """The instruction prepended to the next request, in our own words."""
    lab = labels(vector)
    parts = []
    if "tone" in lab:
        parts.append(f"a {lab['tone']} tone")
    if "emotion" in lab:
        parts.append(f"a {MOODS.get(lab['emotion'], lab['emotion'])} manner")
    if "length" in lab:
        parts.append(f"{lab['length']} length")
    if "density" in lab:
        parts.append(f"{lab['density']} information density")
    if "formality" in lab:
        parts.append(f"a {lab['formality']} register")
    text = "Answer in the user's current style: " + ", ".join(parts) + "."
    if changed:
        text += f" Their style has just shifted ({', '.join(changed)}); follow the new style."
    return text
