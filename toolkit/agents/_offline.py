"""The offline agent: solves a task from its reference solution, shows habits real agents show,
follows a rule in its context with a stated probability and revises when told of a violation.

It exists to exercise the protocol offline and deterministically. Its numbers are harness
checks, not findings about any real agent.
"""

from __future__ import annotations

from dataclasses import dataclass

from toolkit._seeding import item_rng
from toolkit.agents._habits import Draft, Habit, load_habits
from toolkit.agents._types import MemoryContext, Task, TaskDelivery


@dataclass
class OfflineAgent:
    """A seeded agent with habits.

    ``follow``: probability of following a context item that addresses a habit, with up to
    ``crowd_free`` items in context; each further item lowers it by ``crowding`` (long contexts
    dilute attention, floor ``follow / 2``). ``revise``: probability of dropping a habit that a
    violation report (user feedback or an execution-layer check) names. Draws come from
    ``(seed, task id, attempt key, habit id)``, so they never depend on order.
    """

    seed: int = 0
    follow: float = 0.8
    revise_p: float = 0.9
    crowding: float = 0.01
    crowd_free: int = 5
    name: str = "offline"

    def settings(self) -> dict[str, float]:
        """The stated probabilities (printed in reports beside the numbers they produce)."""
        return {"follow": self.follow, "revise": self.revise_p, "crowding": self.crowding,
                "crowd_free": self.crowd_free}

    def _follow_p(self, n_items: int) -> float:
        extra = max(0, n_items - self.crowd_free)
        return max(self.follow / 2, self.follow - self.crowding * extra)

    def _render(self, task: Task, shown: list[Habit], key: str) -> TaskDelivery:
        ref = task.reference
        if ref is None:
            raise ValueError(f"task {task.id}: the offline agent needs a reference solution")
        files = {**task.workspace, **ref.files}
        for p in ref.deleted:
            files.pop(p, None)
        draft = Draft(ref.reply, files, list(ref.deleted), [])
        for h in shown:
            h.apply(draft, task, item_rng(self.seed, "agent-effect", task.id, h.id))
        return TaskDelivery(task.id, draft.reply, draft.files, tuple(draft.deleted), tuple(draft.actions),
                            notes={"habits": [h.id for h in shown], "attempt": key})

    def attempt(self, task: Task, context: MemoryContext, *, key: str = "") -> TaskDelivery:
        """A first delivery for ``task`` given the memory method's ``context``."""
        p = self._follow_p(len(context))
        shown = []
        for h in load_habits():
            if not h.can_show(task):
                continue
            rng = item_rng(self.seed, "agent-habit", task.id, key, h.id)
            shows, follows = rng.random() < h.spec.rate, rng.random() < p
            if not shows:
                continue
            if follows and any(h.addressed_by(it.text) for it in context.items):
                continue
            shown.append(h)
        return self._render(task, shown, key)

    def revise(self, task: Task, context: MemoryContext, previous: TaskDelivery, message: str,
               *, key: str = "") -> TaskDelivery:
        """A revised delivery after ``message`` (user feedback or a checker's report)."""
        by_id = {h.id: h for h in load_habits()}
        kept = []
        for hid in previous.notes.get("habits", []):  # type: ignore[union-attr]
            h = by_id[hid]
            rng = item_rng(self.seed, "agent-revise", task.id, key, hid)
            if h.addressed_by(message) and rng.random() < self.revise_p:
                continue
            kept.append(h)
        return self._render(task, kept, key)
