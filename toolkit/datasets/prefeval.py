"""PrefEval (amazon-science/PrefEval, CC BY-NC 4.0) explicit preferences, read from a path."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from toolkit.errors import InputError


@dataclass(frozen=True)
class ExplicitPreference:
    """One stated preference with the question that later tests it."""

    id: str  # "<topic>-<index>"
    topic: str
    index: int
    preference: str
    question: str
    explanation: str  # empty for the few items that have none


def explicit_dir(data_dir: str | Path) -> Path:
    return Path(data_dir) / "prefeval" / "benchmark_dataset" / "explicit_preference"


def load_explicit_preferences(data_dir: str | Path) -> list[ExplicitPreference]:
    """All explicit preferences (1,000 over 20 topics), in topic then file order."""
    d = explicit_dir(data_dir)
    if not d.is_dir():
        raise InputError(f"{d}: PrefEval explicit preferences not found")
    out: list[ExplicitPreference] = []
    for f in sorted(d.glob("*.json")):
        try:
            items = json.loads(f.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise InputError(f"{f}:{exc.lineno} <json>: {exc.msg}") from None
        for i, it in enumerate(items):
            missing = [k for k in ("preference", "question") if k not in it]
            if missing:
                raise InputError(f"{f}:[{i}] {missing[0]}: field missing")
            out.append(ExplicitPreference(
                id=f"{f.stem}-{i}", topic=f.stem, index=i, preference=it["preference"],
                question=it["question"], explanation=it.get("explanation", ""),
            ))
    return out
