"""Guards on the independently written fidelity batches (natural-language-only profiles).

Development batches (fc3-fc7 and the shipped set): floors that keep later changes from quietly
undoing the reader. Held-out batches (fc8): scored and reported, never a floor to tune against.
"""

from __future__ import annotations

import math

from toolkit.diagnostics.fidelity import fidelity_sets, load_set, score_set
from toolkit.llm import Gateway


def test_held_out_batches_are_scored_and_reported_with_coverage() -> None:
    sets = fidelity_sets()
    name, (role, folders) = next((k, v) for k, v in sets.items() if v[0] == "held-out")
    points, profiles = load_set(folders)
    report, _ = score_set(points, profiles, Gateway().model("offline"))
    m = report["macro"]
    assert report["n_points"] == len(points) == 147
    assert all(m[k] is not None and not math.isnan(m[k]) for k in ("f1", "specificity", "rule_recall", "coverage"))
    assert 0.0 <= m["coverage"] <= 1.0
    assert len(report["points"]) == len(points)
