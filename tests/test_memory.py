"""Memory methods: the registry, a researcher's own class by module:Class, freezing, and the
learner seeing feedback text only (an import-graph test)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from toolkit.agents import ContextItem, MemoryContext, Task
from toolkit.errors import UsageError
from toolkit.memory import METHODS, FeedbackEvent, FrozenError, make_method, method_class


class KeepLast:
    """A researcher's own method, defined outside the toolkit: remembers the last feedback."""

    name = "keep_last"

    def __init__(self) -> None:
        self.last: str | None = None
        self.frozen = False

    def learn(self, event: FeedbackEvent) -> None:
        assert not self.frozen
        self.last = event.feedback

    def context(self, task: Task) -> MemoryContext:
        return MemoryContext((ContextItem(self.last, "memory", "last"),) if self.last else ())

    def freeze(self) -> None:
        self.frozen = True


TASK = Task("t1", "coding", "Fix the health endpoint.")
EVENT = FeedbackEvent("t0", "Add a helper.", "Added it.", "You left scratch_check.py in the workspace; delete the "
                      "leftovers before you wrap up. Same goes for next time.")


def test_registry_has_the_five_methods():
    assert METHODS == ("no_memory", "all_rules", "retrieval_memory", "relevant_rules", "tellonce")


def test_a_class_defined_in_a_test_file_loads_by_module_path():
    m = make_method(f"{__name__}:KeepLast", seed=1)
    assert isinstance(m, KeepLast)
    m.learn(EVENT)
    m.freeze()
    assert m.context(TASK).items[0].text == EVENT.feedback


def test_bad_method_strings_are_usage_errors():
    with pytest.raises(UsageError):
        method_class("no_such_method")
    with pytest.raises(UsageError):
        method_class("toolkit.memory:NotThere")


@pytest.mark.parametrize("name", ["no_memory", "all_rules", "relevant_rules", "tellonce"])
def test_methods_start_empty_and_refuse_to_learn_when_frozen(name):
    m = make_method(name)
    assert m.context(TASK).items == ()
    m.learn(EVENT)
    m.freeze()
    with pytest.raises(FrozenError):
        m.learn(EVENT)


def test_rule_methods_learn_a_repeated_correction():
    # the first correction is deferred and kept as a candidate; the repeat ("Please delete the
    # leftovers ...") restates it (a removal imperative its rule also asks for is not a
    # retraction: the work-removal kind), so the preference is learned (a strict xfail until the
    # ninth pass)
    m = make_method("all_rules")
    m.learn(EVENT)
    m.learn(FeedbackEvent("t1", "Fix a bug.", "Fixed.", "Please delete the leftovers before you wrap up; you left "
                          "debug_output.log in the workspace."))
    texts = [it.text for it in m.context(TASK).items]
    assert any("leftovers" in t for t in texts)


def test_retrieval_memory_add_update_noop_and_top_k():
    m = make_method("retrieval_memory", k=2)
    m.learn(EVENT)
    m.learn(EVENT)  # the same sentences again: nothing new
    ops = [o["op"] for o in m.ops]
    assert ops.count("ADD") >= 1 and "NOOP" in ops
    for i in range(4):
        m.learn(FeedbackEvent(f"u{i}", "Plan a trip.", "Here it is.", f"Please book hotel number {i} near the station next time."))
    assert len(m.context(TASK).items) == 2


def test_feedback_event_carries_text_only():
    class Sneaky(str):
        hidden = "profile"
    ev = FeedbackEvent("t", "task", "reply", Sneaky("Delete the leftovers."))
    assert type(ev.feedback) is str


def test_learner_side_never_imports_the_simulated_user_or_profiles():
    code = ("import sys, toolkit.agents, toolkit.memory, toolkit.memory._basic, toolkit.memory._retrieval, "
            "toolkit.memory._selected, toolkit.memory._embed, toolkit.rules.checks, toolkit.compliance; bad = [m for m in sys.modules if m.startswith(('toolkit.simuser', "
            "'toolkit.profiles'))]; print(bad); sys.exit(1 if bad else 0)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_readme_example_method_runs(tmp_path, monkeypatch):
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    code = next(b for b in re.findall(r"```python\n(.*?)```", readme, re.S) if "class LastWords" in b)
    assert len(code.strip().splitlines()) <= 25
    (tmp_path / "mymemory.py").write_text(code, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    m = make_method("mymemory:LastWords")
    m.learn(EVENT)
    m.freeze()
    assert m.context(TASK).items[0].text == EVENT.feedback


def test_retrieval_memory_llm_update_decisions_and_unknowns(llm_env):
    import json as _json

    from llm_server import Reply

    from toolkit.llm import Gateway

    model = Gateway(cache_mode="off").model("openai-api/local/test")
    m = make_method("retrieval_memory", model)
    llm_env.handler = lambda req: Reply(_json.dumps({"op": "ADD", "target": None, "text": None}))
    m.learn(EVENT)
    assert len(m.memories) >= 1 and all(o["op"] == "ADD" for o in m.ops)
    first = m.memories[0].id
    llm_env.handler = lambda req: Reply(_json.dumps({"op": "DELETE", "target": first, "text": None}))
    m.learn(FeedbackEvent("t2", "Fix it.", "Fixed.", "You no longer need to delete the leftovers for me."))
    assert first not in {x.id for x in m.memories}
    n = len(m.memories)
    llm_env.handler = lambda req: Reply("not json at all")
    m.learn(FeedbackEvent("t3", "Fix it.", "Fixed.", "Please keep replies under 100 words from now on."))
    assert len(m.memories) == n and m.ops[-1]["op"] == "UNKNOWN"  # unknown: nothing stored, counted
    assert "sk-test-SENTINEL" not in _json.dumps(m.ops)
