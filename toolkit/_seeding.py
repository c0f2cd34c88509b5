"""Per-item randomness: seeded from (seed, item id) so results never depend on order."""

from __future__ import annotations

import hashlib

import numpy as np


def item_seed(seed: int, *keys: object) -> int:
    """A 63-bit seed derived from ``seed`` and any number of item keys."""
    h = hashlib.sha256(repr((int(seed),) + tuple(str(k) for k in keys)).encode()).digest()
    return int.from_bytes(h[:8], "big") >> 1


def item_rng(seed: int, *keys: object) -> np.random.Generator:
    """A numpy Generator for one item; the same (seed, keys) always gives the same stream."""
    return np.random.default_rng(item_seed(seed, *keys))
