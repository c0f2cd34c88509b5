"""Memory methods as plug-ins: learn from feedback, provide context for a task, freeze.

Registered by name (``no_memory``, ``all_rules``, ``retrieval_memory``, ``relevant_rules``,
``tellonce``); a researcher's own class loads as ``package.module:Class`` with no change to the
toolkit. The learner side sees feedback text only: this package never imports the simulated
user or the profiles (a test walks the import graph).
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any

from toolkit.errors import UsageError
from toolkit.llm import ChatModel
from toolkit.memory._protocol import BaseMemory, FeedbackEvent, FrozenError, MemoryMethod

#: name -> "module:Class" (imported when used)
REGISTRY: dict[str, str] = {
    "no_memory": "toolkit.memory._basic:NoMemory",
    "all_rules": "toolkit.memory._basic:AllRules",
    "retrieval_memory": "toolkit.memory._retrieval:RetrievalMemory",
    "relevant_rules": "toolkit.memory._selected:RelevantRules",
    "tellonce": "toolkit.memory._selected:TellOnce",
}
METHODS: tuple[str, ...] = tuple(REGISTRY)


def register(name: str, target: str) -> None:
    """Register ``module:Class`` under ``name``."""
    REGISTRY[name] = target


def method_class(spec: str) -> type:
    """The class for a registered name or a ``package.module:Class`` string."""
    target = REGISTRY.get(spec, spec)
    mod, sep, cls = target.partition(":")
    if not sep or not mod or not cls:
        raise UsageError(f"unknown memory method {spec!r}; use one of {', '.join(REGISTRY)} or package.module:Class")
    try:
        obj = getattr(importlib.import_module(mod), cls)
    except (ImportError, AttributeError) as exc:
        raise UsageError(f"memory method {spec!r}: cannot load {target} ({exc})") from None
    for attr in ("learn", "context", "freeze"):
        if not callable(getattr(obj, attr, None)):
            raise UsageError(f"memory method {spec!r}: {target} has no {attr}() (see toolkit.memory.MemoryMethod)")
    return obj


def make_method(spec: str, model: ChatModel | None = None, *, seed: int = 0, **options: Any) -> MemoryMethod:
    """A fresh, empty instance; passes ``model``/``seed``/options the constructor accepts."""
    cls = method_class(spec)
    params = inspect.signature(cls).parameters
    kw = {"model": model, "seed": seed, **options}
    if not any(p.kind == p.VAR_KEYWORD for p in params.values()):
        kw = {k: v for k, v in kw.items() if k in params}
    inst = cls(**kw)
    if not getattr(inst, "name", None):
        inst.name = spec
    return inst


def method_label(spec: str) -> str:
    """The name a method gets in tables: its registry name, else ``module:Class``."""
    return spec


__all__ = ["METHODS", "REGISTRY", "BaseMemory", "FeedbackEvent", "FrozenError", "MemoryMethod", "make_method",
           "method_class", "method_label", "register"]
