"""What the simulated user looks at (Delivery), what it sends back (Feedback), and its state."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from toolkit.simuser.trace import Trace


@dataclass(frozen=True)
class Delivery:
    """One user-facing delivery: the task, the agent's reply, the workspace files, the history.

    ``unit`` names the scored unit (benchmark question or round); a user corrects at most once
    per unit. ``history`` holds earlier turns as ``{"role", "content"}`` mappings.
    """

    task: str
    reply: str
    artifacts: Mapping[str, str] | None = None
    history: tuple[Mapping[str, str], ...] = ()
    unit: str | None = None
    id: str | None = None

    def key(self) -> str:
        """A stable identity for seeding: ``id`` if given, else a hash of the content."""
        if self.id:
            return self.id
        blob = json.dumps([self.task, self.reply, sorted((self.artifacts or {}).items()),
                           [dict(h) for h in self.history], self.unit], ensure_ascii=False)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]


class Feedback(str):
    """The only thing an agent or memory method receives from a simulated user: message text.

    A plain ``str`` subclass with no attributes of its own (``__slots__ = ()``), so nothing
    about the hidden profile, the rule labels or the simulator's reasoning can travel with it.
    """

    __slots__ = ()

    @property
    def text(self) -> str:
        return str(self)


@dataclass(frozen=True)
class UserState:
    """Explicit simulator state: turn counter, units already corrected, sent messages, traces.

    The state stays with the harness that runs the simulated user; it is never handed to the agent.
    """

    turn: int = 0
    corrected_units: frozenset[str] = frozenset()
    sent: tuple[str, ...] = ()
    traces: tuple[Trace, ...] = field(default_factory=tuple)


class DeliveryRecord(BaseModel):
    """A delivery as stored in JSONL (``fixtures/simuser/deliveries.jsonl``); unknown fields rejected."""

    model_config = ConfigDict(extra="forbid")
    id: str = Field(min_length=1)
    task: str
    reply: str
    artifacts: dict[str, str] | None = None
    history: list[dict[str, str]] = Field(default_factory=list)
    unit: str | None = None

    def to_delivery(self) -> Delivery:
        return Delivery(task=self.task, reply=self.reply, artifacts=self.artifacts,
                        history=tuple(self.history), unit=self.unit or self.id, id=self.id)


def load_deliveries(path: str | Path) -> list[Delivery]:
    """Read deliveries from JSONL (errors name file:line field)."""
    from toolkit.datasets.jsonl import read_jsonl

    return [r.to_delivery() for r in read_jsonl(path, DeliveryRecord)]
