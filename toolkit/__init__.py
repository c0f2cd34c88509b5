"""prefmem-toolkit: simulated users with hidden preferences, rule learning, drift, memory gating.

The public surface is re-exported here lazily (PEP 562), so ``import toolkit`` stays cheap
and nothing runs at import time.
"""

from __future__ import annotations

from toolkit._lazy import lazy_exports

#: public name -> module that defines it
_EXPORTS: dict[str, str] = {
    # gateway
    "Gateway": "toolkit.llm", "ChatModel": "toolkit.llm", "StructuredRequest": "toolkit.llm",
    "Outcome": "toolkit.llm", "parse_model": "toolkit.llm", "load_prompt": "toolkit.llm",
    "get_embedder": "toolkit.llm",
    # runs and results
    "RunContext": "toolkit.runs", "Result": "toolkit.diagnostics.result",
    "reproduce": "toolkit.api", "compare_rows": "toolkit.diagnostics.result",
    "reading": "toolkit.claims", "Claim": "toolkit.claims",
    # data
    "Profile": "toolkit.profiles", "Preference": "toolkit.profiles",
    "load_profile": "toolkit.profiles", "load_profiles": "toolkit.profiles",
    "read_jsonl": "toolkit.datasets.jsonl", "write_jsonl": "toolkit.datasets.jsonl",
    "paper_figures": "toolkit.paper",
    # metrics
    "confusion": "toolkit.metrics", "bootstrap_ci": "toolkit.metrics", "wilson_ci": "toolkit.metrics",
    "mean_std": "toolkit.metrics", "micro_macro": "toolkit.metrics",
    # simulated users (issue 3)
    "SimulatedUser": "toolkit.simuser", "Delivery": "toolkit.simuser", "Feedback": "toolkit.simuser",
    "Trace": "toolkit.simuser",
    # preference drift tracking, PAMU (issue 8)
    "track_records": "toolkit.drift.tracker", "TrackerConfig": "toolkit.drift.tracker",
    "DriftingUser": "toolkit.drift.users", "plot_tracking": "toolkit.drift.explorer",
    # memory gating: simulated users, utility labels, meta-analysis (issue 6)
    "simulate_benchmark": "toolkit.gating.simulate", "simulate_users": "toolkit.gating.simulate",
    "stream_stats": "toolkit.gating.simulate", "meta_analysis": "toolkit.gating.meta",
    "format_meta": "toolkit.gating.meta", "utility_terms": "toolkit.gating.meta",
    "label_facts": "toolkit.gating.labels", "load_locomo_facts": "toolkit.datasets.locomo",
    # memory gating policies, environment, sweeps (issue 7)
    "GatingEnv": "toolkit.gating.env", "WarmStartUCB": "toolkit.gating.policies",
    "sweep_benchmark": "toolkit.gating.sweep", "budget_explorer": "toolkit.gating.plots",
    # correction admission (issue 4)
    "parse_cues": "toolkit.rules.cues", "admit_text": "toolkit.rules.admission",
    "admission_explorer": "toolkit.rules.admission_widget",
    # rule library and resolution (issue 5)
    "RuleLibrary": "toolkit.rules.library", "LibraryRule": "toolkit.rules.library",
    "LibraryVersion": "toolkit.rules.library", "resolve_records": "toolkit.rules.resolution",
    "resolve": "toolkit.rules.resolution", "load_resolution_cases": "toolkit.rules.resolution_eval",
    "grow_library": "toolkit.rules.distractors", "run_longrun": "toolkit.rules.longrun",
    "simulate_longrun": "toolkit.rules.longrun", "Rule": "toolkit.records",
    "ResolutionInput": "toolkit.records",
    "version_viewer": "toolkit.rules.library_widget",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports("toolkit", _EXPORTS, globals())
