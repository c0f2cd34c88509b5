"""The ``utility`` diagnostic: tables beside the paper's figures, deterministic offline."""

from __future__ import annotations

import pandas as pd

from toolkit.api import reproduce


def _small(**kw):
    return reproduce("utility", seed=0, quick=True, s_users=3, l_users=2, l_sessions=24,
                     label_users=1, sweep=0, locomo=0, **kw)


def test_utility_diagnostic_small_run():
    a = _small()
    t1 = a.tables["utility_table1"]
    assert set(t1["dataset"]) == {"simulated S", "simulated L"}
    s_self = t1[(t1.dataset == "simulated S") & (t1.metric == "Self AUC")].iloc[0]
    assert s_self["paper"] == 0.756 and s_self["n"] == 3 and 0.5 < s_self["ours"] < 1.0
    st = a.tables["utility_stream_stats"]
    rate = st[(st.dataset == "simulated S") & st.metric.str.startswith("Hit rate")].iloc[0]
    assert rate["paper"] == 0.142 and 0.05 < rate["ours"] < 0.3
    lab = a.tables["utility_labels"].set_index("metric")["ours"]
    assert lab["fact precision (used)"] > 0.7 and lab["count: unknown_verify"] == 0
    assert "utility_scatter" in a.figures and a.tables["utility_locomo_quirks"].empty


def test_utility_diagnostic_with_locomo(shared_data):
    r = reproduce("utility", seed=0, quick=True, s_users=2, l_users=2, l_sessions=12,
                  label_users=1, sweep=0)
    t1 = r.tables["utility_table1"]
    lo = t1[(t1.dataset == "LoCoMo") & (t1.metric == "LOUO AUC")].iloc[0]
    assert lo["n"] == 20 and pd.isna(lo["paper"])
    q = r.tables["utility_locomo_quirks"].set_index("quirk")["count"]
    assert q["qa: empty evidence (marks nothing)"] == 4
