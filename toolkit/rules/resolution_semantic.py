"""The semantic layer of offline resolution: embedding retrieval of candidate rules and
similarity checks on the cue grammar's proposals, with thresholds chosen on development data.

The cue grammar (``toolkit.rules.resolution``) proposes updates from the user's words; this
layer reads the same correction with sentence vectors (``toolkit.llm.get_embedder``):

- candidates: the rules nearest to the correction and to each clause by cosine similarity join
  the lexical (BM25) candidates, so a restatement that shares no word with its rule is found;
- ``add`` with no change cue whose clause is near a rule (cosine >= ``reuse``), or that says it
  is said again ("again", "as I said") and is at least as near its best rule as every
  development restatement was to its own (cosine >= ``unrelated``), is that rule: ``reuse``;
- ``add`` (or nothing the grammar could place) with a retraction cue retracts its nearest rule
  when that rule is at least as near as every development restatement was to its own (cosine >=
  ``unrelated``); so does a lasting replacement ("swap X out, Y from now on"), which replaces it;
  ``add`` with a narrowing cue and a near rule (cosine >= ``target``) revises it;
- ``reuse`` of a rule the clause is far from (cosine < ``unrelated``) is not trusted: the
  resolver abstains (``status: unknown``, ``updates: null``) instead of reusing an unrelated rule.

The three thresholds are a :class:`SemanticParams` chosen by :func:`select_thresholds` on the
development cases only (grown to ~60-rule libraries with related distractors as well).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from toolkit.records import ResolutionInput, Rule
from toolkit.rules._embed import DEFAULT_EMBEDDER, embed
from toolkit.rules.resolution_cues import segment_cues, split_segments


@dataclass(frozen=True)
class SemanticParams:
    """Cosine thresholds of the semantic checks (chosen on development cases)."""

    reuse: float = 0.60
    target: float = 0.45
    unrelated: float = 0.20
    embedder: str = DEFAULT_EMBEDDER


def rule_sentence(rule: Rule) -> str:
    """The text of a rule as one sentence for embedding (behaviour, scope, conditions)."""
    parts = [rule.behavior]
    if rule.scope and rule.scope != "global":
        parts.append(f"(in {rule.scope.split(':', 1)[-1]})")
    if rule.conditions:
        parts.append("when " + "; ".join(rule.conditions))
    if rule.exceptions:
        parts.append("except " + "; ".join(rule.exceptions))
    return " ".join(parts)


def similarities(texts: Sequence[str], rules: Sequence[Rule], embedder: str) -> np.ndarray:
    """Cosine similarity of each text (rows) with each rule (columns)."""
    if not texts or not rules:
        return np.zeros((len(texts), len(rules)), dtype=np.float32)
    a = embed(list(texts), embedder)
    b = embed([rule_sentence(r) for r in rules], embedder)
    return a @ b.T


def nearest_rules(record: ResolutionInput, k: int, embedder: str = DEFAULT_EMBEDDER) -> list[Rule]:
    """The ``k`` rules nearest to the correction or any of its clauses (by best cosine)."""
    if not record.library:
        return []
    queries = [record.correction, *split_segments(record.correction)]
    sims = similarities(queries, record.library, embedder).max(axis=0)
    order = sorted(range(len(record.library)), key=lambda i: (-float(sims[i]), record.library[i].id))
    return [record.library[i] for i in order[:k]]


@dataclass(frozen=True)
class Check:
    """What the semantic checks did to one resolution."""

    proposals: list  # list[Proposal]
    abstain: bool
    notes: tuple[str, ...]


def check(record: ResolutionInput, proposals: list, params: SemanticParams) -> Check:
    """Apply the similarity checks to the grammar's proposals (see the module docstring)."""
    from toolkit.rules.resolution import Proposal

    if not record.library:
        return Check(list(proposals), False, ())
    if not proposals:
        # no directive the grammar could read ("that was an essay again"): a complaint that
        # says it is said again is a restatement of its nearest rule, when near enough
        whole = segment_cues(record.correction)
        if whole.temporary or not (whole.restatement or whole.retraction):
            return Check([], False, ())
        proposals = [Proposal("add", None, record.correction)]
        fallback = True
    else:
        fallback = False
    ids = [r.id for r in record.library]
    sims = similarities([p.quote for p in proposals], record.library, params.embedder)
    out, notes, abstain = [], [], False
    taken = {p.target for p in proposals if p.target}
    for p, row in zip(proposals, sims, strict=True):
        best = int(np.argmax(row))
        best_id, best_sim = ids[best], float(row[best])
        cues = segment_cues(p.quote)
        change = (cues.replacement or cues.retraction or cues.conditions or cues.exceptions
                  or cues.project or cues.widen or cues.temporary)
        said_again = cues.restatement and best_sim >= params.unrelated
        if p.op == "add" and not change and best_id not in taken and (
                best_sim >= params.reuse or said_again):
            out.append(Proposal("reuse", best_id, p.quote))
            notes.append(f"add->reuse {best_id} (cos {best_sim:.2f})")
            taken.add(best_id)
            continue
        retracts = cues.retraction and best_sim >= params.unrelated
        replaces = cues.replacement and cues.lasting and best_sim >= params.unrelated
        if p.op == "add" and best_id not in taken and (retracts or replaces or (
                best_sim >= params.target and (cues.project or cues.conditions)
                and not cues.lasting)):
            op = "retract" if cues.retraction else "replace" if cues.replacement else "revise"
            out.append(Proposal(op, best_id, p.quote, behavior=p.behavior, scope=p.scope,
                                conditions=p.conditions, exceptions=p.exceptions))
            notes.append(f"add->{op} {best_id} (cos {best_sim:.2f})")
            taken.add(best_id)
            continue
        if p.op == "reuse" and p.target in ids and float(row[ids.index(p.target)]) < params.unrelated:
            abstain = True
            notes.append(f"reuse {p.target} unrelated (cos {float(row[ids.index(p.target)]):.2f})")
        if not fallback:
            out.append(p)
    return Check(out, abstain, tuple(notes))


