"""The LLM admission method through the gateway: prompt -> request -> checked outcome, unknowns."""

from __future__ import annotations

import json
from pathlib import Path

from llm_server import Reply

from toolkit.llm import Gateway, load_prompt
from toolkit.records import AdmissionInput, Message
from toolkit.rules.admission import admit_detailed, admit_records

MODEL = "openai-api/local/test"


def _answer(req: dict) -> Reply:
    """Answer like a model would: read the user message out of the rendered prompt."""
    user = req["messages"][1]["content"]  # the re-ask appends turns after it
    message = user.split("User message:\n", 1)[1].strip()
    if message.startswith("From now on"):
        body = {"signal": True, "behavior": "Use pathlib", "decision": "persist",
                "scope": "project", "activation": "when you touch file IO", "exceptions": [],
                "quotes": ["From now on", "use pathlib", "not a quote from the user"]}
    elif message.startswith("Invented"):
        body = {"signal": True, "behavior": "Something", "decision": "persist",
                "scope": "global", "quotes": ["words the user never wrote"]}
    elif message.startswith("Garbage"):
        return Reply("this is not JSON")
    else:
        body = {"signal": True, "decision": "task_local", "scope": "global", "quotes": []}
    return Reply(json.dumps(body))


def test_llm_method_prompt_request_and_checked_outcome(llm_env, tmp_path: Path) -> None:
    llm_env.handler = _answer
    model = Gateway(cache_dir=str(tmp_path / "cache")).model(MODEL)
    recs = [
        AdmissionInput(id="a", text="From now on, in this repo, use pathlib when you touch file IO.",
                       context=[Message(role="assistant", content="I used os.path.join here.")]),
        AdmissionInput(id="b", text="Invented quotes should not be trusted."),
        AdmissionInput(id="c", text="Garbage in, garbage out."),
        AdmissionInput(id="d", text="Fix the typo in the README you just edited."),
    ]
    got = admit_detailed(recs, model)
    # calls run concurrently, so find record "a"'s request by its message, not by arrival order
    first = next(r for r in llm_env.requests if "From now on" in r["messages"][1]["content"])
    prompt = load_prompt("admission")
    assert first["messages"][0] == {"role": "system", "content": prompt.system}
    assert "I used os.path.join here." in first["messages"][1]["content"]
    a, b, c, d = got
    assert a.decision == "persist" and a.scope == "project" and a.conditional
    assert a.quotes == ("From now on", "use pathlib")  # the invented quote is dropped
    assert b.decision == "defer" and b.reason == "undetermined"  # nothing grounded, nothing kept
    assert c.status == "unknown" and c.reason == "unknown"
    assert d.decision == "task_local" and d.scope is None
    out = admit_records(recs, model)
    assert [o.id for o in out] == ["a", "b", "c", "d"]
    # an unknown answer is written as unknown with every answer field null, never as defer
    assert out[3].scope is None and out[2].status == "unknown" and out[2].decision is None
    assert out[2].model_dump(mode="json") == {
        "id": "c", "status": "unknown", "decision": None, "scope": None, "conditional": False,
        "activation": None, "behavior": None, "quotes": []}


def test_diagnostic_counts_llm_unknowns_apart(llm_env, tmp_path: Path) -> None:
    from toolkit.diagnostics.admission import run
    from toolkit.runs import RunContext

    llm_env.handler = lambda req: Reply("not json")
    ctx = RunContext(out_dir=tmp_path / "run", models=["offline", MODEL],
                     gateway=Gateway(cache_dir=str(tmp_path / "cache")),
                     options={"skip_prefeval": True})
    ctx.prepare()
    res = run(ctx)
    t12 = res.tables["table12"].set_index("model")
    assert t12.loc[MODEL, "unknown"] == 192
    # fixed denominators: 192 unknowns are 0 of 192 (never 0/0 or a rate over answered items)
    assert t12.loc[MODEL, "structural"] == "0/192"
    t11 = res.tables["table11"] if "table11" in res.tables else None
    if t11 is not None and "model" not in t11.columns:
        assert (t11["unknown"] >= 0).all()
    assert t12.loc["offline", "unknown"] == 0
    assert f"confusion_{MODEL.replace('/', '_').replace('-', '_')}" in res.figures
