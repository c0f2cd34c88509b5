"""Memory gating: simulated fact streams, retrieval-based utility labels, meta-analysis, policies.

Import-light: names resolve lazily from their submodules on first access.
"""

from __future__ import annotations

from toolkit._lazy import lazy_exports

#: public name -> submodule that defines it
_EXPORTS: dict[str, str] = {
    "simulate_benchmark": "toolkit.gating.simulate",
    "simulate_users": "toolkit.gating.simulate",
    "stream_stats": "toolkit.gating.simulate",
    "meta_analysis": "toolkit.gating.meta",
    "format_meta": "toolkit.gating.meta",
    "utility_terms": "toolkit.gating.meta", "label_facts": "toolkit.gating.labels",
    "rhr": "toolkit.gating.labels", "rhr_counts": "toolkit.gating.labels",
    "GatingEnv": "toolkit.gating.env", "MemoryBank": "toolkit.gating.env",
    "build_streams": "toolkit.gating.env", "register_eviction": "toolkit.gating.env",
    "TfidfSVD": "toolkit.gating.features", "register_featurizer": "toolkit.gating.features",
    "Oracle": "toolkit.gating.policies", "Universal": "toolkit.gating.policies",
    "LLMGreedy": "toolkit.gating.policies", "LLMContextAware": "toolkit.gating.policies",
    "PretrainedScorer": "toolkit.gating.policies", "ColdStartUCB": "toolkit.gating.policies",
    "WarmStartUCB": "toolkit.gating.policies", "reference_ucb": "toolkit.gating.reference",
    "fast_ucb": "toolkit.gating.fast", "UCBGrid": "toolkit.gating.fast",
    "sweep_benchmark": "toolkit.gating.sweep", "prepare_benchmark": "toolkit.gating.sweep",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports("toolkit.gating", _EXPORTS, globals())
