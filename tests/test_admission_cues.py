"""The cue grammar: duration, scope, activation, exceptions, vagueness, friction, quotes."""

from __future__ import annotations

import pytest

from toolkit.rules.cues import Cues, parse_cues


def test_lasting_project_condition_exception_are_read_with_exact_quotes() -> None:
    text = "In the billing-api repo, whenever you touch migrations, add a rollback unless it's a hotfix."
    c = parse_cues(text)
    assert c.scope == "project" and c.project == "billing-api"
    assert c.condition == "whenever you touch migrations"
    assert c.exception == "unless it's a hotfix"
    assert c.behavior == "Add a rollback"
    assert c.quotes and all(q in text for q in c.quotes)


@pytest.mark.parametrize("text, field", [
    ("From now on, use pathlib.", "lasting"),
    ("Going forward please keep PRs small.", "lasting"),
    ("For this task only, skip the docs.", "temporary"),
    ("Just this once, push to main.", "temporary"),
    ("Add comments when it seems right.", "vague"),
    ("Sometimes run the slow tests.", "vague"),
    ("I keep having to tell you: no tabs.", "friction"),
    ("You don't need to run the linter anymore.", "retraction"),
])
def test_each_cue_family_fires(text: str, field: str) -> None:
    assert getattr(parse_cues(text), field) is True


def test_plain_request_has_no_duration_or_scope() -> None:
    c = parse_cues("Rename the variable in the function you just wrote.")
    assert not (c.lasting or c.temporary or c.vague or c.friction)
    assert c.scope is None and c.condition is None and c.deictic


def test_behaviour_internal_timing_is_not_an_activation() -> None:
    assert parse_cues("From now on, run the tests before you commit.").condition is None
    assert parse_cues("Write docstrings for public functions, always.").condition is None


def test_curly_apostrophes_keep_exact_quotes() -> None:
    text = "I don’t like tabs — from now on, use spaces."
    c = parse_cues(text)
    assert c.lasting and c.preference
    assert all(q in text for q in c.quotes)


def test_cues_are_frozen_and_features_are_numeric() -> None:
    c = parse_cues("Always sign commits.")
    assert isinstance(c, Cues)
    with pytest.raises(AttributeError):
        c.lasting = False  # type: ignore[misc]
    assert set(c.features().values()) <= {0.0, 1.0}
