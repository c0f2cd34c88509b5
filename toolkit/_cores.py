"""A core budget shared by the diagnostics of one ``prefmem reproduce --jobs N`` run.

Diagnostics run side by side in worker processes; one of them (the gating sweep) also starts
joblib workers of its own. On 2 cores, two joblib workers beside another diagnostic make three
busy processes, and each runs slower (measured: gating's CPU seconds 39-45% higher with two
joblib workers than with one) for no gain in wall time. So the pool keeps a shared count of the
diagnostics running, and :func:`free_cores` tells a diagnostic how many cores the others leave
it: the gating sweep runs its tasks one at a time while another diagnostic runs, and on every
core when it is alone. Task results never depend on where or how many run at once (each task is
a pure function of its arguments), so the files written are the same whatever the budget.

Outside a ``--jobs`` pool (a notebook, a test, ``--jobs 1``) there is no shared budget:
:func:`free_cores` returns None and callers keep their own setting.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["install", "running", "free_cores"]

#: the pool's shared count of running diagnostics (a ``multiprocessing.Value``), in its workers
_RUNNING: Any = None


def install(counter: Any) -> None:
    """Called in each worker of the pool with the pool's shared ``Value("i")`` counter."""
    global _RUNNING
    _RUNNING = counter


@contextmanager
def running() -> Iterator[None]:
    """Counts this worker's diagnostic as running while the block runs (no-op outside a pool)."""
    if _RUNNING is None:
        yield
        return
    with _RUNNING.get_lock():
        _RUNNING.value += 1
    try:
        yield
    finally:
        with _RUNNING.get_lock():
            _RUNNING.value -= 1


def free_cores() -> int | None:
    """Cores not used by the pool's other running diagnostics (at least 1); None outside a pool."""
    if _RUNNING is None:
        return None
    others = max(0, int(_RUNNING.value) - 1)
    return max(1, (os.cpu_count() or 1) - others)
