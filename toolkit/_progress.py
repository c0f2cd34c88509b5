"""Progress bars that show in a terminal or notebook and stay silent in tests and CI."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")


def progress_enabled() -> bool:
    """False under PREFMEM_PROGRESS=0, CI, pytest, or when stderr is not interactive."""
    if os.environ.get("PREFMEM_PROGRESS", "") == "0" or os.environ.get("CI"):
        return False
    if "PYTEST_CURRENT_TEST" in os.environ:
        return False
    if os.environ.get("PREFMEM_PROGRESS", "") == "1":
        return True
    if "ipykernel" in sys.modules:
        return True
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def progress(it: Iterable[T], *, total: int | None = None, desc: str = "") -> Iterator[T]:
    """Wrap ``it`` in a notebook-aware tqdm bar when enabled; otherwise yield as is."""
    if not progress_enabled():
        yield from it
        return
    from tqdm.auto import tqdm

    yield from tqdm(it, total=total, desc=desc, leave=False)
