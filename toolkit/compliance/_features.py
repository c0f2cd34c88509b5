"""Features of a (rule, evidence) pair for the learned reader: embedding similarities plus generic cues.

No feature names a phrasing. Three groups:

- **catalogue cues**: what the catalogue stage found (violated / satisfied / unknown / not applicable,
  whether it needed the wider second look, whether any kind was recognised, whether the reply only
  checks in first), which kind it was (one flag per common kind: how far each kind's verdict holds is
  learned on development folds), and the part stage's scope (a part named, found, how many instances);
- **text cues** from the shared text layer: size and shape of the reply, workspace size, a number
  limit in the rule set against the matching count in the part it names (else the reply), the rule's content words (split
  by the ConText stage into negated and plain ones) found in the evidence;
- **embedding similarities** (MiniLM through the semantic layer): rule vs each clause of the
  evidence (:func:`chunks`; max, top-3 mean; the `*_chunk_*` names are kept), the rule's negated part vs the evidence, rule vs task, condition vs
  task, and the rule's own embedding (projected by PCA inside the fitted pipeline);
- **scope cues** (:func:`scope_features`): the applicability evidence the scope stage reads by words,
  beside what it cannot read by words: the compiled checks' verdict with every condition set aside,
  whether the conditions hold by their words on the task and on the whole delivery, and each
  condition's and exception's similarity to the task and to the evidence clause closest to it. The
  scope stage alone rules a pair out by words; with these the learned reader weighs a condition
  ("the code involves any randomness") against a task that never uses its words ("split into train
  and test sets").

:func:`pair_matrix` stacks the four groups in the order of :data:`FEATURE_NAMES` (fit and cascade
use the same function).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from toolkit import text as tx
from toolkit.compliance import _lexicons as lx
from toolkit.compliance._catalogue import CatalogueReading, combine
from toolkit.compliance._checks import View
from toolkit.compliance._conditions import Conditional, condition_holds
from toolkit.compliance._interpreter import CompiledPreference, compile_preference
from toolkit.compliance._objects import OBJECT_NAMES, object_features
from toolkit.compliance._parts import Scope
from toolkit.compliance._scope_context import CONTEXT_NAMES, context_features
from toolkit.compliance._types import Evidence, Rule

_STOP = lx.FEATURE_STOPWORDS
_UNITS = {"word": "words", "sentence": "sentences", "line": "lines", "bullet": "bullets", "item": "bullets",
          "point": "bullets", "paragraph": "paragraphs", "character": "chars", "emoji": "emoji"}
_LIMIT_RE = re.compile(r"\b(\d{1,4}|one|two|three|four|five|six|seven|eight|nine|ten|twelve|fifteen|twenty|"
                       r"thirty|fifty|hundred)\s+(?:\w+\s+){0,2}?(words?|sentences?|lines?|bullets?|items?|points?|"
                       r"paragraphs?|characters?|emojis?)\b", re.I)
#: catalogue kinds whose reading is a feature of its own (the trees learn how far each kind's verdict
#: holds on development folds); any other kind counts only through the cat_* cues
KIND_FEATURES = ("Forbid", "Require", "RequireTerms", "MaxCount", "ActionRule", "Cleanup", "Sections",
                 "ListFormat", "Bookend", "ProtectedPath", "CodeStyle", "Headings", "MaxItems", "MaxMarks")
CUE_NAMES = (
    "cat_violated", "cat_satisfied", "cat_unknown", "cat_not_applicable", "cat_second_look", "cat_judgeable",
    "holding_reply", "cat_applicability_unknown",
    "reply_words_log", "reply_sentences_log", "reply_bullets_log", "reply_code_blocks", "reply_headings",
    "workspace_files_log", "reply_ends_with_question",
    "rule_has_limit", "limit_ratio_log", "limit_exceeded",
    "neg_terms_share_found", "neg_terms_any_found", "plain_terms_share_found", "rule_quotes_found",
    "rule_has_condition", "rule_has_exception", "rule_words_log",
    "part_named", "part_located", "part_instances_log",
) + tuple(f"kind_{k}" for k in KIND_FEATURES)
SIM_NAMES = ("sim_rule_chunk_max", "sim_rule_chunk_top3", "sim_neg_chunk_max", "sim_rule_task", "sim_cond_task",
             "sim_rule_reply", "sim_neg_minus_plain")


@dataclass(frozen=True)
class PairInput:
    """One (rule, evidence) pair with the catalogue's reading of it."""

    rule: Rule
    evidence: Evidence
    reading: CatalogueReading
    view: View
    holding: bool
    scope: Scope | None = None

    def scoped_views(self) -> tuple[View, ...]:
        """The views the checks saw: one per located instance of the part the rule names, else the whole."""
        return self.scope.views if self.scope is not None else (self.view,)


