"""PAMU preference-drift tracking: extractors, SW/EMA fusion, change detection, prompts, users.

``track_records`` (the ``prefmem drift`` verb) reads the *user* turns of each dialogue, extracts
a five-dimension style vector per turn, fuses a sliding window with an EMA and flags turns where
the short-term view departs from the long-term one. See :mod:`toolkit.drift.tracker` for the
change score and its defaults, :mod:`toolkit.drift.extract` for the extractors and their limits.
"""

from __future__ import annotations

from toolkit.drift.describe import labels, level, preference_prompt
from toolkit.drift.extract import CATEGORIES, DIMS, EMOTIONS, TONES, extract_offline, extract_turns
from toolkit.drift.tracker import (
    COMMUNITY_DEFAULTS,
    PreferenceTracker,
    TrackerConfig,
    make_config,
    track_observations,
    track_records,
)
from toolkit.drift.users import (
    DriftingUser,
    Schedule,
    Style,
    abrupt,
    gradual,
    oscillation,
    stationary,
)

__all__ = [
    "CATEGORIES", "COMMUNITY_DEFAULTS", "DIMS", "EMOTIONS", "TONES", "DriftingUser",
    "PreferenceTracker", "Schedule", "Style", "TrackerConfig", "abrupt", "extract_offline",
    "extract_turns", "gradual", "labels", "level", "make_config", "oscillation",
    "preference_prompt", "stationary", "track_observations", "track_records",
]
