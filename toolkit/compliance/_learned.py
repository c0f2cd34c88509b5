"""The learned reader (stage 4 of the cascade); see :class:`LearnedReader`."""

from __future__ import annotations

from functools import lru_cache
from typing import Any


@lru_cache(maxsize=1)
def default_reader() -> Any:
    """The fitted reader shipped as package data, or None when none is shipped."""
    return None
