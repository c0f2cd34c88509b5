"""The offline agent's habits: a validated catalogue (``toolkit/resources/agents/habits.yaml``)
and the effects they have on a delivery, registered by name.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import numpy as np
import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator

from toolkit import text as tx
from toolkit.agents._types import Task


class HabitSpec(BaseModel):
    """One habit as written in the resource file (unknown fields rejected)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str = Field(min_length=1)
    domains: list[str]
    tags: list[str] = Field(default_factory=list)
    rate: float = Field(ge=0.0, le=1.0)
    effect: dict[str, Any]
    addressed_by: list[str] = Field(min_length=1)
    must_match: list[str] = Field(min_length=1)
    must_not_match: list[str] = Field(min_length=1)

    @field_validator("addressed_by")
    @classmethod
    def _compiles(cls, v: list[str]) -> list[str]:
        for p in v:
            re.compile(p)
        return v

    @field_validator("effect")
    @classmethod
    def _known_effect(cls, v: dict[str, Any]) -> dict[str, Any]:
        if v.get("type") not in EFFECTS:
            raise ValueError(f"unknown effect {v.get('type')!r}; known: {', '.join(sorted(EFFECTS))}")
        return v


@dataclass
class Draft:
    """A delivery being built: reply, files, deleted paths, actions."""

    reply: str
    files: dict[str, str]
    deleted: list[str]
    actions: list[dict[str, str]]


@dataclass(frozen=True)
class Habit:
    """A loaded habit: where it can show, how often, what it does, what addresses it."""

    spec: HabitSpec

    @property
    def id(self) -> str:
        return self.spec.id

    def can_show(self, task: Task) -> bool:
        """Whether this habit has anything to act on in ``task``."""
        if task.benchmark not in self.spec.domains:
            return False
        if any(t not in task.tags for t in self.spec.tags):
            return False
        if self.spec.effect["type"] == "task_variant":
            return bool(task.reference and task.reference.variants.get(self.id))
        return True

    def addressed_by(self, text: str) -> bool:
        """Whether a rule, memory or report text asks the agent to drop this habit."""
        return any(re.search(p, text, re.I) for p in self.spec.addressed_by)

    def apply(self, draft: Draft, task: Task, rng: np.random.Generator) -> None:
        EFFECTS[self.spec.effect["type"]](draft, task, self, rng)


# -- effects --------------------------------------------------------------------------------
Effect = Callable[[Draft, Task, Habit, np.random.Generator], None]
EFFECTS: dict[str, Effect] = {}


def effect(name: str) -> Callable[[Effect], Effect]:
    """Register an effect under ``name`` (the ``type`` of a habit's ``effect``)."""
    def deco(fn: Effect) -> Effect:
        EFFECTS[name] = fn
        return fn
    return deco


def _pick(options: list[str], rng: np.random.Generator) -> str:
    return options[int(rng.integers(len(options)))]


@effect("add_file")
def _add_file(d: Draft, task: Task, h: Habit, rng: np.random.Generator) -> None:
    d.files[_pick(h.spec.effect["paths"], rng)] = h.spec.effect.get("content", "")


@effect("drop_text")
def _drop_text(d: Draft, task: Task, h: Habit, rng: np.random.Generator) -> None:
    d.reply = re.sub(h.spec.effect["pattern"], "", d.reply).strip()


@effect("pad_reply")
def _pad_reply(d: Draft, task: Task, h: Habit, rng: np.random.Generator) -> None:
    sents = list(h.spec.effect["sentences"])
    order = rng.permutation(len(sents))
    extra: list[str] = []
    i = 0
    while len(tx.words(d.reply + " " + " ".join(extra))) < h.spec.effect["min_words"] and i < len(order):
        extra.append(sents[int(order[i])])
        i += 1
    d.reply = d.reply + "\n\n" + " ".join(extra)


@effect("wrap_reply")
def _wrap_reply(d: Draft, task: Task, h: Habit, rng: np.random.Generator) -> None:
    d.reply = _pick(h.spec.effect["prefixes"], rng) + d.reply + _pick(h.spec.effect["suffixes"], rng)
    if h.spec.effect.get("action"):
        d.actions.append({"type": h.spec.effect["action"]})


@effect("task_variant")
def _task_variant(d: Draft, task: Task, h: Habit, rng: np.random.Generator) -> None:
    assert task.reference is not None
    for old, new in task.reference.variants.get(h.id, ()):
        d.reply = d.reply.replace(old, new)


@effect("unnumber")
def _unnumber(d: Draft, task: Task, h: Habit, rng: np.random.Generator) -> None:
    lines = d.reply.split("\n")
    steps = [re.sub(r"^\s*\d+[.)]\s*", "", ln) for ln in lines if re.match(r"^\s*\d+[.)]\s", ln)]
    head = [ln for ln in lines if ln.strip() and not re.match(r"^\s*\d+[.)]\s", ln)]
    prose = " Then ".join(s.rstrip(".") for s in steps)
    d.reply = "\n\n".join([*head, prose[:1].upper() + prose[1:] + "."]) if steps else d.reply


@effect("unheading")
def _unheading(d: Draft, task: Task, h: Habit, rng: np.random.Generator) -> None:
    d.reply = re.sub(r"(?m)^#+\s*(.+)$", r"\1:", d.reply)


# file transforms used by ``edit_files``
TRANSFORMS: dict[str, Callable[[str], str]] = {
    "strip_type_hints": lambda s: re.sub(r"(?m)^(\s*def \w+)\((.*)\)\s*->\s*[^:]+:",
                                         lambda m: f"{m.group(1)}({_untype(m.group(2))}):", s),
    "strip_docstrings": lambda s: re.sub(r'(?m)^\s*"""[^\n]*"""\n', "", s),
    "insert_debug_log": lambda s: re.sub(r"(?m)^(export function \w+\((\w+)[^\n]*\{\n)",
                                         r"\1  console.log('debug', \2);\n", s, count=1),
    "any_type": lambda s: re.sub(r"\((\w+): (?!number\b|string\b|boolean\b)\w+(\[\])?", r"(\1: any", s, count=1),
}


def _untype(params: str) -> str:
    parts = [re.sub(r":\s*[^=]+?(?=\s*=|$)", "", p.strip()) for p in params.split(",")] if params.strip() else []
    return ", ".join(p.replace(" = ", "=") for p in parts)


@effect("edit_files")
def _edit_files(d: Draft, task: Task, h: Habit, rng: np.random.Generator) -> None:
    fn = TRANSFORMS[h.spec.effect["transform"]]
    for path in sorted(d.files):
        if path.endswith(tuple(h.spec.effect["ext"])) and task.reference and path in task.reference.files:
            d.files[path] = fn(d.files[path])


@cache
def load_habits() -> tuple[Habit, ...]:
    """The habit catalogue shipped with the toolkit, validated."""
    raw = resources.files("toolkit").joinpath("resources", "agents", "habits.yaml").read_text(encoding="utf-8")
    data: Mapping[str, Any] = yaml.safe_load(raw)
    habits = tuple(Habit(HabitSpec.model_validate(h)) for h in data["habits"])
    ids = [h.id for h in habits]
    if len(ids) != len(set(ids)):
        raise ValueError("agents/habits.yaml: duplicate habit id")
    return habits
