"""The LLM simulated-user method through the gateway: prompt -> request -> parsed decision, unknowns."""

from __future__ import annotations

import json

from llm_server import Reply

from toolkit.llm import Gateway
from toolkit.profiles import Profile
from toolkit.records import AnnotatedPoint
from toolkit.simuser import Delivery, SimulatedUser
from toolkit.simuser.fidelity import fidelity_report

PROF = Profile(id="u1", preferences=[
    {"id": "no-emoji", "text": "No emoji in replies."},
    {"id": "short", "text": "Keep replies under 50 words.", "except_when": "I ask for detail"},
])


def _decision(correct: bool, pid: str = "no-emoji", fb: str | None = "Drop the emoji [no-emoji], please.") -> str:
    return json.dumps({
        "interpretation": "agent fixed the bug and added an emoji",
        "preferences": [{"preference_id": pid, "relevant": True, "verdict": "violated" if correct else "satisfied",
                         "evidence": "rocket emoji"},
                        {"preference_id": "short", "relevant": True, "verdict": "satisfied", "evidence": ""}],
        "overlooked": [], "correct": correct, "feedback": fb if correct else None,
    })


def test_llm_user_sends_prompt_and_parses_decision(llm_env, tmp_path):
    llm_env.handler = lambda req: Reply(content=_decision(True))
    gw = Gateway(cache_dir=str(tmp_path / "c"))
    user = SimulatedUser(PROF, gw.model("openai-api/local/test"))
    d = Delivery(task="Fix the login bug.", reply="Fixed it \U0001F680", id="d1")
    fb, st = user.respond(d, user.init_state())
    assert fb is not None and "no-emoji" not in fb and "emoji" in fb
    tr = st.traces[-1]
    assert tr.method.startswith("llm:") and tr.named == ("no-emoji",)
    req = llm_env.requests[0]
    system, usr = req["messages"][0]["content"], req["messages"][1]["content"]
    assert "second pass" in system
    assert "[no-emoji] No emoji in replies." in usr and "except when: I ask for detail" in usr
    assert "Fixed it" in usr and req["response_format"]["type"] == "json_schema"


def test_llm_silence_and_unknown_counting(llm_env, tmp_path):
    replies = iter([Reply(content=_decision(False)), Reply(content="not json"), Reply(content="still not json")])
    llm_env.handler = lambda req: next(replies)
    gw = Gateway(cache_dir=str(tmp_path / "c"), max_concurrency=1)
    model = gw.model("openai-api/local/test")
    pts = [AnnotatedPoint(id="p0", annotator="u1", task="t0", response="ok", corrected=False),
           AnnotatedPoint(id="p1", annotator="u1", task="t1", response="ok \U0001F680", corrected=True,
                          preference_ids=["no-emoji"])]
    rep = fidelity_report(pts, {"u1": PROF}, model)
    assert rep["n_unknown"] == 1
    r = rep["annotators"][0]
    # fixed denominators: the unusable answer counts as "no correction sent", in its own column
    assert r["n_neg"] == 1 and r["n_pos"] == 1 and r["n_abstain"] == 1 and r["recall"] == 0.0
    assert r["coverage"] == 0.5
    statuses = {p["id"]: p.get("status", "ok") for p in rep["points"]}
    assert statuses == {"p0": "ok", "p1": "unknown"}


def test_llm_ids_outside_profile_are_ignored(llm_env, tmp_path):
    llm_env.handler = lambda req: Reply(content=_decision(True, pid="made-up"))
    gw = Gateway(cache_dir=str(tmp_path / "c"))
    tr = SimulatedUser(PROF, gw.model("openai-api/local/test")).judge(Delivery(task="t", reply="r"))
    assert tr.decision == "silent" and tr.named == ()
