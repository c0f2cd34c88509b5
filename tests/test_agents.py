"""Agents: the offline agent's habit catalogue (every example runs), determinism, following,
revision; the LLM agent's tool loop against a local OpenAI-compatible server."""

from __future__ import annotations

import json

import pytest
from llm_server import Reply

from toolkit.agents import (
    ContextItem,
    LLMAgent,
    MemoryContext,
    OfflineAgent,
    load_habits,
    make_agent,
)
from toolkit.llm import Gateway
from toolkit.protocol import load_suite, protocol_dir

HABITS = load_habits()


@pytest.mark.parametrize("habit", HABITS, ids=[h.id for h in HABITS])
def test_habit_examples(habit):
    for text in habit.spec.must_match:
        assert habit.addressed_by(text), f"{habit.id} should be addressed by {text!r}"
    for text in habit.spec.must_not_match:
        assert not habit.addressed_by(text), f"{habit.id} should not be addressed by {text!r}"


def _suite():
    return load_suite(protocol_dir() / "coding.jsonl") + load_suite(protocol_dir() / "travel.jsonl")


def test_every_habit_can_show_and_changes_the_delivery():
    suite = _suite()
    agent = OfflineAgent(seed=0)
    for h in HABITS:
        tasks = [st.task for st in suite if h.can_show(st.task)]
        assert tasks, f"habit {h.id} has no task to show on"
        changed = [t for t in tasks if agent._render(t, [h], "k").to_dict() != agent._render(t, [], "k").to_dict()]
        assert changed, f"habit {h.id} never changes a delivery"


def test_offline_agent_is_deterministic_per_seed_and_item():
    suite = _suite()
    a, b = OfflineAgent(seed=3), OfflineAgent(seed=3)
    ctx = MemoryContext((ContextItem("Delete scratch files before you finish."),))
    first = [a.attempt(st.task, ctx, key="x").to_dict() for st in suite]
    again = [b.attempt(st.task, ctx, key="x").to_dict() for st in reversed(suite)][::-1]
    assert first == again
    other = [OfflineAgent(seed=4).attempt(st.task, ctx, key="x").to_dict() for st in suite]
    assert other != first


def test_a_rule_in_context_lowers_how_often_a_habit_shows():
    suite = [st.task for st in _suite() if st.task.benchmark == "coding" and "code_change" in st.task.tags]
    rule = MemoryContext((ContextItem("Delete any scratch files or leftovers before you hand the work back."),))
    def shows(ctx, seed):
        return sum("scratch_files" in OfflineAgent(seed=seed).attempt(t, ctx, key="k").notes["habits"] for t in suite)
    without = sum(shows(MemoryContext(), s) for s in range(5))
    with_rule = sum(shows(rule, s) for s in range(5))
    assert without > 20 and with_rule < 0.35 * without


def test_revision_drops_a_habit_the_report_names():
    t = next(st.task for st in _suite() if st.id == "c01")
    agent = OfflineAgent(seed=0, revise_p=1.0)
    d = agent._render(t, [h for h in HABITS if h.id in ("scratch_files", "emoji")], "k")
    clean = set(t.workspace) | set(t.reference.files)
    assert set(d.files) - clean  # a leftover file
    r = agent.revise(t, MemoryContext(), d, "You left a file in the workspace; delete the leftovers.", key="k")
    assert set(r.files) == clean and r.notes["habits"] == ["emoji"]


def _scripted(req: dict) -> Reply:
    """A scripted agent: write the file the task names, run the tests, then finish."""
    msgs = req["messages"]
    n = sum(m["role"] == "assistant" for m in msgs)
    task = msgs[1]["content"]
    if n == 0:
        return Reply(json.dumps({"tool": "write_file", "path": "notes.md", "content": "done: " + task[:30]}))
    if n == 1:
        return Reply(json.dumps({"tool": "run_tests"}))
    return Reply(json.dumps({"tool": "finish", "reply": "Done. Ran the test suite: 1 passed."}))


def test_llm_agent_tool_loop(llm_env):
    llm_env.handler = _scripted
    agent = make_agent("openai-api/local/test", Gateway(cache_mode="off"))
    assert isinstance(agent, LLMAgent)
    t = next(st.task for st in _suite() if st.id == "c01")
    d = agent.attempt(t, MemoryContext((ContextItem("Run the tests before you finish."),)), key="k")
    assert d.status == "ok" and d.reply.startswith("Done.")
    assert "notes.md" in d.files and "api/health.py" in d.files
    assert {"type": "run_tests"} in [dict(a) for a in d.actions]
    sent = llm_env.requests[0]["messages"][1]["content"]
    assert "Run the tests before you finish." in sent and "Ran the test suite" not in sent  # no reference leaks
    assert "sk-test-SENTINEL" not in json.dumps(d.to_dict())


def test_llm_agent_malformed_answers_make_an_unknown_delivery(llm_env):
    llm_env.handler = lambda req: Reply("this is not JSON")
    agent = make_agent("openai-api/local/test", Gateway(cache_mode="off"))
    t = next(st.task for st in _suite() if st.id == "c01")
    d = agent.attempt(t, MemoryContext(), key="k")
    assert d.status == "unknown" and d.reply == ""
