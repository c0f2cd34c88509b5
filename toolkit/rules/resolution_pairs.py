"""Features of (correction, rule) pairs that see the whole rule: behaviour, scope, conditions and
exceptions, and where the rule stands among the library's other rules.

A restatement often shares no word with its rule and, in a 60-rule library, sits among related
distractors; a narrowing names the rule's topic and a condition or project it does not have yet;
a new requirement is near an existing rule but brings content the rule does not hold. So beside
the cosine of the correction to the rule's sentence, each pair gets:

- the cosine of the correction's best clause to the rule's behaviour alone and to its conditions
  and exceptions (a restatement of an exception is found through the exception);
- the rule's standing in its library: the margin of its similarity over the best *other* rule and
  its z-score among all rules (a target stands out; a related distractor does not);
- whether the rule's project is named in the correction, or another project of the library is;
- lexical novelty: the share of the correction's content stems the rule does not hold;
- polarity, read by the one ConText stage of :mod:`toolkit.text`: whether the correction negates
  what it says and whether the rule is itself a prohibition (stopping what a rule requires is a
  retraction or a replacement; repeating a prohibition is a restatement);
- the object the correction names a rule by ("the answer length rule", "the em dash thing": the
  ``named_object`` kind of ``resolution/cues``) read against the rule: the share of the object's
  content stems the rule holds and the object's cosine to the rule (0 when no object is named).

No phrase is named here: words come from the shared text layer and the cue tables, similarity from
the semantic layer (``toolkit.rules._embed``).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from toolkit.records import Rule
from toolkit.rules._embed import embed
from toolkit.rules.resolution_cues import content_stems
from toolkit.rules.resolution_semantic import rule_sentence
from toolkit.text import load_table
from toolkit.text._context import find_modifiers

#: names of the pair-feature columns (the target model's inputs, in order)
PAIR_COLUMNS: tuple[str, ...] = (
    "cos_whole", "cos_best_clause", "gap_to_best", "is_top", "inv_rank", "lexical_overlap",
    "grammar_target", "cos_behavior", "cos_conditions", "margin_over_others", "z_in_library",
    "own_project_named", "other_project_named", "novelty", "rule_is_prohibition",
    "polarity_flip", "object_overlap", "object_cos",
)
_NAMED_OBJECT = load_table("resolution/cues")["named_object"]


@lru_cache(maxsize=8192)
def named_objects(text: str) -> tuple[str, ...]:
    """The objects ``text`` names a rule by ("the answer length rule" -> "answer length")."""
    return tuple(dict.fromkeys(m.group(1) for m in _NAMED_OBJECT.finditer(text)))


@lru_cache(maxsize=8192)
def _negated(text: str) -> bool:
    return any(m.category == "NEGATION" for m in find_modifiers(text))


@lru_cache(maxsize=8192)
def _stems(text: str) -> frozenset[str]:
    return frozenset(content_stems(text))


def _project(rule: Rule) -> str | None:
    if rule.scope and rule.scope.startswith("project:"):
        return rule.scope.split(":", 1)[1].lower()
    return None


def _named(project: str | None, stems: set[str], text: str) -> bool:
    if not project:
        return False
    parts = _stems(project.replace("-", " ").replace("_", " "))
    return bool(parts) and (all(p in stems for p in parts) or project in text.lower())


def pair_matrix(correction: str, queries: Sequence[str], library: Sequence[Rule],
                grammar_targets: set[str | None], embedder: str) -> np.ndarray:
    """(n_rules, len(PAIR_COLUMNS)) features of each rule of ``library`` as the target of
    ``correction`` (``queries``: the correction and its clauses; ``grammar_targets``: the
    rules the cue grammar placed its proposals on)."""
    n = len(library)
    if not n:
        return np.zeros((0, len(PAIR_COLUMNS)), dtype=np.float32)
    qv = embed(list(queries), embedder)
    rv = embed([rule_sentence(r) for r in library], embedder)
    bv = embed([r.behavior for r in library], embedder)
    sims = qv @ rv.T
    whole, best = sims[0], sims.max(axis=0)
    beh = (qv @ bv.T).max(axis=0)
    cond = np.zeros(n, dtype=np.float32)
    for j, r in enumerate(library):
        extra = [*r.conditions, *r.exceptions]
        if extra:
            cond[j] = float((qv @ embed(extra, embedder).T).max())
    order = np.argsort(-best, kind="stable")
    s1 = float(best[order[0]])
    rank = np.empty(n)
    rank[order] = np.arange(n)
    if n > 1:
        second = float(best[order[1]])
        others = np.where(rank == 0, second, s1)
        margin = best - others
        z = (best - best.mean()) / (best.std() + 1e-6)
    else:
        margin = best.copy()
        z = np.zeros(n)
    c_stems = _stems(correction)
    lex, novelty, own, prohib = (np.zeros(n) for _ in range(4))
    projects = {p for r in library if (p := _project(r))}
    named = {p for p in projects if _named(p, c_stems, correction)}
    for j, r in enumerate(library):
        r_stems = _stems(rule_sentence(r))
        lex[j] = len(c_stems & r_stems) / max(len(r_stems), 1)
        novelty[j] = len(c_stems - r_stems) / max(len(c_stems), 1)
        own[j] = float(_project(r) in named)
        prohib[j] = float(_negated(r.behavior))
    other = np.array([float(bool(named - {_project(r)})) for r in library])
    neg_c = float(_negated(correction))
    flip = np.abs(prohib - neg_c)
    g_t = np.array([float(r.id in grammar_targets) for r in library])
    obj_lex, obj_cos = np.zeros(n), np.zeros(n)
    objects = named_objects(correction)
    if objects:
        o_stems = [_stems(o) for o in objects]
        for j, r in enumerate(library):
            r_stems = _stems(rule_sentence(r))
            obj_lex[j] = max(len(o & r_stems) / max(len(o), 1) for o in o_stems)
        obj_cos = (embed(list(objects), embedder) @ rv.T).max(axis=0)
    return np.stack([whole, best, best - s1, (rank == 0).astype(float), 1.0 / (1.0 + rank), lex,
                     g_t, beh, cond, margin, z, own, other, novelty, prohib, flip, obj_lex,
                     obj_cos], axis=1).astype(np.float32)


#: case-level columns read off the pair matrix of the most similar rule (the operation model's)
TOP_COLUMNS: tuple[str, ...] = ("margin_over_others", "z_in_library", "cos_behavior",
                                "cos_conditions", "own_project_named", "other_project_named",
                                "novelty", "rule_is_prohibition", "polarity_flip")


def top_features(P: np.ndarray, correction: str, segments: Sequence[str],
                 library: Sequence[Rule], embedder: str) -> list[float]:
    """Case features from the pair matrix: the nearest rule's standing, novelty and polarity,
    whether the correction negates what it says, and how its clauses split between the nearest
    rule and something else (a replacement stops the rule in one clause and asks for something
    new in another; a retraction only stops; a restatement only repeats)."""
    neg_c = float(_negated(correction))
    segs = list(segments) or [correction]
    n_seg = float(np.log1p(len(segs)))
    if not len(P):
        return [0.0] * len(TOP_COLUMNS) + [neg_c, n_seg, 0.0, 0.0, 0.0, 0.0, 0.0]
    top = int(np.argmax(P[:, PAIR_COLUMNS.index("cos_best_clause")]))
    seg_cos = (embed(segs, embedder) @ embed([rule_sentence(library[top])], embedder).T)[:, 0]
    near = int(np.argmax(seg_cos))
    neg_near = float(_negated(segs[near]))
    neg_other = float(any(_negated(t) for i, t in enumerate(segs) if i != near))
    lo, hi = float(seg_cos.min()), float(seg_cos.max())
    return ([float(P[top, PAIR_COLUMNS.index(c)]) for c in TOP_COLUMNS]
            + [neg_c, n_seg, lo, hi, hi - lo, neg_near, neg_other])
