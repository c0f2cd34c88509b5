"""How the offline simulated user reads natural-language preferences written by other people.

Each case is a general reading rule found on independently written annotated points: a
clause's own condition, exceptions stated as permissions, mentions that are not uses, limits
on one part of a reply, saved files, and replies that only check in first.
"""

from __future__ import annotations

import pytest

from toolkit.compliance import Rule
from toolkit.compliance._catalogue import read_catalogue
from toolkit.compliance._checks import View


def verdict(text: str, reply: str, task: str = "Help me with this.", artifacts: dict[str, str] | None = None,
            except_when: str | None = None) -> str:
    rule = Rule("p", text, exceptions=[except_when] if except_when else [])
    return read_catalogue(rule, View(task, reply, artifacts)).finding.verdict


def test_a_later_if_clause_gates_only_its_own_sentence() -> None:
    pref = ("I want the train, not a flight. If you really think flying is better, tell me the price and ask "
            "before you book it.")
    reply = "Take flight AF1240 from Paris CDG at 11:25; it lands in Amsterdam at 12:40 and costs 129 euros."
    assert verdict(pref, reply, "How do I get from Paris to Amsterdam on Friday?") == "violated"


@pytest.mark.parametrize("task,expected", [("Deep dive please: explain entropy from scratch.", "not_applicable"),
                                           ("Explain entropy.", "violated")])
def test_a_permission_in_an_if_clause_is_an_exception(task: str, expected: str) -> None:
    pref = 'Keep explanations short, three paragraphs at most. If I ask for a "deep dive", go as long as you need.'
    reply = "\n\n".join(f"Paragraph {i} about entropy and how disorder grows in a closed system." for i in range(5))
    assert verdict(pref, reply, task) == expected


@pytest.mark.parametrize("reply,expected", [
    ("Take the 09:10 train. There's also a 06:34 departure, but I left it out.", "satisfied"),
    ("Take the 06:34 departure; it arrives at 09:40.", "violated"),
])
def test_a_thing_mentioned_only_to_say_it_was_left_out_is_not_a_violation(reply: str, expected: str) -> None:
    assert verdict("I'm useless in the mornings, so no departures before 8:00.", reply,
                   "Which train to Marseille on Tuesday?") == expected


@pytest.mark.parametrize("reply,expected", [
    ('I replaced "leverage" with "use" in the second paragraph and tightened the ending.', "satisfied"),
    ("We leverage our network to deliver the project on time and within budget.", "violated"),
])
def test_a_banned_word_in_quotes_is_mentioned_not_used(reply: str, expected: str) -> None:
    assert verdict('Never use "leverage" or "synergy".', reply, "Edit this paragraph.") == expected


@pytest.mark.parametrize("reply,expected", [
    ("I edited migrations/0003_add_index.py to add the index and ran the tests.", "violated"),
    ("I added the index in models.py and left migrations/ untouched; generate one with makemigrations.", "satisfied"),
])
def test_protected_folders(reply: str, expected: str) -> None:
    assert verdict("Leave the migrations/ folder alone. I squash migrations myself.", reply,
                   "Add an index on email.") == expected


def test_counted_marks() -> None:
    pref = "One exclamation mark per piece at most. We're a calm brand."
    assert verdict(pref, "Spring is here! Breathe easy with twenty percent off! Shop now!") == "violated"
    assert verdict(pref, "Spring is here! Breathe easy with twenty percent off. Shop now.") == "satisfied"


def test_a_limit_on_headlines_applies_to_each_headline() -> None:
    reply = ("1. Clifton Lido reopens after winter refurb\n2. Lido back in business with a heated pool\n"
             "3. Swimmers return to Clifton Lido as doors open again")
    pref = "Headlines can't run past 70 characters, spaces included."
    assert verdict(pref, reply, "Headlines for the Clifton Lido reopening?") == "satisfied"
    assert verdict(pref, reply + " after a long and expensive winter refurbishment of the pool",
                   "Headlines for the Clifton Lido reopening?") == "violated"


def test_a_limit_on_one_part_is_not_a_limit_on_the_reply() -> None:
    reply = ("TL;DR: the outage came from an expired certificate. We renewed it. No data was lost.\n\n"
             + " ".join(f"Detail sentence {i} about the timeline." for i in range(8)))
    assert verdict("Write-ups open with a TL;DR of three sentences at most.", reply,
                   "Write up yesterday's outage.") != "violated"


@pytest.mark.parametrize("reply,expected", [
    ("Saved the spec to docs/specs/invoice-export.md.", "violated"),
    ("Saved the spec to docs/specs/2025-03-14-invoice-export.md.", "satisfied"),
])
def test_where_saved_files_go_and_how_they_are_named(reply: str, expected: str) -> None:
    pref = "Save specs in docs/specs/ with the date first - YYYY-MM-DD-feature-name.md - so they sort."
    assert verdict(pref, reply, "Write a spec for bulk CSV export and save it.") == expected


def test_shape_checks_wait_while_the_agent_is_still_asking() -> None:
    pref = "Finish every answer with a short summary of the key takeaways."
    assert verdict(pref, "Before I start: which database do you use, Postgres or MySQL?",
                   "Help me speed up the reporting queries.") == "not_applicable"


def test_double_negatives_are_requirements() -> None:
    reply = "Hi Sam, we found the cause of your login problem and fixed it this morning. Regards, Support"
    assert verdict("Never leave out the ticket number.", reply, "Reply to the customer about ticket #4821.") \
        == "violated"


def test_full_name_beside_a_banned_short_form() -> None:
    pref = ('Our name is spelled out as "Riverbend Community Partners" the first time, then "RCP". '
            'Not "Riverbend" on its own.')
    assert verdict(pref, "Riverbend Community Partners runs the pantry. RCP also tutors.") == "satisfied"
    assert verdict(pref, "Riverbend Community Partners runs the pantry. Riverbend also tutors.") == "violated"


def test_exception_judged_on_its_own_words() -> None:
    pref = "Sessions have to fit in 45 minutes, warm-up included."
    exc = "it's a weekend session (Saturday or Sunday)"
    reply = "Warm-up: 10 minutes. Main block: 40 minutes. Cool-down: 10 minutes. Total time: 60 minutes."
    assert verdict(pref, reply, "Upper body session for Wednesday please.", except_when=exc) == "violated"
    assert verdict(pref, reply, "Long session for Saturday please.", except_when=exc) == "not_applicable"
