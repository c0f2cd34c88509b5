"""The offline gating rubric is the B.1 rubric's words only, and shares no phrase with the generator."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from toolkit.gating.rubric import DROP, KEEP, load_rubric, rubric_decision, rubric_score, rubric_words
from toolkit.gating.simulate import FILLER, KINDS, TOPICS
from toolkit.text import stem, words

_ROOT = Path(__file__).resolve().parents[1]
SEED = next((p / "shared" / "seeds" for p in (_ROOT.parent, _ROOT.parent.parent)
             if (p / "shared" / "seeds").is_dir()), _ROOT.parent / "shared" / "seeds")


def _entries():
    data = load_rubric()
    return [(side, cat, e) for side in ("keep", "drop") for cat, e in data[side].items()]


@pytest.mark.parametrize(("side", "cat", "entry"), _entries(), ids=lambda x: x if isinstance(x, str) else "")
def test_examples(side, cat, entry):
    for text in entry["must_match"]:
        assert cat in getattr(rubric_score(text), side), (cat, text)
    for text in entry["must_not_match"]:
        assert cat not in getattr(rubric_score(text), side), (cat, text)


@pytest.mark.parametrize(("side", "cat", "entry"), _entries(), ids=lambda x: x if isinstance(x, str) else "")
def test_every_cue_is_a_word_of_its_b1_line(side, cat, entry):
    """Each cue word is a word of the B.1 line the category quotes (or its ``also`` line), or an
    inflection of one (same ``toolkit.text.stem``)."""
    line = entry["source"] + " " + entry.get("also", "")
    quoted = {w.lower() for w in re.findall(r"[A-Za-z-]+", line)}
    for w in list(quoted):
        quoted |= set(w.split("/")) | set(w.split("-"))
    stems = {stem(w) for w in quoted} | {stem(w.removesuffix("ies") + "y") for w in quoted}
    for cue in entry["cues"]:
        for w in cue.lower().split():
            assert w in quoted or stem(w) in stems, f"{side}.{cat}: cue word {w!r} is not in its B.1 line"


def test_quoted_lines_are_the_seeds_b1_text():
    seed = sorted(SEED.glob("002_*.txt"))
    if not seed:
        pytest.skip("seed 002 not present")
    text = re.sub(r"\s+", " ", seed[0].read_text(encoding="utf-8")).replace("\u2019", "'")
    text = text.replace("\u2013", "-")
    for side, cat, e in _entries():
        for key in ("source", "also"):
            if key in e:
                assert e[key] in text, f"{side}.{cat}.{key} is not B.1's text: {e[key]!r}"


def _generator_phrases() -> list[str]:
    out = [p for cues, _ in KINDS.values() for p in cues]
    out += list(FILLER) + [w for ws in TOPICS.values() for w in ws]
    return out


def test_no_generator_template_phrase_in_the_rubric():
    """Neither direction: no rubric cue inside a generator phrase, no generator phrase in a cue."""
    cues = [c.lower() for t in (KEEP, DROP) for cs in t.values() for c in cs]
    for phrase in _generator_phrases():
        sc = rubric_score(f"User {phrase} something.")
        assert not sc.keep and not sc.drop, (phrase, sc)
        seq = " ".join(w.lower() for w in words(phrase))
        assert not any(re.search(rf"\b{re.escape(seq)}\b", c) for c in cues), phrase
    assert rubric_words()


FRESH_KEEP = [
    "The user is allergic to shellfish and has to avoid it.",
    "She prefers window seats on long flights.",
    "User has decided to run a half marathon in April.",
    "Her budget for the new laptop is limited to 900 dollars.",
    "He lives in Porto and works as a nurse.",
    "User can't stand cilantro in any dish.",
    "User is planning to repaint the nursery next month.",
    "His sister Ana helps him with the bakery accounts.",
]


def test_fresh_keep_facts_known_score():
    """B.1's words catch three of these hand-written KEEP facts (allergy, job/location, a disliked
    food and a sister carry none of them): the measured limit of a word-list reading of B.1."""
    got = [bool(rubric_decision(rubric_score(t), None)) for t in FRESH_KEEP]
    assert sum(got) == 3, got
