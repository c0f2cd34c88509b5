"""Agents: turn (task, memory context) into a delivery; revise when told of a violation.

Two agents share one protocol (:class:`Agent`): :class:`LLMAgent` (a chat model through the
gateway, editing a workspace through a small tool set) and :class:`OfflineAgent` (seeded, with
habits real agents show; its numbers exercise the harness and are not findings).
``make_agent("offline" | "openai/<m>" | "openai-api/<svc>/<m>", gateway, seed=...)``.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from toolkit.agents._habits import Habit, load_habits
from toolkit.agents._llm import AgentStep, LLMAgent
from toolkit.agents._offline import OfflineAgent
from toolkit.agents._types import ContextItem, MemoryContext, Reference, Task, TaskDelivery
from toolkit.llm import Gateway

#: one line every report prints beside numbers the offline agent produced
OFFLINE_NOTE = ("Numbers with the offline agent are harness checks: a seeded agent with scripted habits "
                "that follows a rule in its context with a stated probability; they are not findings.")


@runtime_checkable
class Agent(Protocol):
    """What the protocol needs from an agent."""

    name: str

    def attempt(self, task: Task, context: MemoryContext, *, key: str = "") -> TaskDelivery: ...

    def revise(self, task: Task, context: MemoryContext, previous: TaskDelivery, message: str,
               *, key: str = "") -> TaskDelivery: ...


def make_agent(spec: str, gateway: Gateway | None = None, *, seed: int = 0, **options: object) -> Agent:
    """An agent by model string: ``offline`` or any chat model string the gateway knows."""
    if spec == "offline":
        return OfflineAgent(seed=seed, **options)  # type: ignore[arg-type]
    gw = gateway or Gateway()
    return LLMAgent(gw.model(spec), **options)  # type: ignore[arg-type]


__all__ = [
    "Agent", "AgentStep", "ContextItem", "Habit", "LLMAgent", "MemoryContext", "OFFLINE_NOTE", "OfflineAgent",
    "Reference", "Task", "TaskDelivery", "load_habits", "make_agent",
]
