"""The LLM resolution method through the gateway: prompt -> request -> checked outcome, unknowns."""

from __future__ import annotations

import json
from pathlib import Path

from llm_server import Reply

from toolkit.llm import Gateway, load_prompt
from toolkit.records import Message, ResolutionInput, Rule
from toolkit.rules.resolution import resolve, resolve_records

MODEL = "openai-api/local/test"
LIB = [
    Rule(id="r1", behavior="Keep answers concise"),
    Rule(id="r2", behavior="Put shell commands in code blocks"),
]


def _correction(req: dict) -> str:
    user = req["messages"][1]["content"]
    return user.rsplit('"""', 2)[-2]


def _answer(req: dict) -> Reply:
    """Answer like a model would, reading the correction out of the rendered prompt."""
    text = _correction(req)
    revising = len(req["messages"]) > 2
    if text.startswith("From now on"):
        body = {
            "lasting": True,
            "updates": [
                {
                    "op": "replace",
                    "target": "r1",
                    "quote": "be more detailed",
                    "behavior": "Be detailed",
                }
            ],
        }
    elif text.startswith("Be detailed"):
        body = {"lasting": False, "updates": []}
    elif text.startswith("Invent"):
        quote = "Invent nothing" if revising else "words the user never wrote"
        body = {
            "lasting": True,
            "updates": [
                {"op": "add", "quote": quote, "behavior": "x"},
                {"op": "retract", "target": "r2", "quote": "Invent"},
            ],
        }
    elif text.startswith("They"):
        seen = "split it up" in req["messages"][1]["content"]
        body = {
            "lasting": True,
            "target_unclear": not seen,
            "updates": [{"op": "reuse", "target": "r1", "quote": "They should be short"}],
        }
    else:
        return Reply("not json at all")
    return Reply(json.dumps(body))


def test_llm_resolution_prompt_request_and_checked_outcome(llm_env, tmp_path: Path) -> None:
    llm_env.handler = _answer
    model = Gateway(cache_dir=str(tmp_path / "cache")).model(MODEL)
    recs = [
        ResolutionInput(id="a", correction="From now on, be more detailed.", library=LIB),
        ResolutionInput(id="b", correction="Be detailed this time.", library=LIB),
        ResolutionInput(id="c", correction="Invent nothing please.", library=LIB),
        ResolutionInput(
            id="d",
            correction="They should be short.",
            library=LIB,
            context=[Message(role="user", content="The answer was long, split it up.")],
        ),
        ResolutionInput(id="e", correction="Garbage in.", library=LIB),
    ]
    res = {r.id: r for r in resolve(recs, model)}
    prompt = load_prompt("resolution")
    # requests run concurrently: take the first one sent for item "a", whatever order they arrived in
    first = next(q for q in llm_env.requests if "From now on" in q["messages"][1]["content"])
    assert first["messages"][0]["content"] == prompt.system
    assert '"r1"' in first["messages"][1]["content"]  # retrieved candidates are shown
    assert first["response_format"]["type"] == "json_schema"
    assert [(p.op, p.target) for p in res["a"].proposals] == [("replace", "r1")]
    assert res["b"].proposals == []
    # invalid proposals went back once with reasons: the fixed add stays, the bad retract is dropped
    assert any("break the rules" in m["content"] for q in llm_env.requests for m in q["messages"])
    assert [(p.op, p.target) for p in res["c"].proposals] == [("add", None)]
    assert res["c"].dropped and "retraction" in res["c"].dropped[0]
    # an unclear target: one retry with session excerpts
    assert res["d"].retried and res["d"].excerpts == ["The answer was long, split it up."]
    assert [(p.op, p.target) for p in res["d"].proposals] == [("reuse", "r1")]
    # malformed twice -> unknown, counted apart, no updates written
    assert res["e"].status == "unknown" and res["e"].proposals == []
    outs = resolve_records(recs, Gateway(cache_dir=str(tmp_path / "cache")).model(MODEL))
    assert [o.id for o in outs] == ["a", "b", "c", "d", "e"]


def test_diagnostic_runs_with_an_llm_and_counts_unknowns(llm_env, tmp_path: Path) -> None:
    from toolkit.diagnostics.resolution import run
    from toolkit.runs import RunContext

    def reply(req: dict) -> Reply:
        text = _correction(req)
        if text.startswith("Be detailed"):
            return Reply("still not json")  # malformed twice -> unknown
        return Reply(json.dumps({"lasting": False, "updates": []}))

    llm_env.handler = reply
    ctx = RunContext(
        out_dir=tmp_path / "resolution",
        models=["offline", MODEL],
        gateway=Gateway(cache_dir=str(tmp_path / "cache")),
        quick=True,
        options={"sizes": "2", "sessions": 50},
    )
    ctx.prepare()
    res = run(ctx)
    head = res.tables["resolution"]
    llm = head[head["model"] == MODEL].set_index("metric")
    assert llm.loc["decision accuracy", "unknown"] == 1  # ho-09 "Be detailed this time."
    # the denominator is every case: the unknown is its own column, never scored right or wrong
    assert llm.loc["decision accuracy", "n"] == 18
    k = int(llm.loc["decision accuracy", "correct"].split("/")[0])
    assert llm.loc["decision accuracy", "ours"] == k / 18
    assert llm.loc["decision accuracy", "answered_rate"] == k / 17
    assert ctx.prompts.get("resolution") == load_prompt("resolution").version
    assert set(res.tables["resolution_longrun_summary"]["model"]) == {"offline", MODEL, "-"}
