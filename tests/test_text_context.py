"""Every example of every ConText-style modifier rule (toolkit/resources/text/context.yaml) runs here."""

from __future__ import annotations

import pytest

from toolkit import text as tx

_RULES = tx.context_rules()
_CASES = [(r.literal, r.category, t, w, True) for r in _RULES for t, w in r.modifies] + \
         [(r.literal, r.category, t, w, False) for r in _RULES for t, w in r.not_modifies]


@pytest.mark.parametrize(("literal", "category", "text", "word", "expect"), _CASES,
                         ids=[f"{c[0]}|{c[3]}|{c[4]}" for c in _CASES])
def test_rule_examples(literal: str, category: str, text: str, word: str, expect: bool) -> None:
    cats = tx.word_modifiers(text, word)
    want = "NEGATION" if category == "TERMINATE" else category
    assert (want in cats) is expect, (text, word, cats)


def test_every_modifier_rule_has_an_example() -> None:
    bare = [r.literal for r in _RULES if r.direction != "terminate" and not (r.modifies or r.not_modifies)]
    assert bare == []


def test_split_rule_separates_condition_and_exception() -> None:
    main, conds, excs = tx.split_rule("When you write SQL, use uppercase keywords unless the file is a migration.")
    assert "uppercase keywords" in main
    assert conds == ["you write SQL"]
    assert excs == ["the file is a migration"]


def test_pseudo_negation_does_not_negate() -> None:
    text = "Not just the totals: show the breakdown."
    assert not tx.negated(text, text.index("totals"))
    text2 = "Skip the totals."
    assert tx.negated(text2, text2.index("totals"))
