"""The memory-method protocol: learn from feedback, provide context for a task, freeze."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from toolkit.agents import MemoryContext, Task, TaskDelivery


@dataclass(frozen=True)
class FeedbackEvent:
    """What a memory method learns from (TellOnce C.1): the task, the agent's preceding reply,
    and the user's message as plain text. Nothing else about the user travels with it."""

    task_id: str
    task: str
    reply: str
    feedback: str
    project: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "feedback", str(self.feedback))  # a plain str, whatever came in


class FrozenError(RuntimeError):
    """A frozen memory was asked to learn."""


@runtime_checkable
class MemoryMethod(Protocol):
    """A memory method. ``learn`` during the learning phase; ``freeze`` before the test phase;
    ``context`` for every task. Optional: ``check(task, context, delivery) -> str | None``, an
    execution layer that reports violations of what it stored (the agent then revises), and
    ``describe() -> dict`` with sizes for tables."""

    name: str

    def learn(self, event: FeedbackEvent) -> None: ...

    def context(self, task: Task) -> MemoryContext: ...

    def freeze(self) -> None: ...


class Checker(Protocol):
    def check(self, task: Task, context: MemoryContext, delivery: TaskDelivery) -> str | None: ...


class BaseMemory:
    """Shared plumbing: a name, a frozen flag that ``learn`` honours, an empty description."""

    name = "base"

    def __init__(self) -> None:
        self.frozen = False

    def freeze(self) -> None:
        self.frozen = True

    def _guard(self) -> None:
        if self.frozen:
            raise FrozenError(f"{self.name}: the memory is frozen; learning is over")

    def describe(self) -> dict[str, int]:
        return {}
