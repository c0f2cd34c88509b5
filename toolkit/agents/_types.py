"""What an agent receives (a task, the context a memory method gives) and what it delivers."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal


def _frozen(m: Mapping[str, str] | None) -> Mapping[str, str]:
    return MappingProxyType(dict(m or {}))


@dataclass(frozen=True)
class Reference:
    """A task's reference solution, read only by the offline agent (its 'skill').

    ``variants`` maps a habit id to ``[old, new]`` replacements in the reply that show that
    habit on this task (e.g. a budget airline instead of the reference carrier).
    """

    reply: str
    files: Mapping[str, str] = field(default_factory=dict)
    deleted: tuple[str, ...] = ()
    variants: Mapping[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class Task:
    """One task as the agent sees it: the request, the project, the starting workspace.

    ``reference`` is the fixture's reference solution; only the offline agent reads it, an LLM
    agent never does.
    """

    id: str
    benchmark: str
    prompt: str
    project: str | None = None
    workspace: Mapping[str, str] = field(default_factory=dict)
    tags: tuple[str, ...] = ()
    reference: Reference | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "workspace", _frozen(self.workspace))


@dataclass(frozen=True)
class ContextItem:
    """One piece of long-term context a memory method hands the agent (a rule or a memory)."""

    text: str
    kind: Literal["rule", "memory", "note"] = "rule"
    id: str = ""


@dataclass(frozen=True)
class MemoryContext:
    """What a memory method provides for a task: items shown to the agent, in order."""

    items: tuple[ContextItem, ...] = ()

    def render(self) -> str:
        """The context as the text block an LLM agent reads (empty when there is nothing)."""
        if not self.items:
            return ""
        lines = ["What you know about this user from earlier sessions:"]
        lines += [f"- {it.text}" for it in self.items]
        return "\n".join(lines)

    def __len__(self) -> int:
        return len(self.items)


@dataclass(frozen=True)
class TaskDelivery:
    """One user-facing delivery: the reply, the workspace files at delivery, the actions taken.

    ``files`` is the whole workspace at delivery (not a diff); ``deleted`` lists files removed;
    ``actions`` are tool operations with effects outside the workspace (``{"type": "push"}``).
    ``notes`` is the agent's own bookkeeping (e.g. which habits showed), never shown to the
    user or scorer.
    """

    task_id: str
    reply: str
    files: Mapping[str, str] = field(default_factory=dict)
    deleted: tuple[str, ...] = ()
    actions: tuple[Mapping[str, str], ...] = ()
    status: Literal["ok", "unknown"] = "ok"
    notes: Mapping[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "files", _frozen(self.files))
        object.__setattr__(self, "notes", MappingProxyType(dict(self.notes)))

    def to_dict(self) -> dict[str, object]:
        """A JSON-serialisable form (for item logs and resume)."""
        return {"task_id": self.task_id, "reply": self.reply, "files": dict(sorted(self.files.items())),
                "deleted": list(self.deleted), "actions": [dict(a) for a in self.actions],
                "status": self.status, "notes": dict(self.notes)}

    @classmethod
    def from_dict(cls, d: Mapping[str, object]) -> TaskDelivery:
        return cls(task_id=str(d["task_id"]), reply=str(d["reply"]), files=dict(d["files"]),  # type: ignore[arg-type]
                   deleted=tuple(d.get("deleted", ())), actions=tuple(d.get("actions", ())),  # type: ignore[arg-type]
                   status=d.get("status", "ok"), notes=dict(d.get("notes", {})))  # type: ignore[arg-type]
