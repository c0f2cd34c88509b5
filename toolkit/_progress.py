"""Progress bars that show in a terminal or notebook and stay silent in tests and CI.

``prefmem reproduce`` opens one bar per diagnostic (:func:`diagnostic_bar`) and everything
that reports progress inside it feeds that one bar instead of opening its own:

* :func:`progress` over an iterable adds its items to the bar (or, inside a :func:`stage`,
  splits the stage's weight over them);
* :func:`stage` reserves a weight of the bar for a block of work (so a diagnostic that knows
  its plan up front gets an honest ETA from the start);
* :func:`advance` moves the bar from code that finishes work in its own order (joblib).

The bar's ETA is tqdm's: the remaining weight at the rate seen so far. A diagnostic that
reports no steps gets a bar driven by time against its expected duration (its last run's,
from ``manifest.json``, or :data:`EXPECTED_S`), held below 100% until it ends.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

T = TypeVar("T")

__all__ = ["progress_enabled", "progress", "diagnostic_bar", "stage", "plan", "advance"]


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


#: expected full-scale seconds per diagnostic on 2 cores, for the first run's time-driven bar
#: and the order `prefmem reproduce --jobs N` starts them in (longest first): each diagnostic's
#: elapsed seconds inside a whole cold `prefmem reproduce` on a clean clone of 7277ad7
#: (2026-12-03), where admission, resolution, selection and checks read the models the protocol
#: diagnostic fitted first (alone and cold they take longer: resolution about 90 s). The order
#: matters at the end of the run: with checks (44-60 s) started last, as the earlier table had
#: it, it ran alone on one core for about 40 s while the other core idled
EXPECTED_S: dict[str, float] = {"gating": 330, "protocol": 297, "fidelity": 244, "checks": 62,
                                "drift": 43, "selection": 25, "utility": 22, "admission": 20,
                                "resolution": 8, "tour": 28}


class _Bar:
    """One diagnostic's bar: a planned total and a stack of stages (weight per unit of work)."""

    def __init__(self, desc: str, expected_s: float | None = None) -> None:
        from tqdm.auto import tqdm

        # a worker of `prefmem reproduce --jobs N` draws on its own line
        pos = int(os.environ.get("PREFMEM_BAR_POSITION", "0") or 0)
        self.tq: Any = tqdm(total=0, desc=desc, unit="step", leave=True, dynamic_ncols=True,
                            position=pos or None,
                            bar_format="{desc}: {percentage:3.0f}%|{bar}| "
                                       "[{elapsed}<{remaining}]")
        self.units: list[float] = []  # per open stage: weight of one unit of its work
        self.planned = False
        self.done = threading.Event()
        self.lock = threading.Lock()
        self.timer: threading.Thread | None = None
        if expected_s:
            self.timer = threading.Thread(target=self._by_time, args=(float(expected_s),),
                                          daemon=True)
            self.timer.start()

    def _by_time(self, expected: float) -> None:
        """Until steps are planned: fraction of the expected time elapsed (at most 99%)."""
        t0 = time.monotonic()
        while not self.done.wait(0.5):
            with self.lock:
                if self.planned:
                    return
                frac = min((time.monotonic() - t0) / expected, 0.99)
                if not self.tq.total:
                    self.tq.total = 1000
                self.tq.update(int(frac * 1000) - self.tq.n)

    def plan(self, n: float) -> None:
        with self.lock:
            if not self.planned:  # steps take over from the time-driven bar
                self.planned = True
                self.tq.reset(total=0)
            self.tq.total = (self.tq.total or 0) + n
            self.tq.refresh()

    def advance(self, n: float = 1.0) -> None:
        unit = self.units[-1] if self.units else 1.0
        with self.lock:
            self.tq.update(min(n * unit, max((self.tq.total or 0) - self.tq.n, 0)))

    def close(self) -> None:
        self.done.set()
        if self.timer is not None:
            self.timer.join()
        if self.tq.total and self.tq.n < self.tq.total:
            self.tq.update(self.tq.total - self.tq.n)
        self.tq.close()


_BARS: list[_Bar] = []


@contextmanager
def diagnostic_bar(desc: str, expected_s: float | None = None) -> Iterator[None]:
    """One bar for everything reported inside the block (nothing when progress is off).

    ``expected_s`` (default :data:`EXPECTED_S` for ``desc``) drives the bar by time until the
    diagnostic plans steps of its own."""
    if not progress_enabled():
        yield
        return
    bar = _Bar(desc, expected_s if expected_s is not None else EXPECTED_S.get(desc))
    _BARS.append(bar)
    try:
        yield
    finally:
        _BARS.remove(bar)
        bar.close()


@contextmanager
def stage(weight: float, units: float) -> Iterator[None]:
    """Inside the block, ``units`` units of work (reported by :func:`advance` or
    :func:`progress`) make up ``weight`` of the current bar, planned now."""
    if not _BARS:
        yield
        return
    bar = _BARS[-1]
    outer = bar.units[-1] if bar.units else 1.0
    if not bar.units:
        bar.plan(weight)
    bar.units.append(outer * weight / max(units, 1e-9))
    try:
        yield
    finally:
        bar.units.pop()


def plan(n: float) -> None:
    """Add ``n`` units of work to the current bar (outside any stage)."""
    if _BARS and not _BARS[-1].units:
        _BARS[-1].plan(n)


def advance(n: float = 1.0) -> None:
    """``n`` units of work finished."""
    if _BARS:
        _BARS[-1].advance(n)


def progress(it: Iterable[T], *, total: int | None = None, desc: str = "") -> Iterator[T]:
    """Iterate ``it``, reporting each item: into the diagnostic's bar when one is open,
    else a notebook-aware tqdm bar when enabled, else silently."""
    if _BARS:
        n = total if total is not None else (len(it) if hasattr(it, "__len__") else None)
        if n is None:
            yield from it
            return
        with stage(1.0 if _BARS[-1].units else float(n), float(n)):
            for x in it:
                yield x
                advance(1.0)
        return
    if not progress_enabled():
        yield from it
        return
    from tqdm.auto import tqdm

    yield from tqdm(it, total=total, desc=desc, leave=False)
