"""Rule selection per task (``relevant_rules``) and TellOnce with its execution layer (``tellonce``).

Both read the same learned library as ``all_rules``. Selection keeps the rules that apply to the
task: project scope must match, conditions must hold, exceptions must not apply (the compliance
reader's scope stage, :func:`toolkit.compliance.applies`); a rule whose applicability cannot be
told from the task alone is kept (``on_unknown="include"``, an explicit setting, reported).
TellOnce presents the selected rules with their applicability and, before the delivery goes out,
reads it against each selected rule (stage ``delivery``); violations found in one candidate are
combined into one revision request, at most ``repair_budget`` per task (B.3).
"""

from __future__ import annotations

from toolkit.agents import MemoryContext, Task, TaskDelivery
from toolkit.compliance import Evidence, Rule, read
from toolkit.llm import ChatModel
from toolkit.memory._protocol import BaseMemory, FeedbackEvent
from toolkit.memory._rules import RuleLearner
from toolkit.rules.library import LibraryRule


def as_compliance_rule(r: LibraryRule) -> Rule:
    """A library rule as the compliance reader's rule."""
    return Rule(r.id, r.behavior, r.scope, list(r.conditions), list(r.exceptions))


def select_rules(rules: tuple[LibraryRule, ...], task: Task, *, on_unknown: str = "include") -> list[LibraryRule]:
    """The rules that apply to ``task`` (scope, conditions, exceptions)."""
    from toolkit.compliance import applies

    out = []
    for r in rules:
        ok = applies(as_compliance_rule(r), task.prompt, task.project)
        if ok or (ok is None and on_unknown == "include"):
            out.append(r)
    return out


class RelevantRules(BaseMemory):
    """Only the rules selected as applicable to the task, as plain text (Relevant Rules)."""

    name = "relevant_rules"
    scoped = False

    def __init__(self, model: ChatModel | None = None, *, seed: int = 0, on_unknown: str = "include") -> None:
        super().__init__()
        self.model = model
        self.learner = RuleLearner(model, seed=seed)
        self.on_unknown = on_unknown

    def learn(self, event: FeedbackEvent) -> None:
        self._guard()
        self.learner.learn(event)

    def selected(self, task: Task) -> list[LibraryRule]:
        return select_rules(self.learner.presented(), task, on_unknown=self.on_unknown)

    def context(self, task: Task) -> MemoryContext:
        return MemoryContext(tuple(self.learner.as_items(self.selected(task), scoped=self.scoped)))

    def describe(self) -> dict[str, int]:
        return self.learner.describe()


class TellOnce(RelevantRules):
    """Selected rules with their applicability, plus delivery-stage checks and bounded repair."""

    name = "tellonce"
    scoped = True
    repair_budget = 3

    def check(self, task: Task, context: MemoryContext, delivery: TaskDelivery) -> str | None:
        """One combined revision request for the violations found, or None."""
        if delivery.status != "ok":
            return None
        ids = {it.id for it in context.items}
        rules = [as_compliance_rule(r) for r in self.learner.presented() if r.id in ids]
        ev = Evidence("delivery", task.prompt, delivery.reply, artifacts=dict(delivery.files))
        model = self.model if self.model is not None and not self.model.is_offline else "offline"
        problems = []
        for r in rules:
            v = read(r, ev, others=[o for o in rules if o.id != r.id], model=model)
            if v.label == "violation":
                problems.append(f"- {r.text}: {v.reason}")
        if not problems:
            return None
        return "Before this goes to the user, fix what the checks found:\n" + "\n".join(problems)
