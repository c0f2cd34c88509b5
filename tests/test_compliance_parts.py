"""The part stage (toolkit/resources/compliance/parts.yaml): every example of every part runs here,
and a limit on a named part is checked on that part, not on the whole reply."""

from __future__ import annotations

import pytest

from toolkit.compliance import Evidence, Rule, read
from toolkit.compliance._checks import View
from toolkit.compliance._parts import catalogue, find, named_part, scope

_PARTS = catalogue()
_NAMES = [(p.name, t) for p in _PARTS for t in p.names]
_NOT = [(p.name, t) for p in _PARTS for t in p.not_names]
_FINDS = [(p.name, ex) for p in _PARTS for ex in p.finds]


def test_every_part_has_examples_of_each_group() -> None:
    assert len(_PARTS) >= 6
    assert len({p.name for p in _PARTS}) == len(_PARTS)
    for p in _PARTS:
        assert p.names and p.not_names and p.finds, p.name
        assert any(not ex.parts for ex in p.finds) or any(ex.files for ex in p.finds) or len(p.finds) == 1, p.name


@pytest.mark.parametrize(("part", "text"), _NAMES, ids=[f"{n}-names-{i}" for i, (n, _) in enumerate(_NAMES)])
def test_part_named(part: str, text: str) -> None:
    found = named_part(text)
    assert found is not None and found.name == part, (part, text, found and found.name)


@pytest.mark.parametrize(("part", "text"), _NOT, ids=[f"{n}-not-{i}" for i, (n, _) in enumerate(_NOT)])
def test_part_not_named(part: str, text: str) -> None:
    p = next(x for x in _PARTS if x.name == part)
    assert not p.pattern().search(text), (part, text)


@pytest.mark.parametrize(("part", "ex"), _FINDS, ids=[f"{n}-finds-{i}" for i, (n, _) in enumerate(_FINDS)])
def test_part_found(part: str, ex) -> None:
    p = next(x for x in _PARTS if x.name == part)
    got = [i.text for i in find(p, View("a task", ex.reply, ex.files or None))]
    assert got == ex.parts


def test_scope_without_a_named_part_is_the_whole_delivery() -> None:
    v = View("t", "Some reply.", None)
    sc = scope("Reply in English.", v)
    assert sc.part == "" and not sc.located and sc.views == (v,)


def test_named_but_missing_part_keeps_the_whole_delivery_and_says_so() -> None:
    v = View("t", "A long reply without any summary block.", None)
    sc = scope("Write-ups open with a TL;DR of three sentences at most.", v)
    assert sc.part == "summary" and not sc.located and sc.views == (v,)


def test_a_limit_on_the_summary_is_read_on_the_summary_only() -> None:
    """A reply of many sentences whose labelled TL;DR has two: the limit on the TL;DR holds."""
    rule = Rule("tldr", "Write-ups open with a TL;DR of three sentences at most.")
    body = " ".join(f"Step {i} of the migration went through without errors." for i in range(12))
    ok = Evidence("delivery", "Write up the migration.", f"**TL;DR:** The migration is done. Nothing broke.\n\n{body}")
    bad = Evidence("delivery", "Write up the migration.",
                   "**TL;DR:** The migration is done. Nothing broke. Two tables moved. One index was rebuilt.\n\n"
                   + body)
    assert read(rule, ok).label != "violation"
    sc = scope(rule.text, View(bad.task, bad.reply, None))
    assert sc.located and len(sc.views) == 1 and "One index was rebuilt." in sc.views[0].reply
    assert body not in sc.views[0].reply


def test_a_limit_on_each_headline_is_read_per_item() -> None:
    rule = Rule("hl", "Headlines can't run past 70 characters, spaces included.")
    reply = ("Options:\n\n1. Carnival takes a new route this year\n   - a news angle with a long explanation that runs "
             "well past seventy characters in total\n2. Route moved after the safety review\n")
    sc = scope(rule.text, View("Write headlines.", reply, None))
    assert sc.located and [v.reply for v in sc.views] == ["Carnival takes a new route this year",
                                                          "Route moved after the safety review"]
