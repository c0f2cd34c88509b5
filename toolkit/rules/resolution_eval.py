"""Scoring resolution decisions against labelled intended updates (pure functions of outputs)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from toolkit.datasets.jsonl import read_jsonl
from toolkit.errors import InputError
from toolkit.paper import fixtures_dir
from toolkit.records import ResolutionGold, ResolutionInput, ResolutionOutput

CATEGORIES = (
    "restatement",
    "refinement",
    "replacement",
    "bundled",
    "new",
    "retraction",
    "temporary",
)


def load_cases(
    name: str = "heldout", folder: str | Path | None = None
) -> tuple[list[ResolutionInput], dict[str, ResolutionGold]]:
    """Inputs and gold of ``fixtures/resolution/<name>.jsonl``.

    Gold sits apart in ``<name>_gold.jsonl`` (valid resolution-output records); the case
    categories are in ``categories.json`` (id -> category).
    """
    base = Path(folder) if folder else fixtures_dir() / "resolution"
    cases = read_jsonl(base / f"{name}.jsonl", ResolutionInput)
    cats_path = base / "categories.json"
    cats = json.loads(cats_path.read_text(encoding="utf-8")) if cats_path.exists() else {}
    gold = {
        g.id: ResolutionGold(id=g.id, updates=g.updates, category=cats.get(g.id, "unspecified"))
        for g in read_jsonl(base / f"{name}_gold.jsonl", ResolutionOutput)
    }
    missing = [c.id for c in cases if c.id not in gold]
    if missing:
        raise InputError(f"{base / f'{name}_gold.jsonl'}: no gold for case(s) {', '.join(missing)}")
    return cases, gold


def _answered(pred: ResolutionOutput) -> None:
    if pred.status == "unknown" or pred.updates is None:
        raise ValueError(f"{pred.id}: an unknown answer is not scored as right or wrong")


def decision_correct(pred: ResolutionOutput, gold: ResolutionGold) -> bool:
    """Same multiset of operations (targets ignored); an empty list must match an empty list.

    An unknown answer (``updates: null``) is neither right nor wrong: scoring it raises.
    """
    _answered(pred)
    return Counter(u.op for u in pred.updates) == Counter(u.op for u in gold.updates)


def target_correct(pred: ResolutionOutput, gold: ResolutionGold) -> bool:
    """Same multiset of (operation, affected rule) pairs (an unknown answer raises)."""
    _answered(pred)
    key = lambda u: (u.op, u.target if u.op != "add" else None)  # noqa: E731
    return Counter(map(key, pred.updates)) == Counter(map(key, gold.updates))


def affected(gold: ResolutionGold) -> set[str]:
    """The existing rules a case's intended update touches."""
    return {u.target for u in gold.updates if u.target is not None and u.op != "add"}


#: the public name (``toolkit.load_resolution_cases``)
load_resolution_cases = load_cases
