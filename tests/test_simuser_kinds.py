"""Catalogue kinds: silence without evidence, subject scopes (the kinds' examples are data, see test_compliance_catalogue)."""


from toolkit.compliance._checks import View
from toolkit.compliance._interpreter import compile_text, subject_scope

# The (preference, reply, expected) cases that lived here are catalogue data now:
# toolkit/resources/compliance/kinds/*.yaml, run by tests/test_compliance_catalogue.py.


def _verdict(pref: str, task: str, reply: str, artifacts) -> str:
    checks, _, _ = compile_text(pref)
    view = View(task, reply, artifacts)
    verdicts = [c.evaluate(view).verdict for c in checks]
    for v in ("violated", "satisfied", "not_applicable", "unknown"):
        if v in verdicts:
            return v
    return "unknown"


def test_kinds_stay_silent_without_evidence():
    """A kind with nothing to judge returns not_applicable, never a violation."""
    for pref in ("Round numbers to two decimal places.", "Fix a random seed in code that samples data.",
                 "Put shell commands in fenced code blocks.", "Write dates in ISO format (YYYY-MM-DD)."):
        assert _verdict(pref, "q", "Sure, that works for me.", None) == "not_applicable"


def test_subject_scope_turns_document_kinds_into_conditions():
    assert subject_scope("Intros should be short, no more than 60 words.") == "Intros"
    assert subject_scope("Taglines should be eight words or fewer.") == "Taglines"
    assert subject_scope("Summarise your changes as a bulleted list.") == "a code change"
    assert subject_scope("Keep the summary of what you did to 100 words at most.") == "a code change"
    assert subject_scope("Replies shouldn't be longer than three sentences.") is None
