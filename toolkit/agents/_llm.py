"""An LLM agent through the gateway: a tool loop over a small workspace.

Each step is one structured call (:class:`AgentStep`); the model lists, reads, writes and deletes
files, runs the task's tests, records commands (install, push) and finishes with a reply. A step
the model answers malformed twice makes the delivery ``unknown`` (scored as unknown, never as a
pass or a fail).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict

from toolkit.agents._types import MemoryContext, Task, TaskDelivery
from toolkit.llm import ChatModel, StructuredRequest, load_prompt

PROMPT = "agent_tools"


class AgentStep(BaseModel):
    """One tool call of the agent."""

    model_config = ConfigDict(extra="forbid")
    tool: Literal["list_files", "read_file", "write_file", "delete_file", "run_tests", "run_command", "finish"]
    path: str | None = None
    content: str | None = None
    command: str | None = None
    reply: str | None = None


TestRunner = Callable[[Task, Mapping[str, str]], str]


def no_tests(task: Task, files: Mapping[str, str]) -> str:
    return "no tests are configured for this task"


@dataclass
class LLMAgent:
    """An agent driven by a chat model through the gateway (``--agent openai/...``)."""

    model: ChatModel
    max_steps: int = 12
    tests: TestRunner = field(default=no_tests)

    @property
    def name(self) -> str:
        return self.model.name

    def settings(self) -> dict[str, object]:
        return {"model": self.model.name, "max_steps": self.max_steps,
                "prompt_version": load_prompt(PROMPT).version}

    def attempt(self, task: Task, context: MemoryContext, *, key: str = "") -> TaskDelivery:
        return self._loop(task, context, dict(task.workspace), [], key=key)

    def revise(self, task: Task, context: MemoryContext, previous: TaskDelivery, message: str,
               *, key: str = "") -> TaskDelivery:
        extra = [{"role": "assistant", "content": json.dumps({"tool": "finish", "reply": previous.reply})},
                 {"role": "user", "content": f"Feedback on your delivery: {message}\nRevise your work and finish again."}]
        return self._loop(task, context, dict(previous.files), extra, key=key + "/revise",
                          actions=list(previous.actions), deleted=list(previous.deleted))

    def _loop(self, task: Task, context: MemoryContext, files: dict[str, str], extra: list[dict[str, str]],
              *, key: str, actions: list | None = None, deleted: list | None = None) -> TaskDelivery:
        prompt = load_prompt(PROMPT)
        user = prompt.render_user(task=task.prompt, project=f"Project: {task.project}" if task.project else "",
                                  context=context.render(), files=", ".join(sorted(files)) or "(empty)")
        messages = [{"role": "system", "content": prompt.system}, {"role": "user", "content": user}, *extra]
        actions = list(actions or [])
        deleted = list(deleted or [])
        for step in range(self.max_steps):
            req = StructuredRequest(tuple(messages), AgentStep, role="agent", prompt_version=prompt.version,
                                    id=f"{task.id}/{key}/{step}")
            out = self.model.call(req)
            if not out.ok or out.value is None:
                return TaskDelivery(task.id, "", files, tuple(deleted), tuple(actions), status="unknown",
                                    notes={"steps": step + 1, "error": out.error or ""})
            s: AgentStep = out.value
            if s.tool == "finish":
                return TaskDelivery(task.id, s.reply or "", files, tuple(deleted), tuple(actions),
                                    notes={"steps": step + 1})
            result = self._run(s, task, files, actions, deleted)
            messages += [{"role": "assistant", "content": s.model_dump_json(exclude_none=True)},
                         {"role": "user", "content": f"Result: {result}"}]
        return TaskDelivery(task.id, "", files, tuple(deleted), tuple(actions), status="unknown",
                            notes={"steps": self.max_steps, "error": "no finish within the step budget"})

    def _run(self, s: AgentStep, task: Task, files: dict[str, str], actions: list, deleted: list) -> str:
        if s.tool == "list_files":
            return ", ".join(sorted(files)) or "(empty)"
        if s.tool in ("read_file", "write_file", "delete_file") and not s.path:
            return "error: a path is required"
        path = _clean_path(s.path or "")
        if s.tool == "read_file":
            return files.get(path, f"error: no file {path}")
        if s.tool == "write_file":
            files[path] = s.content or ""
            return f"wrote {path}"
        if s.tool == "delete_file":
            if path not in files:
                return f"error: no file {path}"
            del files[path]
            deleted.append(path)
            return f"deleted {path}"
        if s.tool == "run_tests":
            actions.append({"type": "run_tests"})
            return self.tests(task, files)
        cmd = s.command or ""
        actions.append({"type": "command", "command": cmd})
        return f"recorded: {cmd}"


def _clean_path(p: str) -> str:
    return re.sub(r"^(\./)+", "", p.strip()).lstrip("/")
