"""Precision gate for free-text required-content checks, and non-repeating connectives."""

from __future__ import annotations

import numpy as np
import pytest

from toolkit.compliance import Verdict
from toolkit.compliance._checks import RequireTerms, Unknown, View
from toolkit.compliance._interpreter import compile_text
from toolkit.simuser.phrasing import phrase


@pytest.mark.parametrize("text", [
    "Keep each change focused on the task; unrelated refactors go in a separate proposal.",
    "Keep things tidy.",
    "Keep the tone calm and never blame the customer.",
])
def test_state_wishes_stay_silent(text: str) -> None:
    checks = compile_text(text)[0]
    assert not any(isinstance(c, RequireTerms) for c in checks)
    assert all(isinstance(c, Unknown) for c in checks)


@pytest.mark.parametrize("text,label", [
    ("Always include the estimated total cost.", "estimated total cost"),
    ("Keep a running total of the budget.", "running total"),
    ("Always include the ticket number in the reply.", "ticket number"),
])
def test_content_noun_phrases_still_compile(text: str, label: str) -> None:
    checks = compile_text(text)[0]
    assert any(isinstance(c, RequireTerms) and c.label == label for c in checks)


def test_focused_change_never_flagged() -> None:
    (check,) = compile_text("Keep each change focused on the task.")[0]
    view = View(task="Fix the off-by-one in the pager.", reply="Fixed the off-by-one in pager.py; tests pass.",
                artifacts={"pager.py": "def page(n: int) -> int:\n    return n - 1\n"})
    assert check.evaluate(view).verdict == "unknown"


def test_per_item_requirement_needs_a_list() -> None:
    (check,) = compile_text("Tell me the commute time to the office for each flat.")[0]
    one = View(task="Write to the landlord.", reply="Hello, could we view the flat on Saturday? Thanks, Lena.",
               artifacts=None)
    many = View(task="Find flats.", reply="- Flat A: 1,200 euros, 3rd floor.\n- Flat B: 1,300 euros, 2nd floor.",
                artifacts=None)
    assert check.evaluate(one).verdict == "not_applicable"
    assert check.evaluate(many).verdict == "violated"


def test_number_matches_digits() -> None:
    (check,) = compile_text("Always include the ticket number in the reply.")[0]
    reply = "Hi Dana, thanks for getting in touch about ticket #48213. Please try logging in again in ten minutes."
    assert check.evaluate(View(task="Reply to the customer.", reply=reply, artifacts=None)).verdict == "satisfied"
    reply2 = "Hi Dana, thanks for getting in touch. Please try logging in again in ten minutes, it should work."
    assert check.evaluate(View(task="Reply to the customer.", reply=reply2, artifacts=None)).verdict == "violated"


def test_connectives_never_repeat() -> None:
    fs = [Verdict("violation", f"evidence {i}", [], "kind:t", ask=f"fix thing {i}", topic=f"t{i}") for i in range(5)]
    seen_prose = 0
    for seed in range(60):
        out = phrase(fs, np.random.default_rng(seed))
        if "\n- " in out:
            continue
        seen_prose += 1
        for word in ("Also,", "Plus,", "On top of that,", "Second,", "Third,", "Finally,"):
            assert out.count(word) <= 1, out
        if "Second," in out:
            assert out.index("Second,") < out.index("Third,")
    assert seen_prose > 10