def _content_stems(text: str) -> list[str]:
    return [t.stem for t in tx.tokens(text) if t.text.lower() not in _STOP and len(t.text) > 2
            and not t.text.isdigit()]


def rule_parts(rule: Rule) -> tuple[str, str, list[str]]:
    """The rule's main clause, the text under its NEGATION scopes, and its quoted terms."""
    main, neg, quotes, _ = _parts(rule.text)
    return main, neg, list(quotes)


@lru_cache(maxsize=8192)
def _parts(text: str) -> tuple[str, str, tuple[str, ...], bool]:
    main, conds, _ = tx.split_rule(text)
    neg = " ".join(text[m.start:m.scope_end] for m in tx.find_modifiers(text) if m.category == "NEGATION")
    quotes = tuple(q for q in re.findall(r"[\"\u201c`']([^\"\u201d`']{2,40})[\"\u201d`']", text) if q.strip())
    return main or text, neg, quotes, bool(conds)


def chunks(ev: Evidence, view: View) -> list[str]:
    """The evidence as the pieces the rule is compared with: its clauses (:func:`evidence_clauses`).

    One set of evidence texts serves the similarity, clause and scope features, so each is embedded
    once; grouping sentences into ~40-word chunks on top of them cost a sixth of the embedding and
    lost nothing out of fold on development data (measured 2026-12-02, see CHANGELOG)."""
    return [c for c, _ in evidence_clauses(view)] or [ev.text()[:400] or "(empty)"]


def _count(view: View, unit: str) -> int:
    if unit == "words":
        return len(tx.words(view.prose))
    if unit == "sentences":
        return len(view.sentences)
    if unit == "lines":
        return len(tx.nonempty_lines(view.reply))
    if unit == "bullets":
        return len(tx.bullet_lines(view.reply))
    if unit == "paragraphs":
        return len([p for p in re.split(r"\n\s*\n", view.reply) if p.strip()])
    if unit == "chars":
        return len(view.reply)
    return len(tx.EMOJI_RE.findall(view.reply))


