"""Retrieval-based labels: trigger, top-k retrieval against M_{t'-1}, judge, RHR."""

from __future__ import annotations

import json

import numpy as np
import pytest
from llm_server import Reply

from toolkit.gating.labels import (
    UserTurn,
    compare_labels,
    label_facts,
    offline_trigger,
    offline_verify,
    rhr,
    rhr_counts,
)
from toolkit.gating.retrieval import EmbeddingRetriever, TfidfRetriever, make_retriever
from toolkit.gating.simulate import simulate_users
from toolkit.llm import Gateway
from toolkit.records import Fact

MODEL = "openai-api/local/test"

FACTS = [
    Fact(user="a", fact_id="a1", session=0, text="User is allergic to peanuts and tree nuts."),
    Fact(user="a", fact_id="a2", session=0, text="User chatted about the weather today."),
    Fact(user="a", fact_id="a3", session=1, text="User's cat Whiskers needs grain-free food."),
    Fact(user="a", fact_id="a4", session=3, text="User is allergic to shellfish as well."),
    Fact(user="b", fact_id="b1", session=0, text="User is allergic to peanuts."),
]


@pytest.mark.parametrize("text, needed", [
    ("Can you plan a dinner menu that works with my allergies?", True),
    ("Remember the food thing I mentioned? Pick a snack for the trip.", True),
    ("What should I feed our cat this week?", True),
    ("As I said last time, I hate long meetings; draft an agenda.", True),
    ("Any ideas for me for the weekend given my budget?", True),
    ("What is the capital of Peru?", False),
    ("Convert 30 degrees Celsius to Fahrenheit.", False),
    ("Give me three synonyms for quick.", False),
    ("Explain how a hash map works.", False),
    ("Who wrote Pride and Prejudice?", False),
])
def test_offline_trigger_on_fresh_messages(text, needed):
    d = offline_trigger(text)
    assert d.query_needed is needed
    assert bool(d.query) is needed


@pytest.mark.parametrize("msg, fact, ok", [
    ("Plan a dinner menu; remember my peanut allergy and nuts in general.",
     "User is allergic to peanuts and tree nuts.", True),
    ("What food should I buy for Whiskers, the grain-free kind?",
     "User's cat Whiskers needs grain-free food.", True),
    ("Plan a dinner menu for my friends.", "User is allergic to shellfish as well.", False),
    ("Book me a train to Vienna for my conference.", "User prefers window seats on trains.",
     False),
    ("Draft my running plan for the half marathon in October.",
     "User is training for a half marathon in October.", True),
])
def test_offline_verify_on_fresh_pairs(msg, fact, ok):
    assert offline_verify(msg, fact).helpful is ok


def test_retrieval_only_sees_the_bank_as_it_stood():
    turns = [UserTurn("a", 2, "Plan a dinner for my allergies: no peanuts or shellfish."),
             UserTurn("a", 5, "Plan a dinner for my allergies: no peanuts or shellfish.")]
    run = label_facts(FACTS, turns, k=3)
    hits = {f.fact_id: f.hits for f in run.facts}
    assert hits["a4"] == [5]            # only in the bank from session 4 on
    assert 2 in hits["a1"] and hits["b1"] == []  # other users' facts are never retrieved
    assert run.n_turns == 2 and run.n_triggered == 2 and run.unknown_trigger == 0


def test_pipeline_recovers_hidden_hits_on_simulated_users():
    users = simulate_users("tiny", seed=0)
    facts = [f for u in users for f in u.facts]
    turns = [t for u in users for t in u.turns]
    run = label_facts([f.model_copy(update={"hits": []}) for f in facts], turns, k=5)
    agree = compare_labels(run.facts, facts)
    assert agree["fact_precision"] > 0.8 and agree["fact_recall"] > 0.4
    assert run.summary()["used_facts"] == sum(1 for f in run.facts if f.hits)


