"""Rule selection (TellOnce B.3, D.4): (task, latest instruction, library) -> applicable rules.

At each user-input boundary the selector sees the task, the user's latest instruction and every
active rule with its scope, conditions and exceptions, in batches of up to 32, and keeps those
that apply: project scope must match, conditions must hold, exceptions must not apply.

Offline (:class:`EmbeddingSelector`): embedding retrieval through ``toolkit.llm.get_embedder``
(MiniLM by default) scores how close the task is to what each rule is about (its condition when it
has one, else its behaviour); rules at or above a threshold chosen by cross-validation on
development data are candidates (a rule about every reply, with no condition, is a candidate for
every task); then the scope stage drops rules of another project and the compliance reader's
``applies`` (condition and exception stage) drops rules whose condition fails or whose exception
holds. LLM (:func:`select_llm`): the gateway reads each batch of 32 and names the applicable ids.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from toolkit.llm import ChatModel, StructuredRequest, load_prompt
from toolkit.records import Rule
from toolkit.rules.checks import _resources as res

BATCH = 32


@cache
def selection_params() -> dict[str, Any]:
    """``toolkit/resources/checks/selection.json``: the threshold chosen on development data."""
    text = resources.files("toolkit").joinpath("resources", "checks", "selection.json").read_text(encoding="utf-8")
    return json.loads(text)


def project_of(rule: Rule) -> str | None:
    return rule.scope.split(":", 1)[1] if rule.scope.startswith("project:") else None


def _mentions(text: str, name: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text, re.IGNORECASE) is not None


def task_project(query: str, rules: Sequence[Rule]) -> str | None:
    """The project a task names, among the projects the library's rules are scoped to."""
    names = sorted({p for r in rules if (p := project_of(r))}, key=lambda s: (-len(s), s))
    return next((p for p in names if _mentions(query, p)), None)


def universal(rule: Rule) -> bool:
    """A rule about every reply: global, unconditional, names the reply and no action or artifact."""
    if rule.scope != "global" or rule.conditions:
        return False
    t = res.semantic().targets
    return bool(t["reply"].search(rule.behavior)) and not t["action"].search(rule.behavior) \
        and not t["artifact"].search(rule.behavior)


def topic_text(rule: Rule) -> str:
    """What a rule is about, for retrieval: its conditions when it has any, else its behaviour."""
    return "; ".join(rule.conditions) if rule.conditions else rule.behavior


@dataclass
class EmbeddingSelector:
    """Embedding retrieval + scope + the compliance reader's condition/exception stage."""

    embedder: str = "minilm"
    threshold: float | None = None
    use_applies: bool = True
    _emb: Any = field(default=None, repr=False)

    def _embedder(self) -> Any:
        if self._emb is None:
            from toolkit.llm import get_embedder

            self._emb = get_embedder(self.embedder)
        return self._emb

    @property
    def threshold_(self) -> float:
        if self.threshold is not None:
            return self.threshold
        return float(selection_params()["thresholds"].get(self.embedder, selection_params()["thresholds"]["default"]))

    def scores(self, queries: Sequence[str], rules: Sequence[Rule]) -> np.ndarray:
        """Cosine similarity (n_queries, n_rules) between tasks and what each rule is about."""
        if not rules or not queries:
            return np.zeros((len(queries), len(rules)), dtype=np.float32)
        emb = self._embedder()
        q = emb.embed(list(queries))
        beh = emb.embed([r.behavior for r in rules])
        top = emb.embed([topic_text(r) for r in rules])
        return np.maximum(q @ top.T, 0.5 * (q @ top.T + q @ beh.T))

    def select_many(self, items: Sequence[tuple[str, str | None, Sequence[Rule]]]) -> list[list[str]]:
        """Selected rule ids per (task, instruction, rules) item, in library order."""
        out = []
        for task, instruction, rules in items:
            query = task if not instruction else f"{task}\n{instruction}"
            sims = self.scores([query], rules)[0] if rules else np.zeros(0)
            out.append(self._decide(query, list(rules), sims))
        return out

    def _decide(self, query: str, rules: list[Rule], sims: np.ndarray) -> list[str]:
        proj = task_project(query, rules)
        keep = []
        for r, s in zip(rules, sims, strict=True):
            p = project_of(r)
            if p is not None and p != proj:
                continue
            if not (s >= self.threshold_ or universal(r)):
                continue
            if self.use_applies and (r.conditions or r.exceptions):
                ok = _applies(r, query, proj)
                if ok is False:
                    continue
            keep.append(r.id)
        return keep


def _applies(rule: Rule, task: str, project: str | None) -> bool | None:
    from toolkit.compliance import applies
    from toolkit.rules.checks._judge import to_reader_rule

    return applies(to_reader_rule(rule), task, project)


class LLMSelection(BaseModel):
    model_config = ConfigDict(extra="forbid")

    applicable: list[str]


def _select_request(rid: str, task: str, instruction: str | None, batch: Sequence[Rule]) -> StructuredRequest:
    prompt = load_prompt("checks_select")
    rules = "\n".join(json.dumps({"id": r.id, "behavior": r.behavior, "scope": r.scope, "conditions": r.conditions,
                                  "exceptions": r.exceptions}, ensure_ascii=False) for r in batch)
    user = prompt.render_user(task=task, instruction=instruction or "(none)", rules=rules)
    return StructuredRequest(messages=({"role": "system", "content": prompt.system}, {"role": "user", "content": user}),
                             schema=LLMSelection, role="checks_select", prompt_version=prompt.version, id=rid)


def select_llm(items: Sequence[tuple[str, str | None, Sequence[Rule]]], model: ChatModel,
               ids: Sequence[str] | None = None) -> list[list[str] | None]:
    """LLM selection in batches of 32 rules; an item with any malformed batch answer is None (unknown)."""
    reqs, where = [], []
    for k, (task, instruction, rules) in enumerate(items):
        for b in range(0, len(rules), BATCH):
            reqs.append(_select_request(f"{ids[k] if ids else k}:{b // BATCH}", task, instruction, rules[b:b + BATCH]))
            where.append((k, b))
    got: list[set[str] | None] = [set() for _ in items]
    for (k, b), oc in zip(where, model.run(reqs, desc="select") if reqs else [], strict=True):
        if got[k] is None:
            continue
        if not oc.ok or oc.value is None:
            got[k] = None
            continue
        allowed = {r.id for r in items[k][2][b:b + BATCH]}
        got[k] |= {x for x in oc.value.applicable if x in allowed}  # type: ignore[operator]
    return [None if g is None else [r.id for r in items[k][2] if r.id in g] for k, g in enumerate(got)]


def select_rules(task: str, instruction: str | None, rules: Sequence[Rule], *, model: ChatModel | None = None,
                 selector: EmbeddingSelector | None = None) -> list[str]:
    """Applicable rule ids for one task (offline unless ``model`` is an LLM); [] when the LLM fails
    is never returned silently: an LLM failure raises so the caller can record ``unknown``."""
    if model is not None and not model.is_offline:
        got = select_llm([(task, instruction, rules)], model)[0]
        if got is None:
            raise SelectionUnknown("the model gave no valid selection")
        return got
    return (selector or EmbeddingSelector()).select_many([(task, instruction, rules)])[0]


class SelectionUnknown(RuntimeError):
    """The selector could not answer (malformed LLM output): the caller records ``unknown``."""
