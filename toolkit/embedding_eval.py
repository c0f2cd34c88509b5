"""Scoring embedders on matching a later user message to the stored preference it refers to.

Data: ``prefs.jsonl`` (``{"id", "text"}``) and ``queries.jsonl`` (``{"id", "text", "target":
pref id | null, "kind"}``); a query with ``target: null`` refers to no stored preference.
Every file is read for evaluation only (``toolkit.splits.require_role(path, "evaluate")``):
nothing is fit on its labels. TF-IDF fits its vocabulary on the stored preferences (the bank
it searches, as the lexical retrieval baseline does), never on the queries or targets.

Metrics (fixed denominators):

* ``recall@1``: share of the targeted queries whose most similar preference is the target
  (denominator: all targeted queries; a query with no similar preference at all counts as a
  miss), with a Wilson 95% interval; also per query ``kind``;
* ``pair AUC``: ROC AUC of cosine similarity separating (query, its target) pairs from every
  other (query, preference) pair, unrelated queries included;
* ``detection AUC``: ROC AUC of a query's best similarity separating targeted queries from
  unrelated ones (can the score tell that a message refers to a stored preference at all).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

__all__ = ["StoredPref", "Query", "load_pref_queries", "similarity", "retrieval_scores",
           "score_embedder"]


class StoredPref(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    text: str


class Query(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    text: str
    target: str | None
    kind: str


def load_pref_queries(folder: Path | str) -> tuple[list[StoredPref], list[Query]]:
    """Read and validate ``prefs.jsonl`` and ``queries.jsonl`` (targets must name a preference)."""
    from toolkit.datasets.jsonl import read_jsonl
    from toolkit.errors import InputError
    from toolkit.splits import require_role

    folder = Path(folder)
    for name in ("prefs.jsonl", "queries.jsonl"):
        require_role(folder / name, "evaluate")
    prefs = read_jsonl(folder / "prefs.jsonl", StoredPref)
    queries = read_jsonl(folder / "queries.jsonl", Query)
    ids = {p.id for p in prefs}
    bad = [f"{folder / 'queries.jsonl'}:{i + 1} target: {q.target!r} is not a preference id"
           for i, q in enumerate(queries) if q.target is not None and q.target not in ids]
    if bad:
        raise InputError(bad)
    return prefs, queries


def similarity(embedder: Any, prefs: Sequence[str], queries: Sequence[str]) -> np.ndarray:
    """Cosine similarity (queries x prefs); TF-IDF fits on the preferences only."""
    if hasattr(embedder, "fit") and getattr(embedder, "name", "") == "tfidf":
        embedder.fit(list(prefs))
    p = np.asarray(embedder.embed(list(prefs)), dtype=np.float64)
    q = np.asarray(embedder.embed(list(queries)), dtype=np.float64)
    return q @ p.T


def retrieval_scores(sim: np.ndarray, pref_ids: Sequence[str], queries: Sequence[Query]
                     ) -> dict[str, Any]:
    """recall@1 (overall and per kind), pair AUC and detection AUC from a similarity matrix."""
    from sklearn.metrics import roc_auc_score

    from toolkit.metrics import wilson_ci

    col = {p: j for j, p in enumerate(pref_ids)}
    targeted = [i for i, q in enumerate(queries) if q.target is not None]
    hits: dict[str, list[int]] = {}
    for i in targeted:
        row = sim[i]
        # the best preference; ties and an all-zero row (nothing similar) count as a miss
        best = int(np.argmax(row))
        ok = row[best] > 0 and int(np.sum(row == row[best])) == 1 and best == col[queries[i].target]
        hits.setdefault(queries[i].kind, []).append(int(ok))
    allh = [h for v in hits.values() for h in v]
    k, n = int(sum(allh)), len(allh)
    lo, hi = wilson_ci(k, n)
    y = np.zeros_like(sim, dtype=int)
    for i in targeted:
        y[i, col[queries[i].target]] = 1
    best = sim.max(axis=1)
    is_t = np.array([q.target is not None for q in queries], dtype=int)
    return {
        "recall_at_1": k / n if n else float("nan"), "recall_at_1_ci": [lo, hi],
        "n_targeted": n, "hits": k,
        "recall_at_1_by_kind": {kind: {"recall": float(np.mean(v)), "n": len(v)}
                                for kind, v in sorted(hits.items())},
        "pair_auc": float(roc_auc_score(y.ravel(), sim.ravel())), "n_pairs": int(y.size),
        "n_positive_pairs": int(y.sum()),
        "detection_auc": (float(roc_auc_score(is_t, best)) if 0 < is_t.sum() < len(is_t)
                          else float("nan")),
        "n_unrelated": int(len(queries) - is_t.sum()),
    }


def score_embedder(embedder: Any, prefs: Sequence[StoredPref], queries: Sequence[Query]
                   ) -> dict[str, Any]:
    """:func:`retrieval_scores` for one embedder, with its name."""
    sim = similarity(embedder, [p.text for p in prefs], [q.text for q in queries])
    return {"embedder": embedder.name, **retrieval_scores(sim, [p.id for p in prefs], queries)}
