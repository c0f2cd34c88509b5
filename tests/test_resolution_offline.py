"""Offline rule resolution: the done-when bars, the update semantics and the guard rails."""

from __future__ import annotations

import random

import pytest

from toolkit.llm import Gateway
from toolkit.records import Message, ResolutionInput, ResolutionOutput, Rule
from toolkit.rules.distractors import SIZES, distractor_pool, grow_library
from toolkit.rules.resolution import (
    MAX_EXCERPTS,
    Proposal,
    check_and_revise,
    resolve_offline,
    resolve_records,
    retrieve_candidates,
    session_excerpts,
    validate,
)
from toolkit.rules.resolution_eval import (
    CATEGORIES,
    affected,
    decision_correct,
    load_cases,
    target_correct,
)

LIB = [
    Rule(id="r1", behavior="Keep answers concise"),
    Rule(id="r2", behavior="Put shell commands in code blocks"),
]


def _ops(text: str, lib=LIB, context=None) -> list[tuple[str, str | None]]:
    rec = ResolutionInput(id="x", correction=text, library=lib, context=context)
    return [(u.op, u.target) for u in resolve_offline(rec).output().updates]


def test_heldout_decision_accuracy_meets_the_bar() -> None:
    cases, gold = load_cases("heldout")
    assert len(cases) >= 16
    outs = [resolve_offline(c).output() for c in cases]
    dec = sum(decision_correct(o, gold[o.id]) for o in outs)
    tgt = sum(target_correct(o, gold[o.id]) for o in outs)
    assert dec / len(cases) >= 13 / 16, dec
    assert tgt <= dec
    cats = {g.category for g in gold.values()}
    assert set(CATEGORIES) <= cats


def test_affected_rule_recall_is_complete_at_every_size() -> None:
    cases, gold = load_cases("heldout")
    pool = distractor_pool()
    for size in SIZES:
        for c in cases:
            aff = affected(gold[c.id])
            if not aff:
                continue
            grown = grow_library(c, size, 0, pool=pool)
            assert len(grown.library) == size
            got = {r.id for r in retrieve_candidates(grown)}
            assert aff <= got, (c.id, size)


@pytest.mark.slow
def test_growth_three_orders_decisions_hold() -> None:
    cases, gold = load_cases("heldout")
    pool = distractor_pool()
    for size in SIZES:
        for order in range(3):
            outs = [
                resolve_offline(grow_library(c, size, order, pool=pool)).output() for c in cases
            ]
            assert sum(decision_correct(o, gold[o.id]) for o in outs) / len(cases) >= 13 / 16


def test_temporary_request_changes_nothing_but_lasting_one_updates() -> None:
    assert _ops("Be detailed this time.") == []
    assert _ops("From now on, be more detailed.") == [("replace", "r1")]
    assert _ops("Just for this question, skip the code blocks.") == []


def test_each_operation() -> None:
    assert _ops("I told you before: keep the answers concise.") == [("reuse", "r1")]
    assert _ops("Keep answers concise, except when I ask for a design review.") == [
        ("revise", "r1")
    ]
    assert _ops("Always add a changelog entry for user-facing changes.") == [("add", None)]
    assert _ops("Drop the rule about code blocks, I don't need it anymore.") == [("retract", "r2")]
    bundled = _ops("Again, keep answers concise. Also, never use emojis from now on.")
    assert sorted(bundled, key=str) == sorted([("reuse", "r1"), ("add", None)], key=str)


def test_rules_are_removed_only_on_explicit_retraction() -> None:
    lib = [Rule(id="e", behavior="Add an emoji to each commit message")]
    ops = _ops("Don't put emojis in commit messages from now on.", lib)
    assert ops == [
        ("replace", "e")
    ]  # the requirement changes; the old rule is superseded, not retracted
    assert _ops("Forget my earlier rule about emojis.", lib) == [("retract", "e")]


def test_proposals_must_quote_the_user_and_invalid_ones_are_revised_once_then_dropped() -> None:
    rec = ResolutionInput(id="x", correction="Keep answers concise.", library=LIB)
    assert validate(Proposal("reuse", "r1", "words never said"), rec) is not None
    assert validate(Proposal("retract", "r1", "Keep answers concise."), rec) is not None
    assert validate(Proposal("reuse", "nope", "Keep answers concise."), rec) is not None
    dup = Proposal("add", None, "Keep answers concise.", behavior="Keep answers concise")
    kept, dropped = check_and_revise([dup, Proposal("retract", "r1", "Keep answers concise.")], rec)
    assert [(p.op, p.target) for p in kept] == [("reuse", "r1")]  # the covered add became a reuse
    assert len(dropped) == 1 and "explicit retraction" in dropped[0]
    for p in resolve_offline(rec).proposals:
        assert p.quote in rec.correction


