"""Regression guard on the independently written fidelity batches (natural-language-only profiles).

These batches are development data by now (see fixtures/fidelity/independent/README.md for their
first-contact scores); the floors below only keep later changes from quietly undoing what the
interpreter learned from them.
"""

from __future__ import annotations

from toolkit.diagnostics.fidelity import independent_batches
from toolkit.llm import Gateway


def test_independent_batches_do_not_regress() -> None:
    table = independent_batches(Gateway().model("offline"), seed=0)
    assert len(table) == 24 and int(table["n"].sum()) == 875
    assert table["f1"].mean() >= 0.65
    assert table["specificity"].mean() >= 0.69
    assert table["rule_recall"].mean() >= 0.46
    assert (table["f1"] >= 0.40).all()  # no batch collapses
