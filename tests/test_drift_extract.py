"""Offline and LLM extractors of the five-dimension style vector (user turns)."""

from __future__ import annotations

import json

import pytest

from toolkit.drift.extract import (
    DIMS,
    EMOTIONS,
    TONES,
    extract_llm,
    extract_offline,
    prose,
    triple_count,
)
from toolkit.drift.tracker import track_records
from toolkit.llm import Gateway
from toolkit.records import DriftInput, Turn

JOKEY = [
    "lmao my toaster just launched a bagel across the kitchen, is that a feature 😂",
    "haha ok real talk, how do u keep basil alive, mine keeps dying lol",
    "yo quick q, is it weird to nap at 3pm? asking for a friend hehe",
]
FORMAL = [
    "Could you set out the principal differences between write-ahead logging and shadow paging, "
    "with particular reference to recovery time after a crash and the cost of checkpointing?",
    "I would appreciate a precise explanation of how central bank balance-sheet reduction affects "
    "long-term bond yields, distinguishing the signalling channel from the portfolio-balance channel.",
    "Please describe the mechanism by which beta-lactam antibiotics inhibit bacterial cell-wall "
    "synthesis and the principal pathways of acquired resistance.",
]


def _label(probs: dict) -> str:
    return max(probs, key=probs.get)


def test_vector_shape_and_ranges():
    for text in JOKEY + FORMAL + ["", "ok", "?!?!"]:
        v = extract_offline(text)
        assert set(v) == set(DIMS)
        assert set(v["tone"]) == set(TONES) and set(v["emotion"]) == set(EMOTIONS)
        assert abs(sum(v["tone"].values()) - 1) < 1e-9 and abs(sum(v["emotion"].values()) - 1) < 1e-9
        for d in ("length", "density", "formality"):
            assert 0.0 <= v[d] <= 1.0


@pytest.mark.parametrize("jokey, formal", list(zip(JOKEY, FORMAL, strict=True)))
def test_jokey_and_formal_turns_separate_on_every_dimension(jokey, formal):
    j, f = extract_offline(jokey), extract_offline(formal)
    assert _label(j["tone"]) == "humorous" and _label(f["tone"]) == "serious"
    assert _label(j["emotion"]) == "joy" and _label(f["emotion"]) in ("focused", "neutral")
    assert f["formality"] - j["formality"] > 0.5
    assert f["density"] - j["density"] > 0.2
    assert f["length"] > j["length"]


def test_emotion_cues():
    assert _label(extract_offline("ugh this STILL doesn't work, so annoying, why won't it build?!")["emotion"]) == "frustrated"
    assert _label(extract_offline("I'm really worried about the deadline and nervous I'll mess it up")["emotion"]) == "anxious"


def test_pasted_code_and_tracebacks_are_not_read_as_the_users_prose():
    trace = ("why does this crash?\nTraceback (most recent call last):\n  File \"a.py\", line 3, in <module>\n"
             "    run(cfg['x'])\nKeyError: 'x'\nany idea")
    assert prose(trace) == "why does this crash?\ncode\nany idea"
    fenced = "is this right?\n```python\nfor i in range(10):\n    total += i * i\n```"
    assert prose(fenced).split() == ["is", "this", "right?", "code"]
    assert prose("what does `dict.get` return?") == "what does code return?"
    assert prose("for (int i = 0; i < n; i++) { s += a[i]; }") == "code"
    plain = "Could you explain why the results (p < 0.05) were significant?"
    assert prose(plain) == plain
    # a short question with a long paste reads like the short question, not like an essay
    assert extract_offline(fenced)["length"] == pytest.approx(extract_offline("is this right? code")["length"])


def test_repeated_cue_counts_once_and_shouting_follows_the_words():
    once = extract_offline("this keeps failing")["emotion"]["frustrated"]
    twice = extract_offline("this keeps failing failing")["emotion"]["frustrated"]
    assert once == pytest.approx(twice, abs=0.05)
    assert _label(extract_offline("GUESS WHAT, I got the job!!! so happy")["emotion"]) == "joy"
    assert _label(extract_offline("WHY is this STILL broken, I am fed up")["emotion"]) == "frustrated"


def test_triple_count_proxy():
    k, n = triple_count("The compiler rewrites loops into vector instructions for modern processors.")
    assert n == 10 and k >= 2
    assert triple_count("lol ok haha")[0] == 0


GOOD = {"tone": {"humorous": 0.1, "gentle": 0.1, "neutral": 0.2, "serious": 0.6},
        "emotion": {"joy": 0.0, "neutral": 0.2, "focused": 0.8, "frustrated": 0.0, "anxious": 0.0},
        "density": 0.8, "formality": 0.9}


def test_llm_extractor_through_gateway(llm_env, tmp_path):
    from llm_server import Reply

    llm_env.handler = lambda req: Reply(json.dumps(GOOD))
    model = Gateway(cache_dir=str(tmp_path / "c")).model("openai-api/local/test")
    out = extract_llm([FORMAL[0]], model, ids=["a#1"])
    assert out[0]["tone"]["serious"] == pytest.approx(0.6) and out[0]["formality"] == 0.9
    assert out[0]["length"] == extract_offline(FORMAL[0])["length"]  # length is measured, not asked
    body = llm_env.requests[0]
    assert body["messages"][1]["content"].count(FORMAL[0]) == 1
    assert body["response_format"]["type"] == "json_schema"


def test_llm_unknown_leaves_state_and_is_not_scored(llm_env, tmp_path):
    from llm_server import Reply

    def handler(req):
        user = req["messages"][-1]["content"]
        if "SECOND" in req["messages"][1]["content"]:
            return Reply("not json")  # malformed twice -> unknown
        return Reply(json.dumps(GOOD)) if user else Reply("x")

    llm_env.handler = handler
    model = Gateway(cache_dir=str(tmp_path / "c")).model("openai-api/local/test")
    rec = DriftInput(id="d", turns=[Turn(user="first turn"), Turn(user="SECOND turn"), Turn(user="third")])
    outs = track_records([rec], model)
    assert [o.turn for o in outs] == [1, 2, 3]
    # the unknown turn is written as unknown: no vector, score, flag or prompt (never a 0 score)
    assert outs[1].status == "unknown" and outs[1].vector is None and outs[1].score is None
    assert outs[1].changed is None and outs[1].prompt is None
    assert outs[0].status == outs[2].status == "ok"
