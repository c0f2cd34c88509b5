"""Gating policies: estimator contract, what each baseline does, warm start limits."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone

from toolkit.gating.env import build_streams
from toolkit.gating.features import TfidfSVD
from toolkit.gating.llm_gates import decisions_from_texts
from toolkit.gating.policies import (
    ColdStartUCB,
    LLMContextAware,
    LLMGreedy,
    Oracle,
    PretrainedScorer,
    Universal,
    WarmStartUCB,
    delay_kappa,
)
from toolkit.gating.simulate import simulate_benchmark


@pytest.fixture(scope="module")
def data():
    facts = simulate_benchmark("tiny", seed=5)
    streams = build_streams(facts)
    feat = TfidfSVD(dim=12, random_state=0).fit([f.text for f in facts])
    return streams, [feat.transform(s.texts) for s in streams]


def test_estimator_contract(data):
    streams, Xs = data
    for est in (Oracle(), Universal(), PretrainedScorer(tau=0.2), ColdStartUCB(alpha=0.3),
                WarmStartUCB(lam=5.0, m=4), LLMGreedy(capacity_aware=True), LLMContextAware()):
        params = est.get_params()
        twin = clone(est)
        assert twin.get_params() == params
        assert est.fit(streams[1:], Xs[1:]) is est
        ep = est.gate(streams[0], Xs[0], [10, 40])
        assert ep.added.shape == (2, streams[0].n) and ep.kept.shape == (2,)
        assert np.all(ep.kept <= ep.total)


def test_oracle_and_universal(data):
    streams, Xs = data
    s = streams[0]
    o = Oracle().gate(s, Xs[0], [10**6])
    assert np.array_equal(o.added[0], s.labels) and o.kept[0] == s.n_hits
    u = Universal().gate(s, Xs[0], [10**6, 1])
    assert u.added.all() and u.kept[0] == s.n_hits and u.kept[1] < s.n_hits


def test_pretrained_scorer_is_frozen_and_learned_from_others(data):
    streams, Xs = data
    pt = PretrainedScorer(tau=0.15).fit(streams[1:], Xs[1:])
    a = pt.gate(streams[0], Xs[0], [30]).added[0]
    # flipping the held-out user's hits changes nothing: the scorer never reads them
    import dataclasses

    empty = dataclasses.replace(streams[0], hits=tuple(np.zeros(0, np.int64) for _ in streams[0].hits))
    assert np.array_equal(a, pt.gate(empty, Xs[0], [30]).added[0])
    assert np.array_equal(a, Xs[0] @ pt.mu0_ >= 0.15)


def test_warm_start_without_exploration_and_huge_ridge_is_the_pretrained_scorer(data):
    streams, Xs = data
    ws = WarmStartUCB(alpha=0.0, tau=0.15, lam=1e12, m=4).fit(streams[1:], Xs[1:])
    pt = PretrainedScorer(tau=0.15).fit(streams[1:], Xs[1:])
    assert 0 < ws.kappa_ <= 1 and ws.kappa_ == delay_kappa(streams[1:], 4)
    np.testing.assert_allclose(ws.mu0_, pt.mu0_)
    a = ws.gate(streams[0], Xs[0], [25]).added[0]
    b = pt.gate(streams[0], Xs[0], [25]).added[0]
    assert np.array_equal(a, b)


def test_cold_start_learns_a_planted_rule():
    # one informative feature: facts with x1 = 1 are used after 2 sessions, others never
    from toolkit.gating.env import UserStream

    rng = np.random.default_rng(0)
    n_sess, per = 40, 10
    sess = np.repeat(np.arange(n_sess), per)
    good = rng.random(len(sess)) < 0.3
    hits = tuple(np.array([t + 2]) if g and t + 2 < n_sess else np.zeros(0, np.int64)
                 for t, g in zip(sess, good, strict=True))
    s = UserStream("u", tuple(map(str, range(len(sess)))), ("",) * len(sess), sess, hits)
    X = np.column_stack([good.astype(float), np.ones(len(sess))])
    ep = ColdStartUCB(alpha=1.0, tau=0.3, lam=1.0, m=3).gate(s, X, [12])
    late = sess >= n_sess // 2
    # once feedback arrived it skips the useless facts and keeps the useful ones
    assert ep.added[0, late & good].mean() > 0.95
    assert ep.added[0, late & ~good].mean() < 0.05
    assert ep.kept[0] > 2 * Universal().gate(s, X, [12]).kept[0]


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
FRESH_DROP = [
    "User said thanks for the quick answer.",
    "User chatted about the weather for a bit.",
    "User is tired right now after a long day.",
    "User asked how to spell 'necessary'.",
    "The user looked up the capital of Peru.",
    "User is thinking about maybe getting a hobby someday.",
    "User just finished lunch.",
]


@pytest.mark.xfail(strict=True, reason="the offline rubric is B.1's words only since issue 12: "
                   "it stores 3/8 of FRESH_KEEP (tests/test_gating_rubric.py); fails until the "
                   "method improves")
def test_offline_rubric_on_fresh_wording():
    keep = decisions_from_texts(FRESH_KEEP)
    drop = decisions_from_texts(FRESH_DROP)
    assert keep.mean() >= 0.85 and drop.mean() <= 0.15
    # the nearly-full room check is stricter than the vacant one
    assert decisions_from_texts(FRESH_KEEP, "full").sum() <= decisions_from_texts(FRESH_KEEP, "vacant").sum()


def test_llm_gate_through_the_gateway(llm_env, tmp_path):
    """Prompt -> request -> parsed decision; a twice-malformed answer is counted as unknown."""
    import json

    from llm_server import Reply

    from toolkit.gating.env import UserStream
    from toolkit.llm import Gateway

    def handler(req):
        user = req["messages"][1]["content"]
        if "spell" in user:  # malformed, also when re-asked
            return Reply(content="not json at all")
        return Reply(content=json.dumps({"category": "KEEP: constraint" if "allergic" in user
                                         else "DROP: small talk", "store": "allergic" in user}))

    llm_env.handler = handler
    texts = ("User is allergic to peanuts.", "User said hi.", "User asked how to spell rhythm.")
    s = UserStream("u", ("f1", "f2", "f3"), texts, np.array([0, 0, 1]),
                   (np.array([3]), np.zeros(0, np.int64), np.zeros(0, np.int64)))
    model = Gateway(cache_dir=str(tmp_path)).model("openai-api/local/test")
    gate = LLMGreedy(model=model, capacity_aware=True)
    d = gate.decisions(s)
    assert d.levels == ("vacant", "filling", "full") and d.by_level.shape == (3, 3)
    assert d.by_level[:, 0].all() and not d.by_level[:, 1].any()
    # unknown: no decision (null in the records), counted; the bank's fallback is the policy's
    assert d.unknown == 3 and not d.answered_mask()[:, 2].any() and d.answered_mask()[:, :2].all()
    assert {r["store"] for r in d.records(s.fact_ids) if r["fact_id"] == "f3"} == {None}
    assert {r["status"] for r in d.records(s.fact_ids) if r["fact_id"] == "f3"} == {"unknown"}
    assert d.resolved("store")[:, 2].all() and not d.resolved("skip")[:, 2].any()
    skip = LLMGreedy(model=model, capacity_aware=True, fallback="skip").gate(
        s, np.zeros((3, 2)), [5], decisions=d)
    assert skip.added[0].tolist() == [True, False, False]
    sent = [r["messages"][-1]["content"] for r in llm_env.requests]
    assert any("almost full" in c and "allergic" in c for c in sent)  # the room check is in the prompt
    ep = gate.gate(s, np.zeros((3, 2)), [5], decisions=d)
    assert ep.added[0].tolist() == [True, False, True]
    # the context-aware gate first summarises each session, then sees the notes
    llm_env.handler = lambda req: Reply(content=json.dumps(
        {"summary": "talked about food"} if "note" in req["messages"][0]["content"]
        else {"category": "KEEP", "store": True}))
    dc = LLMContextAware(model=model).decisions(s)
    assert dc.by_level.shape == (1, 3) and dc.calls == 2 + 3
    assert any("talked about food" in r["messages"][-1]["content"] for r in llm_env.requests)


def _gate_one_by_one(stream, context: bool, capacity_aware: bool, n_summaries: int = 3) -> np.ndarray:
    """The offline gate as it was computed before the gates shared their scores: fact by fact,
    each fact's session found by search, its rubric score and context support computed anew."""
    from toolkit.gating.rubric import (
        LEVELS,
        context_overlap,
        rubric_decision,
        rubric_score,
        summarize_session,
    )

    levels = LEVELS if capacity_aware else ("any",)
    slices = stream.session_slices()
    summaries = [summarize_session(list(stream.texts[a:b])) for _, a, b in slices] if context else []
    out = np.zeros((len(levels), stream.n), dtype=bool)
    for i, text in enumerate(stream.texts):
        bonus = 0
        if context:
            k = int(np.searchsorted([a for _, a, _ in slices], i, side="right") - 1)
            bonus = 1 if context_overlap(text, summaries[max(0, k - n_summaries):k]) >= 2 else 0
        for j, lev in enumerate(levels):
            out[j, i] = rubric_decision(rubric_score(text), None if lev == "any" else lev, bonus)
    return out


def test_offline_gates_sharing_scores_decide_as_one_by_one():
    """The four offline text gates computed together (one score and context support per fact)
    give each gate's decisions fact by fact, on users whose sessions give context support."""
    from toolkit.gating.llm_gates import gate_decisions, offline_gate_decisions
    from toolkit.gating.sweep import TEXT_GATES

    streams = build_streams(simulate_benchmark("S", seed=3, n_users=2))
    gates = [(context, cap) for _, context, cap in TEXT_GATES]
    for s in streams:
        together = offline_gate_decisions(s, gates)
        want = [_gate_one_by_one(s, context, cap) for context, cap in gates]
        assert [d.by_level.shape for d in together] == [(1, s.n), (3, s.n), (1, s.n), (3, s.n)]
        for got, w, (context, cap) in zip(together, want, gates, strict=True):
            assert np.array_equal(got.by_level, w)
            assert np.array_equal(gate_decisions(s, context=context, capacity_aware=cap).by_level, w)
        # the context gates differ from the plain ones somewhere: the support is exercised
        assert not np.array_equal(together[0].by_level, together[2].by_level)
