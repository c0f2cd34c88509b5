"""Rule selection per task (``relevant_rules``) and TellOnce with its execution layer (``tellonce``),
both through the published checks layer (:mod:`toolkit.rules.checks`, TellOnce B.2, B.3, D.4).

Both read a library learned the same way as ``all_rules``. Selection: the checks layer's selector
(offline: embedding retrieval plus a logistic model fit on the development set, then scope and the
compliance reader's condition/exception stage; with a model: the LLM). TellOnce compiles each rule
(programmatic / semantic / guidance / inactive, validated), presents the selected rules with their
applicability and whether they are checked, and checks the delivery; the execution layer combines
violations into one revision request, at most three per task (B.3), unknowns never block.
"""

from __future__ import annotations

from typing import Any

from toolkit.agents import ContextItem, MemoryContext, Task, TaskDelivery
from toolkit.llm import ChatModel
from toolkit.memory._protocol import BaseMemory, FeedbackEvent
from toolkit.memory._rules import RuleLearner
from toolkit.records import Rule
from toolkit.rules.library import LibraryRule


def _query(task: Task) -> str:
    return task.prompt if not task.project else f"{task.prompt}\n(project: {task.project})"


class RelevantRules(BaseMemory):
    """Only the rules selected as applicable to the task, as plain text (Relevant Rules)."""

    name = "relevant_rules"

    def __init__(self, model: ChatModel | None = None, *, seed: int = 0, selector: str = "checks") -> None:
        super().__init__()
        if selector not in ("checks", "scope"):
            raise ValueError("selector must be 'checks' (the checks layer's selector) or 'scope'")
        self.model = model if model is not None and not model.is_offline else None
        self.learner = RuleLearner(model, seed=seed)
        self.selector = selector
        self.selection_unknown = 0

    def learn(self, event: FeedbackEvent) -> None:
        self._guard()
        self.learner.learn(event)

    def selected(self, task: Task) -> list[LibraryRule]:
        """The learned rules the selector finds applicable to ``task`` (none when it cannot answer;
        such tasks are counted in ``describe()['selection_unknown']``)."""
        from toolkit.rules.checks import SelectionUnknown, select_rules

        rules = self.learner.presented()
        if not rules:
            return []
        if self.selector == "scope":
            return [r for r in rules if r.id in set(scope_select(rules, task))]
        try:
            ids = set(select_rules(_query(task), None, [r.to_record() for r in rules], model=self.model))
        except SelectionUnknown:
            self.selection_unknown += 1
            return []
        return [r for r in rules if r.id in ids]

    def context(self, task: Task) -> MemoryContext:
        return MemoryContext(tuple(self.learner.as_items(self.selected(task))))

    def describe(self) -> dict[str, int]:
        return {**self.learner.describe(), "selection_unknown": self.selection_unknown}


def scope_select(rules: tuple[LibraryRule, ...], task: Task) -> list[str]:
    """B.3's selection stages alone (``selector="scope"``): project scope must match, conditions must
    hold, exceptions must not apply, read by the compliance reader on the task; a rule it cannot
    settle from the task is kept (reported as this setting, never silently)."""
    from toolkit.compliance import Rule as ReaderRule
    from toolkit.compliance import applies

    out = []
    for r in rules:
        ok = applies(ReaderRule(r.id, r.behavior, r.scope, r.conditions, r.exceptions), task.prompt, task.project)
        if ok is not False:
            out.append(r.id)
    return out


def _key(r: LibraryRule) -> tuple:
    return (r.id, r.behavior, r.scope, r.conditions, r.exceptions)


class TellOnce(RelevantRules):
    """Selected, compiled rules with their applicability, plus delivery-stage checks and bounded repair."""

    name = "tellonce"
    repair_budget = 3

    def __init__(self, model: ChatModel | None = None, *, seed: int = 0, selector: str = "checks") -> None:
        super().__init__(model, seed=seed, selector=selector)
        self._compiled: dict[tuple, Any] = {}
        self._turns: dict[str, Any] = {}
        self.outcomes: dict[str, str] = {}

    def compiled_library(self) -> list[Any]:
        """Every presented rule with its compilation outcome (compiled once per rule revision)."""
        from toolkit.rules.checks import CompiledRule, compile_rules

        rules = self.learner.presented()
        todo = [r for r in rules if _key(r) not in self._compiled]
        if todo:
            recs: list[Rule] = [r.to_record() for r in todo]
            for r, rec, c in zip(todo, recs, compile_rules(recs, self.model), strict=True):
                self._compiled[_key(r)] = CompiledRule(rec, c.outcome, c.check)
        lib = [self._compiled[_key(r)] for r in rules]
        self.outcomes = {cr.rule.id: cr.outcome for cr in lib}
        return lib

    def context(self, task: Task) -> MemoryContext:
        from toolkit.rules.checks import ExecutionLayer, SelectionUnknown

        lib = self.compiled_library()
        if not lib:
            self._turns.pop(task.id, None)
            return MemoryContext()
        try:
            chosen = scope_select(self.learner.presented(), task) if self.selector == "scope" else None
            turn = ExecutionLayer(lib, model=self.model).begin_turn(_query(task), selected=chosen)
        except SelectionUnknown:
            self.selection_unknown += 1
            self._turns.pop(task.id, None)
            return MemoryContext()
        self._turns[task.id] = turn
        items = []
        for cr in turn.presented():
            r = cr.rule
            extra = [f"when {c}" for c in r.conditions] + [f"unless {e}" for e in r.exceptions]
            if r.scope != "global":
                extra.append(f"in {r.scope}")
            tag = "checked" if cr.checked else "guidance"
            items.append(ContextItem(f"{r.behavior} ({'; '.join([tag, *extra])})", "rule", r.id))
        return MemoryContext(tuple(items))

    def check(self, task: Task, context: MemoryContext, delivery: TaskDelivery) -> str | None:
        """The execution layer's delivery-stage check: one combined revision request, or None."""
        from toolkit.rules.checks import make_evidence

        turn = self._turns.get(task.id)
        if turn is None or delivery.status != "ok":
            return None
        rep = turn.check(make_evidence("delivery", task.prompt, reply=delivery.reply, artifacts=dict(delivery.files)))
        return rep.message if rep.decision == "revise" else None

    def describe(self) -> dict[str, int]:
        out = super().describe()
        for o in ("programmatic", "semantic", "guidance", "inactive"):
            out[o] = sum(v == o for v in self.outcomes.values())
        return out
