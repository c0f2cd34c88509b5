"""Diagnostics: one module per appendix table, each ``run(ctx) -> Result``.

The registry maps a name to ``module:function``; ``prefmem reproduce`` runs those whose
module is present.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable

from toolkit.diagnostics.result import Result, compare_rows, markdown_table

#: name -> "module:function" (imported only when run)
REGISTRY: dict[str, str] = {
    "tour": "toolkit.diagnostics.tour:run",
    "fidelity": "toolkit.diagnostics.fidelity:run",
    "admission": "toolkit.diagnostics.admission:run",
    "resolution": "toolkit.diagnostics.resolution:run",
    "utility": "toolkit.diagnostics.utility:run",
    "gating": "toolkit.diagnostics.gating:run",
    "drift": "toolkit.diagnostics.drift:run",
    "protocol": "toolkit.diagnostics.protocol:run",
    "checks": "toolkit.diagnostics.checks:run",
    "selection": "toolkit.diagnostics.selection:run",
}


def available() -> list[str]:
    """Registered diagnostics whose module exists, in registry order."""
    return [n for n, target in REGISTRY.items() if importlib.util.find_spec(target.split(":")[0])]


def get(name: str) -> Callable:
    mod, fn = REGISTRY[name].split(":")
    return getattr(importlib.import_module(mod), fn)


__all__ = ["REGISTRY", "Result", "available", "compare_rows", "get", "markdown_table"]