def test_ambiguous_target_retrieves_session_excerpts_and_retries_once() -> None:
    lib = [
        Rule(id="f", behavior="Keep functions under 40 lines"),
        Rule(id="m", behavior="Keep files under 400 lines"),
    ]
    ctx = [
        Message(role="user", content="This function is 120 lines long, split it up. Thanks."),
        Message(role="assistant", content="I split parse_config into three helpers."),
    ]
    rec = ResolutionInput(
        id="x",
        correction="Remember that for the future: they should be short.",
        library=lib,
        context=ctx,
    )
    res = resolve_offline(rec)
    assert res.retried and 0 < len(res.excerpts) <= MAX_EXCERPTS
    whole = " ".join(m.content for m in ctx)
    assert all(e in whole for e in res.excerpts)
    assert [(p.op, p.target) for p in res.proposals] == [("reuse", "f")]
    assert len(session_excerpts(rec, "lines", n=1)) == 1


def test_output_is_independent_of_library_order() -> None:
    cases, _ = load_cases("dev")
    for c in cases[:10]:
        grown = grow_library(c, 47, 0)
        lib = list(grown.library)
        random.Random(7).shuffle(lib)
        a = resolve_offline(grown).output()
        b = resolve_offline(grown.model_copy(update={"library": lib})).output()
        assert a == b


def test_resolve_records_entry_point() -> None:
    cases, _ = load_cases("heldout")
    outs = resolve_records(cases[:3], Gateway().model("offline"), seed=0)
    assert [o.id for o in outs] == [c.id for c in cases[:3]]
    assert all(isinstance(o, ResolutionOutput) for o in outs)


def test_stopping_a_required_behaviour_retracts_but_an_opposite_requirement_replaces() -> None:
    lib = [
        Rule(id="b", behavior="Add the license banner to every file"),
        Rule(id="i", behavior="Use absolute imports"),
    ]
    assert _ops("Stop adding the license banner to files.", lib) == [("retract", "b")]
    assert _ops("No more license banners.", lib) == [("retract", "b")]
    assert _ops("Never add the license banner to files.", lib) == [("replace", "b")]
    assert _ops("Stop using absolute imports, use relative ones.", lib) == [("replace", "i")]
    assert _ops("Stop adding the license banner; put an SPDX line there instead.", lib) == [
        ("replace", "b")
    ]


def test_paraphrased_restatement_and_placement_wording() -> None:
    docs = [
        Rule(id="d", behavior="Read the documentation before using an unfamiliar API"),
        Rule(id="p", behavior="Pin dependency versions"),
    ]
    assert _ops("Look at the reference pages before calling a function you don't know.", docs) == [
        ("reuse", "d")
    ]
    blank = [Rule(id="m", behavior="Use one blank line between methods")]
    # "before a return statement" places the line; it is not a trigger for the methods rule
    assert _ops("Always put a blank line before a return statement.", blank) == [("add", None)]


def test_memoised_overlap_is_the_plain_computation() -> None:
    """The term-set totals are memoised (the cold fit's cost); the values are exactly those of a
    fresh computation, with and without a library's term weights."""
    import math

    from toolkit.rules.resolution_cues import concept_of, term_weight
    from toolkit.rules.rule_index import TermWeights, _terms, overlap

    def plain(q: str, t: str, w) -> float:  # noqa: ANN001
        a, b = _terms(q), _terms(t)
        if not a or not b:
            return 0.0
        w = w or term_weight
        shared = a & b
        literal = {concept_of(x) for x in shared if not x.startswith("@")}
        common = math.fsum(w(x) * (0.5 if x.startswith("@") and x[1:] in literal else 1.0)
                           for x in shared)
        if common == 0:
            return 0.0
        pq, pt = common / math.fsum(w(x) for x in a), common / math.fsum(w(x) for x in b)
        return 2 * pq * pt / (pq + pt)

    rules = [Rule(id="a", behavior="Keep commit messages under 72 characters"),
             Rule(id="b", behavior="Use tabs for indentation", conditions=["in Makefiles"])]
    w = TermWeights.for_rules(rules)
    pairs = [("commit subjects stay short, under 72", "Keep commit messages under 72 characters"),
             ("indent with tabs in the Makefile", "Use tabs for indentation in Makefiles"),
             ("write more tests", "Use tabs for indentation")]
    for _ in range(2):  # the second round reads the memo
        for q, t in pairs:
            assert overlap(q, t) == plain(q, t, None)
            assert overlap(q, t, w) == plain(q, t, w)