def cue_features(p: PairInput) -> list[float]:
    """The catalogue and text cues of one pair (order: :data:`CUE_NAMES`)."""
    v, r, f = p.view, p.rule, p.reading.finding
    kind = next((k for k in p.reading.kinds if k != "Unknown"), "Unknown")
    main, neg, quotes = rule_parts(r)
    hay = v.reply + "\n" + "\n".join((v.artifacts or {}).values())
    hay_stems = {t.stem for t in tx.tokens(hay)}
    neg_terms = set(_content_stems(neg))
    plain_terms = set(_content_stems(main)) - neg_terms
    has_limit, ratio, exceeded = 0.0, 0.0, 0.0
    m = _LIMIT_RE.search(main)
    if m:
        n = tx.parse_number(m.group(1)) if not m.group(1).isdigit() else int(m.group(1))
        unit = _UNITS.get(tx.stem(m.group(2).lower()).rstrip("s"), _UNITS.get(m.group(2).lower().rstrip("s")))
        if n and unit:
            c = max(_count(sv, unit) for sv in p.scoped_views())
            has_limit, ratio, exceeded = 1.0, math.log((c + 1) / (n + 1)), float(c > n)
    return [
        float(f.verdict == "violated"), float(f.verdict == "satisfied"), float(f.verdict == "unknown"),
        float(f.verdict == "not_applicable"), float(p.reading.step == 4), float(p.reading.judgeable),
        float(p.holding), float(p.reading.applicable is None),
        math.log1p(len(tx.words(v.prose))), math.log1p(len(v.sentences)), math.log1p(len(tx.bullet_lines(v.reply))),
        float(bool(tx.code_blocks(v.reply))), float(bool(tx.heading_lines(v.reply))),
        math.log1p(len(v.artifacts or {})), float(v.reply.rstrip().endswith("?")),
        has_limit, ratio, exceeded,
        (len(neg_terms & hay_stems) / len(neg_terms)) if neg_terms else 0.0, float(bool(neg_terms & hay_stems)),
        (len(plain_terms & hay_stems) / len(plain_terms)) if plain_terms else 0.0,
        float(any(q.lower() in hay.lower() for q in quotes)),
        float(bool(r.conditions) or _parts(r.text)[3]), float(bool(r.exceptions)),
        math.log1p(len(tx.words(r.text))),
        float(bool(p.scope and p.scope.part)), float(bool(p.scope and p.scope.located)),
        math.log1p(len(p.scope.views)) if p.scope and p.scope.located else 0.0,
    ] + [float(kind == k) for k in KIND_FEATURES]


def _interner(texts: dict[str, int]) -> Callable[[str], int]:
    """A function giving each distinct (stripped) text one row index in ``texts``, so a batch embeds
    every text once however many pairs share it."""

    def idx(t: str) -> int:
        t = t.strip() or "(empty)"
        if t not in texts:
            texts[t] = len(texts)
        return texts[t]

    return idx


