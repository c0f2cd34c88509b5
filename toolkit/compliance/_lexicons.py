"""Word, phrase and pattern lists the offline interpreter compiles preference text into (our own, hand-made).

The lists are data: ``toolkit/resources/compliance/lexicons.yaml``, one validated entry per list with
examples it must match and must not match (run as tests by :func:`entry_hits`). This module loads them
once into module attributes of the Python types code expects: ordered lists as tuples, word sets as
frozensets, maps as dicts (of tuples). ``lx.PLEASANTRIES`` etc. read as before.
"""

from __future__ import annotations

import re
from importlib import resources
from typing import Any

import yaml

_TYPES = ("phrases", "patterns", "words", "map", "phrase_map", "pattern_map", "action_map")


def _entries() -> dict[str, dict[str, Any]]:
    text = resources.files("toolkit.resources.compliance").joinpath("lexicons.yaml").read_text("utf-8")
    entries = yaml.safe_load(text)["entries"]
    for name, e in entries.items():
        if e.get("type") not in _TYPES or not e.get("match") or not e.get("not_match"):
            raise ValueError(f"lexicons.yaml {name}: needs a type of {_TYPES} and match / not_match examples")
    return entries


def _value(e: dict[str, Any]) -> Any:
    t = e["type"]
    if t in ("phrases", "patterns"):
        return tuple(e["items"])
    if t == "words":
        return frozenset(e["items"])
    if t == "map":
        return dict(e["map"])
    if t == "action_map":  # key -> (label, patterns, file globs)
        return {k: (v[0], tuple(v[1]), tuple(v[2])) for k, v in e["map"].items()}
    return {k: tuple(v) for k, v in e["map"].items()}


def entry_hits(e: dict[str, Any], example: str) -> bool:
    """Whether an entry matches an example in the sense of its type (the ``about`` of ``lexicons.yaml``)."""
    t, low = e["type"], example.lower()
    if t == "phrases":
        return any(p.lower() in low for p in e["items"])
    if t == "patterns":
        return any(re.search(p, example, re.I | re.M) for p in e["items"])
    if t == "words":
        return example in e["items"]
    key, _, rest = example.partition(": ")
    if t == "map":
        return e["map"].get(key) == rest
    items = e["map"].get(key, ())
    if t == "action_map":
        items = items[1] if items else ()
    if t == "phrase_map":
        return any(p.lower() in rest.lower() for p in items)
    return any(re.search(p, rest, re.I | re.M) for p in items)


ENTRIES = _entries()
globals().update({name: _value(e) for name, e in ENTRIES.items()})
