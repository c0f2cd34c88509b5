"""The extra preference kinds (toolkit.simuser.kinds): each compiles from text and judges both ways."""

import pytest

from toolkit.compliance._checks import View
from toolkit.compliance._interpreter import compile_text, subject_scope

CASES = [
    # (preference text, task, reply, artifacts, expected verdict of the preference)
    ("Answer in Spanish.", "q", "The model reuses weights from a related task, which saves a lot of data.", None,
     "violated"),
    ("Answer in Spanish.", "q", "El modelo reutiliza los pesos de una tarea relacionada y así ahorra datos.", None,
     "satisfied"),
    ("Write dates in ISO format (YYYY-MM-DD).", "q", "It shipped on March 3, 2024.", None, "violated"),
    ("Write dates in ISO format (YYYY-MM-DD).", "q", "It shipped on 2024-03-03 as version 2.3.1.", None, "satisfied"),
    ("Write dates like 5 March 2025 (day month year).", "q", "It starts on April 1, 2025.", None, "violated"),
    ("Round numbers to two decimal places.", "q", "Conversion rose to 4.6291% overall.", None, "violated"),
    ("Round numbers to two decimal places.", "q", "Conversion rose to 4.63% overall.", None, "satisfied"),
    ("Report a confidence interval with every estimate.", "q", "The mean delivery time was 3.42 days.", None,
     "violated"),
    ("Report a confidence interval with every estimate.", "q", "The mean was 3.42 days (95% CI 3.31-3.53).", None,
     "satisfied"),
    ("Fix a random seed in code that samples data.", "Sample rows.", "Done.",
     {"s.py": "import polars as pl\ndf = pl.read_csv('a.csv')\nx = df.sample(n=10)\n"}, "violated"),
    ("Fix a random seed in code that samples data.", "Sample rows.", "Done.",
     {"s.py": "import polars as pl\ndf = pl.read_csv('a.csv')\nx = df.sample(n=10, seed=1)\n"}, "satisfied"),
    ("Never print secrets or API keys.", "q", "Your token is ghp_8fK2aQ9xLm3Tz7Rw1Yb5Nc0Vd4Hs6Ju2Pe.", None,
     "violated"),
    ("Put shell commands in fenced code blocks.", "q", "Run ss -ltnp | grep 8080 and read the last column.", None,
     "violated"),
    ("Put shell commands in fenced code blocks.", "q", "Run:\n```\nss -ltnp | grep 8080\n```", None, "satisfied"),
    ('Sign off emails with "Best, Sam".', "Reply to a customer.", "Hi Tom,\n\nAll set.\n\nKind regards,\nSupport",
     None, "violated"),
    ("Always include a subject line.", "Reply to a customer.", "Hi Tom,\n\nAll set.\n\nBest, Sam", None, "violated"),
    ("Use British spelling.", "q", "We organized the color palette.", None, "violated"),
    ("Use British spelling.", "q", "We organised the colour palette by size.", None, "satisfied"),
    ('Use "we" rather than "I" in paper text.', "q", "I propose a new method.", None, "violated"),
    ("No contractions in academic writing.", "q", "These methods don't adapt to the input.", None, "violated"),
    ("Spell out numbers below ten.", "q", "We train 3 models on four datasets.", None, "violated"),
    ("In-text citations should be (Author Year) with no comma.", "q", "It helps (Child, 2019).", None, "violated"),
    ("Temperatures in Celsius please.", "q", "Highs around 81 °F.", None, "violated"),
    ("Don't use bold or italics.", "q", "**Marketing** overspent.", None, "violated"),
    ("Don't tell me to buy or sell specific stocks.", "q", "It fell 3%. I'd buy now.", None, "violated"),
    ("Don't tell me to buy or sell specific stocks.", "q", "It fell 3%. That is your call.", None, "satisfied"),
    ("Commit subject lines must be under 50 characters.", "Commit it.",
     'Committed as "webhook: initialise metadata map before writing to it in handler".', None, "violated"),
    ("Product blurbs must end with a call to action.", "Write a blurb.", "Team spaces keep notes together.", None,
     "violated"),
    ("Product blurbs must end with a call to action.", "Write a blurb.", "Team spaces keep notes together. Try it "
     "today.", None, "satisfied"),
    ("The kids can't walk far, so nothing more than 2 km on foot in one go.", "Plan a day.",
     "Walk from the hotel to the harbour (about 4.5 km).", None, "violated"),
    ("Back up a config file before you edit it.", "Fix nginx.", "Edited nginx.conf and reloaded.", None, "violated"),
    ("Back up a config file before you edit it.", "Fix nginx.", "Copied nginx.conf to nginx.conf.bak, then edited "
     "nginx.conf and reloaded.", None, "satisfied"),
    ("SQL keywords in uppercase.", "Write a query.", "```sql\nselect a from t;\n```", None, "violated"),
    ("Page titles in sentence case.", "Suggest a title.", "Configuring Environment Variables", None, "violated"),
    ("Code samples always go in fenced blocks with a language tag.", "q", "```\nls\n```", None, "violated"),
    ("Use gender-neutral language; no \"he or she\", say \"they\".", "q", "They send their request.", None,
     "satisfied"),
]


def _verdict(pref: str, task: str, reply: str, artifacts) -> str:
    checks, _, _ = compile_text(pref)
    view = View(task, reply, artifacts)
    verdicts = [c.evaluate(view).verdict for c in checks]
    for v in ("violated", "satisfied", "not_applicable", "unknown"):
        if v in verdicts:
            return v
    return "unknown"


@pytest.mark.parametrize(("pref", "task", "reply", "artifacts", "expected"), CASES)
def test_kind_compiles_and_judges(pref, task, reply, artifacts, expected):
    assert _verdict(pref, task, reply, artifacts) == expected


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
