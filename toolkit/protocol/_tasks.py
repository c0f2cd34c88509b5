"""Task suites for the protocol (``fixtures/protocol/*.jsonl``), validated on load."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from toolkit.agents import Reference, Task
from toolkit.paper import fixtures_dir


class NativeCheck(BaseModel):
    """A task's own check (the benchmark's native score): a pattern in a file or in the reply."""

    model_config = ConfigDict(extra="forbid")
    type: Literal["file_contains", "reply_contains"]
    pattern: str
    path: str | None = None


class AnnotatedCheck(BaseModel):
    """An annotated preference check on a held-out task (§3): which user's which preference."""

    model_config = ConfigDict(extra="forbid")
    id: str
    user: str
    preference: str


class Solution(BaseModel):
    model_config = ConfigDict(extra="forbid")
    reply: str
    files: dict[str, str] = Field(default_factory=dict)
    deleted: list[str] = Field(default_factory=list)


class TaskRecord(BaseModel):
    """One task line (unknown fields rejected)."""

    model_config = ConfigDict(extra="forbid")
    id: str = Field(min_length=1)
    benchmark: str
    phase: Literal["learn", "test"]
    prompt: str = Field(min_length=1)
    project: str | None = None
    tags: list[str] = Field(default_factory=list)
    workspace: dict[str, str] = Field(default_factory=dict)
    solution: Solution
    variants: dict[str, list[tuple[str, str]]] = Field(default_factory=dict)
    native_check: NativeCheck | None = None
    checks: list[AnnotatedCheck] = Field(default_factory=list)


@dataclass(frozen=True)
class SuiteTask:
    """A task with its phase, native check and annotated checks (the harness's view)."""

    task: Task
    phase: str
    native_check: NativeCheck | None
    checks: tuple[AnnotatedCheck, ...]

    @property
    def id(self) -> str:
        return self.task.id


def protocol_dir() -> Path:
    return fixtures_dir() / "protocol"


def load_suite(path: str | Path) -> list[SuiteTask]:
    """Tasks of one suite in file order (the fixed task order of C.1)."""
    from toolkit.datasets.jsonl import read_jsonl

    out = []
    for r in read_jsonl(path, TaskRecord):
        ref = Reference(r.solution.reply, r.solution.files, tuple(r.solution.deleted),
                        {k: tuple(tuple(p) for p in v) for k, v in r.variants.items()})
        t = Task(r.id, r.benchmark, r.prompt, r.project, r.workspace, tuple(r.tags), ref)
        out.append(SuiteTask(t, r.phase, r.native_check, tuple(r.checks)))
    return out


def native_score(check: NativeCheck | None, reply: str, files: Mapping[str, str]) -> bool | None:
    """Whether a delivery passes the task's native check (None when the task has none)."""
    if check is None:
        return None
    if check.type == "reply_contains":
        return check.pattern in reply
    return check.path in files and check.pattern in files[check.path]


def test_runner(check_of: Mapping[str, NativeCheck | None]):
    """The ``run_tests`` tool for an LLM agent: runs the task's native check on the workspace."""
    def run(task: Task, files: Mapping[str, str]) -> str:
        ok = native_score(check_of.get(task.id), "", files)
        if ok is None:
            return "no tests are configured for this task"
        return "1 passed" if ok else "1 failed: the change the task asks for is not in place"
    return run


