"""Violation scorer (C.5): unit rule, denominators, per-user rates and mean +- sample std."""

from __future__ import annotations

import pytest

from toolkit.profiles import Profile
from toolkit.simuser import Delivery, score_units, violation_summary
from toolkit.simuser.violations import UnitScore


def test_unit_rule_and_denominator():
    units = [UnitScore("a", "1", {"p": "violated", "q": "satisfied"}),
             UnitScore("a", "2", {"p": "unknown", "q": "not_applicable"}),
             UnitScore("a", "3", {"p": "not_applicable", "q": "not_applicable"}),
             UnitScore("a", "4", {"p": "satisfied"}),
             UnitScore("b", "1", {"p": "violated"}),
             UnitScore("b", "2", {"p": "satisfied"})]
    s = violation_summary(units)
    assert s["per_user"]["a"]["rate"] == 0.25 and s["per_user"]["a"]["n_units"] == 4
    assert s["per_user"]["a"]["unknown_units"] == 1 and s["per_user"]["a"]["not_applicable_units"] == 1
    assert s["per_user"]["b"]["rate"] == 0.5
    assert s["mean"] == pytest.approx(0.375)
    assert s["std"] == pytest.approx(0.1767767, rel=1e-6)  # sample std (ddof=1)


def test_score_units_uses_the_simulator_judgement(monkeypatch):
    import toolkit.compliance._learned as learned

    monkeypatch.setattr(learned, "default_reader", lambda: None)  # 'Be thoughtful.': the catalogue cannot tell
    prof = Profile(id="u", preferences=[{"id": "len", "text": "Replies under 10 words."},
                                        {"id": "vibe", "text": "Be thoughtful."}])
    ds = [Delivery(task="t", reply="one two three", unit="q1"),
          Delivery(task="t", reply=" ".join(["w"] * 20), unit="q2")]
    us = score_units(prof, ds)
    assert [u.violated for u in us] == [False, True]
    assert us[0].verdicts == {"len": "satisfied", "vibe": "unknown"}
    assert violation_summary(us)["per_user"]["u"]["rate"] == 0.5
