"""Scoring admission decisions against framing-fixed gold labels (pure functions of logged rows).

The controlled instruction set has 8 framings (``fixtures/admission/FRAMINGS.md``); each framing
fixes the gold decision, scope and conditionality. A decision is *structurally* correct when the
decision matches and, for persisted gold, the scope and ``conditional`` flag match too. Rows whose
model answer was malformed (``status == "unknown"``) are counted apart and never scored.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from toolkit.datasets.jsonl import read_jsonl
from toolkit.errors import InputError
from toolkit.paper import fixtures_dir
from toolkit.records import AdmissionInput

#: framing number -> (short name, gold decision, gold scope, gold conditional)
FRAMINGS: dict[int, tuple[str, str, str | None, bool]] = {
    1: ("lasting global", "persist", "global", False),
    2: ("lasting project", "persist", "project", False),
    3: ("lasting global + condition", "persist", "global", True),
    4: ("lasting project + condition", "persist", "project", True),
    5: ("recurring friction", "persist", "global", False),
    6: ("this task/change only", "task_local", None, False),
    7: ("current delivery", "task_local", None, False),
    8: ("vague activation", "defer", None, False),
}
PRED_COLUMNS = (
    "persist·global",
    "persist·global·cond",
    "persist·project",
    "persist·project·cond",
    "task_local",
    "defer",
    "unknown",
)


class AdmissionGold(BaseModel):
    """Gold labels of one instruction, fixed by its framing."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    framing: int = Field(ge=1, le=8)
    behavior_id: str = Field(min_length=1)
    decision: Literal["persist", "task_local", "defer"]
    scope: Literal["global", "project"] | None = None
    conditional: bool = False


def load_split(
    name: str, root: Path | None = None
) -> tuple[list[AdmissionInput], dict[str, AdmissionGold]]:
    """Inputs and gold labels of ``fixtures/admission/<name>.jsonl`` (+ ``.gold.jsonl``)."""
    d = (root or fixtures_dir()) / "admission"
    inputs = read_jsonl(d / f"{name}.jsonl", AdmissionInput)
    gold = {g.id: g for g in read_jsonl(d / f"{name}.gold.jsonl", AdmissionGold)}
    missing = [r.id for r in inputs if r.id not in gold]
    if missing or len(gold) != len(inputs):
        raise InputError(
            f"{d / (name + '.gold.jsonl')}: ids do not match the inputs "
            f"(first missing: {missing[:1]})"
        )
    return inputs, gold


def pred_category(row: Mapping[str, Any]) -> str:
    """The heatmap column of one predicted row."""
    if row.get("status") == "unknown":
        return "unknown"
    if row["decision"] != "persist":
        return str(row["decision"])
    return f"persist·{row['scope']}" + ("·cond" if row.get("conditional") else "")


def score_rows(
    rows: Sequence[Mapping[str, Any]], gold: Mapping[str, AdmissionGold]
) -> pd.DataFrame:
    """One row per instruction: gold fields, predicted fields and correctness flags."""
    out = []
    for r in rows:
        g = gold[r["id"]]
        unknown = r.get("status") == "unknown"
        dec_ok = (not unknown) and r["decision"] == g.decision
        struct = dec_ok and (
            g.decision != "persist"
            or (r.get("scope") == g.scope and bool(r.get("conditional")) == g.conditional)
        )
        out.append(
            {
                "id": r["id"],
                "framing": g.framing,
                "behavior_id": g.behavior_id,
                "gold_decision": g.decision,
                "gold_scope": g.scope,
                "gold_conditional": g.conditional,
                "decision": None if unknown else r["decision"],
                "scope": r.get("scope"),
                "conditional": bool(r.get("conditional")),
                "activation": r.get("activation"),
                "reason": r.get("reason"),
                "unknown": unknown,
                "decision_ok": dec_ok,
                "structural_ok": struct,
                "category": pred_category(r),
            }
        )
    return pd.DataFrame(out)


def summary_counts(scored: pd.DataFrame) -> dict[str, tuple[int, int]]:
    """Table 11's counts as ``name -> (k, n)`` over ALL rows of each gold subset.

    The denominator is fixed: an unknown answer stays in ``n`` and is never a hit (nor, for
    erroneous persistence, a clean miss; :func:`unknown_counts` reports it in its own column).
    """
    tl = scored[scored.gold_decision == "task_local"]
    df = scored[scored.gold_decision == "defer"]
    nonp = scored[scored.gold_decision != "persist"]
    per = scored[scored.gold_decision == "persist"]
    return {
        "task_local_rejected": (int((tl.decision == "task_local").sum()), len(tl)),
        "underspecified_deferred": (int((df.decision == "defer").sum()), len(df)),
        "erroneous_persistence": (int((nonp.decision == "persist").sum()), len(nonp)),
        "persistent_recall": (int((per.decision == "persist").sum()), len(per)),
        "structural": (int(scored.structural_ok.sum()), len(scored)),
    }


def unknown_counts(scored: pd.DataFrame) -> dict[str, int]:
    """How many of each Table 11 subset's items came back unknown (their own column)."""
    unk = scored["unknown"].astype(bool)
    g = scored.gold_decision
    return {
        "task_local_rejected": int((unk & (g == "task_local")).sum()),
        "underspecified_deferred": int((unk & (g == "defer")).sum()),
        "erroneous_persistence": int((unk & (g != "persist")).sum()),
        "persistent_recall": int((unk & (g == "persist")).sum()),
        "structural": int(unk.sum()),
    }


def framing_confusion(scored: pd.DataFrame) -> pd.DataFrame:
    """Counts of predicted categories per framing (rows: framings, columns: predictions)."""
    labels = {f: f"{f} {name}" for f, (name, *_rest) in FRAMINGS.items()}
    tab = pd.crosstab(scored["framing"].map(labels), scored["category"])
    tab = tab.reindex(
        index=[labels[f] for f in sorted(labels)], columns=list(PRED_COLUMNS), fill_value=0
    )
    tab.index.name, tab.columns.name = "framing", "prediction"
    return tab.fillna(0).astype(int)
