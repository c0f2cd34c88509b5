"""The compliance reader's LLM stage through the gateway: asked only when the offline stages abstain."""

from __future__ import annotations

import json

from llm_server import Reply

from toolkit.compliance import Evidence, Rule, read_many
from toolkit.compliance._reader import read_offline
from toolkit.llm import Gateway

RULE = Rule("tone", "Match the tone of the person I am writing to.")
EV = Evidence("delivery", "Reply to Ana's casual note.", "Dear Ms. Ana, I hereby acknowledge receipt of your note.")


def _undecided_offline() -> bool:
    return read_offline([(RULE, EV)])[0].label == "abstain"


def test_llm_answers_when_offline_abstains_and_quotes_are_verbatim(llm_env, tmp_path, monkeypatch):
    import toolkit.compliance._learned as learned

    monkeypatch.setattr(learned, "default_reader", lambda: None)  # the catalogue alone abstains on this rule
    assert _undecided_offline()
    llm_env.handler = lambda req: Reply(content=json.dumps({
        "label": "violation", "reason": "too formal for a casual note",
        "quotes": ["I hereby acknowledge receipt", "not in the evidence"]}))
    model = Gateway(cache_dir=str(tmp_path / "c")).model("openai-api/local/test")
    structured = Rule("brief", "Brief.", check={"type": "max_words", "value": 5})
    v_llm, v_check = read_many([(RULE, EV, ()), (structured, EV, ())], model=model)
    assert v_llm.label == "violation" and v_llm.decided_by == "llm:openai-api/local/test"
    assert v_llm.quotes == ["I hereby acknowledge receipt"]  # a quote not in the evidence is dropped
    assert v_check.decided_by == "check:max_words"  # decided offline, never sent to the model
    assert len(llm_env.requests) == 1
    assert "Match the tone" in llm_env.requests[0]["messages"][1]["content"]


def test_unusable_llm_answer_is_abstain_never_a_pass(llm_env, tmp_path, monkeypatch):
    import toolkit.compliance._learned as learned

    monkeypatch.setattr(learned, "default_reader", lambda: None)
    llm_env.handler = lambda req: Reply(content="not json at all")
    model = Gateway(cache_dir=str(tmp_path / "c")).model("openai-api/local/test")
    (v,) = read_many([(RULE, EV, ())], model=model)
    assert v.label == "abstain" and v.decided_by.startswith("llm:")