def thresholds_from_cases(cases: Sequence[tuple[ResolutionInput, object]],
                          embedder: str = DEFAULT_EMBEDDER) -> tuple[SemanticParams, dict]:
    """Thresholds read off development cases (gold updates, libraries grown with distractors).

    - ``reuse``: just above the highest similarity between a correction that asks for a new
      rule (gold ``add`` only) and any library rule, so no development new requirement is
      turned into a reuse (a precision constraint, not a hand constant);
    - ``target``: just above the highest similarity between a correction and a rule that is not
      its gold target, over cases that do have a target;
    - ``unrelated``: the lowest similarity between a correction and its gold reuse target, so no
      development restatement is refused.
    """
    neg_new, neg_other, pos_reuse = [], [], []
    for rec, gold in cases:
        ups = list(getattr(gold, "updates", []) or [])
        if not rec.library:
            continue
        sims = similarities([rec.correction, *split_segments(rec.correction)], rec.library,
                            embedder).max(axis=0)
        targets = {u.target for u in ups if u.target}
        if ups and all(u.op == "add" for u in ups):
            neg_new.append(float(sims.max()))
        if targets:
            others = [float(v) for r, v in zip(rec.library, sims, strict=True)
                      if r.id not in targets]
            if others:
                neg_other.append(max(others))
        for u in ups:
            if u.op == "reuse" and u.target:
                i = [r.id for r in rec.library].index(u.target)
                pos_reuse.append(float(sims[i]))
    up = lambda xs, d: float(np.nextafter(max(xs), 1.0)) if xs else d  # noqa: E731
    params = SemanticParams(reuse=up(neg_new, 0.9), target=up(neg_other, 0.9),
                            unrelated=min(pos_reuse) if pos_reuse else 0.0, embedder=embedder)
    evidence = {"n_new": len(neg_new), "n_targeted": len(neg_other), "n_reuse": len(pos_reuse),
                "max_new_to_any_rule": max(neg_new, default=None),
                "max_to_non_target": max(neg_other, default=None),
                "min_reuse_to_target": min(pos_reuse, default=None)}
    return params, evidence
