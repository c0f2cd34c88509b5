"""The compilation stepper (notebook 08): each step renders, and moving the controls redraws."""

from __future__ import annotations

from toolkit.records import Rule
from toolkit.rules.checks import compilation_stepper, compile_rules, step_html


def test_step_html_and_redraw():
    comps = compile_rules([Rule(id="a", behavior="Never use emojis in replies."),
                           Rule(id="b", behavior="Think before you code.")])
    first = step_html(comps[0], 0)
    assert "Never use emojis" in first and "outcome: semantic" in first
    r1 = step_html(comps[0], 1)
    assert "reviewer (blind)" in r1 and "expected" in r1 and r1 != first
    box = compilation_stepper(comps)
    controls, out = box.children
    pick, step = controls.children
    step.value = 1
    assert out.value == r1
    pick.value = 1
    assert "Think before you code" in out.value and "outcome: guidance" in out.value