def build(pairs: Sequence[PairInput], embed) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(cue features, similarity features, rule embeddings) for many pairs, embedding each text once."""
    texts: dict[str, int] = {}
    idx = _interner(texts)

    plan = []
    for p in pairs:
        main, neg, _ = rule_parts(p.rule)
        cond = " ".join(p.rule.conditions) or " ".join(tx.split_rule(p.rule.text)[1])
        ch = chunks(p.evidence, p.view)
        plan.append((idx(p.rule.text), idx(neg) if neg else -1, idx(p.evidence.task or "(none)"),
                     idx(cond) if cond else -1, [idx(c) for c in ch], idx(main)))
    vecs = embed.embed(list(texts))
    cues = np.array([cue_features(p) for p in pairs], dtype=np.float64).reshape(len(pairs), len(CUE_NAMES))
    sims = np.zeros((len(pairs), len(SIM_NAMES)))
    remb = np.zeros((len(pairs), vecs.shape[1]), np.float32)
    for i, (ri, ni, ti, ci, chs, mi) in enumerate(plan):
        C = vecs[chs]
        s = C @ vecs[mi]
        top = np.sort(s)[::-1]
        sn = C @ vecs[ni] if ni >= 0 else np.zeros(len(chs))
        sims[i] = [top[0], top[:3].mean(), sn.max() if ni >= 0 else 0.0, float(vecs[ri] @ vecs[ti]),
                   float(vecs[ci] @ vecs[ti]) if ci >= 0 else 0.0, float(C.mean(0) @ vecs[mi]),
                   (sn.max() - top[0]) if ni >= 0 else 0.0]
        remb[i] = vecs[ri]
    return cues, sims, remb


CLAUSE_NAMES = ("clause_rule_max", "clause_rule_top2", "clause_neg_max", "clause_neg_max_unnegated",
                "clause_best_is_negated", "clause_rule_max_minus_point", "clause_neg_max_minus_point",
                "clause_n_log")


#: non-empty lines read from each workspace file (its head: the first lines of a file say what it is;
#: 12 lines cost an eighth more embedding and lost nothing out of fold on development data)
FILE_LINES = 4


def evidence_clauses(view: View, *, cap: int = 40) -> list[tuple[str, bool]]:
    """The evidence as clauses, each with whether the text layer's negation scope covers it.

    Reply sentences (split again at semicolons) and the first :data:`FILE_LINES` non-empty lines of
    each workspace file; a clause
    under negation mentions a thing while avoiding it ("I left out the emoji"), which a pair model
    must not read as doing it. Computed once per view (the clause and scope features both read them).
    """
    key = ("evidence_clauses", cap)
    if key not in view.memo:
        view.memo[key] = _evidence_clauses(view, cap)
    return list(view.memo[key])


def _evidence_clauses(view: View, cap: int) -> list[tuple[str, bool]]:
    out: list[tuple[str, bool]] = []
    for s in view.sentences:
        for c in re.split(r"\s*;\s*", s):
            if len(c.split()) >= 2:
                out.append((c[:300], bool(tx.negated(c, 0, len(c)))))
    for _, body in sorted((view.artifacts or {}).items())[:8]:
        for line in tx.nonempty_lines(body)[:FILE_LINES]:
            out.append((line[:300], False))
    return out[:cap]


def clause_features(pairs: Sequence[PairInput], embed) -> np.ndarray:
    """Per pair: the rule (and its negated part) against every evidence clause, max and top-2 over
    clauses, the best clause's negation, and the margin over the point's other rules (order:
    :data:`CLAUSE_NAMES`). A pair model scored per clause and pooled by max, as in multiple-instance
    reading of long evidence."""
    texts: dict[str, int] = {}
    idx = _interner(texts)

    plan, cache = [], {}
    for p in pairs:
        main, neg, _ = rule_parts(p.rule)
        key = id(p.view)
        if key not in cache:
            cache[key] = evidence_clauses(p.view)
        cl = cache[key] or [(p.evidence.text()[:300] or "(empty)", False)]
        plan.append((idx(main), idx(neg) if neg else -1, [idx(c) for c, _ in cl], np.array([n for _, n in cl])))
    vecs = embed.embed(list(texts))
    out = np.zeros((len(pairs), len(CLAUSE_NAMES)))
    for i, (mi, ni, cis, negs) in enumerate(plan):
        C = vecs[cis]
        s = C @ vecs[mi]
        top = np.sort(s)[::-1]
        sn = C @ vecs[ni] if ni >= 0 else np.zeros(len(cis))
        best = int(np.argmax(sn if ni >= 0 else s))
        un = sn[~negs] if ni >= 0 and (~negs).any() else np.zeros(1)
        out[i, :5] = [top[0], top[:2].mean(), sn.max() if ni >= 0 else 0.0, un.max(), float(negs[best])]
        out[i, 7] = math.log1p(len(cis))
    # margins over the other rules read on the same delivery (the point's context)
    groups: dict[int, list[int]] = {}
    for i, p in enumerate(pairs):
        groups.setdefault(id(p.view), []).append(i)
    for idxs in groups.values():
        for col, src in ((5, 0), (6, 2)):
            vals = out[idxs, src]
            for j, i in enumerate(idxs):
                others = np.delete(vals, j)
                out[i, col] = vals[j] - (others.max() if len(others) else 0.0)
    return out


SCOPE_NAMES = ("scope_uncond_violated", "scope_uncond_satisfied", "scope_uncond_unknown", "scope_uncond_not_applicable",
               "scope_has_condition", "scope_has_exception", "scope_cond_words_task", "scope_cond_words_wide",
               "scope_cond_words_unknown", "scope_cond_sim_task", "scope_cond_sim_clause", "scope_cond_sim_best",
               "scope_exc_sim_task", "scope_exc_sim_clause", "scope_exc_sim_best")


def _unconditional_verdict(p: PairInput, cp: CompiledPreference) -> str:
    """The compiled checks' verdict with the preference's conditions (and each clause's own) set aside.

    Where the catalogue already ran the same checks on the same whole view (the rule applied, no
    clause has its own condition, no part narrowed the view, the reply does not only check in), its
    verdict is that verdict; otherwise the checks run again. ``cp`` is ``p.rule`` compiled."""
    if not cp.judgeable:
        return "unknown"
    if p.reading.applicable is True and not p.holding and not (p.scope is not None and p.scope.located) \
            and not any(isinstance(c, Conditional) for c in cp.checks):
        return p.reading.finding.verdict
    return combine([(c.inner if isinstance(c, Conditional) else c).evaluate(p.view) for c in cp.checks]).verdict


def scope_features(pairs: Sequence[PairInput], embed) -> np.ndarray:
    """Per pair, the scope cues (order: :data:`SCOPE_NAMES`; NaN where the rule has no condition or
    no exception): unconditional checks' verdict, conditions by words (task; whole delivery; cannot
    tell), and the least similar condition's (most similar exception's) cosine to the task, to its
    closest evidence clause, and the larger of the two."""
    texts: dict[str, int] = {}
    idx = _interner(texts)
    plan, rows, cache = [], [], {}
    for p in pairs:
        cp = compile_preference(p.rule)
        conds, excs = list(cp.applies_when), list(cp.except_when)
        v = _unconditional_verdict(p, cp)
        narrow = [condition_holds(c, p.view, wide=False)[0] for c in conds]
        wide = [condition_holds(c, p.view, wide=True)[0] for c in conds]
        rows.append([float(v == "violated"), float(v == "satisfied"), float(v == "unknown"),
                     float(v == "not_applicable"), float(bool(conds)), float(bool(excs)),
                     float(all(x is True for x in narrow)) if conds else math.nan,
                     float(all(x is True for x in wide)) if conds else math.nan,
                     float(any(x is None for x in narrow))])
        key = id(p.view)
        if key not in cache:
            cache[key] = [idx(c) for c, _ in evidence_clauses(p.view)] or [idx(p.evidence.text()[:300])]
        plan.append(([idx(c) for c in conds], [idx(e) for e in excs], idx(p.evidence.task or "(none)"), cache[key]))
    vecs = embed.embed(list(texts)) if texts else np.zeros((0, 1))
    sims = np.full((len(pairs), 6), math.nan)
    for i, (cs, es, ti, cl) in enumerate(plan):
        C = vecs[cl]
        if cs:
            st = [float(vecs[c] @ vecs[ti]) for c in cs]
            sc = [float((C @ vecs[c]).max()) for c in cs]
            sims[i, :3] = [min(st), min(sc), min(max(a, b) for a, b in zip(st, sc, strict=True))]
        if es:
            st = [float(vecs[e] @ vecs[ti]) for e in es]
            sc = [float((C @ vecs[e]).max()) for e in es]
            sims[i, 3:] = [max(st), max(sc), max(max(a, b) for a, b in zip(st, sc, strict=True))]
    return np.hstack([np.asarray(rows, np.float64).reshape(len(pairs), 9), sims])


def kind_free_features(pairs: Sequence[PairInput]) -> np.ndarray:
    """Per pair, the readings that need no catalogue kind: the rule's objects present or absent with
    their clause's polarity (:mod:`._objects`), and its conditions and exceptions read on the delivery's
    whole context (:mod:`._scope_context`). Columns: :data:`OBJECT_NAMES` + :data:`CONTEXT_NAMES`."""
    rows = []
    for p in pairs:
        cp = compile_preference(p.rule)
        rows.append(object_features(p.rule.text, p.view) +
                    context_features(list(cp.applies_when), list(cp.except_when), p.view))
    return np.asarray(rows, np.float64).reshape(len(pairs), len(OBJECT_NAMES) + len(CONTEXT_NAMES))


FEATURE_NAMES = CUE_NAMES + SIM_NAMES + CLAUSE_NAMES + SCOPE_NAMES + OBJECT_NAMES + CONTEXT_NAMES


def pair_matrix(pairs: Sequence[PairInput], embed) -> np.ndarray:
    """The learned reader's design matrix for many pairs (columns: :data:`FEATURE_NAMES`)."""
    cues, sims, _ = build(pairs, embed)
    return np.hstack([cues, sims, clause_features(pairs, embed), scope_features(pairs, embed),
                      kind_free_features(pairs)])
