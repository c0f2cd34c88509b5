"""Simulated memory users: sizes, determinism, hidden delayed utility, lexical signal."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from toolkit.gating import simulate_benchmark
from toolkit.gating.simulate import simulate_users, stream_stats
from toolkit.records import Fact


def test_signature_is_the_published_one():
    sig = inspect.signature(simulate_benchmark)
    assert list(sig.parameters) == ["size", "seed", "n_users", "n_sessions", "shared_fraction"]
    assert sig.parameters["size"].default == "S" and sig.parameters["shared_fraction"].default == 0.5


def test_tiny_is_deterministic_and_valid():
    a = simulate_benchmark("tiny", seed=3)
    b = simulate_benchmark("tiny", seed=3)
    assert a == b and all(isinstance(f, Fact) for f in a)
    assert a != simulate_benchmark("tiny", seed=4)
    assert len({f.user for f in a}) == 4
    assert len({f.fact_id for f in a}) == len(a)
    for f in a:
        assert all(h > f.session for h in f.hits)


def test_a_users_stream_does_not_depend_on_how_many_users():
    two = simulate_benchmark("tiny", seed=1, n_users=2)
    five = simulate_benchmark("tiny", seed=1, n_users=5)
    assert [f for f in five if f.user in {"u00", "u01"}] == two


def test_n_sessions_override():
    facts = simulate_benchmark("tiny", n_users=2, n_sessions=7)
    assert {f.session for f in facts} == set(range(7))
    assert max(h for f in facts for h in f.hits) <= 6


def test_bad_size_is_rejected():
    with pytest.raises(ValueError, match="size"):
        simulate_benchmark("XL")


def test_S_statistics_land_near_table5():
    st = stream_stats(simulate_benchmark("S", seed=0))
    assert st["sessions"]["n"] == 20
    assert 45 <= st["sessions"]["mean"] <= 62
    assert 700 <= st["entries"]["mean"] <= 1000
    assert 0.10 <= st["hit_rate"]["mean"] <= 0.19
    assert 10 <= st["delay"]["mean"] <= 17


def test_text_carries_signal_but_is_not_separable():
    """A pooled TF-IDF model ranks used facts above chance, far from perfectly (cross-user)."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score

    facts = simulate_benchmark("tiny", seed=0, n_users=8, n_sessions=25)
    train = [f for f in facts if f.user < "u06"]
    test = [f for f in facts if f.user >= "u06"]
    vec = TfidfVectorizer().fit([f.text for f in train])
    clf = LogisticRegression(max_iter=1000).fit(vec.transform([f.text for f in train]),
                                                [bool(f.hits) for f in train])
    auc = roc_auc_score([bool(f.hits) for f in test],
                        clf.decision_function(vec.transform([f.text for f in test])))
    assert 0.58 < auc < 0.9


def _hidden_auc(users, part: str) -> float:
    from sklearn.metrics import roc_auc_score

    vals = []
    for u in users:
        y = [bool(f.hits) for f in u.facts]
        vals.append(roc_auc_score(y, [getattr(u, part)[f.fact_id] for f in u.facts]))
    return float(np.mean(vals))


def test_shared_fraction_moves_utility_between_parts():
    shared = simulate_users("tiny", seed=0, shared_fraction=1.0)
    own = simulate_users("tiny", seed=0, shared_fraction=0.0)
    assert _hidden_auc(shared, "hidden_shared") > 0.75 > _hidden_auc(own, "hidden_shared")
    assert _hidden_auc(own, "hidden_own") > 0.75 > _hidden_auc(shared, "hidden_own")


def test_probe_turns_need_earlier_facts():
    users = simulate_users("tiny", seed=0)
    ids = {f.fact_id: f for u in users for f in u.facts}
    for u in users:
        for t in u.turns:
            for fid in t.needs:
                assert t.session in ids[fid].hits
