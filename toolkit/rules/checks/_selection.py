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
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from toolkit.llm import ChatModel, StructuredRequest, load_prompt
from toolkit.records import Rule
from toolkit.rules.checks import _resources as res

BATCH = 32


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
    sem = res.semantic()
    t = sem.targets
    return bool(sem.whole_reply.search(rule.behavior)) and not t["action"].search(rule.behavior) \
        and not t["artifact"].search(rule.behavior)


def topic_text(rule: Rule) -> str:
    """What a rule is about, for retrieval: its conditions when it has any, else its behaviour."""
    return "; ".join(rule.conditions) if rule.conditions else rule.behavior


FEATURES: tuple[str, ...] = ("sim_topic", "sim_behavior", "overlap", "project_match", "has_condition")


@cache
def _content_stems(text: str) -> frozenset[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    from toolkit import text as tx

    return frozenset(tx.stem(w) for w in tx.words(text.lower()) if w not in ENGLISH_STOP_WORDS and len(w) > 2)


#: rule and task vectors by embedder, shared by every selector in the process (pure speed: the
#: embedder is deterministic and its own cache is on disk)
_VECTORS: dict[str, dict[str, np.ndarray]] = {}


@cache
def _shared_embedder(name: str) -> Any:
    from toolkit.llm import get_embedder

    return get_embedder(name)


@dataclass
class EmbeddingSelector:
    """Embedding retrieval + a logistic model over similarity and cue features, then scope and the
    compliance reader's condition/exception stage (scikit-learn estimator contract: ``fit`` returns
    self, learned attributes end in ``_``). The threshold is chosen by leave-one-task-out CV: the
    most recall whose held-out precision stays at or above ``min_precision`` (a false positive puts
    an irrelevant rule in front of the agent and its checker)."""

    embedder: str = "minilm"
    threshold: float | None = None
    C: float = 1.0
    min_precision: float = 0.75
    random_state: int = 0
    use_applies: bool = True
    _emb: Any = field(default=None, repr=False)

    def _embedder(self) -> Any:
        if self._emb is None:
            self._emb = _shared_embedder(self.embedder)
        return self._emb

    def scores(self, queries: Sequence[str], rules: Sequence[Rule]) -> np.ndarray:
        """Cosine similarity (n_queries, n_rules) between tasks and what each rule is about."""
        return self._sims(queries, rules)[0]

    def _vectors(self, texts: Sequence[str]) -> np.ndarray:
        """Embeddings with an in-process memo (the embedder's own cache is on disk)."""
        memo = _VECTORS.setdefault(self.embedder, {})
        todo = list(dict.fromkeys(t for t in texts if t not in memo))
        if todo:
            for t, v in zip(todo, self._embedder().embed(todo), strict=True):
                memo[t] = v
        return np.stack([memo[t] for t in texts])

    def _sims(self, queries: Sequence[str], rules: Sequence[Rule]) -> tuple[np.ndarray, np.ndarray]:
        if not rules or not queries:
            z = np.zeros((len(queries), len(rules)), dtype=np.float32)
            return z, z
        q = self._vectors(list(queries))
        beh = self._vectors([r.behavior for r in rules])
        top = self._vectors([topic_text(r) for r in rules])
        return q @ top.T, q @ beh.T

    def features(self, query: str, rules: Sequence[Rule]) -> np.ndarray:
        """One row of :data:`FEATURES` per rule for this task."""
        st, sb = self._sims([query], rules)
        qs = _content_stems(query)
        proj = task_project(query, rules)
        rows = []
        for j, r in enumerate(rules):
            rs = _content_stems(" ".join([r.behavior, *r.conditions]))
            ov = len(qs & rs) / np.sqrt(max(1, len(rs)))
            rows.append([float(st[0, j]), float(sb[0, j]), ov, float(project_of(r) is not None and project_of(r) == proj),
                         float(bool(r.conditions))])
        return np.asarray(rows, dtype=float).reshape(len(rules), len(FEATURES))

    def fit(self, items: Sequence[tuple[str, str | None, Sequence[Rule]]], gold: Sequence[Sequence[str]]
            ) -> EmbeddingSelector:
        """Fit the logistic model on labelled (task, library) items; choose the threshold by
        leave-one-task-out CV (best F1 of the pooled held-out predictions)."""
        from sklearn.linear_model import LogisticRegression

        xs, ys, groups = [], [], []
        for k, ((task, instr, rules), g) in enumerate(zip(items, gold, strict=True)):
            query = task if not instr else f"{task}\n{instr}"
            proj = task_project(query, rules)
            cand = [r for r in rules if not universal(r) and self._stage(r, query, proj) is None]
            if not cand:
                continue
            xs.append(self.features(query, cand))
            ys += [int(r.id in set(g)) for r in cand]
            groups += [k] * len(cand)
        x, y, grp = np.vstack(xs), np.asarray(ys), np.asarray(groups)
        oof = np.zeros(len(y))
        for k in np.unique(grp):
            tr = grp != k
            m = LogisticRegression(C=self.C, class_weight="balanced", random_state=self.random_state).fit(x[tr], y[tr])
            oof[~tr] = m.predict_proba(x[~tr])[:, 1]
        # operating point: the most recall whose held-out precision stays >= min_precision
        best = (-1.0, 0.95, 0.0)
        for th in np.round(np.arange(0.95, 0.04, -0.01), 2):
            pred = oof >= th
            tp = float((pred & (y == 1)).sum())
            prec = tp / pred.sum() if pred.sum() else 1.0
            rec = tp / max(1.0, float(y.sum()))
            if prec >= self.min_precision and rec > best[0] + 1e-12:
                best = (rec, float(th), prec)
        self.model_ = LogisticRegression(C=self.C, class_weight="balanced", random_state=self.random_state).fit(x, y)
        self.threshold_ = best[1] if self.threshold is None else float(self.threshold)
        self.cv_recall_, self.cv_precision_ = best[0], best[2]
        return self

    def select_many(self, items: Sequence[tuple[str, str | None, Sequence[Rule]]]) -> list[list[str]]:
        """Selected rule ids per (task, instruction, rules) item, in library order."""
        if not hasattr(self, "model_"):
            fitted = default_selector(self.embedder)
            self.model_, self.threshold_ = fitted.model_, fitted.threshold_ if self.threshold is None else self.threshold
        out = []
        for item in items:
            task, instruction, rules = item[0], item[1], item[2]
            project = item[3] if len(item) > 3 else None  # type: ignore[misc]
            query = task if not instruction else f"{task}\n{instruction}"
            out.append(self._decide(query, list(rules), project))
        return out

    def _stage(self, r: Rule, query: str, proj: str | None) -> bool | None:
        """The rule-based stages: scope, then the reader's condition/exception stage (True: the
        condition holds on the task; False: scope, condition or exception rules it out; None: the
        learned retrieval decides)."""
        pr = project_of(r)
        if pr is not None and pr != proj:
            return False
        if self.use_applies and (r.conditions or r.exceptions):
            ok = _applies(r, query, proj)
            if ok is False:
                return False
            if ok is True and r.conditions:
                return True
        return None

    def _decide(self, query: str, rules: list[Rule], project: str | None = None) -> list[str]:
        if not rules:
            return []
        proj = project or task_project(query, rules)
        prob = self.model_.predict_proba(self.features(query, rules))[:, 1]
        keep = []
        for r, p in zip(rules, prob, strict=True):
            st = self._stage(r, query, proj)
            if st is True or (st is None and (universal(r) or p >= self.threshold_)):
                keep.append(r.id)
        return keep


@cache
def default_selector(embedder: str = "minilm") -> EmbeddingSelector:
    """The offline selector fit on the development set ``fixtures/selection/dev_*``."""
    from toolkit.diagnostics.selection import load_library, load_tasks
    from toolkit.paper import fixtures_dir
    from toolkit.splits import require_role

    base = fixtures_dir() / "selection"
    require_role(base / "dev_tasks.jsonl", "fit")
    lib = load_library(base / "dev_library.jsonl")
    tasks, gold = load_tasks(base, "dev_tasks")
    items = [(t["task"], t.get("instruction"), lib) for t in tasks]
    return EmbeddingSelector(embedder=embedder).fit(items, [gold[t["id"]] for t in tasks])


def _applies(rule: Rule, task: str, project: str | None) -> bool | None:
    """The compliance reader's scope/condition/exception stage (memoised: it is deterministic)."""
    return _applies_cached(rule.behavior, rule.scope, tuple(rule.conditions), tuple(rule.exceptions), task, project)


@cache
def _applies_cached(behavior: str, scope: str, conditions: tuple[str, ...], exceptions: tuple[str, ...],
                    task: str, project: str | None) -> bool | None:
    from toolkit.compliance import Rule as CRule
    from toolkit.compliance import applies

    return applies(CRule("r", behavior, scope, list(conditions), list(exceptions)), task, project)


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
