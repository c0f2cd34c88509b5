"""The two reference points: no memory at all, and every learned rule as text."""

from __future__ import annotations

from toolkit.agents import MemoryContext, Task
from toolkit.llm import ChatModel
from toolkit.memory._protocol import BaseMemory, FeedbackEvent
from toolkit.memory._rules import RuleLearner


class NoMemory(BaseMemory):
    """Keeps nothing between tasks (the paper's No Memory / No Rules)."""

    name = "no_memory"

    def __init__(self, model: ChatModel | None = None, *, seed: int = 0) -> None:
        super().__init__()

    def learn(self, event: FeedbackEvent) -> None:
        self._guard()

    def context(self, task: Task) -> MemoryContext:
        return MemoryContext()


class AllRules(BaseMemory):
    """Every learned natural-language rule in context (the paper's All Rules / All Rules as Text).

    Rules come from the shared learner (admission, resolution, library): the same library the
    rule-selecting methods use, only presented whole.
    """

    name = "all_rules"

    def __init__(self, model: ChatModel | None = None, *, seed: int = 0) -> None:
        super().__init__()
        self.learner = RuleLearner(model, seed=seed)

    def learn(self, event: FeedbackEvent) -> None:
        self._guard()
        self.learner.learn(event)

    def context(self, task: Task) -> MemoryContext:
        return MemoryContext(tuple(self.learner.as_items(self.learner.presented())))

    def describe(self) -> dict[str, int]:
        return self.learner.describe()
