"""Memory gating: simulated fact streams, retrieval-based utility labels, meta-analysis, policies.

Import-light: names resolve lazily from their submodules on first access.
"""

from __future__ import annotations

import importlib
from typing import Any

#: public name -> submodule that defines it
_EXPORTS: dict[str, str] = {
    "simulate_benchmark": "toolkit.gating.simulate",
    "simulate_users": "toolkit.gating.simulate",
    "stream_stats": "toolkit.gating.simulate",
    "meta_analysis": "toolkit.gating.meta",
    "format_meta": "toolkit.gating.meta",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    mod = _EXPORTS.get(name)
    if mod is None:
        raise AttributeError(f"module 'toolkit.gating' has no attribute {name!r}")
    value = getattr(importlib.import_module(mod), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