def test_tfidf_retriever_ranks_and_is_deterministic():
    bank = ["peanut allergy", "weather chat", "peanut butter recipe", "cat food"]
    r = TfidfRetriever()
    top = r.search(bank, "peanut allergy", 2)
    assert [i for i, _ in top] == [0, 2] and top[0][1] > top[1][1]
    assert r.search(bank, "zzz", 3) == [] and r.search([], "x", 3) == []
    with pytest.raises(ValueError):
        make_retriever("bm99")


def test_embeddings_plug_in():
    class Bag:
        vocab = ["peanut", "allergy", "cat", "food", "weather"]

        def embed(self, texts):
            return np.array([[t.count(w) for w in self.vocab] for t in texts], dtype=float)

    r = make_retriever(EmbeddingRetriever(Bag()))
    assert [i for i, _ in r.search(["cat food", "peanut allergy"], "my cat", 1)] == [0]
    run = label_facts(FACTS, [UserTurn("a", 2, "My cat Whiskers: what food, grain-free?")],
                      retriever=EmbeddingRetriever(Bag()), k=2)
    assert {f.fact_id: f.hits for f in run.facts}["a3"] == [2]


def test_llm_method_through_gateway_counts_unknowns(llm_env, tmp_path):
    def handler(req):
        system = req["messages"][0]["content"]
        user = req["messages"][-1]["content"]
        if "search query" in system:
            return Reply(json.dumps({"query_needed": "weather" not in user, "query": "allergic cat Whiskers"}))
        if "Whiskers" in json.dumps(req["messages"]):
            return Reply("no json here")  # malformed twice -> unknown
        return Reply(json.dumps({"helpful": "allergic" in user, "reasoning": "r"}))

    llm_env.handler = handler
    gw = Gateway(cache_dir=str(tmp_path / "cache"), backoff_base=0.01)
    turns = [UserTurn("a", 2, "Cook something for my allergies"),
             UserTurn("a", 2, "How is the weather?")]
    run = label_facts(FACTS, turns, model=gw.model(MODEL), k=3)
    assert run.n_triggered == 1 and run.unknown_trigger == 0
    hits = {f.fact_id: f.hits for f in run.facts}
    assert hits["a1"] == [2] and hits["a2"] == []
    trig = [r for r in llm_env.requests if "search query" in r["messages"][0]["content"]]
    assert len(trig) == 2
    assert any("Cook something" in r["messages"][-1]["content"] for r in trig)
    assert run.unknown_verify == 1


def test_rhr_micro_macro():
    facts = [Fact(user="a", fact_id="x", session=0, text="t", hits=[1, 2, 3]),
             Fact(user="a", fact_id="y", session=0, text="t", hits=[4]),
             Fact(user="b", fact_id="z", session=0, text="t", hits=[1])]
    assert rhr_counts(facts, {"x"}) == {"a": (3, 4), "b": (0, 1)}
    micro, macro = rhr(facts, {"x"})
    assert micro == pytest.approx(3 / 5) and macro == pytest.approx((0.75 + 0) / 2)
    evicted_after_2 = rhr(facts, lambda f, s: f.fact_id == "x" and s <= 2)
    assert evicted_after_2[0] == pytest.approx(2 / 5)


def test_labels_ignore_hidden_needs_and_input_order():
    import dataclasses
    import random

    users = simulate_users("tiny", seed=1, n_users=2)
    facts = [f.model_copy(update={"hits": []}) for u in users for f in u.facts]
    turns = [t for u in users for t in u.turns]
    base = {f.fact_id: f.hits for f in label_facts(facts, turns).facts}
    blind = [dataclasses.replace(t, needs=()) for t in turns]  # hidden field wiped
    shuffled_facts, shuffled_turns = facts[:], blind[:]
    random.Random(0).shuffle(shuffled_facts)
    random.Random(1).shuffle(shuffled_turns)
    again = {f.fact_id: f.hits for f in label_facts(shuffled_facts, shuffled_turns).facts}
    assert again == base and any(base.values())
